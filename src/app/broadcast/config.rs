//! The program's parameters and their checks, and its two broadcasts.

use std::path::PathBuf;

use crate::host::backend::Exec;
use blackhole_pac::harvest::HarvestMask;

use crate::chip::ChipKind;
use komorebi_broadcast::args::Along;
use komorebi_broadcast::layout;
use komorebi_hal::{LogicalRect, NocId};
use komorebi_kernel::broadcast_handler::program::{Check, STREAMS};

use super::error::{BroadcastError, flag};
use super::faults::FaultSpec;

/// L1 address of the first broadcast buffer: above the control block and the firmware images
/// (`examples/firmware`'s layout ends at 0x30000).
pub const BUFFER_BASE: u32 = 0x4_0000;
/// Where the DRAM data of the jobs starts in every bank.
pub const DRAM_BASE: u64 = 0x100_0000;
/// DRAM regions the jobs' data takes turns in when a run writes each job's data just before
/// posting it ([`crate::app::broadcast::run`], [`crate::app::broadcast::run_dispatched`]): job
/// `j` uses region `j % DRAM_RING`, so DRAM (and the simulator's memory) does not grow with the
/// number of jobs. Jobs on the same group run one at a time (`EXCLUSIVE`), so a region is
/// rewritten only long after its job has finished.
pub const DRAM_RING: u32 = 4;

/// The program's parameters (the flags of `komorebi broadcast` and the example).
#[derive(Clone, Debug, PartialEq)]
pub struct BroadcastConfig {
    /// The rectangle (and group), logical `x0, y0, columns, rows`.
    pub rect: LogicalRect,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Pages per block.
    pub pages: u16,
    /// Bytes per page.
    pub page_size: u32,
    /// Window.
    pub window: u8,
    /// Jobs.
    pub jobs: u32,
    /// Run broadcast A (along rows).
    pub rows: bool,
    /// Run broadcast W (along columns).
    pub columns: bool,
    /// The simulated Blackhole's harvest mask (die-order Tensix columns; `--harvest` with
    /// `--chip blackhole`). A card's and ttsim's come from the device.
    pub harvest: HarvestMask,
    /// The simulated Wormhole's harvested Tensix rows (tt-umd's order; `--harvest` with
    /// `--chip wormhole`). ttsim's and a card's come from their ARC (ttsim's `wh` harvests
    /// none).
    pub row_harvest: wormhole_pac::harvest::HarvestMask,
    /// The simulated chip's fused DRAM bank (`--fused-dram`, 0..=7), or none. A card's comes
    /// from its telemetry; either way the plan reads from the device's working banks only.
    pub fused_dram: Option<u8>,
    /// Seed.
    pub seed: u64,
    /// Reorder everything the hardware does not order (seeded).
    pub adversarial: bool,
    /// Cycles any single wait may last; `None` (the default): the shape's own,
    /// [`BroadcastConfig::shape_wait_limit`].
    pub wait_limit: Option<u64>,
    /// Write a Chrome/Perfetto trace here.
    pub trace: Option<PathBuf>,
    /// Profile the firmware cores: folded stacks here, the flame graph beside it (`.svg`
    /// appended), the costliest functions in the summary (`--device pcie-sim --exec firmware`).
    pub profile: Option<PathBuf>,
    /// A what-if run (`--speed-up`): the named functions' code made faster on the simulator's
    /// RISC-V cores (`--device pcie-sim --exec firmware`; [`crate::host::what_if::resolve`]).
    pub speed_up: Option<crate::host::what_if::NamedSpeedUp>,
    /// The cores' logs after the run (`--log`): the firmware's rings decoded, or the native
    /// kernels' lines; printed with the report when `-`, else written to this file.
    pub log: Option<PathBuf>,
    /// The cores' new log lines after each job, as the run goes (`--log-follow`): read as
    /// [`Self::log`] reads them at the end, each line handed to this sink once.
    pub log_follow: Option<super::follow::LogFollow>,
    /// Faults injected into the first job.
    pub faults: Vec<FaultSpec>,
    /// Which device runs the program.
    pub device: DeviceChoice,
    /// The firmware ELF directory for `pcie-sim` (default: the native images) and a card
    /// (default: [`crate::host::session::DEFAULT_FIRMWARE_DIR`]).
    pub firmware: Option<PathBuf>,
    /// What the simulated card's cores run (`--device pcie-sim` only).
    pub exec: Exec,
    /// What the simulator charges its native kernels per HAL call (`--kernel-costs`): tt-metal's
    /// lean kernels (the default) or komorebi's firmware as profiled, so that a native run
    /// predicts a firmware run. `sim` and `pcie-sim` only; with `--exec firmware` it prices the
    /// native runs a bench puts beside the firmware's.
    pub kernel_costs: komorebi_sim::KernelCosts,
    /// What compute does with the words it receives (`--check`): [`Check::Full`] reads and
    /// checks every word of every page; [`Check::None`] reads none and only takes and pops the
    /// blocks in protocol order, so a run measures the protocol and the NoC (every give-up,
    /// marker and DONE check stays; `checked_bytes` is 0).
    pub check: Check,
    /// Which protocol moves the blocks (`--protocol`).
    pub protocol: Protocol,
    /// Which chip the program runs on (`--chip`): a Blackhole (the default; every device), or
    /// a Wormhole B0 (the simulator's native kernels on `sim` and `pcie-sim`, its firmware on
    /// ttsim's `wh` build and a card).
    pub chip: ChipKind,
    /// Chips the jobs are spread over (`--chips`, 1..=[`MAX_CHIPS`]), each with the whole
    /// rectangle: independent simulated chips (each with its own seed stream), the first ones
    /// of a ttsim multi-chip build, or the cards tt-kmd presents from `--device`'s on.
    pub chips: u32,
}

