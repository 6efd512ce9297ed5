//! Host overhead of the dispatcher per command, on the null device (every command completes the
//! moment it is posted, so all that is measured is the host side: ready queue, assigner, tile
//! reservation, mailbox, request handler, measurement), against a baseline of the classic
//! design: one `Mutex<VecDeque>` of ready commands with a `Condvar`, the handler under that
//! lock (the VMS master lock), the same null device. Also the same commands on 1 and 4 chips,
//! and the balance of work stealing with skewed shards. `cargo bench --bench dispatch`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use komorebi::dispatch::{
    Cx, DispatchConfig, Dispatcher, Finished, GroupInfo, Mailbox, NullTarget, Outcome, Place,
    Plugin, Posting, Ready, SlotView, Target,
};
use komorebi::host::session::{CommandSpec, TileProgram};
use komorebi_hal::LogicalRect;

const COMMANDS: u64 = 20_000;
const GRID: LogicalRect = LogicalRect::new(0, 0, 8, 4);

fn groups() -> Vec<LogicalRect> {
    (0..8).map(|x| LogicalRect::new(x, 0, 1, 4)).collect()
}

fn spec(group: LogicalRect) -> CommandSpec {
    CommandSpec {
        handler: 1,
        flags: 0,
        group,
        wait_limit: 1000,
        budget: None,
        programs: vec![TileProgram::default()],
    }
}

/// Seeds fan out: each handled command with work > 0 submits one follow-up, so commands keep
/// being made ready on the workers themselves (as a real schedule does).
struct Chain {
    handled: u64,
    spin: Duration,
}

impl Plugin for Chain {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, f: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
        debug_assert!(matches!(f.outcome, Outcome::Reported(_)));
        self.handled += 1;
        if !self.spin.is_zero() {
            let t = Instant::now();
            while t.elapsed() < self.spin {
                std::hint::spin_loop();
            }
        }
        if f.work > 0 {
            let _ = cx.submit(f.work - 1, Place::Any);
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, _c: &[Ready<u32>]) -> Option<usize> {
        Some(0)
    }

    fn command(&mut self, _work: &u32, group: &GroupInfo) -> CommandSpec {
        spec(group.rect)
    }
}

/// Runs `COMMANDS` commands (chains of 100 from `COMMANDS / 100` seeds) through the dispatcher.
fn dispatcher(workers: usize) -> Vec<u64> {
    dispatcher_on(1, workers)
}

/// [`dispatcher`] with the 8 groups spread over `chips` null chips (group `i` on chip `i mod
/// chips`), each with the whole grid: the same commands and groups, only the chips differ.
fn dispatcher_on(chips: usize, workers: usize) -> Vec<u64> {
    let config = DispatchConfig {
        workers,
        ..DispatchConfig::default()
    };
    let targets: Vec<(&NullTarget, LogicalRect)> =
        (0..chips).map(|_| (&NullTarget, GRID)).collect();
    let placed: Vec<(usize, LogicalRect)> = groups()
        .into_iter()
        .enumerate()
        .map(|(i, g)| (i % chips, g))
        .collect();
    let mut d = Dispatcher::with_chips(&targets, &placed, config).unwrap();
    for _ in 0..COMMANDS / 100 {
        d.seed(99, Place::Any).unwrap();
    }
    let r = d
        .run(|_| Chain {
            handled: 0,
            spin: Duration::ZERO,
        })
        .unwrap();
    r.plugins.iter().map(|p| p.handled).collect()
}

