//! Golden values of the host side of 03_broadcast: the default `BroadcastConfig` is the 03 shape
//! (`--rect 0,0,12,10 --blocks 16 --pages 4 --window 2`, page size 2048, a p100/p150 part),
//! and the words its `BroadcastPlan` gives the reader (broadcast A, id 0, rows, NoC0, CB 0) and
//! the writer (broadcast W, id 1, columns, NoC1, CB 1) are literals worked out by hand (check
//! words with an implementation of `check_word` written outside the code, in Python), never computed by the code under test.

use komorebi::app::broadcast::{BroadcastConfig, BroadcastPlan};
use komorebi_hal::{LogicalRect, LogicalXy, Role};

fn plan() -> (BroadcastConfig, BroadcastPlan) {
    let cfg = BroadcastConfig::default();
    // p100/p150: the columns at NoC0 x 7 and 10 harvested (die bits 12 and 13).
    let plan = BroadcastPlan::new(&cfg, &komorebi::chip::blackhole(0x3000).unwrap()).unwrap();
    (cfg, plan)
}

#[test]
fn the_default_config_is_the_03_shape() {
    let (cfg, plan) = plan();
    assert_eq!(cfg.rect, LogicalRect::new(0, 0, 12, 10));
    assert_eq!(
        (cfg.blocks, cfg.pages, cfg.page_size, cfg.window),
        (16, 4, 2048, 2)
    );
    // One row broadcast per row and panel (two panels of 6 columns), one column broadcast per
    // column.
    assert_eq!(plan.broadcasts(), [20, 12]);
}

#[test]
fn the_03_plan_gives_each_core_the_hand_computed_broadcast_words() {
    let (_, plan) = plan();
    // Core i of the rectangle is logical (i % 12, i / 12).
    let cases: [(usize, [u32; 11], [u32; 11]); 3] = [
        (
            // Logical (0,0): row 0's sender at NoC0 (1,2); the top of column 0, its last
            // receiver (rank 9) at NoC1 (15,9).
            0,
            [
                0x4B42_0200,
                0x0002_0500,
                0x0004_0000,
                0x0000_0201,
                0x0000_0201,
                0x0000_0202,
                0x0000_0206,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0000,
                0xA109_6691,
            ],
            [
                0x4B42_0201,
                0x0102_0909,
                0x0004_0001,
                0x0000_090F,
                0x0000_000F,
                0x0000_010F,
                0x0000_090F,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0001,
                0x8BD3_D89D,
            ],
        ),
        (
            // Logical (6,0): the second panel's row 0 sender at NoC0 (11,2); the top of
            // column 6 (NoC0 x 11), rank 9 at NoC1 (5,9).
            6,
            [
                0x4B42_0200,
                0x0002_0500,
                0x0004_0000,
                0x0000_020B,
                0x0000_020B,
                0x0000_020C,
                0x0000_0210,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0000,
                0xB296_903D,
            ],
            [
                0x4B42_0201,
                0x0102_0909,
                0x0004_0001,
                0x0000_0905,
                0x0000_0005,
                0x0000_0105,
                0x0000_0905,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0001,
                0x189F_F83B,
            ],
        ),
        (
            // Logical (11,9): rank 5 of row 9's second panel at NoC0 (16,11); the bottom of
            // column 11, its sender at NoC1 (0,0).
            119,
            [
                0x4B42_0200,
                0x0002_0505,
                0x0004_0000,
                0x0000_0B10,
                0x0000_0B0B,
                0x0000_0B0C,
                0x0000_0B10,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0000,
                0xF0D8_9346,
            ],
            [
                0x4B42_0201,
                0x0102_0900,
                0x0004_0001,
                0x0000_0000,
                0x0000_0000,
                0x0000_0100,
                0x0000_0900,
                0x0A0C_0000,
                0x0A0C_0000,
                0x0000_0001,
                0x543A_32E8,
            ],
        ),
    ];
    for (core, reader, writer) in cases {
        let p = plan.program(core, 0).unwrap();
        let (r, w) = (p.reader.unwrap(), p.writer.unwrap());
        assert_eq!(r.args, reader, "reader of core {core}");
        assert_eq!(w.args, writer, "writer of core {core}");
        for m in [r, w] {
            assert_eq!((m.blocks, m.page_size), (16, 2048), "core {core}");
        }
        let inputs: Vec<_> = p
            .compute
            .inputs
            .iter()
            .map(|i| {
                (
                    i.cb,
                    i.pages,
                    i.window,
                    i.blocks,
                    i.page_size,
                    i.broadcast,
                    i.producer,
                )
            })
            .collect();
        assert_eq!(
            inputs,
            vec![
                (0, 4, 2, 16, 2048, 0, Role::Reader),
                (1, 4, 2, 16, 2048, 1, Role::Writer),
            ]
        );
    }
    assert_eq!(plan.core(119), Some(LogicalXy::new(11, 9)));
    assert_eq!(plan.core(120), None, "past the rectangle's cores");
    assert!(plan.program(120, 0).is_none());
}