/// The most chips a run spreads its jobs over: a Blackhole Galaxy's 32.
pub const MAX_CHIPS: u32 = 32;

/// Which protocol moves the blocks (`--protocol`): the same shape, buffers, DRAM data and
/// compute either way, so the two are compared on equal terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// komorebi's broadcast (`komorebi-broadcast`): VALID and DONE markers over a window of
    /// slots.
    #[default]
    Komorebi,
    /// The peer: a tt-metal-style handshake (receivers signal ready per block, the sender waits
    /// for all of them, multicasts the data, flushes, multicasts a flag).
    Handshake,
}

impl Protocol {
    /// Every protocol, in the order reports list them.
    pub const ALL: [Protocol; 2] = [Protocol::Komorebi, Protocol::Handshake];

    /// The protocol's name as `--protocol` and JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Komorebi => "komorebi",
            Protocol::Handshake => "handshake",
        }
    }

    /// The id of the handler whose commands the protocol posts (the same program words either
    /// way: only the handler differs).
    pub fn handler(self) -> u16 {
        match self {
            Protocol::Komorebi => komorebi_kernel::broadcast_handler::BROADCAST_HANDLER,
            Protocol::Handshake => komorebi_kernel::handshake_handler::HANDSHAKE_HANDLER,
        }
    }

    /// The protocol whose commands handler `id` runs, if any.
    pub fn of_handler(id: u16) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.handler() == id)
    }

    /// The protocol of the images in `dir`: the handler their headers name, when they can be
    /// read and name one (`None` for images that carry any handler, or none that is a
    /// protocol's).
    pub fn of_images(dir: &std::path::Path) -> Option<Protocol> {
        let firmware = komorebi_pcie::firmware::Firmware::from_dir(dir).ok()?;
        Protocol::of_handler(firmware.images[0].header.handler)
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which device runs a program (`--device`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The simulator, driven directly (the default).
    #[default]
    Sim,
    /// The simulator presented as a PCIe card, driven through komorebi-pcie.
    PcieSim,
    /// Chip `chip` of Tenstorrent's ttsim, the `libttsim.so` at `library` (`ttsim[:PATH][@CHIP]`;
    /// without a path, the one `KOMOREBI_TTSIM` names).
    Ttsim {
        /// The `libttsim.so`.
        library: PathBuf,
        /// The chip's PCI device number (0 unless a multi-chip build's `@N`).
        chip: u32,
    },
    /// The card at this device node.
    Card(PathBuf),
}

impl DeviceChoice {
    /// What the device's cores run unless `--exec` says: the native kernels on the simulator,
    /// the firmware ELF files on ttsim and a card (the only thing they can run).
    pub fn default_exec(&self) -> Exec {
        match self {
            Self::Sim | Self::PcieSim => Exec::Native,
            Self::Ttsim { .. } | Self::Card(_) => Exec::Firmware,
        }
    }

    /// Whether the device is simulated in this process (its DRAM in host memory, its trace).
    pub fn in_process(&self) -> bool {
        matches!(self, Self::Sim | Self::PcieSim)
    }

    /// What the device's clock counts: the simulator's cycles, ttsim's clock steps, or a
    /// card's tile wall clock.
    pub fn clock_kind(&self) -> crate::host::device::ClockKind {
        use crate::host::device::ClockKind;
        match self {
            Self::Sim | Self::PcieSim => ClockKind::Simulated,
            Self::Ttsim { .. } => ClockKind::TtsimSteps,
            Self::Card(_) => ClockKind::Card,
        }
    }

    /// Parses `ttsim[:PATH][@CHIP]`; `library_var` is `KOMOREBI_TTSIM`'s value.
    fn parse_ttsim(rest: &str, library_var: Option<std::ffi::OsString>) -> Result<Self, String> {
        let (path, chip) = match rest.rsplit_once('@') {
            Some((p, c)) if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) => {
                let chip =
                    c.parse::<u32>().ok().filter(|&n| n < 32).ok_or_else(|| {
                        format!("chip @{c} (allowed: @0..=@31, a PCI device number)")
                    })?;
                (p, chip)
            }
            _ => (rest, 0),
        };
        let library = match path.strip_prefix(':') {
            Some("") => {
                return Err(
                    "`ttsim:` without a path (allowed: ttsim, ttsim:PATH, ttsim:PATH@CHIP)".into(),
                );
            }
            Some(p) => PathBuf::from(p),
            None if path.is_empty() => PathBuf::from(library_var.ok_or_else(|| {
                "`ttsim` without a path and KOMOREBI_TTSIM is not set (give --device \
                 ttsim:PATH/libttsim.so, or set KOMOREBI_TTSIM)"
                    .to_string()
            })?),
            None => {
                return Err(format!(
                    "`ttsim{path}` (allowed: ttsim, ttsim@CHIP, ttsim:PATH, ttsim:PATH@CHIP)"
                ));
            }
        };
        Ok(Self::Ttsim { library, chip })
    }
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sim" => Ok(Self::Sim),
            "pcie-sim" => Ok(Self::PcieSim),
            "" => Err(
                "give `sim`, `pcie-sim`, `ttsim[:PATH][@CHIP]` or a device path such as \
                 /dev/tenstorrent/0"
                    .into(),
            ),
            ttsim
                if ttsim.starts_with("ttsim") && !ttsim.contains('/')
                    || ttsim.starts_with("ttsim:") =>
            {
                Self::parse_ttsim(&ttsim["ttsim".len()..], std::env::var_os("KOMOREBI_TTSIM"))
            }
            path => Ok(Self::Card(PathBuf::from(path))),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sim => f.write_str("sim"),
            Self::PcieSim => f.write_str("pcie-sim"),
            Self::Ttsim { library, chip } => {
                write!(f, "ttsim:{}", library.display())?;
                if *chip != 0 {
                    write!(f, "@{chip}")?;
                }
                Ok(())
            }
            Self::Card(p) => write!(f, "{}", p.display()),
        }
    }
}

