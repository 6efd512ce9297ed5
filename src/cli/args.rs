//! The process arguments as clap should see them.

/// The arguments with every value that starts with a minus and a digit (`-1,0,1,1`, `-0x1`)
/// joined to the long flag before it (`--rect=-1,0,1,1`), so that the flag's parser refuses it
/// naming the flag and what it allows: clap takes a negative number for a value
/// (`allow_negative_numbers`), but a negative coordinate list or hex number for an unknown flag.
/// No flag of komorebi starts with a digit.
pub(super) fn values_joined(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut args = args.into_iter();
    for arg in args.by_ref() {
        // After `--` every argument is a value of its own, as clap takes it.
        if arg == "--" {
            out.push(arg);
            break;
        }
        let negative = arg
            .to_str()
            .and_then(|a| a.strip_prefix('-'))
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        if let Some(flag) = out.last_mut().filter(|_| negative)
            && let Some(f) = flag.to_str()
            && f.starts_with("--")
            && !f.contains('=')
            && f != "--"
        {
            let joined = format!("{f}={}", arg.to_string_lossy());
            *flag = joined.into();
            continue;
        }
        out.push(arg);
    }
    out.extend(args);
    out
}

#[cfg(test)]
mod tests {
    use super::values_joined;

    fn joined(args: &[&str]) -> Vec<String> {
        values_joined(args.iter().map(|a| a.into()))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn a_value_of_a_minus_and_a_digit_joins_the_long_flag_before_it_and_nothing_else() {
        assert_eq!(
            joined(&["k", "broadcast", "--rect", "-1,0,1,1", "--seed", "-0x1"]),
            ["k", "broadcast", "--rect=-1,0,1,1", "--seed=-0x1"]
        );
        // A flag given with `=`, a short flag, a value that is no number: as they were.
        for args in [
            &["k", "--rect=-1,0,1,1"][..],
            &["k", "-h", "-1"],
            &["k", "--trace", "-x.json"],
            &["k", "--blocks", "3", "-1"],
        ] {
            assert_eq!(joined(args), args, "{args:?}");
        }
        // After `--` every argument is a value of its own.
        assert_eq!(
            joined(&["k", "--", "--rect", "-1,0,1,1"]),
            ["k", "--", "--rect", "-1,0,1,1"]
        );
    }
}
