//! Layout properties, for every harvest mask with 0..4 harvested columns and random rectangles.

mod common;

use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::args::{Along, ArgsError, BroadcastArgs, RANK_NONE};
use komorebi_broadcast::layout::*;
use komorebi_hal::{LogicalRect, NocId};
use proptest::prelude::*;

/// Die-order masks with at most `max` harvested columns.
fn masks(max: u32) -> Vec<u32> {
    (0u32..0x4000).filter(|m| m.count_ones() <= max).collect()
}

#[test]
fn every_blackhole_mask_makes_a_geometry_of_its_columns() {
    // All but 0x3fff, which leaves no column: no geometry.
    for mask in 0u32..0x3FFF {
        let pac = HarvestMask::new(mask).unwrap().columns();
        assert_eq!(
            common::blackhole_noc0_x(mask),
            pac.noc0_x(),
            "mask {mask:#x}"
        );
    }
}

#[test]
fn the_geometry_of_a_mask_is_blackhole_pacs_mapping_and_its_noc1_mirror_the_pacs() {
    use blackhole_pac::grid::Noc0Xy;
    for mask in masks(2) {
        let g = common::blackhole(mask);
        let columns = HarvestMask::new(mask).unwrap().columns();
        assert_eq!((g.columns() as usize, g.rows()), (columns.len(), 10));
        for x in 0..g.columns() {
            for y in 0..g.rows() {
                let p0 = columns.noc0_xy(x, y).unwrap();
                assert_eq!(g.noc0((x, y)), Some(p0.get()), "mask {mask:#x}");
                assert_eq!(g.noc_xy((x, y), NocId::Noc0), Some(p0.get()));
                assert_eq!(
                    g.noc_xy((x, y), NocId::Noc1),
                    Some(p0.to_noc1().get()),
                    "mask {mask:#x} core ({x},{y})"
                );
                assert_eq!(Noc0Xy::new(p0.x(), p0.y()), Some(p0));
            }
        }
        assert_eq!(g.noc_xy((g.columns(), 0), NocId::Noc1), None);
    }
}

#[test]
fn a_geometry_of_another_grid_mirrors_on_its_own_size() {
    // Chip-neutral: an 8 x 6 grid's NoC1 is x1 = 7 - x0, y1 = 5 - y0.
    let g = Geometry::new(&[1, 2, 5], &[0, 3], (8, 6)).unwrap();
    assert_eq!(g.noc_xy((0, 0), NocId::Noc1), Some((6, 5)));
    assert_eq!(g.noc_xy((2, 1), NocId::Noc1), Some((2, 2)));
    assert_eq!(
        Geometry::new(&[1, 8], &[0], (8, 6)),
        Err(LayoutError::Geometry)
    );
    // The HAL's coordinates end at 63: a wider grid's NoC1 mirror would leave them.
    assert!(Geometry::new(&[1, 2, 3], &[1, 2], (64, 64)).is_ok());
    assert_eq!(
        Geometry::new(&[1, 2, 3], &[1, 2], (70, 12)),
        Err(LayoutError::Geometry)
    );
}

#[test]
fn panels_of_the_common_parts() {
    let full = common::blackhole_noc0_x(0);
    assert_eq!(
        panels(&full).as_slice(),
        &[
            Panel {
                first_column: 0,
                columns: 7
            },
            Panel {
                first_column: 7,
                columns: 7
            }
        ]
    );
    let p150 = common::blackhole_noc0_x(0x3000);
    assert_eq!(p150.as_slice(), &[1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16]);
    assert_eq!(
        panels(&p150).as_slice(),
        &[
            Panel {
                first_column: 0,
                columns: 6
            },
            Panel {
                first_column: 6,
                columns: 6
            }
        ]
    );
    // Harvesting x = 3 (die bit 4) splits the left panel in two of different widths.
    let split = common::blackhole_noc0_x(1 << 4);
    assert_eq!(
        panels(&split).as_slice(),
        &[
            Panel {
                first_column: 0,
                columns: 2
            },
            Panel {
                first_column: 2,
                columns: 4
            },
            Panel {
                first_column: 6,
                columns: 7
            }
        ]
    );
}

#[test]
fn a_noc1_column_sends_from_the_bottom_with_swapped_corners() {
    let g = common::blackhole(0x3000);
    let bs = broadcasts(
        &g,
        LogicalRect::new(2, 0, 1, 10),
        Along::Column,
        NocId::Noc1,
    )
    .unwrap();
    assert_eq!(bs.len(), 1);
    assert_eq!(bs[0].sender(), (2, 9));
    assert_eq!(bs[0].cores()[1], (2, 8));
    // Logical column 2 is NoC0 x 3 -> NoC1 x 13; rows 8..0 are NoC0 y 10..2 -> NoC1 y 1..9.
    assert_eq!(
        broadcast_rect(&g, &bs[0], NocId::Noc1).unwrap(),
        Some(((13, 1), (13, 9)))
    );
    assert_eq!(
        broadcast_rect(&g, &bs[0], NocId::Noc0),
        Err(LayoutError::NotConsecutive)
    );
}

