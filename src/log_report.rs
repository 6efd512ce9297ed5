//! `komorebi log`: the firmware cores' log rings of a card, read after a run without loading or
//! starting anything, and decoded against the firmware's ELF files (`host::log`).
//!
//! A session's open loads the firmware and starts the cores, which sets every ring up empty,
//! so `broadcast --log` can only read its own run's lines. This reads a device as its cores left
//! it: the card is opened as a session opens it (windows, telemetry, harvesting) and nothing is
//! written to it. What it guarantees:
//!
//! * Every kernel of the tiles asked for (every enabled Tensix tile by default) is read; a ring
//!   that does not hold what a kernel writes is reported for its tile and kernel and the others
//!   are read on, as `broadcast --log` does; only a device that cannot be read fails the whole.
//! * A device none of whose rings holds the log magic (no logging firmware has run since its
//!   reset) is said once, not as an error per kernel.
//! * A simulated device is refused: the simulator and `pcie-sim` live in the process of the run
//!   that made them and ttsim in its server, so their rings end with that run.

use std::fmt;
use std::path::Path;

use komorebi_hal::{LogicalRect, LogicalXy, Xy};
use serde::Serialize;

use crate::app::broadcast::DeviceChoice;
use crate::host::device::Device;
use crate::host::log::{self, KernelLog, Tables};

/// The logs of a device, as `komorebi log` prints them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceLogs {
    /// The device, as `--device` named it.
    pub device: String,
    /// Its chip, as `--chip` spells it (`blackhole`, `wormhole`).
    pub chip: &'static str,
    /// Tiles read (three kernels each).
    pub tiles: u32,
    /// The kernels that logged something or whose ring is not as a kernel writes it: tiles row by
    /// row in logical coordinates, then reader, writer, compute.
    pub log: Vec<KernelLog>,
    /// Why there is nothing to read, when no ring holds the log magic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl fmt::Display for DeviceLogs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "log rings of {} ({}): {} tiles, 3 kernels each",
            self.device, self.chip, self.tiles
        )?;
        if let Some(note) = &self.note {
            return writeln!(f, "  {note}");
        }
        if self.log.is_empty() {
            return writeln!(f, "  no kernel logged anything since it booted");
        }
        for k in &self.log {
            write!(f, "{k}")?;
        }
        Ok(())
    }
}

/// Why `komorebi log` could not read a device.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogReportError {
    /// A flag that cannot be used (exit 2).
    #[error("{0}")]
    Flag(String),
    /// The device cannot be opened or read (exit 4).
    #[error("{0}")]
    Device(String),
}

impl LogReportError {
    /// The exit code: 2 for a flag, 4 for a device that cannot be used.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Flag(_) => 2,
            Self::Device(_) => 4,
        }
    }
}

/// The logs of the card `device` names, decoded against the ELF files in `firmware` (the
/// firmware build's output for the card's chip when `None`); only the tiles of `rect` when
/// given.
pub fn card_logs(
    device: &DeviceChoice,
    firmware: Option<&Path>,
    rect: Option<LogicalRect>,
) -> Result<DeviceLogs, LogReportError> {
    let DeviceChoice::Card(path) = device else {
        return Err(LogReportError::Flag(format!(
            "--device {device}: a simulated device's log rings end with the run that made them \
             (the simulator and pcie-sim live in its process, ttsim in its server): read them \
             with `broadcast --log` (allowed: a card's device node, such as /dev/tenstorrent/0)"
        )));
    };
    // Flags no card makes right, refused before any opens (exit 2 whatever the device).
    if let Some(r) = rect.filter(|r| r.is_empty()) {
        return Err(LogReportError::Flag(format!(
            "--rect {r}: empty (allowed: a rectangle of at least one tile inside the card's \
             logical grid)"
        )));
    }
    if let Some(dir) = firmware {
        Tables::from_dir(dir)
            .map_err(|e| unreadable_tables(format!("--firmware {}", dir.display()), e))?;
    }
    #[cfg(target_os = "linux")]
    {
        let card = crate::host::pcie::attach_card(path)
            .map_err(|e| LogReportError::Device(format!("--device {}: {e}", path.display())))?;
        read_all(&card, device.to_string(), firmware, rect)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (firmware, rect);
        Err(LogReportError::Device(format!(
            "--device {}: cards are reached through tt-kmd, on Linux only",
            path.display()
        )))
    }
}

/// The refusal of firmware ELF files (`given`: the flag, or the default directory) whose defmt
/// tables cannot be read.
fn unreadable_tables(given: String, e: impl std::fmt::Display) -> LogReportError {
    LogReportError::Flag(format!(
        "{given}: {e} (give --firmware the directory of the ELF files the card ran)"
    ))
}

/// The logs of an opened `device` (a card or ttsim chip attached without starting anything,
/// `host::pcie::attach_card` and `attach_ttsim`), named `name` in the report.
pub fn read_all(
    device: &dyn Device,
    name: String,
    firmware: Option<&Path>,
    rect: Option<LogicalRect>,
) -> Result<DeviceLogs, LogReportError> {
    let chip = device.chip();
    let geometry = crate::chip::geometry(chip, device.harvest_word(), device.fused_dram())
        .map_err(|e| LogReportError::Device(format!("{name}: its grid: {e}")))?;
    let (columns, rows) = (geometry.columns(), geometry.rows());
    let rect = rect.unwrap_or(LogicalRect::new(0, 0, columns, rows));
    if rect.columns == 0
        || rect.rows == 0
        || u16::from(rect.x0) + u16::from(rect.columns) > u16::from(columns)
        || u16::from(rect.y0) + u16::from(rect.rows) > u16::from(rows)
    {
        return Err(LogReportError::Flag(format!(
            "--rect {rect}: not a rectangle of at least one tile inside the {columns} x {rows} \
             logical grid of {name}"
        )));
    }
    let mut tiles = Vec::new();
    // Row by row, as `broadcast --log` lists them.
    for y in rect.y0..rect.y0 + rect.rows {
        for x in rect.x0..rect.x0 + rect.columns {
            if let Some(noc0) = geometry.noc0((x, y)).and_then(|(x, y)| Xy::new(x, y).ok()) {
                tiles.push((LogicalXy::new(x, y), noc0));
            }
        }
    }
    let dir = firmware.map_or_else(
        || crate::host::backend::default_firmware_dir_for(chip),
        Path::to_path_buf,
    );
    let tables = Tables::from_dir(&dir).map_err(|e| {
        // Named as the user gave it: the flag, or the default they did not choose.
        let given = match firmware {
            Some(_) => format!("--firmware {}", dir.display()),
            None => format!("the default firmware directory {}", dir.display()),
        };
        unreadable_tables(given, e)
    })?;
    let read = log::read_device_logs(device, &tiles, &tables)
        .map_err(|e| LogReportError::Device(format!("{name}: {e}")))?;
    let rings = tiles.len() * 3;
    let note = (rings > 0 && read.len() == rings && read.iter().all(|k| k.unset)).then(|| {
        "no ring holds the log magic: no logging komorebi firmware has run on these tiles since \
         the device's reset"
            .to_string()
    });
    Ok(DeviceLogs {
        device: name,
        chip: crate::chip::chip_flag(chip),
        tiles: tiles.len() as u32,
        log: if note.is_some() { Vec::new() } else { read },
        note,
    })
}
