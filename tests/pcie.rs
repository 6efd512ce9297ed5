//! The host path through komorebi-pcie, proved against the simulator presented as a PCIe card
//! (`--device pcie-sim`): the 03 broadcast with every byte checked, ordering of posted writes
//! with and without the publish barrier, the firmware loader's refusals, devices that cannot
//! be used (missing, a regular file, `/dev/null`, hung, a dead tile), the CLI's exit 4, and
//! the loader's boot sequence (reset PCs, Wormhole's release by BRISC, log rings zeroed, a
//! kernel that panicked named with its line).

use std::process::Command;
use std::sync::{Arc, Mutex};

mod common;

use blackhole_pac::tlb::TlbOrdering::Relaxed;
use komorebi::app::broadcast::{self, BroadcastConfig, BroadcastPlan, DeviceChoice};
use komorebi::chip::ChipKind;
use komorebi::host::backend::Exec;
use komorebi::host::device::spawn_kernel;
use komorebi::host::pcie::open_pcie_sim;
use komorebi::host::session::SessionError;
use komorebi::{Backend, Feeder, Session};
use komorebi_hal::LogicalRect;
use komorebi_hal::Role;
use komorebi_kernel::BroadcastHandler;
use komorebi_kernel::abi;
use komorebi_pcie::PcieError;
use komorebi_pcie::card::Card;
use komorebi_pcie::card::CardOptions;
use komorebi_pcie::firmware::Firmware;
use komorebi_pcie::firmware::{BootOptions, boot};
use komorebi_pcie::sim::SimBar;
use komorebi_pcie::sim::SimBarOptions;
use komorebi_sim::{Boot, Core, Fault, Sim, SimConfig, SimError};

fn small(device: DeviceChoice) -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 4, 3),
        blocks: 6,
        pages: 2,
        page_size: 512,
        jobs: 3,
        device,
        ..BroadcastConfig::default()
    }
}

#[test]
fn the_03_broadcast_on_pcie_sim_checks_every_byte_as_the_simulator_does() {
    let sim = broadcast::run(&BroadcastConfig::default(), |_| {}).unwrap();
    let cfg = BroadcastConfig {
        device: DeviceChoice::PcieSim,
        ..BroadcastConfig::default()
    };
    for summary in [
        broadcast::run(&cfg, |_| {}).unwrap(),
        broadcast::run_dispatched(&cfg, &Default::default(), &|_| {}).unwrap(),
    ] {
        assert!(summary.ok, "{summary}");
        assert_eq!(summary.received_bytes, 218_103_808);
        assert_eq!(summary.checked_bytes, 251_658_240);
        assert_eq!(
            (summary.received_bytes, summary.checked_bytes),
            (sim.received_bytes, sim.checked_bytes)
        );
        // The host polls the card every 1350 cycles, so the run ends up to a poll later per
        // job than on the simulator driven directly.
        assert!(
            summary.cycles >= sim.cycles && summary.cycles <= sim.cycles + 8 * 2 * 1350,
            "pcie-sim {} cycles, sim {}",
            summary.cycles,
            sim.cycles
        );
    }
}

#[test]
fn a_fault_gives_the_same_give_ups_on_pcie_sim_as_on_the_simulator() {
    let fault: broadcast::FaultSpec = "drop-marker:3,1:1".parse().unwrap();
    let on = |device| {
        let cfg = BroadcastConfig {
            faults: vec![fault],
            ..small(device)
        };
        broadcast::run(&cfg, |_| {}).unwrap()
    };
    let (sim, pcie) = (on(DeviceChoice::Sim), on(DeviceChoice::PcieSim));
    assert!(!sim.ok && sim.timeouts == 1, "{sim}");
    assert_eq!(pcie.timeouts, sim.timeouts);
    // Which broadcast's marker the drop catches first depends on timing, which polling moves.
    let places = |s: &broadcast::BroadcastSummary| {
        s.giveups
            .iter()
            .map(|g| (g.core, g.place, g.block))
            .collect::<Vec<_>>()
    };
    assert_eq!(places(&pcie), places(&sim));
    assert_eq!(pcie.checked_bytes, sim.checked_bytes);
}

