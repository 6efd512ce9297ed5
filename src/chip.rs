//! The chips this host lays broadcasts out on, as the layout's chip-neutral [`Geometry`]: the
//! one place a chip's register crate meets `komorebi-broadcast`, which names no chip.

use blackhole_pac::grid::{DRAM_BANKS, GRID_X, GRID_Y};
use blackhole_pac::harvest::{HARVEST_MASK_BITS, HarvestMask};
use komorebi_broadcast::layout::{Geometry, LayoutError};

/// Which chip: Blackhole or Wormhole B0 (the host path's name for it, `komorebi_pcie::chip`).
pub use komorebi_pcie::chip::ChipKind;

/// The grid of chip `kind` for its harvest word (columns on Blackhole, rows on Wormhole) and
/// fused DRAM bank ([`blackhole_fused`], [`wormhole`]; a Wormhole has no fused bank to name).
pub fn geometry(
    kind: ChipKind,
    harvest_word: u32,
    fused_dram: Option<u8>,
) -> Result<Geometry, LayoutError> {
    match kind {
        ChipKind::Blackhole => blackhole_fused(harvest_word, fused_dram),
        ChipKind::Wormhole => wormhole(harvest_word)?.with_fused_dram(
            fused_dram,
            wormhole_pac::grid::DRAM_BANKS as u8,
        ),
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
