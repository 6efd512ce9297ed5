//! The simulated chip as one state: the tiles, the DRAM banks, the links, the scheduler, the
//! faults, the trace and what the run reports; and the NoC's transactions from the moment a
//! packet leaves its NIU to the moment it lands (writes, multicasts, acks, reads and their
//! responses), timed along `link`'s reservations.
//!
//! Everything happens in one thread in virtual time. The HAL handles (`hal`) and the host
//! (`Sim`) hold the world and call into it; the world uses its parts (`tile`, `niu`, `link`,
//! `dram`, `scheduler`) and the leaf modules, never the HAL or the host.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::arc::ArcState;
use crate::config::ChipModel;
use crate::config::{SimConfig, SourceRead};
use crate::dram::Dram;
use crate::fault::{Faults, TxKind};
use crate::link::{Crossed, Links, ROOT, Route};
use crate::memory::FastHash;
use crate::niu::Pipe;
use crate::packet::{Item, NO_TILE, ReadPacket, Target, TileIx, Vc, WritePacket};
use crate::profile::CoreProfiler;
use crate::report::{CoreFault, Stats, Violation};
use crate::rng::SplitMix64;

use crate::scheduler::Scheduler;
use crate::tile::Tiles;
use crate::trace::Trace;
use komorebi_hal::Role;

/// The world as the HAL handles and the host share it (one thread).
pub(crate) type Shared = Rc<RefCell<World>>;

/// What a packet in the NoC carries, and where it came from.
#[derive(Debug)]
enum Carried {
    /// A write or multicast with its bytes, read from the source when it left.
    Write(Box<WritePacket>, Rc<[u8]>),
    /// A read request on its way to the data.
    Request(Box<ReadPacket>),
    /// A read response with the bytes.
    Response(Box<ReadPacket>, Rc<[u8]>),
}

/// A packet in the NoC: its route, what it carries, when it leaves its source's router (after
/// the path reservation), and what is left of it.
#[derive(Debug)]
struct Worm {
    route: Route,
    carried: Carried,
    /// Cycles from winning the reservation to the data leaving (the NIU's reservation time
    /// plus the NIU-to-router hop).
    lead: u64,
    /// Hops not crossed yet.
    hops_left: usize,
    /// The latest commit of any destination (for the trace).
    last: u64,
}

/// The whole simulated chip.
pub(crate) struct World {
    pub cfg: SimConfig,
    /// Time of the item being processed.
    pub now: u64,
    pub tiles: Tiles,
    pub dram: Dram,
    /// ARC's message queues and the clock its telemetry reports.
    pub arc: ArcState,
    links: Links,
    /// Packets in the NoC, by id (`Item::Reserve`, `Item::Launch`, `Item::Hop`); `None`: a
    /// free id.
    worms: Vec<Option<Worm>>,
    free_worms: Vec<u32>,
    /// The last linked run's number.
    runs: u32,
    /// Packets released from waiting by a link (scratch).
    woken: Vec<u32>,
    /// The event queue and the tasks.
    pub sched: Scheduler,
    flows: HashMap<(u64, TileIx), u64, FastHash>,
    pub faults: Faults,
    pub trace: Option<Trace>,
    pub violations: Vec<Violation>,
    /// Firmware cores stopped by a fault (`core.rs`).
    pub core_faults: Vec<CoreFault>,
    /// The profilers of the firmware cores (`SimConfig::profile_cores`), in spawn order.
    pub profiles: Vec<ProfiledCore>,
    /// What the native kernels logged (`kernel_log`), in the order they logged it.
    pub kernel_logs: Vec<crate::report::KernelLogLine>,
    pub stats: Stats,
    /// The chip the world models.
    pub chip: ChipModel,
}

/// A firmware core's profiler, shared with its task.
pub(crate) struct ProfiledCore {
    pub tile: (u8, u8),
    pub kernel: Role,
    pub profiler: Rc<RefCell<CoreProfiler>>,
}

impl World {
    pub(crate) fn new(cfg: SimConfig) -> Self {
        let rng = SplitMix64::new(cfg.seed ^ 0x9E37_79B9_7F4A_7C15);
        let trace = cfg.trace.then(Trace::default);
        let chip = cfg.chip_model();
        Self {
            now: 0,
            tiles: Tiles::new(&chip, cfg.boot.soft_reset()),
            dram: Dram::new(&chip),
            arc: ArcState::new(),
            links: Links::new(cfg.timing.router_hop, chip.grid),
            worms: Vec::new(),
            free_worms: Vec::new(),
            runs: 0,
            woken: Vec::new(),
            sched: Scheduler::new(cfg.adversarial, rng),
            flows: HashMap::default(),
            faults: Faults::default(),
            trace,
            violations: Vec::new(),
            core_faults: Vec::new(),
            profiles: Vec::new(),
            kernel_logs: Vec::new(),
            stats: Stats::default(),
            chip,
            cfg,
        }
    }

