//! The three persistent kernels of every tile of a group, with the broadcast handler and its
//! handshake peer (both registered, as the host's session does; a command's handler id picks
//! one), on a chip of fake tiles: commands posted into the control blocks' slots as a host does,
//! the tiles' reports read back from their records. The handshake's tests are at the end.
//!
//! # The chip
//!
//! Each tile is 128 KiB of L1 (its control block at 0x4000) and the counters of its circular
//! buffers, configured from the control block's buffer table as the firmware does (an entry of
//! 0 pages is no buffer). The NoC delivers at issue: a read copies DRAM (or L1) into L1, a write
//! or multicast copies L1 into every destination at once, so `reads_done`, `writes_sent` and
//! `writes_acked` always hold (stronger than the HAL's contract, which is allowed), unless a
//! test makes a NoC lose its acknowledgements (until `resync`), refuse reads or be busy, or
//! deliver reads late: such a read takes its bytes at issue and lands them a number of chip
//! cycles later (a slow DRAM bank), and `reads_done` and `tagged_reads_done` (per tag) hold only
//! once every read issued since the last `resync` has landed. A read still in flight at a
//! `resync` lands anyway, later, as on a card; the chip notes it. NoC1
//! numbers the 17 x 12 grid from NoC0's far corner. The eight DRAM banks sit at Blackhole's
//! DRAM worker ports. The chip's clock advances by one at every `now()`; each kernel reads it
//! with an offset of its own (reader 0, writer 2^30, compute 2^31), as each baby core has its own
//! cycle counter, so a word says whose clock wrote it.
//!
//! Every kernel is a future, and so is the host; one thread polls them round-robin in a fixed
//! order (`Pause` is `Spin`: pending once), so every run is the same run: nothing depends on
//! thread timing. A test may poll a tile's compute only every n-th round (a slow compute). Each run with a fault is made twice, polling each tile's data-movement
//! kernels first and then its compute first, with the same expected reports. A run that does
//! not end within a bound of rounds fails the test.
//!
//! # The expected reports
//!
//! Written by hand from the protocol's rules (the broadcast specification, the handler's docs
//! on stalls and recovery, the wait primitive's order of checks), each test saying why.
//!
//! # The data
//!
//! As the handler's program documents: page `g = block * pages + page` of a broadcast is read
//! through the DRAM port of stream `g % 8` at `dram_base + g * page_size` (here stream `i` is
//! bank `i`), and its word `w` is
//! `pattern_word(job, broadcast, block, page, w)`. The host's part of that is written here,
//! from the documentation, not taken from the host crate.
//!
//! Not built with `--cfg komorebi_blocking`: there every wait is a plain spinning function, and
//! the kernels of a tile cannot share a thread.

#![cfg(not(komorebi_blocking))]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

use komorebi_broadcast::args::Along;
use komorebi_broadcast::layout::{BroadcastParams, CoreArgs, Geometry, broadcast_args};
use komorebi_broadcast::{Where, area};
use komorebi_hal::noc::{ReadTag, WriteMode};
use komorebi_hal::{
    CircularBuffer, ControlBlock, L1Addr, LogicalRect, NocAddr, NocId, NocMulticast, Rect, Role,
    Spin, Xy, cb, control, noc,
};
use komorebi_kernel::abi::{self, GiveUpCode, KernelGiveUp};
use komorebi_kernel::broadcast_handler::pattern_word;
use komorebi_kernel::broadcast_handler::program::{
    BroadcastProgram, ComputeInput, ComputeProgram, MoverProgram, STREAMS,
};
use komorebi_kernel::handshake_handler::HANDSHAKE_HANDLER;
use komorebi_kernel::{
    BroadcastHandler, Buffers, Command, HandshakeHandler, KernelExit, persistent,
};

// ---- the chip ------------------------------------------------------------------------------

const GRID: (u8, u8) = (17, 12);
const L1_BYTES: usize = 0x2_0000;
const CONTROL: u32 = 0x4000;
/// Blackhole's DRAM worker ports, NoC0 coordinates, bank 0..7.
const DRAM_PORTS: [(u8, u8); 8] = [
    (0, 11),
    (0, 3),
    (0, 8),
    (0, 6),
    (9, 11),
    (9, 3),
    (9, 8),
    (9, 6),
];
const DRAM_BYTES: usize = 0x1_0000;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Counters {
    pushed: u16,
    popped: u16,
    wr: u16,
    rd: u16,
}

struct Tile {
    l1: Vec<u8>,
    cbs: BTreeMap<u8, Counters>,
}

/// NoC faults the test injects into one tile's NoC.
#[derive(Clone, Debug, Default)]
struct NocFaults {
    /// Reads refused as busy before the next one is taken.
    busy_reads: u32,
    /// Every read refused with this error.
    failed_reads: Option<noc::ErrorKind>,
    /// Reads from this DRAM bank (NoC0 coordinates) land this many chip cycles after issue.
    slow_bank: Option<((u8, u8), u64)>,
    /// Every other read lands this many chip cycles after issue (0: at issue).
    read_delay: u64,
}

/// A read issued and not landed yet.
#[derive(Clone, Debug)]
struct InFlight {
    /// NoC0 coordinates of the tile that issued it, and its NoC's index.
    tile: (u8, u8),
    noc: u8,
    /// Its NoC's `resync` count at issue: reads issued before a resync no longer count.
    epoch: u32,
    tag: Option<u8>,
    /// The chip cycle at which it lands.
    due: u64,
    dst: u32,
    bytes: Vec<u8>,
}

/// A read or a data multicast a tile's NoC issued (VALID and markers are not traced).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Traced {
    Read { dst: u32, tag: Option<u8> },
    Data { src: u32 },
}

#[derive(Default)]
struct Chip {
    clock: u64,
    /// By NoC0 coordinates.
    tiles: BTreeMap<(u8, u8), Tile>,
    /// By NoC0 coordinates.
    dram: BTreeMap<(u8, u8), Vec<u8>>,
    /// By NoC0 coordinates of the tile.
    faults: BTreeMap<(u8, u8), NocFaults>,
    /// Padding pages pushed, by tile and buffer.
    padding: BTreeMap<((u8, u8), u8), u32>,
    /// `resync` calls, by tile and NoC index.
    resyncs: BTreeMap<((u8, u8), u8), u32>,
    /// NoCs (by tile and index) whose acknowledgements are lost: a write issued there is never
    /// acknowledged, until `resync` forgets it.
    lose_acks: BTreeSet<((u8, u8), u8)>,
    /// NoCs with a write whose acknowledgement was lost.
    unacked: BTreeSet<((u8, u8), u8)>,
    /// Unicast writes issued, by tile and NoC index (DONE markers, the handshake's ready words).
    writes: BTreeMap<((u8, u8), u8), u32>,
    /// Reads issued and not landed yet.
    in_flight: Vec<InFlight>,
    /// Reads that were still in flight when their NoC was resynced: (tile, NoC, destination).
    in_flight_at_resync: Vec<((u8, u8), u8, u32)>,
    /// Reads and data multicasts each tile issued, in order, by NoC0 coordinates.
    trace: BTreeMap<(u8, u8), Vec<Traced>>,
    /// Tiles (NoC0 coordinates) whose compute is polled only every n-th round.
    compute_every: BTreeMap<(u8, u8), u32>,
    /// For each announcement of a data-movement kernel's recovery (by tile and role), the
    /// destinations of the tile's reads in flight at that moment.
    in_flight_at_recovery: BTreeMap<((u8, u8), Role), Vec<u32>>,
    /// For each set-up word a data-movement kernel stored (by tile and role), the where words
    /// of the tile's broadcast areas 0 and 1 at that moment (a refusal is recorded first).
    where_at_set_up: BTreeMap<((u8, u8), Role), [u32; 2]>,
}

type Shared = Rc<RefCell<Chip>>;

fn mirror(p: (u8, u8)) -> (u8, u8) {
    (GRID.0 - 1 - p.0, GRID.1 - 1 - p.1)
}

impl Chip {
    fn word(&self, tile: (u8, u8), addr: u32) -> u32 {
        let l1 = &self.tiles[&tile].l1;
        let a = addr as usize;
        u32::from_le_bytes([l1[a], l1[a + 1], l1[a + 2], l1[a + 3]])
    }

    fn set_word(&mut self, tile: (u8, u8), addr: u32, value: u32) {
        let a = addr as usize;
        let l1 = &mut self.tiles.get_mut(&tile).unwrap().l1;
        l1[a..a + 4].copy_from_slice(&value.to_le_bytes());
    }

    fn control(&self, tile: (u8, u8), offset: u32) -> u32 {
        self.word(tile, CONTROL + offset)
    }

    fn set_control(&mut self, tile: (u8, u8), offset: u32, value: u32) {
        self.set_word(tile, CONTROL + offset, value)
    }

    /// Lands every read due by now.
    fn land(&mut self) {
        let clock = self.clock;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.in_flight)
            .into_iter()
            .partition(|r| r.due <= clock);
        self.in_flight = later;
        for r in due {
            let at = r.dst as usize;
            let l1 = &mut self.tiles.get_mut(&r.tile).unwrap().l1;
            l1[at..at + r.bytes.len()].copy_from_slice(&r.bytes);
        }
    }

    /// The `resync` count of NoC `noc` of `tile`.
    fn epoch(&self, tile: (u8, u8), noc: u8) -> u32 {
        self.resyncs.get(&(tile, noc)).copied().unwrap_or(0)
    }
}

struct Ctrl {
    chip: Shared,
    tile: (u8, u8),
    /// This kernel's clock offset.
    offset: u64,
}

impl control::ErrorType for Ctrl {
    type Error = control::ErrorKind;
}

impl Ctrl {
    fn check(offset: u32) -> Result<(), control::ErrorKind> {
        if offset >= 0x1000 {
            Err(control::ErrorKind::OutOfRange)
        } else if offset % 4 != 0 {
            Err(control::ErrorKind::Misaligned)
        } else {
            Ok(())
        }
    }
}

impl ControlBlock for Ctrl {
    fn len(&self) -> u32 {
        0x1000
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
        Self::check(offset)?;
        L1Addr::new(CONTROL + offset).map_err(|_| control::ErrorKind::Misaligned)
    }
    fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
        Self::check(offset)?;
        Ok(self.chip.borrow().control(self.tile, offset))
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind> {
        Self::check(offset)?;
        let mut chip = self.chip.borrow_mut();
        for role in [Role::Reader, Role::Writer] {
            if offset == abi::kernel_word(abi::KERNEL_RECOVERING, role) {
                let tile = self.tile;
                let reads = chip.in_flight.iter().filter(|r| r.tile == tile);
                let dsts = reads.map(|r| r.dst).collect();
                chip.in_flight_at_recovery.insert((tile, role), dsts);
            }
            if offset == abi::kernel_word(abi::KERNEL_SET_UP, role) {
                let tile = self.tile;
                let at = |id: u8| chip.control(tile, area::area(id) + area::GIVE_UP_WHERE);
                let words = [at(0), at(1)];
                chip.where_at_set_up.insert((tile, role), words);
            }
        }
        chip.set_control(self.tile, offset, value);
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
        Ok(self.load(abi::STOP)? != 0)
    }
    fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
        self.store(abi::STOP, 1)
    }
    fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
        let lo = self.load(abi::IDLE_WAIT_LIMIT)? as u64;
        let hi = self.load(abi::IDLE_WAIT_LIMIT + 4)? as u64;
        Ok(lo | hi << 32)
    }
    fn now(&mut self) -> u64 {
        let mut c = self.chip.borrow_mut();
        c.clock += 1;
        c.land();
        c.clock + self.offset
    }
}

