//! Order on wrapping 32-bit counters: the NIU's transaction counters, a tile's command indices,
//! anything that counts up and wraps. One comparison for the device backends, the simulator and
//! the host, so that every side agrees on which of two counts is later.

/// Whether count `count` is `of` or later, counting up from `of` with wrap-around: true when
/// `count - of` (mod 2^32) is below 2^31. Exact while the two are less than 2^31 apart, which
/// every caller keeps (fewer than 2^31 transactions outstanding, commands posted in order).
#[inline]
pub const fn at_or_after(count: u32, of: u32) -> bool {
    count.wrapping_sub(of) as i32 >= 0
}

#[cfg(test)]
mod tests {
    use super::at_or_after;

    #[test]
    fn later_counts_are_later_across_the_wrap() {
        assert!(at_or_after(5, 5));
        assert!(at_or_after(6, 5) && !at_or_after(5, 6));
        assert!(at_or_after(0, u32::MAX) && !at_or_after(u32::MAX, 0));
        // 2^31 - 1 ahead is later; 2^31 ahead reads as behind.
        assert!(at_or_after((1 << 31) - 1, 0) && !at_or_after(1 << 31, 0));
        assert!(at_or_after(u32::MAX, 1 << 31) && !at_or_after(u32::MAX, (1 << 31) - 1));
    }
}
