//! Command-line pieces shared by the `komorebi` binary and the examples: flag parsers, one-line
//! error messages, and the `broadcast` command.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use komorebi_broadcast::args::{MAX_BLOCKS, MAX_BUFFER_PAGES, MAX_WINDOW};
use komorebi_hal::{LogicalRect, LogicalXy};
use komorebi_sim::riscv::SpeedUp;

use crate::app::broadcast::{self, BroadcastConfig};

mod args;
mod harvest;
mod resources;
mod run_flags;
pub use harvest::{
    chip_harvest, harvest_word, no_wormhole_fused_dram, parse_harvest, parse_row_harvest,
};
pub use resources::{check_disk, check_memory, check_output, check_outputs};
pub use run_flags::{ChipFlags, DEFAULT_RANK_LIMIT, RunFlags};

pub use crate::num::parse_u64;
use crate::num::ranged;

/// Parses `X0,Y0,COLUMNS,ROWS` (each decimal or `0x`-hex, 0..=255).
pub fn parse_rect(s: &str) -> Result<LogicalRect, String> {
    let parts: Vec<_> = s
        .split(',')
        .map(|p| crate::num::parse_in(p, 0, 255))
        .collect();
    match parts.as_slice() {
        [Ok(x0), Ok(y0), Ok(c), Ok(r)] => {
            Ok(LogicalRect::new(*x0 as u8, *y0 as u8, *c as u8, *r as u8))
        }
        _ => Err("expected X0,Y0,COLUMNS,ROWS (four numbers 0..=255)".into()),
    }
}

/// Parses `X,Y`, a core's logical coordinates (each decimal or `0x`-hex, 0..=255).
pub fn parse_xy(s: &str) -> Result<LogicalXy, String> {
    let parts: Vec<_> = s
        .split(',')
        .map(|p| crate::num::parse_in(p, 0, 255))
        .collect();
    match parts.as_slice() {
        [Ok(x), Ok(y)] => Ok(LogicalXy::new(*x as u8, *y as u8)),
        _ => Err("expected X,Y (two numbers 0..=255, logical core coordinates)".into()),
    }
}

/// Parses `--page-size`: 64..=1048576, a multiple of 64.
pub fn parse_page_size(s: &str) -> Result<u32, String> {
    let v = crate::num::parse_in(s, 64, 1 << 20)?;
    if v % 64 != 0 {
        return Err("not a multiple of 64 (allowed: 64..=1048576, a multiple of 64)".into());
    }
    Ok(v as u32)
}

/// What the exit codes of the programs mean, for `--help`.
pub const EXIT_CODES: &str = "Exit codes: 0 ok (every protocol step succeeded and, with --check \
     full, every byte checked), 1 data mismatch (or another give-up), 2 bad flags or an output \
     path that cannot be written, 3 timeout, 4 a device that cannot be used.";

/// clap's error as one line: its first line, the missing arguments or the allowed values when
/// clap knows them, its tips (a similar argument, ...) and where to look for more (`--help`).
pub fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.to_string();
    let mut line = text
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim_end()
        .to_string();
    if e.kind() == ErrorKind::MissingRequiredArgument
        && let Some(ContextValue::Strings(args)) = e.get(ContextKind::InvalidArg)
    {
        line.push(' ');
        line.push_str(&args.join(" "));
    }
    if let Some(ContextValue::Strings(values)) = e.get(ContextKind::ValidValue)
        && !values.is_empty()
    {
        line.push_str(&format!(" (allowed: {})", values.join(", ")));
    }
    let mut extra: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tip:"))
        .map(str::to_string)
        .collect();
    if let Some(more) = text
        .lines()
        .find_map(|l| l.split_once("For more information, "))
    {
        extra.push(more.1.trim_end_matches('.').to_string());
    }
    if !extra.is_empty() {
        line.push_str(&format!("; {}", extra.join("; ")));
    }
    line
}

