//! The firmware's logs: each kernel's log ring read out of its tile's L1 after a run and decoded
//! with `defmt-decoder` against the kernel's ELF file (its defmt table).
//!
//! The ring (`komorebi_kernel::abi::log_ring`): [`LOG_MAGIC`], the frames it holds, their bytes
//! and the frames it dropped, then [`LOG_DATA_BYTES`] of defmt frames (raw encoding) one after
//! the other. It keeps the first frames since the kernel booted; one that does not fit is
//! dropped whole and counted. What this module guarantees:
//!
//! * A ring's lines are every frame it holds, in the order they were written, and
//!   [`KernelLog::lost`] is the count of frames dropped.
//! * A ring that does not hold what a kernel writes (no magic, counts that cannot be, a frame
//!   the table cannot decode, more or fewer frames than counted) is reported for its tile and
//!   kernel ([`KernelLog::error`], the text of a [`LogError::Corrupt`]), never a panic, and the
//!   other rings are read on; so is a ring the firmware never set up (built without logging). A
//!   ring read while its kernel was between its two count stores is read again once.

use std::path::{Path, PathBuf};

use defmt_decoder::{DecodeError, Table};
use komorebi_hal::{LogicalRect, LogicalXy, Role, Xy};
use komorebi_kernel::abi::{
    LOG_BYTES, LOG_DATA, LOG_DATA_BYTES, LOG_FRAMES, LOG_LOST, LOG_MAGIC, log_ring,
};

use super::device::{Device, DeviceError};
use super::session::{Session, SessionError};

/// What reading or decoding the logs refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// A kernel's ELF file could not be read or has no defmt table.
    #[error("{path}: {why}")]
    Elf {
        /// The file.
        path: String,
        /// What was wrong.
        why: String,
    },
    /// A ring that is not what a kernel writes.
    #[error("the {kernel} log ring of tile ({x},{y}) is corrupt: {why}", x = tile[0], y = tile[1])]
    Corrupt {
        /// The tile, logical coordinates.
        tile: [u8; 2],
        /// The kernel.
        kernel: &'static str,
        /// What was wrong.
        why: String,
    },
    /// The device could not be read.
    #[error("reading the log rings: {0}")]
    Device(#[from] SessionError),
}

/// One decoded log line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// The core's wall clock when it logged (its `defmt::timestamp`), in cycles.
    pub cycle: Option<u64>,
    /// `error`, `warn`, `info`, `debug` or `trace`; `print` for a frame logged with no level.
    pub level: &'static str,
    /// The message, its arguments put in.
    pub message: String,
}

/// One kernel's ring, decoded.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelLog {
    /// The chip of a run on several (`--chips`), as the run numbers them; `None` (and left out
    /// of the JSON) on one chip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chip: Option<u32>,
    /// The tile, logical coordinates.
    pub tile: [u8; 2],
    /// `reader`, `writer` or `compute`.
    pub kernel: &'static str,
    /// Its lines, oldest first.
    pub lines: Vec<LogLine>,
    /// Frames it dropped because the ring was full.
    pub lost: u32,
    /// Why its ring could not be read as a kernel writes it (`lines` is then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the ring lacks the log magic altogether (no logging firmware set it up since the
    /// tile's reset): one of the errors above, told apart for a whole device's summary.
    #[serde(skip)]
    pub unset: bool,
}

impl std::fmt::Display for KernelLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y] = self.tile;
        // Every line names its chip on a run of several.
        let chip = self.chip.map(|c| format!("chip {c} ")).unwrap_or_default();
        if let Some(e) = &self.error {
            writeln!(f, "{chip}({x},{y}) {:<7} {e}", self.kernel)?;
        }
        for line in &self.lines {
            let at = line
                .cycle
                .map_or_else(|| "-".to_string(), |c| c.to_string());
            writeln!(
                f,
                "{chip}({x},{y}) {:<7} {at:>12} {:<5} {}",
                self.kernel, line.level, line.message
            )?;
        }
        if self.lost > 0 {
            let frames = if self.lost == 1 { "line" } else { "lines" };
            writeln!(
                f,
                "{chip}({x},{y}) {:<7} {} later {frames} lost: the ring holds {} bytes",
                self.kernel, self.lost, LOG_DATA_BYTES
            )?;
        }
        Ok(())
    }
}

