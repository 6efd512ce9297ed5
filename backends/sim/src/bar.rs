//! The host's BAR accesses carried out on the chip: what a read returns and where a write
//! lands, through `pcie`'s decoding, for every kind of target (Tensix L1 and registers, DRAM,
//! ARC), with the PCIe faults (`Fault::Hung`, `Fault::DeadTile`) and the held posted writes of
//! `SimConfig::reorder_posted_writes`.
//!
//! What a card presents, and the simulator too:
//! * BAR0 `0x1FC0_0000..`: the windows' configuration words (and the strided-multicast
//!   registers, zero only); on a Blackhole BAR0 `PCIE_NIU_CFG_0_BAR0` (bit 14: translation)
//!   and `PCIE_NOC_NODE_ID_BAR0` ((2, 0)), read only; on a Wormhole its ARC's registers and
//!   CSM (`arc_wormhole`). Any other BAR0 offset outside the windows is `SimError::BadBar`.
//!   A simulated Wormhole's windows are its own (`pcie`: 1, 2 and 16 MiB in BAR0, a 64-bit
//!   configuration word each).
//! * A window onto a Tensix: L1 (`0..0x18_0000`) and the registers of `regs` at
//!   `0xFFB0_0000..`, 32-bit words there; onto DRAM: the bank; onto ARC: `arc`'s words (the
//!   message queues and the IRQ take writes; the rest is read-only).
//! * Writes through a window that is not `Strict`, with reordering on, are held per
//!   destination (a Tensix tile or a DRAM bank; a multicast is held per receiving tile) and
//!   land in a seeded random order: all of a destination's at once when the host reads
//!   through a window onto it (a read-back barrier) or writes to it through a Strict window
//!   (they land first), and all of them one cycle apart from the next cycle on when the
//!   simulation runs.
//!
//! Soft-reset changes are returned to the caller (`Sim`), which stops and boots cores. Uses
//! `world`, `pcie`, `arc_wormhole` and leaf modules.

use blackhole_pac::grid::Noc0Xy;
use blackhole_pac::tensix::LOCAL_MEM_BASE;
use blackhole_pac::translate::Translation;

use crate::arc;
use crate::arc_wormhole::{self, WormholeArc};
use crate::config::SimConfig;
use crate::error::SimError;
use crate::packet::{Item, TileIx};
use crate::pcie::{self, Place, Tlbs};
use crate::posted::Posted;
use crate::regs::{RegWrite, TileRegs};
use crate::rng::SplitMix64;
use crate::world::World;

/// A tile's soft-reset register changed from `old` to `new`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResetChange {
    pub tile: TileIx,
    pub old: u32,
    pub new: u32,
}

/// What held writes are keyed by: the destination whose reads are a barrier for them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dest {
    Tile(TileIx),
    Bank(u8),
}

/// One destination of a write.
#[derive(Copy, Clone, Debug)]
enum Landing {
    Tile(TileIx, u64),
    Dram { bank: u8, port: (u8, u8), addr: u64 },
}

impl Landing {
    fn dest(&self) -> Dest {
        match *self {
            Self::Tile(ix, _) => Dest::Tile(ix),
            Self::Dram { bank, .. } => Dest::Bank(bank),
        }
    }
}

/// Refuses an L1 access beyond an L1 of `l1_size` bytes.
pub(crate) fn check_l1(l1_size: u32, addr: u64, len: usize) -> Result<(), SimError> {
    if addr
        .checked_add(len as u64)
        .is_none_or(|end| end > l1_size as u64)
    {
        return Err(SimError::OutOfRange(format!(
            "L1 {addr:#x}+{len} is beyond L1 ({l1_size} bytes)"
        )));
    }
    Ok(())
}

/// Refuses an access outside DRAM bank `bank` of `chip`, or to the fused DRAM bank of `cfg`.
pub(crate) fn check_dram(
    cfg: &SimConfig,
    chip: &crate::config::ChipModel,
    bank: u8,
    addr: u64,
    len: usize,
) -> Result<(), SimError> {
    let banks = chip.dram_ports.len();
    let ends_inside = addr
        .checked_add(len as u64)
        .is_some_and(|end| end <= chip.dram_bank_size);
    if bank as usize >= banks || !ends_inside {
        return Err(SimError::OutOfRange(format!(
            "DRAM bank {bank} {addr:#x}+{len} (allowed: banks 0..={}, {} GiB each)",
            banks - 1,
            chip.dram_bank_size >> 30
        )));
    }
    let banks = cfg.dram_banks();
    if !banks.contains(bank) {
        return Err(SimError::FusedDram {
            bank,
            addr,
            len,
            banks,
        });
    }
    Ok(())
}

