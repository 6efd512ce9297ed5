//! Wrap-around arithmetic on the control block's 32-bit words: command indices, which wrap
//! after 2^32 commands on a tile (about a day of 20 us commands), and the records' clock words,
//! the low 32 bits of a device clock that wraps every 3.2 s at 1.35 GHz.

/// How far before its reference cycle a record's clock may read: a card's tile takes a command
/// the moment its index word lands, while the host is still posting to the group's other
/// tiles, and the tiles' wall clocks are not one counter (2^24 cycles: 12 ms at 1.35 GHz).
pub const CLOCK_SLACK: u64 = 1 << 24;

/// The full device cycle of a record's clock word `low`, taken as the one within
/// `[reference - CLOCK_SLACK, reference - CLOCK_SLACK + 2^32)`: a command's record is written
/// less than 3 s after it was posted (`reference`), and perhaps a little before the host read
/// that cycle.
pub fn extend_clock(reference: u64, low: u32) -> u64 {
    let base = reference.saturating_sub(CLOCK_SLACK);
    base.wrapping_add(u64::from(low.wrapping_sub(base as u32)))
}

/// Whether index `index` is `of` or later, in the order of a tile's commands (which wraps): the
/// HAL's one comparison of wrapping counts, which the device backends use too.
pub use komorebi_hal::wrap::at_or_after;

/// Raises `reported` to `index` if `index` comes later: a plain `max` stops at `u32::MAX` when
/// the indices wrap, and the tile would refuse every later post as full.
pub fn raise(reported: &mut u32, index: u32) {
    if !at_or_after(*reported, index) {
        *reported = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_word_extends_around_its_reference_and_across_the_wrap() {
        let r = 5 << 32 | 1_000_000;
        assert_eq!(extend_clock(r, 1_000_500), r + 500);
        // Read a little before the reference (a tile took the command during the post).
        assert_eq!(extend_clock(r, 999_000), r - 1_000);
        assert_eq!(extend_clock(r, 0), r - 1_000_000);
        // Up to 2^32 - slack after it.
        let far = r + (1 << 32) - CLOCK_SLACK - 1;
        assert_eq!(extend_clock(r, far as u32), far);
        // Across the 32-bit wrap of the low word.
        let r = (6 << 32) - 100;
        assert_eq!(extend_clock(r, 50), (6 << 32) + 50);
        assert_eq!(extend_clock(r, u32::MAX - 199), r - 100);
        // Near cycle 0 nothing goes below 0.
        assert_eq!(extend_clock(10, 20), 20);
        assert_eq!(extend_clock(10, 5), 5);
    }

    #[test]
    fn the_reported_index_rises_across_the_wrap_and_never_falls() {
        let mut reported = u32::MAX - 1;
        for index in [u32::MAX, 0, 1, 2] {
            raise(&mut reported, index);
            assert_eq!(reported, index);
        }
        raise(&mut reported, 1);
        assert_eq!(reported, 2, "an earlier index leaves it");
        assert!(at_or_after(0, u32::MAX) && !at_or_after(u32::MAX, 0));
    }
}
