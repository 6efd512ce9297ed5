//! Flags that cannot apply are refused, not ignored, and output paths are checked before the
//! run: exit code 2 and one line naming the flag, with nothing run.

mod common;
use common::komorebi;

/// A small broadcast's flags.
const SMALL: [&str; 8] = [
    "--rect", "0,0,2,2", "--blocks", "2", "--pages", "1", "--jobs", "1",
];

fn broadcast(extra: &[&str]) -> (i32, String, String) {
    komorebi(&[&["broadcast"][..], &SMALL, extra].concat())
}

#[test]
fn dispatcher_flags_are_refused_with_the_feeder_and_rank_flags_without_mpi() {
    for (extra, named) in [
        (&["--feeder", "--workers", "8"][..], "--workers"),
        (&["--feeder", "--depth", "1"][..], "--depth"),
        (&["--rank-limit", "5"][..], "--mpi"),
    ] {
        let (code, out, err) = broadcast(extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty(), "{extra:?}: {out}");
        assert!(err.contains(named), "{extra:?}: {err}");
    }
    // The bench measures one chip: it has no chip or rank flags to refuse later.
    for flag in ["--chips", "--mpi", "--rank-limit"] {
        let (code, _, err) = komorebi(&["bench", "broadcast", flag, "2"]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(
            err.contains(&format!("unexpected argument '{flag}'")),
            "{flag}: {err}"
        );
    }
}

#[test]
fn a_firmware_directory_is_checked_before_the_run_and_refused_where_nothing_is_loaded() {
    let empty = tempdir("firmware");
    let dir = empty.to_str().unwrap();
    let (code, out, err) = broadcast(&["--device", "pcie-sim", "--firmware", dir]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.starts_with(&format!("error: --firmware: {dir}: ")),
        "{err}"
    );
    assert!(err.contains("cannot be read"), "{err}");
    let (code, _, err) = broadcast(&["--firmware", dir]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--firmware") && err.contains("with --device sim"),
        "{err}"
    );
}

#[test]
fn the_profile_flame_graph_path_is_checked_before_the_run() {
    let dir = tempdir("profile");
    let folded = dir.join("p.folded");
    // A directory where the flame graph would go.
    std::fs::create_dir_all(dir.join("p.folded.svg")).unwrap();
    let (code, out, err) = broadcast(&[
        "--device",
        "pcie-sim",
        "--exec",
        "firmware",
        "--profile",
        folded.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("p.folded.svg: cannot be written"), "{err}");
    assert!(!folded.exists(), "nothing ran, nothing was written");
}

#[test]
fn two_outputs_may_not_name_one_file() {
    let dir = tempdir("same");
    let trace = dir.join("out.json");
    // The same file reached another way.
    let log = dir.join(".").join("out.json");
    let (code, out, err) = broadcast(&[
        "--trace",
        trace.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("--log") && err.contains("also --trace's file"),
        "{err}"
    );
    assert!(!trace.exists());
    // Only files collide: both to /dev/null is no loss.
    let (code, _, err) = broadcast(&["--trace", "/dev/null", "--log", "/dev/null"]);
    assert_eq!(code, 0, "{err}");
}

/// A fresh directory of this test process.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("komorebi-cli-flags-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn host_memory_refusals_name_the_flag_that_needs_it_after_the_flags_own_checks() {
    if !std::path::Path::new("/proc/meminfo").exists() {
        return; // Only Linux says what memory is available; elsewhere nothing is refused.
    }
    // No DRAM data at all: the jobs' own records are what no host holds.
    let (code, _, err) = komorebi(&[
        "broadcast",
        "--rect",
        "0,0,1,1",
        "--blocks",
        "0",
        "--jobs",
        "4294967295",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error: --jobs: the records of this run's jobs need about"),
        "{err}"
    );
    // More than a DRAM bank holds: refused as such, whatever the host's memory.
    let (code, _, err) = komorebi(&[
        "broadcast",
        "--rect",
        "0,0,12,10",
        "--blocks",
        "32767",
        "--pages",
        "16",
        "--page-size",
        "4096",
        "--window",
        "1",
        "--jobs",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "--blocks: 32767 blocks of 16 pages of 4096 bytes for 32 senders, their copies 7 \
             layers deep, need 15048818688 bytes per DRAM bank (allowed: at most 4278190080)"
        ),
        "{err}"
    );
    // When one job's data fits, the jobs are what does not: `--jobs` is named, with the most
    // that fit (the placement's layers do not depend on the jobs), by the flags' checks
    // before any device opens (the plan of the flags' own chip counts the layers).
    for (jobs, said) in [
        (
            "8",
            "--jobs: 8 jobs: 32767 blocks of 4 pages of 2048 bytes for 32 senders, their copies \
             7 layers deep, need 7533084672 bytes per DRAM bank, each job's data one region of a \
             ring of at most 4 (allowed: at most 4278190080: --jobs up to 2)",
        ),
        (
            "3",
            "--jobs: 3 jobs: 32767 blocks of 4 pages of 2048 bytes for 32 senders, their copies \
             7 layers deep, need 5654007808 bytes per DRAM bank, each job's data one region of a \
             ring of at most 4 (allowed: at most 4278190080: --jobs up to 2)",
        ),
    ] {
        let (code, _, err) = komorebi(&["broadcast", "--blocks", "32767", "--jobs", jobs]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(said), "{err}");
    }
}

#[test]
fn inspect_says_on_standard_error_why_it_exits_as_it_does() {
    let run = |extra: &[&str]| komorebi(&[&["inspect"][..], &SMALL, extra].concat());
    let (code, out, err) = run(&["--fault", "stall-compute:1,0:1"]);
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("broadcast 0"), "the areas still print: {out}");
    assert_eq!(
        err.trim_end(),
        "result: TIMEOUT (1 timeout, 0 jobs abandoned, 0 mismatches)"
    );
    let (code, _, err) = run(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("result: ok: every byte checked"), "{err}");
    // What the report shows elsewhere is refused, not run and left unsaid.
    for flag in [
        &["--speed-up", "read_block"][..],
        &["--profile", "/tmp/p.folded"],
    ] {
        let (code, out, err) = run(flag);
        assert_eq!(code, 2, "{flag:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.starts_with(&format!(
                "error: {}: inspect prints the broadcast areas",
                flag[0]
            )),
            "{err}"
        );
    }
}

