//! The run's shared state: what every worker of one run reads (groups, regions, queues,
//! inboxes, stealers, the sleep, the counters, the clock), and [`regions`], which splits the
//! grid into the reservation regions. Workers only read it or touch its atomics and queues;
//! nothing in it is owned by one worker.

use crossbeam_deque::{Injector, Stealer};
use komorebi_hal::LogicalRect;

use super::config::DispatchConfig;
use super::idle::Idle;
use super::plugin::{GroupInfo, Ready};
use super::reserve::Reservations;
use super::sync::{AtomicBool, AtomicUsize, Ordering};

pub(super) enum Inbound<W, M> {
    Ready(Ready<W>),
    Message(M),
}

pub(super) struct Shared<W, M> {
    pub(super) groups: Vec<GroupInfo>,
    /// Per group, the regions it covers (see [`regions`]).
    pub(super) regions: Vec<Box<[u32]>>,
    /// Group id -> index in its owner's list.
    pub(super) local_index: Vec<usize>,
    pub(super) reservations: Reservations,
    pub(super) seeds: Injector<Ready<W>>,
    pub(super) inboxes: Vec<Injector<Inbound<W, M>>>,
    pub(super) stealers: Vec<Stealer<Ready<W>>>,
    /// The idle handshake: sleeping, driving, the activity and the stalls.
    pub(super) idle: Idle,
    /// Commands ready, in flight or unhandled, plus messages undelivered.
    pub(super) outstanding: AtomicUsize,
    /// A worker panicked or could not start: every worker leaves its loop, and the run returns
    /// [`DispatchError::WorkerPanicked`](super::DispatchError::WorkerPanicked). (Without it
    /// the others would wait for the dead one forever: it still counts as active.)
    pub(super) aborted: AtomicBool,
    /// A drive found a device lost ([`Drive::Lost`](super::Drive::Lost)): the run was aborted
    /// and returns [`DispatchError::DeviceLost`](super::DispatchError::DeviceLost).
    pub(super) lost: AtomicBool,
    /// The host clock. The hot path reads raw ticks (the invariant TSC where there is one: a
    /// few nanoseconds, where the OS clock cost a fifth of the host overhead per command);
    /// [`ns`](Self::ns) turns them into nanoseconds since `start` when a command is handled.
    pub(super) clock: &'static quanta::Clock,
    /// Raw ticks when the run started.
    pub(super) start: u64,
    pub(super) config: DispatchConfig,
}

impl<W, M> Shared<W, M> {
    /// Ends the run: every worker leaves its loop at its next look (sleepers are woken).
    pub(super) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.idle.sleep().wake_all();
    }

    /// Ends the run because a device stopped answering.
    pub(super) fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
        self.abort();
    }

    /// Whether the run was aborted ([`abort`](Self::abort)).
    pub(super) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    /// Raw clock ticks now.
    pub(super) fn now(&self) -> u64 {
        self.clock.raw()
    }

    /// Nanoseconds from the run's start to raw tick `raw` (0 for a tick before the start).
    pub(super) fn ns(&self, raw: u64) -> u64 {
        self.clock.delta_as_nanos(self.start, raw)
    }
}