/// The baseline: the same commands, ready queue and handler state under one mutex.
fn baseline(workers: usize) -> u64 {
    struct State {
        ready: VecDeque<u32>,
        in_flight: u64,
        handled: u64,
    }
    let state = Arc::new((
        Mutex::new(State {
            ready: (0..COMMANDS / 100).map(|_| 99).collect(),
            in_flight: 0,
            handled: 0,
        }),
        Condvar::new(),
    ));
    let next_epoch = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (state, next_epoch) = (state.clone(), next_epoch.clone());
            std::thread::spawn(move || {
                let mailbox = Arc::new(Mailbox::new());
                let group = groups()[w % 8];
                loop {
                    let work = {
                        let (lock, cv) = &*state;
                        let mut s = lock.lock().unwrap();
                        loop {
                            if let Some(work) = s.ready.pop_front() {
                                s.in_flight += 1;
                                break work;
                            }
                            if s.in_flight == 0 {
                                cv.notify_all();
                                return;
                            }
                            s = cv.wait(s).unwrap();
                        }
                    };
                    let epoch = next_epoch.fetch_add(1, Ordering::Relaxed) + 1;
                    mailbox.arm(epoch);
                    let posting = Posting {
                        mailbox: mailbox.clone(),
                        epoch,
                    };
                    NullTarget.post(spec(group), posting).unwrap();
                    let _ = mailbox.poll(epoch);
                    let (lock, cv) = &*state;
                    let mut s = lock.lock().unwrap();
                    s.in_flight -= 1;
                    s.handled += 1;
                    if work > 0 {
                        s.ready.push_back(work - 1);
                    }
                    cv.notify_one();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    state.0.lock().unwrap().handled
}

fn overhead(c: &mut Criterion) {
    let mut g = c.benchmark_group("host overhead per command (null device)");
    g.throughput(Throughput::Elements(COMMANDS));
    g.sample_size(20);
    for workers in [1usize, 2] {
        g.bench_with_input(
            BenchmarkId::new("dispatcher", workers),
            &workers,
            |b, &w| b.iter(|| assert_eq!(dispatcher(w).iter().sum::<u64>(), COMMANDS)),
        );
        g.bench_with_input(
            BenchmarkId::new("Mutex<VecDeque>+Condvar", workers),
            &workers,
            |b, &w| b.iter(|| assert_eq!(baseline(w), COMMANDS)),
        );
    }
    g.finish();
}

/// Several chips under one dispatcher: host overhead per command with the same 8 groups on 1
/// and on 4 chips (every drive drives every chip).
fn chips(c: &mut Criterion) {
    let mut g = c.benchmark_group("host overhead per command, chips (null device, 2 workers)");
    g.throughput(Throughput::Elements(COMMANDS));
    g.sample_size(20);
    for chips in [1usize, 4] {
        g.bench_with_input(BenchmarkId::new("chips", chips), &chips, |b, &n| {
            b.iter(|| assert_eq!(dispatcher_on(n, 2).iter().sum::<u64>(), COMMANDS))
        });
    }
    g.finish();
}

/// Skewed shards: one seed pinned to worker 0's group fans out 2,000 stealable commands, each
/// with 5 us of handler work; worker 1 starts with nothing and must steal to be busy.
fn stealing(c: &mut Criterion) {
    struct Fan(Chain);
    impl Plugin for Fan {
        type Work = u32;
        type Message = ();
        fn handle(&mut self, f: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
            let root = f.work == u32::MAX;
            // The root's own follow-up would be a chain of 2^32 commands: only its fan-out.
            self.0.handle(Finished { work: 0, ..f }, cx);
            if root {
                for _ in 0..2000 {
                    let _ = cx.submit(0, Place::Any);
                }
            }
        }
        fn assign(&mut self, s: &SlotView<'_>, c: &[Ready<u32>]) -> Option<usize> {
            self.0.assign(s, c)
        }
        fn command(&mut self, w: &u32, g: &GroupInfo) -> CommandSpec {
            self.0.command(w, g)
        }
    }
    let run = || {
        let groups = [LogicalRect::new(0, 0, 4, 4), LogicalRect::new(4, 0, 4, 4)];
        let mut d = Dispatcher::new(&NullTarget, GRID, &groups, DispatchConfig::default()).unwrap();
        d.seed(u32::MAX, Place::Group(komorebi::dispatch::GroupId(0)))
            .unwrap();
        d.run(|_| {
            Fan(Chain {
                handled: 0,
                spin: Duration::from_micros(5),
            })
        })
        .unwrap()
    };
    let r = run();
    let handled: Vec<u64> = r.plugins.iter().map(|p| p.0.handled).collect();
    eprintln!(
        "stealing balance (2 workers, all 2,001 commands made ready on worker 0): handled {:?}, stolen {}, wall {:.2} ms (serial handler work alone: {:.2} ms)",
        handled,
        r.summary.stolen,
        r.summary.wall_ns as f64 / 1e6,
        2001.0 * 5e-3
    );
    let mut g = c.benchmark_group("stealing, skewed shards");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2001));
    g.bench_function("2 workers, 5 us handler", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, overhead, chips, stealing);
criterion_main!(benches);
