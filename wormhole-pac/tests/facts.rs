//! wormhole-pac's tables against the numbers of Tenstorrent's sources, each test naming them:
//! tt-umd (`wormhole_implementation.hpp`, `wormhole_coordinate_manager.cpp` and its test
//! `test_core_coord_translation_wh.cpp`), tt-isa-documentation `WormholeB0/`, tt-kmd
//! `wormhole.c`, ttsim's Wormhole model (`src/tile.cpp`).

use wormhole_pac::addr::{self, EncodeError};
use wormhole_pac::grid::{self, Tile};
use wormhole_pac::harvest::{HarvestMask, InvalidHarvestMask};
use wormhole_pac::niu;
use wormhole_pac::tlb::{self, Ordering, WindowSize, WindowTarget};
use wormhole_pac::translate::Translation;

#[test]
fn the_grid_holds_80_tensix_18_dram_ports_16_eth_pcie_arc_and_4_routers() {
    let mut tensix = 0;
    let (mut dram, mut eth, mut pcie, mut arc, mut router) = (0, 0, 0, 0, 0);
    for x in 0..grid::GRID_X {
        for y in 0..grid::GRID_Y {
            match grid::tile_at(x, y).unwrap() {
                Tile::Tensix => {
                    assert!(grid::TENSIX_X.contains(&x) && grid::TENSIX_Y.contains(&y));
                    tensix += 1
                }
                Tile::Dram { bank, port } => {
                    assert_eq!(grid::DRAM_PORTS[bank as usize][port as usize], (x, y));
                    dram += 1
                }
                Tile::Eth { channel } => {
                    assert_eq!(grid::ETH[channel as usize], (x, y));
                    eth += 1
                }
                Tile::Pcie => pcie += 1,
                Tile::Arc => arc += 1,
                Tile::RouterOnly => {
                    assert!(grid::ROUTER_ONLY.contains(&(x, y)), "({x},{y})");
                    router += 1
                }
            }
        }
    }
    assert_eq!(
        (tensix, dram, eth, pcie, arc, router),
        (80, 18, 16, 1, 1, 4)
    );
    assert_eq!(grid::tile_at(10, 0), None);
    assert_eq!(grid::tile_at(0, 12), None);
}

#[test]
fn noc1_mirrors_noc0_and_the_pcie_tile_is_at_9_8_on_noc1() {
    // tt-kmd wormhole.c: PCIE_NOC1_X 9, PCIE_NOC1_Y 8.
    assert_eq!(grid::noc0_to_noc1(grid::PCIE.0, grid::PCIE.1), Some((9, 8)));
    for x in 0..grid::GRID_X {
        for y in 0..grid::GRID_Y {
            let (x1, y1) = grid::noc0_to_noc1(x, y).unwrap();
            assert_eq!(grid::noc0_to_noc1(x1, y1), Some((x, y)));
        }
    }
    assert_eq!(grid::noc0_to_noc1(10, 0), None);
}

#[test]
fn the_arc_mask_order_maps_to_rows_as_tt_umd_shuffles_it() {
    // HARVESTING_NOC_LOCATIONS: ARC bit 0 is NoC0 row 11, bit 1 row 1, bit 9 row 5.
    assert_eq!(HarvestMask::from_arc(1 << 0).unwrap().bits(), 1 << 9);
    assert_eq!(HarvestMask::from_arc(1 << 1).unwrap().bits(), 1 << 0);
    assert_eq!(HarvestMask::from_arc(1 << 9).unwrap().bits(), 1 << 4);
    assert_eq!(HarvestMask::from_arc(0).unwrap(), HarvestMask::NONE);
    assert_eq!(
        HarvestMask::from_arc(1 << 10),
        Err(InvalidHarvestMask(1 << 10))
    );
    assert_eq!(HarvestMask::new(0x3FF), Err(InvalidHarvestMask(0x3FF)));
    assert_eq!(
        InvalidHarvestMask(0x400).to_string(),
        "harvest mask 0x400 (allowed: bits 0..=9, one a Tensix row, not all of them)"
    );
}

