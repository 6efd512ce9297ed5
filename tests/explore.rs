//! Schedule exploration: a sample of the cases CI runs in full (`komorebi explore --seeds 2000`),
//! and proof that the case check fails when something is wrong.

use komorebi::app::broadcast::{DeviceChoice, FaultKind, FaultSpec};
use komorebi::chip::ChipKind;
use komorebi::explore::{case, check_case, explore, judge, replay_command, shape, shape_on};

/// Runs `count` cases from seed `start` and checks that every one ran and passed, checking
/// bytes.
fn all_pass(start: u64, count: u64, device: &DeviceChoice, chip: ChipKind) {
    let out = explore(start, count, device, chip, |_, _| {});
    assert_eq!(out.cases, count);
    assert!(out.failures.is_empty(), "{out}");
    assert!(out.checked_bytes > 0);
}

#[test]
fn a_sample_of_random_shapes_and_seeds_passes() {
    all_pass(10_000, 40, &DeviceChoice::Sim, ChipKind::Blackhole);
}

/// A Wormhole B0's cases: its shapes, on its grid, through the same checks.
#[test]
fn a_sample_of_wormhole_shapes_passes() {
    all_pass(30_000, 30, &DeviceChoice::Sim, ChipKind::Wormhole);
    let shapes: Vec<_> = (0..2000).map(|s| shape(s, ChipKind::Wormhole)).collect();
    // Inside a panel of 4 columns (NoC0 x 1..=4 or 6..=9), columns of up to all 10 rows.
    assert!(shapes.iter().all(|s| s.chip == ChipKind::Wormhole
        && (s.rect.x0 + s.rect.columns <= 4 || s.rect.x0 >= 4)
        && s.rect.x0 + s.rect.columns <= 8
        && s.rect.y0 + s.rect.rows <= 10));
    assert!(shapes.iter().any(|s| s.rows && s.rect.columns == 4));
    assert!(shapes.iter().any(|s| s.columns && s.rect.rows == 10));
}

#[test]
fn a_sample_passes_through_the_host_path_too() {
    all_pass(20_000, 6, &DeviceChoice::PcieSim, ChipKind::Blackhole);
    let cfg = komorebi::app::broadcast::BroadcastConfig {
        device: DeviceChoice::PcieSim,
        ..shape(20_000, ChipKind::Blackhole)
    };
    assert!(replay_command(&cfg).ends_with(" --device pcie-sim"));
}

/// The shapes cases on the default harvesting draw, pinned: a change to the drawer that moved
/// them (another order of draws, panels taken in another order) would make every seed another
/// case, and old replays other shapes. (kind, rect, blocks, pages, page size, window) as drawn
/// at 2026-12-06, commit c6837f7, before cases on other harvesting came in.
#[test]
fn default_harvest_shapes_are_the_ones_drawn_before() {
    let pinned = [
        (
            ChipKind::Blackhole,
            0,
            (true, false),
            (1, 1, 5, 2),
            (55, 8, 192, 7),
        ),
        (
            ChipKind::Blackhole,
            1,
            (false, true),
            (1, 3, 2, 5),
            (24, 5, 128, 5),
        ),
        (
            ChipKind::Wormhole,
            1,
            (false, true),
            (0, 3, 2, 5),
            (24, 5, 128, 5),
        ),
    ];
    for (chip, seed, along, (x0, y0, w, h), (blocks, pages, page_size, window)) in pinned {
        for s in [shape(seed, chip), shape_on(seed, chip, true)] {
            let got = (
                (s.rows, s.columns),
                (s.rect.x0, s.rect.y0, s.rect.columns, s.rect.rows),
                (s.blocks, s.pages, s.page_size, s.window),
            );
            assert_eq!(
                got,
                (along, (x0, y0, w, h), (blocks, pages, page_size, window)),
                "{chip:?} seed {seed}"
            );
        }
    }
}

