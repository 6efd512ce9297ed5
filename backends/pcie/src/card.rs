//! A card as the host sees it: the window plan, translated coordinates, telemetry, and every
//! host access (tile L1 and registers, DRAM, multicast) over one [`Bar`].
//!
//! # Window plan (after tt-metal's `tt_metal/llrt/tlb_config.cpp`)
//! * One 2 MiB window per enabled Tensix tile at local address 0, covering its whole L1, for
//!   the control block, program words and reports; uncached, with the ordering of
//!   [`CardOptions::tile_ordering`] (default Strict, as tt-metal's: 'the launch_msg "kernel
//!   config" needs to arrive prior to the "go" message', `configure_static_tlbs`).
//! * One 4 GiB window per working DRAM bank, write-combined, Strict (tt-metal, at 040a27c,
//!   programs its DRAM windows Posted, and only when all 8 banks work); none for the fused DRAM
//!   bank, whose every access is refused ([`PcieError::FusedDram`]): nothing answers at its
//!   ports on a card.
//! * One write-combined window reprogrammed per multicast rectangle (firmware images).
//! * One uncached Strict spare window, reprogrammed on demand: tile registers (soft reset,
//!   reset PCs, wall clock, `NOC_ID_LOGICAL`), ARC, and any tile or bank that got no window of
//!   its own when the driver had fewer windows than the plan asks for.
//!
//! A Wormhole has ten 2 MiB windows and no 4 GiB ones: the spare and nine tiles get one; the
//! other tiles and every DRAM bank go through the spare ([`Card::open_wormhole_card`]).
//!
//! A window is reprogrammed only after a store fence and, if anything was written through it,
//! a read back of the last word written, so no posted write is in flight when it moves
//! (tt-kmd #286). Before any window is used, under translation, every tile's `NOC_ID_LOGICAL`
//! is read back through a window to its translated coordinates and must name them.
//!
//! # Coordinates
//! When the PCIe NIU's `NIU_CFG_0` bit 14 is set (the production default) every window
//! target is a translated coordinate, through [`blackhole_pac::translate`]; the harvest mask
//! it needs comes from ARC telemetry (tag 34; a table without it enables every column, as
//! tt-umd reads it).
//!
//! # The fused DRAM bank
//! ARC telemetry tag 36 (`ENABLED_GDDR`) says which DRAM banks work; a table without it means
//! all 8, and more than one bank off is refused ([`PcieError::DramHarvest`]), both as tt-umd
//! reads it (`BlackholeTTDevice::get_chip_info`, `blackhole_coordinate_manager.cpp`;
//! [`DramBanks::from_enabled_gddr`]). The translation is the ARC firmware's for that bank
//! ([`Translation::with_dram`]), and [`Card::fused_dram`] is what the firmware loader writes
//! into every tile's chip word.
//!
//! # Hung devices
//! A read of 0xFFFF_FFFF where the value cannot be that (wall clock high half, registers,
//! telemetry) is checked against the PCIe NIU's `NOC_NODE_ID` in BAR0 (a Wormhole's ARC NIU's):
//! if that reads 0xFFFF_FFFF too the device is hung or was reset, otherwise the tile is; both
//! are [`PcieError::Hung`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;

use blackhole_pac::arc::{self, tag};
use blackhole_pac::harvest::{DramBanks, HarvestMask};
use blackhole_pac::niu::NiuCfg0;
use blackhole_pac::tensix;
use blackhole_pac::tlb::{TLB_2M_SIZE, TlbConfig, TlbOrdering, TlbSize};
use blackhole_pac::translate::Translation;
use komorebi_hal::Xy;

use crate::arc::{ArcPort, MESSAGE_LOCK};
use crate::bar::{Bar, DeviceIdentity, LockOp, Mapping};
use crate::chip::{CardChip, ChipKind};
use crate::error::PcieError;
use crate::telemetry::{ArcRead, Telemetry};
use crate::window::{self, Moving};

mod options;
pub use options::CardOptions;

/// One enabled Tensix tile.
#[derive(Debug)]
pub(crate) struct Tile<W> {
    /// Coordinates as a window targets them (translated when translation is on).
    target: (u8, u8),
    pub(crate) window: Option<W>,
    /// The offset of the last word written through `window` not yet read back.
    pub(crate) written: RefCell<Option<u64>>,
}

