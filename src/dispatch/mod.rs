//! The dispatcher: the VMS animation master, on the host, for a persistent-kernel chip.
//!
//! # Model
//! The dispatcher serves one chip or several ([`Dispatcher::with_chips`]: one [`Target`] a
//! chip, as a host with several Blackhole chips opens one PCIe device each). Each chip's cores
//! are split into **groups** (rectangles of that chip; they may overlap). Each group has
//! `depth` **scheduling slots** (the tiles' command slots: with the default 2, the next command
//! is posted while one runs). Worker threads each own a **shard** of the groups: a worker is
//! the only one that posts to its groups' slots and the only one that scans their outcomes, and
//! it has its own [`Plugin`] instance, so the plugin runs sequentially without a global master
//! lock. Per pass, a worker
//! 1. scans its busy slots' mailboxes (the report words) and hands every finished command to
//!    the plugin's **request handler**, whose follow-up commands become ready;
//! 2. receives messages and commands routed to its groups by other workers;
//! 3. offers every empty slot to the plugin's **assigner**, which picks among the ready
//!    commands pinned to that group and the first few of the worker's stealable ones; the
//!    chosen command is posted once it has **reserved** its tiles (see [`reserve`]; tiles that
//!    exactly the same groups cover share one reservation word); a group one of its own
//!    commands holds exclusively can post nothing until that command ends, so its slots are
//!    offered nothing (its stealable commands stay in the deque, where thieves see them);
//! 4. with nothing of its own left, **steals** ready commands from the seed queue (for a free
//!    slot) or from another worker (for a free slot of a group no exclusive command holds:
//!    work that could only queue behind an exclusive command would wait while its owner may be
//!    free first).
//!
//! With nothing to do it spins a little on its mailboxes, then parks ([`park`]); the last
//! worker to go idle lets the devices run instead ([`Target::drive_all`]: every chip at once),
//! so on the simulator virtual time stands still while the host works. The assigner places
//! work on a chip: a [`Place::Any`] command can go to a slot of any chip's group, and the
//! plugin sees the slot's chip ([`GroupInfo::chip`]).
//!
//! # Guarantees
//! * **Exclusive groups:** a command flagged `EXCLUSIVE` is never in flight together with
//!   another command on any of its tiles, whatever the assigner picks: the flags checked are
//!   the ones of the command being posted.
//! * **Tile slots:** no tile is posted more commands than it has command slots, however the
//!   groups overlap: a shared reservation is refused on a region with two in flight
//!   ([`reserve::SHARED_MAX`]), and the command waits instead of being refused by the device.
//! * **Every command ends exactly once:** each is handled once, as reported, timed out,
//!   refused or abandoned. A ready command sits in exactly one queue; stealing takes it out of
//!   that queue with crossbeam's Chase-Lev deque, and only ready commands are ever stealable.
//!   In-flight commands live in their slot, which only the owning worker touches, so the VMS
//!   animation master's gate protocol (which guarded a structure a victim read without a lock)
//!   has no counterpart here and needs no replacement.
//! * **Timeouts:** a command whose kernels gave up, or whose deadline passed with cores busy, is
//!   handed to the request handler as [`Outcome::TimedOut`] with every core's first give-up.
//!   Its slot and tiles are released only when all its cores have reported (the device is
//!   quiet again); a late completion is matched to its own epoch ([`mailbox`]).
//! * **Termination:** the run ends when no command is ready, in flight, or unhandled and no
//!   message is undelivered. If the device can do nothing more while commands are still ready
//!   but cannot be placed, they are handed to the handler as [`Outcome::Abandoned`]. On a card,
//!   which cannot say that nothing can change, commands past their deadline that have not
//!   gone quiet one more budget later count as such: their slots and tiles stay held, and work
//!   waiting for those tiles is abandoned. A device lost ([`Drive::Lost`]: its thread ended,
//!   a command was published on some of its cores only, or a report could not be read) ends
//!   the run with [`DispatchError::DeviceLost`], saying which chip, when known, and why (its
//!   commands in flight would otherwise keep the run waiting for good).
//!
//! # Files
//! | file | what it holds | what it guarantees |
//! |------|---------------|--------------------|
//! | `mod.rs` | [`Dispatcher`] (`new`, `seed`, `run`), [`DispatchConfig`], [`DispatchError`], [`DispatchResult`], [`GroupId`]; the re-exports | settings, groups and seeds are checked before a run; a worker that panics stops the run and is reported |
//! | `worker.rs` | one worker's loop: its plugin, slots, assigning, stealing, going idle | only the owning worker touches its slots; every command ends exactly once; the outstanding count never undercounts |
//! | `shared.rs` | what all workers of a run share (queues, inboxes, counters, clock); the grid's regions | a group covers whole regions, so reserving its regions reserves exactly its tiles |
//! | [`plugin`] | the [`Plugin`] (request handler and assigner) and what it sees | each instance is called sequentially, on its own worker |
//! | [`mailbox`] | a slot's report word, published by the device side, polled by its worker | a late completion is never read as a newer command's outcome |
//! | [`reserve`] | the regions' reservation words | an exclusive reservation of a region excludes every other; no region has more shared ones than a tile has slots; reserving never waits |
//! | [`idle`] | [`Idle`], the idle handshake: who sleeps, who drives the devices, when the run has stalled | no worker asleep while another can progress; one driver at a time; a stall only after every worker looked since the last activity |
//! | [`park`] | [`Sleep`], parking idle workers | no lost wake-ups |
//! | [`target`] | [`Target`], and [`NullTarget`] and [`SimTarget`] | |
//! | [`measure`] | per-command timestamps, the summary, the trace | |
//! | `sync.rs` | `std`'s primitives, or loom's under `--cfg loom` | the loom tests check the code the dispatcher runs |

