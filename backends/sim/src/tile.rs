//! The Tensix tiles: each one's L1 (sparse, 1536 KiB), its two NIUs, its circular buffers, its
//! ejection ports and the kernels waiting on it; and the grid that maps coordinates to tiles
//! and NoC targets.
//!
//! Imports only leaf modules (`packet`, `memory`, `mmio`, `niu`, `regs`, `report`, `route`).

use std::ops::{Deref, DerefMut};

use crate::config::ChipModel;

use crate::memory::SparseMemory;
use crate::mmio::CmdBufRegs;
use crate::niu::Niu;
use crate::packet::{NO_TILE, Target, TileIx};
use crate::regs::TileRegs;
use crate::report::Violation;
use crate::route::Grid;

/// A circular buffer's shared state: the stream counters and both kernels' pointers.
#[derive(Clone, Debug)]
pub(crate) struct Cb {
    pub base: u32,
    pub page_size: u32,
    pub pages: u16,
    pub pushed: u16,
    pub popped: u16,
    /// Next page the producer writes.
    pub wr: u16,
    /// Oldest page not popped.
    pub rd: u16,
    /// Pages pushed as padding and not popped yet (`CircularBuffer::push_padding`): a write
    /// landing on them is not an overwrite of data.
    pub padding: Vec<bool>,
}

impl Cb {
    /// Pages pushed and not popped.
    pub(crate) fn ready(&self) -> u16 {
        self.pushed.wrapping_sub(self.popped)
    }

    /// Page `at` moved on by `pages`, round the buffer: in `u32`, since with more than 32,768
    /// pages the sum passes `u16::MAX`.
    pub(crate) fn step(&self, at: u16, pages: u16) -> u16 {
        komorebi_hal::cb::slot_after(at, pages, self.pages) as u16
    }
}

// `Tile::cb_mask` has a bit per circular buffer: every chip's fit.
const _: () = assert!(
    blackhole_pac::stream::CIRCULAR_BUFFERS <= 64 && wormhole_pac::stream::CIRCULAR_BUFFERS <= 64
);

/// One Tensix tile.
#[derive(Debug)]
pub(crate) struct Tile {
    /// NoC0 coordinates.
    pub xy0: (u8, u8),
    pub l1: SparseMemory,
    pub niu: [Niu; 2],
    /// Circular buffers by index; configured through [`Tile::configure_cb`].
    pub cbs: Vec<Option<Cb>>,
    /// Bit `i` set: `cbs[i]` is configured. A commit checks only these for overwrites, not
    /// all 64 slots.
    cb_mask: u64,
    /// Parked tasks to wake on any change to this tile.
    pub waiters: Vec<usize>,
    /// When each NoC's ejection port is free.
    pub eject_free: [u64; 2],
    /// From this cycle on, no kernel of the tile runs.
    pub frozen_from: Option<u64>,
    /// The registers a host reaches through a TLB window (soft reset, reset PCs, wall clock).
    pub regs: TileRegs,
    /// The four command buffers' registers of each NIU, as firmware cores write them.
    pub cmd_bufs: [[CmdBufRegs; 4]; 2],
}

impl Tile {
    fn new(xy0: (u8, u8), soft_reset: u32, chip: &ChipModel) -> Self {
        Self {
            xy0,
            l1: SparseMemory::new(chip.l1_size as u64),
            niu: [Niu::default(), Niu::default()],
            cbs: vec![None; chip.circular_buffers],
            cb_mask: 0,
            waiters: Vec::new(),
            eject_free: [0; 2],
            frozen_from: None,
            regs: TileRegs::new(soft_reset),
            cmd_bufs: Default::default(),
        }
    }

    /// When a packet of `flits` whose head reaches the ejection port of `noc` at `head` and
    /// whose tail arrives at `tail` has committed its last byte (the port takes one flit per
    /// cycle: data, a loopback copy and acknowledgements all pass it).
    pub(crate) fn eject(&mut self, noc: u8, head: u64, tail: u64, flits: u64) -> u64 {
        let port = &mut self.eject_free[noc as usize];
        let start = head.max(*port);
        let done = (start + flits - 1).max(tail);
        *port = done + 1;
        done
    }

    /// Configures circular buffer `index` (below `CIRCULAR_BUFFERS`, at most 64) as `cb`.
    pub(crate) fn configure_cb(&mut self, index: u8, cb: Cb) {
        self.cbs[index as usize] = Some(cb);
        self.cb_mask |= 1 << index;
    }

    /// The violation, if `addr .. addr + len` covers pages of a CB that are pushed and not
    /// popped (the first such page).
    pub(crate) fn check_overwrite(&self, addr: u32, len: u32, time: u64) -> Option<Violation> {
        // The configured buffers in index order, as a scan of every slot would meet them.
        let mut mask = self.cb_mask;
        while mask != 0 {
            let index = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let Some(cb) = &self.cbs[index] else { continue };
            let size = cb.page_size * cb.pages as u32;
            let (lo, hi) = (addr.max(cb.base), (addr + len).min(cb.base + size));
            if lo >= hi {
                continue;
            }
            let ready = cb.ready();
            for page in (lo - cb.base) / cb.page_size..=(hi - 1 - cb.base) / cb.page_size {
                // How many pages after the oldest one this one is (`page` < `pages`).
                let age = (page + cb.pages as u32 - cb.rd as u32) % cb.pages as u32;
                let padding = cb.padding.get(page as usize).copied().unwrap_or(false);
                if age < ready as u32 && !padding {
                    return Some(Violation::OverwroteUnpoppedPages {
                        tile: self.xy0,
                        cb: index as u8,
                        page: page as u16,
                        addr,
                        time,
                    });
                }
            }
        }
        None
    }
}

