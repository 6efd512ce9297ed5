//! A kernel task's bookkeeping as the scheduler keeps it (its future lives in `Sim`).
//!
//! Leaf module: plain data; imports only the leaf `packet`.

use komorebi_hal::Role;

use crate::packet::TileIx;

/// A task's scheduling state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Being polled.
    Running,
    /// Waiting; `woken` once a wake-up is queued; `sleeping` ones ignore tile changes.
    Parked { woken: bool, sleeping: bool },
    /// Returned.
    Done,
    /// Dropped: its core was put back into soft reset.
    Reset,
}

/// A kernel task's bookkeeping.
#[derive(Clone, Debug)]
pub(crate) struct TaskMeta {
    pub tile: TileIx,
    pub kernel: Role,
    /// The kernel's own clock: never behind the cycle it was last resumed at.
    pub local: u64,
    pub state: TaskState,
    pub epoch: u64,
    pub parked_at: u64,
    /// Stopped by a fault: it is never polled again and its HAL calls have no effect.
    pub stalled: bool,
    /// The deadline of its current wait (`u64::MAX`: none).
    pub deadline: u64,
    /// The time of its one live `Deadline` entry in the queue, if any.
    pub deadline_entry: Option<u64>,
}

impl TaskMeta {
    /// Its state as `Sim::tasks` names it.
    pub(crate) fn state_name(&self) -> &'static str {
        if self.stalled {
            return "stalled";
        }
        match self.state {
            TaskState::Running => "running",
            TaskState::Parked { .. } => "waiting",
            TaskState::Done => "done",
            TaskState::Reset => "reset",
        }
    }
}
