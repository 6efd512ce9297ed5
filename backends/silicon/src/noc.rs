//! `NocMulticast` on one NIU.

use blackhole_pac::addr::{self, AddrRegs, L1_ALIGN, MAX_PACKET_BYTES, span_contains};

use blackhole_pac::grid::{
    GRID_X, GRID_Y, Noc0Xy, Noc1Xy, TENSIX_X, TENSIX_Y_FIRST, TENSIX_Y_LAST, TileKind,
};
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::niu::{self, CmdBufId, Counter, Niu, NocCtrl, PacketTag, TransactionId};
/// NIU coordinate translation (the PAC's one rule: `blackhole_pac::translate`).
pub use blackhole_pac::translate::Translation;
use komorebi_hal::noc::{self, Ack, ErrorKind, Link, Loopback, Order, ReadTag, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};

use crate::error::{Error, Why};

type NocError = Error<ErrorKind>;

const fn err(kind: ErrorKind, why: Why) -> NocError {
    Error { kind, why }
}

/// The transaction id every komorebi request carries (`NOC_PACKET_TAG` bits 10..13 = 0): its
/// `NIU_MST_WRITE_REQS_OUTGOING_ID` counter is what [`SiliconNoc`]'s `writes_sent` reads.
const TRANSACTION_ID: TransactionId = match TransactionId::new(0) {
    Some(id) => id,
    None => panic!("0 is a transaction id"),
};

/// `NIU_MST_WRITE_REQS_OUTGOING_ID` is 8 bits wide (ISA `NoC/Counters.md`): no more writes than
/// this may be waiting for their source bytes at once.
const MAX_OUTGOING_WRITES: u32 = 255;

/// A unicast target checked: the address's tile, whether it is a DRAM port, and its coordinate
/// word for the NIU (`NOC_*_ADDR_HI`, [`addr::unicast_coord`]).
type KnownTarget = (Xy, bool, u32);

/// A multicast rectangle checked: the rectangle, its receivers (this node not excluded) and its
/// coordinate word for the NIU ([`addr::multicast_coord`] of its corners).
type KnownCast = (Rect, u32, u32);

/// Unicast targets a handle remembers: the banks a sender reads from (the host places each
/// sender's pages on the banks on its side, up to four) or a marker's tile.
const TARGETS: usize = 4;

/// A transfer longer than one packet: the packets not yet issued. Software splits (16 KiB a
/// packet, one command each) rather than the NIU's automatic splitting, which the ISA leaves
/// unclear for Blackhole and tt-metal never relies on.
#[derive(Copy, Clone, Debug)]
struct Split {
    buf: CmdBufId,
    ctrl: NocCtrl,
    /// The next packet's `NOC_TARG_ADDR` and `NOC_RET_ADDR`: local addresses and coordinate
    /// words.
    targ: u64,
    targ_coord: u32,
    ret: u64,
    ret_coord: u32,
    /// Bytes not yet issued.
    left: u32,
    /// Acks each packet brings (0 for reads and unacked writes).
    acks: u32,
}

/// One NIU as one data-movement kernel's NoC.
#[derive(Debug)]
pub struct SiliconNoc {
    niu: Niu,
    noc: NocId,
    node: Xy,
    harvest: HarvestMask,
    translation: Option<Translation>,
    /// This tile's coordinate word as the NIU wants it ([`SiliconNoc::coord`] of `node`, then
    /// [`addr::unicast_coord`]), worked out once: every read and write names it as its return
    /// or source address.
    own: Result<u32, NocError>,
    /// The last unicast targets checked ([`SiliconNoc::target`]) and what they resolved to,
    /// the newest at `next_target - 1`: a sender reads its pages from the few bank ports the
    /// host placed them on, in turn, and writes every marker to the same tile, so most requests
    /// skip the tile lookup and translation.
    targets: [Option<KnownTarget>; TARGETS],
    /// Where the next target checked is remembered.
    next_target: usize,
    /// The last multicast rectangle and its receivers (loopback not yet excluded) and coordinate
    /// word ([`SiliconNoc::cover`], [`SiliconNoc::corners`]): a broadcast casts every block and
    /// every VALID to one rectangle.
    last_cast: Option<KnownCast>,
    /// A transfer still being issued packet by packet.
    split: Option<Split>,
    /// The coordinate word of the open linked run, if any: its next multicast must go there, and
    /// no read or unicast write may be issued until an unlinked one closes it.
    run: Option<u32>,
    /// The transaction id the read command buffer's `NOC_PACKET_TAG` holds.
    read_id: u8,
    reads_issued: u32,
    acks_expected: u32,
}

