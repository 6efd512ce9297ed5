//! The dispatcher: the VMS animation master, on the host, for a persistent-kernel chip.
//!
//! # Model
//! The chip's cores are split into **groups** (rectangles; they may overlap). Each group has
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
//!    exactly the same groups cover share one reservation word);
//! 4. with nothing of its own left, **steals** ready commands from the seed queue or another
//!    worker.
//!
//! With nothing to do it spins a little on its mailboxes, then parks ([`park`]); the last
//! worker to go idle lets the device run instead ([`Target::drive`]), so on the simulator
//! virtual time stands still while the host works.
//!
//! # Guarantees
//! * **Exclusive groups:** a command flagged `EXCLUSIVE` is never in flight together with
//!   another command on any of its tiles, whatever the assigner picks: the flags checked are
//!   the ones of the command being posted.
//! * **Every command ends exactly once:** each is handled once, as reported, timed out,
//!   refused or abandoned. A ready command sits in exactly one queue; stealing takes it out of
//!   that queue with crossbeam's Chase-Lev deque, and only ready commands are ever stealable.
//!   In-flight commands live in their slot, which only the owning worker touches, so the
//!   seed's gate protocol (which guarded a structure a victim read without a lock) has no
//!   counterpart here and needs no replacement.
//! * **Timeouts:** a command whose kernels gave up, or whose deadline passed with cores busy, is
//!   handed to the request handler as [`Outcome::TimedOut`] with every core's first give-up.
//!   Its slot and tiles are released only when all its cores have reported (the device is
//!   quiet again); a late completion is matched to its own epoch ([`mailbox`]).
//! * **Termination:** the run ends when no command is ready, in flight, or unhandled and no
//!   message is undelivered. If the device can do nothing more while commands are still ready
//!   but cannot be placed, they are handed to the handler as [`Outcome::Abandoned`].

pub mod mailbox;
pub mod measure;
pub mod park;
pub mod plugin;
pub mod reserve;
mod sync;
pub mod target;

use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam_deque::{Injector, Steal, Stealer, Worker as Deque};
use crossbeam_utils::CachePadded;
use komorebi_hal::LogicalRect;
use komorebi_kernel::abi;
use serde::Serialize;

pub use mailbox::{Mailbox, Polled, Published};
use measure::Recorded;
pub use measure::{CommandTimes, DispatchSummary, Distribution, WorkerStats, trace_events};
pub use park::Sleep;
pub use plugin::{Cx, Finished, GroupInfo, Outcome, Place, Plugin, Ready, Refusal, SlotView};
pub use reserve::{Held, Reservations};
pub use target::{Drive, NullTarget, PostHook, Posting, SimTarget, Target};

use sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// A group's index in the list the dispatcher was made with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct GroupId(pub u32);

/// How the dispatcher runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchConfig {
    /// Worker threads (shards), `1..=64`.
    pub workers: usize,
    /// Scheduling slots per group, `1..=2` (the tiles' command slots).
    pub depth: usize,
    /// Passes a worker with commands in flight spins before it parks.
    pub spin: u32,
    /// Stealable commands offered to the assigner besides the pinned one, `1..=64`.
    pub lookahead: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        Self {
            workers: 2,
            depth: 2,
            spin: 64,
            lookahead: 4,
        }
    }
}

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
    /// A group that is empty or reaches outside the grid.
    #[error("group {index} ({group}) is empty or reaches outside the {columns}x{rows} grid")]
    Group {
        /// Its index.
        index: usize,
        /// The group.
        group: LogicalRect,
        /// Grid columns.
        columns: u8,
        /// Grid rows.
        rows: u8,
    },
    /// A seed pinned to a group that does not exist.
    #[error("seed pinned to group {group}, but there are {groups} groups")]
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

enum Inbound<W, M> {
    Ready(Ready<W>),
    Message(M),
}

