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
//!   page `i` counted from the read pointer (`i < pages_ready()`). `pop(n)` frees `n` pages and
//!   advances the read pointer, with the same overflow and wrap rules ([`ErrorKind::Underflow`],
//!   [`ErrorKind::Wrap`]).
//! * A `push` happens-before the consumer's observation of the new `pushed` count, and the
//!   pushed pages' bytes are visible when it is observed; likewise for `pop` and the producer.
//!
//! `hal/README.md` says how Blackhole realizes each method.

use crate::types::L1Addr;

/// Generic kinds of circular-buffer errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

crate::error::error_skeleton!("circular buffer");

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
    /// pointer) into `buf`.
    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), Self::Error>;
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
}
