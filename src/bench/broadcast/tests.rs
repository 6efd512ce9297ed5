use clap::Parser;

use crate::app::broadcast::{BroadcastError, Check, Protocol};

use super::error::{BroadcastBenchError, ListError};
use super::flags::{BroadcastBenchFlags, parse_pages, parse_protocols, parse_windows};
use super::plan::{BroadcastBench, row_specs};
use super::plot::{Chart, Series, escape};
use super::run::{BenchRow, BroadcastBenchReport, set_speedups};

#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    flags: BroadcastBenchFlags,
}

fn flags(args: &str) -> BroadcastBenchFlags {
    let argv = std::iter::once("bench").chain(args.split_whitespace());
    Args::try_parse_from(argv).expect("flags parse").flags
}

/// A bench of the small shape with komorebi only (the protocol this branch runs).
fn small_bench(args: &str) -> BroadcastBench {
    let base = "--rect 0,0,3,3 --blocks 4 --jobs 1 --protocols komorebi";
    BroadcastBench::new(&flags(&format!("{base} {args}"))).expect("a valid bench")
}

fn row(protocol: Protocol, window: u8, pages: u16, cycles: u64, exit_code: u8) -> BenchRow {
    let bound_cycles = cycles / 2;
    BenchRow {
        protocol,
        window,
        pages,
        wait_limit: 1_000_000,
        cycles,
        bound_cycles,
        binding: "DRAM bank 5".into(),
        efficiency: (exit_code == 0).then(|| bound_cycles as f64 / cycles as f64),
        speedup: None,
        native_cycles: None,
        firmware_ratio: None,
        native_efficiency: None,
        ok: exit_code == 0,
        exit_code,
    }
}

#[test]
fn lists_keep_the_order_given_and_take_hex_and_spaces() {
    assert_eq!(parse_windows("1,2,4,8").unwrap().values(), [1, 2, 4, 8]);
    assert_eq!(parse_windows("8, 1,0x2").unwrap().values(), [8, 1, 2]);
    assert_eq!(parse_pages("65535,1").unwrap().values(), [65535, 1]);
    assert_eq!(
        parse_protocols("handshake,komorebi").unwrap().values(),
        [Protocol::Handshake, Protocol::Komorebi]
    );
}

#[test]
fn every_bad_list_says_what_is_wrong_and_what_is_allowed() {
    let allowed = |s: &str| format!("(allowed: {s}, comma separated, each once)");
    for (got, message) in [
        (
            parse_windows("").unwrap_err(),
            format!("the list is empty {}", allowed("1..=8")),
        ),
        (
            parse_windows(" ").unwrap_err(),
            format!("the list is empty {}", allowed("1..=8")),
        ),
        (
            parse_windows("0").unwrap_err(),
            format!("0 is out of range {}", allowed("1..=8")),
        ),
        (
            parse_windows("1,9").unwrap_err(),
            format!("9 is out of range {}", allowed("1..=8")),
        ),
        (
            parse_windows("256").unwrap_err(),
            format!("256 is out of range {}", allowed("1..=8")),
        ),
        (
            parse_windows("2,4,2").unwrap_err(),
            format!("2 is given twice {}", allowed("1..=8")),
        ),
        (
            parse_windows("0x2,2").unwrap_err(),
            format!("2 is given twice {}", allowed("1..=8")),
        ),
        (
            parse_windows("two").unwrap_err(),
            format!("'two' is not a number {}", allowed("1..=8")),
        ),
        (
            parse_windows("1,,2").unwrap_err(),
            format!("'' is not a number {}", allowed("1..=8")),
        ),
        (
            parse_windows("-1").unwrap_err(),
            format!("'-1' is not a number {}", allowed("1..=8")),
        ),
        (
            parse_pages("0").unwrap_err(),
            format!("0 is out of range {}", allowed("1..=65535")),
        ),
        (
            parse_pages("65536").unwrap_err(),
            format!("65536 is out of range {}", allowed("1..=65535")),
        ),
        (
            parse_pages("99999999999999999999999").unwrap_err(),
            format!(
                "99999999999999999999999 is out of range {}",
                allowed("1..=65535")
            ),
        ),
        (
            parse_protocols("tt-metal").unwrap_err(),
            format!(
                "'tt-metal' is not a protocol {}",
                allowed("komorebi, handshake")
            ),
        ),
        (
            parse_protocols("Komorebi").unwrap_err(),
            format!(
                "'Komorebi' is not a protocol {}",
                allowed("komorebi, handshake")
            ),
        ),
        (
            parse_protocols("komorebi,handshake,komorebi").unwrap_err(),
            format!("komorebi is given twice {}", allowed("komorebi, handshake")),
        ),
    ] {
        assert_eq!(got.to_string(), message);
    }
    assert!(matches!(parse_protocols(""), Err(ListError::Empty { .. })));
}