/// A session on the simulated card whose tile windows are relaxed and whose posted writes are
/// reordered, as dynamic virtual channels may on a card.
fn reordering(seed: u64, read_back: bool) -> Session {
    broadcast::open_session(Backend::PcieSim {
        config: SimConfig {
            seed,
            reorder_posted_writes: true,
            ..SimConfig::default()
        },
        firmware: None,
        handler: Default::default(),
        exec: Exec::Native,
        bar: SimBarOptions::default(),
        card: CardOptions {
            tile_ordering: Relaxed,
            read_back_before_publish: read_back,
            ..CardOptions::default()
        },
    })
    .unwrap()
}

fn jobs_ok(session: &mut Session) -> usize {
    let cfg = small(DeviceChoice::PcieSim);
    let plan = BroadcastPlan::new(&cfg, session.geometry()).unwrap();
    plan.prepare(session).unwrap();
    (0..cfg.jobs)
        .filter(|&job| Feeder::new(session).run(&plan.spec(job)).unwrap().ok)
        .count()
}

#[test]
fn with_the_publish_barrier_reordered_posted_writes_never_break_a_command() {
    for seed in 0..4 {
        let ok = common::with_seed(seed, || jobs_ok(&mut reordering(seed, true)));
        assert_eq!(ok, 3, "seed {seed}");
    }
}

#[test]
fn without_the_publish_barrier_the_index_word_overtakes_the_command() {
    // Some seed lands a tile's index word before the words it publishes: that tile runs a
    // stale or half-written command, which its check word refuses.
    let broken: Vec<u64> = (0..4)
        .filter(|&seed| common::with_seed(seed, || jobs_ok(&mut reordering(seed, false))) < 3)
        .collect();
    assert!(!broken.is_empty(), "no seed of 0..4 showed the hazard");
}

#[test]
fn with_fewer_windows_than_tiles_and_another_harvest_every_byte_still_checks() {
    // 16 windows of 2 MiB for 120 tiles and none of 4 GiB: most tiles and every DRAM bank
    // share the spare window, which moves only after a read back of its last write.
    let harvest = blackhole_pac::harvest::HarvestMask::new((1 << 8) | (1 << 11)).unwrap();
    let mut s = broadcast::open_session(Backend::PcieSim {
        config: SimConfig {
            harvest,
            ..SimConfig::default()
        },
        firmware: None,
        handler: Default::default(),
        exec: Exec::Native,
        bar: SimBarOptions {
            windows_2m: 16,
            windows_4g: 0,
            ..SimBarOptions::default()
        },
        card: CardOptions::default(),
    })
    .unwrap();
    assert_eq!(
        s.harvest_word(),
        harvest.bits() as u32,
        "the mask comes from the card's telemetry"
    );
    assert_eq!(jobs_ok(&mut s), 3);
}

#[test]
fn no_window_left_is_an_unusable_device() {
    let e = open_error(Backend::PcieSim {
        config: SimConfig::default(),
        firmware: None,
        handler: Default::default(),
        exec: Exec::Native,
        bar: SimBarOptions {
            windows_2m: 0,
            ..SimBarOptions::default()
        },
        card: CardOptions::default(),
    });
    assert_eq!(
        e,
        PcieError::WindowsExhausted {
            size: "2 MiB",
            available: 0
        }
    );
}

fn open_error(backend: Backend) -> PcieError {
    match broadcast::open_session(backend) {
        Err(SessionError::Unusable(e)) => e,
        Err(e) => panic!("expected an unusable device, got {e}"),
        Ok(_) => panic!("expected an unusable device, got a session"),
    }
}

#[test]
fn a_missing_path_a_regular_file_and_dev_null_are_not_cards() {
    let card = |path: &str| Backend::Card {
        path: path.into(),
        firmware: None,
        handler: Default::default(),
    };
    assert_eq!(
        open_error(card("/nonexistent/tenstorrent/9")),
        PcieError::NoSuchDevice {
            path: "/nonexistent/tenstorrent/9".into()
        }
    );
    let file = std::env::temp_dir().join(format!("komorebi-not-a-card-{}", std::process::id()));
    std::fs::write(&file, b"not a card").unwrap();
    let e = open_error(card(file.to_str().unwrap()));
    std::fs::remove_file(&file).unwrap();
    assert!(matches!(e, PcieError::NotTtKmd { .. }), "{e}");
    let e = open_error(card("/dev/null"));
    assert!(matches!(e, PcieError::NotTtKmd { .. }), "{e}");
}

