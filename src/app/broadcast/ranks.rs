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
//! **Never a hang.** Every wait for another rank polls until `--rank-limit` seconds from the
//! run's start. A rank that has not answered by then (it died, hangs, or is stopped) has its
//! jobs reported abandoned under its name; rank 0 then prints the report and ends the MPI job
//! with `MPI_Abort`, since a finalize would wait for the missing rank. (Under Open MPI,
//! `mpirun --enable-recovery` keeps rank 0 alive when another rank dies, so that it can say
//! so; without it, `mpirun` ends every rank.) A rank whose run fails reports its error, which
//! rank 0 reports under that rank's name, its jobs failed.

use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};

use super::config::BroadcastConfig;
use super::error::{BroadcastError, flag};
use super::run::{Share, run_share};
use super::summary::{BroadcastSummary, ChipSummary, JobResult, RankSummary};
use crate::dispatch::DispatchConfig;
use crate::host::device::ClockKind;
use crate::host::session::CoreGiveUp;

/// How often a rank looks for a message it waits for.
const POLL: Duration = Duration::from_millis(5);

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

/// What rank 0 sends each rank: the seed (the plan is the flags every rank was started with)
/// and the rank's share.
#[derive(Debug, Serialize, Deserialize)]
struct Assignment {
    seed: u64,
    share: Share,
}

/// What a rank sends rank 0 after its share ran: what rank 0 adds into the run's summary, or
/// why the share could not run.
#[derive(Debug, Serialize, Deserialize)]
struct RankReport {
    host: String,
    outcome: Result<RankCounts, String>,
}

/// A rank's share of the counts of [`BroadcastSummary`].
#[derive(Debug, Serialize, Deserialize)]
struct RankCounts {
    received_bytes: u64,
    checked_bytes: u64,
    wait_cycles: [u64; 2],
    cycles: u64,
    clock: ClockKind,
    timeouts: u32,
    abandoned: u32,
    mismatches: u32,
    ok: bool,
    giveups: Vec<CoreGiveUp>,
    results: Vec<JobResult>,
    chips: Vec<ChipSummary>,
    violations: Vec<String>,
}