fn words(addr: u64, len: usize) -> Result<impl Iterator<Item = u64>, SimError> {
    if addr % 4 != 0 || len % 4 != 0 || len == 0 {
        return Err(SimError::BadBar(format!(
            "register access at {addr:#x}+{len}: registers take whole 32-bit words"
        )));
    }
    Ok((0..len as u64 / 4).map(move |i| addr + 4 * i))
}

/// Refuses a Tensix access that is neither L1 nor modelled registers (writable ones when
/// `write`).
fn check_tile(l1_size: u32, addr: u64, len: usize, write: bool) -> Result<(), SimError> {
    if addr < LOCAL_MEM_BASE as u64 {
        return check_l1(l1_size, addr, len).map_err(|_| {
            SimError::OutOfRange(format!(
                "Tensix local address {addr:#x}+{len} is neither L1 (below {l1_size:#x}) nor a \
                 register (0xFFB00000 and above)"
            ))
        });
    }
    for a in words(addr, len)? {
        let ok = u32::try_from(a).is_ok_and(|a| {
            if write {
                TileRegs::writable(a)
            } else {
                TileRegs::known(a)
            }
        });
        if !ok {
            let what = if write { "writable " } else { "" };
            return Err(SimError::BadBar(format!(
                "Tensix address {a:#x} is not a {what}register the simulator models (soft \
                 reset, reset PCs and overrides, wall clock, NOC_ID_LOGICAL)"
            )));
        }
    }
    Ok(())
}

/// The host's BARs: the windows' configuration and the writes in flight.
#[derive(Debug)]
pub(crate) struct Bars {
    tlbs: Tlbs,
    translation: Option<Translation>,
    reorder: bool,
    posted: Posted<Dest, (Landing, Vec<u8>)>,
    /// A Wormhole's ARC, reached through BAR0 (a Blackhole's is reached through a window).
    wormhole_arc: Option<WormholeArc>,
}

impl Bars {
    /// No window configured, nothing in flight.
    pub(crate) fn new(cfg: &SimConfig) -> Self {
        Self {
            tlbs: Tlbs::new(cfg.wormhole.is_some()),
            translation: cfg.noc_translation(),
            reorder: cfg.reorder_posted_writes,
            posted: Posted::new(SplitMix64::new(cfg.seed ^ 0x0D0E_5EED_BA12_0001)),
            wormhole_arc: cfg.wormhole.map(|_| WormholeArc::new()),
        }
    }

    fn check_bar(bar: u8) -> Result<(), SimError> {
        if bar != 0 && bar != 4 {
            return Err(SimError::BadBar(format!(
                "BAR{bar}: Blackhole's TLB windows are in BAR0 and BAR4"
            )));
        }
        Ok(())
    }

    /// NoC0 coordinates of a landing's tile.
    fn xy0(w: &World, l: &Landing) -> (u8, u8) {
        match *l {
            Landing::Tile(ix, _) => w.tiles[ix as usize].xy0,
            Landing::Dram { port, .. } => port,
        }
    }

    /// Carries out a write to one destination now (dropped on a hung device or a dead tile).
    fn land_now(w: &mut World, l: &Landing, data: &[u8]) -> Option<ResetChange> {
        if w.faults.hung || w.faults.dead.contains(&Self::xy0(w, l)) {
            return None;
        }
        match *l {
            Landing::Tile(ix, addr) if addr < LOCAL_MEM_BASE as u64 => {
                w.tiles[ix as usize].l1.write(addr, data);
                let now = w.now;
                w.touch(ix, now);
                None
            }
            Landing::Tile(tile, addr) => {
                let mut change = None;
                for (i, c) in data.chunks_exact(4).enumerate() {
                    let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    let a = addr as u32 + 4 * i as u32;
                    if let Some(RegWrite::SoftReset { old, new }) =
                        w.tiles[tile as usize].regs.write(a, v)
                    {
                        change = Some(ResetChange { tile, old, new });
                    }
                }
                change
            }
            Landing::Dram { bank, addr, .. } => {
                w.dram[bank as usize].write(addr, data);
                None
            }
        }
    }