struct Shared<W, M> {
    groups: Vec<GroupInfo>,
    /// Per group, the regions it covers (see [`regions`]).
    regions: Vec<Box<[u16]>>,
    /// Group id -> index in its owner's list.
    local_index: Vec<usize>,
    reservations: Reservations,
    seeds: Injector<Ready<W>>,
    inboxes: Vec<Injector<Inbound<W, M>>>,
    stealers: Vec<Stealer<Ready<W>>>,
    sleep: Sleep,
    /// Commands ready, in flight or unhandled, plus messages undelivered.
    outstanding: AtomicUsize,
    active: AtomicUsize,
    driving: AtomicBool,
    idle_generation: AtomicU64,
    /// Per worker: bumped after every pass of that worker that did something and every drive
    /// of it that published; the sum is the run's activity. (One padded word per worker: a
    /// shared counter bumped by every pass was a contended line, and it slowed every read of
    /// the words beside it.)
    activity: Box<[CachePadded<AtomicU64>]>,
    /// Per worker: the activity when its last fruitless look for work began.
    rescanned: Vec<AtomicU64>,
    /// The host clock. The hot path reads raw ticks (the invariant TSC where there is one: a
    /// few nanoseconds, where the OS clock cost a fifth of the host overhead per command);
    /// [`ns`](Self::ns) turns them into nanoseconds since `start` when a command is handled.
    clock: &'static quanta::Clock,
    /// Raw ticks when the run started.
    start: u64,
    config: DispatchConfig,
}

impl<W, M> Shared<W, M> {
    /// Raw clock ticks now.
    fn now(&self) -> u64 {
        self.clock.raw()
    }

    /// The run's activity: the sum of every worker's count. Each count only grows, so a sum
    /// read while some grow lies between the sums before and after the reads: a look for work
    /// that began before some activity never compares equal to a sum read after it.
    fn activity(&self) -> u64 {
        self.activity.iter().map(|a| a.load(Ordering::SeqCst)).sum()
    }

    /// Counts activity of worker `me`.
    fn bump(&self, me: usize) {
        self.activity[me].fetch_add(1, Ordering::SeqCst);
    }

    /// Nanoseconds from the run's start to raw tick `raw` (0 for a tick before the start).
    fn ns(&self, raw: u64) -> u64 {
        self.clock.delta_as_nanos(self.start, raw)
    }
}

/// Splits the grid's tiles into regions, tiles covered by exactly the same groups, and returns
/// every group's regions (ascending) and the number of regions.
///
/// Every group covers whole regions, so reserving a group's regions reserves exactly its tiles
/// against every other group, with one word per region instead of one per tile: disjoint groups
/// take one word each, however many tiles they have. (Tiles no group covers make one region
/// that nothing takes.)
fn regions(grid: LogicalRect, groups: &[GroupInfo]) -> (Vec<Box<[u16]>>, usize) {
    let columns = grid.columns as usize;
    let tiles_of = |r: LogicalRect| {
        (r.y0..r.y0 + r.rows).flat_map(move |y| {
            (r.x0..r.x0 + r.columns).map(move |x| y as usize * columns + x as usize)
        })
    };
    // Per tile, the groups covering it, in group order.
    let mut cover: Vec<Vec<u32>> = vec![Vec::new(); grid.len()];
    for g in groups {
        for t in tiles_of(g.rect) {
            cover[t].push(g.id.0);
        }
    }
    let mut ids: std::collections::HashMap<&[u32], u16> = std::collections::HashMap::new();
    let region: Vec<u16> = cover
        .iter()
        .map(|c| {
            let next = ids.len() as u16;
            *ids.entry(c.as_slice()).or_insert(next)
        })
        .collect();
    let per_group = groups
        .iter()
        .map(|g| {
            let mut r: Vec<u16> = tiles_of(g.rect).map(|t| region[t]).collect();
            r.sort_unstable();
            r.dedup();
            r.into()
        })
        .collect();
    (per_group, ids.len())
}

