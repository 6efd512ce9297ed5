//! Measurement in the spirit of VMS's `MEAS__` probes: per-command timestamps, histograms of
//! queue wait, run time and handler time, and a Perfetto (Chrome JSON) trace of both.
//!
//! Host times are nanoseconds of the wall clock since the run started; device times are device
//! cycles (converted with the target's AICLK where a duration is printed).

use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{Value, json};

use crate::host::device::ClockKind;

/// One command's timestamps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CommandTimes {
    /// The command's id.
    pub id: u64,
    /// The group it ran on.
    pub group: Option<u32>,
    /// The worker that handled it.
    pub worker: usize,
    /// Whether it was posted by a worker that took it from another worker's deque (work
    /// stealing; a seed from the shared queue or a follow-up handed to its group's worker is not).
    pub stolen: bool,
    /// Host ns: made ready (seeded or submitted).
    pub queued: u64,
    /// Host ns: posted to the device.
    pub posted: Option<u64>,
    /// Device cycle: the first core took it.
    pub started: Option<u64>,
    /// Device cycle: the last core reported it.
    pub reported: Option<u64>,
    /// Host ns: a worker saw its outcome.
    pub noticed: u64,
    /// Host ns: its request handler returned.
    pub handled: u64,
    /// `reported`, `timed_out`, `refused` or `abandoned`.
    pub outcome: &'static str,
}

/// A distribution, in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Distribution {
    /// Samples.
    pub count: u64,
    /// Smallest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

/// An empty histogram of 3 significant digits that grows to the largest sample instead of
/// saturating at its initial range.
fn histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(3).expect("3 significant digits are within 0..=5");
    h.auto(true);
    h
}

impl Distribution {
    /// The distribution of `samples` (3 significant digits, as HdrHistogram keeps them).
    pub fn of(samples: impl IntoIterator<Item = u64>) -> Self {
        let mut h = histogram();
        for s in samples {
            // With auto-resize on, recording fails only past u64's range: keep the rest.
            let _ = h.record(s);
        }
        Self::from_histogram(&h)
    }

    fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            count: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::num::duration;
        write!(
            f,
            "n {} p50 {} p90 {} p99 {} max {}",
            self.count,
            duration(self.p50),
            duration(self.p90),
            duration(self.p99),
            duration(self.max)
        )
    }
}

/// One worker's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkerStats {
    /// Commands it posted.
    pub posted: u64,
    /// Commands whose outcome its request handler handled.
    pub handled: u64,
    /// Of those, commands it took from another worker's deque and posted.
    pub stolen: u64,
    /// Times it tried reserving tiles and found them held.
    pub blocked: u64,
    /// Times it slept.
    pub parks: u64,
    /// Times it let the device run.
    pub drives: u64,
}

/// The dispatcher's part of a run summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DispatchSummary {
    /// Worker threads.
    pub workers: usize,
    /// Scheduling slots per group.
    pub depth: usize,
    /// Commands handled.
    pub commands: u64,
    /// Of those: reported.
    pub reported: u64,
    /// Timed out.
    pub timed_out: u64,
    /// Refused.
    pub refused: u64,
    /// Abandoned.
    pub abandoned: u64,
    /// Commands posted by a worker that took them from another worker's deque.
    pub stolen: u64,
    /// Slots still held at the end by timed-out commands whose cores never reported.
    pub held_at_end: usize,
    /// Device publications dropped as stale or duplicate.
    pub dropped_publications: u64,
    /// Wall time of the run, ns.
    pub wall_ns: u64,
    /// Ready to posted.
    pub queue_wait: Distribution,
    /// First core took it to last core reported: device time in ns, or a count of
    /// [`device_clock`](Self::device_clock) when that is no time (ttsim's steps).
    pub run_time: Distribution,
    /// What the device's clock counts.
    pub device_clock: ClockKind,
    /// Posted to noticed by a worker.
    pub round_trip: Distribution,
    /// Request handler time.
    pub handler_time: Distribution,
    /// Per worker.
    pub per_worker: Vec<WorkerStats>,
}

