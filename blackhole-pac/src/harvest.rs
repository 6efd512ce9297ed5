//! Harvesting: which Tensix columns and which DRAM bank are fused off, and the logical -> NoC0
//! Tensix mapping.
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
//! (`shuffle_tensix_harvesting_mask`); docs/blackhole.md, "Harvesting" and "Logical
//! coordinates".
//!
//! # The fused DRAM bank
//!
//! A chip may have one of its 8 DRAM banks fused off (a p100 has 7). [`DramBanks`] is the set
//! that works: all 8, or all but the *fused DRAM bank* (`fused_dram`, 0..=7). ARC telemetry tag
//! 36 (`ENABLED_GDDR`) has bit `b` set when bank `b` works; a table without the tag means every
//! bank works (tt-umd `blackhole_tt_device.cpp` `BlackholeTTDevice::get_chip_info`:
//! `dram_harvesting_mask = ~ENABLED_GDDR & 0xFF`, 0 when the tag is missing). More than one bank
//! off is refused, as tt-umd's coordinate manager refuses it
//! (`blackhole_coordinate_manager.cpp`, `assert_coordinate_manager_constructor`) and the ARC
//! firmware's NoC translation has room for one bad bank only (tt-zephyr-platforms
//! `lib/tenstorrent/bh_arc/noc_init.c`, `InitNocTranslationFromHarvesting`). The ARC firmware
//! fills `ENABLED_GDDR` from the GDDR enable bits (`telemetry.c`; fuses, or bank 3 for a product
//! that disables one by specification: `harvesting.c`) and never loads, releases or trains a
//! bank those leave out (`gddr.c`, `InitMrisc`): nothing answers at a fused bank's NoC ports.

use crate::grid::{DRAM_BANKS, Noc0Xy, TENSIX_ROWS, TENSIX_X, TENSIX_Y, TENSIX_Y_FIRST};

/// NoC0 x of die-order harvesting bit `i`.
pub const HARVESTING_NOC_LOCATIONS: [u8; 14] = [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10];

/// Not a Tensix column, in [`BIT_OF_X`].
const NO_BIT: u8 = 0xFF;

/// The mask bit of the Tensix column at NoC0 `x & 31`, or [`NO_BIT`]:
/// [`HARVESTING_NOC_LOCATIONS`] inverted at compile time, so
/// [`HarvestMask::is_harvested`] is one lookup (the firmware asks it on every NoC request).
const BIT_OF_X: [u8; 32] = {
    let mut bit = [NO_BIT; 32];
    let mut i = 0;
    while i < HARVESTING_NOC_LOCATIONS.len() {
        bit[HARVESTING_NOC_LOCATIONS[i] as usize & 31] = i as u8;
        i += 1;
    }
    bit
};
/// ARC telemetry tag of the enabled-Tensix-column bitmap.
pub const TELEMETRY_TAG_ENABLED_TENSIX_COL: u16 = 34;
/// Bits a harvest mask may use.
pub const HARVEST_MASK_BITS: u16 = 0x3FFF;
/// ARC telemetry tag of the enabled-DRAM-bank bitmap (`ENABLED_GDDR`, bit set = the bank works).
pub const TELEMETRY_TAG_ENABLED_GDDR: u16 = 36;

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
        match BIT_OF_X[x as usize & 31] {
            NO_BIT => false,
            bit => self.0 & (1 << bit) != 0,
        }
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

    /// Logical `(column, row)` of NoC0 `(x, y)`, or `None` if no enabled Tensix is there: what
    /// [`columns`](Self::columns)`.noc0_to_logical` says, without building the table (the
    /// column is the count of enabled columns west of `x`).
    pub const fn noc0_to_logical(self, x: u8, y: u8) -> Option<(u8, u8)> {
        if y < TENSIX_Y_FIRST || y >= TENSIX_Y_FIRST + TENSIX_ROWS {
            return None;
        }
        let mut column = 0;
        let mut j = 0;
        while j < TENSIX_X.len() {
            let xj = TENSIX_X[j];
            if !self.is_harvested(xj) {
                if xj == x {
                    return Some((column, y - TENSIX_Y_FIRST));
                }
                column += 1;
            }
            j += 1;
        }
        None
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

/// Why a fused DRAM bank cannot be used: a bank that does not exist, or telemetry saying more
/// than one bank is off.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DramHarvestError {
    /// A fused DRAM bank above 7.
    NoSuchBank(u8),
    /// `ENABLED_GDDR` with more than one of the 8 banks off (bits 0..7 clear); the value read.
    TooManyFused(u32),
}

impl core::fmt::Display for DramHarvestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::NoSuchBank(b) => write!(
                f,
                "fused DRAM bank {b} does not exist (allowed: 0..={}, or none)",
                DRAM_BANKS - 1
            ),
            Self::TooManyFused(enabled) => {
                write!(f, "ENABLED_GDDR {enabled:#04x} says DRAM banks")?;
                let mut sep = " ";
                let mut b = 0;
                while b < DRAM_BANKS {
                    if enabled & (1 << b) == 0 {
                        write!(f, "{sep}{b}")?;
                        sep = ", ";
                    }
                    b += 1;
                }
                write!(
                    f,
                    " are off; at most one fused DRAM bank is supported (as tt-umd's coordinate \
                     manager and the ARC firmware's NoC translation)"
                )
            }
        }
    }
}

impl core::error::Error for DramHarvestError {}

