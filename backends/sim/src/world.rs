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

use crate::config::{SimConfig, SourceRead};
use crate::dram::Dram;
use crate::fault::{Faults, TxKind};
use crate::link::Links;
use crate::memory::FastHash;
use crate::packet::{Item, NO_TILE, ReadPacket, Target, TileIx, Vc, WritePacket};
use crate::report::{CoreFault, Stats, Violation};
use crate::rng::SplitMix64;
use crate::route::{self, raw};
use crate::scheduler::Scheduler;
use crate::tile::Tiles;
use crate::trace::Trace;

/// The world as the HAL handles and the host share it (one thread).
pub(crate) type Shared = Rc<RefCell<World>>;

/// The whole simulated chip.
pub(crate) struct World {
    pub cfg: SimConfig,
    /// Time of the item being processed.
    pub now: u64,
    pub tiles: Tiles,
    pub dram: Dram,
    links: Links,
    /// The event queue and the tasks.
    pub sched: Scheduler,
    flows: HashMap<(u64, TileIx), u64, FastHash>,
    pub faults: Faults,
    pub trace: Option<Trace>,
    pub violations: Vec<Violation>,
    /// Firmware cores stopped by a fault (`core.rs`).
    pub core_faults: Vec<CoreFault>,
    pub stats: Stats,
}

impl World {
    pub(crate) fn new(cfg: SimConfig) -> Self {
        let rng = SplitMix64::new(cfg.seed ^ 0x9E37_79B9_7F4A_7C15);
        let trace = cfg.trace.then(Trace::default);
        Self {
            now: 0,
            tiles: Tiles::new(cfg.harvest, cfg.boot.soft_reset()),
            dram: Dram::new(),
            links: Links::new(cfg.timing.router_hop),
            sched: Scheduler::new(cfg.adversarial, rng),
            flows: HashMap::default(),
            faults: Faults::default(),
            trace,
            violations: Vec::new(),
            core_faults: Vec::new(),
            stats: Stats::default(),
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
        let waiters = std::mem::take(&mut self.tiles[tile as usize].waiters);
        self.sched.wake(waiters, time);
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

    /// Charges one other HAL call.
    pub(crate) fn charge_call(&mut self, task: usize) -> u64 {
        self.charge(task, self.cfg.timing.kernel_call_cycles)
    }

    /// Adds `cycles` to a task's clock and returns the new time.
    pub(crate) fn charge(&mut self, task: usize, cycles: u64) -> u64 {
        self.sched.charge(task, cycles, self.now)
    }

    /// When an NIU takes a command issued at `t` that occupies it `busy` cycles.
    pub(crate) fn niu_slot(&mut self, tile: TileIx, noc: u8, t: u64, busy: u64) -> u64 {
        let latency = self.cfg.timing.issue_latency;
        self.tiles[tile as usize].niu[noc as usize].slot(t, busy, latency)
    }

    // ---- ejection and DRAM -----------------------------------------------------------------

    /// When a packet whose head reaches `target`'s router at `t` has committed its last byte.
    fn eject(&mut self, target: Target, noc: u8, t: u64, flits: u64) -> u64 {
        let head = t + self.cfg.timing.niu_hop;
        match target {
            Target::L1(tile) => self.tiles[tile as usize].eject(noc, head, flits),
            Target::Dram(_) => head + flits - 1,
        }
    }

    /// DRAM bank `bank` serves `len` bytes from `t`; returns when they are done.
    fn dram_service(&mut self, bank: u8, len: u32, t: u64) -> u64 {
        let bytes_per_cycle = self.cfg.timing.dram_bank_bytes_per_cycle;
        self.dram.service(bank, len, t, bytes_per_cycle)
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
            Item::Ack { tile, noc } => {
                if let Err(at) = self.tiles[tile as usize].niu[noc as usize].take_ack(time) {
                    self.push(at, Item::Ack { tile, noc });
                    return;
                }
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
        // delivers the changed bytes, as on Blackhole (`SourceRead::IssueChecked`: the bytes
        // of the issue; both checked modes report the change).
        let mut buf = vec![0u8; p.len as usize];
        self.tiles[p.src as usize]
            .l1
            .read(p.src_addr as u64, &mut buf);
        let mut data: Rc<[u8]> = buf.into();
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
        self.tiles[p.src as usize].niu[p.noc as usize].write_sent(p.acked);
        self.touch(p.src, time);
        let flits = timing.flits(p.len);
        self.stats.packets += 1;
        self.stats.flits += flits;
        let from = raw(p.noc, self.tiles[p.src as usize].xy0);
        let start = time + p.reserve + timing.niu_hop;
        let heads = if p.multicast {
            self.links
                .route_multicast(p.noc, from, &p.dests, start, flits, &mut self.stats)
        } else {
            let to = p.dests[0].1;
            vec![self.links.route_unicast(
                p.noc,
                from,
                to,
                start,
                flits,
                Vc::Unicast,
                &mut self.stats,
            )]
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
                let back = route::hops(d, from);
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
        if let Some(v) = self.tiles[tile as usize].check_overwrite(addr, len, time) {
            self.violations.push(v);
        }
    }

    fn depart_read(&mut self, time: u64, p: ReadPacket) {
        let timing = self.cfg.timing;
        self.stats.packets += 1;
        self.stats.flits += 1;
        let from = raw(p.noc, self.tiles[p.tile as usize].xy0);
        let head = self.links.route_unicast(
            p.noc,
            from,
            p.src_raw,
            time + timing.niu_hop,
            1,
            Vc::Unicast,
            &mut self.stats,
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
        let head = self.links.route_unicast(
            p.noc,
            p.src_raw,
            to,
            time + timing.niu_hop,
            flits,
            Vc::Response,
            &mut self.stats,
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
}
