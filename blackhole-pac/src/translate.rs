//! NoC coordinate translation: raw NoC0 coordinates <-> the translated coordinates a NIU with
//! `NIU_CFG_0.NOC_ID_TRANSLATE_EN` accepts (the production default on every NIU, the PCIe
//! tile's included).
//!
//! This is the one place the rule is written; the host's TLB windows, the silicon backend and
//! the simulator all use it.
//!
//! Sources (docs/blackhole.md, "Translated coordinates"): the ARC firmware that
//! programs the tables (tt-system-firmware `lib/tenstorrent/bh_arc/noc_init.c`,
//! `ComputeNocTranslation`) and tt-umd's `blackhole_coordinate_manager.cpp`
//! (`fill_tensix_noc0_translated_mapping`, `fill_dram_noc0_translated_mapping`):
//!
//! * **Tensix**: the c-th enabled column (ascending NoC0 x) gets translated x
//!   `TENSIX_X[c]` = 1..7, 10..16 in turn; harvested columns take the highest translated x,
//!   the one with the lowest die index ([`HARVESTING_NOC_LOCATIONS`] order) 16, the next 15,
//!   and so on. Rows are not translated (y 2..11).
//! * **DRAM**: bank `b`, port `p` is at translated x 17 or 18 (the west column, banks 0..3, at
//!   17 and the east column at 18; swapped when the harvested bank is a west one), y = 12 +
//!   3 k + p, where k is the bank's row (`b mod 4`) in the order 0, 1, 2, 3 with the harvested
//!   bank's row moved to the end (`ComputeNocTranslation`'s `translate_table_x[17]`,
//!   `[18]` and `gddr_y_order`). With no bank harvested, that is x = 17 + b / 4,
//!   y = 12 + 3 (b mod 4) + p. The firmware's tables also map the raw NoC0 DRAM coordinates to
//!   themselves (x tables identity at 0 and 9, y identity on 0..11), so on a card raw DRAM
//!   coordinates reach DRAM too; [`Translation::to_translated`] gives the translated ones,
//!   which tt-metal's kernels use and which ttsim requires (it refuses raw DRAM coordinates
//!   under translation).
//! * **ARC** is (8, 0) in both systems, and the whole x = 8 column (security, L2CPU) keeps its
//!   raw coordinates.
//! * The in-use **PCIe** tile is at translated (19, 24).

use crate::grid::{DRAM_BANKS, DRAM_PORTS, DRAM_PORTS_PER_BANK, Noc0Xy, TENSIX_X, TileKind};
use crate::harvest::{HARVESTING_NOC_LOCATIONS, HarvestMask};

/// The PCIe tile in use, in translated coordinates.
pub const PCIE_TRANSLATED: TranslatedXy = TranslatedXy { x: 19, y: 24 };
/// Translated x of DRAM banks 0..3; banks 4..7 are at `DRAM_TRANSLATED_X + 1`.
pub const DRAM_TRANSLATED_X: u8 = 17;
/// Translated y of port 0 of banks 0 and 4.
pub const DRAM_TRANSLATED_Y: u8 = 12;

/// Coordinates in the translated system (6 bits each, as NoC address fields carry them).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TranslatedXy {
    x: u8,
    y: u8,
}

impl TranslatedXy {
    /// `(x, y)` if both fit the 6-bit coordinate fields.
    pub const fn new(x: u8, y: u8) -> Option<Self> {
        if x < 64 && y < 64 {
            Some(Self { x, y })
        } else {
            None
        }
    }

    /// x.
    pub const fn x(self) -> u8 {
        self.x
    }

    /// y.
    pub const fn y(self) -> u8 {
        self.y
    }

    /// `(x, y)`.
    pub const fn get(self) -> (u8, u8) {
        (self.x, self.y)
    }
}

impl core::fmt::Display for TranslatedXy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "translated ({}, {})", self.x, self.y)
    }
}