/// `inspect` reads each core's give-up record whole: where, broadcast, block and sequence, as
/// the kernels wrote them (a W column whose compute at (2,5) stalls before block 3: the
/// column's sender at the bottom, (2,9), gives up `broadcast_done` at block 5 of command 1, every
/// receiver `broadcast_valid`).
#[test]
fn inspect_shows_the_give_up_each_core_recorded() {
    let args = [&["inspect", "--jobs", "1"][..], &common::STALLED_COLUMN].concat();
    let (code, out, err) = komorebi(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let give_up = |x: u64, y: u64| {
        v["cores"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["core"] == serde_json::json!([x, y]))
            .map(|c| c["areas"][1]["giveup"].clone())
    };
    let record = |place: &str| serde_json::json!({"where": place, "broadcast": 1, "block": 5, "sequence": 1});
    assert_eq!(give_up(2, 9), Some(record("broadcast_done")));
    for y in 0..9 {
        assert_eq!(give_up(2, y), Some(record("broadcast_valid")), "(2, {y})");
    }
    let (code, out, _) = komorebi(&args);
    assert_eq!(code, 3);
    assert!(out.contains("broadcast_done b1 blk5 seq1"), "{out}");
}

#[test]
fn refusals_name_the_flags_at_fault_and_what_is_allowed() {
    for (args, message) in [
        (
            &["--rect", "0,0,0,0"][..],
            "error: --rect: 0,0,0,0 is empty (allowed: at least 1 column and 1 row)",
        ),
        (
            &["--rect", "5,5,10,10"][..],
            "error: --rect: 5,5,10,10 reaches outside the 12x10 logical grid of this Blackhole \
             (harvest mask 0x3000) (allowed: X0 + COLUMNS <= 12 and Y0 + ROWS <= 10)",
        ),
        (
            &[
                "--pages",
                "1",
                "--page-size",
                "1048576",
                "--window",
                "1",
                "--rect",
                "0,0,1,1",
            ][..],
            "error: --page-size: 2 broadcast buffers of --window 1 x --pages 1 x --page-size \
             1048576 = 2097152 bytes do not fit the 1310720 bytes of L1 above 0x40000 (allowed: \
             window x pages x page size at most 655360, or 1310720 with --along row or column)",
        ),
        (
            // window x pages x page size is 2^32: past u32, each flag within its own range.
            &[
                "--window",
                "1",
                "--pages",
                "4096",
                "--page-size",
                "1048576",
                "--rect",
                "0,0,1,1",
            ][..],
            "error: --page-size: 2 broadcast buffers of --window 1 x --pages 4096 x --page-size \
             1048576 = 8589934592 bytes do not fit the 1310720 bytes of L1 above 0x40000 \
             (allowed: window x pages x page size at most 655360, or 1310720 with --along row or column)",
        ),
        // The flag named is the one out of proportion: here only fewer pages alone would fit.
        (
            &["--window", "8", "--pages", "8191"][..],
            "error: --pages: 2 broadcast buffers of --window 8 x --pages 8191 x --page-size 2048 \
             = 268402688 bytes do not fit the 1310720 bytes of L1 above 0x40000 (allowed: window \
             x pages x page size at most 655360, or 1310720 with --along row or column)",
        ),
    ] {
        let (code, out, err) = komorebi(&[&["broadcast"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.trim_end(), message, "{args:?}");
    }
    // The devices listing takes a ttsim library's every chip, not one (nor chip 0 alone).
    for device in ["ttsim:/x.so@3", "ttsim:/x.so@0"] {
        let (code, _, err) = komorebi(&["devices", "--device", device]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("without @CHIP"), "{err}");
    }
}

#[test]
fn a_simulated_chips_harvesting_and_fused_bank_are_refused_on_a_device() {
    // A device reports its own columns and banks: refused before any library is opened.
    for device in ["ttsim:/no/such/libttsim.so", "/dev/tenstorrent/9"] {
        for (extra, named, says) in [
            (
                &["--harvest", "0x1"][..],
                "--harvest: 0x0001",
                "harvested columns",
            ),
            (
                &["--fused-dram", "3"][..],
                "--fused-dram: 3",
                "fused DRAM bank",
            ),
        ] {
            let (code, out, err) = broadcast(&[&["--device", device][..], extra].concat());
            assert_eq!(code, 2, "{device} {extra:?}: {err}");
            assert!(out.is_empty(), "{device} {extra:?}: {out}");
            assert!(
                err.starts_with(&format!("error: {named} with --device ")) && err.contains(says),
                "{device} {extra:?}: {err}"
            );
            assert!(err.contains("allowed:"), "{err}");
        }
    }
    // The default mask, given outright, is what a device is read with anyway: accepted as far
    // as the flags go (the missing library is what fails).
    let (code, _, err) = broadcast(&[
        "--device",
        "ttsim:/no/such/libttsim.so",
        "--harvest",
        "0x3000",
    ]);
    assert_eq!(code, 4, "{err}");
}

#[test]
fn the_simulators_trace_seed_and_adversary_are_refused_on_a_device() {
    for device in ["ttsim:/no/such/libttsim.so", "/dev/tenstorrent/9"] {
        for (extra, named) in [
            (
                &["--trace", "/tmp/komorebi-never.json"][..],
                "--trace: /tmp/komorebi-never.json",
            ),
            (&["--seed", "5"][..], "--seed: 5"),
            (&["--adversarial"][..], "--adversarial: with"),
        ] {
            let (code, out, err) = broadcast(&[&["--device", device][..], extra].concat());
            assert_eq!(code, 2, "{device} {extra:?}: {err}");
            assert!(out.is_empty(), "{device} {extra:?}: {out}");
            assert!(
                err.starts_with(&format!("error: {named}"))
                    && err.contains(&format!("--device {device}"))
                    && err.contains("allowed:"),
                "{device} {extra:?}: {err}"
            );
        }
    }
    assert!(!std::path::Path::new("/tmp/komorebi-never.json").exists());
}

#[test]
fn a_negative_number_is_out_of_its_flags_range_not_an_unknown_flag() {
    for (args, named) in [
        (
            &["broadcast", "--blocks", "-5"][..],
            "'-5' for '--blocks <BLOCKS>': out of range (allowed: 0..=32767)",
        ),
        (
            &["grid", "--fused-dram", "-1"][..],
            "'-1' for '--fused-dram <BANK>': out of range (allowed: 0..=7)",
        ),
        (
            &["grid", "--harvest", "99999999999999999999"][..],
            "for '--harvest': bits outside 0x3fff",
        ),
        (
            &["bench", "noc", "--pattern", "one-to-all", "--size", "-5"][..],
            "'-5' for '--size <BYTES>': out of range",
        ),
        // Negative coordinates and hex are values too (clap took them for unknown flags).
        (
            &["broadcast", "--rect", "-1,0,1,1"][..],
            "invalid value '-1,0,1,1' for '--rect <RECT>': expected X0,Y0,COLUMNS,ROWS",
        ),
        (
            &["layout", "--along", "row", "--rect", "-1,0,1,1"][..],
            "invalid value '-1,0,1,1' for '--rect <RECT>'",
        ),
        (
            &[
                "bench",
                "noc",
                "--pattern",
                "unicast",
                "--size",
                "64",
                "--to",
                "-1,0",
            ][..],
            "invalid value '-1,0' for '--to <X,Y>'",
        ),
        (
            &["grid", "--harvest", "-0x1"][..],
            "invalid value '-0x1' for '--harvest'",
        ),
    ] {
        let (code, out, err) = komorebi(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
}

/// The L1 refusal names the flag out of proportion: of those that alone brought to their least
/// would let the buffers fit, the one furthest above its default.
#[test]
fn the_l1_refusal_names_the_flag_out_of_proportion() {
    for (args, named) in [
        (
            &["--window", "2", "--pages", "4", "--page-size", "262144"][..],
            "--page-size",
        ),
        (&["--window", "8", "--pages", "100"][..], "--pages"),
        (
            &["--window", "8", "--pages", "1", "--page-size", "131072"][..],
            "--page-size",
        ),
        (
            &["--window", "8", "--pages", "40", "--page-size", "4096"][..],
            "--pages",
        ),
    ] {
        let (code, _, err) = komorebi(&[&["broadcast"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("error: {named}: 2 broadcast buffers of")),
            "{args:?}: {err}"
        );
    }
}

/// Several chips from a card node that does not exist: the node's own error (exit 4), as with
/// one chip, not a count of the usable chips tt-kmd presents.
#[cfg(target_os = "linux")]
#[test]
fn several_chips_from_a_missing_card_node_say_it_is_missing() {
    for chips in ["1", "2"] {
        let (code, out, err) = komorebi(&[
            "broadcast",
            "--rect",
            "0,0,2,2",
            "--device",
            "/dev/tenstorrent/97",
            "--chips",
            chips,
        ]);
        assert_eq!(code, 4, "--chips {chips}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains("/dev/tenstorrent/97: no such device"),
            "--chips {chips}: {err}"
        );
    }
}

/// `--help` and `--version` whose output cannot be written exit 1, as every other command's.
#[test]
fn help_that_cannot_be_written_exits_1() {
    for flag in ["--help", "--version"] {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_komorebi"))
            .arg(flag)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{flag}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("could not write the output"),
            "{flag}"
        );
    }
}

/// Flags that no device makes right are refused before any device opens: exit 2 whatever the
/// device (a device that could not be opened came first and gave exit 4).
#[test]
fn flags_no_device_makes_right_are_refused_before_a_device_opens() {
    let on_null = "--device /dev/null";
    for (args, said) in [
        (
            "broadcast --jobs 1 --rect 0,0,0,0",
            "--rect: 0,0,0,0 is empty",
        ),
        (
            "broadcast --jobs 1 --fault stall-dm:99,99",
            "--fault: stall-dm: core (99,99) is not in --rect",
        ),
        (
            "broadcast --jobs 1 --rect 0,0,2,2 --blocks 2 --fault stall-dm:1,1:5",
            "--fault: stall-dm: block 5 never comes (allowed: 0..2 with --blocks 2)",
        ),
        ("log --rect 0,0,0,0", "--rect 0,0,0,0: empty"),
        (
            "log --firmware /nonexistent",
            "--firmware /nonexistent: /nonexistent/reader",
        ),
    ] {
        let args: Vec<&str> = args.split(' ').chain(on_null.split(' ')).collect();
        let (code, out, err) = komorebi(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
}
