//! Running the jobs: through the test feeder or through the dispatcher.

use std::sync::{Arc, OnceLock};

use komorebi_sim::SimConfig;
use komorebi_sim::trace::TraceError;

use crate::dispatch::{
    Cx, DispatchConfig, Dispatcher, Finished, GroupId, GroupInfo, Outcome, Place, Plugin, PostHook,
    Ready, Refusal, SimTarget, SlotView, Target, trace_events,
};
use crate::host::device::DeviceError;
use crate::host::session::{Backend, CommandSpec, Report, Session, SessionError, Ticket};

use super::config::{BroadcastConfig, DeviceChoice};
use super::error::BroadcastError;
use super::plan::BroadcastPlan;
use super::summary::BroadcastSummary;

impl BroadcastPlan {
    /// Runs job `job` through the test feeder's steps (post, wait, report), with job 0's faults.
    /// A timed-out job is waited for until its cores are quiet again, as the dispatcher holds
    /// its tiles; the flag says whether they are (`false`: some core will never report, and no
    /// later command can start on it).
    pub fn run_job(&self, session: &mut Session, job: u32) -> Result<(Report, bool), SessionError> {
        if job == 0 {
            self.arm(session);
        }
        self.write_job_data(session, job)?;
        let ticket = session.post(&self.faulty_spec(job))?;
        if job == 0 {
            self.host_stops(session, &ticket)?;
        }
        session.wait(&[&ticket]);
        let report = session.report(&ticket)?;
        if job == 0 {
            if let Some(sim) = session.device().simulator() {
                sim.clear_faults();
            }
        }
        let mut quiet = !report.timeout || session.is_reported(&ticket)?;
        if !quiet {
            session.wait_any(&[&ticket], u64::MAX);
            quiet = session.is_reported(&ticket)?;
        }
        Ok((report, quiet))
    }
}

/// Runs the program through the test feeder (one job at a time, deterministic);
/// `progress(job)` is called after each job.
pub fn run(
    cfg: &BroadcastConfig,
    progress: impl FnMut(u32),
) -> Result<BroadcastSummary, BroadcastError> {
    run_session(cfg, progress).map(|(summary, _)| summary)
}

pub(super) fn sim_config(cfg: &BroadcastConfig) -> SimConfig {
    SimConfig {
        harvest: cfg.harvest,
        fused_dram: cfg.fused_dram,
        seed: cfg.seed,
        adversarial: cfg.adversarial,
        trace: cfg.trace.is_some(),
        profile_cores: cfg.profile.is_some(),
        kernel_logs: cfg.log.is_some(),
        ..SimConfig::default()
    }
}

/// Starts writing the simulator's trace into `cfg.trace` (nothing without `--trace`, or on a
/// card): from here every event goes to the file as it happens, and what the simulator held
/// since it was made goes first. The file is closed by `BroadcastSummary::close`, or when the
/// simulator is dropped (a run that ends in an error), so it is valid JSON either way.
pub(super) fn start_trace(
    session: &mut Session,
    cfg: &BroadcastConfig,
) -> Result<(), BroadcastError> {
    let (Some(path), Some(sim)) = (&cfg.trace, session.device().simulator()) else {
        return Ok(());
    };
    let failed = |error| BroadcastError::Trace {
        path: path.clone(),
        error,
    };
    let file = std::fs::File::create(path).map_err(|e| failed(TraceError::io(&e, 0)))?;
    sim.trace_to(file).map_err(failed)
}

/// A trace whose writing failed (disk full) as the run's error, so a long run stops at the
/// next job rather than at its end.
fn trace_failed(session: &mut Session, cfg: &BroadcastConfig) -> Result<(), BroadcastError> {
    let failed = session.device().simulator().and_then(|s| s.trace_error());
    match (failed, &cfg.trace) {
        (Some(error), Some(path)) => Err(BroadcastError::Trace {
            path: path.clone(),
            error,
        }),
        _ => Ok(()),
    }
}

/// The backend `cfg.device` names, simulating `sim` where it simulates.
pub(super) fn backend(cfg: &BroadcastConfig, sim: SimConfig) -> Backend {
    match &cfg.device {
        DeviceChoice::Sim => Backend::Simulator(sim),
        DeviceChoice::PcieSim => Backend::pcie_sim(sim)
            .with_firmware(cfg.firmware.clone())
            .with_exec(cfg.exec),
        DeviceChoice::Ttsim { library, chip } => Backend::Ttsim {
            library: library.clone(),
            chip: *chip,
            firmware: cfg.firmware.clone(),
        },
        DeviceChoice::Card(path) => Backend::Card {
            path: path.clone(),
            firmware: cfg.firmware.clone(),
        },
    }
}

