//! The rows run (on up to `--threads` threads, each run on its own simulator), the report, its
//! table and its chart.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::Serialize;

use crate::app::broadcast::{self, BroadcastSummary, Check, Protocol};
use crate::cli::AlongFlag;
use crate::host::backend::Exec;
use crate::host::device::ClockKind;

use super::error::BroadcastBenchError;
use super::plan::{BroadcastBench, RowSpec, Runner};
use super::plot::{Chart, Series};

impl BroadcastBench {
    /// Runs every row, each on a fresh simulator (or device) the way `komorebi broadcast` runs
    /// with the same flags, up to `--threads` rows at once; `progress()` is called as each row
    /// finishes. The rows are reported in [`Self::rows`]' order whatever order they finish in.
    ///
    /// A row that ran and failed (a timeout, a give-up, a mismatch) is kept in the report with
    /// `ok: false`; a run that could not complete at all stops the bench: no further row starts,
    /// and the first such error in row order is returned.
    pub fn run(
        &self,
        progress: &(dyn Fn() + Sync),
    ) -> Result<BroadcastBenchReport, BroadcastBenchError> {
        type Slot = Option<Result<RowRun, BroadcastBenchError>>;
        let n = self.rows.len();
        let results: Mutex<Vec<Slot>> = Mutex::new((0..n).map(|_| None).collect());
        let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
        std::thread::scope(|scope| {
            for _ in 0..self.threads.clamp(1, n.max(1)) {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(row) = self.rows.get(i) else {
                            break;
                        };
                        let result = self.run_row(row);
                        if result.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                        progress();
                    }
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        // Rows are handed out in order and every row handed out runs to its end, so every row
        // before a failed one has its result.
        if let Some(e) = results.iter().flatten().find_map(|r| r.as_ref().err()) {
            return Err(e.clone());
        }
        let rows = self
            .rows
            .iter()
            .zip(results.into_iter().flatten().flatten())
            .map(|(spec, (summary, native))| {
                let wait_limit = self.config(spec).run_wait_limit();
                BenchRow::new(spec, wait_limit, &summary, native.as_ref())
            })
            .collect();
        Ok(BroadcastBenchReport::new(self, rows))
    }

    /// One row's run, and with [`Self::beside_native`] the same row on the native kernels.
    fn run_row(&self, row: &RowSpec) -> Result<RowRun, BroadcastBenchError> {
        let cfg = self.config(row);
        let run = |cfg: &broadcast::BroadcastConfig| {
            let ran = match &self.runner {
                Runner::Feeder => broadcast::run(cfg, |_| {}),
                Runner::Dispatcher(dispatch) => broadcast::run_dispatched(cfg, dispatch, &|_| {}),
            };
            ran.map_err(|e| BroadcastBenchError::of_run(row.protocol, row.window, row.pages, e))
        };
        let summary = run(&cfg)?;
        let native = if self.beside_native() {
            Some(run(&broadcast::BroadcastConfig {
                exec: Exec::Native,
                firmware: None,
                ..cfg
            })?)
        } else {
            None
        };
        Ok((summary, native))
    }
}

/// A row's run, and the same row on the native kernels when the bench compares with them.
type RowRun = (BroadcastSummary, Option<BroadcastSummary>);

/// One row of the report: one run of the shape with one protocol, window and pages.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchRow {
    /// The protocol.
    pub protocol: Protocol,
    /// The window (buffer slots).
    pub window: u8,
    /// Pages per block.
    pub pages: u16,
    /// Device cycles any single wait of the row's run could last: the bench's `wait_limit`, or
    /// when that is `null` the row's shape's own.
    pub wait_limit: u64,
    /// Simulated cycles of all jobs (on `pcie-sim` a multiple of the host's 1,350-cycle polls).
    pub cycles: u64,
    /// The resource bound of all jobs, in cycles.
    pub bound_cycles: u64,
    /// The resource that binds.
    pub binding: String,
    /// `bound_cycles / cycles`; `null` unless the run succeeded (with `native_cycles`, the
    /// native run too).
    pub efficiency: Option<f64>,
    /// On a komorebi row: the handshake row's cycles / this row's cycles at the same window and
    /// pages (how many times faster komorebi is), when that row exists and both succeeded;
    /// `null` otherwise, on every handshake row, and on ttsim (its steps are no device time).
    pub speedup: Option<f64>,
    /// With `--exec firmware` on `pcie-sim`: the same row's cycles on the native kernels
    /// (left out of the JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_cycles: Option<u64>,
    /// With `native_cycles`, when both runs succeeded: `cycles / native_cycles`, how many times
    /// the native kernels' cycles the firmware took (left out of the JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware_ratio: Option<f64>,
    /// With `native_cycles`, when both runs succeeded: the native run's own efficiency (its
    /// bound prices compute as the native kernels are charged, the firmware's as a core that
    /// runs instructions: the two bounds differ with `--check full`; left out of the JSON
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_efficiency: Option<f64>,
    /// The run succeeded (its exit code is 0; with `native_cycles`, the native run too).
    pub ok: bool,
    /// The exit code `komorebi broadcast` would give for this run: 0 ok, 1 mismatch or
    /// give-up, 3 timeout.
    pub exit_code: u8,
}

impl BenchRow {
    /// The row of `spec` whose run, with waits of at most `wait_limit` cycles, came to
    /// `summary`, and `native` the same row on the native kernels if it ran (no speedup yet:
    /// that needs the other rows, [`BroadcastBenchReport::new`]).
    pub fn new(
        spec: &RowSpec,
        wait_limit: u64,
        summary: &BroadcastSummary,
        native: Option<&BroadcastSummary>,
    ) -> Self {
        let exit_code = summary
            .exit_code()
            .max(native.map_or(0, BroadcastSummary::exit_code));
        let native_cycles = native.map(|n| n.cycles);
        let ok = exit_code == 0;
        Self {
            protocol: spec.protocol,
            window: spec.window,
            pages: spec.pages,
            wait_limit,
            cycles: summary.cycles,
            bound_cycles: summary.bound_cycles,
            binding: summary.binding.clone(),
            // A row whose native run failed has failed too: neither figure stands for it.
            efficiency: summary.efficiency.filter(|_| ok),
            speedup: None,
            native_cycles,
            firmware_ratio: native_cycles
                .filter(|&n| n > 0 && ok)
                .map(|n| summary.cycles as f64 / n as f64),
            native_efficiency: native.and_then(|n| n.efficiency).filter(|_| ok),
            ok,
            exit_code,
        }
    }
}

/// What `komorebi bench broadcast` prints: the shape, then the rows (the JSON object; the
/// text is a table of the rows and the mean efficiency of each protocol).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BroadcastBenchReport {
    /// Always `broadcast`.
    pub bench: &'static str,
    /// The rectangle, `X0,Y0,COLUMNS,ROWS`.
    pub rect: String,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Bytes per page.
    pub page_size: u32,
    /// Jobs of every run.
    pub jobs: u32,
    /// Which broadcasts each job carries: `row`, `column` or `both`.
    pub along: &'static str,
    /// What compute does with the words it receives: `none` (the bench's default) or `full`.
    pub check: &'static str,
    /// The chip: `blackhole` or `wormhole`.
    pub chip: &'static str,
    /// The simulated chip's harvest mask: a Blackhole's die-order columns, a Wormhole's rows
    /// (left out of the JSON on ttsim or a card, whose mask is their own: `komorebi devices`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harvest: Option<u16>,
    /// The simulated chip's fused DRAM bank (left out of the JSON when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
    /// The simulation's seed.
    pub seed: u64,
    /// The adversary reordered what the hardware does not order.
    pub adversarial: bool,
    /// Device cycles any single wait may last (`--wait-limit`); `null`: each row's shape's own
    /// (`BroadcastConfig::shape_wait_limit`, as its window and pages give it), which the row's
    /// `wait_limit` names.
    pub wait_limit: Option<u64>,
    /// The device: `sim`, `pcie-sim` or a card's device node.
    pub device: String,
    /// What the rows' `cycles` count (as `komorebi broadcast`'s `clock`): `simulated`, `card`,
    /// or `ttsim-steps`, which are no device time (no row then has an efficiency).
    pub clock: ClockKind,
    /// What the cores ran: `native` or `firmware`.
    pub exec: &'static str,
    /// What the simulator charged the native kernels per call (`--kernel-costs`): `tt-metal`
    /// or `firmware` (with `exec` `firmware`: the native runs beside the firmware's).
    pub kernel_costs: komorebi_sim::KernelCosts,
    /// How each run ran its jobs: `dispatcher` or `feeder`.
    pub runner: &'static str,
    /// Dispatcher worker threads of each run (0 with the feeder).
    pub workers: usize,
    /// The rows: protocols, then windows, then pages, in the order the lists give them.
    pub rows: Vec<BenchRow>,
}

