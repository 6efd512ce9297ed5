//! The simulated chip's state and its discrete-event core: tiles, NIU counters, circular
//! buffers, DRAM banks, links, the event queue, routing and timing.
//!
//! Everything happens in one thread in virtual time. Items of the queue are ordered by
//! `(time, class, seq)`: NoC events before kernel wake-ups at the same cycle (so a kernel woken
//! at `t` sees what landed at `t`), and `seq` in push order, or at random when the adversary is
//! on (a seeded schedule).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::rc::Rc;

use blackhole_pac::grid::{self, TileKind};
use blackhole_pac::tensix::L1_SIZE;
use komorebi_hal::Role;

use crate::config::SimConfig;
use crate::fault::{Faults, TxKind};
use crate::memory::SparseMemory;
use crate::rng::SplitMix64;
use crate::trace::Trace;

/// A tile index into `World::tiles`.
pub(crate) type TileIx = u16;

/// One NIU's counters (wrapping, as the hardware's) and its issue pipeline.
#[derive(Clone, Debug, Default)]
pub(crate) struct Niu {
    pub reads_issued: u32,
    pub reads_done: u32,
    pub nonposted_issued: u32,
    pub nonposted_sent: u32,
    pub posted_issued: u32,
    pub posted_sent: u32,
    pub acks_expected: u32,
    pub acks_received: u32,
    /// When the NIU can start its next command.
    pub free_at: u64,
    /// When the NIU can take its next ack (one per cycle).
    pub ack_free: u64,
}

/// A circular buffer's shared state: the stream counters and both kernels' pointers.
#[derive(Clone, Debug)]
pub(crate) struct Cb {
    pub base: u32,
    pub page_size: u32,
    pub pages: u16,
    pub pushed: u16,
    pub popped: u16,
    /// Next page the producer writes.
    pub wr: u16,
    /// Oldest page not popped.
    pub rd: u16,
}

impl Cb {
    pub(crate) fn ready(&self) -> u16 {
        self.pushed.wrapping_sub(self.popped)
    }
}

/// One Tensix tile.
#[derive(Debug)]
pub(crate) struct Tile {
    /// NoC0 coordinates.
    pub xy0: (u8, u8),
    pub l1: SparseMemory,
    pub niu: [Niu; 2],
    pub cbs: Vec<Option<Cb>>,
    /// Parked tasks to wake on any change to this tile.
    pub waiters: Vec<usize>,
    /// When each NoC's ejection port is free.
    pub eject_free: [u64; 2],
    /// From this cycle on, no kernel of the tile runs.
    pub frozen_from: Option<u64>,
}

/// Where a NoC request lands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    L1(TileIx),
    Dram(u8),
}

/// A task's scheduling state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Being polled.
    Running,
    /// Waiting; `woken` once a wake-up is queued; `sleeping` ones ignore tile changes.
    Parked { woken: bool, sleeping: bool },
    /// Returned.
    Done,
}

/// A kernel task's bookkeeping (its future lives in `Sim`).
#[derive(Clone, Debug)]
pub(crate) struct TaskMeta {
    pub tile: TileIx,
    pub kernel: Role,
    /// The kernel's own clock: never behind the cycle it was last resumed at.
    pub local: u64,
    pub state: TaskState,
    pub epoch: u64,
    pub parked_at: u64,
    /// Stopped by a fault: it is never polled again and its HAL calls have no effect.
    pub stalled: bool,
    /// The deadline of its current wait (`u64::MAX`: none).
    pub deadline: u64,
    /// The time of its one live `Deadline` entry in the queue, if any.
    pub deadline_entry: Option<u64>,
}

