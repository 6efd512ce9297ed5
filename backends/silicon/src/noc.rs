//! `NocMulticast` on one NIU.

use komorebi_hal::noc::{
    self, Ack, ErrorKind, Link, Loopback, Order, PageReads, ReadTag, WriteMode,
};
use komorebi_hal::wrap::at_or_after;
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};

use crate::chip::{Chip, CmdBuf, Endpoint, Memory, ctrl};
use crate::cover::{Axes, Cover};
use crate::error::{Error, Why};
use crate::pages::{self, PORTS, PortTable, port_key};

type NocError = Error<ErrorKind>;

const fn err(kind: ErrorKind, why: Why) -> NocError {
    Error { kind, why }
}

/// The transaction id every komorebi request carries (`NOC_PACKET_TAG` bits 10..13 = 0): its
/// `NIU_MST_WRITE_REQS_OUTGOING_ID` counter is what [`SiliconNoc`]'s `writes_sent` reads.
const TRANSACTION_ID: u8 = 0;

/// Every read's `NOC_CTRL`: a read on the unicast virtual channel. The ISA ignores
/// `NOC_CMD_RESP_MARKED` on a read (a read always has its response); tt-metal sets it
/// (`ncrisc_noc_fast_read`), and ttsim refuses a read without it ("read should not be
/// posted").
const READ_CTRL: u32 =
    ctrl::READ | ctrl::RESP_MARKED | ctrl::VC_STATIC | ctrl::static_vc(ctrl::UNICAST_VC);

/// `NIU_MST_WRITE_REQS_OUTGOING_ID` is 8 bits wide (ISA `NoC/Counters.md`): no more writes than
/// this may be waiting for their source bytes at once.
const MAX_OUTGOING_WRITES: u32 = 255;

/// A unicast target checked: the address's tile, whether it is a DRAM port, and its coordinate
/// word for the NIU (`NOC_*_ADDR_HI`, [`addr::unicast_coord`]).
type KnownTarget = (Xy, bool, u32);

/// A multicast rectangle checked: the rectangle, its receivers (this node not excluded), its
/// coordinate word for the NIU ([`addr::multicast_coord`] of its corners) and whether this node
/// lies inside it.
type KnownCast = (Rect, u32, u32, bool);

/// Unicast targets a handle remembers: the banks a sender reads from (the host places each
/// sender's pages on the banks on its side, up to four) or a marker's tile.
const TARGETS: usize = 4;

