//! [`SessionError`]: what went wrong with a session request, and what each refusal allows.

use komorebi_broadcast::layout::LayoutError;
use komorebi_hal::{LogicalRect, LogicalXy};
use komorebi_pcie::PcieError;

use crate::host::backend::OpenError;
use crate::host::device::DeviceError;

/// What went wrong with a session request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The device refused a request.
    #[error("device: {0}")]
    Device(#[from] DeviceError),
    /// The device cannot be used at all (missing, busy, too old, not a Blackhole, hung, its
    /// firmware did not start).
    #[error("{0}")]
    Unusable(PcieError),
    /// The grid could not be laid out.
    #[error("layout: {0}")]
    Layout(#[from] LayoutError),
    /// A group that is empty or reaches outside the logical grid.
    #[error("group {group} is outside the {columns}x{rows} logical grid (or empty)")]
    Group {
        /// The group.
        group: LogicalRect,
        /// Logical columns.
        columns: u8,
        /// Logical rows.
        rows: u8,
    },
    /// Programs for a different number of cores than the group has.
    #[error("{got} programs for a group of {expected} cores (give one for all, or one per core)")]
    Programs {
        /// Cores in the group.
        expected: usize,
        /// Programs given.
        got: usize,
    },
    /// A core's program words do not fit a command slot.
    #[error(
        "core {core}: {words} program words do not fit a command slot (at most {max}, 255 per kernel)"
    )]
    TooManyWords {
        /// The core.
        core: LogicalXy,
        /// Words given.
        words: usize,
        /// The most a slot holds.
        max: usize,
    },
    /// The device failed while the command was being published: the cores listed took it
    /// (they run it and will report it: `ticket` is the command on them), the other cores of
    /// its group did not. A device that fails this way is seldom usable further.
    #[error(
        "device failed publishing the command: {error}; {} of its {cores} cores took it and run \
         it: {}",
        published.len(),
        cores_text(published)
    )]
    PartlyPublished {
        /// The device's error.
        error: DeviceError,
        /// The cores that took the command, in the group's order.
        published: Vec<LogicalXy>,
        /// The cores of the command's group.
        cores: usize,
        /// The command as those cores took it: what a caller waits for before their tiles take
        /// another command.
        ticket: Box<super::ticket::Ticket>,
    },
    /// A command still runs on some cores after one more of its budgets (it timed out there,
    /// or was published on those cores only): a [`Run`](crate::host::feed::Run) posts no
    /// command that overlaps it (nor one into the slots it holds).
    #[error(
        "command {sequence} (group {group}) still runs on {}: it timed out there, or was \
         published on those cores only (allowed: a command clear of it, or a reset of the chip)",
        cores_text(cores)
    )]
    StillRunning {
        /// The late command's sequence number.
        sequence: u32,
        /// Its group.
        group: LogicalRect,
        /// The cores that have not reported it.
        cores: Vec<LogicalXy>,
    },
    /// A control-block offset past the block or not a word's.
    #[error(
        "control offset {offset:#x} (allowed: a multiple of 4 below {:#x}, the control block's \
         bytes)",
        komorebi_kernel::abi::CONTROL_BYTES
    )]
    ControlOffset {
        /// The offset asked for.
        offset: u32,
    },
    /// A ticket that another session posted (each session's tickets name its own tiles).
    #[error(
        "command {sequence} was posted on another Session (allowed: the tickets its own post \
         returned)"
    )]
    ForeignTicket {
        /// The ticket's sequence number.
        sequence: u32,
    },
    /// Every slot of a core holds a command not yet reported.
    #[error("core {core} has no free command slot: collect reports first")]
    SlotsFull {
        /// The core.
        core: LogicalXy,
    },
    /// A circular buffer index past the control block's table.
    #[error("circular buffer {index}: a tile has buffers 0..{count} (allowed: 0 to {})", count - 1)]
    BufferIndex {
        /// The buffer's index.
        index: u8,
        /// How many buffers a tile has ([`abi::CB_ENTRIES`](komorebi_kernel::abi::CB_ENTRIES)).
        count: u32,
    },
    /// A circular buffer that does not lie in L1 above the firmware, or whose base or page size
    /// is not a multiple of [`BUFFER_ALIGN`](komorebi_kernel::abi::BUFFER_ALIGN).
    #[error(
        "circular buffer {index}: {pages} pages of {page_size} bytes at {base:#x} (allowed: at \
         least one byte, within L1 from {first:#x} to {end:#x}, above the firmware's images and \
         control block, base and page size multiples of 16)"
    )]
    Buffer {
        /// The buffer's index.
        index: u8,
        /// Its L1 address.
        base: u32,
        /// Bytes per page.
        page_size: u32,
        /// Pages.
        pages: u16,
        /// The lowest address a buffer may start at.
        first: u32,
        /// The end of L1.
        end: u32,
    },
}

impl From<OpenError> for SessionError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Device(e) => Self::Device(e),
            OpenError::Unusable(e) => Self::Unusable(e),
        }
    }
}

/// `cores` as `(x, y)` pairs, or `none`.
fn cores_text(cores: &[LogicalXy]) -> String {
    if cores.is_empty() {
        return "none".into();
    }
    let all: Vec<String> = cores.iter().map(|c| c.to_string()).collect();
    all.join(", ")
}
