//! `komorebi grid`: the chip map for a harvest mask and a fused DRAM bank: which columns are
//! enabled, the logical -> NoC0 / NoC1 mapping, what sits at every NoC0 coordinate, and which
//! DRAM ports belong to the fused bank.

use blackhole_pac::grid::{self, DRAM_PORTS, TileKind};
use blackhole_pac::harvest::{DramBanks, HarvestMask};
use serde::Serialize;

/// The report `komorebi grid` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GridReport {
    /// Always `blackhole`.
    pub chip: &'static str,
    /// Die-order harvest mask.
    pub harvest: u16,
    /// The fused DRAM bank, its ports `d` on the map (left out of the JSON when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
    /// The same mask in tt-umd's sorted order.
    pub umd_harvest: u16,
    /// Enabled Tensix tiles.
    pub tensix: usize,
    /// NoC0 x of each logical column.
    pub noc0_x: Vec<u8>,
    /// NoC1 x of each logical column (`16 - x0`, blackhole-pac's `Noc0Xy::to_noc1`).
    pub noc1_x: Vec<u8>,
    /// One string per NoC0 row (y = 0 first), one character per x: `T` Tensix, `h` harvested
    /// Tensix, `D` DRAM, `d` a port of the fused DRAM bank, `P` PCIe, `A` ARC, `E` Ethernet,
    /// `L` L2CPU, `S` security, `.` router.
    pub map: Vec<String>,
}

/// Builds the report for `mask` and the working DRAM banks `dram`.
pub fn grid_report(mask: HarvestMask, dram: DramBanks) -> GridReport {
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
                    Some(TileKind::Dram { bank, .. }) if !dram.contains(bank) => 'd',
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
        chip: "blackhole",
        harvest: mask.bits(),
        fused_dram: dram.fused(),
        umd_harvest: mask.to_umd(),
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
            "harvest mask {:#06x} (tt-umd order {:#06x}): {} Tensix in {}",
            self.harvest,
            self.umd_harvest,
            self.tensix,
            crate::num::count(self.noc0_x.len() as u64, "column", "columns")
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
        // The fused bank's line and legend only when there is one: the map of a chip with
        // every bank reads as it always did.
        let fused = self.fused_dram.and_then(|b| {
            let ports = DRAM_PORTS.get(b as usize)?;
            let ports: Vec<String> = ports.iter().map(|(x, y)| format!("({x},{y})")).collect();
            Some((b, ports.join(" ")))
        });
        if let Some((b, ports)) = &fused {
            writeln!(
                f,
                "DRAM bank {b} fused off (NoC0 ports {ports}): {} work",
                DramBanks::with_fused(Some(*b)).unwrap_or_default()
            )?;
        }
        write!(
            f,
            "T Tensix, h harvested, D DRAM, {}P PCIe, A ARC, E Ethernet, L L2CPU, S security, . router",
            if fused.is_some() {
                "d fused DRAM, "
            } else {
                ""
            }
        )
    }
}

/// `komorebi grid --chip wormhole`: Wormhole B0's map for a row harvest mask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WormholeGridReport {
    /// Always `wormhole`.
    pub chip: &'static str,
    /// The row harvest mask, tt-umd's order (bit `j`: NoC0 y `TENSIX_Y[j]`).
    pub harvest: u16,
    /// Enabled Tensix tiles.
    pub tensix: usize,
    /// NoC0 x of each logical column (all 8: Wormhole harvests rows).
    pub noc0_x: Vec<u8>,
    /// NoC0 y of each logical row.
    pub noc0_y: Vec<u8>,
    /// NoC1 y of each logical row (`11 - y`).
    pub noc1_y: Vec<u8>,
    /// One string per NoC0 row (y = 0 first), one character per x: `T` Tensix, `h` Tensix of
    /// a harvested row, `D` DRAM, `P` PCIe, `A` ARC, `E` Ethernet, `.` router only.
    pub map: Vec<String>,
}

/// Builds the Wormhole report for row mask `mask`.
pub fn wormhole_grid_report(mask: wormhole_pac::harvest::HarvestMask) -> WormholeGridReport {
    use wormhole_pac::grid::{GRID_X, GRID_Y, TENSIX_X, Tile, tile_at};
    let rows = mask.rows();
    let map = (0..GRID_Y)
        .map(|y| {
            (0..GRID_X)
                .map(|x| match tile_at(x, y) {
                    Some(Tile::Tensix) if mask.is_harvested(y) => 'h',
                    Some(Tile::Tensix) => 'T',
                    Some(Tile::Dram { .. }) => 'D',
                    Some(Tile::Pcie) => 'P',
                    Some(Tile::Arc) => 'A',
                    Some(Tile::Eth { .. }) => 'E',
                    Some(Tile::RouterOnly) | None => '.',
                })
                .collect()
        })
        .collect();
    WormholeGridReport {
        chip: "wormhole",
        harvest: mask.bits(),
        tensix: TENSIX_X.len() * rows.count() as usize,
        noc0_x: TENSIX_X.to_vec(),
        noc0_y: rows.noc0_y().to_vec(),
        noc1_y: rows.noc0_y().iter().map(|y| GRID_Y - 1 - y).collect(),
        map,
    }
}