/// A transfer longer than one packet: the packets not yet issued. Software splits (the chip's
/// packet size, one command each) rather than the NIU's automatic splitting, which the ISA
/// leaves unclear for Blackhole and tt-metal never relies on.
#[derive(Copy, Clone, Debug)]
struct Split {
    buf: CmdBuf,
    ctrl: u32,
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

/// One NIU of chip `C` as one data-movement kernel's NoC.
#[derive(Debug)]
pub struct SiliconNoc<C: Chip> {
    niu: C::Niu,
    noc: NocId,
    node: Xy,
    harvest: C::Harvest,
    translation: Option<C::Translation>,
    /// The translated Tensix columns and rows, for the multicasts' corners ([`Axes`]).
    axes: Option<Axes>,
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
    /// word ([`Cover::of`], [`Cover::corners`]): a broadcast casts every block and
    /// every VALID to one rectangle.
    last_cast: Option<KnownCast>,
    /// The ports of the last page reads, resolved.
    ports: PortTable,
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

impl<C: Chip> SiliconNoc<C> {
    /// The NoC of NIU `niu` (NIU0 for NoC0, NIU1 for NoC1) of the tile at raw `node` on that
    /// NoC, on a chip with `harvest`; `translation` when the NIUs translate coordinates.
    ///
    /// Puts the NIU's command buffers into the state this backend relies on
    /// ([`Chip::niu_init`]): `NOC_PACKET_TAG` (transaction id 0, no overlay delivery) and, on
    /// Blackhole, `NOC_BRCST_EXCLUDE` are cleared on all four, since they survive a RISC soft
    /// reset and a previous firmware (a tt-metal run) may have left them set (tt-metal's
    /// firmware clears the packet tags at boot the same way).
    /// `NOC_AT_LEN_BE_1` (the high word of a 64-bit length) is left alone, as tt-metal's Tensix
    /// firmware leaves it: only its Ethernet firmware clears it, after link training dirties it
    /// (tt-metal #18384), and ttsim does not model the register. The software counts then
    /// start from the hardware counters, as tt-metal's `noc_local_state_init`.
    pub fn new(
        niu: C::Niu,
        noc: NocId,
        node: Xy,
        harvest: C::Harvest,
        translation: Option<C::Translation>,
    ) -> Self {
        // Also the per-id outstanding counters start at 0, whatever a previous firmware left in
        // flight counted there: `NOC_CLEAR_OUTSTANDING_REQ_CNT`, once per NIU (not in a command
        // buffer's block), a bit mask of the ids to zero; all 16, since nothing of this
        // firmware is in flight yet.
        C::niu_init(niu);
        let mut n = Self {
            niu,
            noc,
            node,
            harvest,
            axes: translation.as_ref().map(Axes::of::<C>),
            translation,
            own: Ok(0),
            targets: [None; TARGETS],
            next_target: 0,
            last_cast: None,
            ports: PortTable::NONE,
            split: None,
            run: None,
            read_id: 0,
            reads_issued: 0,
            acks_expected: 0,
        };
        n.own = n.coord(node).and_then(|(x, y)| {
            C::unicast_coord(x, y).ok_or(err(ErrorKind::InvalidAddress, Why::NoTranslation))
        });
        n.sync_counts();
        n
    }

    fn sync_counts(&mut self) {
        self.split = None;
        self.reads_issued = C::reads_received(self.niu);
        self.acks_expected = C::acks_received(self.niu);
    }

    /// NoC0 coordinates of raw `p` of this NoC; `None` off the chip's grid. The rule of
    /// [`NocId::noc0_of`], written out on `(u8, u8)`: going through `Option<Xy>` costs the
    /// firmware images 108 bytes of code each (measured 2026-12-05).
    fn noc0(&self, p: Xy) -> Option<(u8, u8)> {
        let (w, h) = C::GRID;
        if p.x() >= w || p.y() >= h {
            return None;
        }
        Some(match self.noc {
            NocId::Noc0 => (p.x(), p.y()),
            NocId::Noc1 => (w - 1 - p.x(), h - 1 - p.y()),
        })
    }

    /// The coordinate as the NIU wants it: raw, or translated ([`Chip::to_translated`]: Tensix
    /// tiles and DRAM ports; on Blackhole also the x = 8 column). A translated coordinate in
    /// the identity range ([`Chip::RAW_BELOW`]: Wormhole's DRAM) is this NoC's raw one.
    fn coord(&self, p: Xy) -> Result<(u8, u8), NocError> {
        let Some(t) = &self.translation else {
            return Ok((p.x(), p.y()));
        };
        let (tx, ty) = self
            .noc0(p)
            .and_then(|(x, y)| C::to_translated(t, x, y))
            .ok_or(err(ErrorKind::InvalidAddress, Why::NoTranslation))?;
        let raw = |translated: u8, own: u8| {
            if translated < C::RAW_BELOW {
                own
            } else {
                translated
            }
        };
        Ok((raw(tx, p.x()), raw(ty, p.y())))
    }

    fn target_kind(&self, p: Xy) -> Result<Memory, NocError> {
        let neither = err(ErrorKind::InvalidAddress, Why::NotL1OrDram);
        let (x, y) = self.noc0(p).ok_or(neither)?;
        match C::memory(x, y) {
            Some(Memory::Tensix)
                if !C::column_enabled(self.harvest, x) || !C::row_enabled(self.harvest, y) =>
            {
                Err(err(ErrorKind::InvalidAddress, Why::HarvestedTarget))
            }
            Some(k) => Ok(k),
            None => Err(neither),
        }
    }