struct Noc {
    chip: Shared,
    /// NoC0 coordinates of this tile.
    tile: (u8, u8),
    id: NocId,
}

impl noc::ErrorType for Noc {
    type Error = noc::ErrorKind;
}

impl Noc {
    /// NoC0 coordinates of `p`, raw coordinates of this NoC.
    fn noc0(&self, p: Xy) -> (u8, u8) {
        match self.id {
            NocId::Noc0 => (p.x(), p.y()),
            NocId::Noc1 => mirror((p.x(), p.y())),
        }
    }

    fn on_this_noc(&self, noc0: (u8, u8)) -> Xy {
        let (x, y) = match self.id {
            NocId::Noc0 => noc0,
            NocId::Noc1 => mirror(noc0),
        };
        Xy::new(x, y).unwrap()
    }

    fn copy_to(
        chip: &mut Chip,
        src: Vec<u8>,
        dst: (u8, u8),
        at: u64,
    ) -> Result<(), noc::ErrorKind> {
        let tile = chip
            .tiles
            .get_mut(&dst)
            .ok_or(noc::ErrorKind::InvalidAddress)?;
        let at = at as usize;
        tile.l1
            .get_mut(at..at + src.len())
            .ok_or(noc::ErrorKind::InvalidAddress)?
            .copy_from_slice(&src);
        Ok(())
    }

    /// A write was issued: its acknowledgement is lost if this NoC loses them.
    fn issued(&self, chip: &mut Chip) {
        let key = (self.tile, self.id.index());
        if chip.lose_acks.contains(&key) {
            chip.unacked.insert(key);
        }
    }

    /// Whether every read of this NoC issued since its last `resync` with a tag `tag` accepts
    /// has landed.
    fn landed(&self, tag: impl Fn(Option<u8>) -> bool) -> bool {
        let mut chip = self.chip.borrow_mut();
        chip.land();
        let (noc, epoch) = (self.id.index(), chip.epoch(self.tile, self.id.index()));
        !chip
            .in_flight
            .iter()
            .any(|r| r.tile == self.tile && r.noc == noc && r.epoch == epoch && tag(r.tag))
    }

    fn issue_read(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: Option<u8>,
    ) -> Result<(), noc::ErrorKind> {
        let mut chip = self.chip.borrow_mut();
        let mut delay = 0;
        let from = self.noc0(src.node());
        if let Some(f) = chip.faults.get_mut(&self.tile) {
            if let Some(kind) = f.failed_reads {
                return Err(kind);
            }
            if f.busy_reads > 0 {
                f.busy_reads -= 1;
                return Err(noc::ErrorKind::Busy);
            }
            delay = match f.slow_bank {
                Some((bank, d)) if bank == from => d,
                _ => f.read_delay,
            };
        }
        let at = src.local() as usize;
        let bytes = match chip.dram.get(&from) {
            Some(bank) => bank.get(at..at + len as usize),
            None => chip
                .tiles
                .get(&from)
                .and_then(|t| t.l1.get(at..at + len as usize)),
        }
        .ok_or(noc::ErrorKind::InvalidAddress)?
        .to_vec();
        chip.trace.entry(self.tile).or_default().push(Traced::Read {
            dst: dst.get(),
            tag,
        });
        if delay == 0 {
            return Self::copy_to(&mut chip, bytes, self.tile, dst.get() as u64);
        }
        let at = dst.get() as usize;
        if chip.tiles[&self.tile]
            .l1
            .get(at..at + bytes.len())
            .is_none()
        {
            return Err(noc::ErrorKind::InvalidAddress);
        }
        let r = InFlight {
            tile: self.tile,
            noc: self.id.index(),
            epoch: chip.epoch(self.tile, self.id.index()),
            tag,
            due: chip.clock + delay,
            dst: dst.get(),
            bytes,
        };
        chip.in_flight.push(r);
        Ok(())
    }

    fn own_bytes(&self, chip: &Chip, src: L1Addr, len: u32) -> Result<Vec<u8>, noc::ErrorKind> {
        let s = src.get() as usize;
        chip.tiles[&self.tile]
            .l1
            .get(s..s + len as usize)
            .map(<[u8]>::to_vec)
            .ok_or(noc::ErrorKind::InvalidAddress)
    }
}

impl NocMulticast for Noc {
    fn noc(&self) -> NocId {
        self.id
    }
    fn node(&self) -> Xy {
        self.on_this_noc(self.tile)
    }
    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), noc::ErrorKind> {
        self.issue_read(src, dst, len, None)
    }
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), noc::ErrorKind> {
        self.issue_read(src, dst, len, Some(tag.get()))
    }
    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        assert_eq!(mode, WriteMode::ORDERED);
        let mut chip = self.chip.borrow_mut();
        let bytes = self.own_bytes(&chip, src, len)?;
        self.issued(&mut chip);
        *chip.writes.entry((self.tile, self.id.index())).or_default() += 1;
        Self::copy_to(&mut chip, bytes, self.noc0(dst.node()), dst.local())
    }
    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        assert_eq!(mode, WriteMode::ORDERED);
        let mut chip = self.chip.borrow_mut();
        let bytes = self.own_bytes(&chip, src, len)?;
        self.issued(&mut chip);
        if len > 4 {
            let t = Traced::Data { src: src.get() };
            chip.trace.entry(self.tile).or_default().push(t);
        }
        let to: Vec<(u8, u8)> = chip
            .tiles
            .keys()
            .copied()
            .filter(|&t| t != self.tile && rect.contains(self.on_this_noc(t)))
            .collect();
        assert!(!to.is_empty(), "a multicast to nobody: {rect:?}");
        for t in to {
            Self::copy_to(&mut chip, bytes.clone(), t, dst.get() as u64)?;
        }
        Ok(())
    }
    fn reads_done(&mut self) -> Result<bool, noc::ErrorKind> {
        Ok(self.landed(|_| true))
    }
    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, noc::ErrorKind> {
        Ok(self.landed(|t| t == Some(tag.get())))
    }
    fn writes_sent(&mut self) -> Result<bool, noc::ErrorKind> {
        Ok(true)
    }
    fn writes_acked(&mut self) -> Result<bool, noc::ErrorKind> {
        let key = (self.tile, self.id.index());
        Ok(!self.chip.borrow().unacked.contains(&key))
    }
    fn resync(&mut self) -> Result<(), noc::ErrorKind> {
        let key = (self.tile, self.id.index());
        let mut chip = self.chip.borrow_mut();
        chip.land();
        let stale: Vec<_> = chip
            .in_flight
            .iter()
            .filter(|r| (r.tile, r.noc) == key)
            .map(|r| (r.tile, r.noc, r.dst))
            .collect();
        chip.in_flight_at_resync.extend(stale);
        *chip.resyncs.entry(key).or_default() += 1;
        chip.unacked.remove(&key);
        Ok(())
    }
}

struct Cb {
    chip: Shared,
    tile: (u8, u8),
    index: u8,
    base: u32,
    page_size: u32,
    pages: u16,
}

impl cb::ErrorType for Cb {
    type Error = cb::ErrorKind;
}

impl Cb {
    fn counters(&self) -> Counters {
        self.chip.borrow().tiles[&self.tile].cbs[&self.index]
    }

    fn move_pages(&mut self, n: u16, push: bool) -> Result<(), cb::ErrorKind> {
        let mut chip = self.chip.borrow_mut();
        let c = chip
            .tiles
            .get_mut(&self.tile)
            .unwrap()
            .cbs
            .get_mut(&self.index)
            .unwrap();
        let ready = c.pushed.wrapping_sub(c.popped);
        let (room, at) = if push {
            (self.pages - ready, c.wr)
        } else {
            (ready, c.rd)
        };
        if n > room {
            return Err(if push {
                cb::ErrorKind::Overflow
            } else {
                cb::ErrorKind::Underflow
            });
        }
        if at as u32 + n as u32 > self.pages as u32 {
            return Err(cb::ErrorKind::Wrap);
        }
        if push {
            c.pushed = c.pushed.wrapping_add(n);
            c.wr = ((c.wr as u32 + n as u32) % self.pages as u32) as u16;
        } else {
            c.popped = c.popped.wrapping_add(n);
            c.rd = ((c.rd as u32 + n as u32) % self.pages as u32) as u16;
        }
        Ok(())
    }
}

impl CircularBuffer for Cb {
    fn capacity(&self) -> u16 {
        self.pages
    }
    fn page_size(&self) -> u32 {
        self.page_size
    }
    fn base(&self) -> L1Addr {
        L1Addr::new(self.base).unwrap()
    }
    fn pushed(&mut self) -> Result<u16, cb::ErrorKind> {
        Ok(self.counters().pushed)
    }
    fn popped(&mut self) -> Result<u16, cb::ErrorKind> {
        Ok(self.counters().popped)
    }
    fn write_ptr(&self) -> L1Addr {
        L1Addr::new(self.base + self.counters().wr as u32 * self.page_size).unwrap()
    }
    fn push(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        self.move_pages(pages, true)
    }
    fn push_padding(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        self.move_pages(pages, true)?;
        if pages == 0 {
            return Ok(());
        }
        *self
            .chip
            .borrow_mut()
            .padding
            .entry((self.tile, self.index))
            .or_default() += pages as u32;
        Ok(())
    }
    fn read_ptr(&self) -> L1Addr {
        L1Addr::new(self.base + self.counters().rd as u32 * self.page_size).unwrap()
    }
    fn pop(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        self.move_pages(pages, false)
    }
    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), cb::ErrorKind> {
        let c = self.counters();
        if page >= c.pushed.wrapping_sub(c.popped) {
            return Err(cb::ErrorKind::Underflow);
        }
        if offset as usize + buf.len() > self.page_size as usize {
            return Err(cb::ErrorKind::OutOfRange);
        }
        let at =
            self.base + (c.rd as u32 + page as u32) % self.pages as u32 * self.page_size + offset;
        let chip = self.chip.borrow();
        let at = at as usize;
        buf.copy_from_slice(&chip.tiles[&self.tile].l1[at..at + buf.len()]);
        Ok(())
    }
}

/// The tile's buffers, from its control block's buffer table.
struct TileBuffers {
    chip: Shared,
    tile: (u8, u8),
}

