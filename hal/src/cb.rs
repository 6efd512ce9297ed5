//! [`CircularBuffer`]: one local circular buffer between one producer (a data-movement kernel)
//! and one consumer (compute).
//!
//! Each kernel holds its own handle to the same buffer, as each baby core keeps its own copy of
//! the pointers. The shared state is two cumulative page counters, `pushed` and `popped`,
//! wrapping `u16`s as the hardware keeps them; `pushed - popped` (wrapping) is the number of
//! pages ready, `capacity - ready` the number free.
//!
//! # The contract a backend keeps
//!
//! * A buffer holds `capacity()` pages of `page_size()` bytes at `base()`; capacity is at most
//!   65 535 pages so the wrapping difference of the counters is exact.
//! * **Producer.** `write_ptr()` is where the next page goes. `push(n)` makes `n` pages visible
//!   to the consumer and advances the write pointer by `n` pages. It refuses
//!   ([`ErrorKind::Overflow`]) more pages than are free, and ([`ErrorKind::Wrap`]) a push that
//!   would cross the end of the buffer: pushes in one lap must sum exactly to the capacity, as
//!   tt-metal's circular buffers require. At the end the pointer wraps to `base()`.
//! * **Consumer.** `read_ptr()` is the oldest unpopped page. `read_page(i, ..)` copies bytes of
//!   page `i` counted from the read pointer (`i < pages_ready()`); `scan_page(i, ..)` lends its
//!   words, in place where the backend can. `pop(n)` frees `n` pages and
//!   advances the read pointer, with the same overflow and wrap rules ([`ErrorKind::Underflow`],
//!   [`ErrorKind::Wrap`]).
//! * A `push` happens-before the consumer's observation of the new `pushed` count, and the
//!   pushed pages' bytes are visible when it is observed, for bytes the NoC wrote and the
//!   producer saw land; likewise for `pop` and the producer. A producer that fills pages with
//!   its own stores orders them itself before it pushes (on the baby cores a core's stores and
//!   its store to the counter register may be processed in either order).
//!
//! `hal/README.md` says how Blackhole realizes each method.

use crate::types::L1Addr;

/// Generic kinds of circular-buffer errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// A push of more pages than are free.
    Overflow,
    /// A pop of more pages than are ready, or a read of a page that is not ready.
    Underflow,
    /// A push or pop that would cross the end of the buffer.
    Wrap,
    /// A read outside a page.
    OutOfRange,
    /// Anything else.
    Other,
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Overflow => "push of more pages than are free",
            Self::Underflow => "pop or read of pages that are not ready",
            Self::Wrap => "push or pop crosses the end of the circular buffer",
            Self::OutOfRange => "read outside a page",
            Self::Other => "circular buffer error",
        })
    }
}

/// An error of a circular buffer operation. Generic code only looks at [`Error::kind`].
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

/// The error type of a circular buffer implementation.
pub trait ErrorType {
    /// The error type every method of the trait returns.
    type Error: Error;
}

impl<T: ErrorType + ?Sized> ErrorType for &mut T {
    type Error = T::Error;
}

/// One local circular buffer; see the module docs.
pub trait CircularBuffer: ErrorType {
    /// Pages the buffer holds.
    fn capacity(&self) -> u16;

    /// Bytes per page.
    fn page_size(&self) -> u32;

    /// Address of page 0.
    fn base(&self) -> L1Addr;

    /// Cumulative pages pushed (wrapping).
    fn pushed(&mut self) -> Result<u16, Self::Error>;

    /// Cumulative pages popped (wrapping).
    fn popped(&mut self) -> Result<u16, Self::Error>;

    /// Pages pushed and not yet popped.
    fn pages_ready(&mut self) -> Result<u16, Self::Error> {
        let pushed = self.pushed()?;
        Ok(pushed.wrapping_sub(self.popped()?))
    }

    /// Pages the producer may push.
    fn pages_free(&mut self) -> Result<u16, Self::Error> {
        let ready = self.pages_ready()?;
        Ok(self.capacity().saturating_sub(ready))
    }

    /// Where the producer's next page goes.
    fn write_ptr(&self) -> L1Addr;

    /// Producer: hands `pages` pages to the consumer.
    fn push(&mut self, pages: u16) -> Result<(), Self::Error>;

    /// Producer: hands `pages` pages of padding to the consumer: pages that carry no data, which
    /// it pops without reading (a producer that gave up fills the rest of its window so the
    /// consumer can finish). Writes still in flight to them may land on them afterwards; a
    /// backend that checks overwrites of unpopped pages (a simulator) does not count those. By
    /// default the same as [`push`](Self::push).
    fn push_padding(&mut self, pages: u16) -> Result<(), Self::Error> {
        self.push(pages)
    }

    /// Where the consumer's oldest unpopped page is.
    fn read_ptr(&self) -> L1Addr;

    /// Consumer: frees `pages` pages.
    fn pop(&mut self, pages: u16) -> Result<(), Self::Error>;

