//! The dispatcher against scripted and null devices: every command ends exactly once, exclusive
//! commands on overlapping groups are never in flight together whatever the assigner picks,
//! timeouts hold their tiles until the late completion, stealing moves ready work only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use komorebi::dispatch::{
    Cx, DispatchConfig, DispatchError, Dispatcher, Drive, Finished, GroupId, GroupInfo, NullTarget,
    Outcome, Place, Plugin, Posting, Published, Ready, SlotView, Target,
};
use komorebi::host::session::{CommandSpec, Report, SessionError, TileProgram};
use komorebi_hal::LogicalRect;
use komorebi_kernel::abi;
use proptest::prelude::*;

#[path = "common/failing_device.rs"]
mod failing_device;

const GRID: LogicalRect = LogicalRect::new(0, 0, 8, 6);

fn spec(group: LogicalRect, exclusive: bool, tag: u64) -> CommandSpec {
    CommandSpec {
        handler: 7,
        flags: if exclusive { abi::FLAG_EXCLUSIVE } else { 0 },
        group,
        wait_limit: 1000,
        budget: None,
        programs: vec![TileProgram {
            reader: vec![tag as u32, (tag >> 32) as u32],
            ..TileProgram::default()
        }],
    }
}

/// A device whose commands finish when it is driven, in an order a seeded generator picks;
/// some go overdue first and complete late. It checks, at every post, that no exclusive
/// command shares a tile with another command in flight and that no tile gets more commands
/// than it has slots (overdue ones included).
struct Scripted {
    state: Mutex<ScriptState>,
}

struct InFlight {
    group: LogicalRect,
    exclusive: bool,
    tag: u64,
    posting: Posting,
    overdue: bool,
}

struct ScriptState {
    rng: u64,
    in_flight: Vec<InFlight>,
    violations: Vec<String>,
    runs: HashMap<u64, u32>,
    /// Postings already finished, to replay as stale publications.
    finished: Vec<Posting>,
    timeout_percent: u64,
}

impl ScriptState {
    fn next(&mut self) -> u64 {
        // xorshift64*: fixed by the test's seed.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl Scripted {
    fn new(seed: u64, timeout_percent: u64) -> Self {
        Self {
            state: Mutex::new(ScriptState {
                rng: seed | 1,
                in_flight: Vec::new(),
                violations: Vec::new(),
                runs: HashMap::new(),
                finished: Vec::new(),
                timeout_percent,
            }),
        }
    }
}

impl Target for Scripted {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        let mut guard = self.state.lock().unwrap();
        let s = &mut *guard;
        let exclusive = command.flags & abi::FLAG_EXCLUSIVE != 0;
        for other in &s.in_flight {
            if (exclusive || other.exclusive) && other.group.overlaps(command.group) {
                let v = format!(
                    "command {} on {} posted while {} on {} is in flight (exclusive {} / {})",
                    command.programs[0].reader[0],
                    command.group,
                    other.tag,
                    other.group,
                    exclusive,
                    other.exclusive
                );
                s.violations.push(v);
            }
        }
        let r = &command.programs[0].reader;
        let tag = r[0] as u64 | (r[1] as u64) << 32;
        // A tile has `abi::SLOTS` command slots; a post beyond them is refused on a device.
        for y in command.group.y0..command.group.y0 + command.group.rows {
            for x in command.group.x0..command.group.x0 + command.group.columns {
                let tile = LogicalRect::new(x, y, 1, 1);
                let held = s
                    .in_flight
                    .iter()
                    .filter(|f| f.group.overlaps(tile))
                    .count();
                if held >= abi::SLOTS as usize {
                    s.violations.push(format!(
                        "command {tag} posted to ({x}, {y}), whose {held} command slots are taken"
                    ));
                }
            }
        }
        *s.runs.entry(tag).or_default() += 1;
        s.in_flight.push(InFlight {
            group: command.group,
            exclusive,
            tag,
            posting,
            overdue: false,
        });
        Ok(())
    }

    fn drive(&self) -> Drive {
        let mut s = self.state.lock().unwrap();
        if s.in_flight.is_empty() {
            return Drive::Idle;
        }
        // Finish one to three commands, chosen at random (completion order is not post order).
        let n = 1 + (s.next() % 3) as usize;
        for _ in 0..n.min(s.in_flight.len()) {
            let i = (s.next() % s.in_flight.len() as u64) as usize;
            let timeout = s.next() % 100 < s.timeout_percent;
            let f = &mut s.in_flight[i];
            if f.overdue {
                assert!(f.posting.publish(Published::Quiet));
            } else if timeout {
                f.overdue = true;
                let mut r = Report::success(0);
                (r.ok, r.timeout) = (false, true);
                r.unreported.push([f.group.x0, f.group.y0]);
                assert!(f.posting.publish(Published::Overdue(r)));
                continue;
            } else {
                assert!(f.posting.publish(Published::Reported(Report::success(0))));
            }
            let done = s.in_flight.swap_remove(i);
            s.finished.push(done.posting);
        }
        // A stale publication for an old command must be dropped by its mailbox.
        if !s.finished.is_empty() && s.next().is_multiple_of(4) {
            let i = (s.next() % s.finished.len() as u64) as usize;
            let stale = s.finished[i].clone();
            assert!(!stale.publish(Published::Reported(Report::success(0))));
        }
        Drive::Progress
    }

    fn aiclk_mhz(&self) -> u32 {
        1350
    }
}

#[derive(Debug)]
struct Job {
    tag: u64,
    exclusive: bool,
    /// Follow-ups this command makes when it ends.
    children: u32,
}

/// A plugin whose assigner picks adversarially (the last candidate, so stealable work jumps
/// ahead of pinned), and whose handler records every end and fans out follow-ups.
struct Recorder {
    ends: Vec<(u64, &'static str)>,
    next_tag: &'static AtomicU64,
    groups: usize,
}

impl Plugin for Recorder {
    type Work = Job;
    type Message = ();

