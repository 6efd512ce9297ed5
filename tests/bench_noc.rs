//! `komorebi bench noc`, run as a user runs it: the JSON figures and how they relate, the
//! destinations of a multicast, one-to-all's transactions, determinism, and exit code 2 with one
//! line naming the flag for every bad flag.

mod common;
use common::komorebi;

use serde_json::Value;

/// `komorebi bench noc <args> --json`, parsed; the run must succeed.
fn bench(args: &str) -> Value {
    let mut argv = vec!["bench", "noc"];
    argv.extend(args.split_whitespace());
    argv.push("--json");
    let (code, out, err) = komorebi(&argv);
    assert_eq!(code, 0, "{args}: {err}");
    assert!(err.is_empty(), "{args}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args}: {e}: {out}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn json_has_exactly_the_fields_and_they_agree() {
    // (flags, pattern, transactions, bytes, destinations)
    for (args, pattern, transactions, bytes, destinations) in [
        (
            "--pattern unicast --to 1,1 --size 64 --count 256",
            "unicast",
            256,
            256 * 64,
            1,
        ),
        (
            "--pattern unicast --to 0,0 --size 0x4000 --count 3 --noc 1",
            "unicast",
            3,
            3 * 16384,
            1,
        ),
        (
            "--pattern multicast --rect 0,0,3,3 --size 40000 --count 4",
            "multicast",
            4,
            4 * 40000,
            8,
        ),
        (
            "--pattern multicast --rect 0,0,3,3 --size 2048 --count 8 --noc 1 --linked",
            "multicast",
            8,
            8 * 2048,
            8,
        ),
        (
            "--pattern one-to-all --rect 1,1,2,2 --size 2048 --count 4",
            "one-to-all",
            16,
            16 * 2048,
            1,
        ),
        (
            "--pattern dram-read --size 4096 --count 16 --bank 5",
            "dram-read",
            16,
            16 * 4096,
            1,
        ),
        (
            "--pattern dram-read --size 64 --noc 1 --harvest 0",
            "dram-read",
            1,
            64,
            1,
        ),
    ] {
        let v = bench(args);
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "aiclk_mhz",
                "bytes",
                "bytes_per_cycle",
                "cycles",
                "cycles_per_transaction",
                "destinations",
                "harvest",
                "micros",
                "noc",
                "pattern",
                "size",
                "transactions",
                "what"
            ],
            "{args}"
        );
        assert_eq!(v["pattern"], pattern, "{args}");
        assert_eq!(u(&v, "size") * transactions, bytes, "{args}");
        assert_eq!(u(&v, "noc"), u64::from(args.contains("--noc 1")), "{args}");
        assert_eq!(u(&v, "transactions"), transactions, "{args}");
        assert_eq!(u(&v, "bytes"), bytes, "{args}");
        assert_eq!(u(&v, "destinations"), destinations, "{args}");
        let cycles = u(&v, "cycles");
        assert!(cycles > 0, "{args}");
        assert!(
            close(f(&v, "bytes_per_cycle"), bytes as f64 / cycles as f64),
            "{args}: {v}"
        );
        assert!(
            close(
                f(&v, "cycles_per_transaction"),
                cycles as f64 / transactions as f64
            ),
            "{args}: {v}"
        );
    }
}

#[test]
fn a_2x2_multicast_counts_the_sender_only_with_loopback() {
    let d = |args: &str| u(&bench(args), "destinations");
    // The sender (0,0) inside the rectangle: 3 receivers, 4 with loopback.
    assert_eq!(d("--pattern multicast --rect 0,0,2,2 --size 64"), 3);
    assert_eq!(
        d("--pattern multicast --rect 0,0,2,2 --size 64 --loopback"),
        4
    );
    assert_eq!(
        d("--pattern multicast --rect 0,0,2,2 --size 64 --loopback --noc 1"),
        4
    );
    // The sender just east of the rectangle (tt-metal's no-loopback case): all 4.
    assert_eq!(
        d("--pattern multicast --rect 0,0,2,2 --size 64 --sender 2,0"),
        4
    );
}

