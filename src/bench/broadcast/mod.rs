//! `komorebi bench broadcast`: the 03_broadcast program (the shape of `komorebi broadcast`)
//! run over a sweep of windows x pages for each protocol, with each run's cycles, resource
//! bound, binding resource and efficiency, and how many times faster komorebi's protocol is
//! than the handshake at each point (issue 18).
//!
//! # Rows
//! One row per protocol x window x pages, in that nesting order, each list in the order given
//! (`--protocols komorebi,handshake --windows 1,2,4,8 --pages 1,4,8`: 24 rows, the 12 komorebi
//! rows first). Each row is one run of the shape with that protocol, window and pages, run as
//! `komorebi broadcast` runs it with the same flags (through the dispatcher unless `--feeder`),
//! on its own simulator, so rows share nothing and up to `--threads` of them run at once
//! without changing a figure: the simulator is deterministic per run (a card's rows run one
//! at a time: it holds one session). A row records
//! * `cycles`, `bound_cycles`, `binding` and `efficiency` (`bound_cycles / cycles`), as
//!   [`BroadcastSummary`](crate::app::broadcast::BroadcastSummary) has them;
//! * `speedup`, on a komorebi row: the handshake row's cycles at the same window and pages over
//!   its own, so 2.0 means komorebi moved the same blocks in half the cycles. `null` when the
//!   handshake row is not in the bench or either run did not succeed (a failed run's cycles
//!   are no performance figure), and on every handshake row;
//! * `ok` and `exit_code`: a run that timed out, gave up or saw a mismatch keeps its figures,
//!   with `efficiency` (and any speedup with it) `null`, `ok: false` and the exit code
//!   `komorebi broadcast` would give. The bench's exit code is 0 when every row is ok, else
//!   the worst row's (3 over 1).
//!
//! # On the firmware
//! With `--device pcie-sim --exec firmware` every row runs the firmware ELF files on the
//! simulator's RISC-V cores, and then again on the native kernels: the row gives both
//! (`native_cycles`) and `firmware_ratio` (firmware cycles / native cycles), the table two more
//! columns, the plot a grey native line beside each firmware line. Each protocol's rows load
//! its own images (an image carries one handler: code room), the handshake's built without
//! logging.
//!
//! # Why `--check none` by default
//! With `--check full` compute reads and checks every word it receives, at 6 cycles a word
//! on the simulator (docs/decisions.md, D13, D23 and D37: what the firmware's checking loop costs), and
//! that checking binds every run of the 03 shape whatever the protocol: both protocols would
//! show the same compute-bound cycles. The bench compares the protocols and the NoC, so by
//! default compute takes and pops every block in protocol order without reading a word;
//! every protocol step is still checked (a give-up or timeout fails the row). `--check full`
//! is there to see the checking's cost.
//!
//! # What it refuses
//! Everything before the first run, exit 2 with one line naming the flag: a bad list (empty,
//! a value out of range, not a number or protocol, given twice; [`ListError`]), a window x
//! pages over the buffer's limit, a row the program refuses (a protocol whose handler the
//! `--firmware` images do not carry, a buffer too large for L1, ...), a `--plot` that is not an
//! `.svg` path or cannot be written.
//! `--trace` and `--fault` (one run's outputs and faults) are not flags of the bench.
//!
//! # Output
//! Text: the shape, a table with one line per row, and a line per protocol with its mean
//! efficiency; `--json`: one object, `{"bench": "broadcast", ...the shape..., "rows": [...]}`
//! ([`BroadcastBenchReport`]), and nothing else on stdout. `--plot FILE.svg` draws the
//! efficiency against the window, one line per protocol and pages (module `plot`, an SVG
//! written by hand). A progress bar counts the runs on stderr when stderr is a terminal
//! (never with `--json`).

mod error;
mod flags;
mod plan;
pub mod plot;
mod run;

use std::process::ExitCode;

pub use error::{BroadcastBenchError, ListError};
pub use flags::{
    BroadcastBenchFlags, MAX_THREADS, ValueList, parse_pages, parse_protocols, parse_windows,
};
pub use plan::{BroadcastBench, RowSpec, Runner, row_specs};
pub use run::{BenchRow, BroadcastBenchReport};

use crate::cli::{print_report, progress_bar};

/// What the exit codes of `komorebi bench broadcast` mean, for `--help`.
pub const EXIT_CODES: &str = "Exit codes: 0 every run ok, 1 a run saw a data mismatch or gave \
     up, 2 bad flags or a --plot path that cannot be written (one line on stderr naming the \
     flag and what is allowed; checked before the first run), 3 a run timed out (the worst \
     row's code wins), 4 a device that cannot be used.";

/// `komorebi bench broadcast`: checks the flags, runs every row (with a progress bar on a
/// terminal), prints the report (text or `--json`) and draws `--plot`; the exit code is 0, the
/// worst failed row's, or 2 (4 for a device that cannot be used) with one line on stderr.
pub fn command(flags: &BroadcastBenchFlags) -> ExitCode {
    let bench = match BroadcastBench::new(flags) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let bar = progress_bar(bench.rows().len() as u64, "runs", !flags.json);
    let ran = bench.run(&|| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let report = match ran {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let printed = print_report(&report, flags.json);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    if let Some(path) = &flags.plot
        && let Err(e) = std::fs::write(path, report.chart().to_svg())
    {
        eprintln!("error: --plot {}: cannot be written: {e}", path.display());
        return ExitCode::from(2);
    }
    ExitCode::from(report.exit_code())
}

fn fail(e: &BroadcastBenchError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(e.exit_code())
}

#[cfg(test)]
mod tests;
