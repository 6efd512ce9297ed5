//! The firmware's logs (`komorebi broadcast --log`): each kernel's L1 log ring, read after the run
//! and decoded with defmt-decoder against the firmware's ELF files. A give-up is logged as its
//! record says it; a full ring counts what it dropped; a ring that is not what a kernel writes is
//! an error naming its tile, never a panic.
//!
//! The tests build the firmware (`examples/firmware`, which needs the riscv32im target), and one
//! of them a second time at debug level, into `target/firmware-debug-log`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use komorebi::app::broadcast::{self, BroadcastConfig, Check, DeviceChoice, FaultSpec};
use komorebi::host::backend::{Exec, built_firmware};
use komorebi::host::log::{KernelLog, LogError, Ring, Tables};
use komorebi_hal::LogicalRect;
use komorebi_kernel::abi::{LOG_DATA_BYTES, LOG_MAGIC};

/// The firmware ELF directory (its default build: logging at warn level), built once.
fn firmware() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| built_firmware().unwrap()).clone()
}

fn config(firmware: PathBuf) -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 4, 4),
        blocks: 4,
        pages: 2,
        window: 2,
        jobs: 1,
        check: Check::None,
        device: DeviceChoice::PcieSim,
        exec: Exec::Firmware,
        firmware: Some(firmware),
        log: Some("-".into()),
        ..BroadcastConfig::default()
    }
}

fn lines_of(logs: &[KernelLog], tile: [u8; 2]) -> Vec<String> {
    logs.iter()
        .filter(|l| l.tile == tile)
        .flat_map(|l| l.lines.iter().map(|x| x.message.clone()))
        .collect()
}

#[test]
fn every_give_up_of_a_stalled_run_is_logged_as_its_record_says() {
    let cfg = BroadcastConfig {
        faults: vec!["stall-dm:1,0:2".parse::<FaultSpec>().unwrap()],
        ..config(firmware())
    };
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert_eq!(s.exit_code(), 3, "{s}");
    let logs = s.log.as_ref().expect("--log asked for");
    assert!(!s.giveups.is_empty(), "{s}");
    // The only job is command 1. Every record the host read (the broadcast areas' and the
    // kernels' own) is a warning line of its tile: what, broadcast, block.
    for g in &s.giveups {
        let want = format!(
            "command 1 gave up: {} (broadcast {}, block {})",
            g.place, g.broadcast, g.block
        );
        let lines = lines_of(logs, g.core);
        assert!(
            lines.contains(&want),
            "core {:?}: no line {want:?} among {lines:?}",
            g.core
        );
    }
    // The sender of the stalled core's row broadcast, among them: its wait for markers.
    let sender = s
        .giveups
        .iter()
        .find(|g| g.place == "broadcast_done")
        .expect("a sender gives up waiting for the stalled receiver's marker");
    let line = logs
        .iter()
        .filter(|l| l.tile == sender.core)
        .flat_map(|l| &l.lines)
        .find(|l| l.message.contains("broadcast_done"))
        .unwrap();
    assert_eq!(line.level, "warn");
    assert!(line.cycle.is_some_and(|c| c > 0), "{line:?}");
    // Nothing else at the default level: give-ups only (the stalled core's own data-movement
    // kernels log theirs too, which no area records), no boot or command lines, nothing lost.
    for l in logs {
        assert!(l.lost == 0 && l.error.is_none(), "{l}");
        for line in &l.lines {
            assert_eq!(line.level, "warn", "{l}");
            assert!(line.message.starts_with("command 1 gave up: "), "{l}");
        }
    }
    // One chip: no chip named.
    assert!(logs.iter().all(|l| l.chip.is_none()));
    // The text report prints them.
    let text = s.to_string();
    assert!(text.contains("kernel log:"), "{text}");
    assert!(
        text.contains("warn  command 1 gave up: broadcast_done"),
        "{text}"
    );
}