impl BroadcastBenchReport {
    /// The report of `bench` with `rows` (in `bench`'s row order), every komorebi row's
    /// speedup filled in where the rows count device time.
    pub fn new(bench: &BroadcastBench, mut rows: Vec<BenchRow>) -> Self {
        let shape = &bench.shape;
        // ttsim's clock steps are no device time: no speedup from them, as no efficiency.
        if shape.device.clock_kind().is_time() {
            set_speedups(&mut rows);
        }
        let (runner, workers) = match &bench.runner {
            Runner::Dispatcher(d) => ("dispatcher", d.workers),
            Runner::Feeder => ("feeder", 0),
        };
        Self {
            bench: "broadcast",
            rect: shape.rect.to_string(),
            blocks: shape.blocks,
            page_size: shape.page_size,
            jobs: shape.jobs,
            along: match bench.along {
                AlongFlag::Row => "row",
                AlongFlag::Column => "column",
                AlongFlag::Both => "both",
            },
            check: match shape.check {
                Check::Full => "full",
                Check::None => "none",
            },
            chip: crate::chip::chip_flag(shape.chip),
            harvest: shape.device.in_process().then(|| shape.harvest_mask()),
            fused_dram: shape.fused_dram,
            seed: shape.seed,
            adversarial: shape.adversarial,
            wait_limit: shape.wait_limit,
            device: shape.device.to_string(),
            // Every row runs on the device of the shape, so on its clock.
            clock: shape.device.clock_kind(),
            exec: match shape.exec {
                Exec::Native => "native",
                Exec::Firmware => "firmware",
            },
            kernel_costs: shape.kernel_costs,
            runner,
            workers,
            rows,
        }
    }

