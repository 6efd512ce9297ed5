//! The simulator as a PCIe host sees a card: TLB windows in translated coordinates, the PCIe
//! tile's BAR0 registers, ARC's telemetry, a Tensix tile's registers and wall clock, and the
//! PCIe faults. Everything goes through `Sim::bar_read` / `Sim::bar_write`, as the PCIe
//! backend will; L1 and DRAM are checked through the simulator's own accessors.
//! (Boot and the ordering of posted writes: `tests/pcie_boot.rs`.)

mod common;

use std::collections::BTreeMap;

use blackhole_pac::arc::{self as parc, tag};
use blackhole_pac::grid::DRAM_PORTS;
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::tensix;
use blackhole_pac::tlb::TlbOrdering::{Relaxed, Strict};
use blackhole_pac::translate::Translation;
use common::bar::*;
use komorebi_sim::*;

fn with(f: impl FnOnce(&mut SimConfig)) -> Sim {
    let mut c = SimConfig::default();
    f(&mut c);
    Sim::new(c)
}

/// Columns 5 and 11 harvested (die bits 8 and 11): translated 5 is raw 6, 7 is raw 10, 10 is
/// raw 12; raw 5 is translated 16 and raw 11 translated 15.
fn five_and_eleven() -> HarvestMask {
    HarvestMask::new((1 << 8) | (1 << 11)).unwrap()
}

/// The NoC0 tiles of the product `xs` x `ys`, in `Sim::tensix` order (by column, then row).
fn grid(xs: &[u8], ys: &[u8]) -> Vec<(u8, u8)> {
    let mut v: Vec<(u8, u8)> = xs
        .iter()
        .flat_map(|&x| ys.iter().map(move |&y| (x, y)))
        .collect();
    v.sort();
    v
}

#[test]
fn a_unicast_window_names_the_translated_tile_and_raw_without_translation() {
    // P100_P150: translated x = 7 is raw NoC0 x = 11; raw 7 and 10 are harvested.
    let mut s = Sim::new(SimConfig::default());
    let w = window(&mut s, 3, uni((7, 3), 0, Relaxed), 0x100);
    w32(&mut s, w, 0xA11CE).unwrap();
    assert_eq!(s.read_l1_u32((11, 3), 0x100).unwrap(), 0xA11CE);
    assert_eq!(r32(&mut s, w).unwrap(), 0xA11CE);
    // The same translated coordinates through a NoC1 window: the same tile.
    let w1 = window(&mut s, 4, uni((7, 3), 1, Relaxed), 0x200);
    w32(&mut s, w1, 7).unwrap();
    assert_eq!(s.read_l1_u32((11, 3), 0x200).unwrap(), 7);
    // Translated 16 is the harvested raw column 7: no tile there.
    let gone = window(&mut s, 5, uni((16, 3), 0, Relaxed), 0);
    assert_eq!(w32(&mut s, gone, 1), Err(SimError::NoTile((7, 3))));
    // Coordinates that translate to nothing are an error naming them.
    let eth = window(&mut s, 6, uni((20, 25), 0, Relaxed), 0);
    assert_eq!(r32(&mut s, eth), Err(SimError::Untranslatable((20, 25))));
    assert_eq!(
        SimError::Untranslatable((20, 25)).to_string(),
        "translated coordinates (20, 25) name no tile (NoC translation is on)"
    );

    // Translation off: the same configuration words name raw NoC0 (7, 3), harvested.
    let mut raw = with(|c| c.translation = false);
    let w = window(&mut raw, 3, uni((7, 3), 0, Relaxed), 0x100);
    assert_eq!(w32(&mut raw, w, 1), Err(SimError::NoTile((7, 3))));
    let w = window(&mut raw, 3, uni((11, 3), 0, Relaxed), 0x100);
    w32(&mut raw, w, 5).unwrap();
    assert_eq!(raw.read_l1_u32((11, 3), 0x100).unwrap(), 5);
    // Raw NoC1 (5, 8) is NoC0 (11, 3).
    let w = window(&mut raw, 4, uni((5, 8), 1, Relaxed), 0x100);
    assert_eq!(r32(&mut raw, w).unwrap(), 5);
}