/// The translation the ARC firmware programs for one harvest mask.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// Raw NoC0 x of a Tensix column -> translated x (0xFF: not a Tensix column). Indexed by
    /// `x & 31` (every x here is below 17): a mask the compiler can see, so the firmware
    /// carries no bounds check.
    translated: [u8; 32],
    /// Translated x -> raw NoC0 x of the Tensix column (0xFF: none), indexed the same way.
    raw: [u8; 32],
    /// Whether translated x 17 is the west DRAM column (banks 0..3); x 18 is the other.
    dram_west_at_17: bool,
    /// Translated DRAM row k (y 12 + 3k ..) -> the bank row (`bank mod 4`) it reaches.
    dram_rows: [u8; 4],
}

impl Translation {
    /// The translation for `harvest` on a chip with every DRAM bank.
    pub const fn new(harvest: HarvestMask) -> Self {
        Self::with_dram(harvest, None)
    }

    /// The translation for `harvest` on a chip whose DRAM bank `fused` (0..8) is harvested, or
    /// none. A bank above 7 counts as none, as the firmware's `bad_gddr >= 4` test takes it.
    pub const fn with_dram(harvest: HarvestMask, fused: Option<u8>) -> Self {
        let mut t = Self::tensix_only(harvest);
        if let Some(bad) = fused {
            if bad < DRAM_BANKS as u8 {
                t.dram_west_at_17 = bad >= 4;
                // The bad bank's row moves to the end; the others keep their order. Written out,
                // not computed in a loop: the firmware then carries no bounds check (and no
                // formatting code behind one).
                t.dram_rows = match bad % 4 {
                    0 => [1, 2, 3, 0],
                    1 => [0, 2, 3, 1],
                    2 => [0, 1, 3, 2],
                    _ => [0, 1, 2, 3],
                };
            }
        }
        t
    }

    /// Bank `bank`, port `port` of DRAM in translated coordinates; `None` out of range.
    pub const fn dram(&self, bank: u8, port: u8) -> Option<TranslatedXy> {
        if bank as usize >= DRAM_BANKS || port as usize >= DRAM_PORTS_PER_BANK {
            return None;
        }
        let west = bank < 4;
        let x = if west == self.dram_west_at_17 {
            DRAM_TRANSLATED_X
        } else {
            DRAM_TRANSLATED_X + 1
        };
        let mut k = 0;
        while k < 4 && self.dram_rows[k] != bank % 4 {
            k += 1;
        }
        Some(TranslatedXy {
            x,
            y: DRAM_TRANSLATED_Y + 3 * k as u8 + port,
        })
    }

    const fn tensix_only(harvest: HarvestMask) -> Self {
        let mut translated = [0xFF; 32];
        let mut raw = [0xFF; 32];
        // Enabled columns, ascending NoC0 x, onto the first translated x values.
        let mut next = 0;
        let mut j = 0;
        while j < TENSIX_X.len() {
            let x = TENSIX_X[j];
            // `next <= j < 14` always; said so the firmware has no bounds check.
            if !harvest.is_harvested(x) && next < 14 {
                let t = TENSIX_X[next];
                translated[x as usize & 31] = t;
                raw[t as usize & 31] = x;
                next += 1;
            }
            j += 1;
        }
        // Harvested columns, lowest die index first, onto the highest translated x downwards.
        let mut last = TENSIX_X.len();
        let mut i = 0;
        while i < HARVESTING_NOC_LOCATIONS.len() {
            let x = HARVESTING_NOC_LOCATIONS[i];
            // At most 14 harvested columns: `0 < last <= 14` always, said as above.
            if harvest.is_harvested(x) && last > 0 && last <= 14 {
                last -= 1;
                let t = TENSIX_X[last];
                translated[x as usize & 31] = t;
                raw[t as usize & 31] = x;
            }
            i += 1;
        }
        Self {
            translated,
            raw,
            dram_west_at_17: true,
            dram_rows: [0, 1, 2, 3],
        }
    }

