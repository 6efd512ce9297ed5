//! 03_broadcast on the simulator: `cargo run --release --example broadcast -- --rect 0,0,12,10
//! --blocks 16 --pages 4 --window 2 --jobs 8`. The same program and flags as
//! `komorebi broadcast`; see `komorebi::app::broadcast` for what it does.

use std::process::ExitCode;

use clap::Parser;
use komorebi::cli::{self, BroadcastFlags, ChipFlags, RunFlags};

/// 03_broadcast: jobs of two broadcasts (A along rows on NoC0, W along columns on NoC1) over a
/// rectangle of Tensix cores, every byte checked by compute (`--check none`: every block popped
/// unread, so the run measures the protocol and the NoC).
#[derive(Parser, Debug)]
#[command(name = "broadcast", version, after_help = cli::EXIT_CODES)]
struct Example {
    #[command(flatten)]
    flags: BroadcastFlags,
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    spread: ChipFlags,
}

fn main() -> ExitCode {
    match cli::parse_or_exit::<Example>() {
        Ok(e) => cli::broadcast(&e.flags, &e.run, &e.spread),
        Err(code) => code,
    }
}
