//! The flags checked and turned into rows: one configuration of the 03 program per protocol,
//! window and pages.

use std::path::PathBuf;

use komorebi_broadcast::args::MAX_BUFFER_PAGES;

use crate::app::broadcast::{BroadcastConfig, DeviceChoice, Protocol};
use crate::cli::{AlongFlag, check_memory, check_output};
use crate::dispatch::DispatchConfig;
use crate::host::backend::Exec;

use super::error::BroadcastBenchError;
use super::flags::BroadcastBenchFlags;

/// One row of the bench before it runs: which protocol, window and pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSpec {
    /// The protocol.
    pub protocol: Protocol,
    /// The window (buffer slots).
    pub window: u8,
    /// Pages per block.
    pub pages: u16,
}

/// The rows of the lists: protocols, then windows, then pages, each in the order given.
pub fn row_specs(protocols: &[Protocol], windows: &[u8], pages: &[u16]) -> Vec<RowSpec> {
    let mut rows = Vec::with_capacity(protocols.len() * windows.len() * pages.len());
    for &protocol in protocols {
        for &window in windows {
            for &p in pages {
                rows.push(RowSpec {
                    protocol,
                    window,
                    pages: p,
                });
            }
        }
    }
    rows
}

/// How every row runs its jobs: the dispatcher (the default, as `komorebi broadcast`) or the
/// test feeder (`--feeder`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runner {
    /// Through the dispatcher with this configuration.
    Dispatcher(DispatchConfig),
    /// Through the test feeder, one job at a time.
    Feeder,
}

/// A checked `komorebi bench broadcast`: the shape, the rows in order, how they run.
#[derive(Clone, Debug)]
pub struct BroadcastBench {
    pub(super) shape: BroadcastConfig,
    pub(super) along: AlongFlag,
    pub(super) rows: Vec<RowSpec>,
    pub(super) runner: Runner,
    pub(super) threads: usize,
    pub(super) plot: Option<PathBuf>,
    /// Each row also runs on the native kernels, for the firmware's ratio to them (a
    /// firmware bench on the simulated card).
    pub(super) beside_native: bool,
}

impl BroadcastBench {
    /// Checks `flags` before anything runs: every window x pages within the buffer's limit,
    /// every row's configuration as the program checks it (a protocol it does not run yet is
    /// refused here, naming `--protocols`), that the host has the memory of each row (row by
    /// row: rows running at once are not added up), and that `--plot` is an `.svg` path that
    /// can be written.
    pub fn new(flags: &BroadcastBenchFlags) -> Result<Self, BroadcastBenchError> {
        let (windows, pages) = (flags.windows.values(), flags.pages.values());
        for &window in windows {
            for &p in pages {
                if u32::from(window) * u32::from(p) > MAX_BUFFER_PAGES {
                    return Err(BroadcastBenchError::TooManyPages { window, pages: p });
                }
            }
        }
        let shape = BroadcastConfig {
            check: flags.check.into(),
            ..flags
                .shape
                .config(&flags.device)
                .map_err(BroadcastBenchError::Flag)?
        };
        let rows = row_specs(&flags.protocols(), windows, pages);
        let runner = if flags.run.feeder {
            Runner::Feeder
        } else {
            Runner::Dispatcher(flags.run.dispatch())
        };
        // A card runs one session at a time: its rows run one after another.
        let threads = match shape.device {
            DeviceChoice::Card(_) => 1,
            _ => flags.threads,
        };
        let beside_native = shape.device == DeviceChoice::PcieSim && shape.exec == Exec::Firmware;
        let bench = Self {
            shape,
            along: flags.shape.along,
            rows,
            runner,
            threads,
            plot: flags.plot.clone(),
            beside_native,
        };
        for row in &bench.rows {
            let cfg = bench.config(row);
            cfg.check_flags()
                .map_err(|e| BroadcastBenchError::of_run(row.protocol, row.window, row.pages, e))?;
            check_memory(&cfg).map_err(BroadcastBenchError::Host)?;
        }
        if let Some(path) = &bench.plot {
            // In any case, as `inspect --picture` takes it.
            if !path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
            {
                return Err(BroadcastBenchError::PlotNotSvg { path: path.clone() });
            }
            check_output("--plot", path).map_err(BroadcastBenchError::Host)?;
        }
        Ok(bench)
    }

    /// The rows in the order they are reported: protocols, then windows, then pages, each list
    /// in the order given.
    pub fn rows(&self) -> &[RowSpec] {
        &self.rows
    }

    /// Whether each row also runs on the native kernels (`--exec firmware` on `pcie-sim`),
    /// its report then giving the native cycles and the firmware's ratio to them.
    pub fn beside_native(&self) -> bool {
        self.beside_native
    }

    /// The program configuration of `row`: the shape with its protocol, window and pages.
    pub fn config(&self, row: &RowSpec) -> BroadcastConfig {
        BroadcastConfig {
            protocol: row.protocol,
            window: row.window,
            pages: row.pages,
            ..self.shape.clone()
        }
    }
}