impl Buffers for TileBuffers {
    type Cb = Cb;
    fn cb(&self, index: u8) -> Option<Cb> {
        if index as u32 >= abi::CB_ENTRIES {
            return None;
        }
        let chip = self.chip.borrow();
        let entry = abi::CB_TABLE + index as u32 * abi::CB_ENTRY_BYTES;
        let (base, page_size, pages) = (
            chip.control(self.tile, entry),
            chip.control(self.tile, entry + 4),
            chip.control(self.tile, entry + 8),
        );
        if pages == 0 || pages > u16::MAX as u32 {
            return None;
        }
        Some(Cb {
            chip: self.chip.clone(),
            tile: self.tile,
            index,
            base,
            page_size,
            pages: pages as u16,
        })
    }
}

// ---- the executor --------------------------------------------------------------------------

/// Pending once.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// A tile's compute, polled only every `chip.compute_every[tile]`-th time it is asked.
struct Throttled<'a> {
    chip: Shared,
    tile: (u8, u8),
    asked: u32,
    inner: Task<'a>,
}

impl Future for Throttled<'_> {
    type Output = Option<Exit>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Exit>> {
        let every = self
            .chip
            .borrow()
            .compute_every
            .get(&self.tile)
            .copied()
            .unwrap_or(1);
        self.asked += 1;
        if self.asked % every.max(1) != 0 {
            return Poll::Pending;
        }
        self.inner.as_mut().poll(cx)
    }
}

/// How one kernel's loop ended: its tile, its role, why.
type Exit = ((u8, u8), Role, KernelExit);
/// A kernel (`Some` exit) or the host (`None`).
type Task<'a> = Pin<Box<dyn Future<Output = Option<Exit>> + 'a>>;

/// Polls every task in turn until all are done; panics after `rounds` rounds.
fn run(mut tasks: Vec<Task<'_>>, rounds: usize) -> Vec<Exit> {
    let mut cx = TaskContext::from_waker(Waker::noop());
    let mut done: Vec<Option<Option<Exit>>> = tasks.iter().map(|_| None).collect();
    for _ in 0..rounds {
        for (t, d) in tasks.iter_mut().zip(done.iter_mut()) {
            if d.is_none() {
                if let Poll::Ready(r) = t.as_mut().poll(&mut cx) {
                    *d = Some(r);
                }
            }
        }
        if done.iter().all(Option::is_some) {
            return done.into_iter().flatten().flatten().collect();
        }
    }
    panic!("the chip did not finish within {rounds} rounds");
}

// ---- the group and its commands ------------------------------------------------------------

/// Logical (x, y) -> NoC0: Blackhole with nothing harvested, columns 0.. at NoC0 x 1.., rows
/// 0.. at NoC0 y 2...
fn noc0_of(logical: (u8, u8)) -> (u8, u8) {
    (1 + logical.0, 2 + logical.1)
}

const PAGE_SIZE: u32 = 320;
/// Broadcast 0 (A, along rows on NoC0, the reader) fills CB 0; broadcast 1 (W, along columns on
/// NoC1, the writer) CB 1.
const CB_BASES: [u32; 2] = [0x1_0000, 0x1_4000];
/// Where each broadcast's page 0 is in its DRAM bank.
const DRAM_BASES: [u32; 2] = [0x100, 0x8100];
const LIMIT: u64 = 20_000;

/// A run's shape: the group, the broadcasts' rectangle (the group, unless a test narrows it),
/// the broadcasts it runs, their buffers, and the stalls injected into its programs.
#[derive(Clone)]
struct Shape {
    group: LogicalRect,
    /// The rectangle both broadcasts cover; the group's cores outside it are in neither.
    rect: LogicalRect,
    /// A (broadcast 0) and W (broadcast 1).
    broadcasts: [bool; 2],
    /// Blocks of A and of W.
    blocks: [u16; 2],
    pages: u16,
    window: u8,
    job: u32,
    /// (logical core, role, block): that kernel stalls before that block.
    stalls: Vec<((u8, u8), Role, u16)>,
}

impl Shape {
    fn new(group: LogicalRect, broadcasts: [bool; 2]) -> Self {
        Self {
            group,
            rect: group,
            broadcasts,
            blocks: [5, 5],
            pages: 2,
            window: 2,
            job: 7,
            stalls: Vec::new(),
        }
    }

    fn cores(&self) -> Vec<(u8, u8)> {
        let g = self.group;
        (g.y0..g.y0 + g.rows)
            .flat_map(|y| (g.x0..g.x0 + g.columns).map(move |x| (x, y)))
            .collect()
    }

    fn banks(noc: NocId) -> [Xy; STREAMS] {
        DRAM_PORTS.map(|p| {
            let (x, y) = match noc {
                NocId::Noc0 => p,
                NocId::Noc1 => mirror(p),
            };
            Xy::new(x, y).unwrap()
        })
    }

    /// Every core's program: A along rows on NoC0 (the reader), W along columns on NoC1 (the
    /// writer), compute checking each.
    fn programs(&self) -> BTreeMap<(u8, u8), BroadcastProgram> {
        // Blackhole with nothing harvested (the crate names no chip: the test takes the grid
        // from blackhole-pac, as the host does).
        let columns = blackhole_pac::harvest::HarvestMask::new(0)
            .unwrap()
            .columns();
        let grid = (blackhole_pac::grid::GRID_X, blackhole_pac::grid::GRID_Y);
        let geometry = Geometry::new(columns.noc0_x(), columns.noc0_y(), grid).unwrap();
        let words = |id: u8, along, noc| {
            let params = BroadcastParams {
                broadcast: id,
                cb: id,
                window: self.window,
                pages: self.pages,
            };
            broadcast_args(&geometry, self.group, self.rect, along, noc, params).unwrap()
        };
        let a = words(0, Along::Row, NocId::Noc0);
        let w = words(1, Along::Column, NocId::Noc1);
        let stall = |core, role| {
            self.stalls
                .iter()
                .find(|s| s.0 == core && s.1 == role)
                .map(|s| s.2)
        };
        let mut out = BTreeMap::new();
        for core in self.cores() {
            let mover = |all: &[CoreArgs], id: usize, noc, role| MoverProgram {
                args: all.iter().find(|c| c.core == core).unwrap().words,
                blocks: self.blocks[id],
                page_size: PAGE_SIZE,
                dram_base: DRAM_BASES[id],
                banks: Self::banks(noc),
                stall_before: stall(core, role),
            };
            let mut compute = ComputeProgram {
                job: self.job,
                check: Default::default(),
                inputs: Default::default(),
                stall_before: stall(core, Role::Compute),
            };
            for (broadcast, producer) in [(0u8, Role::Reader), (1, Role::Writer)] {
                if self.broadcasts[broadcast as usize] && self.rect.contains(core.0, core.1) {
                    let input = ComputeInput {
                        cb: broadcast,
                        pages: self.pages,
                        window: self.window,
                        blocks: self.blocks[broadcast as usize],
                        page_size: PAGE_SIZE,
                        broadcast,
                        producer,
                    };
                    compute.inputs.push(input).unwrap();
                }
            }
            let p = BroadcastProgram {
                reader: self.broadcasts[0].then(|| mover(&a, 0, NocId::Noc0, Role::Reader)),
                writer: self.broadcasts[1].then(|| mover(&w, 1, NocId::Noc1, Role::Writer)),
                compute,
            };
            p.check().unwrap();
            out.insert(core, p);
        }
        out
    }

    /// Where word `word` of page `page` of block `block` of broadcast `id` is in DRAM: bank
    /// `g % 8` at `base + g * page_size`, `g = block * pages + page`.
    fn dram_at(&self, id: u8, block: u32, page: u32, word: u32) -> ((u8, u8), usize) {
        let g = block * self.pages as u32 + page;
        let bank = DRAM_PORTS[(g % 8) as usize];
        let at = DRAM_BASES[id as usize] + g * PAGE_SIZE + 4 * word;
        (bank, at as usize)
    }

    /// DRAM as the host writes it for job `job`.
    fn fill_dram(&self, chip: &mut Chip, job: u32) {
        for id in [0u8, 1] {
            for block in 0..self.blocks[id as usize] as u32 {
                for page in 0..self.pages as u32 {
                    for w in 0..PAGE_SIZE / 4 {
                        let (bank, a) = self.dram_at(id, block, page, w);
                        let word = pattern_word(job, id, block, page, w);
                        chip.dram.get_mut(&bank).unwrap()[a..a + 4]
                            .copy_from_slice(&word.to_le_bytes());
                    }
                }
            }
        }
    }

    /// Bytes a data-movement kernel moves (or receives) of broadcast `id` in a whole command.
    fn bytes(&self, id: usize) -> u32 {
        self.blocks[id] as u32 * self.pages as u32 * PAGE_SIZE
    }

    /// What a clean command reports on every core: no give-up, each data-movement kernel with
    /// a broadcast moved its blocks, compute checked all of them.
    fn clean(&self, index: u32, sequence: u32) -> Report {
        let moved = |id: usize| {
            if self.broadcasts[id] {
                self.bytes(id)
            } else {
                0
            }
        };
        Report {
            index,
            sequence,
            status: 0,
            give_ups: [None, None, None],
            stats: [moved(0), moved(1), moved(0) + moved(1)],
        }
    }
}

/// A chip with the tiles of `cores`, their control-block headers and buffer tables written as a
/// loader does for `shape`, and DRAM holding `shape`'s job.
fn chip(shape: &Shape, cores: &[(u8, u8)]) -> Shared {
    let mut chip = Chip::default();
    for p in DRAM_PORTS {
        chip.dram.insert(p, vec![0; DRAM_BYTES]);
    }
    for &core in cores {
        let t = noc0_of(core);
        chip.tiles.insert(
            t,
            Tile {
                l1: vec![0; L1_BYTES],
                cbs: [(0, Counters::default()), (1, Counters::default())].into(),
            },
        );
        chip.set_control(t, abi::HEADER_MAGIC, abi::MAGIC);
        chip.set_control(t, abi::HEADER_VERSION, abi::ABI_VERSION);
        chip.set_control(t, abi::HEADER_TILE, core.0 as u32 | (core.1 as u32) << 8);
        chip.set_control(t, abi::IDLE_WAIT_LIMIT, u32::MAX);
        chip.set_control(t, abi::IDLE_WAIT_LIMIT + 4, u32::MAX);
        for (i, base) in CB_BASES.iter().enumerate() {
            let entry = abi::CB_TABLE + i as u32 * abi::CB_ENTRY_BYTES;
            chip.set_control(t, entry, *base);
            chip.set_control(t, entry + 4, PAGE_SIZE);
            chip.set_control(t, entry + 8, shape.window as u32 * shape.pages as u32);
        }
    }
    shape.fill_dram(&mut chip, shape.job);
    Rc::new(RefCell::new(chip))
}

/// One tile's report of one command, as its record holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Report {
    index: u32,
    sequence: u32,
    status: u32,
    /// Reader, writer, compute.
    give_ups: [Option<KernelGiveUp>; 3],
    stats: [u32; 3],
}

/// One core's program words: reader's, writer's, compute's.
type Words = (Vec<u32>, Vec<u32>, Vec<u32>);

