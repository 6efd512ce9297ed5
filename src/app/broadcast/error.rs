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
    /// The workers' errors when they differ (each with its chip on several chips): every one,
    /// not the first only; never fewer than two.
    #[error("{} different errors: {}", .0.len(), several(.0))]
    Several(Vec<BroadcastError>),
}

fn several(errors: &[BroadcastError]) -> String {
    let each: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    each.join("; ")
}

/// The process exit code of a device that cannot be used (missing, busy, too old, hung, a rank
/// whose MPI never returned): [`BroadcastError::device_unusable`].
pub const EXIT_DEVICE: u8 = 4;

impl BroadcastError {
    /// Whether the device itself cannot be used (exit code [`EXIT_DEVICE`]), rather than the
    /// run failing.
    pub fn device_unusable(&self) -> bool {
        match self {
            Self::Chip { error, .. } => return error.device_unusable(),
            Self::Several(errors) => return errors.iter().any(Self::device_unusable),
            _ => {}
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

impl BroadcastError {
    /// The one error of `errors` (the workers' errors of a run, in their order), or all of them
    /// as [`Self::Several`] (the same error twice is told once); `None` when there is none.
    pub(super) fn all_of(errors: Vec<BroadcastError>) -> Option<Self> {
        let mut distinct: Vec<BroadcastError> = Vec::new();
        for e in errors {
            if !distinct.contains(&e) {
                distinct.push(e);
            }
        }
        match distinct.len() {
            0 => None,
            1 => distinct.pop(),
            _ => Some(Self::Several(distinct)),
        }
    }
}

pub(super) fn flag(flag: &'static str, why: impl Into<String>) -> BroadcastError {
    BroadcastError::Flag {
        flag,
        why: why.into(),
    }
}

/// The refusal of an empty `--rect`.
pub(super) fn empty_rect(rect: komorebi_hal::LogicalRect) -> BroadcastError {
    flag(
        "--rect",
        format!("{rect} is empty (allowed: at least 1 column and 1 row)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_workers_errors_are_all_told_and_the_device_s_loss_wins() {
        assert_eq!(BroadcastError::all_of(Vec::new()), None);
        let dispatch = BroadcastError::Dispatch("no slot".into());
        assert_eq!(
            BroadcastError::all_of(vec![dispatch.clone(), dispatch.clone()]),
            Some(dispatch.clone()),
            "the same error twice is one"
        );
        let lost = BroadcastError::Chip {
            chip: 1,
            device: "sim".into(),
            error: Box::new(BroadcastError::Session(SessionError::Device(
                crate::host::device::DeviceError {
                    message: "gone".into(),
                    lost: true,
                },
            ))),
        };
        let both = BroadcastError::all_of(vec![dispatch, lost]).unwrap();
        assert_eq!(
            both.to_string(),
            format!(
                "2 different errors: dispatcher: no slot; chip 1 (sim): {}",
                SessionError::Device(crate::host::device::DeviceError {
                    message: "gone".into(),
                    lost: true,
                })
            )
        );
        assert!(
            both.device_unusable(),
            "one lost device makes the run exit 4"
        );
    }
}
