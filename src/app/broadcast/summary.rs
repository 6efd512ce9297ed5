//! What a run came to: counts, the resource bound and the efficiency, the text summary.

use serde::Serialize;

use crate::dispatch::DispatchSummary;
use crate::host::device::ClockKind;
use crate::host::log::KernelLog;
use crate::host::profile::{self, FirmwareProfile, ProfileSummary};
use crate::host::session::{CoreGiveUp, Report, Session};

use super::config::{BroadcastConfig, Protocol};
use super::error::BroadcastError;
use komorebi_kernel::broadcast_handler::program::Check;

/// Functions of each kernel the summary of a `--profile` run lists.
pub const PROFILE_TOP: usize = 10;

/// One job's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct JobResult {
    /// Job number.
    pub job: u32,
    /// The chip that ran it, as [`ChipSummary::chip`] numbers them; `null` for a job run nowhere
    /// (abandoned, or its rank's run failed).
    pub chip: Option<u32>,
    /// Every core reported success.
    pub ok: bool,
    /// The command timed out.
    pub timeout: bool,
    /// Not run: cores of an earlier job never finished it, so this job's command could never
    /// start on them.
    pub abandoned: bool,
}

/// A core's give-up in a run: the job it gave up in, and its record (in the JSON, `job` beside
/// the record's fields).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct JobGiveUp {
    /// The job's number, as [`JobResult::job`] names it.
    pub job: u32,
    /// What the core recorded.
    #[serde(flatten)]
    pub record: CoreGiveUp,
}

impl core::ops::Deref for JobGiveUp {
    type Target = CoreGiveUp;

    fn deref(&self) -> &CoreGiveUp {
        &self.record
    }
}

/// Job `job`'s give-ups, as a run's lists hold them.
fn job_give_ups(job: u32, report: &Report) -> impl Iterator<Item = JobGiveUp> + '_ {
    report.give_ups.iter().map(move |g| JobGiveUp {
        job,
        record: g.clone(),
    })
}

/// What one chip of a run did (`--chips`): the JSON's `chips` array, one entry a chip (one for a
/// run on one chip).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ChipSummary {
    /// The chip's index in the run (`0..chips`).
    pub chip: u32,
    /// Its device: `sim`, `pcie-sim`, `ttsim:PATH@N` or a card's device node.
    pub device: String,
    /// The seed its simulation ran with (`--seed` gives chip 0's; chip N's is derived from it:
    /// give it to `--seed` of a one-chip run to replay that chip alone); none on ttsim and a
    /// card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Jobs run on it (timed-out ones included; abandoned ones ran nowhere).
    pub jobs: u32,
    /// Of those, jobs whose DRAM data lives on another chip (their home, job mod chips): the
    /// assigner placed them here because this chip had none of its own ready, and their data
    /// was written here for them.
    pub moved: u32,
    /// Its device clock from the run's start to its end, as [`BroadcastSummary::cycles`] counts.
    pub cycles: u64,
    /// Its AICLK in MHz, as it reports it (cards of one run may run at different clocks); 0 for
    /// a chip nothing was reported of (an `--mpi` rank's that never answered or whose run
    /// failed).
    pub aiclk_mhz: u32,
    /// Jobs on it that timed out.
    pub timeouts: u32,
    /// Jobs on it with a data mismatch.
    pub mismatches: u32,
    /// Every core's first give-ups of its jobs, by job.
    pub giveups: Vec<JobGiveUp>,
}

impl ChipSummary {
    /// Chip `chip`, on `device`, before its first job.
    pub(super) fn new(chip: u32, device: String, seed: Option<u64>) -> Self {
        Self {
            chip,
            device,
            seed,
            jobs: 0,
            moved: 0,
            cycles: 0,
            aiclk_mhz: 0,
            timeouts: 0,
            mismatches: 0,
            giveups: Vec::new(),
        }
    }

    /// Adds job `job`'s report; `moved` when the job's home is another chip.
    pub(super) fn record(&mut self, job: u32, report: &Report, moved: bool) {
        self.jobs += 1;
        self.moved += moved as u32;
        self.timeouts += report.timeout as u32;
        self.mismatches += report.mismatch as u32;
        self.giveups.extend(job_give_ups(job, report));
    }

    /// Adds what `other` (the same chip, counted by another worker) holds.
    pub(super) fn merge(&mut self, other: &ChipSummary) {
        self.jobs += other.jobs;
        self.moved += other.moved;
        self.timeouts += other.timeouts;
        self.mismatches += other.mismatches;
        self.giveups.extend(other.giveups.iter().cloned());
    }
}

