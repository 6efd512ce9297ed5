//! The NoC requests a Tensix issues, checked and queued: one engine for both fronts, the
//! native kernels' [`crate::SimNoc`] and the firmware cores' NIU registers (`core`), so timing,
//! counters and faults mean the same in both.
//!
//! Each function checks a request as the hardware would refuse it (lengths, alignment,
//! targets), splits it into packets of at most `Timing::max_packet_bytes`, counts them in the
//! issuing NIU and queues their departure at the NIU's next free slot; the world (`world.rs`)
//! times and delivers them. Coordinates are raw coordinates of the issuing NoC.
//!
//! A read or unicast write issued while the NIU has a linked multicast run open hangs the NIU:
//! the request and every later one are taken and never initiated, and a violation names them
//! (ISA `MemoryMap.md`, `NOC_CMD_VC_LINKED`). Only the firmware cores can get there; the native
//! front refuses such calls, as the HAL says.
//!
//! Uses the world and leaf modules.

use std::rc::Rc;

// DRAM writes and L1 need 16-byte alignment on both chips (the reads' DRAM alignment is the
// chip's: `ChipModel::dram_read_align`).
use blackhole_pac::addr::{DRAM_WRITE_ALIGN, L1_ALIGN};
const _: () = assert!(
    DRAM_WRITE_ALIGN == 16 && L1_ALIGN == wormhole_pac::addr::L1_ALIGNMENT && L1_ALIGN == 16
);
use komorebi_hal::noc::ErrorKind;

use crate::config::SourceRead;
use crate::hal::error::NocError;
use crate::niu::{Pipe, Run};
use crate::packet::{Hold, Item, ReadPacket, Target, TileIx, WritePacket};
use crate::report::{Violation, fused_dram_request};

use crate::world::World;

/// Who issues: the tile, its NoC (0 or 1), and the cycle the command is given.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Issuer {
    pub tile: TileIx,
    pub noc: u8,
    pub now: u64,
}

fn check_len(len: u32) -> Result<(), NocError> {
    if len == 0 {
        return Err(NocError::new(
            ErrorKind::InvalidLength,
            "transfer of 0 bytes (allowed: 1..)",
        ));
    }
    Ok(())
}

/// `addr .. addr + len` is 16-byte aligned and inside an L1 of `l1_size` bytes.
pub(crate) fn check_l1(l1_size: u32, addr: u64, len: u32, what: &str) -> Result<(), NocError> {
    if addr % L1_ALIGN as u64 != 0 {
        return Err(NocError::new(
            ErrorKind::Misaligned,
            format!("{what} L1 address {addr:#x} is not 16-byte aligned"),
        ));
    }
    if addr + len as u64 > l1_size as u64 {
        return Err(NocError::new(
            ErrorKind::InvalidAddress,
            format!("{what} {addr:#x}+{len} is beyond L1 ({l1_size} bytes)"),
        ));
    }
    Ok(())
}

/// What a request of `by` to raw `node` of its NoC reaches. A port of the fused DRAM bank
/// (`SimConfig::fused_dram`) is refused as a fault and recorded as a violation, never served:
/// on a card nothing answers there.
pub(crate) fn target(w: &mut World, by: Issuer, node: (u8, u8)) -> Result<Target, NocError> {
    let noc = by.noc;
    let target = w.tiles.target_at(noc, node).ok_or_else(|| {
        NocError::new(
            ErrorKind::InvalidAddress,
            format!("no Tensix L1 or DRAM at NoC{noc} {node:?}"),
        )
    })?;
    if let Target::Dram(bank) = target {
        if !w.cfg.dram_banks().contains(bank) {
            let tile = w.tiles[by.tile as usize].xy0;
            w.violations.push(Violation::FusedDram {
                tile,
                noc,
                bank,
                port: node,
                time: by.now,
            });
            return Err(NocError::new(
                ErrorKind::Fault,
                fused_dram_request(noc, bank, node),
            ));
        }
    }
    Ok(target)
}