/// A card (or the simulated one) with its windows set up.
pub struct Card<B: Bar> {
    pub(crate) bar: RefCell<B>,
    pub(crate) options: CardOptions,
    telemetry: Telemetry,
    chip: CardChip,
    aiclk_mhz: u32,
    /// Whether the card reported `aiclk_mhz` (else assumed: [`Self::aiclk_reported`]).
    aiclk_reported: bool,
    pub(crate) tiles: BTreeMap<Xy, Tile<B::Window>>,
    pub(crate) dram: Vec<Option<B::Window>>,
    pub(crate) spare: RefCell<Option<Moving<B::Window>>>,
    pub(crate) mcast: RefCell<Option<Moving<B::Window>>>,
    /// DRAM banks written through their own 4 GiB windows since they were last read back: the
    /// offset of the last word written ([`Card::publish_barrier`] reads it back).
    pub(crate) dram_written: RefCell<BTreeMap<u8, u64>>,
    /// The L1 address of the last word a multicast wrote and its value, until every tile read
    /// it back ([`Card::landed`]).
    pub(crate) mcast_written: RefCell<Option<(u32, u32)>>,
    clock_tile: Xy,
    /// The bar's identity, with what raising AICLK at open came to.
    identity: DeviceIdentity,
    /// What the open found worth saying that did not fail it.
    notes: Vec<String>,
}

impl<B: Bar> std::fmt::Debug for Card<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Card")
            .field("path", &self.bar.borrow().identity().path)
            .field("chip", &self.chip.kind())
            .field("harvest", &self.chip.harvest_word())
            .field("fused_dram", &self.chip.fused_dram())
            .field("translation", &self.chip.translated())
            .field("tiles", &self.tiles.len())
            .finish()
    }
}

impl<B: Bar> Card<B> {
    /// Sets up `bar`'s card: checks it is alive, waits until ARC is ready, reads translation
    /// and telemetry (harvest mask, fused DRAM bank), waits until DRAM is trained, raises AICLK
    /// with the ARC message `AICLK_GO_BUSY` and waits until telemetry shows it (a clock that does
    /// not settle is recorded in [`Card::identity`], never an error, as tt-umd logs and goes on),
    /// and allocates and programs the window plan. Every wait is bounded by
    /// [`CardOptions::open`] ([`crate::arc`]).
    ///
    /// A Wormhole (PCI device id 0x401E) is opened by its own sequence over BAR0
    /// ([`Card::open_wormhole_card`]).
    pub fn open(bar: B, options: CardOptions) -> Result<Self, PcieError> {
        let device_id = bar.identity().device_id;
        match ChipKind::from_device_id(device_id) {
            Some(ChipKind::Blackhole) => {}
            Some(ChipKind::Wormhole) => return Self::open_wormhole_card(bar, options),
            None => {
                return Err(PcieError::UnsupportedChip {
                    device_id,
                    why: "not a Blackhole (0xB140) or a Wormhole (0x401E)".into(),
                });
            }
        }
        let node = bar.bar0_read32(arc::PCIE_NOC_NODE_ID_BAR0)?;
        if node == arc::HUNG_READ {
            return Err(PcieError::Hung {
                what: "the PCIe NIU's NOC_NODE_ID (BAR0 0x1FD0_4044)".into(),
            });
        }
        let chip = CardChip::Blackhole {
            harvest: HarvestMask::NONE,
            dram_banks: DramBanks::ALL,
            translation: None,
        };
        let mut card = Self::unplanned(bar, options, chip, tensix::AICLK_IDLE_MHZ)?;
        crate::arc::wait_arc_ready(&card, options.open.arc_ready)?;
        // Translation only once ARC's hardware init is done: it turns translation on (from
        // the harvesting, `InitNocTranslationFromHarvesting`) before it reports ready
        // (tt-zephyr-platforms, the SMC firmware's init).
        let cfg0 = NiuCfg0(card.bar_mut().bar0_read32(arc::PCIE_NIU_CFG_0_BAR0)?);
        card.telemetry = crate::arc::wait_telemetry(&card, options.open.telemetry)?;
        // A table without ENABLED_TENSIX_COL (firmware from before column harvesting was
        // reported, or ttsim, which harvests nothing) means every column is enabled: tt-umd
        // reads a missing tag as an empty harvest mask (`BlackholeTTDevice::get_chip_info`).
        let harvest = card.telemetry.harvest();
        let dram_banks = card.telemetry.dram_banks()?;
        if let Some(mhz) = card.telemetry.get(tag::AICLK).filter(|&m| m > 0) {
            card.aiclk_mhz = mhz;
            card.aiclk_reported = true;
        }
        let translation = cfg0
            .noc_id_translate_en()
            .then(|| Translation::with_dram(harvest, dram_banks.fused()));
        card.chip = CardChip::Blackhole {
            harvest,
            dram_banks,
            translation,
        };
        if let Some(note) = crate::arc::wait_dram_trained(&card, options.open.dram_training)? {
            card.notes.push(note);
        }
        if options.raise_clock {
            card.raise_clock()?;
        }
        card.plan_windows()?;
        card.check_tiles()?;
        Ok(card)
    }