#[test]
fn one_to_all_writes_count_transactions_to_every_other_core() {
    // 3 x 2 = 6 cores, the sender among them: 5 cores written, 7 transactions each.
    let v = bench("--pattern one-to-all --rect 0,0,3,2 --size 1000 --count 7");
    assert_eq!(u(&v, "transactions"), 35);
    assert_eq!(u(&v, "bytes"), 35 * 1000);
    assert_eq!(u(&v, "destinations"), 1);
    // The sender outside: all 6.
    let v = bench("--pattern one-to-all --rect 0,0,3,2 --size 1000 --count 7 --sender 5,5");
    assert_eq!(u(&v, "transactions"), 42);
}

#[test]
fn the_same_flags_give_the_same_cycles() {
    for args in [
        "--pattern multicast --rect 0,0,4,4 --size 8192 --count 16 --linked --loopback",
        "--pattern one-to-all --rect 0,0,4,2 --size 20000 --count 3 --noc 1",
        "--pattern dram-read --size 32768 --count 8 --bank 2",
    ] {
        assert_eq!(bench(args), bench(args), "{args}");
    }
}

#[test]
fn text_output_gives_the_figures_with_units() {
    let (code, out, err) = komorebi(&[
        "bench",
        "noc",
        "--pattern",
        "unicast",
        "--to",
        "1,1",
        "--size",
        "64",
        "--count",
        "256",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = bench("--pattern unicast --to 1,1 --size 64 --count 256");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("unicast on NoC0: (0,0) -> (1,1)"),
        "{out}"
    );
    assert!(
        lines[0].contains("256 transactions of 64 B, 16384 B in all"),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&format!("{} cycles (", u(&v, "cycles"))),
        "{out}"
    );
    for unit in ["us at 1350 MHz AICLK", "cycles/transaction", "B/cycle"] {
        assert!(lines[1].contains(unit), "{unit}: {out}");
    }
}

#[test]
fn help_says_which_dram_port_each_noc_reads() {
    let (code, out, _) = komorebi(&["bench", "noc", "--help"]);
    assert_eq!(code, 0);
    let help = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("on NoC 0 banks 0..=7 at (0,11) (0,2)"),
        "{help}"
    );
    assert!(help.contains("on NoC 1 at (0,1) (0,10)"), "{help}");
}

