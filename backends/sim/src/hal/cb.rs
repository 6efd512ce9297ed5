//! [`SimCb`]: one circular buffer of one tile as one kernel sees it: the stream counters and
//! the kernel's pointer, pushes and pops checked against the pages there are, and the stall
//! faults that trigger on a push or pop count.
//!
//! Imports the world and leaf modules.

use komorebi_hal::{L1Addr, cb};

use crate::fault::StallFrom;
use crate::hal::error::CbError;
use crate::packet::TileIx;
use crate::tile::Cb;
use crate::world::{Shared, World};

/// One circular buffer of one tile, as one kernel sees it.
#[derive(Clone)]
pub struct SimCb {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
    pub(crate) index: u8,
}

impl std::fmt::Debug for SimCb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCb")
            .field("task", &self.task)
            .field("index", &self.index)
            .finish()
    }
}

impl SimCb {
    fn with<T>(&self, f: impl FnOnce(&Cb) -> T) -> Option<T> {
        let w = self.world.borrow();
        w.tiles[self.tile as usize].cbs[self.index as usize]
            .as_ref()
            .map(f)
    }

    fn not_configured(&self) -> CbError {
        CbError::new(
            cb::ErrorKind::Other,
            format!(
                "circular buffer {} is not configured on this tile",
                self.index
            ),
        )
    }

    /// Copies bytes of a ready page out of L1, as `read_page` without its charge.
    fn copy_page(&self, w: &World, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), CbError> {
        let tile = &w.tiles[self.tile as usize];
        let c = tile.cbs[self.index as usize]
            .as_ref()
            .ok_or_else(|| self.not_configured())?;
        if page >= c.ready() {
            return Err(CbError::new(
                cb::ErrorKind::Underflow,
                format!("read of page {page} with {} ready", c.ready()),
            ));
        }
        if offset as u64 + buf.len() as u64 > c.page_size as u64 {
            return Err(CbError::new(
                cb::ErrorKind::OutOfRange,
                format!(
                    "read of {}+{} bytes in a page of {}",
                    offset,
                    buf.len(),
                    c.page_size
                ),
            ));
        }
        let addr = c.base + c.step(c.rd, page) as u32 * c.page_size + offset;
        tile.l1.read(addr as u64, buf);
        Ok(())
    }

    /// True (and the task stalls) if this push or pop trips a stall fault; the firmware cores'
    /// stream-register writes (`core.rs`) trip them the same way.
    pub(crate) fn trips(w: &mut World, task: usize, index: u8, pages: u16, push: bool) -> bool {
        let mut tripped = false;
        for (t, from) in w.faults.stalls.iter_mut() {
            if *t != task {
                continue;
            }
            match from {
                StallFrom::Push { cb, after_pages } if push && *cb == index => {
                    if pages as u32 > *after_pages {
                        tripped = true;
                    } else {
                        *after_pages -= pages as u32;
                    }
                }
                StallFrom::Pop { cb, after_pages } if !push && *cb == index => {
                    if pages as u32 > *after_pages {
                        tripped = true;
                    } else {
                        *after_pages -= pages as u32;
                    }
                }
                _ => {}
            }
        }
        if tripped {
            w.sched.tasks[task].stalled = true;
        }
        tripped
    }

    fn move_pages(&mut self, pages: u16, push: bool, padding: bool) -> Result<(), CbError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_call(self.task);
        if w.stalled(self.task) || Self::trips(&mut w, self.task, self.index, pages, push) {
            return Ok(());
        }
        let index = self.index;
        let c = w.tiles[self.tile as usize].cbs[index as usize]
            .as_mut()
            .ok_or_else(|| self.not_configured())?;
        let (room, at) = if push {
            (c.pages - c.ready(), c.wr)
        } else {
            (c.ready(), c.rd)
        };
        if pages > room {
            let (kind, what) = if push {
                (
                    cb::ErrorKind::Overflow,
                    format!("push of {pages} pages into CB {index} with {room} free"),
                )
            } else {
                (
                    cb::ErrorKind::Underflow,
                    format!("pop of {pages} pages from CB {index} with {room} ready"),
                )
            };
            return Err(CbError::new(kind, what));
        }
        if at as u32 + pages as u32 > c.pages as u32 {
            return Err(CbError::new(
                cb::ErrorKind::Wrap,
                format!(
                    "{} of {pages} pages at page {at} crosses the end of CB {index} ({} pages)",
                    if push { "push" } else { "pop" },
                    c.pages
                ),
            ));
        }
        // Pushed pages are data or padding; popped ones neither.
        let first = if push { c.wr } else { c.rd };
        for i in 0..pages {
            if let Some(p) = c.padding.get_mut(((first + i) % c.pages) as usize) {
                *p = push && padding;
            }
        }
        if push {
            c.pushed = c.pushed.wrapping_add(pages);
            c.wr = c.step(c.wr, pages);
        } else {
            c.popped = c.popped.wrapping_add(pages);
            c.rd = c.step(c.rd, pages);
        }
        w.touch(self.tile, now);
        Ok(())
    }
}