impl Default for BroadcastConfig {
    fn default() -> Self {
        Self {
            rect: LogicalRect::new(0, 0, 12, 10),
            blocks: 16,
            pages: 4,
            page_size: 2048,
            window: 2,
            jobs: 8,
            rows: true,
            columns: true,
            harvest: HarvestMask::P100_P150,
            row_harvest: wormhole_pac::harvest::HarvestMask::NONE,
            fused_dram: None,
            seed: 0,
            adversarial: false,
            wait_limit: None,
            chips: 1,
            chip: ChipKind::Blackhole,
            trace: None,
            profile: None,
            speed_up: None,
            log: None,
            log_follow: None,
            faults: Vec::new(),
            device: DeviceChoice::Sim,
            firmware: None,
            exec: Exec::Native,
            kernel_costs: komorebi_sim::KernelCosts::TtMetal,
            check: Check::Full,
            protocol: Protocol::Komorebi,
        }
    }
}

/// One of the program's two broadcasts: operand A (id 0, along rows, NoC0, the reader) or
/// W (id 1, along columns, NoC1, the writer).
#[derive(Copy, Clone, Debug)]
pub(super) struct Operand {
    /// Broadcast id: 0 for A, 1 for W.
    pub(super) id: u8,
    /// Which way it runs.
    pub(super) along: Along,
    /// The NoC that carries it.
    pub(super) noc: NocId,
    /// Its circular buffer.
    pub(super) cb: u8,
    /// L1 address of its buffer.
    pub(super) base: u32,
}