/// One rank of a run over several hosts (`--mpi`): the JSON's `ranks` array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankSummary {
    /// Its MPI rank.
    pub rank: u32,
    /// Its host, as MPI names it (`-` when it never answered).
    pub host: String,
    /// Its chips (`--chips`).
    pub chips: u32,
    /// Jobs it was given.
    pub jobs: u32,
    /// Why its jobs did not run, if they did not: it never answered, or its run failed.
    pub error: Option<String>,
    /// The exit code its part gives the run: 0, 3 (it never answered: its jobs abandoned), 2
    /// or 4 (its run failed, as the same failure exits in one process).
    pub exit_code: u8,
}

/// What a run came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BroadcastSummary {
    /// The device it ran on: `sim`, `pcie-sim` or a card's device node.
    pub device: String,
    /// The device's fused DRAM bank, if it has one (left out of the JSON when none): the run
    /// read from and wrote to the other banks only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
    /// Every job succeeded and (with `--check full`) every byte checked.
    pub ok: bool,
    /// What compute did with the words it received: `full` (read and checked every one) or
    /// `none` (read none: `checked_bytes` is 0).
    pub check: &'static str,
    /// The protocol that moved the blocks: `komorebi` or `handshake`.
    pub protocol: Protocol,
    /// `firmware` when the native kernels were charged the firmware's costs per call
    /// (`--kernel-costs firmware`); left out of the JSON with tt-metal's, the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_costs: Option<komorebi_sim::KernelCosts>,
    /// Jobs run.
    pub jobs: u32,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Broadcasts of A and of W per job.
    pub broadcasts: [usize; 2],
    /// The grid the jobs were laid out on: the flags' on the simulators, the device's own on
    /// ttsim and a card (chip 0's on several chips). What a judge of the byte counts lays the
    /// rectangle out on again (`komorebi explore`); not in the JSON, whose `broadcasts` give
    /// the layout's counts.
    #[serde(skip)]
    pub laid_out_on: Option<komorebi_broadcast::layout::Geometry>,
    /// Bytes receivers got by multicast (all jobs).
    pub received_bytes: u64,
    /// Bytes compute kernels checked (all jobs; senders' own compute included); 0 with
    /// `--check none`.
    pub checked_bytes: u64,
    /// The run, all jobs, in counts of the device's clock ([`Self::clock`]): device cycles, or
    /// ttsim's clock steps. On several chips, which run at once, the longest chip's.
    pub cycles: u64,
    /// What [`Self::cycles`] counts: `simulated` (the simulator's cycles), `card` (a card's
    /// tile wall clock), `ttsim-steps` (ttsim's clock steps, which are no device time: ttsim is
    /// not timed).
    pub clock: ClockKind,
    /// The device's AICLK in MHz, as it reports it (the simulator's timing model; a card's and
    /// ttsim's telemetry); on several chips, chip 0's (each chip's is in [`Self::chips`]).
    pub aiclk_mhz: u32,
    /// The run in microseconds; `null` when the clock is no time. On several chips, the
    /// longest chip's time, each chip's cycles at its own AICLK.
    pub micros: Option<f64>,
    /// The resource bound of all jobs, in cycles: one job's (`bound` module: the least cycles
    /// the busiest resource needs) times the jobs, which run back to back; on several chips,
    /// times the jobs of a chip when they are spread evenly (`jobs / chips`, rounded up).
    pub bound_cycles: u64,
    /// The resource that binds: `DRAM bank 5`, `link NoC1 (3,2)->(4,2)` (raw coordinates of
    /// that NoC), `NIU0 reads of (1,2)`, `ejection port NoC0 of (2,3)`, `compute (2,3)` (cores
    /// logical).
    pub binding: String,
    /// `bound_cycles / cycles`: 1.0 would be a run as fast as its busiest resource allows,
    /// never more on the simulator (on a card the bound is the simulator's model of the chip,
    /// which a card may beat). `null` unless every job succeeded (a job that timed out, was
    /// abandoned or gave up did not do the work the bound counts, so its cycles are no
    /// performance figure), on ttsim, whose steps are no device time, and for a what-if run
    /// (`--speed-up`), whose cycles are not the firmware's.
    pub efficiency: Option<f64>,
    /// Cycles spent waiting in broadcast calls, summed over cores: A, W.
    pub wait_cycles: [u64; 2],
    /// Jobs that timed out.
    pub timeouts: u32,
    /// Jobs not run: an earlier job's cores never finished it (with a wait limit too large
    /// for the kernels to give up), so their tiles were never free again.
    pub abandoned: u32,
    /// Jobs with a data mismatch.
    pub mismatches: u32,
    /// Every core's first give-ups, all jobs, by job.
    pub giveups: Vec<JobGiveUp>,
    /// Per job.
    pub results: Vec<JobResult>,
    /// Per chip (`--chips`; one entry on one chip): its jobs, cycles and give-ups.
    pub chips: Vec<ChipSummary>,
    /// Per rank of a run over several hosts (`--mpi`; left out of the JSON otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankSummary>,
    /// Protocol violations the simulator saw.
    pub violations: Vec<String>,
    /// The `--fault`s that never acted, as `--fault` names them: a NoC drop whose transaction
    /// never came, a host stop whose block its core never reached before it reported (the
    /// broadcast gave up first, or another fault held it back). Faults in the programs (stalls,
    /// bad words) act inside the firmware and are not listed. A run that asked for a fault it
    /// did not get tested less than it asked: the text warns.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfired_faults: Vec<String>,
    /// The dispatcher's figures, when the jobs ran through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<DispatchSummary>,
    /// The firmware profile (`--profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileSummary>,
    /// A what-if run's speed-up (`--speed-up`): the cycles are not the firmware's as built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_up: Option<crate::host::what_if::SpeedUpSummary>,
    /// The firmware's logs (`--log`): every kernel of the rectangle that logged, its lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<Vec<KernelLog>>,
    /// Where `--log FILE` wrote them (the text report then says so instead of printing them).
    #[serde(skip)]
    pub log_file: Option<std::path::PathBuf>,
}

