//! Translated ("virtual") coordinates: what the NIUs use once firmware turns translation on
//! (`NIU_CFG_0` bit 14), for a harvest mask.
//!
//! Translated space starts at (16, 16): Tensix at x 18..=25 (the 8 columns in NoC0 order) and y
//! 18.. (the rows left in ascending NoC0 y, then the harvested rows, so a harvested part's
//! logical grid is contiguous from (18, 18)); Ethernet at x 18..=25, y 16 (NoC0 row 0) and 17
//! (row 6); DRAM, PCIe and ARC keep their NoC0 coordinates, which the tables map to themselves
//! (entries 0..=15 are the identity). Sources: tt-umd `wormhole_coordinate_manager.cpp`
//! (`fill_tensix_noc0_translated_mapping`, `fill_eth_noc0_translated_mapping`, the DRAM, PCIe
//! and ARC fills), `wormhole_implementation.hpp` (`tensix_translated_coordinate_start_x = 18`,
//! `eth_translated_coordinate_start_y = 16`); tt-isa-documentation
//! `WormholeB0/NoC/Coordinates.md` (the X and Y tables; translated x 16 and 17 also reach the
//! DRAM columns 0 and 5).

use crate::grid::{GRID_X, GRID_Y, TENSIX_X, TENSIX_Y};
use crate::harvest::HarvestMask;

/// Translated x and y below this are the identity on each NoC: the NoC that carries a request
/// reads them as its own raw coordinates (a NoC1 request to DRAM at NoC0 (0, 0) names (9, 11)).
/// Only the entries from here on are mirrored for NoC1 ([`Translation::x_table`]).
pub const IDENTITY_ENTRIES: u8 = 16;

/// First translated Tensix x and y.
pub const TENSIX_TRANSLATED_START: u8 = 18;
/// Translated y of the Ethernet rows: NoC0 row 0, then row 6.
pub const ETH_TRANSLATED_Y: [u8; 2] = [16, 17];
/// NoC0 y of the Ethernet rows.
pub const ETH_NOC0_Y: [u8; 2] = [0, 6];
/// Translated x 16 and 17: the NoC0 columns of DRAM, PCIe and ARC (0 and 5).
pub const SPECIAL_TRANSLATED_X: [(u8, u8); 2] = [(16, 0), (17, 5)];
/// Entries of each NIU translation table (4 registers of 8 four-bit entries).
pub const TABLE_ENTRIES: usize = 32;

/// Raw NoC0 <-> translated coordinates for one harvest mask.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// NoC0 y of translated y `18 + i`: the rows left, then the harvested ones.
    tensix_y: [u8; TENSIX_Y.len()],
}

impl Translation {
    /// The translation firmware sets up for `mask`.
    pub const fn new(mask: HarvestMask) -> Self {
        let mut tensix_y = [0u8; TENSIX_Y.len()];
        let mut n = 0;
        let mut pass = 0;
        // First the rows left, then the harvested ones, each in ascending NoC0 y.
        while pass < 2 {
            let mut j = 0;
            while j < TENSIX_Y.len() {
                // (Each row once over both passes, so `n` stays below the length; said so, no
                // bounds check.)
                if mask.is_harvested(TENSIX_Y[j]) == (pass == 1) && n < tensix_y.len() {
                    tensix_y[n] = TENSIX_Y[j];
                    n += 1;
                }
                j += 1;
            }
            pass += 1;
        }
        Self { tensix_y }
    }

    /// NoC0 x of translated x `tx` (`None` for an entry the table leaves 0 and no identity).
    pub const fn x_to_noc0(tx: u8) -> Option<u8> {
        match tx {
            0..=15 => Some(tx),
            16 => Some(SPECIAL_TRANSLATED_X[0].1),
            17 => Some(SPECIAL_TRANSLATED_X[1].1),
            18..=25 => Some(TENSIX_X[(tx - TENSIX_TRANSLATED_START) as usize]),
            _ => None,
        }
    }