#[test]
fn defaults_are_the_issues_sweep_with_check_none() {
    let f = flags("");
    assert_eq!(f.windows.values(), [1, 2, 4, 8]);
    assert_eq!(f.pages.values(), [1, 4, 8]);
    assert_eq!(f.protocols(), Protocol::ALL);
    // Where the firmware runs (asked for, or the only thing the device runs) both too, each
    // protocol's rows on its own images.
    for device in [
        "--exec firmware --device pcie-sim",
        "--device ttsim:/x.so",
        "--device /dev/tenstorrent/9",
        "--device pcie-sim",
    ] {
        assert_eq!(flags(device).protocols(), Protocol::ALL, "{device}");
    }
    assert_eq!(
        flags("--exec firmware --protocols komorebi").protocols(),
        [Protocol::Komorebi]
    );
    assert_eq!(f.threads, 2);
    assert!(f.plot.is_none() && !f.json && !f.run.feeder);
    let bench = small_bench("");
    assert_eq!(bench.shape.check, Check::None);
    let full = small_bench("--check full");
    assert_eq!(full.shape.check, Check::Full);
    assert_eq!(small_bench("--threads 3").threads, 3);
    // A card's rows run one at a time, whatever --threads says.
    assert_eq!(
        small_bench("--threads 3 --device /dev/tenstorrent/9").threads,
        1
    );
}

#[test]
fn rows_nest_protocols_then_windows_then_pages_in_the_order_given() {
    let rows = row_specs(&Protocol::ALL, &[2, 1], &[4, 1]);
    let got: Vec<(Protocol, u8, u16)> = rows
        .iter()
        .map(|r| (r.protocol, r.window, r.pages))
        .collect();
    use Protocol::{Handshake as H, Komorebi as K};
    assert_eq!(
        got,
        [
            (K, 2, 4),
            (K, 2, 1),
            (K, 1, 4),
            (K, 1, 1),
            (H, 2, 4),
            (H, 2, 1),
            (H, 1, 4),
            (H, 1, 1)
        ]
    );
    let bench = small_bench("--windows 8,2 --pages 1,4,8");
    assert_eq!(bench.rows().len(), 6);
    let cfg = bench.config(&bench.rows()[1]);
    assert_eq!((cfg.window, cfg.pages, cfg.protocol), (8, 4, K));
    assert_eq!((cfg.blocks, cfg.jobs, cfg.rect.columns), (4, 1, 3));
    assert!(cfg.trace.is_none() && cfg.faults.is_empty());
}

#[test]
fn a_window_times_pages_over_the_buffer_limit_is_refused_before_any_run() {
    let f = flags("--protocols komorebi --windows 1,8 --pages 4,8192");
    let e = BroadcastBench::new(&f).unwrap_err();
    assert_eq!(
        e,
        BroadcastBenchError::TooManyPages {
            window: 8,
            pages: 8192
        }
    );
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .starts_with("--pages 8192 with window 8 of --windows: window x pages = 65536"),
        "{e}"
    );
}

#[test]
fn a_refused_run_names_the_benchs_flag() {
    let refused = |flag, why: &str| BroadcastError::Flag {
        flag,
        why: why.into(),
    };
    let e = BroadcastBenchError::of_run(
        Protocol::Handshake,
        1,
        1,
        refused("--protocol", "handshake with --fault"),
    );
    assert_eq!(e.to_string(), "--protocols: handshake with --fault");
    assert_eq!(e.exit_code(), 2);
    let e = BroadcastBenchError::of_run(Protocol::Komorebi, 3, 1, refused("--window", "3"));
    assert_eq!(e.to_string(), "--windows: 3");
    let e = BroadcastBenchError::of_run(Protocol::Komorebi, 1, 1, refused("--rect", "outside"));
    assert_eq!(e.to_string(), "--rect: outside");
    // The text names the bench's flags too (whole flags only: `--windows`, `--window-x` and
    // `--protocols` stay), so what it allows is a flag the bench takes.
    let e = BroadcastBenchError::of_run(
        Protocol::Komorebi,
        2,
        1,
        refused(
            "--firmware",
            "--protocol komorebi posts (allowed: --protocol handshake, or --window 2; \
             --windows --protocols --window-x --protocol)",
        ),
    );
    assert_eq!(
        e.to_string(),
        "--firmware: --protocols komorebi posts (allowed: --protocols handshake, or --windows 2; \
         --windows --protocols --window-x --protocols)"
    );
    let e = BroadcastBenchError::of_run(
        Protocol::Komorebi,
        2,
        4,
        BroadcastError::Dispatch("no worker".into()),
    );
    assert_eq!(
        e.to_string(),
        "the komorebi run with window 2 and 4 pages a block: dispatcher: no worker"
    );
    assert_eq!(e.exit_code(), 2);
    // The program's own checks run for every row in `new`: here L1 cannot hold the buffers.
    let f = flags("--protocols komorebi --pages 100 --page-size 1048576");
    let e = BroadcastBench::new(&f).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--page-size: 2 broadcast buffers of --windows 1 x --pages 100 x"),
        "{e}"
    );
}

