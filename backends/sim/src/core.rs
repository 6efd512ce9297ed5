//! Firmware cores: a baby RISC-V hart ([`crate::riscv`]) executing the image the loader placed
//! in L1, as one task of the executor, with every load and store that leaves its local data RAM
//! carried out on the simulated tile ([`CoreBus`]).
//!
//! What the bus answers:
//! * **L1** (`0x0..0x18_0000`): fetches and data, the same bytes the NoC reads and writes.
//! * **NIU registers** of both NoCs: the command buffers' registers (held in the tile,
//!   `mmio.rs`); writing 1 to `NOC_CMD_CTRL` hands the command to the NoC engine
//!   (`engine.rs`), the same one the native kernels' `SimNoc` drives, so timing, counters and
//!   faults mean the same for both; `NOC_CMD_CTRL` then reads 1 until the NIU's pipeline (read
//!   or write) starts the command, its last packet's if the engine split it, and 0 after (a
//!   command buffer holds one command; writing any of its registers meanwhile stops the core:
//!   ISA `NoC/MemoryMap.md`, "software must not write to any fields of the initiator" until the
//!   NIU took the request), or 1 for ever once a read or unicast write during a
//!   linked run has hung the NIU (the engine records the violation and initiates nothing
//!   more); `NOC_CLEAR_OUTSTANDING_REQ_CNT` (0x60 from the NIU's base, not in the other
//!   command buffers' blocks) zeroes the outstanding-request counters
//!   (`NIU_MST_REQS_OUTSTANDING_ID`: reads and acknowledged writes) of the ids its mask names.
//!   `NOC_NODE_ID`, `NOC_ENDPOINT_ID`,
//!   `NIU_CFG_0` (bit 14 when `SimConfig::translation`), `NOC_ID_LOGICAL`, and the counters
//!   `NIU_MST_WR_ACK_RECEIVED`, `NIU_MST_RD_RESP_RECEIVED`, `NIU_MST_{NON,}POSTED_WR_REQ_SENT`,
//!   `NIU_MST_REQS_OUTSTANDING_ID(id)` (per transaction id, from `NOC_PACKET_TAG`: read packets
//!   not landed and acknowledged write packets issued, less the acks received) and
//!   `NIU_MST_WRITE_REQS_OUTGOING_ID(id)` (write packets issued and not yet departed: a write's
//!   source is read when its packet departs), as ISA `NoC/Counters.md` counts them. Under translation the coordinate words are
//!   translated coordinates (`blackhole_pac::translate`); a multicast's translated corners
//!   bound a raw rectangle, as for the host's windows.
//! * **Overlay stream registers** `tiles_received` / `tiles_acked` of the 64 circular buffers:
//!   the simulator's buffer counters (the host configures the buffer through its back door, as
//!   for the native kernels); a write moves the buffer's pointers by the difference, trips the
//!   push and pop stall faults, and is checked for room as the native `SimCb` checks a push or
//!   pop. A counter says nothing of what the pages hold, so pages a firmware kernel pushes are
//!   data to the overwrite check, padding included (the native `push_padding` marks its pages),
//!   and a push across the buffer's end is the firmware handle's to refuse (it does).
//! * **Tile registers** (`regs.rs`): the wall clock, reset PCs, soft reset (read only here).
//!
//! With `SimConfig::late_core_stores` an L1 store waits in the core's four-entry store queue
//! until a load that overlaps it, a fifth L1 store, or 256 cycles (a core that stops at an
//! `ecall`, `ebreak` or fault still drains it; one a stall fault stops keeps it: the queue lives
//! with the core's task, which never runs again), so an NIU command that reads the stored word
//! without the ISA's read-back rule sends the old bytes.
//!
//! Anything else (an unknown or misaligned register, a sub-word register access, a write to a
//! read-only register, a NoC command the model does not carry out or refuses) stops the core
//! with a [`CoreFault`] naming the tile, the core, the `pc` and the address. Nothing panics.
//!
//! **Time.** The hart counts core cycles by its documented cost rule (`riscv::Cost`; the bus
//! reports L1 loads as 8 cycles and register loads as 7). The task runs [`QUANTUM`] cycles at
//! a time and then yields until the global time reaches its own clock, so events (landings,
//! acks) interleave with execution at that grain; within a slice, its accesses take effect at
//! once at the core's clock, which is at most a slice ahead of the global time (the native
//! kernels' approximation, stated in the crate docs).
//!
//! Uses the world, the engine, the HAL's `KernelEnv`, and leaf modules (`mmio`, `regs`,
//! `riscv`, `report`, `route`).

