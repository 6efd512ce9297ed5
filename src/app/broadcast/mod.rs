//! The 03_broadcast program: jobs of two broadcasts over a rectangle, every byte checked.
//!
//! Each job is one command on the rectangle's group carrying up to two broadcasts: **A** (id 0)
//! along rows on NoC0 (sender at the left end of each row inside a panel, run by the reader) and
//! **W** (id 1) along columns on NoC1 (sender at the bottom of each column, run by the writer).
//! DRAM holds a pattern unique per (job, broadcast, block, page), pages interleaved over the 8
//! banks; every compute kernel checks every byte it receives and the order of blocks, and pops
//! them.

//!
//! | module | what |
//! |---|---|
//! | `config` | [`BroadcastConfig`]: the flags, their checks, the program's two broadcasts |
//! | `faults` | [`FaultKind`], [`FaultSpec`] (`--fault KIND:X,Y[:BLOCK]`) and which cores they may name |
//! | `plan` | [`BroadcastPlan`]: the layout, every core's typed program, the buffers and DRAM data |
//! | `inject` | the faults applied: typed program fields, the simulator's transaction faults, host stops |
//! | `summary` | [`BroadcastSummary`]: what a run came to, the resource bound, the text summary |
//! | `run` | [`run`], [`run_session`] (the test feeder) and [`run_dispatched`] (the dispatcher) |

mod config;
mod faults;
mod inject;
mod plan;
mod run;
mod summary;

pub use config::BroadcastConfig;
pub use faults::{FaultKind, FaultSpec};
pub use plan::BroadcastPlan;
pub use run::{run, run_dispatched, run_session};
pub use summary::{BroadcastSummary, JobResult};

use config::Operand;

use std::path::PathBuf;

use blackhole_pac::grid::DRAM_WORKER_PORT;
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::area;
use komorebi_broadcast::args::{Along, BroadcastArgs, MAX_BLOCKS, MAX_BUFFER_PAGES, MAX_WINDOW};
use komorebi_broadcast::layout::{self, BroadcastParams};
use komorebi_hal::LogicalRect;
use komorebi_hal::{NocId, Role, Xy};
use komorebi_kernel::abi;
use komorebi_kernel::broadcast_handler::program::{
    BANKS, BroadcastProgram, ComputeInput, MoverProgram, ProgramError,
};
use komorebi_kernel::broadcast_handler::{BROADCAST_HANDLER, pattern_word};
use komorebi_sim::{SimConfig, Timing};
use serde::Serialize;

use crate::dispatch::{
    Cx, DispatchConfig, DispatchSummary, Dispatcher, Finished, GroupId, GroupInfo, Outcome, Place,
    Plugin, PostHook, Ready, SimTarget, SlotView, Target, trace_events,
};
use crate::host::session::{
    Backend, CommandSpec, CoreGiveUp, Report, Session, SessionError, Ticket, TileProgram,
};

/// L1 address of the first broadcast buffer: above the control block and the firmware images
/// (`examples/firmware`'s layout ends at 0x30000).
pub const BUFFER_BASE: u32 = 0x4_0000;
/// Where the DRAM data of the jobs starts in every bank.
pub const DRAM_BASE: u64 = 0x100_0000;

/// A configuration that cannot run, or a run that could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BroadcastError {
    /// A flag value that is not allowed: which flag, and why.
    #[error("{flag}: {why}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// The session failed.
    #[error("{0}")]
    Session(#[from] SessionError),
    /// The trace could not be written.
    #[error("--trace: {0}")]
    Trace(String),
    /// A core's program failed its checks (a host bug: the plan builds them).
    #[error("the program of core {core:?}: {error}")]
    Program {
        /// The core, logical.
        core: (u8, u8),
        /// What is wrong.
        error: ProgramError,
    },
    /// The dispatcher refused the run or a job.
    #[error("dispatcher: {0}")]
    Dispatch(String),
}

pub(crate) fn flag(flag: &'static str, why: impl Into<String>) -> BroadcastError {
    BroadcastError::Flag {
        flag,
        why: why.into(),
    }
}