/// The dispatcher over target `T` for commands with payload `W`; see the module docs.
pub struct Dispatcher<'t, T, W> {
    target: &'t T,
    config: DispatchConfig,
    grid: LogicalRect,
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
    /// A dispatcher on `target` whose cores form the logical grid `grid` (origin 0,0), with
    /// `groups`; group `i` gets id `i` and goes to worker `i * workers / groups.len()`, so a
    /// worker owns neighbouring groups.
    pub fn new(
        target: &'t T,
        grid: LogicalRect,
        groups: &[LogicalRect],
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
        let n = groups.len().max(1);
        let mut infos = Vec::with_capacity(groups.len());
        for (index, &group) in groups.iter().enumerate() {
            if group.is_empty() || grid.x0 != 0 || grid.y0 != 0 || !grid.covers(group) {
                return Err(DispatchError::Group {
                    index,
                    group,
                    columns: grid.columns,
                    rows: grid.rows,
                });
            }
            infos.push(GroupInfo {
                id: GroupId(index as u32),
                rect: group,
                shard: index * config.workers / n,
            });
        }
        Ok(Self {
            target,
            config,
            grid,
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
        if let Place::Group(g) = place {
            if g.0 as usize >= self.groups.len() {
                return Err(DispatchError::NoSuchGroup {
                    group: g.0,
                    groups: self.groups.len(),
                });
            }
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
        let (regions, region_count) = regions(self.grid, &self.groups);
        let mut counts = vec![0usize; workers];
        let local_index = self
            .groups
            .iter()
            .map(|g| {
                counts[g.shard] += 1;
                counts[g.shard] - 1
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
            sleep: Sleep::new(),
            outstanding: AtomicUsize::new(self.seeds.len()),
            active: AtomicUsize::new(workers),
            driving: AtomicBool::new(false),
            idle_generation: AtomicU64::new(0),
            activity: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            rescanned: (0..workers).map(|_| AtomicU64::new(u64::MAX)).collect(),
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
                origin: usize::MAX,
            };
            match place {
                Place::Any => shared.seeds.push(ready),
                Place::Group(g) => {
                    shared.inboxes[shared.groups[g.0 as usize].shard].push(Inbound::Ready(ready))
                }
            }
        }
        let target = self.target;
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
                            let mut w = WorkerState::new(me, shared, target, plugin(me), local);
                            w.run();
                            w.into_outcome()
                        })
                })
                .collect();
            handles
                .into_iter()
                .enumerate()
                .map(|(worker, h)| {
                    let h = h.map_err(|e| DispatchError::WorkerPanicked {
                        worker,
                        message: format!("could not start: {e}"),
                    })?;
                    h.join().map_err(|p| {
                        // A worker that dies leaves its commands outstanding: stop the others.
                        shared.outstanding.store(0, Ordering::SeqCst);
                        shared.sleep.wake_all();
                        DispatchError::WorkerPanicked {
                            worker,
                            message: panic_message(&p),
                        }
                    })
                })
                .collect()
        });
        let wall_ns = shared.ns(shared.now());
        let mut plugins = Vec::with_capacity(workers);
        let mut times = Vec::new();
        let mut recorded = Vec::with_capacity(workers);
        let mut stats = Vec::with_capacity(workers);
        let (mut held, mut dropped) = (0, 0);
        for o in outcomes {
            let o = o?;
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
        Ok(DispatchResult {
            plugins,
            summary,
            times,
        })
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

struct Busy<'s, W> {
    /// `None` once its timeout was handed to the handler (waiting for the cores to report).
    job: Option<Ready<W>>,
    /// Timed out, and counted as outstanding until its cores report.
    awaiting_quiet: bool,
    held: Held<'s>,
    times: CommandTimes,
}

struct Slot<'s, W> {
    mailbox: Arc<Mailbox>,
    epoch: u64,
    busy: Option<Busy<'s, W>>,
}

struct OwnedGroup<'s, W> {
    info: GroupInfo,
    /// The regions of its tiles, whose reservation words it takes.
    regions: &'s [u16],
    pinned: VecDeque<Ready<W>>,
    slots: Vec<Slot<'s, W>>,
}

struct WorkerOutcome<P> {
    plugin: P,
    times: Vec<CommandTimes>,
    recorded: Recorded,
    stats: WorkerStats,
    held: usize,
    dropped: u64,
}

