//! Running the jobs: through the test feeder or through the dispatcher.

use std::sync::{Arc, Mutex, OnceLock};

use komorebi_sim::SimConfig;
use komorebi_sim::trace::TraceError;

use crate::dispatch::{
    Cx, DispatchConfig, DispatchError, Dispatcher, Finished, GroupId, GroupInfo, Outcome, Place,
    Plugin, PostHook, Ready, Refusal, SimTarget, SlotView, Target, trace_events,
};
use crate::host::backend::Backend;
use crate::host::device::DeviceError;
use crate::host::session::{CommandSpec, Report, Session, SessionError, Ticket};

use super::config::BroadcastConfig;
use super::error::BroadcastError;
use super::follow::{Followed, LogFollow};
use super::plan::BroadcastPlan;
use super::summary::{BroadcastSummary, ChipSummary};

/// What [`BroadcastPlan::run_job`] came to.
#[derive(Debug)]
pub struct JobRun {
    /// The job's report.
    pub report: Report,
    /// Whether its cores are quiet again (`false`: some core will never report, or on a card
    /// did not within one more budget, `Session::quiet_deadline`; no later command can start
    /// on them).
    pub quiet: bool,
    /// Job 0's faults that never fired, as `--fault` names them
    /// ([`BroadcastSummary::unfired_faults`]); none for a later job.
    pub unfired_faults: Vec<String>,
}

