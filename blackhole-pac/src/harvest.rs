//! Tensix harvesting: which columns are fused off, and the logical -> NoC0 mapping.
//!
//! A [`HarvestMask`] is 14 bits in the chip's *die order*: bit `i` set means the Tensix column at
//! NoC0 x = [`HARVESTING_NOC_LOCATIONS`]`[i]` is harvested. It is the complement of ARC telemetry
//! tag 34 (`ENABLED_TENSIX_COL`, bit set = enabled). tt-umd's `tensix_harvesting_mask` uses a
//! second order (bit `j` = the `j`-th Tensix column by ascending NoC0 x); convert with
//! [`HarvestMask::to_umd`] / [`HarvestMask::from_umd`].
//!
//! Logical coordinates are dense: logical column `c` is the `c`-th enabled column by ascending
//! NoC0 x, logical row `r` is NoC0 y = `r + 2`. Sources: tt-umd `blackhole_implementation.hpp`
//! (`HARVESTING_NOC_LOCATIONS`), `blackhole_coordinate_manager.cpp`, `coordinate_manager.cpp`
//! (`shuffle_tensix_harvesting_mask`); blackhole-facts.md §1.3 and §2.

use crate::grid::{Noc0Xy, TENSIX_ROWS, TENSIX_X, TENSIX_Y, TENSIX_Y_FIRST};

/// NoC0 x of die-order harvesting bit `i`.
pub const HARVESTING_NOC_LOCATIONS: [u8; 14] = [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10];
/// ARC telemetry tag of the enabled-Tensix-column bitmap.
pub const TELEMETRY_TAG_ENABLED_TENSIX_COL: u16 = 34;
/// Bits a harvest mask may use.
pub const HARVEST_MASK_BITS: u16 = 0x3FFF;

/// A harvest mask in die order; see the module docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct HarvestMask(u16);

/// A mask with bits outside the 14 Tensix columns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InvalidHarvestMask(pub u32);

impl core::fmt::Display for InvalidHarvestMask {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "harvest mask {:#x} has bits outside 0x3fff (14 Tensix columns)",
            self.0
        )
    }
}

impl core::error::Error for InvalidHarvestMask {}

impl HarvestMask {
    /// No column harvested (140 Tensix).
    pub const NONE: Self = Self(0);
    /// The columns at NoC0 x = 7 and 10 (die bits 12 and 13; tt-umd mask 192): what p100 parts
    /// and p150 parts with firmware >= 19.5 present (120 Tensix).
    pub const P100_P150: Self = Self((1 << 12) | (1 << 13));

    /// A die-order mask; bits above 13 are refused.
    pub const fn new(bits: u32) -> Result<Self, InvalidHarvestMask> {
        if bits & !(HARVEST_MASK_BITS as u32) != 0 {
            return Err(InvalidHarvestMask(bits));
        }
        Ok(Self(bits as u16))
    }

    /// The mask from ARC telemetry tag 34 (`ENABLED_TENSIX_COL`, bit set = enabled).
    pub const fn from_enabled_tensix_col(enabled: u32) -> Self {
        Self(!(enabled as u16) & HARVEST_MASK_BITS)
    }

    /// The die-order bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The `ENABLED_TENSIX_COL` value this mask corresponds to.
    pub const fn enabled_tensix_col(self) -> u32 {
        (!self.0 & HARVEST_MASK_BITS) as u32
    }

    /// tt-umd's sorted-order mask (bit `j` = [`TENSIX_X`]`[j]` harvested).
    pub const fn to_umd(self) -> u16 {
        let mut umd = 0u16;
        let mut i = 0;
        while i < 14 {
            if self.0 & (1 << i) != 0 {
                umd |= 1 << sorted_index(HARVESTING_NOC_LOCATIONS[i]);
            }
            i += 1;
        }
        umd
    }