    /// Lands every held write to `dest` now, in a random order.
    fn flush(&mut self, w: &mut World, dest: Dest) -> Vec<ResetChange> {
        let held = self.posted.take(dest);
        held.into_iter()
            .filter_map(|(l, data)| Self::land_now(w, &l, &data))
            .collect()
    }

    /// A host write to BAR `bar` at `offset`; the soft-reset changes it made.
    pub(crate) fn write(
        &mut self,
        w: &mut World,
        bar: u8,
        offset: u64,
        data: &[u8],
    ) -> Result<Vec<ResetChange>, SimError> {
        Self::check_bar(bar)?;
        if w.faults.hung {
            return Ok(Vec::new());
        }
        if bar == 0 && self.tlbs.write_config(offset, data)? {
            return Ok(Vec::new());
        }
        if let Some(arc) = self.wormhole_arc.as_mut().filter(|_| bar == 0) {
            if arc_wormhole::modelled(offset) {
                for (a, c) in words(offset, data.len())?.zip(data.chunks_exact(4)) {
                    arc.write(&w.cfg, a, u32::from_le_bytes([c[0], c[1], c[2], c[3]]))?;
                }
                return Ok(Vec::new());
            }
        }
        if bar == 0 && self.wormhole_arc.is_none() && pcie::bar0_register(offset, false).is_some() {
            return Err(SimError::BadBar(format!(
                "BAR0 {offset:#x} (the PCIe NIU's NIU_CFG_0 or NOC_NODE_ID) is read-only in \
                 the simulator"
            )));
        }
        let access = self.tlbs.access(
            (&w.tiles, &w.chip),
            self.translation.as_ref(),
            bar,
            offset,
            data.len(),
            true,
        )?;
        let len = data.len();
        let landings = match access.place {
            Place::Arc(addr) => {
                // ARC's words are answered in order as they come (a Strict window's writes);
                // the IRQ serves the queues at once.
                let now = w.now;
                for (a, c) in words(addr, len)?.zip(data.chunks_exact(4)) {
                    let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    w.arc.write(&w.cfg, now, a, v)?;
                }
                return Ok(Vec::new());
            }
            Place::Tile(ix, addr) => {
                check_tile(w.chip.l1_size, addr, len, true)?;
                vec![Landing::Tile(ix, addr)]
            }
            Place::Multicast(tiles, addr) => {
                check_tile(w.chip.l1_size, addr, len, true)?;
                tiles
                    .into_iter()
                    .map(|ix| Landing::Tile(ix, addr))
                    .collect()
            }
            Place::Dram { bank, port, addr } => {
                check_dram(&w.cfg, &w.chip, bank, addr, len)?;
                vec![Landing::Dram { bank, port, addr }]
            }
        };
        let mut changes = Vec::new();
        for l in landings {
            if self.reorder && !access.strict {
                self.posted.hold(l.dest(), (l, data.to_vec()));
                continue;
            }
            changes.extend(self.flush(w, l.dest()));
            changes.extend(Self::land_now(w, &l, data));
        }
        Ok(changes)
    }

