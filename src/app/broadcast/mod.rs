//! The 03_broadcast program: jobs of two broadcasts over a rectangle, every byte checked (or,
//! with `--check none`, every block taken and popped).
//!
//! Each job is one command on the rectangle's group carrying up to two broadcasts: **A** (id 0)
//! along rows on NoC0 (sender at the left end of each row inside a panel, run by the reader) and
//! **W** (id 1) along columns on NoC1 (sender at the bottom of each column, run by the writer).
//! DRAM holds a pattern unique per (job, broadcast, block, page), pages interleaved over the 8
//! banks; every compute kernel checks every byte it receives and the order of blocks, and pops
//! them (with `--check none` compute reads no word: it takes and pops the blocks in protocol
//! order only, and the run measures the protocol and the NoC).
//!
//! | module | what |
//! |---|---|
//! | `error` | [`BroadcastError`]: what cannot run, and why |
//! | `config` | [`BroadcastConfig`]: the flags, their checks, the program's two broadcasts |
//! | `faults` | [`FaultKind`], [`FaultSpec`] (`--fault KIND:X,Y[:BLOCK]`) and which cores they may name |
//! | `plan` | [`BroadcastPlan`]: the layout, every core's typed program, the buffers and DRAM data |
//! | `host_bytes` | the host memory the simulator takes for a run's DRAM data, counted from its plan |
//! | `inject` | the faults applied: typed program fields, the simulator's transaction faults, host stops |
//! | `placement` | [`Placement`]: the DRAM bank each sender reads each of its page streams from |
//! | `load` | the chip's resources ([`Resource`]) and the work a job gives each, priced |
//! | `bound` | [`JobBound`]: the resource bound of a job and its binding [`Resource`] |
//! | `summary` | [`BroadcastSummary`]: what a run came to, the bound and efficiency, the text summary |
//! | `logs` | the cores' logs of a run as they stand, read at its end (`--log`) and after each job |
//! | `follow` | [`LogFollow`] (`--log-follow`): each job's new log lines, each line once |
//! | `records` | [`BroadcastRecords`]: the broadcast areas' give-ups in the host's reports; [`open_session`] |
//! | `run` | [`run`], [`run_session`] and [`run_session_on`] (the test feeder) and [`run_dispatched`] (the dispatcher, on one chip or several) |
//! | `chips` | several chips (`--chips`): each chip's device and seed ([`chip_seed`]) |
//! | `ranks` | several hosts (`--mpi`, feature `mpi`): each rank's share, gathered on rank 0 |

mod bound;
mod checks;
mod chips;
mod config;
mod copies;
mod error;
mod faults;
mod follow;
mod host_bytes;
mod inject;
mod load;
mod logs;
mod placement;
mod plan;
#[cfg(feature = "mpi")]
mod ranks;
mod records;
mod report_text;
mod run;
mod summary;

pub use chips::chip_seed;
pub use config::{
    BUFFER_BASE, BroadcastConfig, DRAM_BASE, DeviceChoice, MAX_CHIPS, MIN_WAIT_LIMIT, Protocol,
};
pub use error::{BroadcastError, EXIT_DEVICE};
pub use faults::{FaultKind, FaultSpec};
pub use follow::LogFollow;
pub use komorebi_kernel::broadcast_handler::program::Check;
pub use load::{JobBound, NiuPipe, Resource};
pub use placement::{Layers, Placement};
pub use plan::BroadcastPlan;
#[cfg(feature = "mpi")]
pub use ranks::{RankEnd, RankRun, abort_refused, run_ranks};
pub use records::{BroadcastRecords, open_session};
pub(crate) use report_text::kernel_costs_note;
pub use run::{JobRun, run, run_dispatched, run_session, run_session_on};
pub use summary::{BroadcastSummary, ChipSummary, JobGiveUp, JobResult, RankSummary};
