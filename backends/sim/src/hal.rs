//! The HAL implemented on the simulated chip: what a kernel task holds.
//!
//! Every call charges the calling kernel's clock a few cycles (`Timing::kernel_issue_cycles`
//! for a NoC command, `kernel_call_cycles` otherwise), so polling costs time as it does on a
//! baby core. Transfers are timed by the world (`world.rs`). A kernel stalled by a fault gets
//! neutral answers and its calls change nothing.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use blackhole_pac::addr::{DRAM_READ_ALIGN, DRAM_WRITE_ALIGN, L1_ALIGN};
use komorebi_hal::noc::{self, Ack, Order, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Role, Xy, cb, control};

use crate::fault::StallFrom;
use crate::world::{
    Item, ReadPacket, Target, TileIx, Violation, World, WritePacket, raw, unicast_hops,
};

macro_rules! sim_error {
    ($(#[$m:meta])* $name:ident, $module:ident) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
        #[error("{what}")]
        pub struct $name {
            /// The generic kind.
            pub kind: $module::ErrorKind,
            /// What was wrong and what is allowed.
            pub what: String,
        }

        impl $module::Error for $name {
            fn kind(&self) -> $module::ErrorKind {
                self.kind
            }
        }

        impl $name {
            fn new(kind: $module::ErrorKind, what: impl Into<String>) -> Self {
                Self { kind, what: what.into() }
            }
        }
    };
}

sim_error!(
    /// A refused NoC request.
    NocError,
    noc
);
sim_error!(
    /// A refused circular-buffer call.
    CbError,
    cb
);
sim_error!(
    /// A refused control-block call.
    CtrlError,
    control
);

pub(crate) type Shared = Rc<RefCell<World>>;

/// `done` has reached `issued`, comparing wrapping 32-bit counters (exact while fewer than 2^31
/// are outstanding; a straggler completing after a `resync` makes it "ahead", never behind).
fn caught_up(done: u32, issued: u32) -> bool {
    done.wrapping_sub(issued) as i32 >= 0
}

fn stalled(w: &World, task: usize) -> bool {
    w.tasks[task].stalled
}

/// One data-movement kernel's NoC.
#[derive(Clone)]
pub struct SimNoc {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
    pub(crate) noc: u8,
}

impl std::fmt::Debug for SimNoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimNoc")
            .field("task", &self.task)
            .field("noc", &self.noc)
            .finish()
    }
}

fn check_len(len: u32) -> Result<(), NocError> {
    if len == 0 {
        return Err(NocError::new(
            noc::ErrorKind::InvalidLength,
            "transfer of 0 bytes (allowed: 1..)",
        ));
    }
    Ok(())
}

fn check_l1(addr: u64, len: u32, what: &str) -> Result<(), NocError> {
    if addr % L1_ALIGN as u64 != 0 {
        return Err(NocError::new(
            noc::ErrorKind::Misaligned,
            format!("{what} L1 address {addr:#x} is not 16-byte aligned"),
        ));
    }
    if addr + len as u64 > blackhole_pac::tensix::L1_SIZE as u64 {
        return Err(NocError::new(
            noc::ErrorKind::InvalidAddress,
            format!("{what} {addr:#x}+{len} is beyond L1 (1536 KiB)"),
        ));
    }
    Ok(())
}

impl SimNoc {
    fn target(&self, w: &World, node: Xy) -> Result<Target, NocError> {
        w.target_at(self.noc, (node.x(), node.y())).ok_or_else(|| {
            NocError::new(
                noc::ErrorKind::InvalidAddress,
                format!("no Tensix L1 or DRAM at NoC{} {node}", self.noc),
            )
        })
    }