use std::cell::RefCell;
use std::rc::Rc;

use blackhole_pac::grid::{GRID_X, GRID_Y, Noc0Xy};
use blackhole_pac::niu::{self, Counter, NocCtrl, cmd, request};
use blackhole_pac::stream::{TILES_ACKED_REG, TILES_RECEIVED_REG};
use blackhole_pac::tensix::L1_SIZE;
use blackhole_pac::translate::{TranslatedXy, Translation};
use komorebi_hal::Role;

use crate::engine::{self, Issuer};
use crate::hal::{KernelEnv, Parked, SimCb};
use crate::mmio::{self, CmdBufRegs, Reg};
use crate::niu::Pipe;
use crate::packet::TileIx;
use crate::profile::CoreProfiler;
use crate::report::{CoreFault, Violation};
use crate::riscv::{
    AccessKind, Bus, BusResult, Faster, FaultKind, Hart, HartConfig, NoProbe, Probe, Size, Stop,
};
use crate::route::Grid;
use crate::world::{ProfiledCore, Shared, World};

/// Cycles a firmware core runs before it yields to the event queue.
pub(crate) const QUANTUM: u64 = 32;

/// Entries of a core's store queue (ISA `BabyRISCV/MemoryOrdering.md`).
const STORE_QUEUE: usize = 4;
/// Cycles `SimConfig::late_core_stores` holds a store at most.
const LATE_HOLD: u64 = 256;

/// An L1 store waiting in the core's store queue (`SimConfig::late_core_stores`).
#[derive(Copy, Clone, Debug)]
struct Held {
    addr: u32,
    bytes: [u8; 4],
    len: usize,
    at: u64,
}

/// The hart's view of its tile.
pub(crate) struct CoreBus {
    world: Shared,
    task: usize,
    tile: TileIx,
    translation: Option<Translation>,
    /// Why the last access was refused, when the bus refused one.
    refused: Option<String>,
    /// Hold L1 stores in `queue` (`SimConfig::late_core_stores`).
    late: bool,
    queue: std::collections::VecDeque<Held>,
}

type Refusal = Result<u32, String>;

impl CoreBus {
    /// Raw coordinates on `noc` of a coordinate word's `(x, y)`.
    fn node(&self, noc: u8, xy: (u8, u8)) -> Result<(u8, u8), String> {
        match self.translation {
            Some(t) => TranslatedXy::new(xy.0, xy.1)
                .and_then(|p| t.to_noc0(p))
                .map(|p0| Grid::BLACKHOLE.raw(noc, p0.get()))
                .ok_or_else(|| {
                    format!("translated coordinates {xy:?} name no tile the NoC reaches")
                }),
            None if xy.0 < GRID_X && xy.1 < GRID_Y => Ok(xy),
            None => Err(format!("coordinates {xy:?} are off the 17 x 12 grid")),
        }
    }

    /// This tile's coordinates as a coordinate word names them on `noc`.
    fn own(&self, w: &World, noc: u8) -> (u8, u8) {
        let xy0 = w.tiles[self.tile as usize].xy0;
        match self
            .translation
            .and_then(|t| Noc0Xy::new(xy0.0, xy0.1).and_then(|p| t.tensix_at(p)))
        {
            Some(t) => t,
            None => Grid::BLACKHOLE.raw(noc, xy0),
        }
    }

    /// `NOC_ID_LOGICAL`: translated coordinates under translation, raw NoC0 otherwise.
    fn logical_id(&self, w: &World) -> u32 {
        let (x, y) = self.own(w, 0);
        x as u32 | (y as u32) << 6
    }