#[test]
fn shapes_cover_the_parameter_ranges() {
    let shapes: Vec<_> = (0..2000).map(|s| shape(s, ChipKind::Blackhole)).collect();
    let window: std::collections::BTreeSet<_> = shapes.iter().map(|s| s.window).collect();
    assert_eq!(
        window.into_iter().collect::<Vec<_>>(),
        (1..=8).collect::<Vec<_>>()
    );
    assert!(shapes.iter().any(|s| s.blocks == 0) && shapes.iter().any(|s| s.blocks == 64));
    assert!(shapes.iter().all(|s| s.adversarial));
    // Pages 1..=8, or (one case in 32) 200..=1,024 of 64 bytes: more reads of a block than a
    // read tag counts, at a window up to 4 and at most 6 blocks.
    let many: Vec<_> = shapes.iter().filter(|s| s.pages > 8).collect();
    assert!(
        shapes
            .iter()
            .all(|s| (1..=8).contains(&s.pages) || (200..=1024).contains(&s.pages))
    );
    assert!((30..100).contains(&many.len()), "{}", many.len());
    assert!(many.iter().any(|s| s.pages > 255 && s.window >= 2));
    assert!(
        many.iter()
            .all(|s| s.page_size == 64 && s.window <= 4 && s.blocks <= 6)
    );
    assert!(shapes.iter().any(|s| s.rows && !s.columns));
    assert!(shapes.iter().any(|s| !s.rows && s.columns));
    assert!(shapes.iter().any(|s| s.rows && s.columns));
    // Blocks over one 16 KiB packet occur (split into packets), at most 256 KiB a buffer.
    assert!(shapes.iter().any(|s| s.pages as u32 * s.page_size > 16384));
    assert!(
        shapes
            .iter()
            .all(|s| s.window as u32 * s.pages as u32 * s.page_size <= 256 * 1024)
    );
    // Column broadcasts of 10 cores (9 receivers) and rows of 6 (5 receivers) both occur.
    assert!(shapes.iter().any(|s| s.columns && s.rect.rows == 10));
    assert!(shapes.iter().any(|s| s.rows && s.rect.columns == 6));
}

#[test]
fn a_failing_case_is_reported_with_what_replays_it() {
    let mut cfg = shape(3, ChipKind::Blackhole);
    cfg.blocks = 6;
    cfg.window = 2;
    cfg.rows = false;
    cfg.columns = true;
    cfg.rect = komorebi_hal::LogicalRect::new(1, 0, 1, 4);
    cfg.faults = vec![FaultSpec {
        kind: FaultKind::BadWords,
        core: komorebi_hal::LogicalXy::new(1, 1),
        block: 0,
    }];
    let e = check_case(&cfg).unwrap_err();
    assert!(e.contains("give-ups without a fault"), "{e}");
    let replay = replay_command(&cfg);
    assert!(
        replay.starts_with("komorebi broadcast --rect 1,0,1,4 --blocks 6"),
        "{replay}"
    );
    assert!(replay.contains(&format!("--seed {}", cfg.seed)) && replay.contains("--adversarial"));
    // Without its fault the command ran a case that passes.
    assert!(
        replay.ends_with(" --feeder --fault bad-words:1,1"),
        "{replay}"
    );
}