/// Whether `v` is in the span `s..=e` of a torus axis (wrapping when `s > e`).
fn span(s: u8, e: u8, v: u8) -> bool {
    blackhole_pac::addr::span_contains(s, e, v)
}

/// The enabled Tensix tiles (index them as a slice, by column then row) and the NoC0 grid
/// that finds them.
#[derive(Debug)]
pub(crate) struct Tiles {
    list: Vec<Tile>,
    at: [[TileIx; 12]; 17],
    /// The DRAM bank at each NoC0 coordinate that is a port of one.
    dram_at: [[Option<u8>; 12]; 17],
    /// The chip's NoC grid.
    pub grid: Grid,
}

impl Tiles {
    /// The Tensix tiles `chip` has enabled, with empty L1, no buffer configured and soft reset
    /// `soft_reset`; its DRAM ports. (Both chips' grids fit Blackhole's 17 x 12 tables.)
    pub(crate) fn new(chip: &ChipModel, soft_reset: u32) -> Self {
        let mut list = Vec::new();
        let mut at = [[NO_TILE; 12]; 17];
        for &(x, y) in &chip.tensix {
            at[x as usize][y as usize] = list.len() as TileIx;
            list.push(Tile::new((x, y), soft_reset, chip));
        }
        let mut dram_at = [[None; 12]; 17];
        for (bank, ports) in chip.dram_ports.iter().enumerate() {
            for &(x, y) in ports {
                dram_at[x as usize][y as usize] = Some(bank as u8);
            }
        }
        Self {
            list,
            at,
            dram_at,
            grid: chip.grid,
        }
    }

    /// The Tensix tile at NoC0 `(x, y)`.
    pub(crate) fn at0(&self, p: (u8, u8)) -> Option<TileIx> {
        let t = *self.at.get(p.0 as usize)?.get(p.1 as usize)?;
        (t != NO_TILE).then_some(t)
    }

    /// What a NoC request to raw `(x, y)` on `noc` reaches.
    pub(crate) fn target_at(&self, noc: u8, p: (u8, u8)) -> Option<Target> {
        if p.0 >= self.grid.width || p.1 >= self.grid.height {
            return None;
        }
        let p0 = self.grid.raw(noc, p);
        if let Some(t) = self.at0(p0) {
            return Some(Target::L1(t));
        }
        self.dram_at[p0.0 as usize][p0.1 as usize].map(Target::Dram)
    }

    /// The Tensix destinations of a multicast from `src` to raw rectangle `start..end` on `noc`
    /// (wrapping as the hardware does); the sender only with `loopback`, if it lies inside.
    pub(crate) fn multicast_dests(
        &self,
        noc: u8,
        src: TileIx,
        (start, end): ((u8, u8), (u8, u8)),
        loopback: bool,
    ) -> Vec<(Target, (u8, u8))> {
        self.list
            .iter()
            .enumerate()
            .filter(|&(i, _)| loopback || i != src as usize)
            .filter_map(|(i, t)| {
                let r = self.grid.raw(noc, t.xy0);
                (span(start.0, end.0, r.0) && span(start.1, end.1, r.1))
                    .then_some((Target::L1(i as TileIx), r))
            })
            .collect()
    }
}

impl Deref for Tiles {
    type Target = [Tile];
    fn deref(&self) -> &[Tile] {
        &self.list
    }
}

impl DerefMut for Tiles {
    fn deref_mut(&mut self) -> &mut [Tile] {
        &mut self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;

    /// A buffer of 40,000 pages whose oldest page is at slot 30,000: page 35,000's age is
    /// `35,000 + 40,000 - 30,000`, past a u16 before the reduction.
    #[test]
    fn a_buffer_of_more_than_32768_pages_ages_its_pages_past_u16() {
        let chip = SimConfig::default().chip_model();
        let mut tile = Tile::new((1, 2), 0, &chip);
        let (base, pages) = (0x3_0000, 40_000u16);
        tile.configure_cb(
            0,
            Cb {
                base,
                page_size: 16,
                pages,
                pushed: 35_000,
                popped: 30_000,
                wr: 35_000,
                rd: 30_000,
                padding: vec![false; pages as usize],
            },
        );
        // 5,000 pages ready: slots 30,000 to 34,999. Slot 35,000 is free, 34,999 is not.
        let at = |slot: u32| base + slot * 16;
        assert_eq!(tile.check_overwrite(at(35_000), 16, 7), None);
        assert!(matches!(
            tile.check_overwrite(at(34_999), 16, 7),
            Some(Violation::OverwroteUnpoppedPages { page: 34_999, .. })
        ));
        let cb = tile.cbs[0].as_ref().unwrap();
        assert_eq!(cb.step(30_000, 35_536), 25_536);
    }
}