#[test]
fn an_image_that_does_not_start_is_named_with_its_tiles() {
    // A writer image whose header is not where the writer's header belongs: the simulated
    // NCRISC finds no komorebi image when it is released, and nothing runs there.
    let mut images = Firmware::native().images;
    images[1].segments[0].addr -= 0x100;
    let e = open_pcie_sim(
        SimConfig::default(),
        SimBarOptions::default(),
        CardOptions::default(),
        Some(Firmware { images }),
        Exec::Native,
        || (BroadcastHandler::new(),),
    )
    .unwrap_err();
    let PcieError::FirmwareDidNotStart { tiles, .. } = &e else {
        panic!("{e}");
    };
    assert_eq!(
        tiles.len(),
        120 + 3,
        "every tile, then three simulator reasons: {e}"
    );
    assert!(
        tiles[..120].iter().all(|t| t.ends_with(": writer not up")),
        "{}",
        tiles[0]
    );
    assert!(tiles[120].starts_with("simulator:"), "{}", tiles[120]);
}

#[test]
fn a_hung_card_is_a_lost_device_not_a_value() {
    let mut s = broadcast::open_session(Backend::pcie_sim(SimConfig::default())).unwrap();
    let cfg = small(DeviceChoice::PcieSim);
    let plan = BroadcastPlan::new(&cfg, s.geometry()).unwrap();
    plan.prepare(&mut s).unwrap();
    s.device().simulator().unwrap().inject(Fault::Hung).unwrap();
    let e = Feeder::new(&mut s).run(&plan.spec(0)).unwrap_err();
    let SessionError::Device(d) = &e else {
        panic!("{e}");
    };
    assert!(d.lost, "{e}");
    assert!(d.message.contains("hung or reset"), "{e}");
}

#[test]
fn a_dead_tile_reads_as_dead_while_the_card_answers() {
    // On a Blackhole the PCIe NIU is asked; on a Wormhole the ARC NIU (tt-umd's hang word).
    let wormhole = wormhole_config();
    for (config, chip, niu) in [
        (SimConfig::default(), ChipKind::Blackhole, "PCIe"),
        (wormhole, ChipKind::Wormhole, "ARC"),
    ] {
        let mut s = broadcast::open_session(Backend::pcie_sim(config)).unwrap();
        let tile = s.noc0(komorebi_hal::LogicalXy::new(0, 0)).unwrap();
        let cfg = BroadcastConfig {
            chip,
            ..small(DeviceChoice::PcieSim)
        };
        let plan = BroadcastPlan::new(&cfg, s.geometry()).unwrap();
        plan.prepare(&mut s).unwrap();
        s.device()
            .simulator()
            .unwrap()
            .inject(Fault::DeadTile(tile.get()))
            .unwrap();
        let e = Feeder::new(&mut s).run(&plan.spec(0)).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains(&format!("the {niu} NIU still answers: that tile is dead")),
            "{chip}: {e}"
        );
    }
}