/// Runs the program through the test feeder and hands back the session too, for inspection.
pub fn run_session(
    cfg: &BroadcastConfig,
    mut progress: impl FnMut(u32),
) -> Result<(BroadcastSummary, Session), BroadcastError> {
    cfg.validate()?;
    let sim = sim_config(cfg);
    let timing = sim.timing;
    let mut session = super::records::open_session(backend(cfg, sim))?;
    let plan = BroadcastPlan::per_job(cfg, session.geometry())?;
    plan.check_faults()?;
    plan.check_programs()?;
    start_trace(&mut session, cfg)?;
    plan.prepare(&mut session)?;
    let start = session.device().now();
    let bound = plan.job_bound(&timing);
    let mut summary = BroadcastSummary::empty(
        cfg,
        plan.broadcasts(),
        bound.cycles,
        bound.binding.to_string(),
    );
    summary.fused_dram = plan.fused_dram();
    let mut held = false;
    for job in 0..cfg.jobs {
        if held {
            // As the dispatcher does: a job whose tiles are never free again is abandoned.
            summary.record_abandoned(job);
            progress(job);
            continue;
        }
        let (report, quiet) = plan.run_job(&mut session, job)?;
        held = !quiet;
        plan.account(&session, &mut summary)?;
        summary.record(job, &report);
        progress(job);
        trace_failed(&mut session, cfg)?;
    }
    summary.close(&mut session, cfg, start, Vec::new())?;
    Ok((summary, session))
}

/// The broadcast program as a dispatcher plugin: every job is one exclusive command on the
/// rectangle's group, in job order; the request handler accounts each job's report and the
/// cores' broadcast statistics (read while the job still holds its tiles).
struct BroadcastJobs<'a> {
    plan: &'a BroadcastPlan,
    target: &'a SimTarget,
    progress: &'a (dyn Fn(u32) + Sync),
    summary: BroadcastSummary,
    error: Option<BroadcastError>,
    /// The last job whose DRAM data this worker wrote.
    written: Option<u32>,
    /// The last job's command: the dispatcher asks again for a job while its tiles are held,
    /// and making the command (every core's program, encoded) costs far more than a copy.
    spec: Option<(u32, CommandSpec)>,
}

impl Plugin for BroadcastJobs<'_> {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, finished: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {
        let job = finished.work;
        let report = match finished.outcome {
            Outcome::Reported(r) | Outcome::TimedOut(r) => r,
            // A device lost under the command (hung, gone, ttsim stopped) is the session's
            // error, as the feeder reports it: the device cannot be used (exit 4).
            Outcome::Refused(Refusal::Device(
                e @ SessionError::Device(DeviceError { lost: true, .. }),
            )) => {
                self.error.get_or_insert(BroadcastError::Session(e));
                return;
            }
            Outcome::Refused(e) => {
                self.error
                    .get_or_insert(BroadcastError::Dispatch(e.to_string()));
                return;
            }
            Outcome::Abandoned => {
                // Its tiles are held by a job that never finished: not run, as in the feeder.
                self.summary.record_abandoned(job);
                (self.progress)(job);
                return;
            }
        };
        let plan = self.plan.clone();
        let mut summary = self.summary.clone();
        let accounted = self.target.with_session(move |s| {
            if job == 0 {
                if let Some(sim) = s.device().simulator() {
                    sim.clear_faults();
                }
            }
            plan.account(s, &mut summary).map(|()| summary)
        });
        match accounted {
            Ok(Ok(s)) => self.summary = s,
            Ok(Err(e)) | Err(e) => {
                self.error.get_or_insert(e.into());
            }
        }
        self.summary.record(job, &report);
        (self.progress)(job);
    }

    fn assign(&mut self, _slot: &SlotView<'_>, candidates: &[Ready<u32>]) -> Option<usize> {
        // Jobs in order: the lowest job number among the candidates.
        (0..candidates.len()).min_by_key(|&i| *candidates[i].work())
    }

    fn command(&mut self, job: &u32, _group: &GroupInfo) -> CommandSpec {
        // The job's data goes into its DRAM region on the device thread before the post (once:
        // the dispatcher asks again for a job whose tiles were still held).
        let job = *job;
        if self.written != Some(job) {
            self.written = Some(job);
            let plan = self.plan.clone();
            let written = self
                .target
                .with_session(move |s| plan.write_job_data(s, job));
            if let Ok(Err(e)) | Err(e) = written {
                self.error.get_or_insert(e.into());
            }
        }
        match &self.spec {
            Some((j, spec)) if *j == job => spec.clone(),
            _ => self
                .spec
                .insert((job, self.plan.faulty_spec(job)))
                .1
                .clone(),
        }
    }
}