    /// The process exit code: 0 when every row's run succeeded, else the worst row's (3 timeout
    /// over 1 mismatch or give-up).
    pub fn exit_code(&self) -> u8 {
        self.rows.iter().map(|r| r.exit_code).max().unwrap_or(0)
    }

    /// The protocols of the rows, in row order.
    pub fn protocols(&self) -> Vec<Protocol> {
        let mut out: Vec<Protocol> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.protocol) {
                out.push(r.protocol);
            }
        }
        out
    }

    /// The mean efficiency of `protocol`'s rows that have one (`None` when none has), and how
    /// many rows that is.
    pub fn mean_efficiency(&self, protocol: Protocol) -> (Option<f64>, usize) {
        let e: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.protocol == protocol)
            .filter_map(|r| r.efficiency)
            .collect();
        let mean = (!e.is_empty()).then(|| e.iter().sum::<f64>() / e.len() as f64);
        (mean, e.len())
    }

    /// The shape in words: `rect 0,0,12,10, 16 blocks, 2048 B pages, 8 jobs, along both,
    /// --check none`.
    pub fn shape(&self) -> String {
        let n = crate::num::count;
        format!(
            "rect {}, {}, {} B pages, {}, along {}, --check {}",
            self.rect,
            n(u64::from(self.blocks), "block", "blocks"),
            self.page_size,
            n(u64::from(self.jobs), "job", "jobs"),
            self.along,
            self.check
        )
    }

    /// The chart `--plot` draws: efficiency (y, 0..1) against the window (x, on a log2 scale,
    /// a tick at every window of the rows); one series per protocol and pages, coloured by
    /// protocol, dashed and marked by pages. Rows without an efficiency are left out of their
    /// series.
    pub fn chart(&self) -> Chart {
        let mut windows: Vec<u8> = self.rows.iter().map(|r| r.window).collect();
        windows.sort_unstable();
        windows.dedup();
        let mut pages: Vec<u16> = Vec::new();
        for r in &self.rows {
            if !pages.contains(&r.pages) {
                pages.push(r.pages);
            }
        }
        let x = |window: u8| f64::from(window).log2();
        let mut series = Vec::new();
        for protocol in self.protocols() {
            for (i, &p) in pages.iter().enumerate() {
                let mut points: Vec<(f64, f64)> = self
                    .rows
                    .iter()
                    .filter(|r| r.protocol == protocol && r.pages == p)
                    .filter_map(|r| r.efficiency.map(|e| (x(r.window), e)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let pages_text = crate::num::count(u64::from(p), "page", "pages");
                // Beside a firmware row: the native kernels' efficiency on the same row.
                let mut native: Vec<(f64, f64)> = self
                    .rows
                    .iter()
                    .filter(|r| r.protocol == protocol && r.pages == p && r.ok)
                    .filter_map(|r| Some((x(r.window), r.native_efficiency?)))
                    .collect();
                native.sort_by(|a, b| a.0.total_cmp(&b.0));
                let exec = if native.is_empty() { "" } else { " firmware" };
                series.push(Series {
                    name: format!("{protocol}{exec}, {pages_text}"),
                    colour: colour(protocol),
                    style: i,
                    points,
                });
                if !native.is_empty() {
                    series.push(Series {
                        name: format!("{protocol} native, {pages_text}"),
                        colour: NATIVE_COLOUR,
                        style: i,
                        points: native,
                    });
                }
            }
        }
        Chart {
            title: "komorebi bench broadcast: efficiency against window".into(),
            subtitle: self.shape(),
            x_label: "window (buffer slots)".into(),
            y_label: "efficiency (bound / cycles)".into(),
            x_ticks: windows.iter().map(|&w| (x(w), w.to_string())).collect(),
            series,
        }
    }
}

/// The colour of the native kernels' lines beside a firmware bench's.
const NATIVE_COLOUR: &str = "#7f7f7f";

/// A protocol's colour in the chart.
fn colour(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Komorebi => "#1f77b4",
        Protocol::Handshake => "#d62728",
    }
}