/// Splits the chips' tiles into regions, tiles covered by exactly the same groups, and returns
/// every group's regions (ascending) and the number of regions; `grids[c]` is chip `c`'s grid.
///
/// Every group covers whole regions, so reserving a group's regions reserves exactly its tiles
/// against every other group, with one word per region instead of one per tile: disjoint groups
/// take one word each, however many tiles they have. Tiles of different chips are different
/// tiles, so groups of different chips never share a region. (Tiles no group covers make one
/// region that nothing takes.)
pub(super) fn regions(grids: &[LogicalRect], groups: &[GroupInfo]) -> (Vec<Box<[u32]>>, usize) {
    // Each chip's tiles are numbered after the chips before it.
    let first: Vec<usize> = grids
        .iter()
        .scan(0, |next, g| {
            let at = *next;
            *next += g.len();
            Some(at)
        })
        .collect();
    let tiles_of = |g: &GroupInfo| {
        let (r, columns, base) = (g.rect, grids[g.chip].columns as usize, first[g.chip]);
        (r.y0..r.y0 + r.rows).flat_map(move |y| {
            (r.x0..r.x0 + r.columns).map(move |x| base + y as usize * columns + x as usize)
        })
    };
    // Per tile, the groups covering it, in group order.
    let mut cover: Vec<Vec<u32>> = vec![Vec::new(); grids.iter().map(|g| g.len()).sum()];
    for g in groups {
        for t in tiles_of(g) {
            cover[t].push(g.id.0);
        }
    }
    let mut ids: std::collections::HashMap<&[u32], u32> = std::collections::HashMap::new();
    let region: Vec<u32> = cover
        .iter()
        .map(|c| {
            let next = ids.len() as u32;
            *ids.entry(c.as_slice()).or_insert(next)
        })
        .collect();
    let per_group = groups
        .iter()
        .map(|g| {
            let mut r: Vec<u32> = tiles_of(g).map(|t| region[t]).collect();
            r.sort_unstable();
            r.dedup();
            r.into()
        })
        .collect();
    (per_group, ids.len())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::dispatch::config::GroupId;

    fn group(id: u32, rect: LogicalRect) -> GroupInfo {
        GroupInfo {
            id: GroupId(id),
            chip: 0,
            rect,
            worker: 0,
        }
    }

    #[test]
    fn disjoint_groups_take_one_region_each() {
        let grid = LogicalRect::new(0, 0, 4, 2);
        let groups = [
            group(0, LogicalRect::new(0, 0, 2, 2)),
            group(1, LogicalRect::new(2, 0, 2, 2)),
        ];
        let (per_group, count) = regions(&[grid], &groups);
        assert_eq!(count, 2);
        assert_eq!(per_group[0].len(), 1);
        assert_eq!(per_group[1].len(), 1);
        assert_ne!(per_group[0][0], per_group[1][0]);
    }

    #[test]
    fn overlapping_groups_share_exactly_the_overlap() {
        // Columns 0..3 of one row; a covers 0..2, b covers 1..3: regions {0}, {1}, {2}, and the
        // uncovered column 3.
        let grid = LogicalRect::new(0, 0, 4, 1);
        let a = group(0, LogicalRect::new(0, 0, 2, 1));
        let b = group(1, LogicalRect::new(1, 0, 2, 1));
        let whole = group(2, LogicalRect::new(0, 0, 3, 1));
        let (per_group, count) = regions(&[grid], &[a, b, whole]);
        assert_eq!(count, 4);
        let shared: Vec<u32> = per_group[0]
            .iter()
            .filter(|r| per_group[1].contains(r))
            .copied()
            .collect();
        assert_eq!(shared.len(), 1, "a and b overlap in one column");
        assert_eq!(
            per_group[2].len(),
            3,
            "the whole row meets both and either alone"
        );
        assert!(per_group[0].iter().all(|r| per_group[2].contains(r)));
    }

    #[test]
    fn the_same_rectangle_on_two_chips_is_two_regions() {
        let grid = LogicalRect::new(0, 0, 2, 2);
        let rect = LogicalRect::new(0, 0, 2, 2);
        let on = |id, chip| GroupInfo {
            chip,
            ..group(id, rect)
        };
        let (per_group, count) = regions(&[grid, grid], &[on(0, 0), on(1, 1), on(2, 0)]);
        assert_eq!(
            count, 2,
            "one region a chip: groups 0 and 2 cover the same tiles"
        );
        assert_eq!(per_group[0], per_group[2]);
        assert_ne!(
            per_group[0], per_group[1],
            "chip 1's tiles are not chip 0's"
        );
    }
}
