//! The chips this host lays broadcasts out on, as the layout's chip-neutral [`Geometry`]: the
//! one place a chip's register crate meets `komorebi-broadcast`, which names no chip.

use blackhole_pac::grid::{DRAM_BANKS, GRID_X, GRID_Y};
use blackhole_pac::harvest::{HARVEST_MASK_BITS, HarvestMask};
use komorebi_broadcast::layout::{Geometry, LayoutError};

/// Which chip: Blackhole or Wormhole B0 (the host path's name for it, `komorebi_pcie::chip`).
pub use komorebi_pcie::chip::ChipKind;

/// How `--chip` spells `kind` (and JSON's `chip`).
pub const fn chip_flag(kind: ChipKind) -> &'static str {
    match kind {
        ChipKind::Blackhole => "blackhole",
        ChipKind::Wormhole => "wormhole",
    }
}

/// The routers of `kind` as the simulator routes over them (its NoC grid, a torus).
pub const fn route_grid(kind: ChipKind) -> komorebi_sim::route::Grid {
    match kind {
        ChipKind::Blackhole => komorebi_sim::route::Grid::BLACKHOLE,
        ChipKind::Wormhole => komorebi_sim::route::Grid::WORMHOLE,
    }
}

/// The simulator's timing of `kind`: Blackhole's or Wormhole's, each calibrated
/// (docs/calibration.md).
pub fn sim_timing(kind: ChipKind) -> komorebi_sim::Timing {
    match kind {
        ChipKind::Blackhole => komorebi_sim::Timing::default(),
        ChipKind::Wormhole => komorebi_sim::Timing::wormhole(),
    }
}

/// Parses `--chip`: `blackhole` or `wormhole`.
pub fn parse_chip(s: &str) -> Result<ChipKind, String> {
    [ChipKind::Blackhole, ChipKind::Wormhole]
        .into_iter()
        .find(|&k| chip_flag(k) == s.trim())
        .ok_or_else(|| format!("{s:?} (allowed: blackhole, wormhole)"))
}

/// The grid of chip `kind` for its harvest word (columns on Blackhole, rows on Wormhole) and
/// fused DRAM bank ([`blackhole_fused`], [`wormhole`]): a bank of the chip's (0..=7 on
/// Blackhole, 0..=5 on Wormhole). The command line takes none for a Wormhole, and a Wormhole
/// card reports none: the Wormhole bank is there for callers of this function that model one.
pub fn geometry(
    kind: ChipKind,
    harvest_word: u32,
    fused_dram: Option<u8>,
) -> Result<Geometry, LayoutError> {
    match kind {
        ChipKind::Blackhole => blackhole_fused(harvest_word, fused_dram),
        ChipKind::Wormhole => wormhole(harvest_word)?
            .with_fused_dram(fused_dram, wormhole_pac::grid::DRAM_BANKS as u8),
    }
}

/// Bytes of a Tensix tile's L1 on `kind`.
pub const fn l1_size(kind: ChipKind) -> u32 {
    kind.l1_size()
}

/// Bytes of each DRAM bank of `kind` a run may use: Blackhole's less the top 16 MiB tt-metal
/// reserves (`blackhole_pac::grid::DRAM_BANK_USABLE_SIZE`); Wormhole's whole 2 GiB (no
/// reservation is known to this project).
pub const fn dram_bank_usable(kind: ChipKind) -> u64 {
    match kind {
        ChipKind::Blackhole => blackhole_pac::grid::DRAM_BANK_USABLE_SIZE,
        ChipKind::Wormhole => wormhole_pac::grid::DRAM_BANK_SIZE,
    }
}

/// The raw coordinates on `noc` of the port of DRAM bank `bank` of `kind` that a kernel on
/// that NoC reads through: on Blackhole the one tt-metal's kernels use on that NoC
/// (`blackhole_pac::grid::dram_endpoint`), on Wormhole the bank's first port (any port reaches
/// the whole bank); `None` for a bank the chip does not have.
pub fn dram_port(kind: ChipKind, bank: u8, noc: komorebi_hal::NocId) -> Option<(u8, u8)> {
    match kind {
        ChipKind::Blackhole => {
            let port = blackhole_pac::grid::dram_endpoint(bank, noc.index())?;
            Some(komorebi_sim::route::Grid::BLACKHOLE.raw(noc.index(), port))
        }
        ChipKind::Wormhole => {
            let (x, y) = wormhole_pac::grid::DRAM_PORTS.get(bank as usize)?[0];
            let p = komorebi_hal::Xy::new(x, y).ok()?;
            kind.noc0(noc, p).map(komorebi_hal::Xy::get)
        }
    }
}

/// The DRAM banks of a chip that work: `0..banks` less the fused one, if any.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DramSet {
    banks: u8,
    fused: Option<u8>,
}

impl DramSet {
    /// The banks of `kind`, with `fused` (if it is one of them) left out.
    pub const fn new(kind: ChipKind, fused: Option<u8>) -> Self {
        let banks = kind.dram_banks();
        let fused = match fused {
            Some(b) if b < banks => Some(b),
            _ => None,
        };
        Self { banks, fused }
    }