#[test]
fn a_plot_must_be_an_svg_path_that_can_be_written() {
    let f = flags("--protocols komorebi --plot out.png");
    assert!(matches!(
        BroadcastBench::new(&f),
        Err(BroadcastBenchError::PlotNotSvg { .. })
    ));
    let f = flags("--protocols komorebi --plot /nonexistent-dir/out.svg");
    let e = BroadcastBench::new(&f).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--plot /nonexistent-dir/out.svg: cannot be written"),
        "{e}"
    );
    // The extension in any case, as `inspect --picture` takes it (the path is checked next).
    let f = flags("--protocols komorebi --plot /nonexistent-dir/out.SVG");
    let e = BroadcastBench::new(&f).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--plot /nonexistent-dir/out.SVG: cannot be written"),
        "{e}"
    );
    assert_eq!(e.exit_code(), 2);
}

#[test]
fn speedup_is_handshake_over_komorebi_cycles_when_both_succeeded() {
    use Protocol::{Handshake as H, Komorebi as K};
    let mut rows = vec![
        row(K, 1, 1, 100, 0),
        row(K, 2, 1, 100, 0),
        row(K, 4, 1, 100, 0),
        row(K, 8, 1, 100, 3),
        row(H, 1, 1, 250, 0),
        row(H, 2, 1, 250, 1),
        row(H, 8, 1, 250, 0),
    ];
    set_speedups(&mut rows);
    let speedups: Vec<Option<f64>> = rows.iter().map(|r| r.speedup).collect();
    assert_eq!(
        speedups,
        [
            Some(2.5), // both ran ok
            None,      // the handshake run failed
            None,      // no handshake row at window 4
            None,      // the komorebi run failed
            None,      // handshake rows have none
            None,
            None
        ]
    );
}

#[test]
fn the_exit_code_is_the_worst_rows_and_the_mean_counts_successful_rows() {
    let bench = small_bench("--windows 1,2 --pages 1,4");
    let k = Protocol::Komorebi;
    let rows = vec![
        row(k, 1, 1, 100, 0),
        row(k, 1, 4, 400, 1),
        row(k, 2, 1, 300, 0),
        row(k, 2, 4, 400, 0),
    ];
    let report = BroadcastBenchReport::new(&bench, rows.clone());
    assert_eq!(report.exit_code(), 1);
    let (mean, n) = report.mean_efficiency(k);
    assert_eq!(n, 3);
    assert!((mean.unwrap() - (50.0 / 100.0 + 150.0 / 300.0 + 200.0 / 400.0) / 3.0).abs() < 1e-12);
    assert_eq!(report.mean_efficiency(Protocol::Handshake), (None, 0));
    let mut worse = rows.clone();
    worse[3] = row(k, 2, 4, 400, 3);
    assert_eq!(BroadcastBenchReport::new(&bench, worse).exit_code(), 3);
    let ok: Vec<BenchRow> = rows
        .iter()
        .map(|r| row(k, r.window, r.pages, 80, 0))
        .collect();
    assert_eq!(BroadcastBenchReport::new(&bench, ok).exit_code(), 0);
}