/// Parses `T` from the process arguments; on bad flags prints one line and gives exit code 2;
/// with no arguments at all prints the usage and the subcommands (exit 2); `--help` and
/// `--version` print and give 0, or 1 when their output cannot be written.
pub fn parse_or_exit<T: clap::Parser>() -> Result<T, ExitCode> {
    use clap::error::ErrorKind;
    // A negative number is a value, so its flag's parser names the flag and what it allows
    // (clap would take `-5` for an unknown flag).
    fn negative_numbers_are_values(command: clap::Command) -> clap::Command {
        command
            .allow_negative_numbers(true)
            .mut_subcommands(negative_numbers_are_values)
    }
    let parsed = negative_numbers_are_values(T::command())
        .try_get_matches_from(args::values_joined(std::env::args_os()))
        .and_then(|mut m| T::from_arg_matches_mut(&mut m));
    match parsed {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Err(ExitCode::from(2))
        }
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line(&e));
            Err(ExitCode::from(2))
        }
        Err(e) => match e.print() {
            // `--help` or `--version` whose output could not be written.
            Err(w) if w.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("error: could not write the output: {w}");
                Err(ExitCode::FAILURE)
            }
            _ => Err(ExitCode::SUCCESS),
        },
    }
}

/// Prints `text` on stdout, ending in one newline whether or not it ends in one; a closed stdout
/// (`| head`) is not an error.
pub fn print(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", text.strip_suffix('\n').unwrap_or(text)) {
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

/// `--check`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFlag {
    /// Compute reads every word of every page it receives and compares it with the pattern.
    Full,
    /// Compute reads no word: it takes and pops every block in protocol order only.
    None,
}

/// `--protocol`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolFlag {
    /// komorebi's broadcast.
    Komorebi,
    /// The tt-metal-style handshake peer.
    Handshake,
}

/// The flags of `komorebi broadcast` and `examples/broadcast.rs`.
#[derive(clap::Args, Debug, Clone)]
pub struct BroadcastFlags {
    /// The shape of the run (shared with `komorebi bench broadcast`).
    #[command(flatten)]
    pub shape: ShapeFlags,
    /// Pages per block (1..=65535; window x pages at most 65535).
    #[arg(long, value_parser = ranged::<u16>(1, MAX_BUFFER_PAGES as u64), default_value_t = 4)]
    pub pages: u16,
    /// Window: buffer slots (1..=8).
    #[arg(long, value_parser = ranged::<u8>(1, MAX_WINDOW as u64), default_value_t = 2)]
    pub window: u8,
    /// What compute does with the blocks it receives. `full`: reads every word of every page
    /// and compares it with the pattern the host wrote (a wrong byte is exit 1). `none`: reads
    /// no word, only takes and pops every block in protocol order, so the run measures the
    /// protocol and the NoC, not the checking (on the simulator compute is then charged nothing
    /// for reading). With `none` exit 0 still means every protocol step succeeded (every block
    /// announced, received and popped in order, every DONE marker and acknowledgement, no
    /// give-up, no timeout), but promises nothing of the bytes (`checked_bytes` is 0).
    #[arg(long, value_enum, default_value = "full")]
    pub check: CheckFlag,
    /// Which protocol moves the blocks: `komorebi` (this crate's broadcast: VALID and DONE
    /// markers over a window of slots) or `handshake` (the peer: a tt-metal-style handshake,
    /// receivers signal ready per block, the sender waits for all, multicasts the data and then
    /// a flag). The same shape, buffers, data and checks either way. `handshake` runs without
    /// `--fault`; on the firmware it loads images of its own, built without logging.
    #[arg(long, value_enum, default_value = "komorebi")]
    pub protocol: ProtocolFlag,
    /// Write a Chrome/Perfetto trace of every transfer and wait to FILE (the simulator only:
    /// refused on ttsim and a card).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Profile the firmware cores (`--device pcie-sim --exec firmware` only): cycles by
    /// function and call stack, named from the firmware ELF files; folded stacks (one line per
    /// core and stack) to FILE, a flame graph of each kernel's cores to FILE.svg, and the ten
    /// costliest functions of each kernel in the summary.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// A what-if run (`--device pcie-sim --exec firmware` only): the code of every firmware
    /// function whose demangled name contains FUNCTION (as a `--profile` summary shows it;
    /// repeatable) runs `--speed-up-by` times faster. Code the run waits for shortens it; code
    /// off its critical path does not, however much of a profile it takes.
    #[arg(long, value_name = "FUNCTION")]
    pub speed_up: Vec<String>,
    /// The factor of `--speed-up` (2..=64): the cycles of that code's instructions, and the
    /// latencies of their results, are divided by it.
    #[arg(
        long,
        value_name = "N",
        requires = "speed_up",
        value_parser = ranged::<u32>(SpeedUp::MIN_FACTOR.into(), SpeedUp::MAX_FACTOR.into()),
        default_value_t = SpeedUp::MIN_FACTOR
    )]
    pub speed_up_by: u32,
    /// Read every kernel's log after the run: with `--exec firmware` (pcie-sim, ttsim or a card)
    /// each core's ring, decoded against the firmware's ELF files (defmt); with the native
    /// kernels the lines they logged. Each line with its tile, kernel, the core's cycle and
    /// level, and how many lines a full ring lost. Printed with the report (and under `log` in
    /// the JSON), or written to FILE. The images log warnings and errors (every give-up and
    /// refusal) unless built with `DEFMT_LOG` set lower.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub log: Option<PathBuf>,
    /// Print the cores' new log lines to standard error after each job, as the run goes: read as
    /// `--log` reads them at the end, each line once, as `job J: ` and the line. A job that timed
    /// out is followed when the host gives up on it, so a stalled core's give-ups show before the
    /// run ends. With `--log` or without.
    #[arg(long)]
    pub log_follow: bool,
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