/// Runs the program through the dispatcher: the simulator on its own thread, `dispatch`'s
/// workers posting the jobs; `progress(job)` is called after each job. The summary carries the
/// dispatcher's figures, and the trace (if asked for) its per-command slices.
pub fn run_dispatched(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<BroadcastSummary, BroadcastError> {
    cfg.validate()?;
    let sim = sim_config(cfg);
    let timing = sim.timing;
    // The grid is the device's (a card's harvest mask comes from its telemetry), so the plan
    // is made once the session is open; the post hook gets it then.
    let planned: Arc<OnceLock<BroadcastPlan>> = Arc::new(OnceLock::new());
    let for_hook = Arc::clone(&planned);
    let mut first = true;
    let hook: PostHook = Box::new(move |s: &mut Session, t: &Ticket| {
        // Job 0 is the first command posted: its host-stop faults act now.
        if std::mem::take(&mut first) {
            if let Some(p) = for_hook.get() {
                let _ = p.host_stops(s, t);
            }
        }
    });
    let backend = backend(cfg, sim);
    let target = SimTarget::spawn(move || super::records::open_session(backend), Some(hook))?;
    let geometry = target.with_session(|s| s.geometry().clone())?;
    let plan = BroadcastPlan::per_job(cfg, &geometry)?;
    plan.check_faults()?;
    plan.check_programs()?;
    let _ = planned.set(plan.clone());
    let (p1, cfg1) = (plan.clone(), cfg.clone());
    target.with_session(move |s| -> Result<(), BroadcastError> {
        start_trace(s, &cfg1)?;
        p1.prepare(s)?;
        p1.arm(s);
        Ok(())
    })??;
    let start = target.with_session(|s| s.device().now())?;
    let bound = plan.job_bound(&timing);
    let empty = || BroadcastSummary {
        fused_dram: plan.fused_dram(),
        ..BroadcastSummary::empty(
            cfg,
            plan.broadcasts(),
            bound.cycles,
            bound.binding.to_string(),
        )
    };
    let mut d = Dispatcher::new(&target, geometry.full(), &[cfg.rect], dispatch.clone())
        .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    for job in 0..cfg.jobs {
        d.seed(job, Place::Group(GroupId(0)))
            .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    }
    let result = d
        .run(|_| BroadcastJobs {
            plan: &plan,
            target: &target,
            progress,
            summary: empty(),
            error: None,
            written: None,
            spec: None,
        })
        .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    let mut summary = empty();
    for p in result.plugins {
        if let Some(e) = p.error {
            return Err(e);
        }
        let s = p.summary;
        summary.received_bytes += s.received_bytes;
        summary.checked_bytes += s.checked_bytes;
        summary.wait_cycles[0] += s.wait_cycles[0];
        summary.wait_cycles[1] += s.wait_cycles[1];
        summary.timeouts += s.timeouts;
        summary.abandoned += s.abandoned;
        summary.mismatches += s.mismatches;
        summary.ok &= s.ok;
        summary.giveups.extend(s.giveups);
        summary.results.extend(s.results);
    }
    summary.results.sort_by_key(|r| r.job);
    summary.ok &= summary.results.len() == cfg.jobs as usize;
    // The dispatcher's slices only when a trace is written: they take kilobytes per job.
    let extra = if cfg.trace.is_some() {
        trace_events(&result.times, target.aiclk_mhz())
    } else {
        Vec::new()
    };
    let cfg2 = cfg.clone();
    let closed =
        target.with_session(move |s| summary.close(s, &cfg2, start, extra).map(|()| summary))?;
    let mut summary = closed?;
    summary.dispatch = Some(result.summary);
    Ok(summary)
}
