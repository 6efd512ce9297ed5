//! What the host sees of a chip: tile L1 and DRAM reads and writes, circular-buffer setup, a
//! cycle clock, and a way to let the device run until something the host watches changes.
//!
//! This is the one interface the host runtime uses, so a simulated run and a run on a card go
//! through the same code. [`SimDevice`] implements it on `komorebi-sim`, where "let the device
//! run" advances virtual time; a PCIe device implements it over TLB windows in real time.

use komorebi_hal::{LogicalXy, Role, Xy};

use crate::chip::ChipKind;
use komorebi_kernel::abi;
use komorebi_kernel::handler::{Buffers, HandlerSet};
use komorebi_kernel::image;
use komorebi_kernel::persistent;
use komorebi_sim::{KernelEnv, RunOutcome, Sim, SimCb, SimConfig};

/// A refused device request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DeviceError {
    /// What was refused, and why.
    pub message: String,
    /// The device is lost (hung, reset, removed): nothing more can be done with it.
    pub lost: bool,
}

impl DeviceError {
    /// A refused request; the device is still usable.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            lost: false,
        }
    }
}

impl From<komorebi_sim::SimError> for DeviceError {
    fn from(e: komorebi_sim::SimError) -> Self {
        Self::new(e.to_string())
    }
}

/// Read-only access to tile words, for the conditions the host waits on.
pub trait Peek {
    /// The 32-bit word at L1 `addr` of the tile at NoC0 `tile` (0 if it cannot be read).
    fn peek(&self, tile: Xy, addr: u32) -> u32;
}

/// Why [`Device::advance`] returned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Advance {
    /// The condition held.
    Done,
    /// The deadline came first.
    Deadline,
    /// Nothing can change any more (every kernel waits with no deadline).
    Idle,
}

/// What a device's clock ([`Device::now`]) counts.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ClockKind {
    /// The simulator's cycles: device time by its timing model, at its AICLK.
    #[default]
    Simulated,
    /// A card's tile wall clock: device time, at the AICLK its telemetry reports.
    Card,
    /// ttsim's clock steps: each runs one instruction of every active core and lands every NoC
    /// transfer at issue; ttsim is not timed, so a count of steps is no device time.
    TtsimSteps,
}

impl ClockKind {
    /// Whether a count of this clock is device time (and a duration at AICLK means something).
    pub const fn is_time(self) -> bool {
        !matches!(self, Self::TtsimSteps)
    }

    /// One word for a count of this clock in reports' labels: `cycles`, or `steps` for ttsim's.
    pub const fn word(self) -> &'static str {
        match self {
            Self::TtsimSteps => "steps",
            Self::Simulated | Self::Card => "cycles",
        }
    }

    /// What one count is, in words, for reports.
    pub const fn unit(self) -> &'static str {
        match self {
            Self::Simulated => "simulated cycles",
            Self::Card => "cycles of the tile wall clock",
            Self::TtsimSteps => "ttsim clock steps",
        }
    }
}

