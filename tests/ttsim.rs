//! The real host path and the real firmware on Tenstorrent's ttsim (`--device ttsim`): the small
//! 03 case in both check modes through the feeder and the dispatcher, each host-caused fault
//! against the native kernels' give-up records, both chips of a two-chip build, and what a
//! missing library, server or chip says.
//!
//! ttsim is not part of this repository: these tests need `KOMOREBI_TTSIM`, the path of a
//! single-chip Blackhole `libttsim.so` (Tenstorrent's ttsim, `make.py` builds
//! `src/_out/release_bh/libttsim.so`), and for the two-chip test a `bh_x2` build named by
//! `KOMOREBI_TTSIM_X2` or found at `../bh_x2/libttsim.so` beside it. Without them each test
//! passes after one line saying so. The Wormhole tests need a `wh` build named by
//! `KOMOREBI_TTSIM_WH` or found at `../wh/libttsim.so` beside `KOMOREBI_TTSIM`'s.

mod common;
use common::komorebi;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const SMALL: &[&str] = &[
    "--rect", "0,0,4,4", "--blocks", "4", "--pages", "2", "--window", "2", "--jobs", "2",
];

/// The library `var` names; a variable set to a path that is not a file fails the test (a
/// mistyped path would otherwise skip it as if ttsim were not there).
fn library(var: &str) -> Option<PathBuf> {
    let p = std::env::var_os(var).map(PathBuf::from)?;
    assert!(
        p.is_file(),
        "{var} is set to {}, which is not a file: give the path of a libttsim.so, or unset it \
         to skip the ttsim tests",
        p.display()
    );
    Some(p)
}

/// A test without its library passes after one line on standard error (which the test
/// harness shows, as it does not show a passing test's standard output).
fn skipped(what: &str) {
    eprintln!("skipped: {what} to run this test (Tenstorrent's ttsim; docs/ttsim.md)");
}

fn bh() -> Option<PathBuf> {
    let l = library("KOMOREBI_TTSIM");
    if l.is_none() {
        skipped("set KOMOREBI_TTSIM to a Blackhole libttsim.so");
    }
    l
}

/// `KOMOREBI_TTSIM_<VAR>`, else the build `build` beside `KOMOREBI_TTSIM`'s: in CI's layout
/// (`target/ttsim/bh/libttsim.so` beside `target/ttsim/<build>/`) or in ttsim's own
/// (`src/_out/release_bh/libttsim.so` beside `src/_out/release_<build>/`).
fn sibling(var: &str, build: &str) -> Option<PathBuf> {
    library(var).or_else(|| {
        let single = library("KOMOREBI_TTSIM")?;
        let out = single.parent()?.parent()?;
        [build.to_string(), format!("release_{build}")]
            .into_iter()
            .map(|dir| out.join(dir).join("libttsim.so"))
            .find(|p| p.is_file())
    })
}

fn bh_x2() -> Option<PathBuf> {
    let l = sibling("KOMOREBI_TTSIM_X2", "bh_x2");
    if l.is_none() {
        skipped("set KOMOREBI_TTSIM_X2 to a two-chip (bh_x2) libttsim.so");
    }
    l
}

fn wh() -> Option<PathBuf> {
    let l = sibling("KOMOREBI_TTSIM_WH", "wh");
    if l.is_none() {
        skipped("set KOMOREBI_TTSIM_WH to a Wormhole (wh) libttsim.so");
    }
    l
}

fn broadcast(device: &str, extra: &[&str]) -> (i32, Value, String) {
    broadcast_shape(device, SMALL, extra)
}

/// `broadcast` with `shape`'s flags instead of the small case's (flags given twice are refused).
fn broadcast_shape(device: &str, shape: &[&str], extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["broadcast", "--device", device, "--json"];
    args.extend_from_slice(shape);
    args.extend_from_slice(extra);
    let (code, out, err) = komorebi(&args);
    let json = serde_json::from_str(&out).unwrap_or(Value::Null);
    (code, json, err)
}