    fn handle(&mut self, f: Finished<Job>, cx: &mut Cx<'_, Job, ()>) {
        let kind = match f.outcome {
            Outcome::Reported(_) => "reported",
            Outcome::TimedOut(_) => "timed_out",
            Outcome::Refused(_) => "refused",
            Outcome::Abandoned => "abandoned",
        };
        self.ends.push((f.work.tag, kind));
        for c in 0..f.work.children {
            let tag = self.next_tag.fetch_add(1, Ordering::Relaxed);
            let place = if c % 2 == 0 {
                Place::Any
            } else {
                Place::Group(GroupId((tag % self.groups as u64) as u32))
            };
            let job = Job {
                tag,
                exclusive: tag.is_multiple_of(3),
                children: 0,
            };
            cx.submit(job, place).expect("group ids are in range");
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, candidates: &[Ready<Job>]) -> Option<usize> {
        Some(candidates.len() - 1)
    }

    fn command(&mut self, work: &Job, group: &GroupInfo) -> CommandSpec {
        spec(group.rect, work.exclusive, work.tag)
    }
}

fn groups_strategy() -> impl Strategy<Value = Vec<LogicalRect>> {
    prop::collection::vec(
        (0u8..8, 0u8..6, 1u8..4, 1u8..4)
            .prop_map(|(x, y, c, r)| LogicalRect::new(x.min(8 - c), y.min(6 - r), c, r)),
        1..7,
    )
}

struct Case {
    ends: Vec<(u64, &'static str)>,
    violations: Vec<String>,
    runs: HashMap<u64, u32>,
    /// Per seed tag pinned to a group, the chip of that group, and the chips it ran on.
    pinned: Vec<(u64, usize, Vec<usize>)>,
    tags: u64,
    held: usize,
}

/// `groups[i]` on chip `i % chips`, each chip a scripted device of its own over `GRID`.
fn run_case(
    groups: &[LogicalRect],
    seed: u64,
    seeds: u32,
    workers: usize,
    timeouts: u64,
    chips: usize,
) -> Case {
    let targets: Vec<Scripted> = (0..chips as u64)
        .map(|c| Scripted::new(seed ^ c.wrapping_mul(0x9E37_79B9), timeouts))
        .collect();
    let config = DispatchConfig {
        workers,
        ..DispatchConfig::default()
    };
    let on_chips: Vec<(&Scripted, LogicalRect)> = targets.iter().map(|t| (t, GRID)).collect();
    let placed: Vec<(usize, LogicalRect)> = groups
        .iter()
        .enumerate()
        .map(|(i, &g)| (i % chips, g))
        .collect();
    let mut d = Dispatcher::with_chips(&on_chips, &placed, config).unwrap();
    let tags: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(seeds as u64)));
    let mut pinned = Vec::new();
    for t in 0..seeds as u64 {
        let group = GroupId((t % groups.len() as u64) as u32);
        let place = match t % 4 {
            0 | 2 => Place::Any,
            1 => {
                pinned.push((t, group.0 as usize % chips));
                Place::Group(group)
            }
            _ => Place::Near(group),
        };
        let job = Job {
            tag: t,
            exclusive: t % 2 == 0,
            children: (t % 4) as u32,
        };
        d.seed(job, place).unwrap();
    }
    let n = groups.len();
    let result = d
        .run(|_| Recorder {
            ends: Vec::new(),
            next_tag: tags,
            groups: n,
        })
        .unwrap();
    let states: Vec<ScriptState> = targets
        .into_iter()
        .map(|t| t.state.into_inner().unwrap())
        .collect();
    let mut runs: HashMap<u64, u32> = HashMap::new();
    for s in &states {
        for (&tag, &n) in &s.runs {
            *runs.entry(tag).or_default() += n;
        }
    }
    let pinned = pinned
        .into_iter()
        .map(|(tag, chip)| {
            let ran = (0..chips)
                .filter(|&c| states[c].runs.contains_key(&tag))
                .collect();
            (tag, chip, ran)
        })
        .collect();
    Case {
        ends: result.plugins.into_iter().flat_map(|p| p.ends).collect(),
        violations: states.into_iter().flat_map(|s| s.violations).collect(),
        runs,
        pinned,
        tags: tags.load(Ordering::Relaxed),
        held: result.summary.held_at_end,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Random groups, flags, completion orders and timeouts: no exclusive overlap is ever in
    /// flight, every command ends exactly once, and none runs twice.
    #[test]
    fn exclusive_commands_never_overlap_and_every_command_ends_once(
        groups in groups_strategy(),
        seed in any::<u64>(),
        seeds in 1u32..24,
        workers in 1usize..4,
        timeouts in 0u64..30,
        chips in 1usize..4,
    ) {
        // Each chip checks its own tiles: the same rectangle on two chips is two sets of tiles.
        let case = run_case(&groups, seed, seeds, workers, timeouts, chips);
        prop_assert!(case.violations.is_empty(), "seed {seed}: {:?}", case.violations);
        let mut ended: Vec<u64> = case.ends.iter().map(|e| e.0).collect();
        ended.sort_unstable();
        let all: Vec<u64> = (0..case.tags).collect();
        prop_assert_eq!(ended, all, "seed {}: every command ends exactly once", seed);
        prop_assert!(case.runs.values().all(|&n| n == 1), "seed {seed}: a command ran twice");
        for (tag, chip, ran) in &case.pinned {
            prop_assert_eq!(ran, &vec![*chip], "seed {}: command {} is pinned to a group of chip {}", seed, tag, chip);
        }
        // Scripted commands all end: nothing is abandoned, and the device only goes idle when
        // nothing is in flight.
        prop_assert!(case.ends.iter().all(|e| e.1 == "reported" || e.1 == "timed_out"));
        prop_assert_eq!(case.held, 0);
    }
}

#[test]
fn timeouts_are_handed_over_and_their_tiles_held_until_quiet() {
    // Two overlapping groups, some commands exclusive, half of them timing out at random (the
    // scripted device's 50%): the checks at post time would fail if a timed-out command's tiles
    // were reused before its late completion.
    let groups = [LogicalRect::new(0, 0, 2, 2), LogicalRect::new(1, 1, 2, 2)];
    let case = run_case(&groups, 0x5eed, 20, 2, 50, 1);
    assert!(case.violations.is_empty(), "{:?}", case.violations);
    assert!(case.ends.iter().any(|e| e.1 == "timed_out"));
    assert!(case.ends.iter().any(|e| e.1 == "reported"));
}

/// Null device: counts ends, fans one seed out into many stealable commands.
struct Fan {
    /// This plugin's worker.
    me: usize,
    handled: u64,
    fan_out: u32,
    /// Commands worker 1 handled, shared by both workers' plugins.
    thief_handled: Arc<AtomicU64>,
}

impl Plugin for Fan {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, f: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
        assert!(matches!(f.outcome, Outcome::Reported(_)));
        self.handled += 1;
        if self.me == 1 {
            self.thief_handled.fetch_add(1, Ordering::SeqCst);
        }
        if f.work == u32::MAX {
            for i in 0..self.fan_out {
                cx.submit(i, Place::Any).unwrap();
            }
        } else if self.me == 0 && self.handled == 2 {
            // Worker 0 is busy with its first follow-up until worker 1 has run one: the
            // follow-ups are in worker 0's deque (enqueued, and worker 1 woken, at the end of
            // the pass that handled the seed), so worker 1 can only have them by stealing. An
            // ordering, not a delay: the outcome does not depend on how the threads are
            // scheduled. The bound only turns a dispatcher that never steals into a failure
            // instead of a hang.
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while self.thief_handled.load(Ordering::SeqCst) == 0 {
                assert!(
                    std::time::Instant::now() < give_up,
                    "worker 1 never stole work from the busy worker 0"
                );
                std::thread::yield_now();
            }
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        Some(0)
    }

    fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
        spec(group.rect, false, *work as u64)
    }
}

#[test]
fn an_idle_worker_steals_ready_work_from_a_busy_one() {
    let groups = [
        LogicalRect::new(0, 0, 2, 2),
        LogicalRect::new(2, 0, 2, 2),
        LogicalRect::new(4, 0, 2, 2),
        LogicalRect::new(6, 0, 2, 2),
    ];
    let mut d = Dispatcher::new(&NullTarget, GRID, &groups, DispatchConfig::default()).unwrap();
    // Pinned to worker 0's first group: all 400 follow-ups start in worker 0's queue.
    d.seed(u32::MAX, Place::Group(GroupId(0))).unwrap();
    let thief_handled = Arc::new(AtomicU64::new(0));
    let r = d
        .run(|me| Fan {
            me,
            handled: 0,
            fan_out: 400,
            thief_handled: thief_handled.clone(),
        })
        .unwrap();
    let handled: Vec<u64> = r.plugins.iter().map(|p| p.handled).collect();
    assert_eq!(handled.iter().sum::<u64>(), 401);
    assert!(
        handled.iter().all(|&h| h > 0),
        "both workers ran commands: {handled:?}"
    );
    // Worker 0 made every follow-up ready, so all that worker 1 ran it stole; worker 0 may
    // have stolen some back from the batches worker 1 took (the seed it ran, it did not).
    for t in r.times.iter().filter(|t| t.worker == 1) {
        assert!(t.stolen, "{t:?}");
    }
    assert!(r.times.iter().any(|t| t.worker == 0 && !t.stolen));
    assert_eq!(r.summary.per_worker[1].stolen, handled[1]);
    // The summary counts what the records say, per worker and in all.
    for w in 0..2 {
        let stolen = r.times.iter().filter(|t| t.worker == w && t.stolen).count();
        assert_eq!(r.summary.per_worker[w].stolen, stolen as u64, "worker {w}");
    }
    assert_eq!(
        r.summary.stolen,
        r.summary.per_worker[0].stolen + r.summary.per_worker[1].stolen
    );
    assert_eq!(r.summary.commands, 401);
    assert_eq!(r.times.len(), 401);
    assert!(
        r.times
            .iter()
            .all(|t| t.posted.is_some() && t.handled >= t.noticed)
    );
}

/// A device on which command 0 times out at once and never goes quiet (a core stuck for good),
/// and every other command reports at once.
#[derive(Default)]
struct StuckZero {
    /// Something was published since the last drive (the posts publish outside the drives).
    published: std::sync::atomic::AtomicBool,
}

impl Target for StuckZero {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        let what = if command.programs[0].reader[0] == 0 {
            let mut r = Report::success(0);
            (r.ok, r.timeout) = (false, true);
            r.unreported.push([command.group.x0, command.group.y0]);
            Published::Overdue(r)
        } else {
            Published::Reported(Report::success(0))
        };
        assert!(posting.publish(what));
        self.published.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn drive(&self) -> Drive {
        match self.published.swap(false, Ordering::SeqCst) {
            true => Drive::Progress,
            false => Drive::Idle,
        }
    }

    fn aiclk_mhz(&self) -> u32 {
        1350
    }
}

/// Exclusive commands; worker 0's plugin takes its time to make any command but command 0
/// (as the broadcast's writes a job's data first), and worker 1's starts late.
struct SlowOwner {
    me: usize,
    ends: Vec<(u32, &'static str, Option<u32>)>,
}

impl Plugin for SlowOwner {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, f: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {
        let kind = match f.outcome {
            Outcome::Reported(_) => "reported",
            Outcome::TimedOut(_) => "timed_out",
            Outcome::Refused(_) => "refused",
            Outcome::Abandoned => "abandoned",
        };
        self.ends.push((f.work, kind, f.group.map(|g| g.0)));
    }

    fn assign(&mut self, _slot: &SlotView<'_>, candidates: &[Ready<u32>]) -> Option<usize> {
        (!candidates.is_empty()).then_some(0)
    }

    fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
        if self.me == 0 && *work != 0 {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        spec(group.rect, true, *work as u64)
    }
}

/// A group whose own slot holds it exclusively can post nothing until that command ends (here
/// never: a core stuck for good). Its worker once took its stealable commands out of its deque
/// for that group's free slot on every pass and put them back, so the idle worker of another
/// group looked for work while they were held aside, slept, and the stall that followed
/// abandoned them, though its group could run them (`--chips 2` with a stuck chip abandoned
/// jobs the other chip could run, in 2 runs of 60). Worker 0 now offers such a group nothing.
#[test]
fn work_a_group_held_for_good_cannot_run_is_left_for_an_idle_worker_to_steal() {
    let groups = [LogicalRect::new(0, 0, 2, 2), LogicalRect::new(2, 0, 2, 2)];
    let target = StuckZero::default();
    let mut d = Dispatcher::new(&target, GRID, &groups, DispatchConfig::default()).unwrap();
    d.seed(0, Place::Group(GroupId(0))).unwrap();
    d.seed(1, Place::Near(GroupId(0))).unwrap();
    let r = d
        .run(|me| {
            if me == 1 {
                // Worker 0 has posted command 0 by then and works on its group's free slot.
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            SlowOwner {
                me,
                ends: Vec::new(),
            }
        })
        .unwrap();
    let mut ends: Vec<_> = r.plugins.iter().flat_map(|p| p.ends.clone()).collect();
    ends.sort();
    assert_eq!(
        ends,
        [(0, "timed_out", Some(0)), (1, "reported", Some(1))],
        "command 1 runs on group 1, whose worker steals it"
    );
    assert_eq!(r.summary.held_at_end, 1, "command 0's slot, held for good");
}

#[test]
fn refusals_and_bad_configuration_are_typed() {
    let g = [LogicalRect::new(0, 0, 1, 1)];
    let e = Dispatcher::<_, u32>::new(
        &NullTarget,
        GRID,
        &g,
        DispatchConfig {
            depth: 3,
            ..DispatchConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "depth = 3 (allowed: 1..=2 (the tiles' command slots))"
    );
    let e = Dispatcher::<_, u32>::new(
        &NullTarget,
        GRID,
        &[LogicalRect::new(7, 0, 2, 1)],
        DispatchConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(e, DispatchError::Group { index: 0, .. }), "{e}");
    let mut d =
        Dispatcher::<_, u32>::new(&NullTarget, GRID, &g, DispatchConfig::default()).unwrap();
    assert_eq!(
        d.seed(1, Place::Group(GroupId(5))),
        Err(DispatchError::NoSuchGroup {
            group: 5,
            groups: 1
        })
    );
}

#[test]
fn groups_on_chips_the_dispatcher_lacks_or_outside_their_chip_are_refused() {
    let small = LogicalRect::new(0, 0, 2, 2);
    let chips = [(&NullTarget, GRID), (&NullTarget, small)];
    let rect = LogicalRect::new(0, 0, 3, 3);
    // Inside chip 0's grid, outside chip 1's.
    assert!(
        Dispatcher::<_, u32>::with_chips(&chips, &[(0, rect)], DispatchConfig::default()).is_ok()
    );
    let e = Dispatcher::<_, u32>::with_chips(
        &chips,
        &[(0, rect), (1, rect)],
        DispatchConfig::default(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        DispatchError::Group {
            index: 1,
            group: rect,
            chip: 1,
            columns: 2,
            rows: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "group 1 (0,0,3,3 on chip 1) is empty or reaches outside the chip's 2x2 grid (allowed: \
         at least 1 column and 1 row, X0 + COLUMNS <= 2 and Y0 + ROWS <= 2)"
    );
    let e = Dispatcher::<_, u32>::with_chips(&chips, &[(2, small)], DispatchConfig::default())
        .unwrap_err();
    assert_eq!(
        e,
        DispatchError::NoSuchChip {
            index: 0,
            chip: 2,
            chips: 2
        }
    );
    // A grid that does not start at 0,0 is named as such.
    let shifted = [(&NullTarget, LogicalRect::new(1, 0, 4, 4))];
    let e = Dispatcher::<_, u32>::with_chips(&shifted, &[(0, small)], DispatchConfig::default())
        .unwrap_err();
    assert_eq!(
        e,
        DispatchError::GridOrigin {
            chip: 0,
            grid: LogicalRect::new(1, 0, 4, 4)
        }
    );
    assert!(
        e.to_string().contains("allowed: a grid at origin 0,0"),
        "{e}"
    );
    let none: [(&NullTarget, LogicalRect); 0] = [];
    assert!(matches!(
        Dispatcher::<_, u32>::with_chips(&none, &[], DispatchConfig::default()),
        Err(DispatchError::Config { what: "chips", .. })
    ));
    let mut d =
        Dispatcher::<_, u32>::with_chips(&chips, &[(1, small)], DispatchConfig::default()).unwrap();
    assert_eq!(
        d.seed(1, Place::Near(GroupId(1))),
        Err(DispatchError::NoSuchGroup {
            group: 1,
            groups: 1
        })
    );
    assert_eq!(
        DispatchError::NoSuchGroup {
            group: 1,
            groups: 1
        }
        .to_string(),
        "seed pinned to group 1, but there are 1 groups (allowed: 0..1)"
    );
}

/// A plugin that builds its command for the wrong group, and one whose assigner never picks.
struct Misbehaving {
    ends: Vec<String>,
    pick: bool,
}

impl Plugin for Misbehaving {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, f: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {
        self.ends.push(match f.outcome {
            Outcome::Refused(r) => r.to_string(),
            Outcome::Abandoned => "abandoned".into(),
            o => format!("{o:?}"),
        });
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        self.pick.then_some(0)
    }

    fn command(&mut self, _work: &u32, _group: &GroupInfo) -> CommandSpec {
        spec(LogicalRect::new(5, 5, 1, 1), false, 0)
    }
}

#[test]
fn a_command_for_the_wrong_group_is_refused_and_unplaceable_work_abandoned() {
    let g = [LogicalRect::new(0, 0, 1, 1)];
    // Every worker count: the stall is seen only once every worker looked in vain since the
    // last activity of any of them (each counts its own; the check sums them).
    for (pick, workers) in [true, false]
        .into_iter()
        .flat_map(|p| (1..=4).map(move |w| (p, w)))
    {
        let config = DispatchConfig {
            workers,
            ..DispatchConfig::default()
        };
        let mut d = Dispatcher::new(&NullTarget, GRID, &g, config).unwrap();
        d.seed(1, Place::Any).unwrap();
        let r = d
            .run(|_| Misbehaving {
                ends: Vec::new(),
                pick,
            })
            .unwrap();
        let ends: Vec<String> = r.plugins.into_iter().flat_map(|p| p.ends).collect();
        let want = if pick {
            "the command was built for group 5,5,1,1 but assigned to a slot of group 0,0,1,1"
        } else {
            "abandoned"
        };
        assert_eq!(ends, vec![want.to_string()], "{workers} workers");
    }
}

/// Messages between workers: each worker's instance counts what the others told it.
struct Talker {
    heard: u32,
}

impl Plugin for Talker {
    type Work = u32;
    type Message = u32;

    fn handle(&mut self, f: Finished<u32>, cx: &mut Cx<'_, u32, u32>) {
        for s in 0..cx.workers() {
            cx.send(s, f.work);
        }
    }

    fn receive(&mut self, m: u32, _cx: &mut Cx<'_, u32, u32>) {
        self.heard += m;
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        Some(0)
    }

    fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
        spec(group.rect, true, *work as u64)
    }
}

#[test]
fn messages_reach_every_worker_before_the_run_ends() {
    let g = [LogicalRect::new(0, 0, 1, 1), LogicalRect::new(1, 0, 1, 1)];
    let config = DispatchConfig {
        workers: 3,
        ..DispatchConfig::default()
    };
    let mut d = Dispatcher::new(&NullTarget, GRID, &g, config).unwrap();
    for w in 1..=10 {
        d.seed(w, Place::Any).unwrap();
    }
    let r = d.run(|_| Talker { heard: 0 }).unwrap();
    let heard: Vec<u32> = r.plugins.iter().map(|p| p.heard).collect();
    assert_eq!(heard, vec![55, 55, 55]);
}

#[test]
fn the_broadcast_program_through_the_dispatcher_matches_the_feeder_exactly() {
    use komorebi::app::broadcast::{self, BroadcastConfig};
    let cfg = BroadcastConfig {
        rect: LogicalRect::new(0, 0, 6, 4),
        blocks: 5,
        jobs: 4,
        ..BroadcastConfig::default()
    };
    let fed = broadcast::run(&cfg, |_| {}).unwrap();
    for (workers, depth) in [(1, 1), (2, 2), (3, 2)] {
        let config = DispatchConfig {
            workers,
            depth,
            ..DispatchConfig::default()
        };
        let jobs = std::sync::atomic::AtomicU32::new(0);
        let mut d = broadcast::run_dispatched(&cfg, &config, &|_| {
            jobs.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        let figures = d.dispatch.take().unwrap();
        assert_eq!(d, fed, "{workers} workers, depth {depth}");
        assert!(d.ok && d.checked_bytes > 0);
        assert_eq!(jobs.load(Ordering::Relaxed), 4);
        assert_eq!((figures.commands, figures.reported), (4, 4));
        // Every job's device run time came back from its report records.
        assert_eq!(figures.run_time.count, 4);
        assert!(figures.run_time.min > 0);
    }
}

#[test]
fn the_matmul_schedule_runs_every_step_and_write_back_and_checks_every_byte() {
    use komorebi::app::matmul::{self, MatmulConfig};
    let cfg = MatmulConfig {
        rect: LogicalRect::new(0, 0, 6, 4),
        block: (3, 2),
        steps: 3,
        blocks_per_step: 2,
        seed: 7,
    };
    for workers in [1, 2, 3] {
        let config = DispatchConfig {
            workers,
            ..DispatchConfig::default()
        };
        let s = matmul::run(&cfg, &config).unwrap();
        assert!(s.ok, "{workers} workers: {s}");
        assert_eq!((s.block_groups, s.row_groups), (4, 2));
        assert_eq!(s.commands, 4 * 3 + 2);
        // Every core of every command checks both broadcasts' blocks of 2 pages of 1 KiB.
        let per_core = 2 * 2 * 2048;
        assert_eq!(s.checked_bytes, (4 * 3 * 6 + 2 * 12) * per_core);
        assert_eq!(s.dispatch.reported, 14);
    }
    // Each report is held to its job's bytes (`BroadcastPlan::checked_bytes_per_job`): what a
    // broadcast job of the same shape checks, and nothing with --check none.
    use komorebi::app::broadcast::{self, BroadcastConfig, BroadcastPlan, Check};
    let job = BroadcastConfig {
        rect: LogicalRect::new(0, 0, 3, 2),
        blocks: 2,
        pages: 2,
        page_size: 1024,
        jobs: 2,
        ..BroadcastConfig::default()
    };
    let geometry =
        komorebi::chip::blackhole_fused(job.harvest.bits() as u32, job.fused_dram).unwrap();
    let plan = BroadcastPlan::per_job(&job, &geometry).unwrap();
    let ran = broadcast::run(&job, |_| {}).unwrap();
    assert!(ran.ok, "{ran}");
    assert_eq!(ran.checked_bytes, 2 * plan.checked_bytes_per_job());
    assert_eq!(plan.checked_bytes_per_job(), 6 * 2 * 2 * 2048);
    let none = BroadcastConfig {
        check: Check::None,
        ..job.clone()
    };
    let plan = BroadcastPlan::per_job(&none, &geometry).unwrap();
    assert_eq!(plan.checked_bytes_per_job(), 0);
    // The host memory a job's data takes in the simulator (what the schedule's memory check
    // counts): its pages of 1 KiB in whole 4 KiB chunks of each bank, as the simulator holds
    // them, on the 03 rectangle's shape and on a small one.
    // Copies of 8 KiB, and of 6 KiB (three blocks), whose later regions sit at other offsets
    // in a chunk; one job, and four (the ring's four regions).
    for (rect, blocks, jobs) in [
        (LogicalRect::new(0, 0, 12, 10), 2, 1),
        (LogicalRect::new(0, 0, 3, 2), 2, 1),
        (LogicalRect::new(0, 0, 12, 10), 3, 4),
        (LogicalRect::new(2, 1, 5, 3), 3, 4),
    ] {
        let one = BroadcastConfig {
            rect,
            blocks,
            jobs,
            ..job.clone()
        };
        let plan = BroadcastPlan::per_job(&one, &geometry).unwrap();
        let (ran, mut session) = broadcast::run_session(&one, |_| {}).unwrap();
        assert!(ran.ok, "{ran}");
        let held = session.device().simulator().unwrap().dram_resident_bytes();
        if jobs == 1 {
            assert_eq!(plan.host_bytes_per_job(), held, "{rect}");
        }
        assert_eq!(
            one.host_bytes() - one.host_bytes_of_jobs(),
            held,
            "{rect} x {jobs}: the broadcast's check"
        );
        // Every page of every sender's copy is held (the copies share chunks where their
        // layers interleave pages of several senders in a bank).
        let senders = (plan.sender_banks(0).len() + plan.sender_banks(1).len()) as u64;
        let written = senders
            * u64::from(one.blocks)
            * u64::from(one.pages)
            * u64::from(one.page_size)
            * u64::from(jobs.min(4));
        assert!(held >= written, "{rect}: {held} against {written}");
    }
    let bad = MatmulConfig {
        block: (4, 2),
        ..cfg
    };
    let e = matmul::run(&bad, &DispatchConfig::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--block: 4x2 blocks do not tile the 6x4 rectangle (allowed: divisors of its columns and rows)"
    );
    // Every step of every block is seeded at once: a bound, not an overflow or host memory.
    let long = MatmulConfig {
        steps: u32::MAX,
        ..cfg
    };
    let e = matmul::run(&long, &DispatchConfig::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("--steps: {} (allowed: 1..=4096)", u32::MAX)
    );
}

/// Panics in the request handler of the worker `panics_on` (the other handles its commands).
struct Panicky {
    panics_on: usize,
}

impl Plugin for Panicky {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, _f: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
        if cx.worker() == self.panics_on {
            panic!("the request handler of worker {} failed", cx.worker());
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        Some(0)
    }

    fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
        spec(group.rect, true, *work as u64)
    }
}

#[test]
fn a_worker_that_panics_ends_the_run_with_its_panic_whichever_worker_it_is() {
    for panics_on in [0, 1] {
        let hung = format!("worker {panics_on} panicked and the run did not end");
        let e = within(60, &hung, move || {
            let g = [LogicalRect::new(0, 0, 1, 1), LogicalRect::new(1, 0, 1, 1)];
            let config = DispatchConfig {
                workers: 2,
                ..DispatchConfig::default()
            };
            let mut d = Dispatcher::new(&NullTarget, GRID, &g, config).unwrap();
            // Many commands on both groups: the other worker is busy, idle or asleep when the
            // panic comes, whichever the schedule makes it.
            for w in 0..200 {
                d.seed(w, Place::Group(GroupId(w % 2))).unwrap();
            }
            d.run(|_| Panicky { panics_on }).err()
        });
        match e {
            Some(DispatchError::WorkerPanicked { worker, message }) => {
                assert_eq!(worker, panics_on);
                assert_eq!(
                    message,
                    format!("the request handler of worker {panics_on} failed")
                );
            }
            other => panic!("expected WorkerPanicked, got {other:?}"),
        }
    }
}

/// A simulator target; `hook`, if any, runs on its device thread after every post.
fn sim_target(hook: Option<komorebi::dispatch::PostHook>) -> komorebi::dispatch::SimTarget {
    use komorebi::host::backend::Backend;
    komorebi::dispatch::SimTarget::spawn(
        || {
            komorebi::app::broadcast::open_session(Backend::Simulator(
                komorebi_sim::SimConfig::default(),
            ))
        },
        hook,
    )
    .unwrap()
}

#[test]
fn a_refusal_found_on_the_device_thread_is_progress_at_the_next_drive() {
    // The session refuses this post on the device thread, after `post` returned: three
    // programs for a group of two tiles. Reported as `Idle`, the refusal would let the
    // dispatcher decide the run stalled and abandon work the freed slot could still run.
    let target = sim_target(None);
    let mut command = spec(LogicalRect::new(0, 0, 2, 1), false, 1);
    command.programs = vec![command.programs[0].clone(); 3];
    let mailbox = Arc::new(komorebi::dispatch::Mailbox::new());
    assert!(mailbox.arm(1));
    let posting = Posting {
        mailbox: Arc::clone(&mailbox),
        epoch: 1,
    };
    target.post(command, posting).unwrap();
    assert_eq!(target.drive(), Drive::Progress);
    match mailbox.poll(1) {
        komorebi::dispatch::Polled::Refused(SessionError::Programs { expected, got }) => {
            assert_eq!((expected, got), (2, 3));
        }
        other => panic!("expected the session's refusal, got {other:?}"),
    }
    // Once said, it is not said again: nothing is watched, nothing can change.
    assert_eq!(target.drive(), Drive::Idle);
}

#[test]
fn a_device_thread_that_ends_ends_the_run_with_device_lost() {
    // The post hook panics, so the simulator's thread ends with the command posted: no drive
    // can ever publish it.
    let e = within(60, "the device thread ended and the run did not", || {
        let hook: komorebi::dispatch::PostHook =
            Box::new(|_, _| panic!("the post hook stops the device thread"));
        let target = sim_target(Some(hook));
        let g = [LogicalRect::new(0, 0, 1, 1)];
        let mut d = Dispatcher::new(&target, GRID, &g, DispatchConfig::default()).unwrap();
        for w in 0..3 {
            d.seed(w, Place::Any).unwrap();
        }
        d.run(|_| Panicky {
            panics_on: usize::MAX,
        })
        .err()
    });
    assert_eq!(
        e,
        Some(DispatchError::DeviceLost {
            chip: Some(0),
            reason: "its device thread panicked: the post hook stops the device thread".into()
        })
    );
}

#[test]
fn a_session_whose_open_panics_is_refused_with_the_panic_s_message() {
    let e = komorebi::dispatch::SimTarget::spawn(|| panic!("no chip answers"), None)
        .err()
        .map(|e| e.to_string());
    let e = e.expect("a target whose session never opened");
    assert!(
        e.ends_with("the session's open panicked: no chip answers"),
        "{e}"
    );
}

#[test]
fn a_device_lost_among_several_chips_is_named_by_its_chip() {
    // Chip 1's post hook panics, ending its simulator's thread; chip 0 runs its commands.
    let e = within(
        60,
        "chip 1's device thread ended and the run did not",
        || {
            let hook: komorebi::dispatch::PostHook =
                Box::new(|_, _| panic!("the post hook stops chip 1's device thread"));
            let (healthy, dying) = (sim_target(None), sim_target(Some(hook)));
            let rect = LogicalRect::new(0, 0, 1, 1);
            let chips = [(&healthy, GRID), (&dying, GRID)];
            let mut d =
                Dispatcher::with_chips(&chips, &[(0, rect), (1, rect)], DispatchConfig::default())
                    .unwrap();
            for w in 0..4 {
                d.seed(w, Place::Group(GroupId(w % 2))).unwrap();
            }
            d.run(|_| Panicky {
                panics_on: usize::MAX,
            })
            .err()
        },
    );
    let Some(e @ DispatchError::DeviceLost { .. }) = e else {
        panic!("{e:?}");
    };
    assert_eq!(
        e,
        DispatchError::DeviceLost {
            chip: Some(1),
            reason: "its device thread panicked: the post hook stops chip 1's device thread".into()
        }
    );
    assert!(
        e.to_string().starts_with(
            "chip 1 stopped answering during the run (its device thread panicked: the post \
             hook stops chip 1's device thread)"
        ),
        "{e}"
    );
}

/// Runs `f` on a thread of its own and returns its result: a run that hangs fails the test
/// (`hung`) after `secs` seconds instead of stopping it.
fn within<T: Send + 'static>(secs: u64, hung: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{hung}"))
}

/// The budget of the tests' commands: their wait limit of 1,000 is below the 10^6 floor, and a
/// command's deadline is 64 wait limits after its post.
const BUDGET: u64 = 64_000_000;

/// Runs `d` with plugins that never panic; its summary, and the device cycles `clock`'s chip
/// ran meanwhile.
fn run_clocked(
    d: Dispatcher<'_, komorebi::dispatch::SimTarget, u32>,
    clock: &komorebi::dispatch::SimTarget,
) -> (komorebi::dispatch::DispatchSummary, u64) {
    let start = clock.with_session(|s| s.device().now()).unwrap();
    let r = d
        .run(|_| Panicky {
            panics_on: usize::MAX,
        })
        .unwrap();
    let end = clock.with_session(|s| s.device().now()).unwrap();
    (r.summary, end - start)
}

/// A simulated card (`pcie-sim`, native kernels) behind a device thread, with the tile at
/// logical (0, 0) frozen when `freeze`.
fn card_target(freeze: bool) -> komorebi::dispatch::SimTarget {
    use komorebi::host::backend::{Backend, Exec};
    let target = komorebi::dispatch::SimTarget::spawn(
        || {
            komorebi::app::broadcast::open_session(Backend::PcieSim {
                config: komorebi_sim::SimConfig::default(),
                firmware: None,
                handler: Default::default(),
                exec: Exec::Native,
                bar: Default::default(),
                card: Default::default(),
            })
        },
        None,
    )
    .unwrap();
    if freeze {
        freeze_origin(&target);
        let knows = target.with_session(|s| s.device().knows_idle()).unwrap();
        assert!(!knows, "a simulated card cannot tell");
    }
    target
}

/// Freezes the tile at logical (0, 0) of `target`'s chip from cycle 0: it never reports.
fn freeze_origin(target: &komorebi::dispatch::SimTarget) {
    target
        .with_session(|s| {
            let frozen = s.noc0(komorebi_hal::LogicalXy::new(0, 0)).unwrap().get();
            let sim = s.device().simulator().unwrap();
            sim.inject(komorebi_sim::Fault::FreezeTile {
                tile: frozen,
                at: 0,
            })
            .unwrap();
        })
        .unwrap();
}

#[test]
fn a_card_s_late_command_is_given_one_budget_however_many_drives_another_card_needs() {
    // Chip 0's only command never reports; chip 1 runs six commands one after another. Every
    // drive drives both chips: were chip 0's wait for its late command taken from each drive's
    // start, every command of chip 1 would cost chip 0 a whole budget.
    let (summary, took) = within(120, "the run did not end", || {
        let (stuck, busy) = (card_target(true), card_target(false));
        let g = [
            (0, LogicalRect::new(0, 0, 1, 1)),
            (1, LogicalRect::new(0, 0, 1, 1)),
        ];
        let config = DispatchConfig {
            workers: 1,
            depth: 1,
            ..DispatchConfig::default()
        };
        let chips = [(&stuck, GRID), (&busy, GRID)];
        let mut d = Dispatcher::with_chips(&chips, &g, config).unwrap();
        d.seed(0, Place::Group(GroupId(0))).unwrap();
        for w in 1..=6 {
            d.seed(w, Place::Group(GroupId(1))).unwrap();
        }
        run_clocked(d, &stuck)
    });
    assert_eq!((summary.reported, summary.held_at_end), (6, 1));
    assert!(took < 3 * BUDGET, "chip 0 ran {took} cycles");
}

#[test]
fn a_core_that_never_reports_on_a_simulated_card_ends_the_run_one_budget_late() {
    // A simulated card, like a card, never says that nothing can change: with only an overdue
    // command left, a drive waits one more budget for it to go quiet, then the run ends with its
    // tile held. Before, the drive waited for good.
    let hung = "the run waited for good for a core that never reports";
    let (summary, took) = within(120, hung, || {
        let target = card_target(true);
        let g = [LogicalRect::new(0, 0, 1, 1)];
        let config = DispatchConfig {
            workers: 1,
            ..DispatchConfig::default()
        };
        let mut d = Dispatcher::new(&target, GRID, &g, config).unwrap();
        d.seed(1, Place::Any).unwrap();
        run_clocked(d, &target)
    });
    assert_eq!((summary.timed_out, summary.held_at_end), (1, 1));
    // 64 x 10^6 cycles to its deadline, then one more budget for it to go quiet, and no more.
    assert!((2 * BUDGET..3 * BUDGET).contains(&took), "{took} cycles");
}

#[test]
fn a_drive_after_a_refusal_answers_progress_without_running_the_device() {
    // A command whose tile never reports is watched, so a drive would run the device to its
    // deadline; a refusal since the last drive is answered at once, the clock where it was.
    let target = sim_target(None);
    freeze_origin(&target);
    let posting = |epoch| {
        let mailbox = Arc::new(komorebi::dispatch::Mailbox::new());
        assert!(mailbox.arm(epoch));
        Posting { mailbox, epoch }
    };
    let watched = posting(1);
    target
        .post(
            spec(LogicalRect::new(0, 0, 1, 1), false, 1),
            watched.clone(),
        )
        .unwrap();
    let mut refused = spec(LogicalRect::new(2, 0, 2, 1), false, 2);
    refused.programs = vec![refused.programs[0].clone(); 3];
    let refusal = posting(1);
    target.post(refused, refusal.clone()).unwrap();
    let before = target.with_session(|s| s.device().now()).unwrap();
    assert_eq!(target.drive(), Drive::Progress);
    let after = target.with_session(|s| s.device().now()).unwrap();
    assert_eq!(after, before, "the device did not run");
    assert!(matches!(
        refusal.mailbox.poll(1),
        komorebi::dispatch::Polled::Refused(_)
    ));
    assert_eq!(watched.mailbox.poll(1), komorebi::dispatch::Polled::Pending);
    // The next drive runs the device: the frozen tile's command goes overdue at its deadline.
    assert_eq!(target.drive(), Drive::Progress);
    assert!(target.with_session(|s| s.device().now()).unwrap() > before);
    assert!(matches!(
        watched.mailbox.poll(1),
        komorebi::dispatch::Polled::Overdue(_)
    ));
}

/// A device that refuses every third command at `post` (an error: nothing posted) and completes
/// the others at once.
struct RefusesEveryThird;

impl Target for RefusesEveryThird {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        if command.programs[0].reader[0].is_multiple_of(3) {
            return Err(SessionError::SlotsFull {
                core: komorebi_hal::LogicalXy::new(0, 0),
            });
        }
        NullTarget.post(command, posting)
    }

    fn drive(&self) -> Drive {
        Drive::Idle
    }

    fn aiclk_mhz(&self) -> u32 {
        1350
    }
}

/// A device that takes every command and never reports, and whose drives find it lost without
/// saying why (a target that does not implement `lost_reason`).
struct LostSilently;

impl Target for LostSilently {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        drop((command, posting));
        Ok(())
    }

    fn drive(&self) -> Drive {
        Drive::Lost
    }

    fn aiclk_mhz(&self) -> u32 {
        1350
    }
}

/// A chip whose clock runs at `mhz` and whose every command runs 1,000 cycles, reported the
/// moment it is posted.
struct Clocked {
    mhz: u32,
}

impl Target for Clocked {
    fn post(&self, _command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        let mut r = Report::success(0);
        (r.started_at, r.finished_at) = (100, 1100);
        assert!(posting.publish(Published::Reported(r)));
        Ok(())
    }

    fn drive(&self) -> Drive {
        Drive::Idle
    }

    fn aiclk_mhz(&self) -> u32 {
        self.mhz
    }
}

/// Each command's run time is its own chip's cycles at that chip's clock (cards of one run may
/// run at different clocks): it was chip 0's clock for every command.
#[test]
fn a_command_s_run_time_is_taken_at_the_clock_of_the_chip_that_ran_it() {
    let (fast, slow) = (Clocked { mhz: 1000 }, Clocked { mhz: 500 });
    let rect = LogicalRect::new(0, 0, 1, 1);
    let chips = [(&fast, GRID), (&slow, GRID)];
    let mut d =
        Dispatcher::with_chips(&chips, &[(0, rect), (1, rect)], DispatchConfig::default()).unwrap();
    for w in 0..4 {
        d.seed(w, Place::Group(GroupId(w % 2))).unwrap();
    }
    let r = d
        .run(|_| Panicky {
            panics_on: usize::MAX,
        })
        .unwrap();
    let run = &r.summary.run_time;
    // 1,000 cycles: 1 us at 1,000 MHz on chip 0, 2 us at 500 MHz on chip 1.
    assert_eq!((run.count, run.min, run.max), (4, 1000, 2000), "{run:?}");
}

#[test]
fn a_device_lost_without_a_reason_is_named_only_when_it_is_the_only_chip() {
    let rect = LogicalRect::new(0, 0, 1, 1);
    let lost = |chips: &[(&LostSilently, LogicalRect)], groups: &[(usize, LogicalRect)]| {
        let mut d = Dispatcher::with_chips(chips, groups, DispatchConfig::default()).unwrap();
        d.seed(1, Place::Any).unwrap();
        d.run(|_| Panicky {
            panics_on: usize::MAX,
        })
        .err()
    };
    let (a, b) = (LostSilently, LostSilently);
    let one = lost(&[(&a, GRID)], &[(0, rect)]).expect("lost");
    assert_eq!(
        one,
        DispatchError::DeviceLost {
            chip: Some(0),
            reason: "the target did not say why".into()
        }
    );
    let two = lost(&[(&a, GRID), (&b, GRID)], &[(0, rect), (1, rect)]).expect("lost");
    assert_eq!(
        two,
        DispatchError::DeviceLost {
            chip: None,
            reason: "the target did not say why".into()
        }
    );
    assert!(
        two.to_string()
            .starts_with("a device stopped answering during the run (the target did not say why)"),
        "{two}"
    );
}

/// Counts each command's end by outcome.
#[derive(Default)]
struct Ends {
    reported: Vec<u32>,
    refused: Vec<u32>,
    other: Vec<u32>,
    /// Every end as the handler saw it, shared with the test (kept when the run ends in an
    /// error and the plugins are dropped): the work and its outcome, refusals with their text.
    seen: Arc<Mutex<Vec<(u32, String)>>>,
}

impl Plugin for Ends {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, f: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {
        let text = match &f.outcome {
            Outcome::Refused(r) => format!("refused: {r}"),
            o => format!("{o:?}"),
        };
        self.seen.lock().unwrap().push((f.work, text));
        match f.outcome {
            Outcome::Reported(_) => self.reported.push(f.work),
            Outcome::Refused(_) => self.refused.push(f.work),
            _ => self.other.push(f.work),
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        Some(0)
    }

    fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
        spec(group.rect, true, *work as u64)
    }
}

/// A post the target refuses leaves its slot usable: every later command in that slot is
/// posted and reported (the slot's mailbox was left armed, so the next post found it unsettled:
/// a debug build's assertion, a release build's run that never ended), and the refused ones end
/// as refused, with no queue wait or round trip counted for them.
#[test]
fn a_slot_whose_post_failed_runs_the_commands_after_it() {
    let g = [LogicalRect::new(0, 0, 1, 1)];
    for workers in 1..=2 {
        let r = within(60, "a refused post stalled its slot", move || {
            let config = DispatchConfig {
                workers,
                ..DispatchConfig::default()
            };
            let mut d = Dispatcher::new(&RefusesEveryThird, GRID, &g, config).unwrap();
            for w in 1..=30 {
                d.seed(w, Place::Any).unwrap();
            }
            d.run(|_| Ends::default()).unwrap()
        });
        let mut reported: Vec<u32> = r.plugins.iter().flat_map(|p| p.reported.clone()).collect();
        let mut refused: Vec<u32> = r.plugins.iter().flat_map(|p| p.refused.clone()).collect();
        reported.sort_unstable();
        refused.sort_unstable();
        assert_eq!(refused, (1..=10).map(|k| 3 * k).collect::<Vec<_>>());
        assert_eq!(
            reported,
            (1..=30).filter(|w| w % 3 != 0).collect::<Vec<_>>()
        );
        assert!(r.plugins.iter().all(|p| p.other.is_empty()));
        assert_eq!(r.times.iter().filter(|t| t.posted.is_some()).count(), 20);
    }
}

/// Follow-ups pinned to a group of another worker go to that worker: not stolen work (they
/// were counted stolen, as made ready by one worker and run by another). The seeds are pinned
/// too, so nothing here can be stolen.
#[test]
fn follow_ups_handed_to_their_group_s_worker_are_not_stolen() {
    struct Hand;
    impl Plugin for Hand {
        type Work = u32;
        type Message = ();
        fn handle(&mut self, f: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
            assert!(matches!(f.outcome, Outcome::Reported(_)));
            if f.work < 100 {
                // Each seed's follow-up runs on the other group, so on the other worker.
                let other = GroupId(1 - f.group.unwrap().0);
                cx.submit(f.work + 100, Place::Group(other)).unwrap();
            }
        }
        fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
            Some(0)
        }
        fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
            spec(group.rect, true, *work as u64)
        }
    }
    let g = [LogicalRect::new(0, 0, 2, 2), LogicalRect::new(2, 0, 2, 2)];
    let config = DispatchConfig {
        workers: 2,
        ..DispatchConfig::default()
    };
    let mut d = Dispatcher::new(&NullTarget, GRID, &g, config).unwrap();
    for w in 0..20 {
        d.seed(w, Place::Group(GroupId(0))).unwrap();
    }
    let r = d.run(|_| Hand).unwrap();
    assert_eq!(r.summary.commands, 40);
    let on_worker: Vec<usize> = [0, 1]
        .map(|w| r.times.iter().filter(|t| t.worker == w).count())
        .to_vec();
    assert!(on_worker.iter().all(|&n| n > 0), "{on_worker:?}");
    assert_eq!(r.summary.stolen, 0);
    assert!(r.times.iter().all(|t| !t.stolen));
}

/// Seeds `(work, group index)` through a dispatcher of one worker whose chip is `device`, with
/// `groups`: the run's result, and every end its handler saw.
#[allow(clippy::type_complexity)]
fn run_on_failing(
    device: failing_device::FailingWrite,
    groups: Vec<LogicalRect>,
    seeds: Vec<(u32, u32)>,
) -> (
    Result<komorebi::dispatch::DispatchResult<Ends>, DispatchError>,
    Vec<(u32, String)>,
) {
    let seen: Arc<Mutex<Vec<(u32, String)>>> = Default::default();
    let shared = seen.clone();
    let r = within(60, "a run on a failing device did not end", move || {
        let target = komorebi::dispatch::SimTarget::spawn(move || device.session(), None).unwrap();
        let config = DispatchConfig {
            workers: 1,
            ..DispatchConfig::default()
        };
        let mut d = Dispatcher::new(&target, GRID, &groups, config).unwrap();
        for (w, g) in seeds {
            d.seed(w, Place::Group(GroupId(g))).unwrap();
        }
        d.run(|_| Ends {
            seen: shared.clone(),
            ..Ends::default()
        })
    });
    let seen = seen.lock().unwrap().clone();
    (r, seen)
}

/// A command published on some of its cores only runs there unwatched: its worker hears
/// nothing of it (its slot and tiles stay held), the next post to the device is refused as
/// lost without writing anything, and the run ends with `DeviceLost` naming why, rather than
/// handing those tiles to the next command.
#[test]
fn a_command_published_on_some_cores_only_ends_the_run_with_device_lost() {
    let writes: failing_device::Writes = Default::default();
    // Two cores: their words and headers (writes 0 to 3), then the index words: the second
    // core's fails. Then a command on another group.
    let device = failing_device::FailingWrite::new(writes.clone(), 5, false);
    let groups = vec![LogicalRect::new(0, 0, 2, 1), LogicalRect::new(4, 0, 1, 1)];
    let (r, seen) = run_on_failing(device, groups, vec![(0, 0), (1, 1)]);
    let Err(DispatchError::DeviceLost { chip, reason }) = &r else {
        panic!("{:?}", r.map(|r| r.summary));
    };
    assert_eq!(*chip, Some(0));
    assert!(reason.contains("1 of its 2 cores took it"), "{reason}");
    // The partly published command never ended for its worker; the other was never written
    // (refused, the device lost: its worker hears so if it looks before the run ends).
    assert!(
        seen.iter()
            .all(|(w, text)| *w == 1 && text.contains("the device was lost")),
        "{seen:?}"
    );
    assert_eq!(writes.lock().unwrap().len(), 5);
}

/// An assigner that picks a candidate it was not shown ends the run with a worker's panic that
/// says so (it was ignored, and its commands abandoned with no hint why).
#[test]
fn an_assigner_that_picks_past_its_candidates_ends_the_run_naming_the_pick() {
    struct PastTheEnd;
    impl Plugin for PastTheEnd {
        type Work = u32;
        type Message = ();
        fn handle(&mut self, _f: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {}
        fn assign(&mut self, _slot: &SlotView<'_>, c: &[Ready<u32>]) -> Option<usize> {
            Some(c.len())
        }
        fn command(&mut self, work: &u32, group: &GroupInfo) -> CommandSpec {
            spec(group.rect, true, *work as u64)
        }
    }
    let g = [LogicalRect::new(0, 0, 1, 1)];
    let mut d = Dispatcher::new(&NullTarget, GRID, &g, DispatchConfig::default()).unwrap();
    d.seed(1, Place::Any).unwrap();
    match d.run(|_| PastTheEnd) {
        Err(DispatchError::WorkerPanicked { message, .. }) => assert_eq!(
            message,
            "the assigner picked candidate 1 of 1 (allowed: 0..1 or none)"
        ),
        other => panic!("{:?}", other.map(|r| r.summary)),
    }
}

/// A report that cannot be read: its command was posted and may still run, so it does not end
/// for its worker (its tiles stay held), and the run ends with `DeviceLost` saying why (a
/// broadcast run exits 4 with it).
#[test]
fn a_report_that_cannot_be_read_ends_the_run_with_device_lost_and_its_cause() {
    let device = failing_device::FailingWrite::new(Default::default(), usize::MAX, true);
    let (r, seen) = run_on_failing(device, vec![LogicalRect::new(0, 0, 1, 1)], vec![(0, 0)]);
    let Err(DispatchError::DeviceLost { chip, reason }) = &r else {
        panic!("{:?}", r.map(|r| r.summary));
    };
    assert_eq!(*chip, Some(0));
    assert!(reason.contains("the test's failing read"), "{reason}");
    assert!(seen.is_empty(), "{seen:?}");
}

/// A device (a caller's) whose `advance` says the deadline came while its clock stands still:
/// the command is published as timed out all the same and the run ends (its commands stayed
/// watched, the run looping for good, while the clock read below the deadline).
#[test]
fn a_deadline_the_device_says_came_ends_a_command_whatever_its_clock_reads() {
    let mut device = failing_device::FailingWrite::new(Default::default(), usize::MAX, false);
    device.deadline_comes = true;
    let (r, seen) = run_on_failing(device, vec![LogicalRect::new(0, 0, 1, 1)], vec![(0, 0)]);
    let summary = r.map(|r| r.summary).expect("the run ends");
    assert_eq!(
        (summary.commands, summary.timed_out, summary.held_at_end),
        (1, 1, 1)
    );
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].1.starts_with("TimedOut(") && seen[0].1.contains("unreported: [[0, 0]]"),
        "{seen:?}"
    );
}

