//! [`SimNoc`]: one data-movement kernel's NoC: the native front of the NoC engine
//! (`engine.rs`, which the firmware cores' NIU registers drive too). It charges the kernel's
//! clock for each call and hands the request to the engine.
//!
//! Imports the world, the engine and leaf modules.

use blackhole_pac::addr::DRAM_WRITE_ALIGN;
use komorebi_hal::noc::{self, Ack, ErrorKind, Link, Loopback, Order, ReadTag, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};

use crate::engine::{self, Issuer};
use crate::hal::error::NocError;
use crate::packet::{Target, TileIx};
use crate::report::Violation;
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

impl SimNoc {
    /// Refuses a `what` (a read or unicast write) while this NIU has a linked run open: on the
    /// card it would hang the NIU (the HAL's "A run holds the NIU"; `engine` models the hang for
    /// firmware that does it anyway).
    fn refuse_in_run(&self, w: &World, what: &str) -> Result<(), NocError> {
        match w.tiles[self.tile as usize].niu[self.noc as usize].run {
            Some(run) => Err(NocError::new(
                ErrorKind::InvalidMode,
                format!(
                    "a linked run to {:?}..={:?} is open on NoC{}: a {what} now would hang the \
                     NIU (another virtual channel than the run's, NOC_CMD_VC_LINKED); close the \
                     run with an unlinked multicast there first",
                    run.corners.0, run.corners.1, self.noc
                ),
            )),
            None => Ok(()),
        }
    }

    fn issuer(&self, now: u64) -> Issuer {
        Issuer {
            tile: self.tile,
            noc: self.noc,
            now,
        }
    }

    /// An inline write (`NOC_CMD_WR_INLINE`): refused with `HardwareHazard`, and recorded as a
    /// violation, when it targets L1 (broken on Blackhole); carried out as a 4-byte write to DRAM.
    /// Refused with `InvalidMode` while a linked run is open, as a unicast write.
    pub fn write_inline(&mut self, value: u32, dst: NocAddr) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        self.refuse_in_run(&w, "unicast write")?;
        let now = w.charge_issue(self.task);
        let target = engine::target(&mut w, self.issuer(now), (dst.node().x(), dst.node().y()))?;
        if let Target::L1(_) = target {
            let tile = w.tiles[self.tile as usize].xy0;
            let to = w.tiles.grid.raw(self.noc, (dst.node().x(), dst.node().y()));
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
        // Aligned, and inside the bank, as any write's destination.
        engine::check_target(
            &w.chip,
            target,
            (dst.local(), 4),
            DRAM_WRITE_ALIGN,
            "inline write",
        )?;
        // The value travels from a scratch word of the issuing tile; only its landing is modelled.
        if let Target::Dram(bank) = target {
            w.dram[bank as usize].write_u32(dst.local(), value);
        }
        Ok(())
    }
}

impl SimNoc {
    fn read_with_id(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        id: u8,
    ) -> Result<(), NocError> {
        let mut w = self.world.borrow_mut();
        self.refuse_in_run(&w, "read")?;
        let now = w.charge_issue(self.task);
        if w.stalled(self.task) {
            return Ok(());
        }
        let by = self.issuer(now);
        let from = ((src.node().x(), src.node().y()), src.local());
        engine::read(&mut w, by, from, dst.get(), len, id)
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
        let (x, y) = w.tiles.grid.raw(self.noc, w.tiles[self.tile as usize].xy0);
        Xy::new(x, y).unwrap_or_default()
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), NocError> {
        self.read_with_id(src, dst, len, 0)
    }

    /// Tag `t` travels as transaction id `t + 1`, as on the card (`komorebi-silicon`).
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), NocError> {
        self.read_with_id(src, dst, len, tag.get() + 1)
    }

    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, NocError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let n = &w.tiles[self.tile as usize].niu[self.noc as usize];
        // `NIU_MST_REQS_OUTSTANDING_ID` is 8 bits wide (ISA `NoC/Counters.md`): 256 reads of
        // one tag in flight read as none, as on the card (the HAL's "Counters").
        let outstanding = n.outstanding[tag.get() as usize + 1];
        Ok(!w.stalled(self.task) && outstanding & 0xFF == 0)
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        if !mode.is_unicast() {
            return Err(NocError::new(
                ErrorKind::InvalidMode,
                "a unicast write is neither linked nor loopback (multicasts only)",
            ));
        }
        let mut w = self.world.borrow_mut();
        self.refuse_in_run(&w, "unicast write")?;
        let now = w.charge_issue(self.task);
        if w.stalled(self.task) {
            return Ok(());
        }
        let by = self.issuer(now);
        engine::write(
            &mut w,
            by,
            src.get(),
            ((dst.node().x(), dst.node().y()), dst.local()),
            len,
            mode.ack == Ack::Acked,
            mode.order == Order::Ordered,
            // The native kernels' writes carry transaction id 0, as the firmware's do.
            0,
        )
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
        let by = self.issuer(now);
        let corners = (
            (rect.start().x(), rect.start().y()),
            (rect.end().x(), rect.end().y()),
        );
        engine::multicast(
            &mut w,
            by,
            src.get(),
            corners,
            dst.get(),
            len,
            engine::McastMode {
                ordered: mode.order == Order::Ordered,
                linked: mode.link == Link::Linked,
                loopback: mode.loopback == Loopback::Included,
            },
            0,
        )
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
