//! # komorebi-sim
//!
//! A deterministic, virtual-time simulator of one Blackhole chip, implementing the komorebi HAL.
//!
//! **Status: not implemented yet.** This crate is reserved in the workspace so the dependency
//! graph of the architecture is fixed from the start; it holds no code until issue 4 (simulator) fills it.
//! Nothing here claims to work.
