//! Every table of the crate against the numbers of docs/blackhole.md, each of which names its
//! Tenstorrent source (sections Grid, Harvesting, NoC addresses, NIU registers, Tensix cores,
//! Circular buffers, TLB windows).

use blackhole_pac::addr::*;
use blackhole_pac::grid::*;
use blackhole_pac::harvest::*;
use blackhole_pac::niu::{self, CmdBufId, Counter, Niu, NocCtrl};
use blackhole_pac::stream::{self, CbIndex, Streams};
use blackhole_pac::tensix::{self, SoftReset};
use blackhole_pac::tlb::*;

// ---- grid (docs/blackhole.md, Grid) ---------------------------------------------------------

#[test]
fn grid_is_17_by_12_with_the_published_tile_counts() {
    assert_eq!((GRID_X, GRID_Y), (17, 12));
    let mut tensix = 0;
    let mut dram = 0;
    let mut eth = 0;
    let mut pcie = 0;
    let mut arc = 0;
    let mut security = 0;
    let mut l2cpu = 0;
    let mut router = 0;
    for y in 0..GRID_Y {
        for x in 0..GRID_X {
            match tile_at(x, y).expect("inside the grid") {
                TileKind::Tensix => tensix += 1,
                TileKind::Dram { .. } => dram += 1,
                TileKind::Ethernet(_) => eth += 1,
                TileKind::Pcie(_) => pcie += 1,
                TileKind::Arc => arc += 1,
                TileKind::Security => security += 1,
                TileKind::L2Cpu(_) => l2cpu += 1,
                TileKind::RouterOnly => router += 1,
            }
        }
    }
    assert_eq!(
        (tensix, dram, eth, pcie, arc, security, l2cpu, router),
        (140, 24, 14, 2, 1, 1, 4, 18)
    );
    assert_eq!(tile_at(17, 0), None);
    assert_eq!(tile_at(0, 12), None);
}

#[test]
fn memory_at_is_tile_at_for_tensix_and_dram_and_none_elsewhere() {
    for y in 0..=GRID_Y {
        for x in 0..=GRID_X {
            let expected = match tile_at(x, y) {
                Some(k @ (TileKind::Tensix | TileKind::Dram { .. })) => Some(k),
                _ => None,
            };
            assert_eq!(memory_at(x, y), expected, "({x},{y})");
            if let Some(p) = Noc0Xy::new(x, y) {
                assert_eq!(p.memory(), expected, "({x},{y})");
            }
        }
    }
}

#[test]
fn tensix_columns_and_rows_are_the_published_ones() {
    assert_eq!(TENSIX_X, [1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16]);
    assert_eq!((TENSIX_Y_FIRST, TENSIX_Y_LAST, TENSIX_ROWS), (2, 11, 10));
    for x in 0..GRID_X {
        for y in 0..GRID_Y {
            let expect = TENSIX_X.contains(&x) && (2..=11).contains(&y);
            assert_eq!(tile_at(x, y) == Some(TileKind::Tensix), expect, "({x},{y})");
        }
    }
}

#[test]
fn dram_banks_and_ports_are_the_published_ones() {
    let published: [[(u8, u8); 3]; 8] = [
        [(0, 0), (0, 1), (0, 11)],
        [(0, 2), (0, 10), (0, 3)],
        [(0, 9), (0, 4), (0, 8)],
        [(0, 5), (0, 7), (0, 6)],
        [(9, 0), (9, 1), (9, 11)],
        [(9, 2), (9, 10), (9, 3)],
        [(9, 9), (9, 4), (9, 8)],
        [(9, 5), (9, 7), (9, 6)],
    ];
    assert_eq!(DRAM_PORTS, published);
    for (bank, ports) in published.iter().enumerate() {
        for (port, &(x, y)) in ports.iter().enumerate() {
            assert_eq!(
                tile_at(x, y),
                Some(TileKind::Dram {
                    bank: bank as u8,
                    port: port as u8
                })
            );
        }
    }
    assert_eq!(
        DRAM_WORKER_PORT,
        [
            (0, 11),
            (0, 3),
            (0, 8),
            (0, 6),
            (9, 11),
            (9, 3),
            (9, 8),
            (9, 6)
        ]
    );
    assert_eq!(DRAM_BANK_SIZE, 4_294_967_296);
    assert_eq!(DRAM_BANK_USABLE_SIZE, 4_278_190_080);
}

