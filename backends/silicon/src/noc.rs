//! `NocMulticast` on one NIU.

use blackhole_pac::addr::{self, AddrRegs, L1_ALIGN, MAX_PACKET_BYTES};
use blackhole_pac::grid::{
    GRID_X, GRID_Y, Noc0Xy, Noc1Xy, TENSIX_Y_FIRST, TENSIX_Y_LAST, TileKind,
};
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::niu::{self, CmdBufId, Counter, Niu, NocCtrl};
/// NIU coordinate translation (the PAC's one rule: `blackhole_pac::translate`).
pub use blackhole_pac::translate::Translation;
use komorebi_hal::noc::{self, Ack, ErrorKind, Order, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};

use crate::error::Error;

type NocError = Error<ErrorKind>;

const fn err(kind: ErrorKind, what: &'static str) -> NocError {
    Error { kind, what }
}

/// One NIU as one data-movement kernel's NoC.
#[derive(Debug)]
pub struct SiliconNoc {
    niu: Niu,
    noc: NocId,
    node: Xy,
    harvest: HarvestMask,
    translation: Option<Translation>,
    /// The command buffer of a transfer the NIU is splitting, until it clears.
    splitting: Option<CmdBufId>,
    reads_issued: u32,
    nonposted_issued: u32,
    posted_issued: u32,
    acks_expected: u32,
}

impl SiliconNoc {
    /// The NoC of NIU `niu` (NIU0 for NoC0, NIU1 for NoC1) of the tile at raw `node` on that
    /// NoC, on a chip with `harvest`; `translation` when the NIUs translate coordinates. The
    /// software counts start from the hardware counters, as tt-metal's `noc_local_state_init`.
    pub fn new(
        niu: Niu,
        noc: NocId,
        node: Xy,
        harvest: HarvestMask,
        translation: Option<Translation>,
    ) -> Self {
        let mut n = Self {
            niu,
            noc,
            node,
            harvest,
            translation,
            splitting: None,
            reads_issued: 0,
            nonposted_issued: 0,
            posted_issued: 0,
            acks_expected: 0,
        };
        n.sync_counts();
        n
    }

    fn sync_counts(&mut self) {
        self.reads_issued = self.niu.status(Counter::MstRdRespReceived).read();
        self.nonposted_issued = self.niu.status(Counter::MstNonpostedWrReqSent).read();
        self.posted_issued = self.niu.status(Counter::MstPostedWrReqSent).read();
        self.acks_expected = self.niu.status(Counter::MstWrAckReceived).read();
    }

    /// NoC0 coordinates of raw `p` of this NoC; `None` off the 17 x 12 grid.
    fn noc0(&self, p: Xy) -> Option<Noc0Xy> {
        match self.noc {
            NocId::Noc0 => Noc0Xy::new(p.x(), p.y()),
            NocId::Noc1 => Noc1Xy::new(p.x(), p.y()).map(Noc1Xy::to_noc0),
        }
    }

    /// The coordinate as the NIU wants it: raw, or translated.
    fn coord(&self, p: Xy) -> Result<(u8, u8), NocError> {
        let Some(t) = self.translation else {
            return Ok((p.x(), p.y()));
        };
        self.noc0(p).and_then(|p0| t.tensix_at(p0)).ok_or(err(
            ErrorKind::InvalidAddress,
            "only Tensix targets are translated (DRAM translation is unconfirmed)",
        ))
    }

    fn target_kind(&self, p: Xy) -> Result<TileKind, NocError> {
        let neither = err(
            ErrorKind::InvalidAddress,
            "target is neither a Tensix L1 nor a DRAM port",
        );
        let p0 = self.noc0(p).ok_or(neither)?;
        match p0.tile() {
            TileKind::Tensix if self.harvest.is_harvested(p0.x()) => Err(err(
                ErrorKind::InvalidAddress,
                "target is a harvested Tensix",
            )),
            k @ (TileKind::Tensix | TileKind::Dram { .. }) => Ok(k),
            _ => Err(neither),
        }
    }

    fn check_len(len: u32) -> Result<(), NocError> {
        if len == 0 {
            Err(err(ErrorKind::InvalidLength, "transfer of 0 bytes"))
        } else {
            Ok(())
        }
    }

    fn check_l1(a: u32, len: u32) -> Result<(), NocError> {
        if a % L1_ALIGN != 0 {
            return Err(err(ErrorKind::Misaligned, "L1 address not 16-byte aligned"));
        }
        if a as u64 + len as u64 > blackhole_pac::tensix::L1_SIZE as u64 {
            return Err(err(ErrorKind::InvalidAddress, "beyond L1"));
        }
        Ok(())
    }

    /// The command buffer `buf` can take a request, and no split transfer is under way.
    fn ready(&mut self, buf: CmdBufId) -> Result<(), NocError> {
        if let Some(long) = self.splitting {
            if self.niu.cmd_buf(long).cmd_ctrl().read() != niu::NOC_CTRL_STATUS_READY {
                return Err(err(
                    ErrorKind::Busy,
                    "the NIU is still splitting a long transfer",
                ));
            }
            self.splitting = None;
        }
        if self.niu.cmd_buf(buf).cmd_ctrl().read() != niu::NOC_CTRL_STATUS_READY {
            return Err(err(ErrorKind::Busy, "command buffer busy"));
        }
        Ok(())
    }

