//! The PCIe TLB windows as the host sees them: BAR0's 202 windows of 2 MiB and its
//! configuration registers, BAR4's 8 windows of 4 GiB (tt-isa-documentation
//! `BlackholeA0/PCIExpressTile/HostToDeviceTLBs.md`, tt-kmd `blackhole.c`; docs/blackhole.md,
//! "TLB windows"), and the PCIe tile's own BAR0 registers (`NIU_CFG_0`, `NOC_NODE_ID`).
//!
//! A window's coordinates are translated coordinates when NoC translation is on
//! (`SimConfig::translation`, the PCIe NIU's `NIU_CFG_0` bit 14): unicast targets and both
//! multicast corners go through `blackhole_pac::translate::Translation::to_noc0`, and
//! coordinates that translate to nothing are [`SimError::Untranslatable`]. With translation
//! off they are raw coordinates of the window's NoC. A multicast's receivers are then the
//! enabled Tensix tiles of the raw rectangle between the two corners on the window's NoC,
//! with the hardware's wrap semantics (a start corner past the end corner wraps around the
//! torus): so a NoC1 multicast still needs its corners swapped under translation (ISA), and a
//! harvested column inside the rectangle simply has no tile to receive.
//!
//! A simulated Wormhole has its own windows (tt-isa-documentation
//! `WormholeB0/PCIExpressTile/TLBs.md`, `wormhole_pac::tlb`): 156 of 1 MiB, 10 of 2 MiB and 20
//! of 16 MiB, all in BAR0, each configured by a 64-bit word at `0x1FC0_0000 + 8 i`. They reach
//! its grid (10 x 12, raw coordinates: it has no translation) and its DRAM ports; its ARC is
//! reached through BAR0 instead (`arc_wormhole`).
//!
//! This module decodes: it keeps the windows' configuration words and says where an access
//! lands ([`Place`]); `bar` carries it out. Imports only `tile` (to find a window's target)
//! and leaf modules.

use blackhole_pac::grid::{Noc0Xy, TileKind};
use blackhole_pac::tlb::{self, TlbConfig, TlbOrdering, TlbSize};
use blackhole_pac::translate::{TranslatedXy, Translation};

use crate::config::ChipModel;
use crate::error::SimError;
use crate::packet::{NO_TILE, Target, TileIx};
use crate::route::Grid;
use crate::tile::Tiles;

/// NoC0 coordinates of the PCIe tile the host uses (the one `NOC_NODE_ID` reports).
pub(crate) const PCIE_XY: (u8, u8) = blackhole_pac::grid::PCIE[0];

/// The PCIe tile's BAR0 register at `offset`, if it is one: `NIU_CFG_0` (bit 14: translation)
/// or `NOC_NODE_ID` (x in bits 0..5, y in 6..11).
pub(crate) fn bar0_register(offset: u64, translation: bool) -> Option<u32> {
    match offset {
        o if o == blackhole_pac::arc::PCIE_NIU_CFG_0_BAR0 as u64 => {
            Some(u32::from(translation) << 14)
        }
        o if o == blackhole_pac::arc::PCIE_NOC_NODE_ID_BAR0 as u64 => {
            Some(PCIE_XY.0 as u32 | (PCIE_XY.1 as u32) << 6)
        }
        _ => None,
    }
}

/// Where a window access lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// An enabled Tensix tile and a local address in it (L1, or a register at and above
    /// `0xFFB0_0000`).
    Tile(TileIx, u64),
    /// A DRAM bank, reached through the port at NoC0 `port`, and an address in the bank.
    Dram { bank: u8, port: (u8, u8), addr: u64 },
    /// ARC at (8, 0) and a NoC address in it.
    Arc(u64),
    /// Every enabled Tensix of the window's multicast rectangle, and a local address.
    Multicast(Vec<TileIx>, u64),
}

/// A window access: where it lands, and whether the window orders it (`Strict`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    pub place: Place,
    pub strict: bool,
}

/// Words of window configuration: three per window.
const CONFIG_WORDS: usize = 3 * 210;
/// Words of strided-multicast registers (windows 0..32) right after them.
const STRIDED_WORDS: usize = tlb::TLB_STRIDED_COUNT as usize;

/// Words of a Wormhole's window configuration: a 64-bit word per window, no strided
/// registers (`wormhole_pac::tlb`).
const WORMHOLE_CONFIG_WORDS: usize = 2 * wormhole_pac::tlb::WINDOWS;

/// The saved configuration words of every window, and the strided-multicast registers (only
/// zero is accepted there: strided and excluded multicast are not modelled). A Wormhole's
/// windows are its own: 1, 2 and 16 MiB in BAR0, a 64-bit word each.
#[derive(Clone, Debug)]
pub(crate) struct Tlbs {
    regs: Vec<u32>,
    wormhole: bool,
}