#[test]
fn every_chip_s_logs_are_read_each_naming_its_chip_and_holding_its_jobs_give_ups() {
    let file = std::env::temp_dir().join(format!("komorebi-log-chips-{}.txt", std::process::id()));
    for exec in [Exec::Firmware, Exec::Native] {
        let cfg = BroadcastConfig {
            chips: 2,
            jobs: 4,
            // Every wait that does not hold at once gives up: every job, on both chips.
            wait_limit: Some(0),
            exec,
            log: Some(file.clone()),
            ..config(firmware())
        };
        let s = broadcast::run_dispatched(
            &cfg,
            &komorebi::dispatch::DispatchConfig::default(),
            &|_| {},
        )
        .unwrap();
        assert_eq!(s.exit_code(), 3, "{exec:?}: {s}");
        let logs = s.log.as_ref().expect("--log asked for");
        for chip in [0, 1] {
            assert!(
                logs.iter()
                    .any(|l| l.chip == Some(chip) && !l.lines.is_empty()),
                "{exec:?}: nothing logged on chip {chip}"
            );
        }
        // Each give-up is a line of its job's chip and tile (the command's number is its
        // chip's own, so only what, broadcast and block are compared).
        for g in &s.giveups {
            let chip = s.results[g.job as usize].chip;
            let want = format!(
                " gave up: {} (broadcast {}, block {})",
                g.place, g.broadcast, g.block
            );
            assert!(
                logs.iter()
                    .filter(|l| l.chip == chip && l.tile == g.core)
                    .flat_map(|l| &l.lines)
                    .any(|l| l.message.ends_with(&want)),
                "{exec:?}: job {} chip {chip:?} core {:?}: no line ending {want:?}",
                g.job,
                g.core
            );
        }
        // FILE holds every chip's lines, each naming its chip.
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: usize = logs.iter().map(|l| l.lines.len()).sum();
        assert_eq!(text.lines().count(), lines, "{exec:?}");
        for chip in [0, 1] {
            assert!(
                text.lines()
                    .any(|l| l.starts_with(&format!("chip {chip} ("))),
                "{exec:?}: {text}"
            );
        }
        assert!(text.lines().all(|l| l.starts_with("chip ")), "{exec:?}");
        assert_eq!(s.log_file.as_deref(), Some(file.as_path()));
    }
    // One chip through the dispatcher: no chip named, in the logs or in FILE.
    let cfg = BroadcastConfig {
        jobs: 2,
        wait_limit: Some(0),
        log: Some(file.clone()),
        ..config(firmware())
    };
    let s = broadcast::run_dispatched(
        &cfg,
        &komorebi::dispatch::DispatchConfig::default(),
        &|_| {},
    )
    .unwrap();
    let logs = s.log.as_ref().expect("--log asked for");
    assert!(
        !logs.is_empty() && logs.iter().all(|l| l.chip.is_none()),
        "{s}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.is_empty() && text.lines().all(|l| l.starts_with('(')),
        "{text}"
    );
    let _ = std::fs::remove_file(&file);
}

/// `komorebi log`'s reading (`log_report::read_all`) of a device after a run: the lines the
/// run's own `--log` read, for the rectangle asked, and a note rather than an error per kernel
/// where no ring was ever set up. (On a card it opens the device without starting anything;
/// `tests/ttsim.rs` runs that path on ttsim.)
#[test]
fn the_rings_a_run_left_read_again_as_komorebi_log_reads_them() {
    let cfg = BroadcastConfig {
        faults: vec!["stall-dm:1,0:2".parse::<FaultSpec>().unwrap()],
        ..config(firmware())
    };
    let (s, mut session) = broadcast::run_session(&cfg, |_| {}).unwrap();
    let run = s.log.clone().expect("--log asked for");
    assert!(!run.is_empty());
    let read = komorebi::log_report::read_all(
        session.device(),
        "pcie-sim".into(),
        Some(&firmware()),
        Some(cfg.rect),
    )
    .unwrap();
    assert_eq!(
        (read.tiles, read.chip, read.note.as_deref()),
        (16, "blackhole", None)
    );
    assert_eq!(read.log, run);
    // The whole grid: the run's boot set every tile's rings up, the tiles outside the rectangle
    // logged nothing.
    let all = komorebi::log_report::read_all(
        session.device(),
        "pcie-sim".into(),
        Some(&firmware()),
        None,
    )
    .unwrap();
    assert_eq!((all.tiles, all.log.len()), (120, run.len()));
    // A rectangle outside the grid is a flag error (exit 2).
    let e = komorebi::log_report::read_all(
        session.device(),
        "pcie-sim".into(),
        Some(&firmware()),
        Some(LogicalRect::new(10, 0, 3, 1)),
    )
    .unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("12 x 10"), "{e}");
    // Rings no firmware set up (zeroed here as a card's reset leaves them): one note.
    for y in 0..10 {
        for x in 0..12 {
            let noc0 = session.noc0(komorebi_hal::LogicalXy::new(x, y)).unwrap();
            for role in komorebi_hal::Role::ALL {
                let ring = komorebi_kernel::abi::log_ring(role);
                session.device().write_l1(noc0, ring, &[0; 16]).unwrap();
            }
        }
    }
    let none = komorebi::log_report::read_all(
        session.device(),
        "pcie-sim".into(),
        Some(&firmware()),
        None,
    )
    .unwrap();
    assert!(none.log.is_empty(), "{none:?}");
    assert!(
        none.note
            .as_deref()
            .is_some_and(|n| n.contains("no ring holds the log magic")),
        "{none:?}"
    );
    assert!(
        none.to_string().contains("no ring holds the log magic"),
        "{none}"
    );
}