mod config;
pub mod idle;
pub mod mailbox;
pub mod measure;
pub mod park;
pub mod plugin;
pub mod reserve;
mod shared;
mod sync;
pub mod target;
mod worker;

use crossbeam_deque::{Injector, Worker as Deque};
use komorebi_hal::LogicalRect;
use komorebi_kernel::abi;

pub use config::{DispatchConfig, GroupId};
pub use idle::{Idle, Idled};
pub use mailbox::{Mailbox, Polled, Published};
pub use measure::{CommandTimes, DispatchSummary, Distribution, WorkerStats, trace_events};
pub use park::Sleep;
pub use plugin::{Cx, Finished, GroupInfo, Outcome, Place, Plugin, Ready, Refusal, SlotView};
pub use reserve::{Blocked, Held, Reservations};
pub use target::{Drive, NullTarget, PostHook, Posting, SimTarget, Target};
// Defined in `target`, whose device thread needs it: `target` importing it from here made an
// import circle (`tests/house.rs`).
pub(crate) use target::panic_message;

use shared::{Inbound, Shared, regions};
use sync::{AtomicBool, AtomicUsize};
use worker::WorkerState;

/// What the dispatcher refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// A configuration value out of range.
    #[error("{what} = {got} (allowed: {allowed})")]
    Config {
        /// The setting.
        what: &'static str,
        /// The value given.
        got: usize,
        /// The allowed range.
        allowed: &'static str,
    },
    /// A group that is empty or reaches outside its chip's grid.
    #[error(
        "group {index} ({group} on chip {chip}) is empty or reaches outside the chip's {columns}x{rows} grid (allowed: at least 1 column and 1 row, X0 + COLUMNS <= {columns} and Y0 + ROWS <= {rows})"
    )]
    Group {
        /// Its index.
        index: usize,
        /// The group.
        group: LogicalRect,
        /// Its chip.
        chip: usize,
        /// Grid columns.
        columns: u8,
        /// Grid rows.
        rows: u8,
    },
    /// A group on a chip the dispatcher does not have.
    #[error("group {index} is on chip {chip}, but there are {chips} chips (allowed: 0..{chips})")]
    NoSuchChip {
        /// The group's index.
        index: usize,
        /// The chip named.
        chip: usize,
        /// Chips there are.
        chips: usize,
    },
    /// A chip's logical grid that does not start at 0,0.
    #[error("chip {chip}'s grid {grid} starts elsewhere than 0,0 (allowed: a grid at origin 0,0)")]
    GridOrigin {
        /// The chip.
        chip: usize,
        /// Its grid.
        grid: LogicalRect,
    },
    /// A seed pinned to a group that does not exist.
    #[error("seed pinned to group {group}, but there are {groups} groups (allowed: 0..{groups})")]
    NoSuchGroup {
        /// The group named.
        group: u32,
        /// Groups there are.
        groups: usize,
    },
    /// A worker thread panicked (in plugin code or the target).
    #[error("worker {worker} panicked: {message}")]
    WorkerPanicked {
        /// The worker.
        worker: usize,
        /// The panic message.
        message: String,
    },
    /// A device stopped answering during the run ([`Drive::Lost`]: its device thread ended or
    /// panicked, the reason then carrying the panic's message; a command was published on some
    /// of its cores only; or a report could not be read): the commands in flight on it could
    /// never end.
    #[error(
        "{} stopped answering during the run ({reason}): the commands in flight on it can never end",
        lost_device(*.chip)
    )]
    DeviceLost {
        /// Which chip of the run (its index in [`Dispatcher::with_chips`]' `chips`), when
        /// known: the first whose [`Target::lost_reason`] says why, or the only one.
        chip: Option<usize>,
        /// Why ([`Target::lost_reason`], or that the target did not say).
        reason: String,
    },
}

