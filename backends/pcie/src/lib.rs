//! # komorebi-pcie
//!
//! The host's path to a Blackhole or Wormhole B0 card over tt-kmd's TLB windows, and the same
//! path to the simulator's BAR model (either chip) and to ttsim (Blackhole, and Wormhole B0 on
//! ttsim's `wh` build).
//!
//! | module | what it is for |
//! |---|---|
//! | [`bar`] | the one interface to a card's BARs ([`Bar`]): windows, BAR0 registers, passing time |
//! | `kmd` (Linux) | tt-kmd's implementation: enumeration sorted by PCI address, open checks (API version, Blackhole or Wormhole B0, AICLK), ALLOCATE/CONFIGURE/FREE_TLB, mmaps, volatile 32-bit access |
//! | `sim` (feature `sim`, default) | the simulator's BAR model as a [`Bar`] |
//! | [`ttsim`] (the server and its `Bar`: feature `ttsim`, default, and Linux) | Tenstorrent's simulator in a server process of its own: TLB windows programmed through BAR0, ttsim's stops as errors |
//! | [`arc`] | what a card needs from ARC before its first use (ARC ready, DRAM trained, AICLK raised) and the ARC message queue; a Wormhole's open sequence over BAR0 ([`arc::wormhole`]) |
//! | [`wormhole_window`] | a Wormhole's 2 MiB windows as ttsim and the simulator lay them out and configure them |
//! | [`pool`] | the windows a backend hands out itself when no driver does (the simulated card, ttsim), and where their bytes lie in the BARs |
//! | [`chip`] | the chip behind a card ([`chip::CardChip`]): its enabled tiles, window targets, DRAM ports, harvest word |
//! | [`card`] | everything above the BARs, the same for both: the window plan, translated coordinates, telemetry, L1/DRAM/register/multicast access, hung-device detection |
//! | [`telemetry`] | ARC's telemetry table |
//! | [`firmware`] | firmware images (ELF via `object`, or the simulator's native images) and the boot sequence |
//! | [`proxy`] | the HAL traits from the host, so a protocol can run with the host as a participant |
//! | [`error`] | every way the host path fails ([`PcieError`]) |
//!
//! Because [`card::Card`] and everything above it are generic over [`Bar`], the tests that run
//! over the simulated card run the code a card runs. **None of it has run on a card**: no
//! Blackhole or Wormhole card was available; the `hw-blackhole` feature's tests skip with a line saying so
//! when none is present.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod arc;
pub mod bar;
pub mod card;
pub mod chip;
pub mod error;
pub mod firmware;
#[cfg(target_os = "linux")]
pub mod kmd;
mod landing;
pub mod pool;
pub mod proxy;
#[cfg(feature = "sim")]
pub mod sim;
pub mod telemetry;
pub mod ttsim;
mod window;
pub mod wormhole_window;

pub use bar::{Bar, DeviceIdentity, LockOp, Mapping, WindowHandle};
pub use card::{Card, CardOptions};
pub use error::PcieError;
#[cfg(target_os = "linux")]
pub use kmd::{DeviceNode, KmdBar, KmdWindow, PciAddress, enumerate};