#[test]
fn a_harvested_first_row_moves_logical_rows_and_translated_coordinates_as_tt_umd_tests() {
    // tt-umd test_core_coord_translation_wh.cpp, CoordinateManagerWormholeTopLeftCore and the
    // translated-coordinate tests: mask 1 << 0 harvests NoC0 row 1.
    let mask = HarvestMask::new(1).unwrap();
    let rows = mask.rows();
    assert_eq!((rows.columns(), rows.count()), (8, 9));
    assert_eq!(rows.logical_to_noc0(0, 0), Some((1, 2)));
    assert_eq!(rows.logical_to_noc0(0, 8), Some((1, 11)));
    assert_eq!(rows.logical_to_noc0(0, 9), None);
    assert_eq!(rows.noc0_to_logical(1, 1), None, "harvested");
    assert_eq!(rows.noc0_to_logical(9, 11), Some((7, 8)));
    let t = Translation::new(mask);
    assert_eq!(t.from_noc0(1, 11), Some((18, 26)));
    assert_eq!(
        t.from_noc0(1, 1),
        Some((18, 27)),
        "the harvested row goes last"
    );
    assert_eq!(t.to_noc0(18, 26), Some((1, 11)));
    assert_eq!(t.to_noc0(18, 18), Some((1, 2)));
}

#[test]
fn the_isa_example_with_rows_7_and_10_harvested_renumbers_them_to_26_and_27() {
    // tt-isa-documentation WormholeB0/NoC/Coordinates.md, the Y table example.
    let bits = [7u8, 10]
        .iter()
        .map(|y| 1 << grid::TENSIX_Y.iter().position(|r| r == y).unwrap())
        .sum::<u32>();
    let t = Translation::new(HarvestMask::new(bits).unwrap());
    let noc0: Vec<u8> = (18..=27).map(|ty| t.y_to_noc0(ty).unwrap()).collect();
    assert_eq!(noc0, [1, 2, 3, 4, 5, 8, 9, 11, 7, 10]);
    assert_eq!(t.y_to_noc0(16), Some(0));
    assert_eq!(t.y_to_noc0(17), Some(6));
    assert_eq!(t.y_to_noc0(28), None);
}

#[test]
fn dram_pcie_and_arc_keep_their_noc0_coordinates_and_ethernet_moves_to_16_and_17() {
    let t = Translation::new(HarvestMask::NONE);
    for bank in grid::DRAM_PORTS {
        for (x, y) in bank {
            assert_eq!(t.from_noc0(x, y), Some((x, y)));
        }
    }
    assert_eq!(t.from_noc0(0, 3), Some((0, 3)));
    assert_eq!(t.from_noc0(0, 10), Some((0, 10)));
    // tt-umd fill_eth_noc0_translated_mapping: x 1..=4, 6..=9 -> 18..=25; y 0 -> 16, 6 -> 17.
    assert_eq!(t.from_noc0(9, 0), Some((25, 16)));
    assert_eq!(t.from_noc0(1, 6), Some((18, 17)));
    assert_eq!(t.from_noc0(9, 11), Some((25, 27)));
    // Translated x 16 and 17 reach the DRAM columns (the ISA's X table).
    assert_eq!(Translation::x_to_noc0(16), Some(0));
    assert_eq!(Translation::x_to_noc0(17), Some(5));
}

#[test]
fn the_translation_tables_of_an_unharvested_chip_are_the_words_ttsim_reads_back() {
    // ttsim src/tile.cpp: NOC_X/Y_ID_TRANSLATE_TABLE_0..3 of NoC0 and NoC1.
    let t = Translation::new(HarvestMask::NONE);
    let identity = [0x7654_3210, 0xFEDC_BA98];
    assert_eq!(
        Translation::x_table(0),
        [identity[0], identity[1], 0x7643_2150, 0x98]
    );
    assert_eq!(
        Translation::x_table(1),
        [identity[0], identity[1], 0x2356_7849, 0x1]
    );
    assert_eq!(
        t.y_table(0),
        [identity[0], identity[1], 0x7543_2160, 0xBA98]
    );
    assert_eq!(t.y_table(1), [identity[0], identity[1], 0x4678_9A5B, 0x123]);
}