impl Tlbs {
    /// Every window's configuration zero, on a Wormhole (`wormhole`) or a Blackhole.
    pub(crate) fn new(wormhole: bool) -> Self {
        let words = if wormhole {
            WORMHOLE_CONFIG_WORDS
        } else {
            CONFIG_WORDS + STRIDED_WORDS
        };
        Self {
            regs: vec![0; words],
            wormhole,
        }
    }

    fn config_reg(&self, offset: u64, len: usize) -> Option<usize> {
        let base = tlb::TLB_CONFIG_BASE as u64;
        let end = base + 4 * self.regs.len() as u64;
        let inside = offset
            .checked_add(len as u64)
            .is_some_and(|last| offset >= base && last <= end);
        (inside && offset % 4 == 0 && len % 4 == 0).then(|| ((offset - base) / 4) as usize)
    }

    /// Writes configuration registers when BAR0 `offset..+data.len()` is some (BAR0
    /// `0x1FC0_0000..`, the strided registers included); `Ok(false)` (nothing written)
    /// otherwise. A nonzero strided-multicast word is refused, nothing written.
    pub(crate) fn write_config(&mut self, offset: u64, data: &[u8]) -> Result<bool, SimError> {
        let Some(word) = self.config_reg(offset, data.len()) else {
            return Ok(false);
        };
        let words: Vec<u32> = data
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (i, &v) in words.iter().enumerate() {
            if !self.wormhole && word + i >= CONFIG_WORDS && v != 0 {
                return Err(SimError::BadBar(format!(
                    "strided multicast register of window {} set to {v:#x}: strided and \
                     excluded multicast are not modelled (write 0)",
                    word + i - CONFIG_WORDS
                )));
            }
        }
        self.regs[word..word + words.len()].copy_from_slice(&words);
        Ok(true)
    }

    /// Reads configuration registers when BAR0 `offset..+buf.len()` is some; false (nothing
    /// read) otherwise.
    pub(crate) fn read_config(&self, offset: u64, buf: &mut [u8]) -> bool {
        let Some(word) = self.config_reg(offset, buf.len()) else {
            return false;
        };
        for (i, chunk) in buf.chunks_mut(4).enumerate() {
            chunk.copy_from_slice(&self.regs[word + i].to_le_bytes());
        }
        true
    }

    /// A Wormhole's window at BAR0 `offset`: its configuration as a [`TlbConfig`] and the tile
    /// address `offset` shows.
    fn wormhole_window(&self, offset: u64, len: usize) -> Result<(TlbConfig, u64), SimError> {
        use wormhole_pac::tlb as wh;
        let (index, size, within) = wh::window_at(offset).ok_or_else(|| {
            SimError::BadBar(format!("BAR0 offset {offset:#x} is not in a TLB window"))
        })?;
        if within + len as u64 > 1 << size.shift() {
            return Err(SimError::BadBar(format!(
                "access at {offset:#x}+{len} crosses the end of TLB window {index}"
            )));
        }
        let word = self.regs[2 * index] as u64 | (self.regs[2 * index + 1] as u64) << 32;
        let (addr, t) = wh::decode(size, word).ok_or_else(|| {
            SimError::BadBar(format!("TLB window {index}: ordering 3 is not defined"))
        })?;
        let config = TlbConfig {
            addr,
            end: t.end,
            start: t.start,
            noc: t.noc,
            multicast: t.multicast,
            ordering: match t.ordering {
                wh::Ordering::Relaxed => TlbOrdering::Relaxed,
                wh::Ordering::Strict => TlbOrdering::Strict,
                wh::Ordering::Posted => TlbOrdering::Posted,
            },
            linked: false,
            static_vc: None,
        };
        Ok((config, addr + within))
    }

    fn window(&self, bar: u8, offset: u64, len: usize) -> Result<(TlbConfig, u64), SimError> {
        if self.wormhole {
            return match bar {
                0 => self.wormhole_window(offset, len),
                _ => Err(SimError::BadBar(format!(
                    "BAR{bar}: a Wormhole's TLB windows are all in BAR0"
                ))),
            };
        }
        let (index, size, within) = match bar {
            0 if offset < tlb::TLB_2M_COUNT as u64 * tlb::TLB_2M_SIZE => (
                (offset / tlb::TLB_2M_SIZE) as u32,
                TlbSize::Size2M,
                offset % tlb::TLB_2M_SIZE,
            ),
            4 if offset < tlb::TLB_4G_COUNT as u64 * tlb::TLB_4G_SIZE => (
                tlb::TLB_4G_FIRST_INDEX + (offset / tlb::TLB_4G_SIZE) as u32,
                TlbSize::Size4G,
                offset % tlb::TLB_4G_SIZE,
            ),
            _ => {
                return Err(SimError::BadBar(format!(
                    "BAR{bar} offset {offset:#x} is not in a TLB window"
                )));
            }
        };
        if within + len as u64 > size.bytes() {
            return Err(SimError::BadBar(format!(
                "access at {offset:#x}+{len} crosses the end of TLB window {index}"
            )));
        }
        let n = 3 * index as usize;
        let words = [self.regs[n], self.regs[n + 1], self.regs[n + 2]];
        let config = TlbConfig::decode(words, size);
        Ok((config, config.addr + within))
    }