#[test]
fn dram_answers_at_its_raw_and_its_translated_coordinates() {
    let mut s = Sim::new(SimConfig::default());
    // Bank 0 port 0: raw (0, 0), translated (17, 12); a 4 GiB window and a 2 MiB one.
    let t = Translation::new(HarvestMask::P100_P150)
        .dram(0, 0)
        .unwrap()
        .get();
    assert_eq!(t, (17, 12));
    let by_translated = window(&mut s, 202, uni(t, 0, Relaxed), 0x1000);
    w32(&mut s, by_translated, 0xD0).unwrap();
    let mut b = [0; 4];
    s.read_dram(0, 0x1000, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0xD0);
    let by_raw = window(&mut s, 7, uni((0, 0), 0, Relaxed), 0x1000);
    assert_eq!(r32(&mut s, by_raw).unwrap(), 0xD0);
    // Bank 5 port 1 at translated (18, 16) is raw DRAM_PORTS[5][1] = (9, 10).
    let t = Translation::new(HarvestMask::P100_P150)
        .dram(5, 1)
        .unwrap()
        .get();
    assert_eq!((t, DRAM_PORTS[5][1]), ((18, 16), (9, 10)));
    let w = window(&mut s, 203, uni(t, 0, Relaxed), 0x8000_0040);
    w32(&mut s, w, 0x55).unwrap();
    s.read_dram(5, 0x8000_0040, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0x55);
    let w = window(&mut s, 8, uni((9, 10), 0, Relaxed), 0x8000_0040);
    assert_eq!(r32(&mut s, w).unwrap(), 0x55);

    // Translation off: (17, 12) is off the grid; raw (0, 0) is bank 0.
    let mut raw = with(|c| c.translation = false);
    let w = window(&mut raw, 202, uni((17, 12), 0, Relaxed), 0x1000);
    assert!(
        matches!(w32(&mut raw, w, 1), Err(SimError::BadBar(m)) if m.contains("off the 17 x 12 grid"))
    );
    let w = window(&mut raw, 202, uni((0, 0), 0, Relaxed), 0x1000);
    w32(&mut raw, w, 0xD1).unwrap();
    raw.read_dram(0, 0x1000, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0xD1);
}

#[test]
fn a_translated_multicast_reaches_exactly_the_tiles_of_its_translated_rectangle() {
    let addr: u32 = 0x2000;
    // P100_P150: translated x 1..=7 are raw 1..=6 and 11.
    let mut s = Sim::new(SimConfig::default());
    let w = window(&mut s, 10, mcast((1, 2), (7, 3), 0, Strict), addr as u64);
    w32(&mut s, w, 1).unwrap();
    assert_eq!(holding(&s, addr, 1), grid(&[1, 2, 3, 4, 5, 6, 11], &[2, 3]));
    // The whole translated grid: every one of the 120.
    let w = window(&mut s, 11, mcast((1, 2), (14, 11), 0, Strict), addr as u64);
    w32(&mut s, w, 2).unwrap();
    assert_eq!(holding(&s, addr, 2).len(), 120);

    // Columns 5 and 11 harvested: translated (2, 3)..(10, 5) is raw (2, 3)..(12, 5), whose
    // harvested columns 5 and 11 have no tile to receive.
    let mut s = with(|c| c.harvest = five_and_eleven());
    let want = grid(&[2, 3, 4, 6, 7, 10, 12], &[3, 4, 5]);
    let w = window(&mut s, 10, mcast((2, 3), (10, 5), 0, Strict), addr as u64);
    w32(&mut s, w, 3).unwrap();
    assert_eq!(holding(&s, addr, 3), want);
    // On NoC1 the corners are still swapped under translation (ISA) ...
    let w = window(&mut s, 12, mcast((10, 5), (2, 3), 1, Strict), addr as u64);
    w32(&mut s, w, 4).unwrap();
    assert_eq!(holding(&s, addr, 4), want);
    // ... and unswapped they wrap around the torus, as on silicon: NoC1 raw (14, 8)..(4, 6).
    let w = window(&mut s, 13, mcast((2, 3), (10, 5), 1, Strict), addr as u64);
    w32(&mut s, w, 5).unwrap();
    assert_eq!(
        holding(&s, addr, 5),
        grid(&[1, 2, 12, 13, 14, 15, 16], &[2, 3, 5, 6, 7, 8, 9, 10, 11])
    );
    // A corner that translates to nothing.
    let w = window(&mut s, 14, mcast((1, 2), (30, 3), 0, Strict), addr as u64);
    assert_eq!(w32(&mut s, w, 6), Err(SimError::Untranslatable((30, 3))));
    let w = window(&mut s, 14, mcast((1, 2), (7, 3), 0, Strict), addr as u64);
    assert!(
        matches!(r32(&mut s, w), Err(SimError::BadBar(m)) if m.contains("reads never multicast"))
    );
}