#[test]
fn other_tiles_sit_where_published() {
    assert_eq!(tile_at(8, 0), Some(TileKind::Arc));
    assert_eq!(tile_at(2, 0), Some(TileKind::Pcie(0)));
    assert_eq!(tile_at(11, 0), Some(TileKind::Pcie(1)));
    assert_eq!(tile_at(8, 2), Some(TileKind::Security));
    for (i, &(x, y)) in [(8, 3), (8, 5), (8, 7), (8, 9)].iter().enumerate() {
        assert_eq!(tile_at(x, y), Some(TileKind::L2Cpu(i as u8)));
    }
    for (channel, &x) in [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10]
        .iter()
        .enumerate()
    {
        assert_eq!(tile_at(x, 1), Some(TileKind::Ethernet(channel as u8)));
    }
    for &(x, y) in &[
        (1, 0),
        (3, 0),
        (4, 0),
        (5, 0),
        (6, 0),
        (7, 0),
        (10, 0),
        (12, 0),
        (13, 0),
        (14, 0),
        (15, 0),
        (16, 0),
        (8, 1),
        (8, 4),
        (8, 6),
        (8, 8),
        (8, 10),
        (8, 11),
    ] {
        assert_eq!(tile_at(x, y), Some(TileKind::RouterOnly), "({x},{y})");
    }
}

#[test]
fn noc1_coordinates_are_16_minus_x_and_11_minus_y() {
    assert_eq!(noc0_to_noc1(0, 0), Some((16, 11)));
    assert_eq!(noc0_to_noc1(1, 2), Some((15, 9)));
    assert_eq!(noc0_to_noc1(16, 11), Some((0, 0)));
    assert_eq!(noc0_to_noc1(17, 0), None);
    for x in 0..GRID_X {
        for y in 0..GRID_Y {
            let (x1, y1) = noc0_to_noc1(x, y).unwrap();
            assert_eq!((x1, y1), (16 - x, 11 - y));
            assert_eq!(noc1_to_noc0(x1, y1), Some((x, y)));
            let p0 = Noc0Xy::new(x, y).unwrap();
            let p1 = p0.to_noc1();
            assert_eq!((p1.x(), p1.y()), (x1, y1));
            assert_eq!(p1, Noc1Xy::new(x1, y1).unwrap());
            assert_eq!(p1.to_noc0(), p0);
            assert_eq!(Noc0Xy::from(p1), p0);
            assert_eq!(p0.tile(), tile_at(x, y).unwrap());
        }
    }
    assert_eq!(Noc0Xy::new(17, 0), None);
    assert_eq!(Noc0Xy::new(0, 12), None);
    assert_eq!(Noc1Xy::new(17, 0), None);
    assert_eq!(Noc1Xy::new(0, 12), None);
    assert_eq!(noc1_to_noc0(0, 12), None);
}

#[test]
fn tensix_rows_are_noc0_y_2_to_11() {
    assert_eq!(TENSIX_Y.len(), TENSIX_ROWS as usize);
    assert_eq!(TENSIX_Y[0], TENSIX_Y_FIRST);
    assert_eq!(TENSIX_Y[TENSIX_Y.len() - 1], TENSIX_Y_LAST);
    assert!(TENSIX_Y.windows(2).all(|w| w[1] == w[0] + 1));
}

#[test]
fn forward_hops_wrap_around_the_torus() {
    assert_eq!(forward_hops(1, 4, 17), 3);
    assert_eq!(forward_hops(16, 1, 17), 2);
    assert_eq!(forward_hops(5, 5, 17), 0);
}

// ---- harvesting (docs/blackhole.md, Harvesting) --------------------------------------------

#[test]
fn harvesting_bit_order_is_the_die_order() {
    assert_eq!(
        HARVESTING_NOC_LOCATIONS,
        [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10]
    );
    for (i, &x) in HARVESTING_NOC_LOCATIONS.iter().enumerate() {
        let mask = HarvestMask::new(1 << i).unwrap();
        assert!(mask.is_harvested(x));
        assert_eq!(mask.harvested_count(), 1);
        assert!(!mask.columns().noc0_x().contains(&x));
    }
    assert_eq!(TELEMETRY_TAG_ENABLED_TENSIX_COL, 34);
}

