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
