//! The `komorebi` binary: outputs, JSON shapes, and exit code 2 with a one-line message for
//! every kind of bad argument.

use std::process::Command;

fn komorebi(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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
    assert_eq!(v["umd_harvest_mask"], 0);
}

#[test]
fn broadcast_with_a_fault_exits_3_and_lists_give_ups_and_results() {
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--rect",
        "2,0,1,10",
        "--along",
        "column",
        "--blocks",
        "8",
        "--pages",
        "2",
        "--page-size",
        "256",
        "--jobs",
        "2",
        "--wait-limit",
        "200000",
        "--fault",
        "stall-compute:2,5:3",
        "--json",
    ]);
    assert_eq!(code, 3, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["timeouts"], 1);
    assert_eq!(
        v["results"],
        serde_json::json!([{"job": 0, "ok": false, "timeout": true}, {"job": 1, "ok": true, "timeout": false}])
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
    assert!(core["areas"][0]["give_up"].is_null());
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    let (code, _, _) = komorebi(&[&args[..], &[svg.to_str().unwrap()]].concat());
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let (code, _, err) = komorebi(&[&args[..], &["grid.bmp"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains(".svg or .png"), "{err}");
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
