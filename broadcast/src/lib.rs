//! # komorebi-broadcast
//!
//! The broadcast protocol: one core of a column (or of a row inside one panel), the *sender*,
//! reads blocks from DRAM into a windowed buffer and multicasts each block to the same slot on
//! every other core of the broadcast, then a VALID marker; receivers hand blocks to their compute
//! kernel and report back with DONE markers in the sender's DONE-BY table; the sender reuses a
//! slot only when every receiver has popped it. Up to two broadcasts run at once (id 0 and 1).
//!
//! | module | side | what |
//! |---|---|---|
//! | [`device`] | data-movement kernels | `Broadcast`: `new`, `ok`, `included`, `sender`, `reserve`, `read`, `cast`, `arrive`, `finish`; the handshake peer's `handshake` |
//! | [`compute`] | compute kernel | `receive`, `done`, `end` |
//! | [`layout`] | host | `Geometry`, `broadcasts`, `broadcast_rect`, `broadcast_args`, `panels` |
//! | [`args`] | both | the 11 words of `BroadcastArgs`, version 2 |
//! | [`area`] | both | the broadcast areas of the control block (0xA00, 2 x 0x140 bytes) |
//!
//! The same words, buffers and calls also carry a tt-metal-style handshake, the peer komorebi's
//! protocol is compared against (`device`'s `handshake` module; `komorebi_kernel`'s
//! `handshake_handler` runs it).
//!
//! Generic over `komorebi-hal`; `#![no_std]`, no allocation. The crate implements komorebi's
//! broadcast specification, the design brief the project started from; each module restates
//! the rules of it that the module keeps (the binary layout in [`area`] and [`args`]), so the
//! crate's docs are the specification as implemented.
//!
//! Which kernel runs a broadcast: NoC0 -> the reader (RISCV_0), sender at the top of a column or
//! the left end of a row, multicast +y / +x; NoC1 -> the writer (RISCV_1), sender at the bottom /
//! right end, -y / -x. Every core of a broadcast runs it in the same kernel.
#![no_std]

pub mod area;
pub mod args;
pub mod compute;
pub mod device;
#[doc(hidden)]
pub mod fuzz;
pub mod layout;

pub use area::Where;
pub use args::{Along, BroadcastArgs};
pub use device::{Broadcast, Cause, Context, GiveUp};
