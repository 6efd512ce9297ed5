//! A card reached through `komorebi-pcie`, as a [`Device`]: the same host runtime (Session,
//! Run, the feeder, the dispatcher) runs on it unchanged.
//!
//! Two backends sit under it: tt-kmd's (a real card, [`open_card`]) and the simulator's BAR
//! model ([`open_pcie_sim`], `--device pcie-sim`). When the loader releases a core whose L1
//! holds the komorebi image header, the simulated tile starts its native kernel
//! ([`Exec::Native`]) or executes the image itself on its RISC-V core ([`Exec::Firmware`],
//! `--exec firmware`).
//!
//! Time: [`Device::now`] is the wall clock of a tile; [`Device::advance`] polls the watched
//! words and lets the device run between polls ([`Bar::pass_time`]: a short sleep on a card,
//! [`SimBarOptions::poll_cycles`] of virtual time on the simulator) until the condition holds
//! or the device clock passes the deadline.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use komorebi_hal::{LogicalXy, Role, Xy};
use komorebi_kernel::handler::HandlerSet;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::chip::CardChip;
use komorebi_pcie::firmware::{self, BootOptions, Firmware};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_pcie::{Bar, PcieError};
use komorebi_sim::{Boot, Sim, SimConfig};

use crate::host::device::{Advance, ClockKind, Device, DeviceError, Peek, spawn_kernel};

impl From<PcieError> for DeviceError {
    fn from(e: PcieError) -> Self {
        Self {
            lost: matches!(
                e,
                PcieError::Hung { .. } | PcieError::Gone { .. } | PcieError::TtsimStopped(_)
            ),
            message: e.to_string(),
        }
    }
}

/// What a [`Bar`] offers beyond a card's registers: the simulator behind it, if any (for
/// traces, faults, statistics, and its circular-buffer model, which stands in for the stream
/// registers firmware programs on a card).
pub trait Behind {
    /// The simulator behind the BARs, if they are simulated.
    fn simulator(&mut self) -> Option<&mut Sim>;
    /// What the device's clock counts.
    fn clock_kind(&self) -> ClockKind;
}

impl Behind for SimBar {
    fn simulator(&mut self) -> Option<&mut Sim> {
        Some(self.sim_mut())
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
}

#[cfg(target_os = "linux")]
impl Behind for komorebi_pcie::kmd::KmdBar {
    fn simulator(&mut self) -> Option<&mut Sim> {
        None
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Card
    }
}

#[cfg(target_os = "linux")]
impl Behind for komorebi_pcie::ttsim::TtsimBar {
    fn simulator(&mut self) -> Option<&mut Sim> {
        None
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::TtsimSteps
    }
}

/// A card (or the simulated one) with komorebi's firmware running on every Tensix tile.
pub struct PcieDevice<B: Bar> {
    card: Card<B>,
    /// The device clock as last read.
    clock: Cell<u64>,
    /// The first error a read without an error channel met (a `Peek`, `now`): the device is
    /// lost, and every later access says why.
    lost: RefCell<Option<PcieError>>,
}

impl<B: Bar> std::fmt::Debug for PcieDevice<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcieDevice")
            .field("card", &self.card)
            .finish()
    }
}

impl<B: Bar> PcieDevice<B> {
    /// The device over `card`, whose firmware runs.
    pub fn new(card: Card<B>) -> Self {
        Self {
            card,
            clock: Cell::new(0),
            lost: RefCell::new(None),
        }
    }

    /// The card.
    pub fn card(&self) -> &Card<B> {
        &self.card
    }

    fn lose(&self, e: PcieError) {
        self.lost.borrow_mut().get_or_insert(e);
    }

    fn alive(&self) -> Result<(), DeviceError> {
        match &*self.lost.borrow() {
            Some(e) => Err(e.clone().into()),
            None => Ok(()),
        }
    }
}