impl BroadcastSummary {
    /// The process exit code: 0 all checked, 1 data mismatch, 3 timeout (or jobs abandoned
    /// behind one, or a rank that never answered); a rank whose run failed gives its failure's
    /// code (2, or 4 for a device it could not use) first.
    pub fn exit_code(&self) -> u8 {
        let failed = self.ranks.iter().map(|r| r.exit_code).filter(|&c| c != 3);
        if let Some(code) = failed.max().filter(|&c| c != 0) {
            return code;
        }
        if self.timeouts > 0 || self.abandoned > 0 || self.rank_lost() {
            3
        } else if self.mismatches > 0 || !self.ok {
            1
        } else {
            0
        }
    }
}

impl BroadcastSummary {
    /// Whether a rank never answered (its part's exit code is 3), jobs given to it or not.
    pub(super) fn rank_lost(&self) -> bool {
        self.ranks.iter().any(|r| r.exit_code == 3)
    }
}

/// The counts of a part of a run (a worker's jobs, a rank's share) that add up into the run's
/// [`BroadcastSummary`] ([`BroadcastSummary::add_counts`]); a rank sends its own to rank 0.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SummaryCounts {
    received_bytes: u64,
    checked_bytes: u64,
    wait_cycles: [u64; 2],
    cycles: u64,
    clock: ClockKind,
    timeouts: u32,
    abandoned: u32,
    mismatches: u32,
    ok: bool,
    giveups: Vec<JobGiveUp>,
    results: Vec<JobResult>,
    chips: Vec<ChipSummary>,
    violations: Vec<String>,
    unfired_faults: Vec<String>,
}

impl From<BroadcastSummary> for SummaryCounts {
    fn from(s: BroadcastSummary) -> Self {
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
            giveups: s.giveups,
            results: s.results,
            chips: s.chips,
            violations: s.violations,
            unfired_faults: s.unfired_faults,
        }
    }
}

impl BroadcastSummary {
    /// Adds the counts of a part of the run: sums, the longest part's cycles, every list.
    pub(super) fn add_counts(&mut self, c: SummaryCounts) {
        self.received_bytes += c.received_bytes;
        self.checked_bytes += c.checked_bytes;
        self.wait_cycles[0] += c.wait_cycles[0];
        self.wait_cycles[1] += c.wait_cycles[1];
        self.cycles = self.cycles.max(c.cycles);
        if c.clock != self.clock {
            // Cycles of different clocks (a card's beside ttsim's steps) are no one figure.
            self.violations.push(format!(
                "a part of the run counts {:?}, the rest {:?}: the run's cycles mix them",
                c.clock, self.clock
            ));
            self.ok = false;
        }
        self.timeouts += c.timeouts;
        self.abandoned += c.abandoned;
        self.mismatches += c.mismatches;
        self.ok &= c.ok;
        self.giveups.extend(c.giveups);
        self.results.extend(c.results);
        self.chips.extend(c.chips);
        self.violations.extend(c.violations);
        self.unfired_faults.extend(c.unfired_faults);
    }