#[test]
fn the_small_case_checks_every_byte_on_ttsim_through_feeder_and_dispatcher() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    for (check, run) in [("full", None), ("none", None), ("full", Some("--feeder"))] {
        let mut extra = vec!["--check", check];
        extra.extend(run);
        let (code, v, err) = broadcast(&device, &extra);
        assert_eq!(code, 0, "--check {check} {run:?}: {err}");
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["clock"], "ttsim-steps");
        assert_eq!(v["micros"], Value::Null, "steps are no time");
        assert_eq!(v["efficiency"], Value::Null);
        assert_eq!(v["results"].as_array().unwrap().len(), 2);
        // 4x4 on a chip with nothing harvested: 4 A and 4 W broadcasts of 3 receivers, 4 blocks
        // of 2 pages of 2048 bytes, 2 jobs.
        assert_eq!(v["received_bytes"], 2 * 8 * 3 * 4 * 2 * 2048);
        let checked = if check == "full" {
            2 * 2 * 16 * 4 * 2 * 2048
        } else {
            0
        };
        assert_eq!(v["checked_bytes"], checked, "--check {check}");
        assert!(v["giveups"].as_array().unwrap().is_empty());
    }
}

#[test]
fn explore_runs_the_firmware_on_ttsim() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    // The shapes run the firmware there (ttsim runs nothing else), each case checked.
    let (code, out, err) = komorebi(&["explore", "--seeds", "2", "--device", &device, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cases"], 2, "{v}");
    assert!(v["failures"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["checked_bytes"].as_u64().unwrap() > 0, "{v}");
    // Its count is ttsim's clock steps, and says so.
    assert_eq!(v["clock"], "ttsim-steps", "{v}");
}

/// A case whose rectangle crosses a panel's edge on ttsim's grid (every column: NoC0 x 7 and 10
/// are logical columns 6 and 7) and not on the flags' (`--harvest 0x3000`) is judged on ttsim's
/// grid, where its rows are broadcasts of one core and nothing is received. Seed 777076 draws
/// `--rect 6,4,2,1 --along both`; judged on the flags' grid it failed ("received 0 of 30720"),
/// as did 38 of 300 seeds from 777000 (every one starting at column 6).
#[test]
fn explore_judges_a_case_on_ttsim_s_own_grid() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    let (code, out, err) = komorebi(&[
        "explore", "--seeds", "1", "--start", "777076", "--device", &device, "--json",
    ]);
    assert_eq!(code, 0, "{err}{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["failures"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["checked_bytes"], 122_880, "{v}");
}

/// The reports on ttsim name its clock steps where they count them: `inspect`'s JSON and its
/// picture's scale, and the run's wait line, aligned with the lines above it.
#[test]
fn reports_on_ttsim_count_steps_and_say_so() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    let shape = [
        "--rect", "0,0,2,2", "--blocks", "2", "--pages", "1", "--jobs", "1",
    ];
    let (code, out, err) = komorebi(&[&["broadcast", "--device", &device][..], &shape].concat());
    assert_eq!(code, 0, "{err}");
    let ran = out
        .lines()
        .find(|l| l.trim_start().starts_with("ran:"))
        .unwrap();
    let wait = out
        .lines()
        .find(|l| l.trim_start().starts_with("wait steps:"))
        .unwrap();
    // The values start in one column.
    let value_at = |l: &str| l.find(|c: char| c.is_ascii_digit() || c == 'A').unwrap();
    assert_eq!(value_at(wait), value_at(ran), "{out}");
    let svg = std::env::temp_dir().join(format!("komorebi-ttsim-{}.svg", std::process::id()));
    let (code, out, err) = komorebi(
        &[
            &["inspect", "--device", &device, "--json", "--picture"][..],
            &[svg.to_str().unwrap()],
            &shape,
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clock"], "ttsim-steps", "{v}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("wait steps per core"), "{picture}");
    assert!(!picture.contains("wait cycles"), "{picture}");
    std::fs::remove_file(&svg).ok();
}

/// Every job's outcome in `v`: (ok, timed out).
fn outcome(v: &Value) -> Vec<(Value, Value)> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["ok"].clone(), r["timeout"].clone()))
        .collect()
}