/// The device [`DispatchError::DeviceLost`] names: its chip when known.
fn lost_device(chip: Option<usize>) -> String {
    chip.map_or_else(|| "a device".into(), |c| format!("chip {c}"))
}

/// What a run gives back: the plugin instances (with whatever they recorded), the summary and
/// every command's timestamps.
#[derive(Debug)]
pub struct DispatchResult<P> {
    /// The plugin instances, by worker.
    pub plugins: Vec<P>,
    /// Counts and distributions.
    pub summary: DispatchSummary,
    /// Every command's timestamps, by worker, then in the order handled.
    pub times: Vec<CommandTimes>,
}

/// The dispatcher over chips of target type `T` for commands with payload `W`; see the module
/// docs.
pub struct Dispatcher<'t, T, W> {
    /// Per chip, its target and logical grid.
    chips: Vec<(&'t T, LogicalRect)>,
    config: DispatchConfig,
    groups: Vec<GroupInfo>,
    seeds: Vec<(W, Place)>,
}

impl<T, W> std::fmt::Debug for Dispatcher<'_, T, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("config", &self.config)
            .field("groups", &self.groups)
            .field("seeds", &self.seeds.len())
            .finish_non_exhaustive()
    }
}

fn check(
    what: &'static str,
    got: usize,
    lo: usize,
    hi: usize,
    allowed: &'static str,
) -> Result<(), DispatchError> {
    if got < lo || got > hi {
        return Err(DispatchError::Config { what, got, allowed });
    }
    Ok(())
}

impl<'t, T: Target, W: Send> Dispatcher<'t, T, W> {
    /// A dispatcher on one chip, `target`, whose cores form the logical grid `grid` (origin
    /// 0,0), with `groups`; group `i` gets id `i` and goes to worker `i * workers /
    /// groups.len()`, so a worker owns neighbouring groups.
    pub fn new(
        target: &'t T,
        grid: LogicalRect,
        groups: &[LogicalRect],
        config: DispatchConfig,
    ) -> Result<Self, DispatchError> {
        let groups: Vec<(usize, LogicalRect)> = groups.iter().map(|&g| (0, g)).collect();
        Self::with_chips(&[(target, grid)], &groups, config)
    }