    fn check_target(
        target: Target,
        addr: u64,
        len: u32,
        align: u32,
        what: &str,
    ) -> Result<(), NocError> {
        match target {
            Target::L1(_) => check_l1(addr, len, what),
            Target::Dram(_) => {
                if addr % align as u64 != 0 {
                    return Err(NocError::new(
                        noc::ErrorKind::Misaligned,
                        format!("{what} DRAM address {addr:#x} is not {align}-byte aligned"),
                    ));
                }
                if addr + len as u64 > blackhole_pac::grid::DRAM_BANK_SIZE {
                    return Err(NocError::new(
                        noc::ErrorKind::InvalidAddress,
                        format!("{what} {addr:#x}+{len} is beyond the 4 GiB bank"),
                    ));
                }
                Ok(())
            }
        }
    }

    fn flow(&self, multicast: bool, start: (u8, u8), end: (u8, u8)) -> u64 {
        (self.tile as u64) << 40
            | (self.noc as u64) << 39
            | (multicast as u64) << 38
            | (start.0 as u64) << 24
            | (start.1 as u64) << 16
            | (end.0 as u64) << 8
            | end.1 as u64
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_writes(
        &self,
        w: &mut World,
        now: u64,
        src: u32,
        dests: Rc<[(Target, (u8, u8))]>,
        dst: u64,
        len: u32,
        acked: bool,
        ordered: bool,
        multicast: bool,
        flow: u64,
        reserve: u64,
    ) {
        let timing = w.cfg.timing;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(timing.max_packet_bytes);
            let busy = timing.write_issue_floor.max(reserve + timing.flits(n));
            let depart = w.niu_slot(self.tile, self.noc, now, busy);
            let niu = &mut w.tiles[self.tile as usize].niu[self.noc as usize];
            if acked {
                niu.nonposted_issued = niu.nonposted_issued.wrapping_add(1);
                niu.acks_expected = niu.acks_expected.wrapping_add(dests.len() as u32);
            } else {
                niu.posted_issued = niu.posted_issued.wrapping_add(1);
            }
            let packet = WritePacket {
                src: self.tile,
                noc: self.noc,
                src_addr: src + off,
                len: n,
                dests: dests.clone(),
                dst_addr: dst + off as u64,
                acked,
                ordered,
                multicast,
                flow,
                issued_at: now,
                reserve,
            };
            w.push(depart, Item::DepartWrite(Box::new(packet)));
            off += n;
        }
    }

    /// An inline write (`NOC_CMD_WR_INLINE`): refused with `HardwareHazard`, and recorded as a
    /// violation, when it targets L1 (broken on Blackhole); carried out as a 4-byte write to DRAM.
    pub fn write_inline(&mut self, value: u32, dst: NocAddr) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        let target = self.target(&w, dst.node())?;
        if let Target::L1(_) = target {
            let tile = w.tiles[self.tile as usize].xy0;
            let to = raw(self.noc, (dst.node().x(), dst.node().y()));
            w.violations.push(Violation::InlineWriteToL1 {
                tile,
                target: to,
                time: now,
            });
            return Err(NocError::new(
                noc::ErrorKind::HardwareHazard,
                "inline write to L1 is broken on Blackhole: write from an L1 source word",
            ));
        }
        Self::check_target(target, dst.local(), 4, DRAM_WRITE_ALIGN, "inline write")?;
        // The value travels from a scratch word of the issuing tile; only its landing is modelled.
        if let Target::Dram(bank) = target {
            w.dram[bank as usize].write_u32(dst.local(), value);
        }
        Ok(())
    }
}

impl noc::ErrorType for SimNoc {
    type Error = NocError;
}

impl noc::NocMulticast for SimNoc {
    fn noc(&self) -> NocId {
        if self.noc == 0 {
            NocId::Noc0
        } else {
            NocId::Noc1
        }
    }

