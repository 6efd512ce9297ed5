//! The cores' logs of a run as they stand, read the same way at its end (`--log`) and after each
//! job (`--log-follow`, `follow`): the firmware's rings decoded against its ELF files, or the
//! native kernels' lines the simulator kept, for the rectangle's cores row by row.

use std::collections::HashMap;

use crate::host::log::{self as firmware_log, KernelLog};
use crate::host::session::Session;

use super::config::BroadcastConfig;
use super::error::BroadcastError;

/// The defmt tables of the firmware `cfg` runs, when it runs firmware (`None` for the native
/// kernels, whose lines the simulator keeps as text).
pub(super) fn log_tables(
    cfg: &BroadcastConfig,
) -> Result<Option<firmware_log::Tables>, BroadcastError> {
    // The native kernels run only on the simulator (as a chip or as a card).
    if cfg.runs_native() {
        return Ok(None);
    }
    let dir = cfg.firmware_dir();
    firmware_log::Tables::from_dir(&dir)
        .map(Some)
        .map_err(|e| BroadcastError::Log(e.to_string()))
}

/// Every kernel's log of the rectangle's cores as they stand: the firmware's rings decoded with
/// `tables`, or (with no tables) the native kernels' lines the simulator kept.
pub(super) fn kernel_logs(
    session: &mut Session,
    cfg: &BroadcastConfig,
    tables: Option<&firmware_log::Tables>,
) -> Result<Vec<KernelLog>, BroadcastError> {
    kernel_logs_from(session, cfg, tables, 0).map(|(logs, _)| logs)
}

/// [`kernel_logs`], but of the native kernels only the lines after their first `native_from`
/// (the count an earlier read returned), and with them the count to read from next (`None`:
/// the firmware's rings, read whole each time). A run followed job by job reads each native
/// line once, not every line after every job.
pub(super) fn kernel_logs_from(
    session: &mut Session,
    cfg: &BroadcastConfig,
    tables: Option<&firmware_log::Tables>,
    native_from: usize,
) -> Result<(Vec<KernelLog>, Option<usize>), BroadcastError> {
    let r = cfg.rect;
    let cores: Vec<_> = (r.y0..r.y0.saturating_add(r.rows))
        .flat_map(|y| {
            (r.x0..r.x0.saturating_add(r.columns)).map(move |x| komorebi_hal::LogicalXy::new(x, y))
        })
        .collect();
    match (tables, session.device().simulator()) {
        (None, Some(sim)) => {
            let lines = sim.kernel_logs_since(native_from);
            let next = native_from + lines.len();
            Ok((native_logs(session, &cores, lines), Some(next)))
        }
        (Some(tables), _) => firmware_log::read_logs(session, &cores, tables)
            .map(|logs| (logs, None))
            .map_err(|e| BroadcastError::Log(e.to_string())),
        (None, None) => Err(BroadcastError::Log(
            "the native kernels' lines are kept only by the simulator".into(),
        )),
    }
}

/// The native kernels' lines of `cores` (logical), per kernel as the firmware's rings give them:
/// the cores in the order given, then reader, writer, compute; at the level `DEFMT_LOG` names, as
/// the firmware images are built with (warnings and errors unless set). One pass over the lines.
fn native_logs(
    session: &Session,
    cores: &[komorebi_hal::LogicalXy],
    lines: Vec<komorebi_sim::kernel_log::KernelLogLine>,
) -> Vec<KernelLog> {
    let level = firmware_log::level_from_env();
    let mut by_kernel: HashMap<((u8, u8), komorebi_hal::Role), Vec<firmware_log::LogLine>> =
        HashMap::new();
    for l in lines.into_iter().filter(|l| l.level <= level) {
        by_kernel
            .entry((l.tile, l.kernel))
            .or_default()
            .push(firmware_log::LogLine {
                cycle: Some(l.cycle),
                level: firmware_log::level_name(l.level),
                message: l.message,
            });
    }
    let mut out = Vec::new();
    for &core in cores {
        let Some(noc0) = session.noc0(core) else {
            continue;
        };
        for role in komorebi_hal::Role::ALL {
            if let Some(kept) = by_kernel.remove(&(noc0.get(), role)) {
                out.push(KernelLog {
                    chip: None,
                    tile: [core.x, core.y],
                    kernel: role.name(),
                    lines: kept,
                    lost: 0,
                    error: None,
                    unset: false,
                });
            }
        }
    }
    out
}
