//! The TLB windows a backend hands out itself when no driver does (the simulator's BAR model
//! and ttsim): the pools tt-kmd has (201 windows of 2 MiB, window 201 being the kernel's, and 8
//! of 4 GiB), or smaller ones when asked, lowest index first; and where a window's bytes lie in
//! its BAR. A leaf: it imports only `bar` and `error`.

use blackhole_pac::tlb::{self, TlbSize};

use crate::bar::{Mapping, WindowHandle};
use crate::error::PcieError;

/// A window from a [`WindowPool`].
#[derive(Debug, PartialEq, Eq)]
pub struct PoolWindow {
    index: u32,
    size: TlbSize,
    mapping: Mapping,
}

impl WindowHandle for PoolWindow {
    fn index(&self) -> u32 {
        self.index
    }
    fn size(&self) -> TlbSize {
        self.size
    }
    fn mapping(&self) -> Mapping {
        self.mapping
    }
}

impl PoolWindow {
    /// The BAR (0 or 4) and the offset in it of `len` bytes at `offset` of this window's
    /// aperture: whole 4-byte words at a 4-byte aligned offset, inside the window.
    pub fn place(&self, offset: u64, len: usize) -> Result<(u8, u64), PcieError> {
        let size = self.size.bytes();
        if !offset.is_multiple_of(4) || !len.is_multiple_of(4) {
            return Err(PcieError::Unaligned { offset, len });
        }
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(PcieError::OutOfWindow { offset, len, size });
        }
        Ok(match self.size {
            TlbSize::Size2M => (0, self.index as u64 * size + offset),
            TlbSize::Size4G => (
                4,
                (self.index - tlb::TLB_4G_FIRST_INDEX) as u64 * size + offset,
            ),
        })
    }
}

/// The free windows of both sizes.
#[derive(Debug)]
pub struct WindowPool {
    windows_2m: u32,
    windows_4g: u32,
    // Popped from the end: lowest index first.
    free_2m: Vec<u32>,
    free_4g: Vec<u32>,
}

impl WindowPool {
    /// `windows_2m` windows of 2 MiB (at most 201) and `windows_4g` of 4 GiB (at most 8).
    pub fn new(windows_2m: u32, windows_4g: u32) -> Self {
        let n2 = windows_2m.min(tlb::KERNEL_TLB_INDEX);
        let n4 = windows_4g.min(tlb::TLB_4G_COUNT);
        Self {
            windows_2m: n2,
            windows_4g: n4,
            free_2m: (0..n2).rev().collect(),
            free_4g: (0..n4).rev().map(|i| tlb::TLB_4G_FIRST_INDEX + i).collect(),
        }
    }

    /// A free window of `size`, mapped as `mapping`; [`PcieError::WindowsExhausted`] when none
    /// is left.
    pub fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<PoolWindow, PcieError> {
        let (pool, name, available) = match size {
            TlbSize::Size2M => (&mut self.free_2m, "2 MiB", self.windows_2m),
            TlbSize::Size4G => (&mut self.free_4g, "4 GiB", self.windows_4g),
        };
        let index = pool.pop().ok_or(PcieError::WindowsExhausted {
            size: name,
            available,
        })?;
        Ok(PoolWindow {
            index,
            size,
            mapping,
        })
    }

    /// Returns `window` to its pool.
    pub fn free(&mut self, window: PoolWindow) {
        match window.size {
            TlbSize::Size2M => self.free_2m.push(window.index),
            TlbSize::Size4G => self.free_4g.push(window.index),
        }
    }
}