    /// 16 KiB packets of a `len`-byte transfer between `a` and `b`; longer than one packet needs
    /// both 64-byte aligned (the NIU's automatic splitting).
    fn packets(len: u32, a: u64, b: u64) -> Result<u32, NocError> {
        if len > MAX_PACKET_BYTES && (a % 64 != 0 || b % 64 != 0) {
            return Err(err(
                ErrorKind::Misaligned,
                "a transfer over 16 KiB needs 64-byte aligned addresses",
            ));
        }
        Ok(len.div_ceil(MAX_PACKET_BYTES))
    }

    /// Programs command buffer `id` and sends: one command of `len` bytes.
    fn send(&mut self, id: CmdBufId, targ: u64, ret: u64, len: u32, ctrl: NocCtrl, packets: u32) {
        let buf = self.niu.cmd_buf(id);
        let (t, r) = (AddrRegs::split(targ), AddrRegs::split(ret));
        buf.targ_addr_lo().write_value(t.lo);
        buf.targ_addr_mid().write_value(t.mid);
        buf.targ_addr_hi().write_value(t.hi);
        buf.ret_addr_lo().write_value(r.lo);
        buf.ret_addr_mid().write_value(r.mid);
        buf.ret_addr_hi().write_value(r.hi);
        buf.at_len_be().write_value(len);
        buf.ctrl().write_value(ctrl);
        buf.cmd_ctrl().write_value(1);
        if packets > 1 {
            self.splitting = Some(id);
        }
    }

    /// Tensix tiles the raw rectangle `rect` covers on this NoC, without this node.
    fn receivers(&self, rect: Rect) -> u32 {
        // Tensix tiles form whole columns x whole rows, so the count factors: enabled Tensix
        // columns in the x span times Tensix rows in the y span (wrap included), minus this
        // node if it lies inside.
        // The mirror of one axis does not depend on the other, so each axis is converted at an
        // on-grid point of the other (row 0, column 0): x < 17 and y < 12 always convert.
        let (sx, sy) = (rect.start().x(), rect.start().y());
        let columns = (0..GRID_X)
            .filter(|&x| {
                let p = Xy::new(x, sy).unwrap_or_default();
                let x0 = self.noc0(Xy::new(x, 0).unwrap_or_default()).map(Noc0Xy::x);
                rect.contains(p)
                    && x0.is_some_and(|x0| {
                        blackhole_pac::grid::is_tensix_x(x0) && !self.harvest.is_harvested(x0)
                    })
            })
            .count() as u32;
        let rows = (0..GRID_Y)
            .filter(|&y| {
                let p = Xy::new(sx, y).unwrap_or_default();
                let y0 = self.noc0(Xy::new(0, y).unwrap_or_default()).map(Noc0Xy::y);
                rect.contains(p)
                    && y0.is_some_and(|y0| (TENSIX_Y_FIRST..=TENSIX_Y_LAST).contains(&y0))
            })
            .count() as u32;
        (columns * rows).saturating_sub(rect.contains(self.node) as u32)
    }

    fn ctrl_word(mode: WriteMode, multicast: bool) -> NocCtrl {
        let mut c = NocCtrl::default();
        c.set_request_type(niu::request::WRITE);
        // Posted multicast is broken on Blackhole: multicasts are always acknowledged.
        c.set_resp_marked(mode.ack == Ack::Acked || multicast);
        if multicast {
            c.set_brcst_packet(true);
            c.set_path_reserve(true);
        }
        if mode.order == Order::Ordered {
            c.set_vc_static(true);
            c.set_static_vc(if multicast {
                niu::MULTICAST_VC
            } else {
                niu::UNICAST_VC
            });
        }
        c
    }
}

impl noc::ErrorType for SiliconNoc {
    type Error = NocError;
}

impl noc::NocMulticast for SiliconNoc {
    fn noc(&self) -> NocId {
        self.noc
    }

