//! Several hosts through MPI (`komorebi broadcast --mpi` under `mpirun`, feature `mpi`): one
//! rank a host, each with its own `--chips` chips, as tt-metal scales past one host (one MPI
//! rank per host; device data never crosses MPI, only commands and results do).
//!
//! Rank 0 holds the seed and the plan. The run's chips are numbered rank by rank (rank `r`
//! holds chips `r * chips ..`), and job `j` belongs to the rank holding its home chip, `j mod
//! (ranks * chips)`: the same chips, seeds and homes as one process with `ranks * chips` chips,
//! so the bytes checked and the give-ups are the same. Rank 0 sends each rank its [`Share`],
//! runs its own, and gathers every rank's [`RankReport`] into one summary.
//!
//! **Never a hang.** Rank 0 waits for the ranks' reports until `--rank-limit` seconds from the
//! run's start (and looks [`LOOK`] past it for reports that came already). A rank that has not
//! answered by then (it died, hangs, or is stopped) has its jobs reported abandoned under its
//! name; rank 0 then prints the report and ends the MPI job with `MPI_Abort`, since a finalize
//! would wait for the missing rank. Every other wait is bounded too: a rank waits for its
//! assignment until the limit, and for rank 0's word up to the limit past the later of the
//! limit and its own report; a message whose receive began but never completes (its sender
//! died mid-transfer) ends the process with exit 4 a limit after the wait's end; `MPI_Init`
//! and `MPI_Finalize` are bounded by the limit (the watchdog).
//!
//! **One judge.** Rank 0 alone decides how the run ends. Every other rank, once its report is
//! out, waits for rank 0's word that the run is over ([`FINALIZE`]) before it finalizes, and
//! never ends the job itself while rank 0 may still answer: rank 0 either sends that word (the
//! run's code is 0) or aborts the job with the run's code. A rank whose report went out late
//! (after the deadline) so leaves the verdict to rank 0, which counts the report if it is there
//! when rank 0 looks and abandons the rank's jobs otherwise; the late rank once aborted the job
//! itself with 4, racing rank 0's 3 (decisions D59). A rank ends the job itself (exit 4) only
//! when rank 0 sent no assignment by the deadline, or no word within `--rank-limit` of the
//! later of the deadline and its own report (rank 0 died or hangs). (Under Open MPI,
//! `mpirun --mca orte_abort_on_non_zero_status 0` keeps rank 0 alive when another rank dies,
//! so that it can say so; without it, `mpirun` ends every rank.) A rank whose run fails reports its error, which
//! rank 0 reports under that rank's name, its jobs failed. A rank that refuses its flags
//! before MPI starts ends the job the same way ([`abort_refused`]), so that `mpirun`'s exit
//! code is the refusal's under either setting.

use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};

use super::chips::chip_seed;
use super::config::BroadcastConfig;
use super::error::{BroadcastError, EXIT_DEVICE, flag};
use super::run::{Share, run_share};
use super::summary::{BroadcastSummary, ChipSummary, JobResult, RankSummary, SummaryCounts};
use crate::dispatch::DispatchConfig;

/// How often a rank looks for a message it waits for.
const POLL: Duration = Duration::from_millis(5);

/// How long a rank looks for messages that may have come already, past its deadline too: MPI
/// sees a message only as its progress engine runs, which one probe may not do (Open MPI 4.1
/// found a report sent 1.5 s before on its second probe, 5 ms after the first, and none on
/// the first; decisions D59).
const LOOK: Duration = Duration::from_millis(250);

/// Rank 0's word to every other rank that the run is over and every report counted: finalize.
/// Sent only when the run's code is 0; any other end is rank 0's `MPI_Abort`.
const FINALIZE: &[u8] = b"finalize";