impl BroadcastPlan {
    /// Runs job `job` through the test feeder's steps (post, wait, report), with job 0's faults.
    /// A timed-out job is waited for until its cores are quiet again, as the dispatcher holds
    /// its tiles ([`JobRun::quiet`]).
    pub fn run_job(&self, session: &mut Session, job: u32) -> Result<JobRun, SessionError> {
        if job == 0 {
            self.arm(session);
        }
        self.write_job_data(session, job)?;
        let ticket = session.post(&self.faulty_spec(job))?;
        let mut unfired_faults = Vec::new();
        if job == 0 {
            unfired_faults = self.host_stops(session, &ticket)?;
        }
        session.wait(&[&ticket])?;
        let report = session.report(&ticket)?;
        if job == 0 {
            unfired_faults.extend(self.disarm(session));
        }
        let mut quiet = !report.timeout || session.is_reported(&ticket)?;
        if !quiet {
            let until = session.quiet_deadline(&[&ticket]);
            session.wait_any(&[&ticket], until)?;
            quiet = session.is_reported(&ticket)?;
        }
        Ok(JobRun {
            report,
            quiet,
            unfired_faults,
        })
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
    let wormhole = cfg.chip == crate::chip::ChipKind::Wormhole;
    SimConfig {
        wormhole: wormhole.then_some(cfg.row_harvest),
        timing: crate::chip::sim_timing(cfg.chip).with_kernel_costs(cfg.kernel_costs),
        harvest: cfg.harvest,
        fused_dram: cfg.fused_dram,
        seed: cfg.seed,
        adversarial: cfg.adversarial,
        trace: cfg.trace.is_some(),
        profile_cores: cfg.profile.is_some(),
        speed_up: cfg.speed_up.as_ref().map(|w| w.code.clone()),
        // Lines are kept for `--log` and for `--log-follow`, at the level the report shows.
        kernel_logs: if cfg.log.is_some() || cfg.log_follow.is_some() {
            crate::host::log::level_from_env()
        } else {
            log::LevelFilter::Off
        },
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

/// Runs the program through the test feeder and hands back the session too, for inspection.
pub fn run_session(
    cfg: &BroadcastConfig,
    progress: impl FnMut(u32),
) -> Result<(BroadcastSummary, Session), BroadcastError> {
    run_session_on(cfg, super::chips::backend(cfg, sim_config(cfg)), progress)
}

/// [`run_session`] on `backend` rather than the one `cfg.device` names: a backend the caller
/// made to share, such as a ttsim server another host then reads (`attach_ttsim`). It must be
/// the device `cfg.device` names; the report names that.
pub fn run_session_on(
    cfg: &BroadcastConfig,
    backend: Backend,
    mut progress: impl FnMut(u32),
) -> Result<(BroadcastSummary, Session), BroadcastError> {
    cfg.validate()?;
    if cfg.chips > 1 {
        return Err(super::error::flag(
            "--chips",
            format!(
                "{} with the test feeder: it runs one job at a time on one chip (allowed: --chips \
                 with the dispatcher, the default; --feeder with --chips 1)",
                cfg.chips
            ),
        ));
    }
    let sim = sim_config(cfg);
    let timing = sim.timing;
    let mut chip = ChipSummary::new(
        0,
        cfg.device.to_string(),
        cfg.device.in_process().then_some(sim.seed),
    );
    let mut session = super::records::open_session(backend)?;
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
    summary.laid_out_on = Some(plan.geometry().clone());
    let mut held = false;
    // The firmware's defmt tables, loaded once for the logs followed and read at the end.
    let tables = match cfg.log.is_some() || cfg.log_follow.is_some() {
        true => super::logs::log_tables(cfg)?,
        false => None,
    };
    let mut follow = cfg
        .log_follow
        .as_ref()
        .map(|sink| (sink, Followed::default()));
    for job in 0..cfg.jobs {
        if held {
            // As the dispatcher does: a job whose tiles are never free again is abandoned.
            summary.record_abandoned(job);
            progress(job);
            continue;
        }
        let JobRun {
            report,
            quiet,
            unfired_faults,
        } = plan.run_job(&mut session, job)?;
        held = !quiet;
        summary.unfired_faults.extend(unfired_faults);
        plan.account(&session, &mut summary)?;
        summary.record(job, 0, &report);
        chip.record(job, &report, false);
        if let Some((sink, followed)) = &mut follow {
            let from = followed.native_read();
            let (logs, next) =
                super::logs::kernel_logs_from(&mut session, cfg, tables.as_ref(), from)?;
            sink.hand(job, &followed.take(logs, next));
        }
        progress(job);
        trace_failed(&mut session, cfg)?;
    }
    summary.close(&mut session, cfg, start, Vec::new(), tables.as_ref())?;
    summary.write_log(cfg)?;
    chip.cycles = summary.cycles;
    chip.aiclk_mhz = summary.aiclk_mhz;
    summary.chips = vec![chip];
    Ok((summary, session))
}

/// The broadcast program as a dispatcher plugin: every job is one exclusive command on the
/// rectangle's group of a chip; the request handler accounts each job's report and the cores'
/// broadcast statistics (read while the job still holds its tiles), per chip.
///
/// On several chips the assigner places work near its data, as the VMS assigner does: job `j`'s
/// DRAM data lives on its home chip `j mod chips`, and a slot of a chip takes the lowest job of
/// that chip among its candidates; only when none is there (the chip would idle) does it take the
/// lowest job of another chip, writing that job's data to the slot's chip (a move).
struct BroadcastJobs<'a> {
    /// Per chip, its plan and its target.
    chips: &'a [(BroadcastPlan, SimTarget)],
    /// Which jobs and chips of the run these are.
    share: &'a Share,
    progress: &'a (dyn Fn(u32) + Sync),
    summary: BroadcastSummary,
    /// Per chip, what this worker saw of it.
    tallies: Vec<ChipSummary>,
    /// Every distinct error this worker met (on any of its chips), in order.
    errors: Vec<BroadcastError>,
    /// Per chip, the last job whose DRAM data this worker wrote there, and its region.
    written: Vec<Option<(u32, u32)>>,
    /// Per chip, the DRAM region of the job in flight there (several chips only).
    running: Vec<Option<u32>>,
    /// Commands in flight on the group of the slot last offered to the assigner.
    in_flight: usize,
    /// The last command made, for its chip and job: the dispatcher asks again for a job while
    /// its tiles are held, and making the command (every core's program, encoded) costs far
    /// more than a copy.
    spec: Option<(usize, u32, CommandSpec)>,
    /// `--log-follow` (one chip only): the sink, the run's flags and the firmware's defmt tables
    /// to read the logs with, and what every worker handed on so far.
    follow: Option<Follow<'a>>,
}

/// What `BroadcastJobs` needs to follow the logs (`--log-follow`).
#[derive(Clone, Copy)]
struct Follow<'a> {
    sink: &'a LogFollow,
    cfg: &'a BroadcastConfig,
    tables: &'a Option<Arc<crate::host::log::Tables>>,
    followed: &'a Mutex<Followed>,
}

impl BroadcastJobs<'_> {
    fn home(&self, job: u32) -> usize {
        self.share.home(job)
    }

