//! `komorebi bench noc`: one data-movement pattern of tt-metal's data-movement tests
//! (`tests/tt_metal/tt_metal/data_movement/`), run once on a simulated Blackhole, with the
//! figure in tt-metal's units.
//!
//! # What it measures
//! One data-movement kernel on the sender core (komorebi's reader kernel, BRISC, for NoC 0; its
//! writer, NCRISC, for NoC 1: [`Role::mover`](komorebi_hal::Role::mover); tt-metal names them the
//! other way round, its DRAM tests reading on NoC 1 with `RISCV_1`) issues `--count` transactions of `--size` bytes back to back,
//! then waits once for all of them (a barrier: every write and multicast acknowledged, every
//! read landed). The figure is the kernel's own clock from just before the first issue to just
//! after the barrier: what tt-metal's kernel zone (`DeviceZoneScopedN`) around the same loop
//! measures, and what the simulator's calibration tests measure
//! (`backends/sim/tests/calibration.rs`). The simulator splits a transaction into NoC packets of
//! at most 16 KiB ([`MAX_PACKET_BYTES`](blackhole_pac::addr::MAX_PACKET_BYTES), tt-metal's
//! `NOC_MAX_BURST_SIZE`).
//!
//! | pattern | what the kernel does | `destinations` |
//! |---|---|---|
//! | `unicast` | writes to `--to` | 1 |
//! | `multicast` | multicasts to `--rect`; `--linked`: every multicast but the last keeps its path ([`WriteMode::linked`](komorebi_hal::noc::WriteMode::linked)); `--loopback`: a sender inside the rectangle receives too ([`WriteMode::with_loopback`](komorebi_hal::noc::WriteMode::with_loopback)) | the rectangle's receiving cores |
//! | `one-to-all` | writes `--count` transactions to each core of `--rect` but the sender, one core after another (column by column, the order tt-metal's host gives `one_to_all/kernels/sender_unicast.cpp`: `corerange_to_cores`, not row-wise) | 1 |
//! | `dram-read` | reads from DRAM bank `--bank` through the port tt-metal uses on the chosen NoC ([`dram_port`]) | 1 |
//!
//! # What it guarantees
//! * **Deterministic.** The simulator runs in virtual cycles without the adversary: the same
//!   flags give the same cycles on any machine, run after run.
//! * **Checked flags.** [`NocBench::new`] refuses, with a [`NocBenchError`] naming the flag and
//!   what is allowed, every combination that would not measure what it says: a flag the pattern
//!   does not take, a missing `--to` or `--rect`, a core or rectangle outside the logical grid
//!   of the harvest mask, a multicast with no receiver, a one-to-all with no core to write to,
//!   a run of more than [`MAX_DELIVERIES`] packet deliveries. Nothing panics on any input.
//! * **Raw coordinates of the NoC in use.** Logical cores go to the NoC through
//!   [`Geometry::noc_xy`](komorebi_broadcast::layout::Geometry::noc_xy) (the broadcast
//!   layout's mapping); on NoC 1 a rectangle's corners are
//!   mirrored and swapped, so its start stays at or before its end.
//! * **Buffers clear of the runtime.** The source is [`SRC_ADDR`] and the destination
//!   [`DST_ADDR`] on every core, each up to [`MAX_SIZE`] bytes, above the control block
//!   (`komorebi_kernel::abi`, `0x4000..0x5000`) and below tt-metal's usable L1 end.
//!
//! It measures the NoC only: the bytes moved are not checked (the simulator's own tests check
//! delivery). The write mode passes through to the simulator as given; how the simulator times
//! linked and loopback multicasts is the simulator's model (issue 17).

mod error;
mod flags;
mod plan;
mod run;

use std::process::ExitCode;

pub use error::NocBenchError;
pub use flags::{DRAM_ADDR, DST_ADDR, MAX_DELIVERIES, MAX_SIZE, NocBenchFlags, Pattern, SRC_ADDR};
pub use plan::{NocBench, dram_port};
pub use run::NocBenchReport;

use crate::cli::print_report;

/// What the exit codes of `komorebi bench noc` mean, for `--help`.
pub const EXIT_CODES: &str = "Exit codes: 0 ok, 1 the simulated run failed (a bug, not the \
     flags), 2 bad flags (one line on stderr naming the flag and what is allowed).";

/// `komorebi bench noc`: checks the flags, runs, prints the report (text or `--json`); the exit
/// code is 0, 2 for bad flags (one line on stderr), 1 for a run that failed.
pub fn command(flags: &NocBenchFlags) -> ExitCode {
    match NocBench::new(flags).and_then(|bench| bench.run()) {
        Ok(report) => print_report(&report, flags.json),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests;
