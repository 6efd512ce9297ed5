//! The HAL from the host: the host stands in for one data-movement kernel of one Tensix tile
//! (its proxy tile), so the generic protocols (the broadcast) can run with the host as a
//! participant.
//!
//! * [`HostNoc`] (`NocMulticast`): the proxy tile's L1 is the tile's real L1, reached through
//!   its window. A read copies from a tile's L1 or a DRAM bank into it; a write copies from it
//!   to a tile; a multicast writes every Tensix of the rectangle but the proxy tile, one tile
//!   at a time (a host cannot exclude a tile from a PCIe multicast, as a NIU excludes its
//!   sender). Every transfer is done when the call returns, so reads are done and writes sent
//!   at once; a write is acknowledged after a read back of the last word written to each
//!   destination, tile or DRAM bank (the read returns only after the writes before it there
//!   landed).
//! * [`HostCtrl`] (`ControlBlock`): the proxy tile's control block.
//! * [`HostCb`] (`CircularBuffer`): the proxy's own buffer, in the proxy tile's L1, whose
//!   consumer is the host: every push hands the pushed pages to a closure and pops them.
//! * [`HostPause`] (`Pause`): lets the device run between polls.
//!
//! NoC coordinates in requests are raw coordinates of the proxy's NoC, as for a kernel.

use komorebi_hal::cb::{self, CircularBuffer};
use komorebi_hal::control::{self, ControlBlock};
use komorebi_hal::noc::{self, Link, Loopback, NocMulticast, WriteMode};
use komorebi_hal::{ControlLayout, L1Addr, NocAddr, NocId, Pause, Rect, Xy};

use crate::bar::Bar;
use crate::card::Card;
use crate::chip::Memory;
use crate::error::PcieError;

/// A HAL error from the host path: the generic kind and what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyError<K> {
    /// The generic kind.
    pub kind: K,
    /// The host path's error, if one caused it.
    pub cause: Option<PcieError>,
}

impl noc::Error for ProxyError<noc::ErrorKind> {
    fn kind(&self) -> noc::ErrorKind {
        self.kind
    }
}

impl control::Error for ProxyError<control::ErrorKind> {
    fn kind(&self) -> control::ErrorKind {
        self.kind
    }
}

impl cb::Error for ProxyError<cb::ErrorKind> {
    fn kind(&self) -> cb::ErrorKind {
        self.kind
    }
}

fn noc_err(kind: noc::ErrorKind) -> ProxyError<noc::ErrorKind> {
    ProxyError { kind, cause: None }
}

fn noc_fault(e: PcieError) -> ProxyError<noc::ErrorKind> {
    let kind = match e {
        PcieError::Target { .. } | PcieError::OutOfWindow { .. } => noc::ErrorKind::InvalidAddress,
        PcieError::Unaligned { .. } => noc::ErrorKind::Misaligned,
        _ => noc::ErrorKind::Fault,
    };
    ProxyError {
        kind,
        cause: Some(e),
    }
}

/// The host as one data-movement kernel of its proxy tile.
#[derive(Debug)]
pub struct HostNoc<'c, B: Bar> {
    card: &'c Card<B>,
    noc: NocId,
    tile: Xy,
    /// Destinations written since the last acknowledgement: tile and last word.
    unacked: Vec<(Xy, u32)>,
    /// Whether DRAM was written since the last acknowledgement (the card reads back the last
    /// word of each bank written).
    dram_unacked: bool,
    /// The rectangle of the open linked run, if any (the HAL's rules: the next multicast goes
    /// there, and no read or unicast write is taken until an unlinked one closes the run). The
    /// host has no path or virtual channel to hold; it keeps the rules so code runs here as on a
    /// card, where a read or unicast write during a run hangs the NIU.
    run: Option<Rect>,
}

