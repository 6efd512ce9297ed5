//! [`Sim`]: the host's handle on one simulated chip, and the executor that runs its kernels.
//!
//! Every kernel of every tile is an `async` task polled here, one at a time, when the
//! scheduler wakes it; between polls the world handles the NoC's events. The host reads and
//! writes L1, DRAM and the PCIe BARs, injects faults, and asks for diagnostics. A soft-reset
//! change a BAR write makes stops a core's task or boots it through the host's boot hook.
//!
//! Uses the world, the HAL handles (to build a kernel's `KernelEnv`), `bar` and leaf modules;
//! nothing of the crate uses this module but the crate root's re-export.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Waker};

use komorebi_hal::Role;
use komorebi_kernel::image::header_addr;

use crate::bar::{Bars, ResetChange, check_dram, check_l1};
use crate::boot::{self, BootFailure, Core};
use crate::config::SimConfig;
use crate::error::SimError;
use crate::fault::{Fault, Faults, StallFrom};
use crate::hal::KernelEnv;
use crate::packet::{Item, TileIx};
use crate::profile::CoreProfile;
use crate::report::{CbState, CoreFault, NiuCounters, Stats, TaskInfo, Violation};
use crate::task::{TaskMeta, TaskState};
use crate::tile::Cb;
use crate::world::{Shared, World};

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

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// What the host registers with [`Sim::set_boot_hook`]: called with the simulator, a tile's
/// NoC0 coordinates and the role of a core released from soft reset with a valid komorebi image,
/// it starts the role's native kernel there ([`Sim::spawn`]) and writes its boot word (a card's).
pub type BootHook = Box<dyn FnMut(&mut Sim, (u8, u8), Role) -> Result<(), SimError>>;

/// One simulated Blackhole chip and its kernels.
pub struct Sim {
    pub(crate) world: Shared,
    tasks: Vec<Option<Task>>,
    /// The PCIe BARs: the TLB windows' configuration and the host writes in flight.
    bars: Bars,
    boot_hook: Option<BootHook>,
    /// Soft-reset changes still to act on (a boot hook's own BAR writes queue here).
    resets: VecDeque<ResetChange>,
    /// Acting on `resets` (so a hook's writes do not recurse).
    booting: bool,
    boot_failures: Vec<BootFailure>,
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
    /// A chip as `config` says, at cycle 0, with no kernel, or why the simulator cannot run
    /// that configuration ([`SimConfig::check`]).
    pub fn try_new(config: SimConfig) -> Result<Self, SimError> {
        config.check()?;
        crate::kernel_log::install();
        Ok(Self {
            bars: Bars::new(&config),
            world: Rc::new(RefCell::new(World::new(config))),
            tasks: Vec::new(),
            boot_hook: None,
            resets: VecDeque::new(),
            booting: false,
            boot_failures: Vec::new(),
        })
    }