    /// The DRAM region job `job` reads on chip `chip`. On a run of one chip the plan's ring,
    /// `job mod DRAM_RING`: the jobs run in order, so the next job's data never lands on the
    /// running one's. On several (a rank's one chip among them), a chip's jobs are not
    /// consecutive (and jobs move between chips), so
    /// the region is picked as the data is written: any but the one of the job in flight there.
    /// (A chip has one group and its commands are exclusive: at most one in flight, and a
    /// command made while none is in flight is posted.)
    fn region(&self, chip: usize, job: u32) -> u32 {
        let plan = &self.chips[chip].0;
        if !self.share.several() {
            return plan.region(job);
        }
        (0..plan.ring())
            .find(|&r| Some(r) != self.running[chip])
            .unwrap_or(0)
    }

    /// `error`, naming its chip when the run has several.
    fn fail(&mut self, chip: usize, error: BroadcastError) {
        let error = if self.share.several() {
            BroadcastError::Chip {
                chip: self.share.first_chip + chip as u32,
                device: self.tallies[chip].device.clone(),
                error: Box::new(error),
            }
        } else {
            error
        };
        if !self.errors.contains(&error) {
            self.errors.push(error);
        }
    }
}

impl Plugin for BroadcastJobs<'_> {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, finished: Finished<u32>, cx: &mut Cx<'_, u32, ()>) {
        let job = finished.work;
        let chip = finished.group.map_or(0, |g| cx.groups()[g.0 as usize].chip);
        let report = match finished.outcome {
            Outcome::Reported(r) | Outcome::TimedOut(r) => r,
            // A device lost under the command (hung, gone, ttsim stopped) is the session's
            // error, as the feeder reports it: the device cannot be used (exit 4).
            Outcome::Refused(Refusal::Device(
                e @ SessionError::Device(DeviceError { lost: true, .. }),
            )) => {
                self.fail(chip, BroadcastError::Session(e));
                return;
            }
            Outcome::Refused(e) => {
                self.fail(chip, BroadcastError::Dispatch(e.to_string()));
                return;
            }
            Outcome::Abandoned => {
                // Its tiles are held by a job that never finished: not run, as in the feeder.
                self.summary.record_abandoned(job);
                (self.progress)(job);
                return;
            }
        };
        let (plan, target) = &self.chips[chip];
        let plan = plan.clone();
        let mut summary = self.summary.clone();
        let accounted = target.with_session(move |s| {
            if job == 0 {
                summary.unfired_faults.extend(plan.disarm(s));
            }
            plan.account(s, &mut summary).map(|()| summary)
        });
        match accounted {
            Ok(Ok(s)) => self.summary = s,
            Ok(Err(e)) | Err(e) => self.fail(chip, e.into()),
        }
        self.summary
            .record(job, self.share.first_chip + chip as u32, &report);
        if let Some(f) = self.follow {
            let (cfg, tables) = (f.cfg.clone(), f.tables.clone());
            // Read and handed on under the lock: each job's lines after the last job's, and the
            // native lines from where the last read stopped.
            let mut followed = f.followed.lock().unwrap_or_else(|p| p.into_inner());
            let from = followed.native_read();
            let read = target.with_session(move |s| {
                super::logs::kernel_logs_from(s, &cfg, tables.as_deref(), from)
            });
            match read {
                Ok(Ok((logs, next))) => f.sink.hand(job, &followed.take(logs, next)),
                Ok(Err(e)) => self.fail(chip, e),
                Err(e) => self.fail(chip, e.into()),
            }
        }
        let moved = self.home(job) != chip;
        self.tallies[chip].record(job, &report, moved);
        (self.progress)(job);
    }

    fn assign(&mut self, slot: &SlotView<'_>, candidates: &[Ready<u32>]) -> Option<usize> {
        // Jobs in order, this chip's own first: the lowest job whose data lives here; else, if
        // the chip would idle (nothing in flight on it), the lowest of another chip.
        let job = |i: &usize| *candidates[*i].work();
        let chip = slot.group.chip;
        self.in_flight = slot.in_flight;
        (0..candidates.len())
            .filter(|i| self.home(job(i)) == chip)
            .min_by_key(job)
            .or_else(|| {
                (slot.in_flight == 0)
                    .then(|| (0..candidates.len()).min_by_key(job))
                    .flatten()
            })
    }

    fn command(&mut self, job: &u32, group: &GroupInfo) -> CommandSpec {
        // The job's data goes into its DRAM region on the device thread before the post (once:
        // the dispatcher asks again for a job whose tiles were still held).
        let (job, chip) = (*job, group.chip);
        let region = match self.written[chip] {
            Some((j, r)) if j == job => r,
            _ => {
                let region = self.region(chip, job);
                self.written[chip] = Some((job, region));
                let plan = self.chips[chip].0.clone();
                let written = self.chips[chip]
                    .1
                    .with_session(move |s| plan.write_job_data_in(s, job, region));
                if let Ok(Err(e)) | Err(e) = written {
                    self.fail(chip, e.into());
                }
                region
            }
        };
        if self.in_flight == 0 {
            self.running[chip] = Some(region);
        }
        match &self.spec {
            Some((c, j, spec)) if (*c, *j) == (chip, job) => spec.clone(),
            _ => {
                let spec = self.chips[chip].0.faulty_spec_in(job, region);
                self.spec.insert((chip, job, spec)).2.clone()
            }
        }
    }
}

