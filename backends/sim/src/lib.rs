//! # komorebi-sim
//!
//! A deterministic, timed simulator of one Tenstorrent Blackhole chip that implements the
//! komorebi HAL. It is the default backend of every example and test: no Blackhole card is
//! needed.
//!
//! ## What it models
//! * **The chip**: the 17 x 12 NoC0 and NoC1 tori with real raw coordinates; the Tensix tiles of a
//!   harvest mask (default two columns harvested, 120 Tensix); 1536 KiB of L1 per Tensix and
//!   8 DRAM banks of 4 GiB, both sparse (allocated on first write).
//! * **Per Tensix**: NIU0 and NIU1 with Blackhole's counter semantics (reads done; non-posted and
//!   posted writes sent; acks, one per destination of a multicast); up to 64 circular buffers
//!   with pushed/popped counters and both kernels' pointers; the control block in L1 with its
//!   stop flag and wait limit; one clock per kernel.
//! * **The NoC**: dimension-order routing (NoC0 X then Y, NoC1 Y then X, each in the + direction
//!   of its own raw coordinates); multicast to a rectangle with the hardware's wrap semantics
//!   (reversed corners wrap around the torus, so a wrong corner order misdelivers, as on
//!   silicon), the sender excluded, only Tensix tiles receiving, never reads; packets of at most
//!   16 KiB (longer transfers split); link contention per directed link.
//! * **Ordering**: only what the hardware orders: writes of one source on one NoC to one
//!   destination set in the ordered class (static VC) arrive in issue order. With
//!   `SimConfig::adversarial` everything else (relaxed writes, read responses, acks, writes to
//!   other destinations) is delayed by a seeded random amount, and scheduling ties are broken at
//!   random, so unordered things really do come in other orders.
//! * **Hardware bugs as errors**: an inline write to L1 is refused (`HardwareHazard`) and
//!   recorded; a write's source bytes are read when the packet leaves, so changing the source
//!   before `writes_sent` delivers the changed bytes.
//! * **Timing** ([`Timing`]): 64-byte flits, one flit per cycle per link, 9-cycle router hops,
//!   5-cycle NIU hops, issue floors, path reservation per multicast, DRAM 512 GB/s over 8 banks,
//!   AICLK 1.35 GHz; calibrated against tt-metal's measured figures (`tests/calibration.rs`).
//! * **Checks a chip cannot make**: a NoC write onto circular-buffer pages that the consumer has
//!   not popped is a [`Violation`] with tile, buffer, page and cycle.
//! * **Faults** ([`Fault`]): stall a kernel (from a cycle, or at a push/pop count), freeze a
//!   tile, drop or delay one transaction matching a filter.
//! * **Trace**: optional Chrome/Perfetto JSON of every transfer and kernel wait.
//!
//! ## Execution
//! Every kernel of every tile is an `async` task of one single-threaded executor in virtual
//! time. A kernel waiting through `komorebi_hal::wait_until` parks until something on its tile
//! changes or its deadline comes; when every task waits, time jumps to the next event, so a
//! timeout in an idle chip costs one step. The seed fixes every choice: the same seed and
//! inputs give the same run, cycle for cycle.
//!
//! Approximation, stated: a kernel's HAL calls take effect at once, at the kernel's own clock,
//! which can run a few tens of cycles ahead of the global time of the event that woke it.
//!
//! ## Host side
//! The host reads and writes any tile's L1 and DRAM ([`Sim::read_l1`], [`Sim::write_l1`],
//! [`Sim::multicast_l1`], [`Sim::read_dram`], [`Sim::write_dram`]) and the PCIe BAR0/BAR4 TLB
//! windows ([`Sim::bar_write`], [`Sim::bar_read`]), and advances virtual time when it asks to
//! ([`Sim::run_until`]).

// The blocking build of the device crates (the firmware's, decisions D8) turns `Pause::pause`
// and every protocol call into plain fns; the simulator interleaves kernels as async tasks and
// has no such build. Refuse it here, with the reason, rather than at the first mismatched impl.
#[cfg(komorebi_blocking)]
compile_error!(
    "komorebi-sim runs kernels as async tasks; build it without --cfg komorebi_blocking"
);

pub mod config;
pub mod fault;
pub mod hal;
pub mod memory;
pub mod route;
pub mod timing;
mod tlb;
pub mod trace;
mod world;

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Waker};

