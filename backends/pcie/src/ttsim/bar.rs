//! One chip of ttsim as a [`Bar`]: TLB windows allocated from the pools tt-kmd would have,
//! programmed by writing their configuration registers in BAR0 as tt-umd does since it
//! programs windows from user space (tt-umd `device/pcie/silicon_tlb_handle.cpp`), and accessed
//! at ttsim's physical addresses of the BARs its config space advertises.
//!
//! A Blackhole build (`bh`, `bh_x2`, ...) has 2 MiB windows in BAR0 (three configuration words
//! each) and 4 GiB windows in BAR4; a Wormhole build (`wh`) has the ten 2 MiB windows of
//! BAR0 (TLB indices 156..=165, at BAR0 `0x09C0_0000`, one 64-bit configuration word each at
//! `0x1FC0_0000 + 8 i`: `wormhole_pac::tlb`) and no 4 GiB ones; its 1 and 16 MiB windows are
//! not used. The PCI device id says which.
//!
//! There is no driver between the host and ttsim, so nothing else owns a window: window 201,
//! which tt-kmd keeps for itself, is still never handed out, so the plan is the one a card
//! gets. Time passes only when the host asks: [`Bar::pass_time`] runs
//! [`TtsimBarOptions::poll_steps`] clock steps of every chip of the library.

use blackhole_pac::tlb::{self, TlbConfig, TlbSize};
use wormhole_pac::tlb::WindowSize;

use super::process::TtsimProcess;
use crate::bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
use crate::chip::ChipKind;
use crate::error::PcieError;
use crate::pool::{PoolWindow, WindowPool};

/// Tenstorrent's PCI vendor id (tt-kmd `enumerate.h`; ttsim `libttsim.cpp` `pci_config_rd32`).
const VENDOR_TENSTORRENT: u16 = 0x1E52;
/// BAR0 ranges ttsim serves to register reads: the PCIe tile's two NIUs (ttsim
/// `libttsim.cpp` `pci_mem_rd_cur`).
const BAR0_READABLE: [(u32, u32); 2] = [(0x1FD0_4000, 0x1FD0_6000), (0x1FD1_4000, 0x1FD1_6000)];
const BAR0_READABLE_NAME: &str = "ttsim serves 0x1FD0_4000..0x1FD0_6000 and \
                                  0x1FD1_4000..0x1FD1_6000 (the PCIe tile's NIUs)";

/// 2 MiB windows a Wormhole has (TLB indices 156..=165).
const WORMHOLE_WINDOWS_2M: u32 = WindowSize::Mib2.count() as u32;

/// How the host uses a ttsim chip's BARs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TtsimBarOptions {
    /// 2 MiB windows the host may allocate (at most 201, tt-kmd's number).
    pub windows_2m: u32,
    /// 4 GiB windows the host may allocate (at most 8).
    pub windows_4g: u32,
    /// Clock steps each [`Bar::pass_time`] runs. ttsim is not timed: a step runs one
    /// instruction of every active core, so this is the host's polling interval in
    /// instructions, not in device time.
    pub poll_steps: u32,
}

impl Default for TtsimBarOptions {
    fn default() -> Self {
        Self {
            windows_2m: tlb::KERNEL_TLB_INDEX,
            windows_4g: tlb::TLB_4G_COUNT,
            poll_steps: 1000,
        }
    }
}

/// A window of a ttsim chip.
pub type TtsimWindow = PoolWindow;

/// One chip of a ttsim library, as its BARs.
#[derive(Debug)]
pub struct TtsimBar {
    process: TtsimProcess,
    chip: u32,
    /// ttsim's physical addresses of BAR0 and BAR4.
    bar0: u64,
    bar4: u64,
    identity: DeviceIdentity,
    options: TtsimBarOptions,
    pool: WindowPool,
    /// The chip, from the PCI device id.
    kind: ChipKind,
}

