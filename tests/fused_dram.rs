//! A chip with a fused DRAM bank (a p100 has 7 of 8): the 03 program's placement never picks
//! it (a property over every bank and many shapes), the program runs with every byte checked
//! on the simulator and on the simulated card (the firmware too) without one access to it, a
//! plan that ignores it is refused at its first DRAM write, and the CLI takes `--fused-dram`.

mod common;
use common::komorebi;

use std::sync::OnceLock;

use blackhole_pac::grid::{DRAM_PORTS, Noc0Xy};
use blackhole_pac::harvest::DramBanks;
use komorebi::Backend;
use komorebi::app::broadcast::{
    self, BroadcastConfig, BroadcastPlan, BroadcastSummary, Check, DeviceChoice,
};
use komorebi::host::backend::{Exec, built_firmware};
use komorebi_hal::{LogicalRect, NocId};
use komorebi_kernel::broadcast_handler::program::STREAMS;
use komorebi_sim::SimConfig;
use proptest::prelude::*;

/// The plan of `cfg` on a p150-shaped chip whose DRAM bank `fused` is fused off.
fn plan(cfg: &BroadcastConfig, fused: u8) -> BroadcastPlan {
    let geometry = komorebi::chip::blackhole_fused(0x3000, Some(fused)).unwrap();
    BroadcastPlan::per_job(cfg, &geometry).unwrap()
}

/// The raw coordinates on `noc` of every port of `bank`.
fn ports(bank: u8, noc: NocId) -> Vec<(u8, u8)> {
    DRAM_PORTS[bank as usize]
        .iter()
        .map(|&(x, y)| {
            let p = Noc0Xy::new(x, y).unwrap();
            match noc {
                NocId::Noc0 => p.get(),
                NocId::Noc1 => p.to_noc1().get(),
            }
        })
        .collect()
}

/// Checks that nothing of `plan` names bank `fused`: no sender's stream, no program's port on
/// either NoC, no bound's bank.
fn never_names(plan: &BroadcastPlan, cfg: &BroadcastConfig, fused: u8) {
    assert_eq!(plan.fused_dram(), Some(fused));
    for id in [0, 1] {
        for (core, banks, _) in plan.sender_banks(id) {
            assert!(
                !banks.contains(&fused),
                "bank {fused} fused: sender {core} of broadcast {id} reads {banks:?}"
            );
        }
    }
    for core in 0..cfg.rect.len() {
        let p = plan.program(core, 0).unwrap();
        for (mover, noc) in [(p.reader, NocId::Noc0), (p.writer, NocId::Noc1)] {
            let Some(m) = mover else { continue };
            let bad = ports(fused, noc);
            for (s, xy) in m.banks.iter().enumerate() {
                assert!(
                    !bad.contains(&(xy.x(), xy.y())),
                    "bank {fused} fused: core {core} stream {s} reads its port {xy}"
                );
            }
        }
    }
    let bound = plan.job_bound(&komorebi_sim::Timing::default());
    assert_ne!(bound.binding.to_string(), format!("DRAM bank {fused}"));
}

#[test]
fn the_placement_never_picks_the_fused_bank_of_the_03_default() {
    let cfg = BroadcastConfig {
        check: Check::None,
        ..BroadcastConfig::default()
    };
    for fused in 0..8 {
        let p = plan(&cfg, fused);
        never_names(&p, &cfg, fused);
        // Every working bank still serves some stream: 7 banks share the reads.
        let mut used = [false; 8];
        for id in [0, 1] {
            for (_, banks, _) in p.sender_banks(id) {
                for b in banks {
                    used[b as usize] = true;
                }
            }
        }
        let working = DramBanks::with_fused(Some(fused)).unwrap();
        assert!(
            working.iter().all(|b| used[b as usize]),
            "{fused}: {used:?}"
        );
        assert_eq!(STREAMS, 8, "eight streams over seven banks");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every fused bank, and rectangles, directions and shapes drawn at random: no stream of
    /// any sender, no program port, no bound names the fused bank.
    #[test]
    fn the_placement_never_picks_the_fused_bank(
        fused in 0u8..8,
        x0 in 0u8..12, y0 in 0u8..10, columns in 1u8..=12, rows in 1u8..=10,
        along in 0usize..3,
        blocks in 1u32..9, pages in 1u16..9, page_size in prop::sample::select(vec![64u32, 512, 2048, 16384]),
    ) {
        let cfg = BroadcastConfig {
            rect: LogicalRect::new(x0, y0, columns.min(12 - x0), rows.min(10 - y0)),
            rows: along != 1,
            columns: along != 0,
            blocks,
            pages,
            page_size,
            check: Check::None,
            ..BroadcastConfig::default()
        };
        never_names(&plan(&cfg, fused), &cfg, fused);
    }
}

/// The small 03 shape of the firmware tests (`--rect 0,0,4,4 --blocks 4 --pages 2 --window 2
/// --jobs 2`) with DRAM bank `fused` fused off.
fn small(fused: u8, device: DeviceChoice, exec: Exec) -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 4, 4),
        blocks: 4,
        pages: 2,
        window: 2,
        jobs: 2,
        fused_dram: Some(fused),
        device,
        exec,
        ..BroadcastConfig::default()
    }
}

/// The run checked every byte, and the simulator saw no access to the fused bank (it records
/// every one as a violation, and refuses the host's).
fn every_byte(s: &BroadcastSummary, fused: u8) {
    assert!(s.ok && s.giveups.is_empty(), "bank {fused} fused: {s}");
    assert!(s.violations.is_empty(), "{:?}", s.violations);
    assert_eq!(s.fused_dram, Some(fused));
    // 12 receivers x 2 jobs x 4 blocks x 2 pages x 2048 B, per broadcast direction.
    assert_eq!(s.received_bytes, 2 * 12 * 2 * 4 * 2 * 2048);
    assert!(s.checked_bytes > s.received_bytes);
}

