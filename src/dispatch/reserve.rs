//! Tile reservations: the mechanism that keeps an exclusive command's tiles to itself.
//!
//! Every region of tiles has one word: the number of non-exclusive commands in flight on it, or
//! [`EXCLUSIVE`] while an exclusive one is. (The dispatcher's regions are the tiles covered by
//! exactly the same groups, so a group covers whole regions and reserving its regions is
//! reserving its tiles; a region may also be a single tile.) A command is posted only after it
//! reserved every region of its group: shared for a plain command, exclusive for one flagged
//! `EXCLUSIVE`. Reserving never waits: the regions are taken in ascending order with one
//! compare-and-swap each, and on the first refusal the ones already taken are given back, so two
//! placers can never deadlock and the dispatcher can try other work instead.
//!
//! Guarantee: while an exclusive reservation of a region is held, no other reservation of that
//! region is; the assigner's choice cannot break it, because the flags checked are those of the command
//! about to be posted.
//!
//! Orderings: taking a region is `Acquire` and giving it back is `Release`, so whatever the last
//! holder did before releasing (reading the device's report of its command) happens before the
//! next holder posts.

use crossbeam_utils::CachePadded;

use super::sync::{AtomicU32, Ordering};

/// The word of a region an exclusive command holds.
pub const EXCLUSIVE: u32 = u32::MAX;

/// The reservation words of every region.
#[derive(Debug)]
pub struct Reservations {
    // One cache line per region: neighbouring groups belong to different workers, and sharing
    // lines made every reservation a cache miss (20% of the host overhead with 2 workers).
    words: Box<[CachePadded<AtomicU32>]>,
}

/// Regions one command holds; give them back with [`Reservations::release`].
#[derive(Debug)]
#[must_use = "a reservation is held until it is released"]
pub struct Held<'a> {
    regions: &'a [u16],
    exclusive: bool,
}

impl Held<'_> {
    /// Whether the regions are held exclusively.
    pub fn exclusive(&self) -> bool {
        self.exclusive
    }

    /// The regions held.
    pub fn regions(&self) -> &[u16] {
        self.regions
    }
}

impl Reservations {
    /// Words for `regions` regions, all free.
    pub fn new(regions: usize) -> Self {
        Self {
            words: (0..regions)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
        }
    }

    /// Number of regions.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are no regions.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Reserves every region of `regions` (ascending, each below [`len`](Self::len)),
    /// exclusively or shared; `None`, with nothing held, when some region is not available that
    /// way or out of range.
    pub fn try_reserve<'a>(&self, regions: &'a [u16], exclusive: bool) -> Option<Held<'a>> {
        for (n, &r) in regions.iter().enumerate() {
            let taken = self
                .words
                .get(r as usize)
                .is_some_and(|word| Self::take(word, exclusive));
            if !taken {
                for &u in regions[..n].iter().rev() {
                    Self::give_back(&self.words[u as usize], exclusive);
                }
                return None;
            }
        }
        Some(Held { regions, exclusive })
    }

    /// Gives back every region of `held`.
    pub fn release(&self, held: Held<'_>) {
        for &r in held.regions.iter().rev() {
            Self::give_back(&self.words[r as usize], held.exclusive);
        }
    }

    /// The word of region `region`: holders of a shared reservation, or [`EXCLUSIVE`]. For tests
    /// and diagnostics; it may change as soon as it is read.
    pub fn word(&self, region: u16) -> Option<u32> {
        self.words
            .get(region as usize)
            .map(|w| w.load(Ordering::Relaxed))
    }

    fn take(word: &AtomicU32, exclusive: bool) -> bool {
        if exclusive {
            return word
                .compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        }
        let mut seen = word.load(Ordering::Relaxed);
        loop {
            let Some(next) = after_take(seen, false) else {
                return false;
            };
            match word.compare_exchange_weak(seen, next, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => seen = now,
            }
        }
    }

    fn give_back(word: &AtomicU32, exclusive: bool) {
        if exclusive {
            word.store(0, Ordering::Release);
        } else {
            word.fetch_sub(1, Ordering::Release);
        }
    }
}