/// A write or multicast on its way out of its NIU.
#[derive(Clone, Debug)]
pub(crate) struct WritePacket {
    pub src: TileIx,
    pub noc: u8,
    pub src_addr: u32,
    pub len: u32,
    /// Destinations: `(target, raw coordinates on this NoC)`.
    pub dests: Rc<[(Target, (u8, u8))]>,
    pub dst_addr: u64,
    pub acked: bool,
    pub ordered: bool,
    pub multicast: bool,
    /// Flow key for ordering: same source, NoC, destination set (and ordered class).
    pub flow: u64,
    pub issued_at: u64,
    pub reserve: u64,
}

/// A read on its way.
#[derive(Clone, Debug)]
pub(crate) struct ReadPacket {
    pub tile: TileIx,
    pub noc: u8,
    pub src: Target,
    pub src_raw: (u8, u8),
    pub src_addr: u64,
    pub dst_addr: u32,
    pub len: u32,
    pub issued_at: u64,
}

#[derive(Debug)]
pub(crate) enum Item {
    Wake {
        task: usize,
        epoch: u64,
    },
    /// A task's deadline; at most one live entry per task (see `World::park`).
    Deadline {
        task: usize,
    },
    DepartWrite(Box<WritePacket>),
    DepartRead(Box<ReadPacket>),
    Commit {
        target: Target,
        addr: u64,
        data: Rc<[u8]>,
        src: TileIx,
    },
    Ack {
        tile: TileIx,
        noc: u8,
    },
    ReadServe(Box<ReadPacket>),
    ReadRespond(Box<ReadPacket>),
    ReadLand {
        tile: TileIx,
        noc: u8,
        addr: u32,
        data: Rc<[u8]>,
    },
}

#[derive(Debug)]
struct Entry {
    time: u64,
    class: u8,
    seq: u64,
    item: Item,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.class, self.seq) == (other.time, other.class, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.class, other.seq).cmp(&(self.time, self.class, self.seq))
    }
}

/// Something the simulator saw that a real chip would not report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Violation {
    /// A NoC write landed on circular-buffer pages its consumer had not popped.
    OverwroteUnpoppedPages {
        /// NoC0 coordinates of the tile.
        tile: (u8, u8),
        /// Circular buffer index.
        cb: u8,
        /// First overwritten page (index into the buffer).
        page: u16,
        /// L1 address written.
        addr: u32,
        /// Cycle.
        time: u64,
    },
    /// An inline write aimed at L1 (broken on Blackhole).
    InlineWriteToL1 {
        /// NoC0 coordinates of the writing tile.
        tile: (u8, u8),
        /// NoC0 coordinates of the target.
        target: (u8, u8),
        /// Cycle.
        time: u64,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OverwroteUnpoppedPages {
                tile,
                cb,
                page,
                addr,
                time,
            } => write!(
                f,
                "cycle {time}: tile {tile:?} CB {cb}: NoC write at {addr:#x} overwrote page {page}, \
                 which compute had not popped"
            ),
            Self::InlineWriteToL1 { tile, target, time } => {
                write!(
                    f,
                    "cycle {time}: tile {tile:?} issued an inline write to L1 of {target:?}"
                )
            }
        }
    }
}

/// Counts for benchmarks and summaries.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Queue items processed.
    pub events: u64,
    /// Kernel polls.
    pub polls: u64,
    /// Packets sent.
    pub packets: u64,
    /// Flits injected.
    pub flits: u64,
    /// Flit-hops (flits times links crossed).
    pub flit_hops: u64,
    /// Deliveries (one per destination of a packet).
    pub deliveries: u64,
    /// Bytes delivered into L1 by multicasts.
    pub multicast_bytes: u64,
}

/// The whole simulated chip.
pub(crate) struct World {
    pub cfg: SimConfig,
    pub rng: SplitMix64,
    /// Time of the item being processed.
    pub now: u64,
    seq: u64,
    pub tiles: Vec<Tile>,
    tile_at: [[TileIx; 12]; 17],
    pub dram: Vec<SparseMemory>,
    dram_bank_free: [f64; 8],
    links: Vec<u64>,
    queue: BinaryHeap<Entry>,
    flows: HashMap<(u64, TileIx), u64, crate::memory::FastHash>,
    pub tasks: Vec<TaskMeta>,
    pub faults: Faults,
    pub trace: Option<Trace>,
    pub violations: Vec<Violation>,
    pub stats: Stats,
    stall_times: Vec<(u64, usize)>,
    pub tlb_regs: crate::tlb::TlbRegs,
}

