//! Tenstorrent's own simulator, ttsim, as a [`Bar`](crate::Bar): the real host path (window
//! plan, telemetry, firmware loader) and the real firmware on a functional, bit-exact Blackhole
//! (or Wormhole B0, a `wh` build: [`TtsimBar::open_card`]) that refuses what the ISA does not
//! define.
//!
//! ttsim (`libttsim.so`, Apache-2.0, github.com/tenstorrent/ttsim) is driven like a card:
//! PCI config space, BAR reads and writes, and time advanced by the host
//! (`libttsim_clock`). It is one process-wide, single-threaded instance, and it ends its process
//! on any violation, printing one error line. So it runs in a process of its own, the server
//! ([`server::serve`], the `komorebi-ttsim-server` binary), and the host talks to it over pipes
//! ([`wire`]); a server that ends becomes [`PcieError::TtsimStopped`](crate::PcieError) with
//! ttsim's category and message ([`TtsimStop`]), and the host carries on.
//!
//! | module | what it is for |
//! |---|---|
//! | [`process`] | [`TtsimProcess`]: starting the server, requests, its end as a [`TtsimStop`] |
//! | [`bar`] | [`TtsimBar`]: one chip's BARs, TLB windows programmed through BAR0 |
//! | [`stop`] | [`TtsimStop`], [`TtsimCategory`]: ttsim's error line |
//! | [`wire`] | the requests between host and server |
//! | [`server`] | the server's loop over `libttsim.so` (loaded with `libloading`) |
//!
//! **Time.** ttsim is functional, not timed: a clock step runs one instruction of every active
//! core, and a NoC transfer lands when it is issued. Nothing runs between the host's requests;
//! [`Bar::pass_time`](crate::Bar::pass_time) runs a number of steps while the host waits, and a
//! tile's wall clock reads the step count. Cycles measured on ttsim are clock steps, not
//! device time.

// The server and its client need Linux (the server's descriptor juggling) and the `ttsim`
// feature (libloading); what a stop is, every build knows, since `PcieError` carries one.
#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub mod bar;
#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub mod process;
#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub mod server;
pub mod stop;
#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub mod wire;

#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub use bar::{TtsimBar, TtsimBarOptions, TtsimWindow};
#[cfg(all(feature = "ttsim", target_os = "linux"))]
pub use process::TtsimProcess;
pub use stop::{TtsimCategory, TtsimStop};

/// The environment variable that names the `libttsim.so` to use when `--device ttsim` gives no
/// path.
pub const LIBRARY_VAR: &str = "KOMOREBI_TTSIM";
/// The environment variable that names the server binary, when it is not next to the program.
pub const SERVER_VAR: &str = "KOMOREBI_TTSIM_SERVER";
/// The server binary's name.
pub const SERVER_NAME: &str = "komorebi-ttsim-server";