/// What the host posts: a command's header and each core's words.
#[derive(Clone)]
struct Post {
    handler: u16,
    flags: u16,
    group: LogicalRect,
    sequence: u32,
    wait_limit: u64,
    words: BTreeMap<(u8, u8), Words>,
    /// Header word 6 (the word counts) as written instead of the words' own.
    counts: Option<u32>,
}

impl Post {
    fn broadcast(shape: &Shape, sequence: u32) -> Self {
        let words = shape
            .programs()
            .into_iter()
            .map(|(core, p)| {
                let w = p.encode().unwrap();
                (
                    core,
                    (w.reader.to_vec(), w.writer.to_vec(), w.compute.to_vec()),
                )
            })
            .collect();
        Self {
            handler: 1,
            flags: abi::FLAG_EXCLUSIVE,
            group: shape.group,
            sequence,
            wait_limit: LIMIT,
            words,
            counts: None,
        }
    }

    /// The same words as [`Post::broadcast`], for the handshake handler.
    fn handshake(shape: &Shape, sequence: u32) -> Self {
        Self {
            handler: HANDSHAKE_HANDLER,
            ..Self::broadcast(shape, sequence)
        }
    }

    fn empty(cores: &[(u8, u8)], handler: u16, group: LogicalRect, sequence: u32) -> Self {
        Self {
            handler,
            flags: abi::FLAG_EXCLUSIVE,
            group,
            sequence,
            wait_limit: LIMIT,
            words: cores.iter().map(|&c| (c, Default::default())).collect(),
            counts: None,
        }
    }
}

/// Which of a tile's kernels a round polls first.
#[derive(Copy, Clone, Debug)]
enum Order {
    /// Reader, writer, compute.
    DataMovementFirst,
    /// Compute, writer, reader.
    ComputeFirst,
}

const ORDERS: [Order; 2] = [Order::DataMovementFirst, Order::ComputeFirst];

/// Says which order a run that failed was polled in.
struct InOrder(Order);

impl Drop for InOrder {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("in a run polled {:?}", self.0);
        }
    }
}

/// [`run_commands_in`] with the data-movement kernels polled first.
fn run_commands(
    cores: &[(u8, u8)],
    chip: &Shared,
    posts: Vec<Post>,
    before: impl FnMut(u32, &mut Chip),
) -> Vec<BTreeMap<(u8, u8), Report>> {
    run_commands_in(Order::DataMovementFirst, cores, chip, posts, before)
}

/// Runs `posts` one after the other on every core of `cores` (each posted once the previous one
/// is reported on every tile), then an exit command; returns each command's reports by core.
/// `before(k, chip)` runs just before command `k` (1-based) is posted. The host is polled first
/// in every round, then each tile's kernels in `order`.
fn run_commands_in(
    order: Order,
    cores: &[(u8, u8)],
    chip: &Shared,
    posts: Vec<Post>,
    mut before: impl FnMut(u32, &mut Chip),
) -> Vec<BTreeMap<(u8, u8), Report>> {
    let reports = Rc::new(RefCell::new(Vec::new()));
    // Each kernel's handler as the firmware makes it (for its role), in the order the tiles
    // take them below: reader, writer, compute.
    let roles = [Role::Reader, Role::Writer, Role::Compute];
    let mut handlers: Vec<(BroadcastHandler, HandshakeHandler)> = (0..3 * cores.len())
        .map(|i| (BroadcastHandler::for_kernel(roles[i % 3]), HandshakeHandler))
        .collect();
    let mut tasks: Vec<Task<'_>> = Vec::new();
    let host_chip = chip.clone();
    let host_reports = reports.clone();
    let host_cores = cores.to_vec();
    let group = LogicalRect::new(0, 0, 16, 16);
    let exit = Post::empty(cores, abi::HANDLER_EXIT, group, 0xE0E0);
    tasks.push(Box::pin(async move {
        let n = posts.len() as u32;
        for (k, post) in posts.into_iter().chain([exit]).enumerate() {
            let index = k as u32 + 1;
            before(index, &mut host_chip.borrow_mut());
            for &core in &host_cores {
                post_command(&mut host_chip.borrow_mut(), core, index, &post);
            }
            // Every tile's report, then the records.
            loop {
                let reported = host_cores.iter().all(|&core| {
                    host_chip.borrow().control(noc0_of(core), abi::REPORT_INDEX) == index
                });
                if reported {
                    break;
                }
                YieldNow(false).await;
            }
            if index <= n {
                let chip = host_chip.borrow();
                let r = host_cores
                    .iter()
                    .map(|&core| (core, read_report(&chip, core, index)))
                    .collect();
                host_reports.borrow_mut().push(r);
            }
        }
        None
    }));
    let mut hs = handlers.iter_mut();
    for &core in cores {
        let t = noc0_of(core);
        let ctrl = |offset| Ctrl {
            chip: chip.clone(),
            tile: t,
            offset,
        };
        let buffers = || TileBuffers {
            chip: chip.clone(),
            tile: t,
        };
        let noc = |id| Noc {
            chip: chip.clone(),
            tile: t,
            id,
        };
        let mut tile: Vec<Task<'_>> = Vec::new();
        let h = hs.next().unwrap();
        let (n, c, b) = (noc(NocId::Noc0), ctrl(0), buffers());
        tile.push(Box::pin(async move {
            Some((
                core,
                Role::Reader,
                persistent::reader(n, c, Spin, b, h).await,
            ))
        }));
        let h = hs.next().unwrap();
        let (n, c, b) = (noc(NocId::Noc1), ctrl(WRITER_CLOCK), buffers());
        tile.push(Box::pin(async move {
            Some((
                core,
                Role::Writer,
                persistent::writer(n, c, Spin, b, h).await,
            ))
        }));
        let h = hs.next().unwrap();
        let (c, b) = (ctrl(COMPUTE_CLOCK), buffers());
        tile.push(Box::pin(Throttled {
            chip: chip.clone(),
            tile: t,
            asked: 0,
            inner: Box::pin(async move {
                Some((
                    core,
                    Role::Compute,
                    persistent::compute(c, Spin, b, h).await,
                ))
            }),
        }));
        if let Order::ComputeFirst = order {
            tile.reverse();
        }
        tasks.extend(tile);
    }
    let exits = run(tasks, 1_000_000);
    assert_eq!(exits.len(), 3 * cores.len());
    for (core, role, exit) in exits {
        assert_eq!(exit, KernelExit::Exit, "{core:?} {role:?}");
    }
    reports.take()
}

const WRITER_CLOCK: u64 = 1 << 30;
const COMPUTE_CLOCK: u64 = 1 << 31;

fn post_command(chip: &mut Chip, core: (u8, u8), index: u32, post: &Post) {
    let (reader, writer, compute) = &post.words[&core];
    let command = Command::new(
        index,
        post.sequence,
        post.handler,
        post.flags,
        post.group,
        post.wait_limit,
    )
    .with_words(reader, writer, compute)
    .unwrap();
    let t = noc0_of(core);
    let slot = abi::slot_of(index);
    let (mut header, words) = command.slot_words();
    if let Some(counts) = post.counts {
        header[6] = counts;
    }
    for (i, w) in words.iter().enumerate() {
        chip.set_control(t, slot + 4 * (8 + i as u32), *w);
    }
    for (i, w) in header.iter().enumerate().skip(1) {
        chip.set_control(t, slot + 4 * i as u32, *w);
    }
    // The index last: it publishes the command.
    chip.set_control(t, slot, header[0]);
}

/// The report of command `index` on `core`, with the record's layout written out: index,
/// sequence, status, started at 0x0C, give-up words at 0x10, finished at 0x1C, give-up blocks at
/// 0x20, statistics at 0x30. The reader writes both clock words, on its own clock.
fn read_report(chip: &Chip, core: (u8, u8), index: u32) -> Report {
    let t = noc0_of(core);
    let record = abi::record_of(index);
    let w = |o: u32| chip.control(t, record + o);
    let (started, finished) = (w(0x0C), w(0x1C));
    assert!(
        0 < started && started < finished && (finished as u64) < WRITER_CLOCK,
        "{core:?} command {index}: started {started:#x}, finished {finished:#x}"
    );
    let give_up = |i: u32| KernelGiveUp::from_words(w(0x10 + 4 * i), w(0x20 + 4 * i));
    Report {
        index: w(0x00),
        sequence: w(0x04),
        status: w(0x08),
        give_ups: [give_up(0), give_up(1), give_up(2)],
        stats: [w(0x30), w(0x34), w(0x38)],
    }
}

/// Every buffer of every tile back at slot 0 with nothing in it.
fn assert_buffers_at_slot_0(chip: &Shared) {
    for (t, tile) in &chip.borrow().tiles {
        for (i, c) in &tile.cbs {
            assert_eq!((c.wr, c.rd), (0, 0), "tile {t:?} CB {i}: {c:?}");
            assert_eq!(c.pushed, c.popped, "tile {t:?} CB {i}: {c:?}");
        }
    }
}

/// No kernel of the tile recorded a data mismatch (a refused command's pages were not checked).
fn assert_no_mismatch(report: &Report) {
    assert!(
        report
            .give_ups
            .iter()
            .flatten()
            .all(|g| g.code != GiveUpCode::DataMismatch),
        "{report:?}"
    );
}

fn give_up(code: GiveUpCode, broadcast: u8, block: u32) -> Option<KernelGiveUp> {
    Some(KernelGiveUp {
        code,
        broadcast,
        block,
    })
}

// ---- clean runs ----------------------------------------------------------------------------

#[test]
fn a_2x2_group_runs_two_broadcasts_and_every_compute_checks_every_byte() {
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 2), [true, true]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let reports = run_commands(
        &cores,
        &chip,
        vec![Post::broadcast(&shape, 0x0001_0005)],
        |_, _| {},
    );
    // 5 blocks of 2 pages of 320 bytes: each data-movement kernel 3,200 bytes, compute 6,400.
    for core in &cores {
        assert_eq!(
            reports[0][core],
            Report {
                index: 1,
                sequence: 0x0001_0005,
                status: 0,
                give_ups: [None, None, None],
                stats: [3_200, 3_200, 6_400],
            },
            "{core:?}"
        );
    }
    let c = chip.borrow();
    // 5 blocks and one block of padding: 12 pages through each buffer, back at slot 0.
    for (t, tile) in &c.tiles {
        for (i, counters) in &tile.cbs {
            assert_eq!(
                *counters,
                Counters {
                    pushed: 12,
                    popped: 12,
                    wr: 0,
                    rd: 0
                },
                "tile {t:?} CB {i}"
            );
        }
    }
    assert!(c.padding.is_empty(), "no give-up, no padding pushed");
    for &core in &cores {
        let t = noc0_of(core);
        for id in [0, 1] {
            // Every core of both broadcasts counted 5 blocks; VALID and DONE-BY are cleared.
            assert_eq!(c.control(t, area::area(id) + area::STATS_BLOCKS), 5);
            assert_eq!(c.control(t, area::area(id) + area::VALID), 0);
            assert_eq!(c.control(t, area::done_by(id, 1)), 0);
            assert_eq!(c.control(t, area::area(id) + area::GIVE_UP_WHERE), 0);
        }
        // The exit command (index 2) is reported too, and the stop flag is clear.
        assert_eq!(c.control(t, abi::REPORT_INDEX), 2);
        assert_eq!(c.control(t, abi::STOP), 0);
        for role in Role::ALL {
            assert_eq!(c.control(t, abi::kernel_word(abi::KERNEL_DONE, role)), 2);
            assert_eq!(
                c.control(t, abi::kernel_word(abi::KERNEL_RECOVERING, role)),
                0
            );
        }
        // Each data-movement kernel forgot earlier transfers once, for the broadcast command.
        assert_eq!(c.resyncs[&(t, 0)], 1, "{core:?}");
        assert_eq!(c.resyncs[&(t, 1)], 1, "{core:?}");
    }
}