pub(crate) const NO_TILE: TileIx = TileIx::MAX;

/// The VC classes that share a physical link (ISA: 0b00/0b01 unicast requests, 0b10 broadcast
/// requests, 0b11 responses).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Vc {
    Unicast = 0,
    Multicast = 1,
    Response = 2,
}
const VC_CLASSES: usize = 3;
const GX: u8 = grid::GRID_X;
const GY: u8 = grid::GRID_Y;

/// Raw coordinates on `noc` of NoC0 `(x, y)`, and back (the mapping is its own inverse).
pub(crate) fn raw(noc: u8, p: (u8, u8)) -> (u8, u8) {
    if noc == 0 {
        p
    } else {
        (GX - 1 - p.0, GY - 1 - p.1)
    }
}

/// Forward distance on a torus axis of `len` nodes (the NoC only moves in + direction).
pub(crate) fn fwd(from: u8, to: u8, len: u8) -> u8 {
    grid::forward_hops(from, to, len)
}

/// Router hops of a unicast from `a` to `b` (raw coordinates of one NoC).
pub(crate) fn unicast_hops(a: (u8, u8), b: (u8, u8)) -> u64 {
    crate::route::hops(a, b)
}

/// Whether `v` is in the span `s..=e` of a torus axis (wrapping when `s > e`).
fn span(s: u8, e: u8, v: u8) -> bool {
    blackhole_pac::addr::span_contains(s, e, v)
}

impl World {
    pub(crate) fn new(cfg: SimConfig) -> Self {
        let mut tiles = Vec::new();
        let mut tile_at = [[NO_TILE; 12]; 17];
        let columns = cfg.harvest.columns();
        for &x in columns.noc0_x() {
            for y in grid::TENSIX_Y_FIRST..=grid::TENSIX_Y_LAST {
                tile_at[x as usize][y as usize] = tiles.len() as TileIx;
                tiles.push(Tile {
                    xy0: (x, y),
                    l1: SparseMemory::new(L1_SIZE as u64),
                    niu: [Niu::default(), Niu::default()],
                    cbs: vec![None; blackhole_pac::stream::CIRCULAR_BUFFERS],
                    waiters: Vec::new(),
                    eject_free: [0; 2],
                    frozen_from: None,
                });
            }
        }
        let rng = SplitMix64::new(cfg.seed ^ 0x9E37_79B9_7F4A_7C15);
        let trace = cfg.trace.then(Trace::default);
        Self {
            rng,
            now: 0,
            seq: 0,
            tiles,
            tile_at,
            dram: (0..grid::DRAM_BANKS)
                .map(|_| SparseMemory::new(grid::DRAM_BANK_SIZE))
                .collect(),
            dram_bank_free: [0.0; 8],
            links: vec![0; 2 * GX as usize * GY as usize * 2 * VC_CLASSES],
            queue: BinaryHeap::new(),
            flows: HashMap::default(),
            tasks: Vec::new(),
            faults: Faults::default(),
            trace,
            violations: Vec::new(),
            stats: Stats::default(),
            stall_times: Vec::new(),
            tlb_regs: vec![[0; 3]; 210],
            cfg,
        }
    }

    /// The Tensix tile at NoC0 `(x, y)`.
    pub(crate) fn tile_at0(&self, p: (u8, u8)) -> Option<TileIx> {
        let t = *self.tile_at.get(p.0 as usize)?.get(p.1 as usize)?;
        (t != NO_TILE).then_some(t)
    }