    /// A summary of nothing yet, with the bound of one job (`job_bound` cycles, bound by
    /// `binding`).
    pub(super) fn empty(
        cfg: &BroadcastConfig,
        broadcasts: [usize; 2],
        job_bound: u64,
        binding: String,
    ) -> Self {
        Self {
            device: cfg.device.to_string(),
            fused_dram: None,
            ok: true,
            check: match cfg.check {
                Check::Full => "full",
                Check::None => "none",
            },
            protocol: cfg.protocol,
            kernel_costs: cfg.named_kernel_costs(),
            jobs: cfg.jobs,
            blocks: cfg.blocks,
            broadcasts,
            laid_out_on: None,
            received_bytes: 0,
            checked_bytes: 0,
            cycles: 0,
            clock: ClockKind::default(),
            aiclk_mhz: 0,
            micros: None,
            bound_cycles: job_bound.saturating_mul(cfg.jobs.div_ceil(cfg.chips.max(1)) as u64),
            binding,
            efficiency: None,
            wait_cycles: [0; 2],
            timeouts: 0,
            abandoned: 0,
            mismatches: 0,
            giveups: Vec::new(),
            results: Vec::new(),
            chips: Vec::new(),
            ranks: Vec::new(),
            violations: Vec::new(),
            unfired_faults: Vec::new(),
            dispatch: None,
            profile: None,
            speed_up: cfg.speed_up.as_ref().map(Into::into),
            log: None,
            log_file: None,
        }
    }

    /// Puts the per-job lists in job order, whichever worker or rank recorded them first: the
    /// results, and the give-ups of the run and of each chip (a job's own in the order its
    /// report gave them).
    pub(super) fn order_by_job(&mut self) {
        self.results.sort_by_key(|r| r.job);
        self.giveups.sort_by_key(|g| g.job);
        for chip in &mut self.chips {
            chip.giveups.sort_by_key(|g| g.job);
        }
    }

    /// Whether every job ran to its end: none timed out, none was abandoned.
    pub fn completed(&self) -> bool {
        self.timeouts == 0 && self.abandoned == 0
    }

    /// Adds job `job`'s report, as chip `chip` ran it.
    pub(super) fn record(&mut self, job: u32, chip: u32, report: &Report) {
        self.checked_bytes += report.stats.iter().map(|(_, s)| s[2] as u64).sum::<u64>();
        self.timeouts += report.timeout as u32;
        self.mismatches += report.mismatch as u32;
        self.ok &= report.ok;
        self.giveups.extend(job_give_ups(job, report));
        self.results.push(JobResult {
            job,
            chip: Some(chip),
            ok: report.ok,
            timeout: report.timeout,
            abandoned: false,
        });
    }

    /// Adds job `job` as not run: an earlier job's cores never finished.
    pub(super) fn record_abandoned(&mut self, job: u32) {
        self.abandoned += 1;
        self.ok = false;
        self.results.push(JobResult {
            job,
            chip: None,
            ok: false,
            timeout: false,
            abandoned: true,
        });
    }

    /// [`Self::micros`] from the chips: the longest chip's time, each chip's cycles at its own
    /// AICLK; at [`Self::aiclk_mhz`] when no chip reported its clock; none when no clock is
    /// known at all.
    pub(super) fn set_micros(&mut self) {
        let longest = self
            .chips
            .iter()
            .filter(|c| c.aiclk_mhz > 0)
            .map(|c| c.cycles as f64 / c.aiclk_mhz as f64)
            .reduce(f64::max)
            .or((self.aiclk_mhz > 0).then(|| self.cycles as f64 / self.aiclk_mhz as f64));
        self.micros = longest.filter(|_| self.clock.is_time());
    }