impl TtsimBar {
    /// Chip `chip` (a PCI device number of [`TtsimProcess::chips`]) of `process`: checks that
    /// it is there and is a Blackhole or a Wormhole, and reads where its BARs are. A Wormhole
    /// gets at most its ten 2 MiB windows and no 4 GiB ones, whatever `options` asks.
    pub fn open(
        process: TtsimProcess,
        chip: u32,
        options: TtsimBarOptions,
    ) -> Result<Self, PcieError> {
        let path = format!("ttsim:{}@{chip}", process.library().display());
        let chips = process.chips()?;
        if !chips.contains(&chip) {
            return Err(PcieError::TtsimUnavailable {
                library: process.library().display().to_string(),
                why: format!(
                    "has no chip @{chip}: this build presents chips {} (ttsim's multi-chip \
                     builds are bh_x2, bh_x4, bh_x32)",
                    list(&chips)
                ),
            });
        }
        let id = process.config_read32(chip, 0)?;
        let (vendor, device) = (id as u16, (id >> 16) as u16);
        let kind = ChipKind::from_device_id(device).filter(|_| vendor == VENDOR_TENSTORRENT);
        let Some(kind) = kind else {
            return Err(PcieError::UnknownChip {
                path,
                vendor,
                device,
            });
        };
        let pool = match kind {
            ChipKind::Blackhole => WindowPool::new(options.windows_2m, options.windows_4g),
            ChipKind::Wormhole => WindowPool::new(options.windows_2m.min(WORMHOLE_WINDOWS_2M), 0),
        };
        let bar = |lo: u32| -> Result<u64, PcieError> {
            let low = process.config_read32(chip, lo)?;
            let high = process.config_read32(chip, lo + 4)?;
            // The low four bits are flags (memory, 64-bit, prefetchable).
            Ok(((high as u64) << 32) | (low & !0xF) as u64)
        };
        let (bar0, bar4) = (bar(0x10)?, bar(0x20)?);
        Ok(Self {
            identity: DeviceIdentity {
                path,
                pci_address: format!("0000:00:{chip:02x}.0"),
                vendor_id: vendor,
                device_id: device,
                // No driver: the host programs the windows itself.
                api_version: 0,
                driver_version: (0, 0, 0),
                clock_raised: false,
                clock_note: None,
                firmware_bundle: None,
            },
            process,
            chip,
            bar0,
            bar4,
            pool,
            options,
            kind,
        })
    }

    /// The chip this is.
    pub fn kind(&self) -> ChipKind {
        self.kind
    }

    /// The card on this chip: [`Card::open`](crate::card::Card::open) for a Blackhole,
    /// [`Card::open_wormhole_card`](crate::card::Card::open_wormhole_card) for a Wormhole (the
    /// same as [`Card::open`](crate::card::Card::open) does for its PCI id).
    pub fn open_card(
        self,
        options: crate::card::CardOptions,
    ) -> Result<crate::card::Card<Self>, PcieError> {
        match self.kind {
            ChipKind::Blackhole => crate::card::Card::open(self, options),
            ChipKind::Wormhole => crate::card::Card::open_wormhole_card(self, options),
        }
    }

    /// The server behind this chip (shared with the library's other chips).
    pub fn process(&self) -> &TtsimProcess {
        &self.process
    }

    /// The chip's PCI device number in its library.
    pub fn chip(&self) -> u32 {
        self.chip
    }

    /// Records what raising AICLK came to (the card reports it in its identity).
    pub fn set_clock(&mut self, raised: bool, note: Option<String>) {
        self.identity.clock_raised = raised;
        self.identity.clock_note = note;
    }

    /// ttsim's physical address of byte `offset` of `window`, checked against its size. A
    /// Wormhole's pool window `i` is its 2 MiB window `156 + i`, at BAR0 `0x09C0_0000 + i`
    /// windows.
    fn place(&self, window: &TtsimWindow, offset: u64, len: usize) -> Result<u64, PcieError> {
        let (bar, at) = window.place(offset, len)?;
        Ok(match (self.kind, bar) {
            (ChipKind::Wormhole, _) => self.bar0 + crate::wormhole_window::aperture(at),
            (ChipKind::Blackhole, 0) => self.bar0 + at,
            (ChipKind::Blackhole, _) => self.bar4 + at,
        })
    }

    /// ttsim's physical address of BAR0 register `offset` of a Wormhole, which must be ARC's
    /// (its CSM and APB windows: the only BAR0 registers ttsim's Wormhole serves).
    fn wormhole_arc(&self, offset: u32) -> Result<u64, PcieError> {
        if !offset.is_multiple_of(4) || !wormhole_pac::arc::BAR0_ARC.contains(&offset) {
            return Err(PcieError::Bar0Unmapped {
                offset,
                mapped: "ttsim's Wormhole serves ARC's CSM and APB at 0x1FE8_0000..0x2000_0000",
            });
        }
        Ok(self.bar0 + offset as u64)
    }