#[test]
fn the_published_example_die_bits_12_13_are_umd_mask_192() {
    let mask = HarvestMask::new((1 << 12) | (1 << 13)).unwrap();
    assert_eq!(mask, HarvestMask::P100_P150);
    assert_eq!(mask.to_umd(), 0xC0);
    assert_eq!(HarvestMask::from_umd(192).unwrap(), mask);
    assert_eq!(
        mask.columns().noc0_x(),
        &[1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16]
    );
    assert_eq!(mask.tensix_count(), 120);
}

#[test]
fn every_mask_round_trips_through_umd_order_and_telemetry() {
    for bits in 0..=0x3FFFu32 {
        let mask = HarvestMask::new(bits).unwrap();
        assert_eq!(HarvestMask::from_umd(mask.to_umd() as u32).unwrap(), mask);
        assert_eq!(
            HarvestMask::from_enabled_tensix_col(mask.enabled_tensix_col()),
            mask
        );
        assert_eq!(mask.to_umd().count_ones(), bits.count_ones());
        let columns = mask.columns();
        assert_eq!(columns.len(), 14 - bits.count_ones() as usize);
        assert!(
            columns.noc0_x().windows(2).all(|w| w[0] < w[1]),
            "ascending NoC0 x"
        );
    }
    assert!(HarvestMask::new(0x4000).is_err());
    assert!(HarvestMask::from_umd(0x4000).is_err());
}

#[test]
fn enabled_tensix_col_is_the_complement_of_the_mask() {
    assert_eq!(
        HarvestMask::from_enabled_tensix_col(0x3FFF),
        HarvestMask::NONE
    );
    assert_eq!(
        HarvestMask::from_enabled_tensix_col(0x0FFF),
        HarvestMask::P100_P150
    );
    // Bits above 13 of the telemetry word are ignored.
    assert_eq!(
        HarvestMask::from_enabled_tensix_col(0xFFFF_FFFF),
        HarvestMask::NONE
    );
}

#[test]
fn logical_coordinates_map_to_noc0() {
    let full = HarvestMask::NONE.columns();
    assert_eq!(full.noc0_x(), &TENSIX_X);
    assert_eq!(full.logical_to_noc0(0, 0), Some((1, 2)));
    assert_eq!(full.logical_to_noc0(13, 9), Some((16, 11)));
    assert_eq!(full.logical_to_noc0(14, 0), None);
    assert_eq!(full.logical_to_noc0(0, 10), None);
    let p150 = HarvestMask::P100_P150.columns();
    assert_eq!(p150.logical_to_noc0(6, 3), Some((11, 5)));
    assert_eq!(p150.noc0_to_logical(11, 5), Some((6, 3)));
    assert_eq!(p150.noc0_to_logical(7, 5), None, "harvested column");
    assert_eq!(p150.noc0_to_logical(8, 5), None, "not a Tensix column");
    assert_eq!(p150.noc0_y(), &TENSIX_Y);
    assert_eq!(p150.noc0_xy(6, 3), Noc0Xy::new(11, 5));
    assert_eq!(p150.noc0_xy(12, 0), None);
    assert_eq!(p150.noc0_xy(6, 3).map(Noc0Xy::tile), Some(TileKind::Tensix));
}

#[test]
fn a_mask_maps_noc0_to_logical_as_its_columns_do() {
    for bits in 0..1u32 << 14 {
        let mask = HarvestMask::new(bits).unwrap();
        let columns = mask.columns();
        for y in [0, 1, 2, 3, 10, 11, 12] {
            for x in 0..=GRID_X {
                assert_eq!(
                    mask.noc0_to_logical(x, y),
                    columns.noc0_to_logical(x, y),
                    "mask {bits:#x}, ({x},{y})"
                );
            }
        }
    }
}

// ---- encodings (docs/blackhole.md, NoC addresses) ------------------------------------------