    /// Sets up the Wormhole B0 card behind `bar` as tt-umd does
    /// ([`crate::arc::wormhole::open_card`]): the bus alive (the ARC NIU's `NOC_NODE_ID`), ARC
    /// started (scratch 5 and the post code, within [`CardOptions::open`]'s ARC wait), whether
    /// translation is on, the harvested rows (`ARC_GET_HARVESTING`), telemetry (the tagged
    /// table, or the legacy flat one), every DRAM channel trained (within the training wait),
    /// AICLK raised with `ARC_GO_BUSY` and read back with `GET_AICLK` (a clock that does not
    /// settle is recorded in [`Card::identity`], not an error; with
    /// [`CardOptions::raise_clock`] off, only read), then the window plan.
    ///
    /// Windows and kernels use raw NoC0 coordinates whether translation is on or not: the
    /// translation tables map entries 0..=15 to themselves (tt-isa-documentation
    /// `WormholeB0/NoC/Coordinates.md`), which every Wormhole tile's coordinates are; the open
    /// notes which it found. ttsim's `wh` build models every step (its ARC's post code, the
    /// telemetry table, the messages). The window plan: Wormhole's ten 2 MiB windows go to the
    /// spare and nine tiles; the other tiles and every DRAM bank go through the spare window,
    /// and no multicast window is left, nor needed: without translation the loader writes tile
    /// by tile.
    pub fn open_wormhole_card(mut bar: B, options: CardOptions) -> Result<Self, PcieError> {
        let found = crate::arc::wormhole::open_card(&mut bar, &options.open, options.raise_clock)?;
        Self::wormhole(bar, options, found)
    }

    /// The Wormhole card of what its open found, with its windows planned.
    fn wormhole(
        bar: B,
        options: CardOptions,
        found: crate::arc::wormhole::Found,
    ) -> Result<Self, PcieError> {
        let chip = CardChip::Wormhole {
            harvest: found.harvest,
        };
        let mut card = Self::unplanned(bar, options, chip, found.aiclk_mhz)?;
        card.aiclk_reported = found.clock.aiclk_mhz != 0;
        card.telemetry = found.telemetry;
        found.clock.record(&mut card.identity);
        card.notes = found.notes;
        card.plan_windows()?;
        Ok(card)
    }

    /// A card of `chip` at `aiclk_mhz` with only its spare window, before telemetry and the
    /// window plan.
    fn unplanned(
        mut bar: B,
        options: CardOptions,
        chip: CardChip,
        aiclk_mhz: u32,
    ) -> Result<Self, PcieError> {
        let spare = bar.allocate(TlbSize::Size2M, Mapping::Uncached)?;
        let identity = bar.identity().clone();
        Ok(Self {
            bar: RefCell::new(bar),
            options,
            telemetry: Telemetry::default(),
            chip,
            aiclk_mhz,
            aiclk_reported: false,
            tiles: BTreeMap::new(),
            dram: Vec::new(),
            spare: RefCell::new(Some(Moving {
                window: spare,
                config: None,
                written: None,
            })),
            mcast: RefCell::new(None),
            dram_written: RefCell::new(BTreeMap::new()),
            mcast_written: RefCell::new(None),
            clock_tile: Xy::default(),
            identity,
            notes: Vec::new(),
        })
    }

    /// Raises AICLK (the ARC message; on the driver path SET_POWER_STATE asked already) and
    /// records what came of it: the clock telemetry shows, `clock_raised`, `clock_note`.
    fn raise_clock(&mut self) -> Result<(), PcieError> {
        let out = crate::arc::raise_aiclk(&*self, &self.options.open)?;
        if out.aiclk_mhz != 0 {
            self.aiclk_mhz = out.aiclk_mhz;
            self.aiclk_reported = true;
        }
        out.record(&mut self.identity);
        Ok(())
    }