impl<B: Bar> Peek for PcieDevice<B> {
    fn peek(&self, tile: Xy, addr: u32) -> u32 {
        let mut b = [0; 4];
        match self.card.read_l1(tile, addr, &mut b) {
            Ok(()) => u32::from_le_bytes(b),
            Err(e) => {
                self.lose(e);
                0
            }
        }
    }
}

impl<B: Bar + Behind> Device for PcieDevice<B> {
    fn chip(&self) -> crate::chip::ChipKind {
        self.card.chip().kind()
    }
    fn harvest_word(&self) -> u32 {
        self.card.chip().harvest_word()
    }
    fn fused_dram(&self) -> Option<u8> {
        self.card.fused_dram()
    }
    fn read_l1(&self, tile: Xy, addr: u32, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.alive()?;
        Ok(self.card.read_l1(tile, addr, buf)?)
    }
    fn write_l1(&mut self, tile: Xy, addr: u32, data: &[u8]) -> Result<(), DeviceError> {
        self.alive()?;
        Ok(self.card.write_l1(tile, addr, data)?)
    }
    fn publish_barrier(&mut self, tile: Xy) -> Result<(), DeviceError> {
        Ok(self.card.publish_barrier(tile)?)
    }
    fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.alive()?;
        Ok(self.card.read_dram(bank, addr, buf)?)
    }
    fn write_dram(&mut self, bank: u8, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.alive()?;
        Ok(self.card.write_dram(bank, addr, data)?)
    }
    fn configure_cb(
        &mut self,
        tile: Xy,
        index: u8,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Result<(), DeviceError> {
        // On a card the table entry the session writes is all there is: firmware builds its
        // handles from it and zeroes the stream counters at boot. The simulator's model of
        // those counters is configured through its back door.
        if let Some(sim) = self.card.bar_mut().simulator() {
            sim.configure_cb((tile.x(), tile.y()), index, base, page_size, pages)?;
        }
        Ok(())
    }
    fn now(&self) -> u64 {
        match self.card.now() {
            Ok(t) => {
                self.clock.set(t);
                t
            }
            Err(e) => {
                self.lose(e);
                self.clock.get()
            }
        }
    }
    fn aiclk_mhz(&self) -> u32 {
        self.card.aiclk_mhz()
    }
    fn clock_kind(&self) -> ClockKind {
        self.card.bar().clock_kind()
    }
    fn advance(&mut self, deadline: u64, until: &mut dyn FnMut(&dyn Peek) -> bool) -> Advance {
        loop {
            if until(&*self) {
                return Advance::Done;
            }
            if self.lost.borrow().is_some() {
                // Nothing the host watches can change on a lost device.
                return Advance::Idle;
            }
            if self.now() >= deadline {
                return Advance::Deadline;
            }
            self.card.bar_mut().pass_time();
            // A firmware core the simulated card stopped (an access or command the model
            // refuses) never comes back: say so now rather than wait out the deadline. A card
            // has no such signal; its host waits and times out.
            let fault = self
                .card
                .bar_mut()
                .simulator()
                .and_then(|sim| sim.core_faults().first().cloned());
            if let Some(f) = fault {
                self.lose(PcieError::Simulator(format!(
                    "a firmware core stopped: {f}"
                )));
            }
        }
    }
    fn simulator(&mut self) -> Option<&mut Sim> {
        self.card.bar_mut().simulator()
    }
}

/// What runs on the simulated card's cores (`--exec`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Exec {
    /// The native Rust kernels, started by the simulator for each released core whose L1 holds
    /// a komorebi image header (the default: fast).
    #[default]
    Native,
    /// The firmware ELF files themselves, executed instruction by instruction on the
    /// simulator's RISC-V cores (`komorebi_sim::riscv`) against register-level NIUs.
    Firmware,
}

impl std::str::FromStr for Exec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "native" => Ok(Self::Native),
            "firmware" => Ok(Self::Firmware),
            other => Err(format!(
                "'{other}' is not an --exec (allowed: native, firmware)"
            )),
        }
    }
}

