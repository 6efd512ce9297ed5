//! What a run came to: counts, the resource bound, the text summary.

use super::*;

/// One job's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobResult {
    /// Job number.
    pub job: u32,
    /// Every core reported success.
    pub ok: bool,
    /// The command timed out.
    pub timeout: bool,
}

/// What a run came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BroadcastSummary {
    /// Every job succeeded and every byte checked.
    pub ok: bool,
    /// Jobs run.
    pub jobs: u32,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Broadcasts of A and of W per job.
    pub broadcasts: [usize; 2],
    /// Bytes receivers got by multicast (all jobs).
    pub received_bytes: u64,
    /// Bytes compute kernels checked (all jobs; senders' own compute included).
    pub checked_bytes: u64,
    /// Simulated cycles of all jobs.
    pub cycles: u64,
    /// The same in microseconds at AICLK.
    pub micros: f64,
    /// The resource bound of all jobs, in cycles.
    pub bound_cycles: u64,
    /// `bound_cycles / cycles`.
    pub achieved_over_bound: f64,
    /// Cycles spent waiting in broadcast calls, summed over cores: A, W.
    pub wait_cycles: [u64; 2],
    /// Jobs that timed out.
    pub timeouts: u32,
    /// Jobs with a data mismatch.
    pub mismatches: u32,
    /// Every core's first give-ups, all jobs.
    pub giveups: Vec<CoreGiveUp>,
    /// Per job.
    pub results: Vec<JobResult>,
    /// Protocol violations the simulator saw.
    pub violations: Vec<String>,
    /// The dispatcher's figures, when the jobs ran through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<DispatchSummary>,
}

impl BroadcastSummary {
    /// The process exit code: 0 all checked, 1 data mismatch, 3 timeout.
    pub fn exit_code(&self) -> u8 {
        if self.timeouts > 0 {
            3
        } else if self.mismatches > 0 || !self.ok {
            1
        } else {
            0
        }
    }
}

/// The resource bound of one job, in cycles: the busiest sender's NIU (reads plus multicasts,
/// each packet paying its path reservation), DRAM bandwidth over the 8 banks, and the busiest
/// receiver's ejection port.
pub(super) fn job_bound(
    cfg: &BroadcastConfig,
    args: &[Vec<BroadcastArgs>],
    timing: &Timing,
) -> u64 {
    let block = cfg.pages as u64 * cfg.page_size as u64;
    let packets = |bytes: u64| bytes.div_ceil(timing.max_packet_bytes as u64).max(1);
    let flits = timing.flits(timing.max_packet_bytes.min(block as u32)) * packets(block);
    let mut sender = 0u64;
    let mut senders = 0u64;
    for stream in args {
        for a in stream.iter().filter(|a| a.rank == 0 && a.receivers > 0) {
            senders += 1;
            let hops = a.receivers as f64;
            let reserve = (timing.reserve_base + timing.reserve_per_hop * hops).round() as u64;
            let per_block = cfg.pages as u64 * timing.read_issue_floor
                + packets(block) * timing.write_issue_floor.max(reserve)
                + flits
                + timing.write_issue_floor.max(reserve + 2);
            sender = sender.max(per_block * cfg.blocks as u64);
        }
    }
    let dram =
        (senders * cfg.blocks as u64 * block) as f64 / (8.0 * timing.dram_bank_bytes_per_cycle);
    let eject = (args.len() as u64 * cfg.blocks as u64 * (block + 64)) / timing.flit_bytes as u64;
    sender.max(dram.ceil() as u64).max(eject)
}