/// A region's word after one more reservation, or `None` if the region is not available that
/// way: exclusively only when free, shared while nobody holds it exclusively. (A region has a
/// handful of shared holders at most, its groups' command slots; refusing at `EXCLUSIVE - 1`
/// keeps the count from ever reading as exclusive.)
fn after_take(word: u32, exclusive: bool) -> Option<u32> {
    match (exclusive, word) {
        (true, 0) => Some(EXCLUSIVE),
        (true, _) => None,
        (false, w) if w >= EXCLUSIVE - 1 => None,
        (false, w) => Some(w + 1),
    }
}

/// The words of the regions that only one worker's groups cover, kept by that worker: the same
/// rule as [`Reservations`] in plain integers, since no other thread ever reserves them. (With
/// the shards disjoint, which is the usual case, no reservation needs an atomic at all.)
#[derive(Debug, Clone, Default)]
pub struct PrivateReservations {
    words: Vec<u32>,
}

impl PrivateReservations {
    /// Words for regions `0..regions`, all free (a worker uses only its own).
    pub fn new(regions: usize) -> Self {
        Self {
            words: vec![0; regions],
        }
    }

    /// Reserves every region of `regions` (each below the count given to
    /// [`new`](Self::new)), exclusively or shared; `false`, with nothing held, when some region
    /// is not available that way or out of range.
    pub fn try_reserve(&mut self, regions: &[u16], exclusive: bool) -> bool {
        for (n, &r) in regions.iter().enumerate() {
            let next = self
                .words
                .get(r as usize)
                .and_then(|&w| after_take(w, exclusive));
            match next {
                Some(w) => self.words[r as usize] = w,
                None => {
                    self.release(&regions[..n], exclusive);
                    return false;
                }
            }
        }
        true
    }

    /// Gives back every region of `regions`, reserved before with the same `exclusive`.
    pub fn release(&mut self, regions: &[u16], exclusive: bool) {
        for &r in regions {
            if let Some(w) = self.words.get_mut(r as usize) {
                *w = if exclusive { 0 } else { w.saturating_sub(1) };
            }
        }
    }

    /// The word of region `region` (see [`Reservations::word`]).
    pub fn word(&self, region: u16) -> Option<u32> {
        self.words.get(region as usize).copied()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_every_overlap_and_shared_shares() {
        let r = Reservations::new(8);
        let a = r.try_reserve(&[1, 2, 3], true).expect("free tiles");
        assert!(r.try_reserve(&[3, 4], false).is_none());
        assert!(r.try_reserve(&[0, 1], true).is_none());
        // A refusal gives back what it took: tile 0 and 4 are still free.
        assert_eq!((r.word(0), r.word(4)), (Some(0), Some(0)));
        let b = r.try_reserve(&[4, 5], false).expect("disjoint");
        let c = r.try_reserve(&[5, 6], false).expect("shared with b");
        assert_eq!(r.word(5), Some(2));
        assert!(r.try_reserve(&[5], true).is_none());
        r.release(a);
        r.release(b);
        r.release(c);
        assert!((0..8).all(|t| r.word(t) == Some(0)));
    }

    #[test]
    fn private_words_follow_the_same_rule() {
        let mut p = PrivateReservations::new(8);
        assert!(p.try_reserve(&[1, 2, 3], true));
        assert!(!p.try_reserve(&[3, 4], false));
        assert!(!p.try_reserve(&[0, 1], true));
        assert_eq!((p.word(0), p.word(4)), (Some(0), Some(0)));
        assert!(p.try_reserve(&[4, 5], false));
        assert!(p.try_reserve(&[5, 6], false));
        assert_eq!(p.word(5), Some(2));
        assert!(!p.try_reserve(&[5], true));
        assert!(!p.try_reserve(&[7, 9], false), "out of range");
        assert_eq!(p.word(7), Some(0));
        p.release(&[1, 2, 3], true);
        p.release(&[4, 5], false);
        p.release(&[5, 6], false);
        assert!((0..8).all(|t| p.word(t) == Some(0)));
    }

    #[test]
    fn out_of_range_tiles_are_refused_with_nothing_held() {
        let r = Reservations::new(4);
        assert!(r.try_reserve(&[2, 9], false).is_none());
        assert_eq!(r.word(2), Some(0));
        assert_eq!(r.word(9), None);
    }
}