/// The least wait limit a shape gets by default: 1,000,000 cycles (0.74 ms at 1,350 MHz).
pub const MIN_WAIT_LIMIT: u64 = 1_000_000;

impl BroadcastConfig {
    /// The wait limit the run gives its tiles: [`wait_limit`](Self::wait_limit), or the shape's
    /// own when none is set.
    pub fn run_wait_limit(&self) -> u64 {
        self.wait_limit.unwrap_or_else(|| self.shape_wait_limit())
    }

    /// A wait limit no wait of a sound run of this shape comes near: the larger of
    /// [`MIN_WAIT_LIMIT`] and four times what compute may take over a window of blocks, each page
    /// at 400 cycles and 2 a byte (compute waits on two broadcasts in turn, and a sender's
    /// `finish` waits for its own compute to pop up to a window of blocks). The firmware's
    /// compute checks a 64-byte page in some 470 cycles and a 2 KiB page in some 3,200 (the 03
    /// shape with checking); a fixed limit failed larger shapes that were sound (300 pages of 64
    /// bytes at window 8: a 1.1 M-cycle wait in `finish`).
    pub fn shape_wait_limit(&self) -> u64 {
        let window_pages = self.window as u64 * self.pages as u64;
        window_pages
            .saturating_mul(self.page_cycles())
            .saturating_mul(4)
            .max(MIN_WAIT_LIMIT)
    }

    /// Cycles compute may take over one page, as the wait limit and the command budget count
    /// them: 400, and 2 a byte.
    fn page_cycles(&self) -> u64 {
        400 + 2 * self.page_size as u64
    }

    /// How long one job's command may run before the host reports it timed out: the larger
    /// of the session's default for the wait limit (`default_budget`) and four times the work
    /// of every block of every broadcast, padding included: compute's at
    /// [`shape_wait_limit`](Self::shape_wait_limit)'s rates, and 4,000 cycles a block for the
    /// rest (a firmware sender's code a block, some 1,700 cycles, and a DRAM read's latency,
    /// some 1,350, which a window of 1 does not hide). A fixed 64 times the wait limit
    /// reported sound runs of a few thousand blocks as timeouts.
    pub fn command_budget(&self) -> u64 {
        let broadcasts = u64::from(self.rows) + u64::from(self.columns);
        let blocks = self.blocks as u64 + self.window as u64;
        let per_block = (self.pages as u64)
            .saturating_mul(self.page_cycles())
            .saturating_add(4_000);
        let work = blocks
            .saturating_mul(per_block)
            .saturating_mul(4 * broadcasts);
        crate::host::session::default_budget(self.run_wait_limit()).max(work)
    }