    /// Translated coordinates of the tile at NoC0 `p`, for the tiles a host or a kernel
    /// addresses: Tensix (harvested ones included), DRAM ports ([`Translation::dram`]), and the
    /// x = 8 column with ARC. `None` for other tiles (Ethernet, PCIe, router-only), which have
    /// translated coordinates of their own not modelled here.
    pub const fn to_translated(&self, p: Noc0Xy) -> Option<TranslatedXy> {
        match p.memory() {
            Some(TileKind::Tensix) => {
                let x = self.translated[p.x() as usize & 31];
                if x == 0xFF {
                    None
                } else {
                    Some(TranslatedXy { x, y: p.y() })
                }
            }
            Some(TileKind::Dram { bank, port }) => self.dram(bank, port),
            _ if p.x() == 8 => Some(TranslatedXy { x: p.x(), y: p.y() }),
            _ => None,
        }
    }

    /// The NoC0 tile translated coordinates `t` name: a Tensix column, a DRAM port by its
    /// translated (x 17/18, y 12..23) or its raw coordinates, or the x = 8 column. `None` for
    /// anything else.
    pub const fn to_noc0(&self, t: TranslatedXy) -> Option<Noc0Xy> {
        if t.x >= DRAM_TRANSLATED_X && t.x <= DRAM_TRANSLATED_X + 1 {
            if t.y < DRAM_TRANSLATED_Y || t.y >= DRAM_TRANSLATED_Y + 12 {
                return None;
            }
            let west = (t.x == DRAM_TRANSLATED_X) == self.dram_west_at_17;
            let row = self.dram_rows[((t.y - DRAM_TRANSLATED_Y) / 3) as usize & 3];
            let bank = if west { row } else { row + 4 };
            let port = (t.y - DRAM_TRANSLATED_Y) % 3;
            // `bank` is at most 7 (a row is 0..4); the mask says so to the compiler.
            let (x, y) = DRAM_PORTS[bank as usize & 7][port as usize];
            return Noc0Xy::new(x, y);
        }
        let Some(p) = Noc0Xy::new(t.x, t.y) else {
            return None;
        };
        match p.tile() {
            TileKind::Tensix => match self.raw[t.x as usize & 31] {
                0xFF => None,
                x => Noc0Xy::new(x, t.y),
            },
            TileKind::Dram { .. } => Some(p),
            _ if p.x() == 8 => Some(p),
            _ => None,
        }
    }

    /// Translated coordinates of the Tensix tile at NoC0 `(x, y)`; `None` for other tiles.
    pub const fn tensix(&self, x: u8, y: u8) -> Option<(u8, u8)> {
        match Noc0Xy::new(x, y) {
            Some(p) => self.tensix_at(p),
            None => None,
        }
    }

