//! The simulator's BAR model as a [`Bar`]: the same windows, registers and telemetry a card
//! presents, over `komorebi_sim::Sim::bar_read` / `bar_write`, with virtual time passing
//! while the host polls.
//!
//! Windows are allocated from the same pools tt-kmd has (201 windows of 2 MiB, window 201
//! being the kernel's, and 8 of 4 GiB), or from smaller pools when [`SimBarOptions`] says so,
//! so that running out of windows and reusing them is tested too. Configuration goes through
//! the window configuration registers in BAR0, as tt-umd programs them.

use std::cell::{Ref, RefCell, RefMut};

use blackhole_pac::tlb::{self, TlbConfig, TlbSize};
use komorebi_sim::Sim;

use crate::bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
use crate::error::PcieError;
use crate::pool::{PoolWindow, WindowPool};

/// How the simulated card's BARs are cut.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SimBarOptions {
    /// 2 MiB windows the host may allocate (at most 201, tt-kmd's number).
    pub windows_2m: u32,
    /// 4 GiB windows the host may allocate (at most 8; 0 models a BAR4 too small for any).
    pub windows_4g: u32,
    /// Device cycles that pass each time the host waits once ([`Bar::pass_time`]): the host's
    /// polling interval. Default 1350, 1 µs at 1350 MHz, about one PCIe read round trip.
    pub poll_cycles: u64,
}

impl Default for SimBarOptions {
    fn default() -> Self {
        Self {
            windows_2m: tlb::KERNEL_TLB_INDEX,
            windows_4g: tlb::TLB_4G_COUNT,
            poll_cycles: 1350,
        }
    }
}

/// A window of the simulated card.
pub type SimWindow = PoolWindow;

/// The simulated card's BARs.
#[derive(Debug)]
pub struct SimBar {
    // A read through a window has effects on a simulated card as on a real one (it lands the
    // writes held before it, it latches the wall clock), while `Bar` reads take `&self`.
    sim: RefCell<Sim>,
    identity: DeviceIdentity,
    options: SimBarOptions,
    pool: WindowPool,
    /// The chip is a Wormhole: its windows' layout and configuration words are its own.
    wormhole: bool,
}

fn sim_error(e: komorebi_sim::SimError) -> PcieError {
    PcieError::Simulator(e.to_string())
}

impl SimBar {
    /// The BARs of the card `sim` simulates.
    pub fn new(sim: Sim, options: SimBarOptions) -> Self {
        // A simulated Wormhole says what it is; its ARC answers in BAR0, and it has ten 2 MiB
        // windows and no 4 GiB ones (tt-kmd's `wormhole.c`).
        let (device_id, windows_2m, windows_4g) = if sim.chip().is_blackhole() {
            (
                crate::chip::DEVICE_ID_BLACKHOLE,
                options.windows_2m,
                options.windows_4g,
            )
        } else {
            let wormhole_2m = wormhole_pac::tlb::WindowSize::Mib2.count() as u32;
            (
                crate::chip::DEVICE_ID_WORMHOLE,
                options.windows_2m.min(wormhole_2m),
                0,
            )
        };
        Self {
            sim: RefCell::new(sim),
            identity: DeviceIdentity {
                path: "pcie-sim".into(),
                pci_address: "0000:00:00.0".into(),
                vendor_id: 0x1E52,
                device_id,
                api_version: 2,
                driver_version: (0, 0, 0),
                // No driver asks for the clock: `Card::open` raises it with the ARC message.
                clock_raised: false,
                clock_note: None,
                firmware_bundle: None,
            },
            pool: WindowPool::new(windows_2m, windows_4g),
            wormhole: device_id == crate::chip::DEVICE_ID_WORMHOLE,
            options,
        }
    }

    /// The simulator behind the BARs.
    pub fn sim(&self) -> Ref<'_, Sim> {
        self.sim.borrow()
    }

    /// The simulator behind the BARs, to inject faults or read statistics.
    pub fn sim_mut(&mut self) -> &mut Sim {
        self.sim.get_mut()
    }

    fn sim_ref(&self) -> RefMut<'_, Sim> {
        self.sim.borrow_mut()
    }

    /// The BAR and offset of `len` bytes at `offset` of `window` (a Wormhole's at its chip's
    /// 2 MiB windows).
    fn place(&self, window: &SimWindow, offset: u64, len: usize) -> Result<(u8, u64), PcieError> {
        let (bar, at) = window.place(offset, len)?;
        Ok(if self.wormhole {
            (bar, crate::wormhole_window::aperture(at))
        } else {
            (bar, at)
        })
    }
}

impl Bar for SimBar {
    type Window = SimWindow;

    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<SimWindow, PcieError> {
        self.pool.allocate(size, mapping)
    }

    fn configure(&mut self, window: &mut SimWindow, config: &TlbConfig) -> Result<(), PcieError> {
        if self.wormhole {
            let word =
                crate::wormhole_window::config_word(config).map_err(|why| PcieError::Target {
                    what: format!("Wormhole TLB window {}", window.index()),
                    why,
                })?;
            let at = crate::wormhole_window::config_offset(window.index());
            return self
                .sim
                .get_mut()
                .bar_write(0, at, &word.to_le_bytes())
                .map_err(sim_error);
        }
        let words = config
            .encode(window.size())
            .map_err(|e| PcieError::Target {
                what: format!("TLB window {}", window.index()),
                why: e.to_string(),
            })?;
        let at = tlb::TLB_CONFIG_BASE as u64 + window.index() as u64 * tlb::TLB_CONFIG_BYTES as u64;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.sim
            .get_mut()
            .bar_write(0, at, &bytes)
            .map_err(sim_error)
    }

    fn free(&mut self, window: SimWindow) -> Result<(), PcieError> {
        self.pool.free(window);
        Ok(())
    }

    fn read32(&self, window: &SimWindow, offset: u64) -> Result<u32, PcieError> {
        let mut b = [0; 4];
        self.read(window, offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&mut self, window: &SimWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        self.write(window, offset, &value.to_le_bytes())
    }

    fn read(&self, window: &SimWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        let (bar, at) = self.place(window, offset, buf.len())?;
        self.sim_ref().bar_read(bar, at, buf).map_err(sim_error)
    }

    fn write(&mut self, window: &SimWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        let (bar, at) = self.place(window, offset, data.len())?;
        self.sim
            .get_mut()
            .bar_write(bar, at, data)
            .map_err(sim_error)
    }

    fn fence(&mut self) {}

    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        if !offset.is_multiple_of(4) {
            return Err(PcieError::Unaligned {
                offset: offset as u64,
                len: 4,
            });
        }
        let mut b = [0; 4];
        self.sim_ref()
            .bar_read(0, offset as u64, &mut b)
            .map_err(sim_error)?;
        Ok(u32::from_le_bytes(b))
    }

    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        self.sim
            .get_mut()
            .bar_write(0, offset as u64, &value.to_le_bytes())
            .map_err(sim_error)
    }

    fn pass_time(&mut self) -> u64 {
        self.sim.get_mut().advance(self.options.poll_cycles);
        self.options.poll_cycles
    }
}
