//! The host side of the persistent kernel: a device (the simulator, the simulator presented as a
//! PCIe card, or a card, both through `komorebi-pcie`), the `Session` that owns it, `Run` for several
//! commands in flight, and the test `Feeder`. Everything here is independent of what the
//! commands mean: programs (`crate::app`) build the commands, the dispatcher
//! (`crate::dispatch`) schedules them.

pub mod backend;
pub mod device;
pub mod feed;
pub mod log;
pub mod memory;
pub mod pcie;
pub mod profile;
pub mod session;
pub mod what_if;
pub mod wrap;