impl std::fmt::Display for WormholeGridReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Wormhole B0, row harvest mask {:#05x}: {} Tensix in {} x {}",
            self.harvest,
            self.tensix,
            crate::num::count(self.noc0_x.len() as u64, "column", "columns"),
            crate::num::count(self.noc0_y.len() as u64, "row", "rows")
        )?;
        writeln!(f, "logical column -> NoC0 x: {:?}", self.noc0_x)?;
        writeln!(f, "logical row -> NoC0 y: {:?}", self.noc0_y)?;
        writeln!(f, "logical row -> NoC1 y: {:?}", self.noc1_y)?;
        writeln!(f, "NoC0 map (x 0..9 left to right, y 0 at the top):")?;
        writeln!(f, "     0123456789")?;
        for (y, row) in self.map.iter().enumerate() {
            writeln!(f, "  {y:2} {row}")?;
        }
        write!(
            f,
            "T Tensix, h harvested, D DRAM, P PCIe, A ARC, E Ethernet, . router"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wormhole_with_row_5_harvested_has_72_tensix_and_ethernet_rows_0_and_6() {
        let r = wormhole_grid_report(wormhole_pac::harvest::HarvestMask::new(1 << 4).unwrap());
        assert_eq!(r.tensix, 72);
        assert_eq!(r.noc0_y, vec![1, 2, 3, 4, 7, 8, 9, 10, 11]);
        assert_eq!(r.noc1_y[0], 10);
        assert_eq!(r.map[0], "DEEEEDEEEE");
        assert_eq!(r.map[5], "DhhhhDhhhh");
        assert_eq!(r.map[6], "DEEEEDEEEE");
        assert_eq!(r.map[3], "PTTTTDTTTT");
        assert_eq!(r.map[10], "ATTTTDTTTT");
        let text = r.to_string();
        assert!(
            text.starts_with(
                "Wormhole B0, row harvest mask 0x010: 72 Tensix in 8 columns x 9 rows"
            ),
            "{text}"
        );
    }

    #[test]
    fn p150_map_has_two_harvested_columns_and_120_tensix() {
        let r = grid_report(HarvestMask::P100_P150, DramBanks::ALL);
        assert_eq!(r.tensix, 120);
        assert_eq!(r.noc0_x, vec![1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16]);
        assert_eq!(r.noc1_x, vec![15, 14, 13, 12, 11, 10, 5, 4, 3, 2, 1, 0]);
        assert_eq!(r.umd_harvest, 0xC0);
        assert_eq!(r.map[0], "D.P.....AD.P.....");
        assert_eq!(r.map[1], "DEEEEEEE.DEEEEEEE");
        assert_eq!(r.map[2], "DTTTTTThSDhTTTTTT");
        assert_eq!(r.map[3], "DTTTTTThLDhTTTTTT");
    }

    #[test]
    fn a_fused_bank_s_three_ports_are_marked_and_named() {
        let r = grid_report(
            HarvestMask::P100_P150,
            DramBanks::with_fused(Some(3)).unwrap(),
        );
        assert_eq!(r.fused_dram, Some(3));
        // Bank 3's ports: NoC0 (0,5), (0,7), (0,6).
        for (y, row) in r.map.iter().enumerate() {
            let want = if (5..=7).contains(&y) { 'd' } else { 'D' };
            assert_eq!(row.chars().next(), Some(want), "row {y}");
            assert_eq!(row.chars().nth(9), Some('D'), "row {y}");
        }
        let text = r.to_string();
        assert!(
            text.contains(
                "DRAM bank 3 fused off (NoC0 ports (0,5) (0,7) (0,6)): banks 0, 1, 2, 4, 5, 6, 7 work"
            ),
            "{text}"
        );
        assert!(text.ends_with(
            "D DRAM, d fused DRAM, P PCIe, A ARC, E Ethernet, L L2CPU, S security, . router"
        ));
        let none = grid_report(HarvestMask::P100_P150, DramBanks::ALL);
        assert!(
            serde_json::to_value(&none)
                .unwrap()
                .get("fused_dram")
                .is_none()
        );
    }
}