    pub(super) fn operands(&self) -> Vec<Operand> {
        // Saturating: `validate` asks for the operands before it refuses buffers past L1 (it
        // counts their bytes in u64), and flags allowed one by one multiply past 32 bits.
        let bytes = (self.window as u32)
            .saturating_mul(self.pages as u32)
            .saturating_mul(self.page_size);
        let mut out = Vec::new();
        if self.rows {
            out.push(Operand {
                id: 0,
                along: Along::Row,
                noc: NocId::Noc0,
                cb: 0,
                base: BUFFER_BASE,
            });
        }
        if self.columns {
            out.push(Operand {
                id: 1,
                along: Along::Column,
                noc: NocId::Noc1,
                cb: 1,
                base: BUFFER_BASE.saturating_add(bytes.saturating_mul(out.len() as u32)),
            });
        }
        out
    }

    /// Whether the run's cores count cycles by instruction: the simulator's RISC-V cores
    /// (`--device pcie-sim --exec firmware`).
    pub(super) fn cores_counted(&self) -> bool {
        self.device == DeviceChoice::PcieSim && self.exec == Exec::Firmware
    }

    /// Whether the cores run the native kernels in this process (the simulator, directly or as
    /// a card): no image is loaded for them, so none carries logs or a handler.
    pub(super) fn runs_native(&self) -> bool {
        self.exec == crate::host::backend::Exec::Native && self.device.in_process()
    }

    /// The handler the firmware images of this run carry (`--protocol`): the images hold one
    /// each (code room), so the handshake runs on images of its own.
    pub fn image_handler(&self) -> crate::host::backend::ImageHandler {
        match self.protocol {
            Protocol::Komorebi => crate::host::backend::ImageHandler::Broadcast,
            Protocol::Handshake => crate::host::backend::ImageHandler::Handshake,
        }
    }

    /// The firmware directory a run of this configuration loads its images from when it runs
    /// the firmware: `--firmware`, else where this tree's build for the chip and the protocol
    /// puts them (built by the run itself if they are not yet).
    pub fn firmware_dir(&self) -> PathBuf {
        self.firmware.clone().unwrap_or_else(|| {
            crate::host::backend::default_firmware_dir_with(self.chip, self.image_handler())
        })
    }

    /// This configuration with the code of the functions named like `names` made `factor`
    /// times faster (`--speed-up`; none: unchanged), found in the images the run will load:
    /// `firmware`, else this tree's build (made now if it is not yet, as the run would), which
    /// becomes `firmware` so that the run loads the images the addresses came from. The device
    /// is checked first: without RISC-V cores the images are not even looked for.
    pub fn with_speed_up(mut self, names: &[String], factor: u32) -> Result<Self, BroadcastError> {
        if names.is_empty() {
            return Ok(self);
        }
        self.speed_up_allowed()?;
        let dir = match &self.firmware {
            Some(dir) => dir.clone(),
            None => crate::host::backend::built_firmware_with(self.chip, self.image_handler())
                .map_err(BroadcastError::Firmware)?,
        };
        self.speed_up = Some(crate::host::what_if::resolve(&dir, names, factor)?);
        self.firmware = Some(dir);
        Ok(self)
    }

    /// The `--kernel-costs` table when it is not the default (tt-metal's): the one the summary
    /// names, and the one only the simulator's native kernels can be charged.
    pub fn named_kernel_costs(&self) -> Option<komorebi_sim::KernelCosts> {
        Some(self.kernel_costs).filter(|&k| k != komorebi_sim::KernelCosts::default())
    }

