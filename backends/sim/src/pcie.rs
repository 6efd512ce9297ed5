//! The PCIe TLB windows as the host sees them: BAR0's 202 windows of 2 MiB and its
//! configuration registers, BAR4's 8 windows of 4 GiB (blackhole-facts.md §7.2). A host write
//! into a window lands in the tile (or every Tensix of the multicast rectangle) and local
//! address its configuration names, at the current cycle. This is what the PCIe backend's tests
//! run against.
//!
//! This module decodes: it keeps the windows' configuration words and says where an access
//! lands ([`Place`]); `Sim::bar_write` and `Sim::bar_read` carry it out. Imports only `tile`
//! (to find a window's target) and leaf modules.

use blackhole_pac::tlb::{self, TlbConfig, TlbSize};

use crate::error::SimError;
use crate::packet::Target;
use crate::route::raw;
use crate::tile::Tiles;

/// Where a window access lands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// A tile's L1: NoC0 coordinates, address.
    L1((u8, u8), u32),
    /// A DRAM bank and address.
    Dram(u8, u64),
    /// Every enabled Tensix of the NoC0 rectangle `start..=end`, at an L1 address.
    Multicast((u8, u8), (u8, u8), u32),
}

/// The saved configuration words of every window.
#[derive(Clone, Debug)]
pub(crate) struct Tlbs {
    regs: Vec<[u32; 3]>,
}

impl Tlbs {
    /// Every window's configuration zero.
    pub(crate) fn new() -> Self {
        Self {
            regs: vec![[0; 3]; 210],
        }
    }

    fn config_reg(offset: u64, len: usize) -> Option<usize> {
        let base = tlb::TLB_CONFIG_BASE as u64;
        let end = base + 210 * tlb::TLB_CONFIG_BYTES as u64;
        (offset >= base && offset + len as u64 <= end && offset % 4 == 0 && len % 4 == 0)
            .then(|| ((offset - base) / 4) as usize)
    }

    /// Writes configuration registers when BAR0 `offset..+data.len()` is some (BAR0
    /// `0x1FC0_0000..`); false (nothing written) otherwise.
    pub(crate) fn write_config(&mut self, offset: u64, data: &[u8]) -> bool {
        let Some(word) = Self::config_reg(offset, data.len()) else {
            return false;
        };
        for (i, chunk) in data.chunks(4).enumerate() {
            let n = word + i;
            self.regs[n / 3][n % 3] = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        true
    }

    /// Reads configuration registers when BAR0 `offset..+buf.len()` is some; false (nothing
    /// read) otherwise.
    pub(crate) fn read_config(&self, offset: u64, buf: &mut [u8]) -> bool {
        let Some(word) = Self::config_reg(offset, buf.len()) else {
            return false;
        };
        for (i, chunk) in buf.chunks_mut(4).enumerate() {
            let n = word + i;
            chunk.copy_from_slice(&self.regs[n / 3][n % 3].to_le_bytes());
        }
        true
    }

    fn window(&self, bar: u8, offset: u64, len: usize) -> Result<(TlbConfig, u64), SimError> {
        let (index, size, within) = match bar {
            0 if offset < tlb::TLB_2M_COUNT as u64 * tlb::TLB_2M_SIZE => (
                (offset / tlb::TLB_2M_SIZE) as u32,
                TlbSize::Size2M,
                offset % tlb::TLB_2M_SIZE,
            ),
            4 if offset < tlb::TLB_4G_COUNT as u64 * tlb::TLB_4G_SIZE => (
                tlb::TLB_4G_FIRST_INDEX + (offset / tlb::TLB_4G_SIZE) as u32,
                TlbSize::Size4G,
                offset % tlb::TLB_4G_SIZE,
            ),
            _ => {
                return Err(SimError::BadBar(format!(
                    "BAR{bar} offset {offset:#x} is not in a TLB window"
                )));
            }
        };
        if within + len as u64 > size.bytes() {
            return Err(SimError::BadBar(format!(
                "access at {offset:#x}+{len} crosses the end of TLB window {index}"
            )));
        }
        let words = self.regs[index as usize];
        let config = TlbConfig::decode(words, size);
        Ok((config, config.addr + within))
    }

    /// Where a unicast window's access at NoC address `addr` lands.
    fn unicast_target(tiles: &Tiles, config: &TlbConfig, addr: u64) -> Result<Place, SimError> {
        let noc = config.noc;
        match tiles.target_at(noc, config.end) {
            Some(Target::L1(ix)) => {
                let xy0 = tiles[ix as usize].xy0;
                let addr = u32::try_from(addr)
                    .map_err(|_| SimError::OutOfRange(format!("L1 address {addr:#x}")))?;
                Ok(Place::L1(xy0, addr))
            }
            Some(Target::Dram(bank)) => Ok(Place::Dram(bank, addr)),
            None => Err(SimError::BadBar(format!(
                "TLB window targets NoC{noc} {:?}, which has no L1 or DRAM",
                config.end
            ))),
        }
    }

    /// Where a write of `len` bytes to BAR `bar` at `offset` (not a configuration register)
    /// lands.
    pub(crate) fn write_place(
        &self,
        tiles: &Tiles,
        bar: u8,
        offset: u64,
        len: usize,
    ) -> Result<Place, SimError> {
        let (config, addr) = self.window(bar, offset, len)?;
        let noc = config.noc;
        if config.multicast {
            let (s, e) = (raw(noc, config.start), raw(noc, config.end));
            let (s0, e0) = ((s.0.min(e.0), s.1.min(e.1)), (s.0.max(e.0), s.1.max(e.1)));
            let addr = u32::try_from(addr)
                .map_err(|_| SimError::OutOfRange(format!("L1 address {addr:#x}")))?;
            return Ok(Place::Multicast(s0, e0, addr));
        }
        Self::unicast_target(tiles, &config, addr)
    }

    /// Where a read of `len` bytes from BAR `bar` at `offset` (not a configuration register)
    /// comes from; never a multicast.
    pub(crate) fn read_place(
        &self,
        tiles: &Tiles,
        bar: u8,
        offset: u64,
        len: usize,
    ) -> Result<Place, SimError> {
        let (config, addr) = self.window(bar, offset, len)?;
        if config.multicast {
            return Err(SimError::BadBar(
                "a read through a multicast TLB window (reads never multicast)".into(),
            ));
        }
        Self::unicast_target(tiles, &config, addr)
    }
}