impl cb::ErrorType for SimCb {
    type Error = CbError;
}

impl cb::CircularBuffer for SimCb {
    fn capacity(&self) -> u16 {
        self.with(|c| c.pages).unwrap_or(0)
    }

    fn page_size(&self) -> u32 {
        self.with(|c| c.page_size).unwrap_or(0)
    }

    fn base(&self) -> L1Addr {
        self.with(|c| L1Addr::new(c.base).unwrap_or(L1Addr::ZERO))
            .unwrap_or(L1Addr::ZERO)
    }

    fn pushed(&mut self) -> Result<u16, CbError> {
        self.world.borrow_mut().charge_call(self.task);
        self.with(|c| c.pushed).ok_or_else(|| self.not_configured())
    }

    fn popped(&mut self) -> Result<u16, CbError> {
        self.world.borrow_mut().charge_call(self.task);
        self.with(|c| c.popped).ok_or_else(|| self.not_configured())
    }

    fn pages_ready(&mut self) -> Result<u16, CbError> {
        let stalled = {
            let mut w = self.world.borrow_mut();
            w.charge_call(self.task);
            w.stalled(self.task)
        };
        self.with(|c| if stalled { 0 } else { c.ready() })
            .ok_or_else(|| self.not_configured())
    }

    fn pages_free(&mut self) -> Result<u16, CbError> {
        let stalled = {
            let mut w = self.world.borrow_mut();
            w.charge_call(self.task);
            w.stalled(self.task)
        };
        self.with(|c| if stalled { 0 } else { c.pages - c.ready() })
            .ok_or_else(|| self.not_configured())
    }

    fn write_ptr(&self) -> L1Addr {
        self.with(|c| L1Addr::new(c.base + c.wr as u32 * c.page_size).unwrap_or(L1Addr::ZERO))
            .unwrap_or(L1Addr::ZERO)
    }

    fn push(&mut self, pages: u16) -> Result<(), CbError> {
        self.move_pages(pages, true, false)
    }

    fn push_padding(&mut self, pages: u16) -> Result<(), CbError> {
        self.move_pages(pages, true, true)
    }

    fn read_ptr(&self) -> L1Addr {
        self.with(|c| L1Addr::new(c.base + c.rd as u32 * c.page_size).unwrap_or(L1Addr::ZERO))
            .unwrap_or(L1Addr::ZERO)
    }

    fn pop(&mut self, pages: u16) -> Result<(), CbError> {
        self.move_pages(pages, false, false)
    }

    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), CbError> {
        let mut w = self.world.borrow_mut();
        let words = buf.len().div_ceil(4) as u64;
        let cycles = words * w.cfg.timing.compute_read_word_cycles;
        w.charge_call(self.task);
        w.charge(self.task, cycles);
        self.copy_page(&w, page, offset, buf)
    }

    /// One run, the whole page, charged a call and `words * compute_scan_word_cycles`: the cost
    /// of the firmware's scan and of the work it does on each word (a native kernel's own
    /// arithmetic is free), whether or not `scan` accepts the page.
    fn scan_page(
        &mut self,
        page: u16,
        scan: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> Result<bool, CbError> {
        let bytes = {
            let mut w = self.world.borrow_mut();
            let c = w.tiles[self.tile as usize].cbs[self.index as usize].as_ref();
            let words = c.ok_or_else(|| self.not_configured())?.page_size / 4;
            let cycles = words as u64 * w.cfg.timing.compute_scan_word_cycles;
            w.charge_call(self.task);
            w.charge(self.task, cycles);
            let mut bytes = vec![0u8; 4 * words as usize];
            self.copy_page(&w, page, 0, &mut bytes)?;
            bytes
        };
        let run: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(scan(0, &run))
    }
}
