//! # komorebi-pcie
//!
//! The host's path to a Blackhole card over tt-kmd's TLB windows, and the same path to the
//! simulator's BAR model.
//!
//! **Status: being built (issue 14).** What is here: the [`bar::Bar`] interface both backends
//! implement and the crate's errors.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod bar;
pub mod error;
#[cfg(target_os = "linux")]
pub mod kmd;

pub use bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
pub use error::PcieError;
#[cfg(target_os = "linux")]
pub use kmd::{DeviceNode, KmdBar, KmdWindow, PciAddress, enumerate};