    /// A chip as `config` says, at cycle 0, with no kernel.
    ///
    /// # Panics
    ///
    /// If [`SimConfig::check`] refuses `config` (its defaults and every configuration a
    /// command line builds pass): [`Self::try_new`] returns the refusal instead.
    pub fn new(config: SimConfig) -> Self {
        Self::try_new(config).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The configuration.
    pub fn config(&self) -> SimConfig {
        self.world.borrow().cfg.clone()
    }

    /// The global virtual time, in cycles.
    pub fn now(&self) -> u64 {
        self.world.borrow().now
    }

    /// The chip the simulator models.
    pub fn chip(&self) -> crate::config::ChipModel {
        self.world.borrow().chip.clone()
    }

    fn chip_l1(&self) -> u32 {
        self.world.borrow().chip.l1_size
    }

    /// NoC0 coordinates of every enabled Tensix tile (by column, then row).
    pub fn tensix(&self) -> Vec<(u8, u8)> {
        self.world.borrow().tiles.iter().map(|t| t.xy0).collect()
    }

    fn tile(&self, xy0: (u8, u8)) -> Result<u16, SimError> {
        self.world
            .borrow()
            .tiles
            .at0(xy0)
            .ok_or(SimError::NoTile(xy0))
    }

    /// Starts `kernel` on the tile at NoC0 `tile`: `body` gets the kernel's handles and returns
    /// its future, which runs from the current cycle. It does not look at the tile's
    /// soft-reset bits: with [`crate::Boot::HeldInReset`] the host's boot hook calls it once a
    /// core is released, but a test may call it at any time. Setting the core's soft-reset bit
    /// (through a TLB window) later drops the task.
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
            let task = w.sched.tasks.len();
            w.sched.tasks.push(TaskMeta {
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

    /// Starts the firmware core of `role` on the tile at NoC0 `tile`: a baby RISC-V hart
    /// (`riscv`) that executes whatever the tile's L1 holds, from the core's reset PC now
    /// (BRISC 0x0; NCRISC and TRISC0 their PC registers when the override is set, their default
    /// PCs otherwise), with its loads and stores carried out on the tile (the module docs of
    /// `core.rs`: L1, the NIU registers driving the same NoC engine as the native kernels, the
    /// stream counters, the tile registers). A core that faults stops and is recorded
    /// ([`Sim::core_faults`]). Like [`Sim::spawn`], it does not look at the soft-reset bits.
    /// Refused on a simulated Wormhole (`SimConfig::wormhole`): the core models are Blackhole's.
    pub fn spawn_firmware(&mut self, tile: (u8, u8), role: Role) -> Result<usize, SimError> {
        let ix = self.tile(tile)?;
        let (blackhole, chip) = {
            let w = self.world.borrow();
            (w.chip.is_blackhole(), w.chip.name)
        };
        if !blackhole {
            return Err(SimError::OutOfRange(format!(
                "firmware cores on a simulated {chip}: the cores' NIU and register models are \
                 Blackhole's (allowed: the native kernels)"
            )));
        }
        let pc = self.world.borrow().tiles[ix as usize]
            .regs
            .reset_pc(Core::of_role(role));
        self.spawn(tile, role, move |env| crate::core::run(env, pc))
    }

    /// The profile of every firmware core spawned so far, in spawn order (empty unless
    /// `SimConfig::profile_cores`): what each measured up to now.
    pub fn core_profiles(&self) -> Vec<CoreProfile> {
        self.world
            .borrow()
            .profiles
            .iter()
            .map(|c| {
                let p = c.profiler.borrow();
                CoreProfile {
                    tile: c.tile,
                    kernel: c.kernel,
                    samples: p.samples(),
                    stalled: p.stalled_cycles(),
                    calls: p.calls(),
                }
            })
            .collect()
    }

    /// Every firmware core stopped by a fault so far, in order.
    pub fn core_faults(&self) -> Vec<CoreFault> {
        self.world.borrow().core_faults.clone()
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
        let (buffers, l1) = {
            let w = self.world.borrow();
            (w.chip.circular_buffers, w.chip.l1_size)
        };
        if index as usize >= buffers {
            return bad(format!(
                "circular buffer {index} (allowed: 0..={})",
                buffers - 1
            ));
        }
        if pages == 0 || page_size == 0 || page_size % 16 != 0 || base % 16 != 0 {
            return bad(format!(
                "circular buffer of {pages} pages of {page_size} bytes at {base:#x} \
                 (allowed: pages >= 1, page size and base multiples of 16)"
            ));
        }
        if base as u64 + pages as u64 * page_size as u64 > l1 as u64 {
            return bad(format!(
                "circular buffer at {base:#x} of {pages} x {page_size} bytes is beyond L1"
            ));
        }
        let mut w = self.world.borrow_mut();
        w.tiles[ix as usize].configure_cb(
            index,
            Cb {
                base,
                page_size,
                pages,
                pushed: 0,
                popped: 0,
                wr: 0,
                rd: 0,
                padding: vec![false; pages as usize],
            },
        );
        Ok(())
    }

    /// Runs until nothing is left to happen, `deadline` (a cycle) comes, or `stop` holds
    /// (checked after every step). Host writes held by `SimConfig::reorder_posted_writes` are
    /// sent on their way first: they land one cycle apart from the next cycle on.
    pub fn run_until(&mut self, deadline: u64, mut stop: impl FnMut(&Sim) -> bool) -> RunOutcome {
        // Time stops short of 64 bits' end, so that no sum of a time and a few latencies
        // overflows (`timing::TIME_LIMIT`).
        let deadline = deadline.min(crate::timing::TIME_LIMIT);
        self.bars.schedule(&mut self.world.borrow_mut());
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

    /// Lets `cycles` of virtual time pass, as a host that waits does: everything due by then
    /// happens, and the clock (the tiles' wall clocks, ARC's heartbeat) then stands `cycles`
    /// later even when the chip was idle ([`Sim::run`] leaves an idle chip's clock where it
    /// is).
    pub fn advance(&mut self, cycles: u64) -> RunOutcome {
        let deadline = self
            .now()
            .saturating_add(cycles)
            .min(crate::timing::TIME_LIMIT);
        let outcome = self.run(deadline);
        let mut w = self.world.borrow_mut();
        w.now = w.now.max(deadline);
        outcome
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
            Item::HostWrite { id } => {
                let change = self.bars.land(&mut self.world.borrow_mut(), id);
                self.act_on_resets(change.into_iter().collect());
                return;
            }
            item => {
                self.world.borrow_mut().handle(time, item);
                return;
            }
        };
        {
            let mut w = self.world.borrow_mut();
            let t = &w.sched.tasks[task];
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
            let t = &mut w.sched.tasks[task];
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
        let level = self.world.borrow().cfg.kernel_logs;
        let polling = (level != log::LevelFilter::Off)
            .then(|| crate::kernel_log::Polling::start(&self.world, task, level));
        let done = fut.as_mut().poll(&mut cx).is_ready();
        drop(polling);
        let mut w = self.world.borrow_mut();
        if done {
            w.sched.tasks[task].state = TaskState::Done;
            drop(w);
            self.tasks[task] = None;
        } else if w.sched.tasks[task].state == TaskState::Running {
            // Pending without parking (a foreign future): poll again after a cycle or a change.
            let at = w.sched.tasks[task].local + 1;
            w.park(task, at, false);
        }
    }

    /// Reads L1 of the tile at NoC0 `tile`.
    pub fn read_l1(&self, tile: (u8, u8), addr: u32, buf: &mut [u8]) -> Result<(), SimError> {
        let ix = self.tile(tile)?;
        check_l1(self.chip_l1(), addr as u64, buf.len())?;
        self.world.borrow().tiles[ix as usize]
            .l1
            .read(addr as u64, buf);
        Ok(())
    }

    /// The soft-reset register (`RISCV_DEBUG_REG_SOFT_RESET_0`) of the tile at NoC0 `tile`: a
    /// set bit holds its core in reset ([`Core::reset_bit`](crate::Core::reset_bit)).
    pub fn soft_reset(&self, tile: (u8, u8)) -> Result<u32, SimError> {
        let ix = self.tile(tile)?;
        Ok(self.world.borrow().tiles[ix as usize]
            .regs
            .read_soft_reset())
    }

    /// Reads a 32-bit word of L1.
    pub fn read_l1_u32(&self, tile: (u8, u8), addr: u32) -> Result<u32, SimError> {
        let ix = self.tile(tile)?;
        check_l1(self.chip_l1(), addr as u64, 4)?;
        Ok(self.world.borrow().tiles[ix as usize]
            .l1
            .read_u32(addr as u64))
    }

    /// Writes L1 of the tile at NoC0 `tile`, now; the tile's waiting kernels see it.
    pub fn write_l1(&mut self, tile: (u8, u8), addr: u32, data: &[u8]) -> Result<(), SimError> {
        let ix = self.tile(tile)?;
        check_l1(self.chip_l1(), addr as u64, data.len())?;
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
        check_l1(self.chip_l1(), addr as u64, data.len())?;
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

    /// Host memory the DRAM banks take: every 4 KiB chunk anything was written in.
    pub fn dram_resident_bytes(&self) -> u64 {
        (self.world.borrow().dram.iter())
            .map(|m| m.resident_bytes() as u64)
            .sum()
    }

    /// Reads DRAM bank `bank`.
    pub fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), SimError> {
        let w = self.world.borrow();
        check_dram(&w.cfg, &w.chip, bank, addr, buf.len())?;
        w.dram[bank as usize].read(addr, buf);
        Ok(())
    }

    /// Writes DRAM bank `bank`.
    pub fn write_dram(&mut self, bank: u8, addr: u64, data: &[u8]) -> Result<(), SimError> {
        let mut w = self.world.borrow_mut();
        check_dram(&w.cfg, &w.chip, bank, addr, data.len())?;
        w.dram[bank as usize].write(addr, data);
        Ok(())
    }

    /// Injects a fault. Kernel stalls name a kernel that is already spawned on the tile.
    pub fn inject(&mut self, fault: Fault) -> Result<(), SimError> {
        let mut w = self.world.borrow_mut();
        match fault {
            Fault::Transaction { filter, action } => {
                if let crate::fault::TxAction::Delay(d) = action
                    && d > crate::timing::MAX_DELAY
                {
                    return Err(SimError::OutOfRange(format!(
                        "a transaction delayed {d} cycles (allowed: 0..={})",
                        crate::timing::MAX_DELAY
                    )));
                }
                w.faults.add_tx(filter, action)
            }
            Fault::Hung => w.faults.hung = true,
            Fault::DeadTile(tile) => {
                let g = w.tiles.grid;
                if tile.0 >= g.width || tile.1 >= g.height {
                    return Err(SimError::OutOfRange(format!(
                        "NoC0 {tile:?} is off the {} x {} grid",
                        g.width, g.height
                    )));
                }
                if !w.faults.dead.contains(&tile) {
                    w.faults.dead.push(tile);
                }
            }
            Fault::FreezeTile { tile, at } => {
                let ix = w.tiles.at0(tile).ok_or(SimError::NoTile(tile))?;
                w.tiles[ix as usize].frozen_from = Some(at);
            }
            Fault::StallKernel { tile, kernel, from } => {
                let ix = w.tiles.at0(tile).ok_or(SimError::NoTile(tile))?;
                let tasks: Vec<usize> = (0..w.sched.tasks.len())
                    .filter(|&i| {
                        w.sched.tasks[i].tile == ix
                            && w.sched.tasks[i].kernel == kernel
                            && !matches!(w.sched.tasks[i].state, TaskState::Done | TaskState::Reset)
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

    /// Disarms every transaction fault that has not fired yet and every pending stall trigger,
    /// and ends [`Fault::Hung`] and every [`Fault::DeadTile`].
    pub fn clear_faults(&mut self) {
        self.world.borrow_mut().faults = Faults::default();
    }

    /// Each transaction fault armed since the last clear, in arming order: whether it fired.
    pub fn faults_fired(&self) -> Vec<bool> {
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

    /// Every task's state.
    pub fn tasks(&self) -> Vec<TaskInfo> {
        let w = self.world.borrow();
        w.sched
            .tasks
            .iter()
            .enumerate()
            .map(|(task, t)| TaskInfo {
                task,
                tile: w.tiles[t.tile as usize].xy0,
                kernel: t.kernel,
                local: t.local,
                state: t.state_name(),
            })
            .collect()
    }

    /// The counters of the NIU of NoC `noc` (0 or 1) of the tile at NoC0 `tile`.
    pub fn niu(&self, tile: (u8, u8), noc: u8) -> Result<NiuCounters, SimError> {
        let ix = self.tile(tile)?;
        let w = self.world.borrow();
        let n = (w.tiles[ix as usize].niu.get(noc as usize))
            .ok_or_else(|| SimError::OutOfRange(format!("NoC {noc} (allowed: 0 or 1)")))?;
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

    /// A host write to BAR `bar` (0 or 4) at `offset`, as through a mapped window: a TLB
    /// configuration register (BAR0 `0x1FC0_0000..`) or a window's aperture onto a Tensix
    /// tile's L1 or registers, a DRAM bank or ARC. With `SimConfig::reorder_posted_writes` a
    /// write through a window that is not `Strict` is held (it lands later, see
    /// [`SimConfig::reorder_posted_writes`]). A write that clears a core's soft-reset bit
    /// boots the core (see [`Sim::set_boot_hook`]); one that sets it stops the core's task.
    pub fn bar_write(&mut self, bar: u8, offset: u64, data: &[u8]) -> Result<(), SimError> {
        let changes = self
            .bars
            .write(&mut self.world.borrow_mut(), bar, offset, data)?;
        self.act_on_resets(changes);
        Ok(())
    }

    /// A host read from BAR `bar` at `offset`: configuration registers, the PCIe tile's BAR0
    /// registers (`NIU_CFG_0`, `NOC_NODE_ID`), or a window's aperture. Takes `&mut self`
    /// because a read is not free of effects on a card either: it is a read-back barrier
    /// (every held write to the same tile lands first) and reading `WALL_CLOCK_L` latches the
    /// high half.
    pub fn bar_read(&mut self, bar: u8, offset: u64, buf: &mut [u8]) -> Result<(), SimError> {
        let changes = self
            .bars
            .read(&mut self.world.borrow_mut(), bar, offset, buf)?;
        self.act_on_resets(changes);
        Ok(())
    }

    /// ARC messages the simulated ARC has answered so far (every queue; see [`crate::arc`]).
    pub fn arc_answered(&self) -> u64 {
        self.world.borrow().arc.answered()
    }

    /// Registers the boot hook, replacing any earlier one. When the host clears a core's
    /// soft-reset bit through a window, the simulator checks the core's image (the header at
    /// `komorebi_kernel::image::header_addr(role)` in the tile's L1 must be a valid komorebi
    /// image of the core's role; NCRISC's and TRISC0's effective reset PC must be the
    /// header's `entry`; BRISC's is fixed at 0x0, its boot stub's target is not checked) and,
    /// if it passes, calls `hook` once with the tile's NoC0 coordinates and the role. The hook
    /// starts the core: the native kernel of its role ([`Sim::spawn`]), or the image itself
    /// on the core's RISC-V hart ([`Sim::spawn_firmware`]). A core that fails the check, TRISC1 and TRISC2 (unused by komorebi), a
    /// release with no hook registered, and a hook's error are [`Sim::boot_failures`]; nothing
    /// runs then. A hook's own BAR writes that release more cores are acted on after it
    /// returns. On a simulated Wormhole, whose host cannot set reset PCs, a BRISC that boots
    /// releases NCRISC and TRISC0 at their default PCs, as komorebi's BRISC image does there.
    pub fn set_boot_hook(&mut self, hook: BootHook) {
        self.boot_hook = Some(hook);
    }

    /// Every core release that did not start a kernel, in order.
    pub fn boot_failures(&self) -> &[BootFailure] {
        &self.boot_failures
    }

    /// Acts on soft-reset changes: a core whose bit was set stops (its tasks are dropped); a
    /// core whose bit was cleared boots.
    fn act_on_resets(&mut self, changes: Vec<ResetChange>) {
        self.resets.extend(changes);
        if self.booting {
            return;
        }
        self.booting = true;
        while let Some(c) = self.resets.pop_front() {
            for core in Core::ALL {
                let bit = core.reset_bit();
                if c.new & bit != 0 && c.old & bit == 0 {
                    self.stop_core(c.tile, core);
                } else if c.old & bit != 0 && c.new & bit == 0 {
                    self.release(c.tile, core);
                }
            }
        }
        self.booting = false;
    }

    /// Drops every live task of `core`'s role on `tile` (a core put back into reset).
    fn stop_core(&mut self, tile: TileIx, core: Core) {
        let Some(role) = core.role() else {
            return;
        };
        let mut dropped = Vec::new();
        {
            let mut w = self.world.borrow_mut();
            for (task, t) in w.sched.tasks.iter_mut().enumerate() {
                let live = !matches!(t.state, TaskState::Done | TaskState::Reset);
                if t.tile == tile && t.kernel == role && live {
                    t.state = TaskState::Reset;
                    dropped.push(self.tasks[task].take());
                }
            }
        }
        drop(dropped);
    }

    /// `core` of `tile` left reset: its image is checked and the boot hook called.
    fn release(&mut self, tile: TileIx, core: Core) {
        let (xy0, at, verdict) = {
            let w = self.world.borrow();
            let t = &w.tiles[tile as usize];
            let mut header = [0u8; 32];
            if let Some(role) = core.role() {
                t.l1.read(header_addr(role) as u64, &mut header);
            }
            (
                t.xy0,
                w.now,
                boot::check(core, &header, t.regs.reset_pc(core)),
            )
        };
        let mut fail = |why: String| {
            self.boot_failures.push(BootFailure {
                tile: xy0,
                core,
                why,
                at,
            })
        };
        let role = match verdict {
            Ok(role) => role,
            Err(why) => return fail(why),
        };
        let Some(mut hook) = self.boot_hook.take() else {
            return fail("no boot hook is registered (Sim::set_boot_hook)".into());
        };
        let result = hook(self, xy0, role);
        // The hook may have registered another one; that one wins.
        self.boot_hook.get_or_insert(hook);
        if let Err(e) = result {
            self.boot_failures.push(BootFailure {
                tile: xy0,
                core,
                why: format!("boot hook: {e}"),
                at,
            });
            return;
        }
        // A Wormhole's host cannot set reset PCs: komorebi's BRISC image starts NCRISC and
        // TRISC0 itself, at their default PCs (komorebi_silicon's `Chip::start_other_cores`),
        // and the native kernels stand in for it here.
        if core == Core::Brisc && !self.world.borrow().chip.is_blackhole() {
            let started = Core::Ncrisc.reset_bit() | Core::Trisc0.reset_bit();
            let regs = &mut self.world.borrow_mut().tiles[tile as usize].regs;
            let (old, new) = regs.start_at_default_pcs(started);
            self.resets.push_back(ResetChange { tile, old, new });
        }
    }

    /// True when every spawned task has returned.
    pub fn all_done(&self) -> bool {
        self.tasks.iter().all(Option::is_none)
    }
}