/// The shape of a 03_broadcast run that `komorebi broadcast` and `komorebi bench broadcast`
/// share: everything but the window and pages (which the bench sweeps), what compute checks,
/// the protocol, the device, and the outputs and faults of a single run.
#[derive(clap::Args, Debug, Clone)]
pub struct ShapeFlags {
    /// The rectangle X0,Y0,COLUMNS,ROWS in logical core coordinates (also the command's group):
    /// each 0..=255, and inside the logical grid of --harvest (12 x 10 for 0x3000). Default:
    /// 0,0,12,10 (a p150's whole grid), or with --chip wormhole its whole grid (0,0,8,10 less
    /// the rows --harvest takes).
    #[arg(long, value_parser = parse_rect)]
    pub rect: Option<LogicalRect>,
    /// Blocks per broadcast per job (0..=32767).
    #[arg(long, value_parser = ranged::<u32>(0, MAX_BLOCKS as u64), default_value_t = 16)]
    pub blocks: u32,
    /// Bytes per page (64..=1048576, a multiple of 64).
    #[arg(long, value_parser = parse_page_size, default_value_t = 2048)]
    pub page_size: u32,
    /// Jobs (commands) to run one after another on the same cores (1..=4294967295).
    #[arg(long, value_parser = ranged::<u32>(1, u32::MAX as u64), default_value_t = 8)]
    pub jobs: u32,
    /// Which broadcasts each job carries.
    #[arg(long, value_enum, default_value = "both")]
    pub along: AlongFlag,
    /// The chip: blackhole (every device), or wormhole (Wormhole B0: the simulator's native
    /// kernels, or its firmware, built with the `wormhole` feature, on ttsim's `wh` build).
    #[arg(long, value_parser = crate::chip::parse_chip, default_value = "blackhole")]
    pub chip: crate::chip::ChipKind,
    /// Harvest mask of the simulated chip, decimal or 0x-hex: a Blackhole's die-order Tensix
    /// columns, 0..=0x3fff (default 0x3000, a p150), or with --chip wormhole its Tensix rows in
    /// tt-umd's order, 0..=0x3ff (default 0); at least one bit clear. ttsim and a card report
    /// their own: another mask is refused there.
    #[arg(long, value_name = "MASK")]
    pub harvest: Option<String>,
    /// The simulated chip's fused DRAM bank, 0..=7 (default: none, all 8 banks work; a p100
    /// has one). The run reads and writes the other banks only; ttsim and a card report their
    /// own (ARC telemetry ENABLED_GDDR): refused there.
    #[arg(long, value_name = "BANK", value_parser = ranged::<u8>(0, 7))]
    pub fused_dram: Option<u8>,
    /// Seed of the simulation, decimal or 0x-hex (0.., any 64-bit number); refused on ttsim and a
    /// card, whose schedule is their own.
    #[arg(long, value_parser = ranged::<u64>(0, u64::MAX), default_value_t = 0)]
    pub seed: u64,
    /// Reorder everything the hardware does not order (seeded by --seed); the simulator only.
    #[arg(long)]
    pub adversarial: bool,
    /// Device cycles any single wait may last (0.., any 64-bit number, decimal or 0x-hex).
    /// Default: the shape's own, the larger of 1,000,000 and 4 x window x pages x (400 + 2 x
    /// page size), what compute may take over a window of blocks four times over.
    #[arg(long, value_parser = ranged::<u64>(0, u64::MAX))]
    pub wait_limit: Option<u64>,
}