#[test]
fn every_fused_bank_runs_with_every_byte_checked_on_the_simulator_and_the_simulated_card() {
    let none = broadcast::run(
        &BroadcastConfig {
            fused_dram: None,
            ..small(0, DeviceChoice::Sim, Exec::Native)
        },
        |_| {},
    )
    .unwrap();
    assert!(none.ok && none.fused_dram.is_none());
    for fused in 0..8 {
        for device in [DeviceChoice::Sim, DeviceChoice::PcieSim] {
            let s = broadcast::run(&small(fused, device.clone(), Exec::Native), |_| {}).unwrap();
            every_byte(&s, fused);
            assert_eq!(s.checked_bytes, none.checked_bytes, "{device}");
        }
    }
    // Through the dispatcher too.
    let s = broadcast::run_dispatched(
        &small(6, DeviceChoice::Sim, Exec::Native),
        &Default::default(),
        &|_| {},
    )
    .unwrap();
    every_byte(&s, 6);
}

#[test]
fn the_firmware_on_the_simulated_card_runs_with_a_west_and_an_east_bank_fused() {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| built_firmware().unwrap()).clone();
    // Bank 2 (west: translated x 17 becomes the east column) and bank 5 (east).
    for fused in [2, 5] {
        let cfg = BroadcastConfig {
            firmware: Some(dir.clone()),
            ..small(fused, DeviceChoice::PcieSim, Exec::Firmware)
        };
        let s = broadcast::run(&cfg, |_| {}).unwrap();
        every_byte(&s, fused);
    }
}

#[test]
fn a_plan_that_ignores_the_fused_bank_is_refused_at_its_first_dram_write() {
    let mut session = broadcast::open_session(Backend::Simulator(SimConfig {
        fused_dram: Some(0),
        ..SimConfig::default()
    }))
    .unwrap();
    assert_eq!(session.fused_dram(), Some(0));
    assert_eq!(session.geometry().fused_dram(), Some(0));
    // A plan made for a chip with every bank reads stream 0 from bank 0 somewhere.
    let cfg = BroadcastConfig {
        jobs: 1,
        ..small(0, DeviceChoice::Sim, Exec::Native)
    };
    let blind = BroadcastPlan::new(&cfg, &komorebi::chip::blackhole(0x3000).unwrap()).unwrap();
    let e = blind.prepare(&mut session).unwrap_err().to_string();
    assert!(
        e.contains("DRAM bank 0") && e.contains("fused off on this chip"),
        "{e}"
    );
    // The session's own geometry gives a plan that never touches it.
    let plan = BroadcastPlan::new(&cfg, session.geometry()).unwrap();
    plan.prepare(&mut session).unwrap();
}

#[test]
fn the_cli_takes_fused_dram_0_to_7_everywhere_a_harvest_mask_is_taken() {
    let small = [
        "--rect", "0,0,4,4", "--blocks", "4", "--pages", "2", "--window", "2", "--jobs", "2",
    ];
    let mut args = vec!["broadcast", "--fused-dram", "3", "--json"];
    args.extend(small);
    let (code, out, err) = komorebi(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["ok"].as_bool(), v["fused_dram"].as_u64()),
        (Some(true), Some(3))
    );
    // Without the flag the JSON has no such field (the 03 default's JSON is unchanged).
    let (_, out, _) = komorebi(&[&["broadcast", "--json"], &small[..]].concat());
    assert!(!out.contains("fused_dram"), "{out}");
    let (code, out, _) = komorebi(&["grid", "--fused-dram", "7", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fused_dram"], 7);
    assert_eq!(
        &v["map"][5].as_str().unwrap()[9..10],
        "d",
        "bank 7 port 0 at NoC0 (9,5)"
    );
    let (code, out, _) = komorebi(&[
        "layout",
        "--rect",
        "0,0,12,10",
        "--along",
        "column",
        "--noc",
        "1",
        "--fused-dram",
        "4",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fused_dram"], 4);
    for b in v["broadcasts"].as_array().unwrap() {
        assert!(!b["banks"].as_array().unwrap().contains(&4.into()), "{b}");
    }
    // Out of range: exit 2, one line, the allowed range.
    for cmd in [
        vec!["broadcast"],
        vec!["grid"],
        vec!["layout", "--rect", "0,0,2,2", "--along", "row"],
        vec!["bench", "noc", "--pattern", "dram-read", "--size", "64"],
        vec!["bench", "broadcast"],
    ] {
        let (code, out, err) = komorebi(&[&cmd[..], &["--fused-dram", "8"]].concat());
        assert_eq!(code, 2, "{cmd:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
        assert!(
            err.contains("--fused-dram") && err.contains("0..=7"),
            "{cmd:?}: {err}"
        );
    }
    // Every command's help says the range.
    for cmd in [
        vec!["broadcast"],
        vec!["grid"],
        vec!["layout"],
        vec!["bench", "noc"],
        vec!["bench", "broadcast"],
        vec!["inspect"],
    ] {
        let (code, out, _) = komorebi(&[&cmd[..], &["--help"]].concat());
        assert_eq!(code, 0);
        let text = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("--fused-dram <BANK>") && text.contains("fused DRAM bank, 0..=7"),
            "{cmd:?}: {text}"
        );
    }
}