    /// A host read from BAR `bar` at `offset` into `buf`; the soft-reset changes of the held
    /// writes it made land first.
    pub(crate) fn read(
        &mut self,
        w: &mut World,
        bar: u8,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<Vec<ResetChange>, SimError> {
        Self::check_bar(bar)?;
        if w.faults.hung {
            buf.fill(0xFF);
            return Ok(Vec::new());
        }
        if bar == 0 && self.tlbs.read_config(offset, buf) {
            return Ok(Vec::new());
        }
        if let Some(arc) = self.wormhole_arc.as_ref().filter(|_| bar == 0) {
            if arc_wormhole::modelled(offset) {
                let at = words(offset, buf.len())?;
                for (chunk, a) in buf.chunks_exact_mut(4).zip(at) {
                    let v = arc.read(&w.cfg, a).unwrap_or(0);
                    chunk.copy_from_slice(&v.to_le_bytes());
                }
                return Ok(Vec::new());
            }
        }
        if bar == 0 && self.wormhole_arc.is_none() {
            if let Some(v) = pcie::bar0_register(offset, self.translation.is_some()) {
                if buf.len() != 4 {
                    return Err(SimError::BadBar(format!(
                        "BAR0 register {offset:#x} read with {} bytes (read 4)",
                        buf.len()
                    )));
                }
                buf.copy_from_slice(&v.to_le_bytes());
                return Ok(Vec::new());
            }
        }
        let access = self.tlbs.access(
            (&w.tiles, &w.chip),
            self.translation.as_ref(),
            bar,
            offset,
            buf.len(),
            false,
        )?;
        let len = buf.len();
        let (xy0, dest) = match access.place {
            Place::Tile(ix, addr) => {
                check_tile(w.chip.l1_size, addr, len, false)?;
                (w.tiles[ix as usize].xy0, Some(Dest::Tile(ix)))
            }
            Place::Dram { bank, port, addr } => {
                check_dram(&w.cfg, &w.chip, bank, addr, len)?;
                (port, Some(Dest::Bank(bank)))
            }
            Place::Arc(addr) => {
                for a in words(addr, len)? {
                    if !arc::modelled(a) {
                        return Err(SimError::BadBar(format!(
                            "ARC address {a:#x} is neither scratch (RESET_SCRATCH), \
                             ARC_MISC_CNTL nor CSM"
                        )));
                    }
                }
                (blackhole_pac::arc::ARC_XY, None)
            }
            Place::Multicast(..) => unreachable!("reads never multicast"),
        };
        if w.faults.dead.contains(&xy0) {
            buf.fill(0xFF);
            return Ok(Vec::new());
        }
        let changes = dest.map(|d| self.flush(w, d)).unwrap_or_default();
        let now = w.now;
        match access.place {
            Place::Tile(ix, addr) if addr < LOCAL_MEM_BASE as u64 => {
                w.tiles[ix as usize].l1.read(addr, buf);
            }
            Place::Tile(ix, addr) => {
                let node_id = self.node_id(xy0);
                let regs = &mut w.tiles[ix as usize].regs;
                for (chunk, a) in buf.chunks_exact_mut(4).zip(words(addr, len)?) {
                    let v = regs.read(a as u32, now, node_id).expect("checked");
                    chunk.copy_from_slice(&v.to_le_bytes());
                }
            }
            Place::Dram { bank, addr, .. } => w.dram[bank as usize].read(addr, buf),
            Place::Arc(addr) => {
                for (chunk, a) in buf.chunks_exact_mut(4).zip(words(addr, len)?) {
                    let v = w.arc.read(&w.cfg, now, a).expect("checked");
                    chunk.copy_from_slice(&v.to_le_bytes());
                }
            }
            Place::Multicast(..) => unreachable!("reads never multicast"),
        }
        Ok(changes)
    }

    /// `NOC_ID_LOGICAL` of the Tensix at NoC0 `xy0`: its translated coordinates when
    /// translation is on, raw NoC0 otherwise (x in bits 0..5, y in 6..11).
    fn node_id(&self, xy0: (u8, u8)) -> u32 {
        let (x, y) = self
            .translation
            .as_ref()
            .and_then(|t| t.to_translated(Noc0Xy::new(xy0.0, xy0.1)?))
            .map_or(xy0, |t| t.get());
        x as u32 | (y as u32) << 6
    }

    /// Time is about to pass: every held write not yet on its way lands one cycle apart from
    /// the next cycle on, in a random order (events the executor hands to [`Bars::land`]).
    pub(crate) fn schedule(&mut self, w: &mut World) {
        if self.posted.is_empty() {
            return;
        }
        let now = w.now;
        for (i, id) in self.posted.schedule().into_iter().enumerate() {
            w.push(now + 1 + i as u64, Item::HostWrite { id });
        }
    }

    /// The landing event of held write `id` came: it lands now, unless a barrier landed it
    /// already.
    pub(crate) fn land(&mut self, w: &mut World, id: u64) -> Option<ResetChange> {
        let (_, (l, data)) = self.posted.land(id)?;
        Self::land_now(w, &l, &data)
    }
}