    fn node(&self) -> Xy {
        let w = self.world.borrow();
        let (x, y) = raw(self.noc, w.tiles[self.tile as usize].xy0);
        Xy::new(x, y).unwrap_or_default()
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if stalled(&w, self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(dst.get() as u64, len, "read destination")?;
        let target = self.target(&w, src.node())?;
        Self::check_target(target, src.local(), len, DRAM_READ_ALIGN, "read source")?;
        let timing = w.cfg.timing;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(timing.max_packet_bytes);
            let depart = w.niu_slot(self.tile, self.noc, now, timing.read_issue_floor);
            let niu = &mut w.tiles[self.tile as usize].niu[self.noc as usize];
            niu.reads_issued = niu.reads_issued.wrapping_add(1);
            let p = ReadPacket {
                tile: self.tile,
                noc: self.noc,
                src: target,
                src_raw: (src.node().x(), src.node().y()),
                src_addr: src.local() + off as u64,
                dst_addr: dst.get() + off,
                len: n,
                issued_at: now,
            };
            w.push(depart, Item::DepartRead(Box::new(p)));
            off += n;
        }
        Ok(())
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if stalled(&w, self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(src.get() as u64, len, "write source")?;
        let target = self.target(&w, dst.node())?;
        Self::check_target(
            target,
            dst.local(),
            len,
            DRAM_WRITE_ALIGN,
            "write destination",
        )?;
        let to = (dst.node().x(), dst.node().y());
        let dests: Rc<[_]> = vec![(target, to)].into();
        let ordered = mode.order == Order::Ordered;
        let flow = self.flow(false, to, (0, 0));
        self.issue_writes(
            &mut w,
            now,
            src.get(),
            dests,
            dst.local(),
            len,
            mode.ack == Ack::Acked,
            ordered,
            false,
            flow,
            0,
        );
        Ok(())
    }

    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if stalled(&w, self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(src.get() as u64, len, "multicast source")?;
        check_l1(dst.get() as u64, len, "multicast destination")?;
        let (s, e) = (
            (rect.start().x(), rect.start().y()),
            (rect.end().x(), rect.end().y()),
        );
        let dests = w.multicast_dests(self.noc, self.tile, s, e);
        if dests.is_empty() {
            return Ok(());
        }
        let me = raw(self.noc, w.tiles[self.tile as usize].xy0);
        let far = dests
            .iter()
            .map(|&(_, d)| unicast_hops(me, d))
            .max()
            .unwrap_or(0);
        let timing = w.cfg.timing;
        let reserve = (timing.reserve_base + timing.reserve_per_hop * far as f64).round() as u64;
        let flow = self.flow(true, s, e);
        // Posted multicast is broken on Blackhole: every multicast is acknowledged.
        let ordered = mode.order == Order::Ordered;
        self.issue_writes(
            &mut w,
            now,
            src.get(),
            dests.into(),
            dst.get() as u64,
            len,
            true,
            ordered,
            true,
            flow,
            reserve,
        );
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!stalled(&w, self.task) && caught_up(n.reads_done, n.reads_issued))
    }