/// A mailbox keeps its epoch beside the state in one word: an epoch whose top bits would be
/// lost is refused (it armed, and read back as epoch 0).
#[test]
fn a_mailbox_refuses_an_epoch_it_cannot_hold() {
    use komorebi::dispatch::mailbox::Mailbox;
    let m = Mailbox::new();
    assert!(!m.arm(Mailbox::MAX_EPOCH + 1));
    assert!(!m.arm(1 << 61));
    assert_eq!(m.settled(), (0, true));
    assert!(m.arm(Mailbox::MAX_EPOCH));
    assert_eq!(m.settled(), (Mailbox::MAX_EPOCH, false));
}

/// A caller that is not one of the run's workers is not counted among the active: it is told
/// to look again (it took itself off a count it was never on, which wrapped, and every real
/// worker then slept for good).
#[test]
fn idle_tells_a_caller_that_is_no_worker_to_look_again() {
    use komorebi::dispatch::idle::{Idle, Idled};
    let never = || -> komorebi::dispatch::Drive { panic!("no worker drives") };
    let none = Idle::new(0);
    assert!(matches!(none.idle(0, || false, never), Idled::Found));
    let one = Idle::new(1);
    assert!(matches!(one.idle(1, || false, never), Idled::Found));
    // Worker 0, the last active, drives.
    let drove = one.idle(0, || false, || komorebi::dispatch::Drive::Progress);
    assert!(matches!(drove, Idled::Drove(_)));
}
