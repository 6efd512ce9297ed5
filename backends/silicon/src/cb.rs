//! `CircularBuffer` on the overlay stream registers: CB `n` keeps its shared counters in stream
//! `n` (`tiles_received`, `tiles_acked`, 16 significant bits; which registers of the stream is
//! the chip's, [`Chip::tiles_received`]), and each kernel keeps its own pointers, as tt-metal's
//! `LocalCBInterface` does.

use crate::chip::Chip;
use komorebi_hal::L1Addr;
use komorebi_hal::cb::{self, ErrorKind};

use crate::error::{Error, Why};
use crate::order::fence;

type CbError = Error<ErrorKind>;

/// One circular buffer as one kernel (its producer or its consumer) sees it.
#[derive(Debug)]
pub struct SiliconCb<C: Chip> {
    streams: C::Streams,
    index: u8,
    l1: usize,
    base: u32,
    page_size: u32,
    pages: u16,
    /// This kernel's next page to write (producer) and oldest page (consumer).
    wr: u16,
    rd: u16,
}

impl<C: Chip> SiliconCb<C> {
    /// Circular buffer `index` of chip `C`: `pages` pages of `page_size` bytes at L1 `base`,
    /// counters in `streams`, with L1 address 0 at address `l1` of this core (0 on a baby core;
    /// a host buffer's address in tests). Both pointers start at page 0 (every command leaves
    /// the buffer at slot 0). `None` unless `index` is below the chip's
    /// [`Chip::CIRCULAR_BUFFERS`] and `base` and `page_size` are multiples of 16 (the NoC's L1
    /// alignment).
    ///
    /// # Safety
    /// `l1 + base .. l1 + base + pages * page_size` must be valid for reads (volatile and plain)
    /// for as long as the handle is used, and `streams` must be a valid stream window. Plain
    /// reads: [`scan_page`](cb::CircularBuffer::scan_page) lends a ready page as a slice, so
    /// nothing may write a page between the producer's push and the consumer's pop (the
    /// protocol's rule for every producer, the NoC included).
    pub unsafe fn from_ptr(
        streams: C::Streams,
        index: u8,
        l1: usize,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Option<Self> {
        // A base or page size off the NoC's 16-byte units: `base()` and the pointers are
        // word addresses, and would not name the pages the NoC fills.
        if index >= C::CIRCULAR_BUFFERS || (base | page_size) % 16 != 0 {
            return None;
        }
        Some(Self {
            streams,
            index,
            l1,
            base,
            page_size,
            pages,
            wr: 0,
            rd: 0,
        })
    }

    /// Zeroes `tiles_received` and `tiles_acked` of every circular buffer in `streams`: the
    /// known state the firmware starts from, since the stream registers keep whatever the last
    /// firmware left (tt-metal zeroes them before use too; docs/blackhole.md, "Boot state").
    /// For one core of the tile, before any kernel of it takes a command.
    pub fn clear_counters(streams: C::Streams) {
        for cb in 0..C::CIRCULAR_BUFFERS {
            C::tiles_received(streams, cb).write_value(0);
            C::tiles_acked(streams, cb).write_value(0);
        }
    }

    fn received(&self) -> u16 {
        C::tiles_received(self.streams, self.index).read() as u16
    }

    fn acked(&self) -> u16 {
        C::tiles_acked(self.streams, self.index).read() as u16
    }

    /// The slot of ready page `page` (counted from the oldest): [`cb::slot_after`].
    fn slot(&self, page: u16) -> u32 {
        cb::slot_after(self.rd, page, self.pages)
    }

    fn advance(&self, at: u16, pages: u16, push: bool) -> Result<u16, CbError> {
        let room = if push {
            // Saturating: counters a reconfigured buffer left above its capacity have no room.
            self.pages
                .saturating_sub(self.received().wrapping_sub(self.acked()))
        } else {
            self.received().wrapping_sub(self.acked())
        };
        if pages > room {
            let (kind, why) = if push {
                (ErrorKind::Overflow, Why::PushOverflow)
            } else {
                (ErrorKind::Underflow, Why::PopUnderflow)
            };
            return Err(Error { kind, why });
        }
        if at as u32 + pages as u32 > self.pages as u32 {
            return Err(Error {
                kind: ErrorKind::Wrap,
                why: Why::Wrap,
            });
        }
        Ok(if at + pages == self.pages {
            0
        } else {
            at + pages
        })
    }
}

impl<C: Chip> cb::ErrorType for SiliconCb<C> {
    type Error = CbError;
}

impl<C: Chip> cb::CircularBuffer for SiliconCb<C> {
    fn capacity(&self) -> u16 {
        self.pages
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn base(&self) -> L1Addr {
        L1Addr::new(self.base).unwrap_or(L1Addr::ZERO)
    }

    fn pushed(&mut self) -> Result<u16, CbError> {
        Ok(self.received())
    }

    fn popped(&mut self) -> Result<u16, CbError> {
        Ok(self.acked())
    }

    fn write_ptr(&self) -> L1Addr {
        L1Addr::new(self.base + self.wr as u32 * self.page_size).unwrap_or(L1Addr::ZERO)
    }

    fn push(&mut self, pages: u16) -> Result<(), CbError> {
        self.wr = self.advance(self.wr, pages, true)?;
        // Every page komorebi pushes was written by the NoC and seen landed (`reads_done`, a
        // VALID word) before the push. A core's own stores to L1 and this store to the stream
        // register may be processed in either order (ISA `BabyRISCV/MemoryOrdering.md`): a
        // producer that fills pages with its own stores reads its last word back and uses the
        // value before it pushes (`order::publish` does that for one word). The fence is
        // Blackhole's, for its L0 data cache.
        fence::<C>();
        C::tiles_received(self.streams, self.index)
            .modify(|v| *v = (*v as u16).wrapping_add(pages) as u32);
        Ok(())
    }

    fn read_ptr(&self) -> L1Addr {
        L1Addr::new(self.base + self.rd as u32 * self.page_size).unwrap_or(L1Addr::ZERO)
    }

    fn pop(&mut self, pages: u16) -> Result<(), CbError> {
        self.rd = self.advance(self.rd, pages, false)?;
        C::tiles_acked(self.streams, self.index)
            .modify(|v| *v = (*v as u16).wrapping_add(pages) as u32);
        Ok(())
    }

    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), CbError> {
        if page >= self.received().wrapping_sub(self.acked()) {
            return Err(Error {
                kind: ErrorKind::Underflow,
                why: Why::PageNotReady,
            });
        }
        if offset as u64 + buf.len() as u64 > self.page_size as u64 {
            return Err(Error {
                kind: ErrorKind::OutOfRange,
                why: Why::BeyondPage,
            });
        }
        let slot = self.slot(page);
        let at = self.base + slot * self.page_size + offset;
        fence::<C>();
        let base = self.l1 + at as usize;
        if base % 4 == 0 {
            // Whole words where the page allows (it is 16-byte aligned): one load a word.
            let done = buf.len() / 4 * 4;
            for (i, w) in buf[..done].chunks_exact_mut(4).enumerate() {
                // SAFETY: `from_ptr`'s contract covers the buffer's bytes; the address is word
                // aligned; volatile because the NoC writes them behind the compiler's back.
                let v = unsafe { ((base + 4 * i) as *const u32).read_volatile() };
                w.copy_from_slice(&v.to_le_bytes());
            }
            for (i, b) in buf[done..].iter_mut().enumerate() {
                // SAFETY: as above, byte by byte.
                *b = unsafe { ((base + done + i) as *const u8).read_volatile() };
            }
        } else {
            for (i, b) in buf.iter_mut().enumerate() {
                // SAFETY: as above.
                *b = unsafe { ((base + i) as *const u8).read_volatile() };
            }
        }
        Ok(())
    }