/// Each of a case's checks fails on a run that breaks it: the same passing run with one thing
/// changed (a violation, a timeout, a mismatch, a byte less or more) fails with what was wrong.
#[test]
fn every_check_of_a_case_fails_on_a_run_that_breaks_it() {
    let mut cfg = shape(3, ChipKind::Blackhole);
    cfg.blocks = 4;
    let good = check_case(&cfg).expect("the case passes");
    assert_eq!(judge(&cfg, &good), Ok(()));
    let broken = |change: &dyn Fn(&mut komorebi::app::broadcast::BroadcastSummary)| {
        let mut s = good.clone();
        change(&mut s);
        judge(&cfg, &s).expect_err("the check fails")
    };
    let e = broken(&|s| s.violations.push("slot 1 multicast before its pop".into()));
    assert_eq!(e, "protocol violation: slot 1 multicast before its pop");
    let e = broken(&|s| s.timeouts = 1);
    assert!(
        e.starts_with("1 timeouts, 0 give-ups without a fault"),
        "{e}"
    );
    assert_eq!(broken(&|s| s.mismatches = 2), "data mismatch");
    assert_eq!(broken(&|s| s.ok = false), "data mismatch");
    let (checked, received) = (good.checked_bytes, good.received_bytes);
    assert!(checked > 0 && received > 0, "{good}");
    assert_eq!(
        broken(&|s| s.checked_bytes -= 4),
        format!(
            "bytes: checked {} of {checked}, received {received} of {received}",
            checked - 4
        )
    );
    assert_eq!(
        broken(&|s| s.received_bytes += 4),
        format!(
            "bytes: checked {checked} of {checked}, received {} of {received}",
            received + 4
        )
    );
}

/// On the simulators one case in four runs on other harvesting, drawn inside that grid; the
/// others keep the default's shape exactly, and harvested cases pass like the rest.
#[test]
fn simulated_cases_run_on_other_harvesting_too() {
    for (chip, default) in [
        (
            ChipKind::Blackhole,
            shape(0, ChipKind::Blackhole).harvest_mask(),
        ),
        (ChipKind::Wormhole, 0),
    ] {
        let mut masks = std::collections::BTreeSet::new();
        let mut harvested = Vec::new();
        for seed in 0..2000 {
            let s = shape_on(seed, chip, true);
            if s.harvest_mask() == default {
                assert_eq!(s, shape(seed, chip), "seed {seed}: the default's shape");
                continue;
            }
            masks.insert(s.harvest_mask());
            let g = komorebi::chip::geometry(chip, s.harvest_mask().into(), None).unwrap();
            // Inside one panel of the harvested grid and its rows; rows alone at least 2 wide.
            let (r, panels) = (s.rect, komorebi_broadcast::layout::panels(g.noc0_x()));
            assert!(
                panels
                    .iter()
                    .any(|p| p.first_column <= r.x0
                        && r.x0 + r.columns <= p.first_column + p.columns),
                "seed {seed} {chip:?}: {r} across panels {panels:?}"
            );
            assert!(r.y0 + r.rows <= g.rows(), "seed {seed} {chip:?}: {r}");
            assert!(s.columns || r.columns >= 2, "seed {seed} {chip:?}: {r}");
            // Every broadcast of the rectangle lies in the harvested grid.
            for (on, along, noc) in [
                (
                    s.rows,
                    komorebi_broadcast::Along::Row,
                    komorebi_hal::NocId::Noc0,
                ),
                (
                    s.columns,
                    komorebi_broadcast::Along::Column,
                    komorebi_hal::NocId::Noc1,
                ),
            ] {
                if on {
                    komorebi_broadcast::layout::broadcasts(&g, s.rect, along, noc)
                        .unwrap_or_else(|e| panic!("seed {seed} {chip:?}: {e}"));
                }
            }
            harvested.push(seed);
        }
        // About a quarter, on many masks (a Blackhole's 0 to 4 columns, a Wormhole's 1 or 2 rows).
        assert!(
            (400..600).contains(&harvested.len()),
            "{chip:?}: {}",
            harvested.len()
        );
        assert!(masks.len() > 30, "{chip:?}: {masks:?}");
        for &seed in &harvested[..8] {
            let cfg = shape_on(seed, chip, true);
            if let Err(e) = check_case(&cfg) {
                panic!("{e}\nreplay: {}", replay_command(&cfg));
            }
        }
    }
    // ttsim and cards have their own harvesting: their cases keep the default.
    assert!(
        (0..200)
            .all(|seed| shape_on(seed, ChipKind::Blackhole, false)
                == shape(seed, ChipKind::Blackhole))
    );
}

