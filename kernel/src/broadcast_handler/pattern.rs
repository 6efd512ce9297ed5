//! The data pattern the host writes and compute checks: each page's words an affine run from a
//! hash of (job, broadcast, block, page), and compute's check of a page against it.

use komorebi_broadcast::compute::ComputeError;
use komorebi_hal::CircularBuffer;

use super::program::ComputeInput;

/// The step between consecutive words of a page's pattern ([`pattern_word`]): odd, so two
/// words of one page differ, however far apart, and a page moved by any whole number of words
/// shows.
pub const PATTERN_STRIDE: u32 = 0x9E37_79B9;

/// The first word of page `page` of block `block` of broadcast `broadcast` in job `job`: a
/// 32-bit hash of the four (MurmurHash3's `fmix32` finalizer over them mixed with odd
/// constants), so pages of other blocks, broadcasts or jobs start elsewhere.
pub fn pattern_base(job: u32, broadcast: u8, block: u32, page: u32) -> u32 {
    let mut z = job.wrapping_mul(0x9E37_79B9)
        ^ (broadcast as u32).rotate_left(24)
        ^ block.wrapping_mul(0x85EB_CA6B)
        ^ page.wrapping_mul(0xC2B2_AE35).rotate_left(13)
        ^ 0x6A09_E667;
    z ^= z >> 16;
    z = z.wrapping_mul(0x7FEB_352D);
    z ^= z >> 15;
    z = z.wrapping_mul(0x846C_A68B);
    z ^ (z >> 16)
}

/// The 32-bit pattern word `word` of page `page` of block `block` of broadcast `broadcast` in
/// job `job`: what the host writes to DRAM (little-endian) and compute checks,
/// `pattern_base(job, broadcast, block, page) + word * PATTERN_STRIDE` (wrapping). Affine in
/// the word so that compute follows it with one add a word: its check is one L1 load, an xor,
/// an or and an add per word, and every byte of every page is still compared.
pub fn pattern_word(job: u32, broadcast: u8, block: u32, page: u32, word: u32) -> u32 {
    pattern_base(job, broadcast, block, page).wrapping_add(word.wrapping_mul(PATTERN_STRIDE))
}

/// Whether `run` is the pattern from `expected` on: `expected`, then each word
/// [`PATTERN_STRIDE`] more than the one before (wrapping).
///
/// The differences are OR-ed together, four words a turn, with no exit per word: on the
/// firmware, where the simulator times each instruction, the loop's own branch and counter are
/// paid once per four words; on the host the compiler vectorizes it. A page fails only as a
/// whole, so the early exit would save nothing on data that is right.
///
/// Not inlined: in a function of its own the loop has every register to itself. Inlined into
/// compute's body, which registers stay free depends on the code around it, and a build that
/// spilled one of its strides paid a stack load each turn (6% more compute cycles with
/// checking, measured 2026-12-06); one call a page costs next to nothing against its words.
#[inline(never)]
fn words_follow(run: &[u32], expected: u32) -> bool {
    let s = PATTERN_STRIDE;
    let (s2, s3, s4) = (s.wrapping_mul(2), s.wrapping_mul(3), s.wrapping_mul(4));
    let mut e = expected;
    let mut diff = 0;
    let mut quads = run.chunks_exact(4);
    for q in &mut quads {
        diff |= (q[0] ^ e)
            | (q[1] ^ e.wrapping_add(s))
            | (q[2] ^ e.wrapping_add(s2))
            | (q[3] ^ e.wrapping_add(s3));
        e = e.wrapping_add(s4);
    }
    for &w in quads.remainder() {
        diff |= w ^ e;
        e = e.wrapping_add(s);
    }
    diff == 0
}

/// Checks the program's page size of page `page` against the pattern, in place where the
/// buffer lends it so; returns false on a mismatch. A page size that is not a whole number of
/// words fails (its last bytes could not be compared); one other than the buffer's pages is an
/// error: larger, a read beyond the page; smaller, the producer packed the pages closer than
/// the buffer's slots, so the bytes compared would not be the pages (a mismatch where the data
/// landed as sent).
pub(super) fn check_page<C: CircularBuffer>(
    cb: &mut C,
    s: &ComputeInput,
    job: u32,
    block: u32,
    page: u16,
) -> Result<bool, ComputeError> {
    if s.page_size != cb.page_size() {
        return Err(ComputeError::Cb(komorebi_hal::cb::ErrorKind::OutOfRange));
    }
    let base = pattern_base(job, s.broadcast, block, page as u32);
    let words = s.page_size / 4;
    let all = cb
        .scan_page(page, &mut |first, run| {
            let end = run.len().min(words.saturating_sub(first) as usize);
            words_follow(
                &run[..end],
                base.wrapping_add(first.wrapping_mul(PATTERN_STRIDE)),
            )
        })
        .map_err(|e| ComputeError::Cb(komorebi_hal::cb::Error::kind(&e)))?;
    Ok(all && s.page_size % 4 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word of a run is compared, in the loop's quads and in its tail of 1 to 3 words
    /// (runs of whole 16-byte units never reach the tail).
    #[test]
    fn a_run_follows_the_pattern_only_if_every_word_does() {
        let start = 0x1234_5678u32;
        assert!(words_follow(&[], start), "an empty run");
        for len in 1..=11u32 {
            let mut words = [0u32; 11];
            for (i, w) in words.iter_mut().enumerate() {
                *w = start.wrapping_add((i as u32).wrapping_mul(PATTERN_STRIDE));
            }
            let run = &words[..len as usize];
            assert!(words_follow(run, start), "{len} words");
            assert!(
                !words_follow(run, start.wrapping_add(1)),
                "{len}: another start"
            );
            for i in 0..len as usize {
                for bit in [0, 17, 31] {
                    let mut bad = words;
                    bad[i] ^= 1 << bit;
                    let bad = &bad[..len as usize];
                    assert!(!words_follow(bad, start), "{len} words, word {i} bit {bit}");
                }
            }
        }
    }

    /// Two words wrong in the same bit are still wrong, wherever they are in a quad or across
    /// quads: the differences are OR-ed, so one cannot cancel the other.
    #[test]
    fn two_words_wrong_in_the_same_bit_do_not_cancel() {
        let start = 0x1234_5678u32;
        let mut words = [0u32; 8];
        for (i, w) in words.iter_mut().enumerate() {
            *w = start.wrapping_add((i as u32).wrapping_mul(PATTERN_STRIDE));
        }
        for i in 0..words.len() {
            for j in i + 1..words.len() {
                let mut bad = words;
                bad[i] ^= 1 << 5;
                bad[j] ^= 1 << 5;
                assert!(!words_follow(&bad, start), "words {i} and {j}");
            }
        }
    }
}
