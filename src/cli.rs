//! Command-line pieces shared by the `komorebi` binary and the examples: flag parsers, one-line
//! error messages, and the `broadcast` command.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use blackhole_pac::harvest::HarvestMask;
use komorebi_hal::LogicalRect;

use crate::app::broadcast::{self, BroadcastConfig};

/// Parses a die-order harvest mask, decimal or `0x`-hex.
pub fn parse_harvest(s: &str) -> Result<HarvestMask, String> {
    let value = parse_u64(s).map_err(|_| format!("'{s}' is not a number (decimal or 0x-hex)"))?;
    let value = u32::try_from(value)
        .map_err(|_| format!("harvest mask {value:#x} has bits outside 0x3fff"))?;
    HarvestMask::new(value).map_err(|e| e.to_string())
}

/// Parses decimal or `0x`-prefixed hexadecimal.
pub fn parse_u64(s: &str) -> Result<u64, std::num::ParseIntError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
}

/// Parses `X0,Y0,COLUMNS,ROWS`.
pub fn parse_rect(s: &str) -> Result<LogicalRect, String> {
    let parts: Vec<_> = s.split(',').map(|p| p.trim().parse::<u8>()).collect();
    match parts.as_slice() {
        [Ok(x0), Ok(y0), Ok(c), Ok(r)] => Ok(LogicalRect::new(*x0, *y0, *c, *r)),
        _ => Err(format!(
            "'{s}' is not X0,Y0,COLUMNS,ROWS (four numbers 0..=255)"
        )),
    }
}

/// clap's error as one line: its first line, plus the missing argument or the allowed values
/// when clap knows them.
pub fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.to_string();
    let mut line = text
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .to_string();
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

/// Parses `T` from the process arguments; on bad flags prints one line and gives exit code 2
/// (help and version print and give 0).
pub fn parse_or_exit<T: clap::Parser>() -> Result<T, ExitCode> {
    match T::try_parse() {
        Ok(t) => Ok(t),
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line(&e));
            Err(ExitCode::from(2))
        }
        Err(e) => {
            let _ = e.print();
            Err(ExitCode::SUCCESS)
        }
    }
}

/// Prints `text` on stdout; a closed stdout (`| head`) is not an error.
pub fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: could not write the output: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

/// Prints `value` as one JSON object, or as text.
pub fn print_report<T: serde::Serialize + std::fmt::Display>(value: &T, json: bool) -> ExitCode {
    if !json {
        return print(&value.to_string());
    }
    match serde_json::to_string(value) {
        Ok(s) => print(&s),
        Err(e) => {
            eprintln!("error: could not encode the report as JSON: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--along`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlongFlag {
    /// Broadcasts along rows only (A, NoC0).
    Row,
    /// Broadcasts along columns only (W, NoC1).
    Column,
    /// Both at once.
    Both,
}

/// The flags of `komorebi broadcast` and `examples/broadcast.rs`.
#[derive(clap::Args, Debug, Clone)]
pub struct BroadcastFlags {
    /// The rectangle X0,Y0,COLUMNS,ROWS in logical core coordinates (also the command's group).
    #[arg(long, value_parser = parse_rect, default_value = "0,0,12,10")]
    pub rect: LogicalRect,
    /// Blocks per broadcast per job (0..=32767).
    #[arg(long, default_value_t = 16)]
    pub blocks: u32,
    /// Pages per block.
    #[arg(long, default_value_t = 4)]
    pub pages: u16,
    /// Bytes per page (a multiple of 64).
    #[arg(long, default_value_t = 2048)]
    pub page_size: u32,
    /// Window: buffer slots (1..=8).
    #[arg(long, default_value_t = 2)]
    pub window: u8,
    /// Jobs (commands) to run one after another on the same cores.
    #[arg(long, default_value_t = 8)]
    pub jobs: u32,
    /// Which broadcasts each job carries.
    #[arg(long, value_enum, default_value = "both")]
    pub along: AlongFlag,
    /// Die-order harvest mask of the simulated chip, decimal or 0x-hex, 0..=0x3fff.
    #[arg(long, value_parser = parse_harvest, default_value = "0x3000")]
    pub harvest: HarvestMask,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Reorder everything the hardware does not order (seeded by --seed).
    #[arg(long)]
    pub adversarial: bool,
    /// Cycles any single wait may last.
    #[arg(long, default_value_t = 1_000_000)]
    pub wait_limit: u64,
    /// Write a Chrome/Perfetto trace of every transfer and wait to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Inject a fault into the first job: `KIND:X,Y[:BLOCK]` with X,Y logical core coordinates
    /// and KIND one of stall-dm, stall-compute, stall-sender-compute, drop-marker, drop-valid,
    /// bad-words, host-stop. May be given more than once.
    #[arg(long, value_name = "KIND:X,Y[:BLOCK]")]
    pub fault: Vec<broadcast::FaultSpec>,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    /// Which device runs the program.
    pub device: DeviceFlags,
}

/// Which device runs a program: `--device` and `--firmware`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DeviceFlags {
    /// `sim` (the simulator, the default), `pcie-sim` (the simulator presented as a PCIe card,
    /// driven through komorebi-pcie as a card is) or a card's device node
    /// (`/dev/tenstorrent/0`).
    #[arg(long, value_name = "sim|pcie-sim|PATH", default_value = "sim")]
    pub device: broadcast::DeviceChoice,
    /// Directory with the firmware ELF files `reader`, `writer`, `compute` (a card's default:
    /// the firmware build's output; `pcie-sim`'s: the native images).
    #[arg(long, value_name = "DIR")]
    pub firmware: Option<PathBuf>,
    /// What the simulated card's cores run (`--device pcie-sim` only): `native` (the native
    /// Rust kernels, the default) or `firmware` (the firmware ELF files, executed on the
    /// simulator's RISC-V cores against register-level NIUs; --firmware DIR or the firmware
    /// build's output).
    #[arg(long, value_name = "native|firmware", default_value = "native")]
    pub exec: crate::host::backend::Exec,
}

/// How `komorebi broadcast` and the example run their jobs: through the dispatcher, or the test
/// feeder. (`inspect` always runs the feeder and takes none of these.)
#[derive(clap::Args, Debug, Clone)]
pub struct RunFlags {
    /// Dispatcher worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Dispatcher scheduling slots per group (1 or 2).
    #[arg(long, default_value_t = 2)]
    pub depth: usize,
    /// Run the jobs through the test feeder (one at a time, no dispatcher) instead.
    #[arg(long)]
    pub feeder: bool,
}

impl RunFlags {
    /// The dispatcher configuration these flags describe.
    pub fn dispatch(&self) -> crate::dispatch::DispatchConfig {
        crate::dispatch::DispatchConfig {
            workers: self.workers,
            depth: self.depth,
            ..crate::dispatch::DispatchConfig::default()
        }
    }
}

impl BroadcastFlags {
    /// The program configuration these flags describe.
    pub fn config(&self) -> BroadcastConfig {
        BroadcastConfig {
            rect: self.rect,
            blocks: self.blocks,
            pages: self.pages,
            page_size: self.page_size,
            window: self.window,
            jobs: self.jobs,
            rows: self.along != AlongFlag::Column,
            columns: self.along != AlongFlag::Row,
            harvest: self.harvest,
            seed: self.seed,
            adversarial: self.adversarial,
            wait_limit: self.wait_limit,
            trace: self.trace.clone(),
            faults: self.fault.clone(),
            device: self.device.device.clone(),
            firmware: self.device.firmware.clone(),
            exec: self.device.exec,
        }
    }
}

fn progress_bar(total: u64, what: &str, show: bool) -> Option<indicatif::ProgressBar> {
    (show && total > 1 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what} {{elapsed}}"
        )) {
            bar.set_style(style);
        }
        bar
    })
}