#[test]
fn the_table_has_one_aligned_line_per_row_and_a_mean_per_protocol() {
    let bench = small_bench("--windows 1,2 --pages 1,4");
    let k = Protocol::Komorebi;
    let rows = vec![
        row(k, 1, 1, 100, 0),
        row(k, 1, 4, 123_456, 0),
        row(k, 2, 1, 300, 3),
        row(k, 2, 4, 400, 0),
    ];
    let report = BroadcastBenchReport::new(&bench, rows);
    let text = report.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + 4 + 1, "{text}");
    assert!(
        lines[0].starts_with("komorebi bench broadcast: rect 0,0,3,3, 4 blocks"),
        "{text}"
    );
    let header = lines[1];
    assert!(header.starts_with("protocol"), "{text}");
    // Every column ends where its header ends (numbers right-aligned), the binding starts
    // where its header starts.
    let binding = header.find("binding").unwrap();
    let cycles_end = header.find("cycles").unwrap() + "cycles".len();
    for line in &lines[2..6] {
        assert_eq!(&line[binding..], "DRAM bank 5", "{text}");
        assert!(line.starts_with("komorebi"), "{text}");
        assert_eq!(line.as_bytes()[cycles_end], b' ', "{text}");
        assert_ne!(line.as_bytes()[cycles_end - 1], b' ', "{text}");
    }
    assert!(lines[3].contains(" 123456 "), "{text}");
    assert!(lines[4].contains("exit 3"), "{text}");
    assert!(lines[2].contains("0.500"), "{text}");
    assert_eq!(
        lines[6],
        "komorebi: mean efficiency 0.500 over the 3 of 4 rows that succeeded (a failed run has no efficiency)"
    );
}

#[test]
fn the_chart_has_a_series_per_protocol_and_pages_without_failed_rows() {
    let bench = small_bench("--windows 1,2,8 --pages 4,1");
    let k = Protocol::Komorebi;
    let rows = vec![
        row(k, 1, 4, 100, 0),
        row(k, 1, 1, 100, 0),
        row(k, 2, 4, 100, 3),
        row(k, 2, 1, 100, 0),
        row(k, 8, 4, 100, 0),
        row(k, 8, 1, 100, 0),
    ];
    let chart = BroadcastBenchReport::new(&bench, rows).chart();
    let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["komorebi, 4 pages", "komorebi, 1 page"]);
    assert_eq!(chart.series[0].points, [(0.0, 0.5), (3.0, 0.5)]);
    assert_eq!(chart.series[1].points, [(0.0, 0.5), (1.0, 0.5), (3.0, 0.5)]);
    assert_eq!((chart.series[0].style, chart.series[1].style), (0, 1));
    let ticks: Vec<(f64, &str)> = chart
        .x_ticks
        .iter()
        .map(|(x, l)| (*x, l.as_str()))
        .collect();
    assert_eq!(ticks, [(0.0, "1"), (1.0, "2"), (3.0, "8")]);
}

fn chart(series: Vec<Series>) -> Chart {
    Chart {
        title: "t".into(),
        subtitle: "s".into(),
        x_label: "window".into(),
        y_label: "efficiency".into(),
        x_ticks: vec![(0.0, "1".into()), (1.0, "2".into()), (2.0, "4".into())],
        series,
    }
}

fn series(name: &str, style: usize, points: &[(f64, f64)]) -> Series {
    Series {
        name: name.into(),
        colour: "#1f77b4",
        style,
        points: points.to_vec(),
    }
}