/// The enabled Tensix tiles a rectangle covers, as NoC0 column and row bit sets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Cover {
    /// Bit `x`: NoC0 column `x` is an enabled Tensix column inside the rectangle.
    columns: u32,
    /// How many bits `columns` has.
    n_columns: u32,
    /// The lowest and highest NoC0 row that is a Tensix row inside the rectangle (`(255, 0)`
    /// when there is none).
    rows: (u8, u8),
    /// How many rows that is.
    n_rows: u32,
}

impl SiliconNoc {
    /// The NoC of NIU `niu` (NIU0 for NoC0, NIU1 for NoC1) of the tile at raw `node` on that
    /// NoC, on a chip with `harvest`; `translation` when the NIUs translate coordinates.
    ///
    /// Puts the NIU's command buffers into the state this backend relies on: `NOC_PACKET_TAG`
    /// (transaction id 0, no overlay delivery) and `NOC_BRCST_EXCLUDE` are cleared on all four,
    /// since they survive a RISC soft reset and a previous firmware (a tt-metal run) may have
    /// left them set (tt-metal's firmware clears the packet tags at boot the same way).
    /// `NOC_AT_LEN_BE_1` (the high word of a 64-bit length) is left alone, as tt-metal's Tensix
    /// firmware leaves it: only its Ethernet firmware clears it, after link training dirties it
    /// (tt-metal #18384), and ttsim does not model the register. The software counts then
    /// start from the hardware counters, as tt-metal's `noc_local_state_init`.
    pub fn new(
        niu: Niu,
        noc: NocId,
        node: Xy,
        harvest: HarvestMask,
        translation: Option<Translation>,
    ) -> Self {
        for id in [
            CmdBufId::Buf0,
            CmdBufId::Buf1,
            CmdBufId::Buf2,
            CmdBufId::Buf3,
        ] {
            let buf = niu.cmd_buf(id);
            buf.packet_tag().write_value(PacketTag::default());
            buf.brcst_exclude().write_value(0);
        }
        // The per-id outstanding counters start at 0, whatever a previous firmware left in
        // flight counted there: `NOC_CLEAR_OUTSTANDING_REQ_CNT`, once per NIU at its base + 0x60
        // (not in a command buffer's block), a bit mask of the ids to zero; all 16, since
        // nothing of this firmware is in flight yet.
        niu.clear_outstanding_req_cnt().write_value(0xFFFF);
        let mut n = Self {
            niu,
            noc,
            node,
            harvest,
            translation,
            own: Ok(0),
            targets: [None; TARGETS],
            next_target: 0,
            last_cast: None,
            split: None,
            run: None,
            read_id: 0,
            reads_issued: 0,
            acks_expected: 0,
        };
        n.own = n.coord(node).and_then(|(x, y)| {
            addr::unicast_coord(x, y)
                .map_err(|_| err(ErrorKind::InvalidAddress, Why::NoTranslation))
        });
        n.sync_counts();
        n
    }

    fn sync_counts(&mut self) {
        self.split = None;
        self.reads_issued = self.niu.status(Counter::MstRdRespReceived).read();
        self.acks_expected = self.niu.status(Counter::MstWrAckReceived).read();
    }

