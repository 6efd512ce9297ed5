//! `komorebi bench broadcast`, run as a user runs it: the rows of the JSON, their order and
//! figures (each the figure `komorebi broadcast` gives for the same run), the table, the plot,
//! determinism over threads and runners, and exit code 2 with one line naming the flag for
//! every bad flag, before anything runs.
//!
//! The row tests run over [`PROTOCOLS`], the protocols this branch runs: komorebi's and its
//! handshake peer's.

mod common;
use common::komorebi;

use serde_json::Value;

/// The protocols whose rows the tests check.
const PROTOCOLS: &[&str] = &["komorebi", "handshake"];

/// A small shape: 9 cores, 4 blocks, 1 job.
const SHAPE: &str = "--rect 0,0,3,3 --blocks 4 --jobs 1";
/// The small shape over 2 windows and 2 pages: 4 rows per protocol.
const SMALL: &str = "--rect 0,0,3,3 --blocks 4 --jobs 1 --windows 1,2 --pages 1,4";

/// The row fields, sorted.
const ROW_FIELDS: [&str; 11] = [
    "binding",
    "bound_cycles",
    "cycles",
    "efficiency",
    "exit_code",
    "ok",
    "pages",
    "protocol",
    "speedup",
    "wait_limit",
    "window",
];

/// `komorebi bench broadcast <args>`.
fn bench_raw(args: &str) -> (i32, String, String) {
    let mut argv = vec!["bench", "broadcast"];
    argv.extend(args.split_whitespace());
    komorebi(&argv)
}

/// `komorebi bench broadcast <args> --json`, parsed, with its exit code; stderr must be empty
/// (no progress bar off a terminal, nothing else).
fn bench(args: &str) -> (i32, Value) {
    let (code, out, err) = bench_raw(&format!("{args} --json"));
    assert!(err.is_empty(), "{args}: {err}");
    assert_eq!(out.lines().count(), 1, "{args}: one JSON object: {out}");
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args}: {e}: {out}"));
    (code, v)
}

fn protocols_flag(protocols: &[&str]) -> String {
    format!("--protocols {}", protocols.join(","))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn rows(v: &Value) -> &Vec<Value> {
    v["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("rows in {v}"))
}

#[test]
fn json_rows_come_in_order_with_every_field_and_agree() {
    let (code, v) = bench(&format!("{SMALL} {}", protocols_flag(PROTOCOLS)));
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["bench"], "broadcast");
    assert_eq!(v["rect"], "0,0,3,3");
    assert_eq!((u(&v, "blocks"), u(&v, "jobs")), (4, 1));
    assert_eq!((u(&v, "page_size"), u(&v, "harvest")), (2048, 0x3000));
    assert_eq!(v["chip"], "blackhole");
    assert_eq!(v["clock"], "simulated");
    assert_eq!((&v["along"], &v["check"]), (&"both".into(), &"none".into()));
    assert_eq!(
        (&v["device"], &v["runner"]),
        (&"sim".into(), &"dispatcher".into())
    );
    let rows = rows(&v);
    assert_eq!(rows.len(), PROTOCOLS.len() * 4, "{v}");
    let mut expected = Vec::new();
    for p in PROTOCOLS {
        for w in [1, 2] {
            for pages in [1, 4] {
                expected.push((p.to_string(), w, pages));
            }
        }
    }
    for (row, (protocol, window, pages)) in rows.iter().zip(&expected) {
        let mut keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ROW_FIELDS, "{row}");
        assert_eq!(row["protocol"], protocol.as_str(), "{row}");
        assert_eq!(
            (u(row, "window"), u(row, "pages")),
            (*window, *pages),
            "{row}"
        );
        let (cycles, bound) = (u(row, "cycles"), u(row, "bound_cycles"));
        assert!(bound > 0 && cycles >= bound, "{row}");
        // No --wait-limit: each small row's own, the least there is.
        assert_eq!(u(row, "wait_limit"), 1_000_000, "{row}");
        let e = f(row, "efficiency");
        assert!((e - bound as f64 / cycles as f64).abs() <= 1e-9, "{row}");
        assert!(
            row["binding"].as_str().is_some_and(|b| !b.is_empty()),
            "{row}"
        );
        assert_eq!(
            (&row["ok"], u(row, "exit_code")),
            (&true.into(), 0),
            "{row}"
        );
        // Speedup only where a komorebi row has a handshake row beside it.
        if protocol == "komorebi" && PROTOCOLS.contains(&"handshake") {
            let hs = rows
                .iter()
                .find(|r| {
                    r["protocol"] == "handshake"
                        && u(r, "window") == *window
                        && u(r, "pages") == *pages
                })
                .unwrap();
            let s = f(row, "speedup");
            assert!(
                (s - u(hs, "cycles") as f64 / cycles as f64).abs() <= 1e-9,
                "{row}"
            );
        } else {
            assert!(row["speedup"].is_null(), "{row}");
        }
    }
}