    fn writes_sent(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!stalled(&w, self.task)
            && caught_up(n.nonposted_sent, n.nonposted_issued)
            && caught_up(n.posted_sent, n.posted_issued))
    }

    fn writes_acked(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!stalled(&w, self.task) && caught_up(n.acks_received, n.acks_expected))
    }

    fn resync(&mut self) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &mut w.tiles[self.tile as usize].niu[self.noc as usize];
        n.reads_issued = n.reads_done;
        n.nonposted_issued = n.nonposted_sent;
        n.posted_issued = n.posted_sent;
        n.acks_expected = n.acks_received;
        Ok(())
    }
}

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
    fn with<T>(&self, f: impl FnOnce(&crate::world::Cb) -> T) -> Option<T> {
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

    /// True (and the task stalls) if this push or pop trips a stall fault.
    fn trips(w: &mut World, task: usize, index: u8, pages: u16, push: bool) -> bool {
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
            w.tasks[task].stalled = true;
        }
        tripped
    }

    fn move_pages(&mut self, pages: u16, push: bool) -> Result<(), CbError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_call(self.task);
        if stalled(&w, self.task) || Self::trips(&mut w, self.task, self.index, pages, push) {
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
        if push {
            c.pushed = c.pushed.wrapping_add(pages);
            c.wr = (c.wr + pages) % c.pages;
        } else {
            c.popped = c.popped.wrapping_add(pages);
            c.rd = (c.rd + pages) % c.pages;
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
        self.world.borrow_mut().charge(self.task, 1);
        self.with(|c| c.pushed).ok_or_else(|| self.not_configured())
    }

    fn popped(&mut self) -> Result<u16, CbError> {
        self.world.borrow_mut().charge(self.task, 1);
        self.with(|c| c.popped).ok_or_else(|| self.not_configured())
    }

    fn pages_ready(&mut self) -> Result<u16, CbError> {
        let stalled = {
            let mut w = self.world.borrow_mut();
            w.charge(self.task, 1);
            stalled(&w, self.task)
        };
        self.with(|c| if stalled { 0 } else { c.ready() })
            .ok_or_else(|| self.not_configured())
    }

    fn pages_free(&mut self) -> Result<u16, CbError> {
        let stalled = {
            let mut w = self.world.borrow_mut();
            w.charge(self.task, 1);
            stalled(&w, self.task)
        };
        self.with(|c| if stalled { 0 } else { c.pages - c.ready() })
            .ok_or_else(|| self.not_configured())
    }

    fn write_ptr(&self) -> L1Addr {
        self.with(|c| L1Addr::new(c.base + c.wr as u32 * c.page_size).unwrap_or(L1Addr::ZERO))
            .unwrap_or(L1Addr::ZERO)
    }

    fn push(&mut self, pages: u16) -> Result<(), CbError> {
        self.move_pages(pages, true)
    }

    fn read_ptr(&self) -> L1Addr {
        self.with(|c| L1Addr::new(c.base + c.rd as u32 * c.page_size).unwrap_or(L1Addr::ZERO))
            .unwrap_or(L1Addr::ZERO)
    }

    fn pop(&mut self, pages: u16) -> Result<(), CbError> {
        self.move_pages(pages, false)
    }

    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), CbError> {
        let mut w = self.world.borrow_mut();
        w.charge(self.task, 1);
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
        let addr = c.base + ((c.rd + page) % c.pages) as u32 * c.page_size + offset;
        tile.l1.read(addr as u64, buf);
        Ok(())
    }
}

/// A tile's control block, as one kernel sees it.
#[derive(Clone)]
pub struct SimCtrl {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
}

impl std::fmt::Debug for SimCtrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCtrl").field("task", &self.task).finish()
    }
}

impl SimCtrl {
    fn check(w: &World, offset: u32) -> Result<u32, CtrlError> {
        let layout = w.cfg.control;
        if offset % 4 != 0 {
            return Err(CtrlError::new(
                control::ErrorKind::Misaligned,
                format!("control offset {offset:#x} is not a multiple of 4"),
            ));
        }
        if offset >= layout.len {
            return Err(CtrlError::new(
                control::ErrorKind::OutOfRange,
                format!(
                    "control offset {offset:#x} is beyond the block ({:#x} bytes)",
                    layout.len
                ),
            ));
        }
        Ok(layout.base + offset)
    }
}

impl control::ErrorType for SimCtrl {
    type Error = CtrlError;
}

impl control::ControlBlock for SimCtrl {
    fn len(&self) -> u32 {
        self.world.borrow().cfg.control.len
    }

    fn addr(&self, offset: u32) -> Result<L1Addr, CtrlError> {
        let a = Self::check(&self.world.borrow(), offset)?;
        L1Addr::new(a).map_err(|e| CtrlError::new(control::ErrorKind::Misaligned, e.to_string()))
    }

