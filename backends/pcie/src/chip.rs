//! The chip behind a card, as the host path needs it: which tiles are Tensix and enabled, what
//! a window targets for each, where each DRAM bank is reached, and the words the firmware
//! loader writes. Blackhole and Wormhole B0; the PCI device id says which.
//!
//! Everything chip-specific of [`Card`](crate::Card) and the loader goes through [`CardChip`],
//! so the window plan, the accesses and the boot sequence are one code path for both chips.

use blackhole_pac::grid::{DRAM_WORKER_PORT, Noc0Xy};
use blackhole_pac::harvest::{DramBanks, HarvestMask};
use blackhole_pac::translate::Translation;
use komorebi_hal::Xy;

use crate::error::PcieError;

/// Blackhole's PCI device id (tt-kmd `enumerate.h`).
pub const DEVICE_ID_BLACKHOLE: u16 = 0xB140;
/// Wormhole's PCI device id (tt-kmd `enumerate.h`).
pub const DEVICE_ID_WORMHOLE: u16 = 0x401E;

/// Which chip.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChipKind {
    /// Tenstorrent Blackhole.
    Blackhole,
    /// Tenstorrent Wormhole B0.
    Wormhole,
}

impl ChipKind {
    /// The chip with PCI device id `id`, if it is one of these.
    pub const fn from_device_id(id: u16) -> Option<Self> {
        match id {
            DEVICE_ID_BLACKHOLE => Some(Self::Blackhole),
            DEVICE_ID_WORMHOLE => Some(Self::Wormhole),
            _ => None,
        }
    }

    /// Its PCI device id.
    pub const fn device_id(self) -> u16 {
        match self {
            Self::Blackhole => DEVICE_ID_BLACKHOLE,
            Self::Wormhole => DEVICE_ID_WORMHOLE,
        }
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Blackhole => "Blackhole",
            Self::Wormhole => "Wormhole B0",
        }
    }

    /// Bytes of a Tensix tile's L1.
    pub const fn l1_size(self) -> u32 {
        match self {
            Self::Blackhole => blackhole_pac::tensix::L1_SIZE,
            Self::Wormhole => wormhole_pac::tensix::L1_SIZE,
        }
    }

    /// DRAM banks the chip has.
    pub const fn dram_banks(self) -> u8 {
        match self {
            Self::Blackhole => blackhole_pac::grid::DRAM_BANKS as u8,
            Self::Wormhole => wormhole_pac::grid::DRAM_BANKS as u8,
        }
    }

    /// NoC grid columns and rows.
    pub const fn grid(self) -> (u8, u8) {
        match self {
            Self::Blackhole => (blackhole_pac::grid::GRID_X, blackhole_pac::grid::GRID_Y),
            Self::Wormhole => (wormhole_pac::grid::GRID_X, wormhole_pac::grid::GRID_Y),
        }
    }

    /// NoC0 coordinates of raw `p` of NoC `noc` (the NoCs run in opposite directions: NoC1's
    /// `(x, y)` is NoC0's `(width - 1 - x, height - 1 - y)`); `None` off the grid.
    pub fn noc0(self, noc: komorebi_hal::NocId, p: Xy) -> Option<Xy> {
        noc.noc0_of(p, self.grid())
    }

    /// What a host may address at NoC0 `p`: a Tensix tile's L1 or a DRAM bank.
    pub fn memory(self, p: Xy) -> Option<Memory> {
        match self {
            Self::Blackhole => match Noc0Xy::new(p.x(), p.y())?.tile() {
                blackhole_pac::grid::TileKind::Tensix => Some(Memory::Tensix),
                blackhole_pac::grid::TileKind::Dram { bank, .. } => Some(Memory::Dram { bank }),
                _ => None,
            },
            Self::Wormhole => match wormhole_pac::grid::tile_at(p.x(), p.y())? {
                wormhole_pac::grid::Tile::Tensix => Some(Memory::Tensix),
                wormhole_pac::grid::Tile::Dram { bank, .. } => Some(Memory::Dram { bank }),
                _ => None,
            },
        }
    }

    /// Bytes of one DRAM bank.
    pub const fn dram_bank_bytes(self) -> u64 {
        match self {
            Self::Blackhole => blackhole_pac::grid::DRAM_BANK_SIZE,
            Self::Wormhole => wormhole_pac::grid::DRAM_BANK_SIZE,
        }
    }
}

impl std::fmt::Display for ChipKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a host may address at a tile.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Memory {
    /// A Tensix tile's L1.
    Tensix,
    /// A port of DRAM bank `bank`.
    Dram {
        /// The bank.
        bank: u8,
    },
}