/// The records of `v` for logical `core`, as (where, broadcast, block, kernel).
fn records(v: &Value, core: [u64; 2]) -> Vec<(String, u64, u64, String)> {
    let mut r: Vec<_> = v["giveups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["core"] == serde_json::json!(core))
        .map(|g| {
            (
                g["where"].as_str().unwrap().to_string(),
                g["broadcast"].as_u64().unwrap(),
                g["block"].as_u64().unwrap(),
                g["kernel"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    r.sort();
    r
}

#[test]
fn each_fault_a_host_can_cause_gives_the_native_kernels_records_on_ttsim() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    // The native kernels on the simulator with nothing harvested (ttsim harvests nothing), the
    // same shape and feeder: the faulted core's first give-ups and every job's outcome match.
    // Other cores give up by timing (whose wait expires first), which ttsim does not model.
    for (fault, core) in [
        ("stall-dm:3,2", [3, 2]),
        ("stall-compute:3,2", [3, 2]),
        ("stall-sender-compute:0,1", [0, 1]),
        ("bad-words:2,2", [2, 2]),
        ("host-stop:2,3:1", [2, 3]),
    ] {
        let extra = ["--fault", fault, "--check", "none", "--feeder"];
        let (native_code, native, err) =
            broadcast("sim", &[&extra[..], &["--harvest", "0"]].concat());
        assert_eq!(native_code, 3, "{fault} native: {err}");
        let (code, on_ttsim, err) = broadcast(&device, &extra);
        assert_eq!(code, 3, "{fault} on ttsim: {err}");
        assert_eq!(outcome(&on_ttsim), outcome(&native), "{fault}");
        let (mut a, mut b) = (records(&native, core), records(&on_ttsim, core));
        if fault.starts_with("host-stop") {
            // The host writes the stop once it sees BLOCK blocks; on ttsim it looks every
            // 1000 steps, so the core may be further on: which broadcast and kernel match, the
            // block it had reached may not, and a sender may be in either of its waits (for its
            // own slot, `broadcast_free`, or in its cast, `broadcast_done`) when the stop
            // lands. A receiver waits in one place (`broadcast_valid`).
            for r in a.iter_mut().chain(b.iter_mut()) {
                r.2 = 0;
                if r.0 == "broadcast_free" || r.0 == "broadcast_done" {
                    r.0 = "a sender's wait".to_string();
                }
            }
        }
        assert!(!a.is_empty(), "{fault}: the faulted core gave up natively");
        assert_eq!(b, a, "{fault}: the faulted core's records");
    }
}

/// A host stop at block 0 of a command of no blocks lands before the core's `finish`, which
/// checks the tile's stop flag as every broadcast call does (the specification: "Every call
/// ... checks the tile's stop flag"): the stop fires, with the same records on ttsim as on the
/// simulator. Until 2026-12-07 only a wait looked at the flag, and only while its condition did
/// not hold: on ttsim that core's waits held at once, the stop was listed as never fired and
/// the run was ok, while the simulator's core stopped (decisions D58).
#[test]
fn a_host_stop_at_a_command_of_no_blocks_stops_its_core_as_on_the_simulator() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    let shape = ["--rect", "0,0,2,2", "--blocks", "0", "--jobs", "1"];
    let fault = ["--fault", "host-stop:1,1:0"];
    let (code, v, err) = broadcast_shape(&device, &shape, &fault);
    let (sim_code, sim, sim_err) =
        broadcast_shape("sim", &[&shape[..], &["--harvest", "0"]].concat(), &fault);
    assert_eq!((code, sim_code), (3, 3), "{err}{sim_err}");
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["unfired_faults"], Value::Null, "{v}");
    let records = serde_json::json!([
        {"job": 0, "core": [1, 1], "where": "broadcast_valid", "broadcast": 0, "block": 0, "kernel": "broadcast area"},
        {"job": 0, "core": [1, 1], "where": "broadcast_done", "broadcast": 1, "block": 0, "kernel": "broadcast area"},
    ]);
    assert_eq!(v["giveups"], records, "{v}");
    assert_eq!(sim["giveups"], records, "{sim}");
}

/// `bench broadcast` on ttsim counts its rows in ttsim's clock steps and says so: the column,
/// the report's `clock`, and why no row has an efficiency (not that none succeeded).
#[test]
fn bench_rows_on_ttsim_are_counted_in_steps_and_say_why_they_have_no_efficiency() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    let args = [
        "bench",
        "broadcast",
        "--device",
        &device,
        "--rect",
        "0,0,2,2",
        "--blocks",
        "2",
        "--jobs",
        "1",
        "--windows",
        "1",
        "--pages",
        "1",
    ];
    let (code, out, err) = komorebi(&args);
    assert_eq!(code, 0, "{err}");
    // Both protocols' rows, each on its own images (the handshake's carry its handler).
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].contains("  steps  "), "{out}");
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "komorebi: no mean efficiency: the rows count ttsim clock steps, which are no device time",
            "handshake: no mean efficiency: the rows count ttsim clock steps, which are no device time"
        ],
        "{out}"
    );
    let (code, out, err) = komorebi(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["clock"], "ttsim-steps", "{v}");
    for row in 0..2 {
        let r = &v["rows"][row];
        assert!(r["efficiency"].is_null() && r["ok"] == true, "{v}");
        // Nor a speedup from steps.
        assert!(r["speedup"].is_null(), "{v}");
    }
    assert_eq!(v["rows"][1]["protocol"], "handshake", "{v}");
    // ttsim's mask is its own, not the flag's default: none is claimed.
    assert!(v.get("harvest").is_none(), "{v}");
}