impl std::fmt::Display for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Native => "native",
            Self::Firmware => "firmware",
        })
    }
}

/// The logical coordinates of every enabled Tensix tile of `chip`, by NoC0 tile.
pub(crate) fn logical_of(chip: &CardChip) -> impl Fn(Xy) -> (u8, u8) + use<> {
    let chip = chip.clone();
    move |t| chip.logical(t).unwrap_or((0xFF, 0xFF))
}

/// The chip a simulator configuration models, as a card describes it (no translation: the
/// logical coordinates do not depend on it).
pub(crate) fn card_chip_of(config: &SimConfig) -> CardChip {
    match config.wormhole {
        Some(harvest) => CardChip::Wormhole { harvest },
        None => CardChip::Blackhole {
            harvest: config.harvest,
            dram_banks: config.dram_banks(),
            translation: None,
        },
    }
}

/// How long the loader waits for every kernel of a card to come up (tt-metal waits 10 s).
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long, in device time, the loader waits on the simulated card, whose native kernels
/// come up within a few cycles of their release.
pub const SIM_BOOT_TIMEOUT: Duration = Duration::from_millis(1);

/// The simulator presented as a PCIe card, with komorebi's firmware loaded through
/// `komorebi-pcie` exactly as onto a card: every core starts in reset, the loader writes the
/// images (`firmware`, or the native images) and releases the cores, and each released core
/// whose L1 holds its komorebi image header starts its native kernel, built by `handlers()`.
pub fn open_pcie_sim<H, F>(
    config: SimConfig,
    options: SimBarOptions,
    card_options: CardOptions,
    firmware: Option<Firmware>,
    exec: Exec,
    handlers: F,
) -> Result<PcieDevice<SimBar>, PcieError>
where
    H: HandlerSet + 'static,
    F: Fn() -> H + 'static,
{
    let harvest = card_chip_of(&config);
    let mut sim = Sim::try_new(SimConfig {
        boot: Boot::HeldInReset,
        control: komorebi_kernel::abi::CONTROL_LAYOUT,
        ..config
    })
    .map_err(|e| PcieError::Simulator(e.to_string()))?;
    let logical = logical_of(&harvest);
    sim.set_boot_hook(Box::new(
        move |sim: &mut Sim, tile: (u8, u8), role: Role| {
            if exec == Exec::Firmware {
                // The image itself runs: its boot check, its loop, its NIU registers.
                return sim.spawn_firmware(tile, role).map(|_| ());
            }
            let own = Xy::new(tile.0, tile.1)
                .map(&logical)
                .unwrap_or((0xFF, 0xFF));
            spawn_kernel(
                sim,
                tile,
                role,
                Some(LogicalXy::new(own.0, own.1)),
                handlers(),
            )
        },
    ));
    let mut card = Card::open(SimBar::new(sim, options), card_options)?;
    let firmware = firmware.unwrap_or_else(Firmware::native);
    let logical = logical_of(card.chip());
    let booted = firmware::boot(
        &mut card,
        &firmware,
        logical,
        BootOptions {
            timeout: SIM_BOOT_TIMEOUT,
            native_allowed: true,
        },
    );
    if let Err(PcieError::FirmwareDidNotStart {
        mut tiles,
        waited_ms,
    }) = booted
    {
        // The simulator knows why each core did not start; say it with the first few.
        let failures = card.bar_mut().sim().boot_failures().to_vec();
        tiles.extend(failures.iter().take(3).map(|f| format!("simulator: {f}")));
        return Err(PcieError::FirmwareDidNotStart { tiles, waited_ms });
    }
    booted?;
    Ok(PcieDevice::new(card))
}