#[test]
fn bad_requests_are_refused_with_what_is_allowed() {
    let g = common::blackhole(0x3000);
    let e = broadcasts(&g, LogicalRect::new(0, 0, 13, 10), Along::Row, NocId::Noc0).unwrap_err();
    assert_eq!(
        e,
        LayoutError::OutsideGrid {
            rect: LogicalRect::new(0, 0, 13, 10),
            columns: 12,
            rows: 10
        }
    );
    assert!(e.to_string().contains("x0 + columns <= 12"), "{e}");
    let e = broadcasts(&g, LogicalRect::new(0, 0, 0, 10), Along::Row, NocId::Noc0).unwrap_err();
    assert!(matches!(e, LayoutError::EmptyRect(_)));
    let p = BroadcastParams {
        broadcast: 0,
        cb: 0,
        window: 9,
        pages: 1,
    };
    let r = LogicalRect::new(0, 0, 2, 2);
    assert!(matches!(
        broadcast_args(&g, r, r, Along::Row, NocId::Noc0, p),
        Err(LayoutError::Args(_))
    ));
    let p = BroadcastParams {
        broadcast: 0,
        cb: 0,
        window: 2,
        pages: 1,
    };
    assert!(matches!(
        broadcast_args(
            &g,
            r,
            LogicalRect::new(1, 1, 2, 2),
            Along::Row,
            NocId::Noc0,
            p
        ),
        Err(LayoutError::OutsideGroup { .. })
    ));
    let not_a_line = BroadcastCores::new(&[(0, 0), (2, 0)]).unwrap();
    assert_eq!(
        broadcast_rect(&g, &not_a_line, NocId::Noc0),
        Err(LayoutError::NotConsecutive)
    );
    let across_panels = BroadcastCores::new(&[(5, 0), (6, 0)]).unwrap();
    assert_eq!(
        broadcast_rect(&g, &across_panels, NocId::Noc0),
        Err(LayoutError::NotConsecutive)
    );
    // No core at all is a count outside 1..=16, not a line that breaks.
    let e = BroadcastCores::new(&[]).unwrap_err();
    assert_eq!(e, LayoutError::TooManyCores(0));
    assert_eq!(
        e.to_string(),
        "a broadcast of 0 cores (allowed: 1..=16, 15 receivers)"
    );
    // A fused bank of a chip without banks: nothing is allowed but none.
    let e = common::blackhole(0x3000)
        .with_fused_dram(Some(0), 0)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "fused DRAM bank 0 does not exist: the chip has no DRAM bank (allowed: none)"
    );
}