/// Walks ARC's telemetry table as a host does: boot status, the two pointers, the table.
fn telemetry(s: &mut Sim, translated_arc: (u8, u8)) -> BTreeMap<u16, u32> {
    let scratch = window(s, 20, uni(translated_arc, 0, Strict), parc::SCRATCH_RAM_2);
    assert_eq!(r32(s, scratch).unwrap() & 7, parc::ARC_BOOT_READY);
    let at = |a: u64| plus(scratch, a - parc::SCRATCH_RAM_2);
    let table = r32(s, at(parc::SCRATCH_RAM_13)).unwrap();
    let data = r32(s, at(parc::SCRATCH_RAM_12)).unwrap();
    let csm = parc::ARC_CSM_BASE..parc::ARC_CSM_BASE + parc::ARC_CSM_BYTES;
    assert!(csm.contains(&table) && csm.contains(&data));
    let csm = window(
        s,
        21,
        uni(translated_arc, 0, Strict),
        parc::ARC_CSM_BASE as u64,
    );
    let word = |s: &mut Sim, a: u32| r32(s, plus(csm, (a - parc::ARC_CSM_BASE) as u64)).unwrap();
    let version = word(s, table);
    assert!((version >> 16) & 0xFF <= parc::TELEMETRY_MAJOR_MAX);
    let n = word(s, table + 4);
    (0..n)
        .map(|i| {
            let e = word(s, table + 8 + 4 * i);
            (e as u16, word(s, data + 4 * (e >> 16)))
        })
        .collect()
}

#[test]
fn the_telemetry_table_gives_the_harvest_mask_clocks_and_translation_back() {
    for harvest in [HarvestMask::P100_P150, five_and_eleven(), HarvestMask::NONE] {
        let mut s = with(|c| c.harvest = harvest);
        let t = telemetry(&mut s, (8, 0));
        assert_eq!(
            HarvestMask::from_enabled_tensix_col(t[&tag::ENABLED_TENSIX_COL]),
            harvest
        );
        assert_eq!(t.len(), 9);
        assert_eq!(t[&tag::AICLK], 1350);
        assert_eq!(t[&tag::AXICLK], arc::AXICLK_MHZ);
        assert_eq!(t[&tag::ARCCLK], arc::ARCCLK_MHZ);
        assert_eq!(t[&tag::FLASH_BUNDLE_VERSION], 0x1305_0000);
        assert_eq!(t[&tag::ENABLED_ETH], 0x3FFF);
        assert_eq!(t[&tag::ENABLED_GDDR], 0xFF);
        assert_eq!(t[&tag::NOC_TRANSLATION], 1);
        assert_eq!(t[&tag::TIMER_HEARTBEAT], 0);
        // The heartbeat counts microseconds of virtual time (1350 cycles each).
        s.advance(13_500);
        assert_eq!(telemetry(&mut s, (8, 0))[&tag::TIMER_HEARTBEAT], 10);
    }
    let mut raw = with(|c| c.translation = false);
    assert_eq!(bar0(&mut raw, parc::PCIE_NIU_CFG_0_BAR0).unwrap(), 0);
    assert_eq!(telemetry(&mut raw, (8, 0))[&tag::NOC_TRANSLATION], 0);
    // ARC is read-only here.
    let w = window(&mut raw, 20, uni((8, 0), 0, Strict), parc::SCRATCH_RAM_2);
    assert!(matches!(w32(&mut raw, w, 1), Err(SimError::BadBar(m)) if m.contains("ARC")));
}

#[test]
fn the_pcie_tile_s_bar0_registers() {
    let mut s = Sim::new(SimConfig::default());
    assert_eq!(bar0(&mut s, parc::PCIE_NIU_CFG_0_BAR0).unwrap(), 1 << 14);
    assert_eq!(bar0(&mut s, parc::PCIE_NOC_NODE_ID_BAR0).unwrap(), 2);
    assert!(matches!(
        bar0(&mut s, 0x1FD0_4000),
        Err(SimError::BadBar(_))
    ));
    assert!(matches!(
        w32(&mut s, (0, parc::PCIE_NIU_CFG_0_BAR0 as u64), 0),
        Err(SimError::BadBar(_))
    ));
    assert!(matches!(
        s.bar_write(2, 0, &[0; 4]),
        Err(SimError::BadBar(_))
    ));
    // The strided-multicast registers take zero only.
    let strided = blackhole_pac::tlb::strided_offset(3).unwrap();
    w32(&mut s, (0, strided as u64), 0).unwrap();
    assert!(matches!(
        w32(&mut s, (0, strided as u64), 1),
        Err(SimError::BadBar(_))
    ));
}