impl<'c, B: Bar> HostNoc<'c, B> {
    /// The host as the kernel on `noc` of the tile at NoC0 `tile`.
    pub fn new(card: &'c Card<B>, noc: NocId, tile: Xy) -> Self {
        Self {
            card,
            noc,
            tile,
            unacked: Vec::new(),
            dram_unacked: false,
            run: None,
        }
    }

    /// Refuses a length of 0 (`InvalidLength`) or beyond L1 (every transfer has an end in L1,
    /// so it runs past the end of that memory: `InvalidAddress`, as the HAL's "Any length"
    /// says) before any buffer of that length is made.
    fn check_len(&self, len: u32) -> Result<(), ProxyError<noc::ErrorKind>> {
        if len == 0 {
            return Err(noc_err(noc::ErrorKind::InvalidLength));
        }
        if len > self.card.chip().kind().l1_size() {
            return Err(noc_err(noc::ErrorKind::InvalidAddress));
        }
        Ok(())
    }

    fn copy_out(&self, src: L1Addr, len: u32) -> Result<Vec<u8>, ProxyError<noc::ErrorKind>> {
        self.check_len(len)?;
        let mut data = vec![0; len as usize];
        self.card
            .read_l1(self.tile, src.get(), &mut data)
            .map_err(noc_fault)?;
        Ok(data)
    }

    fn write_tile(
        &mut self,
        tile: Xy,
        addr: u32,
        data: &[u8],
    ) -> Result<(), ProxyError<noc::ErrorKind>> {
        self.card.write_l1(tile, addr, data).map_err(noc_fault)?;
        let last = (addr + data.len() as u32 - 1) & !3;
        self.unacked.retain(|(t, _)| *t != tile);
        self.unacked.push((tile, last));
        Ok(())
    }
}

impl<B: Bar> noc::ErrorType for HostNoc<'_, B> {
    type Error = ProxyError<noc::ErrorKind>;
}