fn check_layout(
    mask: u32,
    rect: LogicalRect,
    along: Along,
    noc: NocId,
) -> Result<(), TestCaseError> {
    let g = common::blackhole(mask);
    let bs = broadcasts(&g, rect, along, noc).unwrap();
    let panel_of = |x: u8| {
        panels(g.noc0_x())
            .iter()
            .position(|p| x >= p.first_column && x < p.first_column + p.columns)
    };
    // Every core of the rectangle in exactly one broadcast.
    let mut seen = std::collections::BTreeMap::new();
    for (i, b) in bs.iter().enumerate() {
        for &c in b.cores() {
            prop_assert!(rect.contains(c.0, c.1));
            prop_assert!(seen.insert(c, i).is_none(), "core {:?} twice", c);
        }
        let noc0: Vec<_> = b.cores().iter().map(|&c| g.noc0(c).unwrap()).collect();
        match along {
            Along::Column => prop_assert!(b.cores().iter().all(|c| c.0 == b.sender().0)),
            Along::Row => {
                prop_assert!(b.cores().iter().all(|c| c.1 == b.sender().1));
                let p = panel_of(b.sender().0);
                prop_assert!(
                    b.cores().iter().all(|c| panel_of(c.0) == p),
                    "row crosses a panel"
                );
            }
        }
        // Rank 0 where the NoC's direction starts.
        let first = noc0[0];
        let (axis_min, axis_max) = match along {
            Along::Column => (
                noc0.iter().map(|p| p.1).min().unwrap(),
                noc0.iter().map(|p| p.1).max().unwrap(),
            ),
            Along::Row => (
                noc0.iter().map(|p| p.0).min().unwrap(),
                noc0.iter().map(|p| p.0).max().unwrap(),
            ),
        };
        let sender_axis = if along == Along::Column {
            first.1
        } else {
            first.0
        };
        prop_assert_eq!(
            sender_axis,
            if noc == NocId::Noc0 {
                axis_min
            } else {
                axis_max
            }
        );
        // The rectangle covers exactly the receivers.
        let rect_raw = broadcast_rect(&g, b, noc).unwrap();
        let raw: Vec<_> = b
            .cores()
            .iter()
            .map(|&c| g.noc_xy(c, noc).unwrap())
            .collect();
        match rect_raw {
            None => prop_assert_eq!(b.cores().len(), 1),
            Some((s, e)) => {
                prop_assert!(s.0 <= e.0 && s.1 <= e.1);
                let covered: Vec<_> = (s.0..=e.0)
                    .flat_map(|x| (s.1..=e.1).map(move |y| (x, y)))
                    .collect();
                prop_assert_eq!(covered.as_slice(), &raw[1..]);
            }
        }
    }
    prop_assert_eq!(seen.len(), rect.len());
    // The words of every core decode, with the right rank and sender.
    let params = BroadcastParams {
        broadcast: 1,
        cb: 3,
        window: 2,
        pages: 4,
    };
    let group = g.full();
    let args = broadcast_args(&g, group, rect, along, noc, params).unwrap();
    prop_assert_eq!(args.len(), group.len());
    for a in &args {
        let d = BroadcastArgs::decode(&a.words).unwrap();
        match seen.get(&a.core) {
            None => prop_assert_eq!(d.rank, RANK_NONE),
            Some(&i) => {
                let b = &bs[i];
                prop_assert_eq!(Some(d.rank), b.rank_of(a.core));
                prop_assert_eq!(d.receivers, b.receivers());
                prop_assert_eq!(d.sender, g.noc_xy(b.sender(), noc).unwrap());
                prop_assert_eq!(d.core, g.noc_xy(a.core, noc).unwrap());
            }
        }
    }
    Ok(())
}