    fn node(&self) -> Xy {
        self.node
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), NocError> {
        Self::check_len(len)?;
        Self::check_l1(dst.get(), len)?;
        let kind = self.target_kind(src.node())?;
        let align = if matches!(kind, TileKind::Dram { .. }) {
            addr::DRAM_READ_ALIGN
        } else {
            L1_ALIGN
        };
        if src.local() % align as u64 != 0 {
            return Err(err(
                ErrorKind::Misaligned,
                "read source not aligned (DRAM 64 bytes, L1 16)",
            ));
        }
        if matches!(kind, TileKind::Dram { .. }) && self.translation.is_some() {
            return Err(err(
                ErrorKind::InvalidAddress,
                "DRAM under coordinate translation is not supported",
            ));
        }
        let (sx, sy) = self.coord(src.node())?;
        let (mx, my) = self.coord(self.node)?;
        let packets = Self::packets(len, src.local(), dst.get() as u64)?;
        let targ = addr::unicast_addr(sx, sy, src.local())
            .map_err(|_| err(ErrorKind::InvalidAddress, "read source"))?;
        let ret = addr::unicast_addr(mx, my, dst.get() as u64)
            .map_err(|_| err(ErrorKind::InvalidAddress, "read destination"))?;
        self.ready(CmdBufId::READ)?;
        let mut ctrl = NocCtrl::default();
        ctrl.set_request_type(niu::request::READ);
        ctrl.set_vc_static(true);
        ctrl.set_static_vc(niu::UNICAST_VC);
        self.send(CmdBufId::READ, targ, ret, len, ctrl, packets);
        self.reads_issued = self.reads_issued.wrapping_add(packets);
        Ok(())
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        Self::check_len(len)?;
        Self::check_l1(src.get(), len)?;
        let kind = self.target_kind(dst.node())?;
        if matches!(kind, TileKind::Dram { .. }) && self.translation.is_some() {
            return Err(err(
                ErrorKind::InvalidAddress,
                "DRAM under coordinate translation is not supported",
            ));
        }
        if dst.local() % L1_ALIGN as u64 != 0 {
            return Err(err(
                ErrorKind::Misaligned,
                "write destination not 16-byte aligned",
            ));
        }
        let (dx, dy) = self.coord(dst.node())?;
        let (mx, my) = self.coord(self.node)?;
        let packets = Self::packets(len, src.get() as u64, dst.local())?;
        let targ = addr::unicast_addr(mx, my, src.get() as u64)
            .map_err(|_| err(ErrorKind::InvalidAddress, "write source"))?;
        let ret = addr::unicast_addr(dx, dy, dst.local())
            .map_err(|_| err(ErrorKind::InvalidAddress, "write destination"))?;
        // Markers and other small writes use their own command buffer, as tt-metal does.
        let id = if len <= 16 {
            CmdBufId::SMALL_WRITE
        } else {
            CmdBufId::WRITE
        };
        self.ready(id)?;
        let ctrl = Self::ctrl_word(mode, false);
        self.send(id, targ, ret, len, ctrl, packets);
        if ctrl.resp_marked() {
            self.nonposted_issued = self.nonposted_issued.wrapping_add(packets);
            self.acks_expected = self.acks_expected.wrapping_add(packets);
        } else {
            self.posted_issued = self.posted_issued.wrapping_add(packets);
        }
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
        Self::check_len(len)?;
        Self::check_l1(src.get(), len)?;
        Self::check_l1(dst.get(), len)?;
        let receivers = self.receivers(rect);
        if receivers == 0 {
            return Ok(());
        }
        // Under translation a NoC1 rectangle comes out with start at the NoC0-order maximum and
        // end at the minimum: the corner swap tt-metal and the ISA prescribe for NoC1.
        let (start, end) = (self.coord(rect.start())?, self.coord(rect.end())?);
        let (mx, my) = self.coord(self.node)?;
        let packets = Self::packets(len, src.get() as u64, dst.get() as u64)?;
        let targ = addr::unicast_addr(mx, my, src.get() as u64)
            .map_err(|_| err(ErrorKind::InvalidAddress, "multicast source"))?;
        let ret = addr::multicast_addr(start, end, dst.get() as u64)
            .map_err(|_| err(ErrorKind::InvalidAddress, "multicast rectangle"))?;
        self.ready(CmdBufId::WRITE)?;
        self.send(
            CmdBufId::WRITE,
            targ,
            ret,
            len,
            Self::ctrl_word(mode, true),
            packets,
        );
        self.nonposted_issued = self.nonposted_issued.wrapping_add(packets);
        self.acks_expected = self.acks_expected.wrapping_add(packets * receivers);
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, NocError> {
        // Read NOC_CMD_CTRL back before the first counter read (RISC-V ordering, ISA Counters.md).
        let _ = self.niu.cmd_buf(CmdBufId::READ).cmd_ctrl().read();
        Ok(caught_up(
            self.niu.status(Counter::MstRdRespReceived).read(),
            self.reads_issued,
        ))
    }

    fn writes_sent(&mut self) -> Result<bool, NocError> {
        let _ = self.niu.cmd_buf(CmdBufId::WRITE).cmd_ctrl().read();
        Ok(caught_up(
            self.niu.status(Counter::MstNonpostedWrReqSent).read(),
            self.nonposted_issued,
        ) && caught_up(
            self.niu.status(Counter::MstPostedWrReqSent).read(),
            self.posted_issued,
        ))
    }

    fn writes_acked(&mut self) -> Result<bool, NocError> {
        let _ = self.niu.cmd_buf(CmdBufId::WRITE).cmd_ctrl().read();
        Ok(caught_up(
            self.niu.status(Counter::MstWrAckReceived).read(),
            self.acks_expected,
        ))
    }

    fn resync(&mut self) -> Result<(), NocError> {
        self.sync_counts();
        Ok(())
    }
}

/// `done` has reached `issued` (wrapping 32-bit counters).
fn caught_up(done: u32, issued: u32) -> bool {
    done.wrapping_sub(issued) as i32 >= 0
}