    /// Whether `p` is a DRAM port, and its coordinate word ([`SiliconNoc::target_kind`],
    /// [`SiliconNoc::coord`], [`Chip::unicast_coord`]), remembered for the next request to the
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
        let dram = self.target_kind(p)? == Memory::Dram;
        let (x, y) = self.coord(p)?;
        let coord = C::unicast_coord(x, y).ok_or(err(ErrorKind::InvalidAddress, why))?;
        self.targets[self.next_target % TARGETS] = Some((p, dram, coord));
        self.next_target = (self.next_target + 1) % TARGETS;
        Ok((dram, coord))
    }

    /// The receivers (this node not yet excluded) and coordinate word of a multicast to `rect`,
    /// remembered for the next multicast to the same rectangle.
    ///
    /// Inlined, with the rectangle not remembered worked out out of line: a broadcast's
    /// multicasts all go to one rectangle, and the miss's calls made every multicast save and
    /// restore twelve registers (decisions D32).
    #[inline(always)]
    fn cast_to(&mut self, rect: Rect) -> Result<(u32, u32, bool), NocError> {
        if let Some((last, receivers, coord, inside)) = self.last_cast {
            if last == rect {
                return Ok((receivers, coord, inside));
            }
        }
        self.learn_cast(rect)
    }

    #[inline(never)]
    fn learn_cast(&mut self, rect: Rect) -> Result<(u32, u32, bool), NocError> {
        let cover = Cover::of::<C>(self.noc, self.harvest, rect);
        // Counted as the bits are set: a Wormhole core has no population count (`count_ones`
        // is some 30 instructions there; Blackhole's Zbb has `cpop`).
        let receivers = cover.n_columns * cover.n_rows;
        let inside = rect.contains(self.node);
        if receivers == 0 {
            return Ok((0, 0, inside));
        }
        let [start, end] = cover
            .corners(self.noc, self.axes.as_ref(), rect)
            .ok_or(err(ErrorKind::InvalidAddress, Why::NotTranslatedRect))?;
        let coord = C::multicast_coord(start, end)
            .ok_or(err(ErrorKind::InvalidAddress, Why::MulticastRect))?;
        self.last_cast = Some((rect, receivers, coord, inside));
        Ok((receivers, coord, inside))
    }

    fn check_len(len: u32) -> Result<(), NocError> {
        if len == 0 {
            Err(err(ErrorKind::InvalidLength, Why::ZeroLength))
        } else {
            Ok(())
        }
    }

    fn check_l1(a: u32, len: u32) -> Result<(), NocError> {
        pages::check_l1::<C>(a, len)
    }

    /// Issues the next packet of a split transfer if its command buffer is free. True when no
    /// split transfer is left.
    ///
    /// Inlined for the common case, no split transfer under way: every request and every
    /// barrier asks, and the call and return cost a sender some 10 cycles each time (about 3%
    /// of the 03 run on the firmware, decisions D31).
    #[inline(always)]
    fn progress(&mut self) -> bool {
        self.split.is_none() || self.progress_split()
    }

    #[inline(never)]
    fn progress_split(&mut self) -> bool {
        let Some(mut s) = self.split else {
            return true;
        };
        if !self.free(s.buf) {
            return false;
        }
        let len = s.left.min(C::MAX_PACKET_BYTES);
        let targ = Endpoint {
            local: s.targ,
            coord: s.targ_coord,
        };
        let ret = Endpoint {
            local: s.ret,
            coord: s.ret_coord,
        };
        C::send(self.niu, s.buf, targ, ret, len, s.ctrl);
        self.count(s.ctrl, s.acks);
        s.left -= len;
        s.targ += len as u64;
        s.ret += len as u64;
        self.split = (s.left > 0).then_some(s);
        self.split.is_none()
    }

    fn free(&self, buf: CmdBuf) -> bool {
        C::buf_free(self.niu, buf)
    }

