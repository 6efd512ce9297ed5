//! Tile reservations: the mechanism that keeps an exclusive command's tiles to itself.
//!
//! Every region of tiles has one word: the number of non-exclusive commands in flight on it (at
//! most [`SHARED_MAX`], the tiles' command slots), or [`EXCLUSIVE`] while an exclusive one is.
//! (The dispatcher's regions are the tiles covered by exactly the same groups, so a group
//! covers whole regions and reserving its regions is reserving its tiles; a region may also be
//! a single tile.) A command is posted only after it
//! reserved every region of its group: shared for a plain command, exclusive for one flagged
//! `EXCLUSIVE`. Reserving never waits: the regions are taken in ascending order with one
//! compare-and-swap each, and on the first refusal the ones already taken are given back, so two
//! placers can never deadlock and the dispatcher can try other work instead.
//!
//! A region taken and given back was held for a moment by a command that is not posted: another
//! placer refused meanwhile would park with nothing to wake it. So every word is looked at
//! before any is taken (a command blocked for good, by a region held late, never holds the
//! others even for a moment), and a reservation that still had to give regions back says so
//! ([`Blocked::RolledBack`]): the dispatcher then wakes its sleepers to look again.
//!
//! Guarantees: while an exclusive reservation of a region is held, no other reservation of that
//! region is; the assigner's choice cannot break it, because the flags checked are those of the command
//! about to be posted. No region has more than [`SHARED_MAX`] shared reservations: overlapping
//! groups each with free scheduling slots would otherwise post a third command to a tile whose
//! two slots are taken, which the device refuses (`SlotsFull`) instead of running it later.
//!
//! Orderings: taking a region is `Acquire` and giving it back is `Release`, so whatever the last
//! holder did before releasing (reading the device's report of its command) happens before the
//! next holder posts.

use crossbeam_utils::CachePadded;

use super::sync::{AtomicU32, Ordering};

/// The word of a region an exclusive command holds.
pub const EXCLUSIVE: u32 = u32::MAX;

/// The most shared reservations a region takes: a tile's command slots (`abi::SLOTS`).
pub const SHARED_MAX: u32 = komorebi_kernel::abi::SLOTS;

/// The reservation words of every region.
#[derive(Debug)]
pub struct Reservations {
    // One cache line per region: neighbouring groups belong to different workers, and sharing
    // lines made every reservation a cache miss (20% of the host overhead with 2 workers).
    words: Box<[CachePadded<AtomicU32>]>,
    /// Unique in the process: the [`Held`]s it gives carry it, so that another set's is refused.
    id: u64,
}

/// The next [`Reservations`]' id (a plain counter: no part of what loom models).
static NEXT_SET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Why [`Reservations::try_reserve`] holds nothing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Blocked {
    /// A region was unavailable (or out of range) when first looked at: nothing was taken.
    Refused,
    /// A region became unavailable while the earlier ones were being taken: they were given
    /// back, and another placer may have been refused by them meanwhile.
    RolledBack,
}

impl Blocked {
    /// Whether another placer may have parked, refused by regions this attempt held for a
    /// moment: the dispatcher then wakes its sleepers to look again (without counting it as
    /// activity).
    pub fn wakes_sleepers(self) -> bool {
        self == Blocked::RolledBack
    }
}

/// Regions one command holds; give them back with [`Reservations::release`].
#[derive(Debug)]
#[must_use = "a reservation is held until it is released"]
pub struct Held<'a> {
    regions: &'a [u32],
    exclusive: bool,
    /// The id of the [`Reservations`] that gave it.
    owner: u64,
}