#[test]
fn noc_address_encodings_are_tt_metal_s() {
    assert_eq!(NOC_ADDR_LOCAL_BITS, 36);
    assert_eq!(NOC_ADDR_NODE_ID_BITS, 6);
    assert_eq!(
        unicast_addr(1, 2, 0x1000),
        Ok((2 << 42) | (1 << 36) | 0x1000)
    );
    assert_eq!(
        multicast_addr((1, 2), (7, 11), 0x2000),
        Ok((2 << 54) | (1 << 48) | (11 << 42) | (7 << 36) | 0x2000)
    );
    assert_eq!(unicast_coord(3, 4), Ok(3 | (4 << 6)));
    assert_eq!(
        multicast_coord((1, 2), (7, 11)),
        Ok(7 | (11 << 6) | (1 << 12) | (2 << 18))
    );
    assert_eq!(unicast_addr(64, 0, 0), Err(EncodeError::Coordinate(64)));
    assert_eq!(
        unicast_addr(0, 0, 1 << 36),
        Err(EncodeError::LocalAddress(1 << 36))
    );
}

#[test]
fn address_split_matches_the_register_rule() {
    let a = unicast_addr(5, 9, 0x8_1234_5670).unwrap();
    let regs = AddrRegs::split(a);
    assert_eq!(regs.lo, 0x1234_5670);
    assert_eq!(regs.mid, 0x8);
    assert_eq!(regs.hi, unicast_coord(5, 9).unwrap());
    let pcie = a | NOC_PCIE_ADDR_BIT;
    assert_eq!(AddrRegs::split(pcie).mid, 0x1000_0008);
}

#[test]
fn multicast_spans_wrap_when_start_is_after_end() {
    assert!(span_contains(2, 5, 2) && span_contains(2, 5, 5) && !span_contains(2, 5, 6));
    // Reversed corners cover the way round the torus, not the inside.
    assert!(span_contains(5, 2, 0) && span_contains(5, 2, 16) && span_contains(5, 2, 5));
    assert!(!span_contains(5, 2, 3));
    assert!(rect_contains((1, 2), (3, 4), 2, 3));
    assert!(!rect_contains((3, 2), (1, 4), 2, 3));
}

#[test]
fn alignment_and_packet_limits() {
    assert_eq!((L1_ALIGN, DRAM_READ_ALIGN, DRAM_WRITE_ALIGN), (16, 64, 16));
    assert_eq!((FLIT_BYTES, MAX_PACKET_BYTES), (64, 16384));
}

// ---- NIU (docs/blackhole.md, NIU registers) ------------------------------------------------

#[test]
fn niu_bases_and_offsets() {
    assert_eq!(niu::NIU0_BASE, 0xFFB2_0000);
    assert_eq!(niu::NIU1_BASE, 0xFFB3_0000);
    assert_eq!(niu::NIU1_BASE - niu::NIU0_BASE, niu::NOC_INSTANCE_OFFSET);
    assert_eq!(niu::NOC_CMD_BUF_OFFSET, 0x800);
    assert_eq!(niu::NOC_CMD_BUFS, 4);
    assert_eq!(
        (niu::NOC_CFG_OFFSET, niu::NOC_STATUS_OFFSET),
        (0x100, 0x200)
    );
    use niu::cmd::*;
    let offsets = [
        NOC_TARG_ADDR_LO,
        NOC_TARG_ADDR_MID,
        NOC_TARG_ADDR_HI,
        NOC_RET_ADDR_LO,
        NOC_RET_ADDR_MID,
        NOC_RET_ADDR_HI,
        NOC_PACKET_TAG,
        NOC_CTRL,
        NOC_AT_LEN_BE,
        NOC_AT_LEN_BE_1,
        NOC_AT_DATA,
        NOC_BRCST_EXCLUDE,
        NOC_L1_ACC_AT_INSTRN,
        NOC_SEC_CTRL,
        NOC_CMD_CTRL,
        NOC_NODE_ID,
        NOC_ENDPOINT_ID,
        CMD_BUF_AVAIL,
        CMD_BUF_OVFL,
    ];
    assert_eq!(
        offsets,
        [
            0x00, 0x04, 0x08, 0x0C, 0x10, 0x14, 0x18, 0x1C, 0x20, 0x24, 0x28, 0x2C, 0x30, 0x34,
            0x40, 0x44, 0x48, 0x64, 0x68
        ]
    );
    // Once per NIU, at its base (ISA `NoC/MemoryMap.md`), not in each command buffer's block.
    assert_eq!(niu::NOC_CLEAR_OUTSTANDING_REQ_CNT, 0x60);
    use niu::cfg::*;
    assert_eq!(0x100 + 4 * NOC_X_ID_TRANSLATE_TABLE_0, 0x118);
    assert_eq!(0x100 + 4 * NOC_Y_ID_TRANSLATE_TABLE_0, 0x130);
    assert_eq!(0x100 + 4 * NOC_ID_LOGICAL, 0x148);
    assert_eq!(0x100 + 4 * NOC_ID_TRANSLATE_COL_MASK, 0x150);
    assert_eq!(0x100 + 4 * NOC_ID_TRANSLATE_ROW_MASK, 0x154);
    assert_eq!(0x100 + 4 * DDR_COORD_TRANSLATE_TABLE_0, 0x158);
    assert_eq!(0x100 + 4 * DDR_COORD_TRANSLATE_COL_SWAP, 0x170);
    assert_eq!(
        (NIU_TRANS_COUNT_RTZ_CFG, NIU_TRANS_COUNT_RTZ_CLR),
        (0x1E, 0x1F)
    );
    assert_eq!(
        (niu::PCIE_NIU0_BAR0, niu::PCIE_NIU1_BAR0),
        (0x1FD0_4000, 0x1FD1_4000)
    );
}

