//! [`SimNoc`]: one data-movement kernel's NoC. Checks each request as the hardware would
//! refuse it (lengths, alignment, targets), splits transfers into packets, counts them in the
//! NIU and queues their departure; the world (`world.rs`) times and delivers them.
//!
//! Imports the world and leaf modules.

use std::rc::Rc;

use blackhole_pac::addr::{DRAM_READ_ALIGN, DRAM_WRITE_ALIGN, L1_ALIGN};
use komorebi_hal::noc::{self, Ack, Order, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};

use crate::hal::error::NocError;
use crate::packet::{Item, ReadPacket, Target, TileIx, WritePacket};
use crate::report::Violation;
use crate::route::{self, raw};
use crate::world::{Shared, World};

/// One data-movement kernel's NoC.
#[derive(Clone)]
pub struct SimNoc {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
    pub(crate) noc: u8,
}

impl std::fmt::Debug for SimNoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimNoc")
            .field("task", &self.task)
            .field("noc", &self.noc)
            .finish()
    }
}

fn check_len(len: u32) -> Result<(), NocError> {
    if len == 0 {
        return Err(NocError::new(
            noc::ErrorKind::InvalidLength,
            "transfer of 0 bytes (allowed: 1..)",
        ));
    }
    Ok(())
}

fn check_l1(addr: u64, len: u32, what: &str) -> Result<(), NocError> {
    if addr % L1_ALIGN as u64 != 0 {
        return Err(NocError::new(
            noc::ErrorKind::Misaligned,
            format!("{what} L1 address {addr:#x} is not 16-byte aligned"),
        ));
    }
    if addr + len as u64 > blackhole_pac::tensix::L1_SIZE as u64 {
        return Err(NocError::new(
            noc::ErrorKind::InvalidAddress,
            format!("{what} {addr:#x}+{len} is beyond L1 (1536 KiB)"),
        ));
    }
    Ok(())
}

impl SimNoc {
    fn target(&self, w: &World, node: Xy) -> Result<Target, NocError> {
        w.tiles
            .target_at(self.noc, (node.x(), node.y()))
            .ok_or_else(|| {
                NocError::new(
                    noc::ErrorKind::InvalidAddress,
                    format!("no Tensix L1 or DRAM at NoC{} {node}", self.noc),
                )
            })
    }

    fn check_target(
        target: Target,
        addr: u64,
        len: u32,
        align: u32,
        what: &str,
    ) -> Result<(), NocError> {
        match target {
            Target::L1(_) => check_l1(addr, len, what),
            Target::Dram(_) => {
                if addr % align as u64 != 0 {
                    return Err(NocError::new(
                        noc::ErrorKind::Misaligned,
                        format!("{what} DRAM address {addr:#x} is not {align}-byte aligned"),
                    ));
                }
                if addr + len as u64 > blackhole_pac::grid::DRAM_BANK_SIZE {
                    return Err(NocError::new(
                        noc::ErrorKind::InvalidAddress,
                        format!("{what} {addr:#x}+{len} is beyond the 4 GiB bank"),
                    ));
                }
                Ok(())
            }
        }
    }

    fn flow(&self, multicast: bool, start: (u8, u8), end: (u8, u8)) -> u64 {
        (self.tile as u64) << 40
            | (self.noc as u64) << 39
            | (multicast as u64) << 38
            | (start.0 as u64) << 24
            | (start.1 as u64) << 16
            | (end.0 as u64) << 8
            | end.1 as u64
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_writes(
        &self,
        w: &mut World,
        now: u64,
        src: u32,
        dests: Rc<[(Target, (u8, u8))]>,
        dst: u64,
        len: u32,
        acked: bool,
        ordered: bool,
        multicast: bool,
        flow: u64,
        reserve: u64,
    ) {
        let timing = w.cfg.timing;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(timing.max_packet_bytes);
            let busy = timing.write_issue_floor.max(reserve + timing.flits(n));
            let depart = w.niu_slot(self.tile, self.noc, now, busy);
            w.tiles[self.tile as usize].niu[self.noc as usize]
                .write_issued(acked, dests.len() as u32);
            let packet = WritePacket {
                src: self.tile,
                noc: self.noc,
                src_addr: src + off,
                len: n,
                dests: dests.clone(),
                dst_addr: dst + off as u64,
                acked,
                ordered,
                multicast,
                flow,
                issued_at: now,
                reserve,
            };
            w.push(depart, Item::DepartWrite(Box::new(packet)));
            off += n;
        }
    }