    fn scan_page(
        &mut self,
        page: u16,
        scan: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<bool, CbError> {
        if page >= self.received().wrapping_sub(self.acked()) {
            return Err(Error {
                kind: ErrorKind::Underflow,
                why: Why::PageNotReady,
            });
        }
        let slot = self.slot(page);
        let at = self.l1 + (self.base + slot * self.page_size) as usize;
        // Pages are lent in place only (a card's buffers are 16-byte aligned in L1; the copy
        // of the default scan would not fit compute's 8 KiB). Words are little-endian values: a
        // big-endian host (tests only) copies them.
        if cfg!(target_endian = "big") {
            return cb::scan_page_by_reads(self, page, scan);
        }
        if at == 0 || at % 4 != 0 {
            return Err(Error {
                kind: ErrorKind::Other,
                why: Why::PageMisaligned,
            });
        }
        // No stale L0 line of the page where the cache is on; the page's loads wait for the count
        // read above anyway (the branch on it).
        fence::<C>();
        // SAFETY: `from_ptr`'s contract: the page lies in the buffer and is valid for reads,
        // and nothing writes it until this consumer pops it (the slice lives only for this
        // call); the address is word aligned and not null.
        let words =
            unsafe { core::slice::from_raw_parts(at as *const u32, self.page_size as usize / 4) };
        Ok(scan(0, words))
    }
}
