//! The host's side of the BARs, as the PCIe backend will drive the simulator: program a TLB
//! window with 32-bit stores to its configuration registers, then 32-bit accesses through it.

use blackhole_pac::tlb::{TlbConfig, TlbOrdering, config_offset, window_location};
use komorebi_sim::{Sim, SimError};

/// A place in a BAR: `(bar, offset)`.
pub type At = (u8, u64);

/// Programs window `index` with `c` (32-bit stores, as tt-umd does).
pub fn program(s: &mut Sim, index: u32, c: TlbConfig) {
    let (_, _, size) = window_location(index).unwrap();
    let words = c.encode(size).unwrap();
    let at = config_offset(index).unwrap() as u64;
    for (i, w) in words.iter().enumerate() {
        s.bar_write(0, at + 4 * i as u64, &w.to_le_bytes()).unwrap();
    }
}

/// Points window `index` with configuration `c` at the window-aligned base of NoC address
/// `addr`; the BAR place of `addr`.
pub fn window(s: &mut Sim, index: u32, mut c: TlbConfig, addr: u64) -> At {
    let (bar, base, size) = window_location(index).unwrap();
    c.addr = addr - addr % size.bytes();
    program(s, index, c);
    (bar, base + addr % size.bytes())
}

/// A unicast window configuration onto `xy` on `noc` with `ordering`.
pub fn uni(xy: (u8, u8), noc: u8, ordering: TlbOrdering) -> TlbConfig {
    let mut c = TlbConfig::unicast(xy.0, xy.1, 0);
    c.noc = noc;
    c.ordering = ordering;
    c
}

/// A multicast window configuration from `start` to `end` on `noc`.
pub fn mcast(start: (u8, u8), end: (u8, u8), noc: u8, ordering: TlbOrdering) -> TlbConfig {
    let mut c = uni(end, noc, ordering);
    c.start = start;
    c.multicast = true;
    c
}

/// `at` moved by `bytes`.
pub fn plus(at: At, bytes: u64) -> At {
    (at.0, at.1 + bytes)
}

/// Writes the word at `at`.
pub fn w32(s: &mut Sim, at: At, v: u32) -> Result<(), SimError> {
    s.bar_write(at.0, at.1, &v.to_le_bytes())
}

/// Reads the word at `at`.
pub fn r32(s: &mut Sim, at: At) -> Result<u32, SimError> {
    let mut b = [0; 4];
    s.bar_read(at.0, at.1, &mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Reads the BAR0 register at `offset`.
pub fn bar0(s: &mut Sim, offset: u32) -> Result<u32, SimError> {
    r32(s, (0, offset as u64))
}

/// Every enabled Tensix (NoC0) whose L1 word at `addr` is `v`.
pub fn holding(s: &Sim, addr: u32, v: u32) -> Vec<(u8, u8)> {
    s.tensix()
        .into_iter()
        .filter(|&t| s.read_l1_u32(t, addr).unwrap() == v)
        .collect()
}
