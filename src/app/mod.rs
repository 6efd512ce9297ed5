//! Programs: what the host runs on the device, built from commands of the kernel's handlers.
//! Each program owns its flags' meaning, its data, its checks and its summary; it runs through
//! `crate::host` (the feeder) or `crate::dispatch` (a plugin).

pub mod broadcast;
pub mod matmul;