    /// Cycles since `start`, the simulator's violations, the end of the trace (`extra`
    /// events, then the JSON closed), and with `--log` the cores' logs, decoded with `tables`
    /// (the run's, loaded once: `None` for the native kernels).
    pub(super) fn close(
        &mut self,
        session: &mut Session,
        cfg: &BroadcastConfig,
        start: u64,
        extra: Vec<serde_json::Value>,
        tables: Option<&crate::host::log::Tables>,
    ) -> Result<(), BroadcastError> {
        self.cycles = session.device().now() - start;
        self.clock = session.device().clock_kind();
        // A device that reports no clock (0) has no time, rather than one at 1 MHz.
        let mhz = session.device().aiclk_mhz();
        self.micros = (self.clock.is_time() && mhz > 0).then(|| self.cycles as f64 / mhz as f64);
        self.aiclk_mhz = mhz;
        // A profile covers the rectangle's cores: the others only poll their control blocks.
        let profiled: std::collections::BTreeSet<(u8, u8)> = match cfg.profile {
            Some(_) => {
                let r = cfg.rect;
                (r.y0..r.y0.saturating_add(r.rows))
                    .flat_map(|y| (r.x0..r.x0.saturating_add(r.columns)).map(move |x| (x, y)))
                    .filter_map(|(x, y)| session.noc0(komorebi_hal::LogicalXy::new(x, y)))
                    .map(|p| p.get())
                    .collect()
            }
            None => Default::default(),
        };
        if let Some(sim) = session.device().simulator() {
            self.violations = sim.violations().iter().map(|v| v.to_string()).collect();
            self.ok &= self.violations.is_empty();
            // The trace streamed into its file as the run went (`start_trace`): the host's
            // slices go last, then the JSON is closed.
            if let (Some(path), Some(done)) = (&cfg.trace, sim.finish_trace(extra)) {
                done.map_err(|error| BroadcastError::Trace {
                    path: path.clone(),
                    error,
                })?;
            }
            if let Some(path) = &cfg.profile {
                let dir = cfg.firmware_dir();
                let symbols = profile::load_symbols(&dir)
                    .map_err(|e| BroadcastError::Profile(e.to_string()))?;
                let mut cores = sim.core_profiles();
                cores.retain(|c| profiled.contains(&c.tile));
                let named = FirmwareProfile::new(&cores, &symbols);
                let title = format!(
                    "komorebi firmware, broadcast of {} ({} jobs, window {}, check {})",
                    cfg.rect, cfg.jobs, cfg.window, self.check
                );
                self.profile = Some(
                    named
                        .write(path, &title, PROFILE_TOP)
                        .map_err(|e| BroadcastError::Profile(e.to_string()))?,
                );
            }
        }
        if cfg.log.is_some() {
            self.log = Some(super::logs::kernel_logs(session, cfg, tables)?);
        }
        self.set_efficiency();
        Ok(())
    }

    /// [`Self::efficiency`] from the bound and the cycles, where the run makes it a figure.
    pub(super) fn set_efficiency(&mut self) {
        self.efficiency = (self.ok
            && self.completed()
            && self.cycles > 0
            && self.bound_cycles > 0
            && self.clock.is_time()
            && self.speed_up.is_none())
        .then(|| self.bound_cycles as f64 / self.cycles as f64);
    }
}

impl BroadcastSummary {
    /// Writes the logs [`Self::close`] read (`--log FILE`: the firmware's log rings decoded
    /// against its ELF files, or the native kernels' lines the simulator kept, at the level the
    /// images ship with) to FILE, every chip's of a run on several; nothing for `--log -` or
    /// none.
    pub(super) fn write_log(&mut self, cfg: &BroadcastConfig) -> Result<(), BroadcastError> {
        let (Some(to), Some(logs)) = (&cfg.log, &self.log) else {
            return Ok(());
        };
        if to != std::path::Path::new("-") {
            let text: String = logs.iter().map(|l| l.to_string()).collect();
            std::fs::write(to, text)
                .map_err(|e| BroadcastError::Log(format!("{}: {e}", to.display())))?;
            self.log_file = Some(to.to_path_buf());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_s_give_up_is_one_flat_object_and_reads_back_as_a_rank_sends_it() {
        let g = JobGiveUp {
            job: 7,
            record: CoreGiveUp {
                core: [3, 2],
                place: "broadcast_valid",
                broadcast: 1,
                block: 40_000,
                kernel: "broadcast area",
            },
        };
        let text = serde_json::to_string(&g).unwrap();
        assert_eq!(
            text,
            r#"{"job":7,"core":[3,2],"where":"broadcast_valid","broadcast":1,"block":40000,"kernel":"broadcast area"}"#
        );
        assert_eq!(serde_json::from_str::<JobGiveUp>(&text).unwrap(), g);
    }
}