    /// A dispatcher over several chips: `chips[c]` is chip `c`'s target and logical grid
    /// (origin 0,0), and group `i` is `groups[i] = (chip, rect)`, with id `i`, going to worker
    /// `i * workers / groups.len()`. Each chip's tiles are its own: groups of different chips
    /// never hold each other's tiles. When every worker is idle, every chip runs
    /// ([`Target::drive_all`]).
    pub fn with_chips(
        chips: &[(&'t T, LogicalRect)],
        groups: &[(usize, LogicalRect)],
        config: DispatchConfig,
    ) -> Result<Self, DispatchError> {
        check("workers", config.workers, 1, 64, "1..=64")?;
        check(
            "depth",
            config.depth,
            1,
            abi::SLOTS as usize,
            "1..=2 (the tiles' command slots)",
        )?;
        check("lookahead", config.lookahead, 1, 64, "1..=64")?;
        check("chips", chips.len(), 1, 1024, "1..=1024")?;
        if let Some((chip, &(_, grid))) = chips
            .iter()
            .enumerate()
            .find(|(_, (_, g))| g.x0 != 0 || g.y0 != 0)
        {
            return Err(DispatchError::GridOrigin { chip, grid });
        }
        let n = groups.len().max(1);
        let mut infos = Vec::with_capacity(groups.len());
        for (index, &(chip, group)) in groups.iter().enumerate() {
            let Some(&(_, grid)) = chips.get(chip) else {
                return Err(DispatchError::NoSuchChip {
                    index,
                    chip,
                    chips: chips.len(),
                });
            };
            if group.is_empty() || !grid.covers(group) {
                return Err(DispatchError::Group {
                    index,
                    group,
                    chip,
                    columns: grid.columns,
                    rows: grid.rows,
                });
            }
            infos.push(GroupInfo {
                id: GroupId(index as u32),
                chip,
                rect: group,
                worker: index * config.workers / n,
            });
        }
        Ok(Self {
            chips: chips.to_vec(),
            config,
            groups: infos,
            seeds: Vec::new(),
        })
    }

    /// The groups, with their ids and owners.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.groups
    }

    /// Adds a seed command: ready when the run starts.
    pub fn seed(&mut self, work: W, place: Place) -> Result<(), DispatchError> {
        if let Some(g) = place.group()
            && g.0 as usize >= self.groups.len()
        {
            return Err(DispatchError::NoSuchGroup {
                group: g.0,
                groups: self.groups.len(),
            });
        }
        self.seeds.push((work, place));
        Ok(())
    }

    /// Runs until every command has ended; `plugin(worker)` makes each worker's plugin
    /// instance (on that worker's thread).
    pub fn run<P, F>(self, plugin: F) -> Result<DispatchResult<P>, DispatchError>
    where
        P: Plugin<Work = W>,
        F: Fn(usize) -> P + Sync,
    {
        let workers = self.config.workers;
        let deques: Vec<Deque<Ready<W>>> = (0..workers).map(|_| Deque::new_lifo()).collect();
        let grids: Vec<LogicalRect> = self.chips.iter().map(|c| c.1).collect();
        let (regions, region_count) = regions(&grids, &self.groups);
        let mut counts = vec![0usize; workers];
        let local_index = self
            .groups
            .iter()
            .map(|g| {
                counts[g.worker] += 1;
                counts[g.worker] - 1
            })
            .collect();
        // One per process: making one reads CPUID, a trap to the hypervisor in a VM.
        static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
        let clock = CLOCK.get_or_init(quanta::Clock::new);
        let shared = Shared {
            groups: self.groups.clone(),
            regions,
            local_index,
            reservations: Reservations::new(region_count),
            seeds: Injector::new(),
            inboxes: (0..workers).map(|_| Injector::new()).collect(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            idle: Idle::new(workers),
            outstanding: AtomicUsize::new(self.seeds.len()),
            aborted: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            start: clock.raw(),
            clock,
            config: self.config.clone(),
        };
        for (n, (work, place)) in self.seeds.into_iter().enumerate() {
            let ready = Ready {
                work,
                place,
                id: n as u64,
                queued: shared.start,
                stolen: false,
            };
            match place {
                Place::Any => shared.seeds.push(ready),
                Place::Group(g) | Place::Near(g) => {
                    shared.inboxes[shared.groups[g.0 as usize].worker].push(Inbound::Ready(ready))
                }
            }
        }
        let targets: Vec<&T> = self.chips.iter().map(|c| c.0).collect();
        let targets = targets.as_slice();
        let shared = &shared;
        let plugin = &plugin;
        let outcomes: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = deques
                .into_iter()
                .enumerate()
                .map(|(me, local)| {
                    std::thread::Builder::new()
                        .name(format!("komorebi-dispatch-{me}"))
                        .spawn_scoped(s, move || {
                            // A worker that unwinds (its plugin or a target panicked) ends the
                            // run: the others would wait for it.
                            let _abort = AbortOnUnwind(shared);
                            let mut w = WorkerState::new(me, shared, targets, plugin(me), local);
                            w.run();
                            w.into_outcome()
                        })
                })
                .collect();
            // A worker that could not start ends the run before any is joined.
            if handles.iter().any(Result::is_err) {
                shared.abort();
            }
            handles
                .into_iter()
                .enumerate()
                .map(|(worker, h)| {
                    let h = h.map_err(|e| DispatchError::WorkerPanicked {
                        worker,
                        message: format!("could not start: {e}"),
                    })?;
                    h.join().map_err(|p| DispatchError::WorkerPanicked {
                        worker,
                        message: panic_message(p.as_ref()),
                    })
                })
                .collect()
        });
        // A worker's panic first: a lost device can follow from it, not the other way round.
        let outcomes: Vec<_> = outcomes.into_iter().collect::<Result<_, _>>()?;
        if shared.lost.load(sync::Ordering::SeqCst) {
            let known = self
                .chips
                .iter()
                .enumerate()
                .find_map(|(chip, c)| c.0.lost_reason().map(|r| (Some(chip), r)));
            let only = (self.chips.len() == 1).then_some(0);
            let (chip, reason) =
                known.unwrap_or_else(|| (only, "the target did not say why".into()));
            return Err(DispatchError::DeviceLost { chip, reason });
        }
        let wall_ns = shared.ns(shared.now());
        let mut plugins = Vec::with_capacity(workers);
        let mut times = Vec::new();
        let mut recorded = Vec::with_capacity(workers);
        let mut stats = Vec::with_capacity(workers);
        let (mut held, mut dropped) = (0, 0);
        for o in outcomes {
            plugins.push(o.plugin);
            times.extend(o.times);
            recorded.push(o.recorded);
            stats.push(o.stats);
            held += o.held;
            dropped += o.dropped;
        }
        let mut summary = DispatchSummary::build(&recorded, stats, self.config.depth);
        summary.wall_ns = wall_ns;
        summary.held_at_end = held;
        summary.dropped_publications = dropped;
        summary.device_clock = self.chips[0].0.clock_kind();
        Ok(DispatchResult {
            plugins,
            summary,
            times,
        })
    }
}

/// Aborts the run ([`Shared::abort`]) when dropped by a worker thread that unwinds.
struct AbortOnUnwind<'a, W, M>(&'a Shared<W, M>);

impl<W, M> Drop for AbortOnUnwind<'_, W, M> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abort();
        }
    }
}