/// Each row names the wait limit its run had: `--wait-limit` when given, else its shape's own,
/// which grows with its window and pages (the report's `wait_limit` is then `null`).
#[test]
fn each_row_names_its_wait_limit() {
    let shape = "--rect 0,0,2,1 --blocks 1 --jobs 1 --along row --protocols komorebi";
    let (code, v) = bench(&format!("{shape} --windows 1,8 --pages 32"));
    assert_eq!(code, 0, "{v}");
    assert!(v["wait_limit"].is_null(), "{v}");
    let limits: Vec<u64> = rows(&v).iter().map(|r| u(r, "wait_limit")).collect();
    // 4 x window x 32 pages x (400 + 2 x 2048) cycles, at least 1,000,000.
    assert_eq!(limits, [1_000_000, 4 * 8 * 32 * 4496], "{v}");
    let (code, v) = bench(&format!(
        "{shape} --windows 1,8 --pages 32 --wait-limit 7000000"
    ));
    assert_eq!(code, 0, "{v}");
    assert_eq!(u(&v, "wait_limit"), 7_000_000, "{v}");
    let limits: Vec<u64> = rows(&v).iter().map(|r| u(r, "wait_limit")).collect();
    assert_eq!(limits, [7_000_000, 7_000_000], "{v}");
}

