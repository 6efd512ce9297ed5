#![doc = include_str!("../README.md")]
#![no_std]
// The HAL's one async trait (`Pause`) is used by single-threaded executors; no `Send` bound is
// wanted, as in embedded-hal-async.
#![allow(async_fn_in_trait)]

pub mod cb;
pub mod control;
pub mod noc;
pub mod role;
pub mod types;
pub mod wait;
pub mod wrap;

pub use cb::CircularBuffer;
pub use control::{ControlBlock, ControlLayout};
pub use noc::NocMulticast;
pub use role::{Compute, DataMovement, Role};
pub use types::{L1Addr, LogicalRect, LogicalXy, NocAddr, NocId, Rect, ValueError, Xy};
pub use wait::{Pause, Spin, WaitError, block_on, call_deadline, wait_until, wait_until_deadline};
