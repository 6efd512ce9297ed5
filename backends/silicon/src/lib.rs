//! # komorebi-silicon
//!
//! The komorebi HAL traits on Blackhole MMIO (NIU command buffers and counters, overlay stream registers, L1 control block).
//!
//! **Status: not implemented yet.** This crate is reserved in the workspace so the dependency
//! graph of the architecture is fixed from the start; it holds no code until issue 8 (silicon backend) fills it.
//! Nothing here claims to work.
#![no_std]
