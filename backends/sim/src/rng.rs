//! SplitMix64: the one seeded generator of the workspace. The simulator's adversary (delays and
//! schedule tie-breaks) and the root crate's schedule explorer (`komorebi explore`, drawing
//! broadcast shapes) both draw from it, so a seed replays the same sequence everywhere.
//!
//! Leaf module: imports nothing of the crate.

/// SplitMix64 (Steele, Lea and Flood): small, fast, and good enough for a schedule adversary
/// and for drawing test shapes; not for cryptography.
///
/// The state is the seed as given: a caller that wants distinct streams from the same seed
/// mixes its own constant into it (the simulator uses `seed ^ 0x9E37_79B9_7F4A_7C15`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose state is `state`.
    pub const fn new(state: u64) -> Self {
        Self(state)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `next_u64() % n`: in `0..n` (slightly biased for huge `n`); 0, drawing nothing, when
    /// `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// In `0..=max`: `below(max + 1)`, or the whole `next_u64()` when `max` is `u64::MAX`
    /// (where `max + 1` would overflow).
    pub fn up_to(&mut self, max: u64) -> u64 {
        match max.checked_add(1) {
            Some(n) => self.below(n),
            None => self.next_u64(),
        }
    }

    /// In `lo..=hi` (`lo + next_u64() % (hi - lo + 1)`, any span up to the whole of `u64`); with
    /// `hi` below `lo`, `lo` (drawing one value).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.up_to(hi.saturating_sub(lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sequence_and_helpers() {
        // The reference SplitMix64 output for state 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        assert_eq!(a.below(10), b.next_u64() % 10);
        assert_eq!(a.range(3, 5), 3 + b.next_u64() % 3);
        let before = a.clone();
        assert_eq!(a.below(0), 0);
        // The whole span, and a reversed one, without overflow.
        let (mut c, mut d) = (SplitMix64::new(9), SplitMix64::new(9));
        assert_eq!(c.up_to(u64::MAX), d.next_u64());
        assert_eq!(c.range(0, u64::MAX), d.next_u64());
        assert_eq!(c.range(5, 3), 5);
        d.next_u64();
        assert_eq!(c.range(3, 7), 3 + d.next_u64() % 5);
        assert_eq!(a, before);
    }
}