    /// Carries out the command in command buffer `buf` of NIU `noc` at cycle `at`; the NIU
    /// pipeline that takes it (reads the read pipeline, every other request the write one).
    fn send(&self, w: &mut World, noc: u8, buf: usize, at: u64) -> Result<Pipe, String> {
        let c = w.tiles[self.tile as usize].cmd_bufs[noc as usize][buf].command();
        let by = Issuer {
            tile: self.tile,
            noc,
            now: at,
        };
        let ctrl: NocCtrl = c.ctrl;
        let own = self.own(w, noc);
        let unsupported = ctrl.wr_inline()
            || ctrl.wr_be()
            || ctrl.l1_acc_at_en()
            || (!ctrl.brcst_packet() && (ctrl.vc_linked() || ctrl.brcst_src_include()));
        if unsupported {
            return Err(format!(
                "NOC_CTRL {:#010x}: inline, byte-enable, accumulate and linked or \
                 source-include unicast requests are not modelled",
                ctrl.0
            ));
        }
        let refused = |e: crate::hal::NocError| e.what;
        match ctrl.request_type() {
            request::READ => {
                if mmio::unicast_xy(c.ret.0) != own {
                    return Err("a read's NOC_RET_ADDR must be this tile".into());
                }
                let src = self.node(noc, mmio::unicast_xy(c.targ.0))?;
                engine::read(w, by, (src, c.targ.1), c.ret.1 as u32, c.len, c.id)
                    .map(|()| Pipe::Read)
                    .map_err(refused)
            }
            request::WRITE => {
                if mmio::unicast_xy(c.targ.0) != own {
                    return Err("a write's NOC_TARG_ADDR must be this tile".into());
                }
                if c.ret.1 > u32::MAX as u64 && ctrl.brcst_packet() {
                    return Err("a multicast's destination must be in L1".into());
                }
                if ctrl.brcst_packet() {
                    if !ctrl.resp_marked() {
                        return Err(
                            "posted multicast is broken on Blackhole: set NOC_CMD_RESP_MARKED"
                                .into(),
                        );
                    }
                    let (s, e) = mmio::multicast_xy(c.ret.0);
                    let corners = (self.node(noc, s)?, self.node(noc, e)?);
                    engine::multicast(
                        w,
                        by,
                        c.targ.1 as u32,
                        corners,
                        c.ret.1 as u32,
                        c.len,
                        engine::McastMode {
                            ordered: ctrl.vc_static(),
                            linked: ctrl.vc_linked(),
                            loopback: ctrl.brcst_src_include(),
                        },
                        c.id,
                    )
                    .map(|()| Pipe::Write)
                    .map_err(refused)
                } else {
                    let dst = self.node(noc, mmio::unicast_xy(c.ret.0))?;
                    engine::write(
                        w,
                        by,
                        c.targ.1 as u32,
                        (dst, c.ret.1),
                        c.len,
                        ctrl.resp_marked(),
                        ctrl.vc_static(),
                        c.id,
                    )
                    .map(|()| Pipe::Write)
                    .map_err(refused)
                }
            }
            t => Err(format!("request type {t} (atomics) is not modelled")),
        }
    }

