//! What `komorebi bench noc` refuses, and a run that failed.

use komorebi_hal::{LogicalRect, LogicalXy};

use super::flags::{MAX_DELIVERIES, Pattern};

/// Flags that cannot measure what they say, and a run that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NocBenchError {
    /// A flag the pattern needs is missing.
    #[error("{flag} {value} is required with --pattern {pattern}")]
    Missing {
        /// The flag.
        flag: &'static str,
        /// Its value's form.
        value: &'static str,
        /// The pattern.
        pattern: Pattern,
    },
    /// A flag given with a pattern that does not take it.
    #[error("{flag} is only for --pattern {allowed} (got --pattern {pattern})")]
    NotForPattern {
        /// The flag.
        flag: &'static str,
        /// The patterns that take it.
        allowed: &'static str,
        /// The pattern given.
        pattern: Pattern,
    },
    /// A core outside the logical grid of the harvest mask.
    #[error(
        "{flag} {core} is outside the {columns}x{rows} logical grid of --harvest {mask:#x} \
         (allowed: X 0..={}, Y 0..={})",
        columns.saturating_sub(1),
        rows.saturating_sub(1)
    )]
    CoreOutside {
        /// The flag.
        flag: &'static str,
        /// The core.
        core: LogicalXy,
        /// Logical columns of the grid (at least 1).
        columns: u8,
        /// Logical rows of the grid (at least 1).
        rows: u8,
        /// The harvest mask.
        mask: u16,
    },
    /// A rectangle with no core.
    #[error("--rect {rect} is empty (allowed: at least 1 column and 1 row)")]
    EmptyRect {
        /// The rectangle.
        rect: LogicalRect,
    },
    /// A rectangle reaching outside the logical grid of the harvest mask.
    #[error(
        "--rect {rect} reaches outside the {columns}x{rows} logical grid of --harvest {mask:#x} \
         (allowed: X0 + COLUMNS <= {columns}, Y0 + ROWS <= {rows})"
    )]
    RectOutside {
        /// The rectangle.
        rect: LogicalRect,
        /// Logical columns of the grid.
        columns: u8,
        /// Logical rows of the grid.
        rows: u8,
        /// The harvest mask.
        mask: u16,
    },
    /// A multicast rectangle whose only core is the sender, without `--loopback`.
    #[error(
        "--rect {rect}: the multicast has no receiver, its only core is the sender {sender} \
         (allowed: a rectangle with another core, or --loopback)"
    )]
    NoReceiver {
        /// The rectangle.
        rect: LogicalRect,
        /// The sender.
        sender: LogicalXy,
    },
    /// `--loopback` with a sender outside the multicast's rectangle: nothing would loop back.
    #[error(
        "--loopback: the sender {sender} is outside --rect {rect}, so no copy comes back to it \
         (allowed: --loopback with a sender inside the rectangle)"
    )]
    LoopbackOutside {
        /// The rectangle.
        rect: LogicalRect,
        /// The sender.
        sender: LogicalXy,
    },
    /// A one-to-all rectangle whose only core is the sender.
    #[error(
        "--rect {rect}: one-to-all has no core to write to, its only core is the sender {sender} \
         (allowed: a rectangle with a core other than --sender)"
    )]
    NoOtherCore {
        /// The rectangle.
        rect: LogicalRect,
        /// The sender.
        sender: LogicalXy,
    },
    /// `--bank` names the fused DRAM bank, which never answers.
    #[error(
        "--bank {bank} is the fused DRAM bank (--fused-dram {bank}): nothing answers at its \
         ports (allowed: {banks})"
    )]
    FusedBank {
        /// The bank.
        bank: u8,
        /// The banks that work.
        banks: blackhole_pac::harvest::DramBanks,
    },
    /// More packet deliveries than one run may make ([`MAX_DELIVERIES`]).
    #[error(
        "--count {count}: the run would deliver {deliveries} NoC packets of at most 16 KiB \
         (packets x receivers; allowed: at most {MAX_DELIVERIES}, with a smaller --count, \
         --size or --rect)"
    )]
    TooManyDeliveries {
        /// The count given.
        count: u32,
        /// Packet deliveries the run would make.
        deliveries: u64,
    },
    /// `--linked` with a single multicast, which is never linked (the last of a linked run
    /// closes its path).
    #[error(
        "--linked with --count {count}: the last multicast of a linked run closes its path, so \
         a single one is not linked (allowed: --linked with --count 2 or more)"
    )]
    LinkedAlone {
        /// The count given.
        count: u32,
    },
    /// The simulated run failed: a refused request, a barrier that gave up, a kernel that did
    /// not finish. A bug of this command or of the simulator, not of the flags.
    #[error("the simulated run failed: {0}")]
    Run(String),
}

impl NocBenchError {
    /// The exit code: 2 for flags, 1 for a run that failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Run(_) => 1,
            _ => 2,
        }
    }
}
