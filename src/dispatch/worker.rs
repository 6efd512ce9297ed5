//! The worker: one thread's loop over its shard of the groups. It owns its plugin instance,
//! its groups' slots (their mailboxes and in-flight commands, touched by no other thread) and
//! its deque of stealable ready commands; per pass it scans completions, drains its inbox,
//! offers empty slots to the assigner, and steals when it has nothing of its own; with nothing
//! to do it spins, then parks or drives the device (see the parent module's docs).

use std::collections::VecDeque;
use std::sync::Arc;

use crossbeam_deque::{Steal, Worker as Deque};
use komorebi_kernel::abi;

use super::config::GroupId;
use super::idle::Idled;
use super::mailbox::{Mailbox, Polled};
use super::measure::Recorded;
use super::measure::{CommandTimes, WorkerStats};
use super::plugin::{Cx, Finished, GroupInfo, Outcome, Place, Plugin, Ready, Refusal, SlotView};
use super::reserve::Held;
use super::shared::{Inbound, Shared};
use super::sync::Ordering;
use super::target::{Drive, Posting, Target};

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
    regions: &'s [u32],
    pinned: VecDeque<Ready<W>>,
    slots: Vec<Slot<'s, W>>,
}

pub(super) struct WorkerOutcome<P> {
    pub(super) plugin: P,
    pub(super) times: Vec<CommandTimes>,
    pub(super) recorded: Recorded,
    pub(super) stats: WorkerStats,
    pub(super) held: usize,
    pub(super) dropped: u64,
}