impl<B: Bar> NocMulticast for HostNoc<'_, B> {
    fn noc(&self) -> NocId {
        self.noc
    }

    fn node(&self) -> Xy {
        // The mirror is its own inverse: NoC0 to NoC1 is NoC1 to NoC0.
        self.card
            .chip()
            .kind()
            .noc0(self.noc, self.tile)
            .unwrap_or_default()
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), Self::Error> {
        if self.run.is_some() {
            return Err(noc_err(noc::ErrorKind::InvalidMode));
        }
        self.check_len(len)?;
        let chip = self.card.chip().kind();
        let from = chip
            .noc0(self.noc, src.node())
            .ok_or(noc_err(noc::ErrorKind::InvalidAddress))?;
        let mut data = vec![0; len as usize];
        match chip.memory(from) {
            Some(Memory::Dram { bank }) => self.card.read_dram(bank, src.local(), &mut data),
            Some(Memory::Tensix) => {
                let addr = u32::try_from(src.local())
                    .map_err(|_| noc_err(noc::ErrorKind::InvalidAddress))?;
                self.card.read_l1(from, addr, &mut data)
            }
            _ => return Err(noc_err(noc::ErrorKind::InvalidAddress)),
        }
        .map_err(noc_fault)?;
        self.card
            .write_l1(self.tile, dst.get(), &data)
            .map_err(noc_fault)
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error> {
        if !mode.is_unicast() || self.run.is_some() {
            return Err(noc_err(noc::ErrorKind::InvalidMode));
        }
        let data = self.copy_out(src, len)?;
        let chip = self.card.chip().kind();
        let to = chip
            .noc0(self.noc, dst.node())
            .ok_or(noc_err(noc::ErrorKind::InvalidAddress))?;
        let addr =
            u32::try_from(dst.local()).map_err(|_| noc_err(noc::ErrorKind::InvalidAddress))?;
        match chip.memory(to) {
            Some(Memory::Tensix) => self.write_tile(to, addr, &data),
            Some(Memory::Dram { bank }) => {
                self.card
                    .write_dram(bank, dst.local(), &data)
                    .map_err(noc_fault)?;
                self.dram_unacked = true;
                Ok(())
            }
            _ => Err(noc_err(noc::ErrorKind::InvalidAddress)),
        }
    }

    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error> {
        if self.run.is_some_and(|open| open != rect) {
            return Err(noc_err(noc::ErrorKind::InvalidMode));
        }
        let data = self.copy_out(src, len)?;
        let loopback = mode.loopback == Loopback::Included;
        let receivers: Vec<Xy> = self
            .card
            .tensix()
            .filter(|&t| loopback || t != self.tile)
            .filter(|&t| {
                let chip = self.card.chip().kind();
                chip.noc0(self.noc, t).is_some_and(|p| rect.contains(p))
            })
            .collect();
        // No receiver, no packet: it can neither continue nor close an open run (the HAL's rule).
        if receivers.is_empty() && self.run.is_some() {
            return Err(noc_err(noc::ErrorKind::InvalidMode));
        }
        for t in receivers {
            self.write_tile(t, dst.get(), &data)?;
        }
        self.run = (mode.link == Link::Linked).then_some(rect);
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, Self::Error> {
        Ok(true)
    }

    fn writes_sent(&mut self) -> Result<bool, Self::Error> {
        Ok(true)
    }

    fn writes_acked(&mut self) -> Result<bool, Self::Error> {
        if self.dram_unacked {
            self.card.dram_landed().map_err(noc_fault)?;
            self.dram_unacked = false;
        }
        for (tile, last) in std::mem::take(&mut self.unacked) {
            let mut b = [0; 4];
            self.card.read_l1(tile, last, &mut b).map_err(noc_fault)?;
        }
        Ok(true)
    }

    fn resync(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The proxy tile's control block, through its window.
#[derive(Debug)]
pub struct HostCtrl<'c, B: Bar> {
    card: &'c Card<B>,
    tile: Xy,
    layout: ControlLayout,
    /// The last clock reading the card gave: `now` stays there if a reading fails, so the
    /// clock never goes back or jumps.
    clock: u64,
    /// Why the last reading failed, until a load or a stop check returns it: the clock is read
    /// from another tile than this one, and a wait whose clock stands would never reach its
    /// deadline while this tile still answers.
    clock_error: Option<PcieError>,
}

impl<'c, B: Bar> HostCtrl<'c, B> {
    /// The control block laid out as `layout` on the tile at NoC0 `tile`.
    pub fn new(card: &'c Card<B>, tile: Xy, layout: ControlLayout) -> Self {
        Self {
            card,
            tile,
            layout,
            clock: 0,
            clock_error: None,
        }
    }

    fn at(&self, offset: u32) -> Result<u32, ProxyError<control::ErrorKind>> {
        if !offset.is_multiple_of(4) {
            return Err(ProxyError {
                kind: control::ErrorKind::Misaligned,
                cause: None,
            });
        }
        if offset >= self.layout.len {
            return Err(ProxyError {
                kind: control::ErrorKind::OutOfRange,
                cause: None,
            });
        }
        Ok(self.layout.base + offset)
    }
}

fn ctrl_fault(e: PcieError) -> ProxyError<control::ErrorKind> {
    ProxyError {
        kind: control::ErrorKind::Other,
        cause: Some(e),
    }
}

impl<B: Bar> control::ErrorType for HostCtrl<'_, B> {
    type Error = ProxyError<control::ErrorKind>;
}

impl<B: Bar> ControlBlock for HostCtrl<'_, B> {
    fn len(&self) -> u32 {
        self.layout.len
    }

    fn addr(&self, offset: u32) -> Result<L1Addr, Self::Error> {
        let a = self.at(offset)?;
        L1Addr::new(a).map_err(|_| ProxyError {
            kind: control::ErrorKind::Misaligned,
            cause: None,
        })
    }

    fn load(&mut self, offset: u32) -> Result<u32, Self::Error> {
        if let Some(e) = self.clock_error.take() {
            return Err(ctrl_fault(e));
        }
        let a = self.at(offset)?;
        let mut b = [0; 4];
        self.card
            .read_l1(self.tile, a, &mut b)
            .map_err(ctrl_fault)?;
        Ok(u32::from_le_bytes(b))
    }

    fn store(&mut self, offset: u32, value: u32) -> Result<(), Self::Error> {
        let a = self.at(offset)?;
        self.card
            .write_l1(self.tile, a, &value.to_le_bytes())
            .map_err(ctrl_fault)
    }

    /// A stop word of all ones is asked of the card before it counts: a hung card reads so.
    fn stop_requested(&mut self) -> Result<bool, Self::Error> {
        // (`load` returns a failed clock reading first.)
        let word = self.load(self.layout.stop_offset)?;
        let tile = self.tile;
        let word = self
            .card
            .check_alive(word, || format!("the stop word of NoC0 {tile}"))
            .map_err(ctrl_fault)?;
        Ok(word != 0)
    }

    fn request_stop(&mut self) -> Result<(), Self::Error> {
        self.store(self.layout.stop_offset, 1)
    }

    fn wait_limit(&mut self) -> Result<u64, Self::Error> {
        let lo = self.load(self.layout.wait_limit_offset)?;
        let hi = self.load(self.layout.wait_limit_offset + 4)?;
        Ok((hi as u64) << 32 | lo as u64)
    }

    fn now(&mut self) -> u64 {
        match self.card.now() {
            Ok(t) => self.clock = self.clock.max(t),
            Err(e) => self.clock_error = Some(e),
        }
        self.clock
    }
}