#[test]
fn node_id_is_what_ttsim_returns() {
    // ttsim src/tile.cpp noc_node_id: coord | 10 << 12 | 12 << 19 | (noc == 0) << 28.
    assert_eq!(
        niu::node_id(3, 4, 0),
        3 | 4 << 6 | 10 << 12 | 12 << 19 | 1 << 28
    );
    assert_eq!(niu::node_id(3, 4, 1), 3 | 4 << 6 | 10 << 12 | 12 << 19);
}

#[test]
fn addresses_put_the_coordinates_in_the_middle_word() {
    // tt-metal NOC_XY_ENCODING and NOC_MULTICAST_ENCODING.
    assert_eq!(addr::unicast_coord(1, 2), Ok(1 << 4 | 2 << 10));
    assert_eq!(
        addr::multicast_coord((1, 2), (9, 11)),
        Ok(9 << 4 | 11 << 10 | 1 << 16 | 2 << 22)
    );
    assert_eq!(addr::unicast_coord(64, 0), Err(EncodeError::Coordinate(64)));
    let coord = addr::unicast_coord(5, 11).unwrap();
    assert_eq!(
        addr::split(coord, 0x3_1234_5678),
        Ok((0x1234_5678, coord | 0x3))
    );
    assert_eq!(
        addr::split(coord, 1 << 36),
        Err(EncodeError::Local(1 << 36))
    );
    // NOC_XY_ADDR(x, y, a) = y << 42 | x << 36 | a.
    assert_eq!(
        addr::unicast_addr(5, 11, 0x100),
        Ok(11 << 42 | 5 << 36 | 0x100)
    );
    assert_eq!(addr::NOC_MAX_BURST_SIZE, 256 * addr::NOC_WORD_BYTES);
}

#[test]
fn tlb_windows_tile_bar0_and_their_fields_sit_where_the_isa_puts_them() {
    // tt-isa-documentation PCIExpressTile/TLBs.md: 1 MiB windows end where 2 MiB begin, 2 MiB
    // where 16 MiB begin, and the 16 MiB ones end at the kernel window's end (0x1F00_0000).
    let end = |s: WindowSize| s.bar0_base() as u64 + ((s.count() as u64) << s.shift());
    assert_eq!(end(WindowSize::Mib1), WindowSize::Mib2.bar0_base() as u64);
    assert_eq!(end(WindowSize::Mib2), WindowSize::Mib16.bar0_base() as u64);
    assert_eq!(end(WindowSize::Mib16), 0x1F00_0000);
    assert_eq!(
        WindowSize::ALL.iter().map(|s| s.count()).sum::<usize>(),
        tlb::WINDOWS
    );
    // Field positions of a 1 MiB window (N = 16): x_end 16, y_end 22, x_start 28, y_start 34,
    // noc 40, mcast 41, ordering 42.
    let target = WindowTarget {
        end: (9, 11),
        start: (1, 2),
        noc: 1,
        multicast: true,
        ordering: Ordering::Posted,
    };
    let word = tlb::config(WindowSize::Mib1, 3 << 20, target).unwrap();
    assert_eq!(
        word,
        3 | 9 << 16 | 11 << 22 | 1 << 28 | 2 << 34 | 1 << 40 | 1 << 41 | 2 << 42
    );
    // `decode` is its inverse, for every size.
    for size in WindowSize::ALL {
        let addr = 3 << size.shift();
        let word = tlb::config(size, addr, target).unwrap();
        assert_eq!(tlb::decode(size, word), Some((addr, target)), "{size:?}");
    }
    // 16 MiB (N = 12): x_end at 12, ordering at 38.
    let word = tlb::config(
        WindowSize::Mib16,
        0,
        WindowTarget {
            end: (1, 1),
            start: (0, 0),
            noc: 0,
            multicast: false,
            ordering: Ordering::Strict,
        },
    )
    .unwrap();
    assert_eq!(word, 1 << 12 | 1 << 18 | 1 << 38);
    assert_eq!(
        tlb::config(WindowSize::Mib2, 1 << 20, target),
        Err(tlb::TlbError::Address(1 << 20))
    );
}