    /// This config, unless it names a `--kernel-costs` table for a run that has no native
    /// kernels to charge (`--exec firmware`: the firmware's cores are charged per instruction).
    /// `bench broadcast --exec firmware` does not ask: its table prices the native runs it puts
    /// beside the firmware's.
    pub fn charged_as_run(self) -> Result<Self, BroadcastError> {
        // (ttsim and a card run the firmware too: their refusal, the device's, comes later.)
        let priced = self.named_kernel_costs().is_some();
        if priced && self.exec == Exec::Firmware && self.device.in_process() {
            return Err(flag(
                "--kernel-costs",
                format!(
                    "{} with --exec firmware: the firmware's cores are charged per instruction \
                     (allowed: --kernel-costs with --exec native, or with bench broadcast --exec \
                     firmware, whose native column it prices)",
                    self.kernel_costs
                ),
            ));
        }
        Ok(self)
    }

    /// Refuses a what-if run (`--speed-up`) where no code's cycles can be changed.
    pub fn speed_up_allowed(&self) -> Result<(), BroadcastError> {
        if self.cores_counted() {
            return Ok(());
        }
        Err(flag(
            "--speed-up",
            format!(
                "with --device {} --exec {}: only the simulator's RISC-V cores run code whose \
                 cycles can be changed (allowed: --speed-up with --device pcie-sim --exec \
                 firmware)",
                self.device, self.exec
            ),
        ))
    }