    /// NoC0 coordinates of raw `p` of this NoC; `None` off the 17 x 12 grid.
    fn noc0(&self, p: Xy) -> Option<Noc0Xy> {
        match self.noc {
            NocId::Noc0 => Noc0Xy::new(p.x(), p.y()),
            NocId::Noc1 => Noc1Xy::new(p.x(), p.y()).map(Noc1Xy::to_noc0),
        }
    }

    /// The coordinate as the NIU wants it: raw, or translated. Tensix tiles, DRAM ports (whose
    /// raw NoC0 coordinates translate to themselves) and the x = 8 column have translated
    /// coordinates (`blackhole_pac::translate`).
    fn coord(&self, p: Xy) -> Result<(u8, u8), NocError> {
        let Some(t) = &self.translation else {
            return Ok((p.x(), p.y()));
        };
        self.noc0(p)
            .and_then(|p0| t.to_translated(p0))
            .map(|t| t.get())
            .ok_or(err(ErrorKind::InvalidAddress, Why::NoTranslation))
    }

    fn target_kind(&self, p: Xy) -> Result<TileKind, NocError> {
        let neither = err(ErrorKind::InvalidAddress, Why::NotL1OrDram);
        let p0 = self.noc0(p).ok_or(neither)?;
        match p0.memory() {
            Some(TileKind::Tensix) if self.harvest.is_harvested(p0.x()) => {
                Err(err(ErrorKind::InvalidAddress, Why::HarvestedTarget))
            }
            Some(k) => Ok(k),
            None => Err(neither),
        }
    }

    /// Whether `p` is a DRAM port, and its coordinate word ([`SiliconNoc::target_kind`],
    /// [`SiliconNoc::coord`], [`addr::unicast_coord`]), remembered for the next request to the
    /// same tile (a handle's harvest and translation never change). A coordinate that does not
    /// fit the word fails as `why`.
    ///
    /// Inlined, with the lookup of a tile not remembered out of line: the hit is a few compares,
    /// and the miss's calls would make every caller save registers for them.
    #[inline(always)]
    fn target(&mut self, p: Xy, why: Why) -> Result<(bool, u32), NocError> {
        // An index loop over the slots: at opt-level z the `flatten` iterator's state machine
        // cost more than the comparisons (about 60 cycles a request).
        let mut i = 0;
        while i < TARGETS {
            if let Some((known, dram, coord)) = self.targets[i] {
                if known == p {
                    return Ok((dram, coord));
                }
            }
            i += 1;
        }
        self.learn_target(p, why)
    }

    #[inline(never)]
    fn learn_target(&mut self, p: Xy, why: Why) -> Result<(bool, u32), NocError> {
        let dram = matches!(self.target_kind(p)?, TileKind::Dram { .. });
        let (x, y) = self.coord(p)?;
        let coord = addr::unicast_coord(x, y).map_err(|_| err(ErrorKind::InvalidAddress, why))?;
        self.targets[self.next_target % TARGETS] = Some((p, dram, coord));
        self.next_target = (self.next_target + 1) % TARGETS;
        Ok((dram, coord))
    }

    /// The receivers (this node not yet excluded) and coordinate word of a multicast to `rect`,
    /// remembered for the next multicast to the same rectangle.
    fn cast_to(&mut self, rect: Rect) -> Result<(u32, u32), NocError> {
        if let Some((last, receivers, coord)) = self.last_cast {
            if last == rect {
                return Ok((receivers, coord));
            }
        }
        let cover = self.cover(rect);
        // Counted as the bits are set: the cores have no population count (`count_ones` is
        // some 30 instructions).
        let receivers = cover.n_columns * cover.n_rows;
        if receivers == 0 {
            return Ok((0, 0));
        }
        let [start, end] = self.corners(rect, cover)?;
        let coord = addr::multicast_coord(start, end)
            .map_err(|_| err(ErrorKind::InvalidAddress, Why::MulticastRect))?;
        self.last_cast = Some((rect, receivers, coord));
        Ok((receivers, coord))
    }