/// One worker's commands, counted and recorded into histograms on its own thread (in parallel
/// with the others) and merged into the run's [`DispatchSummary`].
#[derive(Debug)]
pub(crate) struct Recorded {
    commands: u64,
    reported: u64,
    timed_out: u64,
    refused: u64,
    abandoned: u64,
    stolen: u64,
    queue_wait: Histogram<u64>,
    run_time: Histogram<u64>,
    round_trip: Histogram<u64>,
    handler_time: Histogram<u64>,
}

impl Recorded {
    /// Counts and records `times`; device cycles become nanoseconds at `aiclk_mhz`, or stay
    /// counts when the device clock is no time (`None`: ttsim's steps).
    pub(crate) fn of(times: &[CommandTimes], aiclk_mhz: Option<u32>) -> Self {
        Self::of_each(times, |_| aiclk_mhz)
    }

    /// [`Self::of`], each command's device cycles at its own chip's clock, `aiclk_mhz(t)`
    /// (chips of one run may run at different clocks).
    pub(crate) fn of_each(
        times: &[CommandTimes],
        aiclk_mhz: impl Fn(&CommandTimes) -> Option<u32>,
    ) -> Self {
        let mut r = Self {
            commands: times.len() as u64,
            reported: 0,
            timed_out: 0,
            refused: 0,
            abandoned: 0,
            stolen: 0,
            queue_wait: histogram(),
            run_time: histogram(),
            round_trip: histogram(),
            handler_time: histogram(),
        };
        let cycles_ns = |c: u64, t: &CommandTimes| match aiclk_mhz(t) {
            Some(mhz) => c.saturating_mul(1000) / mhz.max(1) as u64,
            None => c,
        };
        // With auto-resize on, recording fails only past u64's range: those are left out.
        for t in times {
            match t.outcome {
                "reported" => r.reported += 1,
                "timed_out" => r.timed_out += 1,
                "refused" => r.refused += 1,
                "abandoned" => r.abandoned += 1,
                _ => {}
            }
            r.stolen += t.stolen as u64;
            if let Some(p) = t.posted {
                let _ = r.queue_wait.record(p.saturating_sub(t.queued));
                let _ = r.round_trip.record(t.noticed.saturating_sub(p));
            }
            if let (Some(s), Some(e)) = (t.started, t.reported) {
                let _ = r.run_time.record(cycles_ns(e.saturating_sub(s), t));
            }
            let _ = r.handler_time.record(t.handled.saturating_sub(t.noticed));
        }
        r
    }

    /// Adds `other`'s counts and samples to these.
    fn merge(&mut self, other: &Self) {
        self.commands += other.commands;
        self.reported += other.reported;
        self.timed_out += other.timed_out;
        self.refused += other.refused;
        self.abandoned += other.abandoned;
        self.stolen += other.stolen;
        // Auto-resizing histograms of the same precision always add.
        let _ = self.queue_wait.add(&other.queue_wait);
        let _ = self.run_time.add(&other.run_time);
        let _ = self.round_trip.add(&other.round_trip);
        let _ = self.handler_time.add(&other.handler_time);
    }
}

impl DispatchSummary {
    /// The summary of the workers' `recorded` commands (the wall time and the end-of-run counts
    /// are the caller's to fill in).
    pub(crate) fn build(recorded: &[Recorded], per_worker: Vec<WorkerStats>, depth: usize) -> Self {
        let mut all = Recorded::of(&[], None);
        for r in recorded {
            all.merge(r);
        }
        Self {
            workers: per_worker.len(),
            depth,
            commands: all.commands,
            reported: all.reported,
            timed_out: all.timed_out,
            refused: all.refused,
            abandoned: all.abandoned,
            stolen: all.stolen,
            held_at_end: 0,
            dropped_publications: 0,
            wall_ns: 0,
            queue_wait: Distribution::from_histogram(&all.queue_wait),
            run_time: Distribution::from_histogram(&all.run_time),
            device_clock: ClockKind::default(),
            round_trip: Distribution::from_histogram(&all.round_trip),
            handler_time: Distribution::from_histogram(&all.handler_time),
            per_worker,
        }
    }
}