/// A card keeps L1 between runs: each run's data pattern is its own there, so a block that never
/// landed cannot pass for the same block of the last run. The simulators start from zeroed
/// memory and keep the job's own number (their runs replay byte for byte).
#[test]
fn a_run_on_a_card_salts_its_data_pattern_and_a_simulated_one_does_not() {
    use komorebi::app::broadcast::DeviceChoice;
    let geometry = komorebi::chip::blackhole(0x3000).unwrap();
    let on = |device: DeviceChoice| {
        let cfg = BroadcastConfig {
            exec: device.default_exec(),
            device,
            ..BroadcastConfig::default()
        };
        BroadcastPlan::new(&cfg, &geometry).unwrap()
    };
    for device in [DeviceChoice::Sim, DeviceChoice::PcieSim] {
        let plan = on(device);
        for job in [0, 1, 7] {
            assert_eq!(plan.pattern_job(job), job);
            assert_eq!(plan.program(0, job).unwrap().compute.job, job);
        }
    }
    let card = || on(DeviceChoice::Card("/dev/tenstorrent/0".into()));
    let (a, b) = (card(), card());
    // Two runs' patterns differ (a chance of 2^-32 that two draws agree).
    assert_ne!(a.pattern_job(0), b.pattern_job(0));
    // Within a run, jobs still differ, and the compute program carries the salted number.
    assert_eq!(a.pattern_job(1), a.pattern_job(0).wrapping_add(1));
    assert_eq!(a.program(3, 1).unwrap().compute.job, a.pattern_job(1));
}

/// A plan counts the DRAM its jobs need with its own senders, on the device's geometry: a chip
/// with every column (harvest 0) running its whole 14 x 10 grid under the flags' default
/// `--harvest` (12 columns) counted no sender, and let 64 jobs' data run past the banks.
#[test]
fn a_plan_counts_its_dram_on_the_device_s_geometry() {
    use komorebi::app::broadcast::{BroadcastConfig, BroadcastPlan};
    let geometry = komorebi::chip::blackhole(0).unwrap();
    let cfg = BroadcastConfig {
        rect: komorebi_hal::LogicalRect::new(0, 0, 14, 10),
        blocks: 150,
        pages: 8,
        page_size: 16384,
        jobs: 64,
        ..BroadcastConfig::default()
    };
    let e = BroadcastPlan::new(&cfg, &geometry).unwrap_err();
    assert!(e.to_string().contains("--jobs"), "{e}");
    // One job's data (34 senders' copies of 19.7 MB: 20 row broadcasts, a row being two panels,
    // and 14 columns) fits, the copies in layers that senders share (fewer than the copies, at
    // least the 34 senders over the 8 banks, rounded up).
    let one = BroadcastConfig { jobs: 1, ..cfg };
    let plan = BroadcastPlan::new(&one, &geometry).unwrap();
    let layers = u64::from(plan.dram_layers());
    assert!((5..34).contains(&layers), "{layers} layers");
    // Each layer a copy's span and up to 7 pages (the copies' shifts into it).
    let copy = 150 * 8 * 16384;
    let base = komorebi::app::broadcast::DRAM_BASE;
    let end = plan.dram_end();
    assert!(
        (base + layers * copy..=base + layers * (copy + 7 * 16384)).contains(&end),
        "{end}"
    );
}

/// The specification's most blocks (32,767) of the 03 default fit a DRAM bank at one job, and
/// at two: the 32 senders' copies (268 MB each) lie 7 layers deep in each bank, where a span a
/// copy (8.6 GB) did not fit.
#[test]
fn the_most_blocks_of_the_03_default_fit_the_banks_at_one_job() {
    let geometry = komorebi::chip::blackhole(0x3000).unwrap();
    let cfg = BroadcastConfig {
        blocks: 32767,
        jobs: 1,
        ..BroadcastConfig::default()
    };
    let plan = BroadcastPlan::per_job(&cfg, &geometry).unwrap();
    let copy = 32767 * 4 * 2048u64;
    assert_eq!(plan.dram_layers(), 7);
    let base = komorebi::app::broadcast::DRAM_BASE;
    let end = plan.dram_end();
    assert!(
        (base + 7 * copy..=base + 7 * (copy + 7 * 2048)).contains(&end),
        "{end}"
    );
    let usable = komorebi::chip::dram_bank_usable(cfg.chip);
    assert!(end <= usable && 32 * copy > usable);
    let two = BroadcastConfig { jobs: 2, ..cfg };
    let plan = BroadcastPlan::per_job(&two, &geometry).unwrap();
    assert!(plan.dram_end() <= usable);
}

