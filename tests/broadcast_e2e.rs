//! The 03_broadcast program end to end on the simulator: every byte checked by compute, exact
//! byte counts, no protocol violation, for the shapes of the specification.

use blackhole_pac::harvest::HarvestMask;
use komorebi::Backend;
use komorebi::app::broadcast::{self, BroadcastConfig, BroadcastSummary};
use komorebi_broadcast::Along;
use komorebi_broadcast::layout::{self};
use komorebi_hal::{LogicalRect, NocId};
use komorebi_sim::{SimConfig, SourceRead};

fn small(rect: LogicalRect, blocks: u32, window: u8) -> BroadcastConfig {
    BroadcastConfig {
        rect,
        blocks,
        window,
        pages: 2,
        page_size: 256,
        jobs: 2,
        ..BroadcastConfig::default()
    }
}

/// Runs `cfg` and checks every count against what the shape implies.
fn check(cfg: &BroadcastConfig) -> BroadcastSummary {
    let s = broadcast::run(cfg, |_| {}).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    let replay = format!(
        "replay: seed {} adversarial {} rect {} blocks {} window {} harvest {:#x}",
        cfg.seed,
        cfg.adversarial,
        cfg.rect,
        cfg.blocks,
        cfg.window,
        cfg.harvest.bits()
    );
    assert!(s.ok, "{replay}\n{s}");
    assert!(s.violations.is_empty(), "{replay}: {:?}", s.violations);
    let g = komorebi::chip::blackhole(cfg.harvest.bits() as u32).unwrap();
    let block = cfg.pages as u64 * cfg.page_size as u64;
    let mut streams = 0;
    let mut receivers = 0;
    for (on, along, noc) in [
        (cfg.rows, Along::Row, NocId::Noc0),
        (cfg.columns, Along::Column, NocId::Noc1),
    ] {
        if on {
            streams += 1;
            receivers += layout::broadcasts(&g, cfg.rect, along, noc)
                .unwrap()
                .iter()
                .map(|b| b.receivers() as u64)
                .sum::<u64>();
        }
    }
    let per_job = cfg.blocks as u64 * block;
    assert_eq!(
        s.checked_bytes,
        cfg.rect.len() as u64 * streams * per_job * cfg.jobs as u64,
        "{replay}"
    );
    assert_eq!(
        s.received_bytes,
        receivers * per_job * cfg.jobs as u64,
        "{replay}"
    );
    assert_eq!(s.results.len(), cfg.jobs as usize);
    s
}

#[test]
fn one_receiver_on_each_noc() {
    let mut c = small(LogicalRect::new(3, 4, 2, 1), 5, 2);
    c.columns = false;
    check(&c);
    let mut c = small(LogicalRect::new(3, 4, 1, 2), 5, 2);
    c.rows = false;
    check(&c);
}

#[test]
fn the_longest_broadcasts_blackhole_allows() {
    // A column of 10 cores is 9 receivers; a row of 6 in a panel is 5.
    let mut c = small(LogicalRect::new(0, 0, 1, 10), 4, 2);
    c.rows = false;
    check(&c);
    let mut c = small(LogicalRect::new(0, 0, 6, 1), 4, 2);
    c.columns = false;
    check(&c);
}

#[test]
fn windows_1_2_8_with_block_counts_at_the_edges() {
    for window in [1u8, 2, 8] {
        for blocks in [0, 1, window as u32 - 1, window as u32 + 1] {
            check(&small(LogicalRect::new(1, 1, 3, 3), blocks, window));
        }
    }
}

/// Blocks of more pages than a read tag counts (Blackhole counts a transaction id's
/// outstanding reads in 8 bits): read ahead under one tag, 500 reads in flight wrapped the
/// count, the sender cast block 0 before its reads landed, and every compute found a data
/// mismatch in it. Such blocks are waited for with every read instead.
#[test]
fn blocks_of_more_pages_than_a_read_tag_counts() {
    for pages in [255, 256, 500] {
        let mut c = small(LogicalRect::new(0, 0, 1, 3), 4, 2);
        c.rows = false;
        (c.pages, c.page_size, c.jobs) = (pages, 64, 1);
        check(&c);
    }
}

#[test]
fn a_few_hundred_blocks() {
    let mut c = small(LogicalRect::new(2, 2, 2, 3), 300, 2);
    c.pages = 1;
    c.page_size = 64;
    c.jobs = 1;
    check(&c);
}

#[test]
fn harvest_masks_that_split_rows_into_panels_of_different_widths() {
    // Harvesting NoC0 x = 3 (die bit 4): panels of 2, 4 and 7 columns.
    let mut c = small(LogicalRect::new(0, 0, 13, 2), 3, 2);
    c.harvest = HarvestMask::new(1 << 4).unwrap();
    let s = check(&c);
    assert_eq!(s.broadcasts, [6, 13]);
    // Two harvested columns in the right half: panels of 7, 2 and 3.
    let mut c = small(LogicalRect::new(0, 3, 12, 2), 3, 2);
    c.harvest = HarvestMask::new((1 << 9) | (1 << 11)).unwrap();
    check(&c);
}

