//! Fault injection: stall a kernel, freeze a tile, drop or delay one transaction; and what the
//! host sees of a broken card: a hung device, a dead tile.
//!
//! Stalls and freezes stop kernels the way a hung core stops: a stalled kernel is never
//! resumed again and HAL calls it makes after the stall point have no effect (so a kernel that
//! is stalled in the middle of a poll does nothing more before it next waits). The NIU and L1 of
//! a frozen tile keep working: writes still land and are acknowledged.
//!
//! Leaf module: imports nothing of the crate.

use std::ops::Range;

use komorebi_hal::Role;

/// When a stalled kernel stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StallFrom {
    /// From this cycle on.
    Time(u64),
    /// At its first push to circular buffer `cb` that would take the pages it pushed since the
    /// fault was set beyond `after_pages` (a data-movement kernel that stops before a block).
    Push {
        /// Circular buffer index.
        cb: u8,
        /// Pages it still pushes.
        after_pages: u32,
    },
    /// At its first pop from `cb` beyond `after_pages` pages (a compute kernel that stops
    /// popping at a block).
    Pop {
        /// Circular buffer index.
        cb: u8,
        /// Pages it still pops.
        after_pages: u32,
    },
}

/// Kinds of NoC transaction a filter can match.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TxKind {
    /// A read (matched when the request leaves).
    Read,
    /// A unicast write (matched per destination).
    Write,
    /// A multicast (matched per destination).
    Multicast,
}

/// Which transaction a fault hits: every given field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxFilter {
    /// Kind.
    pub kind: Option<TxKind>,
    /// NoC (0 or 1).
    pub noc: Option<u8>,
    /// NoC0 coordinates of the issuing tile.
    pub src: Option<(u8, u8)>,
    /// NoC0 coordinates of a destination (for a read, the tile read from).
    pub dst: Option<(u8, u8)>,
    /// Destination address range (for a read, the source address).
    pub addr: Option<Range<u64>>,
    /// Matching transactions to let through before the one that is hit.
    pub skip: u32,
}

/// What happens to the transaction hit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TxAction {
    /// Lost on the NoC: nothing lands. With `ack`, the source still counts an
    /// acknowledgement (a write that was lost after the destination acknowledged it); without,
    /// its acknowledgement is lost too, as a packet lost in the network would be.
    Drop {
        /// Whether the source still gets the acknowledgement.
        ack: bool,
    },
    /// Lands this many cycles late (ordered traffic behind it waits, as on a real NoC).
    Delay(u64),
}

/// A fault to inject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Stop one kernel of one tile.
    StallKernel {
        /// NoC0 coordinates of the tile.
        tile: (u8, u8),
        /// Which kernel.
        kernel: Role,
        /// When.
        from: StallFrom,
    },
    /// Stop every kernel of a tile from `at` on.
    FreezeTile {
        /// NoC0 coordinates of the tile.
        tile: (u8, u8),
        /// Cycle.
        at: u64,
    },
    /// Hit one transaction.
    Transaction {
        /// Which one.
        filter: TxFilter,
        /// What happens to it.
        action: TxAction,
    },
    /// The whole device stops answering the host: every BAR read (TLB windows, their
    /// configuration registers and the PCIe tile's BAR0 registers alike) returns all 0xFF
    /// bytes and every BAR write is dropped, as a hung card reads `0xFFFF_FFFF`
    /// (`blackhole_pac::arc::HUNG_READ`). Kernels are not affected.
    Hung,
    /// The tile at these NoC0 coordinates (any tile: Tensix, a DRAM port, ARC) stops answering
    /// TLB windows: reads through a window targeting it return 0xFF bytes and writes to it are
    /// dropped (a multicast still reaches the rectangle's other tiles). BAR0 registers still
    /// read normally, so a host can tell a dead tile from a hung device. Only the host's
    /// accesses are affected; kernels' NoC traffic is not.
    DeadTile((u8, u8)),
}

/// The effect of the transaction faults on one delivery.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Effect {
    pub drop: bool,
    pub ack_anyway: bool,
    pub delay: u64,
}

#[derive(Clone, Debug)]
struct Armed {
    filter: TxFilter,
    action: TxAction,
    seen: u32,
    fired: bool,
}

/// The transaction faults still to fire, and the stalls waiting for their trigger.
#[derive(Clone, Debug, Default)]
pub(crate) struct Faults {
    tx: Vec<Armed>,
    /// `(task, trigger)` of stalls on a push or pop count.
    pub stalls: Vec<(usize, StallFrom)>,
    /// [`Fault::Hung`] was injected.
    pub hung: bool,
    /// NoC0 coordinates of the [`Fault::DeadTile`] tiles.
    pub dead: Vec<(u8, u8)>,
}

impl Faults {
    pub(crate) fn add_tx(&mut self, filter: TxFilter, action: TxAction) {
        self.tx.push(Armed {
            filter,
            action,
            seen: 0,
            fired: false,
        });
    }

    /// The effect of the armed faults on a transaction; a fault fires once.
    pub(crate) fn match_tx(
        &mut self,
        kind: TxKind,
        noc: u8,
        src: (u8, u8),
        dst: (u8, u8),
        addr: u64,
    ) -> Effect {
        let mut effect = Effect::default();
        for a in self.tx.iter_mut().filter(|a| !a.fired) {
            let f = &a.filter;
            let hit = f.kind.is_none_or(|k| k == kind)
                && f.noc.is_none_or(|n| n == noc)
                && f.src.is_none_or(|s| s == src)
                && f.dst.is_none_or(|d| d == dst)
                && f.addr.as_ref().is_none_or(|r| r.contains(&addr));
            if !hit {
                continue;
            }
            if a.seen < f.skip {
                a.seen += 1;
                continue;
            }
            a.fired = true;
            match a.action {
                TxAction::Drop { ack } => {
                    effect.drop = true;
                    effect.ack_anyway |= ack;
                }
                TxAction::Delay(d) => effect.delay = effect.delay.saturating_add(d),
            }
        }
        effect
    }

    /// Each transaction fault, in arming order: whether it fired.
    pub(crate) fn fired(&self) -> Vec<bool> {
        self.tx.iter().map(|a| a.fired).collect()
    }
}
