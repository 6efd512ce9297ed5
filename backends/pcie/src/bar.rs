//! The one interface to a card's PCIe BARs: TLB windows (allocate, configure, map, access,
//! free) and the BAR0 registers of the PCIe tile.
//!
//! Two implementations: the driver's (`crate::kmd`, tt-kmd ioctls and mmaps) and the
//! simulator's BAR model (`crate::sim`). Everything above this trait (the window plan,
//! translation, telemetry, firmware loading, the HAL proxies) is the same code over both, so a
//! test over the simulator tests the card path.
//!
//! Rules every implementation keeps:
//! * accesses are 32-bit, 4-byte aligned, volatile; bulk copies are whole 4-byte words at
//!   4-byte aligned offsets (the PCIe controller's rule, tt-umd `device_memcpy.cpp`, luwen's
//!   `pci.rs`); anything else is [`PcieError::Unaligned`];
//! * a window is freed only after it is unmapped (tt-kmd's FREE_TLB refuses a mapped window);
//! * [`Bar::fence`] orders every earlier write through any write-combined mapping before any
//!   later access (an `sfence` on x86-64);
//! * no access ever panics: out of range is [`PcieError::OutOfWindow`].

use blackhole_pac::tlb::{TlbConfig, TlbSize};

use crate::error::PcieError;

/// How a window's aperture is mapped into the host's address space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// Uncached: registers and publication words (tt-kmd-lib: "use for register accesses").
    Uncached,
    /// Write-combined: bulk data; a [`Bar::fence`] after the burst.
    WriteCombined,
}

/// An allocated TLB window as its owner holds it.
pub trait WindowHandle {
    /// The window's index (0..202 for 2 MiB windows, 202.. for 4 GiB ones).
    fn index(&self) -> u32;
    /// Its size.
    fn size(&self) -> TlbSize;
    /// How its aperture is mapped.
    fn mapping(&self) -> Mapping;
}

/// What the host knows of the device behind a [`Bar`] before touching the chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceIdentity {
    /// The device node (`/dev/tenstorrent/0`) or the simulator's name.
    pub path: String,
    /// The PCI address `dddd:bb:dd.f`.
    pub pci_address: String,
    /// PCI vendor id (0x1E52).
    pub vendor_id: u16,
    /// PCI device id (0xB140 for Blackhole).
    pub device_id: u16,
    /// The driver's ioctl API version (2 for tt-kmd 2.0.0 and later).
    pub api_version: u32,
    /// The driver's semantic version, `major.minor.patch` (0.0.0 when it does not say).
    pub driver_version: (u8, u8, u8),
    /// Whether AICLK could be raised from idle (SET_POWER_STATE, driver 2.6 and later); when
    /// false, byte and half-word L1 stores by the cores may fail (tt-umd #2812).
    pub clock_raised: bool,
    /// Why not, when it could not.
    pub clock_note: Option<String>,
    /// The firmware bundle version from sysfs (`tt_fw_bundle_ver`), when the driver shows it.
    pub firmware_bundle: Option<String>,
}

/// A card's BARs, as the driver or the simulator presents them.
pub trait Bar {
    /// An allocated window.
    type Window: WindowHandle;

    /// What the device is.
    fn identity(&self) -> &DeviceIdentity;

    /// Allocates a window of `size` mapped as `mapping`. [`PcieError::WindowsExhausted`] when
    /// none of that size is left.
    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<Self::Window, PcieError>;

    /// Programs `window`'s configuration. The caller has fenced and drained every posted write
    /// through the window before (never reprogram with writes in flight, tt-kmd #286).
    fn configure(&mut self, window: &mut Self::Window, config: &TlbConfig)
    -> Result<(), PcieError>;

    /// Unmaps and frees `window`.
    fn free(&mut self, window: Self::Window) -> Result<(), PcieError>;

    /// The 32-bit word at `offset` of `window`'s aperture.
    fn read32(&self, window: &Self::Window, offset: u64) -> Result<u32, PcieError>;

    /// Writes the 32-bit word at `offset` of `window`'s aperture.
    fn write32(&mut self, window: &Self::Window, offset: u64, value: u32) -> Result<(), PcieError>;

    /// Reads `buf.len()` bytes (a multiple of 4) at `offset` (4-byte aligned) of the aperture.
    fn read(&self, window: &Self::Window, offset: u64, buf: &mut [u8]) -> Result<(), PcieError>;

    /// Writes `data` (a multiple of 4 bytes) at `offset` (4-byte aligned) of the aperture.
    fn write(&mut self, window: &Self::Window, offset: u64, data: &[u8]) -> Result<(), PcieError>;

    /// Orders every earlier write before every later access (store fence).
    fn fence(&mut self);

    /// The 32-bit BAR0 register at `offset` (the PCIe tile's NIU and ARC's APB space).
    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError>;

    /// Writes the 32-bit BAR0 register at `offset`: on a Wormhole, ARC's reset-unit registers
    /// that carry the host's messages (`wormhole_pac::arc`). A backend that serves none refuses
    /// with [`PcieError::Bar0Unmapped`] (the default).
    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        let _ = value;
        Err(PcieError::Bar0Unmapped {
            offset,
            mapped: "no BAR0 register is written through this backend",
        })
    }

    /// Lets the device run while the host waits: a short sleep on a card, some cycles of
    /// virtual time on the simulator. Returns the host's estimate of device cycles that passed.
    fn pass_time(&mut self) -> u64;

    /// Asks the driver to write `value` to NoC address `addr` of the tile a window would target
    /// as `target`, on NoC 0, when this process's handle on the device is released, however
    /// the process ends (tt-kmd's SET_NOC_CLEANUP, 2.2.0 and later; one 32-bit write, the
    /// last one asked for). `Ok(true)`: registered; `Ok(false)`: there is no driver to do it
    /// (the simulators, the default).
    fn arm_release_write(
        &mut self,
        target: (u8, u8),
        addr: u64,
        value: u32,
    ) -> Result<bool, PcieError> {
        let _ = (target, addr, value);
        Ok(false)
    }

    /// Takes or gives back resource lock `index` of the device, which every process that opens
    /// the device shares (tt-kmd's LOCK_CTL; the driver gives back a handle's locks when it
    /// closes). `Acquire` never waits: `Ok(true)` taken, `Ok(false)` another handle holds it.
    /// `Release`: `Ok(true)` when this handle held it. A device no other process reaches (the
    /// simulators, the default) has nothing to share: always `Ok(true)`.
    fn resource_lock(&self, index: u8, op: LockOp) -> Result<bool, PcieError> {
        let _ = (index, op);
        Ok(true)
    }
}

/// A step on one of the device's resource locks ([`Bar::resource_lock`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LockOp {
    /// Take the lock unless another handle holds it.
    Acquire,
    /// Give it back.
    Release,
}