/// `--log-follow`: the firmware built at debug level logs each command's start and end, so every
/// job has lines of its own. Each line of the run's final log is handed on once, after the job at
/// whose end it was first read, which is exactly its own job's (job `j` is command `j + 1`),
/// through the feeder and the dispatcher alike.
#[test]
fn log_follow_hands_each_line_on_once_after_its_job() {
    use std::sync::{Arc, Mutex};
    type Handed = Vec<(u32, [u8; 2], &'static str, String)>;
    for dispatched in [false, true] {
        let got: Arc<Mutex<Handed>> = Arc::default();
        let to = got.clone();
        let sink = broadcast::LogFollow::new(move |job, logs| {
            let mut to = to.lock().unwrap();
            for k in logs {
                assert!(k.error.is_none() && k.lost == 0, "{k}");
                for l in &k.lines {
                    to.push((job, k.tile, k.kernel, l.message.clone()));
                }
            }
        });
        let cfg = BroadcastConfig {
            jobs: 3,
            log_follow: Some(sink),
            ..config(debug_firmware())
        };
        let s = if dispatched {
            broadcast::run_dispatched(
                &cfg,
                &komorebi::dispatch::DispatchConfig::default(),
                &|_| {},
            )
        } else {
            broadcast::run(&cfg, |_| {})
        }
        .unwrap();
        assert_eq!(s.exit_code(), 0, "{s}");
        let handed = got.lock().unwrap().clone();
        let mut all: Vec<_> = s
            .log
            .as_ref()
            .unwrap()
            .iter()
            .flat_map(|k| {
                k.lines
                    .iter()
                    .map(|l| (k.tile, k.kernel, l.message.clone()))
            })
            .collect();
        let mut seen: Vec<_> = handed
            .iter()
            .map(|(_, t, k, m)| (*t, *k, m.clone()))
            .collect();
        all.sort();
        seen.sort();
        assert_eq!(seen, all, "dispatched {dispatched}: every line once");
        let mut commands = 0;
        for (job, tile, kernel, m) in &handed {
            let Some(n) = m
                .strip_prefix("command ")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            commands += 1;
            // Through the dispatcher too: each job is one exclusive command, and the next is
            // posted only after this one's end was handled (its logs read).
            assert_eq!(
                n,
                job + 1,
                "dispatched {dispatched}: {tile:?} {kernel}: {m:?} after job {job}"
            );
        }
        // Three commands, a start and an end line from each of 16 tiles' three kernels.
        assert_eq!(commands, 3 * 2 * 16 * 3, "dispatched {dispatched}");
    }
}

/// The small firmware shape the CLI tests run (`--check none`, JSON), after the command.
const CLI_SHAPE: &[&str] = &[
    "--device", "pcie-sim", "--exec", "firmware", "--rect", "0,0,4,4", "--blocks", "4", "--pages",
    "2", "--check", "none", "--json",
];

/// `komorebi COMMAND` on [`CLI_SHAPE`] with the built firmware and `extra`: exit code, stderr.
fn cli(command: &str, extra: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .arg(command)
        .args(CLI_SHAPE)
        .arg("--firmware")
        .arg(firmware())
        .args(extra)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn the_cli_prints_followed_lines_on_stderr_as_the_run_goes_and_covers_one_chip() {
    let fault = ["--fault", "stall-dm:1,0:2", "--log-follow"];
    let (code, err) = cli("broadcast", &[&["--jobs", "2"][..], &fault].concat());
    assert_eq!(code, Some(3), "{err}");
    // The stalled core's own data-movement kernels, among the first job's lines.
    assert!(
        err.lines().any(|l| l.starts_with("job 0: (1,0) writer")
            && l.contains("warn  command 1 gave up: broadcast_valid")),
        "{err}"
    );
    assert!(err.lines().all(|l| l.starts_with("job 0: ")), "{err}");
    let (code, err) = cli(
        "broadcast",
        &["--jobs", "2", "--log-follow", "--chips", "2"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--log-follow covers one chip"), "{err}");
    // `inspect` follows the same way (its run is the feeder's).
    let (code, err) = cli("inspect", &[&["--jobs", "1"][..], &fault].concat());
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("job 0: (1,0) writer") && l.contains("gave up")),
        "{err}"
    );
}

#[test]
fn komorebi_log_refuses_a_simulated_device_and_names_a_card_it_cannot_open() {
    for (device, code, says) in [
        ("pcie-sim", 2, "end with the run that made them"),
        ("sim", 2, "broadcast --log"),
        (
            "/nonexistent/tenstorrent/9",
            4,
            "/nonexistent/tenstorrent/9",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
            .args(["log", "--device", device])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(code), "{device}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: ") && err.contains(says),
            "{device}: {err}"
        );
    }
}

/// The firmware built at debug level (each command's start and end logged), once, into
/// `target/firmware-debug-log`.
fn debug_firmware() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/firmware-debug-log");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let built = Command::new(cargo)
            .args(["build", "--release", "--quiet"])
            .current_dir(root.join("examples/firmware"))
            .env("DEFMT_LOG", "debug")
            .env("CARGO_TARGET_DIR", &dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .status()
            .unwrap();
        assert!(built.success());
        dir.join("riscv32im-unknown-none-elf/release")
    })
    .clone()
}