    // ---- the event queue and the tasks -----------------------------------------------------

    pub(crate) fn push(&mut self, time: u64, item: Item) {
        self.sched.push(time, item);
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, Item)> {
        let (time, item) = self.sched.pop()?;
        self.now = self.now.max(time);
        self.stats.events += 1;
        Some((time, item))
    }

    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.sched.peek_time()
    }

    fn jitter(&mut self) -> u64 {
        self.sched.jitter(self.cfg.jitter_cycles)
    }

    /// Parks `task` until a change to its tile (unless `sleeping`) or `deadline` (see
    /// `Scheduler::park`).
    pub(crate) fn park(&mut self, task: usize, deadline: u64, sleeping: bool) -> u64 {
        let (epoch, waits_on) = self.sched.park(task, deadline, sleeping);
        if let Some(tile) = waits_on {
            self.tiles[tile as usize].waiters.push(task);
        }
        epoch
    }

    /// A `Deadline` entry of `task` came at `time`: the wake-up to run, if any.
    pub(crate) fn deadline_due(&mut self, task: usize, time: u64) -> Option<u64> {
        self.sched.deadline_due(task, time)
    }

    /// Wakes every parked (not sleeping) task of `tile` at `time` or its own clock.
    pub(crate) fn touch(&mut self, tile: TileIx, time: u64) {
        self.sched
            .wake(&mut self.tiles[tile as usize].waiters, time);
    }

    /// Stalls `task` from cycle `at` on (at once if `at` has passed).
    pub(crate) fn stall_at(&mut self, task: usize, at: u64) {
        self.sched.stall_at(task, at, self.now);
    }

    /// Whether a fault stopped `task`.
    pub(crate) fn stalled(&self, task: usize) -> bool {
        self.sched.stalled(task)
    }

    /// Charges a NoC command's programming time.
    pub(crate) fn charge_issue(&mut self, task: usize) -> u64 {
        self.charge(task, self.cfg.timing.kernel_issue_cycles)
    }

    /// Charges one other HAL call, at the rate of the calling kernel's kind.
    pub(crate) fn charge_call(&mut self, task: usize) -> u64 {
        let t = &self.cfg.timing;
        let cycles = match self.sched.tasks[task].kernel {
            Role::Compute => t.compute_call_cycles,
            Role::Reader | Role::Writer => t.kernel_call_cycles,
        };
        self.charge(task, cycles)
    }

    /// Adds `cycles` to a task's clock and returns the new time.
    pub(crate) fn charge(&mut self, task: usize, cycles: u64) -> u64 {
        self.sched.charge(task, cycles, self.now)
    }

    /// When an NIU's pipeline `pipe` takes a command issued at `t` that occupies it `busy`
    /// cycles.
    pub(crate) fn niu_slot(&mut self, tile: TileIx, noc: u8, pipe: Pipe, t: u64, busy: u64) -> u64 {
        let latency = self.cfg.timing.issue_latency;
        self.tiles[tile as usize].niu[noc as usize].slot(pipe, t, busy, latency)
    }

    /// A new linked run's number.
    pub(crate) fn next_run(&mut self) -> u32 {
        self.runs += 1;
        self.runs
    }

    // ---- ejection and DRAM -----------------------------------------------------------------

    /// When a packet whose head and tail reach `target`'s router at `at` has committed its
    /// last byte.
    fn eject(&mut self, target: Target, noc: u8, at: Crossed, flits: u64) -> u64 {
        let niu = self.cfg.timing.niu_hop;
        let (head, tail) = (at.head + niu, at.tail + niu);
        match target {
            Target::L1(tile) => self.tiles[tile as usize].eject(noc, head, tail, flits),
            Target::Dram(_) => (head + flits - 1).max(tail),
        }
    }

    /// DRAM bank `bank` serves `len` bytes at `addr` from `t`; returns when they are done.
    fn dram_service(&mut self, bank: u8, addr: u64, len: u32, t: u64) -> u64 {
        let timing = self.cfg.timing;
        let rate = (timing.dram_bank_bytes_per_cycle, timing.dram_row_bytes);
        self.dram.service((bank, addr), len, t, rate)
    }

    // ---- the NoC's events ------------------------------------------------------------------

    /// Handles a non-wake item at `time`.
    pub(crate) fn handle(&mut self, time: u64, item: Item) {
        match item {
            // Wake-ups and host writes are the executor's (`Sim`).
            Item::Wake { .. } | Item::Deadline { .. } | Item::HostWrite { .. } => {}
            Item::DepartWrite(p) => self.depart_write(time, *p),
            Item::DepartRead(p) => self.depart_read(time, *p),
            Item::Commit {
                target,
                addr,
                data,
                src,
            } => self.commit(time, target, addr, &data, src),
            Item::Reserve { worm } => self.reserve(time, worm),
            Item::Launch { worm } => self.launch(time, worm),
            Item::Hop { worm, hop } => self.hop(time, worm, hop),
            Item::Ack {
                tile,
                noc,
                slotted,
                id,
            } => {
                // An ack is one flit through the ejection port, between the data it passes:
                // it takes the port's next free cycle and is counted then.
                let t = &mut self.tiles[tile as usize];
                if !slotted {
                    let port = &mut t.eject_free[noc as usize];
                    let at = time.max(*port);
                    *port = at + 1;
                    if at > time {
                        let slotted = true;
                        self.push(
                            at,
                            Item::Ack {
                                tile,
                                noc,
                                slotted,
                                id,
                            },
                        );
                        return;
                    }
                }
                t.niu[noc as usize].take_ack(id);
                self.touch(tile, time);
            }
            Item::ReadServe(p) => self.read_serve(time, *p),
            Item::ReadRespond(p) => self.read_respond(time, *p),
            Item::ReadLand {
                tile,
                noc,
                addr,
                data,
                id,
            } => {
                self.tiles[tile as usize].l1.write(addr as u64, &data);
                let niu = &mut self.tiles[tile as usize].niu[noc as usize];
                niu.reads_done = niu.reads_done.wrapping_add(1);
                let outstanding = &mut niu.outstanding[id as usize];
                *outstanding = outstanding.wrapping_sub(1);
                self.stats.deliveries += 1;
                self.touch(tile, time);
            }
        }
    }

    fn depart_write(&mut self, time: u64, mut p: WritePacket) {
        let timing = self.cfg.timing;
        let turn = &mut self.tiles[p.src as usize].niu[p.noc as usize].write_turn;
        p.seq = turn.departed;
        turn.departed += 1;
        // The source bytes are read now, not at issue: a source changed before `writes_sent`
        // delivers the changed bytes, as on Blackhole (`SourceRead::IssueChecked`: the bytes
        // of the issue; both checked modes report the change).
        let mut data = zeroed(p.len);
        self.tiles[p.src as usize]
            .l1
            .read(p.src_addr as u64, fill(&mut data));
        if let Some(at_issue) = &p.at_issue {
            if *at_issue != data {
                self.violations.push(Violation::SourceChangedInFlight {
                    tile: self.tiles[p.src as usize].xy0,
                    addr: p.src_addr,
                    issued: p.issued_at,
                    time,
                });
            }
            if self.cfg.source_read == SourceRead::IssueChecked {
                data = at_issue.clone();
            }
        }
        self.tiles[p.src as usize].niu[p.noc as usize].write_sent(p.acked, p.id);
        self.touch(p.src, time);
        let flits = timing.flits(p.len);
        self.stats.packets += 1;
        self.stats.flits += flits;
        let from = self.tiles.grid.raw(p.noc, self.tiles[p.src as usize].xy0);
        let route = if p.multicast {
            let dests: Vec<(u8, u8)> = p.dests.iter().map(|&(_, d)| d).collect();
            self.links.multicast(p.noc, from, &dests, flits, p.hold)
        } else {
            self.links
                .unicast(p.noc, from, p.dests[0].1, flits, Vc::Unicast)
        };
        let lead = p.reserve + timing.niu_hop;
        let id = self.new_worm(route, Carried::Write(Box::new(p), data), lead);
        self.reserve(time, id);
    }

    /// Files a packet under a free id.
    fn new_worm(&mut self, route: Route, carried: Carried, lead: u64) -> u32 {
        let worm = Worm {
            hops_left: route.len(),
            route,
            carried,
            lead,
            last: 0,
        };
        match self.free_worms.pop() {
            Some(id) => {
                self.worms[id as usize] = Some(worm);
                id
            }
            None => {
                self.worms.push(Some(worm));
                self.worms.len() as u32 - 1
            }
        }
    }

    fn worm(&mut self, id: u32) -> &mut Worm {
        self.worms[id as usize]
            .as_mut()
            .expect("a packet in flight has its id")
    }

    /// Packet `id` asks for its path at `time`: a multicast reserves its tree, or waits for
    /// the run holding a link of it (asked again when that run releases it); the data leaves
    /// `lead` cycles later (the reservation's handshake and the NIU-to-router hop). A write
    /// packet asks only in its turn among its NIU's write packets (`Niu::write_turn`), and
    /// leaves no earlier than the previous one has left whole (`Niu::write_launch_free`).
    fn reserve(&mut self, time: u64, id: u32) {
        let mut next = Some(id);
        while let Some(id) = next.take() {
            let worm = self.worms[id as usize].as_ref().expect("packet in flight");
            let Carried::Write(ref p, _) = worm.carried else {
                self.reserved(time, id);
                continue;
            };
            let (src, noc, seq, multicast) = (p.src as usize, p.noc as usize, p.seq, p.multicast);
            let turn = &mut self.tiles[src].niu[noc].write_turn;
            if seq != turn.next {
                turn.early.insert(seq, id);
                continue;
            }
            if multicast {
                if let Err(link) = self.links.reserve(&worm.route) {
                    self.links.wait(link, id);
                    continue;
                }
            }
            let flits = worm.route.flits;
            let niu = &mut self.tiles[src].niu[noc];
            let at = (time + worm.lead).max(niu.write_launch_free);
            niu.write_launch_free = at + flits;
            niu.write_turn.next += 1;
            next = niu.write_turn.early.remove(&niu.write_turn.next);
            self.launch_at(time, at, id);
        }
    }

    /// A packet that is not a write (a read's request or response) has its path: it leaves
    /// `lead` cycles from now.
    fn reserved(&mut self, time: u64, id: u32) {
        let lead = self.worms[id as usize]
            .as_ref()
            .expect("packet in flight")
            .lead;
        self.launch_at(time, time + lead, id);
    }

    fn launch_at(&mut self, time: u64, at: u64, id: u32) {
        if at == time {
            self.launch(time, id);
        } else {
            self.push(at, Item::Launch { worm: id });
        }
    }

    /// Packet `id`'s head leaves its source's router at `time`: destinations at that router
    /// (loopback) get it there, the first hops are asked for.
    fn launch(&mut self, time: u64, id: u32) {
        let worm = self.worm(id);
        worm.route.tail0 = time + worm.route.flits - 1;
        let at = Crossed {
            head: time,
            tail: worm.route.tail0,
        };
        self.crossed(id, ROOT, at);
    }

    /// The head of packet `id` reaches the router in front of `hop` at `time`.
    fn hop(&mut self, time: u64, id: u32, hop: u16) {
        let mut woken = std::mem::take(&mut self.woken);
        let worm = self.worms[id as usize].as_mut().expect("packet in flight");
        let at = self
            .links
            .enter(&mut worm.route, hop, time, &mut self.stats, &mut woken);
        worm.hops_left -= 1;
        for w in woken.drain(..) {
            self.push(at.tail, Item::Reserve { worm: w });
        }
        self.woken = woken;
        self.crossed(id, hop, at);
    }

    /// Packet `id` has crossed `hop` (`ROOT`: it is at its source's router): its destinations
    /// there get it, the next hops are asked for at `at.head`; a packet with nothing left is
    /// done.
    fn crossed(&mut self, id: u32, hop: u16, at: Crossed) {
        // Out of the slab while its destinations are served, so they borrow it, not copy it.
        let mut worm = self.worms[id as usize].take().expect("packet in flight");
        for &k in worm.route.kids(hop) {
            self.push(at.head, Item::Hop { worm: id, hop: k });
        }
        for &d in worm.route.dests(hop) {
            let commit = self.arrive(&worm, d as usize, at);
            worm.last = worm.last.max(commit);
        }
        if worm.hops_left == 0 {
            self.finish(id, worm);
        } else {
            self.worms[id as usize] = Some(worm);
        }
    }

    /// Destination `d` of `worm` has the head and tail at its router at `at`; returns when it
    /// commits there (writes), or `at.head`.
    fn arrive(&mut self, worm: &Worm, d: usize, at: Crossed) -> u64 {
        let timing = self.cfg.timing;
        let flits = worm.route.flits;
        match &worm.carried {
            Carried::Write(p, data) => self.commit_write(p, d, at, flits, data),
            Carried::Request(p) => {
                let action = self.faults.match_tx(
                    TxKind::Read,
                    p.noc,
                    self.tiles[p.tile as usize].xy0,
                    self.tiles.grid.raw(p.noc, p.src_raw),
                    p.src_addr,
                );
                if !action.drop {
                    let serve = at.head + timing.niu_hop + action.delay;
                    self.push(serve, Item::ReadServe(p.clone()));
                }
                at.head
            }
            Carried::Response(p, data) => {
                let (tile, noc) = (p.tile, p.noc);
                let land = self.eject(Target::L1(tile), noc, at, flits) + self.jitter();
                if let Some(trace) = self.trace.as_mut() {
                    let xy0 = self.tiles[tile as usize].xy0;
                    trace.transfer(
                        noc,
                        tile,
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
                        tile,
                        noc,
                        addr: p.dst_addr,
                        data: data.clone(),
                        id: p.id,
                    },
                );
                land
            }
        }
    }

    /// Destination `d` of write `p` has it at its router at `at`: when it commits (ejection,
    /// DRAM, faults, the ordered flow), and its ack. Returns the commit time.
    fn commit_write(
        &mut self,
        p: &WritePacket,
        d: usize,
        at: Crossed,
        flits: u64,
        data: &Rc<[u8]>,
    ) -> u64 {
        let timing = self.cfg.timing;
        let (target, dest) = p.dests[d];
        let kind = if p.multicast {
            TxKind::Multicast
        } else {
            TxKind::Write
        };
        let src0 = self.tiles[p.src as usize].xy0;
        let from = self.tiles.grid.raw(p.noc, src0);
        let action = self.faults.match_tx(
            kind,
            p.noc,
            src0,
            self.tiles.grid.raw(p.noc, dest),
            p.dst_addr,
        );
        let mut commit = self.eject(target, p.noc, at, flits);
        if let Target::Dram(bank) = target {
            commit = self.dram_service(bank, p.dst_addr, p.len, commit) + timing.dram_write_latency;
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
            let back = self.tiles.grid.hops(dest, from);
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
                    slotted: false,
                    id: p.id,
                },
            );
        }
        commit
    }

    /// Packet `id` has crossed every hop: its trace event, and its id is free again.
    fn finish(&mut self, id: u32, worm: Worm) {
        self.free_worms.push(id);
        if let (Some(trace), Carried::Write(p, _)) = (self.trace.as_mut(), &worm.carried) {
            let what = if p.multicast { "multicast" } else { "write" };
            trace.transfer(
                p.noc,
                p.src,
                self.tiles[p.src as usize].xy0,
                what,
                p.len,
                p.dests.len(),
                p.issued_at,
                worm.last,
                self.cfg.timing.aiclk_mhz,
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
        if let Some(v) = self.tiles[tile as usize].check_overwrite(addr, len, time) {
            self.violations.push(v);
        }
    }

    fn depart_read(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        self.stats.packets += 1;
        self.stats.flits += 1;
        let from = self.tiles.grid.raw(p.noc, self.tiles[p.tile as usize].xy0);
        let route = self.links.unicast(p.noc, from, p.src_raw, 1, Vc::Unicast);
        let id = self.new_worm(route, Carried::Request(Box::new(p)), timing.niu_hop);
        self.reserve(time, id);
    }

    /// A read request reached its target: the response leaves once the L1 or DRAM has the
    /// data (a separate event, so links are reserved in time order).
    fn read_serve(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        let ready = match p.src {
            Target::L1(_) => time + timing.read_turnaround,
            Target::Dram(bank) => {
                self.dram_service(bank, p.src_addr, p.len, time)
                    + timing.read_turnaround
                    + timing.dram_read_latency
            }
        };
        self.push(ready, Item::ReadRespond(Box::new(p)));
    }

    fn read_respond(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        let mut data = zeroed(p.len);
        let buf = fill(&mut data);
        match p.src {
            Target::L1(t) => self.tiles[t as usize].l1.read(p.src_addr, buf),
            Target::Dram(bank) => self.dram[bank as usize].read(p.src_addr, buf),
        }
        let flits = timing.flits(p.len);
        self.stats.flits += flits;
        let to = self.tiles.grid.raw(p.noc, self.tiles[p.tile as usize].xy0);
        let route = self
            .links
            .unicast(p.noc, p.src_raw, to, flits, Vc::Response);
        let id = self.new_worm(route, Carried::Response(Box::new(p), data), timing.niu_hop);
        self.launch(time, id);
    }
}

/// `len` zero bytes to read a packet's data into: one allocation, where a `Vec` turned into an
/// `Rc<[u8]>` costs a second one and a copy of every byte.
fn zeroed(len: u32) -> Rc<[u8]> {
    std::iter::repeat_n(0, len as usize).collect()
}

/// The bytes of data just made by [`zeroed`], not yet shared.
fn fill(data: &mut Rc<[u8]>) -> &mut [u8] {
    Rc::get_mut(data).expect("new packet data is not shared yet")
}