/// A card's chip as the open found it: its harvesting, its working DRAM banks and the NoC
/// translation its windows go through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CardChip {
    /// A Blackhole: harvested Tensix columns, one DRAM bank possibly fused off, translation
    /// when the PCIe NIU says so.
    Blackhole {
        /// Harvested Tensix columns.
        harvest: HarvestMask,
        /// The DRAM banks that work.
        dram_banks: DramBanks,
        /// The translation window targets go through, when it is on.
        translation: Option<Translation>,
    },
    /// A Wormhole B0: harvested Tensix rows; windows target raw NoC0 coordinates.
    Wormhole {
        /// Harvested Tensix rows.
        harvest: wormhole_pac::harvest::HarvestMask,
    },
}

impl CardChip {
    /// Which chip.
    pub const fn kind(&self) -> ChipKind {
        match self {
            Self::Blackhole { .. } => ChipKind::Blackhole,
            Self::Wormhole { .. } => ChipKind::Wormhole,
        }
    }

    /// The harvest mask as the control block's harvest word carries it (columns on
    /// Blackhole, rows on Wormhole, each in its PAC's bit order).
    pub fn harvest_word(&self) -> u32 {
        match self {
            Self::Blackhole { harvest, .. } => harvest.bits() as u32,
            Self::Wormhole { harvest } => harvest.bits() as u32,
        }
    }

    /// The fused DRAM bank, if one is (Blackhole only).
    pub fn fused_dram(&self) -> Option<u8> {
        match self {
            Self::Blackhole { dram_banks, .. } => dram_banks.fused(),
            Self::Wormhole { .. } => None,
        }
    }

    /// Whether DRAM bank `bank` works.
    pub fn dram_works(&self, bank: u8) -> bool {
        match self {
            Self::Blackhole { dram_banks, .. } => dram_banks.contains(bank),
            Self::Wormhole { .. } => bank < self.kind().dram_banks(),
        }
    }

    /// Whether window targets are translated coordinates.
    pub fn translated(&self) -> bool {
        matches!(
            self,
            Self::Blackhole {
                translation: Some(_),
                ..
            }
        )
    }

    /// Every enabled Tensix tile, NoC0, column by column.
    pub fn tensix(&self) -> Vec<Xy> {
        let mut tiles = Vec::new();
        match self {
            Self::Blackhole { harvest, .. } => {
                let columns = harvest.columns();
                for &x in columns.noc0_x() {
                    for &y in columns.noc0_y() {
                        tiles.extend(Xy::new(x, y).ok());
                    }
                }
            }
            Self::Wormhole { harvest } => {
                let rows = harvest.rows();
                for &x in &wormhole_pac::grid::TENSIX_X {
                    for &y in rows.noc0_y() {
                        tiles.extend(Xy::new(x, y).ok());
                    }
                }
            }
        }
        tiles
    }

    /// Logical coordinates of the enabled Tensix tile at NoC0 `p`.
    pub fn logical(&self, p: Xy) -> Option<(u8, u8)> {
        match self {
            Self::Blackhole { harvest, .. } => harvest.noc0_to_logical(p.x(), p.y()),
            Self::Wormhole { harvest } => harvest.rows().noc0_to_logical(p.x(), p.y()),
        }
    }

    /// The coordinates a window targets for the tile at NoC0 `p`: translated on a Blackhole
    /// under translation, raw otherwise. `None` for a tile translation does not reach.
    pub fn target(&self, p: Xy) -> Option<(u8, u8)> {
        match self {
            Self::Blackhole {
                translation: Some(t),
                ..
            } => t.to_translated(Noc0Xy::new(p.x(), p.y())?).map(|t| t.get()),
            _ => Some((p.x(), p.y())),
        }
    }

    /// The NoC0 port the host reaches DRAM bank `bank` through: the worker port tt-metal uses
    /// on Blackhole, the bank's first port on Wormhole (any port reaches the whole bank:
    /// tt-umd `wormhole_implementation.hpp` `DRAM_CORES_NOC0`).
    pub fn dram_port(&self, bank: u8) -> Option<Xy> {
        let (x, y) = match self.kind() {
            ChipKind::Blackhole => *DRAM_WORKER_PORT.get(bank as usize)?,
            ChipKind::Wormhole => wormhole_pac::grid::DRAM_PORTS.get(bank as usize)?[0],
        };
        Xy::new(x, y).ok()
    }

