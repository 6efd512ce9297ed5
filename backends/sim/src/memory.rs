//! Sparse byte memory: chunks are allocated on first write, reads of untouched bytes are 0.
//! Used for every L1 (1536 KiB each) and every DRAM bank (4 GiB each), so a chip of 120 tiles
//! and 32 GiB costs only what a run touches.
//!
//! Leaf module: imports nothing of the crate.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for the simulator's integer keys (chunk numbers, flow keys): much
/// cheaper than SipHash, and no input here is adversarial.
#[derive(Default, Clone, Copy, Debug)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// `BuildHasher` of [`FastHasher`].
pub type FastHash = BuildHasherDefault<FastHasher>;

const CHUNK_SHIFT: u32 = 12;
const CHUNK: usize = 1 << CHUNK_SHIFT;
/// The bytes a [`SparseMemory`] allocates at once: a write anywhere in an aligned chunk of
/// them holds all of it in host memory.
pub const CHUNK_BYTES: u64 = CHUNK as u64;

/// A sparse memory of `len` bytes.
#[derive(Debug, Clone)]
pub struct SparseMemory {
    len: u64,
    chunks: HashMap<u64, Box<[u8; CHUNK]>, FastHash>,
}

impl SparseMemory {
    /// An all-zero memory of `len` bytes.
    pub fn new(len: u64) -> Self {
        Self {
            len,
            chunks: HashMap::default(),
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a memory of 0 bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `addr .. addr + n` lies inside.
    pub fn contains(&self, addr: u64, n: usize) -> bool {
        addr.checked_add(n as u64)
            .is_some_and(|end| end <= self.len)
    }

    /// Copies `buf.len()` bytes at `addr` into `buf`; the caller checked [`Self::contains`].
    pub fn read(&self, mut addr: u64, mut buf: &mut [u8]) {
        while !buf.is_empty() {
            let (chunk, off) = (addr >> CHUNK_SHIFT, (addr as usize) & (CHUNK - 1));
            let n = (CHUNK - off).min(buf.len());
            let (head, tail) = buf.split_at_mut(n);
            match self.chunks.get(&chunk) {
                Some(c) => head.copy_from_slice(&c[off..off + n]),
                None => head.fill(0),
            }
            buf = tail;
            addr += n as u64;
        }
    }

    /// Writes `data` at `addr`; the caller checked [`Self::contains`].
    pub fn write(&mut self, mut addr: u64, mut data: &[u8]) {
        while !data.is_empty() {
            let (chunk, off) = (addr >> CHUNK_SHIFT, (addr as usize) & (CHUNK - 1));
            let n = (CHUNK - off).min(data.len());
            let c = self
                .chunks
                .entry(chunk)
                .or_insert_with(|| Box::new([0; CHUNK]));
            c[off..off + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            addr += n as u64;
        }
    }

    /// The 32-bit little-endian word at `addr`.
    pub fn read_u32(&self, addr: u64) -> u32 {
        // The common case, a word inside one chunk, read in place: kernels and the host poll
        // control words at every step, and the general loop copies through `memcpy`.
        let off = (addr as usize) & (CHUNK - 1);
        if off <= CHUNK - 4 {
            return match self.chunks.get(&(addr >> CHUNK_SHIFT)) {
                Some(c) => u32::from_le_bytes([c[off], c[off + 1], c[off + 2], c[off + 3]]),
                None => 0,
            };
        }
        let mut b = [0; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Writes a 32-bit little-endian word at `addr`.
    pub fn write_u32(&mut self, addr: u64, value: u32) {
        self.write(addr, &value.to_le_bytes());
    }

    /// Bytes actually allocated.
    pub fn resident_bytes(&self) -> usize {
        self.chunks.len() * CHUNK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_bytes_read_zero_and_writes_span_chunks() {
        let mut m = SparseMemory::new(4 << 30);
        let mut b = [0xAAu8; 8];
        m.read(123, &mut b);
        assert_eq!(b, [0; 8]);
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        m.write(4090, &data);
        let mut back = vec![0; 10_000];
        m.read(4090, &mut back);
        assert_eq!(back, data);
        assert_eq!(m.resident_bytes(), 4 * 4096);
        m.write_u32((4 << 30) - 4, 0xDEAD_BEEF);
        assert_eq!(m.read_u32((4 << 30) - 4), 0xDEAD_BEEF);
        // A word across two chunks, and one in a chunk never written.
        m.write_u32(4094, 0x0403_0201);
        assert_eq!(m.read_u32(4094), 0x0403_0201);
        assert_eq!(m.read_u32(4093), 0x0302_0103, "byte 4093 is data[3]");
        assert_eq!(m.read_u32(1 << 20), 0);
        assert!(m.contains((4 << 30) - 4, 4) && !m.contains((4 << 30) - 3, 4));
        assert!(!m.contains(u64::MAX, 2));
    }
}
