//! What a run came to: counts, the resource bound, the text summary.

use komorebi_sim::Timing;
use serde::Serialize;

use crate::dispatch::DispatchSummary;
use crate::host::session::{CoreGiveUp, Report, Session};

use super::config::BroadcastConfig;
use super::error::BroadcastError;

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
    /// The device it ran on: `sim`, `pcie-sim` or a card's device node.
    pub device: String,
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

impl BroadcastSummary {
    pub(super) fn empty(cfg: &BroadcastConfig, broadcasts: [usize; 2], job_bound: u64) -> Self {
        Self {
            device: cfg.device.to_string(),
            ok: true,
            jobs: cfg.jobs,
            blocks: cfg.blocks,
            broadcasts,
            received_bytes: 0,
            checked_bytes: 0,
            cycles: 0,
            micros: 0.0,
            bound_cycles: job_bound * cfg.jobs as u64,
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
            "broadcast on {}: {} jobs of {} blocks; {} A broadcasts (rows, NoC0), {} W broadcasts (columns, NoC1) per job",
            match self.device.as_str() {
                "sim" => "the simulator".to_string(),
                "pcie-sim" => "the simulator as a PCIe card".to_string(),
                card => card.to_string(),
            },
            self.jobs,
            self.blocks,
            self.broadcasts[0],
            self.broadcasts[1]
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
