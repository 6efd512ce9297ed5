//! `komorebi-ttsim-server LIBTTSIM`: runs Tenstorrent's ttsim (`libttsim.so`) in this process and
//! serves the host's requests over the standard streams (`komorebi_pcie::ttsim::server`).
//!
//! The host (`komorebi ... --device ttsim`) starts it; it is not meant to be run by hand. ttsim
//! ends this process on any violation, with its error line on standard error, and the host
//! reports it.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match (args.next(), args.next()) {
        (Some(library), None) => ExitCode::from(komorebi_pcie::ttsim::server::serve(
            std::path::Path::new(&library),
        )),
        _ => {
            eprintln!(
                "usage: komorebi-ttsim-server LIBTTSIM (started by `komorebi ... --device ttsim`)"
            );
            ExitCode::from(2)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("komorebi-ttsim-server: ttsim runs on Linux only");
    ExitCode::from(3)
}