#[test]
fn drop_valid_and_drop_marker_are_refused_on_ttsim() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    for fault in ["drop-valid:2,2", "drop-marker:2,2"] {
        let (code, out, err) = komorebi(&[
            "broadcast",
            "--device",
            &device,
            "--fault",
            fault,
            "--jobs",
            "1",
        ]);
        assert_eq!(code, 2, "{out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("cannot drop one"), "{err}");
    }
}

/// `komorebi devices --json` over the ttsim library `lib`: each chip's row.
fn devices(lib: &std::path::Path) -> Vec<Value> {
    let device = format!("ttsim:{}", lib.display());
    let (code, out, err) = komorebi(&["devices", "--device", &device, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["devices"].as_array().unwrap().clone()
}

#[test]
fn ttsim_s_wormhole_opens_as_a_wormhole_card_does() {
    // The card's whole open sequence (`komorebi_pcie::arc::wormhole::open_card`) on ttsim's
    // `wh`, which models each step: ARC's post code, the ARC NIU, the harvested rows, the
    // tagged telemetry table (no clock limit in it: the legacy table is asked), DRAM trained,
    // ARC_GO_BUSY and GET_AICLK.
    let Some(lib) = wh() else { return };
    let chips = devices(&lib);
    assert_eq!(chips.len(), 1, "{chips:?}");
    let c = &chips[0];
    assert_eq!(c["error"], Value::Null, "{c}");
    assert_eq!(c["chip"], "wormhole", "{c}");
    assert_eq!(c["harvest"], 0, "{c}");
    assert_eq!(c["aiclk_mhz"], 1000, "{c}");
    // Raised and settled at the limit exactly: no note.
    assert_eq!(c["aiclk_note"], Value::Null, "{c}");
}

#[test]
fn both_chips_of_a_two_chip_build_are_listed_and_run_the_small_case_alone_and_together() {
    let Some(lib) = bh_x2() else { return };
    let chips = devices(&lib);
    assert_eq!(chips.len(), 2, "{chips:?}");
    for (i, c) in chips.iter().enumerate() {
        assert_eq!(c["error"], Value::Null, "{c}");
        assert_eq!(c["pci_address"], format!("0000:00:{i:02x}.0"));
        assert_eq!(c["harvest"], 0);
        let (code, run, err) = broadcast(&format!("ttsim:{}@{i}", lib.display()), &[]);
        assert_eq!(code, 0, "chip {i}: {err}");
        assert_eq!(run["ok"], true);
    }
    // Both chips in one run, one server: the jobs spread over them, every byte checked.
    let both = format!("ttsim:{}", lib.display());
    let (code, run, err) = broadcast(&both, &["--chips", "2"]);
    assert_eq!(code, 0, "--chips 2: {err}");
    assert_eq!(run["ok"], true, "{run}");
    let spread = run["chips"].as_array().unwrap();
    assert_eq!(spread.len(), 2, "{run}");
    for (i, chip) in spread.iter().enumerate() {
        assert_eq!(chip["device"], format!("{both}@{i}"));
        assert_eq!(chip["jobs"], 1, "{run}");
    }
    // Every chip's log rings, each naming its chip: a wait limit of 0 gives up on both.
    let (code, run, err) = broadcast(&both, &["--chips", "2", "--wait-limit", "0", "--log"]);
    assert_eq!(code, 3, "--log: {err}");
    for chip in [0, 1] {
        let logged = run["log"].as_array().unwrap().iter().any(|k| {
            k["chip"] == chip
                && k["lines"].as_array().unwrap().iter().any(|l| {
                    l["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(" gave up: "))
                })
        });
        assert!(logged, "chip {chip} logged no give-up: {run}");
    }
    // Three chips of a two-chip build.
    let (code, _, err) = broadcast(&both, &["--chips", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the build presents 2 chips"), "{err}");
    // A chip the build does not have.
    let (code, _, err) = broadcast(&format!("ttsim:{}@2", lib.display()), &[]);
    assert_eq!(code, 4);
    assert!(
        err.contains("has no chip @2: this build presents chips 0..=1"),
        "{err}"
    );
}

#[test]
fn a_missing_library_server_or_foreign_library_is_exit_4_with_one_line() {
    let none = komorebi(&["broadcast", "--device", "ttsim:/nonexistent/libttsim.so"]);
    assert_eq!(none.0, 4, "{none:?}");
    assert_eq!(none.2.lines().count(), 1, "{}", none.2);
    assert!(none.2.contains("no such file"), "{}", none.2);
    let dir = komorebi(&["broadcast", "--device", "ttsim:/tmp"]);
    assert_eq!(dir.0, 4, "{dir:?}");
    assert!(
        dir.2.contains("/tmp: a directory, not the library file"),
        "{}",
        dir.2
    );
    // A library that is not ttsim: the server says which symbol it lacks.
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).is_file());
    if let Some(libc) = libc {
        let (code, _, err) = komorebi(&["broadcast", "--device", &format!("ttsim:{libc}")]);
        assert_eq!(code, 4, "{err}");
        assert!(
            err.contains("has no `libttsim_init`, so it is not a libttsim"),
            "{err}"
        );
    }
    let Some(lib) = bh() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .args(["broadcast", "--device", &format!("ttsim:{}", lib.display())])
        .env(
            "KOMOREBI_TTSIM_SERVER",
            "/nonexistent/komorebi-ttsim-server",
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("cannot be started"), "{err}");
}

#[test]
fn a_stop_of_ttsim_is_a_typed_error_with_its_category_and_the_host_carries_on() {
    use komorebi_pcie::PcieError;
    use komorebi_pcie::ttsim::{TtsimCategory, TtsimProcess};
    let Some(lib) = bh() else { return };
    let server = std::path::Path::new(env!("CARGO_BIN_EXE_komorebi-ttsim-server"));
    let p = TtsimProcess::spawn(server, &lib).unwrap();
    assert_eq!(p.chips().unwrap(), [0]);
    let bar0 = {
        let lo = p.config_read32(0, 0x10).unwrap() as u64;
        let hi = p.config_read32(0, 0x14).unwrap() as u64;
        hi << 32 | (lo & !0xF)
    };
    // A read of the TLB configuration registers, which ttsim does not serve (a card does).
    let e = p.read(bar0 + 0x1FC0_0000, &mut [0; 4]).unwrap_err();
    let PcieError::TtsimStopped(stop) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        stop.category,
        Some(TtsimCategory::UnimplementedFunctionality)
    );
    assert_eq!(stop.function, "pci_mem_rd_cur");
    assert_eq!(stop.message, "bar0: offset=0x1fc00000 size=4");
    // Every later request answers the same, at once.
    assert_eq!(p.clock(10).unwrap_err(), e);
    assert_eq!(p.stopped(), Some(e));
}

/// The process ids whose parent is `parent` and whose program is `exe` (from `/proc/*/stat` and
/// `/proc/*/exe`): the host also starts short-lived children of its own (the firmware's
/// `cargo build`), which must not be taken for the server.
fn children_of(parent: u32, exe: &std::path::Path) -> Vec<u32> {
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`: comm may hold spaces, so split after its last ')'.
        let ppid: u32 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let program = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        (ppid == parent && program == exe).then_some(pid)
    })
    .collect()
}

#[test]
fn a_server_that_dies_mid_run_is_exit_4_with_one_line_through_feeder_and_dispatcher() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    for runner in [None, Some("--feeder")] {
        let mut args = vec!["broadcast", "--device", &device, "--jobs", "100000"];
        args.extend(&SMALL[..SMALL.len() - 2]);
        args.extend(runner);
        let mut child = KillOnDrop(Some(
            Command::new(env!("CARGO_BIN_EXE_komorebi"))
                .args(&args)
                .env(
                    "KOMOREBI_TTSIM_SERVER",
                    env!("CARGO_BIN_EXE_komorebi-ttsim-server"),
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        ));
        let id = child.0.as_ref().unwrap().id();
        // Once the server is up, the open (a second of AICLK wait on ttsim) and the boot are
        // over well within 6 s: the jobs are running when the server is killed.
        let server = std::path::Path::new(env!("CARGO_BIN_EXE_komorebi-ttsim-server"));
        let started = std::time::Instant::now();
        while children_of(id, server).is_empty()
            && started.elapsed() < std::time::Duration::from_secs(120)
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        std::thread::sleep(std::time::Duration::from_secs(6));
        let servers = children_of(id, server);
        assert_eq!(servers.len(), 1, "{runner:?}: the host's one server");
        // The server this test's child started, by its id.
        let killed = Command::new("kill")
            .args(["-9", &servers[0].to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "{runner:?}");
        let out = child.0.take().unwrap().wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{runner:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{runner:?}: {err}");
        assert!(
            err.contains("ttsim stopped: the ttsim server ended (signal 9)"),
            "{runner:?}: {err}"
        );
    }
}

/// A stand-in server: a shell script `body` in a directory of its own, removed (with the
/// script) when the returned guard drops.
fn fake_server(name: &str, body: &str) -> FakeServer {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!(
        "komorebi-fake-server-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    FakeServer(path)
}

/// A stand-in server's script; its directory goes when this drops.
struct FakeServer(PathBuf);

impl std::ops::Deref for FakeServer {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A child process killed (and reaped) if the test ends before it has waited for it, so a
/// failed assertion leaves no run behind.
struct KillOnDrop(Option<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `spawn()`'s error, asked again while it is "Text file busy": a test thread that forks while
/// another still holds a just-written script open for writing makes the script's exec fail with
/// ETXTBSY until that child has exec'd (the fd is close-on-exec), a known race of test programs
/// that write executables; it passes within milliseconds.
fn unless_busy(spawn: impl Fn() -> komorebi_pcie::PcieError) -> komorebi_pcie::PcieError {
    for _ in 0..100 {
        let e = spawn();
        if !e.to_string().contains("Text file busy") {
            return e;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    spawn()
}

#[test]
fn a_server_that_never_answers_is_ended_after_the_reply_wait_and_says_so() {
    use komorebi_pcie::PcieError;
    use komorebi_pcie::ttsim::TtsimProcess;
    use std::time::{Duration, Instant};
    // Needs no ttsim: the stand-in never greets; any existing file serves as the library.
    let server = fake_server("silent", "exec sleep 30");
    let start = Instant::now();
    let e = unless_busy(|| {
        TtsimProcess::spawn_waiting(&server, &server, Duration::from_millis(300)).unwrap_err()
    });
    assert!(start.elapsed() < Duration::from_secs(20), "not waited out");
    let PcieError::TtsimUnavailable { why, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(
        why.starts_with("the ttsim server answered nothing within 0.3 s, so the host ended it"),
        "{why}"
    );
}

#[test]
fn a_server_of_another_wire_version_is_refused_by_name() {
    use komorebi_pcie::PcieError;
    use komorebi_pcie::ttsim::TtsimProcess;
    let server = fake_server("old", "printf KMRBTTS1; exec sleep 30");
    let e = unless_busy(|| TtsimProcess::spawn(&server, &server).unwrap_err());
    let PcieError::TtsimUnavailable { why, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(
        why.contains("speaks wire version 1, this program 2: it was built from other sources"),
        "{why}"
    );
}

#[test]
fn the_firmware_logs_are_read_and_decoded_on_ttsim() {
    let Some(lib) = bh() else { return };
    let device = format!("ttsim:{}", lib.display());
    let extra = [
        "--check",
        "none",
        "--fault",
        "stall-dm:1,0:2",
        "--log",
        "--log-follow",
    ];
    let (code, v, err) = broadcast(&device, &extra);
    assert_eq!(code, 3, "{err}");
    // `--log-follow`: the faulted first job's lines on stderr as the run went.
    assert!(
        err.lines()
            .any(|l| l.starts_with("job 0: (1,0) ") && l.contains("command 1 gave up: ")),
        "{err}"
    );
    // Every record the host read is a decoded warning of its tile, as on the simulated card.
    let logs = v["log"].as_array().expect("--log asked for");
    for g in v["giveups"].as_array().unwrap() {
        let want = format!(
            "command 1 gave up: {} (broadcast {}, block {})",
            g["where"].as_str().unwrap(),
            g["broadcast"],
            g["block"]
        );
        let found = logs
            .iter()
            .filter(|l| l["tile"] == g["core"])
            .flat_map(|l| l["lines"].as_array().unwrap())
            .any(|line| line["message"] == want.as_str() && line["level"] == "warn");
        assert!(found, "{}: no line {want:?} in {logs:?}", g["core"]);
    }
}

/// `komorebi log`'s path: a second host opens the chip without loading or starting anything
/// (`attach_ttsim`, what `attach_card` does to a card) after a run on the same ttsim server, and
/// reads every line the run's own `--log` read, the faulted cores' give-ups among them.
#[test]
fn a_host_that_starts_nothing_reads_the_rings_a_run_left() {
    use komorebi::app::broadcast::{BroadcastConfig, DeviceChoice, FaultSpec, run_session_on};
    use komorebi::host::backend::{Backend, Exec};
    let Some(lib) = bh() else { return };
    let server = komorebi::host::backend::ttsim_process(&lib).unwrap();
    let cfg = BroadcastConfig {
        rect: komorebi_hal::LogicalRect::new(0, 0, 4, 4),
        blocks: 4,
        pages: 2,
        window: 2,
        jobs: 1,
        check: komorebi::app::broadcast::Check::None,
        faults: vec!["stall-dm:1,0:2".parse::<FaultSpec>().unwrap()],
        log: Some(PathBuf::from("-")),
        device: DeviceChoice::Ttsim {
            library: lib.clone(),
            chip: 0,
        },
        exec: Exec::Firmware,
        ..BroadcastConfig::default()
    };
    let backend = Backend::Ttsim {
        library: lib.clone(),
        chip: 0,
        firmware: None,
        handler: Default::default(),
        server: Some(server.clone()),
    };
    let (summary, session) = run_session_on(&cfg, backend, |_| {}).unwrap();
    let run = summary.log.clone().expect("--log asked for");
    assert!(
        run.iter()
            .any(|k| k.lines.iter().any(|l| l.message.contains("gave up"))),
        "the faulted run logged no give-up: {run:?}"
    );
    drop(session);
    let chip = komorebi::host::pcie::attach_ttsim(server, 0).unwrap();
    let read = komorebi::log_report::read_all(&chip, "ttsim".into(), None, Some(cfg.rect)).unwrap();
    assert_eq!(read.tiles, 16);
    assert_eq!(read.note, None);
    for k in &run {
        let again = read
            .log
            .iter()
            .find(|r| r.tile == k.tile && r.kernel == k.kernel)
            .unwrap_or_else(|| panic!("{:?} {}: not read again: {read:?}", k.tile, k.kernel));
        assert_eq!(again.error, k.error);
        assert!(
            again.lines.starts_with(&k.lines),
            "{:?} {}: {:?} then {:?}",
            k.tile,
            k.kernel,
            k.lines,
            again.lines
        );
    }
    // A chip no firmware ran on (a server of its own): one note, not an error per kernel; ttsim
    // harvests nothing, so every one of the 14 x 10 Tensix tiles is read.
    let chip = komorebi::host::pcie::attach_ttsim(
        komorebi::host::backend::ttsim_process(&lib).unwrap(),
        0,
    )
    .unwrap();
    let fresh = komorebi::log_report::read_all(&chip, "ttsim".into(), None, None).unwrap();
    assert_eq!(fresh.tiles, 140);
    assert!(
        fresh
            .note
            .as_deref()
            .is_some_and(|n| n.contains("no ring holds the log magic")),
        "a chip no firmware ran on: {fresh:?}"
    );
}

#[test]
fn the_wormhole_firmware_checks_every_byte_on_ttsim_s_wormhole_on_8x10_and_4x4() {
    let Some(lib) = wh() else { return };
    let device = format!("ttsim:{}", lib.display());
    // The whole grid (8 columns x 10 rows: 16 A broadcasts of 4 and 16 W broadcasts of 5, the
    // Ethernet row between rows 5 and 7 splitting each column) and the small shape, through
    // the dispatcher and the feeder.
    for (rect, run, a, w, receivers) in [
        ("0,0,8,10", None, 20, 16, (3, 4)),
        ("0,0,4,4", Some("--feeder"), 4, 4, (3, 3)),
    ] {
        let shape = [
            "--rect", rect, "--blocks", "4", "--pages", "2", "--window", "2", "--jobs", "2",
        ];
        let mut extra = vec!["--chip", "wormhole"];
        extra.extend(run);
        let (code, v, err) = broadcast_shape(&device, &shape, &extra);
        assert_eq!(code, 0, "{rect} {run:?}: {err}");
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["clock"], "ttsim-steps");
        assert_eq!(v["results"].as_array().unwrap().len(), 2);
        // Per job: A's broadcasts to `receivers.0` cores each, W's to `receivers.1`, 4 blocks of
        // 2 pages of 2048 bytes; 2 jobs.
        let per_block = 2 * 2048;
        let bytes = 2 * 4 * per_block * (a * receivers.0 + w * receivers.1);
        assert_eq!(v["received_bytes"], bytes, "{rect}: {v}");
        assert!(v["checked_bytes"].as_u64().unwrap() > 0, "{v}");
        assert_eq!(v["giveups"].as_array().unwrap().len(), 0, "{v}");
    }
}

#[test]
fn the_same_fault_gives_the_same_give_ups_on_both_chips_firmware() {
    let (Some(bh), Some(wh)) = (bh(), wh()) else {
        return;
    };
    // A 4x4 rectangle lays out alike on both chips (rows inside one panel, columns inside one
    // run of rows): the protocol, the same firmware source and the same fault give the same
    // give-up records, core for core.
    for fault in ["stall-dm:1,0:1", "bad-words:2,1"] {
        let shape = [
            "--rect", "0,0,4,4", "--blocks", "3", "--pages", "2", "--jobs", "2",
        ];
        let extra = ["--fault", fault, "--wait-limit", "200000"];
        let (bh_code, on_bh, err) =
            broadcast_shape(&format!("ttsim:{}", bh.display()), &shape, &extra);
        assert_eq!(bh_code, 3, "{fault} on Blackhole: {err}");
        let wh_extra = [&extra[..], &["--chip", "wormhole"]].concat();
        let (wh_code, on_wh, err) =
            broadcast_shape(&format!("ttsim:{}", wh.display()), &shape, &wh_extra);
        assert_eq!(wh_code, 3, "{fault} on Wormhole: {err}");
        let all = |v: &Value| {
            let mut r: Vec<_> = (0..4)
                .flat_map(|x| (0..4).map(move |y| [x, y]))
                .flat_map(|core| records(v, core).into_iter().map(move |r| (core, r)))
                .collect();
            r.sort();
            r
        };
        assert!(!all(&on_bh).is_empty(), "{fault}: give-ups on Blackhole");
        assert_eq!(all(&on_wh), all(&on_bh), "{fault}: the records");
    }
}

#[test]
fn a_chip_flag_that_is_not_the_device_s_is_refused_with_the_device_s_chip() {
    let Some(lib) = wh() else { return };
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--device",
        &format!("ttsim:{}", lib.display()),
        "--jobs",
        "1",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--chip: blackhole: the device is a Wormhole B0 (allowed: --chip wormhole)"),
        "{err}"
    );
}

#[test]
fn on_wormhole_the_faulted_core_gives_up_as_the_simulator_s_native_kernels_do() {
    let Some(lib) = wh() else { return };
    let device = format!("ttsim:{}", lib.display());
    // The native kernels on the simulated Wormhole and the firmware on ttsim's: the same
    // shape, feeder and fault give the faulted core the same records and every job the same
    // outcome (other cores give up by which wait expires first, which ttsim does not time).
    for (fault, core) in [("stall-dm:3,2", [3, 2]), ("bad-words:2,2", [2, 2])] {
        let extra = [
            "--chip", "wormhole", "--fault", fault, "--check", "none", "--feeder",
        ];
        let (native_code, native, err) = broadcast("sim", &extra);
        assert_eq!(native_code, 3, "{fault} native: {err}");
        let (code, on_ttsim, err) = broadcast(&device, &extra);
        assert_eq!(code, 3, "{fault} on ttsim: {err}");
        assert_eq!(outcome(&on_ttsim), outcome(&native), "{fault}");
        let native_records = records(&native, core);
        assert!(
            !native_records.is_empty(),
            "{fault}: the faulted core gave up natively"
        );
        assert_eq!(records(&on_ttsim, core), native_records, "{fault}");
    }
}

/// Refused as a flag before ttsim starts (exit 2, naming `--firmware` and both chips), as on
/// every device (D60); the loader's own check stays for a caller's `Backend`.
#[test]
fn a_blackhole_image_on_a_wormhole_is_refused_before_the_device_with_both_chips_named() {
    let Some(lib) = wh() else { return };
    let blackhole = komorebi::host::backend::built_firmware().unwrap();
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--chip",
        "wormhole",
        "--device",
        &format!("ttsim:{}", lib.display()),
        "--firmware",
        &blackhole.display().to_string(),
        "--jobs",
        "1",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: --firmware: ")
            && err.contains("reader is built for Blackhole, and the run is on a Wormhole B0"),
        "{err}"
    );
}
