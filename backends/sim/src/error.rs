//! The host side's error type.
//!
//! Leaf module: imports nothing of the crate.

/// A refused simulator request (host side).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// No enabled Tensix tile at these NoC0 coordinates.
    #[error("no enabled Tensix tile at NoC0 {0:?}")]
    NoTile((u8, u8)),
    /// An access outside L1 or a DRAM bank.
    #[error("{0}")]
    OutOfRange(String),
    /// A host access to the fused DRAM bank (`SimConfig::fused_dram`): refused, never served.
    #[error(
        "DRAM bank {bank} {addr:#x}+{len}: the bank is fused off on this chip (its clock is off \
         on a card: nothing answers at its ports); the chip has {banks}"
    )]
    FusedDram {
        /// The bank asked for.
        bank: u8,
        /// Bank-local address asked for.
        addr: u64,
        /// Bytes asked for.
        len: usize,
        /// The banks that work.
        banks: blackhole_pac::harvest::DramBanks,
    },
    /// A circular-buffer configuration that cannot work.
    #[error("{0}")]
    BadBuffer(String),
    /// A BAR access that is not a TLB window or configuration register.
    #[error("{0}")]
    BadBar(String),
    /// A configuration the simulator cannot run: which field, and what is allowed.
    #[error("simulator configuration: {field} {why}")]
    Config {
        /// The field (`timing.flit_bytes`, `control.base`, ...).
        field: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// A TLB window names translated coordinates (NoC translation on) that translate to no
    /// tile the simulator models.
    #[error("translated coordinates {0:?} name no tile (NoC translation is on)")]
    Untranslatable((u8, u8)),
}