    fn load(&mut self, offset: u32) -> Result<u32, CtrlError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let a = Self::check(&w, offset)?;
        Ok(w.tiles[self.tile as usize].l1.read_u32(a as u64))
    }

    fn store(&mut self, offset: u32, value: u32) -> Result<(), CtrlError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_call(self.task);
        let a = Self::check(&w, offset)?;
        if stalled(&w, self.task) {
            return Ok(());
        }
        w.tiles[self.tile as usize].l1.write_u32(a as u64, value);
        w.touch(self.tile, now);
        Ok(())
    }

    fn stop_requested(&mut self) -> Result<bool, CtrlError> {
        let stop = self.world.borrow().cfg.control.stop_offset;
        let stalled = stalled(&self.world.borrow(), self.task);
        Ok(!stalled && self.load(stop)? != 0)
    }

    fn request_stop(&mut self) -> Result<(), CtrlError> {
        let stop = self.world.borrow().cfg.control.stop_offset;
        self.store(stop, 1)
    }

    fn wait_limit(&mut self) -> Result<u64, CtrlError> {
        let at = self.world.borrow().cfg.control.wait_limit_offset;
        let lo = self.load(at)? as u64;
        let hi = self.load(at + 4)? as u64;
        Ok(hi << 32 | lo)
    }

    fn now(&mut self) -> u64 {
        let mut w = self.world.borrow_mut();
        if stalled(&w, self.task) {
            // A stalled kernel's clock stands still, so its waits never end.
            return w.tasks[self.task].parked_at;
        }
        w.charge_call(self.task)
    }
}

/// How a simulated kernel waits: parked until its tile changes or its deadline, in virtual time.
/// Also the kernel's `DelayNs` (a sleep in virtual time that tile changes do not end).
#[derive(Clone)]
pub struct SimPause {
    pub(crate) world: Shared,
    pub(crate) task: usize,
}

impl std::fmt::Debug for SimPause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimPause")
            .field("task", &self.task)
            .finish()
    }
}

/// Pending once (the task has just parked); the executor polls again only on a wake-up.
struct Parked(bool);

impl Future for Parked {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

// The simulator runs every kernel as an async task of its executor, so it has no blocking build
// (`--cfg komorebi_blocking`, the firmware's): lib.rs refuses that cfg with a compile_error, and
// this impl steps aside so that the error is the only one.
#[cfg(not(komorebi_blocking))]
impl komorebi_hal::Pause for SimPause {
    async fn pause(&mut self, deadline: u64) {
        self.world.borrow_mut().park(self.task, deadline, false);
        Parked(false).await
    }
}

impl embedded_hal_async::delay::DelayNs for SimPause {
    async fn delay_ns(&mut self, ns: u32) {
        let until = {
            let mut w = self.world.borrow_mut();
            let cycles = w.cfg.timing.cycles_of_ns(ns as u64);
            let local = w.charge(self.task, 0);
            local + cycles
        };
        self.world.borrow_mut().park(self.task, until, true);
        Parked(false).await
    }
}

/// Every handle a kernel gets when it is spawned.
#[derive(Clone)]
pub struct KernelEnv {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
    pub(crate) kernel: Role,
}

impl std::fmt::Debug for KernelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelEnv")
            .field("task", &self.task)
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl KernelEnv {
    /// The kernel's NoC (NoC0 for the reader, NoC1 for the writer; none for compute).
    pub fn noc(&self) -> Option<SimNoc> {
        self.kernel.noc().map(|noc| SimNoc {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
            noc: noc.index(),
        })
    }

    /// The tile's control block.
    pub fn ctrl(&self) -> SimCtrl {
        SimCtrl {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
        }
    }

    /// How the kernel waits.
    pub fn pause(&self) -> SimPause {
        SimPause {
            world: self.world.clone(),
            task: self.task,
        }
    }

    /// Circular buffer `index` (0..64) of the tile; calls fail until it is configured.
    pub fn cb(&self, index: u8) -> Option<SimCb> {
        ((index as usize) < blackhole_pac::stream::CIRCULAR_BUFFERS).then(|| SimCb {
            world: self.world.clone(),
            task: self.task,
            tile: self.tile,
            index,
        })
    }

    /// Which kernel this is.
    pub fn kernel(&self) -> Role {
        self.kernel
    }

    /// NoC0 coordinates of the kernel's tile.
    pub fn tile(&self) -> (u8, u8) {
        self.world.borrow().tiles[self.tile as usize].xy0
    }

    /// The task's id.
    pub fn task(&self) -> usize {
        self.task
    }
}