/// Runs the program through the dispatcher: each chip's simulator (or device) on its own
/// thread, `dispatch`'s workers posting the jobs and placing them on chips; `progress(job)` is
/// called after each job. The summary carries the dispatcher's figures, each chip's, and the
/// trace (if asked for, on one chip) the dispatcher's per-command slices.
pub fn run_dispatched(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<BroadcastSummary, BroadcastError> {
    run_share(cfg, dispatch, &Share::whole(cfg), progress)
}

/// Which jobs and chips of a run one process takes: all of them, or one rank's share of a run
/// over several hosts (`--mpi`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Share {
    /// Its jobs, ascending.
    pub jobs: Vec<u32>,
    /// The run's index of its first chip (its chips are `first_chip..first_chip + cfg.chips`).
    pub first_chip: u32,
    /// Chips of the whole run.
    pub total_chips: u32,
}

impl Share {
    /// The whole run of `cfg` in one process.
    pub(super) fn whole(cfg: &BroadcastConfig) -> Self {
        Self {
            jobs: (0..cfg.jobs).collect(),
            first_chip: 0,
            total_chips: cfg.chips,
        }
    }

    /// Whether the run has more than one chip (so reports name chips).
    pub(super) fn several(&self) -> bool {
        self.total_chips > 1
    }

    /// The chip of this share job `job`'s data lives on (its home, chip `job mod
    /// total_chips` of the run), as an index into this share's chips: an index outside them
    /// for a job whose home is another share's (a share holds only its own chips' jobs).
    pub(super) fn home(&self, job: u32) -> usize {
        (job % self.total_chips.max(1))
            .checked_sub(self.first_chip)
            .map_or(usize::MAX, |c| c as usize)
    }
}

