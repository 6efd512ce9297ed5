//! `komorebi broadcast --protocol handshake` through the binary (issue 18): the handshake peer
//! runs the same shape, buffers, DRAM data and compute as komorebi's protocol, so a run checks
//! exactly the bytes komorebi's run of the same flags checks; the JSON names the protocol; every
//! window runs; the flags it cannot run with are refused with one line.

mod common;
use common::komorebi;

/// `komorebi broadcast --json --protocol protocol args`, with its exit code.
fn run(protocol: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let (code, out, err) =
        komorebi(&[&["broadcast", "--json", "--protocol", protocol], args].concat());
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?} {err}"));
    (code, v)
}

/// Runs `args` with both protocols; both must succeed and check the same bytes, more than none.
/// Returns the handshake's JSON.
fn same_bytes_as_komorebi(args: &[&str]) -> serde_json::Value {
    let (code, h) = run("handshake", args);
    assert_eq!(code, 0, "{args:?}: {h}");
    let (code, k) = run("komorebi", args);
    assert_eq!(code, 0, "{args:?}: {k}");
    assert_eq!(h["protocol"], "handshake", "{h}");
    assert_eq!(k["protocol"], "komorebi", "{k}");
    assert!(h["ok"].as_bool().unwrap(), "{h}");
    assert!(h["checked_bytes"].as_u64().is_some_and(|b| b > 0), "{h}");
    for field in ["checked_bytes", "received_bytes", "bound_cycles", "binding"] {
        assert_eq!(h[field], k[field], "{args:?} {field}: {h} {k}");
    }
    assert!(
        h["efficiency"]
            .as_f64()
            .is_some_and(|r| r > 0.0 && r <= 1.0),
        "{h}"
    );
    h
}

#[test]
fn a_small_shape_checks_the_bytes_komorebi_checks() {
    let args = ["--rect", "0,0,3,3", "--blocks", "4", "--jobs", "2"];
    let h = same_bytes_as_komorebi(&args);
    // 3 x 3 cores, 2 broadcasts each checked on every core: 2 jobs x 9 cores x 2 x 4 blocks of
    // 4 pages of 2 KiB.
    assert_eq!(h["checked_bytes"], 2 * 9 * 2 * 4 * 4 * 2048, "{h}");
    let (code, out, _) = komorebi(&[&["broadcast", "--protocol", "handshake"][..], &args].concat());
    assert_eq!(code, 0);
    assert!(out.contains("(handshake protocol)"), "{out}");
    assert!(out.contains("result: ok: every byte checked"), "{out}");
}

#[test]
fn the_03_default_checks_every_byte_komorebi_checks() {
    same_bytes_as_komorebi(&["--check", "full"]);
}

#[test]
fn every_window_runs() {
    // A wait limit of 10M cycles: `finish` waits within one limit for its compute to check
    // every block still in the window, 4 pages of 2 KiB at 63 cycles a word each, for both
    // broadcasts: at windows 4 and 8 more than the default 1M (komorebi's too).
    for window in ["1", "2", "4", "8"] {
        let args = [
            "--rect",
            "0,0,3,2",
            "--blocks",
            "9",
            "--jobs",
            "2",
            "--window",
            window,
            "--wait-limit",
            "10000000",
        ];
        same_bytes_as_komorebi(&args);
        // And with --check none: every protocol step, no byte checked.
        let (code, v) = run("handshake", &[&args[..], &["--check", "none"]].concat());
        assert_eq!(code, 0, "window {window}: {v}");
        assert_eq!(v["checked_bytes"], 0, "{v}");
        assert!(v["received_bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
    }
}

#[test]
fn faults_and_the_firmware_s_logs_are_refused_with_one_line() {
    let refusals: [(&[&str], &str, &str); 4] = [
        (
            &["--fault", "stall-dm:1,1:0"],
            "--protocol",
            "faults are injected through komorebi's program and broadcast area",
        ),
        (
            &["--fault", "drop-valid:1,0:0"],
            "--protocol",
            "(allowed: --fault with --protocol komorebi)",
        ),
        (
            &["--device", "pcie-sim", "--exec", "firmware", "--log"],
            "--log",
            "the handshake images are built without logging (code room) (allowed: --log with",
        ),
        (
            &["--device", "pcie-sim", "--exec", "firmware", "--log-follow"],
            "--log-follow",
            "(allowed: --log-follow with --protocol komorebi, or with the handshake's native \
             kernels: --device sim, or pcie-sim with --exec native)",
        ),
    ];
    for (flags, flag, says) in refusals {
        let (code, out, err) =
            komorebi(&[&["broadcast", "--protocol", "handshake"][..], flags].concat());
        assert_eq!(code, 2, "{flags:?}: {out} {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(flag) && err.contains(says), "{err}");
        assert!(err.contains("(allowed: "), "{err}");
    }
    // The pcie-sim card runs it with native kernels, and on the firmware (its own images).
    for exec in ["native", "firmware"] {
        let (code, v) = run(
            "handshake",
            &[
                "--device", "pcie-sim", "--exec", exec, "--rect", "0,0,2,2", "--blocks", "2",
                "--jobs", "1",
            ],
        );
        assert_eq!(code, 0, "{v}");
        assert!(v["checked_bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
    }
}

/// A receiver's compute pops a 16-bit count: with 65,536 pages popped before `finish` first read
/// it, the handshake's receivers lost a whole wrap and gave up `broadcast_free` at the end.
/// Both protocols run the same flags clean.
#[test]
fn a_handshake_receiver_counts_past_65536_popped_pages() {
    let args = [
        "--rect",
        "0,0,2,1",
        "--along",
        "row",
        "--blocks",
        "9",
        "--pages",
        "8192",
        "--page-size",
        "64",
        "--window",
        "1",
        "--jobs",
        "1",
        "--check",
        "none",
        "--wait-limit",
        "10000000",
    ];
    for protocol in ["handshake", "komorebi"] {
        let (code, v) = run(protocol, &args);
        assert_eq!(code, 0, "{protocol}: {v}");
        assert_eq!(v["giveups"], serde_json::json!([]), "{protocol}: {v}");
    }
}