    fn read_reg(&self, w: &mut World, reg: Reg, at: u64) -> Refusal {
        let tile = &w.tiles[self.tile as usize];
        match reg {
            Reg::Cmd { noc, buf, offset } => {
                let o = offset as usize;
                if CmdBufRegs::stored(offset) {
                    return Ok(tile.cmd_bufs[noc as usize][buf as usize].get(offset));
                }
                match o {
                    // 0 once the NIU's pipeline took the command (a command buffer holds
                    // one command: the next waits); 1 for ever on a hung NIU, whose requests
                    // are never initiated.
                    cmd::NOC_CMD_CTRL => {
                        let held = at < tile.cmd_bufs[noc as usize][buf as usize].taken_at;
                        Ok(u32::from(
                            held || tile.niu[noc as usize].stuck_bufs >> buf & 1 != 0,
                        ))
                    }
                    cmd::NOC_NODE_ID => {
                        let (x, y) = Grid::BLACKHOLE.raw(noc, tile.xy0);
                        let x_first = u32::from(noc == 0);
                        Ok(x as u32 | (y as u32) << 6 | 17 << 12 | 12 << 19 | x_first << 28)
                    }
                    cmd::NOC_ENDPOINT_ID => {
                        Ok((blackhole_pac::niu::endpoint::TENSIX as u32) << 8 | (noc as u32) << 24)
                    }
                    _ => Err(format!(
                        "NIU{noc} command buffer {buf} register {offset:#x}"
                    )),
                }
            }
            Reg::Cfg { noc, index } => match index as usize {
                blackhole_pac::niu::cfg::NIU_CFG_0 => {
                    Ok(u32::from(self.translation.is_some()) << 14)
                }
                blackhole_pac::niu::cfg::NOC_ID_LOGICAL => Ok(self.logical_id(w)),
                _ => Err(format!("NIU{noc} NOC_CFG({index:#x}) is not modelled")),
            },
            Reg::Status { noc, index } => {
                let n = &tile.niu[noc as usize];
                match index {
                    i if i == Counter::MstWrAckReceived as u32 => Ok(n.acks_received),
                    i if i == Counter::MstRdRespReceived as u32 => Ok(n.reads_done),
                    i if i == Counter::MstNonpostedWrReqSent as u32 => Ok(n.nonposted_sent),
                    i if i == Counter::MstPostedWrReqSent as u32 => Ok(n.posted_sent),
                    // REQS_OUTSTANDING_ID(id) and WRITE_REQS_OUTGOING_ID(id): 8 bits each.
                    i @ 0x10..=0x1F => Ok(n.outstanding[i as usize - 0x10] & 0xFF),
                    i @ 0x20..=0x2F => Ok(n.writes_outgoing[i as usize - 0x20] & 0xFF),
                    _ => Err(format!(
                        "NIU{noc} status counter {index:#x} is not modelled"
                    )),
                }
            }
            Reg::Stream { stream, index } => {
                let cb = tile.cbs.get(stream as usize).and_then(|c| c.as_ref());
                match index as usize {
                    TILES_RECEIVED_REG => Ok(cb.map_or(0, |c| c.pushed as u32)),
                    TILES_ACKED_REG => Ok(cb.map_or(0, |c| c.popped as u32)),
                    _ => Err(format!("stream {stream} register {index} is not modelled")),
                }
            }
            Reg::Tile(addr) => {
                let id = self.logical_id(w);
                w.tiles[self.tile as usize]
                    .regs
                    .read(addr, at, id)
                    .ok_or_else(|| format!("tile register {addr:#x} is not modelled"))
            }
        }
    }

    fn write_reg(&self, w: &mut World, reg: Reg, value: u32, at: u64) -> Result<(), String> {
        match reg {
            Reg::Cmd { noc, buf, offset }
                if (CmdBufRegs::stored(offset) || offset as usize == cmd::NOC_CMD_CTRL)
                    && at
                        < w.tiles[self.tile as usize].cmd_bufs[noc as usize][buf as usize]
                            .taken_at =>
            {
                let taken =
                    w.tiles[self.tile as usize].cmd_bufs[noc as usize][buf as usize].taken_at;
                Err(format!(
                    "NIU{noc} command buffer {buf}: register {offset:#x} written at cycle {at} \
                     while its last command is held until cycle {taken} (NOC_CMD_CTRL reads 1 \
                     until the NIU takes it; ISA NoC/MemoryMap.md: software must not write to \
                     any fields of the initiator until then)"
                ))
            }
            Reg::Cmd { noc, buf, offset } if CmdBufRegs::stored(offset) => {
                w.tiles[self.tile as usize].cmd_bufs[noc as usize][buf as usize].set(offset, value);
                Ok(())
            }
            Reg::Cmd { noc, buf, offset } if offset as usize == cmd::NOC_CMD_CTRL => {
                if value & 1 == 0 {
                    return Ok(());
                }
                w.sched.tasks[self.task].local = at;
                let slots = w.tiles[self.tile as usize].niu[noc as usize].slots;
                let pipe = self.send(w, noc, buf as usize, at)?;
                let tile = &mut w.tiles[self.tile as usize];
                let niu = &mut tile.niu[noc as usize];
                // Held until its pipeline starts it (its last packet, if the engine split it);
                // a command that sent no packet (a multicast to no receivers, a hung NIU's) is
                // not held by another's.
                tile.cmd_bufs[noc as usize][buf as usize].taken_at = match niu.slots != slots {
                    true => niu.started[pipe as usize],
                    false => at,
                };
                if niu.hung {
                    niu.stuck_bufs |= 1 << buf;
                }
                Ok(())
            }
            // At the NIU's base + 0x60 only (ISA `NoC/MemoryMap.md`): the other command
            // buffers' blocks have no such register, and a write there is refused below.
            Reg::Cmd {
                noc,
                buf: 0,
                offset,
            } if offset as usize == niu::NOC_CLEAR_OUTSTANDING_REQ_CNT => {
                // A mask of the transaction ids whose `NIU_MST_REQS_OUTSTANDING_ID` to zero.
                let niu = &mut w.tiles[self.tile as usize].niu[noc as usize];
                for (id, count) in niu.outstanding.iter_mut().enumerate() {
                    if value >> id & 1 != 0 {
                        *count = 0;
                    }
                }
                Ok(())
            }
            Reg::Stream { stream, index }
                if [TILES_RECEIVED_REG, TILES_ACKED_REG].contains(&(index as usize)) =>
            {
                self.move_pages(w, stream, index as usize == TILES_RECEIVED_REG, value, at)
            }
            reg => Err(format!("{reg:?} is not writable in the model")),
        }
    }