    /// [`dram_port`](Self::dram_port), or the error that names the bank and the chip's banks.
    pub(crate) fn dram_port_of(&self, bank: u8) -> Result<Xy, PcieError> {
        let kind = self.kind();
        self.dram_port(bank).ok_or_else(|| PcieError::Target {
            what: format!("DRAM bank {bank}"),
            why: format!(
                "has no NoC port on a {kind} (banks 0..{})",
                kind.dram_banks()
            ),
        })
    }

    /// The registers the loader writes to point a core's reset PC at its image: NCRISC's PC
    /// and override, TRISC0's PC and the TRISC override (bit i for TRISCi). Debug registers
    /// on Blackhole; Tensix configuration words on Wormhole, which only the tile's own BRISC
    /// and TRISCs may write (ttsim refuses a host's write: tt-metal's BRISC firmware sets them),
    /// so [`ResetPcRegs::host_writable`] is false there.
    pub fn reset_pc_regs(&self) -> ResetPcRegs {
        match self.kind() {
            ChipKind::Blackhole => {
                use blackhole_pac::tensix as t;
                ResetPcRegs {
                    ncrisc_pc: t::NCRISC_RESET_PC_REG,
                    ncrisc_override: t::NCRISC_RESET_PC_OVERRIDE,
                    trisc0_pc: t::TRISC_RESET_PC_REGS[0],
                    trisc_override: t::TRISC_RESET_PC_OVERRIDE,
                    ncrisc_default: t::NCRISC_RESET_PC,
                    trisc0_default: t::TRISC_RESET_PC[0],
                    host_writable: true,
                }
            }
            ChipKind::Wormhole => {
                use wormhole_pac::tensix as t;
                ResetPcRegs {
                    ncrisc_pc: t::cfg_addr(t::NCRISC_RESET_PC_CFG),
                    ncrisc_override: t::cfg_addr(t::NCRISC_RESET_PC_OVERRIDE_CFG),
                    trisc0_pc: t::cfg_addr(t::TRISC_RESET_PC_CFG[0]),
                    trisc_override: t::cfg_addr(t::TRISC_RESET_PC_OVERRIDE_CFG),
                    ncrisc_default: t::RESET_PCS[4],
                    trisc0_default: t::RESET_PCS[1],
                    host_writable: false,
                }
            }
        }
    }

    /// The harvest mask in words for messages: `columns 0x....` or `rows 0x...`.
    pub fn harvest_text(&self) -> String {
        match self {
            Self::Blackhole { harvest, .. } => {
                format!("harvest mask {:#06x} (columns)", harvest.bits())
            }
            Self::Wormhole { harvest } => format!("harvest mask {:#05x} (rows)", harvest.bits()),
        }
    }
}

/// Where a chip keeps the reset PCs the loader sets, and the PCs a core starts at without them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ResetPcRegs {
    /// NCRISC's reset PC.
    pub ncrisc_pc: u32,
    /// NCRISC's override enable (bit 0).
    pub ncrisc_override: u32,
    /// TRISC0's reset PC.
    pub trisc0_pc: u32,
    /// The TRISC override enables (bit i for TRISCi).
    pub trisc_override: u32,
    /// NCRISC's reset PC without the override.
    pub ncrisc_default: u32,
    /// TRISC0's reset PC without the override.
    pub trisc0_default: u32,
    /// Whether the host may write these registers (not on Wormhole).
    pub host_writable: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_wormhole_has_80_tensix_and_six_banks_through_their_first_ports() {
        let chip = CardChip::Wormhole {
            harvest: wormhole_pac::harvest::HarvestMask::NONE,
        };
        let tiles = chip.tensix();
        assert_eq!(tiles.len(), 80);
        assert_eq!(tiles[0], Xy::new(1, 1).unwrap());
        assert_eq!(chip.logical(Xy::new(6, 7).unwrap()), Some((4, 5)));
        assert_eq!(chip.target(Xy::new(6, 7).unwrap()), Some((6, 7)));
        assert_eq!(chip.dram_port(2), Xy::new(5, 0).ok());
        assert_eq!(chip.dram_port(6), None);
        assert!(chip.dram_works(5) && !chip.dram_works(6));
        let rows = CardChip::Wormhole {
            harvest: wormhole_pac::harvest::HarvestMask::new(1 << 9).unwrap(),
        };
        assert_eq!(rows.tensix().len(), 72, "bit 9: NoC0 row 11 harvested");
        assert_eq!(rows.harvest_word(), 1 << 9);
    }

    #[test]
    fn the_device_id_says_the_chip() {
        assert_eq!(ChipKind::from_device_id(0xB140), Some(ChipKind::Blackhole));
        assert_eq!(ChipKind::from_device_id(0x401E), Some(ChipKind::Wormhole));
        assert_eq!(ChipKind::from_device_id(0xFACA), None);
    }
}
