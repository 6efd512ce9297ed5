//! # komorebi-silicon
//!
//! The komorebi HAL on Blackhole MMIO, for kernels running on the Tensix baby RISC-V cores.
//! `#![no_std]`, no allocation; every register access goes through `blackhole-pac`.
//!
//! | type | trait | realised with |
//! |---|---|---|
//! | [`SiliconNoc`] | `NocMulticast` | one NIU's command buffers (0 writes and multicasts, 1 reads, 2 markers and other small writes, as tt-metal assigns them) and status counters, against software counts |
//! | [`SiliconCb`] | `CircularBuffer` | the overlay stream registers of CB `n` (`tiles_received`, `tiles_acked`) and the kernel's own pointers |
//! | [`SiliconCtrl`] | `ControlBlock` | L1 words with a `fence` around them (the L0 data cache is not coherent), the cycle CSRs |
//!
//! The HAL never waits: when a command buffer is still busy (`NOC_CMD_CTRL != 0`), an issuing
//! call returns `ErrorKind::Busy` and issues nothing; the protocol crates retry inside their
//! waits. A transfer longer than 16 KiB is one command that the NIU splits into 16 KiB packets
//! itself (ISA `NoC/Counters.md`, "Automatic request splitting"): it needs 64-byte aligned
//! addresses, and no other command buffer of the NIU is touched until it clears (an issue in
//! the meantime returns `Busy`). Counts advance per packet.
//!
//! **Coordinates.** komorebi works in raw NoC coordinates. If firmware turned on the NIU's
//! coordinate translation (`NIU_CFG_0` bit 14), give the handle a [`Translation`]: Tensix
//! coordinates are then converted to the translated space before they are written. The
//! translated space runs the NoC0 way on both NoCs, so a NoC1 rectangle (start <= end in NoC1
//! raw coordinates) comes out with start at the NoC0-order maximum: the corner swap the ISA and
//! tt-metal prescribe for NoC1 multicasts. DRAM targets under translation are refused with `InvalidAddress`: their translated
//! mapping is not confirmed by a primary source (blackhole-facts.md §1.4).
//!
//! Every type is built over base pointers (`from_ptr`), so the host tests lay them over plain
//! buffers and check the exact register words each operation writes.
#![no_std]

mod cb;
mod ctrl;
mod error;
mod noc;
mod order;

pub use cb::SiliconCb;
pub use ctrl::SiliconCtrl;
#[cfg(target_arch = "riscv32")]
pub use ctrl::cycles;
pub use error::Error;
pub use noc::{SiliconNoc, Translation};