    /// What a NoC request to raw `(x, y)` on `noc` reaches.
    pub(crate) fn target_at(&self, noc: u8, p: (u8, u8)) -> Option<Target> {
        if p.0 >= GX || p.1 >= GY {
            return None;
        }
        let p0 = raw(noc, p);
        if let Some(t) = self.tile_at0(p0) {
            return Some(Target::L1(t));
        }
        match grid::tile_at(p0.0, p0.1) {
            Some(TileKind::Dram { bank, .. }) => Some(Target::Dram(bank)),
            _ => None,
        }
    }

    pub(crate) fn push(&mut self, time: u64, item: Item) {
        let class = u8::from(matches!(item, Item::Wake { .. } | Item::Deadline { .. }));
        let seq = if self.cfg.adversarial {
            self.rng.next_u64()
        } else {
            self.seq
        };
        self.seq += 1;
        self.queue.push(Entry {
            time,
            class,
            seq,
            item,
        });
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, Item)> {
        let e = self.queue.pop()?;
        self.now = self.now.max(e.time);
        if !self.stall_times.is_empty() {
            self.apply_stall_times(e.time);
        }
        self.stats.events += 1;
        Some((e.time, e.item))
    }

    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.queue.peek().map(|e| e.time)
    }

    fn jitter(&mut self) -> u64 {
        if self.cfg.adversarial {
            self.rng.below(self.cfg.jitter_cycles + 1)
        } else {
            0
        }
    }

    // ---- tasks ---------------------------------------------------------------------------

    /// Parks `task` until a change to its tile (unless `sleeping`) or `deadline`.
    ///
    /// A task keeps at most one `Deadline` entry in the queue: a wait that ends early leaves
    /// its entry, and the next wait reuses it if it is not later than the new deadline (the
    /// entry then wakes the task early, which a wait allows, or is re-armed for the later
    /// deadline). So the queue does not fill up with the deadlines of waits long over.
    pub(crate) fn park(&mut self, task: usize, deadline: u64, sleeping: bool) -> u64 {
        let t = &mut self.tasks[task];
        t.epoch += 1;
        t.state = TaskState::Parked {
            woken: false,
            sleeping,
        };
        t.parked_at = t.local;
        let at = deadline.max(t.local);
        t.deadline = if deadline == u64::MAX { u64::MAX } else { at };
        let (epoch, tile) = (t.epoch, t.tile);
        if deadline != u64::MAX && t.deadline_entry.is_none_or(|e| e > at) {
            t.deadline_entry = Some(at);
            self.push(at, Item::Deadline { task });
        }
        if !sleeping {
            self.tiles[tile as usize].waiters.push(task);
        }
        epoch
    }

    /// A `Deadline` entry of `task` came at `time`: the wake-up to run, if any.
    pub(crate) fn deadline_due(&mut self, task: usize, time: u64) -> Option<u64> {
        let t = &mut self.tasks[task];
        if t.deadline_entry != Some(time) {
            return None;
        }
        t.deadline_entry = None;
        if !matches!(t.state, TaskState::Parked { woken: false, .. }) || t.deadline == u64::MAX {
            return None;
        }
        if t.deadline <= time {
            return Some(t.epoch);
        }
        let at = t.deadline;
        t.deadline_entry = Some(at);
        self.push(at, Item::Deadline { task });
        None
    }

    /// Wakes every parked (not sleeping) task of `tile` at `time` or its own clock.
    pub(crate) fn touch(&mut self, tile: TileIx, time: u64) {
        let waiters = std::mem::take(&mut self.tiles[tile as usize].waiters);
        for task in waiters {
            let t = &mut self.tasks[task];
            if let TaskState::Parked {
                woken: false,
                sleeping: false,
            } = t.state
            {
                t.state = TaskState::Parked {
                    woken: true,
                    sleeping: false,
                };
                let (at, epoch) = (time.max(t.local), t.epoch);
                self.push(at, Item::Wake { task, epoch });
            }
        }
    }

    /// Stalls `task` from cycle `at` on (at once if `at` has passed).
    pub(crate) fn stall_at(&mut self, task: usize, at: u64) {
        if at <= self.now.max(self.tasks[task].local) {
            self.tasks[task].stalled = true;
        } else {
            self.stall_times.push((at, task));
        }
    }

    /// Marks the tasks whose stall time has come by `time`.
    pub(crate) fn apply_stall_times(&mut self, time: u64) {
        let tasks = &mut self.tasks;
        self.stall_times.retain(|&(at, task)| {
            if at <= time {
                tasks[task].stalled = true;
                false
            } else {
                true
            }
        });
    }

    /// Charges a NoC command's programming time.
    pub(crate) fn charge_issue(&mut self, task: usize) -> u64 {
        self.charge(task, self.cfg.timing.kernel_issue_cycles)
    }

    /// Charges one other HAL call.
    pub(crate) fn charge_call(&mut self, task: usize) -> u64 {
        self.charge(task, self.cfg.timing.kernel_call_cycles)
    }

    /// Adds `cycles` to a task's clock and returns the new time.
    pub(crate) fn charge(&mut self, task: usize, cycles: u64) -> u64 {
        let t = &mut self.tasks[task];
        t.local = t.local.max(self.now) + cycles;
        t.local
    }

    // ---- links and routing -----------------------------------------------------------------

    fn link(noc: u8, p: (u8, u8), dir: usize, class: Vc) -> usize {
        (((noc as usize * GY as usize + p.1 as usize) * GX as usize + p.0 as usize) * 2 + dir)
            * VC_CLASSES
            + class as usize
    }

    /// Moves a packet of `flits` over one link out of `p` in direction `dir`, from time `t`;
    /// returns when its head reaches the next router. Each VC class has its own reservation:
    /// routers interleave flits of different classes on a link, so a one-flit request does not
    /// wait behind a 257-flit response.
    fn hop(&mut self, noc: u8, p: (u8, u8), dir: usize, t: u64, flits: u64, class: Vc) -> u64 {
        let l = Self::link(noc, p, dir, class);
        let start = t.max(self.links[l]);
        self.links[l] = start + flits;
        self.stats.flit_hops += flits;
        start + self.cfg.timing.router_hop
    }

    fn step(p: (u8, u8), dir: usize) -> (u8, u8) {
        crate::route::step(p, dir)
    }

    /// Head arrival at the router of `to` for a unicast from `from` leaving its router at `t`
    /// (NoC0: X then Y; NoC1: Y then X, in its own raw coordinates).
    fn route_unicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        to: (u8, u8),
        mut t: u64,
        flits: u64,
        class: Vc,
    ) -> u64 {
        for (p, dir) in crate::route::unicast_links(noc, from, to) {
            t = self.hop(noc, p, dir, t, flits, class);
        }
        t
    }

    /// Head arrival times at the router of each destination of a multicast tree from `from`
    /// (NoC0 X-major, NoC1 Y-major), in the order of `dests`.
    fn route_multicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        dests: &[(Target, (u8, u8))],
        t0: u64,
        flits: u64,
    ) -> Vec<u64> {
        let (major, minor) = if noc == 0 { (0usize, 1usize) } else { (1, 0) };
        let coord = |p: (u8, u8), d: usize| if d == 0 { p.0 } else { p.1 };
        let len = |d: usize| if d == 0 { GX } else { GY };
        let major_max = dests
            .iter()
            .map(|&(_, p)| fwd(coord(from, major), coord(p, major), len(major)))
            .max()
            .unwrap_or(0);
        // Along the major axis from the sender.
        let mut spine = Vec::with_capacity(major_max as usize + 1);
        let (mut p, mut t) = (from, t0);
        spine.push(t);
        for _ in 0..major_max {
            t = self.hop(noc, p, major, t, flits, Vc::Multicast);
            p = Self::step(p, major);
            spine.push(t);
        }
        // One branch along the minor axis per major position that has destinations.
        let mut branches: HashMap<u8, Vec<u64>> = HashMap::new();
        for k in 0..=major_max {
            let reach = dests
                .iter()
                .filter(|&&(_, d)| fwd(coord(from, major), coord(d, major), len(major)) == k)
                .map(|&(_, d)| fwd(coord(from, minor), coord(d, minor), len(minor)))
                .max();
            let Some(reach) = reach else { continue };
            let mut q = from;
            for _ in 0..k {
                q = Self::step(q, major);
            }
            let mut times = vec![spine[k as usize]];
            let mut tt = spine[k as usize];
            for _ in 0..reach {
                tt = self.hop(noc, q, minor, tt, flits, Vc::Multicast);
                q = Self::step(q, minor);
                times.push(tt);
            }
            branches.insert(k, times);
        }
        dests
            .iter()
            .map(|&(_, d)| {
                let k = fwd(coord(from, major), coord(d, major), len(major));
                let j = fwd(coord(from, minor), coord(d, minor), len(minor));
                branches[&k][j as usize]
            })
            .collect()
    }

    /// When a packet whose head reaches `target`'s router at `t` has committed its last byte.
    fn eject(&mut self, target: Target, noc: u8, t: u64, flits: u64) -> u64 {
        let head = t + self.cfg.timing.niu_hop;
        match target {
            Target::L1(tile) => {
                let port = &mut self.tiles[tile as usize].eject_free[noc as usize];
                let start = head.max(*port);
                *port = start + flits;
                start + flits - 1
            }
            Target::Dram(_) => head + flits - 1,
        }
    }

    /// DRAM bank `bank` serves `len` bytes from `t`; returns when they are done.
    fn dram_service(&mut self, bank: u8, len: u32, t: u64) -> u64 {
        let timing = self.cfg.timing;
        let b = bank as usize;
        let start = (t as f64).max(self.dram_bank_free[b]);
        self.dram_bank_free[b] = start + len as f64 / timing.dram_bank_bytes_per_cycle;
        self.dram_bank_free[b].ceil() as u64
    }

    // ---- the NoC's events ------------------------------------------------------------------

    /// Handles a non-wake item at `time`.
    pub(crate) fn handle(&mut self, time: u64, item: Item) {
        match item {
            Item::Wake { .. } | Item::Deadline { .. } => {}
            Item::DepartWrite(p) => self.depart_write(time, *p),
            Item::DepartRead(p) => self.depart_read(time, *p),
            Item::Commit {
                target,
                addr,
                data,
                src,
            } => self.commit(time, target, addr, &data, src),
            Item::Ack { tile, noc } => {
                let niu = &mut self.tiles[tile as usize].niu[noc as usize];
                if time < niu.ack_free {
                    let at = niu.ack_free;
                    self.push(at, Item::Ack { tile, noc });
                    return;
                }
                niu.ack_free = time + 1;
                niu.acks_received = niu.acks_received.wrapping_add(1);
                self.touch(tile, time);
            }
            Item::ReadServe(p) => self.read_serve(time, *p),
            Item::ReadRespond(p) => self.read_respond(time, *p),
            Item::ReadLand {
                tile,
                noc,
                addr,
                data,
            } => {
                self.tiles[tile as usize].l1.write(addr as u64, &data);
                let niu = &mut self.tiles[tile as usize].niu[noc as usize];
                niu.reads_done = niu.reads_done.wrapping_add(1);
                self.stats.deliveries += 1;
                self.touch(tile, time);
            }
        }
    }

    fn depart_write(&mut self, time: u64, p: WritePacket) {
        let timing = self.cfg.timing;
        // The source bytes are read now, not at issue: a source changed before `writes_sent`
        // delivers the changed bytes, as on Blackhole.
        let mut buf = vec![0u8; p.len as usize];
        self.tiles[p.src as usize]
            .l1
            .read(p.src_addr as u64, &mut buf);
        let data: Rc<[u8]> = buf.into();
        let niu = &mut self.tiles[p.src as usize].niu[p.noc as usize];
        if p.acked {
            niu.nonposted_sent = niu.nonposted_sent.wrapping_add(1);
        } else {
            niu.posted_sent = niu.posted_sent.wrapping_add(1);
        }
        self.touch(p.src, time);
        let flits = timing.flits(p.len);
        self.stats.packets += 1;
        self.stats.flits += flits;
        let from = raw(p.noc, self.tiles[p.src as usize].xy0);
        let start = time + p.reserve + timing.niu_hop;
        let heads = if p.multicast {
            self.route_multicast(p.noc, from, &p.dests, start, flits)
        } else {
            let to = p.dests[0].1;
            vec![self.route_unicast(p.noc, from, to, start, flits, Vc::Unicast)]
        };
        let kind = if p.multicast {
            TxKind::Multicast
        } else {
            TxKind::Write
        };
        let src0 = self.tiles[p.src as usize].xy0;
        let mut last = time;
        for (i, &(target, d)) in p.dests.iter().enumerate() {
            let dst0 = raw(p.noc, d);
            let action = self.faults.match_tx(kind, p.noc, src0, dst0, p.dst_addr);
            let mut commit = self.eject(target, p.noc, heads[i], flits);
            if let Target::Dram(bank) = target {
                commit = self.dram_service(bank, p.len, commit) + timing.dram_write_latency;
            }
            commit += self.jitter() + action.delay;
            if p.ordered {
                let key = (
                    p.flow,
                    match target {
                        Target::L1(t) => t,
                        Target::Dram(b) => NO_TILE - 1 - b as TileIx,
                    },
                );
                let last_flow = self.flows.entry(key).or_insert(0);
                commit = commit.max(*last_flow + 1);
                *last_flow = commit;
            }
            last = last.max(commit);
            if !action.drop {
                self.push(
                    commit,
                    Item::Commit {
                        target,
                        addr: p.dst_addr,
                        data: data.clone(),
                        src: p.src,
                    },
                );
                if p.multicast {
                    self.stats.multicast_bytes += p.len as u64;
                }
            }
            if p.acked && (!action.drop || action.ack_anyway) {
                let back = unicast_hops(d, from);
                let ack = commit
                    + timing.ack_turnaround
                    + 2 * timing.niu_hop
                    + back * timing.router_hop
                    + self.jitter();
                self.push(
                    ack,
                    Item::Ack {
                        tile: p.src,
                        noc: p.noc,
                    },
                );
            }
        }
        if let Some(trace) = self.trace.as_mut() {
            let what = if p.multicast { "multicast" } else { "write" };
            trace.transfer(
                p.noc,
                p.src,
                src0,
                what,
                p.len,
                p.dests.len(),
                p.issued_at,
                last,
                timing.aiclk_mhz,
            );
        }
    }

    fn commit(&mut self, time: u64, target: Target, addr: u64, data: &[u8], _src: TileIx) {
        self.stats.deliveries += 1;
        match target {
            Target::Dram(bank) => self.dram[bank as usize].write(addr, data),
            Target::L1(tile) => {
                self.check_overwrite(tile, addr as u32, data.len() as u32, time);
                self.tiles[tile as usize].l1.write(addr, data);
                self.touch(tile, time);
            }
        }
    }

    /// Records a violation if `addr .. addr + len` covers pages of a CB that are pushed and not
    /// popped.
    fn check_overwrite(&mut self, tile: TileIx, addr: u32, len: u32, time: u64) {
        let t = &self.tiles[tile as usize];
        for (index, cb) in t.cbs.iter().enumerate() {
            let Some(cb) = cb else { continue };
            let size = cb.page_size * cb.pages as u32;
            let (lo, hi) = (addr.max(cb.base), (addr + len).min(cb.base + size));
            if lo >= hi {
                continue;
            }
            let ready = cb.ready();
            for page in (lo - cb.base) / cb.page_size..=(hi - 1 - cb.base) / cb.page_size {
                let age = (page as u16 + cb.pages - cb.rd) % cb.pages;
                if age < ready {
                    let v = Violation::OverwroteUnpoppedPages {
                        tile: t.xy0,
                        cb: index as u8,
                        page: page as u16,
                        addr,
                        time,
                    };
                    self.violations.push(v);
                    return;
                }
            }
        }
    }

    fn depart_read(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        self.stats.packets += 1;
        self.stats.flits += 1;
        let from = raw(p.noc, self.tiles[p.tile as usize].xy0);
        let head = self.route_unicast(
            p.noc,
            from,
            p.src_raw,
            time + timing.niu_hop,
            1,
            Vc::Unicast,
        );
        let action = self.faults.match_tx(
            TxKind::Read,
            p.noc,
            self.tiles[p.tile as usize].xy0,
            raw(p.noc, p.src_raw),
            p.src_addr,
        );
        if action.drop {
            return;
        }
        let arrive = head + timing.niu_hop + action.delay;
        self.push(arrive, Item::ReadServe(Box::new(p)));
    }

    /// A read request reached its target: the response leaves once the L1 or DRAM has the
    /// data (a separate event, so links are reserved in time order).
    fn read_serve(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        let ready = match p.src {
            Target::L1(_) => time + timing.read_turnaround,
            Target::Dram(bank) => {
                self.dram_service(bank, p.len, time)
                    + timing.read_turnaround
                    + timing.dram_read_latency
            }
        };
        self.push(ready, Item::ReadRespond(Box::new(p)));
    }

    fn read_respond(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        let mut buf = vec![0u8; p.len as usize];
        match p.src {
            Target::L1(t) => self.tiles[t as usize].l1.read(p.src_addr, &mut buf),
            Target::Dram(bank) => self.dram[bank as usize].read(p.src_addr, &mut buf),
        }
        let flits = timing.flits(p.len);
        self.stats.flits += flits;
        let to = raw(p.noc, self.tiles[p.tile as usize].xy0);
        let head = self.route_unicast(
            p.noc,
            p.src_raw,
            to,
            time + timing.niu_hop,
            flits,
            Vc::Response,
        );
        let land = self.eject(Target::L1(p.tile), p.noc, head, flits) + self.jitter();
        if let Some(trace) = self.trace.as_mut() {
            let xy0 = self.tiles[p.tile as usize].xy0;
            trace.transfer(
                p.noc,
                p.tile,
                xy0,
                "read",
                p.len,
                1,
                p.issued_at,
                land,
                timing.aiclk_mhz,
            );
        }
        self.push(
            land,
            Item::ReadLand {
                tile: p.tile,
                noc: p.noc,
                addr: p.dst_addr,
                data: buf.into(),
            },
        );
    }

    // ---- issuing (called by the HAL handles) -----------------------------------------------

    /// When an NIU takes a command issued at `t` that occupies it `busy` cycles.
    pub(crate) fn niu_slot(&mut self, tile: TileIx, noc: u8, t: u64, busy: u64) -> u64 {
        let niu = &mut self.tiles[tile as usize].niu[noc as usize];
        let start = t.max(niu.free_at);
        niu.free_at = start + busy;
        start + self.cfg.timing.issue_latency
    }

    /// The Tensix destinations of a multicast from `src` to raw rectangle `start..end` on `noc`
    /// (wrapping as the hardware does), without the sender.
    pub(crate) fn multicast_dests(
        &self,
        noc: u8,
        src: TileIx,
        start: (u8, u8),
        end: (u8, u8),
    ) -> Vec<(Target, (u8, u8))> {
        self.tiles
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != src as usize)
            .filter_map(|(i, t)| {
                let r = raw(noc, t.xy0);
                (span(start.0, end.0, r.0) && span(start.1, end.1, r.1))
                    .then_some((Target::L1(i as TileIx), r))
            })
            .collect()
    }
}