impl ShapeFlags {
    /// The program configuration of this shape on `device`: no trace, no fault, and the window,
    /// pages, check and protocol of [`BroadcastConfig::default`], for the caller to set. The
    /// error is `--harvest`'s one line: a mask the chip cannot have.
    pub fn config(&self, device: &DeviceFlags) -> Result<BroadcastConfig, String> {
        let (harvest, row_harvest) = chip_harvest(self.chip, self.harvest.as_deref())?;
        Ok(BroadcastConfig {
            // A Wormhole's whole grid: its 8 columns, the rows --harvest leaves.
            rect: self.rect.unwrap_or(match self.chip {
                crate::chip::ChipKind::Blackhole => LogicalRect::new(0, 0, 12, 10),
                crate::chip::ChipKind::Wormhole => {
                    LogicalRect::new(0, 0, 8, 10 - row_harvest.bits().count_ones() as u8)
                }
            }),
            blocks: self.blocks,
            page_size: self.page_size,
            jobs: self.jobs,
            rows: self.along != AlongFlag::Column,
            columns: self.along != AlongFlag::Row,
            harvest,
            row_harvest,
            chip: self.chip,
            fused_dram: self.fused_dram,
            seed: self.seed,
            adversarial: self.adversarial,
            wait_limit: self.wait_limit,
            device: device.device.clone(),
            firmware: device.firmware.clone(),
            exec: device.exec.unwrap_or_else(|| device.device.default_exec()),
            kernel_costs: device.kernel_costs,
            ..BroadcastConfig::default()
        })
    }
}

/// Which device runs a program: `--device`, `--firmware`, `--exec`, `--kernel-costs`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DeviceFlags {
    /// `sim` (the simulator, the default), `pcie-sim` (the simulator presented as a PCIe card,
    /// driven through komorebi-pcie as a card is), `ttsim[:PATH][@CHIP]` (Tenstorrent's ttsim:
    /// the `libttsim.so` at PATH, or the one `KOMOREBI_TTSIM` names; chip CHIP of a multi-chip
    /// build, default 0) or a card's device node (`/dev/tenstorrent/0`).
    #[arg(
        long,
        value_name = "sim|pcie-sim|ttsim[:PATH][@CHIP]|PATH",
        default_value = "sim"
    )]
    pub device: broadcast::DeviceChoice,
    /// Directory with the firmware ELF files `reader`, `writer`, `compute` (a card's default:
    /// the firmware build's output; `pcie-sim`'s: the native images).
    #[arg(long, value_name = "DIR")]
    pub firmware: Option<PathBuf>,
    /// What the cores run: `native` (Rust kernels; the default on `sim`, `pcie-sim`) or `firmware`
    /// (ELF files, --firmware DIR or the build's; run by pcie-sim's RISC-V cores, ttsim, cards).
    #[arg(long, value_name = "native|firmware")]
    pub exec: Option<crate::host::backend::Exec>,
    /// The native kernels' cost per call on the simulator: `tt-metal` (lean) or `firmware`.
    #[arg(long, value_name = "tt-metal|firmware", default_value_t)]
    pub kernel_costs: komorebi_sim::KernelCosts,
}

