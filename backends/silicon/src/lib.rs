//! # komorebi-silicon
//!
//! The komorebi HAL on Tensix MMIO, for kernels running on the baby RISC-V cores of a
//! Blackhole or a Wormhole B0. `#![no_std]`, no allocation; every register access goes through
//! the chip's PAC (`blackhole-pac`, `wormhole-pac`), chosen by a [`Chip`] type parameter
//! ([`Blackhole`], [`Wormhole`]): one backend over a chip description (decisions D30).
//!
//! | type | trait | realised with |
//! |---|---|---|
//! | [`SiliconNoc`] | `NocMulticast` | one NIU's command buffers (0 writes and multicasts, 1 reads, 2 markers and other small writes, as tt-metal assigns them) and status counters, against software counts |
//! | [`SiliconCb`] | `CircularBuffer` | the overlay stream registers of CB `n` (`tiles_received`, `tiles_acked`) and the kernel's own pointers |
//! | [`TileIdentity`] | (boot check) | NIU0's `NOC_NODE_ID` and, when the host's chip word says coordinates are translated, `NOC_ID_LOGICAL`, checked against a harvest mask |
//! | [`SiliconCtrl`] | `ControlBlock` | L1 words with a [`fence`] around them: a compiler fence only on both chips, since a Blackhole image turns its cores' L0 data cache off at boot and a Wormhole core has none (a `fence` instruction where a chip runs with the cache on: [`Chip::L0_DATA_CACHE`]); the tile's wall clock |
//! | [`Poll`] | `Pause` | nothing between polls (no spin-loop hint, which on these cores is a fence) |
//!
//! The HAL never waits: when a command buffer is still busy (`NOC_CMD_CTRL != 0`), an issuing
//! call returns `ErrorKind::Busy` and issues nothing; the protocol crates retry inside their
//! waits. A transfer longer than one packet (16 KiB on Blackhole, 8 KiB on Wormhole) is split in
//! software into packets, one command each: the first goes at once, the others on later calls of the handle as the
//! command buffer frees (every issuing call returns `Busy` and every completion check `false`
//! until the last has gone). tt-metal splits the same way; the NIU's own splitting is left
//! alone (the ISA leaves it unclear on Blackhole). Counts advance per packet.
//!
//! **Completion.** `reads_done` and `writes_acked` compare the NIU's 32-bit counters with
//! software counts. `writes_sent` means the source bytes have been read, so the source may be
//! reused: it reads the per-transaction-id `NIU_MST_WRITE_REQS_OUTGOING_ID`, which the NIU
//! decrements after the data reads from L1; `*_WR_REQ_SENT` counts before them (ISA
//! `NoC/Counters.md`).
//!
//! **Coordinates.** komorebi works in raw NoC coordinates. If the chip translates coordinates
//! (the host's chip word says so, from the PCIe NIU's `NIU_CFG_0` bit 14; a Tensix NIU's own bit
//! is not relied on), give the handle the chip's translation ([`Chip::Translation`]): Tensix,
//! DRAM and (Blackhole) ARC coordinates are then converted to the translated space
//! (`blackhole_pac::translate`, `wormhole_pac::translate`) before they are written (Blackhole's
//! DRAM to its translated x 17/18, y 12..23, as tt-metal addresses it and as ttsim requires;
//! Wormhole's DRAM keeps its coordinates). The translated
//! space runs the NoC0 way on both NoCs, so a NoC1 rectangle comes out with start at the
//! NoC0-order maximum: the corner swap the ISA and tt-metal prescribe for NoC1 multicasts. A
//! multicast rectangle is written as the translated rectangle over the enabled columns and rows
//! it covers, never with a corner on a harvested one.
//!
//! **Ordering of core stores and NIU commands.** `fence` does not order an L1 store before a
//! later NIU command on these cores (ISA `BabyRISCV/MemoryOrdering.md`); [`SiliconCtrl`]'s
//! `store` reads the word back and consumes the value before it returns, so a command issued
//! after it (a VALID or marker multicast whose source is that word) reads the new value.
//!
//! Every type is built over base pointers (`from_ptr`), so the host tests lay them over plain
//! buffers and check the exact register words each operation writes.
#![no_std]

mod cb;
pub mod chip;
mod cover;
mod ctrl;
mod error;
mod identity;
mod noc;
mod order;
mod pages;
mod poll;

pub use cb::SiliconCb;
pub use chip::{Blackhole, Chip, Wormhole};
#[cfg(target_arch = "riscv32")]
pub use ctrl::cycles;
pub use ctrl::{ControlPlace, Placed, SiliconCtrl};
pub use error::{Error, Why};
pub use identity::{IdentityError, TileIdentity};
pub use noc::SiliconNoc;
pub use order::fence;
pub use poll::Poll;
