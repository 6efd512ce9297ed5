//! # wormhole-pac
//!
//! Chip facts and registers of Tenstorrent Wormhole B0, as typed constants and `const fn`s, in
//! the shape of `blackhole-pac`: the second chip behind komorebi's chip-neutral HAL (decisions
//! D29, D30, D35, D36).
//! `#![no_std]`; its one dependency is `tt-reg`, the register access it
//! shares with `blackhole-pac`.
//!
//! | module | what it holds |
//! |---|---|
//! | [`grid`] | the 10 x 12 NoC grid, what sits where, NoC0 <-> NoC1 coordinates |
//! | [`harvest`] | row harvest masks (tt-umd order and the ARC message's order), logical -> NoC0 Tensix mapping |
//! | [`translate`] | raw NoC0 <-> translated coordinates for a harvest mask |
//! | [`arc`] | ARC as the host reaches it through BAR0: boot states, messages (harvested rows, AICLK) through the reset unit's scratch registers, the telemetry table's pointers and tags (and the legacy table's) |
//! | [`addr`] | NoC address encodings (coordinates in the middle word), packet size, alignment |
//! | [`niu`] | the NIU register block ([`niu::Niu`]): command buffers, `NOC_CTRL` bits, counters, configuration |
//! | [`stream`] | overlay stream registers used as circular-buffer counters |
//! | [`tensix`] | L1 size, soft reset, reset PCs, wall clock |
//! | [`tlb`] | PCIe TLB windows (1 / 2 / 16 MiB) and their configuration encoding |
//!
//! Sources, each named again where its numbers are used: tt-umd
//! `device/api/umd/device/arch/wormhole_implementation.hpp` and
//! `device/coordinates/wormhole_coordinate_manager.cpp` (commit 3ed9cb6); tt-metal
//! `tt_metal/hw/inc/internal/tt-1xx/wormhole/noc/noc_parameters.h` and `dev_mem_map.h`;
//! tt-isa-documentation `WormholeB0/` (commit 3930471); tt-kmd `wormhole.c` (commit 4af7192);
//! ttsim v1.10.0 `data/wh/tile_regs.json`, which `tests/ttsim_regs.rs` checks the NIU offsets
//! against.
#![no_std]

pub mod addr;
pub mod arc;
pub mod grid;
pub mod harvest;
pub mod niu;
pub mod stream;
pub mod tensix;
pub mod tlb;
pub mod translate;
