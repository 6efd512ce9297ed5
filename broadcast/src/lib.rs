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
//! # What the protocol asks of a backend
//!
//! Beyond the HAL's contracts, a backend (a port to another chip included) must give the
//! protocol these, or `Broadcast::new` and the calls give up (never panic) with the HAL error
//! they hit:
//!
//! * **Control block.** At least [`area::CONTROL_BROADCAST`] + [`area::MAX_BROADCASTS`] x
//!   [`area::AREA_BYTES`] bytes (0xC80): the protocol stores to and sends from both areas. The
//!   backend's own words (the stop flag, the wait limit) lie outside `0xA00..0xC80`; the runtime's
//!   ABI (`komorebi-kernel`'s `abi`) puts them at 0x10 and 0x18. A shorter block gives up at
//!   `broadcast_begin` with `Cause::Control(OutOfRange)`. A wait limit of 0 makes every wait
//!   that does not hold at once time out.
//! * **NoC transfers.** The protocol issues, all in mode
//!   [`WriteMode::ORDERED`](komorebi_hal::noc::WriteMode::ORDERED): 4-byte unicast writes
//!   (DONE markers) from one 16-byte-aligned control word to another;
//!   4-byte multicasts (VALID) and multicasts of a whole slot (`pages x page size` bytes) from
//!   an L1 address to the same address on the receivers; and the sender's reads of the pages
//!   its caller names. A NoC that refuses a 4-byte write or multicast
//!   ([`ErrorKind::Misaligned`](komorebi_hal::noc::ErrorKind::Misaligned)) cannot carry the
//!   protocol; one that needs L1 addresses aligned beyond 4 bytes needs the buffer's base and
//!   its slots (`pages x page size`) aligned so too.
//! * **Buffer.** Capacity `window x pages` (the words' shape), a page size that is a nonzero
//!   multiple of 4, and, at `Broadcast::new`, the write pointer at the base and no page in the
//!   buffer. The data-movement kernel's handle and compute's are two handles on one buffer:
//!   they share the `pushed` and `popped` counters and keep their own pointers.
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
