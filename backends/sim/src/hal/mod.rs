//! The HAL implemented on the simulated chip: what a kernel task holds.
//!
//! Every call charges the calling kernel's clock (`Timing::kernel_issue_cycles` for a NoC
//! command, `kernel_call_cycles` or, for compute, `compute_call_cycles` otherwise: tt-metal's
//! few cycles or the firmware's measured costs, `KernelCosts`), so polling costs time as it
//! does on a baby core. Transfers are timed by the world (`world.rs`). A kernel stalled by a
//! fault gets neutral answers and its calls change nothing.
//!
//! | Module | Handle | What it is |
//! |---|---|---|
//! | `noc` | [`SimNoc`] | a data-movement kernel's NoC: reads, writes, multicasts, NIU counters |
//! | `cb` | [`SimCb`] | one circular buffer as one kernel sees it |
//! | `ctrl` | [`SimCtrl`] | the tile's control block, stop flag, wait limit, clock |
//! | `pause` | [`SimPause`] | how a kernel waits in virtual time |
//! | `error` | [`NocError`], [`CbError`], [`CtrlError`] | the refusals |
//!
//! [`KernelEnv`] (here) hands a spawned kernel its handles. The handles hold the world and use
//! it and the leaf modules; this module uses its children.

mod cb;
mod ctrl;
pub(crate) mod error;
mod noc;
mod pause;

use komorebi_hal::Role;

pub use cb::SimCb;
pub use ctrl::SimCtrl;
pub use error::{CbError, CtrlError, NocError};
pub use noc::SimNoc;
pub(crate) use pause::Parked;
pub use pause::SimPause;

use crate::packet::TileIx;
use crate::world::Shared;

/// Every handle a kernel gets when it is spawned.
#[derive(Clone)]
pub struct KernelEnv {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
    pub(crate) kernel: Role,
}

impl std::fmt::Debug for KernelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelEnv")
            .field("task", &self.task)
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl KernelEnv {
    /// The kernel's NoC (NoC0 for the reader, NoC1 for the writer; none for compute).
    pub fn noc(&self) -> Option<SimNoc> {
        self.kernel.noc().map(|noc| SimNoc {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
            noc: noc.index(),
        })
    }

    /// The tile's control block.
    pub fn ctrl(&self) -> SimCtrl {
        SimCtrl {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
        }
    }

    /// How the kernel waits.
    pub fn pause(&self) -> SimPause {
        SimPause {
            world: self.world.clone(),
            task: self.task,
        }
    }

    /// Circular buffer `index` (0..64) of the tile; calls fail until it is configured.
    pub fn cb(&self, index: u8) -> Option<SimCb> {
        let buffers = self.world.borrow().chip.circular_buffers;
        ((index as usize) < buffers).then(|| SimCb {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
            index,
        })
    }

    /// Which kernel this is.
    pub fn kernel(&self) -> Role {
        self.kernel
    }

    /// NoC0 coordinates of the kernel's tile.
    pub fn tile(&self) -> (u8, u8) {
        self.world.borrow().tiles[self.tile as usize].xy0
    }

    /// The task's id.
    pub fn task(&self) -> usize {
        self.task
    }
}