impl Held<'_> {
    /// Whether the regions are held exclusively.
    pub fn exclusive(&self) -> bool {
        self.exclusive
    }

    /// The regions held.
    pub fn regions(&self) -> &[u32] {
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
            id: NEXT_SET.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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
    /// exclusively or shared; with nothing held, [`Blocked`] when some region is not available
    /// that way or out of range: [`Blocked::RolledBack`] if regions were taken and given back
    /// (see the module docs).
    pub fn try_reserve<'a>(
        &self,
        regions: &'a [u32],
        exclusive: bool,
    ) -> Result<Held<'a>, Blocked> {
        let available = |r: u32| {
            self.words
                .get(r as usize)
                .is_some_and(|word| Self::free_for(word.load(Ordering::Relaxed), exclusive))
        };
        if !regions.iter().all(|&r| available(r)) {
            return Err(Blocked::Refused);
        }
        for (n, &r) in regions.iter().enumerate() {
            if !Self::take(&self.words[r as usize], exclusive) {
                for &u in regions[..n].iter().rev() {
                    Self::give_back(&self.words[u as usize], exclusive);
                }
                return Err(match n {
                    0 => Blocked::Refused,
                    _ => Blocked::RolledBack,
                });
            }
        }
        Ok(Held {
            regions,
            exclusive,
            owner: self.id,
        })
    }

    /// Whether a region whose word is `word` can be taken that way.
    fn free_for(word: u32, exclusive: bool) -> bool {
        if exclusive {
            word == 0
        } else {
            // Also refuses while exclusive (EXCLUSIVE > SHARED_MAX).
            word < SHARED_MAX
        }
    }

    /// Gives back every region of `held`; `false`, and nothing given back, when `held` came
    /// from another set of reservations (its regions are not this set's: giving them back here
    /// indexed past this set's words, or wrapped a free word round to [`EXCLUSIVE`] for good).
    pub fn release(&self, held: Held<'_>) -> bool {
        if held.owner != self.id {
            return false;
        }
        for &r in held.regions.iter().rev() {
            Self::give_back(&self.words[r as usize], held.exclusive);
        }
        true
    }

    /// The word of region `region`: holders of a shared reservation, or [`EXCLUSIVE`]. For tests
    /// and diagnostics; it may change as soon as it is read.
    pub fn word(&self, region: u32) -> Option<u32> {
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
            if !Self::free_for(seen, false) {
                return false;
            }
            match word.compare_exchange_weak(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed) {
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_every_overlap_and_shared_shares() {
        let r = Reservations::new(8);
        let a = r.try_reserve(&[1, 2, 3], true).expect("free tiles");
        assert!(r.try_reserve(&[3, 4], false).is_err());
        assert!(r.try_reserve(&[0, 1], true).is_err());
        // A refusal gives back what it took: tile 0 and 4 are still free.
        assert_eq!((r.word(0), r.word(4)), (Some(0), Some(0)));
        let b = r.try_reserve(&[4, 5], false).expect("disjoint");
        let c = r.try_reserve(&[5, 6], false).expect("shared with b");
        assert_eq!(r.word(5), Some(2));
        assert!(r.try_reserve(&[5], true).is_err());
        // Two shared holders fill a tile's two command slots: a third is refused, and what it
        // took of its other regions (4) is given back.
        assert!(r.try_reserve(&[4, 5], false).is_err());
        assert_eq!((r.word(4), r.word(5)), (Some(1), Some(2)));
        // Another set's reservation is refused, nothing given back (it indexed past this
        // set's words, or wrapped a free word round to EXCLUSIVE).
        let other = Reservations::new(2);
        assert!(!other.release(r.try_reserve(&[7], false).expect("free")));
        assert!(!other.release(r.try_reserve(&[0], true).expect("free")));
        assert_eq!((other.word(0), other.word(1)), (Some(0), Some(0)));
        assert!(r.release(a));
        assert!(r.release(b));
        assert!(r.release(c));
        assert_eq!((r.word(0), r.word(7)), (Some(EXCLUSIVE), Some(1)));
    }

    #[test]
    fn out_of_range_tiles_are_refused_with_nothing_held() {
        let r = Reservations::new(4);
        assert!(r.try_reserve(&[2, 9], false).is_err());
        assert_eq!(r.word(2), Some(0));
        assert_eq!(r.word(9), None);
    }
}
