//! # komorebi-kernel
//!
//! Device side of the persistent kernel: the tile control-block ABI, commands, reports and the three kernels' command loop.
//!
//! **Status: not implemented yet.** This crate is reserved in the workspace so the dependency
//! graph of the architecture is fixed from the start; it holds no code until issue 5 (persistent kernel) fills it.
//! Nothing here claims to work.
#![no_std]