    /// Translated coordinates of the Tensix tile at `p`; `None` for other tiles.
    pub const fn tensix_at(&self, p: Noc0Xy) -> Option<(u8, u8)> {
        match p.memory() {
            Some(TileKind::Tensix) => match self.to_translated(p) {
                Some(t) => Some((t.x, t.y)),
                None => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noc0(x: u8, y: u8) -> Noc0Xy {
        Noc0Xy::new(x, y).unwrap()
    }

    #[test]
    fn p150_pair_lowest_die_index_takes_sixteen() {
        // Bits 12 and 13 are NoC0 x = 7 and 10; x = 7 has the lower die index.
        let t = Translation::new(HarvestMask::P100_P150);
        assert_eq!(t.tensix(7, 2), Some((16, 2)));
        assert_eq!(t.tensix(10, 2), Some((15, 2)));
        assert_eq!(t.tensix(11, 5), Some((7, 5)));
        assert_eq!(t.tensix(16, 11), Some((14, 11)));
    }

    #[test]
    fn columns_five_and_eleven() {
        // x = 5 is die index 8, x = 11 die index 11: 5 -> 16, 11 -> 15.
        let mask = HarvestMask::new((1 << 8) | (1 << 11)).unwrap();
        let t = Translation::new(mask);
        assert_eq!(t.tensix(5, 3), Some((16, 3)));
        assert_eq!(t.tensix(11, 3), Some((15, 3)));
        assert_eq!(t.tensix(6, 3), Some((5, 3)));
        assert_eq!(t.tensix(10, 3), Some((7, 3)));
        assert_eq!(t.tensix(12, 3), Some((10, 3)));
    }

    #[test]
    fn round_trip_every_tensix_and_dram_port() {
        for bits in [0u32, 0x3000, (1 << 8) | (1 << 11), 1, 0x2001] {
            let t = Translation::new(HarvestMask::new(bits).unwrap());
            for x in 0..17 {
                for y in 0..12 {
                    let p = noc0(x, y);
                    if let Some(tr) = t.to_translated(p) {
                        assert_eq!(t.to_noc0(tr), Some(p), "mask {bits:#x} {p:?}");
                    }
                }
            }
            for fused in [None, Some(0), Some(2), Some(3), Some(4), Some(6), Some(7)] {
                let t = Translation::with_dram(HarvestMask::new(bits).unwrap(), fused);
                let mut seen = [[false; 12]; 2];
                for bank in 0..8 {
                    for port in 0..3 {
                        let tr = t.dram(bank, port).unwrap();
                        let (x, y) = DRAM_PORTS[bank as usize][port as usize];
                        assert_eq!(t.to_noc0(tr), Some(noc0(x, y)), "{fused:?} {bank} {port}");
                        assert_eq!(t.to_translated(noc0(x, y)), Some(tr));
                        let cell = &mut seen[(tr.x - 17) as usize][(tr.y - 12) as usize];
                        assert!(!*cell, "two ports at {tr}");
                        *cell = true;
                    }
                }
            }
        }
    }

    /// The ARC firmware's table for each harvested bank (`ComputeNocTranslation`): x 17 is the
    /// west column unless the bad bank is a west one; the bad bank's row goes last.
    #[test]
    fn dram_follows_the_firmware_table_for_each_fused_bank() {
        let h = HarvestMask::NONE;
        let at = |t: Translation, x: u8, y: u8| t.to_noc0(TranslatedXy::new(x, y).unwrap());
        let none = Translation::new(h);
        assert_eq!(at(none, 17, 12), Some(noc0(0, 0)));
        assert_eq!(at(none, 17, 18), Some(noc0(0, 9)), "bank 2 port 0");
        assert_eq!(at(none, 18, 23), Some(noc0(9, 6)), "bank 7 port 2");
        // Bank 2 harvested: east at 17, rows 0, 1, 3, 2 (y 18..20 are bank row 3: 5, 7, 6).
        let two = Translation::with_dram(h, Some(2));
        assert_eq!(at(two, 17, 12), Some(noc0(9, 0)));
        assert_eq!(at(two, 17, 18), Some(noc0(9, 5)));
        assert_eq!(at(two, 17, 21), Some(noc0(9, 9)));
        assert_eq!(at(two, 18, 23), Some(noc0(0, 8)), "the bad bank, last");
        // Bank 5 harvested: west at 17, rows 0, 2, 3, 1.
        let five = Translation::with_dram(h, Some(5));
        assert_eq!(at(five, 17, 15), Some(noc0(0, 9)));
        assert_eq!(at(five, 18, 21), Some(noc0(9, 2)));
        assert_eq!(
            Translation::with_dram(h, Some(8)),
            none,
            "no such bank: none"
        );
    }

    #[test]
    fn fixed_points() {
        let t = Translation::new(HarvestMask::NONE);
        assert_eq!(t.dram(0, 0), TranslatedXy::new(17, 12));
        assert_eq!(t.dram(7, 2), TranslatedXy::new(18, 23));
        assert_eq!(t.dram(8, 0), None);
        assert_eq!(t.to_translated(noc0(8, 0)), TranslatedXy::new(8, 0));
        assert_eq!(t.to_translated(noc0(2, 0)), None, "PCIe has its own");
        assert_eq!(t.to_noc0(PCIE_TRANSLATED), None);
        assert_eq!(
            t.to_noc0(TranslatedXy::new(0, 0).unwrap()),
            Some(noc0(0, 0))
        );
    }
}