/// Register window base: 2 MiB windows reach `0xFFA0_0000..0xFFC0_0000`.
const REGS: u64 = 0xFFA0_0000;

fn reg(w: At, addr: u32) -> At {
    plus(w, addr as u64 - REGS)
}

#[test]
fn a_tensix_tile_s_registers_through_a_window() {
    let mut s = Sim::new(SimConfig::default());
    let w = window(&mut s, 30, uni((7, 3), 0, Strict), REGS);
    // NOC_ID_LOGICAL: translated (7, 3) when translation is on.
    assert_eq!(
        r32(&mut s, reg(w, tensix::NOC_ID_LOGICAL_ADDR)).unwrap(),
        7 | 3 << 6
    );
    // Soft reset: clear in the default boot, read-modify-write keeps other bits.
    let sr = reg(w, tensix::SOFT_RESET_ADDR);
    assert_eq!(r32(&mut s, sr).unwrap(), 0);
    let v = r32(&mut s, sr).unwrap();
    w32(&mut s, sr, v | 1 << 31).unwrap();
    assert_eq!(r32(&mut s, sr).unwrap(), 1 << 31);
    // Reset PCs: defaults, then written and read back.
    assert_eq!(
        r32(&mut s, reg(w, tensix::NCRISC_RESET_PC_REG)).unwrap(),
        0x1_2000
    );
    assert_eq!(
        r32(&mut s, reg(w, tensix::TRISC_RESET_PC_REGS[2])).unwrap(),
        0xE000
    );
    w32(&mut s, reg(w, tensix::TRISC_RESET_PC_REGS[1]), 0xB000).unwrap();
    w32(&mut s, reg(w, tensix::TRISC_RESET_PC_OVERRIDE), 0b010).unwrap();
    assert_eq!(
        r32(&mut s, reg(w, tensix::TRISC_RESET_PC_REGS[1])).unwrap(),
        0xB000
    );
    assert_eq!(
        r32(&mut s, reg(w, tensix::TRISC_RESET_PC_OVERRIDE)).unwrap(),
        0b010
    );
    // Registers are not L1: the L1 word at the same low bits is untouched.
    assert_eq!(s.read_l1_u32((11, 3), 0x1_21B0).unwrap(), 0);
    // Unmodelled or read-only registers, and the gap between L1 and the registers, refuse.
    assert!(matches!(
        r32(&mut s, (w.0, w.1 + 0x10_0000)),
        Err(SimError::BadBar(_))
    ));
    assert!(matches!(
        w32(&mut s, reg(w, tensix::WALL_CLOCK_L), 0),
        Err(SimError::BadBar(_))
    ));
    let l1 = window(&mut s, 31, uni((7, 3), 0, Strict), 0);
    assert!(matches!(
        r32(&mut s, plus(l1, 0x18_0000)),
        Err(SimError::OutOfRange(_))
    ));
    // Translation off: the raw coordinates.
    let mut raw = with(|c| c.translation = false);
    let w = window(&mut raw, 30, uni((11, 3), 0, Strict), REGS);
    assert_eq!(
        r32(&mut raw, reg(w, tensix::NOC_ID_LOGICAL_ADDR)).unwrap(),
        11 | 3 << 6
    );
}