pub(crate) fn check_target(
    chip: &crate::config::ChipModel,
    target: Target,
    (addr, len): (u64, u32),
    align: u32,
    what: &str,
) -> Result<(), NocError> {
    match target {
        Target::L1(_) => check_l1(chip.l1_size, addr, len, what),
        Target::Dram(_) => {
            if addr % align as u64 != 0 {
                return Err(NocError::new(
                    ErrorKind::Misaligned,
                    format!("{what} DRAM address {addr:#x} is not {align}-byte aligned"),
                ));
            }
            if addr + len as u64 > chip.dram_bank_size {
                return Err(NocError::new(
                    ErrorKind::InvalidAddress,
                    format!(
                        "{what} {addr:#x}+{len} is beyond the {} GiB bank",
                        chip.dram_bank_size >> 30
                    ),
                ));
            }
            Ok(())
        }
    }
}

/// A read or unicast write as a hung NIU's violation names it: its kind, raw target on the
/// issuing NoC, address and length.
type Request = (&'static str, (u8, u8), u64, u32);

/// Whether NIU `by` initiates nothing: it hung before, or `request` (a read or unicast write;
/// `None` for a multicast) comes while a linked run is open, which hangs it now and is recorded.
/// Reads and unicast writes go on VC 1, a run holds VC 4, and "attempting to initiate a request
/// with an incompatible virtual channel number will cause virtual channel number assignment to
/// continuously fail, leaving the NIU unable to initiate any requests" (ISA `MemoryMap.md`,
/// `NOC_CMD_VC_LINKED`). Nothing of a swallowed request is counted: it was never initiated.
fn hangs(w: &mut World, by: Issuer, request: Option<Request>) -> bool {
    let niu = &mut w.tiles[by.tile as usize].niu[by.noc as usize];
    if niu.hung {
        return true;
    }
    let (Some(run), Some((kind, target, addr, len))) = (niu.run, request) else {
        return false;
    };
    niu.hung = true;
    w.violations.push(Violation::LinkedRunHungNiu {
        tile: w.tiles[by.tile as usize].xy0,
        noc: by.noc,
        request: kind,
        target: w.tiles.grid.raw(by.noc, target),
        addr,
        len,
        run: run.corners,
        time: by.now,
    });
    true
}

/// The ordering key of a flow: writes of one source on one NoC to one destination set.
fn flow(by: Issuer, multicast: bool, start: (u8, u8), end: (u8, u8)) -> u64 {
    (by.tile as u64) << 40
        | (by.noc as u64) << 39
        | (multicast as u64) << 38
        | (start.0 as u64) << 24
        | (start.1 as u64) << 16
        | (end.0 as u64) << 8
        | end.1 as u64
}

/// One write or multicast, checked: its packets counted and queued.
struct Writes {
    src: u32,
    dests: Rc<[(Target, (u8, u8))]>,
    dst: u64,
    len: u32,
    acked: bool,
    ordered: bool,
    multicast: bool,
    flow: u64,
    /// Multicasts: the cost of reserving the path, the corners, and whether linked.
    reserve: u64,
    corners: ((u8, u8), (u8, u8)),
    linked: bool,
    /// The transaction id (`NOC_PACKET_TAG`).
    id: u8,
}

fn issue_writes(w: &mut World, by: Issuer, p: Writes) {
    let timing = w.cfg.timing;
    let mut off = 0;
    while off < p.len {
        let n = (p.len - off).min(timing.max_packet_bytes);
        // A linked run reserves its path once, with its first packet; its last releases it.
        let (reserve, hold) = if p.multicast {
            let niu = &mut w.tiles[by.tile as usize].niu[by.noc as usize];
            let open = niu.run;
            let hold = match (open, p.linked) {
                (Some(run), true) => Hold::Keep(run.id),
                (Some(run), false) => Hold::Release(run.id),
                (None, true) => {
                    let id = w.next_run();
                    Hold::Keep(id)
                }
                (None, false) => Hold::Free,
            };
            let niu = &mut w.tiles[by.tile as usize].niu[by.noc as usize];
            niu.run = match hold {
                Hold::Keep(id) => Some(Run {
                    corners: p.corners,
                    id,
                }),
                _ => None,
            };
            (if open.is_some() { 0 } else { p.reserve }, hold)
        } else {
            (0, Hold::Free)
        };
        let busy = timing.write_issue_floor.max(reserve + timing.flits(n));
        let depart = w.niu_slot(by.tile, by.noc, Pipe::Write, by.now, busy);
        w.tiles[by.tile as usize].niu[by.noc as usize].write_issued(
            p.acked,
            p.dests.len() as u32,
            p.id,
        );
        let at_issue = (w.cfg.source_read != SourceRead::Departure).then(|| {
            let mut buf = vec![0u8; n as usize];
            w.tiles[by.tile as usize]
                .l1
                .read((p.src + off) as u64, &mut buf);
            Rc::from(buf)
        });
        let packet = WritePacket {
            src: by.tile,
            noc: by.noc,
            src_addr: p.src + off,
            len: n,
            dests: p.dests.clone(),
            dst_addr: p.dst + off as u64,
            acked: p.acked,
            ordered: p.ordered,
            multicast: p.multicast,
            flow: p.flow,
            issued_at: by.now,
            reserve,
            hold,
            at_issue,
            seq: 0,
            id: p.id & 0xF,
        };
        w.push(depart, Item::DepartWrite(Box::new(packet)));
        off += n;
    }
}

/// A read of `len` bytes from raw `src` (`src_addr`) into this tile's L1 at `dst`, with
/// transaction id `id` (0: untagged).
pub(crate) fn read(
    w: &mut World,
    by: Issuer,
    (src, src_addr): ((u8, u8), u64),
    dst: u32,
    len: u32,
    id: u8,
) -> Result<(), NocError> {
    if hangs(w, by, Some(("read", src, src_addr, len))) {
        return Ok(());
    }
    check_len(len)?;
    check_l1(w.chip.l1_size, dst as u64, len, "read destination")?;
    let target = target(w, by, src)?;
    let align = w.chip.dram_read_align;
    check_target(&w.chip, target, (src_addr, len), align, "read source")?;
    // The NIU keeps a DRAM read's low address bits: its destination must be congruent to the
    // source (tt-metal `sanitize.h`, `NOC_DRAM_READ_ALIGNMENT_BYTES`; ISA
    // `WormholeB0/NoC/Alignment.md`, C32), so, with the source aligned, aligned as DRAM too.
    if matches!(target, Target::Dram(_)) && dst % align != 0 {
        return Err(NocError::new(
            ErrorKind::Misaligned,
            format!(
                "read destination {dst:#x} of a DRAM read is not {align}-byte aligned as its source is"
            ),
        ));
    }
    let timing = w.cfg.timing;
    let mut off = 0;
    while off < len {
        let n = (len - off).min(timing.max_packet_bytes);
        let depart = w.niu_slot(by.tile, by.noc, Pipe::Read, by.now, timing.read_issue_floor);
        let niu = &mut w.tiles[by.tile as usize].niu[by.noc as usize];
        niu.reads_issued = niu.reads_issued.wrapping_add(1);
        let outstanding = &mut niu.outstanding[id as usize & 0xF];
        *outstanding = outstanding.wrapping_add(1);
        let p = ReadPacket {
            tile: by.tile,
            noc: by.noc,
            src: target,
            src_raw: src,
            src_addr: src_addr + off as u64,
            dst_addr: dst + off,
            len: n,
            issued_at: by.now,
            id: id & 0xF,
        };
        w.push(depart, Item::DepartRead(Box::new(p)));
        off += n;
    }
    Ok(())
}

/// A write of `len` bytes from this tile's L1 at `src` to raw `dst` (`dst_addr`), with
/// transaction id `id`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    w: &mut World,
    by: Issuer,
    src: u32,
    (dst, dst_addr): ((u8, u8), u64),
    len: u32,
    acked: bool,
    ordered: bool,
    id: u8,
) -> Result<(), NocError> {
    if hangs(w, by, Some(("unicast write", dst, dst_addr, len))) {
        return Ok(());
    }
    check_len(len)?;
    check_l1(w.chip.l1_size, src as u64, len, "write source")?;
    let target = target(w, by, dst)?;
    let align = DRAM_WRITE_ALIGN;
    check_target(&w.chip, target, (dst_addr, len), align, "write destination")?;
    let writes = Writes {
        src,
        dests: vec![(target, dst)].into(),
        dst: dst_addr,
        len,
        acked,
        ordered,
        multicast: false,
        flow: flow(by, false, dst, (0, 0)),
        reserve: 0,
        corners: (dst, dst),
        linked: false,
        id,
    };
    issue_writes(w, by, writes);
    Ok(())
}