#[test]
fn a_one_core_group_away_from_the_origin_sends_to_nobody_and_checks_both_broadcasts() {
    // Logical (1,1): in row 1 and column 1, so the tile's own coordinates decide it is in the
    // group; both broadcasts have a sender and no receiver.
    let shape = Shape::new(LogicalRect::new(1, 1, 1, 1), [true, true]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let reports = run_commands(&cores, &chip, vec![Post::broadcast(&shape, 9)], |_, _| {});
    assert_eq!(
        reports[0][&(1, 1)],
        Report {
            index: 1,
            sequence: 9,
            status: 0,
            give_ups: [None, None, None],
            stats: [3_200, 3_200, 6_400],
        }
    );
    assert_buffers_at_slot_0(&chip);
}

#[test]
fn a_group_larger_than_its_broadcasts_rectangle_runs_them_inside_and_leaves_the_rest_idle() {
    // Group 3x3, broadcasts over its 2x2 corner: the five cores outside carry rank 0xFF words
    // for both broadcasts and a compute with no input. Inside, each row and column has one
    // receiver, so the receivers' counts come from the rectangle, not the group.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 3, 3), [true, true]);
    shape.rect = LogicalRect::new(0, 0, 2, 2);
    let cores = shape.cores();
    for order in ORDERS {
        let _in = InOrder(order);
        let chip = chip(&shape, &cores);
        let reports = run_commands_in(
            order,
            &cores,
            &chip,
            vec![Post::broadcast(&shape, 0x0001_0005)],
            |_, _| {},
        );
        let c = chip.borrow();
        for &core in &cores {
            let inside = shape.rect.contains(core.0, core.1);
            let stats = if inside {
                [3_200, 3_200, 6_400]
            } else {
                [0, 0, 0]
            };
            assert_eq!(
                reports[0][&core],
                Report {
                    index: 1,
                    sequence: 0x0001_0005,
                    status: 0,
                    give_ups: [None, None, None],
                    stats,
                },
                "{core:?}"
            );
            let t = noc0_of(core);
            for id in [0, 1] {
                let blocks = if inside { 5 } else { 0 };
                assert_eq!(c.control(t, area::area(id) + area::STATS_BLOCKS), blocks);
                assert_eq!(c.control(t, area::area(id) + area::GIVE_UP_WHERE), 0);
                // Inside, 5 blocks and a block of padding went through each buffer; outside,
                // nothing did.
                let pages = if inside { 12 } else { 0 };
                assert_eq!(
                    c.tiles[&t].cbs[&id],
                    Counters {
                        pushed: pages,
                        popped: pages,
                        wr: 0,
                        rd: 0
                    },
                    "{core:?} buffer {id}"
                );
            }
        }
        assert!(c.padding.is_empty(), "no give-up, no padding pushed");
    }
}

#[test]
fn commands_take_the_two_slots_and_records_in_turn_each_with_its_own_job() {
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let mut posts = Vec::new();
    for (k, job) in [(1u32, 7u32), (2, 8), (3, 9)] {
        let s = Shape {
            job,
            ..shape.clone()
        };
        posts.push(Post::broadcast(&s, 0x100 + k));
    }
    let reports = run_commands(&cores, &chip, posts, |k, chip| {
        // The host writes each job's data just before it runs.
        if k <= 3 {
            shape.fill_dram(chip, 6 + k);
        }
    });
    assert_eq!(reports.len(), 3);
    for (k, r) in reports.iter().enumerate() {
        let index = k as u32 + 1;
        for core in &cores {
            assert_eq!(
                r[core],
                Report {
                    index,
                    sequence: 0x100 + index,
                    status: 0,
                    give_ups: [None, None, None],
                    stats: [3_200, 0, 3_200],
                },
                "{core:?}"
            );
        }
    }
    let c = chip.borrow();
    for &core in &cores {
        let t = noc0_of(core);
        // Command 3 sits in slot 0 (0x200), exit (4) in slot 1 (0x400); their records at
        // 0x0C0 and 0x100.
        assert_eq!(c.control(t, 0x200), 3);
        assert_eq!(c.control(t, 0x400), 4);
        assert_eq!(c.control(t, 0x0C0), 3);
        assert_eq!(c.control(t, 0x100), 4);
        assert_eq!(c.resyncs[&(t, 0)], 3);
    }
}

// ---- data, NoC and refusals ----------------------------------------------------------------

#[test]
fn a_word_changed_in_dram_is_a_data_mismatch_of_its_broadcast_and_block_on_every_compute() {
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 2), [true, true]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    // W's block 3, page 1, word 70 (bytes 280..284, in the page's second 256-byte chunk).
    let (bank, at) = shape.dram_at(1, 3, 1, 70);
    chip.borrow_mut().dram.get_mut(&bank).unwrap()[at] ^= 0x10;
    let reports = run_commands(&cores, &chip, vec![Post::broadcast(&shape, 3)], |_, _| {});
    // Every core receives W's block 3: every compute reports it, checks every other page
    // (6,400 - 320 bytes) and pops everything; the data-movement kernels are clean.
    for core in &cores {
        assert_eq!(
            reports[0][core],
            Report {
                index: 1,
                sequence: 3,
                status: abi::STATUS_MISMATCH,
                give_ups: [None, None, give_up(GiveUpCode::DataMismatch, 1, 3)],
                stats: [3_200, 3_200, 6_080],
            },
            "{core:?}"
        );
    }
    assert_buffers_at_slot_0(&chip);
}

#[test]
fn a_busy_noc_read_is_asked_again() {
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    chip.borrow_mut().faults.insert(
        noc0_of((0, 0)),
        NocFaults {
            busy_reads: 3,
            failed_reads: None,
            ..NocFaults::default()
        },
    );
    let reports = run_commands(&cores, &chip, vec![Post::broadcast(&shape, 4)], |_, _| {});
    for core in &cores {
        assert_eq!(reports[0][core], shape.clean(1, 4), "{core:?}");
    }
    assert_eq!(chip.borrow().faults[&noc0_of((0, 0))].busy_reads, 0);
}

