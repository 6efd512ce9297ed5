//! What cannot run, and why.

use komorebi_hal::LogicalXy;
use komorebi_kernel::broadcast_handler::program::ProgramError;

use crate::host::session::SessionError;

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
    /// The trace could not be written: its file could not be made, or a write failed (disk
    /// full, ...). The feeder stops after the job in which the write failed; the dispatcher's
    /// run goes on to its end and reports it then.
    #[error("--trace {}: {error}", path.display())]
    Trace {
        /// The trace's file.
        path: std::path::PathBuf,
        /// The write that failed.
        error: komorebi_sim::trace::TraceError,
    },
    /// The firmware profile could not be made or written (`--profile`).
    #[error("--profile: {0}")]
    Profile(String),
    /// The firmware's logs could not be read, decoded or written (`--log`).
    #[error("--log: {0}")]
    Log(String),
    /// The code of a what-if run could not be found (`--speed-up`).
    #[error("{0}")]
    SpeedUp(#[from] crate::host::what_if::WhatIfError),
    /// The firmware images could not be built (`--exec firmware` without `--firmware`).
    #[error("{0}")]
    Firmware(String),
    /// A core's program failed its checks (a host bug: the plan builds them).
    #[error("the program of core {core}: {error}")]
    Program {
        /// The core.
        core: LogicalXy,
        /// What is wrong.
        error: ProgramError,
    },
    /// The dispatcher refused the run or a job.
    #[error("dispatcher: {0}")]
    Dispatch(String),
    /// What went wrong on one chip of a run on several (`--chips`).
    #[error("chip {chip} ({device}): {error}")]
    Chip {
        /// The chip's index in the run.
        chip: u32,
        /// Its device.
        device: String,
        /// What went wrong there.
        error: Box<BroadcastError>,
    },
}

/// The process exit code of a device that cannot be used (missing, busy, too old, hung, a rank
/// whose MPI never returned): [`BroadcastError::device_unusable`].
pub const EXIT_DEVICE: u8 = 4;

impl BroadcastError {
    /// Whether the device itself cannot be used (exit code [`EXIT_DEVICE`]), rather than the
    /// run failing.
    pub fn device_unusable(&self) -> bool {
        if let Self::Chip { error, .. } = self {
            return error.device_unusable();
        }
        matches!(
            self,
            Self::Session(SessionError::Unusable(_))
                | Self::Session(SessionError::Device(crate::host::device::DeviceError {
                    lost: true,
                    ..
                }))
        )
    }
}

pub(super) fn flag(flag: &'static str, why: impl Into<String>) -> BroadcastError {
    BroadcastError::Flag {
        flag,
        why: why.into(),
    }
}