#[test]
fn many_seeds_with_the_adversary_on() {
    for seed in 0..24 {
        let mut c = small(LogicalRect::new(0, 0, 3, 4), 5, 2);
        c.seed = seed;
        c.adversarial = true;
        check(&c);
    }
}

#[test]
fn the_default_run_checks_every_byte() {
    let c = BroadcastConfig {
        jobs: 2,
        ..BroadcastConfig::default()
    };
    let s = check(&c);
    assert_eq!(s.broadcasts, [20, 12]);
    assert!(
        s.bound_cycles > 0 && s.efficiency.is_some_and(|r| r > 0.0 && r <= 1.0),
        "{s}"
    );
    assert!(s.wait_cycles[0] > 0 && s.wait_cycles[1] > 0);
}

#[test]
fn a_run_replays_exactly_from_its_seed() {
    let mut c = small(LogicalRect::new(0, 0, 3, 3), 6, 2);
    c.adversarial = true;
    c.seed = 11;
    let a = check(&c);
    let b = check(&c);
    assert_eq!((a.cycles, a.wait_cycles), (b.cycles, b.wait_cycles));
}

#[test]
fn bad_flags_are_refused_with_the_flag_named() {
    for (mut c, flag) in [
        (
            BroadcastConfig {
                window: 9,
                ..BroadcastConfig::default()
            },
            "--window",
        ),
        (
            BroadcastConfig {
                blocks: 40_000,
                ..BroadcastConfig::default()
            },
            "--blocks",
        ),
        (
            BroadcastConfig {
                page_size: 100,
                ..BroadcastConfig::default()
            },
            "--page-size",
        ),
        (
            BroadcastConfig {
                pages: 60_000,
                window: 2,
                ..BroadcastConfig::default()
            },
            "--pages",
        ),
        (
            BroadcastConfig {
                rect: LogicalRect::new(0, 0, 13, 10),
                ..BroadcastConfig::default()
            },
            "--rect",
        ),
        (
            BroadcastConfig {
                jobs: 0,
                ..BroadcastConfig::default()
            },
            "--jobs",
        ),
    ] {
        c.jobs = c.jobs.min(1);
        let e = broadcast::run(&c, |_| {}).unwrap_err().to_string();
        assert!(e.starts_with(flag), "{e}");
    }
}

#[test]
fn no_source_changes_while_its_write_is_in_flight_under_either_checked_reading() {
    // The simulator reads each write's source at issue or at departure and reports a source
    // changed in between: data, VALID and marker sources alike. Without checking, compute pops
    // at once, so every slot and marker source is reused as early as the protocol allows;
    // windows 1 and 2 (no and one block read ahead). (The simulator's NIU sends a packet soon
    // after its issue, before any DRAM read lands: a slot read into too early is caught by the
    // device tests' `a_sender_reads_into_a_slot_only_once_...`, not here.)
    for read in [SourceRead::IssueChecked, SourceRead::DepartureChecked] {
        for window in [1, 2] {
            for seed in 0..4 {
                let cfg = BroadcastConfig {
                    check: broadcast::Check::None,
                    seed,
                    adversarial: seed > 0,
                    ..small(LogicalRect::new(0, 0, 4, 3), 8, window)
                };
                let sim = SimConfig {
                    source_read: read,
                    seed,
                    adversarial: seed > 0,
                    ..SimConfig::default()
                };
                let (s, _) = broadcast::run_session_on(&cfg, Backend::Simulator(sim), |_| {})
                    .unwrap_or_else(|e| panic!("{read:?} window {window} seed {seed}: {e}"));
                assert!(
                    s.ok && s.violations.is_empty(),
                    "replay: {read:?} window {window} seed {seed} adversarial {}: {:?}\n{s}",
                    seed > 0,
                    s.violations
                );
            }
        }
    }
}

/// A sound job longer than the session's default budget (64 times the wait limit, 64 M
/// cycles): 3,000 blocks of the default pages on a 2 x 2 group take some 74 M cycles, and were
/// reported as a timeout. A broadcast command's budget grows with its blocks; through the
/// dispatcher and the test feeder alike.
#[test]
fn a_job_longer_than_the_default_budget_is_not_a_timeout() {
    let cfg = BroadcastConfig {
        rect: LogicalRect::new(0, 0, 2, 2),
        blocks: 3000,
        jobs: 1,
        ..BroadcastConfig::default()
    };
    let default = komorebi::host::session::default_budget(cfg.run_wait_limit());
    assert_eq!(default, 64_000_000);
    for feeder in [false, true] {
        let s = if feeder {
            broadcast::run(&cfg, |_| {})
        } else {
            broadcast::run_dispatched(&cfg, &Default::default(), &|_| {})
        }
        .unwrap();
        assert!(s.ok && s.timeouts == 0, "feeder {feeder}: {s}");
        assert!(s.cycles > default, "{} cycles", s.cycles);
        assert!(cfg.command_budget() > s.cycles);
    }
}