/// The proxy's own circular buffer: pages in the proxy tile's L1, consumed by the host.
pub struct HostCb<'c, B: Bar, F: FnMut(u16, &[u8])> {
    card: &'c Card<B>,
    tile: Xy,
    base: L1Addr,
    page_size: u32,
    pages: u16,
    pushed: u16,
    popped: u16,
    /// The slot of the next page to push, which is also the oldest not popped: the host
    /// consumes each page as it is pushed. Kept apart from the counters, which wrap at 65,536:
    /// a counter modulo the capacity names the slot only when the capacity divides 65,536.
    at: u16,
    consume: F,
}

impl<B: Bar, F: FnMut(u16, &[u8])> std::fmt::Debug for HostCb<'_, B, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCb")
            .field("base", &self.base)
            .field("pages", &self.pages)
            .field("pushed", &self.pushed)
            .field("popped", &self.popped)
            .finish()
    }
}

impl<'c, B: Bar, F: FnMut(u16, &[u8])> HostCb<'c, B, F> {
    /// `pages` pages of `page_size` bytes at `base` of the tile at NoC0 `tile`; `consume(page
    /// number, bytes)` gets every pushed page, in order, which is then popped.
    pub fn new(
        card: &'c Card<B>,
        tile: Xy,
        base: L1Addr,
        page_size: u32,
        pages: u16,
        consume: F,
    ) -> Self {
        Self {
            card,
            tile,
            base,
            page_size,
            pages,
            pushed: 0,
            popped: 0,
            at: 0,
            consume,
        }
    }

    /// The L1 address of the page `ahead` pages after the kept slot, round the buffer; `None`
    /// when it does not fit 32 bits.
    fn slot(&self, ahead: u16) -> Option<u32> {
        let index = cb::slot_after(self.at, ahead, self.pages);
        index
            .checked_mul(self.page_size)?
            .checked_add(self.base.get())
    }

    /// The kept slot's address, the base when there is none (the pointers' value for a buffer
    /// whose shape no page fits; its pushes and reads refuse it).
    fn slot_addr(&self) -> L1Addr {
        self.slot(0)
            .and_then(|a| L1Addr::new(a).ok())
            .unwrap_or(self.base)
    }

