//! The PCIe TLB windows as the host sees them: BAR0's 202 windows of 2 MiB and its
//! configuration registers, BAR4's 8 windows of 4 GiB (blackhole-facts.md §7.2). A host write
//! into a window lands in the tile (or every Tensix of the multicast rectangle) and local
//! address its configuration names, at the current cycle. This is what the PCIe backend's tests
//! run against.

use blackhole_pac::tlb::{self, TlbConfig, TlbSize};

use crate::world::{Target, raw};
use crate::{Sim, SimError};

/// Where a window access lands: a tile's L1 (NoC0 coordinates, address) or a DRAM bank.
enum Place {
    L1((u8, u8), u32),
    Dram(u8, u64),
}

/// Saved configuration words of every window.
pub(crate) type TlbRegs = Vec<[u32; 3]>;

impl Sim {
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
        let words = self.world.borrow().tlb_regs[index as usize];
        let config = TlbConfig::decode(words, size);
        Ok((config, config.addr + within))
    }

    fn config_reg(offset: u64, len: usize) -> Option<usize> {
        let base = tlb::TLB_CONFIG_BASE as u64;
        let end = base + 210 * tlb::TLB_CONFIG_BYTES as u64;
        (offset >= base && offset + len as u64 <= end && offset % 4 == 0 && len % 4 == 0)
            .then(|| ((offset - base) / 4) as usize)
    }

    /// Where a unicast window's access at NoC address `addr` lands.
    fn unicast_target(&self, config: &TlbConfig, addr: u64) -> Result<Place, SimError> {
        let noc = config.noc as u8;
        let target = self.world.borrow().target_at(noc, config.end);
        match target {
            Some(Target::L1(ix)) => {
                let xy0 = self.world.borrow().tiles[ix as usize].xy0;
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

    /// A host write to BAR `bar` (0 or 4) at `offset`: a TLB configuration register (BAR0
    /// `0x1FC0_0000..`) or a window's aperture.
    pub fn bar_write(&mut self, bar: u8, offset: u64, data: &[u8]) -> Result<(), SimError> {
        if bar == 0 {
            if let Some(word) = Self::config_reg(offset, data.len()) {
                let mut w = self.world.borrow_mut();
                for (i, chunk) in data.chunks(4).enumerate() {
                    let n = word + i;
                    w.tlb_regs[n / 3][n % 3] =
                        u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                }
                return Ok(());
            }
        }
        let (config, addr) = self.window(bar, offset, data.len())?;
        let noc = config.noc as u8;
        if config.multicast {
            let (s, e) = (raw(noc, config.start), raw(noc, config.end));
            let (s0, e0) = ((s.0.min(e.0), s.1.min(e.1)), (s.0.max(e.0), s.1.max(e.1)));
            let addr = u32::try_from(addr)
                .map_err(|_| SimError::OutOfRange(format!("L1 address {addr:#x}")))?;
            self.multicast_l1(s0, e0, addr, data)?;
            return Ok(());
        }
        match self.unicast_target(&config, addr)? {
            Place::L1(xy0, addr) => self.write_l1(xy0, addr, data),
            Place::Dram(bank, addr) => self.write_dram(bank, addr, data),
        }
    }

    /// A host read from BAR `bar` at `offset`.
    pub fn bar_read(&self, bar: u8, offset: u64, buf: &mut [u8]) -> Result<(), SimError> {
        if bar == 0 {
            if let Some(word) = Self::config_reg(offset, buf.len()) {
                let w = self.world.borrow();
                for (i, chunk) in buf.chunks_mut(4).enumerate() {
                    let n = word + i;
                    chunk.copy_from_slice(&w.tlb_regs[n / 3][n % 3].to_le_bytes());
                }
                return Ok(());
            }
        }
        let (config, addr) = self.window(bar, offset, buf.len())?;
        if config.multicast {
            return Err(SimError::BadBar(
                "a read through a multicast TLB window (reads never multicast)".into(),
            ));
        }
        match self.unicast_target(&config, addr)? {
            Place::L1(xy0, addr) => self.read_l1(xy0, addr, buf),
            Place::Dram(bank, addr) => self.read_dram(bank, addr, buf),
        }
    }
}
