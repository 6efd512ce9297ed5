//! The `komorebi` command-line tool.

use std::process::ExitCode;

use blackhole_pac::harvest::{DramBanks, HarvestMask};
use clap::{Parser, Subcommand};
use komorebi::bench::broadcast::BroadcastBenchFlags;
use komorebi::bench::noc::NocBenchFlags;
use komorebi::chip::ChipKind;
use komorebi::cli::{self, BroadcastFlags, ChipFlags, RunFlags};
use komorebi::grid_report::grid_report;
use komorebi::layout_report::layout_report;
use komorebi::num::ranged;
use komorebi_broadcast::args::Along;
use komorebi_hal::LogicalRect;
use komorebi_hal::NocId;

#[derive(Parser, Debug)]
#[command(
    name = "komorebi",
    version,
    about = "komorebi: persistent-kernel runtime for Tenstorrent Blackhole",
    after_help = cli::EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the 03_broadcast program (on the simulator unless `--device` says otherwise): jobs of
    /// two broadcasts, every byte checked (`--check none`: every block popped unread); prints the
    /// run's cycles, its resource bound and binding resource, and the efficiency.
    #[command(after_help = cli::EXIT_CODES)]
    Broadcast {
        #[command(flatten)]
        flags: BroadcastFlags,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        spread: ChipFlags,
    },
    /// Run the broadcast program (same flags as `broadcast`), then print every core's broadcast
    /// areas: VALID, first give-up, statistics.
    #[command(after_help = cli::EXIT_CODES)]
    Inspect {
        #[command(flatten)]
        flags: BroadcastFlags,
        /// Also draw the grid, each core coloured by wait cycles and marked where it gave up
        /// (.svg or .png).
        #[arg(long, value_name = "FILE")]
        picture: Option<std::path::PathBuf>,
    },
    /// Run random seeds x random broadcast shapes with the adversary on (on the simulators); print failures with
    /// the command that replays each.
    #[command(after_help = EXPLORE_EXIT_CODES)]
    Explore {
        /// Cases to run (1.., decimal or 0x-hex).
        #[arg(long, value_parser = ranged::<u64>(1, u64::MAX), default_value_t = 1000)]
        seeds: u64,
        /// First seed (0..; the last seed, START + SEEDS - 1, must fit in 64 bits).
        #[arg(long, value_parser = ranged::<u64>(0, u64::MAX), default_value_t = 0)]
        start: u64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// The chip the shapes are drawn for and run on: blackhole, or wormhole (Wormhole B0:
        /// the simulator's native kernels on `sim` and `pcie-sim`, its firmware on ttsim's `wh`
        /// build and a card).
        #[arg(long, value_parser = komorebi::chip::parse_chip, default_value = "blackhole")]
        chip: ChipKind,
        /// `sim`, `pcie-sim`, `ttsim[:PATH][@CHIP]` or a card's device node, as `broadcast
        /// --device`; each case runs what the device runs by default (the firmware on ttsim and
        /// a card). Only the simulator's schedule follows the seed and the adversary, and only
        /// it reports violations: on ttsim or a card the seed draws the shape alone.
        #[arg(
            long,
            value_name = "sim|pcie-sim|ttsim[:PATH][@CHIP]|PATH",
            default_value = "sim"
        )]
        device: komorebi::app::broadcast::DeviceChoice,
    },
    /// List every Blackhole or Wormhole B0 card tt-kmd presents (or, with `--device ttsim[:PATH]`, every chip
    /// of a ttsim library): path, PCI address, driver version, harvest mask, AICLK, firmware
    /// bundle version. None found: an empty list, exit 0.
    Devices {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// List the chips of a ttsim library instead of tt-kmd's cards: `ttsim[:PATH]` (without
        /// a path, the one `KOMOREBI_TTSIM` names).
        #[arg(long, value_name = "ttsim[:PATH]", value_parser = listing_device)]
        device: Option<komorebi::app::broadcast::DeviceChoice>,
    },
    /// Read every firmware kernel's log ring of a card after a run, without loading or starting
    /// anything (a session's open would set the rings up empty), and decode it against the
    /// firmware's ELF files: each line with its tile, kernel, the core's cycle and level, and per
    /// kernel the lines a full ring lost. The run's own lines come with `broadcast --log`.
    #[command(after_help = LOG_EXIT_CODES)]
    Log {
        /// The card: its device node, such as /dev/tenstorrent/0. A simulated device (`sim`,
        /// `pcie-sim`, `ttsim`) is refused: its rings end with the run that made them.
        #[arg(long, value_name = "PATH")]
        device: komorebi::app::broadcast::DeviceChoice,
        /// Directory with the ELF files `reader`, `writer`, `compute` the card ran (default: the
        /// firmware build's output for the card's chip).
        #[arg(long, value_name = "DIR")]
        firmware: Option<std::path::PathBuf>,
        /// Only the tiles of this rectangle X0,Y0,COLUMNS,ROWS in logical core coordinates
        /// (default: every enabled Tensix tile).
        #[arg(long, value_parser = cli::parse_rect)]
        rect: Option<LogicalRect>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the chip map for a harvest mask: enabled columns (rows on Wormhole), logical ->
    /// NoC0/NoC1, every tile.
    Grid {
        /// The chip: blackhole or wormhole (Wormhole B0).
        #[arg(long, value_parser = komorebi::chip::parse_chip, default_value = "blackhole")]
        chip: ChipKind,
        /// Harvest mask, decimal or 0x-hex. Blackhole: die-order columns (bit i = column at NoC0
        /// x [1,16,2,15,3,14,4,13,5,12,6,11,7,10][i]), 0..=0x3fff, default 0x3000 (p100 / p150,
        /// 120 Tensix). Wormhole: rows in tt-umd's order (bit j = NoC0 y
        /// [1,2,3,4,5,7,8,9,10,11][j]), 0..=0x3ff, default 0.
        #[arg(long, value_name = "MASK")]
        harvest: Option<String>,
        /// The chip's fused DRAM bank, 0..=7 (default: none, all 8 banks work; a p100 has one):
        /// its ports are marked `d` on the map.
        #[arg(long, value_name = "BANK", value_parser = ranged::<u8>(0, 7))]
        fused_dram: Option<u8>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Measure on a simulated chip: `bench noc` (tt-metal's data-movement patterns, in its
    /// units), `bench broadcast` (the 03 program's protocols over windows and pages).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Print the broadcasts of a rectangle: cores in rank order, sender, multicast corners.
    Layout {
        /// The chip: blackhole or wormhole (Wormhole B0).
        #[arg(long, value_parser = komorebi::chip::parse_chip, default_value = "blackhole")]
        chip: ChipKind,
        /// Harvest mask, decimal or 0x-hex: Blackhole's die-order columns (0..=0x3fff, default
        /// 0x3000), or Wormhole's rows in tt-umd's order (0..=0x3ff, default 0).
        #[arg(long, value_name = "MASK")]
        harvest: Option<String>,
        /// The chip's fused DRAM bank, 0..=7 (default: none, all 8 banks work; a p100 has one):
        /// the senders' DRAM banks are placed on the others.
        #[arg(long, value_name = "BANK", value_parser = ranged::<u8>(0, 7))]
        fused_dram: Option<u8>,
        /// The rectangle X0,Y0,COLUMNS,ROWS in logical core coordinates (each 0..=255).
        #[arg(long, value_parser = cli::parse_rect)]
        rect: LogicalRect,
        /// Broadcast along rows (inside panels) or columns.
        #[arg(long, value_enum)]
        along: AlongArg,
        /// NoC carrying the broadcasts: 0 (reader kernel) or 1 (writer kernel).
        #[arg(long, value_parser = ranged::<u8>(0, 1), default_value = "0")]
        noc: u8,
        /// Jobs the senders' DRAM banks are placed for (1..=4294967295): as `broadcast --jobs`,
        /// whose data takes a ring of at most four jobs' regions in each bank.
        #[arg(long, value_parser = ranged::<u32>(1, u32::MAX as u64), default_value_t = 8)]
        jobs: u32,
        /// Window the DRAM banks are placed for: buffer slots (1..=8; window x pages at most
        /// 65535), as `broadcast --window`.
        #[arg(long, value_parser = ranged::<u8>(1, komorebi_broadcast::args::MAX_WINDOW as u64), default_value_t = 2)]
        window: u8,
        /// Blocks per broadcast per job the senders' DRAM banks are placed for (0..=32767).
        #[arg(long, value_parser = ranged::<u32>(0, komorebi_broadcast::args::MAX_BLOCKS as u64), default_value_t = 16)]
        blocks: u32,
        /// Pages per block the DRAM banks are placed for (1..=65535).
        #[arg(long, value_parser = ranged::<u16>(1, 65535), default_value_t = 4)]
        pages: u16,
        /// Bytes per page the DRAM banks are placed for (64..=1048576, a multiple of 64).
        #[arg(long, value_parser = cli::parse_page_size, default_value_t = 2048)]
        page_size: u32,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `komorebi explore`'s exit codes: a case that timed out or could not use its device is a
/// failed case.
const EXPLORE_EXIT_CODES: &str = "Exit codes: 0 every case passed, 1 a case failed (a \
    mismatch, a give-up, a violation, a timeout or a device that could not be used), 2 bad \
    flags (seeds past 64 bits, a device that cannot run the chip's cases).";

/// `komorebi log`'s exit codes.
const LOG_EXIT_CODES: &str = "Exit codes: 0 the rings read (a ring that is not as a kernel \
    writes it is reported in the output), 2 bad flags (a simulated device, a rectangle outside \
    the grid, ELF files that cannot be read), 4 a device that cannot be used.";

/// What `komorebi bench` measures.
#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// One data-movement pattern of tt-metal's data-movement tests, once, on a simulated chip:
    /// cycles from the first issue to the barrier, transactions, bytes, destinations per
    /// transaction, cycles per transaction, bytes per cycle.
    #[command(after_help = komorebi::bench::noc::EXIT_CODES)]
    Noc(NocBenchFlags),
    /// The 03_broadcast program's shape (the flags of `komorebi broadcast`) run for each
    /// protocol x window x pages: per run the cycles, the resource bound, the binding resource,
    /// the efficiency, and how many times faster komorebi is than the handshake.
    #[command(after_help = komorebi::bench::broadcast::EXIT_CODES)]
    Broadcast(Box<BroadcastBenchFlags>),
}

/// `--along` of `komorebi layout`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum AlongArg {
    Row,
    Column,
}

/// `devices --device`: a device as `broadcast --device` takes it, but a ttsim library without
/// `@CHIP`, `@0` included (the listing takes every chip of the library).
fn listing_device(s: &str) -> Result<komorebi::app::broadcast::DeviceChoice, String> {
    let chip = s
        .strip_prefix("ttsim")
        .and_then(|rest| rest.rsplit_once('@'))
        .filter(|(_, chip)| !chip.is_empty() && chip.bytes().all(|b| b.is_ascii_digit()));
    match chip {
        Some((_, chip)) => Err(format!(
            "@{chip}: devices lists every chip of the library (allowed: ttsim[:PATH] without \
             @CHIP)"
        )),
        None => s.parse(),
    }
}

fn main() -> ExitCode {
    let cli = match cli::parse_or_exit::<Cli>() {
        Ok(c) => c,
        Err(code) => {
            // A rank of an MPI job whose flags do not parse ends the job with the refusal's
            // code (the rank limit is not known: its default bounds MPI's start).
            let mpi = |a: std::ffi::OsString| {
                a.to_str()
                    .is_some_and(|a| a == "--mpi" || a.starts_with("--mpi="))
            };
            if code != ExitCode::SUCCESS && std::env::args_os().any(mpi) {
                cli::abort_refused_rank(2, cli::DEFAULT_RANK_LIMIT);
            }
            return code;
        }
    };
    match cli.command {
        Command::Broadcast { flags, run, spread } => cli::broadcast(&flags, &run, &spread),
        Command::Explore {
            seeds,
            start,
            json,
            chip,
            device,
        } => cli::explore(seeds, start, &device, chip, json),
        Command::Devices { json, device } => match device {
            None => cli::print_report(&komorebi::devices::devices(), json),
            // (`listing_device` refused any `@CHIP`.)
            Some(komorebi::app::broadcast::DeviceChoice::Ttsim { library, chip: 0 }) => {
                cli::print_report(&komorebi::devices::ttsim_devices(&library), json)
            }
            Some(ttsim @ komorebi::app::broadcast::DeviceChoice::Ttsim { .. }) => {
                eprintln!(
                    "error: --device {ttsim}: devices lists every chip of the library \
                     (allowed: --device ttsim[:PATH] without @CHIP)"
                );
                ExitCode::from(2)
            }
            Some(other) => {
                eprintln!(
                    "error: --device {other}: devices lists tt-kmd's cards, or a ttsim library's \
                     chips (allowed: --device ttsim[:PATH])"
                );
                ExitCode::from(2)
            }
        },
        Command::Inspect { flags, picture } => cli::inspect(&flags, picture.as_deref()),
        Command::Log {
            device,
            firmware,
            rect,
            json,
        } => match komorebi::log_report::card_logs(&device, firmware.as_deref(), rect) {
            Ok(logs) => cli::print_report(&logs, json),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(e.exit_code())
            }
        },
        Command::Bench {
            what: BenchCommand::Noc(flags),
        } => komorebi::bench::noc::command(&flags),
        Command::Bench {
            what: BenchCommand::Broadcast(flags),
        } => komorebi::bench::broadcast::command(&flags),
        Command::Grid {
            chip,
            harvest,
            fused_dram,
            json,
        } => {
            let word = match cli::harvest_word(chip, harvest.as_deref()) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            match chip {
                ChipKind::Blackhole => {
                    // The parsers allow 0..=0x3fff and 0..=7 only, so both are valid.
                    let mask = HarvestMask::new(word).unwrap_or(HarvestMask::P100_P150);
                    let dram = DramBanks::with_fused(fused_dram).unwrap_or_default();
                    cli::print_report(&grid_report(mask, dram), json)
                }
                ChipKind::Wormhole => {
                    if let Some(bank) = fused_dram {
                        eprintln!("error: {}", cli::no_wormhole_fused_dram(bank));
                        return ExitCode::from(2);
                    }
                    let mask = wormhole_pac::harvest::HarvestMask::new(word)
                        .unwrap_or(wormhole_pac::harvest::HarvestMask::NONE);
                    cli::print_report(&komorebi::grid_report::wormhole_grid_report(mask), json)
                }
            }
        }
        Command::Layout {
            chip,
            harvest,
            fused_dram,
            rect,
            along,
            noc,
            jobs,
            window,
            blocks,
            pages,
            page_size,
            json,
        } => {
            let noc = if noc == 0 { NocId::Noc0 } else { NocId::Noc1 };
            let along = match along {
                AlongArg::Row => Along::Row,
                AlongArg::Column => Along::Column,
            };
            let shape = komorebi::layout_report::PlacementShape {
                jobs,
                window,
                blocks,
                pages,
                page_size,
            };
            let word = match cli::harvest_word(chip, harvest.as_deref()) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if let (ChipKind::Wormhole, Some(bank)) = (chip, fused_dram) {
                eprintln!("error: {}", cli::no_wormhole_fused_dram(bank));
                return ExitCode::from(2);
            }
            match layout_report(chip, word, fused_dram, rect, along, noc, shape) {
                Ok(report) => cli::print_report(&report, json),
                Err(e) => {
                    eprintln!("error: --rect {rect}: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