/// The level `DEFMT_LOG` names (`off`, `error`, `warn`, `info`, `debug`, `trace`; warn when it is
/// unset or names none): what the firmware images log when built, and what is kept of the native
/// kernels' lines when run.
pub fn level_from_env() -> log::LevelFilter {
    match std::env::var("DEFMT_LOG").as_deref() {
        Ok("off") => log::LevelFilter::Off,
        Ok("error") => log::LevelFilter::Error,
        Ok("info") => log::LevelFilter::Info,
        Ok("debug") => log::LevelFilter::Debug,
        Ok("trace") => log::LevelFilter::Trace,
        _ => log::LevelFilter::Warn,
    }
}

/// A level's name as the decoded firmware lines give it.
pub fn level_name(level: log::Level) -> &'static str {
    match level {
        log::Level::Error => "error",
        log::Level::Warn => "warn",
        log::Level::Info => "info",
        log::Level::Debug => "debug",
        log::Level::Trace => "trace",
    }
}

/// The three kernels' defmt tables, from the firmware's ELF files.
pub struct Tables {
    tables: Vec<(Role, Table)>,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables")
            .field("kernels", &self.tables.len())
            .finish()
    }
}

impl Tables {
    /// The tables of `dir`'s `reader`, `writer` and `compute` files.
    pub fn from_dir(dir: &Path) -> Result<Self, LogError> {
        let tables = Role::ALL
            .into_iter()
            .map(|role| {
                let path: PathBuf = dir.join(role.name());
                let elf = |why: String| LogError::Elf {
                    path: path.display().to_string(),
                    why,
                };
                let bytes = std::fs::read(&path).map_err(|e| elf(e.to_string()))?;
                let table = Table::parse(&bytes)
                    .map_err(|e| elf(format!("its defmt table does not parse: {e}")))?
                    .ok_or_else(|| {
                        elf(
                            "it has no defmt table: the firmware was built without logging \
                             or its `.defmt` section was stripped (build it with its default \
                             features, and do not strip it)"
                                .to_string(),
                        )
                    })?;
                Ok((role, table))
            })
            .collect::<Result<_, LogError>>()?;
        Ok(Self { tables })
    }

    /// The table of `role`'s image.
    pub fn get(&self, role: Role) -> &Table {
        // `from_dir` made one for every role, in `Role::ALL`'s order.
        &self.tables[role.index()].1
    }
}

/// A ring as read: its header words and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ring {
    /// [`LOG_MAGIC`] once the kernel booted.
    pub magic: u32,
    /// Frames the ring holds.
    pub frames: u32,
    /// Their bytes, from the start of the data.
    pub bytes: u32,
    /// Frames dropped because they did not fit.
    pub lost: u32,
    /// The [`LOG_DATA_BYTES`] data bytes, as they lie in L1.
    pub data: Vec<u8>,
}

impl Ring {
    /// The bytes of the frames the ring holds; `Err` says what cannot be.
    pub fn frames_bytes(&self) -> Result<&[u8], String> {
        if self.magic != LOG_MAGIC {
            return Err(format!(
                "its first word is {:#010x}, not the log magic {LOG_MAGIC:#010x} (the firmware \
                 did not set it up: built without logging, or the word was overwritten)",
                self.magic
            ));
        }
        let holds = self.data.len().min(LOG_DATA_BYTES as usize);
        if self.bytes as usize > holds {
            let of = if holds < LOG_DATA_BYTES as usize {
                "the data read"
            } else {
                "its data"
            };
            return Err(format!(
                "it counts {} bytes of frames, more than the {holds} of {of} (allowed: 0 to \
                 {holds})",
                self.bytes
            ));
        }
        if self.frames > self.bytes {
            return Err(format!(
                "{} frames in {} bytes: a frame takes more than one",
                self.frames, self.bytes
            ));
        }
        Ok(&self.data[..self.bytes as usize])
    }

    /// The ring's lines, decoded with `table`, oldest first. Its counted bytes must be whole
    /// frames, as many as it counts (a kernel stores both only for frames it wrote whole).
    pub fn decode(&self, table: &Table) -> Result<Vec<LogLine>, String> {
        let bytes = self.frames_bytes()?;
        let mut lines = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            match table.decode(&bytes[at..]) {
                Ok((frame, used)) => {
                    lines.push(LogLine {
                        cycle: frame
                            .display_timestamp()
                            .and_then(|t| t.to_string().parse().ok()),
                        level: frame.level().map_or("print", |l| l.as_str()),
                        message: frame.display_message().to_string(),
                    });
                    at += used;
                }
                Err(DecodeError::UnexpectedEof) => {
                    return Err(format!(
                        "its last {} of {} counted bytes are no whole frame (after {} frames)",
                        bytes.len() - at,
                        bytes.len(),
                        lines.len()
                    ));
                }
                Err(DecodeError::Malformed) => {
                    return Err(format!(
                        "frame {} does not decode with the image's defmt table",
                        lines.len() + 1
                    ));
                }
            }
        }
        if lines.len() as u32 != self.frames {
            return Err(format!(
                "{} frames decode from its {} bytes, but it counts {}",
                lines.len(),
                self.bytes,
                self.frames
            ));
        }
        Ok(lines)
    }
}

