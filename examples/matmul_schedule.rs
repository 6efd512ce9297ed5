//! A tiled matrix product's schedule through a dispatcher plugin, on the simulator:
//! `cargo run --release --example matmul_schedule -- --steps 4 --block 3x2`. See
//! `komorebi::app::matmul` for what it schedules and checks.

use std::process::ExitCode;

use clap::Parser;
use komorebi::app::matmul::{self, MatmulConfig};
use komorebi::cli::{self, parse_rect};
use komorebi::dispatch::DispatchConfig;
use komorebi_hal::LogicalRect;

/// The data movement of C = A x B (SUMMA) over block groups of cores, with row write-backs that
/// depend on every block of their row, run through the dispatcher; every byte checked.
#[derive(Parser, Debug)]
#[command(name = "matmul_schedule", version)]
struct Flags {
    /// Logical cores the product runs on: X0,Y0,COLUMNS,ROWS.
    #[arg(long, value_parser = parse_rect, default_value = "0,0,12,10")]
    rect: LogicalRect,
    /// Cores per block group, COLUMNSxROWS (must tile the rectangle).
    #[arg(long, value_parser = parse_block, default_value = "3x2")]
    block: (u8, u8),
    /// Steps of the inner dimension.
    #[arg(long, default_value_t = 4)]
    steps: u32,
    /// Data blocks per panel multicast.
    #[arg(long, default_value_t = 4)]
    blocks_per_step: u32,
    /// Dispatcher worker threads. With more than one, which worker places what follows thread
    /// timing, so the simulated cycles vary from run to run (the bytes checked do not); with 1
    /// the run replays exactly.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Simulator seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
}

fn parse_block(s: &str) -> Result<(u8, u8), String> {
    let (c, r) = s
        .split_once('x')
        .ok_or_else(|| format!("{s}: expected COLUMNSxROWS, e.g. 3x2"))?;
    let n = |v: &str| {
        v.parse::<u8>()
            .map_err(|e| format!("{s}: {v}: {e} (allowed: 1..=255)"))
    };
    Ok((n(c)?, n(r)?))
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
    match matmul::run(&cfg, &dispatch) {
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
            ExitCode::from(2)
        }
    }
}
