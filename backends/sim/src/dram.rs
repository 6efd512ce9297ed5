//! The 8 DRAM banks: 4 GiB of sparse memory each, and each bank's bandwidth as the resource
//! reads and writes queue on (`Timing::dram_bank_bytes_per_cycle`); a request to the same row
//! as the bank's previous request runs at half that rate (`Timing::dram_row_bytes`).
//!
//! Imports only the leaf `memory`.

use std::ops::{Deref, DerefMut};

use blackhole_pac::grid;

use crate::config::ChipModel;
use crate::memory::SparseMemory;

/// The DRAM banks (index them as a slice of memories) and when each is free.
#[derive(Debug)]
pub(crate) struct Dram {
    banks: Vec<SparseMemory>,
    /// When each bank is free.
    free: [f64; grid::DRAM_BANKS],
    /// The row of each bank's last request (`u64::MAX`: none yet).
    row: [u64; grid::DRAM_BANKS],
}

impl Dram {
    /// All of `chip`'s banks zero and idle (at most Blackhole's 8).
    pub(crate) fn new(chip: &ChipModel) -> Self {
        Self {
            banks: (0..chip.dram_ports.len().min(grid::DRAM_BANKS))
                .map(|_| SparseMemory::new(chip.dram_bank_size))
                .collect(),
            free: [0.0; grid::DRAM_BANKS],
            row: [u64::MAX; grid::DRAM_BANKS],
        }
    }

    /// Bank `bank` serves `len` bytes at `addr` from `t` at `bank_bytes_per_cycle`, or half
    /// that when `addr` is in the same `row_bytes` row as the bank's previous request; returns
    /// when they are done.
    pub(crate) fn service(
        &mut self,
        (bank, addr): (u8, u64),
        len: u32,
        t: u64,
        (bank_bytes_per_cycle, row_bytes): (f64, u32),
    ) -> u64 {
        let b = bank as usize;
        let row = addr / row_bytes.max(1) as u64;
        let rate = if row == self.row[b] {
            bank_bytes_per_cycle / 2.0
        } else {
            bank_bytes_per_cycle
        };
        self.row[b] = row;
        let start = (t as f64).max(self.free[b]);
        self.free[b] = start + len as f64 / rate;
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