/// Ends the process if MPI itself does not return in time: `MPI_Init` waits for every rank to
/// start (a rank that died before it waits forever under `orte_abort_on_non_zero_status 0`),
/// and a finalize for every rank to finalize. Armed around those calls only: a share's run and
/// the gathering have their own limits.
#[derive(Clone, Debug, Default)]
struct Watchdog {
    generation: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Watchdog {
    /// Ends the process with `code`, saying `what` did not return, unless [`Self::disarm`] or
    /// another `arm` comes within `within`.
    fn arm(&self, what: &'static str, within: Duration, code: i32) {
        use std::sync::atomic::Ordering;
        let armed = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let generation = std::sync::Arc::clone(&self.generation);
        std::thread::spawn(move || {
            std::thread::sleep(within);
            if generation.load(Ordering::SeqCst) == armed {
                eprintln!(
                    "error: --mpi: {what} did not return within {} s (--rank-limit): a rank died or hangs",
                    within.as_secs()
                );
                std::process::exit(code);
            }
        });
    }

    fn disarm(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Environment variables an MPI launcher gives each process it starts: Open MPI's, MPICH's
/// and Intel MPI's (Hydra's PMI), and PMIx's (Slurm's `srun`, Open MPI 5).
const LAUNCHED: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// Ends a process of an MPI job that refused its flags before MPI started (`code`, not 0):
/// started by a launcher, it starts MPI only to end the job with `MPI_Abort(code)`, so that
/// the launcher's own exit code is the refusal's. A rank that merely exits non-zero without
/// MPI leaves that to the launcher, and `mpirun --mca orte_abort_on_non_zero_status 0` (the
/// way the guide runs it) then exits 0. Every rank refuses the same flags alike, so every rank
/// starts MPI here; one that does not within `limit` ends the process with `code` anyway.
/// Returns (for the caller to exit with `code`) when no launcher started the process.
pub fn abort_refused(code: u8, limit: Duration) {
    if code == 0 || !LAUNCHED.iter().any(|v| std::env::var_os(v).is_some()) {
        return;
    }
    let watchdog = Watchdog::default();
    watchdog.arm("MPI_Init", limit, i32::from(code));
    if let Some(universe) = mpi::initialize() {
        // mpirun forwards a rank's output as it comes, but an abort tears the job down at
        // once: give it the refusal's line first (as `RankEnd::finish` does the report).
        std::thread::sleep(Duration::from_millis(500));
        universe.world().abort(i32::from(code));
    }
}

/// What rank 0 sends each rank: the seed (the plan is the flags every rank was started with)
/// and the rank's share.
#[derive(Debug, Serialize, Deserialize)]
struct Assignment {
    seed: u64,
    share: Share,
}

/// What a rank sends rank 0 after its share ran: what rank 0 adds into the run's summary, or
/// why the share could not run and the exit code that failure has in one process.
#[derive(Debug, Serialize, Deserialize)]
struct RankReport {
    host: String,
    outcome: Result<SummaryCounts, (String, u8)>,
}

/// The share of rank `rank` of `ranks`, each with `chips` chips, of `jobs` jobs.
fn share_of(rank: u32, ranks: u32, chips: u32, jobs: u32) -> Share {
    let total = ranks * chips;
    let first = rank * chips;
    Share {
        jobs: (0..jobs)
            .filter(|j| (first..first + chips).contains(&(j % total)))
            .collect(),
        first_chip: first,
        total_chips: total,
    }
}

/// Sends each `(rank, bytes)` at once, then waits until every send completed or `deadline`
/// passed, testing them in turn (a rank that does not take its message delays no other's);
/// for each, whether it completed (else the peer is lost). The buffers are left to MPI either
/// way (a send that may never complete must keep its buffer; a run sends one message a rank).
fn send_all(
    world: &SimpleCommunicator,
    messages: Vec<(i32, Vec<u8>)>,
    deadline: Instant,
) -> Vec<bool> {
    let mut pending: Vec<Option<_>> = messages
        .into_iter()
        .map(|(to, bytes)| {
            let buffer: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            Some(
                world
                    .process_at_rank(to)
                    .immediate_send(mpi::request::StaticScope, buffer),
            )
        })
        .collect();
    loop {
        for slot in pending.iter_mut() {
            if let Some(request) = slot.take()
                && let Err(still) = request.test()
            {
                *slot = Some(still);
            }
        }
        if pending.iter().all(Option::is_none) {
            return vec![true; pending.len()];
        }
        if Instant::now() >= deadline {
            // Never completed: forgotten, not dropped (a dropped request panics); the MPI job
            // is aborted at the end.
            return pending
                .into_iter()
                .map(|slot| slot.map(std::mem::forget).is_none())
                .collect();
        }
        std::thread::sleep(POLL);
    }
}

/// Waits for a message from each rank of `from` until `deadline`, or for [`LOOK`] if that is
/// later, looking at each in turn (a rank whose message has not come delays no other's: a
/// large message completes only once its receive is posted); for each, `None` if none came.
/// A message whose receive began but never completes (its sender died mid-transfer, which
/// MPI's receive does not notice: it spun for good) ends the process with exit 4 through
/// `watchdog`, `limit` after the wait's end.
fn receive_all(
    world: &SimpleCommunicator,
    from: &[i32],
    deadline: Instant,
    (watchdog, limit): (&Watchdog, Duration),
) -> Vec<Option<Vec<u8>>> {
    let mut got: Vec<Option<Vec<u8>>> = vec![None; from.len()];
    let now = Instant::now();
    let until = deadline.max(now + LOOK);
    watchdog.arm("a rank's message", until - now + limit, EXIT_DEVICE as i32);
    loop {
        for (i, &rank) in from.iter().enumerate() {
            if got[i].is_none() {
                let peer = world.process_at_rank(rank);
                if peer.immediate_probe().is_some() {
                    got[i] = Some(peer.receive_vec::<u8>().0);
                }
            }
        }
        if got.iter().all(Option::is_some) || Instant::now() >= until {
            watchdog.disarm();
            return got;
        }
        std::thread::sleep(POLL);
    }
}

/// How a rank's MPI ends, once its report is out: [`RankEnd::finish`].
#[must_use = "finish ends MPI: a finalize, or an abort when a rank was lost"]
pub struct RankEnd {
    universe: mpi::environment::Universe,
    lost: bool,
    /// The ranks to send [`FINALIZE`] before finalizing: every other rank on rank 0, none on
    /// the others.
    peers: Vec<i32>,
    watchdog: Watchdog,
    limit: Duration,
}

impl std::fmt::Debug for RankEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankEnd")
            .field("lost", &self.lost)
            .finish_non_exhaustive()
    }
}

impl RankEnd {
    /// Whether a rank this one waited for, or sent to, never answered (on a rank other than
    /// 0: rank 0 sent no assignment, or no word that the run is over).
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// Ends MPI: finalizes when `code` is 0 and every rank answered (rank 0 first tells every
    /// other rank to, [`FINALIZE`]); else aborts the MPI job with `code` (a finalize would wait
    /// for a lost rank, and under `--mca orte_abort_on_non_zero_status 0` mpirun exits 0 for a
    /// rank that merely exits non-zero: an abort's code is mpirun's either way). A finalize
    /// that does not return within the rank limit ends the process with exit 4.
    pub fn finish(self, code: i32) {
        if self.lost || code != 0 {
            // mpirun forwards a rank's output from its pipe as it comes, but an abort tears the
            // job down at once: give it time to take the report first.
            std::thread::sleep(Duration::from_millis(500));
            self.universe.world().abort(code);
        }
        let world = self.universe.world();
        let words = self.peers.iter().map(|&r| (r, FINALIZE.to_vec())).collect();
        // A peer that reported but cannot take its word has died since: its finalize never
        // comes, and the watchdog below ends this one.
        send_all(&world, words, Instant::now() + self.limit);
        self.watchdog
            .arm("MPI_Finalize", self.limit, EXIT_DEVICE as i32);
        drop(self.universe);
        self.watchdog.disarm();
    }
}

/// This process's rank of a run over several hosts: what it came to, and how to end MPI.
#[derive(Debug)]
pub struct RankRun {
    /// Rank 0's summary of the whole run; `None` on the other ranks; the error that ended
    /// this rank's part.
    pub outcome: Result<Option<BroadcastSummary>, BroadcastError>,
    /// Call [`RankEnd::finish`] once the outcome is printed.
    pub end: RankEnd,
}

/// Runs this process's rank of `cfg` over the ranks of `mpirun` (each with `cfg.chips` chips).
/// `limit` bounds the whole run from now: a rank that has not answered by then is lost. The
/// error is one that came before MPI was up (flags `cfg` refuses, checked first); after that,
/// errors are in [`RankRun::outcome`].
pub fn run_ranks(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    limit: Duration,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<RankRun, BroadcastError> {
    // Before MPI: every rank refuses the same flags alike, and `share_of` divides by the
    // chips.
    cfg.validate()?;
    let start = Instant::now();
    let deadline = start + limit;
    let watchdog = Watchdog::default();
    watchdog.arm("MPI_Init", limit, EXIT_DEVICE as i32);
    let universe = mpi::initialize_with_threading(mpi::Threading::Funneled).map(|(u, _)| u);
    watchdog.disarm();
    let universe =
        universe.ok_or_else(|| flag("--mpi", "MPI was initialized already in this process"))?;
    let world = universe.world();
    let (rank, ranks) = (world.rank() as u32, world.size() as u32);
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "-".into());
    let guard = (&watchdog, limit);
    let (outcome, lost) = if rank == 0 {
        gather(
            cfg, dispatch, &world, ranks, host, deadline, guard, progress,
        )
    } else {
        serve(cfg, dispatch, &world, host, deadline, guard, progress)
    };
    let peers = if rank == 0 {
        (1..ranks as i32).collect()
    } else {
        Vec::new()
    };
    Ok(RankRun {
        outcome,
        end: RankEnd {
            universe,
            lost,
            peers,
            watchdog,
            limit,
        },
    })
}

/// A rank other than 0: its share from rank 0, run, reported back, then rank 0's word that
/// the run is over awaited ([`await_verdict`]). `(outcome, lost)`: `lost` when rank 0 sent no
/// assignment or no word; a failure of this rank's own goes to rank 0 in its report, which
/// decides the run's code.
fn serve(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    world: &SimpleCommunicator,
    host: String,
    deadline: Instant,
    guard: (&Watchdog, Duration),
    progress: &(dyn Fn(u32) + Sync),
) -> (Result<Option<BroadcastSummary>, BroadcastError>, bool) {
    let Some(bytes) = receive_all(world, &[0], deadline, guard).pop().flatten() else {
        // A lost rank 0, not a flag: this rank ends the job with 4 (`RankEnd::finish`).
        eprintln!("error: --mpi: rank 0 sent no assignment within --rank-limit (it died or hangs)");
        return (Ok(None), true);
    };
    let outcome = match serde_json::from_slice::<Assignment>(&bytes) {
        Ok(assignment) => {
            let cfg = BroadcastConfig {
                seed: assignment.seed,
                // Job 0 and its faults belong to rank 0's first chip.
                faults: Vec::new(),
                ..cfg.clone()
            };
            run_share(&cfg, dispatch, &assignment.share, progress)
                .map(SummaryCounts::from)
                .map_err(|e| {
                    let code = if e.device_unusable() { EXIT_DEVICE } else { 2 };
                    (e.to_string(), code)
                })
        }
        Err(e) => Err((
            format!("rank 0 sent an assignment that does not read: {e}"),
            2,
        )),
    };
    let report = RankReport { host, outcome };
    let bytes = match serde_json::to_vec(&report) {
        Ok(b) => b,
        Err(e) => {
            let why = format!("this rank's report does not encode: {e}");
            return (Err(flag("--mpi", why)), false);
        }
    };
    let until = deadline.max(Instant::now()) + guard.1;
    let heard = await_verdict(world, bytes, until, guard);
    (Ok(None), !heard)
}

/// Sends this rank's report to rank 0 and waits until `until` for rank 0's word that the run
/// is over ([`FINALIZE`]), sending all the while: a report still out at the run's deadline is
/// left for rank 0 to take or not when it looks (its verdict), not given up (a rank that gave
/// up and aborted raced rank 0's own end, D59). Rank 0 sends the word only once it has every
/// report, and otherwise aborts the job, which ends this rank here. Whether the word came.
fn await_verdict(
    world: &SimpleCommunicator,
    report: Vec<u8>,
    until: Instant,
    guard: (&Watchdog, Duration),
) -> bool {
    let buffer: &'static [u8] = Box::leak(report.into_boxed_slice());
    let send = world
        .process_at_rank(0)
        .immediate_send(mpi::request::StaticScope, buffer);
    // (Each probe of the wait runs MPI's progress, the pending send's too.)
    match receive_all(world, &[0], until, guard).pop().flatten() {
        Some(word) => {
            // The word comes after rank 0 took the report, so the send is complete.
            send.wait();
            word == FINALIZE
        }
        None => {
            // Forgotten, not dropped (a dropped request panics): this rank aborts the job.
            std::mem::forget(send);
            false
        }
    }
}

/// Rank 0: every rank's share sent, its own run, every report gathered. `(outcome, lost)`.
#[allow(clippy::too_many_arguments)]
fn gather(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    world: &SimpleCommunicator,
    ranks: u32,
    host: String,
    deadline: Instant,
    guard: (&Watchdog, Duration),
    progress: &(dyn Fn(u32) + Sync),
) -> (Result<Option<BroadcastSummary>, BroadcastError>, bool) {
    let limit = guard.1;
    let no_answer = || {
        format!(
            "no answer within {} s of the run's start (--rank-limit): it died, hangs or was \
             stopped; its jobs were abandoned",
            limit.as_secs()
        )
    };
    let mut lost = false;
    // Ranks whose assignment could not be delivered, with why.
    let mut undelivered: Vec<Option<String>> = vec![None; ranks as usize];
    let mut messages = Vec::new();
    for r in 1..ranks {
        let assignment = Assignment {
            seed: cfg.seed,
            share: share_of(r, ranks, cfg.chips, cfg.jobs),
        };
        match serde_json::to_vec(&assignment) {
            Ok(bytes) => messages.push((r as i32, bytes)),
            Err(e) => {
                undelivered[r as usize] = Some(format!("its assignment does not encode: {e}"))
            }
        }
    }
    let to: Vec<i32> = messages.iter().map(|&(r, _)| r).collect();
    for (r, sent) in to.iter().zip(send_all(world, messages, deadline)) {
        if !sent {
            lost = true;
            undelivered[*r as usize] = Some(no_answer());
        }
    }
    let own = share_of(0, ranks, cfg.chips, cfg.jobs);
    let mut summary = match run_share(cfg, dispatch, &own, progress) {
        Ok(s) => s,
        Err(e) => return (Err(e), lost),
    };
    summary.ranks = vec![RankSummary {
        rank: 0,
        host,
        chips: cfg.chips,
        jobs: own.jobs.len() as u32,
        error: None,
        exit_code: 0,
    }];
    let delivered: Vec<i32> = (1..ranks as i32)
        .filter(|&r| undelivered[r as usize].is_none())
        .collect();
    let mut reports = receive_all(world, &delivered, deadline, guard).into_iter();
    for r in 1..ranks {
        let share = share_of(r, ranks, cfg.chips, cfg.jobs);
        let report = match undelivered[r as usize].take() {
            Some(why) => Err((why, true)),
            None => match reports.next().flatten() {
                Some(bytes) => serde_json::from_slice::<RankReport>(&bytes)
                    .map_err(|e| (format!("its report does not read: {e}"), false)),
                None => {
                    lost = true;
                    Err((no_answer(), true))
                }
            },
        };
        let (host, error, exit_code) = match report {
            Ok(RankReport {
                host,
                outcome: Ok(counts),
            }) => {
                summary.add_counts(counts);
                (host, None, 0)
            }
            Ok(RankReport {
                host,
                outcome: Err((e, code)),
            }) => {
                fail(&mut summary, &share, false);
                (host, Some(format!("its run failed: {e}")), code)
            }
            Err((why, abandoned)) => {
                fail(&mut summary, &share, abandoned);
                ("-".into(), Some(why), if abandoned { 3 } else { 2 })
            }
        };
        if error.is_some() {
            // Its chips, with nothing reported of them, so the report still lists every chip,
            // each simulated one with the seed that replays it.
            let what = if exit_code == 3 {
                "no report"
            } else {
                "its run failed"
            };
            for c in share.first_chip..share.first_chip + cfg.chips {
                let seed = cfg.device.in_process().then(|| chip_seed(cfg.seed, c));
                summary
                    .chips
                    .push(ChipSummary::new(c, format!("rank {r} ({what})"), seed));
            }
        }
        summary.ranks.push(RankSummary {
            rank: r,
            host,
            chips: cfg.chips,
            jobs: share.jobs.len() as u32,
            error,
            exit_code,
        });
    }
    summary.chips.sort_by_key(|c| c.chip);
    summary.order_by_job();
    // The bound of the whole run: a chip's even share of every job.
    let per_chip = |chips: u32| cfg.jobs.div_ceil(chips.max(1)) as u64;
    summary.bound_cycles =
        summary.bound_cycles / per_chip(cfg.chips).max(1) * per_chip(ranks * cfg.chips);
    summary.set_micros();
    summary.set_efficiency();
    (Ok(Some(summary)), lost)
}

/// Every job of `share` as not run (`abandoned`: its rank never answered) or failed (its
/// rank's run failed).
fn fail(summary: &mut BroadcastSummary, share: &Share, abandoned: bool) {
    summary.ok = false;
    for &job in &share.jobs {
        summary.abandoned += abandoned as u32;
        summary.results.push(JobResult {
            job,
            chip: None,
            ok: false,
            timeout: false,
            abandoned,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_split_the_jobs_by_their_home_chip() {
        // 2 ranks of 2 chips: chips 0,1 on rank 0 and 2,3 on rank 1.
        let a = share_of(0, 2, 2, 10);
        let b = share_of(1, 2, 2, 10);
        assert_eq!(a.jobs, [0, 1, 4, 5, 8, 9]);
        assert_eq!(b.jobs, [2, 3, 6, 7]);
        assert_eq!((b.first_chip, b.total_chips), (2, 4));
        for j in &b.jobs {
            assert!(b.home(*j) < 2, "job {j} on one of rank 1's chips");
        }
    }
}
