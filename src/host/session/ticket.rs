//! [`Ticket`]: a command posted on a session's cores, what the host waits for and reports.

use komorebi_hal::LogicalRect;

/// A posted command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// Its sequence number.
    pub sequence: u32,
    /// Its group.
    pub group: LogicalRect,
    /// Whether it is exclusive.
    pub exclusive: bool,
    /// `(tile, index)` of every core.
    pub(crate) tiles: Vec<(usize, u32)>,
    /// The session that posted it ([`Session`](super::Session)'s id): its tiles are indices
    /// into that session's grid, which another session's may not match.
    pub(crate) session: u64,
    /// Device cycle it was posted at.
    pub posted_at: u64,
    /// Device cycle by which every core must have reported.
    pub deadline: u64,
}

impl Ticket {
    /// Device cycles from its post to its deadline.
    pub fn budget(&self) -> u64 {
        self.deadline.saturating_sub(self.posted_at)
    }
}
