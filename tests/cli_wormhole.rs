//! `--chip wormhole` through the `komorebi` binary: `grid` and `layout` of a Wormhole B0 and
//! its row mask, the flags a Wormhole run refuses, and runs on the simulator, on the simulated
//! Wormhole card (`--device pcie-sim`: its ARC, loader and windows) and the refusal-free open
//! of a card's device node.

mod common;
use common::{broadcast_json, komorebi};

/// A simulated Wormhole with row bit 2 (NoC0 y 3) harvested, on its whole grid (the default
/// rectangle: its 8 x 9 cores), 2 jobs of 4 blocks of 2 pages.
const HARVESTED_ROW: &[&str] = &[
    "--chip",
    "wormhole",
    "--harvest",
    "0x4",
    "--blocks",
    "4",
    "--pages",
    "2",
    "--jobs",
    "2",
];

#[test]
fn grid_and_layout_take_a_wormhole_and_its_row_mask() {
    let (code, out, err) = komorebi(&["grid", "--chip", "wormhole", "--harvest", "0x10", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["chip"], "wormhole");
    assert_eq!(v["tensix"], 72);
    assert_eq!(
        v["noc0_y"],
        serde_json::json!([1, 2, 3, 4, 7, 8, 9, 10, 11])
    );
    // The whole Wormhole: 20 row broadcasts of 4 (DRAM at x 5 splits the rows into two
    // panels) and 16 column broadcasts of 5 (the Ethernet row 6 splits every column).
    for (along, noc, count, len) in [("row", "0", 20, 4), ("column", "1", 16, 5)] {
        let (code, out, err) = komorebi(&[
            "layout", "--chip", "wormhole", "--rect", "0,0,8,10", "--along", along, "--noc", noc,
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let b = v["broadcasts"].as_array().unwrap();
        assert_eq!(b.len(), count, "{along}");
        assert!(
            b.iter()
                .all(|b| b["cores"].as_array().unwrap().len() == len),
            "{along}"
        );
        // Every stream of every sender reads one of its six banks (the placement's pricing on
        // Wormhole's routes is `placement.rs`'s test).
        for banks in b.iter().map(|b| b["banks"].as_array().unwrap()) {
            assert_eq!(banks.len(), 8, "{along}");
            assert!(
                banks.iter().all(|k| k.as_u64() < Some(6)),
                "{along}: {banks:?}"
            );
        }
    }
}

#[test]
fn a_wormhole_flag_that_cannot_run_exits_2_with_one_line_saying_what_is_allowed() {
    for (args, needle) in [
        (
            &["grid", "--chip", "wormhole", "--harvest", "0x400"][..],
            "0..=0x3ff",
        ),
        (
            &["grid", "--chip", "wormhole", "--harvest", "0x3ff"][..],
            "no Tensix row left",
        ),
        (
            &["grid", "--chip", "wormhole", "--fused-dram", "1"][..],
            "--fused-dram 1",
        ),
        (
            &["grid", "--chip", "quasar"][..],
            "allowed: blackhole, wormhole",
        ),
        (
            &[
                "layout", "--chip", "wormhole", "--rect", "0,0,9,10", "--along", "row",
            ][..],
            "--rect",
        ),
        (
            &[
                "broadcast",
                "--chip",
                "wormhole",
                "--device",
                "ttsim:/nonexistent",
                "--harvest",
                "1",
            ][..],
            "ttsim's `wh` harvests none",
        ),
        (
            &["broadcast", "--chip", "wormhole", "--fused-dram", "1"][..],
            "error: --fused-dram: 1 with --chip wormhole: a Wormhole B0's 6 DRAM banks all work",
        ),
        (
            &["broadcast", "--chip", "wormhole", "--harvest", "0x400"][..],
            "invalid value '0x400' for '--harvest': bits outside 0x3ff",
        ),
        (
            &[
                "bench",
                "broadcast",
                "--chip",
                "wormhole",
                "--harvest",
                "0x3ff",
            ][..],
            "no Tensix row left",
        ),
        (
            &["broadcast", "--harvest", "0x3fff"][..],
            "no Tensix column left",
        ),
        (
            &[
                "broadcast",
                "--chip",
                "wormhole",
                "--device",
                "ttsim:/nonexistent",
                "--chips",
                "2",
            ][..],
            "--chips: 2 with --chip wormhole",
        ),
    ] {
        let (code, out, err) = komorebi(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_simulated_wormhole_runs_the_whole_grid_every_byte_checked() {
    // The native kernels on the simulator's Wormhole B0 (its 10 x 12 grid, 6 DRAM banks, 8 KiB
    // packets of 32-byte flits, 1,000 MHz): 20 A broadcasts of 4 cores and 16 W of 5. No
    // `--rect`: a Wormhole's default is its whole grid, 0,0,8,10.
    let (code, v) = broadcast_json(&[
        "--chip", "wormhole", "--blocks", "4", "--pages", "2", "--jobs", "2",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["received_bytes"], 2 * 4 * 2 * 2048 * (20 * 3 + 16 * 4));
    // Priced on Wormhole's routes and assumed rates: compute binds, checking in each of 2 jobs
    // 4 blocks of 2 pages of 512 words, 6 cycles a word, for each of its 2 broadcasts.
    assert_eq!(v["bound_cycles"], 2 * 4 * 2 * 512 * 6 * 2);
    assert_eq!(v["binding"], "compute (0,0)");
    let e = v["efficiency"].as_f64().unwrap();
    assert!(e > 0.5 && e <= 1.0, "{v}");
}

#[test]
fn a_simulated_wormhole_card_runs_through_the_card_path_as_the_simulator_does() {
    // pcie-sim: the Wormhole card's open (its ARC in BAR0), the loader and its windows, then
    // the native kernels; the same bytes as on the simulator driven directly.
    let args = HARVESTED_ROW;
    let (code, sim) = broadcast_json(args);
    assert_eq!(code, 0, "{sim}");
    let (code, card) = broadcast_json(&[args, &["--device", "pcie-sim"]].concat());
    assert_eq!(code, 0, "{card}");
    assert_eq!(card["ok"], true);
    assert_eq!(card["received_bytes"], sim["received_bytes"]);
    assert_eq!(card["checked_bytes"], sim["checked_bytes"]);
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--chip",
        "wormhole",
        "--device",
        "pcie-sim",
        "--exec",
        "firmware",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--exec: firmware with --chip wormhole --device pcie-sim"),
        "{err}"
    );
}

#[test]
fn a_wormhole_card_is_opened_not_refused_by_the_flags() {
    // `--chip wormhole` with a device node passes the flags' checks: the open says what is
    // wrong with the device (exit 4), as for a Blackhole.
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--chip",
        "wormhole",
        "--device",
        "/dev/tenstorrent/99",
        "--jobs",
        "1",
    ]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("/dev/tenstorrent/99: no such device"), "{err}");
}

#[test]
fn a_simulated_wormhole_with_a_harvested_row_runs_round_it_every_byte_checked() {
    // Row bit 2 is NoC0 y 3: the nine rows left are y 1-2, 4-5 and 7-11 (the Ethernet row 6
    // and the harvested row split each column), so each column carries W broadcasts of 2, 2
    // and 5 cores, and each row A broadcasts of 4 in each panel.
    let (code, v) = broadcast_json(HARVESTED_ROW);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    let receivers = 9 * 2 * 3 + 8 * (1 + 1 + 4);
    assert_eq!(v["received_bytes"], 2 * 4 * 2 * 2048 * receivers);
    assert_eq!(v["checked_bytes"], 2 * 4 * 2 * 2048 * 72 * 2);
    // The tenth row is gone: the whole-grid rectangle no longer fits.
    let (code, out, err) = komorebi(&[
        "broadcast",
        "--chip",
        "wormhole",
        "--harvest",
        "0x4",
        "--rect",
        "0,0,8,10",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("8x9 logical grid of this Wormhole B0 (row harvest mask 0x004)"),
        "{err}"
    );
}

#[test]
fn layout_refuses_a_fused_bank_on_a_wormhole_as_grid_does() {
    for cmd in [
        &[
            "layout",
            "--chip",
            "wormhole",
            "--rect",
            "0,0,2,2",
            "--along",
            "row",
            "--fused-dram",
            "1",
        ][..],
        &["grid", "--chip", "wormhole", "--fused-dram", "1"][..],
    ] {
        let (code, out, err) = komorebi(cmd);
        assert_eq!(code, 2, "{cmd:?}: {out}{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("--chip wormhole takes no fused DRAM bank"),
            "{err}"
        );
    }
}