#[test]
fn a_full_ring_keeps_its_first_lines_and_counts_the_ones_it_dropped() {
    let jobs = 80;
    let cfg = BroadcastConfig {
        rect: LogicalRect::new(0, 0, 2, 2),
        blocks: 2,
        pages: 1,
        jobs,
        ..config(debug_firmware())
    };
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.ok, "{s}");
    let logs = s.log.as_ref().unwrap();
    assert_eq!(logs.len(), 12, "every kernel of the 2x2 rectangle logs");
    for l in logs {
        assert!(l.error.is_none(), "{l}");
        // Boot, then each command's start and end: more than the ring holds.
        let written = 1 + 2 * jobs;
        assert!(l.lost > 0, "{l}");
        assert_eq!(l.lines.len() as u32 + l.lost, written, "{l}");
        let [x, y] = l.tile;
        assert_eq!(
            l.lines[0].message,
            format!(
                "{} up on tile ({x},{y}): harvest mask 0x3000, ABI version {}",
                l.kernel,
                komorebi_kernel::abi::ABI_VERSION
            ),
            "{l}"
        );
        // The first lines, in order: command n started, command n done.
        for (i, line) in l.lines[1..].iter().enumerate() {
            let n = i / 2 + 1;
            let want = if i % 2 == 0 {
                format!("command {n} (handler 1) started")
            } else {
                format!("command {n} done")
            };
            assert!(line.message.starts_with(&want), "{l}");
            assert_eq!(line.level, "debug");
        }
        assert!(
            l.to_string()
                .contains(&format!("{} later lines lost", l.lost))
        );
    }
}

