//! # komorebi-pcie
//!
//! The host's path to a Blackhole card over tt-kmd's TLB windows, and the same path to the
//! simulator's BAR model.
//!
//! **Status: being built (issue 14).**
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod bar;
pub mod card;
pub mod error;
pub mod firmware;
#[cfg(target_os = "linux")]
pub mod kmd;
pub mod proxy;
#[cfg(feature = "sim")]
pub mod sim;
pub mod telemetry;

pub use bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
pub use card::{Card, CardOptions};
pub use error::PcieError;
#[cfg(target_os = "linux")]
pub use kmd::{DeviceNode, KmdBar, KmdWindow, PciAddress, enumerate};
