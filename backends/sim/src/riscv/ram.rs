//! [`RamBus`]: a flat RAM behind the [`Bus`] trait, for tests and benchmarks. Every address
//! in `base..base + size` is memory with fixed latencies; every other address is a bus fault.

use super::bus::{Bus, BusResult};
use super::cost::Cost;
use super::op::Size;

/// A flat little-endian RAM at `base`, answering every access at once with fixed latencies.
#[derive(Clone, Debug)]
pub struct RamBus {
    base: u32,
    mem: Vec<u8>,
    /// Cycles reported for each load (default: [`Cost::load_l1`], 8).
    pub load_cycles: u32,
    /// Cycles reported for each store (default: [`Cost::store_l1`], 1).
    pub store_cycles: u32,
    /// Extra cycles reported for each instruction fetch (default 0: a cache hit).
    pub fetch_cycles: u32,
}

impl RamBus {
    /// `size` bytes of zeroed RAM starting at `base`, with L1's default latencies.
    pub fn new(base: u32, size: u32) -> Self {
        let cost = Cost::default();
        RamBus {
            base,
            mem: vec![0; size as usize],
            load_cycles: cost.load_l1,
            store_cycles: cost.store_l1,
            fetch_cycles: 0,
        }
    }

    /// The memory's bytes, byte 0 at `base`.
    pub fn bytes(&self) -> &[u8] {
        &self.mem
    }

    /// The memory's bytes, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }

    /// Write `words` little-endian from `addr` on (a program, or data). Words outside the
    /// RAM are dropped.
    pub fn write_words(&mut self, addr: u32, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            let a = addr.wrapping_add(4 * i as u32);
            if let Some(off) = self.offset(a, 4) {
                self.mem[off..off + 4].copy_from_slice(&w.to_le_bytes());
            }
        }
    }

    /// The word at `addr`, if it is inside the RAM.
    pub fn read_word(&self, addr: u32) -> Option<u32> {
        let off = self.offset(addr, 4)?;
        Some(u32::from_le_bytes([
            self.mem[off],
            self.mem[off + 1],
            self.mem[off + 2],
            self.mem[off + 3],
        ]))
    }

    /// Byte offset of the `n`-byte access at `addr`, if all of it is inside the RAM.
    #[inline]
    fn offset(&self, addr: u32, n: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.base) as usize;
        (off < self.mem.len() && self.mem.len() - off >= n).then_some(off)
    }
}

impl Bus for RamBus {
    #[inline]
    fn fetch(&mut self, addr: u32, _at: u64) -> BusResult<u32> {
        match self.read_word(addr) {
            Some(value) => BusResult::Done {
                value,
                cycles: self.fetch_cycles,
            },
            None => BusResult::Fault,
        }
    }

    #[inline]
    fn load(&mut self, addr: u32, size: Size, _at: u64) -> BusResult<u32> {
        let n = size.bytes() as usize;
        let Some(off) = self.offset(addr, n) else {
            return BusResult::Fault;
        };
        let mut bytes = [0u8; 4];
        bytes[..n].copy_from_slice(&self.mem[off..off + n]);
        BusResult::Done {
            value: u32::from_le_bytes(bytes),
            cycles: self.load_cycles,
        }
    }

    #[inline]
    fn store(&mut self, addr: u32, size: Size, value: u32, _at: u64) -> BusResult<()> {
        let n = size.bytes() as usize;
        let Some(off) = self.offset(addr, n) else {
            return BusResult::Fault;
        };
        self.mem[off..off + n].copy_from_slice(&value.to_le_bytes()[..n]);
        BusResult::Done {
            value: (),
            cycles: self.store_cycles,
        }
    }
}
