//! # komorebi-kernel
//!
//! The device side of the persistent kernel. Each Tensix tile runs three kernels (reader on
//! NoC0, writer on NoC1, compute) that wait for commands in the tile's control block, run the
//! handler the command names, and report when all three are done.
//!
//! | module | what |
//! |---|---|
//! | [`abi`] | the tile control block ABI (version 4, [`abi::ABI_VERSION`]): header, stop flag, wait limit, command slots, reports, broadcast areas |
//! | [`command`] | a command read from its slot; the control block a handler sees |
//! | [`handler`] | `Handler` (the three bodies of one command kind), `HandlerSet`, `Buffers` |
//! | [`persistent`] | the persistent loops `reader`, `writer`, `compute` |
//! | [`broadcast_handler`] | the broadcast handler (id 1): the 03_broadcast program |
//! | [`handshake_handler`] | the handshake handler (id 2): the same program over a tt-metal-style handshake, the baseline komorebi's broadcast is compared against |
//! | [`image`] | the firmware image header a loader finds in L1, and the boot handshake and checks each kernel passes before it runs |
//!
//! `#![no_std]`, generic over `komorebi-hal`; the same code runs on the simulator and (through
//! `komorebi-silicon`) on the baby cores.
#![no_std]
#![allow(async_fn_in_trait)]

pub mod abi;
pub mod broadcast_handler;
pub mod command;
pub mod handler;
pub mod handshake_handler;
pub mod image;
pub mod persistent;

pub use broadcast_handler::BroadcastHandler;
pub use command::{Command, CommandCtrl};
pub use handler::{Buffers, Handler, HandlerSet, Outcome};
pub use handshake_handler::HandshakeHandler;
pub use persistent::KernelExit;