/// Fills in every komorebi row's speedup: the handshake row's cycles over its own at the same
/// window and pages, when that row exists and both runs succeeded.
pub(super) fn set_speedups(rows: &mut [BenchRow]) {
    let handshake: Vec<(u8, u16, u64)> = rows
        .iter()
        .filter(|r| r.protocol == Protocol::Handshake && r.ok)
        .map(|r| (r.window, r.pages, r.cycles))
        .collect();
    for r in rows.iter_mut() {
        r.speedup = None;
        if r.protocol != Protocol::Komorebi || !r.ok || r.cycles == 0 {
            continue;
        }
        r.speedup = handshake
            .iter()
            .find(|&&(w, p, _)| w == r.window && p == r.pages)
            .map(|&(_, _, cycles)| cycles as f64 / r.cycles as f64);
    }
}

/// A table's column: its header, and whether values align right (numbers) or left (text).
struct Column {
    header: &'static str,
    right: bool,
}

impl fmt::Display for BroadcastBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let through = match self.runner {
            "feeder" => "through the test feeder".to_string(),
            _ => format!(
                "through the dispatcher ({})",
                crate::num::count(self.workers as u64, "worker", "workers")
            ),
        };
        writeln!(
            f,
            "komorebi bench broadcast: {}; on {} ({}{}) {through}",
            self.shape(),
            self.device,
            self.exec,
            crate::app::broadcast::kernel_costs_note(self.kernel_costs)
        )?;
        let beside_native = self.rows.iter().any(|r| r.native_cycles.is_some());
        let columns: Vec<Column> = [
            ("protocol", false),
            ("window", true),
            ("pages", true),
            (
                if self.clock.is_time() {
                    "cycles"
                } else {
                    "steps"
                },
                true,
            ),
            ("native", true),
            ("ratio", true),
            ("bound", true),
            ("efficiency", true),
            ("speedup", true),
            ("result", false),
            ("binding", false),
        ]
        .into_iter()
        .filter(|(header, _)| beside_native || !matches!(*header, "native" | "ratio"))
        .map(|(header, right)| Column { header, right })
        .collect();
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.protocol.to_string(),
                    r.window.to_string(),
                    r.pages.to_string(),
                    r.cycles.to_string(),
                ];
                if beside_native {
                    row.push(r.native_cycles.map_or("-".into(), |n| n.to_string()));
                    row.push(r.firmware_ratio.map_or("-".into(), |x| format!("{x:.2}x")));
                }
                row.extend([
                    r.bound_cycles.to_string(),
                    r.efficiency.map_or("-".into(), |e| format!("{e:.3}")),
                    r.speedup.map_or("-".into(), |s| format!("{s:.2}x")),
                    if r.ok {
                        "ok".into()
                    } else {
                        format!("exit {}", r.exit_code)
                    },
                    r.binding.clone(),
                ]);
                row
            })
            .collect();
        let widths: Vec<usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                cells
                    .iter()
                    .map(|row| row[i].len())
                    .chain([c.header.len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |f: &mut fmt::Formatter<'_>, values: &[&str]| -> fmt::Result {
            let mut text = String::new();
            for (i, (c, v)) in columns.iter().zip(values).enumerate() {
                if i > 0 {
                    text.push_str("  ");
                }
                if c.right {
                    text.push_str(&format!("{v:>w$}", w = widths[i]));
                } else {
                    text.push_str(&format!("{v:<w$}", w = widths[i]));
                }
            }
            writeln!(f, "{}", text.trim_end())
        };
        line(f, &columns.iter().map(|c| c.header).collect::<Vec<_>>())?;
        for row in &cells {
            line(f, &row.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        if beside_native {
            writeln!(
                f,
                "native: the same row on the native kernels, charged {} costs per call \
                 (--kernel-costs); ratio: firmware cycles / native cycles",
                self.kernel_costs
            )?;
        }
        if self.rows.iter().any(|r| r.speedup.is_some()) {
            writeln!(
                f,
                "speedup: handshake cycles / komorebi cycles at the same window and pages (how \
                 many times faster komorebi is)"
            )?;
        }
        let protocols = self.protocols();
        for (i, &protocol) in protocols.iter().enumerate() {
            let total = self.rows.iter().filter(|r| r.protocol == protocol).count();
            let (mean, n) = self.mean_efficiency(protocol);
            match mean {
                Some(m) if n == total => write!(
                    f,
                    "{protocol}: mean efficiency {m:.3} over {}",
                    crate::num::count(n as u64, "row", "rows")
                )?,
                Some(m) => write!(
                    f,
                    "{protocol}: mean efficiency {m:.3} over the {n} of {total} rows that \
                     succeeded (a failed run has no efficiency)"
                )?,
                None if !self.clock.is_time() => write!(
                    f,
                    "{protocol}: no mean efficiency: the rows count {}, which are no device time",
                    self.clock.unit()
                )?,
                None if self.rows.iter().all(|r| r.bound_cycles == 0) => write!(
                    f,
                    "{protocol}: no mean efficiency: no row has a resource bound to compare with"
                )?,
                None => write!(
                    f,
                    "{protocol}: no mean efficiency: no row succeeded (a failed run has no \
                     efficiency)"
                )?,
            }
            if i + 1 < protocols.len() {
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
