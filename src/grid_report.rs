//! `komorebi grid`: the chip map for a harvest mask: which columns are enabled, the logical ->
//! NoC0 / NoC1 mapping, and what sits at every NoC0 coordinate.

use blackhole_pac::grid::{self, TileKind};
use blackhole_pac::harvest::HarvestMask;
use serde::Serialize;

/// The report `komorebi grid` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GridReport {
    /// Die-order harvest mask.
    pub harvest_mask: u16,
    /// The same mask in tt-umd's sorted order.
    pub umd_harvest_mask: u16,
    /// Enabled Tensix tiles.
    pub tensix: usize,
    /// NoC0 x of each logical column.
    pub noc0_x: Vec<u8>,
    /// NoC1 x of each logical column (`16 - x0`, blackhole-pac's `Noc0Xy::to_noc1`).
    pub noc1_x: Vec<u8>,
    /// One string per NoC0 row (y = 0 first), one character per x: `T` Tensix, `h` harvested
    /// Tensix, `D` DRAM, `P` PCIe, `A` ARC, `E` Ethernet, `L` L2CPU, `S` security, `.` router.
    pub map: Vec<String>,
}

/// Builds the report for `mask`.
pub fn grid_report(mask: HarvestMask) -> GridReport {
    let columns = mask.columns();
    let noc0_x = columns.noc0_x().to_vec();
    let noc1_x = (0..columns.len() as u8)
        .filter_map(|c| columns.noc0_xy(c, 0))
        .map(|p| p.to_noc1().x())
        .collect();
    let map = (0..grid::GRID_Y)
        .map(|y| {
            (0..grid::GRID_X)
                .map(|x| match grid::tile_at(x, y) {
                    Some(TileKind::Tensix) if mask.is_harvested(x) => 'h',
                    Some(TileKind::Tensix) => 'T',
                    Some(TileKind::Dram { .. }) => 'D',
                    Some(TileKind::Pcie(_)) => 'P',
                    Some(TileKind::Arc) => 'A',
                    Some(TileKind::Ethernet(_)) => 'E',
                    Some(TileKind::L2Cpu(_)) => 'L',
                    Some(TileKind::Security) => 'S',
                    Some(TileKind::RouterOnly) | None => '.',
                })
                .collect()
        })
        .collect();
    GridReport {
        harvest_mask: mask.bits(),
        umd_harvest_mask: mask.to_umd(),
        tensix: mask.tensix_count(),
        noc0_x,
        noc1_x,
        map,
    }
}

impl std::fmt::Display for GridReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "harvest mask {:#06x} (tt-umd order {:#06x}): {} Tensix in {} columns",
            self.harvest_mask,
            self.umd_harvest_mask,
            self.tensix,
            self.noc0_x.len()
        )?;
        writeln!(f, "logical column -> NoC0 x: {:?}", self.noc0_x)?;
        writeln!(f, "logical column -> NoC1 x: {:?}", self.noc1_x)?;
        writeln!(f, "NoC0 map (x 0..16 left to right, y 0 at the top):")?;
        writeln!(
            f,
            "     {}",
            (0..grid::GRID_X)
                .map(|x| char::from(b'0' + x % 10))
                .collect::<String>()
        )?;
        for (y, row) in self.map.iter().enumerate() {
            writeln!(f, "  {y:2} {row}")?;
        }
        write!(
            f,
            "T Tensix, h harvested, D DRAM, P PCIe, A ARC, E Ethernet, L L2CPU, S security, . router"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p150_map_has_two_harvested_columns_and_120_tensix() {
        let r = grid_report(HarvestMask::P100_P150);
        assert_eq!(r.tensix, 120);
        assert_eq!(r.noc0_x, vec![1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16]);
        assert_eq!(r.noc1_x, vec![15, 14, 13, 12, 11, 10, 5, 4, 3, 2, 1, 0]);
        assert_eq!(r.umd_harvest_mask, 0xC0);
        assert_eq!(r.map[0], "D.P.....AD.P.....");
        assert_eq!(r.map[1], "DEEEEEEE.DEEEEEEE");
        assert_eq!(r.map[2], "DTTTTTThSDhTTTTTT");
        assert_eq!(r.map[3], "DTTTTTThLDhTTTTTT");
    }
}