#[test]
fn a_refused_dram_read_gives_up_broadcast_done_and_the_next_command_runs_clean() {
    // Row broadcast A of (0,0) -> (1,0) only. The sender's first DRAM read is refused.
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        chip.borrow_mut().faults.insert(
            noc0_of((0, 0)),
            NocFaults {
                busy_reads: 0,
                failed_reads: Some(noc::ErrorKind::Fault),
                ..NocFaults::default()
            },
        );
        let posts = vec![Post::broadcast(&shape, 5), Post::broadcast(&shape, 6)];
        let mut sender_record = None;
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                chip.faults.clear();
                let s = noc0_of((0, 0));
                sender_record = Some([
                    chip.control(s, area::area(0) + area::GIVE_UP_WHERE),
                    chip.control(s, area::area(0) + area::GIVE_UP_BLOCK),
                    chip.control(s, area::area(0) + area::GIVE_UP_SEQUENCE),
                ]);
            }
        });
        // The refused read is recorded in the sender's area like any give-up of the protocol:
        // broadcast_done (1) of broadcast 0 (the sequence's low half above), block 0, command 5.
        assert_eq!(sender_record, Some([1 | 5 << 16, 0, 5]));
        // The sender gives up block 0 (broadcast_done) before anything was cast; the receiver's
        // wait for block 0 and both computes' waits for it pass the limit.
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 5,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastDone), 0, 0),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 0),
                ],
                stats: [0, 0, 0],
            }
        );
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 5,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 0),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 0),
                ],
                stats: [0, 0, 0],
            }
        );
        for core in &cores {
            assert_eq!(reports[1][core], shape.clean(2, 6), "{core:?}");
        }
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_command_is_refused_by_every_kernel_of_a_tile_for_each_reason() {
    let group = LogicalRect::new(0, 0, 2, 1);
    let shape = Shape::new(group, [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let unknown = Post::empty(&cores, 9, group, 11);
    let not_exclusive = Post {
        flags: 0,
        ..Post::broadcast(&shape, 12)
    };
    // A command for group (0,0) alone, posted to both tiles: (1,0) is not in it.
    let mut not_in_group =
        Post::broadcast(&Shape::new(LogicalRect::new(0, 0, 1, 1), [true, false]), 13);
    let words = not_in_group.words[&(0, 0)].clone();
    not_in_group.words.insert((1, 0), words);
    // Word counts of 100 + 100 words: more than a slot holds.
    let malformed = Post {
        counts: Some(100 | 100 << 8),
        ..Post::empty(&cores, 1, group, 14)
    };
    let posts = vec![
        unknown,
        not_exclusive,
        not_in_group,
        malformed,
        Post::broadcast(&shape, 15),
    ];
    let reports = run_commands(&cores, &chip, posts, |_, _| {});
    let refused = |index, sequence, code| Report {
        index,
        sequence,
        status: abi::STATUS_REFUSED,
        give_ups: [give_up(code, 0, 0); 3],
        stats: [0, 0, 0],
    };
    for core in &cores {
        assert_eq!(
            reports[0][core],
            refused(1, 11, GiveUpCode::UnknownHandler),
            "{core:?}"
        );
        assert_eq!(
            reports[1][core],
            refused(2, 12, GiveUpCode::NotExclusive),
            "{core:?}"
        );
        // A malformed command's header is read before its word counts are refused: the report
        // carries its sequence number, as every other refusal's does.
        assert_eq!(
            reports[3][core],
            refused(4, 14, GiveUpCode::BadCommand),
            "{core:?}"
        );
        assert_eq!(reports[4][core], shape.clean(5, 15), "{core:?}");
    }
    assert_eq!(
        reports[2][&(0, 0)],
        Report {
            index: 3,
            sequence: 13,
            status: 0,
            give_ups: [None, None, None],
            stats: [3_200, 0, 3_200],
        }
    );
    assert_eq!(reports[2][&(1, 0)], refused(3, 13, GiveUpCode::NotInGroup));
    // Only the commands a tile ran made its data-movement kernels forget earlier transfers.
    let c = chip.borrow();
    assert_eq!(c.resyncs[&(noc0_of((0, 0)), 0)], 2);
    assert_eq!(c.resyncs[&(noc0_of((1, 0)), 0)], 1);
}

// ---- stalls and recovery -------------------------------------------------------------------

#[test]
fn a_sender_whose_reader_stalls_and_its_receiver_both_pad_their_buffers_to_the_end_of_the_lap() {
    // A along row 0: (0,0) sends to (1,0); window 3 of 1 page. The sender's reader stops
    // before block 1: both data-movement kernels hold block 0 (page 0 of 3), give up after one
    // limit and pad pages 1 and 2; both computes checked block 0, take the padding for what it
    // is and record nothing.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    shape.pages = 1;
    shape.window = 3;
    let clean_shape = shape.clone();
    shape.stalls = vec![((0, 0), Role::Reader, 1)];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let posts = vec![
            Post::broadcast(&shape, 21),
            Post::broadcast(&clean_shape, 22),
        ];
        let mut after_first = None;
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                after_first = Some((
                    chip.padding.clone(),
                    chip.control(noc0_of((0, 0)), area::area(0) + area::GIVE_UP_WHERE),
                    [
                        chip.control(noc0_of((1, 0)), area::area(0) + area::GIVE_UP_WHERE),
                        chip.control(noc0_of((1, 0)), area::area(0) + area::GIVE_UP_BLOCK),
                        chip.control(noc0_of((1, 0)), area::area(0) + area::GIVE_UP_SEQUENCE),
                    ],
                    Role::ALL.map(|r| {
                        chip.control(noc0_of((0, 0)), abi::kernel_word(abi::KERNEL_RECOVERING, r))
                    }),
                ));
            }
        });
        for core in &cores {
            // The stalled sender's reader reports the place a sender waits at (`stall`), its
            // receiver's the one it gave up at.
            let place = if *core == (0, 0) {
                Where::BroadcastDone
            } else {
                Where::BroadcastValid
            };
            assert_eq!(
                reports[0][core],
                Report {
                    index: 1,
                    sequence: 21,
                    status: abi::STATUS_GAVE_UP,
                    give_ups: [give_up(GiveUpCode::Broadcast(place), 0, 1), None, None],
                    stats: [320, 0, 320],
                },
                "{core:?}"
            );
            assert_eq!(reports[1][core], clean_shape.clean(2, 22), "{core:?}");
        }
        let (padding, sender_where, receiver_record, recovering) = after_first.unwrap();
        assert_eq!(
            padding,
            [((noc0_of((0, 0)), 0), 2), ((noc0_of((1, 0)), 0), 2)].into()
        );
        // The stalled kernel records nothing in the area; the receiver records broadcast_valid,
        // broadcast 0 (the sequence's low half above), block 1, command 21.
        assert_eq!(sender_where, 0);
        assert_eq!(receiver_record, [2 | 21 << 16, 1, 21]);
        // The reader announced its recovery of command 1; writer and compute did not.
        assert_eq!(recovering, [1, 0, 0]);
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_writer_that_stalls_announces_its_recovery_in_the_writer_s_word() {
    // W along column 0: (0,1) at the bottom sends on NoC1 to (0,0). The sender's writer stops
    // before block 1.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 1, 2), [false, true]);
    let clean_shape = shape.clone();
    shape.stalls = vec![((0, 1), Role::Writer, 1)];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let posts = vec![
            Post::broadcast(&shape, 31),
            Post::broadcast(&clean_shape, 32),
        ];
        let mut recovering = BTreeMap::new();
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                for &core in &cores {
                    let t = noc0_of(core);
                    let w = Role::ALL
                        .map(|r| chip.control(t, abi::kernel_word(abi::KERNEL_RECOVERING, r)));
                    recovering.insert(core, w);
                }
            }
        });
        for core in &cores {
            let place = if *core == (0, 1) {
                Where::BroadcastDone
            } else {
                Where::BroadcastValid
            };
            assert_eq!(
                reports[0][core],
                Report {
                    index: 1,
                    sequence: 31,
                    status: abi::STATUS_GAVE_UP,
                    give_ups: [None, give_up(GiveUpCode::Broadcast(place), 1, 1), None],
                    stats: [0, 640, 640],
                },
                "{core:?}"
            );
            assert_eq!(recovering[core], [0, 1, 0], "{core:?}");
            assert_eq!(reports[1][core], clean_shape.clean(2, 32), "{core:?}");
        }
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_compute_that_stalls_times_out_its_sender_which_stops_its_tile_and_all_recover() {
    // A along row 0: (0,0) sends to (1,0); window 2 of 2 pages. (1,0)'s compute stops before
    // block 2, after popping blocks 0 and 1. The sender casts blocks 2 and 3 (slots freed by
    // blocks 0 and 1) and waits in vain for block 2's marker before casting block 4: it gives
    // up broadcast_done and stops its tile, whose compute, waiting for block 4, sees the stop.
    // The receiver holds blocks 2 and 3 and waits in vain for block 4's VALID.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let clean_shape = shape.clone();
    shape.stalls = vec![((1, 0), Role::Compute, 2)];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let posts = vec![
            Post::broadcast(&shape, 41),
            Post::broadcast(&clean_shape, 42),
        ];
        let reports = run_commands_in(order, &cores, &chip, posts, |_, _| {});
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 41,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastDone), 0, 4),
                    None,
                    give_up(GiveUpCode::ComputeStopped, 0, 4),
                ],
                stats: [2_560, 0, 2_560],
            }
        );
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 41,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 4),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 2),
                ],
                stats: [2_560, 0, 1_280],
            }
        );
        for core in &cores {
            assert_eq!(reports[1][core], clean_shape.clean(2, 42), "{core:?}");
        }
        let c = chip.borrow();
        // The reporter cleared the stop flag; nothing was padded (both gave up at slot 0).
        assert_eq!(c.control(noc0_of((0, 0)), abi::STOP), 0);
        assert!(c.padding.is_empty());
        drop(c);
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_compute_that_stalls_mid_lap_is_drained_while_both_data_movement_kernels_pad_the_lap() {
    // As above, but (1,0)'s compute stops before block 1, after popping block 0: the sender
    // casts blocks 1 and 2 and waits in vain for block 1's marker before casting block 3. Both
    // data-movement kernels hold 3 blocks (6 pages, half a lap of 4) when they give up and pad
    // 2 pages, which (1,0)'s compute, stalled while its producer is still running, must drain
    // before it is done.
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let faulty = Shape {
            stalls: vec![((1, 0), Role::Compute, 1)],
            ..shape.clone()
        };
        let chip = chip(&shape, &cores);
        let posts = vec![Post::broadcast(&faulty, 51), Post::broadcast(&shape, 52)];
        let mut padding = BTreeMap::new();
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                padding = chip.padding.clone();
            }
        });
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 51,
                status: abi::STATUS_GAVE_UP,
                // The sender stops its tile and pads in the same step; its compute, waiting for
                // block 3, polls its condition before the stop flag and so takes the padding
                // (and records nothing) rather than the stop.
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastDone), 0, 3),
                    None,
                    None,
                ],
                stats: [1_920, 0, 1_920],
            }
        );
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 51,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 3),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 1),
                ],
                stats: [1_920, 0, 640],
            }
        );
        assert_eq!(
            padding,
            [((noc0_of((0, 0)), 0), 2), ((noc0_of((1, 0)), 0), 2)].into()
        );
        for core in &cores {
            assert_eq!(reports[1][core], shape.clean(2, 52), "{core:?}");
        }
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_compute_stalled_after_one_broadcast_finished_waits_for_the_other_producer_alone() {
    // One tile, both broadcasts without receivers: A of 2 blocks, W of 5. Compute stops before
    // block 3, after popping A's blocks 0 and 1 and W's 0, 1 and 2. The reader finishes A cleanly
    // (it is done, never recovering). The writer casts all 5 of W's blocks (each slot freed by
    // the pop two blocks before) and waits in vain in `finish` for its compute to pop them:
    // broadcast_free at block 5. It then pads its lap (5 blocks = 10 pages, 2 into a lap of 4),
    // once compute, which waited for A's producer to be done and W's to be recovering, drains
    // what it holds across the end of the buffer.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, true]);
    shape.blocks = [2, 5];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let faulty = Shape {
            stalls: vec![((0, 0), Role::Compute, 3)],
            ..shape.clone()
        };
        let chip = chip(&shape, &cores);
        let posts = vec![Post::broadcast(&faulty, 61), Post::broadcast(&shape, 62)];
        let mut padding = BTreeMap::new();
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                padding = chip.padding.clone();
            }
        });
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 61,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    None,
                    give_up(GiveUpCode::Broadcast(Where::BroadcastFree), 1, 5),
                    // Block 3 is W's alone (A has 2): the stall names broadcast 1.
                    give_up(GiveUpCode::ComputeTimedOut, 1, 3),
                ],
                stats: [1_280, 3_200, 3_200],
            }
        );
        assert_eq!(padding, [((noc0_of((0, 0)), 1), 2)].into());
        assert_eq!(
            reports[1][&(0, 0)],
            Report {
                index: 2,
                sequence: 62,
                status: 0,
                give_ups: [None, None, None],
                stats: [1_280, 3_200, 4_480],
            }
        );
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_compute_stalled_at_the_block_one_broadcast_ended_at_names_the_other_broadcast() {
    // One tile, both broadcasts without receivers: A of 4 blocks, W of 6. Compute stops before
    // block 4, the first block A does not have (A's blocks are 0..=3): the stall is named by W,
    // the first broadcast that has the block. Compute popped A's 4 blocks and W's 0..=3. The
    // reader finishes A cleanly (4 blocks of 2 pages: two whole laps of 4, nothing to pad). The
    // writer casts all 6 of W's blocks (blocks 4 and 5 into the slots the pops of 2 and 3
    // freed) and waits in vain in `finish` for its compute to pop 4 and 5: broadcast_free at
    // block 6. Its lap is whole (12 pages), so it pads nothing; compute drains 4 and 5.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, true]);
    shape.blocks = [4, 6];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let faulty = Shape {
            stalls: vec![((0, 0), Role::Compute, 4)],
            ..shape.clone()
        };
        let chip = chip(&shape, &cores);
        let posts = vec![Post::broadcast(&faulty, 63), Post::broadcast(&shape, 64)];
        let reports = run_commands_in(order, &cores, &chip, posts, |_, _| {});
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 63,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    None,
                    give_up(GiveUpCode::Broadcast(Where::BroadcastFree), 1, 6),
                    give_up(GiveUpCode::ComputeTimedOut, 1, 4),
                ],
                // 4 and 6 blocks of 640 bytes moved; 8 blocks checked.
                stats: [2_560, 3_840, 5_120],
            }
        );
        assert!(
            chip.borrow().padding.is_empty(),
            "{:?}",
            chip.borrow().padding
        );
        assert_eq!(reports[1][&(0, 0)], shape.clean(2, 64));
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_buffer_of_zero_byte_pages_fails_the_command_without_breaking_the_recovery() {
    // The buffer table says CB 0 has pages of 0 bytes: the words still fit it (4 pages), but
    // block 0's pages (320 bytes each) do not fit its slot of 0 bytes: the reader refuses its
    // reads before any goes (they would have run past the buffer, `broadcast_begin`), and
    // compute, reading that refusal in the reader's area, stops waiting for block 0 at once
    // (no timeout of its own). The reader's recovery cannot work out where its lap ends and
    // pads nothing; every kernel still returns and the tile reports.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, false]);
    shape.stalls = vec![((0, 0), Role::Reader, 1)];
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    chip.borrow_mut()
        .set_control(noc0_of((0, 0)), abi::CB_TABLE + 4, 0);
    let reports = run_commands(&cores, &chip, vec![Post::broadcast(&shape, 71)], |_, _| {});
    assert_eq!(
        reports[0][&(0, 0)],
        Report {
            index: 1,
            sequence: 71,
            status: abi::STATUS_GAVE_UP,
            give_ups: [
                give_up(GiveUpCode::Broadcast(Where::BroadcastBegin), 0, 0),
                None,
                None,
            ],
            stats: [0, 0, 0],
        }
    );
    assert!(chip.borrow().padding.is_empty());
}