impl RankCounts {
    fn of(s: &BroadcastSummary) -> Self {
        Self {
            received_bytes: s.received_bytes,
            checked_bytes: s.checked_bytes,
            wait_cycles: s.wait_cycles,
            cycles: s.cycles,
            clock: s.clock,
            timeouts: s.timeouts,
            abandoned: s.abandoned,
            mismatches: s.mismatches,
            ok: s.ok,
            giveups: s.giveups.clone(),
            results: s.results.clone(),
            chips: s.chips.clone(),
            violations: s.violations.clone(),
        }
    }
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

/// Waits for a message from `from` until `deadline`; `None` if none came.
fn receive_by(world: &SimpleCommunicator, from: i32, deadline: Instant) -> Option<Vec<u8>> {
    let peer = world.process_at_rank(from);
    loop {
        if peer.immediate_probe().is_some() {
            return Some(peer.receive_vec::<u8>().0);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// How a rank's MPI ends, once its report is out: [`RankEnd::finish`].
#[must_use = "finish ends MPI: a finalize, or an abort when a rank was lost"]
pub struct RankEnd {
    universe: mpi::environment::Universe,
    lost: bool,
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
    /// Whether a rank this one waited for never answered.
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// Ends MPI: finalizes when `code` is 0 and every rank answered; else aborts the MPI job
    /// with `code` (a finalize would wait for a lost rank, and under `--mca
    /// orte_abort_on_non_zero_status 0` mpirun exits 0 for a rank that merely exits non-zero:
    /// an abort's code is mpirun's either way).
    pub fn finish(self, code: i32) {
        if self.lost || code != 0 {
            // mpirun forwards a rank's output from its pipe as it comes, but an abort tears the
            // job down at once: give it time to take the report first.
            std::thread::sleep(Duration::from_millis(500));
            self.universe.world().abort(code);
        }
        self.watchdog.arm("MPI_Finalize", self.limit, code);
        drop(self.universe);
        self.watchdog.disarm();
    }
}

/// Runs this process's rank of `cfg` over the ranks of `mpirun` (each with `cfg.chips` chips),
/// waiting at most `limit` from now for another rank. Rank 0 returns the run's summary, the
/// other ranks `None`; print it, then [`RankEnd::finish`].
pub fn run_ranks(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    limit: Duration,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<(Option<BroadcastSummary>, RankEnd), BroadcastError> {
    let start = Instant::now();
    let deadline = start + limit;
    let watchdog = Watchdog::default();
    watchdog.arm("MPI_Init", limit, super::error::EXIT_DEVICE as i32);
    let universe = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .map(|(u, _)| u)
        .ok_or_else(|| flag("--mpi", "MPI was initialized already in this process"))?;
    watchdog.disarm();
    let end = |universe, lost| RankEnd {
        universe,
        lost,
        watchdog: watchdog.clone(),
        limit,
    };
    let world = universe.world();
    let (rank, ranks) = (world.rank() as u32, world.size() as u32);
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "-".into());
    if rank != 0 {
        // The plan is the flags every rank was started with; the seed and the share come from
        // rank 0.
        let Some(bytes) = receive_by(&world, 0, deadline) else {
            // Rank 0 is gone or hangs: nothing to report to.
            return Ok((None, end(universe, true)));
        };
        let assignment: Assignment = serde_json::from_slice(&bytes).map_err(|e| {
            flag(
                "--mpi",
                format!("rank 0 sent an assignment that does not read: {e}"),
            )
        })?;
        let cfg = BroadcastConfig {
            seed: assignment.seed,
            // Job 0 and its faults belong to rank 0's first chip.
            faults: Vec::new(),
            ..cfg.clone()
        };
        let outcome = run_share(&cfg, dispatch, &assignment.share, progress)
            .map(|s| RankCounts::of(&s))
            .map_err(|e| e.to_string());
        let report = RankReport { host, outcome };
        let bytes = serde_json::to_vec(&report)
            .map_err(|e| flag("--mpi", format!("this rank's report does not encode: {e}")))?;
        world.process_at_rank(0).send(&bytes[..]);
        return Ok((None, end(universe, false)));
    }
    for r in 1..ranks {
        let assignment = Assignment {
            seed: cfg.seed,
            share: share_of(r, ranks, cfg.chips, cfg.jobs),
        };
        let bytes = serde_json::to_vec(&assignment)
            .map_err(|e| flag("--mpi", format!("an assignment does not encode: {e}")))?;
        world.process_at_rank(r as i32).send(&bytes[..]);
    }
    let own = share_of(0, ranks, cfg.chips, cfg.jobs);
    let mut summary = run_share(cfg, dispatch, &own, progress)?;
    let mut lost = false;
    summary.ranks = vec![RankSummary {
        rank: 0,
        host,
        chips: cfg.chips,
        jobs: own.jobs.len() as u32,
        error: None,
    }];
    for r in 1..ranks {
        let share = share_of(r, ranks, cfg.chips, cfg.jobs);
        let report = receive_by(&world, r as i32, deadline).map(|bytes| {
            serde_json::from_slice::<RankReport>(&bytes).unwrap_or_else(|e| RankReport {
                host: "-".into(),
                outcome: Err(format!("its report does not read: {e}")),
            })
        });
        let (host, error) = match report {
            Some(RankReport {
                host,
                outcome: Ok(counts),
            }) => {
                add(&mut summary, counts);
                (host, None)
            }
            Some(RankReport {
                host,
                outcome: Err(e),
            }) => {
                fail(&mut summary, &share, false);
                (host, Some(format!("its run failed: {e}")))
            }
            None => {
                lost = true;
                fail(&mut summary, &share, true);
                (
                    "-".into(),
                    Some(format!(
                        "no answer within {} s (--rank-limit): it died, hangs or was stopped; its jobs were abandoned",
                        limit.as_secs()
                    )),
                )
            }
        };
        summary.ranks.push(RankSummary {
            rank: r,
            host,
            chips: cfg.chips,
            jobs: share.jobs.len() as u32,
            error,
        });
    }
    summary.results.sort_by_key(|r| r.job);
    summary.chips.sort_by_key(|c| c.chip);
    // The bound of the whole run: a chip's even share of every job.
    let per_chip = |chips: u32| cfg.jobs.div_ceil(chips.max(1)) as u64;
    summary.bound_cycles =
        summary.bound_cycles / per_chip(cfg.chips).max(1) * per_chip(ranks * cfg.chips);
    summary.micros = summary
        .clock
        .is_time()
        .then(|| summary.cycles as f64 / summary.aiclk_mhz.max(1) as f64);
    summary.set_efficiency();
    Ok((Some(summary), end(universe, lost)))
}

/// Adds a rank's counts to the run's.
fn add(summary: &mut BroadcastSummary, c: RankCounts) {
    summary.received_bytes += c.received_bytes;
    summary.checked_bytes += c.checked_bytes;
    summary.wait_cycles[0] += c.wait_cycles[0];
    summary.wait_cycles[1] += c.wait_cycles[1];
    summary.cycles = summary.cycles.max(c.cycles);
    summary.clock = if c.clock == summary.clock {
        summary.clock
    } else {
        ClockKind::default()
    };
    summary.timeouts += c.timeouts;
    summary.abandoned += c.abandoned;
    summary.mismatches += c.mismatches;
    summary.ok &= c.ok;
    summary.giveups.extend(c.giveups);
    summary.results.extend(c.results);
    summary.chips.extend(c.chips);
    summary.violations.extend(c.violations);
}

/// Every job of `share` as not run (`abandoned`: its rank never answered) or failed (its
/// rank's run failed).
fn fail(summary: &mut BroadcastSummary, share: &Share, abandoned: bool) {
    summary.ok = false;
    for &job in &share.jobs {
        summary.abandoned += abandoned as u32;
        summary.results.push(JobResult {
            job,
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