#[test]
fn a_ring_that_is_not_what_a_kernel_writes_is_an_error_not_a_panic() {
    let tables = Tables::from_dir(&firmware()).unwrap();
    let table = |_| tables_reader(&tables);
    let empty = Ring {
        magic: LOG_MAGIC,
        frames: 0,
        bytes: 0,
        lost: 0,
        data: vec![0; LOG_DATA_BYTES as usize],
    };
    assert_eq!(empty.decode(table(())).unwrap(), vec![]);
    let cases = [
        (
            Ring {
                magic: 0,
                ..empty.clone()
            },
            "not the log magic",
        ),
        (
            Ring {
                bytes: LOG_DATA_BYTES + 1,
                ..empty.clone()
            },
            "more than the 1264 of its data (allowed: 0 to 1264)",
        ),
        (
            // Fewer bytes read than the ring holds: the message counts those.
            Ring {
                bytes: 100,
                data: vec![0; 10],
                ..empty.clone()
            },
            "counts 100 bytes of frames, more than the 10 of the data read (allowed: 0 to 10)",
        ),
        (
            Ring {
                frames: 3,
                bytes: 2,
                ..empty.clone()
            },
            "a frame takes more than one",
        ),
        (
            Ring {
                frames: 1,
                bytes: 16,
                data: vec![0xFF; LOG_DATA_BYTES as usize],
                ..empty.clone()
            },
            "does not decode",
        ),
        (
            Ring {
                frames: 2,
                bytes: 0,
                ..empty.clone()
            },
            "a frame takes more than one",
        ),
        // Counted bytes that are no whole frame: a kernel counts whole frames only.
        (
            Ring {
                frames: 0,
                bytes: 1,
                ..empty.clone()
            },
            "its last 1 of 1 counted bytes are no whole frame (after 0 frames)",
        ),
    ];
    for (ring, why) in cases {
        let err = ring.decode(table(())).unwrap_err();
        assert!(err.contains(why), "{err:?} should say {why:?}");
    }
    let e = LogError::Corrupt {
        tile: [3, 2],
        kernel: "writer",
        why: "x".into(),
    };
    assert_eq!(
        e.to_string(),
        "the writer log ring of tile (3,2) is corrupt: x"
    );
}

/// The reader's table (any kernel's would do for rings of garbage).
fn tables_reader(tables: &Tables) -> &defmt_decoder::Table {
    tables.get(komorebi_hal::Role::Reader)
}

/// `komorebi broadcast --log --json` with `flags`, `DEFMT_LOG=debug`: every line of the
/// rectangle but the firmware's boot lines (the native kernels do not boot), as (tile, kernel,
/// level, message).
fn lines_at_debug(flags: &[&str]) -> Vec<(Value, String, String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .args(["broadcast", "--device", "pcie-sim", "--log", "--json"])
        .args(flags)
        .env("DEFMT_LOG", "debug")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let mut lines = Vec::new();
    for k in v["log"].as_array().unwrap() {
        for l in k["lines"].as_array().unwrap() {
            let message = l["message"].as_str().unwrap().to_string();
            if !message.contains(" up on tile ") {
                lines.push((
                    k["tile"].clone(),
                    k["kernel"].as_str().unwrap().to_string(),
                    l["level"].as_str().unwrap().to_string(),
                    message,
                ));
            }
        }
    }
    lines
}

#[test]
fn the_native_kernels_log_the_firmware_s_lines_word_for_word() {
    let dir = debug_firmware();
    let dir = dir.to_str().unwrap();
    let shape = [
        "--rect", "0,0,2,2", "--blocks", "2", "--pages", "1", "--jobs", "2", "--check", "none",
    ];
    let firmware =
        lines_at_debug(&[&shape[..], &["--exec", "firmware", "--firmware", dir]].concat());
    let native = lines_at_debug(&[&shape[..], &["--exec", "native"]].concat());
    // 4 tiles x 3 kernels x 2 commands, a start and an end each.
    assert_eq!(firmware.len(), 48, "{firmware:?}");
    assert_eq!(native, firmware);
    // A refused program: the faulted core's lines are the same too (the other cores give up by
    // timing, which differs between the two).
    let fault = ["--fault", "bad-words:1,1"];
    let on = |lines: Vec<(Value, String, String, String)>| -> Vec<_> {
        lines
            .into_iter()
            .filter(|l| l.0 == serde_json::json!([1, 1]))
            .collect()
    };
    let firmware = on(lines_at_debug(
        &[
            &shape[..],
            &fault,
            &["--exec", "firmware", "--firmware", dir],
        ]
        .concat(),
    ));
    let native = on(lines_at_debug(
        &[&shape[..], &fault, &["--exec", "native"]].concat(),
    ));
    assert!(
        firmware
            .iter()
            .any(|l| l.3 == "command 1 gave up: broadcast_begin (broadcast 0, block 0)"),
        "{firmware:?}"
    );
    assert_eq!(native, firmware);
}