/// The card at `path` (`/dev/tenstorrent/N`) with the firmware ELF files in
/// `firmware(kind)` for its chip loaded and started. The device is opened and checked first,
/// so a missing or unusable card is reported before the firmware files are looked at.
#[cfg(target_os = "linux")]
pub fn open_card(
    path: &std::path::Path,
    firmware: impl FnOnce(crate::chip::ChipKind) -> Result<std::path::PathBuf, PcieError>,
) -> Result<PcieDevice<komorebi_pcie::kmd::KmdBar>, PcieError> {
    let bar = komorebi_pcie::kmd::KmdBar::open(path)?;
    let mut card = Card::open(bar, CardOptions::default())?;
    let firmware = &Firmware::from_dir(&firmware(card.chip().kind())?)?;
    let logical = logical_of(card.chip());
    firmware::boot(
        &mut card,
        firmware,
        logical,
        BootOptions {
            timeout: BOOT_TIMEOUT,
            native_allowed: false,
        },
    )?;
    Ok(PcieDevice::new(card))
}

/// The card at `path` opened as [`open_card`] opens it (its windows, telemetry and harvesting)
/// but with nothing loaded and no core started or reset: what its cores left in L1 (the log
/// rings of `komorebi log`) is read as they left it. Nothing else of a session may be used on
/// it: its cores run whatever they last ran.
#[cfg(target_os = "linux")]
pub fn attach_card(
    path: &std::path::Path,
) -> Result<PcieDevice<komorebi_pcie::kmd::KmdBar>, PcieError> {
    let bar = komorebi_pcie::kmd::KmdBar::open(path)?;
    Ok(PcieDevice::new(Card::open(bar, looking())?))
}

/// Chip `chip` of the ttsim server `process`, opened as [`attach_card`] opens a card: after
/// another host (a session on the same server) ran its firmware, its L1 as that left it.
#[cfg(target_os = "linux")]
pub fn attach_ttsim(
    process: komorebi_pcie::ttsim::TtsimProcess,
    chip: u32,
) -> Result<PcieDevice<komorebi_pcie::ttsim::TtsimBar>, PcieError> {
    use komorebi_pcie::ttsim::{TtsimBar, TtsimBarOptions};
    let bar = TtsimBar::open(process, chip, TtsimBarOptions::default())?;
    Ok(PcieDevice::new(bar.open_card(looking())?))
}

/// The options of a card opened only to look at it ([`attach_card`], [`attach_ttsim`],
/// `komorebi devices`): its clock is left as it is, at the open and at the drop, for the run
/// another process may have on it.
pub(crate) fn looking() -> CardOptions {
    CardOptions {
        idle_clock_at_drop: false,
        raise_clock: false,
        ..CardOptions::default()
    }
}

/// How long, in device time, the loader waits on ttsim: its steps count as cycles at the AICLK
/// its telemetry reports, and the firmware comes up within a few thousand steps.
pub const TTSIM_BOOT_TIMEOUT: Duration = Duration::from_millis(100);

/// Chip `chip` of the ttsim server `process` (a Blackhole, or a Wormhole on a `wh` build: its
/// PCI id says), with the firmware ELF files in `firmware(kind)` for that chip loaded and
/// started through the same loader a card gets.
#[cfg(target_os = "linux")]
pub fn open_ttsim(
    process: komorebi_pcie::ttsim::TtsimProcess,
    chip: u32,
    firmware: impl FnOnce(crate::chip::ChipKind) -> Result<std::path::PathBuf, PcieError>,
) -> Result<PcieDevice<komorebi_pcie::ttsim::TtsimBar>, PcieError> {
    use komorebi_pcie::ttsim::{TtsimBar, TtsimBarOptions};
    let bar = TtsimBar::open(process, chip, TtsimBarOptions::default())?;
    let kind = bar.kind();
    let mut card = bar.open_card(CardOptions::default())?;
    let firmware = &Firmware::from_dir(&firmware(kind)?)?;
    let logical = logical_of(card.chip());
    firmware::boot(
        &mut card,
        firmware,
        logical,
        BootOptions {
            timeout: TTSIM_BOOT_TIMEOUT,
            native_allowed: false,
        },
    )?;
    Ok(PcieDevice::new(card))
}