    /// The die-order mask of tt-umd's sorted-order mask; bits above 13 are refused.
    pub const fn from_umd(umd: u32) -> Result<Self, InvalidHarvestMask> {
        if umd & !(HARVEST_MASK_BITS as u32) != 0 {
            return Err(InvalidHarvestMask(umd));
        }
        let mut die = 0u16;
        let mut i = 0;
        while i < 14 {
            if umd & (1 << sorted_index(HARVESTING_NOC_LOCATIONS[i])) != 0 {
                die |= 1 << i;
            }
            i += 1;
        }
        Ok(Self(die))
    }

    /// True when the Tensix column at NoC0 `x` is harvested; false for non-Tensix x.
    pub const fn is_harvested(self, x: u8) -> bool {
        let mut i = 0;
        while i < 14 {
            if HARVESTING_NOC_LOCATIONS[i] == x {
                return self.0 & (1 << i) != 0;
            }
            i += 1;
        }
        false
    }

    /// Harvested columns.
    pub const fn harvested_count(self) -> u8 {
        self.0.count_ones() as u8
    }

    /// The enabled Tensix columns by logical index (ascending NoC0 x).
    pub const fn columns(self) -> TensixColumns {
        let mut xs = [0u8; 14];
        let mut len = 0;
        let mut j = 0;
        while j < 14 {
            // `len <= j < 14` always; said again so the compiler drops the bounds check (and
            // the firmware the panic's formatting with it).
            if !self.is_harvested(TENSIX_X[j]) && len < 14 {
                xs[len] = TENSIX_X[j];
                len += 1;
            }
            j += 1;
        }
        TensixColumns { xs, len: len as u8 }
    }

    /// Enabled Tensix tiles.
    pub const fn tensix_count(self) -> usize {
        (14 - self.harvested_count() as usize) * TENSIX_ROWS as usize
    }
}

/// Position of a Tensix NoC0 x in [`TENSIX_X`]; only called with Tensix columns.
const fn sorted_index(x: u8) -> u8 {
    let mut j = 0;
    while j < 14 {
        if TENSIX_X[j] == x {
            return j as u8;
        }
        j += 1;
    }
    0
}

/// The enabled Tensix columns of a harvest mask: logical column -> NoC0 x.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensixColumns {
    xs: [u8; 14],
    len: u8,
}

impl TensixColumns {
    /// NoC0 x of each logical column.
    pub fn noc0_x(&self) -> &[u8] {
        &self.xs[..self.len as usize]
    }

    /// NoC0 y of each logical row (every part has all 10 Tensix rows).
    ///
    /// With [`Self::noc0_x`] this is the whole logical -> NoC0 mapping of a harvest mask, which
    /// chip-neutral layouts (`komorebi_broadcast::layout::Geometry`) are built from.
    pub const fn noc0_y(&self) -> &'static [u8] {
        &TENSIX_Y
    }

    /// NoC0 coordinates of logical `(column, row)`, or `None` outside the logical grid.
    pub const fn noc0_xy(&self, column: u8, row: u8) -> Option<Noc0Xy> {
        match self.logical_to_noc0(column, row) {
            Some((x, y)) => Noc0Xy::new(x, y),
            None => None,
        }
    }

    /// Logical columns.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True when every column is harvested.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// NoC0 `(x, y)` of logical `(column, row)`, or `None` outside the logical grid.
    pub const fn logical_to_noc0(&self, column: u8, row: u8) -> Option<(u8, u8)> {
        if column >= self.len || row >= TENSIX_ROWS {
            return None;
        }
        Some((self.xs[column as usize], row + TENSIX_Y_FIRST))
    }

    /// Logical `(column, row)` of NoC0 `(x, y)`, or `None` if no enabled Tensix is there.
    pub const fn noc0_to_logical(&self, x: u8, y: u8) -> Option<(u8, u8)> {
        if y < TENSIX_Y_FIRST || y >= TENSIX_Y_FIRST + TENSIX_ROWS {
            return None;
        }
        let mut c = 0;
        while c < self.len as usize && c < 14 {
            if self.xs[c] == x {
                return Some((c as u8, y - TENSIX_Y_FIRST));
            }
            c += 1;
        }
        None
    }
}
