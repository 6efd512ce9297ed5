//! How a card is opened and uses its windows ([`CardOptions`]).

use blackhole_pac::tlb::TlbOrdering;

use crate::arc::OpenTimeouts;

/// How a `Card` uses its windows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CardOptions {
    /// Ordering of the per-tile windows. Strict (the default) keeps a tile's writes in order;
    /// anything else needs `Card::publish_barrier` before a publishing write, which reads
    /// back.
    pub tile_ordering: TlbOrdering,
    /// Give each tile its own window (the plan); false puts every tile on the spare window.
    pub window_per_tile: bool,
    /// Read back before a publishing write when the tile windows are not Strict (see
    /// `Card::publish_barrier`). Turn it off only to watch the hazard it prevents: on a card
    /// (and on the simulator with `reorder_posted_writes`) the index word can then land before
    /// the command it publishes.
    pub read_back_before_publish: bool,
    /// Bounds of the waits at open: ARC ready, DRAM trained, the AICLK message and its clock.
    pub open: OpenTimeouts,
    /// Send a Blackhole's AICLK back to idle when the card is dropped (tt-umd's close does), if
    /// the open raised it. Off for a host that only looks at a card another process may be
    /// running (`komorebi log`): its drop would slow that run's clock.
    pub idle_clock_at_drop: bool,
    /// Raise a Blackhole's AICLK to the busy clock at open (`AICLK_GO_BUSY`, as tt-umd's open
    /// does). Off for a host that only looks (`komorebi log`, `komorebi devices`): it leaves the
    /// clock as it found it, idle or a running process's busy one, and reports the clock
    /// telemetry says.
    pub raise_clock: bool,
}

impl Default for CardOptions {
    fn default() -> Self {
        Self {
            tile_ordering: TlbOrdering::Strict,
            window_per_tile: true,
            read_back_before_publish: true,
            open: OpenTimeouts::default(),
            idle_clock_at_drop: true,
            raise_clock: true,
        }
    }
}