struct WorkerState<'s, P: Plugin, T> {
    me: usize,
    shared: &'s Shared<P::Work, P::Message>,
    target: &'s T,
    plugin: P,
    local: Deque<Ready<P::Work>>,
    groups: Vec<OwnedGroup<'s, P::Work>>,
    /// Stealable commands taken from the deque to offer the assigner, during one assign step.
    candidates: Vec<Ready<P::Work>>,
    submitted: Vec<(P::Work, Place)>,
    messages: Vec<(usize, P::Message)>,
    times: Vec<CommandTimes>,
    stats: WorkerStats,
    seen_idle: u64,
    /// Commands this worker made ready.
    made: u64,
    /// Something this pass may interest a sleeper (ready work, released tiles).
    wake: bool,
}

/// What a slot's poll found: `(command, outcome, device start and report cycles)`.
type End<W> = (Ready<W>, Outcome, Option<(u64, u64)>);

enum Event<W> {
    /// The slot is free again; the command's end, unless it was handed over before (a quiet).
    Final(Option<End<W>>),
    /// A timeout with cores still busy: hand it over, keep the slot and tiles.
    Overdue(End<W>),
}

impl<'s, P: Plugin, T: Target> WorkerState<'s, P, T> {
    fn new(
        me: usize,
        shared: &'s Shared<P::Work, P::Message>,
        target: &'s T,
        plugin: P,
        local: Deque<Ready<P::Work>>,
    ) -> Self {
        let groups = shared
            .groups
            .iter()
            .filter(|g| g.shard == me)
            .map(|g| OwnedGroup {
                info: g.clone(),
                regions: &shared.regions[g.id.0 as usize],
                pinned: VecDeque::new(),
                slots: (0..shared.config.depth)
                    .map(|_| Slot {
                        mailbox: Arc::new(Mailbox::new()),
                        epoch: 0,
                        busy: None,
                    })
                    .collect(),
            })
            .collect();
        Self {
            me,
            shared,
            target,
            plugin,
            local,
            groups,
            candidates: Vec::new(),
            submitted: Vec::new(),
            messages: Vec::new(),
            times: Vec::new(),
            stats: WorkerStats::default(),
            seen_idle: 0,
            made: 0,
            wake: false,
        }
    }

    fn run(&mut self) {
        let mut spins = 0;
        loop {
            if self.shared.outstanding.load(Ordering::SeqCst) == 0 {
                self.shared.sleep.wake_all();
                return;
            }
            if self.pass() {
                spins = 0;
                continue;
            }
            if spins < self.shared.config.spin && self.in_flight() > 0 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            spins = 0;
            self.idle();
        }
    }

    fn in_flight(&self) -> usize {
        self.groups
            .iter()
            .flat_map(|g| &g.slots)
            .filter(|s| s.busy.as_ref().is_some_and(|b| b.job.is_some()))
            .count()
    }