    /// Under translation, reads every tile's `NOC_ID_LOGICAL` (the translated coordinates the
    /// ARC firmware gave it) through a window targeting its translated coordinates, before any
    /// window is used: a harvest mask that does not match the chip would otherwise put every
    /// later access on the wrong tile (a check tt-kmd's own tests make, `test/tlbs.cpp`
    /// `VerifyTensixNodeIdsBlackhole`). Without translation there is nothing to compare.
    fn check_tiles(&self) -> Result<(), PcieError> {
        if !self.chip.translated() {
            return Ok(());
        }
        for (&p, tile) in &self.tiles {
            let w = self.read_reg(p, tensix::NOC_ID_LOGICAL_ADDR)?;
            let w = self.check_alive(w, || format!("NOC_ID_LOGICAL of NoC0 {p}"))?;
            let found = ((w & 0x3F) as u8, (w >> 6 & 0x3F) as u8);
            if found != tile.target {
                return Err(PcieError::Target {
                    what: format!("the window to NoC0 {p} (translated {:?})", tile.target),
                    why: format!(
                        "reached a tile whose NOC_ID_LOGICAL is {found:?}: the {} does not \
                         give this chip's translation",
                        self.chip.harvest_text()
                    ),
                });
            }
        }
        Ok(())
    }

    fn plan_windows(&mut self) -> Result<(), PcieError> {
        let mut tiles = BTreeMap::new();
        for p in self.chip.tensix() {
            let target = self.target(p)?;
            tiles.insert(
                p,
                Tile {
                    target,
                    window: None,
                    written: RefCell::new(None),
                },
            );
        }
        let bar = self.bar.get_mut();
        if self.options.window_per_tile {
            for tile in tiles.values_mut() {
                let mut w = match bar.allocate(TlbSize::Size2M, Mapping::Uncached) {
                    Ok(w) => w,
                    // Fewer windows than tiles: the rest share the spare window.
                    Err(PcieError::WindowsExhausted { .. }) => break,
                    Err(e) => return Err(e),
                };
                let config = TlbConfig {
                    ordering: self.options.tile_ordering,
                    ..TlbConfig::unicast(tile.target.0, tile.target.1, 0)
                };
                bar.configure(&mut w, &config)?;
                tile.window = Some(w);
            }
        }
        let banks = self.chip.kind().dram_banks();
        let mut dram = Vec::with_capacity(banks as usize);
        for bank in 0..banks {
            let port = self.chip.dram_port_of(bank)?;
            if !self.chip.dram_works(bank) || self.chip.kind() != ChipKind::Blackhole {
                // No window onto the fused bank: `dram_chunks` refuses it before any window.
                // Wormhole has no 4 GiB windows: its banks go through the spare window.
                dram.push(None);
                continue;
            }
            let target = self.chip.target(port).unwrap_or((port.x(), port.y()));
            let bar = self.bar.get_mut();
            match bar.allocate(TlbSize::Size4G, Mapping::WriteCombined) {
                Ok(mut w) => {
                    let config = TlbConfig {
                        ordering: TlbOrdering::Strict,
                        ..TlbConfig::unicast(target.0, target.1, 0)
                    };
                    bar.configure(&mut w, &config)?;
                    dram.push(Some(w));
                }
                Err(PcieError::WindowsExhausted { .. }) => dram.push(None),
                Err(e) => return Err(e),
            }
        }
        self.clock_tile = *tiles.keys().next().ok_or_else(|| {
            PcieError::Telemetry("telemetry says no Tensix column is enabled".into())
        })?;
        self.tiles = tiles;
        self.dram = dram;
        let bar = self.bar.get_mut();
        if let Ok(w) = bar.allocate(TlbSize::Size2M, Mapping::WriteCombined) {
            *self.mcast.get_mut() = Some(Moving {
                window: w,
                config: None,
                written: None,
            });
        }
        Ok(())
    }

    /// What the device is, with what raising AICLK at open came to (`clock_raised`: telemetry
    /// showed the busy clock; `clock_note`: why not).
    pub fn identity(&self) -> DeviceIdentity {
        self.identity.clone()
    }

