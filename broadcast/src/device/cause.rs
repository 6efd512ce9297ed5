//! Why a broadcast call gave up, and how HAL errors become causes.

use komorebi_hal::LogicalRect;
use komorebi_hal::{cb, control, noc};

use crate::area::Where;
use crate::args::ArgsError;

/// Why a broadcast call gave up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Cause {
    /// The words are not valid `BroadcastArgs`.
    BadWords(ArgsError),
    /// The handler refused the words around the arguments (its program failed its own checks,
    /// or disagrees with the arguments).
    Refused,
    /// The words were built for another group than the command names (rule 3).
    WrongGroup {
        /// The command's group.
        command: LogicalRect,
        /// The words' group.
        words: LogicalRect,
    },
    /// The command does not carry `EXCLUSIVE` (rule 3).
    NotExclusive,
    /// The words are for the other NoC than this kernel's.
    WrongNoc,
    /// The words are for another core.
    WrongCore,
    /// The buffer is not exactly `window * pages` pages.
    BufferSize {
        /// Pages the words need.
        expected: u32,
        /// Pages the buffer has.
        capacity: u16,
    },
    /// The buffer's pages cannot be slots: a page size of 0, or not whole words (the next slot
    /// would not be word-aligned), or a buffer too large for 32-bit addresses.
    PageSize {
        /// The buffer's page size in bytes.
        bytes: u32,
    },
    /// The buffer's write pointer is not at slot 0 (rule 2).
    NotAtSlotZero,
    /// The buffer still holds pages a command before this one pushed and its compute never
    /// popped (a recovery that did not end): the next slot to write is not slot 0, whatever the
    /// write pointer says.
    BufferNotEmpty {
        /// Pages it holds.
        pages: u16,
    },
    /// The tile has no circular buffer at the index the words name.
    NoBuffer {
        /// The index the words name.
        index: u8,
    },
    /// A call for a block out of order or past the last a command may have (index 32 766,
    /// `MAX_BLOCKS - 1`), or a call of the wrong role.
    Misuse,
    /// The wait limit passed.
    TimedOut,
    /// The tile was asked to stop.
    Stopped,
    /// A NoC call failed.
    Noc(noc::ErrorKind),
    /// A circular-buffer call failed.
    Cb(cb::ErrorKind),
    /// A control-block call failed.
    Control(control::ErrorKind),
}

impl core::fmt::Display for Cause {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadWords(e) => write!(f, "bad broadcast words: {e}"),
            Self::Refused => {
                f.write_str("the handler refused the program around the broadcast words")
            }
            Self::WrongGroup { command, words } => write!(
                f,
                "command names group {command} but the broadcast words were built for {words}"
            ),
            Self::NotExclusive => f.write_str("a command with broadcasts must carry EXCLUSIVE"),
            Self::WrongNoc => f.write_str("broadcast words are for the other NoC's kernel"),
            Self::WrongCore => f.write_str("broadcast words are for another core"),
            Self::BufferSize { expected, capacity } => write!(
                f,
                "broadcast buffer has {capacity} pages, the words need window * pages = {expected}"
            ),
            Self::PageSize { bytes } => write!(
                f,
                "broadcast buffer has pages of {bytes} bytes (allowed: a nonzero multiple of 4, \
                 the whole buffer within 32-bit addresses)"
            ),
            Self::NotAtSlotZero => f.write_str("broadcast buffer does not start at slot 0"),
            Self::BufferNotEmpty { pages } => write!(
                f,
                "broadcast buffer still holds {pages} pages of an earlier command (allowed: an \
                 empty buffer, so the command starts at slot 0)"
            ),
            Self::NoBuffer { index } => {
                write!(
                    f,
                    "the tile has no circular buffer {index} for the broadcast"
                )
            }
            Self::Misuse => f.write_str("broadcast call out of order or for the wrong role"),
            Self::TimedOut => f.write_str("wait limit passed"),
            Self::Stopped => f.write_str("tile asked to stop"),
            Self::Noc(k) => write!(f, "NoC: {k}"),
            Self::Cb(k) => write!(f, "circular buffer: {k}"),
            Self::Control(k) => write!(f, "control block: {k}"),
        }
    }
}

/// A give-up: what [`Broadcast`](super::Broadcast) calls return on failure, and what the area records.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct GiveUp {
    /// Where.
    pub place: Where,
    /// The broadcast id.
    pub broadcast: u8,
    /// The block the call was about (for `finish`, the number of blocks).
    pub block: u32,
    /// Why.
    pub cause: Cause,
}

impl core::fmt::Display for GiveUp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} (broadcast {}, block {}): {}",
            self.place, self.broadcast, self.block, self.cause
        )
    }
}

/// Why a call after `new` (`reserve`, `cast`, `arrive`, `finish`, the peer's `handshake`) failed,
/// as the call hands it to `settle`: the causes such a call can meet, in two bytes, so that a
/// failure travels in registers rather than as a copy of [`Cause`], whose larger variants only
/// the words' checks in `new` produce. `settle` makes the [`Cause`] that is recorded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum CallCause {
    /// [`Cause::Misuse`].
    Misuse,
    /// [`Cause::TimedOut`].
    TimedOut,
    /// [`Cause::Stopped`].
    Stopped,
    /// [`Cause::NotAtSlotZero`].
    NotAtSlotZero,
    /// [`Cause::Noc`].
    Noc(noc::ErrorKind),
    /// [`Cause::Cb`].
    Cb(cb::ErrorKind),
    /// [`Cause::Control`].
    Control(control::ErrorKind),
    /// The broadcast gave up before this call: the call gives up with that give-up (which
    /// `give_up_with` returns, recording nothing), so this cause is never recorded.
    Earlier,
}

impl From<CallCause> for Cause {
    fn from(c: CallCause) -> Self {
        match c {
            // Never recorded (see `CallCause::Earlier`).
            CallCause::Misuse | CallCause::Earlier => Cause::Misuse,
            CallCause::TimedOut => Cause::TimedOut,
            CallCause::Stopped => Cause::Stopped,
            CallCause::NotAtSlotZero => Cause::NotAtSlotZero,
            CallCause::Noc(k) => Cause::Noc(k),
            CallCause::Cb(k) => Cause::Cb(k),
            CallCause::Control(k) => Cause::Control(k),
        }
    }
}

/// A call's failure: where, and why.
pub(super) type Fail = (Where, CallCause);

pub(super) fn noc_cause<E: noc::Error>(e: E) -> CallCause {
    CallCause::Noc(e.kind())
}

pub(super) fn cb_cause<E: cb::Error>(e: E) -> CallCause {
    CallCause::Cb(e.kind())
}

/// A control-block failure of a call.
pub(super) fn ctrl_fail<E: control::Error>(e: E) -> CallCause {
    CallCause::Control(e.kind())
}

/// A control-block failure of `new` (the words' checks).
pub(super) fn ctrl_cause<E: control::Error>(e: E) -> Cause {
    Cause::Control(e.kind())
}

/// `Ok(true)` when a request was issued, `Ok(false)` when the NoC was busy (try again).
pub(super) fn issued<E: noc::Error>(r: Result<(), E>) -> Result<bool, CallCause> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == noc::ErrorKind::Busy => Ok(false),
        Err(e) => Err(noc_cause(e)),
    }
}