/// Every row is the run `komorebi broadcast` makes with the same flags: the same cycles, bound,
/// binding and efficiency.
#[test]
fn every_row_is_what_komorebi_broadcast_gives_for_the_same_run() {
    let (_, v) = bench(&format!("{SMALL} {}", protocols_flag(PROTOCOLS)));
    for row in rows(&v) {
        let (window, pages) = (u(row, "window").to_string(), u(row, "pages").to_string());
        let protocol = row["protocol"].as_str().unwrap();
        let args = [
            "broadcast",
            "--rect",
            "0,0,3,3",
            "--blocks",
            "4",
            "--jobs",
            "1",
            "--check",
            "none",
            "--window",
            &window,
            "--pages",
            &pages,
            "--protocol",
            protocol,
            "--json",
        ];
        let (code, out, err) = komorebi(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let single: Value = serde_json::from_str(&out).unwrap();
        for key in ["cycles", "bound_cycles", "binding", "efficiency"] {
            assert_eq!(row[key], single[key], "{key}: {row} vs {single}");
        }
    }
}

#[test]
fn threads_and_the_feeder_give_the_same_rows() {
    let flags = format!("{SMALL} {}", protocols_flag(PROTOCOLS));
    let (_, two) = bench(&format!("{flags} --threads 2"));
    let (_, one) = bench(&format!("{flags} --threads 1"));
    assert_eq!(one, two);
    let (code, feeder) = bench(&format!("{flags} --feeder"));
    assert_eq!(code, 0);
    assert_eq!(feeder["runner"], "feeder");
    assert_eq!(feeder["rows"], two["rows"]);
}

#[test]
fn text_is_a_table_with_one_line_per_row_and_a_mean_per_protocol() {
    let flags = format!("{SMALL} {}", protocols_flag(PROTOCOLS));
    let (code, out, err) = bench_raw(&flags);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let (_, v) = bench(&flags);
    let lines: Vec<&str> = out.lines().collect();
    let n = rows(&v).len();
    // The shape, the header, the rows, what speedup means (with both protocols), a mean per
    // protocol.
    let legend = PROTOCOLS.contains(&"komorebi") && PROTOCOLS.contains(&"handshake");
    assert_eq!(
        lines.len(),
        2 + n + legend as usize + PROTOCOLS.len(),
        "{out}"
    );
    assert!(
        lines[0].starts_with("komorebi bench broadcast: rect 0,0,3,3, 4 blocks"),
        "{out}"
    );
    // The protocol column is as wide as its longest name.
    let header: Vec<&str> = lines[1].split_whitespace().take(4).collect();
    assert_eq!(header, ["protocol", "window", "pages", "cycles"], "{out}");
    for (line, row) in lines[2..2 + n].iter().zip(rows(&v)) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], row["protocol"], "{line}");
        assert_eq!(words[1], u(row, "window").to_string(), "{line}");
        assert_eq!(words[2], u(row, "pages").to_string(), "{line}");
        assert_eq!(words[3], u(row, "cycles").to_string(), "{line}");
        assert_eq!(words[4], u(row, "bound_cycles").to_string(), "{line}");
        assert_eq!(words[5], format!("{:.3}", f(row, "efficiency")), "{line}");
        assert_eq!(words[7], "ok", "{line}");
        assert!(line.ends_with(row["binding"].as_str().unwrap()), "{line}");
    }
    if legend {
        assert!(
            lines[2 + n].starts_with("speedup: handshake cycles"),
            "{out}"
        );
    }
    for (line, p) in lines[2 + n + legend as usize..].iter().zip(PROTOCOLS) {
        assert!(
            line.starts_with(&format!("{p}: mean efficiency 0.")),
            "{out}"
        );
        assert!(line.ends_with("over 4 rows"), "{out}");
    }
}