#[test]
fn status_counter_indices() {
    use Counter::*;
    let table = [
        (MstAtomicRespReceived, 0x0),
        (MstWrAckReceived, 0x1),
        (MstRdRespReceived, 0x2),
        (MstRdDataWordReceived, 0x3),
        (MstCmdAccepted, 0x4),
        (MstRdReqSent, 0x5),
        (MstNonpostedAtomicSent, 0x6),
        (MstPostedAtomicSent, 0x7),
        (MstNonpostedWrDataWordSent, 0x8),
        (MstPostedWrDataWordSent, 0x9),
        (MstNonpostedWrReqSent, 0xA),
        (MstPostedWrReqSent, 0xB),
        (MstNonpostedWrReqStarted, 0xC),
        (MstPostedWrReqStarted, 0xD),
        (MstRdReqStarted, 0xE),
        (MstNonpostedAtomicStarted, 0xF),
        (SlvAtomicRespSent, 0x30),
        (SlvWrAckSent, 0x31),
        (SlvRdRespSent, 0x32),
        (SlvRdDataWordSent, 0x33),
        (SlvReqAccepted, 0x34),
        (SlvRdReqReceived, 0x35),
        (SlvNonpostedAtomicReceived, 0x36),
        (SlvPostedAtomicReceived, 0x37),
        (SlvNonpostedWrDataWordReceived, 0x38),
        (SlvPostedWrDataWordReceived, 0x39),
        (SlvNonpostedWrReqReceived, 0x3A),
        (SlvPostedWrReqReceived, 0x3B),
        (SlvNonpostedWrReqStarted, 0x3C),
        (SlvPostedWrReqStarted, 0x3D),
        (TransCountRtzNum, 0x5E),
        (TransCountRtzSource, 0x5F),
    ];
    for (counter, index) in table {
        assert_eq!(counter as u8, index, "{counter:?}");
    }
    assert_eq!(
        (
            niu::REQS_OUTSTANDING_ID_BASE,
            niu::WRITE_REQS_OUTGOING_ID_BASE
        ),
        (0x10, 0x20)
    );
}