/// How a multicast is carried: ordered (static VC), linked (keeps its path for the next
/// multicast of a run), loopback (a sender inside the rectangle receives too).
#[derive(Copy, Clone, Debug)]
pub(crate) struct McastMode {
    pub ordered: bool,
    pub linked: bool,
    pub loopback: bool,
}

/// A multicast of `len` bytes from this tile's L1 at `src` to L1 `dst` of every Tensix in the
/// raw rectangle `start..=end` (wrapping as the hardware does), the sender only with loopback.
/// Always acknowledged: posted multicast is broken on Blackhole. While a linked run is open on
/// this NIU, a multicast to another rectangle is refused; a hung NIU issues nothing. `id`: its
/// transaction id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn multicast(
    w: &mut World,
    by: Issuer,
    src: u32,
    corners: ((u8, u8), (u8, u8)),
    dst: u32,
    len: u32,
    mode: McastMode,
    id: u8,
) -> Result<(), NocError> {
    if hangs(w, by, None) {
        return Ok(());
    }
    check_len(len)?;
    check_l1(w.chip.l1_size, src as u64, len, "multicast source")?;
    check_l1(w.chip.l1_size, dst as u64, len, "multicast destination")?;
    let dests = w
        .tiles
        .multicast_dests(by.noc, by.tile, corners, mode.loopback);
    // An open run takes only multicasts to its rectangle that send a packet (the HAL's rule;
    // checked in the silicon backend's order, so both say the same).
    if let Some(run) = w.tiles[by.tile as usize].niu[by.noc as usize].run {
        if dests.is_empty() {
            return Err(NocError::new(
                ErrorKind::InvalidMode,
                "a multicast with no receivers sends no packet, so it cannot continue or close \
                 the open linked run: close it with a multicast that reaches a receiver",
            ));
        }
        if run.corners != corners {
            return Err(NocError::new(
                ErrorKind::InvalidMode,
                format!(
                    "a linked run to {:?}..={:?} is open: close it with an unlinked multicast \
                     there before multicasting to {:?}..={:?}",
                    run.corners.0, run.corners.1, corners.0, corners.1
                ),
            ));
        }
    }
    if dests.is_empty() {
        return Ok(());
    }
    let grid = w.tiles.grid;
    let me = grid.raw(by.noc, w.tiles[by.tile as usize].xy0);
    let far = dests
        .iter()
        .map(|&(_, d)| grid.hops(me, d))
        .max()
        .unwrap_or(0);
    let timing = w.cfg.timing;
    let reserve = (timing.reserve_base + timing.reserve_per_hop * far as f64).round() as u64;
    let writes = Writes {
        src,
        dests: dests.into(),
        dst: dst as u64,
        len,
        acked: true,
        ordered: mode.ordered,
        multicast: true,
        flow: flow(by, true, corners.0, corners.1),
        reserve,
        corners,
        linked: mode.linked,
        id,
    };
    issue_writes(w, by, writes);
    Ok(())
}