pub(super) struct WorkerState<'s, P: Plugin, T> {
    me: usize,
    shared: &'s Shared<P::Work, P::Message>,
    /// Per chip, its target.
    targets: &'s [&'s T],
    plugin: P,
    local: Deque<Ready<P::Work>>,
    /// Where a batch stolen from another worker lands first (one deque for the run: a steal is
    /// tried on every pass that found nothing to do).
    batch: Deque<Ready<P::Work>>,
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
    pub(super) fn new(
        me: usize,
        shared: &'s Shared<P::Work, P::Message>,
        targets: &'s [&'s T],
        plugin: P,
        local: Deque<Ready<P::Work>>,
    ) -> Self {
        let groups = shared
            .groups
            .iter()
            .filter(|g| g.worker == me)
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
            targets,
            plugin,
            local,
            batch: Deque::new_lifo(),
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

    pub(super) fn run(&mut self) {
        let mut spins = 0;
        loop {
            if self.shared.outstanding.load(Ordering::SeqCst) == 0 || self.shared.aborted() {
                self.shared.idle.sleep().wake_all();
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

    /// Nothing to do: park, or be the one that lets the device run ([`Idle::idle`]).
    fn idle(&mut self) {
        let (sh, targets, me) = (self.shared, self.targets, self.me);
        let idled = sh.idle.idle(
            me,
            || sh.aborted() || self.pass() || sh.outstanding.load(Ordering::SeqCst) == 0,
            || {
                let drove = T::drive_all(targets);
                // Its commands in flight can never end: the run would wait for them for good.
                if drove == Drive::Lost {
                    sh.lose();
                }
                drove
            },
        );
        match idled {
            Idled::Found => {}
            Idled::Drove(_) => self.stats.drives += 1,
            Idled::Slept => self.stats.parks += 1,
        }
    }

    /// One pass of the animation master over this worker's shard; whether anything happened.
    fn pass(&mut self) -> bool {
        let generation = self.shared.idle.generation();
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
            self.shared.idle.bump(self.me);
        }
        // One wake-up per pass, after everything it made is visible.
        if std::mem::take(&mut self.wake) {
            self.shared.idle.sleep().notify();
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
            Place::Any | Place::Near(_) => self.local.push(r),
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
                // A group one of its own commands holds exclusively (one just posted too) can
                // post nothing until that command ends: it is offered nothing. (Taking
                // stealable commands out of the deque for it, pass after pass, hid them from a
                // thief, which then slept through them, and the stall that followed abandoned
                // work the thief's group could run.)
                let slots = &self.groups[gi].slots;
                if slots
                    .iter()
                    .any(|s| s.busy.as_ref().is_some_and(|b| b.held.exclusive()))
                {
                    break;
                }
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
        let pick = self.plugin.assign(&view, &self.candidates);
        // A plugin bug: the run ends with it (`DispatchError::WorkerPanicked`), rather than the
        // command being abandoned later with no hint why.
        if let Some(i) = pick.filter(|&i| i >= self.candidates.len()) {
            panic!(
                "the assigner picked candidate {i} of {} (allowed: 0..{} or none)",
                self.candidates.len(),
                self.candidates.len()
            );
        }
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
        let reserved = self
            .shared
            .reservations
            .try_reserve(self.groups[gi].regions, exclusive);
        let held = match reserved {
            Ok(held) => held,
            Err(blocked) => {
                // Regions held for a moment may have refused a placer that then parked: wake
                // it to look again (nothing is counted as activity: a command blocked for good
                // must not keep the run from seeing that nothing moves).
                self.wake |= blocked.wakes_sleepers();
                self.stats.blocked += 1;
                match job.place {
                    Place::Group(_) => self.groups[gi].pinned.push_front(job),
                    Place::Any | Place::Near(_) => self.local.push(job),
                }
                return Fill::Nothing;
            }
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
        match self.targets[self.groups[gi].info.chip].post(spec, posting) {
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
                // Nothing was posted, so nothing will be published: settle the mailbox, or the
                // slot could never be armed again.
                let withdrawn = self.groups[gi].slots[si]
                    .mailbox
                    .withdraw(self.groups[gi].slots[si].epoch);
                debug_assert!(withdrawn, "a post that failed published nothing");
                self.shared.reservations.release(held);
                self.wake = true;
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

    /// Step 4: take ready commands from the seeds, when this worker has a free slot to run them
    /// in, or from another worker, when it has a free slot of a group no exclusive command
    /// holds.
    fn steal(&mut self) -> bool {
        let free = self
            .groups
            .iter()
            .any(|g| g.slots.iter().any(|s| s.busy.is_none()));
        if !free {
            return false;
        }
        // From another worker only for a free slot of a group that no exclusive command holds:
        // such a slot can post nothing until the command ends, so work stolen for it would
        // wait here while its owner may be free first.
        let open = self.groups.iter().any(|g| {
            g.slots.iter().any(|s| s.busy.is_none())
                && g.slots
                    .iter()
                    .all(|s| s.busy.as_ref().is_none_or(|b| !b.held.exclusive()))
        });
        let n = if open { self.shared.config.workers } else { 1 };
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
                // Through a deque of this worker's own, to mark each command of the batch
                // stolen; then into its deque in the order the batch's deque would give them.
                match self.shared.stealers[(self.me + k) % n].steal_batch_and_pop(&self.batch) {
                    Steal::Success(mut r) => {
                        let mut taken = Vec::new();
                        while let Some(mut b) = self.batch.pop() {
                            b.stolen = true;
                            taken.push(b);
                        }
                        for b in taken.into_iter().rev() {
                            self.local.push(b);
                        }
                        r.stolen = true;
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
            stolen: job.stolen,
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
        // A refused command ran nowhere: no queue wait or round trip to count, and not stolen.
        if matches!(outcome, Outcome::Refused(_)) {
            times.posted = None;
        }
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
        // Stolen and run: a command refused before it was posted, or abandoned, ran nowhere.
        times.stolen &= times.posted.is_some();
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
                stolen: false,
            };
            let owner = match place {
                Place::Any => self.me,
                Place::Group(g) | Place::Near(g) => self.shared.groups[g.0 as usize].worker,
            };
            if owner == self.me {
                self.enqueue(ready);
            } else {
                self.shared.inboxes[owner].push(Inbound::Ready(ready));
            }
        }
        self.submitted = submitted;
        for (worker, m) in self.messages.drain(..) {
            self.shared.inboxes[worker].push(Inbound::Message(m));
        }
        self.wake = true;
    }

    pub(super) fn into_outcome(self) -> WorkerOutcome<P> {
        let slots = || self.groups.iter().flat_map(|g| &g.slots);
        // Each command's device cycles at the clock of the chip that ran it.
        let clocks: Vec<Option<u32>> = (self.targets.iter())
            .map(|t| t.clock_kind().is_time().then(|| t.aiclk_mhz()))
            .collect();
        let (groups, first) = (&self.shared.groups, clocks[0]);
        let recorded = Recorded::of_each(&self.times, |t| {
            t.group
                .and_then(|g| groups.get(g as usize))
                .map_or(first, |g| clocks[g.chip])
        });
        WorkerOutcome {
            held: slots().filter(|s| s.busy.is_some()).count(),
            dropped: slots().map(|s| s.mailbox.dropped()).sum(),
            recorded,
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
        worker: me,
        workers: shared.config.workers,
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
