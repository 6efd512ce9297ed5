//! The fault classes of `--fault` and the cores each may name.

use komorebi_hal::LogicalXy;

/// A fault class of `--fault KIND:X,Y[:BLOCK]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A receiver's data-movement kernel stops calling its broadcast calls before BLOCK.
    StallDm,
    /// A receiver's compute stops popping at BLOCK.
    StallCompute,
    /// The sender's own compute stops popping at BLOCK.
    StallSenderCompute,
    /// The core's BLOCK-th DONE marker (counting from 0) is lost on the NoC.
    DropMarker,
    /// The BLOCK-th VALID write to the core (counting from 0) is lost on the NoC.
    DropValid,
    /// The core's broadcast words are corrupted.
    BadWords,
    /// The host sets the core's stop flag once the core has seen BLOCK blocks.
    HostStop,
}

impl FaultKind {
    /// Every kind with its flag name.
    pub const ALL: [(FaultKind, &'static str); 7] = [
        (Self::StallDm, "stall-dm"),
        (Self::StallCompute, "stall-compute"),
        (Self::StallSenderCompute, "stall-sender-compute"),
        (Self::DropMarker, "drop-marker"),
        (Self::DropValid, "drop-valid"),
        (Self::BadWords, "bad-words"),
        (Self::HostStop, "host-stop"),
    ];

    /// Whether it drops a NoC transaction inside the simulator (`drop-marker`, `drop-valid`).
    pub fn is_noc(self) -> bool {
        matches!(self, Self::DropMarker | Self::DropValid)
    }

    /// The flag name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("?", |(_, n)| n)
    }
}

/// One fault of a run: applied to the first job only.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaultSpec {
    /// Which fault.
    pub kind: FaultKind,
    /// The core.
    pub core: LogicalXy,
    /// The block (or the marker / VALID number) it concerns; `bad-words` takes none (0).
    pub block: u32,
}

impl std::fmt::Display for FaultSpec {
    /// As `--fault` takes it: `KIND:X,Y:BLOCK` (`bad-words:X,Y`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{},{}", self.kind.name(), self.core.x, self.core.y)?;
        match self.kind {
            FaultKind::BadWords => Ok(()),
            _ => write!(f, ":{}", self.block),
        }
    }
}

impl std::str::FromStr for FaultSpec {
    type Err = String;

    /// `KIND:X,Y[:BLOCK]`.
    fn from_str(s: &str) -> Result<Self, String> {
        let allowed = || {
            FaultKind::ALL
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = s.split(':');
        let kind = parts.next().unwrap_or("");
        let kind = FaultKind::ALL
            .iter()
            .find(|(_, n)| *n == kind)
            .map(|(k, _)| *k)
            .ok_or_else(|| format!("'{kind}' is not a fault kind (allowed: {})", allowed()))?;
        let core = parts
            .next()
            .ok_or_else(|| format!("'{s}' is not KIND:X,Y[:BLOCK]"))?;
        let xy: Vec<_> = core
            .split(',')
            .map(|v| crate::num::parse_in(v, 0, 255))
            .collect();
        let core = match xy.as_slice() {
            [Ok(x), Ok(y)] => LogicalXy::new(*x as u8, *y as u8),
            _ => {
                return Err(format!(
                    "'{core}' is not X,Y (logical core coordinates, 0..=255 each)"
                ));
            }
        };
        let block = match parts.next() {
            None => 0,
            Some(_) if kind == FaultKind::BadWords => {
                return Err(format!(
                    "'{s}': bad-words takes no BLOCK (the core's words are bad from the start; allowed: bad-words:X,Y)"
                ));
            }
            Some(b) => crate::num::parse_in(b, 0, u32::MAX as u64)
                .map_err(|e| format!("'{b}' is not a block number: {e}"))?
                as u32,
        };
        if parts.next().is_some() {
            return Err(format!("'{s}' is not KIND:X,Y[:BLOCK]"));
        }
        Ok(Self { kind, core, block })
    }
}