#[test]
fn bad_flags_exit_2_with_one_line_naming_the_flag() {
    for (args, needle) in [
        ("--pattern broadcast --size 64", "--pattern"),
        ("--pattern unicast --size 64", "--to"),
        ("--pattern multicast --size 64", "--rect"),
        ("--pattern one-to-all --size 64", "--rect"),
        ("--pattern unicast --to 1,1 --size 64 --linked", "--linked"),
        (
            "--pattern one-to-all --rect 0,0,2,2 --size 64 --linked",
            "--linked",
        ),
        ("--pattern dram-read --size 64 --loopback", "--loopback"),
        // A sender outside the rectangle gets no copy back: loopback would change nothing.
        (
            "--pattern multicast --rect 0,0,2,2 --size 64 --sender 2,0 --loopback",
            "--loopback: the sender (2,0) is outside",
        ),
        (
            "--pattern unicast --to 1,1 --size 64 --loopback",
            "--loopback",
        ),
        (
            "--pattern unicast --to 1,1 --size 64 --rect 0,0,2,2",
            "--rect",
        ),
        (
            "--pattern multicast --rect 0,0,2,2 --size 64 --to 1,1",
            "--to",
        ),
        ("--pattern unicast --to 1,1 --size 64 --bank 2", "--bank"),
        (
            "--pattern unicast --to 1,1 --size 64 --fused-dram 2",
            "--fused-dram",
        ),
        ("--pattern unicast --to 12,0 --size 64", "--to"),
        ("--pattern unicast --to 0,10 --size 64 --harvest 0", "--to"),
        (
            "--pattern unicast --to 1,1 --size 64 --sender 12,0",
            "--sender",
        ),
        (
            "--pattern dram-read --size 64 --sender 13,0 --harvest 0x1",
            "--sender",
        ),
        ("--pattern multicast --rect 0,0,13,10 --size 64", "--rect"),
        ("--pattern one-to-all --rect 11,9,2,1 --size 64", "--rect"),
        ("--pattern multicast --rect 0,0,0,3 --size 64", "--rect"),
        ("--pattern multicast --rect 0,0,1,2,3 --size 64", "--rect"),
        ("--pattern multicast --rect 0,0,1,1 --size 64", "--rect"),
        (
            "--pattern multicast --rect 3,3,1,1 --size 64 --sender 3,3",
            "no receiver",
        ),
        ("--pattern one-to-all --rect 0,0,1,1 --size 64", "--rect"),
        (
            "--pattern one-to-all --rect 0,0,1,1 --size 64 --loopback",
            "--loopback",
        ),
        ("--pattern unicast --to 1,1 --size 0", "--size"),
        ("--pattern unicast --to 1,1 --size 524289", "--size"),
        ("--pattern unicast --to 1,1 --size 0x80001", "524288"),
        ("--pattern unicast --to 1,1 --size lots", "--size"),
        ("--pattern unicast --to 1,1", "--size"),
        ("--pattern unicast --to 1,1 --size 64 --count 0", "--count"),
        (
            "--pattern multicast --rect 0,0,12,10 --size 64 --count 20000",
            "--count",
        ),
        ("--pattern dram-read --size 64 --bank 8", "--bank"),
        ("--pattern unicast --to 1,1 --size 64 --noc 2", "--noc"),
        ("--pattern unicast --to 1 --size 64", "--to"),
        (
            "--pattern unicast --to 1,1 --size 64 --sender x,y",
            "--sender",
        ),
        (
            "--pattern unicast --to 1,1 --size 64 --harvest 0x3fff",
            "--harvest",
        ),
        (
            "--pattern unicast --to 1,1 --size 64 --harvest 0x4000",
            "--harvest",
        ),
        ("--size 64", "--pattern"),
    ] {
        let mut argv = vec!["bench", "noc"];
        argv.extend(args.split_whitespace());
        let (code, out, err) = komorebi(&argv);
        assert_eq!(code, 2, "{args}: {out}{err}");
        assert!(out.is_empty(), "{args}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args}: {err}");
        assert!(err.starts_with("error: "), "{args}: {err}");
        assert!(err.contains(needle), "{args}: {err}");
    }
}

/// 256 multicasts of 64 B to a 2 x 2 rectangle: a linked run reserves the path once, so it
/// must beat 256 unlinked multicasts, each reserving it.
#[test]

fn a_linked_run_of_small_multicasts_beats_an_unlinked_one() {
    let run = "--pattern multicast --rect 0,0,2,2 --size 64 --count 256";
    let unlinked = u(&bench(run), "cycles");
    let linked = u(&bench(&format!("{run} --linked")), "cycles");
    assert!(linked < unlinked, "linked {linked}, unlinked {unlinked}");
}

/// The JSON says what was measured: the transfer in words, the chip's mask and fused bank.
#[test]
fn the_json_names_the_transfer_and_the_chip() {
    let v = bench("--pattern dram-read --size 64 --fused-dram 0");
    assert!(
        v["what"].as_str().unwrap().starts_with("DRAM bank 1 -> "),
        "{v}"
    );
    assert_eq!((u(&v, "harvest"), u(&v, "fused_dram")), (0x3000, 0), "{v}");
    let v = bench("--pattern dram-read --size 64");
    assert!(
        v["what"].as_str().unwrap().starts_with("DRAM bank 0 -> "),
        "{v}"
    );
    assert!(v.get("fused_dram").is_none(), "{v}");
}