/// `komorebi broadcast`'s flags, as its command line parses them (a replay's words after
/// `komorebi`).
#[derive(clap::Parser)]
struct Broadcast {
    #[command(flatten)]
    flags: komorebi::cli::BroadcastFlags,
    #[command(flatten)]
    run: komorebi::cli::RunFlags,
}

/// A replay split as a shell splits it and parsed as `komorebi broadcast` parses it.
fn parse_replay(replay: &str) -> Result<Broadcast, String> {
    use clap::Parser;
    let args = shlex::split(replay).ok_or("a command a shell cannot split")?;
    if args.get(..2) != Some(&["komorebi".to_string(), "broadcast".to_string()][..]) {
        return Err("not a `komorebi broadcast` command".into());
    }
    Broadcast::try_parse_from(&args[1..]).map_err(|e| e.to_string())
}

/// A replay is the case: `replay_command`'s flags, parsed as `komorebi broadcast` parses them,
/// give back the configuration the case ran (on the simulator and through the host path).
#[test]
fn a_replay_parses_back_into_the_case_it_replays() {
    for seed in 0..200 {
        for (device, chip) in [
            (DeviceChoice::Sim, ChipKind::Blackhole),
            (DeviceChoice::PcieSim, ChipKind::Blackhole),
            (DeviceChoice::Sim, ChipKind::Wormhole),
            (
                DeviceChoice::Ttsim {
                    library: "/opt/tt sim/libttsim.so".into(),
                    chip: 0,
                },
                ChipKind::Blackhole,
            ),
            (
                DeviceChoice::Ttsim {
                    library: "/opt/tt sim/wh/libttsim.so".into(),
                    chip: 0,
                },
                ChipKind::Wormhole,
            ),
        ] {
            // As `explore` draws it: other harvesting, a seed and the adversary on the
            // simulators.
            let case = case(seed, chip, &device);
            let replay = replay_command(&case);
            let parsed =
                parse_replay(&replay).unwrap_or_else(|e| panic!("seed {seed}: {replay}: {e}"));
            let cfg = parsed.flags.config().unwrap();
            assert_eq!(cfg, case, "seed {seed}: {replay}");
            // And the run takes it: no flag the device refuses (ttsim takes no seed, no
            // adversary, no other harvesting).
            cfg.check_flags()
                .unwrap_or_else(|e| panic!("seed {seed}: {replay}: {e}"));
            assert!(
                parsed.run.feeder,
                "the case ran through the feeder: {replay}"
            );
        }
    }
}

/// A case built by hand replays too: its faults, no checking, the handshake, other kernel
/// costs, a fused bank, the firmware on the simulated card and its directory are in the
/// command (they were left out: the replay of a faulted case that failed ran it without the
/// fault, and passed).
#[test]
fn a_replay_carries_the_faults_and_settings_of_a_case_built_by_hand() {
    let faulted = komorebi::app::broadcast::BroadcastConfig {
        faults: vec![
            FaultSpec {
                kind: FaultKind::BadWords,
                core: komorebi_hal::LogicalXy::new(1, 1),
                block: 0,
            },
            FaultSpec {
                kind: FaultKind::StallDm,
                core: komorebi_hal::LogicalXy::new(1, 2),
                block: 3,
            },
        ],
        check: komorebi::app::broadcast::Check::None,
        kernel_costs: komorebi_sim::KernelCosts::Firmware,
        fused_dram: Some(3),
        ..case(3, ChipKind::Blackhole, &DeviceChoice::Sim)
    };
    let handshake = komorebi::app::broadcast::BroadcastConfig {
        protocol: komorebi::app::broadcast::Protocol::Handshake,
        exec: komorebi::host::pcie::Exec::Firmware,
        firmware: Some("/opt/tt firmware/images".into()),
        ..case(5, ChipKind::Blackhole, &DeviceChoice::PcieSim)
    };
    for cfg in [faulted, handshake] {
        let replay = replay_command(&cfg);
        let parsed = parse_replay(&replay).unwrap_or_else(|e| panic!("{replay}: {e}"));
        assert_eq!(parsed.flags.config().unwrap(), cfg, "{replay}");
    }
}