    /// [`slot`](Self::slot) of a page that lies in the tile's L1, else `OutOfRange` (the
    /// buffer's shape is the caller's: nothing checked it before).
    fn page_at(&self, ahead: u16) -> Result<u32, ProxyError<cb::ErrorKind>> {
        let l1 = self.card.chip().kind().l1_size() as u64;
        self.slot(ahead)
            .filter(|&at| at as u64 + self.page_size as u64 <= l1)
            .ok_or(cb_err(cb::ErrorKind::OutOfRange, None))
    }
}

fn cb_err(kind: cb::ErrorKind, cause: Option<PcieError>) -> ProxyError<cb::ErrorKind> {
    ProxyError { kind, cause }
}

impl<B: Bar, F: FnMut(u16, &[u8])> cb::ErrorType for HostCb<'_, B, F> {
    type Error = ProxyError<cb::ErrorKind>;
}

impl<B: Bar, F: FnMut(u16, &[u8])> CircularBuffer for HostCb<'_, B, F> {
    fn capacity(&self) -> u16 {
        self.pages
    }

    fn page_size(&self) -> u32 {
        self.page_size
    }

    fn base(&self) -> L1Addr {
        self.base
    }

    fn pushed(&mut self) -> Result<u16, Self::Error> {
        Ok(self.pushed)
    }

    fn popped(&mut self) -> Result<u16, Self::Error> {
        Ok(self.popped)
    }

    fn write_ptr(&self) -> L1Addr {
        self.slot_addr()
    }

    fn push(&mut self, pages: u16) -> Result<(), Self::Error> {
        let free = self.pages - self.pushed.wrapping_sub(self.popped);
        if pages > free {
            return Err(cb_err(cb::ErrorKind::Overflow, None));
        }
        // Checked before a page's buffer is made: a page size beyond L1 is no page.
        self.page_at(0)?;
        let mut page = vec![0; self.page_size as usize];
        for _ in 0..pages {
            let at = self.page_at(0)?;
            self.card
                .read_l1(self.tile, at, &mut page)
                .map_err(|e| cb_err(cb::ErrorKind::Other, Some(e)))?;
            (self.consume)(self.pushed, &page);
            self.pushed = self.pushed.wrapping_add(1);
            self.popped = self.popped.wrapping_add(1);
            self.at = cb::slot_after(self.at, 1, self.pages) as u16;
        }
        Ok(())
    }

    fn read_ptr(&self) -> L1Addr {
        self.slot_addr()
    }

    fn pop(&mut self, pages: u16) -> Result<(), Self::Error> {
        // The host consumes as it pushes: nothing is ever left to pop.
        if pages > self.pushed.wrapping_sub(self.popped) {
            return Err(cb_err(cb::ErrorKind::Underflow, None));
        }
        self.popped = self.popped.wrapping_add(pages);
        Ok(())
    }

    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), Self::Error> {
        if page >= self.pushed.wrapping_sub(self.popped) {
            return Err(cb_err(cb::ErrorKind::Underflow, None));
        }
        if offset as u64 + buf.len() as u64 > self.page_size as u64 {
            return Err(cb_err(cb::ErrorKind::OutOfRange, None));
        }
        // (Within L1: the page is, and `offset + len` is within the page.)
        let at = self.page_at(page)? + offset;
        self.card
            .read_l1(self.tile, at, buf)
            .map_err(|e| cb_err(cb::ErrorKind::Other, Some(e)))
    }
}

/// Lets the device run while a host participant waits.
#[derive(Debug)]
pub struct HostPause<'c, B: Bar> {
    card: &'c Card<B>,
}

impl<'c, B: Bar> HostPause<'c, B> {
    /// Waits on `card`.
    pub fn new(card: &'c Card<B>) -> Self {
        Self { card }
    }
}

impl<B: Bar> Pause for HostPause<'_, B> {
    async fn pause(&mut self, _deadline: u64) {
        self.card.pass_time();
    }
}