    /// What the open (and the boot) found worth saying without failing (DRAM training that
    /// could not be checked, no release write, ...).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Adds a note to [`Card::notes`].
    pub(crate) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The chip as the open found it: which, its harvesting, DRAM banks and translation.
    pub fn chip(&self) -> &CardChip {
        &self.chip
    }

    /// The fused DRAM bank ARC telemetry reports (`ENABLED_GDDR`), if one is.
    pub fn fused_dram(&self) -> Option<u8> {
        self.chip.fused_dram()
    }

    /// How many DRAM banks got a 4 GiB window of their own (the others go through the spare
    /// window; the fused DRAM bank gets none).
    pub fn dram_windows(&self) -> usize {
        self.dram.iter().filter(|w| w.is_some()).count()
    }

    /// The coordinate translation in force for window targets, if translation is on (a
    /// Blackhole's; a Wormhole's windows take raw coordinates).
    pub fn translation(&self) -> Option<&Translation> {
        match &self.chip {
            CardChip::Blackhole { translation, .. } => translation.as_ref(),
            CardChip::Wormhole { .. } => None,
        }
    }

    /// AICLK in MHz as telemetry reported it at open, after raising it; when the card reported
    /// none, the idle clock (Blackhole) or the target (Wormhole), so device time has a rate.
    pub fn aiclk_mhz(&self) -> u32 {
        self.aiclk_mhz
    }

    /// AICLK as the card reported it (telemetry, a Wormhole's `GET_AICLK`); `None` if it did not.
    pub fn aiclk_reported(&self) -> Option<u32> {
        self.aiclk_reported.then_some(self.aiclk_mhz)
    }

    /// The telemetry read at open.
    pub fn telemetry(&self) -> &Telemetry {
        &self.telemetry
    }

