//! # komorebi-pcie
//!
//! Host proxy: the komorebi host interface over tt-kmd TLB windows.
//!
//! **Status: not implemented yet.** This crate is reserved in the workspace so the dependency
//! graph of the architecture is fixed from the start; it holds no code until a PCIe backend issue fills it.
//! Nothing here claims to work.