    /// Consumer: copies `buf.len()` bytes at `offset` of page `page` (counted from the read
    /// pointer, round the buffer: the page in slot [`slot_after`]`(read slot, page, capacity)`)
    /// into `buf`. A page that is not ready (`page >= pages_ready()`) is
    /// [`ErrorKind::Underflow`]; bytes beyond the page (`offset + buf.len() > page_size()`) are
    /// [`ErrorKind::OutOfRange`]. Nothing is copied then.
    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), Self::Error>;

    /// Consumer: lends the whole words of page `page` (counted from the read pointer), each the
    /// little-endian value of its four bytes, to `scan` in order, in one or more runs:
    /// `scan(first, run)`, where `first` is the index in the page of `run[0]`. Stops at the
    /// first run `scan` refuses (returns false) and returns whether it accepted them all. A
    /// page whose size is not a multiple of 4 has its last bytes left out.
    ///
    /// A backend whose cores can load the page where it lies (a device's L1) lends it there,
    /// with no copy: a consumer that only looks at the data (a check) then costs one load a
    /// word. By default the words are copied with [`read_page`](Self::read_page), up to
    /// [`SCAN_RUN_WORDS`] a run ([`scan_page_by_reads`]).
    fn scan_page(
        &mut self,
        page: u16,
        scan: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<bool, Self::Error> {
        scan_page_by_reads(self, page, scan)
    }
}

/// Words of each run [`scan_page_by_reads`] lends: 64 (256 bytes on the stack).
pub const SCAN_RUN_WORDS: usize = 64;

/// The slot `ahead` pages after slot `at` of a buffer of `pages` pages, round the buffer: in
/// `u32`, since with more than 32,768 pages `at + ahead` passes `u16::MAX`. 0 for a buffer of no
/// pages (which has no page to name; `max(1)` also spares the firmware a division-by-zero
/// panic path). Every backend names its slots with it.
pub const fn slot_after(at: u16, ahead: u16, pages: u16) -> u32 {
    let pages = if pages == 0 { 1 } else { pages as u32 };
    (at as u32 + ahead as u32) % pages
}

/// [`CircularBuffer::scan_page`] through [`CircularBuffer::read_page`]: copies the page a run
/// of at most [`SCAN_RUN_WORDS`] words at a time. The trait's default; a backend that lends
/// pages in place may fall back on it, or refuse a page it cannot lend (the silicon backend
/// refuses an unaligned page: its copy would not fit compute's image).
pub fn scan_page_by_reads<C: CircularBuffer + ?Sized>(
    cb: &mut C,
    page: u16,
    scan: &mut dyn FnMut(u32, &[u32]) -> bool,
) -> Result<bool, C::Error> {
    let mut bytes = [0u8; 4 * SCAN_RUN_WORDS];
    let mut words = [0u32; SCAN_RUN_WORDS];
    let total = cb.page_size() / 4 * 4;
    let mut offset = 0;
    // At least one read, so that a page that is not ready is an error even when it is empty.
    loop {
        let n = (total - offset).min(bytes.len() as u32) as usize;
        cb.read_page(page, offset, &mut bytes[..n])?;
        for (w, b) in words.iter_mut().zip(bytes[..n].chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        if n > 0 && !scan(offset / 4, &words[..n / 4]) {
            return Ok(false);
        }
        offset += n as u32;
        if offset >= total {
            return Ok(true);
        }
    }
}

impl<T: CircularBuffer + ?Sized> CircularBuffer for &mut T {
    #[inline]
    fn capacity(&self) -> u16 {
        T::capacity(self)
    }
    #[inline]
    fn page_size(&self) -> u32 {
        T::page_size(self)
    }
    #[inline]
    fn base(&self) -> L1Addr {
        T::base(self)
    }
    #[inline]
    fn pushed(&mut self) -> Result<u16, Self::Error> {
        T::pushed(self)
    }
    #[inline]
    fn popped(&mut self) -> Result<u16, Self::Error> {
        T::popped(self)
    }
    #[inline]
    fn pages_ready(&mut self) -> Result<u16, Self::Error> {
        T::pages_ready(self)
    }
    #[inline]
    fn pages_free(&mut self) -> Result<u16, Self::Error> {
        T::pages_free(self)
    }
    #[inline]
    fn write_ptr(&self) -> L1Addr {
        T::write_ptr(self)
    }
    #[inline]
    fn push(&mut self, pages: u16) -> Result<(), Self::Error> {
        T::push(self, pages)
    }
    #[inline]
    fn push_padding(&mut self, pages: u16) -> Result<(), Self::Error> {
        T::push_padding(self, pages)
    }
    #[inline]
    fn read_ptr(&self) -> L1Addr {
        T::read_ptr(self)
    }
    #[inline]
    fn pop(&mut self, pages: u16) -> Result<(), Self::Error> {
        T::pop(self, pages)
    }
    #[inline]
    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), Self::Error> {
        T::read_page(self, page, offset, buf)
    }
    #[inline]
    fn scan_page(
        &mut self,
        page: u16,
        scan: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<bool, Self::Error> {
        T::scan_page(self, page, scan)
    }
}