#[test]
fn pages_an_earlier_command_left_are_not_taken_for_block_0_of_a_refused_producer() {
    // The reader's buffer still holds a whole lap of pages an earlier command left (a
    // recovery that never ended): the reader refuses it (`broadcast_begin`), and compute, whose
    // wait finds those pages ready at once, must not check them as block 0 (zeros, not the
    // job's data: it reported a data mismatch beside the refusal). In both polling orders:
    // compute polled first finds the pages before the reader has looked at its buffer, and
    // must wait for the reader's set-up word (`abi::KERNEL_SET_UP`) before it takes them.
    let shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, false]);
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let lap = shape.window as u16 * shape.pages;
        chip.borrow_mut()
            .tiles
            .get_mut(&noc0_of((0, 0)))
            .unwrap()
            .cbs
            .insert(
                0,
                Counters {
                    pushed: lap,
                    ..Counters::default()
                },
            );
        let reports = run_commands_in(
            order,
            &cores,
            &chip,
            vec![Post::broadcast(&shape, 91)],
            |_, _| {},
        );
        let report = &reports[0][&(0, 0)];
        assert_reader_refused(report);
        assert_no_mismatch(report);
        // The reader recorded its refusal before it stored its set-up word: the order compute
        // relies on (no polling order interleaves the two, so it is checked at the store).
        assert_refused_before_set_up(&chip.borrow(), noc0_of((0, 0)), 91);
    }
}

#[test]
fn a_producer_whose_words_fail_their_check_records_its_refusal_then_stores_its_set_up_word() {
    // The reader's words with one bit of its page size changed: its program fails the check word
    // before any broadcast is built (`dm_body`'s refusal, not `Broadcast::new`'s). It records
    // `broadcast_begin` and then stores its set-up word, as a producer that set up does: a
    // compute that took the program would wait for that word before block 0.
    let shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let mut post = Post::broadcast(&shape, 61);
    let words = post.words.get_mut(&(0, 0)).unwrap();
    words.0[12] ^= 4;
    let reports = run_commands(&cores, &chip, vec![post], |_, _| {});
    let report = &reports[0][&(0, 0)];
    assert_reader_refused(report);
    let tile = noc0_of((0, 0));
    let c = chip.borrow();
    let set_up = abi::kernel_word(abi::KERNEL_SET_UP, Role::Reader);
    assert_eq!(c.control(tile, set_up), report.index);
    assert_refused_before_set_up(&c, tile, 61);
}

/// The tile gave up, its reader's first give-up `broadcast_begin` of broadcast 0 at block 0.
fn assert_reader_refused(report: &Report) {
    assert_eq!(report.status, abi::STATUS_GAVE_UP, "{report:?}");
    assert_eq!(
        report.give_ups[0],
        give_up(GiveUpCode::Broadcast(Where::BroadcastBegin), 0, 0),
        "{report:?}"
    );
}

/// Broadcast 0's area of `tile` (NoC0) held the reader's `broadcast_begin` refusal of command
/// `sequence` when the reader stored its set-up word.
fn assert_refused_before_set_up(chip: &Chip, tile: (u8, u8), sequence: u32) {
    let refused = komorebi_broadcast::area::GiveUpRecord {
        place: Where::BroadcastBegin,
        broadcast: 0,
        block: 0,
        sequence,
    }
    .words()[0];
    let at_set_up = chip.where_at_set_up[&(tile, Role::Reader)];
    assert_eq!(at_set_up[0], refused, "{at_set_up:x?}");
}

#[test]
fn a_buffer_whose_pages_are_not_the_program_s_is_refused_by_compute_not_taken_for_bad_data() {
    // The buffer table says CB 0 has pages of 640 bytes, the program 320: the reader packs a
    // block's pages 320 bytes apart, compute would look for them 640 apart and report data that
    // landed where it was sent as a mismatch. Compute refuses the buffer instead (the bytes it
    // would compare are not the pages); no data_mismatch is recorded.
    let shape = Shape::new(LogicalRect::new(0, 0, 1, 1), [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    chip.borrow_mut()
        .set_control(noc0_of((0, 0)), abi::CB_TABLE + 4, 2 * PAGE_SIZE);
    let reports = run_commands(&cores, &chip, vec![Post::broadcast(&shape, 81)], |_, _| {});
    let report = &reports[0][&(0, 0)];
    assert_eq!(report.status, abi::STATUS_GAVE_UP, "{report:?}");
    assert_eq!(
        report.give_ups[2],
        give_up(GiveUpCode::ComputeFailed, 0, 0),
        "{report:?}"
    );
    assert_no_mismatch(report);
}

#[test]
fn a_receiver_whose_acknowledgements_are_lost_recovers_after_one_limit_and_its_compute_waits() {
    // As a compute stalled mid-lap, with the acknowledgements of (1,0)'s NoC0 writes (its DONE
    // markers) lost: its reader's recovery waits one limit for them, in vain, and only then pads
    // its lap. Its compute, meanwhile, has drained every page it held; it must not take an
    // empty buffer for the end while its producer has not finished.
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let faulty = Shape {
            stalls: vec![((1, 0), Role::Compute, 1)],
            ..shape.clone()
        };
        let chip = chip(&shape, &cores);
        chip.borrow_mut().lose_acks.insert((noc0_of((1, 0)), 0));
        let posts = vec![Post::broadcast(&faulty, 81), Post::broadcast(&shape, 82)];
        let mut padding = BTreeMap::new();
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                padding = chip.padding.clone();
                assert!(chip.unacked.contains(&(noc0_of((1, 0)), 0)));
                chip.lose_acks.clear();
            }
        });
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 81,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 3),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 1),
                ],
                stats: [1_920, 0, 640],
            }
        );
        assert_eq!(
            padding,
            [((noc0_of((0, 0)), 0), 2), ((noc0_of((1, 0)), 0), 2)].into()
        );
        // The next command's resync forgot the lost acknowledgement.
        for core in &cores {
            assert_eq!(reports[1][core], shape.clean(2, 82), "{core:?}");
        }
        assert!(chip.borrow().unacked.is_empty());
        assert_buffers_at_slot_0(&chip);
    }
}

// ---- reading ahead -------------------------------------------------------------------------

/// What the sender of broadcast `id` of `shape` traces for block `block`: its reads (tag
/// `block % window`, one per page, into slot `block % window`) or its data multicast from that
/// slot.
fn traced_reads(shape: &Shape, id: usize, block: u32) -> Vec<Traced> {
    let slot = CB_BASES[id] + (block % shape.window as u32) * shape.pages as u32 * PAGE_SIZE;
    (0..shape.pages as u32)
        .map(|page| Traced::Read {
            dst: slot + page * PAGE_SIZE,
            tag: Some((block % shape.window as u32) as u8),
        })
        .collect()
}

fn traced_data(shape: &Shape, id: usize, block: u32) -> Traced {
    let slot = CB_BASES[id] + (block % shape.window as u32) * shape.pages as u32 * PAGE_SIZE;
    Traced::Data { src: slot }
}

#[test]
fn a_sender_reading_ahead_past_a_slow_compute_delivers_every_byte() {
    // A along row 0: (0,0) sends to (1,0); window 4 of 1 page, 9 blocks. The sender's reads
    // land 40 chip cycles after issue, those from DRAM bank 0 (blocks 0 and 8) 400, so block
    // 0 lands after blocks 1..=3: a cast of block 0 on any read but its own would send the
    // receiver a slot not read yet. The sender's own compute is polled every 50th round only,
    // so from block 4 on its data-movement kernel always waits for it.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    shape.window = 4;
    shape.pages = 1;
    shape.blocks = [9, 5];
    let cores = shape.cores();
    let sender = noc0_of((0, 0));
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        {
            let mut c = chip.borrow_mut();
            c.faults.insert(
                sender,
                NocFaults {
                    read_delay: 40,
                    slow_bank: Some((DRAM_PORTS[0], 400)),
                    ..NocFaults::default()
                },
            );
            c.compute_every.insert(sender, 50);
        }
        let reports = run_commands_in(
            order,
            &cores,
            &chip,
            vec![Post::broadcast(&shape, 0x91)],
            |_, _| {},
        );
        // Every byte of the 9 blocks reached both computes.
        for core in &cores {
            assert_eq!(reports[0][core], shape.clean(1, 0x91), "{core:?}");
        }
        // The first lap is free: blocks 0..=3 are read (tags 0..=3) before block 0 is cast,
        // and each is cast once its own tag landed, without waiting for the compute. From
        // then on a slot is free only once the compute popped its block: `reserve_ready`
        // says no, so the sender casts what it holds rather than wait, and each later block
        // is read only when the block before it was cast.
        let mut expected: Vec<Traced> = (0..4).flat_map(|b| traced_reads(&shape, 0, b)).collect();
        expected.extend((0..4).map(|b| traced_data(&shape, 0, b)));
        for b in 4..9 {
            expected.extend(traced_reads(&shape, 0, b));
            expected.push(traced_data(&shape, 0, b));
        }
        let c = chip.borrow();
        assert_eq!(c.trace[&sender], expected);
        assert!(c.in_flight.is_empty() && c.in_flight_at_resync.is_empty());
        drop(c);
        assert_buffers_at_slot_0(&chip);
    }
}