#[test]
fn noc_ctrl_bits() {
    let bit = |f: fn(&mut NocCtrl)| {
        let mut c = NocCtrl::default();
        f(&mut c);
        c.0
    };
    assert_eq!(bit(|c| c.set_request_type(niu::request::WRITE)), 0x2);
    assert_eq!(bit(|c| c.set_wr_be(true)), 1 << 2);
    assert_eq!(bit(|c| c.set_wr_inline(true)), 1 << 3);
    assert_eq!(bit(|c| c.set_resp_marked(true)), 1 << 4);
    assert_eq!(bit(|c| c.set_brcst_packet(true)), 1 << 5);
    assert_eq!(bit(|c| c.set_vc_linked(true)), 1 << 6);
    assert_eq!(bit(|c| c.set_vc_static(true)), 1 << 7);
    assert_eq!(bit(|c| c.set_path_reserve(true)), 1 << 8);
    assert_eq!(bit(|c| c.set_mem_rd_drop_ack(true)), 1 << 9);
    assert_eq!(bit(|c| c.set_static_vc(niu::MULTICAST_VC)), 4 << 13);
    assert_eq!(bit(|c| c.set_brcst_xy(true)), 1 << 16);
    assert_eq!(bit(|c| c.set_brcst_src_include(true)), 1 << 17);
    assert_eq!(bit(|c| c.set_arb_priority(0xF)), 0xF << 27);
    assert_eq!(bit(|c| c.set_l1_acc_at_en(true)), 1 << 31);
    // A too-wide value is masked to its field.
    assert_eq!(bit(|c| c.set_static_vc(0xFF)), 7 << 13);
    assert_eq!(niu::NOC_CTRL_RESERVED_MASK, 0x07FC_1C00);
    assert_eq!(
        (
            niu::UNICAST_VC,
            niu::MULTICAST_VC,
            niu::DISPATCH_MULTICAST_VC
        ),
        (1, 4, 5)
    );
}

#[test]
fn node_id_and_endpoint_fields() {
    // x = 3, y = 7, width 17, height 12, X-first routing (NoC0).
    let word = 3 | (7 << 6) | (17 << 12) | (12 << 19) | (1 << 28);
    let id = niu::NodeId(word);
    assert_eq!(
        (id.x(), id.y(), id.width(), id.height(), id.x_first()),
        (3, 7, 17, 12, true)
    );
    let ep = niu::EndpointId(5 | (0x0100 << 8) | (1 << 24));
    assert_eq!(
        (ep.tile_index(), ep.tile_type(), ep.noc_index()),
        (5, niu::endpoint::TENSIX, 1)
    );
    let mut tag = niu::PacketTag::default();
    tag.set_transaction_id(9);
    assert_eq!(tag.0, 9 << 10);
    let mut cfg = niu::NiuCfg0::default();
    cfg.set_noc_id_translate_en(true);
    assert_eq!(cfg.0, 1 << 14);
}

#[test]
fn niu_block_over_a_host_buffer_writes_the_right_words() {
    let mut buf = vec![0u32; niu::NIU_BLOCK_BYTES / 4];
    // SAFETY: `buf` outlives `n` and covers the whole block.
    let n = unsafe { Niu::from_ptr(buf.as_mut_ptr().cast()) };
    let cb2 = n.cmd_buf(CmdBufId::SMALL_WRITE);
    cb2.ret_addr_hi().write_value(0xABCD);
    cb2.ctrl().write(|c| {
        c.set_request_type(niu::request::WRITE);
        c.set_resp_marked(true);
    });
    cb2.cmd_ctrl().write_value(1);
    n.cfg(niu::cfg::NIU_CFG_0).modify(|w| *w |= 1 << 14);
    let _ = n.status(Counter::MstWrAckReceived).read();
    assert_eq!(buf[(2 * 0x800 + 0x14) / 4], 0xABCD);
    assert_eq!(buf[(2 * 0x800 + 0x1C) / 4], 0x12);
    assert_eq!(buf[(2 * 0x800 + 0x40) / 4], 1);
    assert_eq!(buf[0x100 / 4], 1 << 14);
    assert_eq!(buf.iter().filter(|&&w| w != 0).count(), 4);
}

#[test]
fn status_registers_read_from_the_right_words() {
    let mut buf = vec![0u32; niu::NIU_BLOCK_BYTES / 4];
    buf[(0x200 + 4 * 0xA) / 4] = 77;
    buf[(0x200 + 4 * (0x10 + 3)) / 4] = 5;
    // SAFETY: `buf` outlives `n` and covers the whole block.
    let n = unsafe { Niu::from_ptr(buf.as_mut_ptr().cast()) };
    assert_eq!(n.status(Counter::MstNonpostedWrReqSent).read(), 77);
    assert_eq!(
        n.reqs_outstanding(niu::TransactionId::new(3).unwrap())
            .read(),
        5
    );
    assert!(niu::TransactionId::new(16).is_none());
}