/// The host's view of one chip.
pub trait Device {
    /// Which chip this is.
    fn chip(&self) -> ChipKind;
    /// The harvest mask the chip presents, as the control block's harvest word carries it
    /// (Tensix columns on Blackhole, rows on Wormhole).
    fn harvest_word(&self) -> u32;
    /// The chip's fused DRAM bank, if it has one: no DRAM access may name it.
    fn fused_dram(&self) -> Option<u8>;
    /// Reads L1 of the tile at NoC0 `tile`.
    fn read_l1(&self, tile: Xy, addr: u32, buf: &mut [u8]) -> Result<(), DeviceError>;
    /// Writes L1 of the tile at NoC0 `tile`.
    fn write_l1(&mut self, tile: Xy, addr: u32, data: &[u8]) -> Result<(), DeviceError>;
    /// Reads DRAM bank `bank`.
    fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), DeviceError>;
    /// Makes every write so far to `tile` land before any later one; the session calls it
    /// before the word that publishes a command. A no-op where writes to a tile arrive in
    /// order (the simulator's host access, a Strict window).
    fn publish_barrier(&mut self, tile: Xy) -> Result<(), DeviceError> {
        let _ = tile;
        Ok(())
    }
    /// Writes DRAM bank `bank`.
    fn write_dram(&mut self, bank: u8, addr: u64, data: &[u8]) -> Result<(), DeviceError>;
    /// Configures circular buffer `index` of a tile (`pages` pages of `page_size` bytes at `base`).
    fn configure_cb(
        &mut self,
        tile: Xy,
        index: u8,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Result<(), DeviceError>;
    /// The device clock, in AICLK cycles.
    fn now(&self) -> u64;
    /// AICLK in MHz.
    fn aiclk_mhz(&self) -> u32;
    /// What [`Device::now`] counts.
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    /// Lets the device run until `until` holds, cycle `deadline` passes, or nothing can change.
    fn advance(&mut self, deadline: u64, until: &mut dyn FnMut(&dyn Peek) -> bool) -> Advance;
    /// Whether [`advance`](Self::advance) answers [`Advance::Idle`] when nothing can change
    /// (the simulator sees every core wait). A card cannot tell a core that waits from one that
    /// never will report: there a wait for a late command must have a deadline (the default).
    fn knows_idle(&self) -> bool {
        false
    }
    /// The simulator behind this device, if it is one (for traces, faults and statistics).
    fn simulator(&mut self) -> Option<&mut Sim> {
        None
    }
}

/// A kernel's circular buffers on the simulator.
#[derive(Clone, Debug)]
pub struct SimBuffers(pub KernelEnv);

impl Buffers for SimBuffers {
    type Cb = SimCb;
    fn cb(&self, index: u8) -> Option<SimCb> {
        self.0.cb(index)
    }
}

/// Spawns `role`'s persistent kernel on the simulated `tile`, running `handlers`. With `own`
/// (the tile's logical coordinates, as a card's kernel learns them from its NIU) the kernel
/// first makes its boot check and writes its boot word ([`image::come_up`]), and does not run
/// if the check fails: the boot handshake of a loaded card.
pub fn spawn_kernel<H: HandlerSet + 'static>(
    sim: &mut Sim,
    tile: (u8, u8),
    role: Role,
    own: Option<LogicalXy>,
    handlers: H,
) -> Result<(), komorebi_sim::SimError> {
    // The chip's rule for the header's harvest mask, as its firmware applies it.
    let harvest_valid: fn(u32) -> bool = match sim.config().wormhole {
        None => |w| blackhole_pac::harvest::HarvestMask::new(w).is_ok(),
        Some(_) => |w| wormhole_pac::harvest::HarvestMask::new(w).is_ok(),
    };
    sim.spawn(tile, role, move |env| async move {
        let mut h = handlers;
        let (mut ctrl, pause) = (env.ctrl(), env.pause());
        if let Some(own) = own
            && image::come_up(&mut ctrl, role, harvest_valid, Some(Ok(own))).is_err()
        {
            return;
        }
        match (role, env.noc()) {
            (Role::Reader, Some(noc)) => {
                persistent::reader(noc, ctrl, pause, SimBuffers(env), &mut h).await;
            }
            (Role::Writer, Some(noc)) => {
                persistent::writer(noc, ctrl, pause, SimBuffers(env), &mut h).await;
            }
            (Role::Compute, _) => {
                persistent::compute(ctrl, pause, SimBuffers(env), &mut h).await;
            }
            // A data-movement kernel always has its NoC in the simulator.
            _ => {}
        }
    })?;
    Ok(())
}

/// The simulator as a device, with the persistent kernels loaded on every Tensix tile.
#[derive(Debug)]
pub struct SimDevice {
    sim: Sim,
}

impl Peek for Sim {
    fn peek(&self, tile: Xy, addr: u32) -> u32 {
        self.read_l1_u32((tile.x(), tile.y()), addr).unwrap_or(0)
    }
}