    fn check_len(len: u32) -> Result<(), NocError> {
        if len == 0 {
            Err(err(ErrorKind::InvalidLength, Why::ZeroLength))
        } else {
            Ok(())
        }
    }

    fn check_l1(a: u32, len: u32) -> Result<(), NocError> {
        if a % L1_ALIGN != 0 {
            return Err(err(ErrorKind::Misaligned, Why::L1Misaligned));
        }
        // `a + len > L1_SIZE`, in 32 bits without overflow (no 64-bit add on the cores).
        let size = blackhole_pac::tensix::L1_SIZE;
        if len > size || a > size - len {
            return Err(err(ErrorKind::InvalidAddress, Why::BeyondL1));
        }
        Ok(())
    }

    /// Issues the next packet of a split transfer if its command buffer is free. True when no
    /// split transfer is left.
    fn progress(&mut self) -> bool {
        let Some(mut s) = self.split else {
            return true;
        };
        if !self.free(s.buf) {
            return false;
        }
        let len = s.left.min(MAX_PACKET_BYTES);
        let targ = Self::regs(s.targ, s.targ_coord);
        let ret = Self::regs(s.ret, s.ret_coord);
        self.send(s.buf, targ, ret, len, s.ctrl);
        self.count(s.ctrl, s.acks);
        s.left -= len;
        s.targ += len as u64;
        s.ret += len as u64;
        self.split = (s.left > 0).then_some(s);
        self.split.is_none()
    }

    fn free(&self, buf: CmdBufId) -> bool {
        self.niu.cmd_buf(buf).cmd_ctrl().read() == niu::NOC_CTRL_STATUS_READY
    }

    /// Command buffer `buf` can take a request: no split transfer under way, the buffer free,
    /// and room in the 8-bit outgoing-writes counter for a write.
    fn ready(&mut self, buf: CmdBufId, write: bool) -> Result<(), NocError> {
        if !self.progress() {
            return Err(err(ErrorKind::Busy, Why::Splitting));
        }
        if !self.free(buf) {
            return Err(err(ErrorKind::Busy, Why::CmdBufBusy));
        }
        if write && self.niu.write_reqs_outgoing(TRANSACTION_ID).read() >= MAX_OUTGOING_WRITES {
            return Err(err(ErrorKind::Busy, Why::OutgoingFull));
        }
        Ok(())
    }

    /// The address registers of `local` (36 bits) at coordinate word `coord`: the words of
    /// [`AddrRegs::split`] of the 64-bit address, put together without it (no 64-bit shifts on
    /// the cores).
    #[inline(always)]
    fn regs(local: u64, coord: u32) -> AddrRegs {
        AddrRegs {
            lo: local as u32,
            mid: (local >> 32) as u32 & 0xF,
            hi: coord,
        }
    }

    /// Programs command buffer `id` and sends one packet of `len` <= 16 KiB bytes.
    fn send(&self, id: CmdBufId, t: AddrRegs, r: AddrRegs, len: u32, ctrl: NocCtrl) {
        let buf = self.niu.cmd_buf(id);
        buf.targ_addr_lo().write_value(t.lo);
        buf.targ_addr_mid().write_value(t.mid);
        buf.targ_addr_hi().write_value(t.hi);
        buf.ret_addr_lo().write_value(r.lo);
        buf.ret_addr_mid().write_value(r.mid);
        buf.ret_addr_hi().write_value(r.hi);
        buf.at_len_be().write_value(len);
        buf.ctrl().write_value(ctrl);
        buf.cmd_ctrl().write_value(1);
    }