/// On ttsim or a card the flags' own grid (`--harvest`'s default) is not the device's, and
/// another grid may lay the senders' copies out in fewer layers: the DRAM is counted by the
/// plan on the device's geometry alone. The rectangle 3,0,9,10 at 20,000 blocks takes 7 layers
/// on the default grid (refused at 8 jobs) and 6 on a chip with every column, where it fits.
#[test]
fn on_a_card_the_dram_is_counted_on_the_card_s_grid_not_on_the_flags_default() {
    use komorebi::app::broadcast::DeviceChoice;
    let cfg = BroadcastConfig {
        rect: komorebi_hal::LogicalRect::new(3, 0, 9, 10),
        blocks: 20000,
        ..BroadcastConfig::default()
    };
    let default_grid = komorebi::chip::blackhole(0x3000).unwrap();
    let e = BroadcastPlan::per_job(&cfg, &default_grid).unwrap_err();
    assert!(e.to_string().contains("7 layers deep"), "{e}");
    assert!(e.to_string().contains("--jobs up to 3"), "{e}");
    let device = DeviceChoice::Card("/dev/tenstorrent/0".into());
    let card = BroadcastConfig {
        exec: device.default_exec(),
        device,
        ..cfg
    };
    let plan = BroadcastPlan::per_job(&card, &komorebi::chip::blackhole(0).unwrap()).unwrap();
    assert_eq!(plan.dram_layers(), 6);
    assert!(plan.dram_end() <= komorebi::chip::dram_bank_usable(card.chip));
    // On the default grid the card's plan refuses as the flags' check did.
    let e = BroadcastPlan::per_job(&card, &default_grid).unwrap_err();
    assert!(e.to_string().contains("--jobs up to 3"), "{e}");
}

/// Before a card or ttsim is open (a bench's rows, the ranks of `--mpi`), its flags' check
/// refuses data that no grid of the chip holds, counted at its least (one sender a row or
/// column of the rectangle, every bank, the pairs over 8 layers); what some grid may hold is
/// left to the plan on the device's own.
#[test]
fn before_a_card_is_open_only_data_no_grid_holds_is_refused() {
    use komorebi::app::broadcast::DeviceChoice;
    let device = DeviceChoice::Card("/dev/tenstorrent/0".into());
    let card = |blocks: u32, pages: u16, page_size: u32, jobs: u32| BroadcastConfig {
        blocks,
        pages,
        page_size,
        jobs,
        exec: device.default_exec(),
        device: device.clone(),
        ..BroadcastConfig::default()
    };
    // 22 senders (10 rows, 12 columns) at least, 3 layers of 2.1 GB copies: no grid holds one
    // job.
    let e = card(32767, 16, 4096, 1).check_flags().unwrap_err();
    assert_eq!(
        e.to_string(),
        "--blocks: 32767 blocks of 16 pages of 4096 bytes for at least 22 senders on any grid \
         of the chip, their copies at least 3 layers deep, need 6459031552 bytes per DRAM bank \
         (allowed: at most 4278190080)"
    );
    // A rectangle the flags' default grid cannot lay out (14 columns) is counted all the same:
    // its least (24 senders, 3 layers of 537 MB copies) fits 2 jobs' regions, not 4.
    let wide = BroadcastConfig {
        rect: komorebi_hal::LogicalRect::new(0, 0, 14, 10),
        ..card(32767, 8, 2048, 4)
    };
    let e = wide.check_flags().unwrap_err();
    assert!(
        e.to_string().ends_with(
            "(allowed: at most 4278190080: --jobs up to 2, fewer on a grid whose copies lie \
             deeper)"
        ),
        "{e}"
    );
    // 3 layers of 268 MB copies fit 4 jobs' regions at least: the device's grid decides (here
    // the default grid and one with every column both refuse, counting their own layers).
    let eight = card(32767, 4, 2048, 8);
    assert!(eight.check_flags().is_ok());
    for harvest in [0x3000, 0] {
        let grid = komorebi::chip::blackhole(harvest).unwrap();
        let e = BroadcastPlan::per_job(&eight, &grid).unwrap_err();
        assert!(
            e.to_string()
                .contains("(allowed: at most 4278190080: --jobs up to"),
            "{e}"
        );
    }
}