    /// Every enabled Tensix tile, NoC0, in ascending order.
    pub fn tensix(&self) -> impl Iterator<Item = Xy> + '_ {
        self.tiles.keys().copied()
    }

    /// How many tiles got a window of their own.
    pub fn tiles_with_window(&self) -> usize {
        self.tiles.values().filter(|t| t.window.is_some()).count()
    }

    /// Lets the device run while the host waits once ([`Bar::pass_time`]).
    pub fn pass_time(&self) -> u64 {
        self.bar.borrow_mut().pass_time()
    }

    /// The BARs, for what only the backend knows.
    pub fn bar(&self) -> std::cell::Ref<'_, B> {
        self.bar.borrow()
    }

    /// The BARs, for what only the backend knows (the simulator behind them).
    pub fn bar_mut(&mut self) -> &mut B {
        self.bar.get_mut()
    }

    /// Coordinates a window targets for the tile at NoC0 `p`.
    pub fn target(&self, p: Xy) -> Result<(u8, u8), PcieError> {
        self.chip.target(p).ok_or_else(|| PcieError::Target {
            what: format!("NoC0 {p}"),
            why: "has no translated coordinates a host window can target".into(),
        })
    }

    pub(crate) fn tile(&self, p: Xy) -> Result<&Tile<B::Window>, PcieError> {
        self.tiles.get(&p).ok_or_else(|| PcieError::Target {
            what: format!("NoC0 {p}"),
            why: format!(
                "is not an enabled Tensix tile of this {} ({})",
                self.chip.kind(),
                self.chip.harvest_text()
            ),
        })
    }

    /// Runs `f` on the spare window programmed as `config`, reprogramming it only when it
    /// holds another configuration, and only after draining what was written through it.
    fn on_spare<R>(
        &self,
        config: TlbConfig,
        f: impl FnOnce(&mut B, &B::Window) -> Result<(R, Option<u64>), PcieError>,
    ) -> Result<R, PcieError> {
        window::on_moving(&self.bar, &self.spare, config, f)
    }

    fn spare_config(&self, target: (u8, u8), base: u64) -> TlbConfig {
        TlbConfig {
            ordering: TlbOrdering::Strict,
            ..TlbConfig::unicast(target.0, target.1, base)
        }
    }

    /// Reads L1 of the tile at NoC0 `tile`.
    pub fn read_l1(&self, tile: Xy, addr: u32, buf: &mut [u8]) -> Result<(), PcieError> {
        self.check_l1(addr, buf.len())?;
        let t = self.tile(tile)?;
        match &t.window {
            Some(w) => window::read_any(&*self.bar.borrow(), w, addr as u64, buf),
            None => self.on_spare(self.spare_config(t.target, 0), |bar, w| {
                window::read_any(bar, w, addr as u64, buf).map(|()| ((), None))
            }),
        }
    }

    /// Writes L1 of the tile at NoC0 `tile`.
    pub fn write_l1(&self, tile: Xy, addr: u32, data: &[u8]) -> Result<(), PcieError> {
        self.check_l1(addr, data.len())?;
        let t = self.tile(tile)?;
        match &t.window {
            Some(w) => {
                let last = window::write_any(&mut *self.bar.borrow_mut(), w, addr as u64, data)?;
                if last.is_some() {
                    *t.written.borrow_mut() = last;
                }
                Ok(())
            }
            None => self.on_spare(self.spare_config(t.target, 0), |bar, w| {
                window::write_any(bar, w, addr as u64, data).map(|last| ((), last))
            }),
        }
    }

    /// Reads DRAM bank `bank` at `addr`.
    pub fn read_dram(&self, bank: u8, addr: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        self.dram_chunks(bank, addr, buf.len(), |bar, w, at, range| {
            window::read_any(bar, w, at, &mut buf[range]).map(|()| None)
        })
    }

    /// Writes DRAM bank `bank` at `addr`, then fences (the next [`Card::publish_barrier`] or
    /// [`Card::landed`] reads the last word back).
    pub fn write_dram(&self, bank: u8, addr: u64, data: &[u8]) -> Result<(), PcieError> {
        self.dram_chunks(bank, addr, data.len(), |bar, w, at, range| {
            window::write_any(bar, w, at, &data[range])
        })?;
        self.bar.borrow_mut().fence();
        Ok(())
    }

    /// Runs `f(bar, window, offset, range)` for the pieces of a DRAM access that one window
    /// reaches: the whole access through the bank's own 4 GiB window, or 2 MiB pieces through
    /// the spare window (every bank of a Wormhole). A bank that does not exist, or the fused
    /// DRAM bank, is refused first.
    fn dram_chunks(
        &self,
        bank: u8,
        addr: u64,
        len: usize,
        mut f: impl FnMut(&mut B, &B::Window, u64, Range<usize>) -> Result<Option<u64>, PcieError>,
    ) -> Result<(), PcieError> {
        let kind = self.chip.kind();
        let window = self
            .dram
            .get(bank as usize)
            .ok_or_else(|| PcieError::Target {
                what: format!("DRAM bank {bank}"),
                why: format!("a {kind} has banks 0..{}", kind.dram_banks()),
            })?;
        if let CardChip::Blackhole { dram_banks, .. } = &self.chip
            && !dram_banks.contains(bank)
        {
            return Err(PcieError::FusedDram {
                what: format!("DRAM bank {bank} at {addr:#x}+{len}"),
                bank,
                banks: *dram_banks,
            });
        }
        if addr
            .checked_add(len as u64)
            .is_none_or(|e| e > kind.dram_bank_bytes())
        {
            return Err(PcieError::Target {
                what: format!("DRAM bank {bank} at {addr:#x}+{len}"),
                why: format!("is beyond the bank's {} GiB", kind.dram_bank_bytes() >> 30),
            });
        }
        if let Some(w) = window {
            if let Some(last) = f(&mut self.bar.borrow_mut(), w, addr, 0..len)? {
                self.dram_written.borrow_mut().insert(bank, last);
            }
            return Ok(());
        }
        let port = self.chip.dram_port_of(bank)?;
        let target = self.chip.target(port).unwrap_or((port.x(), port.y()));
        let mut done = 0;
        while done < len {
            let (base, within) = window::base(addr + done as u64, TlbSize::Size2M);
            let n = ((TLB_2M_SIZE - within) as usize).min(len - done);
            let range = done..done + n;
            self.on_spare(self.spare_config(target, base), |bar, w| {
                f(bar, w, within, range).map(|last| ((), last))
            })?;
            done += n;
        }
        Ok(())
    }

    /// Reads the register at local address `addr` (`0xFFB0_0000..`) of the tile at NoC0
    /// `tile`, through the spare window.
    pub fn read_reg(&self, tile: Xy, addr: u32) -> Result<u32, PcieError> {
        let target = self.tile(tile)?.target;
        let (base, within) = window::base(addr as u64, TlbSize::Size2M);
        self.on_spare(self.spare_config(target, base), |bar, w| {
            bar.read32(w, within).map(|v| (v, None))
        })
    }

    /// Writes the register at local address `addr` of the tile at NoC0 `tile`.
    pub fn write_reg(&self, tile: Xy, addr: u32, value: u32) -> Result<(), PcieError> {
        let target = self.tile(tile)?.target;
        let (base, within) = window::base(addr as u64, TlbSize::Size2M);
        self.on_spare(self.spare_config(target, base), |bar, w| {
            bar.write32(w, within, value).map(|()| ((), Some(within)))
        })?;
        self.bar.borrow_mut().fence();
        Ok(())
    }

    /// Checks a word that cannot be 0xFFFF_FFFF: if it is, tells a hung device (the PCIe
    /// NIU's `NOC_NODE_ID`, a Wormhole's ARC NIU's, reads 0xFFFF_FFFF too) from a dead tile.
    pub fn check_alive(&self, value: u32, what: impl FnOnce() -> String) -> Result<u32, PcieError> {
        if value != arc::HUNG_READ {
            return Ok(value);
        }
        let (answers, niu) = self.niu_answers()?;
        Err(PcieError::Hung {
            what: if answers {
                format!(
                    "{} (the {niu} NIU still answers: that tile is dead)",
                    what()
                )
            } else {
                format!("{} and the {niu} NIU's NOC_NODE_ID", what())
            },
        })
    }

    /// Whether the bus answers, and which NIU says so: the PCIe NIU's `NOC_NODE_ID`, or a
    /// Wormhole's ARC NIU's (the word tt-umd's hang detectors read), is not 0xFFFF_FFFF.
    pub(crate) fn niu_answers(&self) -> Result<(bool, &'static str), PcieError> {
        let (offset, niu) = match self.chip.kind() {
            ChipKind::Blackhole => (arc::PCIE_NOC_NODE_ID_BAR0, "PCIe"),
            ChipKind::Wormhole => (wormhole_pac::arc::ARC_NOC_NODE_ID_BAR0, "ARC"),
        };
        let node = self.bar.borrow().bar0_read32(offset)?;
        Ok((node != arc::HUNG_READ, niu))
    }

    /// The device clock: the 64-bit wall clock of the first Tensix tile, read live high half,
    /// low half, live high half again until both high halves agree. Not the high half that
    /// reading the low half latches: that latch is shared with the tile's cores, and the
    /// firmware reads `WALL_CLOCK_L` in every wait (`komorebi_silicon::cycles`), so between the
    /// host's two reads a core may latch the high half after the low half wrapped, a clock
    /// 2^32 cycles ahead.
    pub fn now(&self) -> Result<u64, PcieError> {
        let tile = self.clock_tile;
        let what = || format!("the wall clock of NoC0 {tile}");
        let mut high = self.check_alive(self.read_reg(tile, tensix::WALL_CLOCK_H_LIVE)?, what)?;
        // The high half moves once in 2^32 cycles (seconds): a second try always agrees, a
        // third is for a device that is not counting as a clock does.
        for _ in 0..3 {
            let low = self.read_reg(tile, tensix::WALL_CLOCK_L)?;
            let again = self.check_alive(self.read_reg(tile, tensix::WALL_CLOCK_H_LIVE)?, what)?;
            if again == high {
                return Ok((high as u64) << 32 | low as u64);
            }
            high = again;
        }
        Err(PcieError::Target {
            what: what(),
            why: "its high half changed between every two reads: it does not count as a clock"
                .into(),
        })
    }

    /// Writes `data` at L1 `addr` (4-byte aligned; a partial last word is padded with zeros)
    /// of every enabled Tensix tile: one multicast over the
    /// translated rectangle of all of them when translation is on (harvested columns, moved
    /// to the end of the translated grid, fall outside it), a unicast to each otherwise
    /// (tt-umd does not multicast without translation either).
    pub fn multicast_l1(&self, addr: u32, data: &[u8]) -> Result<(), PcieError> {
        self.check_l1(addr, data.len())?;
        let rect = self
            .chip
            .translated()
            .then(|| {
                let targets = self.tiles.values().map(|t| t.target);
                let (mut lo, mut hi) = ((u8::MAX, u8::MAX), (0, 0));
                for (x, y) in targets {
                    lo = (lo.0.min(x), lo.1.min(y));
                    hi = (hi.0.max(x), hi.1.max(y));
                }
                (lo.0 <= hi.0).then_some((lo, hi))
            })
            .flatten();
        let (Some((start, end)), true) = (rect, self.mcast.borrow().is_some()) else {
            for tile in self.tensix().collect::<Vec<_>>() {
                self.write_l1(tile, addr, data)?;
            }
            return Ok(());
        };
        let config = TlbConfig {
            start,
            multicast: true,
            ordering: TlbOrdering::Strict,
            ..TlbConfig::unicast(end.0, end.1, 0)
        };
        // Reads never multicast, so a partial word cannot be merged: the start must be
        // aligned, and a partial last word is padded with zeros.
        if !addr.is_multiple_of(4) {
            return Err(PcieError::Unaligned {
                offset: addr as u64,
                len: data.len(),
            });
        }
        let mut words = data.to_vec();
        words.resize(data.len().div_ceil(4) * 4, 0);
        window::on_moving(&self.bar, &self.mcast, config, |bar, w| {
            bar.write(w, addr as u64, &words).map(|()| ((), None))
        })?;
        self.bar.borrow_mut().fence();
        if let Some(last) = words.last_chunk::<4>() {
            let at = addr + words.len() as u32 - 4;
            *self.mcast_written.borrow_mut() = Some((at, u32::from_le_bytes(*last)));
        }
        Ok(())
    }
}