impl std::fmt::Display for DispatchSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::num::{count, duration};
        writeln!(
            f,
            "dispatcher: {}, {} per group; {} ({} reported, {} timed out, {} refused, {} abandoned), {} stolen",
            count(self.workers as u64, "worker", "workers"),
            count(self.depth as u64, "slot", "slots"),
            count(self.commands, "command", "commands"),
            self.reported,
            self.timed_out,
            self.refused,
            self.abandoned,
            self.stolen,
        )?;
        writeln!(
            f,
            "  host wall clock (the host's time, not the device's): {} for the run",
            duration(self.wall_ns)
        )?;
        writeln!(f, "    queue wait   {} (ready -> posted)", self.queue_wait)?;
        writeln!(
            f,
            "    round trip   {} (posted -> outcome seen)",
            self.round_trip
        )?;
        writeln!(f, "    handler time {}", self.handler_time)?;
        if self.device_clock.is_time() {
            writeln!(
                f,
                "  device time ({} as time at AICLK):",
                self.device_clock.unit()
            )?;
            write!(
                f,
                "    run time     {} (first core took it -> last core reported)",
                self.run_time
            )?;
        } else {
            let r = &self.run_time;
            writeln!(
                f,
                "  device clock ({}: not device time, ttsim is not timed):",
                self.device_clock.unit()
            )?;
            write!(
                f,
                "    run time     n {} p50 {} p90 {} p99 {} max {} steps (first core took it -> last core reported)",
                r.count, r.p50, r.p90, r.p99, r.max
            )?;
        }
        if self.held_at_end > 0 {
            write!(
                f,
                "\n  {} still held by timed-out commands whose cores never reported",
                count(self.held_at_end as u64, "slot", "slots")
            )?;
        }
        Ok(())
    }
}

/// Perfetto process id of the host's slices.
pub const TRACE_HOST_PID: u32 = 1000;
/// Perfetto process id of the device-side run slices.
pub const TRACE_DEVICE_PID: u32 = 1001;