impl BroadcastFlags {
    /// The program configuration these flags describe (the error: [`ShapeFlags::config`]'s).
    pub fn config(&self) -> Result<BroadcastConfig, String> {
        self.config_without_speed_up()?
            .charged_as_run()
            .and_then(|c| c.with_speed_up(&self.speed_up, self.speed_up_by))
            .map_err(|e| e.to_string())
    }

    fn config_without_speed_up(&self) -> Result<BroadcastConfig, String> {
        Ok(BroadcastConfig {
            pages: self.pages,
            window: self.window,
            trace: self.trace.clone(),
            profile: self.profile.clone(),
            log: self.log.clone(),
            faults: self.fault.clone(),
            check: self.check.into(),
            protocol: match self.protocol {
                ProtocolFlag::Komorebi => broadcast::Protocol::Komorebi,
                ProtocolFlag::Handshake => broadcast::Protocol::Handshake,
            },
            ..self.shape.config(&self.device)?
        })
    }
}

impl From<CheckFlag> for broadcast::Check {
    fn from(check: CheckFlag) -> Self {
        match check {
            CheckFlag::Full => broadcast::Check::Full,
            CheckFlag::None => broadcast::Check::None,
        }
    }
}

/// A progress bar of `total` `what`s on stderr, when `show` and stderr is a terminal; it ticks
/// every second from the start, so its clock runs while the run prepares.
pub fn progress_bar(total: u64, what: &str, show: bool) -> Option<indicatif::ProgressBar> {
    (show && total > 1 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what} {{elapsed}}"
        )) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_secs(1));
        bar
    })
}