#[test]
fn the_cli_exits_4_with_one_line_for_a_device_it_cannot_use() {
    for device in ["/nonexistent/tenstorrent/9", "/dev/null"] {
        let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
            .args(["broadcast", "--device", device, "--jobs", "1"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4), "{device}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(device), "{err}");
    }
}

#[test]
fn komorebi_devices_with_no_card_is_an_empty_list() {
    if std::path::Path::new("/dev/tenstorrent").exists() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .args(["devices", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        r#"{"devices":[]}"#
    );
}

/// A simulator of `config` whose cores wait in reset for the loader, the control block where
/// komorebi's ABI puts it: what a card is before `boot`.
fn held_in_reset(config: SimConfig) -> Sim {
    Sim::new(SimConfig {
        boot: Boot::HeldInReset,
        control: komorebi_kernel::abi::CONTROL_LAYOUT,
        ..config
    })
}

/// Starts `role`'s native kernel on `tile`, as its core does when the loader releases it, with
/// the tile's logical coordinates (which every kernel checks against its header).
fn spawn_native(sim: &mut Sim, tile: (u8, u8), role: Role) -> Result<(), SimError> {
    let config = sim.config();
    let (columns, rows) = (config.harvest.columns(), config.wormhole.map(|h| h.rows()));
    let (x, y) = match rows {
        Some(rows) => rows.noc0_to_logical(tile.0, tile.1),
        None => columns.noc0_to_logical(tile.0, tile.1),
    }
    .unwrap_or((0xFF, 0xFF));
    let own = komorebi_hal::LogicalXy::new(x, y);
    spawn_kernel(sim, tile, role, Some(own), (BroadcastHandler::new(),))
}

/// `sim` opened as a card.
fn card_of(sim: Sim) -> Card<SimBar> {
    Card::open(
        SimBar::new(sim, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap()
}

/// Loads and starts the native images on `card` (the loader's whole sequence), waiting 10 ms
/// of device time for them to come up.
fn boot_native(card: &mut Card<SimBar>) -> Result<(), PcieError> {
    let chip = card.chip().clone();
    let logical = move |t: komorebi_hal::Xy| chip.logical(t).unwrap_or((0xFF, 0xFF));
    let options = BootOptions {
        timeout: std::time::Duration::from_millis(10),
        native_allowed: true,
    };
    boot(card, &Firmware::native(), logical, options)
}

/// Boots the native images on `sim`, noting at each core's start what `see` finds on its tile
/// then (before the core's kernel is spawned), and checks every tile's three kernels started:
/// each start's tile, role and note.
fn boot_seeing<T: Send + 'static>(
    mut sim: Sim,
    see: impl Fn(&mut Sim, (u8, u8)) -> Result<T, SimError> + 'static,
) -> Vec<((u8, u8), Role, T)> {
    let starts = Arc::new(Mutex::new(Vec::new()));
    let seen = starts.clone();
    sim.set_boot_hook(Box::new(move |sim: &mut Sim, tile, role| {
        let note = see(sim, tile)?;
        seen.lock().unwrap().push((tile, role, note));
        spawn_native(sim, tile, role)
    }));
    let mut card = card_of(sim);
    let tiles = card.tensix().count();
    boot_native(&mut card).expect("every tile comes up");
    drop(card);
    let starts = std::mem::take(&mut *starts.lock().unwrap());
    assert_eq!(starts.len(), 3 * tiles, "three kernels a tile");
    starts
}

#[test]
fn boot_resets_the_reset_pc_overrides_a_tt_metal_run_left_set() {
    use blackhole_pac::tensix::{
        NCRISC_RESET_PC_OVERRIDE, NCRISC_RESET_PC_REG, TRISC_RESET_PC_OVERRIDE, TRISC_RESET_PC_REGS,
    };

    let mut sim = held_in_reset(SimConfig::default());
    sim.set_boot_hook(Box::new(spawn_native));
    let mut card = card_of(sim);
    // What tt-metal's firmware leaves behind: every override on, PCs inside komorebi's images
    // (its NCRISC and TRISC firmware bases: tt-metal `dev_mem_map.h`, docs/blackhole.md,
    // "tt-metal L1 map").
    let tiles: Vec<_> = card.tensix().collect();
    for &t in &tiles {
        card.write_reg(t, NCRISC_RESET_PC_OVERRIDE, 1).unwrap();
        card.write_reg(t, NCRISC_RESET_PC_REG, 0x5BE0).unwrap();
        card.write_reg(t, TRISC_RESET_PC_OVERRIDE, 0b111).unwrap();
        for (reg, pc) in TRISC_RESET_PC_REGS
            .into_iter()
            .zip([0x65E0, 0x6FE0, 0x79E0])
        {
            card.write_reg(t, reg, pc).unwrap();
        }
    }
    boot_native(&mut card).expect("every tile comes up");
    // The native images start at the default PCs (NCRISC 0x12000, TRISC0 0x6000): both
    // overrides off again, TRISC1 and TRISC2 (in reset) included.
    for &t in &tiles {
        assert_eq!(
            card.read_reg(t, NCRISC_RESET_PC_OVERRIDE).unwrap(),
            0,
            "{t:?}"
        );
        assert_eq!(
            card.read_reg(t, TRISC_RESET_PC_OVERRIDE).unwrap(),
            0,
            "{t:?}"
        );
    }
}

#[test]
fn a_wormhole_s_host_releases_brisc_alone_and_brisc_starts_the_other_two() {
    let wormhole = wormhole_config();
    let others = Core::Ncrisc.reset_bit() | Core::Trisc0.reset_bit();
    // On a Blackhole the host sets the reset PCs and releases all three at once; on a Wormhole
    // it cannot set them, so it releases BRISC alone and BRISC's image starts the other two.
    for (config, held_at_brisc) in [(SimConfig::default(), 0), (wormhole, others)] {
        let sim = held_in_reset(config);
        // Each core's start, with its tile's soft-reset register as it was then.
        let starts = boot_seeing(sim, |sim, tile| sim.soft_reset(tile));
        for &(tile, role, reset) in &starts {
            if role == Role::Reader {
                assert_eq!(reset & others, held_at_brisc, "{tile:?}: {reset:#x}");
            }
        }
    }
}

#[test]
fn a_kernel_that_panicked_before_it_came_up_is_named_with_its_line() {
    // Every writer stops at a panic before its boot word says up, as a debug image's would:
    // the panic word carries the tag and the line, and the boot word stays unset. Every compute
    // kernel never starts, over a panic word the last boot left: the loader zeroed it, so no
    // line is named for it.
    let mut sim = held_in_reset(SimConfig::default());
    let word = |role| abi::CONTROL_BASE + abi::kernel_word(abi::PANIC, role);
    for tile in sim.tensix() {
        sim.write_l1_u32(tile, word(Role::Compute), abi::PANIC_TAG | 999)
            .unwrap();
    }
    sim.set_boot_hook(Box::new(move |sim: &mut Sim, tile, role| match role {
        Role::Reader => spawn_native(sim, tile, role),
        Role::Writer => sim.write_l1_u32(tile, word(role), abi::PANIC_TAG | 321),
        Role::Compute => Ok(()),
    }));
    let mut card = card_of(sim);
    let tiles = card.tensix().count();
    let e = boot_native(&mut card).unwrap_err();
    let PcieError::FirmwareDidNotStart { tiles: named, .. } = &e else {
        panic!("{e}");
    };
    assert_eq!(named.len(), tiles, "{e}");
    for line in named {
        assert!(
            line.starts_with("logical (")
                && line.ends_with("): writer not up (panicked at line 321), compute not up"),
            "{line}"
        );
    }
}

#[test]
fn the_loader_zeroes_the_log_rings_before_any_kernel_starts() {
    // The last boot's lines in every ring (a kernel that never empties its ring would show them
    // as this boot's): every core must find its tile's three rings zeroed when it starts, on a
    // Blackhole (the host releases all three cores) and on a Wormhole (BRISC's image releases
    // the other two).
    for config in [SimConfig::default(), wormhole_config()] {
        let mut sim = held_in_reset(config);
        let rings = vec![0xA5; 3 * abi::LOG_RING_BYTES as usize];
        for tile in sim.tensix() {
            sim.write_l1(tile, abi::LOG_BASE, &rings).unwrap();
        }
        let starts = boot_seeing(sim, |sim, tile| {
            let mut now = vec![0xFF; 3 * abi::LOG_RING_BYTES as usize];
            sim.read_l1(tile, abi::LOG_BASE, &mut now)?;
            Ok(now.iter().filter(|&&b| b != 0).count())
        });
        for &(tile, role, dirty) in &starts {
            assert_eq!(
                dirty, 0,
                "{tile:?} {role:?}: {dirty} bytes of the rings not zeroed"
            );
        }
    }
}

/// The simulator as an unharvested Wormhole B0, with its timing.
fn wormhole_config() -> SimConfig {
    SimConfig {
        wormhole: Some(wormhole_pac::harvest::HarvestMask::NONE),
        timing: komorebi_sim::Timing::wormhole(),
        ..SimConfig::default()
    }
}