fn arb_case() -> impl Strategy<Value = (u32, LogicalRect, Along, NocId)> {
    let all = masks(4);
    (proptest::sample::select(all), any::<bool>(), any::<bool>()).prop_flat_map(
        |(mask, row, noc1)| {
            let columns = common::blackhole_noc0_x(mask).len() as u8;
            (0..columns, 0u8..10).prop_flat_map(move |(x0, y0)| {
                (1..=columns - x0, 1..=10 - y0).prop_map(move |(c, r)| {
                    (
                        mask,
                        LogicalRect::new(x0, y0, c, r),
                        if row { Along::Row } else { Along::Column },
                        if noc1 { NocId::Noc1 } else { NocId::Noc0 },
                    )
                })
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn layout_properties_hold((mask, rect, along, noc) in arb_case()) {
        check_layout(mask, rect, along, noc)?;
    }
}

#[test]
fn every_mask_with_up_to_4_harvested_columns_lays_out_the_full_grid() {
    for mask in masks(4) {
        let columns = common::blackhole_noc0_x(mask).len() as u8;
        let full = LogicalRect::new(0, 0, columns, 10);
        for along in [Along::Row, Along::Column] {
            for noc in [NocId::Noc0, NocId::Noc1] {
                check_layout(mask, full, along, noc).unwrap();
            }
        }
    }
}

#[test]
fn a_column_of_16_cores_is_one_broadcast_of_a_sender_and_15_receivers() {
    // "Receivers per broadcast: up to 15": a broadcast of 16 cores is the largest. A grid of
    // 3 x 16 whose one logical column is NoC0 x 1 and whose 16 rows are NoC0 y 0..=15.
    assert_eq!(MAX_CORES, 16);
    let rows: Vec<u8> = (0..16).collect();
    let g = Geometry::new(&[1], &rows, (3, 16)).unwrap();
    let column = LogicalRect::new(0, 0, 1, 16);
    for noc in [NocId::Noc0, NocId::Noc1] {
        let bs = broadcasts(&g, column, Along::Column, noc).unwrap();
        assert_eq!(bs.len(), 1, "{noc:?}");
        assert_eq!(bs[0].cores().len(), 16);
        assert_eq!(bs[0].receivers(), 15);
    }
    // NoC0: the sender at the top (1,0), receivers (1,1)..(1,15). NoC1 numbers from the far
    // corner (x1 = 2 - x0, y1 = 15 - y0): the sender at the bottom, NoC1 (1,0), receivers
    // NoC1 (1,1)..(1,15).
    let p = BroadcastParams {
        broadcast: 0,
        cb: 3,
        window: 2,
        pages: 1,
    };
    for (noc, sender) in [(NocId::Noc0, (0, 0)), (NocId::Noc1, (0, 15))] {
        let all = broadcast_args(&g, column, column, Along::Column, noc, p).unwrap();
        assert_eq!(all.len(), 16);
        let a = all.iter().find(|c| c.core == sender).unwrap();
        let a = BroadcastArgs::decode(&a.words).unwrap();
        assert_eq!(
            (a.rank, a.receivers, a.core, a.start, a.end),
            (0, 15, (1, 0), (1, 1), (1, 15)),
            "{noc:?}"
        );
    }
    // 17 cores are not a broadcast.
    let seventeen: Vec<(u8, u8)> = (0..17).map(|y| (0, y)).collect();
    assert_eq!(
        BroadcastCores::new(&seventeen),
        Err(LayoutError::TooManyCores(17))
    );
}

#[test]
fn broadcast_args_allow_a_window_of_8_and_a_buffer_of_65_535_pages_and_no_more() {
    let g = common::blackhole(0x3000);
    let r = LogicalRect::new(0, 0, 2, 2);
    let args = |broadcast: u8, window: u8, pages: u16| {
        let p = BroadcastParams {
            broadcast,
            cb: 0,
            window,
            pages,
        };
        broadcast_args(&g, r, r, Along::Row, NocId::Noc0, p)
    };
    for (window, pages) in [(8, 8_191), (5, 13_107), (1, 65_535)] {
        let all = args(1, window, pages).unwrap();
        let a = BroadcastArgs::decode(&all[0].words).unwrap();
        assert_eq!((a.broadcast, a.window, a.pages), (1, window, pages));
    }
    let refused = |e| Err(LayoutError::Args(e));
    assert_eq!(
        args(0, 8, 8_192),
        refused(ArgsError::BufferTooLarge(65_536))
    );
    assert_eq!(args(0, 9, 1), refused(ArgsError::Window(9)));
    assert_eq!(args(0, 0, 1), refused(ArgsError::Window(0)));
    assert_eq!(args(2, 2, 1), refused(ArgsError::BroadcastId(2)));
}

#[test]
fn broadcast_args_report_the_window_then_pages_then_buffer_then_broadcast_id() {
    // With several parameters wrong, the refusal names the first of window, pages, buffer,
    // broadcast id: the order of rule 4 ("Window ... the buffer ... holds at most 65,535"),
    // then the id.
    let g = common::blackhole(0x3000);
    let r = LogicalRect::new(0, 0, 2, 2);
    let args = |broadcast: u8, window: u8, pages: u16| {
        let p = BroadcastParams {
            broadcast,
            cb: 0,
            window,
            pages,
        };
        broadcast_args(&g, r, r, Along::Row, NocId::Noc0, p)
    };
    let refused = |e| Err(LayoutError::Args(e));
    assert_eq!(args(2, 0, 0), refused(ArgsError::Window(0)));
    assert_eq!(args(2, 9, 65_535), refused(ArgsError::Window(9)));
    assert_eq!(args(2, 8, 0), refused(ArgsError::Pages));
    assert_eq!(
        args(2, 8, 10_000),
        refused(ArgsError::BufferTooLarge(80_000))
    );
    assert_eq!(args(2, 8, 8_191), refused(ArgsError::BroadcastId(2)));
}

#[test]
fn a_geometry_keeps_its_grid_and_the_fused_dram_bank_it_was_given_and_refuses_a_bank_it_lacks() {
    // A 4 x 3 grid, columns at x 1 and 3, rows at y 0 and 2.
    let g = Geometry::new(&[1, 3], &[0, 2], (4, 3)).unwrap();
    assert_eq!(g.grid(), (4, 3));
    assert_eq!(g.fused_dram(), None);
    // Of 8 banks, bank 7 is the last that can be fused; 8 is no bank.
    let fused = g.clone().with_fused_dram(Some(7), 8).unwrap();
    assert_eq!(fused.fused_dram(), Some(7));
    assert_eq!(
        (fused.grid(), fused.columns(), fused.rows()),
        ((4, 3), 2, 2)
    );
    assert_eq!(
        g.clone().with_fused_dram(Some(2), 8).unwrap().fused_dram(),
        Some(2)
    );
    assert_eq!(
        g.clone().with_fused_dram(Some(8), 8),
        Err(LayoutError::FusedDram { bank: 8, banks: 8 })
    );
    assert_eq!(
        g.clone().with_fused_dram(Some(0), 0),
        Err(LayoutError::FusedDram { bank: 0, banks: 0 })
    );
    // None on a chip of no banks, and none again over a fused one.
    assert_eq!(g.clone().with_fused_dram(None, 0), Ok(g.clone()));
    assert_eq!(fused.with_fused_dram(None, 8), Ok(g));
}