    /// Refuses what holds for one chip only on a run of `chips` chips in all (a rank's run
    /// counts every rank's chips): the outputs that cover one chip (`--trace`, `--profile`,
    /// `--log-follow`), `--log` over the chips of other hosts (it reads this host's chips), and
    /// a Wormhole (several are not built).
    pub(super) fn chips_in_all(&self, chips: u32) -> Result<(), BroadcastError> {
        if self.chip == ChipKind::Wormhole && chips > 1 {
            return Err(flag(
                "--chips",
                format!(
                    "{chips} with --chip wormhole, counting every --mpi rank's (allowed: 1; \
                     several Wormholes are not built)"
                ),
            ));
        }
        if self.log.is_some() && chips > self.chips {
            return Err(flag(
                "--mpi",
                format!(
                    "with --log: --log reads the chips of this host only, and the run has {chips} \
                     chips on several hosts (allowed: --log on one host's chips, any --chips without --mpi or on one rank)"
                ),
            ));
        }
        let one_chip = [
            ("--trace", self.trace.is_some()),
            ("--profile", self.profile.is_some()),
            ("--log-follow", self.log_follow.is_some()),
        ];
        match one_chip.iter().find(|(_, given)| *given) {
            Some((what, _)) if chips > 1 => Err(flag(
                "--chips",
                format!(
                    "{chips} chips in all with {what}: {what} covers one chip (allowed: {what} \
                     with one chip in all: --chips 1, without --mpi or on one rank)"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// `--chip`'s value for this run's chip.
    pub(super) fn chip_name(&self) -> &'static str {
        crate::chip::chip_flag(self.chip)
    }

    /// The chip's harvest mask: the Blackhole's die-order columns or the Wormhole's rows.
    pub fn harvest_mask(&self) -> u16 {
        match self.chip {
            ChipKind::Blackhole => self.harvest.bits(),
            ChipKind::Wormhole => self.row_harvest.bits(),
        }
    }

    /// The chip and its harvest mask in words, for messages.
    pub(super) fn chip_text(&self) -> String {
        match self.chip {
            ChipKind::Blackhole => format!("Blackhole (harvest mask {:#06x})", self.harvest.bits()),
            ChipKind::Wormhole => format!(
                "Wormhole B0 (row harvest mask {:#05x})",
                self.row_harvest.bits()
            ),
        }
    }

    /// The grid the flags lay the program out on: the simulated Blackhole's or Wormhole's
    /// (`--harvest`: its columns or its rows).
    pub(crate) fn flags_geometry(&self) -> Result<layout::Geometry, layout::LayoutError> {
        crate::chip::geometry(self.chip, self.harvest_word(), None)
    }

    /// The simulated chip's harvest word: a Blackhole's `--harvest` columns, a Wormhole's rows.
    pub(crate) fn harvest_word(&self) -> u32 {
        match self.chip {
            ChipKind::Blackhole => u32::from(self.harvest.bits()),
            ChipKind::Wormhole => u32::from(self.row_harvest.bits()),
        }
    }

    /// Bytes of DRAM address space, per bank, the jobs' data takes at least when each job's
    /// data is written as it runs (the regions of the ring in use, each the least layers of
    /// the senders' copies any placement of their banks needs; the plan, once its banks are
    /// placed, counts its own).
    pub fn dram_bytes_per_bank(&self) -> u64 {
        self.region_bytes()
            .saturating_mul(self.jobs.min(DRAM_RING) as u64)
    }

    /// The part of [`Self::host_bytes`] that grows with the jobs alone: the summary and the
    /// dispatcher keep about 200 bytes a job.
    pub fn host_bytes_of_jobs(&self) -> u64 {
        200 * self.jobs as u64
    }

    /// Bytes the `--trace` file of a run of these flags takes, roughly (0 without `--trace`,
    /// or on a card, which has no trace). Measured on the simulator: 1,350 to 2,650 bytes per
    /// core, block and broadcast (the 03 default: 1,597, 49 MB for 8 jobs), more with more
    /// pages a block; estimated as 1,280 + 96 x pages, plus 64 KiB of names.
    pub fn trace_bytes(&self) -> u64 {
        if self.trace.is_none() || !self.device.in_process() {
            return 0;
        }
        let per = 1280 + 96 * self.pages as u64;
        per.saturating_mul(self.rect.len() as u64)
            .saturating_mul(self.blocks.max(1) as u64)
            .saturating_mul(self.operands().len() as u64)
            .saturating_mul(self.jobs as u64)
            .saturating_add(64 * 1024)
    }

    /// The senders of A and of W (0 for a broadcast not run, or a rectangle that does not lay
    /// out, which `BroadcastPlan::per_job` refuses with its reason).
    pub fn senders(&self) -> [u64; 2] {
        let mut out = [0; 2];
        let Ok(geometry) = self.flags_geometry() else {
            return out;
        };
        for s in self.operands() {
            out[s.id as usize] = layout::broadcasts(&geometry, self.rect, s.along, s.noc)
                .map_or(0, |b| b.len() as u64);
        }
        out
    }

    /// Bytes of one sender's copy of its broadcast's pages: page `g` at `g * page_size`.
    pub(super) fn copy_bytes(&self) -> u64 {
        self.copy_pages().saturating_mul(self.page_size as u64)
    }

    /// Pages of one sender's copy.
    fn copy_pages(&self) -> u64 {
        self.blocks as u64 * self.pages as u64
    }

    /// Bytes of bank address space the data of one job takes at least, before the banks are
    /// placed: one copy per sender (each sender reads its own copy, as the broadcasts of a
    /// program with different data per row and column would; shared copies would have senders
    /// of one broadcast read the same DRAM rows at once), laid in layers that copies share
    /// (`placement::Layers`): a layer holds 8 pages of every 8 of each bank, so however the
    /// streams are placed, the busiest bank needs at least its (sender, stream) pairs over 8
    /// layers, and it serves at least the average, the pairs over the working banks. The plan
    /// counts its own ([`BroadcastPlan::dram_end`](super::BroadcastPlan::dram_end)).
    pub(super) fn region_bytes(&self) -> u64 {
        let [a, w] = self.senders();
        self.least_layers(a + w, self.fused_dram)
            .saturating_mul(self.copy_bytes())
    }

    /// The least layers `senders` copies take in the busiest working bank (the chip's banks
    /// without `fused`): their (sender, stream) pairs over the banks, 8 a layer.
    fn least_layers(&self, senders: u64, fused: Option<u8>) -> u64 {
        let banks = crate::chip::DramSet::new(self.chip, fused)
            .iter()
            .count()
            .max(1) as u64;
        let streams = self.copy_pages().min(STREAMS as u64);
        senders
            .saturating_mul(streams)
            .div_ceil(banks * STREAMS as u64)
    }

    /// The least senders and layers of one job's data on any grid of the chip, for a device
    /// whose grid is read only once it is open (ttsim, a card): one sender a row (or column) of
    /// the rectangle that a broadcast runs along, at least (a line cut into panels has more),
    /// every bank working, and the (sender, stream) pairs over 8 layers as in
    /// [`Self::region_bytes`]. A job's data takes at least the layers times a copy's bytes of
    /// each bank.
    pub(super) fn least_on_any_grid(&self) -> (u64, u64) {
        let senders: u64 = self
            .operands()
            .iter()
            .map(|o| match o.along {
                Along::Row => u64::from(self.rect.rows),
                Along::Column => u64::from(self.rect.columns),
            })
            .sum();
        (senders, self.least_layers(senders, None))
    }

    /// What the jobs' data takes of each DRAM bank, `region` bytes a job in each of the
    /// ring's regions in use, and what a bank holds: `(need, usable)`.
    pub(super) fn dram_need(&self, region: u64) -> (u64, u64) {
        let regions = u64::from(self.jobs.min(DRAM_RING));
        (
            DRAM_BASE.saturating_add(region.saturating_mul(regions)),
            crate::chip::dram_bank_usable(self.chip),
        )
    }

    /// The refusal of data that does not fit a DRAM bank: `what` (the data, as the caller
    /// counted it) needs `region` bytes a job ([`Self::dram_need`]). It names `--jobs`, with
    /// the most that fit, when one job's region fits (the ring holds up to [`DRAM_RING`] jobs'
    /// data at once), else `--blocks`. `at_least`: `region` is the least any grid of the chip
    /// takes, so the most jobs that fit is a bound, not a count (the device's grid may hold
    /// fewer).
    pub(super) fn dram_refusal(
        &self,
        what: &str,
        region: u64,
        at_least: bool,
    ) -> Option<BroadcastError> {
        let (need, usable) = self.dram_need(region);
        if need <= usable {
            return None;
        }
        let fit = usable.saturating_sub(DRAM_BASE) / region.max(1);
        Some(match fit {
            0 => flag(
                "--blocks",
                format!("{what} need {need} bytes per DRAM bank (allowed: at most {usable})"),
            ),
            _ => flag(
                "--jobs",
                format!(
                    "{} jobs: {what} need {need} bytes per DRAM bank, each job's data one \
                     region of a ring of at most {DRAM_RING} (allowed: at most {usable}: --jobs \
                     up to {fit}{})",
                    self.jobs,
                    if at_least {
                        ", fewer on a grid whose copies lie deeper"
                    } else {
                        ""
                    }
                ),
            ),
        })
    }
}

impl BroadcastConfig {
    /// The checks every run makes before it starts ([`run`](super::run),
    /// [`run_dispatched`](super::run_dispatched)), on their own: the flag whose value is not
    /// allowed, and why. A caller that runs several configurations (`komorebi bench
    /// broadcast`) checks every one before it runs the first.
    pub fn check_flags(&self) -> Result<(), BroadcastError> {
        self.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimates are public and take any flags, validated or not: they saturate, never
    /// wrap to a small figure (2^66 bytes of trace once came to 65,536).
    #[test]
    fn the_size_estimates_saturate_on_flags_not_yet_validated() {
        let cfg = BroadcastConfig {
            rect: LogicalRect::new(0, 0, 128, 128),
            pages: 21_832,
            blocks: 1 << 31,
            jobs: 1,
            page_size: 1 << 20,
            trace: Some(PathBuf::from("t.json")),
            ..BroadcastConfig::default()
        };
        assert_eq!(cfg.trace_bytes(), u64::MAX);
        assert_eq!(cfg.copy_bytes(), u64::MAX);
    }
}