    /// Command buffer `buf` can take a request: no split transfer under way, the buffer free,
    /// and room in the 8-bit outgoing-writes counter for a write.
    fn ready(&mut self, buf: CmdBuf, write: bool) -> Result<(), NocError> {
        if !self.progress() {
            return Err(err(ErrorKind::Busy, Why::Splitting));
        }
        if !self.free(buf) {
            return Err(err(ErrorKind::Busy, Why::CmdBufBusy));
        }
        // The counter is 8 bits (ISA `NoC/Counters.md`): the bits above it, as `writes_sent`
        // masks them, say nothing.
        if write && C::writes_outgoing(self.niu, TRANSACTION_ID) & 0xFF >= MAX_OUTGOING_WRITES {
            return Err(err(ErrorKind::Busy, Why::OutgoingFull));
        }
        Ok(())
    }

    /// The software counts of one packet sent with `ctrl`.
    fn count(&mut self, ctrl: u32, acks: u32) {
        if ctrl & ctrl::REQUEST_TYPE == ctrl::READ {
            self.reads_issued = self.reads_issued.wrapping_add(1);
        } else {
            self.acks_expected = self.acks_expected.wrapping_add(acks);
        }
    }

    /// Issues a transfer of `len` bytes as packets of at most the chip's packet size: the
    /// first now, the rest on later calls as the command buffer frees (`progress`). `acks`:
    /// per packet.
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        buf: CmdBuf,
        (targ, targ_coord): (u64, u32),
        (ret, ret_coord): (u64, u32),
        len: u32,
        ctrl: u32,
        acks: u32,
    ) {
        // `ready` saw the buffer free, so the first packet goes now, without reading the
        // buffer's status again; only a transfer over one packet leaves the rest to `progress`.
        let first = len.min(C::MAX_PACKET_BYTES);
        let t = Endpoint {
            local: targ,
            coord: targ_coord,
        };
        let r = Endpoint {
            local: ret,
            coord: ret_coord,
        };
        C::send(self.niu, buf, t, r, first, ctrl);
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

    /// A read of `len` bytes at `src` into L1 at `dst` with transaction id `id`.
    fn read_with_id(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        id: u8,
    ) -> Result<(), NocError> {
        self.read_mode(len)?;
        let src = self.read_source(src, dst, len)?;
        let own = self.own?;
        self.ready(CmdBuf::Read, false)?;
        self.issue_read(src, dst.get(), len, id, own);
        Ok(())
    }

    /// What every read checks before its addresses, first and before anything is written: a
    /// read (VC 1) during a linked run (VC 4) would never be initiated and would hang the NIU
    /// (ISA `MemoryMap.md`, `NOC_CMD_VC_LINKED`).
    #[inline(always)]
    fn read_mode(&self, len: u32) -> Result<(), NocError> {
        if self.run.is_some() {
            return Err(err(ErrorKind::InvalidMode, Why::ReadInRun));
        }
        Self::check_len(len)
    }

    /// The checks of one read's addresses: `dst` in L1, `src` an L1 or DRAM its alignment
    /// allows, and from DRAM `dst` aligned as DRAM too (the NIU keeps a DRAM read's low
    /// address bits, so the two must be congruent: tt-metal `sanitize.h`; ISA
    /// `WormholeB0/NoC/Alignment.md`, C32). Its source's local address and coordinate word.
    #[inline(always)]
    fn read_source(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(u64, u32), NocError> {
        Self::check_l1(dst.get(), len)?;
        let (dram, src_coord) = self.target(src.node(), Why::ReadSource)?;
        let align = if dram {
            C::DRAM_READ_ALIGN
        } else {
            C::L1_ALIGN
        };
        // The low word holds every alignment bit (both are powers of two below 2^32).
        if src.local() as u32 % align != 0 || dram && dst.get() % align != 0 {
            return Err(err(ErrorKind::Misaligned, Why::ReadSourceMisaligned));
        }
        Ok((src.local(), src_coord))
    }

    /// Remembers `ports` (at most [`PORTS`]) resolved; false (remembering none) when one is
    /// not a node a read can come from.
    #[inline(never)]
    fn learn_ports(&mut self, ports: &[Xy]) -> bool {
        // Learnt in place, no port remembered until every one is: a table built aside and
        // moved in cost the first command's start some 180 cycles on the baby cores (two
        // clears and a copy). `same` compares only the first `len` places.
        self.ports.len = 0;
        let mut mask = C::L1_ALIGN - 1;
        for (i, &p) in ports.iter().enumerate() {
            let Ok((dram, c)) = self.target(p, Why::ReadSource) else {
                return false;
            };
            if dram {
                mask = C::DRAM_READ_ALIGN - 1;
            }
            let t = &mut self.ports;
            match (t.keys.get_mut(i), t.coords.get_mut(i)) {
                (Some(key), Some(coord)) => (*key, *coord) = (port_key(p), c),
                _ => return false,
            }
        }
        self.ports.mask = mask;
        self.ports.len = ports.len();
        true
    }

    /// Issues pages `from..count` of a batch whose checks passed, while the read command
    /// buffer is free: page `i` from the port remembered in place `port` (taken in turn from
    /// `port` at `from`, over `n` places) at `local`, into `dst`, `len` bytes each, with
    /// transaction id `id`. The first page not issued.
    ///
    /// Not inlined: on its own the loop keeps its values in registers (inlined into the
    /// block's reads it spilled them to the stack).
    #[inline(never)]
    fn issue_pages(
        &mut self,
        (mut port, n): (usize, usize),
        (from, count): (u32, u32),
        (mut local, mut dst): (u64, u32),
        len: u32,
        id: u8,
        own: u32,
    ) -> u32 {
        let mut i = from;
        while i < count && self.free(CmdBuf::Read) {
            if i == from {
                self.use_read_id(id);
                C::read_batch(self.niu, own, len, READ_CTRL);
            }
            // (Always there: `port` stays below `n`, at most `PORTS`.)
            let coord = self.ports.coords.get(port).copied().unwrap_or_default();
            C::send_read(self.niu, Endpoint { local, coord }, dst);
            local += len as u64;
            dst += len;
            port += 1;
            if port == n {
                port = 0;
            }
            i += 1;
        }
        i
    }

    /// [`NocMulticast::read_pages`] page by page, each read as `read_tagged` reads it: for
    /// pages whose checks do not pass at once.
    #[inline(never)]
    fn read_pages_one_by_one(
        &mut self,
        from: u32,
        r: &PageReads<'_>,
        id: u8,
    ) -> Result<u32, NocError> {
        let mut i = from;
        while let Some((src, dst)) = r.page(i) {
            match self.read_with_id(src, dst, r.len, id) {
                Ok(()) => i += 1,
                Err(e) if e.kind == ErrorKind::Busy => return Ok(i),
                Err(e) => return Err(e),
            }
        }
        Ok(i)
    }

    /// Puts transaction id `id` into the read command buffer's `NOC_PACKET_TAG`, unless it is
    /// there already (the register keeps it from one read to the next).
    #[inline(always)]
    fn use_read_id(&mut self, id: u8) {
        if id != self.read_id {
            C::set_read_id(self.niu, id);
            self.read_id = id;
        }
    }

    /// Issues a checked read on a ready read command buffer.
    #[inline(always)]
    fn issue_read(&mut self, targ: (u64, u32), dst: u32, len: u32, id: u8, own: u32) {
        self.use_read_id(id);
        self.issue(CmdBuf::Read, targ, (dst as u64, own), len, READ_CTRL, 0);
    }

    fn ctrl_word(mode: WriteMode, multicast: bool) -> u32 {
        let mut c = ctrl::WRITE;
        // Posted multicast is broken on Blackhole: multicasts are always acknowledged (on
        // Wormhole too: one rule, and the acknowledgement count is what the protocol waits on).
        if mode.ack == Ack::Acked || multicast {
            c |= ctrl::RESP_MARKED;
        }
        if multicast {
            c |= ctrl::BRCST_PACKET | ctrl::PATH_RESERVE;
            // `NOC_CMD_VC_LINKED` keeps the path for the next packet;
            // `NOC_CMD_BRCST_SRC_INCLUDE` delivers to a sender inside the rectangle.
            if mode.link == Link::Linked {
                c |= ctrl::VC_LINKED;
            }
            if mode.loopback == Loopback::Included {
                c |= ctrl::BRCST_SRC_INCLUDE;
            }
        }
        // A multicast always travels on the static multicast VC, relaxed or not, as every
        // tt-metal write does (`ncrisc_noc_fast_write`): the packets of a linked run must share
        // one VC ("attempting to initiate a request with an incompatible virtual channel number
        // will cause virtual channel number assignment to continuously fail", ISA
        // `NoC/MemoryMap.md`, `NOC_CMD_VC_LINKED`), and a VC the NIU picks can differ from the
        // next packet's. A relaxed unicast write lets the NIU pick.
        if multicast {
            c |= ctrl::VC_STATIC | ctrl::static_vc(ctrl::MULTICAST_VC);
        } else if mode.order == Order::Ordered {
            c |= ctrl::VC_STATIC | ctrl::static_vc(ctrl::UNICAST_VC);
        }
        c
    }
}

impl<C: Chip> noc::ErrorType for SiliconNoc<C> {
    type Error = NocError;
}

impl<C: Chip> noc::NocMulticast for SiliconNoc<C> {
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
        let _ = C::buf_free(self.niu, CmdBuf::Read);
        let id = tag.get() + 1;
        if id >= 16 {
            return Err(err(ErrorKind::Other, Why::ReadTag));
        }
        Ok(C::reqs_outstanding(self.niu, id) & 0xFF == 0)
    }

    /// What the pages share checked once: the mode, the length, the destination range in L1,
    /// the page numbers and source addresses in range, the ports the batch reads from
    /// (compared with the ones the handle remembers in their places, all resolved again when
    /// one differs) and the sources' alignment; then per page the command buffer's status and
    /// the five registers that change ([`Chip::send_read`]), the others written once for the
    /// batch ([`Chip::read_batch`]). Pages whose checks do not pass this way (a length that
    /// is not a whole number of DRAM words or is over one packet, a range that leaves L1 or
    /// overflows, more ports than a handle remembers, a port a read cannot come from, a
    /// misaligned source) are checked and issued one by one, as `read_tagged` would, so that
    /// each error comes where `read_tagged`'s would.
    fn read_pages(&mut self, from: u32, r: &PageReads<'_>) -> Result<u32, NocError> {
        if from >= r.count {
            return Ok(from);
        }
        self.read_mode(r.len)?;
        let own = self.own?;
        let id = r.tag.get() + 1;
        let n = r.ports.len();
        let shared = pages::shared::<C>(from, r).filter(|_| (1..=PORTS).contains(&n));
        let Some(start) = shared else {
            return self.read_pages_one_by_one(from, r, id);
        };
        // (`pages::shared` checked the page numbers.)
        let port = (r.first + from) as usize % n;
        let batch = ((r.count - from) as usize).min(n);
        let known = self.ports.same(r.ports, port, batch) || self.learn_ports(r.ports);
        if !known || (start.0 as u32 | start.1) & self.ports.mask != 0 {
            return self.read_pages_one_by_one(from, r, id);
        }
        if !self.progress() {
            return Ok(from);
        }
        let issued = self.issue_pages((port, n), (from, r.count), start, r.len, id, own);
        self.reads_issued = self.reads_issued.wrapping_add(issued - from);
        Ok(issued)
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
        if dst.local() as u32 % C::L1_ALIGN != 0 {
            return Err(err(ErrorKind::Misaligned, Why::WriteDestinationMisaligned));
        }
        let own = self.own?;
        let (targ, ret) = ((src.get() as u64, own), (dst.local(), dst_coord));
        // Markers and other small writes use their own command buffer, as tt-metal does.
        let id = if len <= 16 {
            CmdBuf::SmallWrite
        } else {
            CmdBuf::Write
        };
        self.ready(id, true)?;
        let ctrl = Self::ctrl_word(mode, false);
        self.issue(
            id,
            targ,
            ret,
            len,
            ctrl,
            (ctrl & ctrl::RESP_MARKED != 0) as u32,
        );
        // Read this buffer's NOC_CMD_CTRL back now: a later counter read must follow the
        // command (ISA `NoC/Counters.md`), and `writes_sent` reads back buffer 0's only, which
        // a store to buffer 2 does not overlap (`BabyRISCV/MemoryOrdering.md`: a load may pass
        // a store to other addresses).
        let _ = C::buf_free(self.niu, id);
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
        self.ready(CmdBuf::Write, true)?;
        Self::check_len(len)?;
        Self::check_l1(src.get(), len)?;
        Self::check_l1(dst.get(), len)?;
        // Tensix tiles form whole columns x whole rows, so the receivers are enabled columns
        // times rows, less this node if it lies inside and is excluded.
        let (covered, coord, inside) = self.cast_to(rect)?;
        let excluded = mode.loopback == Loopback::Excluded && inside;
        let receivers = covered.saturating_sub(excluded as u32);
        // An open run takes only multicasts to its rectangle that send a packet (one with no
        // receiver sends none, so it could neither continue nor close the run).
        if self.run.is_some_and(|open| open != coord || receivers == 0) {
            let why = if receivers == 0 {
                Why::EmptyInRun
            } else {
                Why::RunElsewhere
            };
            return Err(err(ErrorKind::InvalidMode, why));
        }
        if receivers == 0 {
            return Ok(());
        }
        let own = self.own?;
        let ctrl = Self::ctrl_word(mode, true);
        let (targ, ret) = ((src.get() as u64, own), (dst.get() as u64, coord));
        self.issue(CmdBuf::Write, targ, ret, len, ctrl, receivers);
        self.run = (mode.link == Link::Linked).then_some(coord);
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        // Read NOC_CMD_CTRL back before the first counter read (RISC-V ordering, ISA Counters.md).
        let _ = C::buf_free(self.niu, CmdBuf::Read);
        Ok(at_or_after(C::reads_received(self.niu), self.reads_issued))
    }

    /// Sent means the source bytes have been read: `NIU_MST_WRITE_REQS_OUTGOING_ID` of the
    /// transaction id is back at 0, which the NIU decrements "after the data reads from L1 or
    /// register space are complete". `NIU_MST_*_WR_REQ_SENT` is not enough: it counts "before the
    /// data reads from L1 or register space are complete" (ISA `NoC/Counters.md`, "Write requests
    /// with `NOC_CMD_WR_INLINE=false`").
    /// tt-metal reads the same per-id counter in
    /// `ncrisc_noc_nonposted_write_with_transaction_id_sent`; its plain
    /// `ncrisc_noc_nonposted_writes_sent` compares `NIU_MST_NONPOSTED_WR_REQ_SENT` with its
    /// software count of writes issued instead (Blackhole `noc_nonblocking_api.h`).
    fn writes_sent(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        let _ = C::buf_free(self.niu, CmdBuf::Write);
        Ok(C::writes_outgoing(self.niu, TRANSACTION_ID) & 0xFF == 0)
    }

    fn writes_acked(&mut self) -> Result<bool, NocError> {
        if !self.progress() {
            return Ok(false);
        }
        let _ = C::buf_free(self.niu, CmdBuf::Write);
        Ok(at_or_after(C::acks_received(self.niu), self.acks_expected))
    }

    fn resync(&mut self) -> Result<(), NocError> {
        self.sync_counts();
        Ok(())
    }
}
