//! The `komorebi` command-line tool.

use std::io::Write as _;
use std::process::ExitCode;

use blackhole_pac::harvest::HarvestMask;
use clap::{Parser, Subcommand};
use komorebi::grid_report::grid_report;
use komorebi::layout_report::layout_report;
use komorebi_broadcast::args::{Along, LogicalRect};
use komorebi_broadcast::layout::Noc;

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
    /// Print the broadcasts of a rectangle: cores in rank order, sender, multicast corners.
    Layout {
        /// Die-order harvest mask, decimal or 0x-hex, 0..=0x3fff.
        #[arg(long, value_parser = parse_harvest, default_value = "0x3000")]
        harvest: HarvestMask,
        /// The rectangle X0,Y0,COLUMNS,ROWS in logical core coordinates.
        #[arg(long, value_parser = parse_rect)]
        rect: LogicalRect,
        /// Broadcast along rows (inside panels) or columns.
        #[arg(long, value_enum)]
        along: AlongArg,
        /// NoC carrying the broadcasts: 0 (reader kernel) or 1 (writer kernel).
        #[arg(long, value_parser = clap::value_parser!(u8).range(0..=1), default_value = "0")]
        noc: u8,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `--along`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum AlongArg {
    Row,
    Column,
}

impl From<AlongArg> for Along {
    fn from(a: AlongArg) -> Self {
        match a {
            AlongArg::Row => Along::Row,
            AlongArg::Column => Along::Column,
        }
    }
}

/// Parses `X0,Y0,COLUMNS,ROWS`.
fn parse_rect(s: &str) -> Result<LogicalRect, String> {
    let parts: Vec<_> = s.split(',').map(|p| p.trim().parse::<u8>()).collect();
    match parts.as_slice() {
        [Ok(x0), Ok(y0), Ok(c), Ok(r)] => Ok(LogicalRect::new(*x0, *y0, *c, *r)),
        _ => Err(format!(
            "'{s}' is not X0,Y0,COLUMNS,ROWS (four numbers 0..=255)"
        )),
    }
}

/// Prints `value` as one JSON object, or as text. A closed stdout (`| head`) is not an error.
fn print_report<T: serde::Serialize + std::fmt::Display>(value: &T, json: bool) -> ExitCode {
    let text = if json {
        match serde_json::to_string(value) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: could not encode the report as JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        value.to_string()
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: could not write the report: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

/// clap's error as one line: its first line, plus the allowed values when clap knows them.
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut line = text
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .to_string();
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::MissingRequiredArgument {
        if let Some(ContextValue::Strings(args)) = e.get(ContextKind::InvalidArg) {
            line.push(' ');
            line.push_str(&args.join(" "));
        }
    }
    if let Some(ContextValue::Strings(values)) = e.get(ContextKind::ValidValue) {
        line.push_str(&format!(" (allowed: {})", values.join(", ")));
    }
    line
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
            // Bad flags: one line naming what was wrong and what is allowed, exit 2.
            eprintln!("{}", one_line(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help / --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match cli.command {
        Command::Grid { harvest, json } => print_report(&grid_report(harvest), json),
        Command::Layout {
            harvest,
            rect,
            along,
            noc,
            json,
        } => {
            let noc = if noc == 0 { Noc::Noc0 } else { Noc::Noc1 };
            match layout_report(u32::from(harvest.bits()), rect, along.into(), noc) {
                Ok(report) => print_report(&report, json),
                Err(e) => {
                    eprintln!("error: --rect {rect}: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
