//! Schedule exploration: a sample of the cases CI runs in full (`komorebi explore --seeds 2000`),
//! and proof that the case check fails when something is wrong.

use komorebi::app::broadcast::{DeviceChoice, FaultKind, FaultSpec};
use komorebi::chip::ChipKind;
use komorebi::explore::{check_case, explore, replay_command, shape};

#[test]
fn a_sample_of_random_shapes_and_seeds_passes() {
    let out = explore(10_000, 40, &DeviceChoice::Sim, ChipKind::Blackhole, |_| {});
    assert_eq!(out.cases, 40);
    assert!(out.failures.is_empty(), "{out}");
    assert!(out.checked_bytes > 0);
}

/// A Wormhole B0's cases: its shapes, on its grid, through the same checks.
#[test]
fn a_sample_of_wormhole_shapes_passes() {
    let out = explore(30_000, 30, &DeviceChoice::Sim, ChipKind::Wormhole, |_| {});
    assert_eq!(out.cases, 30);
    assert!(out.failures.is_empty(), "{out}");
    assert!(out.checked_bytes > 0);
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
    let out = explore(
        20_000,
        6,
        &DeviceChoice::PcieSim,
        ChipKind::Blackhole,
        |_| {},
    );
    assert_eq!(out.cases, 6);
    assert!(out.failures.is_empty(), "{out}");
    assert!(out.checked_bytes > 0);
    let cfg = komorebi::app::broadcast::BroadcastConfig {
        device: DeviceChoice::PcieSim,
        ..shape(20_000, ChipKind::Blackhole)
    };
    assert!(replay_command(&cfg).ends_with(" --device pcie-sim"));
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
    assert!(
        shapes
            .iter()
            .all(|s| (1..=8).contains(&s.pages) && s.adversarial)
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
}

/// A replay is the case: `replay_command`'s flags, parsed as `komorebi broadcast` parses them,
/// give back the configuration the case ran (on the simulator and through the host path).
#[test]
fn a_replay_parses_back_into_the_case_it_replays() {
    use clap::Parser;
    #[derive(Parser)]
    struct Broadcast {
        #[command(flatten)]
        flags: komorebi::cli::BroadcastFlags,
        #[command(flatten)]
        run: komorebi::cli::RunFlags,
    }
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
        ] {
            let case = komorebi::app::broadcast::BroadcastConfig {
                exec: device.default_exec(),
                device: device.clone(),
                ..shape(seed, chip)
            };
            let replay = replay_command(&case);
            // As a shell splits it.
            let args = shlex::split(&replay).expect("a command a shell splits");
            assert_eq!(args[..2], ["komorebi", "broadcast"], "{replay}");
            let parsed = Broadcast::try_parse_from(&args[1..])
                .unwrap_or_else(|e| panic!("seed {seed}: {replay}: {e}"));
            let cfg = parsed.flags.config().unwrap();
            assert_eq!(cfg, case, "seed {seed}: {replay}");
            assert!(
                parsed.run.feeder,
                "the case ran through the feeder: {replay}"
            );
        }
    }
}