/// [`run_dispatched`] of `share`'s jobs on its chips (`cfg.chips` of them, from
/// `share.first_chip` on).
pub(super) fn run_share(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    share: &Share,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<BroadcastSummary, BroadcastError> {
    cfg.validate()?;
    cfg.chips_in_all(share.total_chips)?;
    let sim = sim_config(cfg);
    let timing = sim.timing;
    let devices = super::chips::chip_devices(cfg, &sim, share.first_chip)?;
    let several = share.several();
    let names: Vec<(String, Option<u64>)> =
        devices.iter().map(|d| (d.name.clone(), d.seed)).collect();
    let on_chip = |chip: usize, error: BroadcastError| {
        if several {
            BroadcastError::Chip {
                chip: share.first_chip + chip as u32,
                device: names[chip].0.clone(),
                error: Box::new(error),
            }
        } else {
            error
        }
    };
    // Each chip's grid is its device's (a card's harvest mask comes from its telemetry), so
    // its plan is made once its session is open. Job 0, which carries the faults, runs on
    // chip 0: the post hook there gets the plan then.
    let planned: Arc<OnceLock<BroadcastPlan>> = Arc::new(OnceLock::new());
    // Job 0's host stops that never fired, from the post hook (which acts on the device thread).
    let unfired_stops: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut chips: Vec<(BroadcastPlan, SimTarget)> = Vec::with_capacity(devices.len());
    // Each chip's logical grid, taken from the geometry its plan was made from.
    let mut grids = Vec::with_capacity(devices.len());
    for (chip, device) in devices.into_iter().enumerate() {
        let hook = (chip == 0).then(|| {
            let (for_hook, unfired) = (Arc::clone(&planned), Arc::clone(&unfired_stops));
            let mut first = true;
            Box::new(move |s: &mut Session, t: &Ticket| {
                // Job 0 is the first command posted: its host-stop faults act now. (A device
                // error here shows in the job's own report.)
                if std::mem::take(&mut first)
                    && let Some(Ok(never)) = for_hook.get().map(|p| p.host_stops(s, t))
                {
                    *unfired.lock().unwrap_or_else(|e| e.into_inner()) = never;
                }
            }) as PostHook
        });
        let backend = device.backend;
        let opened = (|| -> Result<_, BroadcastError> {
            let target = SimTarget::spawn(move || super::records::open_session(backend), hook)?;
            let geometry = target.with_session(|s| s.geometry().clone())?;
            let plan = BroadcastPlan::per_job(cfg, &geometry)?;
            let grid = geometry.full();
            if chip == 0 {
                plan.check_faults()?;
            }
            plan.check_programs()?;
            if chip == 0 {
                let _ = planned.set(plan.clone());
            }
            let (p1, cfg1) = (plan.clone(), cfg.clone());
            target.with_session(move |s| -> Result<(), BroadcastError> {
                if chip == 0 {
                    start_trace(s, &cfg1)?;
                }
                p1.prepare(s)?;
                if chip == 0 {
                    p1.arm(s);
                }
                Ok(())
            })??;
            Ok((plan, target, grid))
        })();
        let (plan, target, grid) = opened.map_err(|e| on_chip(chip, e))?;
        chips.push((plan, target));
        grids.push(grid);
    }
    let starts = chips
        .iter()
        .enumerate()
        .map(|(c, (_, t))| {
            t.with_session(|s| s.device().now())
                .map_err(|e| on_chip(c, e.into()))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    let bound = chips[0].0.job_bound(&timing);
    let empty = || BroadcastSummary {
        fused_dram: chips[0].0.fused_dram(),
        laid_out_on: Some(chips[0].0.geometry().clone()),
        ..BroadcastSummary::empty(
            cfg,
            chips[0].0.broadcasts(),
            bound.cycles,
            bound.binding.to_string(),
        )
    };
    let tallies = || {
        names
            .iter()
            .enumerate()
            .map(|(c, (name, seed))| {
                ChipSummary::new(share.first_chip + c as u32, name.clone(), *seed)
            })
            .collect::<Vec<_>>()
    };
    let targets: Vec<(&SimTarget, komorebi_hal::LogicalRect)> = chips
        .iter()
        .zip(&grids)
        .map(|((_, t), &grid)| (t, grid))
        .collect();
    let groups: Vec<(usize, komorebi_hal::LogicalRect)> =
        (0..chips.len()).map(|c| (c, cfg.rect)).collect();
    let mut d = Dispatcher::with_chips(&targets, &groups, dispatch.clone())
        .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    // One chip: every job on its group, in order. Several: each job near its home chip's
    // group (its owner's assigner sees it first; an idle chip's worker may take it), but job
    // 0, whose faults were armed on chip 0. The owners' queues are last in, first out: seeded
    // last job first, the lowest jobs are offered first.
    let jobs: Box<dyn Iterator<Item = u32>> = if several {
        Box::new(share.jobs.iter().rev().copied())
    } else {
        Box::new(share.jobs.iter().copied())
    };
    for job in jobs {
        let home = GroupId(share.home(job).min(chips.len() - 1) as u32);
        let place = if !several || (job == 0 && !cfg.faults.is_empty()) {
            Place::Group(home)
        } else {
            Place::Near(home)
        };
        d.seed(job, place)
            .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    }
    // The firmware's defmt tables, loaded once for every chip's logs, followed and at the end.
    let tables = match cfg.log.is_some() || cfg.log_follow.is_some() {
        true => super::logs::log_tables(cfg)?.map(Arc::new),
        false => None,
    };
    let followed = Mutex::new(Followed::default());
    let follow = cfg.log_follow.as_ref().map(|sink| Follow {
        sink,
        cfg,
        tables: &tables,
        followed: &followed,
    });
    let result = d
        .run(|_| BroadcastJobs {
            chips: &chips,
            share,
            progress,
            summary: empty(),
            tallies: tallies(),
            errors: Vec::new(),
            written: vec![None; chips.len()],
            running: vec![None; chips.len()],
            in_flight: 0,
            spec: None,
            follow,
        })
        .map_err(|e| match e {
            // A lost device is the device's error, as a post or a report that failed is (exit 4),
            // named by its chip's number in the whole run, as every chip's error is.
            DispatchError::DeviceLost { chip, reason } => {
                let message = DispatchError::DeviceLost { chip: None, reason }.to_string();
                let lost = BroadcastError::Session(SessionError::Device(DeviceError {
                    message,
                    lost: true,
                }));
                match chip {
                    Some(c) => on_chip(c, lost),
                    None => lost,
                }
            }
            e => BroadcastError::Dispatch(e.to_string()),
        })?;
    let mut summary = empty();
    let mut per_chip = tallies();
    let mut errors = Vec::new();
    for p in result.plugins {
        if !p.errors.is_empty() {
            errors.extend(p.errors);
            continue;
        }
        summary.add_counts(p.summary.into());
        for (all, seen) in per_chip.iter_mut().zip(&p.tallies) {
            all.merge(seen);
        }
    }
    if let Some(e) = BroadcastError::all_of(errors) {
        return Err(e);
    }
    summary.ok &= summary.results.len() == share.jobs.len();
    // The dispatcher's slices only when a trace is written: they take kilobytes per job.
    let extra = if cfg.trace.is_some() {
        trace_events(&result.times, chips[0].1.aiclk_mhz())
    } else {
        Vec::new()
    };
    // Each chip's clock from its own start; the run lasts as long as its longest chip. The
    // trace and the profile (one chip only) are closed on chip 0; every chip's logs are kept,
    // each naming its chip on a run of several.
    let mut extra = Some(extra);
    let mut violations = Vec::new();
    let mut run: Option<BroadcastSummary> = None;
    // Every chip is closed, whichever fails: a chip's error does not hide another's.
    let mut closing_errors = Vec::new();
    for (c, (_, target)) in chips.iter().enumerate() {
        let (cfg2, start, mut part) = (cfg.clone(), starts[c], summary.clone());
        let (extra, tables) = (extra.take().unwrap_or_default(), tables.clone());
        let closed = target
            .with_session(move |s| {
                part.close(s, &cfg2, start, extra, tables.as_deref())
                    .map(|()| part)
            })
            .map_err(BroadcastError::from)
            .and_then(|r| r)
            .map_err(|e| on_chip(c, e));
        let mut closed = match closed {
            Ok(closed) => closed,
            Err(e) => {
                closing_errors.push(e);
                continue;
            }
        };
        if several {
            for log in closed.log.iter_mut().flatten() {
                log.chip = Some(share.first_chip + c as u32);
            }
        }
        per_chip[c].cycles = closed.cycles;
        per_chip[c].aiclk_mhz = closed.aiclk_mhz;
        violations.extend(closed.violations.iter().map(|v| match several {
            true => format!("chip {}: {v}", share.first_chip as usize + c),
            false => v.clone(),
        }));
        match &mut run {
            // Chip 0's: its clock, and the trace and profile of a one-chip run.
            None => run = Some(closed),
            Some(run) => {
                run.cycles = run.cycles.max(closed.cycles);
                run.ok &= closed.ok;
                if let (Some(all), Some(more)) = (&mut run.log, closed.log) {
                    all.extend(more);
                }
            }
        }
    }
    if let Some(e) = BroadcastError::all_of(closing_errors) {
        return Err(e);
    }
    let mut summary = run.ok_or_else(|| BroadcastError::Dispatch("a run without chips".into()))?;
    summary.violations = violations;
    // As the feeder lists them: the host's stops, then the NoC drops.
    let stops = std::mem::take(&mut *unfired_stops.lock().unwrap_or_else(|e| e.into_inner()));
    summary.unfired_faults.splice(0..0, stops);
    summary.chips = per_chip;
    summary.order_by_job();
    summary.write_log(cfg)?;
    summary.set_micros();
    summary.set_efficiency();
    summary.dispatch = Some(result.summary);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use komorebi_hal::LogicalRect;

    /// A rank's share: one chip of four (chip 1), its jobs every fourth. Its jobs are not
    /// consecutive, so the one-chip DRAM ring (`job mod 4`) would put them all in one region
    /// and the next job's data on the running one's.
    #[test]
    fn a_share_of_one_chip_of_four_checks_every_byte_of_its_jobs() {
        let cfg = BroadcastConfig {
            rect: LogicalRect::new(0, 0, 3, 3),
            blocks: 4,
            pages: 2,
            jobs: 16,
            ..BroadcastConfig::default()
        };
        let share = Share {
            jobs: vec![1, 5, 9, 13],
            first_chip: 1,
            total_chips: 4,
        };
        let s = run_share(&cfg, &DispatchConfig::default(), &share, &|_| {}).unwrap();
        assert!(s.ok && s.mismatches == 0, "{s}");
        assert_eq!(
            s.results
                .iter()
                .map(|r| (r.job, r.chip))
                .collect::<Vec<_>>(),
            share.jobs.iter().map(|&j| (j, Some(1))).collect::<Vec<_>>()
        );
        assert_eq!(s.chips.len(), 1);
        let chip = &s.chips[0];
        assert_eq!((chip.chip, chip.jobs, chip.moved), (1, 4, 0));
        assert_eq!(chip.seed, Some(super::super::chips::chip_seed(0, 1)));
        // `--log` reads this host's chips: refused when the run has chips on other hosts.
        let logged = BroadcastConfig {
            log: Some("-".into()),
            ..cfg
        };
        match run_share(&logged, &DispatchConfig::default(), &share, &|_| {}) {
            Err(BroadcastError::Flag { flag, why }) => assert_eq!(
                (flag, why.as_str()),
                (
                    "--mpi",
                    "with --log: --log reads the chips of this host only, and the run has 4 \
                     chips on several hosts (allowed: --log on one host's chips, any --chips without --mpi or on one rank)"
                )
            ),
            other => panic!("{other:?}"),
        }
    }
}
