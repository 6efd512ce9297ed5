//! What the integration tests of the `komorebi` binary share.

use std::process::Command;

/// Runs the `komorebi` binary with `args`: its exit code (-1 if a signal ended it), standard
/// output and standard error. The ttsim server is the one built beside it, whatever the
/// caller's environment says.
pub fn komorebi(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_komorebi"))
        .args(args)
        .env(
            "KOMOREBI_TTSIM_SERVER",
            env!("CARGO_BIN_EXE_komorebi-ttsim-server"),
        )
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `args` of `komorebi broadcast` as JSON, without its `dispatch` figures (host timing, which
/// differs from run to run), with the exit code.
#[allow(dead_code)] // Not every test binary that shares this module runs the program.
pub fn broadcast_json(args: &[&str]) -> (i32, serde_json::Value) {
    let (code, out, err) = komorebi(&[&["broadcast", "--json"][..], args].concat());
    let mut v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?} {err}"));
    if let Some(o) = v.as_object_mut() {
        o.remove("dispatch");
    }
    (code, v)
}

/// A W column of 10 cores at x = 2, 8 blocks of 2 pages of 256 bytes, whose compute at (2,5)
/// stalls before block 3: the column's sender at the bottom, (2,9), gives up `broadcast_done`
/// at block 5, every receiver `broadcast_valid` (add `--jobs`).
#[allow(dead_code)] // Not every test binary that shares this module uses it.
pub const STALLED_COLUMN: [&str; 14] = [
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
    "--wait-limit",
    "200000",
    "--fault",
    "stall-compute:2,5:3",
];

/// Runs `case` (a simulation with seed `seed`); a panic anywhere in it (an `unwrap` inside a
/// simulated kernel as much as an assertion) fails with the seed that replays it.
#[allow(dead_code)]
pub fn with_seed<T>(seed: u64, case: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(case)) {
        Ok(v) => v,
        Err(payload) => {
            let why = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            panic!("seed {seed}: {why}");
        }
    }
}