/// Trace events (Chrome JSON, as Perfetto reads it) of `times`: per worker, each command's
/// queue wait, time in flight and handler on the host's wall clock; per group, each command's
/// run on the device clock (`aiclk_mhz`), which lines up with the simulator's own trace.
pub fn trace_events(times: &[CommandTimes], aiclk_mhz: u32) -> Vec<Value> {
    let us = |ns: u64| ns as f64 / 1000.0;
    let dev_us = |c: u64| c as f64 / aiclk_mhz.max(1) as f64;
    let mut out = vec![
        json!({"ph": "M", "name": "process_name", "pid": TRACE_HOST_PID, "tid": 0,
               "args": {"name": "HOST WALL CLOCK (not device time): dispatcher workers, us since the run began"}}),
        json!({"ph": "M", "name": "process_sort_index", "pid": TRACE_HOST_PID, "tid": 0,
               "args": {"sort_index": TRACE_HOST_PID}}),
        json!({"ph": "M", "name": "process_name", "pid": TRACE_DEVICE_PID, "tid": 0,
               "args": {"name": "dispatcher commands per group (device time)"}}),
        json!({"ph": "M", "name": "process_sort_index", "pid": TRACE_DEVICE_PID, "tid": 0,
               "args": {"sort_index": TRACE_DEVICE_PID}}),
    ];
    let mut named = std::collections::BTreeSet::new();
    for t in times {
        if named.insert((TRACE_HOST_PID, t.worker as u64)) {
            out.push(json!({"ph": "M", "name": "thread_name", "pid": TRACE_HOST_PID,
                "tid": t.worker, "args": {"name": format!("worker {} (host wall clock)", t.worker)}}));
        }
        if let (Some(g), Some(_)) = (t.group, t.started)
            && named.insert((TRACE_DEVICE_PID, g as u64))
        {
            out.push(
                json!({"ph": "M", "name": "thread_name", "pid": TRACE_DEVICE_PID,
                    "tid": g, "args": {"name": format!("group {g} (device time)")}}),
            );
        }
    }
    let slice = |name: &str, pid: u32, tid: u64, ts: f64, dur: f64, t: &CommandTimes| {
        json!({"ph": "X", "name": name, "cat": "dispatch", "pid": pid, "tid": tid,
               "ts": ts, "dur": dur.max(0.0),
               "args": {"id": t.id, "group": t.group, "outcome": t.outcome, "stolen": t.stolen}})
    };
    for t in times {
        let w = t.worker as u64;
        if let Some(p) = t.posted {
            out.push(slice(
                "queued",
                TRACE_HOST_PID,
                w,
                us(t.queued),
                us(p.saturating_sub(t.queued)),
                t,
            ));
            out.push(slice(
                "in flight",
                TRACE_HOST_PID,
                w,
                us(p),
                us(t.noticed.saturating_sub(p)),
                t,
            ));
        }
        out.push(slice(
            "handler",
            TRACE_HOST_PID,
            w,
            us(t.noticed),
            us(t.handled.saturating_sub(t.noticed)),
            t,
        ));
        if let (Some(s), Some(r), Some(g)) = (t.started, t.reported, t.group) {
            out.push(slice(
                "run",
                TRACE_DEVICE_PID,
                g as u64,
                dev_us(s),
                dev_us(r.saturating_sub(s)),
                t,
            ));
        }
    }
    out
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn distribution_percentiles_of_known_samples() {
        let d = Distribution::of(1..=1000u64);
        assert_eq!((d.count, d.min, d.max), (1000, 1, 1000));
        assert_eq!(d.p50, 500);
        assert_eq!(d.p99, 990);
        assert!((d.mean - 500.5).abs() < 0.5);
        assert_eq!(
            Distribution::of(std::iter::empty()),
            Distribution::default()
        );
    }

    #[test]
    fn workers_recorded_apart_sum_to_the_run() {
        let times: Vec<CommandTimes> = (0..1000u64)
            .map(|i| CommandTimes {
                id: i,
                stolen: i % 3 == 0,
                queued: i,
                posted: (i % 10 != 0).then_some(i * 2),
                started: Some(100),
                reported: Some(100 + 1350 * (i % 7)),
                noticed: i * 3,
                handled: i * 3 + i % 5,
                outcome: if i % 4 == 0 { "timed_out" } else { "reported" },
                ..CommandTimes::default()
            })
            .collect();
        let (a, b) = times.split_at(377);
        let apart = DispatchSummary::build(
            &[Recorded::of(a, Some(1350)), Recorded::of(b, Some(1350))],
            Vec::new(),
            2,
        );
        let whole = DispatchSummary::build(&[Recorded::of(&times, Some(1350))], Vec::new(), 2);
        assert_eq!(apart, whole);
        assert_eq!(
            (whole.commands, whole.reported, whole.timed_out),
            (1000, 750, 250)
        );
        assert_eq!(whole.stolen, 334);
        assert_eq!(whole.queue_wait.count, 900);
        // 1350 cycles at 1350 MHz is 1 us: run times are 0..=6 us (to 3 significant digits).
        assert_eq!(whole.run_time.min, 0);
        assert!(
            (5994..=6006).contains(&whole.run_time.max),
            "{}",
            whole.run_time.max
        );
        assert_eq!(whole.handler_time.max, 4);
    }
}
