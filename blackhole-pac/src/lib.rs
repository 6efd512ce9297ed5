//! # blackhole-pac
//!
//! Chip facts and registers of Tenstorrent Blackhole, as typed constants, `const fn`s and
//! chiptool-style register blocks. `#![no_std]`; its one dependency is `tt-reg`, the register
//! access it shares with the other chips' PACs.
//!
//! | module | what it holds |
//! |---|---|
//! | [`grid`] | the 17 x 12 NoC grid, what sits where, NoC0 <-> NoC1 coordinates |
//! | [`harvest`] | harvest masks (die order and tt-umd order), logical -> NoC0 Tensix mapping |
//! | [`addr`] | 64-bit NoC address encodings, multicast rectangles with torus wrap, alignment |
//! | [`niu`] | the NIU register block: command buffers, `NOC_CTRL`, counters, configuration |
//! | [`stream`] | overlay stream registers used as circular-buffer counters |
//! | [`tensix`] | L1 size, local memories, soft reset, reset PCs, clocks |
//! | [`tlb`] | PCIe TLB windows and their 2 MiB / 4 GiB configuration encoding |
//! | [`translate`] | raw NoC0 <-> translated coordinates for a harvest mask |
//! | [`arc`] | ARC telemetry, boot status, the PCIe NIU's registers in BAR0 |
//! | [`reg`] | `Reg<T, A>`: the volatile register access the blocks are built from |
//!
//! Every number comes from a primary source named in its module's docs (docs/blackhole.md in
//! the repository collects them, each with its source); the crate's tests check each table
//! against those numbers. Register blocks wrap a base pointer, so a test lays them over a host
//! buffer and checks the exact words a driver wrote.
//!
//! Coordinates are raw NoC coordinates throughout, except in [`translate`], the one place the
//! NIU's coordinate translation is written.
#![no_std]

pub mod addr;
pub mod arc;
pub mod grid;
pub mod harvest;
pub mod niu;
/// Register access: `tt-reg`, shared with the other chips' PACs.
pub use tt_reg as reg;
pub mod stream;
pub mod tensix;
pub mod tlb;
pub mod translate;