    /// A write of `value` to a buffer's `tiles_received` (`push`) or `tiles_acked`.
    fn move_pages(
        &self,
        w: &mut World,
        index: u8,
        push: bool,
        value: u32,
        at: u64,
    ) -> Result<(), String> {
        let Some(c) = w.tiles[self.tile as usize].cbs[index as usize].as_ref() else {
            // Not configured: the boot's zeroing of every stream's counters, nothing else.
            return if value == 0 {
                Ok(())
            } else {
                Err(format!(
                    "circular buffer {index} is not configured on this tile"
                ))
            };
        };
        let old = if push { c.pushed } else { c.popped };
        let pages = (value as u16).wrapping_sub(old);
        if pages == 0 {
            return Ok(());
        }
        if SimCb::trips(w, self.task, index, pages, push) {
            return Ok(());
        }
        let c = w.tiles[self.tile as usize].cbs[index as usize]
            .as_mut()
            .expect("checked above");
        let room = if push { c.pages - c.ready() } else { c.ready() };
        if pages > room {
            return Err(format!(
                "{} of {pages} pages on circular buffer {index} with {room} {}",
                if push { "push" } else { "pop" },
                if push { "free" } else { "ready" }
            ));
        }
        if push {
            c.pushed = value as u16;
            c.wr = c.step(c.wr, pages);
        } else {
            c.popped = value as u16;
            c.rd = c.step(c.rd, pages);
        }
        w.touch(self.tile, at);
        Ok(())
    }

    /// Lands the oldest `n` held stores, in order.
    fn drain(&mut self, w: &mut World, n: usize) {
        for h in self.queue.drain(..n.min(self.queue.len())) {
            w.tiles[self.tile as usize]
                .l1
                .write(h.addr as u64, &h.bytes[..h.len]);
            w.touch(self.tile, h.at);
        }
    }

    /// Lands the held stores `LATE_HOLD` cycles old by cycle `now`.
    fn drain_due(&mut self, w: &mut World, now: u64) {
        let due = self
            .queue
            .iter()
            .take_while(|h| h.at + LATE_HOLD <= now)
            .count();
        self.drain(w, due);
    }

    fn refuse<T>(&mut self, why: String) -> BusResult<T> {
        self.refused = Some(why);
        BusResult::Fault
    }
}

impl Bus for CoreBus {
    fn fetch(&mut self, addr: u32, _at: u64) -> BusResult<u32> {
        if addr >= L1_SIZE {
            return self.refuse(format!("instruction fetch at {addr:#x}, outside L1"));
        }
        let w = self.world.borrow();
        let value = w.tiles[self.tile as usize].l1.read_u32(addr as u64);
        BusResult::Done { value, cycles: 0 }
    }