#[test]
fn the_wall_clock_is_the_cycle_and_reading_its_low_half_latches_the_high_half() {
    let mut s = Sim::new(SimConfig::default());
    let w = window(&mut s, 30, uni((1, 2), 0, Strict), REGS);
    let (lo, live, latched) = (
        reg(w, tensix::WALL_CLOCK_L),
        reg(w, tensix::WALL_CLOCK_H_LIVE),
        reg(w, tensix::WALL_CLOCK_H_LATCHED),
    );
    s.advance((1 << 32) + 5);
    assert_eq!(s.now(), (1 << 32) + 5);
    assert_eq!(r32(&mut s, latched).unwrap(), 0, "nothing latched yet");
    assert_eq!(r32(&mut s, live).unwrap(), 1);
    assert_eq!(r32(&mut s, lo).unwrap(), 5);
    assert_eq!(r32(&mut s, latched).unwrap(), 1);
    s.advance(1 << 32);
    assert_eq!(r32(&mut s, live).unwrap(), 2);
    assert_eq!(r32(&mut s, latched).unwrap(), 1, "until the next low read");
    assert_eq!(r32(&mut s, lo).unwrap(), 5);
    assert_eq!(r32(&mut s, latched).unwrap(), 2);
    // Each tile latches its own.
    let other = window(&mut s, 31, uni((2, 2), 0, Strict), REGS);
    assert_eq!(
        r32(&mut s, reg(other, tensix::WALL_CLOCK_H_LATCHED)).unwrap(),
        0
    );
}

#[test]
fn a_hung_device_reads_all_ones_and_drops_writes() {
    let mut s = Sim::new(SimConfig::default());
    let w = window(&mut s, 0, uni((1, 2), 0, Strict), 0x100);
    w32(&mut s, w, 9).unwrap();
    s.inject(Fault::Hung).unwrap();
    assert_eq!(
        bar0(&mut s, parc::PCIE_NOC_NODE_ID_BAR0).unwrap(),
        parc::HUNG_READ
    );
    assert_eq!(
        bar0(&mut s, parc::PCIE_NIU_CFG_0_BAR0).unwrap(),
        parc::HUNG_READ
    );
    assert_eq!(r32(&mut s, w).unwrap(), parc::HUNG_READ);
    assert_eq!(
        bar0(&mut s, blackhole_pac::tlb::TLB_CONFIG_BASE).unwrap(),
        parc::HUNG_READ
    );
    w32(&mut s, w, 10).unwrap();
    assert_eq!(s.read_l1_u32((1, 2), 0x100).unwrap(), 9, "dropped");
    // Reconfiguring a window is dropped too: after the device comes back, window 0 still
    // points where it did.
    program(&mut s, 0, uni((2, 2), 0, Strict));
    s.clear_faults();
    assert_eq!(r32(&mut s, w).unwrap(), 9);
}

#[test]
fn a_dead_tile_reads_all_ones_while_bar0_still_answers() {
    let mut s = Sim::new(SimConfig::default());
    // Translated (7, 3) is raw (11, 3).
    s.inject(Fault::DeadTile((11, 3))).unwrap();
    let w = window(&mut s, 0, uni((7, 3), 0, Strict), 0x100);
    w32(&mut s, w, 9).unwrap();
    assert_eq!(s.read_l1_u32((11, 3), 0x100).unwrap(), 0, "dropped");
    assert_eq!(r32(&mut s, w).unwrap(), parc::HUNG_READ);
    let regs = window(&mut s, 1, uni((7, 3), 0, Strict), REGS);
    assert_eq!(
        r32(&mut s, reg(regs, tensix::SOFT_RESET_ADDR)).unwrap(),
        parc::HUNG_READ
    );
    assert_eq!(
        bar0(&mut s, parc::PCIE_NOC_NODE_ID_BAR0).unwrap(),
        2,
        "not hung"
    );
    // Its neighbour answers; a multicast over both reaches only the live one.
    let ok = window(&mut s, 2, uni((6, 3), 0, Strict), 0x100);
    w32(&mut s, ok, 8).unwrap();
    assert_eq!(r32(&mut s, ok).unwrap(), 8);
    let m = window(&mut s, 3, mcast((6, 3), (7, 3), 0, Strict), 0x200);
    w32(&mut s, m, 7).unwrap();
    assert_eq!(holding(&s, 0x200, 7), vec![(6, 3)]);
    // A dead DRAM port.
    s.inject(Fault::DeadTile((0, 0))).unwrap();
    let d = window(&mut s, 202, uni((17, 12), 0, Strict), 0);
    assert_eq!(r32(&mut s, d).unwrap(), parc::HUNG_READ);
    let alive = window(&mut s, 203, uni((17, 13), 0, Strict), 0);
    assert_eq!(
        r32(&mut s, alive).unwrap(),
        0,
        "bank 0 port 1 still answers"
    );
    assert!(matches!(
        s.inject(Fault::DeadTile((17, 0))),
        Err(SimError::OutOfRange(_))
    ));
}