/// Reads `role`'s ring on logical tile `core`.
pub fn read_ring(session: &mut Session, core: LogicalXy, role: Role) -> Result<Ring, LogError> {
    let noc0 = noc0_of(session, core)?;
    Ok(read_ring_at(session.device(), noc0, role).map_err(SessionError::from)?)
}

/// The NoC0 coordinates of logical tile `core`; a tile outside the grid is the session's error.
fn noc0_of(session: &Session, core: LogicalXy) -> Result<Xy, SessionError> {
    session.noc0(core).ok_or(SessionError::Group {
        group: LogicalRect::new(core.x, core.y, 1, 1),
        columns: session.geometry().columns(),
        rows: session.geometry().rows(),
    })
}

/// Reads `role`'s ring on the tile at NoC0 `noc0` of `device`: a device of a session, or one
/// opened without starting its cores ([`super::pcie::attach_card`]).
pub fn read_ring_at(device: &dyn Device, noc0: Xy, role: Role) -> Result<Ring, DeviceError> {
    let base = log_ring(role);
    let mut header = [0u8; LOG_DATA as usize];
    device.read_l1(noc0, base, &mut header)?;
    let word = |o: u32| {
        let o = o as usize;
        u32::from_le_bytes([header[o], header[o + 1], header[o + 2], header[o + 3]])
    };
    let mut data = vec![0u8; LOG_DATA_BYTES as usize];
    device.read_l1(noc0, base + LOG_DATA, &mut data)?;
    Ok(Ring {
        magic: word(0),
        frames: word(LOG_FRAMES),
        bytes: word(LOG_BYTES),
        lost: word(LOG_LOST),
        data,
    })
}

/// Every kernel's log on the tiles `cores`, decoded with `tables`: the kernels that logged
/// something or whose ring is not as a kernel writes it, in the order given, reader, writer,
/// compute. Only a device that cannot be read fails the whole.
pub fn read_logs(
    session: &mut Session,
    cores: &[LogicalXy],
    tables: &Tables,
) -> Result<Vec<KernelLog>, LogError> {
    let tiles = cores
        .iter()
        .map(|&core| Ok((core, noc0_of(session, core)?)))
        .collect::<Result<Vec<_>, SessionError>>()?;
    read_device_logs(session.device(), &tiles, tables)
}

/// [`read_logs`] of a bare device: the tiles as (logical, NoC0) pairs.
pub fn read_device_logs(
    device: &dyn Device,
    tiles: &[(LogicalXy, Xy)],
    tables: &Tables,
) -> Result<Vec<KernelLog>, LogError> {
    let read = |noc0, role| read_ring_at(device, noc0, role).map_err(SessionError::from);
    let mut out = Vec::new();
    for &(core, noc0) in tiles {
        for role in Role::ALL {
            let tile = [core.x, core.y];
            let mut ring = read(noc0, role)?;
            let mut decoded = ring.decode(tables.get(role));
            if decoded.is_err() {
                // A kernel still logging (a card, a timed-out job) may be between storing the
                // byte count and the frame count: once more.
                ring = read(noc0, role)?;
                decoded = ring.decode(tables.get(role));
            }
            let (lines, error) = match decoded {
                Ok(lines) => (lines, None),
                Err(why) => {
                    let e = LogError::Corrupt {
                        tile,
                        kernel: role.name(),
                        why,
                    };
                    (Vec::new(), Some(e.to_string()))
                }
            };
            if !lines.is_empty() || ring.lost > 0 || error.is_some() {
                out.push(KernelLog {
                    chip: None,
                    tile,
                    kernel: role.name(),
                    lost: if error.is_some() { 0 } else { ring.lost },
                    lines,
                    unset: error.is_some() && ring.magic != LOG_MAGIC,
                    error,
                });
            }
        }
    }
    Ok(out)
}
