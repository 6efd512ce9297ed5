//! The broadcast layout on Wormhole B0's grids (`komorebi::chip::wormhole`), unchanged code of
//! `komorebi-broadcast`: every core in exactly one broadcast, each broadcast consecutive on the
//! NoC (split at the DRAM column x 5, the Ethernet row y 6 and harvested rows), NoC1 the
//! mirror `wormhole-pac` gives.

use komorebi::chip;
use komorebi_broadcast::args::Along;
use komorebi_broadcast::layout::{self, LayoutError};
use komorebi_hal::{LogicalRect, NocId};
use wormhole_pac::grid;
use wormhole_pac::harvest::HarvestMask;

#[test]
fn a_whole_wormhole_splits_rows_at_the_dram_column_and_columns_at_the_ethernet_row() {
    let g = chip::wormhole(0).unwrap();
    assert_eq!((g.columns(), g.rows()), (8, 10));
    let full = g.full();
    let rows = layout::broadcasts(&g, full, Along::Row, NocId::Noc0).unwrap();
    // 10 rows x 2 panels of 4.
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|b| b.cores().len() == 4));
    let columns = layout::broadcasts(&g, full, Along::Column, NocId::Noc1).unwrap();
    // 8 columns x 2 runs of 5 rows (y 1..=5 and 7..=11).
    assert_eq!(columns.len(), 16);
    assert!(columns.iter().all(|b| b.cores().len() == 5));
    for (all, noc) in [(&rows, NocId::Noc0), (&columns, NocId::Noc1)] {
        let cores: usize = all.iter().map(|b| b.cores().len()).sum();
        assert_eq!(cores, 80, "every core in exactly one broadcast");
        for b in all.iter() {
            // Consecutive on the NoC: the layout's own check.
            let rect = layout::broadcast_rect(&g, b, noc).unwrap().unwrap();
            assert!(rect.0.0 <= rect.1.0 && rect.0.1 <= rect.1.1);
        }
    }
}

#[test]
fn noc1_coordinates_are_wormhole_pacs_mirror_and_a_harvested_row_splits_the_columns_again() {
    // tt-umd's order: bit 2 is NoC0 row 3.
    let g = chip::wormhole(1 << 2).unwrap();
    let rows = HarvestMask::new(1 << 2).unwrap().rows();
    assert_eq!(g.rows(), 9);
    for x in 0..g.columns() {
        for y in 0..g.rows() {
            let p0 = rows.logical_to_noc0(x, y).unwrap();
            assert_eq!(g.noc0((x, y)), Some(p0));
            assert_eq!(
                g.noc_xy((x, y), NocId::Noc1),
                grid::noc0_to_noc1(p0.0, p0.1)
            );
        }
    }
    // Rows y 1, 2 | 4, 5 | 7..=11: three runs.
    let columns = layout::broadcasts(&g, g.full(), Along::Column, NocId::Noc0).unwrap();
    let lengths: Vec<usize> = columns[..3].iter().map(|b| b.cores().len()).collect();
    assert_eq!(lengths, [2, 2, 5]);
    assert_eq!(columns.len(), 8 * 3);
    assert!(matches!(
        chip::wormhole(0x400),
        Err(LayoutError::HarvestMask {
            mask: 0x400,
            allowed: 0x3FF
        })
    ));
    // Every core of a 4 x 4 rectangle across the Ethernet row gets broadcast words.
    let rect = LogicalRect::new(2, 3, 4, 4);
    let params = layout::BroadcastParams {
        broadcast: 1,
        cb: 1,
        window: 2,
        pages: 2,
    };
    let words = layout::broadcast_args(&g, rect, rect, Along::Column, NocId::Noc1, params).unwrap();
    assert_eq!(words.len(), 16);
}