    /// Programs a Wormhole window: its one 64-bit configuration word, as two 32-bit stores
    /// (ttsim takes either). Wormhole's windows have no linked or static-VC fields, no counted
    /// ordering, and ttsim's carry requests on NoC0 only.
    fn configure_wormhole(
        &mut self,
        window: &TtsimWindow,
        config: &TlbConfig,
    ) -> Result<(), PcieError> {
        let refuse = |why: &str| PcieError::UnsupportedChip {
            device_id: self.identity.device_id,
            why: format!("a Wormhole window {why}"),
        };
        if config.noc != 0 {
            return Err(refuse("on ttsim carries requests on NoC0 only (noc 0)"));
        }
        let word = crate::wormhole_window::config_word(config).map_err(|why| refuse(&why))?;
        let at = self.bar0 + crate::wormhole_window::config_offset(window.index());
        self.process.write(at, &(word as u32).to_le_bytes())?;
        self.process
            .write(at + 4, &((word >> 32) as u32).to_le_bytes())
    }
}

fn list(chips: &[u32]) -> String {
    match chips {
        [] => "none".into(),
        [one] => one.to_string(),
        [first, .., last] => format!("{first}..={last}"),
    }
}

impl Bar for TtsimBar {
    type Window = TtsimWindow;

    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<TtsimWindow, PcieError> {
        self.pool.allocate(size, mapping)
    }

    /// Three 32-bit stores to the window's configuration registers, low word first, as tt-umd
    /// writes them ("a 64-bit store to a non-8-byte-aligned Device/UC address causes SIGBUS"
    /// on aarch64). tt-kmd's CONFIGURE_TLB also zeroes the strided register of windows 0..32;
    /// ttsim has no strided registers (it refuses stores past 0x1FC0_09D4), and none of
    /// komorebi's windows uses striding.
    fn configure(&mut self, window: &mut TtsimWindow, config: &TlbConfig) -> Result<(), PcieError> {
        if self.kind == ChipKind::Wormhole {
            return self.configure_wormhole(window, config);
        }
        let words = config.encode(window.size()).map_err(PcieError::TlbConfig)?;
        let at = tlb::config_offset(window.index()).ok_or(PcieError::ForeignWindow {
            index: window.index(),
        })?;
        for (i, w) in words.iter().enumerate() {
            self.process
                .write(self.bar0 + at as u64 + 4 * i as u64, &w.to_le_bytes())?;
        }
        Ok(())
    }

    fn free(&mut self, window: TtsimWindow) -> Result<(), PcieError> {
        self.pool.free(window);
        Ok(())
    }

    fn read32(&self, window: &TtsimWindow, offset: u64) -> Result<u32, PcieError> {
        let mut b = [0; 4];
        self.read(window, offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn write32(&mut self, window: &TtsimWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        self.write(window, offset, &value.to_le_bytes())
    }

    fn read(&self, window: &TtsimWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        let at = self.place(window, offset, buf.len())?;
        self.process.read(at, buf)
    }

    fn write(&mut self, window: &TtsimWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        let at = self.place(window, offset, data.len())?;
        self.process.write(at, data)
    }

    /// ttsim carries out every access in order when it is made: nothing to fence.
    fn fence(&mut self) {}

    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        if self.kind == ChipKind::Wormhole {
            let at = self.wormhole_arc(offset)?;
            let mut b = [0; 4];
            self.process.read(at, &mut b)?;
            return Ok(u32::from_le_bytes(b));
        }
        let served = BAR0_READABLE
            .iter()
            .any(|&(lo, hi)| (lo..hi).contains(&offset));
        if !offset.is_multiple_of(4) || !served {
            return Err(PcieError::Bar0Unmapped {
                offset,
                mapped: BAR0_READABLE_NAME,
            });
        }
        let mut b = [0; 4];
        self.process.read(self.bar0 + offset as u64, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// ARC's registers on a Wormhole (its reset unit carries the host's messages); nothing
    /// else of BAR0 is written.
    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        if self.kind != ChipKind::Wormhole {
            return Err(PcieError::Bar0Unmapped {
                offset,
                mapped: "no BAR0 register of ttsim's Blackhole is written",
            });
        }
        let at = self.wormhole_arc(offset)?;
        self.process.write(at, &value.to_le_bytes())
    }

    /// Runs [`TtsimBarOptions::poll_steps`] clock steps and returns them. A stopped ttsim
    /// runs none; the next access reports why.
    fn pass_time(&mut self) -> u64 {
        match self.process.clock(self.options.poll_steps) {
            Ok(()) => self.options.poll_steps as u64,
            Err(_) => 0,
        }
    }
}