    /// NoC0 y of translated y `ty`.
    pub const fn y_to_noc0(&self, ty: u8) -> Option<u8> {
        match ty {
            0..=15 => Some(ty),
            16 => Some(ETH_NOC0_Y[0]),
            17 => Some(ETH_NOC0_Y[1]),
            18..=27 => Some(self.tensix_y[(ty - TENSIX_TRANSLATED_START) as usize]),
            _ => None,
        }
    }

    /// NoC0 (x, y) of translated `(tx, ty)`, or `None` where a table entry is unused or the
    /// result falls outside the grid.
    pub const fn to_noc0(&self, tx: u8, ty: u8) -> Option<(u8, u8)> {
        match (Self::x_to_noc0(tx), self.y_to_noc0(ty)) {
            (Some(x), Some(y)) if x < GRID_X && y < GRID_Y => Some((x, y)),
            _ => None,
        }
    }

    /// Translated coordinates of the tile at NoC0 `(x, y)`: Tensix and Ethernet tiles move,
    /// DRAM, PCIe, ARC and router-only tiles keep their NoC0 coordinates.
    pub const fn from_noc0(&self, x: u8, y: u8) -> Option<(u8, u8)> {
        if x >= GRID_X || y >= GRID_Y {
            return None;
        }
        let mut ix = 0;
        let mut tx = None;
        while ix < TENSIX_X.len() {
            if TENSIX_X[ix] == x {
                tx = Some(TENSIX_TRANSLATED_START + ix as u8);
            }
            ix += 1;
        }
        let Some(tx) = tx else {
            return Some((x, y));
        };
        if y == ETH_NOC0_Y[0] {
            return Some((tx, ETH_TRANSLATED_Y[0]));
        }
        if y == ETH_NOC0_Y[1] {
            return Some((tx, ETH_TRANSLATED_Y[1]));
        }
        let mut i = 0;
        while i < self.tensix_y.len() {
            if self.tensix_y[i] == y {
                return Some((tx, TENSIX_TRANSLATED_START + i as u8));
            }
            i += 1;
        }
        None
    }

    /// The four words of the NIU's X table (`NOC_X_ID_TRANSLATE_TABLE_0..3`) of NoC `noc`
    /// (0 or 1): entry `t` is the NoC-`noc` x that translated x `t` reaches.
    pub const fn x_table(noc: u8) -> [u32; 4] {
        let mut entries = [0u8; TABLE_ENTRIES];
        let mut t = 0;
        while t < TABLE_ENTRIES {
            if let Some(x) = Self::x_to_noc0(t as u8) {
                entries[t] = if t >= IDENTITY_ENTRIES as usize && noc == 1 {
                    GRID_X - 1 - x
                } else {
                    x
                };
            }
            t += 1;
        }
        pack(entries)
    }

    /// The four words of the NIU's Y table (`NOC_Y_ID_TRANSLATE_TABLE_0..3`) of NoC `noc`.
    pub const fn y_table(&self, noc: u8) -> [u32; 4] {
        let mut entries = [0u8; TABLE_ENTRIES];
        let mut t = 0;
        while t < TABLE_ENTRIES {
            if let Some(y) = self.y_to_noc0(t as u8) {
                entries[t] = if t >= IDENTITY_ENTRIES as usize && noc == 1 {
                    GRID_Y - 1 - y
                } else {
                    y
                };
            }
            t += 1;
        }
        pack(entries)
    }
}

/// 32 four-bit entries into four words, entry `t` at bits `4 * (t % 8)` of word `t / 8`.
const fn pack(entries: [u8; TABLE_ENTRIES]) -> [u32; 4] {
    let mut words = [0u32; 4];
    let mut t = 0;
    while t < TABLE_ENTRIES {
        words[t / 8] |= ((entries[t] & 0xF) as u32) << (4 * (t % 8));
        t += 1;
    }
    words
}