// ---- Tensix and streams (docs/blackhole.md, Tensix cores, Circular buffers) ----------------

#[test]
fn tensix_facts() {
    assert_eq!(tensix::L1_SIZE, 1_572_864);
    assert_eq!(tensix::L1_USABLE_SIZE, 1_499_136);
    assert_eq!(tensix::LOCAL_MEM_BASE, 0xFFB0_0000);
    assert_eq!(
        (tensix::LOCAL_MEM_DM_SIZE, tensix::LOCAL_MEM_TRISC_SIZE),
        (8192, 4096)
    );
    assert_eq!(tensix::SOFT_RESET_ADDR, 0xFFB1_21B0);
    let mut r = SoftReset::default();
    r.set_brisc(true);
    r.set_trisc0(true);
    r.set_trisc1(true);
    r.set_trisc2(true);
    r.set_ncrisc(true);
    assert_eq!(
        r.0,
        (1 << 11) | (1 << 12) | (1 << 13) | (1 << 14) | (1 << 18)
    );
    assert_eq!(r.0, tensix::SOFT_RESET_ALL_CORES);
    assert_eq!(tensix::TRISC_RESET_PC, [0x6000, 0xA000, 0xE000]);
    assert_eq!(tensix::NCRISC_RESET_PC, 0x12000);
    assert_eq!(tensix::TT_METAL_MEM_MAP_END, 40704);
    assert_eq!(
        (tensix::AICLK_BUSY_MHZ, tensix::AICLK_IDLE_MHZ),
        (1350, 800)
    );
}

#[test]
fn stream_registers_are_tt_metal_s() {
    assert_eq!(stream::STREAM_BASE, 0xFFB4_0000);
    assert_eq!(
        stream::stream_reg_addr(3, 10),
        0xFFB4_0000 + 3 * 0x1000 + 40
    );
    assert_eq!(
        (stream::TILES_RECEIVED_REG, stream::TILES_ACKED_REG),
        (10, 8)
    );
    assert_eq!((stream::STREAMS, stream::CIRCULAR_BUFFERS), (64, 64));
    let mut buf = vec![0u32; stream::STREAM_BLOCK_BYTES / 4];
    // SAFETY: `buf` outlives `s` and covers the whole window.
    let s = unsafe { Streams::from_ptr(buf.as_mut_ptr().cast()) };
    let cb = CbIndex::new(3).unwrap();
    s.tiles_received(cb).write_value(12);
    s.tiles_acked(cb).write_value(8);
    assert_eq!(buf[(3 * 0x1000 + 40) / 4], 12);
    assert_eq!(buf[(3 * 0x1000 + 32) / 4], 8);
    assert!(CbIndex::new(64).is_none());
}

// ---- TLB windows (docs/blackhole.md, TLB windows) ------------------------------------------

#[test]
fn tlb_window_map() {
    assert_eq!(
        (TLB_2M_COUNT, TLB_4G_COUNT, KERNEL_TLB_INDEX),
        (202, 8, 201)
    );
    assert_eq!(window_location(0), Some((0, 0, TlbSize::Size2M)));
    assert_eq!(
        window_location(201),
        Some((0, 0x1920_0000, TlbSize::Size2M))
    );
    assert_eq!(window_location(202), Some((4, 0, TlbSize::Size4G)));
    assert_eq!(window_location(209), Some((4, 7 << 32, TlbSize::Size4G)));
    assert_eq!(window_location(210), None);
    assert_eq!(config_offset(0), Some(0x1FC0_0000));
    // The strided registers follow the 210 configurations directly.
    assert_eq!(config_offset(209).unwrap() + 12, TLB_STRIDED_BASE);
    assert_eq!(strided_offset(31), Some(0x1FC0_09D8 + 124));
    assert_eq!(strided_offset(32), None);
}

fn bit_of(words: [u32; 3], bit: u32) -> bool {
    words[(bit / 32) as usize] >> (bit % 32) & 1 == 1
}

fn bits_of(words: [u32; 3]) -> Vec<u32> {
    (0..96).filter(|&b| bit_of(words, b)).collect()
}