    fn load(&mut self, addr: u32, size: Size, at: u64) -> BusResult<u32> {
        let world = self.world.clone();
        let mut w = world.borrow_mut();
        if addr < L1_SIZE {
            self.drain_due(&mut w, at);
            // A load that overlaps a held store waits for it (and, stores leaving in order, for
            // every one before it): the hardware drains "if the load's address overlaps with
            // any address in the store queue"; other loads read what L1 holds.
            let n = size.bytes() as usize;
            let overlaps = |h: &Held| h.addr < addr + n as u32 && addr < h.addr + h.len as u32;
            if let Some(i) = self.queue.iter().rposition(overlaps) {
                self.drain(&mut w, i + 1);
            }
            let mut b = [0u8; 4];
            w.tiles[self.tile as usize]
                .l1
                .read(addr as u64, &mut b[..n]);
            return BusResult::Done {
                value: u32::from_le_bytes(b),
                cycles: w.cfg.core_cost.load_l1,
            };
        }
        let cycles = w.cfg.core_cost.load_mmio;
        let result = match (mmio::decode(addr), size) {
            (Some(reg), Size::Word) => self.read_reg(&mut w, reg, at),
            (Some(_), _) => Err("registers take 32-bit accesses only".to_string()),
            (None, _) => Err("no register at this address".to_string()),
        };
        drop(w);
        match result {
            Ok(value) => BusResult::Done { value, cycles },
            Err(why) => self.refuse(why),
        }
    }

    fn store(&mut self, addr: u32, size: Size, value: u32, at: u64) -> BusResult<()> {
        let world = self.world.clone();
        let mut w = world.borrow_mut();
        if addr < L1_SIZE && self.late {
            self.drain_due(&mut w, at);
            if self.queue.len() == STORE_QUEUE {
                self.drain(&mut w, 1);
            }
            self.queue.push_back(Held {
                addr,
                bytes: value.to_le_bytes(),
                len: size.bytes() as usize,
                at,
            });
            return BusResult::Done {
                value: (),
                cycles: w.cfg.core_cost.store_l1,
            };
        }
        if addr < L1_SIZE {
            let n = size.bytes() as usize;
            w.tiles[self.tile as usize]
                .l1
                .write(addr as u64, &value.to_le_bytes()[..n]);
            w.touch(self.tile, at);
            return BusResult::Done {
                value: (),
                cycles: w.cfg.core_cost.store_l1,
            };
        }
        let cycles = w.cfg.core_cost.store_mmio;
        let result = match (mmio::decode(addr), size) {
            (Some(reg), Size::Word) => self.write_reg(&mut w, reg, value, at),
            (Some(_), _) => Err("registers take 32-bit accesses only".to_string()),
            (None, _) => Err("no register at this address".to_string()),
        };
        drop(w);
        match result {
            Ok(()) => BusResult::Done { value: (), cycles },
            Err(why) => self.refuse(why),
        }
    }
}

