//! The bound's figures and `--check none` through the `komorebi` binary: `efficiency` and
//! `binding` in the JSON and the text, `efficiency` left out of runs that did not do the work;
//! with `--check none` every protocol step run, no byte checked, the summary and the JSON say so,
//! faults still fire, and `--help` says what it promises.

mod common;
use common::{broadcast_json, komorebi};

#[test]
fn check_none_runs_every_protocol_step_and_checks_no_byte() {
    let args = ["--jobs", "2", "--rect", "0,0,3,2", "--check", "none"];
    let (code, v) = broadcast_json(&args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["check"], "none", "{v}");
    assert_eq!(v["checked_bytes"], 0, "{v}");
    assert!(v["received_bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
    assert!(v["ok"].as_bool().unwrap(), "{v}");
    assert!(
        v["efficiency"]
            .as_f64()
            .is_some_and(|r| r > 0.0 && r <= 1.0),
        "{v}"
    );
    assert!(
        !v["binding"].as_str().unwrap().starts_with("compute"),
        "compute checks nothing: {v}"
    );
    let (code, out, _) = komorebi(&[&["broadcast"][..], &args].concat());
    assert_eq!(code, 0);
    assert!(
        out.contains("checked by compute:    not checked (--check none"),
        "{out}"
    );
    assert!(
        out.contains("result: ok: every protocol step succeeded (--check none: no byte checked)"),
        "{out}"
    );
    // A fault still fires and is reported as with checking.
    let (code, v) = broadcast_json(&[&args[..], &["--fault", "stall-dm:1,1:0"]].concat());
    assert_eq!(code, 3, "{v}");
    assert!(
        v["giveups"].as_array().is_some_and(|g| !g.is_empty()),
        "{v}"
    );
    // Bad values are one line with what is allowed.
    let (code, _, err) = komorebi(&["broadcast", "--check", "some"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("(allowed: full, none)"), "{err}");
    let (_, help, _) = komorebi(&["broadcast", "--help"]);
    assert!(
        help.contains("--check <CHECK>") && help.contains("promises nothing of the bytes"),
        "{help}"
    );
}

#[test]
fn a_run_that_did_not_complete_or_gave_up_gives_no_efficiency() {
    let (code, v) = broadcast_json(&["--wait-limit", "0", "--jobs", "1"]);
    assert_eq!(code, 3);
    assert!(v["efficiency"].is_null(), "{v}");
    let (code, out, _) = komorebi(&["broadcast", "--wait-limit", "0", "--jobs", "1"]);
    assert_eq!(code, 3);
    assert!(!out.contains("efficiency:     0"), "{out}");
    assert!(
        out.contains("efficiency:     none: the run did not complete, 1 job timed out"),
        "{out}"
    );
    // Refused words: the job ends in give-ups, without the work the bound counts.
    let args = [
        "--jobs",
        "1",
        "--rect",
        "0,0,2,2",
        "--fault",
        "bad-words:1,1",
    ];
    let (code, v) = broadcast_json(&args);
    assert_ne!(code, 0, "{v}");
    assert!(v["efficiency"].is_null(), "{v}");
    let (code, v) = broadcast_json(&["--jobs", "1", "--rect", "0,0,2,2"]);
    assert_eq!(code, 0);
    assert!(
        v["efficiency"]
            .as_f64()
            .is_some_and(|r| r > 0.0 && r <= 1.0),
        "{v}"
    );
    assert!(v.get("achieved_over_bound").is_none(), "{v}");
    assert_eq!(v["binding"], "compute (0,0)", "{v}");
    assert_eq!(v["check"], "full", "{v}");
}
