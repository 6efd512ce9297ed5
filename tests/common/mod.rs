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