#[test]
fn plot_draws_a_line_per_protocol_and_pages_with_a_legend() {
    let dir = std::env::temp_dir().join(format!("komorebi-bench-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("efficiency.svg");
    let flags = format!(
        "{SMALL} {} --plot {}",
        protocols_flag(PROTOCOLS),
        path.display()
    );
    let (code, v) = bench(&flags);
    assert_eq!(code, 0, "{v}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    assert_eq!(
        svg.matches("<polyline").count(),
        PROTOCOLS.len() * 2,
        "{svg}"
    );
    for p in PROTOCOLS {
        for name in [format!("{p}, 1 page"), format!("{p}, 4 pages")] {
            assert!(svg.contains(&format!(">{name}</text>")), "{name}: {svg}");
        }
    }
    for tick in ["1", "2"] {
        assert!(
            svg.contains(&format!(r#"text-anchor="middle">{tick}</text>"#)),
            "{svg}"
        );
    }
    // Runs that did not succeed have no efficiency: their series draw no line, the legend says
    // so, and the bench's exit code is the rows' (3, timeout).
    let flags = format!(
        "{SMALL} --protocols komorebi --wait-limit 0 --plot {}",
        path.display()
    );
    let (code, v) = bench(&flags);
    assert_eq!(code, 3, "{v}");
    for row in rows(&v) {
        assert!(
            row["efficiency"].is_null() && row["speedup"].is_null(),
            "{row}"
        );
        assert_eq!(
            (&row["ok"], u(row, "exit_code")),
            (&false.into(), 3),
            "{row}"
        );
        assert!(u(row, "cycles") > 0, "the figures stay: {row}");
    }
    let svg = std::fs::read_to_string(&path).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 0, "{svg}");
    assert!(svg.contains(">komorebi, 4 pages (no data)</text>"), "{svg}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_defaults_to_none_and_full_is_bound_by_compute() {
    let (_, none) = bench(&format!(
        "{SHAPE} --protocols komorebi --windows 2 --pages 4"
    ));
    assert_eq!(none["check"], "none");
    let (code, full) = bench(&format!(
        "{SHAPE} --protocols komorebi --windows 2 --pages 4 --check full"
    ));
    assert_eq!(code, 0, "{full}");
    assert_eq!(full["check"], "full");
    let (n, f) = (&rows(&none)[0], &rows(&full)[0]);
    assert!(f["binding"].as_str().unwrap().starts_with("compute"), "{f}");
    assert!(u(f, "cycles") > u(n, "cycles"), "{f} vs {n}");
    let (_, help, _) = komorebi(&["bench", "broadcast", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("but `none` by default here"), "{help}");
    assert!(help.contains("Exit codes: 0 every run ok"), "{help}");
}

#[test]
fn bad_flags_exit_2_with_one_line_naming_the_flag_before_any_run() {
    for (args, needles) in [
        ("--windows=", &["--windows", "empty", "1..=8"][..]),
        ("--windows 0", &["--windows", "'0'", "1..=8"]),
        (
            "--windows 1,9",
            &["--windows", "9 is out of range", "1..=8"],
        ),
        ("--windows 2,4,2", &["--windows", "2 is given twice"]),
        ("--windows 1,two", &["--windows", "'two' is not a number"]),
        ("--windows 1,,2", &["--windows", "'' is not a number"]),
        ("--pages=", &["--pages", "empty", "1..=65535"]),
        ("--pages 0", &["--pages", "0 is out of range", "1..=65535"]),
        ("--pages 65536", &["--pages", "65536 is out of range"]),
        ("--pages 4,4", &["--pages", "4 is given twice"]),
        ("--pages four", &["--pages", "'four' is not a number"]),
        (
            "--windows 1,8 --pages 8192",
            &["--pages 8192", "window 8", "65536", "at most 65535"],
        ),
        (
            "--protocols=",
            &["--protocols", "empty", "komorebi, handshake"],
        ),
        (
            "--protocols tt-metal",
            &[
                "--protocols",
                "'tt-metal' is not a protocol",
                "komorebi, handshake",
            ],
        ),
        (
            "--protocols komorebi,komorebi",
            &["--protocols", "komorebi is given twice"],
        ),
        ("--protocols komorebi --trace t.json", &["--trace"]),
        ("--protocols komorebi --fault stall-dm:1,1", &["--fault"]),
        (
            "--protocols komorebi --window 2",
            &["--window", "--windows"],
        ),
        ("--protocols komorebi --threads 0", &["--threads", "1..=16"]),
        (
            "--protocols komorebi --plot out.png",
            &["--plot out.png", ".svg"],
        ),
        (
            "--protocols komorebi --plot /nonexistent-komorebi-dir/p.svg",
            &[
                "--plot /nonexistent-komorebi-dir/p.svg",
                "cannot be written",
            ],
        ),
        ("--protocols komorebi --rect 0,0,13,10", &["--rect"]),
        (
            "--protocols komorebi --pages 100 --page-size 1048576",
            &["--page-size", "do not fit"],
        ),
    ] {
        // The default shape: 12 rows of the full grid, which print the table when they run. An
        // empty stdout shows the bench stopped before running (the plot is written after the
        // table, so an unwritable plot found late would follow a printed table).
        let (code, out, err) = bench_raw(args);
        assert_eq!(code, 2, "{args}: {out}{err}");
        assert!(out.is_empty(), "{args}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args}: {err}");
        assert!(err.starts_with("error: "), "{args}: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{args}: {needle}: {err}");
        }
    }
}

/// The handshake's rows are there beside komorebi's, and each komorebi row's speedup is the
/// handshake's cycles over its own.
#[test]
fn handshake_rows_beside_komorebi_s() {
    let (code, out, err) = bench_raw(&format!("{SMALL} --json"));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows = rows(&v);
    assert_eq!(rows.len(), 8, "{v}");
    for (i, row) in rows.iter().enumerate() {
        let protocol = if i < 4 { "komorebi" } else { "handshake" };
        assert_eq!(row["protocol"], protocol, "{row}");
        if i < 4 {
            let hs = &rows[i + 4];
            let s = f(row, "speedup");
            assert!((s - u(hs, "cycles") as f64 / u(row, "cycles") as f64).abs() <= 1e-9);
        } else {
            assert!(row["speedup"].is_null(), "{row}");
        }
    }
}

#[test]
fn on_the_firmware_each_row_gives_the_native_cycles_and_the_ratio_beside_it() {
    let shape = "--rect 0,0,2,2 --blocks 2 --jobs 1 --windows 1,2 --pages 1 --device pcie-sim";
    let (code, v) = bench(&format!("{shape} --exec firmware"));
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        (&v["exec"], &v["device"]),
        (&"firmware".into(), &"pcie-sim".into())
    );
    // Both protocols' rows, each on its own images (the handshake's carry its handler).
    let rows = rows(&v);
    assert_eq!(rows.len(), 4, "{v}");
    let (_, native) = bench(&format!("{shape} --exec native"));
    assert_eq!(native["exec"], "native");
    for (i, (row, native_row)) in rows.iter().zip(self::rows(&native)).enumerate() {
        let protocol = if i < 2 { "komorebi" } else { "handshake" };
        assert_eq!(row["protocol"], protocol, "{row}");
        assert_eq!(native_row["protocol"], protocol, "{native_row}");
        assert_eq!(row["ok"], true, "{row}");
        if i < 2 {
            // komorebi's speedup over the handshake row of the same window, on the firmware.
            let over = u(&rows[i + 2], "cycles") as f64 / u(row, "cycles") as f64;
            assert!((f(row, "speedup") - over).abs() <= 1e-9, "{row}");
        }
        // The native cycles beside a firmware row are the native bench's own figure.
        assert_eq!(u(row, "native_cycles"), u(native_row, "cycles"), "{row}");
        assert!(native_row.get("native_cycles").is_none(), "{native_row}");
        let ratio = u(row, "cycles") as f64 / u(row, "native_cycles") as f64;
        assert!((f(row, "firmware_ratio") - ratio).abs() <= 1e-9, "{row}");
    }
    // The table names both columns; the plot draws both lines.
    let dir = std::env::temp_dir().join(format!("komorebi-fw-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("fw.svg");
    let (code, out, err) = bench_raw(&format!(
        "{shape} --exec firmware --plot {}",
        plot.display()
    ));
    assert_eq!(code, 0, "{err}");
    let header = out.lines().nth(1).unwrap_or_default();
    assert!(
        header.contains("native") && header.contains("ratio"),
        "{out}"
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("komorebi firmware, 1 page")
            && svg.contains("komorebi native, 1 page")
            && svg.contains("handshake firmware, 1 page"),
        "{svg}"
    );
    std::fs::remove_dir_all(&dir).ok();
    // With the firmware's costs per call, the native column is the native bench charged them.
    assert_eq!(v["kernel_costs"], "tt-metal");
    let costs = "--kernel-costs firmware";
    let (code, priced) = bench(&format!("{shape} --exec firmware {costs}"));
    assert_eq!(code, 0, "{priced}");
    assert_eq!(priced["kernel_costs"], "firmware");
    let (code, native) = bench(&format!("{shape} --exec native {costs}"));
    assert_eq!(code, 0, "{native}");
    assert_eq!(
        (self::rows(&priced).len(), self::rows(&native).len()),
        (rows.len(), rows.len())
    );
    for ((row, priced_row), native_row) in rows
        .iter()
        .zip(self::rows(&priced))
        .zip(self::rows(&native))
    {
        assert_eq!(u(priced_row, "cycles"), u(row, "cycles"), "{priced_row}");
        assert_eq!(
            u(priced_row, "native_cycles"),
            u(native_row, "cycles"),
            "{priced_row}"
        );
        assert!(
            u(priced_row, "native_cycles") > u(row, "native_cycles"),
            "{priced_row} against {row}"
        );
    }
}