/// Runs the broadcast program with `flags`, then prints (or `--json`s) every core's broadcast
/// areas and draws `picture` if given; the exit code is the run's.
pub fn inspect(flags: &BroadcastFlags, picture: Option<&std::path::Path>) -> ExitCode {
    if let Some(p) = picture {
        if !matches!(p.extension().and_then(|e| e.to_str()), Some("svg" | "png")) {
            eprintln!(
                "error: --picture {}: the picture must be a .svg or .png file",
                p.display()
            );
            return ExitCode::from(2);
        }
    }
    let (summary, session) = match broadcast::run_session(&flags.config(), |_| {}) {
        Ok(r) => r,
        Err(e) => return run_error(&e),
    };
    let view = match crate::inspect::inspect(&session) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(p) = picture {
        if let Err(e) = view.write_picture(p) {
            eprintln!("error: --picture {e}");
            return ExitCode::FAILURE;
        }
    }
    let printed = print_report(&view, flags.json);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    ExitCode::from(summary.exit_code())
}

/// Runs `seeds` exploration cases from `start`; exit code 0 when all pass, 1 otherwise.
pub fn explore(seeds: u64, start: u64, device: &broadcast::DeviceChoice, json: bool) -> ExitCode {
    let bar = progress_bar(seeds, "cases", !json);
    let out = crate::explore::explore(start, seeds, device, |_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let printed = print_report(&out, json);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    if out.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs the broadcast program with `flags`; prints the summary or JSON; returns the exit code
/// (0 all checked, 1 data mismatch, 3 timeout, 2 bad flags).
pub fn broadcast(flags: &BroadcastFlags, run: &RunFlags) -> ExitCode {
    let cfg = flags.config();
    let bar = (!flags.json && flags.jobs > 1 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(flags.jobs as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} jobs {elapsed}")
        {
            bar.set_style(style);
        }
        bar
    });
    let tick = |_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let result = if run.feeder {
        broadcast::run(&cfg, tick)
    } else {
        broadcast::run_dispatched(&cfg, &run.dispatch(), &tick)
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match result {
        Ok(summary) => {
            let code = summary.exit_code();
            let printed = print_report(&summary, flags.json);
            if printed != ExitCode::SUCCESS {
                return printed;
            }
            ExitCode::from(code)
        }
        Err(e) => run_error(&e),
    }
}

/// Exit code of a device that cannot be used (missing, busy, too old, hung, ...).
pub const EXIT_DEVICE: u8 = 4;

/// Prints a run's error on one line; exit 4 when the device cannot be used, 2 otherwise.
pub fn run_error(e: &broadcast::BroadcastError) -> ExitCode {
    eprintln!("error: {e}");
    if e.device_unusable() {
        ExitCode::from(EXIT_DEVICE)
    } else {
        ExitCode::from(2)
    }
}
