//! The dispatcher's configuration and group ids: plain data every part of it shares.

use serde::Serialize;

/// A group's index in the list the dispatcher was made with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct GroupId(pub u32);

/// How the dispatcher runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchConfig {
    /// Worker threads, each owning a shard of the groups, `1..=64`.
    pub workers: usize,
    /// Scheduling slots per group, `1..=2` (the tiles' command slots).
    pub depth: usize,
    /// Passes a worker with commands in flight spins before it parks.
    pub spin: u32,
    /// Stealable commands offered to the assigner besides the pinned one, `1..=64`: the
    /// worker's newest (its deque is last in, first out). An assigner that declines every one
    /// it is shown stalls the older ones behind them, which the run then abandons.
    pub lookahead: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        Self {
            workers: 2,
            depth: 2,
            spin: 64,
            lookahead: 4,
        }
    }
}
