//! The `komorebi` binary: outputs, JSON shapes, and exit code 2 with a one-line message for
//! every kind of bad argument.

use std::process::Command;

mod common;
use common::{broadcast_json, komorebi};

#[test]
fn layout_json_lists_every_broadcast_with_its_corners() {
    let (code, out, err) = komorebi(&[
        "layout",
        "--harvest",
        "0x3000",
        "--rect",
        "0,0,12,10",
        "--along",
        "column",
        "--noc",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // What start and end are the coordinates of is in the JSON itself.
    assert_eq!(
        (&v["chip"], &v["along"], &v["noc"]),
        (
            &serde_json::json!("blackhole"),
            &serde_json::json!("column"),
            &serde_json::json!(1)
        )
    );
    assert_eq!(
        v["noc0_x"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16])
    );
    assert_eq!(v["panels"], serde_json::json!([[0, 6], [6, 6]]));
    let b = v["broadcasts"].as_array().unwrap();
    assert_eq!(b.len(), 12);
    // Column 0 on NoC1: sender at the bottom (logical row 9, NoC0 (1, 11) = NoC1 (15, 0)).
    assert_eq!(b[0]["cores"][0], serde_json::json!([0, 9]));
    assert_eq!(b[0]["noc0"][0], serde_json::json!([1, 11]));
    assert_eq!(b[0]["start"], serde_json::json!([15, 1]));
    assert_eq!(b[0]["end"], serde_json::json!([15, 9]));
}

#[test]
fn row_layouts_split_at_panels() {
    let (code, out, _) = komorebi(&[
        "layout",
        "--harvest",
        "0x10",
        "--rect",
        "0,0,13,1",
        "--along",
        "row",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sizes: Vec<usize> = v["broadcasts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["cores"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![2, 4, 7]);
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_the_argument() {
    for (args, needle) in [
        (
            &["layout", "--rect", "0,0,13,10", "--along", "row"][..],
            "--rect",
        ),
        (
            &["layout", "--rect", "0,0,2", "--along", "row"][..],
            "--rect",
        ),
        (
            &["layout", "--rect", "0,0,2,2", "--along", "up"][..],
            "allowed: row, column",
        ),
        (
            &[
                "layout", "--rect", "0,0,2,2", "--along", "row", "--noc", "2",
            ][..],
            "0..=1",
        ),
        (
            &[
                "layout",
                "--rect",
                "0,0,2,2",
                "--along",
                "row",
                "--harvest",
                "0x4000",
            ][..],
            "--harvest",
        ),
        (&["layout", "--along", "row"][..], "--rect"),
        (&["grid", "--harvest", "zero"][..], "--harvest"),
    ] {
        let (code, out, err) = komorebi(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn grid_prints_the_chip_map() {
    let (code, out, _) = komorebi(&["grid", "--harvest", "0", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tensix"], 140);
    assert_eq!(v["umd_harvest"], 0);
    // The same names as the other commands' JSON: `chip`, `harvest`.
    assert_eq!(
        (&v["chip"], &v["harvest"]),
        (&"blackhole".into(), &0.into())
    );
    let (_, out, _) = komorebi(&["grid", "--harvest", "0x3000", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["harvest"].as_u64(), v["umd_harvest"].as_u64()),
        (Some(0x3000), Some(0xC0))
    );
}

#[test]
fn broadcast_with_a_fault_exits_3_and_lists_give_ups_and_results() {
    let (code, out, err) = komorebi(
        &[
            &["broadcast", "--jobs", "2", "--json"][..],
            &common::STALLED_COLUMN,
        ]
        .concat(),
    );
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["timeouts"], 1);
    assert_eq!(
        v["results"],
        serde_json::json!([
            {"job": 0, "chip": 0, "ok": false, "timeout": true, "abandoned": false},
            {"job": 1, "chip": 0, "ok": true, "timeout": false, "abandoned": false}
        ])
    );
    let sender = v["giveups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["core"] == serde_json::json!([2, 9]))
        .unwrap();
    assert_eq!(
        (
            sender["where"].as_str(),
            sender["broadcast"].as_u64(),
            sender["block"].as_u64()
        ),
        (Some("broadcast_done"), Some(1), Some(5))
    );
    // The fault is job 0's: every give-up names it.
    assert!(
        v["giveups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["job"] == 0),
        "{out}"
    );
}

#[test]
fn bad_fault_flags_exit_2_with_one_line() {
    for (fault, needle) in [
        ("melt:1,1", "allowed: stall-dm"),
        ("stall-dm:1", "KIND:X,Y"),
        ("stall-sender-compute:3,3", "sends no broadcast"),
        ("stall-dm:13,1", "not in --rect"),
        ("stall-dm:3,4:16", "never comes (allowed: 0..16"),
        ("stall-compute:3,4:4294967295", "never comes"),
        ("stall-dm:3,4:4294967295", "never comes"),
        // (3,4) receives A and W: one marker per block of each, 32 in all.
        (
            "drop-marker:3,4:32",
            "marker 32 never comes (allowed: 0..32",
        ),
        (
            "drop-valid:3,4:16",
            "VALID write 16 never comes (allowed: 0..16",
        ),
        ("host-stop:3,4:17", "never comes (allowed: 0..17"),
        ("bad-words:3,4:7", "bad-words takes no BLOCK"),
        ("stall-dm:0x3,4:0x20", "never comes (allowed: 0..16"),
    ] {
        let (code, _, err) = komorebi(&["broadcast", "--jobs", "1", "--fault", fault]);
        assert_eq!(code, 2, "{fault}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{fault}: {err}");
    }
}

#[test]
fn inspect_prints_every_core_and_draws_the_grid() {
    let dir = std::env::temp_dir().join(format!("komorebi-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (png, svg) = (dir.join("grid.png"), dir.join("grid.svg"));
    let args = [
        "inspect",
        "--rect",
        "0,0,3,3",
        "--blocks",
        "4",
        "--pages",
        "1",
        "--page-size",
        "256",
        "--jobs",
        "1",
        "--json",
        "--picture",
    ];
    let (code, out, err) = komorebi(&[&args[..], &[png.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cores"].as_array().unwrap().len(), 120);
    let core = &v["cores"][1];
    assert_eq!(core["core"], serde_json::json!([1, 0]));
    assert_eq!(core["areas"][0]["blocks"], 4);
    assert!(core["areas"][0]["giveup"].is_null());
    // Command 1 set up by both data-movement kernels, none recovered from; a core outside the
    // rectangle ran none.
    let words = |core: &serde_json::Value| (core["set_up"].clone(), core["recovering"].clone());
    assert_eq!(
        words(core),
        (serde_json::json!([1, 1]), serde_json::json!([0, 0]))
    );
    assert_eq!(v["cores"][5]["core"], serde_json::json!([5, 0]));
    assert_eq!(
        words(&v["cores"][5]),
        (serde_json::json!([0, 0]), serde_json::json!([0, 0]))
    );
    // A stalled data-movement kernel at (1,0): the cores that gave the command up recovered
    // from it, and say so.
    let (_, out, err) =
        komorebi(&[&args[..args.len() - 1], &["--fault", "stall-dm:1,0:2"]].concat());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
    assert_eq!(
        words(&v["cores"][1]),
        (serde_json::json!([1, 1]), serde_json::json!([1, 1]))
    );
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    let (code, _, _) = komorebi(&[&args[..], &[svg.to_str().unwrap()]].concat());
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let (code, _, err) = komorebi(&[&args[..], &["grid.bmp"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains(".svg or .png"), "{err}");
    // An output that cannot be written is a bad flag (2), found before the run.
    let (code, out, err) = komorebi(&[&args[..], &["/proc/x.svg"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--picture /proc/x.svg: cannot be written"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn explore_runs_cases_and_reports_json() {
    let (code, out, err) = komorebi(&["explore", "--seeds", "3", "--start", "5", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cases"], 3);
    assert_eq!(v["failures"], serde_json::json!([]));
}

#[test]
fn inspect_refuses_the_flags_of_how_broadcast_runs_its_jobs() {
    for flag in [["--workers", "1"], ["--depth", "1"], ["--feeder", ""]] {
        let args: Vec<&str> = ["inspect", "--jobs", "1", flag[0], flag[1]]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let (code, out, err) = komorebi(&args);
        assert_eq!(code, 2, "{flag:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(flag[0]), "{flag:?}: {err}");
    }
    // And `broadcast` still takes them.
    let (code, _, err) = komorebi(&["broadcast", "--jobs", "1", "--workers", "1", "--depth", "1"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn dispatcher_and_feeder_agree_when_a_job_never_finishes() {
    // No wait limit the kernels reach: the stalled job never finishes and holds its tiles, so
    // the jobs behind it cannot run. Both ways of running say so the same way.
    let args = [
        "--wait-limit",
        "18446744073709551615",
        "--jobs",
        "3",
        "--fault",
        "stall-dm:3,4:1",
    ];
    let (code, dispatched) = broadcast_json(&args);
    let (feeder_code, fed) = broadcast_json(&[&args[..], &["--feeder"]].concat());
    assert_eq!((code, feeder_code), (3, 3));
    assert_eq!(dispatched, fed);
    assert_eq!(
        (fed["timeouts"].as_u64(), fed["abandoned"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(
        fed["results"][1],
        serde_json::json!({"job": 1, "chip": null, "ok": false, "timeout": false, "abandoned": true})
    );
    assert!(fed["efficiency"].is_null());
    assert_eq!(
        fed["chips"][0]["aiclk_mhz"], 1350,
        "the feeder's chip has its clock"
    );
}

#[test]
fn output_paths_that_cannot_be_written_exit_2_before_the_run() {
    for trace in ["/proc/x", "/nonexistent/dir/t.json"] {
        for command in ["broadcast", "inspect"] {
            let (code, out, err) = komorebi(&[command, "--jobs", "1", "--trace", trace]);
            assert_eq!(code, 2, "{command} {trace}: {err}");
            assert!(out.is_empty(), "{out}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("--trace {trace}: cannot be written")),
                "{err}"
            );
        }
    }
    // A path that can be written is left as it was found: no file made by the check.
    let dir = std::env::temp_dir().join(format!("komorebi-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    let (code, _, err) = komorebi(&[
        "broadcast",
        "--jobs",
        "1",
        "--rect",
        "0,0,2,2",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::metadata(&trace).unwrap().len() > 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// No case would check nothing and pass: `--seeds 0` is refused, naming what is allowed.
#[test]
fn explore_refuses_no_seeds() {
    let (code, out, err) = komorebi(&["explore", "--seeds", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("--seeds") && err.contains("1.."), "{err}");
}

#[test]
fn explore_refuses_seeds_past_64_bits() {
    let (code, out, err) =
        komorebi(&["explore", "--start", "18446744073709551615", "--seeds", "2"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--start 18446744073709551615 with --seeds 2"),
        "{err}"
    );
    // The last seed itself is fine.
    let (code, out, err) = komorebi(&[
        "explore",
        "--start",
        "0xffffffffffffffff",
        "--seeds",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["cases"], 1);
}

/// Runs the example `name` with `args` (built by cargo if it is not yet).
fn example(name: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--example", name, "--"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs cargo");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn matmul_schedule_names_the_users_flag_and_value() {
    for (args, needle) in [
        (
            &["--steps", "0"][..],
            "'--steps <STEPS>': out of range (allowed: 1..",
        ),
        (
            &["--steps", "4294967295"][..],
            "'--steps <STEPS>': out of range (allowed: 1..=4096",
        ),
        (
            &["--blocks-per-step", "100000"][..],
            "'--blocks-per-step <BLOCKS_PER_STEP>'",
        ),
        (
            &["--rect", "0,0,99,99"][..],
            "--rect: 0,0,99,99 reaches outside",
        ),
        (
            &["--rect", "0,0,96,96"][..],
            "--rect: 0,0,96,96 reaches outside",
        ),
        (&["--block", "3x"][..], "ROWS '' is not a number 1..=255"),
        (
            &["--block", "5x2"][..],
            "--block: 5x2 blocks do not tile the 12x10",
        ),
        // Hex on either side: the 'x' between two numbers separates them.
        (
            &["--block", "0x5x0x2"][..],
            "--block: 5x2 blocks do not tile the 12x10",
        ),
        // Every step's data fits a DRAM bank: the flags that size it are named, with the most
        // the shape allows (a block group's plan holds its steps, a row group's its
        // write-back; the senders' copies lie in layers of each bank, `placement::Layers`).
        (
            &["--steps", "4096", "--blocks-per-step", "12"][..],
            "--steps: 4096 steps of --blocks-per-step 12 need 6057287680 bytes of each DRAM \
             bank for every group's data (allowed: at most 4278190080: --steps up to 2889 with \
             --blocks-per-step 12)",
        ),
        (
            &["--steps", "2", "--blocks-per-step", "32767"][..],
            "--blocks-per-step: 32767 blocks a step for --steps 2 need 10015723520 bytes of each \
             DRAM bank for every group's data (allowed: at most 4278190080: --blocks-per-step \
             13964 fits with --steps 2)",
        ),
    ] {
        let (code, out, err) = example("matmul_schedule", args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains(": :"), "{err}");
    }
}

#[test]
fn no_arguments_print_the_usage_and_the_subcommands() {
    let (code, out, err) = komorebi(&[]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    for needle in [
        "Usage: komorebi <COMMAND>",
        "broadcast",
        "inspect",
        "explore",
        "layout",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

#[test]
fn one_line_errors_keep_clap_hints_and_point_to_help() {
    let (code, _, err) = komorebi(&["broadcast", "--job", "3"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("a similar argument exists: '--jobs'"), "{err}");
    assert!(err.contains("try '--help'"), "{err}");
    let (code, _, err) = komorebi(&["broadcast", "--jobs"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("(allowed: )"), "{err}");
    assert!(
        err.contains("--jobs") && err.contains("try '--help'"),
        "{err}"
    );
}

#[test]
fn ranges_agree_in_help_message_and_check() {
    let (_, help, _) = komorebi(&["broadcast", "--help"]);
    for (flag, bad, range) in [
        ("--blocks", "4294967296", "0..=32767"),
        ("--blocks", "32768", "0..=32767"),
        ("--window", "1000", "1..=8"),
        ("--window", "0", "1..=8"),
        ("--pages", "65536", "1..=65535"),
        ("--pages", "0", "1..=65535"),
    ] {
        let (code, _, err) = komorebi(&["broadcast", flag, bad]);
        assert_eq!(code, 2, "{flag} {bad}: {err}");
        assert!(
            err.contains(&format!("(allowed: {range})")),
            "{flag} {bad}: {err}"
        );
        assert!(help.contains(&format!("({range}")), "{flag}: {help}");
    }
    // The library's own check says the same.
    use komorebi::app::broadcast::{self, BroadcastConfig};
    for (cfg, range) in [
        (
            BroadcastConfig {
                blocks: 32768,
                ..Default::default()
            },
            "0..=32767",
        ),
        (
            BroadcastConfig {
                window: 9,
                ..Default::default()
            },
            "1..=8",
        ),
        (
            BroadcastConfig {
                pages: 0,
                ..Default::default()
            },
            "1..=65535",
        ),
    ] {
        let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
        assert!(e.contains(&format!("(allowed: {range})")), "{e}");
    }
}

#[test]
fn a_mask_that_harvests_every_column_has_one_message() {
    for args in [
        &["grid", "--harvest", "0x3fff"][..],
        &["broadcast", "--harvest", "0x3FFF"][..],
        &[
            "layout",
            "--harvest",
            "16383",
            "--rect",
            "0,0,1,1",
            "--along",
            "row",
        ][..],
    ] {
        let (code, out, err) = komorebi(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("--harvest") && err.contains("no Tensix column left"),
            "{err}"
        );
    }
}

#[test]
fn every_numeric_flag_takes_decimal_and_hex() {
    let (code, a) = broadcast_json(&["--seed", "0x10", "--jobs", "0x1", "--rect", "0,0,2,2"]);
    assert_eq!(code, 0);
    let (_, b) = broadcast_json(&["--seed", "16", "--jobs", "1", "--rect", "0x0,0,0x2,2"]);
    assert_eq!(a, b);
    let (code, _, err) = komorebi(&["explore", "--seeds", "0x1", "--start", "0x5", "--json"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn help_lists_the_exit_codes() {
    for args in [
        &["--help"][..],
        &["broadcast", "--help"][..],
        &["inspect", "--help"][..],
    ] {
        let (code, out, _) = komorebi(args);
        assert_eq!(code, 0);
        assert!(
            out.contains("Exit codes: 0 ok")
                && out.contains("3 timeout")
                && out.contains("4 a device"),
            "{args:?}: {out}"
        );
    }
    // `explore` has its own: a timeout or an unusable device is a failed case (1).
    let (code, out, _) = komorebi(&["explore", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Exit codes: 0 every case passed, 1 a case failed")
            && !out.contains("3 timeout")
            && !out.contains("4 a device"),
        "{out}"
    );
}

#[test]
fn job_data_is_written_as_each_job_runs_so_memory_does_not_grow_with_jobs() {
    // 64 jobs of 128 MiB of DRAM data each: 8 GiB if every job's data were made before the
    // first job. Job 0 never finishes (no wait limit the kernels reach), the rest are
    // abandoned at once: under a 2 GB address-space limit the run only fits when data is made
    // job by job.
    let out = Command::new("sh")
        .args([
            "-c",
            "ulimit -v 2000000 && exec \"$0\" broadcast --rect 2,0,1,10 --along column \
             --blocks 32767 --pages 1 --page-size 4096 --jobs 64 \
             --wait-limit 18446744073709551615 --fault stall-dm:2,5:0 --json",
            env!("CARGO_BIN_EXE_komorebi"),
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["timeouts"].as_u64(), v["abandoned"].as_u64()),
        (Some(1), Some(63))
    );
}

#[test]
fn a_trace_that_cannot_fit_on_its_disk_is_refused_with_what_it_needs() {
    if !std::path::Path::new("/proc/meminfo").exists() {
        return; // The check needs Linux's statvfs; elsewhere there is nothing to check.
    }
    // The trace streams to its file, so it needs disk, not memory: ten million jobs of the
    // default shape, about 64 PB, fit on no disk (and their host memory, 2 GB, is not refused).
    let dir = std::env::temp_dir().join(format!("komorebi-disk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--jobs",
        "10000000",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--trace: the trace of this run needs about") && err.contains("GiB of disk"),
        "{err}"
    );
    assert!(!trace.exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_text_summary_keeps_host_and_device_time_apart_and_says_what_figures_mean() {
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--jobs",
        "1",
        "--rect",
        "0,0,2,2",
        "--workers",
        "1",
        "--depth",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    for needle in [
        "1 job of 16 blocks each",
        "device time (simulated cycles; us at the 1350 MHz AICLK)",
        "host wall clock (the host's time, not the device's)",
        "device time (simulated cycles as time at AICLK)",
        "summed over every core and job",
        "a sender's compute checks its own blocks too",
        "1 worker, 1 slot per group; 1 command (",
        "(0 timeouts, 0 jobs abandoned, 0 mismatches)",
    ] {
        assert!(out.contains(needle), "{needle}:\n{out}");
    }
    for wrong in ["1 jobs", "1 slots", "1 workers", "1 commands"] {
        assert!(!out.contains(wrong), "{wrong}:\n{out}");
    }
    // Durations in units that fit: never 1000 us or more (that is shown in ms).
    let words: Vec<&str> = out.split_whitespace().collect();
    for pair in words.windows(2).filter(|p| p[1] == "us") {
        let v: f64 = pair[0].parse().unwrap_or(0.0);
        assert!(v < 1000.0, "{} us:\n{out}", pair[0]);
    }
}

#[test]
fn the_png_has_a_legend_and_a_scale_that_separates_the_cores() {
    let dir = std::env::temp_dir().join(format!("komorebi-png-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("grid.png");
    let (code, _, err) = komorebi(&[
        "inspect",
        "--rect",
        "0,0,6,10",
        "--jobs",
        "1",
        "--picture",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The range is printed.
    assert!(
        err.contains("viridis from ") && err.contains("(light); grey: no broadcast"),
        "{err}"
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    assert!(h > 10 * 40 + 20, "a legend below the 10 rows of cells: {h}");
    let px = |x: usize, y: usize| {
        [
            buf[(y * w + x) * 3],
            buf[(y * w + x) * 3 + 1],
            buf[(y * w + x) * 3 + 2],
        ]
    };
    // The colour bar runs from viridis's dark purple to its yellow.
    assert_eq!(px(4, 10 * 40 + 10), [68, 1, 84]);
    assert_eq!(px(259, 10 * 40 + 10), [253, 231, 37]);
    // The legend's text is drawn (black pixels below the bar).
    assert!((10 * 40 + 24..h).any(|y| (0..w).any(|x| px(x, y) == [0, 0, 0])));
    // The 60 active cores take many different colours, not one red.
    let colours: std::collections::BTreeSet<[u8; 3]> = (0..10)
        .flat_map(|r| (0..6).map(move |c| (c, r)))
        .map(|(c, r)| px(c * 40 + 30, r * 40 + 30))
        .collect();
    assert!(colours.len() >= 20, "{} colours", colours.len());
    let _ = std::fs::remove_dir_all(dir);
}

/// The SVG is as wide as its legend's longest line (monospace at font size 10, some 6 px a
/// character): the scale's line of some 100 characters was cut at 560 px.
#[test]
fn the_svg_is_wide_enough_for_its_legend() {
    let dir = std::env::temp_dir().join(format!("komorebi-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("grid.svg");
    let (code, _, err) = komorebi(&[
        "inspect",
        "--rect",
        "0,0,2,2",
        "--jobs",
        "1",
        "--picture",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&path).unwrap();
    let width: usize = svg
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .expect("the svg's width");
    for line in svg.lines().filter(|l| l.starts_with("<text x=\"")) {
        let x: usize = line[9..].split('"').next().unwrap().parse().unwrap();
        let text = line.split('>').nth(1).unwrap().trim_end_matches("</text");
        assert!(
            x + 6 * text.len() <= width,
            "{text:?} at x {x} runs past {width} px"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_trace_names_every_process_and_thread_and_keeps_host_time_apart() {
    let dir = std::env::temp_dir().join(format!("komorebi-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let (code, _, err) = komorebi(&[
        "broadcast",
        "--jobs",
        "2",
        "--rect",
        "0,0,2,2",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let meta = |what: &str| -> std::collections::BTreeMap<(u64, u64), String> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == what)
            .map(|e| {
                let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap_or(0));
                (key, e["args"]["name"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let (processes, threads) = (meta("process_name"), meta("thread_name"));
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(processes.contains_key(&(pid, 0)), "process {pid} unnamed");
        assert!(
            threads.contains_key(&(pid, tid)),
            "thread {pid}/{tid} unnamed: {e}"
        );
    }
    let host: Vec<_> = processes
        .values()
        .filter(|n| n.contains("HOST WALL CLOCK"))
        .collect();
    assert_eq!(host.len(), 1, "{processes:?}");
    assert!(
        processes
            .values()
            .filter(|n| n.contains("device time"))
            .count()
            >= 3,
        "{processes:?}"
    );
    assert!(
        threads.values().any(|n| n.contains("issuing on NoC1")),
        "{threads:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn exec_firmware_needs_the_simulated_card_and_says_how_to_build_missing_images() {
    let (code, _, err) = komorebi(&["broadcast", "--exec", "firmware"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--exec firmware with --device pcie-sim"),
        "{err}"
    );
    let (code, _, err) = komorebi(&["broadcast", "--exec", "fast"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("(allowed: native, firmware)"), "{err}");
    let (code, _, err) = komorebi(&[
        "broadcast",
        "--device",
        "pcie-sim",
        "--exec",
        "firmware",
        "--firmware",
        "/nonexistent/firmware",
    ]);
    // A directory the flag names that cannot be read is a bad flag, found before the run.
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: --firmware: /nonexistent/firmware: ")
            && err.contains("/nonexistent/firmware/reader: cannot be read")
            && err.contains("cd examples/firmware && cargo build --release"),
        "{err}"
    );
}

#[test]
fn kernel_costs_are_the_simulators_and_take_two_names() {
    // The firmware's costs slow the native kernels down: the same run takes more cycles.
    let cycles = |costs: &str| {
        let (code, out, err) = komorebi(&[
            "broadcast",
            "--rect",
            "0,0,2,2",
            "--blocks",
            "2",
            "--jobs",
            "1",
            "--check",
            "none",
            "--kernel-costs",
            costs,
            "--json",
        ]);
        assert_eq!(code, 0, "{costs}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        // The JSON names the firmware's costs, and only those.
        let named = if costs == "firmware" {
            "firmware".into()
        } else {
            serde_json::Value::Null
        };
        assert_eq!(v.get("kernel_costs").cloned().unwrap_or_default(), named);
        v["cycles"].as_u64().unwrap()
    };
    let (tt_metal, firmware) = (cycles("tt-metal"), cycles("firmware"));
    assert!(firmware > tt_metal, "{firmware} against {tt_metal}");
    // Exit 2, the error naming what was wrong and what is allowed.
    let refused = |args: &[&str], says: &[&str]| {
        let (code, out, err) = komorebi(&[&["broadcast"], args].concat());
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(says.iter().all(|s| err.contains(s)), "{args:?}: {err}");
    };
    refused(
        &["--kernel-costs", "fast"],
        &["allowed: tt-metal, firmware"],
    );
    // ttsim and a card run no native kernels: nothing to charge.
    refused(
        &[
            "--device",
            "ttsim:/nonexistent/libttsim.so",
            "--kernel-costs",
            "firmware",
        ],
        &["--kernel-costs", "--device sim or pcie-sim"],
    );
    // The firmware's cores are charged per instruction: a table for them would do nothing.
    refused(
        &[
            "--device",
            "pcie-sim",
            "--exec",
            "firmware",
            "--kernel-costs",
            "firmware",
        ],
        &["--kernel-costs", "with --exec native"],
    );
}

/// A picture's extension is read in any case (`.SVG` is an SVG: it was refused), and any other
/// extension is refused before the run, naming what is allowed.
#[test]
fn the_picture_extension_is_read_in_any_case() {
    let dir = std::env::temp_dir().join(format!("komorebi-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let upper = dir.join("GRID.SVG");
    let args = |p: &std::path::Path| {
        ["inspect", "--rect", "0,0,2,2", "--jobs", "1", "--picture"]
            .iter()
            .map(|s| s.to_string())
            .chain([p.to_str().unwrap().to_string()])
            .collect::<Vec<_>>()
    };
    let run = |p: &std::path::Path| {
        let a = args(p);
        komorebi(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (code, _, err) = run(&upper);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&upper).unwrap().starts_with("<svg"));
    let jpg = dir.join("grid.jpg");
    let (code, _, err) = run(&jpg);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must be a .svg or .png file"), "{err}");
    assert!(!jpg.exists());
    let _ = std::fs::remove_dir_all(dir);
}