    /// The chip's banks, the fused one included.
    pub const fn banks(self) -> u8 {
        self.banks
    }

    /// The fused bank, if one is.
    pub const fn fused(self) -> Option<u8> {
        self.fused
    }

    /// Whether `bank` works.
    pub fn contains(self, bank: u8) -> bool {
        bank < self.banks && Some(bank) != self.fused
    }

    /// How many work.
    pub fn len(self) -> usize {
        self.banks as usize - self.fused.is_some() as usize
    }

    /// Whether none works (never, for a chip: it has banks and fuses at most one).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The working banks, ascending.
    pub fn iter(self) -> impl Iterator<Item = u8> + Clone {
        (0..self.banks).filter(move |&b| Some(b) != self.fused)
    }

    /// The `i`-th working bank, counting round.
    pub fn nth(self, i: usize) -> u8 {
        let n = self.len().max(1);
        self.iter().nth(i % n).unwrap_or(0)
    }
}

/// Blackhole's Tensix grid for a die-order harvest mask (bit `i`: the column at NoC0 x
/// `blackhole_pac::harvest::HARVESTING_NOC_LOCATIONS[i]` is harvested; the complement of ARC
/// telemetry tag 34): the enabled columns' NoC0 x by ascending x, the 10 Tensix rows, the
/// 17 x 12 grid.
pub fn blackhole(harvest_mask: u32) -> Result<Geometry, LayoutError> {
    let mask = HarvestMask::new(harvest_mask).map_err(|_| LayoutError::HarvestMask {
        mask: harvest_mask,
        allowed: HARVEST_MASK_BITS as u32,
    })?;
    let columns = mask.columns();
    Geometry::new(columns.noc0_x(), columns.noc0_y(), (GRID_X, GRID_Y))
}

/// [`blackhole`] on a part whose DRAM bank `fused_dram` (0..=7) is fused off, or none; a bank
/// above 7 is refused.
pub fn blackhole_fused(harvest_mask: u32, fused_dram: Option<u8>) -> Result<Geometry, LayoutError> {
    blackhole(harvest_mask)?.with_fused_dram(fused_dram, DRAM_BANKS as u8)
}

/// Wormhole B0's Tensix grid for a row harvest mask in tt-umd's order (bit `j`: the row at
/// NoC0 y `wormhole_pac::grid::TENSIX_Y[j]` is harvested): the 8 columns, the rows left, the
/// 10 x 12 grid. Its columns form two panels (x 1..=4 and 6..=9, DRAM at x 5) and its rows two
/// runs or more (the Ethernet row 6, and each harvested row, split them), so its broadcasts
/// are shorter than Blackhole's.
pub fn wormhole(harvest_mask: u32) -> Result<Geometry, LayoutError> {
    use wormhole_pac::harvest::{HARVEST_MASK_BITS, HarvestMask};
    let mask = HarvestMask::new(harvest_mask).map_err(|_| LayoutError::HarvestMask {
        mask: harvest_mask,
        allowed: HARVEST_MASK_BITS as u32,
    })?;
    let rows = mask.rows();
    Geometry::new(
        &wormhole_pac::grid::TENSIX_X,
        rows.noc0_y(),
        (wormhole_pac::grid::GRID_X, wormhole_pac::grid::GRID_Y),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dram_set_counts_round_its_working_banks_on_either_chip() {
        let bh = DramSet::new(ChipKind::Blackhole, Some(2));
        assert_eq!(bh.iter().collect::<Vec<_>>(), [0, 1, 3, 4, 5, 6, 7]);
        assert_eq!((bh.len(), bh.nth(2), bh.nth(7)), (7, 3, 0));
        let wh = DramSet::new(ChipKind::Wormhole, None);
        assert_eq!((wh.len(), wh.nth(6), wh.banks()), (6, 0, 6));
        assert!(!wh.contains(6) && wh.contains(5));
        assert_eq!(DramSet::new(ChipKind::Wormhole, Some(7)).fused(), None);
        // Wormhole bank 2's first port is NoC0 (5, 0): NoC1 (4, 11).
        use komorebi_hal::NocId;
        assert_eq!(dram_port(ChipKind::Wormhole, 2, NocId::Noc0), Some((5, 0)));
        assert_eq!(dram_port(ChipKind::Wormhole, 2, NocId::Noc1), Some((4, 11)));
        assert_eq!(dram_port(ChipKind::Wormhole, 6, NocId::Noc0), None);
    }

    #[test]
    fn a_p150_leaves_12_columns_in_two_panels_and_a_bad_mask_or_bank_says_what_is_allowed() {
        let g = blackhole(0x3000).unwrap();
        assert_eq!((g.columns(), g.rows()), (12, 10));
        assert_eq!(komorebi_broadcast::layout::panels(g.noc0_x()).len(), 2);
        let e = blackhole(0x4000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "harvest mask 0x4000 has bits outside 0x3fff (allowed: 0..=0x3fff)"
        );
        let e = blackhole_fused(0, Some(8)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fused DRAM bank 8 does not exist (allowed: 0..=7, or none)"
        );
        assert_eq!(blackhole_fused(0, Some(7)).unwrap().fused_dram(), Some(7));
    }
}
