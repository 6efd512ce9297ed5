//! [`ControlBlock`]: a tile's control words in L1, its stop flag, the run's wait limit and a
//! cycle clock.
//!
//! The control block is a region of L1 at the same address on every tile of a chip, so a word's
//! offset names the same word everywhere and a core can write a word of another tile's block
//! over the NoC (from [`ControlBlock::addr`] on this tile to the same offset on that one). Its
//! layout above the words this trait names is the runtime's ABI (`komorebi-kernel`).
//!
//! # The contract a backend keeps
//!
//! * `load` returns the word as it is in L1 now, including words other cores wrote over the NoC
//!   (no stale cached copy); `store` makes the word visible in L1, to NoC reads of it and to the
//!   NoC writes that use it as a source, before it returns. Offsets are byte offsets, multiples
//!   of 4, below `len()`.
//! * `stop_requested` is true once the host or any kernel of the tile has asked the tile to stop;
//!   it stays true until the host clears it between commands.
//! * `wait_limit` is the number of cycles any single wait may last in the current command.
//! * `now` is a 64-bit cycle count that never wraps or goes back.
//!
//! `hal/README.md` says how Blackhole realizes each method.

use crate::types::L1Addr;

/// Where a tile's control block sits in L1 and where the words this trait names are in it.
///
/// The numbers belong to the runtime's ABI (`komorebi-kernel`'s `abi::CONTROL_LAYOUT`); a
/// backend's [`ControlBlock`] takes them from there, so no backend writes them out again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ControlLayout {
    /// L1 address of the control block (16-byte aligned).
    pub base: u32,
    /// Bytes in the control block.
    pub len: u32,
    /// Offset of the stop word (nonzero: stop).
    pub stop_offset: u32,
    /// Offset of the 64-bit wait limit (low word, then high word).
    pub wait_limit_offset: u32,
}

/// Generic kinds of control-block errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// An offset at or beyond the end of the control block.
    OutOfRange,
    /// An offset that is not a multiple of 4.
    Misaligned,
    /// Anything else.
    Other,
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::OutOfRange => "offset beyond the control block",
            Self::Misaligned => "offset not a multiple of 4",
            Self::Other => "control block error",
        })
    }
}

/// An error of a control block operation. Generic code only looks at [`Error::kind`].
pub trait Error: core::fmt::Debug {
    /// The generic kind of this error.
    fn kind(&self) -> ErrorKind;
}

impl Error for ErrorKind {
    #[inline]
    fn kind(&self) -> ErrorKind {
        *self
    }
}

impl Error for core::convert::Infallible {
    #[inline]
    fn kind(&self) -> ErrorKind {
        match *self {}
    }
}

impl core::error::Error for ErrorKind {}

/// The error type of a control block implementation.
pub trait ErrorType {
    /// The error type every method of the trait returns.
    type Error: Error;
}

impl<T: ErrorType + ?Sized> ErrorType for &mut T {
    type Error = T::Error;
}

/// A tile's control words; see the module docs.
pub trait ControlBlock: ErrorType {
    /// Bytes in the control block.
    fn len(&self) -> u32;

    /// True for an empty control block (never, for a real one).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// L1 address of the word at `offset`, for use as a NoC source or destination.
    fn addr(&self, offset: u32) -> Result<L1Addr, Self::Error>;

    /// The word at `offset`.
    fn load(&mut self, offset: u32) -> Result<u32, Self::Error>;

    /// The words at `first`, `first + stride`, `first + 2 * stride`, ... into `words`, as
    /// [`load`](Self::load) of each in turn would; an offset `load` refuses fails the call with
    /// `load`'s error, and the words before it may or may not have been loaded. A command's
    /// words, or a DONE-BY table's: a backend may check the offsets and order its loads once for
    /// all of them (and then load none after a bad offset). The provided method calls `load`
    /// for each.
    fn load_words(
        &mut self,
        first: u32,
        stride: u32,
        words: &mut [u32],
    ) -> Result<(), Self::Error> {
        let mut offset = first;
        for w in words.iter_mut() {
            *w = self.load(offset)?;
            offset = offset.wrapping_add(stride);
        }
        Ok(())
    }

    /// Writes the word at `offset`.
    fn store(&mut self, offset: u32, value: u32) -> Result<(), Self::Error>;

    /// True once the tile has been asked to stop.
    fn stop_requested(&mut self) -> Result<bool, Self::Error>;

    /// Asks every kernel of this tile to stop (sets the stop flag).
    fn request_stop(&mut self) -> Result<(), Self::Error>;

    /// Cycles any single wait may last in the current command.
    fn wait_limit(&mut self) -> Result<u64, Self::Error>;

    /// Cycles since an arbitrary start; monotonic, never wraps.
    fn now(&mut self) -> u64;
}

impl<T: ControlBlock + ?Sized> ControlBlock for &mut T {
    #[inline]
    fn len(&self) -> u32 {
        T::len(self)
    }
    #[inline]
    fn addr(&self, offset: u32) -> Result<L1Addr, Self::Error> {
        T::addr(self, offset)
    }
    #[inline]
    fn load(&mut self, offset: u32) -> Result<u32, Self::Error> {
        T::load(self, offset)
    }
    #[inline]
    fn load_words(
        &mut self,
        first: u32,
        stride: u32,
        words: &mut [u32],
    ) -> Result<(), Self::Error> {
        T::load_words(self, first, stride, words)
    }
    #[inline]
    fn store(&mut self, offset: u32, value: u32) -> Result<(), Self::Error> {
        T::store(self, offset, value)
    }
    #[inline]
    fn stop_requested(&mut self) -> Result<bool, Self::Error> {
        T::stop_requested(self)
    }
    #[inline]
    fn request_stop(&mut self) -> Result<(), Self::Error> {
        T::request_stop(self)
    }
    #[inline]
    fn wait_limit(&mut self) -> Result<u64, Self::Error> {
        T::wait_limit(self)
    }
    #[inline]
    fn now(&mut self) -> u64 {
        T::now(self)
    }
}
