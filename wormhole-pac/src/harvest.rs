//! Row harvesting: which Tensix rows a part has fused off, and the logical Tensix grid left.
//!
//! Wormhole harvests whole Tensix rows (never columns; no DRAM or Ethernet harvesting): an n150
//! has one row off, each ASIC of an n300 two, leaving 64, 72 or 80 Tensix (tt-umd
//! `docs/COORDINATE_SYSTEMS.md`, "Wormhole harvesting"; tt-isa-documentation
//! `WormholeB0/NoC/Coordinates.md`). Two bit orders exist:
//!
//! * [`HarvestMask`], tt-umd's `tensix_harvesting_mask`: bit `j` is the row at NoC0 y
//!   [`TENSIX_Y`]`[j]` (ascending y). This crate's order.
//! * The ARC firmware's (message `ARC_GET_HARVESTING`, 0x57): bit `i` is the row at NoC0 y
//!   [`HARVESTING_NOC_LOCATIONS`]`[i]`; [`HarvestMask::from_arc`] converts (tt-umd
//!   `CoordinateManager::shuffle_tensix_harvesting_mask`).
//!
//! Logical Tensix coordinates: x indexes [`TENSIX_X`]; y enumerates the rows left, in ascending
//! NoC0 y (tt-umd `CoordinateManager::translate_tensix_coords`).

use crate::grid::{TENSIX_X, TENSIX_Y};

/// NoC0 y of the row each bit of the ARC firmware's harvest mask stands for (tt-umd
/// `HARVESTING_NOC_LOCATIONS`).
pub const HARVESTING_NOC_LOCATIONS: [u8; 10] = [11, 1, 10, 2, 9, 3, 8, 4, 7, 5];
/// The ARC message that reads the harvest mask (tt-umd `arc_message_type::ARC_GET_HARVESTING`),
/// sent as `0xAA00 | 0x57`.
pub const ARC_GET_HARVESTING: u16 = crate::arc::msg::ARC_GET_HARVESTING as u16;
/// The bits a harvest mask may have: one a Tensix row.
pub const HARVEST_MASK_BITS: u16 = 0x3FF;

/// A row harvest mask in tt-umd's order (bit `j`: the row at NoC0 y `TENSIX_Y[j]`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct HarvestMask(u16);

/// A mask with bits beyond the 10 Tensix rows, or with every row off.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InvalidHarvestMask(pub u32);

impl core::fmt::Display for InvalidHarvestMask {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "harvest mask {:#x} (allowed: bits 0..=9, one a Tensix row, not all of them)",
            self.0
        )
    }
}

impl core::error::Error for InvalidHarvestMask {}

impl HarvestMask {
    /// Nothing harvested: all 80 Tensix.
    pub const NONE: Self = Self(0);

    /// The mask `bits` in tt-umd's order; refuses bits beyond row 9 and a mask of every row.
    pub const fn new(bits: u32) -> Result<Self, InvalidHarvestMask> {
        if bits & !(HARVEST_MASK_BITS as u32) != 0 || bits == HARVEST_MASK_BITS as u32 {
            return Err(InvalidHarvestMask(bits));
        }
        Ok(Self(bits as u16))
    }

    /// The mask the ARC firmware reports (its bit `i` is the row at NoC0 y
    /// `HARVESTING_NOC_LOCATIONS[i]`), in this crate's order.
    pub const fn from_arc(arc: u32) -> Result<Self, InvalidHarvestMask> {
        if arc & !(HARVEST_MASK_BITS as u32) != 0 {
            return Err(InvalidHarvestMask(arc));
        }
        let mut bits = 0u32;
        let mut i = 0;
        while i < HARVESTING_NOC_LOCATIONS.len() {
            if arc & (1 << i) != 0 {
                let y = HARVESTING_NOC_LOCATIONS[i];
                let mut j = 0;
                while j < TENSIX_Y.len() {
                    if TENSIX_Y[j] == y {
                        bits |= 1 << j;
                    }
                    j += 1;
                }
            }
            i += 1;
        }
        Self::new(bits)
    }

    /// The bits, in tt-umd's order.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Whether the row at NoC0 y `y` is harvested (`false` for a y that is no Tensix row).
    pub const fn is_harvested(self, y: u8) -> bool {
        let mut j = 0;
        while j < TENSIX_Y.len() {
            if TENSIX_Y[j] == y {
                return self.0 & (1 << j) != 0;
            }
            j += 1;
        }
        false
    }

    /// The Tensix rows left.
    pub const fn rows(self) -> TensixRows {
        let mut noc0_y = [0u8; TENSIX_Y.len()];
        let mut count = 0;
        let mut j = 0;
        while j < TENSIX_Y.len() {
            // (`count <= j`, so always below the length; said so, the firmware carries no
            // bounds check and no panic.)
            if self.0 & (1 << j) == 0 && count < noc0_y.len() {
                noc0_y[count] = TENSIX_Y[j];
                count += 1;
            }
            j += 1;
        }
        TensixRows {
            noc0_y,
            count: count as u8,
        }
    }
}

/// The Tensix rows a harvest mask leaves, in ascending NoC0 y: logical row `r` is the `r`-th.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensixRows {
    noc0_y: [u8; TENSIX_Y.len()],
    count: u8,
}

impl TensixRows {
    /// NoC0 y of each logical row.
    pub fn noc0_y(&self) -> &[u8] {
        &self.noc0_y[..self.count as usize]
    }

    /// Logical rows: 10 less the harvested ones.
    pub const fn count(&self) -> u8 {
        self.count
    }

    /// Logical columns: always 8.
    pub const fn columns(&self) -> u8 {
        TENSIX_X.len() as u8
    }

    /// NoC0 (x, y) of logical Tensix `(x, y)`, or `None` outside the logical grid.
    pub const fn logical_to_noc0(&self, x: u8, y: u8) -> Option<(u8, u8)> {
        if x as usize >= TENSIX_X.len() || y >= self.count {
            return None;
        }
        Some((TENSIX_X[x as usize], self.noc0_y[y as usize]))
    }

    /// Logical (x, y) of the Tensix at NoC0 `(x, y)`, or `None` for a tile that is no Tensix
    /// or is harvested.
    pub const fn noc0_to_logical(&self, x: u8, y: u8) -> Option<(u8, u8)> {
        let mut lx = 0;
        while lx < TENSIX_X.len() {
            if TENSIX_X[lx] == x {
                let mut ly = 0;
                // (`count` is at most the length; said so, no bounds check.)
                while ly < self.count as usize && ly < self.noc0_y.len() {
                    if self.noc0_y[ly] == y {
                        return Some((lx as u8, ly as u8));
                    }
                    ly += 1;
                }
                return None;
            }
            lx += 1;
        }
        None
    }
}
