//! Host writes in flight: posted writes through a TLB window that is not `Strict` (with
//! `SimConfig::reorder_posted_writes`), held per destination and delivered in a seeded random
//! order, as Blackhole's dynamic-VC host writes can reach a tile in any order (tt-umd #2735).
//!
//! The queue only keeps and orders the writes; the caller says when they go: all of one
//! destination at once ([`Posted::take`]: a read-back barrier or a Strict write), or all of them
//! spread over the next cycles ([`Posted::schedule`]: time passes).
//!
//! Leaf module: imports only the leaf `rng`.

use std::collections::BTreeMap;

use crate::rng::SplitMix64;

/// Held writes `W` keyed by destination `K`.
#[derive(Debug)]
pub(crate) struct Posted<K, W> {
    rng: SplitMix64,
    next: u64,
    held: BTreeMap<u64, (K, W)>,
    /// Ids of held writes that no event is scheduled for yet.
    unscheduled: Vec<u64>,
}

impl<K: Copy + Eq, W> Posted<K, W> {
    /// An empty queue whose orders `rng` draws.
    pub(crate) fn new(rng: SplitMix64) -> Self {
        Self {
            rng,
            next: 0,
            held: BTreeMap::new(),
            unscheduled: Vec::new(),
        }
    }

    /// Holds write `w` to `key`.
    pub(crate) fn hold(&mut self, key: K, w: W) {
        let id = self.next;
        self.next += 1;
        self.held.insert(id, (key, w));
        self.unscheduled.push(id);
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    /// Every write held for `key` (scheduled or not), in a random order; none of them is held
    /// any longer.
    pub(crate) fn take(&mut self, key: K) -> Vec<W> {
        let mut ids: Vec<u64> = self
            .held
            .iter()
            .filter(|(_, (k, _))| *k == key)
            .map(|(&id, _)| id)
            .collect();
        if ids.is_empty() {
            return Vec::new();
        }
        self.shuffle(&mut ids);
        self.unscheduled.retain(|id| self.held[id].0 != key);
        ids.into_iter()
            .map(|id| self.held.remove(&id).expect("held").1)
            .collect()
    }

    /// The ids of every write not yet scheduled, in a random order: the caller queues one
    /// landing event per id, in this order, and calls [`Posted::land`] when it comes.
    pub(crate) fn schedule(&mut self) -> Vec<u64> {
        let mut ids = std::mem::take(&mut self.unscheduled);
        self.shuffle(&mut ids);
        ids
    }

    /// The write of `id`, if it is still held (a `take` may have delivered it already).
    pub(crate) fn land(&mut self, id: u64) -> Option<(K, W)> {
        self.held.remove(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_is_a_permutation_of_one_key_and_land_skips_taken_writes() {
        let mut p = Posted::new(SplitMix64::new(3));
        for i in 0..10 {
            p.hold(i % 2, i);
        }
        let mut even = p.take(0);
        even.sort();
        assert_eq!(even, vec![0, 2, 4, 6, 8]);
        let ids = p.schedule();
        assert_eq!(ids.len(), 5);
        assert!(p.schedule().is_empty());
        p.hold(1, 99);
        assert_eq!(p.take(1).len(), 6, "scheduled and unscheduled alike");
        assert!(ids.iter().all(|&id| p.land(id).is_none()));
        assert!(p.is_empty());
    }
}