    /// The software counts of one packet sent with `ctrl`.
    fn count(&mut self, ctrl: NocCtrl, acks: u32) {
        if ctrl.request_type() == niu::request::READ {
            self.reads_issued = self.reads_issued.wrapping_add(1);
        } else {
            self.acks_expected = self.acks_expected.wrapping_add(acks);
        }
    }

    /// Issues a transfer of `len` bytes as packets of at most 16 KiB: the first now, the
    /// rest on later calls as the command buffer frees (`progress`). `acks`: per packet.
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        buf: CmdBufId,
        (targ, targ_coord): (u64, u32),
        (ret, ret_coord): (u64, u32),
        len: u32,
        ctrl: NocCtrl,
        acks: u32,
    ) {
        // `ready` saw the buffer free, so the first packet goes now, without reading the
        // buffer's status again; only a transfer over 16 KiB leaves the rest to `progress`.
        let first = len.min(MAX_PACKET_BYTES);
        let (t, r) = (Self::regs(targ, targ_coord), Self::regs(ret, ret_coord));
        self.send(buf, t, r, first, ctrl);
        self.count(ctrl, acks);
        if len > first {
            self.split = Some(Split {
                buf,
                ctrl,
                targ: targ + first as u64,
                targ_coord,
                ret: ret + first as u64,
                ret_coord,
                left: len - first,
                acks,
            });
        }
    }

    /// The enabled Tensix tiles raw `rect` of this NoC covers (wrap included, as the hardware
    /// reads reversed corners). Tensix tiles form whole columns x whole rows, so each NoC0 axis
    /// is tested on its own, through the NoC1 mirror (`16 - x`, `11 - y`) on NoC1.
    fn cover(&self, rect: Rect) -> Cover {
        let (s, e) = (rect.start(), rect.end());
        let mirrored = self.noc == NocId::Noc1;
        let own = |v0: u8, len: u8| if mirrored { len - 1 - v0 } else { v0 };
        let mut c = Cover {
            columns: 0,
            n_columns: 0,
            rows: (u8::MAX, 0),
            n_rows: 0,
        };
        for x0 in TENSIX_X {
            if span_contains(s.x(), e.x(), own(x0, GRID_X)) && !self.harvest.is_harvested(x0) {
                c.columns |= 1 << x0;
                c.n_columns += 1;
            }
        }
        for y0 in TENSIX_Y_FIRST..=TENSIX_Y_LAST {
            if span_contains(s.y(), e.y(), own(y0, GRID_Y)) {
                c.rows = (c.rows.0.min(y0), y0);
                c.n_rows += 1;
            }
        }
        c
    }

    /// The corners to write for a multicast over `cover`: raw `rect` as given without
    /// translation; under translation the smallest translated rectangle over the covered
    /// enabled columns and rows, which must be exactly them (enabled columns translate in order
    /// onto x 1..7, 10.., so a rectangle over enabled columns stays one; a corner on a
    /// harvested column, which translates to 15 or 16, is never written). NoC1 gets the corners
    /// swapped (start at the NoC0-order maximum), as the ISA and tt-metal prescribe.
    fn corners(&self, rect: Rect, cover: Cover) -> Result<[(u8, u8); 2], NocError> {
        let Some(t) = &self.translation else {
            let (s, e) = (rect.start(), rect.end());
            return Ok([(s.x(), s.y()), (e.x(), e.y())]);
        };
        let (mut lo, mut hi) = (u8::MAX, 0u8);
        for x0 in 0..GRID_X {
            if cover.columns & 1 << x0 != 0 {
                let tx = t.tensix(x0, TENSIX_Y_FIRST).map_or(u8::MAX, |(tx, _)| tx);
                lo = lo.min(tx);
                hi = hi.max(tx);
            }
        }
        let between = TENSIX_X.iter().filter(|&&x| lo <= x && x <= hi).count() as u32;
        if between != cover.n_columns {
            return Err(err(ErrorKind::InvalidAddress, Why::NotTranslatedRect));
        }
        let (y_lo, y_hi) = cover.rows;
        Ok(match self.noc {
            NocId::Noc0 => [(lo, y_lo), (hi, y_hi)],
            NocId::Noc1 => [(hi, y_hi), (lo, y_lo)],
        })
    }

    /// A read of `len` bytes at `src` into L1 at `dst` with transaction id `id`.
    fn read_with_id(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        id: u8,
    ) -> Result<(), NocError> {
        // First, before anything is written: a read (VC 1) during a linked run (VC 4) would
        // never be initiated and would hang the NIU (ISA `MemoryMap.md`, `NOC_CMD_VC_LINKED`).
        if self.run.is_some() {
            return Err(err(ErrorKind::InvalidMode, Why::ReadInRun));
        }
        Self::check_len(len)?;
        Self::check_l1(dst.get(), len)?;
        let (dram, src_coord) = self.target(src.node(), Why::ReadSource)?;
        let align = if dram {
            addr::DRAM_READ_ALIGN
        } else {
            L1_ALIGN
        };
        // The low word holds every alignment bit (both are powers of two below 2^32).
        if src.local() as u32 % align != 0 {
            return Err(err(ErrorKind::Misaligned, Why::ReadSourceMisaligned));
        }
        let own = self.own?;
        self.ready(CmdBufId::READ, false)?;
        if id != self.read_id {
            let mut tag = PacketTag::default();
            tag.set_transaction_id(id);
            self.niu
                .cmd_buf(CmdBufId::READ)
                .packet_tag()
                .write_value(tag);
            self.read_id = id;
        }
        let mut ctrl = NocCtrl::default();
        ctrl.set_request_type(niu::request::READ);
        // The ISA ignores `NOC_CMD_RESP_MARKED` on a read (a read always has its response);
        // tt-metal sets it (`ncrisc_noc_fast_read`), and ttsim refuses a read without it
        // ("read should not be posted").
        ctrl.set_resp_marked(true);
        ctrl.set_vc_static(true);
        ctrl.set_static_vc(niu::UNICAST_VC);
        let targ = (src.local(), src_coord);
        self.issue(CmdBufId::READ, targ, (dst.get() as u64, own), len, ctrl, 0);
        Ok(())
    }

    fn ctrl_word(mode: WriteMode, multicast: bool) -> NocCtrl {
        let mut c = NocCtrl::default();
        c.set_request_type(niu::request::WRITE);
        // Posted multicast is broken on Blackhole: multicasts are always acknowledged.
        c.set_resp_marked(mode.ack == Ack::Acked || multicast);
        if multicast {
            c.set_brcst_packet(true);
            c.set_path_reserve(true);
            // tt-metal's `noc_parameters.h` (Blackhole): `NOC_CMD_VC_LINKED` (bit 6) keeps the
            // path for the next packet; `NOC_CMD_BRCST_SRC_INCLUDE` (bit 17) delivers to a
            // sender inside the rectangle.
            c.set_vc_linked(mode.link == Link::Linked);
            c.set_brcst_src_include(mode.loopback == Loopback::Included);
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
        self.read_with_id(src, dst, len, 0)
    }

    /// Tag `t` is transaction id `t + 1` (id 0 carries untagged requests, writes included):
    /// `NOC_PACKET_TAG` bits 10..13 of the read command buffer, as tt-metal's
    /// `noc_async_read_set_trid` sets them (`NOC_PACKET_TAG_TRANSACTION_ID`).
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), NocError> {
        self.read_with_id(src, dst, len, tag.get() + 1)
    }

    /// `NIU_MST_REQS_OUTSTANDING_ID(t + 1)` is back at 0, as tt-metal's
    /// `noc_async_read_barrier_with_trid` waits for.
    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        let _ = self.niu.cmd_buf(CmdBufId::READ).cmd_ctrl().read();
        let id = TransactionId::new(tag.get() + 1).ok_or(err(ErrorKind::Other, Why::ReadTag))?;
        Ok(self.niu.reqs_outstanding(id).read() & 0xFF == 0)
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), NocError> {
        if !mode.is_unicast() {
            return Err(err(ErrorKind::InvalidMode, Why::UnicastMode));
        }
        // As for a read: the unicast VC is not the run's, so the NIU would hang.
        if self.run.is_some() {
            return Err(err(ErrorKind::InvalidMode, Why::WriteInRun));
        }
        Self::check_len(len)?;
        Self::check_l1(src.get(), len)?;
        let (_, dst_coord) = self.target(dst.node(), Why::WriteDestination)?;
        if dst.local() as u32 % L1_ALIGN != 0 {
            return Err(err(ErrorKind::Misaligned, Why::WriteDestinationMisaligned));
        }
        let own = self.own?;
        let (targ, ret) = ((src.get() as u64, own), (dst.local(), dst_coord));
        // Markers and other small writes use their own command buffer, as tt-metal does.
        let id = if len <= 16 {
            CmdBufId::SMALL_WRITE
        } else {
            CmdBufId::WRITE
        };
        self.ready(id, true)?;
        let ctrl = Self::ctrl_word(mode, false);
        self.issue(id, targ, ret, len, ctrl, ctrl.resp_marked() as u32);
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
        // Busy first: a VALID multicast follows a block's data on the same command buffer and
        // is asked again until the data's packet has gone; each retry is then this one check.
        self.ready(CmdBufId::WRITE, true)?;
        Self::check_len(len)?;
        Self::check_l1(src.get(), len)?;
        Self::check_l1(dst.get(), len)?;
        // Tensix tiles form whole columns x whole rows, so the receivers are enabled columns
        // times rows, less this node if it lies inside and is excluded.
        let (covered, coord) = self.cast_to(rect)?;
        let excluded = mode.loopback == Loopback::Excluded && rect.contains(self.node);
        let receivers = covered.saturating_sub(excluded as u32);
        if receivers == 0 {
            return Ok(());
        }
        if self.run.is_some_and(|open| open != coord) {
            return Err(err(ErrorKind::InvalidMode, Why::RunElsewhere));
        }
        let own = self.own?;
        let ctrl = Self::ctrl_word(mode, true);
        let (targ, ret) = ((src.get() as u64, own), (dst.get() as u64, coord));
        self.issue(CmdBufId::WRITE, targ, ret, len, ctrl, receivers);
        self.run = (mode.link == Link::Linked).then_some(coord);
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        // Read NOC_CMD_CTRL back before the first counter read (RISC-V ordering, ISA Counters.md).
        let _ = self.niu.cmd_buf(CmdBufId::READ).cmd_ctrl().read();
        Ok(caught_up(
            self.niu.status(Counter::MstRdRespReceived).read(),
            self.reads_issued,
        ))
    }

    /// Sent means the source bytes have been read: `NIU_MST_WRITE_REQS_OUTGOING_ID` of the
    /// transaction id is back at 0, which the NIU decrements "after the data reads from L1 are
    /// complete". `NIU_MST_*_WR_REQ_SENT` is not enough: it counts "before the data reads from L1
    /// are complete" (ISA `NoC/Counters.md`, "Write requests with `NOC_CMD_WR_INLINE=false`").
    /// tt-metal reads the same per-id counter in
    /// `ncrisc_noc_nonposted_write_with_transaction_id_sent`; its plain
    /// `ncrisc_noc_nonposted_writes_sent` compares `NIU_MST_NONPOSTED_WR_REQ_SENT` with its
    /// software count of writes issued instead (Blackhole `noc_nonblocking_api.h`).
    fn writes_sent(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        let _ = self.niu.cmd_buf(CmdBufId::WRITE).cmd_ctrl().read();
        Ok(self.niu.write_reqs_outgoing(TRANSACTION_ID).read() & 0xFF == 0)
    }

    fn writes_acked(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
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
