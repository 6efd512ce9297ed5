//! Numbers on the command line: one syntax for every numeric flag (decimal, or hexadecimal
//! after `0x`), and value parsers that carry the flag's real range, so that `--help`, the
//! message for a bad value and the check all say the same.
//!
//! The hexadecimal syntax is parsed here (`parse_u64`, five lines) rather than with a crate
//! such as clap-num (`maybe_hex_range`): the messages must name the allowed range in the words
//! every other flag uses (`allowed: 1..=16, decimal or 0x-hex`); clap-num says `exceeds maximum
//! of 16`.
//!
//! Leaf module: imports nothing of the crate.

/// Parses decimal or `0x`-prefixed hexadecimal.
pub fn parse_u64(s: &str) -> Result<u64, std::num::ParseIntError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
}

/// `min..=max` as a message and `--help` show it (`min..`, any 64-bit number, when there is no
/// upper end).
pub fn range_text(min: u64, max: u64) -> String {
    if max == u64::MAX {
        format!("{min}.., any 64-bit number")
    } else {
        format!("{min}..={max}")
    }
}

/// Parses one number, decimal or `0x`-hex, in `min..=max`; the error says what is allowed (a
/// number too large for 64 bits, or a negative one, is out of range, not "not a number").
pub fn parse_in(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let allowed = range_text(min, max);
    let s = s.trim();
    let negative = s.strip_prefix('-').is_some_and(|n| {
        !n.is_empty() && (parse_u64(n).is_ok() || n.bytes().all(|b| b.is_ascii_digit()))
    });
    let v = parse_u64(s).map_err(|e| match e.kind() {
        _ if negative => format!("out of range (allowed: {allowed})"),
        std::num::IntErrorKind::PosOverflow => format!("out of range (allowed: {allowed})"),
        _ => format!("not a number (allowed: {allowed}, decimal or 0x-hex)"),
    })?;
    if v < min || v > max {
        return Err(format!("out of range (allowed: {allowed})"));
    }
    Ok(v)
}

/// A clap value parser of a number in `min..=max` (decimal or `0x`-hex) as `T`.
///
/// `min..=max` must lie within `T`'s range; a value outside it is refused with the range.
pub fn ranged<T>(min: u64, max: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: TryFrom<u64>,
{
    move |s: &str| {
        let v = parse_in(s, min, max)?;
        T::try_from(v).map_err(|_| format!("out of range (allowed: {})", range_text(min, max)))
    }
}

/// `n` and the noun, singular for 1: `1 job`, `2 jobs`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A duration of `ns` nanoseconds with a unit that keeps it short: `850 ns`, `12.5 us`,
/// `3.20 ms`, `1.25 s`.
pub fn duration(ns: u64) -> String {
    let v = ns as f64;
    // Each unit up to the value that rounds to 1000 of it in its digits (999,950 ns is 1.00 ms,
    // not 1000.0 us).
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 999_950 {
        format!("{:.1} us", v / 1e3)
    } else if ns < 999_995_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_hex_in_range() {
        assert_eq!(parse_in("0x10", 0, 100), Ok(16));
        assert_eq!(parse_in("16", 0, 100), Ok(16));
        assert_eq!(
            parse_in("101", 0, 100),
            Err("out of range (allowed: 0..=100)".into())
        );
        assert!(parse_in("x", 1, u64::MAX).unwrap_err().contains("1.."));
        // Too large for 64 bits: out of range, with the range --help shows.
        assert_eq!(
            parse_in("18446744073709551616", 0, u64::MAX),
            Err("out of range (allowed: 0.., any 64-bit number)".into())
        );
        assert_eq!(
            parse_in("99999999999999999999", 1, 8),
            Err("out of range (allowed: 1..=8)".into())
        );
        // Negative: out of range too; a lone sign is not a number.
        assert_eq!(
            parse_in("-5", 0, 100),
            Err("out of range (allowed: 0..=100)".into())
        );
        assert_eq!(
            parse_in("-99999999999999999999", 0, 100),
            Err("out of range (allowed: 0..=100)".into())
        );
        assert!(
            parse_in("-", 0, 100)
                .unwrap_err()
                .starts_with("not a number")
        );
        assert!(
            parse_in("-x", 0, 100)
                .unwrap_err()
                .starts_with("not a number")
        );
        assert_eq!(ranged::<u8>(1, 8)("0x8"), Ok(8));
        assert!(ranged::<u8>(1, 8)("9").is_err());
    }

    #[test]
    fn counts_and_durations() {
        assert_eq!(count(1, "job", "jobs"), "1 job");
        assert_eq!(count(0, "job", "jobs"), "0 jobs");
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(12_500), "12.5 us");
        assert_eq!(duration(362_807_295), "362.81 ms");
        assert_eq!(duration(2_500_000_000), "2.50 s");
        // No "1000.0 us" nor "1000.00 ms": a value that rounds up takes the next unit.
        assert_eq!(duration(999_949), "999.9 us");
        assert_eq!(duration(999_960), "1.00 ms");
        assert_eq!(duration(999_994_999), "999.99 ms");
        assert_eq!(duration(999_996_000), "1.00 s");
    }
}