use komorebi_hal::Role;

pub use config::SimConfig;
pub use fault::{Fault, StallFrom, TxAction, TxFilter, TxKind};
pub use hal::{CbError, CtrlError, KernelEnv, NocError, SimCb, SimCtrl, SimNoc, SimPause};
pub use timing::Timing;
pub use world::{Stats, Violation};

use world::{Item, TaskMeta, TaskState, World};

/// A refused simulator request (host side).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// No enabled Tensix tile at these NoC0 coordinates.
    #[error("no enabled Tensix tile at NoC0 {0:?}")]
    NoTile((u8, u8)),
    /// An access outside L1 or a DRAM bank.
    #[error("{0}")]
    OutOfRange(String),
    /// A circular-buffer configuration that cannot work.
    #[error("{0}")]
    BadBuffer(String),
    /// A BAR access that is not a TLB window or configuration register.
    #[error("{0}")]
    BadBar(String),
}

/// Why [`Sim::run_until`] returned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Nothing is left to happen: every task finished or waits with no deadline.
    Quiescent,
    /// The virtual deadline came.
    Deadline,
    /// The stop condition held.
    Stopped,
}

fn role_name<S: serde::Serializer>(role: &Role, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(role.name())
}

/// A task as diagnostics show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TaskInfo {
    /// Task id.
    pub task: usize,
    /// NoC0 coordinates of its tile.
    pub tile: (u8, u8),
    /// Which kernel (serialized as its name).
    #[serde(serialize_with = "role_name")]
    pub kernel: Role,
    /// Its clock.
    pub local: u64,
    /// `running`, `waiting`, `done` or `stalled`.
    pub state: &'static str,
}

/// A circular buffer as the simulator holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CbState {
    /// L1 address of page 0.
    pub base: u32,
    /// Bytes per page.
    pub page_size: u32,
    /// Pages.
    pub pages: u16,
    /// Pages pushed (wrapping).
    pub pushed: u16,
    /// Pages popped (wrapping).
    pub popped: u16,
    /// The producer's next page.
    pub write_page: u16,
    /// The consumer's oldest page.
    pub read_page: u16,
}