    /// An inline write (`NOC_CMD_WR_INLINE`): refused with `HardwareHazard`, and recorded as a
    /// violation, when it targets L1 (broken on Blackhole); carried out as a 4-byte write to DRAM.
    pub fn write_inline(&mut self, value: u32, dst: NocAddr) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        let target = self.target(&w, dst.node())?;
        if let Target::L1(_) = target {
            let tile = w.tiles[self.tile as usize].xy0;
            let to = raw(self.noc, (dst.node().x(), dst.node().y()));
            w.violations.push(Violation::InlineWriteToL1 {
                tile,
                target: to,
                time: now,
            });
            return Err(NocError::new(
                noc::ErrorKind::HardwareHazard,
                "inline write to L1 is broken on Blackhole: write from an L1 source word",
            ));
        }
        Self::check_target(target, dst.local(), 4, DRAM_WRITE_ALIGN, "inline write")?;
        // The value travels from a scratch word of the issuing tile; only its landing is modelled.
        if let Target::Dram(bank) = target {
            w.dram[bank as usize].write_u32(dst.local(), value);
        }
        Ok(())
    }
}

impl noc::ErrorType for SimNoc {
    type Error = NocError;
}

impl noc::NocMulticast for SimNoc {
    fn noc(&self) -> NocId {
        if self.noc == 0 {
            NocId::Noc0
        } else {
            NocId::Noc1
        }
    }

    fn node(&self) -> Xy {
        let w = self.world.borrow();
        let (x, y) = raw(self.noc, w.tiles[self.tile as usize].xy0);
        Xy::new(x, y).unwrap_or_default()
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if w.stalled(self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(dst.get() as u64, len, "read destination")?;
        let target = self.target(&w, src.node())?;
        Self::check_target(target, src.local(), len, DRAM_READ_ALIGN, "read source")?;
        let timing = w.cfg.timing;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(timing.max_packet_bytes);
            let depart = w.niu_slot(self.tile, self.noc, now, timing.read_issue_floor);
            let niu = &mut w.tiles[self.tile as usize].niu[self.noc as usize];
            niu.reads_issued = niu.reads_issued.wrapping_add(1);
            let p = ReadPacket {
                tile: self.tile,
                noc: self.noc,
                src: target,
                src_raw: (src.node().x(), src.node().y()),
                src_addr: src.local() + off as u64,
                dst_addr: dst.get() + off,
                len: n,
                issued_at: now,
            };
            w.push(depart, Item::DepartRead(Box::new(p)));
            off += n;
        }
        Ok(())
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if w.stalled(self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(src.get() as u64, len, "write source")?;
        let target = self.target(&w, dst.node())?;
        Self::check_target(
            target,
            dst.local(),
            len,
            DRAM_WRITE_ALIGN,
            "write destination",
        )?;
        let to = (dst.node().x(), dst.node().y());
        let dests: Rc<[_]> = vec![(target, to)].into();
        let ordered = mode.order == Order::Ordered;
        let flow = self.flow(false, to, (0, 0));
        self.issue_writes(
            &mut w,
            now,
            src.get(),
            dests,
            dst.local(),
            len,
            mode.ack == Ack::Acked,
            ordered,
            false,
            flow,
            0,
        );
        Ok(())
    }

    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_issue(self.task);
        if w.stalled(self.task) {
            return Ok(());
        }
        check_len(len)?;
        check_l1(src.get() as u64, len, "multicast source")?;
        check_l1(dst.get() as u64, len, "multicast destination")?;
        let (s, e) = (
            (rect.start().x(), rect.start().y()),
            (rect.end().x(), rect.end().y()),
        );
        let dests = w.tiles.multicast_dests(self.noc, self.tile, s, e);
        if dests.is_empty() {
            return Ok(());
        }
        let me = raw(self.noc, w.tiles[self.tile as usize].xy0);
        let far = dests
            .iter()
            .map(|&(_, d)| route::hops(me, d))
            .max()
            .unwrap_or(0);
        let timing = w.cfg.timing;
        let reserve = (timing.reserve_base + timing.reserve_per_hop * far as f64).round() as u64;
        let flow = self.flow(true, s, e);
        // Posted multicast is broken on Blackhole: every multicast is acknowledged.
        let ordered = mode.order == Order::Ordered;
        self.issue_writes(
            &mut w,
            now,
            src.get(),
            dests.into(),
            dst.get() as u64,
            len,
            true,
            ordered,
            true,
            flow,
            reserve,
        );
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!w.stalled(self.task) && n.reads_caught_up())
    }

    fn writes_sent(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!w.stalled(self.task) && n.writes_caught_up())
    }

    fn writes_acked(&mut self) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        Ok(!w.stalled(self.task) && n.acks_caught_up())
    }

    fn resync(&mut self) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        w.tiles[self.tile as usize].niu[self.noc as usize].resync();
        Ok(())
    }
}