#[test]
fn tlb_2m_field_positions() {
    let mut c = TlbConfig::unicast(1, 1, 1 << 21);
    assert_eq!(bits_of(c.encode(TlbSize::Size2M).unwrap()), vec![0, 43, 49]);
    c = TlbConfig::unicast(0, 0, 0);
    c.start = (1, 1);
    c.noc = 1;
    c.multicast = true;
    c.ordering = TlbOrdering::Strict;
    c.linked = true;
    c.static_vc = Some(0b101);
    assert_eq!(
        bits_of(c.encode(TlbSize::Size2M).unwrap()),
        vec![55, 61, 67, 69, 70, 72, 73, 75, 77]
    );
}

#[test]
fn tlb_4g_field_positions() {
    let mut c = TlbConfig::unicast(1, 1, 1 << 32);
    assert_eq!(bits_of(c.encode(TlbSize::Size4G).unwrap()), vec![0, 32, 38]);
    c = TlbConfig::unicast(0, 0, 0);
    c.start = (1, 1);
    c.noc = 1;
    c.multicast = true;
    c.ordering = TlbOrdering::Posted;
    c.linked = true;
    c.static_vc = Some(0b011);
    assert_eq!(
        bits_of(c.encode(TlbSize::Size4G).unwrap()),
        vec![44, 50, 56, 58, 60, 61, 62, 64, 65]
    );
}

#[test]
fn tlb_round_trip_and_errors() {
    for size in [TlbSize::Size2M, TlbSize::Size4G] {
        for (i, ordering) in [
            TlbOrdering::Relaxed,
            TlbOrdering::Strict,
            TlbOrdering::Posted,
            TlbOrdering::Counted,
        ]
        .into_iter()
        .enumerate()
        {
            let c = TlbConfig {
                addr: size.bytes() * (3 + i as u64),
                end: (16, 11),
                start: (1, 2),
                noc: (i % 2) as u8,
                multicast: i % 2 == 1,
                ordering,
                linked: i == 3,
                static_vc: if i == 2 { Some(4) } else { None },
            };
            assert_eq!(TlbConfig::decode(c.encode(size).unwrap(), size), c);
        }
        let bad = TlbConfig::unicast(0, 0, 0x1000);
        assert!(matches!(bad.encode(size), Err(TlbError::Misaligned { .. })));
        let bad = TlbConfig::unicast(64, 0, 0);
        assert_eq!(bad.encode(size), Err(TlbError::Coordinate(64)));
        let mut bad = TlbConfig::unicast(0, 0, 0);
        bad.static_vc = Some(8);
        assert_eq!(bad.encode(size), Err(TlbError::StaticVc(8)));
        let mut bad = TlbConfig::unicast(0, 0, 0);
        bad.noc = 2;
        assert_eq!(bad.encode(size), Err(TlbError::Noc(2)));
    }
    assert_eq!(
        TlbConfig::unicast(0, 0, u64::MAX << 32)
            .encode(TlbSize::Size4G)
            .map(|_| ()),
        Ok(())
    );
}

#[test]
fn dram_endpoints_are_tt_metal_s_worker_endpoints_per_noc() {
    use blackhole_pac::grid::dram_endpoint;
    let noc0 = [
        (0, 11),
        (0, 2),
        (0, 9),
        (0, 5),
        (9, 11),
        (9, 3),
        (9, 8),
        (9, 6),
    ];
    let noc1 = [
        (0, 1),
        (0, 10),
        (0, 4),
        (0, 7),
        (9, 1),
        (9, 10),
        (9, 4),
        (9, 7),
    ];
    for bank in 0..8u8 {
        assert_eq!(
            dram_endpoint(bank, 0),
            Some(noc0[bank as usize]),
            "bank {bank}"
        );
        assert_eq!(
            dram_endpoint(bank, 1),
            Some(noc1[bank as usize]),
            "bank {bank}"
        );
        for noc in [0, 1] {
            let port = dram_endpoint(bank, noc).unwrap();
            assert!(matches!(
                blackhole_pac::grid::tile_at(port.0, port.1),
                Some(blackhole_pac::grid::TileKind::Dram { bank: b, .. }) if b == bank
            ));
        }
    }
    assert_eq!(dram_endpoint(8, 0), None);
    assert_eq!(dram_endpoint(0, 2), None);
}
