//! `--trace FILE` of the broadcast program: the file streams as the run goes and is valid JSON
//! with every kind of event, byte for byte the same for the same seed (the dispatcher's host
//! wall-clock slices aside), closed also after a timeout, and a full disk is exit 2 with one
//! line.

mod common;
use common::komorebi;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A directory of this test's own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("komorebi-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }
    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SMALL: &[&str] = &[
    "broadcast",
    "--rect",
    "0,0,3,3",
    "--blocks",
    "4",
    "--pages",
    "2",
    "--window",
    "2",
    "--jobs",
    "2",
    "--seed",
    "11",
    "--adversarial",
];

/// Runs `args` with `--trace path`; the exit code and stderr.
fn traced(args: &[&str], path: &Path) -> (i32, String) {
    let (code, _, err) = komorebi(&[args, &["--trace", path.to_str().unwrap()]].concat());
    (code, err)
}

/// The events of a trace file, which must be one JSON object.
fn events(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    assert_eq!(v["displayTimeUnit"], "ns");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

#[test]
fn a_traced_run_is_valid_json_with_every_kind_of_event_and_the_same_bytes_for_the_same_seed() {
    let dir = Dir::new("trace-feeder");
    let (a, b) = (dir.file("a.json"), dir.file("b.json"));
    let feeder = [SMALL, &["--feeder"]].concat();
    for path in [&a, &b] {
        let (code, err) = traced(&feeder, path);
        assert_eq!(code, 0, "{err}");
    }
    assert!(
        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
        "the same seed gave different trace files"
    );
    let events = events(&a);
    let has = |f: &dyn Fn(&Value) -> bool| events.iter().any(f);
    for pid in 0..3 {
        assert!(
            has(&|e| e["name"] == "process_name" && e["pid"] == pid),
            "process {pid}"
        );
    }
    assert!(has(&|e| e["ph"] == "M" && e["name"] == "thread_name"));
    for (cat, name) in [
        ("kernel", "wait"),
        ("noc0", "multicast"),
        ("noc1", "multicast"),
        ("noc0", "read"),
        ("noc1", "read"),
    ] {
        assert!(
            has(&|e| e["ph"] == "X"
                && e["cat"] == cat
                && e["name"].as_str().unwrap().starts_with(name)),
            "no {cat} {name}"
        );
    }
    // The feeder has no dispatcher: no host wall-clock process.
    assert!(!has(&|e| e["pid"] == 1000));
}

#[test]
fn dispatched_traces_differ_only_in_the_host_wall_clock() {
    let dir = Dir::new("trace-dispatch");
    let (a, b) = (dir.file("a.json"), dir.file("b.json"));
    for path in [&a, &b] {
        let (code, err) = traced(SMALL, path);
        assert_eq!(code, 0, "{err}");
    }
    let (a, b) = (events(&a), events(&b));
    let device =
        |e: &[Value]| -> Vec<Value> { e.iter().filter(|e| e["pid"] != 1000).cloned().collect() };
    assert_eq!(device(&a), device(&b));
    assert!(a.iter().any(|e| e["pid"] == 1000 && e["ph"] == "X"));
    // The dispatcher's slices come after every device event.
    let first_host = a.iter().position(|e| e["pid"] == 1000).unwrap();
    assert!(
        a[first_host..]
            .iter()
            .all(|e| e["pid"].as_u64() >= Some(1000))
    );
}

#[test]
fn a_run_with_a_timeout_still_closes_its_trace() {
    let dir = Dir::new("trace-timeout");
    let stall = [
        "broadcast",
        "--rect",
        "0,0,3,3",
        "--blocks",
        "4",
        "--pages",
        "2",
        "--jobs",
        "2",
        "--wait-limit",
        "200000",
        "--fault",
        "stall-compute:1,1:2",
    ];
    for (name, extra) in [("feeder.json", &["--feeder"][..]), ("dispatch.json", &[])] {
        let path = dir.file(name);
        let (code, err) = traced(&[&stall[..], extra].concat(), &path);
        assert_eq!(code, 3, "{name}: {err}");
        let events = events(&path);
        assert!(events.iter().any(|e| e["name"] == "wait"), "{name}");
    }
}

#[test]
fn a_full_disk_is_exit_2_with_one_line() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for extra in [&["--feeder"][..], &[]] {
        let (code, err) = traced(&[SMALL, extra].concat(), Path::new("/dev/full"));
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("--trace /dev/full: writing the trace failed after")
                && err.contains("No space left on device"),
            "{err}"
        );
    }
}