    /// NoC0 coordinates of the tile a window's `p` names: translated coordinates under
    /// `translation`, raw coordinates of `noc` on the chip's `grid` otherwise.
    fn noc0(
        translation: Option<&Translation>,
        grid: Grid,
        noc: u8,
        p: (u8, u8),
    ) -> Result<(u8, u8), SimError> {
        match translation {
            Some(t) => TranslatedXy::new(p.0, p.1)
                .and_then(|xy| t.to_noc0(xy))
                .map(|q| q.get())
                .ok_or(SimError::Untranslatable(p)),
            None if p.0 < grid.width && p.1 < grid.height => Ok(grid.raw(noc, p)),
            None => Err(SimError::BadBar(format!(
                "TLB window targets NoC{noc} {p:?}, which is off the {} x {} grid (translation \
                 is off)",
                grid.width, grid.height
            ))),
        }
    }

    /// What a unicast access at NoC0 `p` of `chip`, address `addr`, reaches.
    fn unicast(tiles: &Tiles, chip: &ChipModel, p: (u8, u8), addr: u64) -> Result<Place, SimError> {
        if let Some(ix) = tiles.at0(p) {
            return Ok(Place::Tile(ix, addr));
        }
        if let Some(bank) = chip.dram_ports.iter().position(|ports| ports.contains(&p)) {
            return Ok(Place::Dram {
                bank: bank as u8,
                port: p,
                addr,
            });
        }
        if !chip.is_blackhole() {
            // A harvested Tensix has no tile; a Wormhole's ARC is reached through BAR0.
            let tensix = wormhole_pac::grid::TENSIX_X.contains(&p.0)
                && wormhole_pac::grid::TENSIX_Y.contains(&p.1);
            return Err(if tensix {
                SimError::NoTile(p)
            } else {
                SimError::BadBar(format!(
                    "TLB window targets NoC0 {p:?}, a tile of the {} that is not Tensix or DRAM \
                     (the simulator does not model it)",
                    chip.name
                ))
            });
        }
        let kind = Noc0Xy::new(p.0, p.1).map(|q| q.tile());
        match kind {
            Some(TileKind::Arc) => Ok(Place::Arc(addr)),
            Some(TileKind::Tensix) => Err(SimError::NoTile(p)),
            kind => Err(SimError::BadBar(format!(
                "TLB window targets NoC0 {p:?}, a {kind:?} tile the simulator does not model"
            ))),
        }
    }

    /// Where an access of `len` bytes to BAR `bar` at `offset` (not a configuration register)
    /// lands among the chip's `tiles`; `translation` when NoC translation is on. Reads never
    /// multicast.
    pub(crate) fn access(
        &self,
        (tiles, chip): (&Tiles, &ChipModel),
        translation: Option<&Translation>,
        bar: u8,
        offset: u64,
        len: usize,
        write: bool,
    ) -> Result<Access, SimError> {
        let (config, addr) = self.window(bar, offset, len)?;
        let noc = config.noc;
        let strict = config.ordering == TlbOrdering::Strict;
        let grid = chip.grid;
        if !config.multicast {
            let p = Self::noc0(translation, grid, noc, config.end)?;
            let place = Self::unicast(tiles, chip, p, addr)?;
            return Ok(Access { place, strict });
        }
        if !write {
            return Err(SimError::BadBar(
                "a read through a multicast TLB window (reads never multicast)".into(),
            ));
        }
        let s = grid.raw(noc, Self::noc0(translation, grid, noc, config.start)?);
        let e = grid.raw(noc, Self::noc0(translation, grid, noc, config.end)?);
        let dests = tiles
            .multicast_dests(noc, NO_TILE, (s, e), false)
            .into_iter()
            .filter_map(|(t, _)| match t {
                Target::L1(ix) => Some(ix),
                Target::Dram(_) => None,
            })
            .collect();
        Ok(Access {
            place: Place::Multicast(dests, addr),
            strict,
        })
    }
}
