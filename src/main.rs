//! The `komorebi` command-line tool.

use std::process::ExitCode;

use blackhole_pac::harvest::HarvestMask;
use clap::{Parser, Subcommand};
use komorebi::grid_report::grid_report;

#[derive(Parser, Debug)]
#[command(
    name = "komorebi",
    version,
    about = "komorebi: persistent-kernel runtime for Tenstorrent Blackhole"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the chip map for a harvest mask: enabled columns, logical -> NoC0/NoC1, every tile.
    Grid {
        /// Die-order harvest mask (bit i = column at NoC0 x [1,16,2,15,3,14,4,13,5,12,6,11,7,10][i]),
        /// decimal or 0x-hex, 0..=0x3fff. Default: 0x3000 (p100 / p150, 120 Tensix).
        #[arg(long, value_parser = parse_harvest, default_value = "0x3000")]
        harvest: HarvestMask,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Parses a die-order harvest mask.
fn parse_harvest(s: &str) -> Result<HarvestMask, String> {
    let value = parse_u32(s).map_err(|_| format!("'{s}' is not a number (decimal or 0x-hex)"))?;
    HarvestMask::new(value).map_err(|e| e.to_string())
}

/// Parses decimal or `0x`-prefixed hexadecimal.
fn parse_u32(s: &str) -> Result<u32, std::num::ParseIntError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // Bad flags: one line naming what was wrong, exit 2.
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{line}");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help / --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match cli.command {
        Command::Grid { harvest, json } => {
            let report = grid_report(harvest);
            if json {
                match serde_json::to_string(&report) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: could not encode the report as JSON: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                println!("{report}");
            }
        }
    }
    ExitCode::SUCCESS
}