/// A case along columns only multicasts down some column: a Wormhole's columns are cut at its
/// Ethernet row and at harvested rows, and a rectangle with one row in each run (rows 4 and 5
/// of an unharvested Wormhole) multicast nothing (some 4% of the harvested column cases).
#[test]
fn column_cases_multicast_down_a_column() {
    for chip in [ChipKind::Wormhole, ChipKind::Blackhole] {
        let mut columns_only = 0;
        for seed in 0..3000 {
            let s = shape_on(seed, chip, true);
            if s.rows || !s.columns {
                continue;
            }
            columns_only += 1;
            let g = komorebi::chip::geometry(chip, s.harvest_mask().into(), None).unwrap();
            let casts = komorebi_broadcast::layout::broadcasts(
                &g,
                s.rect,
                komorebi_broadcast::Along::Column,
                komorebi_hal::NocId::Noc1,
            )
            .unwrap_or_else(|e| panic!("seed {seed} {chip:?}: {e}"));
            assert!(
                casts.iter().any(|b| b.receivers() > 0),
                "seed {seed} {chip:?}: {} multicasts nothing (harvest {:#x})",
                s.rect,
                s.harvest_mask()
            );
        }
        assert!(columns_only > 500, "{chip:?}: {columns_only}");
    }
}

/// An exploration names its device's clock, whether or not a case ran.
#[test]
fn an_exploration_counts_in_its_devices_clock() {
    use komorebi::host::device::ClockKind;
    let ttsim = DeviceChoice::Ttsim {
        library: "/no/such/libttsim.so".into(),
        chip: 0,
    };
    for (device, clock) in [
        (DeviceChoice::Sim, ClockKind::Simulated),
        (ttsim, ClockKind::TtsimSteps),
        ("/dev/tenstorrent/9".parse().unwrap(), ClockKind::Card),
    ] {
        let out = explore(0, 0, &device, ChipKind::Blackhole, |_, _| {});
        assert_eq!((out.cases, out.clock), (0, clock), "{device}");
    }
}

/// A case is judged on the grid its run laid the rectangle out on: on ttsim and a card the
/// device's own, whose harvesting the flags do not set. A row from logical column 6 to 7 is one
/// broadcast on the flags' grid (`--harvest 0x3000`: NoC0 x 7 and 10 harvested, so columns 6
/// and 7 are x 11 and 12) and two of one core on a grid with every column (x 7 and 10, a panel's
/// edge between them): no byte is received there, and that is right there.
#[test]
fn a_case_is_judged_on_the_grid_its_run_was_laid_out_on() {
    let mut cfg = shape(3, ChipKind::Blackhole);
    cfg.rect = komorebi_hal::LogicalRect::new(6, 4, 2, 1);
    cfg.rows = true;
    cfg.columns = false;
    cfg.blocks = 3;
    let good = check_case(&cfg).expect("the case passes on the flags' grid");
    let received = good.received_bytes;
    assert!(received > 0, "{good}");
    let every_column = komorebi::chip::geometry(ChipKind::Blackhole, 0, None).unwrap();
    let on_device = |s: &mut komorebi::app::broadcast::BroadcastSummary| {
        s.laid_out_on = Some(every_column.clone());
        s.received_bytes = 0;
    };
    let mut s = good.clone();
    on_device(&mut s);
    assert_eq!(judge(&cfg, &s), Ok(()));
    // The same counts judged on the flags' grid fail, as they did before the run's grid was
    // kept (every such case on ttsim failed).
    s.laid_out_on = None;
    let e = judge(&cfg, &s).expect_err("one receiver on the flags' grid");
    assert!(e.contains(&format!("received 0 of {received}")), "{e}");
    // And a byte received where the device's grid has no receiver fails.
    let mut s = good.clone();
    on_device(&mut s);
    s.received_bytes = 4;
    assert!(judge(&cfg, &s).is_err());
}