impl BroadcastSummary {
    pub(super) fn empty(cfg: &BroadcastConfig, plan: &BroadcastPlan, timing: &Timing) -> Self {
        Self {
            ok: true,
            jobs: cfg.jobs,
            blocks: cfg.blocks,
            broadcasts: plan.broadcasts(),
            received_bytes: 0,
            checked_bytes: 0,
            cycles: 0,
            micros: 0.0,
            bound_cycles: job_bound(cfg, &plan.decoded, timing) * cfg.jobs as u64,
            achieved_over_bound: 0.0,
            wait_cycles: [0; 2],
            timeouts: 0,
            mismatches: 0,
            giveups: Vec::new(),
            results: Vec::new(),
            violations: Vec::new(),
            dispatch: None,
        }
    }

    /// Adds job `job`'s report.
    pub(super) fn record(&mut self, job: u32, report: &Report) {
        self.checked_bytes += report.stats.iter().map(|(_, s)| s[2] as u64).sum::<u64>();
        self.timeouts += report.timeout as u32;
        self.mismatches += report.mismatch as u32;
        self.ok &= report.ok;
        self.giveups.extend(report.give_ups.iter().cloned());
        self.results.push(JobResult {
            job,
            ok: report.ok,
            timeout: report.timeout,
        });
    }

    /// Cycles since `start`, the simulator's violations, and the trace (with `extra` events).
    pub(super) fn close(
        &mut self,
        session: &mut Session,
        cfg: &BroadcastConfig,
        start: u64,
        timing: &Timing,
        extra: Vec<serde_json::Value>,
    ) -> Result<(), BroadcastError> {
        self.cycles = session.device().now() - start;
        self.micros = timing.micros(self.cycles);
        self.achieved_over_bound = if self.cycles == 0 {
            0.0
        } else {
            self.bound_cycles as f64 / self.cycles as f64
        };
        if let Some(sim) = session.device().simulator() {
            self.violations = sim.violations().iter().map(|v| v.to_string()).collect();
            self.ok &= self.violations.is_empty();
            if let (Some(path), Some(mut trace)) = (&cfg.trace, sim.trace_json()) {
                if let Some(events) = trace.get_mut("traceEvents").and_then(|e| e.as_array_mut()) {
                    events.extend(extra);
                }
                let text = serde_json::to_string(&trace)
                    .map_err(|e| BroadcastError::Trace(e.to_string()))?;
                std::fs::write(path, text)
                    .map_err(|e| BroadcastError::Trace(format!("{}: {e}", path.display())))?;
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for BroadcastSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "broadcast on the simulator: {} jobs of {} blocks; {} A broadcasts (rows, NoC0), {} W broadcasts (columns, NoC1) per job",
            self.jobs, self.blocks, self.broadcasts[0], self.broadcasts[1]
        )?;
        writeln!(f, "  received by multicast: {} bytes", self.received_bytes)?;
        writeln!(f, "  checked by compute:    {} bytes", self.checked_bytes)?;
        writeln!(
            f,
            "  simulated:             {} cycles = {:.1} us at 1350 MHz",
            self.cycles, self.micros
        )?;
        writeln!(
            f,
            "  resource bound:        {} cycles (achieved/bound {:.2})",
            self.bound_cycles, self.achieved_over_bound
        )?;
        writeln!(
            f,
            "  wait cycles:           A {}, W {}",
            self.wait_cycles[0], self.wait_cycles[1]
        )?;
        for v in &self.violations {
            writeln!(f, "  VIOLATION: {v}")?;
        }
        if let Some(d) = &self.dispatch {
            for line in d.to_string().lines() {
                writeln!(f, "  {line}")?;
            }
        }
        for g in &self.giveups {
            writeln!(
                f,
                "  give-up: core ({},{}) {} broadcast {} block {} ({})",
                g.core[0], g.core[1], g.place, g.broadcast, g.block, g.kernel
            )?;
        }
        let verdict = if self.ok {
            "ok: every byte checked"
        } else if self.timeouts > 0 {
            "TIMEOUT"
        } else {
            "DATA MISMATCH"
        };
        write!(
            f,
            "  result: {verdict} ({} timeouts, {} mismatches)",
            self.timeouts, self.mismatches
        )
    }
}