/// Runs the broadcast program with `flags`, then prints (or `--json`s) every core's broadcast
/// areas and draws `picture` if given; the exit code is the run's (2 when an output path
/// cannot be written: checked before the run).
pub fn inspect(flags: &BroadcastFlags, picture: Option<&std::path::Path>) -> ExitCode {
    // `inspect` prints the areas a run left, not the run's report, where a profile's functions
    // and a what-if's warning are: refused rather than run and left unsaid.
    let report_only = [
        ("--profile", flags.profile.is_some()),
        ("--speed-up", !flags.speed_up.is_empty()),
    ];
    if let Some((flag, _)) = report_only.iter().find(|(_, given)| *given) {
        eprintln!(
            "error: {flag}: inspect prints the broadcast areas, not the run's report where \
             {flag} shows (allowed: {flag} with broadcast)"
        );
        return ExitCode::from(2);
    }
    if flags.log.as_deref() == Some(std::path::Path::new("-")) {
        // `inspect` prints its view of the areas, not the run's report: the lines need a file.
        eprintln!(
            "error: --log: inspect prints the broadcast areas, not the run's report (allowed: \
             --log FILE with inspect; --log alone with broadcast)"
        );
        return ExitCode::from(2);
    }
    if let Some(p) = picture
        && crate::inspect::PictureFormat::of(p).is_none()
    {
        eprintln!(
            "error: --picture {}: the picture must be a .svg or .png file",
            p.display()
        );
        return ExitCode::from(2);
    }
    let checked = match checked_config(flags, picture, 1) {
        Ok(cfg) => cfg,
        Err(code) => return code,
    };
    let bar = progress_bar(flags.shape.jobs as u64, "jobs", !flags.json);
    let cfg = BroadcastConfig {
        log_follow: flags.log_follow.then(|| follow_sink(bar.clone())),
        ..checked
    };
    let ran = broadcast::run_session(&cfg, |_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (summary, session) = match ran {
        Ok(r) => r,
        Err(e) => return run_error(&e),
    };
    let view = match crate::inspect::inspect(&session) {
        Ok(v) => v,
        Err(e) => {
            // Exit 4 when the device cannot be used, as for any run; otherwise 2, as a run
            // that cannot read what it needs, unless the run's own verdict is a timeout (3).
            let e = broadcast::BroadcastError::Session(e);
            eprintln!("error: reading the broadcast areas: {e}");
            eprintln!("{}", summary.result_line());
            return ExitCode::from(if e.device_unusable() {
                EXIT_DEVICE
            } else {
                summary.exit_code().max(2)
            });
        }
    };
    let printed = print_report(&view, flags.json);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    // The view shows the areas, not the run's verdict: the exit code's reason on one line.
    eprintln!("{}", summary.result_line());
    if let Some(p) = picture {
        match view.write_picture(p) {
            Ok(range) => eprintln!("--picture {}: {range}", p.display()),
            Err(e) => {
                eprintln!("error: --picture {e}");
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::from(summary.exit_code())
}

/// The run's configuration (a `--harvest` the chip cannot have is refused here), its output
/// paths (`--trace`, and `picture`) checked before it starts, and the host memory and trace
/// disk space it needs; exit 2 with one line when one cannot be written or it cannot fit.
fn checked_config(
    flags: &BroadcastFlags,
    picture: Option<&std::path::Path>,
    chips: u32,
) -> Result<BroadcastConfig, ExitCode> {
    let refuse = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    // The chips before the checks: each simulated chip keeps its own DRAM.
    let cfg = BroadcastConfig {
        chips,
        ..flags.config().map_err(refuse)?
    };
    let profile = flags.profile.as_deref();
    // The profile's flame graph is written beside it after the run: checked now too.
    let flame_graph = profile.map(crate::host::profile::flame_graph_path);
    let log = flags
        .log
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("--trace", flags.trace.as_deref()),
        ("--profile", profile),
        ("--profile", flame_graph.as_deref()),
        ("--log", log),
        ("--picture", picture),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path?)))
    .collect();
    // The flags' own checks first: a value no host could run is refused as such, not for the
    // memory it would need. The disk check after the paths': a path that cannot be written
    // says so, not that its file system (`/proc`) has no room.
    cfg.check_flags()
        .map_err(|e| e.to_string())
        .and_then(|()| check_memory(&cfg))
        .and_then(|()| check_outputs(&outputs))
        .and_then(|()| check_disk(&cfg))
        .map_err(refuse)?;
    Ok(cfg)
}

/// Runs `seeds` exploration cases from `start` on `chip`; exit code 0 when all pass, 1
/// otherwise, 2 when the seeds do not fit in 64 bits or the cases' flags cannot go together
/// (a ttsim build or a card of another chip fails every case instead: found when opened).
pub fn explore(
    seeds: u64,
    start: u64,
    device: &broadcast::DeviceChoice,
    chip: crate::chip::ChipKind,
    json: bool,
) -> ExitCode {
    if let Err(e) = crate::explore::check_range(start, seeds) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // Whether the device runs this chip's cases at all: the flags every case shares.
    let first = crate::explore::case(start, chip, device);
    if let Err(e) = first.check_flags() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let bar = progress_bar(seeds, "cases", !json);
    // Each failure on standard error as it is found (above the bar), so that a run stopped
    // part way (a time limit, Ctrl-C) keeps what it found; the report lists them all again.
    let out = crate::explore::explore(start, seeds, device, chip, |_, failure| {
        if let Some(f) = failure {
            match &bar {
                Some(b) => b.println(f.to_string()),
                None => eprintln!("{f}"),
            }
        }
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

/// `--log-follow`'s sink: each new line on standard error as `job J: ` and the line, above the
/// progress bar when there is one.
fn follow_sink(bar: Option<indicatif::ProgressBar>) -> broadcast::LogFollow {
    broadcast::LogFollow::new(move |job, logs| {
        for k in logs {
            for line in k.to_string().lines() {
                let line = format!("job {job}: {line}");
                match &bar {
                    Some(b) => b.println(line),
                    None => eprintln!("{line}"),
                }
            }
        }
    })
}

/// Runs the broadcast program with `flags`; prints the summary or JSON; returns the exit code
/// (0 all checked, 1 data mismatch, 3 timeout, 2 bad flags or an output path that cannot be
/// written, checked before the run).
pub fn broadcast(flags: &BroadcastFlags, run: &RunFlags, spread: &ChipFlags) -> ExitCode {
    let checked = match checked_config(flags, None, spread.chips) {
        Ok(cfg) => cfg,
        Err(code) => {
            // (`checked_config` refuses with 2.)
            if spread.mpi {
                abort_refused_rank(2, spread.rank_limit);
            }
            return code;
        }
    };
    let bar = progress_bar(flags.shape.jobs as u64, "jobs", !flags.json);
    let cfg = BroadcastConfig {
        log_follow: flags.log_follow.then(|| follow_sink(bar.clone())),
        ..checked
    };
    let tick = |_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    if spread.mpi {
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        return broadcast_ranks(flags, &cfg, run, spread);
    }
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

/// `komorebi broadcast --mpi`: this process's rank of the run; rank 0 prints the report.
#[cfg(feature = "mpi")]
fn broadcast_ranks(
    flags: &BroadcastFlags,
    cfg: &BroadcastConfig,
    run: &RunFlags,
    spread: &ChipFlags,
) -> ExitCode {
    if run.feeder {
        eprintln!(
            "error: --mpi: the ranks run their jobs through the dispatcher (allowed: --mpi without --feeder)"
        );
        abort_refused_rank(2, spread.rank_limit);
        return ExitCode::from(2);
    }
    let limit = std::time::Duration::from_secs(spread.rank_limit);
    let ran = match broadcast::run_ranks(cfg, &run.dispatch(), limit, &|_| {}) {
        Ok(ran) => ran,
        Err(e) => {
            eprintln!("error: {e}");
            abort_refused_rank(error_code(&e), spread.rank_limit);
            return ExitCode::from(error_code(&e));
        }
    };
    let (code, printed) = match &ran.outcome {
        Ok(Some(summary)) => (summary.exit_code(), print_report(summary, flags.json)),
        Ok(None) => (
            if ran.end.lost() { EXIT_DEVICE } else { 0 },
            ExitCode::SUCCESS,
        ),
        Err(e) => {
            let code = error_code(e);
            eprintln!("error: {e}");
            (code, ExitCode::SUCCESS)
        }
    };
    let _ = std::io::Write::flush(&mut std::io::stdout());
    ran.end.finish(code as i32);
    if printed != ExitCode::SUCCESS {
        return printed;
    }
    ExitCode::from(code)
}

/// A rank of `broadcast --mpi` that refused before MPI started, under an MPI launcher: ends
/// the MPI job with `code` (`broadcast::abort_refused`, feature `mpi`); returns otherwise, and at once in
/// a build without MPI (where `--mpi` itself is refused).
pub fn abort_refused_rank(code: u8, rank_limit: u64) {
    #[cfg(feature = "mpi")]
    broadcast::abort_refused(code, std::time::Duration::from_secs(rank_limit));
    #[cfg(not(feature = "mpi"))]
    let _ = (code, rank_limit);
}

/// `komorebi broadcast --mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
fn broadcast_ranks(
    _flags: &BroadcastFlags,
    _cfg: &BroadcastConfig,
    _run: &RunFlags,
    _spread: &ChipFlags,
) -> ExitCode {
    eprintln!(
        "error: --mpi: this komorebi was built without MPI (allowed: --mpi in a build with the \
         `mpi` feature: cargo build --release --features mpi, with an MPI library and libclang \
         installed, e.g. Debian's libopenmpi-dev and libclang-dev)"
    );
    ExitCode::from(2)
}

/// Exit code of a device that cannot be used (missing, busy, too old, hung, ...).
pub const EXIT_DEVICE: u8 = broadcast::EXIT_DEVICE;

/// Prints a run's error on one line; exit 4 when the device cannot be used, 2 otherwise.
pub fn run_error(e: &broadcast::BroadcastError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(error_code(e))
}

/// The exit code of a run that ended with `e`: 4 for a device it could not use, else 2.
fn error_code(e: &broadcast::BroadcastError) -> u8 {
    if e.device_unusable() { EXIT_DEVICE } else { 2 }
}