/// The firmware core of `env`'s kernel, from `pc`: runs until it faults (recorded in the
/// world's core faults) or its task is dropped (the core put back into reset).
pub(crate) async fn run(env: KernelEnv, pc: u32) {
    let (world, task, tile, kernel) = (env.world, env.task, env.tile, env.kernel);
    let (translation, config, late) = {
        let w = world.borrow();
        let t = w.cfg.noc_translation();
        let mut c = match kernel {
            Role::Compute => HartConfig::compute(0, pc),
            _ => HartConfig::data_movement(0, pc),
        };
        // A Blackhole core's (`Sim::spawn_firmware` refuses a simulated Wormhole: its cores'
        // costs, caches and local RAM are not modelled; ttsim runs the Wormhole images).
        c.cost = w.cfg.core_cost;
        (t, c, w.cfg.late_core_stores)
    };
    let speed_up = world.borrow().cfg.speed_up.clone();
    let profiler = {
        let mut w = world.borrow_mut();
        w.cfg.profile_cores.then(|| {
            let profiler = Rc::new(RefCell::new(CoreProfiler::default()));
            let tile = w.tiles[tile as usize].xy0;
            w.profiles.push(ProfiledCore {
                tile,
                kernel,
                profiler: profiler.clone(),
            });
            profiler
        })
    };
    let mut hart = Hart::new(config);
    // The hart's clock starts where its task does, unseen by the profiler: the cycles before
    // the core was released are not its stalls.
    hart.stall_until(world.borrow().sched.tasks[task].local);
    let mut counted = 0;
    // Whether this core's first L1 load with its L0 data cache on was recorded.
    let mut l0_flagged = false;
    let mut bus = CoreBus {
        world: world.clone(),
        task,
        tile,
        translation,
        refused: None,
        late,
        queue: Default::default(),
    };
    loop {
        let start = {
            let w = world.borrow();
            if w.stalled(task) {
                // A stall fault: the core stops making progress, as a hung core would.
                return;
            }
            w.sched.tasks[task].local
        };
        // Without a profiler or a what-if the hart runs its loop with no observer at all.
        let until = start + QUANTUM;
        let stop = match (&profiler, &speed_up) {
            (None, None) => run_slice(&mut hart, &mut bus, start, until, NoProbe),
            (Some(p), None) => run_slice(&mut hart, &mut bus, start, until, &mut *p.borrow_mut()),
            (None, Some(s)) => {
                let probe = Faster {
                    probe: NoProbe,
                    speed_up: s,
                };
                run_slice(&mut hart, &mut bus, start, until, probe)
            }
            (Some(p), Some(s)) => {
                let probe = Faster {
                    probe: &mut *p.borrow_mut(),
                    speed_up: s,
                };
                run_slice(&mut hart, &mut bus, start, until, probe)
            }
        };
        let fault = match stop {
            Stop::Cycle | Stop::Retry { .. } => None,
            Stop::Ecall { pc } | Stop::Ebreak { pc } => {
                Some((pc, None, "ecall or ebreak: the core paused".to_string()))
            }
            Stop::Fault(f) => Some(match f.kind {
                FaultKind::Bus { addr, access } => {
                    let why = bus.refused.take().unwrap_or_default();
                    (f.pc, Some(addr), format!("{}: {why}", access_name(access)))
                }
                FaultKind::Misaligned { addr, access } => (
                    f.pc,
                    Some(addr),
                    format!("misaligned {}", access_name(access)),
                ),
                FaultKind::IllegalInstruction { word } => {
                    (f.pc, None, format!("illegal instruction {word:#010x}"))
                }
                FaultKind::FetchOutsideCode => (f.pc, Some(f.pc), "fetch outside L1".into()),
            }),
        };
        let stopped = {
            let mut w = world.borrow_mut();
            w.sched.tasks[task].local = hart.cycle();
            w.stats.instructions += hart.instret() - counted;
            counted = hart.instret();
            if hart.l1_loads_with_l0_on() > 0 && !l0_flagged {
                l0_flagged = true;
                let tile = w.tiles[tile as usize].xy0;
                w.violations.push(Violation::LoadWithL0DataCacheOn {
                    tile,
                    kernel: kernel.name(),
                    time: hart.cycle(),
                });
            }
            if let Some((pc, addr, what)) = fault {
                // A stopped core's store queue still drains into L1.
                bus.drain(&mut w, usize::MAX);
                let xy0 = w.tiles[tile as usize].xy0;
                w.core_faults.push(CoreFault {
                    tile: xy0,
                    kernel,
                    pc,
                    addr,
                    what,
                    at: hart.cycle(),
                });
                true
            } else {
                bus.drain_due(&mut w, hart.cycle());
                w.park(task, hart.cycle(), true);
                false
            }
        };
        if stopped {
            return;
        }
        Parked(false).await;
    }
}

/// One slice of a core's run, from `start` (its task's clock) to `until`, told to `probe`.
fn run_slice<P: Probe>(
    hart: &mut Hart,
    bus: &mut CoreBus,
    start: u64,
    until: u64,
    mut probe: P,
) -> Stop {
    hart.stall_until_probed(start, &mut probe);
    hart.run_probed(bus, until, &mut probe)
}

fn access_name(a: AccessKind) -> &'static str {
    match a {
        AccessKind::Fetch => "fetch",
        AccessKind::Load(_) => "load",
        AccessKind::Store(_) => "store",
    }
}