#[test]
fn svg_text_is_escaped() {
    assert_eq!(escape(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&apos;");
    let mut c = chart(vec![series("k <&> \"x\"", 0, &[(0.0, 0.5)])]);
    c.title = "<script>".into();
    let svg = c.to_svg();
    assert!(!svg.contains("<script>"), "{svg}");
    assert!(svg.contains("&lt;script&gt;"), "{svg}");
    assert!(svg.contains("k &lt;&amp;&gt; &quot;x&quot;"), "{svg}");
}

#[test]
fn svg_axes_have_the_ticks_given_and_zero_to_one_in_fifths() {
    let c = chart(vec![series("a", 0, &[(0.0, 0.25), (2.0, 0.75)])]);
    assert_eq!(c.y_ticks(), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    let svg = c.to_svg();
    assert!(
        svg.starts_with("<svg") && svg.ends_with("</svg>\n"),
        "{svg}"
    );
    for label in ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"] {
        assert!(
            svg.contains(&format!(r#"text-anchor="end">{label}</text>"#)),
            "{label}: {svg}"
        );
    }
    assert_eq!(svg.matches(r#"class="y-tick""#).count(), 6);
    assert_eq!(svg.matches(r#"class="x-tick""#).count(), 3);
    for label in ["1", "2", "4"] {
        assert!(
            svg.contains(&format!(r#"text-anchor="middle">{label}</text>"#)),
            "{label}: {svg}"
        );
    }
    // The first tick is left of the second, which is left of the third; y 0.25 is drawn below
    // y 0.75.
    let xs: Vec<f64> = svg
        .lines()
        .filter(|l| l.contains(r#"class="x-tick""#))
        .map(|l| attr(l, "x"))
        .collect();
    assert!(xs[0] < xs[1] && xs[1] < xs[2], "{xs:?}");
    let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
    let points: Vec<f64> = line
        .split('"')
        .nth(1)
        .unwrap()
        .split([' ', ','])
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(points.len(), 4);
    assert!(points[1] > points[3], "{line}");
    assert_eq!(points[0], xs[0]);
    assert_eq!(points[2], xs[2]);
    // A point past 1 lifts the axis to the next fifth.
    let c = chart(vec![series("a", 0, &[(0.0, 1.05)])]);
    assert!((c.y_max() - 1.2).abs() < 1e-12);
    assert_eq!(c.y_ticks().len(), 7);
}

/// The value of attribute `name` in an SVG line.
fn attr(line: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let start = line.find(&key).unwrap() + key.len();
    let end = start + line[start..].find('"').unwrap();
    line[start..end].parse().unwrap()
}

#[test]
fn an_all_null_series_is_in_the_legend_and_draws_no_line() {
    let c = chart(vec![
        series("komorebi, 1 page", 0, &[(0.0, 0.5), (1.0, 0.6)]),
        series("komorebi, 4 pages", 1, &[]),
        series("handshake, 1 page", 2, &[(0.0, f64::NAN)]),
        series("handshake, 4 pages", 3, &[(2.0, 0.4)]),
    ]);
    let svg = c.to_svg();
    assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
    for name in ["komorebi, 1 page", "handshake, 4 pages"] {
        assert!(svg.contains(&format!(">{name}</text>")), "{name}: {svg}");
    }
    for name in ["komorebi, 4 pages", "handshake, 1 page"] {
        assert!(
            svg.contains(&format!(">{name} (no data)</text>")),
            "{name}: {svg}"
        );
    }
    assert_eq!(svg.matches(r#"class="legend""#).count(), 4);
    // Styles 1..=3 are dashed: in the legend, and the one dashed series with a line.
    assert_eq!(svg.matches("stroke-dasharray").count(), 3 + 1, "{svg}");
    // Every chart, even one with no point at all, is a whole document.
    let empty = chart(vec![series("a", 0, &[])]).to_svg();
    assert!(empty.starts_with("<svg") && empty.ends_with("</svg>\n"));
    assert_eq!(empty.matches("<polyline").count(), 0);
}

#[test]
fn sixteen_series_have_sixteen_looks_and_a_tall_axis_few_ticks() {
    // Each series' look: its dash attribute and its marker at one place.
    let looks: std::collections::BTreeSet<(String, String)> = (0..16)
        .map(|style| {
            let s = series("s", style, &[]);
            (s.dash(), s.marker(0.0, 0.0))
        })
        .collect();
    assert_eq!(looks.len(), 16, "{looks:?}");
    // An efficiency of 10^6 or 10^12 (a clock read wrong), or 11: the axis reaches past it in
    // at most 50 steps, and its top is its last tick.
    for top in [11.0, 1e6, 1e12] {
        let c = chart(vec![series("a", 0, &[(0.0, top)])]);
        let ticks = c.y_ticks();
        assert!(ticks.len() <= 51, "{top}: {}", ticks.len());
        assert_eq!(ticks[0], 0.0);
        let last = *ticks.last().unwrap();
        assert!(last >= top && last == c.y_max(), "{top}: {ticks:?}");
    }
    // As before for a small axis: every fifth.
    let c = chart(vec![series("a", 0, &[(0.0, 1.05)])]);
    assert_eq!(c.y_ticks().len(), 7);
}

#[test]
fn the_picture_grows_with_the_legend() {
    let many: Vec<Series> = (0..30).map(|i| series(&format!("s{i}"), i, &[])).collect();
    let c = chart(many);
    assert!(c.height() >= 70.0 + 22.0 * 30.0);
    let svg = c.to_svg();
    assert!(
        svg.contains(&format!(r#"height="{}""#, c.height())),
        "{svg}"
    );
    assert_eq!(chart(vec![]).height(), super::plot::MIN_HEIGHT);
}
