//! The flags of `komorebi bench broadcast` and the parsers of its swept lists.

use std::path::PathBuf;

use komorebi_broadcast::args::{MAX_BUFFER_PAGES, MAX_WINDOW};

use crate::app::broadcast::Protocol;
use crate::cli::{CheckFlag, DeviceFlags, RunFlags, ShapeFlags};
use crate::num::{parse_u64, range_text};

use super::error::ListError;

/// Most rows run at once (`--threads`).
pub const MAX_THREADS: usize = 16;

/// A swept list as given: comma separated, every value allowed and given once, in the order
/// given (the order of the rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueList<T>(Vec<T>);

impl<T> ValueList<T> {
    /// The values, in the order given.
    pub fn values(&self) -> &[T] {
        &self.0
    }
}

/// Splits `s` at commas and parses every item with `item`, refusing an empty list and a value
/// given twice (`show` spells a value for the message).
fn parse_list<T: PartialEq>(
    s: &str,
    allowed: &str,
    item: impl Fn(&str) -> Result<T, ListError>,
    show: impl Fn(&T) -> String,
) -> Result<ValueList<T>, ListError> {
    if s.trim().is_empty() {
        return Err(ListError::Empty {
            allowed: allowed.into(),
        });
    }
    let mut out: Vec<T> = Vec::new();
    for part in s.split(',') {
        let value = item(part.trim())?;
        if out.contains(&value) {
            return Err(ListError::Duplicate {
                value: show(&value),
                allowed: allowed.into(),
            });
        }
        out.push(value);
    }
    Ok(ValueList(out))
}

/// Parses a number of a list, decimal or `0x`-hex, in `min..=max`.
fn number(s: &str, min: u64, max: u64, allowed: &str) -> Result<u64, ListError> {
    let v = parse_u64(s).map_err(|e| match e.kind() {
        // Too large for 64 bits: out of range as any value above `max` is.
        std::num::IntErrorKind::PosOverflow => ListError::OutOfRange {
            value: s.into(),
            allowed: allowed.into(),
        },
        _ => ListError::NotAValue {
            value: s.into(),
            what: "a number",
            allowed: allowed.into(),
        },
    })?;
    if v < min || v > max {
        return Err(ListError::OutOfRange {
            value: s.into(),
            allowed: allowed.into(),
        });
    }
    Ok(v)
}

/// Parses `--windows`: windows 1..=8.
pub fn parse_windows(s: &str) -> Result<ValueList<u8>, ListError> {
    let allowed = range_text(1, u64::from(MAX_WINDOW));
    parse_list(
        s,
        &allowed,
        |p| number(p, 1, u64::from(MAX_WINDOW), &allowed).map(|v| v as u8),
        u8::to_string,
    )
}

/// Parses `--pages`: pages per block 1..=65535 (that window x pages stays within 65535 is
/// checked with the windows, [`BroadcastBench::new`](super::BroadcastBench::new)).
pub fn parse_pages(s: &str) -> Result<ValueList<u16>, ListError> {
    let allowed = range_text(1, u64::from(MAX_BUFFER_PAGES));
    parse_list(
        s,
        &allowed,
        |p| number(p, 1, u64::from(MAX_BUFFER_PAGES), &allowed).map(|v| v as u16),
        u16::to_string,
    )
}

impl BroadcastBenchFlags {
    /// The protocols of the rows: `--protocols`, or every protocol (on the firmware each
    /// protocol's rows load its own images), but with `--firmware DIR` the one whose handler
    /// those images carry (an image carries one; images that cannot be read or carry any
    /// handler leave every protocol, for the rows' checks to refuse or run).
    pub fn protocols(&self) -> Vec<Protocol> {
        match (&self.protocols, &self.device.firmware) {
            (Some(list), _) => list.values().to_vec(),
            (None, Some(dir)) => {
                Protocol::of_images(dir).map_or_else(|| Protocol::ALL.to_vec(), |p| vec![p])
            }
            (None, None) => Protocol::ALL.to_vec(),
        }
    }
}

/// Parses `--protocols`: protocol names ([`Protocol::name`]).
pub fn parse_protocols(s: &str) -> Result<ValueList<Protocol>, ListError> {
    let allowed = Protocol::ALL.map(Protocol::name).join(", ");
    parse_list(
        s,
        &allowed,
        |p| {
            Protocol::ALL
                .into_iter()
                .find(|protocol| protocol.name() == p)
                .ok_or_else(|| ListError::NotAValue {
                    value: p.into(),
                    what: "a protocol",
                    allowed: allowed.clone(),
                })
        },
        |p| p.name().to_string(),
    )
}

/// The flags of `komorebi bench broadcast`: the shape of `komorebi broadcast` (without
/// `--trace` and `--fault`, which make no sense for a bench), the swept lists, and the outputs.
#[derive(clap::Args, Debug, Clone)]
pub struct BroadcastBenchFlags {
    /// The shape every row runs.
    #[command(flatten)]
    pub shape: ShapeFlags,
    /// Windows (buffer slots) to sweep: comma separated, each 1..=8 and given once.
    #[arg(long, value_name = "LIST", value_parser = parse_windows, default_value = "1,2,4,8")]
    pub windows: ValueList<u8>,
    /// Pages per block to sweep: comma separated, each 1..=65535 and given once; window x pages
    /// at most 65535 for every window of --windows.
    #[arg(long, value_name = "LIST", value_parser = parse_pages, default_value = "1,4,8")]
    pub pages: ValueList<u16>,
    /// Protocols to compare: comma separated, each of komorebi, handshake and given once
    /// (default komorebi,handshake, on the firmware each protocol's rows on its own images;
    /// with --firmware DIR the protocol whose handler those images carry).
    #[arg(long, value_name = "LIST", value_parser = parse_protocols)]
    pub protocols: Option<ValueList<Protocol>>,
    /// What compute does with the blocks it receives, as `komorebi broadcast --check`, but
    /// `none` by default here: the bench compares the protocols and the NoC, and with `full`
    /// compute's checking (6 cycles a word) binds every run whatever the protocol
    /// (docs/decisions.md, D13).
    #[arg(long, value_enum, default_value = "none")]
    pub check: CheckFlag,
    /// Rows run at once, each on its own simulator (1..=16; on a card one at a time). Every
    /// run is deterministic, so the figures do not depend on it.
    #[arg(long, value_name = "N", value_parser = crate::num::ranged::<usize>(1, MAX_THREADS as u64), default_value_t = 2)]
    pub threads: usize,
    /// Also draw the efficiency against the window, one line per protocol and pages, as an SVG
    /// file (checked to be writable before the first run).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Which device runs the program.
    #[command(flatten)]
    pub device: DeviceFlags,
    /// How each row runs its jobs.
    #[command(flatten)]
    pub run: RunFlags,
}
