//! A tiled matrix product's schedule through a dispatcher plugin, on the simulator:
//! `cargo run --release --example matmul_schedule -- --steps 4 --block 3x2`. See
//! `komorebi::app::matmul` for what it schedules and checks.

use std::process::ExitCode;

use clap::Parser;
use komorebi::app::matmul::{self, MatmulConfig};
use komorebi::cli::{self, parse_rect};
use komorebi::dispatch::DispatchConfig;
use komorebi::num::ranged;
use komorebi_hal::LogicalRect;

/// The data movement of C = A x B (SUMMA) over block groups of cores, with row write-backs that
/// depend on every block of their row, run through the dispatcher; every byte checked.
#[derive(Parser, Debug)]
#[command(name = "matmul_schedule", version, after_help = EXIT_CODES)]
struct Flags {
    /// Logical cores the product runs on: X0,Y0,COLUMNS,ROWS.
    #[arg(long, value_parser = parse_rect, default_value = "0,0,12,10")]
    rect: LogicalRect,
    /// Cores per block group, COLUMNSxROWS, each 1..=255 (must tile the rectangle).
    #[arg(long, value_parser = parse_block, default_value = "3x2")]
    block: (u8, u8),
    /// Steps of the inner dimension (1..=4096).
    #[arg(long, value_parser = ranged::<u32>(1, matmul::MAX_STEPS as u64), default_value_t = 4)]
    steps: u32,
    /// Data blocks per panel multicast (0..=32767).
    #[arg(long, value_parser = ranged::<u32>(0, 32_767), default_value_t = 4)]
    blocks_per_step: u32,
    /// Dispatcher worker threads. With more than one, which worker places what follows thread
    /// timing, so the simulated cycles vary from run to run (the bytes checked do not); with 1
    /// the run replays exactly (1..=64).
    #[arg(long, value_parser = ranged::<usize>(1, 64), default_value_t = 2)]
    workers: usize,
    /// Simulator seed (decimal or 0x-hex).
    #[arg(long, value_parser = ranged::<u64>(0, u64::MAX), default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
}

/// This program's exit codes (not `komorebi broadcast`'s: a step's timeout is one of its
/// failed commands).
const EXIT_CODES: &str = "Exit codes: 0 every command reported and every byte checked, 1 a \
     command failed (a give-up, a timeout or a short check: the summary names each), 2 bad \
     flags or a schedule that does not fit, 4 the simulator or the dispatcher could not run it.";

fn parse_block(s: &str) -> Result<(u8, u8), String> {
    const ALLOWED: &str = "allowed: COLUMNSxROWS such as 3x2, each 1..=255, decimal or 0x-hex";
    let n = |what: &str, v: &str| {
        komorebi::num::parse_in(v, 1, 255)
            .map(|v| v as u8)
            .map_err(|_| format!("{what} '{v}' is not a number 1..=255 ({ALLOWED})"))
    };
    // The separator is the one 'x' with a number on each side (a hex number has an 'x' too:
    // 0x3x0x2 is 3 by 2).
    let splits: Vec<(u8, u8)> = s
        .match_indices('x')
        .filter_map(|(at, _)| Some((n("", &s[..at]).ok()?, n("", &s[at + 1..]).ok()?)))
        .collect();
    match splits[..] {
        [block] => Ok(block),
        [] => {
            // Name the side that is wrong, at the first 'x'.
            let (c, r) = s
                .split_once('x')
                .ok_or_else(|| format!("no 'x' between COLUMNS and ROWS ({ALLOWED})"))?;
            Ok((n("COLUMNS", c)?, n("ROWS", r)?))
        }
        _ => Err(format!(
            "'{s}' splits into COLUMNS and ROWS more than one way ({ALLOWED})"
        )),
    }
}

fn main() -> ExitCode {
    let flags = match cli::parse_or_exit::<Flags>() {
        Ok(f) => f,
        Err(code) => return code,
    };
    let cfg = MatmulConfig {
        rect: flags.rect,
        block: flags.block,
        steps: flags.steps,
        blocks_per_step: flags.blocks_per_step,
        seed: flags.seed,
    };
    let dispatch = DispatchConfig {
        workers: flags.workers,
        ..DispatchConfig::default()
    };
    let bar = cli::progress_bar(matmul::commands(&cfg), "commands", !flags.json);
    let ran = matmul::run_with_progress(&cfg, &dispatch, &|n| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match ran {
        Ok(summary) => {
            let printed = cli::print_report(&summary, flags.json);
            if printed != ExitCode::SUCCESS {
                return printed;
            }
            if summary.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            match e {
                komorebi::app::broadcast::BroadcastError::Flag { .. } => ExitCode::from(2),
                _ => ExitCode::from(4),
            }
        }
    }
}