/// One NIU's counters: the hardware's (`NIU_MST_RD_RESP_RECEIVED`,
/// `NIU_MST_(NON)POSTED_WR_REQ_SENT`, `NIU_MST_WR_ACK_RECEIVED`) and the software counts a
/// driver keeps to compare them with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NiuCounters {
    /// Read packets issued.
    pub reads_issued: u32,
    /// Read responses received.
    pub reads_done: u32,
    /// Non-posted write packets issued.
    pub nonposted_writes_issued: u32,
    /// Non-posted write packets sent.
    pub nonposted_writes_sent: u32,
    /// Posted write packets issued.
    pub posted_writes_issued: u32,
    /// Posted write packets sent.
    pub posted_writes_sent: u32,
    /// Acks expected (one per destination of each non-posted packet).
    pub acks_expected: u32,
    /// Acks received.
    pub acks_received: u32,
}

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// One simulated Blackhole chip and its kernels.
pub struct Sim {
    world: Rc<RefCell<World>>,
    tasks: Vec<Option<Task>>,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("now", &self.now())
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl Sim {
    /// A chip as `config` says, at cycle 0, with no kernel.
    pub fn new(config: SimConfig) -> Self {
        Self {
            world: Rc::new(RefCell::new(World::new(config))),
            tasks: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> SimConfig {
        self.world.borrow().cfg.clone()
    }

    /// The global virtual time, in cycles.
    pub fn now(&self) -> u64 {
        self.world.borrow().now
    }

    /// NoC0 coordinates of every enabled Tensix tile (by column, then row).
    pub fn tensix(&self) -> Vec<(u8, u8)> {
        self.world.borrow().tiles.iter().map(|t| t.xy0).collect()
    }

    fn tile(&self, xy0: (u8, u8)) -> Result<u16, SimError> {
        self.world
            .borrow()
            .tile_at0(xy0)
            .ok_or(SimError::NoTile(xy0))
    }

    /// Starts `kernel` on the tile at NoC0 `tile`: `body` gets the kernel's handles and returns
    /// its future, which runs from the current cycle.
    pub fn spawn<F, Fut>(
        &mut self,
        tile: (u8, u8),
        kernel: Role,
        body: F,
    ) -> Result<usize, SimError>
    where
        F: FnOnce(KernelEnv) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let ix = self.tile(tile)?;
        let task = {
            let mut w = self.world.borrow_mut();
            let now = w.now;
            let task = w.tasks.len();
            w.tasks.push(TaskMeta {
                tile: ix,
                kernel,
                local: now,
                state: TaskState::Parked {
                    woken: true,
                    sleeping: false,
                },
                epoch: 0,
                parked_at: now,
                stalled: false,
                deadline: u64::MAX,
                deadline_entry: None,
            });
            w.push(now, Item::Wake { task, epoch: 0 });
            if let Some(trace) = w.trace.as_mut() {
                trace.name_thread(
                    0,
                    task as u32,
                    format!("{kernel:?} ({},{})", tile.0, tile.1),
                );
            }
            task
        };
        let env = KernelEnv {
            world: self.world.clone(),
            task,
            tile: ix,
            kernel,
        };
        self.tasks.push(Some(Box::pin(body(env))));
        Ok(task)
    }

    /// Configures circular buffer `index` of a tile: `pages` pages of `page_size` bytes at L1
    /// `base`. Counters and pointers start at 0.
    pub fn configure_cb(
        &mut self,
        tile: (u8, u8),
        index: u8,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Result<(), SimError> {
        let ix = self.tile(tile)?;
        let bad = |m: String| Err(SimError::BadBuffer(m));
        if index as usize >= blackhole_pac::stream::CIRCULAR_BUFFERS {
            return bad(format!("circular buffer {index} (allowed: 0..=63)"));
        }
        if pages == 0 || page_size == 0 || page_size % 16 != 0 || base % 16 != 0 {
            return bad(format!(
                "circular buffer of {pages} pages of {page_size} bytes at {base:#x} \
                 (allowed: pages >= 1, page size and base multiples of 16)"
            ));
        }
        if base as u64 + pages as u64 * page_size as u64 > blackhole_pac::tensix::L1_SIZE as u64 {
            return bad(format!(
                "circular buffer at {base:#x} of {pages} x {page_size} bytes is beyond L1"
            ));
        }
        let mut w = self.world.borrow_mut();
        w.tiles[ix as usize].cbs[index as usize] = Some(world::Cb {
            base,
            page_size,
            pages,
            pushed: 0,
            popped: 0,
            wr: 0,
            rd: 0,
        });
        Ok(())
    }

    /// Runs until nothing is left to happen, `deadline` (a cycle) comes, or `stop` holds
    /// (checked after every step).
    pub fn run_until(&mut self, deadline: u64, mut stop: impl FnMut(&Sim) -> bool) -> RunOutcome {
        loop {
            let next = self.world.borrow().peek_time();
            match next {
                None => return RunOutcome::Quiescent,
                Some(t) if t > deadline => {
                    let mut w = self.world.borrow_mut();
                    w.now = w.now.max(deadline);
                    return RunOutcome::Deadline;
                }
                Some(_) => self.step(),
            }
            if stop(self) {
                return RunOutcome::Stopped;
            }
        }
    }

    /// Runs until nothing is left to happen or `deadline`.
    pub fn run(&mut self, deadline: u64) -> RunOutcome {
        self.run_until(deadline, |_| false)
    }

    fn step(&mut self) {
        let Some((time, item)) = self.world.borrow_mut().pop() else {
            return;
        };
        let (task, epoch) = match item {
            Item::Wake { task, epoch } => (task, epoch),
            Item::Deadline { task } => match self.world.borrow_mut().deadline_due(task, time) {
                Some(epoch) => (task, epoch),
                None => return,
            },
            item => {
                self.world.borrow_mut().handle(time, item);
                return;
            }
        };
        {
            let mut w = self.world.borrow_mut();
            let t = &w.tasks[task];
            let frozen = w.tiles[t.tile as usize]
                .frozen_from
                .is_some_and(|f| f <= time);
            if t.epoch != epoch
                || !matches!(t.state, TaskState::Parked { .. })
                || t.stalled
                || frozen
            {
                return;
            }
            let parked_at = t.parked_at;
            let t = &mut w.tasks[task];
            t.local = t.local.max(time);
            t.state = TaskState::Running;
            let mhz = w.cfg.timing.aiclk_mhz;
            if let Some(trace) = w.trace.as_mut() {
                if time > parked_at {
                    trace.wait(task, parked_at, time, mhz);
                }
            }
            w.stats.polls += 1;
        }
        let Some(fut) = self.tasks[task].as_mut() else {
            return;
        };
        let mut cx = Context::from_waker(Waker::noop());
        let done = fut.as_mut().poll(&mut cx).is_ready();
        let mut w = self.world.borrow_mut();
        if done {
            w.tasks[task].state = TaskState::Done;
            drop(w);
            self.tasks[task] = None;
        } else if w.tasks[task].state == TaskState::Running {
            // Pending without parking (a foreign future): poll again after a cycle or a change.
            let at = w.tasks[task].local + 1;
            w.park(task, at, false);
        }
    }

    fn check_l1(addr: u32, len: usize) -> Result<(), SimError> {
        if addr as u64 + len as u64 > blackhole_pac::tensix::L1_SIZE as u64 {
            return Err(SimError::OutOfRange(format!(
                "L1 {addr:#x}+{len} is beyond 1536 KiB"
            )));
        }
        Ok(())
    }

    /// Reads L1 of the tile at NoC0 `tile`.
    pub fn read_l1(&self, tile: (u8, u8), addr: u32, buf: &mut [u8]) -> Result<(), SimError> {
        let ix = self.tile(tile)?;
        Self::check_l1(addr, buf.len())?;
        self.world.borrow().tiles[ix as usize]
            .l1
            .read(addr as u64, buf);
        Ok(())
    }

    /// Reads a 32-bit word of L1.
    pub fn read_l1_u32(&self, tile: (u8, u8), addr: u32) -> Result<u32, SimError> {
        let mut b = [0; 4];
        self.read_l1(tile, addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes L1 of the tile at NoC0 `tile`, now; the tile's waiting kernels see it.
    pub fn write_l1(&mut self, tile: (u8, u8), addr: u32, data: &[u8]) -> Result<(), SimError> {
        let ix = self.tile(tile)?;
        Self::check_l1(addr, data.len())?;
        let mut w = self.world.borrow_mut();
        w.tiles[ix as usize].l1.write(addr as u64, data);
        let now = w.now;
        w.touch(ix, now);
        Ok(())
    }

    /// Writes a 32-bit word of L1.
    pub fn write_l1_u32(&mut self, tile: (u8, u8), addr: u32, value: u32) -> Result<(), SimError> {
        self.write_l1(tile, addr, &value.to_le_bytes())
    }

    /// Writes `data` to L1 `addr` of every enabled Tensix tile in the NoC0 rectangle
    /// `start..=end` (as a host multicast through a TLB window does).
    pub fn multicast_l1(
        &mut self,
        start: (u8, u8),
        end: (u8, u8),
        addr: u32,
        data: &[u8],
    ) -> Result<usize, SimError> {
        Self::check_l1(addr, data.len())?;
        let mut w = self.world.borrow_mut();
        let now = w.now;
        let targets: Vec<u16> = w
            .tiles
            .iter()
            .enumerate()
            .filter(|(_, t)| blackhole_pac::addr::rect_contains(start, end, t.xy0.0, t.xy0.1))
            .map(|(i, _)| i as u16)
            .collect();
        for &ix in &targets {
            w.tiles[ix as usize].l1.write(addr as u64, data);
            w.touch(ix, now);
        }
        Ok(targets.len())
    }

    fn check_dram(bank: u8, addr: u64, len: usize) -> Result<(), SimError> {
        if bank as usize >= blackhole_pac::grid::DRAM_BANKS
            || addr + len as u64 > blackhole_pac::grid::DRAM_BANK_SIZE
        {
            return Err(SimError::OutOfRange(format!(
                "DRAM bank {bank} {addr:#x}+{len} (allowed: banks 0..=7, 4 GiB each)"
            )));
        }
        Ok(())
    }

    /// Reads DRAM bank `bank`.
    pub fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), SimError> {
        Self::check_dram(bank, addr, buf.len())?;
        self.world.borrow().dram[bank as usize].read(addr, buf);
        Ok(())
    }

    /// Writes DRAM bank `bank`.
    pub fn write_dram(&mut self, bank: u8, addr: u64, data: &[u8]) -> Result<(), SimError> {
        Self::check_dram(bank, addr, data.len())?;
        self.world.borrow_mut().dram[bank as usize].write(addr, data);
        Ok(())
    }

    /// Injects a fault. Kernel stalls name a kernel that is already spawned on the tile.
    pub fn inject(&mut self, fault: Fault) -> Result<(), SimError> {
        let mut w = self.world.borrow_mut();
        match fault {
            Fault::Transaction { filter, action } => w.faults.add_tx(filter, action),
            Fault::FreezeTile { tile, at } => {
                let ix = w.tile_at0(tile).ok_or(SimError::NoTile(tile))?;
                w.tiles[ix as usize].frozen_from = Some(at);
            }
            Fault::StallKernel { tile, kernel, from } => {
                let ix = w.tile_at0(tile).ok_or(SimError::NoTile(tile))?;
                let tasks: Vec<usize> = (0..w.tasks.len())
                    .filter(|&i| {
                        w.tasks[i].tile == ix
                            && w.tasks[i].kernel == kernel
                            && w.tasks[i].state != TaskState::Done
                    })
                    .collect();
                if tasks.is_empty() {
                    return Err(SimError::NoTile(tile));
                }
                for task in tasks {
                    match from {
                        StallFrom::Time(at) => {
                            // A stall in the future: a sleeping wake-up that marks the task.
                            w.stall_at(task, at);
                        }
                        ref trigger => w.faults.stalls.push((task, trigger.clone())),
                    }
                }
            }
        }
        Ok(())
    }

    /// Disarms every transaction fault that has not fired yet, and every pending stall trigger.
    pub fn clear_faults(&mut self) {
        self.world.borrow_mut().faults = fault::Faults::default();
    }

    /// Transaction faults that have fired so far.
    pub fn faults_fired(&self) -> usize {
        self.world.borrow().faults.fired()
    }

    /// Protocol violations seen so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.world.borrow().violations.clone()
    }

    /// Counts of what happened so far.
    pub fn stats(&self) -> Stats {
        self.world.borrow().stats.clone()
    }

    /// The trace so far (when `SimConfig::trace` is on) as Chrome/Perfetto JSON.
    pub fn trace_json(&self) -> Option<serde_json::Value> {
        self.world.borrow().trace.as_ref().map(|t| t.to_json())
    }

    /// Every task's state.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        let w = self.world.borrow();
        w.tasks
            .iter()
            .enumerate()
            .map(|(task, t)| TaskInfo {
                task,
                tile: w.tiles[t.tile as usize].xy0,
                kernel: t.kernel,
                local: t.local,
                state: if t.stalled {
                    "stalled"
                } else {
                    match t.state {
                        TaskState::Running => "running",
                        TaskState::Parked { .. } => "waiting",
                        TaskState::Done => "done",
                    }
                },
            })
            .collect()
    }

    /// The counters of the NIU of NoC `noc` (0 or 1) of the tile at NoC0 `tile`.
    pub fn niu(&self, tile: (u8, u8), noc: u8) -> Result<NiuCounters, SimError> {
        let ix = self.tile(tile)?;
        let w = self.world.borrow();
        let n = &w.tiles[ix as usize].niu[(noc & 1) as usize];
        Ok(NiuCounters {
            reads_issued: n.reads_issued,
            reads_done: n.reads_done,
            nonposted_writes_issued: n.nonposted_issued,
            nonposted_writes_sent: n.nonposted_sent,
            posted_writes_issued: n.posted_issued,
            posted_writes_sent: n.posted_sent,
            acks_expected: n.acks_expected,
            acks_received: n.acks_received,
        })
    }

    /// The state of circular buffer `index` of the tile at NoC0 `tile`, if configured.
    pub fn cb_state(&self, tile: (u8, u8), index: u8) -> Result<Option<CbState>, SimError> {
        let ix = self.tile(tile)?;
        let w = self.world.borrow();
        let cb = w.tiles[ix as usize]
            .cbs
            .get(index as usize)
            .and_then(|c| c.as_ref());
        Ok(cb.map(|c| CbState {
            base: c.base,
            page_size: c.page_size,
            pages: c.pages,
            pushed: c.pushed,
            popped: c.popped,
            write_page: c.wr,
            read_page: c.rd,
        }))
    }

    /// True when every spawned task has returned.
    pub fn all_done(&self) -> bool {
        self.tasks.iter().all(Option::is_none)
    }
}