    /// Nothing to do: park, or be the one that lets the device run.
    fn idle(&mut self) {
        let sh = self.shared;
        let ticket = sh.sleep.prepare();
        let activity = sh.activity();
        if self.pass() || sh.outstanding.load(Ordering::SeqCst) == 0 {
            sh.sleep.cancel(ticket);
            return;
        }
        sh.rescanned[self.me].store(activity, Ordering::SeqCst);
        let last = sh.active.fetch_sub(1, Ordering::SeqCst) == 1;
        if last
            && sh
                .driving
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            sh.sleep.cancel(ticket);
            self.stats.drives += 1;
            let drive = self.target.drive();
            if drive == Drive::Progress {
                sh.bump(self.me);
            } else {
                // Nothing can change on the device, and every worker looked for work in vain
                // since anything last happened: what is ready now can never be placed.
                let now = sh.activity();
                if sh.rescanned.iter().all(|r| r.load(Ordering::SeqCst) == now) {
                    sh.idle_generation.fetch_add(1, Ordering::SeqCst);
                }
            }
            sh.driving.store(false, Ordering::SeqCst);
            sh.active.fetch_add(1, Ordering::SeqCst);
            sh.sleep.wake_all();
        } else {
            self.stats.parks += 1;
            sh.sleep.sleep(ticket);
            sh.active.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// One pass of the animation master over this worker's shard; whether anything happened.
    fn pass(&mut self) -> bool {
        let generation = self.shared.idle_generation.load(Ordering::SeqCst);
        let stalled = generation != self.seen_idle;
        self.seen_idle = generation;
        let mut progressed = self.completions();
        progressed |= self.inbox();
        progressed |= self.assign();
        // Stolen work counts only once posted: work no slot can take yet would otherwise
        // bounce between idle thieves, each thinking it made progress.
        if !progressed && self.local.is_empty() && self.steal() {
            progressed |= self.assign();
        }
        if stalled {
            progressed |= self.abandon();
        }
        if progressed {
            self.shared.bump(self.me);
        }
        // One wake-up per pass, after everything it made is visible.
        if std::mem::take(&mut self.wake) {
            self.shared.sleep.notify();
        }
        progressed
    }

    /// Step 1: hand finished commands to the request handler.
    fn completions(&mut self) -> bool {
        let mut progressed = false;
        for gi in 0..self.groups.len() {
            for si in 0..self.groups[gi].slots.len() {
                let slot = &mut self.groups[gi].slots[si];
                let Some(busy) = slot.busy.as_mut() else {
                    continue;
                };
                let device = |r: &crate::host::session::Report| {
                    (r.finished_at != 0).then_some((r.started_at, r.finished_at))
                };
                let event = match slot.mailbox.poll(slot.epoch) {
                    Polled::Pending => continue,
                    Polled::Reported(r) => {
                        let d = device(&r);
                        let o = if r.timeout {
                            Outcome::TimedOut(r)
                        } else {
                            Outcome::Reported(r)
                        };
                        Event::Final(busy.job.take().map(|j| (j, o, d)))
                    }
                    Polled::Overdue(r) => match busy.job.take() {
                        Some(job) => {
                            let d = device(&r);
                            Event::Overdue((job, Outcome::TimedOut(r), d))
                        }
                        None => continue,
                    },
                    // The late completion of a timeout already handed over: only the release.
                    Polled::Quiet => Event::Final(None),
                    Polled::Refused(e) => {
                        let o = Outcome::Refused(Refusal::Device(e));
                        Event::Final(busy.job.take().map(|j| (j, o, None)))
                    }
                };
                progressed = true;
                let times = std::mem::take(&mut busy.times);
                let group = self.groups[gi].info.id;
                match event {
                    Event::Final(end) => {
                        if let Some((job, outcome, device)) = end {
                            self.finish(job, Some(group), outcome, times, device);
                        }
                        let busy = self.groups[gi].slots[si].busy.take();
                        if let Some(b) = busy {
                            if b.awaiting_quiet {
                                self.shared.outstanding.fetch_sub(1, Ordering::SeqCst);
                            }
                            self.shared.reservations.release(b.held);
                            self.wake = true;
                        }
                    }
                    Event::Overdue((job, outcome, device)) => {
                        // The run waits for the late completion too (unless the device stalls).
                        self.shared.outstanding.fetch_add(1, Ordering::SeqCst);
                        if let Some(b) = self.groups[gi].slots[si].busy.as_mut() {
                            b.awaiting_quiet = true;
                        }
                        self.finish(job, Some(group), outcome, times, device);
                    }
                }
            }
        }
        progressed
    }

    /// Step 2: messages, and commands other workers routed to this worker's groups.
    fn inbox(&mut self) -> bool {
        let mut progressed = false;
        loop {
            match self.shared.inboxes[self.me].steal() {
                Steal::Empty => return progressed,
                Steal::Retry => continue,
                Steal::Success(Inbound::Ready(r)) => {
                    progressed = true;
                    self.enqueue(r);
                }
                Steal::Success(Inbound::Message(m)) => {
                    progressed = true;
                    let mut cx = cx(
                        self.shared,
                        self.me,
                        &mut self.submitted,
                        &mut self.messages,
                    );
                    self.plugin.receive(m, &mut cx);
                    let now = self.shared.now();
                    self.route(now);
                }
            }
        }
    }

    fn enqueue(&mut self, r: Ready<P::Work>) {
        match r.place {
            Place::Any => self.local.push(r),
            Place::Group(g) => {
                let i = self.shared.local_index[g.0 as usize];
                self.groups[i].pinned.push_back(r);
            }
        }
    }

    /// Step 3: offer every empty slot to the assigner; post what it picks once its tiles are
    /// reserved.
    ///
    /// The stealable candidates stay with this worker from one slot to the next of this step
    /// (topped up from the deque as they are taken) and go back to the deque at its end: taking
    /// and returning all of them for every slot was a tenth of the host overhead per command.
    fn assign(&mut self) -> bool {
        let mut progressed = false;
        for gi in 0..self.groups.len() {
            while let Some(si) = self.groups[gi].slots.iter().position(|s| s.busy.is_none()) {
                match self.fill(gi, si) {
                    Fill::Posted => progressed = true,
                    Fill::Refused => progressed = true,
                    Fill::Nothing => break,
                }
            }
        }
        // Popped newest first: push back oldest first, so the deque's order is kept.
        for r in self.candidates.drain(..).rev() {
            self.local.push(r);
        }
        progressed
    }

    /// Offers slot `si` of group `gi` to the assigner: the group's first pinned command (at
    /// index 0) and up to `lookahead` stealable ones from `candidates`.
    fn fill(&mut self, gi: usize, si: usize) -> Fill {
        while self.candidates.len() < self.shared.config.lookahead {
            match self.local.pop() {
                Some(r) => self.candidates.push(r),
                None => break,
            }
        }
        let pinned = match self.groups[gi].pinned.pop_front() {
            Some(r) => {
                self.candidates.insert(0, r);
                true
            }
            None => false,
        };
        if self.candidates.is_empty() {
            return Fill::Nothing;
        }
        let in_flight = self.groups[gi]
            .slots
            .iter()
            .filter(|s| s.busy.is_some())
            .count();
        let view = SlotView {
            group: &self.groups[gi].info,
            slot: si,
            in_flight,
        };
        let pick = self
            .plugin
            .assign(&view, &self.candidates)
            .filter(|&i| i < self.candidates.len());
        let chosen = pick.map(|i| self.candidates.remove(i));
        if pinned && pick != Some(0) {
            let r = self.candidates.remove(0);
            self.groups[gi].pinned.push_front(r);
        }
        let Some(job) = chosen else {
            return Fill::Nothing;
        };
        let info = self.groups[gi].info.clone();
        let spec = self.plugin.command(&job.work, &info);
        if spec.group != info.rect {
            let refusal = Refusal::WrongGroup {
                spec: spec.group,
                slot: info.rect,
            };
            let times = self.times_of(&job);
            self.finish(job, Some(info.id), Outcome::Refused(refusal), times, None);
            return Fill::Refused;
        }
        let exclusive = spec.flags & abi::FLAG_EXCLUSIVE != 0;
        let Some(held) = self
            .shared
            .reservations
            .try_reserve(self.groups[gi].regions, exclusive)
        else {
            self.stats.blocked += 1;
            match job.place {
                Place::Group(_) => self.groups[gi].pinned.push_front(job),
                Place::Any => self.local.push(job),
            }
            return Fill::Nothing;
        };
        let slot = &mut self.groups[gi].slots[si];
        slot.epoch += 1;
        let armed = slot.mailbox.arm(slot.epoch);
        debug_assert!(armed, "a free slot's mailbox is settled");
        let posting = Posting {
            mailbox: Arc::clone(&slot.mailbox),
            epoch: slot.epoch,
        };
        let mut times = self.times_of(&job);
        times.posted = Some(self.shared.now());
        match self.target.post(spec, posting) {
            Ok(()) => {
                self.stats.posted += 1;
                self.groups[gi].slots[si].busy = Some(Busy {
                    job: Some(job),
                    awaiting_quiet: false,
                    held,
                    times,
                });
                Fill::Posted
            }
            Err(e) => {
                self.shared.reservations.release(held);
                self.finish(
                    job,
                    Some(info.id),
                    Outcome::Refused(Refusal::Device(e)),
                    times,
                    None,
                );
                Fill::Refused
            }
        }
    }

    /// Step 4: take ready commands from the seeds or another worker, when this worker has a
    /// free slot to run them in.
    fn steal(&mut self) -> bool {
        let free = self
            .groups
            .iter()
            .any(|g| g.slots.iter().any(|s| s.busy.is_none()));
        if !free {
            return false;
        }
        let n = self.shared.config.workers;
        loop {
            let mut retry = false;
            match self.shared.seeds.steal_batch_and_pop(&self.local) {
                Steal::Success(r) => {
                    self.local.push(r);
                    return true;
                }
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            for k in 1..n {
                match self.shared.stealers[(self.me + k) % n].steal_batch_and_pop(&self.local) {
                    Steal::Success(r) => {
                        self.local.push(r);
                        return true;
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return false;
            }
        }
    }

    /// After the device went idle: every ready command that could not be placed is abandoned,
    /// and timed-out commands whose cores will never report stop holding up the run's end
    /// (their slots and tiles stay held).
    fn abandon(&mut self) -> bool {
        let mut left = Vec::new();
        let mut any = false;
        for g in &mut self.groups {
            left.extend(g.pinned.drain(..));
            for b in g.slots.iter_mut().filter_map(|s| s.busy.as_mut()) {
                if std::mem::take(&mut b.awaiting_quiet) {
                    self.shared.outstanding.fetch_sub(1, Ordering::SeqCst);
                    any = true;
                }
            }
        }
        while let Some(r) = self.local.pop() {
            left.push(r);
        }
        loop {
            match self.shared.seeds.steal() {
                Steal::Success(r) => left.push(r),
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        any |= !left.is_empty();
        for job in left {
            let times = self.times_of(&job);
            self.finish(job, None, Outcome::Abandoned, times, None);
        }
        any
    }

    /// A run-wide unique id without a shared counter: seeds have ids below 2^56; worker `w`'s
    /// `n`-th command gets `(w + 1) << 56 | n`.
    fn next_id(&mut self) -> u64 {
        self.made += 1;
        (self.me as u64 + 1) << 56 | self.made
    }

    fn times_of(&self, job: &Ready<P::Work>) -> CommandTimes {
        CommandTimes {
            id: job.id,
            queued: job.queued,
            stolen: job.origin != usize::MAX && job.origin != self.me,
            ..CommandTimes::default()
        }
    }

    /// Hands a command's end to the request handler and routes what it submitted.
    fn finish(
        &mut self,
        job: Ready<P::Work>,
        group: Option<GroupId>,
        outcome: Outcome,
        mut times: CommandTimes,
        device: Option<(u64, u64)>,
    ) {
        // Until now `queued` and `posted` were raw clock ticks.
        let sh = self.shared;
        times.queued = sh.ns(times.queued);
        times.posted = times.posted.map(|p| sh.ns(p));
        times.group = group.map(|g| g.0);
        times.worker = self.me;
        times.noticed = sh.ns(sh.now());
        times.outcome = match outcome {
            Outcome::Reported(_) => "reported",
            Outcome::TimedOut(_) => "timed_out",
            Outcome::Refused(_) => "refused",
            Outcome::Abandoned => "abandoned",
        };
        if let Some((s, r)) = device {
            times.started = Some(s);
            times.reported = Some(r);
        }
        self.stats.handled += 1;
        self.stats.stolen += times.stolen as u64;
        let finished = Finished {
            work: job.work,
            id: job.id,
            group,
            outcome,
            times: times.clone(),
        };
        let mut cx = cx(
            self.shared,
            self.me,
            &mut self.submitted,
            &mut self.messages,
        );
        self.plugin.handle(finished, &mut cx);
        let now = self.shared.now();
        times.handled = self.shared.ns(now);
        self.times.push(times);
        self.route(now);
    }

    /// Makes the plugin's follow-ups ready and sends its messages, in place of the one command
    /// or message just handled. The outstanding count changes once, by the difference, and
    /// never undercounts: a rise is counted before the new work is visible, a fall after.
    fn route(&mut self, now: u64) {
        let n = self.submitted.len() + self.messages.len();
        if n == 0 {
            self.shared.outstanding.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        if n > 1 {
            self.shared.outstanding.fetch_add(n - 1, Ordering::SeqCst);
        }
        let mut submitted = std::mem::take(&mut self.submitted);
        for (work, place) in submitted.drain(..) {
            let ready = Ready {
                work,
                place,
                id: self.next_id(),
                queued: now,
                origin: self.me,
            };
            let owner = match place {
                Place::Any => self.me,
                Place::Group(g) => self.shared.groups[g.0 as usize].shard,
            };
            if owner == self.me {
                self.enqueue(ready);
            } else {
                self.shared.inboxes[owner].push(Inbound::Ready(ready));
            }
        }
        self.submitted = submitted;
        for (shard, m) in self.messages.drain(..) {
            self.shared.inboxes[shard].push(Inbound::Message(m));
        }
        self.wake = true;
    }

    fn into_outcome(self) -> WorkerOutcome<P> {
        let slots = || self.groups.iter().flat_map(|g| &g.slots);
        WorkerOutcome {
            held: slots().filter(|s| s.busy.is_some()).count(),
            dropped: slots().map(|s| s.mailbox.dropped()).sum(),
            recorded: Recorded::of(&self.times, self.target.aiclk_mhz()),
            plugin: self.plugin,
            times: self.times,
            stats: self.stats,
        }
    }
}

/// The plugin's view of worker `me` (a function, not a method: it borrows only these fields,
/// so the plugin itself can be borrowed alongside).
fn cx<'a, W, M>(
    shared: &'a Shared<W, M>,
    me: usize,
    submitted: &'a mut Vec<(W, Place)>,
    messages: &'a mut Vec<(usize, M)>,
) -> Cx<'a, W, M> {
    Cx {
        shard: me,
        shards: shared.config.workers,
        groups: &shared.groups,
        submitted,
        messages,
    }
}

enum Fill {
    Posted,
    Refused,
    Nothing,
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn group(id: u32, rect: LogicalRect) -> GroupInfo {
        GroupInfo {
            id: GroupId(id),
            rect,
            shard: 0,
        }
    }

    #[test]
    fn disjoint_groups_take_one_region_each() {
        let grid = LogicalRect::new(0, 0, 4, 2);
        let groups = [
            group(0, LogicalRect::new(0, 0, 2, 2)),
            group(1, LogicalRect::new(2, 0, 2, 2)),
        ];
        let (per_group, count) = regions(grid, &groups);
        assert_eq!(count, 2);
        assert_eq!(per_group[0].len(), 1);
        assert_eq!(per_group[1].len(), 1);
        assert_ne!(per_group[0][0], per_group[1][0]);
    }

    #[test]
    fn overlapping_groups_share_exactly_the_overlap() {
        // Columns 0..3 of one row; a covers 0..2, b covers 1..3: regions {0}, {1}, {2}, and the
        // uncovered column 3.
        let grid = LogicalRect::new(0, 0, 4, 1);
        let a = group(0, LogicalRect::new(0, 0, 2, 1));
        let b = group(1, LogicalRect::new(1, 0, 2, 1));
        let whole = group(2, LogicalRect::new(0, 0, 3, 1));
        let (per_group, count) = regions(grid, &[a, b, whole]);
        assert_eq!(count, 4);
        let shared: Vec<u16> = per_group[0]
            .iter()
            .filter(|r| per_group[1].contains(r))
            .copied()
            .collect();
        assert_eq!(shared.len(), 1, "a and b overlap in one column");
        assert_eq!(
            per_group[2].len(),
            3,
            "the whole row meets both and either alone"
        );
        assert!(per_group[0].iter().all(|r| per_group[2].contains(r)));
    }
}