impl SimDevice {
    /// A simulated chip as `config` says (its control layout is set to the kernel ABI's), with
    /// the three persistent kernels of every Tensix tile running the handlers `handlers()` makes
    /// (one set per kernel). `logical` gives each tile's logical coordinates for its header.
    pub fn new<H, F>(
        mut config: SimConfig,
        handlers: F,
        logical: impl Fn((u8, u8)) -> (u8, u8),
    ) -> Result<Self, DeviceError>
    where
        H: HandlerSet + 'static,
        F: Fn() -> H,
    {
        config.control = abi::CONTROL_LAYOUT;
        let mut sim = Sim::try_new(config).map_err(|e| DeviceError::new(e.to_string()))?;
        for tile in sim.tensix() {
            let (lx, ly) = logical(tile);
            let base = abi::CONTROL_BASE;
            for (offset, value) in [
                (abi::HEADER_MAGIC, abi::MAGIC),
                (abi::HEADER_VERSION, abi::ABI_VERSION),
                (abi::HEADER_TILE, lx as u32 | (ly as u32) << 8),
                (abi::HEADER_HARVEST, sim.config().harvest_word()),
                (
                    abi::HEADER_CHIP,
                    komorebi_pcie::firmware::chip_word(
                        sim.config().translated(),
                        sim.config().dram_banks().fused(),
                    )
                    .map_err(DeviceError::new)?,
                ),
                (abi::STOP, 0),
                (abi::IDLE_WAIT_LIMIT, u32::MAX),
                (abi::IDLE_WAIT_LIMIT + 4, u32::MAX),
            ] {
                sim.write_l1_u32(tile, base + offset, value)?;
            }
            for role in Role::ALL {
                spawn_kernel(&mut sim, tile, role, None, handlers())?;
            }
        }
        // Let every kernel reach its first wait for a command.
        sim.run(sim.now());
        Ok(Self { sim })
    }
}

impl Device for SimDevice {
    fn chip(&self) -> ChipKind {
        match self.sim.config().wormhole {
            None => ChipKind::Blackhole,
            Some(_) => ChipKind::Wormhole,
        }
    }
    fn harvest_word(&self) -> u32 {
        self.sim.config().harvest_word()
    }
    fn fused_dram(&self) -> Option<u8> {
        self.sim.config().dram_banks().fused()
    }
    fn read_l1(&self, tile: Xy, addr: u32, buf: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.sim.read_l1((tile.x(), tile.y()), addr, buf)?)
    }
    fn write_l1(&mut self, tile: Xy, addr: u32, data: &[u8]) -> Result<(), DeviceError> {
        Ok(self.sim.write_l1((tile.x(), tile.y()), addr, data)?)
    }
    fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.sim.read_dram(bank, addr, buf)?)
    }
    fn write_dram(&mut self, bank: u8, addr: u64, data: &[u8]) -> Result<(), DeviceError> {
        Ok(self.sim.write_dram(bank, addr, data)?)
    }
    fn configure_cb(
        &mut self,
        tile: Xy,
        index: u8,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Result<(), DeviceError> {
        Ok(self
            .sim
            .configure_cb((tile.x(), tile.y()), index, base, page_size, pages)?)
    }
    fn now(&self) -> u64 {
        self.sim.now()
    }
    fn aiclk_mhz(&self) -> u32 {
        self.sim.config().timing.aiclk_mhz
    }
    fn advance(&mut self, deadline: u64, until: &mut dyn FnMut(&dyn Peek) -> bool) -> Advance {
        if until(&self.sim) {
            return Advance::Done;
        }
        match self.sim.run_until(deadline, |s| until(s)) {
            RunOutcome::Stopped => Advance::Done,
            RunOutcome::Deadline => Advance::Deadline,
            RunOutcome::Quiescent => Advance::Idle,
        }
    }
    fn knows_idle(&self) -> bool {
        true
    }
    fn simulator(&mut self) -> Option<&mut Sim> {
        Some(&mut self.sim)
    }
}