#[test]
fn a_sender_that_gives_up_with_reads_ahead_in_flight_lets_none_land_in_the_next_command() {
    // A along row 0: (0,0) sends to (1,0); window 4 of 1 page, 9 blocks; the sender's reads
    // land 300 cycles after issue, so its compute pops blocks while it waits for them and it
    // reads ahead. (1,0)'s compute stops before block 1. The sender casts blocks 0..=4 (block 4
    // on (1,0)'s marker for block 0), reads blocks 5..=8 ahead as its own compute frees their
    // slots, and waits in vain for (1,0)'s marker for block 1 before casting block 5: it gives
    // up broadcast_done and stops its tile, whose compute, waiting for block 5, sees the stop.
    // (1,0) holds blocks 1..=4 and waits in vain for block 5's VALID. Block 6's read (slot 2)
    // comes from DRAM bank 6, which takes 30,000 cycles (1.5 wait limits): it is still in
    // flight when the sender gives up, and lands within its recovery's bounded wait for its
    // reads, before it pads slots 1..=3 and the next command (another job) starts at slot 0.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    shape.window = 4;
    shape.pages = 1;
    shape.blocks = [9, 5];
    let clean_shape = Shape {
        job: 8,
        ..shape.clone()
    };
    shape.stalls = vec![((1, 0), Role::Compute, 1)];
    let cores = shape.cores();
    let (sender, receiver) = (noc0_of((0, 0)), noc0_of((1, 0)));
    let slot_2 = CB_BASES[0] + 2 * PAGE_SIZE;
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        chip.borrow_mut().faults.insert(
            sender,
            NocFaults {
                slow_bank: Some((DRAM_PORTS[6], 30_000)),
                read_delay: 300,
                ..NocFaults::default()
            },
        );
        let posts = vec![
            Post::broadcast(&shape, 0xA1),
            Post::broadcast(&clean_shape, 0xA2),
        ];
        let mut after_first = None;
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                after_first = Some((
                    chip.in_flight.len(),
                    chip.in_flight_at_recovery.clone(),
                    chip.padding.clone(),
                ));
                // The next command's job, read at issue.
                chip.faults.clear();
                clean_shape.fill_dram(chip, 8);
            }
        });
        let (in_flight, at_recovery, padding) = after_first.unwrap();
        // Block 6's read was in flight when the sender announced its recovery (the receiver
        // had none); nothing was in flight once the first command was reported, nor when a
        // NoC was resynced for the next command.
        assert_eq!(
            at_recovery,
            [
                ((sender, Role::Reader), vec![slot_2]),
                ((receiver, Role::Reader), vec![])
            ]
            .into()
        );
        assert_eq!(in_flight, 0);
        assert_eq!(chip.borrow().in_flight_at_resync, []);
        assert_eq!(padding, [((sender, 0), 3), ((receiver, 0), 3)].into());
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 0xA1,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastDone), 0, 5),
                    None,
                    give_up(GiveUpCode::ComputeStopped, 0, 5),
                ],
                stats: [1_600, 0, 1_600],
            }
        );
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 0xA1,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 5),
                    None,
                    give_up(GiveUpCode::ComputeTimedOut, 0, 1),
                ],
                stats: [1_600, 0, 320],
            }
        );
        // The next command delivers every byte of its own job.
        for core in &cores {
            assert_eq!(reports[1][core], clean_shape.clean(2, 0xA2), "{core:?}");
        }
        assert!(chip.borrow().in_flight.is_empty());
        assert_buffers_at_slot_0(&chip);
    }
}

// ---- the handshake peer ------------------------------------------------------------------

/// Unicast writes each core issued on each NoC (index 0, 1) during a run.
fn writes(chip: &Shared, cores: &[(u8, u8)]) -> BTreeMap<(u8, u8), [u32; 2]> {
    let c = chip.borrow();
    cores
        .iter()
        .map(|&core| {
            let t = noc0_of(core);
            let n = |noc: u8| c.writes.get(&(t, noc)).copied().unwrap_or(0);
            (core, [n(0), n(1)])
        })
        .collect()
}

#[test]
fn the_handshake_peer_runs_a_2x2_group_and_every_compute_checks_every_byte() {
    // The shape of the broadcast handler's first test, handler 2: the same reports (5 blocks of
    // 2 pages of 320 bytes; each data-movement kernel 3,200 bytes, compute 6,400), the same
    // buffers at the end (5 blocks and one of padding through each, back at slot 0), the words
    // cleared. A along rows: (0,0) -> (1,0) and (0,1) -> (1,1) on NoC0; W along columns from the
    // bottom: (0,1) -> (0,0) and (1,1) -> (1,0) on NoC1. Each receiver writes exactly one ready
    // word per block, on its broadcast's NoC, and no other unicast write; senders none.
    let shape = Shape::new(LogicalRect::new(0, 0, 2, 2), [true, true]);
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let posts = vec![Post::handshake(&shape, 0x0001_0005)];
        let reports = run_commands_in(order, &cores, &chip, posts, |_, _| {});
        for core in &cores {
            assert_eq!(reports[0][core], shape.clean(1, 0x0001_0005), "{core:?}");
        }
        assert_eq!(
            writes(&chip, &cores),
            [
                ((0, 0), [0, 5]),
                ((1, 0), [5, 5]),
                ((0, 1), [0, 0]),
                ((1, 1), [5, 0]),
            ]
            .into()
        );
        let c = chip.borrow();
        for (t, tile) in &c.tiles {
            for (i, counters) in &tile.cbs {
                let end = Counters {
                    pushed: 12,
                    popped: 12,
                    wr: 0,
                    rd: 0,
                };
                assert_eq!(*counters, end, "tile {t:?} CB {i}");
            }
        }
        assert!(c.padding.is_empty(), "no give-up, no padding pushed");
        for &core in &cores {
            let t = noc0_of(core);
            for id in [0, 1] {
                // Every core counted 5 blocks; the flag (VALID), the ready words (DONE-BY) and
                // the give-up record are clear for the next command.
                assert_eq!(c.control(t, area::area(id) + area::STATS_BLOCKS), 5);
                assert_eq!(c.control(t, area::area(id) + area::VALID), 0);
                assert_eq!(c.control(t, area::done_by(id, 1)), 0);
                assert_eq!(c.control(t, area::area(id) + area::GIVE_UP_WHERE), 0);
            }
            assert_eq!(c.control(t, abi::STOP), 0);
        }
    }
}

#[test]
fn the_two_protocols_take_turns_on_the_same_tiles_each_command_clean() {
    // handshake, komorebi, handshake on the same words and buffers: each command starts from
    // what the other left (slot 0, its words cleared or of an older sequence) and runs clean;
    // the handshake's receivers write 5 ready words per command, komorebi's at least one DONE
    // marker per window of blocks and the last: (5 - 1) / 2 + 1 = 3.
    let shape = Shape::new(LogicalRect::new(0, 0, 3, 1), [true, false]);
    let cores = shape.cores();
    let chip = chip(&shape, &cores);
    let mut after = Vec::new();
    let posts = vec![
        Post::handshake(&shape, 41),
        Post::broadcast(&shape, 42),
        Post::handshake(&shape, 43),
    ];
    let reports = run_commands(&cores, &chip, posts, |_, c| {
        after.push(c.writes.get(&(noc0_of((1, 0)), 0)).copied().unwrap_or(0));
    });
    for (k, seq) in [41, 42, 43].into_iter().enumerate() {
        for core in &cores {
            assert_eq!(reports[k][core], shape.clean(k as u32 + 1, seq), "{core:?}");
        }
    }
    // Before commands 1, 2, 3 and the exit: receiver (1,0)'s writes so far.
    assert_eq!(after[0], 0);
    assert_eq!(after[1], 5, "the handshake: one ready word per block");
    assert!(
        (3..=5).contains(&(after[2] - after[1])),
        "komorebi: {}",
        after[2] - after[1]
    );
    assert_eq!(after[3] - after[2], 5);
    assert_buffers_at_slot_0(&chip);
}

#[test]
fn a_handshake_receiver_that_never_says_it_is_ready_times_out_its_sender_and_the_next_runs_clean() {
    // A along row 0: (0,0) sends to (1,0); window 3 of 1 page. (1,0)'s reader says it is ready
    // for block 0, takes it, and stalls before block 1: it never writes the ready word of block
    // 1. The sender casts block 0, reserves slot 1, reads block 1 and waits in vain for
    // (1,0)'s second ready word: one wait limit after it started waiting it gives up
    // broadcast_done, block 1, records it in its area and stops its tile. The stalled reader
    // sleeps out one limit (it started first) and gives up broadcast_valid, block 1, recording
    // nothing. Each data-movement kernel holds block 0 (page 0 of 3) and pads pages 1 and 2;
    // each compute checked block 0, then takes the padding for what it is and records nothing
    // (it started waiting for block 1 after its producer's wait began, so its limit is not
    // the first to pass, in either polling order). The next command, clean, runs clean.
    let mut shape = Shape::new(LogicalRect::new(0, 0, 2, 1), [true, false]);
    shape.pages = 1;
    shape.window = 3;
    let clean_shape = shape.clone();
    shape.stalls = vec![((1, 0), Role::Reader, 1)];
    let cores = shape.cores();
    for order in ORDERS {
        let _order = InOrder(order);
        let chip = chip(&shape, &cores);
        let posts = vec![
            Post::handshake(&shape, 51),
            Post::handshake(&clean_shape, 52),
        ];
        let mut after_first = None;
        let reports = run_commands_in(order, &cores, &chip, posts, |k, chip| {
            if k == 2 {
                let (s, r) = (noc0_of((0, 0)), noc0_of((1, 0)));
                let record = abi::record_of(1);
                after_first = Some((
                    chip.padding.clone(),
                    [
                        chip.control(s, area::area(0) + area::GIVE_UP_WHERE),
                        chip.control(s, area::area(0) + area::GIVE_UP_BLOCK),
                        chip.control(s, area::area(0) + area::GIVE_UP_SEQUENCE),
                    ],
                    chip.control(r, area::area(0) + area::GIVE_UP_WHERE),
                    chip.writes.get(&(r, 0)).copied().unwrap_or(0),
                    // The sender tile's record: started and finished, on its reader's clock.
                    (
                        chip.control(s, record + 0x0C),
                        chip.control(s, record + 0x1C),
                    ),
                ));
            }
        });
        assert_eq!(
            reports[0][&(0, 0)],
            Report {
                index: 1,
                sequence: 51,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastDone), 0, 1),
                    None,
                    None,
                ],
                stats: [320, 0, 320],
            }
        );
        assert_eq!(
            reports[0][&(1, 0)],
            Report {
                index: 1,
                sequence: 51,
                status: abi::STATUS_GAVE_UP,
                give_ups: [
                    give_up(GiveUpCode::Broadcast(Where::BroadcastValid), 0, 1),
                    None,
                    None,
                ],
                stats: [320, 0, 320],
            }
        );
        let (padding, sender_record, receiver_where, ready_words, (started, finished)) =
            after_first.unwrap();
        assert_eq!(
            padding,
            [((noc0_of((0, 0)), 0), 2), ((noc0_of((1, 0)), 0), 2)].into()
        );
        // broadcast_done (1; the sequence's low half above), block 1, command 51; the stalled
        // receiver recorded nothing and wrote the ready word of block 0 only.
        assert_eq!(sender_record, [1 | 51 << 16, 1, 51]);
        assert_eq!(receiver_where, 0);
        assert_eq!(ready_words, 1);
        // The sender's tile gave up within one wait limit of its wait for the ready word: the
        // command took that limit and the polling around it.
        let took = (finished - started) as u64;
        assert!(
            LIMIT < took && took < 2 * LIMIT,
            "the sender's tile took {took} cycles (limit {LIMIT})"
        );
        for core in &cores {
            assert_eq!(reports[1][core], clean_shape.clean(2, 52), "{core:?}");
        }
        assert_buffers_at_slot_0(&chip);
    }
}
