//! The host side of the persistent kernel: a device (the simulator today; a card through
//! `komorebi-pcie` once the host path exists), the `Session` that owns it, `Run` for several
//! commands in flight, and the test `Feeder`. Everything here is independent of what the
//! commands mean: programs (`crate::app`) build the commands, the dispatcher
//! (`crate::dispatch`) schedules them.

pub mod device;
pub mod session;