/// The native kernels' lines are kept at the level the report shows, as they are logged: the
/// lines below it (each command's start and end at debug) are not held for the whole run.
#[test]
fn the_native_kernels_lines_below_the_level_are_not_kept() {
    let level = komorebi::host::log::level_from_env();
    let cfg = BroadcastConfig {
        exec: Exec::Native,
        firmware: None,
        jobs: 2,
        faults: vec!["stall-dm:1,0:2".parse::<FaultSpec>().unwrap()],
        ..config(firmware())
    };
    let (summary, mut session) = broadcast::run_session(&cfg, |_| {}).unwrap();
    assert_eq!(summary.exit_code(), 3, "{summary}");
    let kept = session.device().simulator().unwrap().kernel_logs();
    // The stalled core's give-ups, at warn.
    assert!(kept.iter().any(|l| l.level == log::Level::Warn), "{kept:?}");
    assert!(kept.iter().all(|l| l.level <= level), "{level}: {kept:?}");
    // Without --log or --log-follow, nothing.
    let cfg = BroadcastConfig { log: None, ..cfg };
    let (_, mut session) = broadcast::run_session(&cfg, |_| {}).unwrap();
    assert!(
        session
            .device()
            .simulator()
            .unwrap()
            .kernel_logs()
            .is_empty()
    );
}

/// `--log-follow` on the native kernels, without `--log`: each job's new lines on stderr, every
/// line once (the simulator's lines are read from where the last job's read stopped), the same
/// lines `--log` gives at the end.
#[test]
fn the_native_kernels_are_followed_without_log_and_each_line_once() {
    let shape = [
        "broadcast",
        "--device",
        "sim",
        "--rect",
        "0,0,2,2",
        "--blocks",
        "2",
        "--pages",
        "1",
        "--jobs",
        "3",
        "--check",
        "none",
    ];
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
            .args(shape)
            .args(extra)
            .env("DEFMT_LOG", "debug")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let followed = |err: &str| -> Vec<String> {
        let mut lines: Vec<String> = err
            .lines()
            .filter_map(|l| l.strip_prefix("job "))
            .filter_map(|l| l.split_once(": ").map(|(_, rest)| rest.to_string()))
            .collect();
        lines.sort();
        lines
    };
    let (_, alone) = run(&["--log-follow"]);
    // 4 tiles x 3 kernels x 3 commands, a start and an end each.
    assert_eq!(followed(&alone).len(), 72, "{alone}");
    let (out, err) = run(&["--log-follow", "--log", "--json"]);
    assert_eq!(followed(&err), followed(&alone));
    let v: Value = serde_json::from_str(&out).unwrap();
    let logged: usize = v["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["lines"].as_array().unwrap().len())
        .sum();
    assert_eq!(logged, 72, "{v}");
}

/// Images whose defmt tables cannot be read (here their `.defmt` section renamed, as a strip
/// would remove it) are refused with `--log` or `--log-follow` by the flags' checks, before the
/// run, not after it with the run's report lost.
#[test]
fn images_without_a_defmt_table_are_refused_before_the_run() {
    let dir = std::env::temp_dir().join(format!("komorebi-nolog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for role in komorebi_hal::Role::ALL {
        let bytes = std::fs::read(firmware().join(role.name())).unwrap();
        let (from, to) = (b".defmt\0", b".xefmt\0");
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("a .defmt section name");
        let mut renamed = bytes.clone();
        renamed[at..at + to.len()].copy_from_slice(to);
        std::fs::write(dir.join(role.name()), renamed).unwrap();
    }
    let cfg = BroadcastConfig {
        firmware: Some(dir.clone()),
        ..config(firmware())
    };
    let follow = BroadcastConfig {
        log: None,
        log_follow: Some(broadcast::LogFollow::new(|_, _| {})),
        ..cfg.clone()
    };
    for cfg in [cfg.clone(), follow] {
        let e = cfg.check_flags().unwrap_err().to_string();
        assert!(
            e.starts_with("--log: ") && e.contains(&format!("{}", dir.join("reader").display())),
            "{e}"
        );
    }
    // Without either flag the same images run.
    let plain = BroadcastConfig { log: None, ..cfg };
    plain.check_flags().unwrap();
    std::fs::remove_dir_all(&dir).ok();
}