impl<B: Bar> Card<B> {
    fn check_l1(&self, addr: u32, len: usize) -> Result<(), PcieError> {
        let size = self.chip.kind().l1_size();
        if addr as u64 + len as u64 > size as u64 {
            return Err(PcieError::Target {
                what: format!("L1 {addr:#x}+{len}"),
                why: format!(
                    "is beyond a {} Tensix tile's {} bytes of L1",
                    self.chip.kind(),
                    size
                ),
            });
        }
        Ok(())
    }
}

impl<B: Bar> Card<B> {
    /// A Blackhole's AICLK back to idle (`AICLK_GO_LONG_IDLE`) if above it, as tt-umd's close
    /// does (true if sent and taken; a Wormhole's is left). The drop calls it unless
    /// [`CardOptions::idle_clock_at_drop`] is off.
    pub fn idle_clock(&mut self) -> Result<bool, PcieError> {
        if self.chip.kind() != ChipKind::Blackhole || self.aiclk_mhz <= tensix::AICLK_IDLE_MHZ {
            return Ok(false);
        }
        crate::arc::lower_aiclk(&*self, self.options.open.arc_message)?;
        self.aiclk_mhz = tensix::AICLK_IDLE_MHZ;
        Ok(true)
    }
}

impl<B: Bar> Card<B> {
    /// The ARC tile these ports reach is a Blackhole's, at NoC (8, 0): a Wormhole's ARC takes
    /// its messages and telemetry through BAR0 ([`crate::arc::wormhole`]).
    fn blackhole_arc(&self) -> Result<(), PcieError> {
        match self.chip.kind() {
            ChipKind::Blackhole => Ok(()),
            kind => Err(PcieError::UnsupportedChip {
                device_id: self.identity.device_id,
                why: format!(
                    "a {kind}'s ARC is not on the NoC at {:?}: it is reached through BAR0 \
                     (`arc::wormhole`); this port serves a Blackhole's",
                    arc::ARC_XY
                ),
            }),
        }
    }
}

impl<B: Bar> ArcPort for Card<B> {
    fn arc_write32(&self, addr: u64, value: u32) -> Result<(), PcieError> {
        self.blackhole_arc()?;
        let (base, within) = window::base(addr, TlbSize::Size2M);
        self.on_spare(self.spare_config(arc::ARC_XY, base), |bar, w| {
            bar.write32(w, within, value).map(|()| ((), Some(within)))
        })
    }

    fn arc_wait(&self) -> u64 {
        self.pass_time()
    }

    fn message_lock(&self, op: LockOp) -> Result<bool, PcieError> {
        self.bar.borrow().resource_lock(MESSAGE_LOCK, op)
    }
}

impl<B: Bar> ArcRead for Card<B> {
    fn arc_read32(&self, addr: u64) -> Result<u32, PcieError> {
        self.blackhole_arc()?;
        let (base, within) = window::base(addr, TlbSize::Size2M);
        self.on_spare(self.spare_config(arc::ARC_XY, base), |bar, w| {
            bar.read32(w, within).map(|v| (v, None))
        })
    }
}
