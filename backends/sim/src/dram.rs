//! The 8 DRAM banks: 4 GiB of sparse memory each, and each bank's bandwidth as a resource
//! (`Timing::dram_bank_bytes_per_cycle`) that reads and writes queue on.
//!
//! Imports only the leaf `memory`.

use std::ops::{Deref, DerefMut};

use blackhole_pac::grid;

use crate::memory::SparseMemory;

/// The DRAM banks (index them as a slice of memories) and when each is free.
#[derive(Debug)]
pub(crate) struct Dram {
    banks: Vec<SparseMemory>,
    free: [f64; grid::DRAM_BANKS],
}

impl Dram {
    /// All banks zero and idle.
    pub(crate) fn new() -> Self {
        Self {
            banks: (0..grid::DRAM_BANKS)
                .map(|_| SparseMemory::new(grid::DRAM_BANK_SIZE))
                .collect(),
            free: [0.0; grid::DRAM_BANKS],
        }
    }

    /// Bank `bank` serves `len` bytes from `t` at `bytes_per_cycle`; returns when they are done.
    pub(crate) fn service(&mut self, bank: u8, len: u32, t: u64, bytes_per_cycle: f64) -> u64 {
        let b = bank as usize;
        let start = (t as f64).max(self.free[b]);
        self.free[b] = start + len as f64 / bytes_per_cycle;
        self.free[b].ceil() as u64
    }
}

impl Deref for Dram {
    type Target = [SparseMemory];
    fn deref(&self) -> &[SparseMemory] {
        &self.banks
    }
}

impl DerefMut for Dram {
    fn deref_mut(&mut self) -> &mut [SparseMemory] {
        &mut self.banks
    }
}