/// The DRAM banks of a chip that work: all 8, or all but one fused DRAM bank (module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DramBanks {
    fused: Option<u8>,
}

impl DramBanks {
    /// Every bank works.
    pub const ALL: Self = Self { fused: None };

    /// The banks of a chip whose fused DRAM bank is `fused_dram` (none: all 8); a bank above 7
    /// is refused.
    pub const fn with_fused(fused_dram: Option<u8>) -> Result<Self, DramHarvestError> {
        match fused_dram {
            Some(b) if b as usize >= DRAM_BANKS => Err(DramHarvestError::NoSuchBank(b)),
            fused => Ok(Self { fused }),
        }
    }

    /// The banks ARC telemetry's `ENABLED_GDDR` value says work (`None`: the table has no such
    /// tag, so every bank works, as tt-umd reads it). Bits above 7 are ignored, as tt-umd's
    /// `& 0xFF` does; more than one bank off is refused.
    pub const fn from_enabled_gddr(enabled_gddr: Option<u32>) -> Result<Self, DramHarvestError> {
        let Some(enabled) = enabled_gddr else {
            return Ok(Self::ALL);
        };
        let off = !enabled & 0xFF;
        match off.count_ones() {
            0 => Ok(Self::ALL),
            1 => Ok(Self {
                fused: Some(off.trailing_zeros() as u8),
            }),
            _ => Err(DramHarvestError::TooManyFused(enabled)),
        }
    }

    /// The fused DRAM bank, if one is.
    pub const fn fused(self) -> Option<u8> {
        self.fused
    }

    /// The `ENABLED_GDDR` value these banks correspond to.
    pub const fn enabled_gddr(self) -> u32 {
        match self.fused {
            Some(b) => 0xFF & !(1 << b),
            None => 0xFF,
        }
    }

    /// Whether bank `bank` exists and works.
    pub const fn contains(self, bank: u8) -> bool {
        (bank as usize) < DRAM_BANKS && !matches!(self.fused, Some(f) if f == bank)
    }

    /// How many banks work (8 or 7).
    pub const fn len(self) -> usize {
        DRAM_BANKS - self.fused.is_some() as usize
    }

    /// Always false: a chip has at least 7 working banks.
    pub const fn is_empty(self) -> bool {
        false
    }

    /// The working banks, ascending.
    pub fn iter(self) -> impl Iterator<Item = u8> + Clone {
        (0..DRAM_BANKS as u8).filter(move |&b| self.contains(b))
    }

    /// The `i`-th working bank, counting round (`i` modulo [`Self::len`]): the plain
    /// interleave of page streams over the banks.
    pub const fn nth(self, i: usize) -> u8 {
        let k = (i % self.len()) as u8;
        match self.fused {
            Some(f) if k >= f => k + 1,
            _ => k,
        }
    }
}

impl core::fmt::Display for DramBanks {
    /// `banks 0..=7`, or the working banks listed (`banks 0, 1, 2, 4, 5, 6, 7`).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.fused.is_none() {
            return write!(f, "banks 0..={}", DRAM_BANKS - 1);
        }
        f.write_str("banks")?;
        let mut sep = " ";
        for b in self.iter() {
            write!(f, "{sep}{b}")?;
            sep = ", ";
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enabled_gddr_decodes_as_tt_umd_reads_it() {
        // A missing tag, and every bank enabled: none fused.
        assert_eq!(DramBanks::from_enabled_gddr(None), Ok(DramBanks::ALL));
        assert_eq!(DramBanks::from_enabled_gddr(Some(0xFF)), Ok(DramBanks::ALL));
        // Bits above 7 are not banks (tt-umd's `& 0xFF`).
        assert_eq!(
            DramBanks::from_enabled_gddr(Some(0xFFFF_FFFF)),
            Ok(DramBanks::ALL)
        );
        for b in 0..8u8 {
            let banks = DramBanks::from_enabled_gddr(Some(0xFF & !(1 << b))).unwrap();
            assert_eq!(banks.fused(), Some(b));
            assert_eq!(banks.enabled_gddr(), 0xFF & !(1 << b));
            assert_eq!(banks.len(), 7);
            assert!(!banks.contains(b));
            assert_eq!(banks.iter().count(), 7);
            assert!(banks.iter().all(|x| x != b));
            let nth: [u8; 8] = core::array::from_fn(|i| banks.nth(i));
            assert!(nth.iter().all(|&x| x != b), "{b}: {nth:?}");
            assert_eq!(nth[7], nth[0], "the eighth stream wraps round");
        }
        let two = DramBanks::from_enabled_gddr(Some(0xFF & !0b0010_0100));
        assert_eq!(two, Err(DramHarvestError::TooManyFused(0xDB)));
        extern crate std;
        use std::string::ToString;
        assert_eq!(
            two.unwrap_err().to_string(),
            "ENABLED_GDDR 0xdb says DRAM banks 2, 5 are off; at most one fused DRAM bank is \
             supported (as tt-umd's coordinate manager and the ARC firmware's NoC translation)"
        );
        assert_eq!(
            DramBanks::with_fused(Some(8)),
            Err(DramHarvestError::NoSuchBank(8))
        );
        assert_eq!(
            DramBanks::with_fused(Some(3)).unwrap().to_string(),
            "banks 0, 1, 2, 4, 5, 6, 7"
        );
        assert_eq!(DramBanks::ALL.to_string(), "banks 0..=7");
        let all: [u8; 8] = core::array::from_fn(|i| DramBanks::ALL.nth(i));
        assert_eq!(all, [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
