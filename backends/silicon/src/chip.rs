//! The chips this backend drives, behind one trait: what differs between Blackhole and Wormhole
//! B0 as far as a data-movement kernel can tell, and nothing else.
//!
//! [`SiliconNoc`](crate::SiliconNoc), [`SiliconCb`](crate::SiliconCb) and
//! [`TileIdentity`](crate::TileIdentity) are generic over a [`Chip`]; a firmware image is built
//! for one chip, so every call below is resolved when the image is built and costs what the
//! Blackhole-only backend cost (decisions D30). What differs:
//!
//! | | Blackhole | Wormhole B0 |
//! |---|---|---|
//! | grid, Tensix | 17 x 12; columns 1..=7, 10..=16, rows 2..=11 | 10 x 12; columns 1..=4, 6..=9, rows 1..=5, 7..=11 |
//! | harvesting | Tensix columns | Tensix rows |
//! | L1 | 1,572,864 bytes | 1,499,136 bytes |
//! | packet, DRAM read alignment | 16 KiB, 64 bytes | 8 KiB, 32 bytes |
//! | command buffers | 0x800 apart, `NOC_CMD_CTRL` at 0x40 | 0x400 apart, `NOC_CMD_CTRL` at 0x28 |
//! | address words | `LO`, `MID` (local bits 35:32), `HI` (coordinates) | `LO`, `MID` (local bits 35:32 and the coordinates) |
//! | `NOC_BRCST_EXCLUDE` | cleared at start | none |
//! | CB counters | stream registers 10 and 8 | stream registers 4 and 3 |
//!
//! The `NOC_CTRL` bits this backend sets are the same on both chips (tt-metal's Blackhole and
//! Wormhole `noc_parameters.h`: request type bits 1:0, `RESP_MARKED` 4, `BRCST_PACKET` 5,
//! `VC_LINKED` 6, `VC_STATIC` 7, `PATH_RESERVE` 8, the static VC bits 15:13,
//! `BRCST_SRC_INCLUDE` 17), as are the counters' indices and the command buffers' roles:
//! [`ctrl`] holds them once, and the tests hold them equal to both PACs'.

use core::fmt::Debug;

use tt_reg::{RW, Reg};

/// The `NOC_CTRL` bits of a request, the same on both chips.
pub mod ctrl {
    /// Request type: a read (bits 1:0 = 0).
    pub const READ: u32 = 0;
    /// Request type: a write (bits 1:0 = 2).
    pub const WRITE: u32 = 2;
    /// Mask of the request type.
    pub const REQUEST_TYPE: u32 = 0b11;
    /// Non-posted: one acknowledgement per destination.
    pub const RESP_MARKED: u32 = 1 << 4;
    /// A multicast.
    pub const BRCST_PACKET: u32 = 1 << 5;
    /// Linked to the next request (the path stays reserved).
    pub const VC_LINKED: u32 = 1 << 6;
    /// The virtual channel is the static one below.
    pub const VC_STATIC: u32 = 1 << 7;
    /// Reserve the multicast's path before the data leaves.
    pub const PATH_RESERVE: u32 = 1 << 8;
    /// A multicast includes its sender when it lies in the rectangle.
    pub const BRCST_SRC_INCLUDE: u32 = 1 << 17;
    /// The static virtual channel `vc` (bits 15:13).
    pub const fn static_vc(vc: u8) -> u32 {
        ((vc & 0x7) as u32) << 13
    }
    /// The static VC of unicast requests (tt-metal `NOC_UNICAST_WRITE_VC`).
    pub const UNICAST_VC: u8 = 1;
    /// The static VC of multicasts (tt-metal `NOC_MULTICAST_WRITE_VC`).
    pub const MULTICAST_VC: u8 = 4;
}

/// A command buffer by its role, as tt-metal assigns them on both chips.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CmdBuf {
    /// Buffer 0: writes and multicasts.
    Write = 0,
    /// Buffer 1: reads.
    Read = 1,
    /// Buffer 2: small writes (markers).
    SmallWrite = 2,
    /// Buffer 3: atomics (this backend issues none).
    Atomic = 3,
}

/// The command buffers, in order.
pub const CMD_BUFS: [CmdBuf; 4] = [
    CmdBuf::Write,
    CmdBuf::Read,
    CmdBuf::SmallWrite,
    CmdBuf::Atomic,
];

/// What a request may target at a tile.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Memory {
    /// A Tensix tile's L1 (harvested or not).
    Tensix,
    /// A DRAM port.
    Dram,
}

/// One side of a request: a local address and the coordinate bits of its tile (or rectangle),
/// as [`Chip::unicast_coord`] or [`Chip::multicast_coord`] made them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The local address (at most 36 bits).
    pub local: u64,
    /// The coordinate bits.
    pub coord: u32,
}

/// A chip as this backend drives it: its NIU and stream register blocks (from its PAC), its
/// grid, harvesting and coordinate translation, and the limits of its requests.
///
/// Implemented by [`Blackhole`] and [`Wormhole`]; another chip of the same family implements it
/// over its own PAC. Every function is small and meant to be inlined into the one backend
/// built for the chip.
pub trait Chip: Copy + Debug + 'static {
    /// The chip's name, for messages.
    const NAME: &'static str;
    /// Its PCI device id (tt-kmd `enumerate.h`), which an image built for it carries in its
    /// header so that a loader refuses it on another chip.
    const PCI_DEVICE_ID: u16;
    /// The PAC's NIU register block.
    type Niu: Copy + Debug;
    /// The PAC's overlay stream register window.
    type Streams: Copy + Debug;
    /// A harvest mask (columns on Blackhole, rows on Wormhole).
    type Harvest: Copy + Debug + PartialEq;
    /// The NIUs' coordinate translation for a harvest mask.
    type Translation: Copy + Debug + PartialEq;

    /// NoC grid columns and rows.
    const GRID: (u8, u8);
    /// NoC0 columns that hold Tensix tiles.
    const TENSIX_X: &'static [u8];
    /// NoC0 rows that hold Tensix tiles.
    const TENSIX_Y: &'static [u8];
    /// Bytes of a Tensix tile's L1.
    const L1_SIZE: u32;
    /// Alignment of L1 addresses of a request.
    const L1_ALIGN: u32;
    /// Alignment of a DRAM read's source.
    const DRAM_READ_ALIGN: u32;
    /// The largest payload of one packet; longer transfers go as several.
    const MAX_PACKET_BYTES: u32;
    /// Circular buffers a core has.
    const CIRCULAR_BUFFERS: u8;
    /// Whether the baby cores run with an L0 data cache on, which a `fence` must drop before
    /// every load of what the NoC writes ([`fence`](crate::fence)). False on Wormhole (no data
    /// cache; `fence` orders nothing there and is not issued) and on Blackhole, whose cores
    /// [`Chip::configure_core`] turns the cache off at boot, before any load from L1: an image
    /// built on this crate calls it first thing (komorebi's `_start` does).
    const L0_DATA_CACHE: bool;

    /// What sits at NoC0 `(x, y)`, if a request may target it.
    fn memory(x: u8, y: u8) -> Option<Memory>;
    /// Whether NoC0 Tensix column `x` is enabled under `harvest`.
    fn column_enabled(harvest: Self::Harvest, x: u8) -> bool;
    /// Whether NoC0 Tensix row `y` is enabled under `harvest`.
    fn row_enabled(harvest: Self::Harvest, y: u8) -> bool;
    /// No harvesting.
    const NO_HARVEST: Self::Harvest;
    /// The harvest mask the host wrote into the control block's harvest word; `None` for a
    /// word that is no mask of this chip.
    fn harvest(word: u32) -> Option<Self::Harvest>;
    /// Logical coordinates of the enabled Tensix tile at NoC0 `(x, y)`.
    fn logical(harvest: Self::Harvest, x: u8, y: u8) -> Option<(u8, u8)>;
    /// The translation the NIUs apply under `harvest`, with the DRAM bank the host reported
    /// fused off (Blackhole; Wormhole has no such bank and ignores it).
    fn translation(harvest: Self::Harvest, fused_dram: Option<u8>) -> Self::Translation;
    /// Translated coordinates of the tile at NoC0 `(x, y)` (Tensix or DRAM).
    fn to_translated(t: &Self::Translation, x: u8, y: u8) -> Option<(u8, u8)>;
    /// Translated coordinates below this are the identity on each NoC, so they name a tile by
    /// the raw coordinate of the NoC that carries the request, not by NoC0's (Wormhole: 16,
    /// tt-isa-documentation `WormholeB0/NoC/Coordinates.md`, and tt-metal's bank tables give
    /// NoC1 the NoC1 coordinates of Wormhole's DRAM, `generate_device_bank_to_noc_tables`).
    /// 0 where a translated coordinate names the same tile on both NoCs (Blackhole: its ARC
    /// firmware programs both NoCs' tables alike).
    const RAW_BELOW: u8;
    /// The coordinate bits of a unicast to `(x, y)`; `None` if they do not fit.
    fn unicast_coord(x: u8, y: u8) -> Option<u32>;
    /// The coordinate bits of a multicast over `start..=end`; `None` if they do not fit.
    fn multicast_coord(start: (u8, u8), end: (u8, u8)) -> Option<u32>;

    /// The NIU of NoC `noc` of the core this runs on.
    ///
    /// # Safety
    /// Only on a Tensix baby core of this chip; the caller must be the only one driving that
    /// NIU's command buffers while the block is used.
    unsafe fn steal_niu(noc: komorebi_hal::NocId) -> Self::Niu;
    /// The overlay stream registers of the core this runs on.
    ///
    /// # Safety
    /// Only on a Tensix baby core of this chip; the kernels sharing the registers must agree who
    /// writes which counter (the producer `tiles_received`, the consumer `tiles_acked`).
    unsafe fn steal_streams() -> Self::Streams;
    /// Starts the tile's writer and compute cores (NCRISC, TRISC0) at their default reset PCs
    /// where only the tile's own cores can point them there. On Wormhole the reset-PC
    /// overrides are Tensix configuration words the host cannot write, and a program run
    /// before (tt-metal's BRISC firmware sets them at every boot: `tt_metal/hw/firmware/src/
    /// tt-1xx/brisc.cc`, `set_deassert_addresses`) leaves them set, so the host releases only
    /// BRISC and BRISC clears them and releases the other two (tt-isa-documentation
    /// `WormholeB0/TensixTile/SoftReset.md`: the PC is the override's while its enable is
    /// set). The provided method does nothing: a Blackhole's host sets the reset PCs and
    /// releases every core itself.
    ///
    /// # Safety
    /// Only on BRISC of a Tensix tile of this chip, once, at boot, with the writer's and
    /// compute's images loaded at their default reset PCs.
    #[inline(always)]
    unsafe fn start_other_cores() {}
    /// Configures the calling core as this backend needs it, first thing at boot, before any
    /// load from L1: on Blackhole its L0 data cache off ([`Chip::L0_DATA_CACHE`]: a `fence`
    /// drops what the cache holds, then a `csrrs` of CSR 0x7C0 sets `cfg0` bit 3, as tt-metal's
    /// firmware does at every boot by default: `set_l1_data_cache<false>`, tt-metal
    /// `tt_metal/hw/inc/internal/tt-1xx/risc_common.h`). The provided method does nothing (a
    /// Wormhole core has no data cache). It touches no memory, so it may run before the
    /// image's data and bss are set up.
    #[inline(always)]
    fn configure_core() {}
    /// Puts an NIU's command buffers into the state the backend relies on (transaction id 0,
    /// no overlay delivery, no broadcast exclusion) and zeroes the per-id outstanding counts.
    fn niu_init(niu: Self::Niu);
    /// The NIU's raw coordinates on its own NoC (`NOC_NODE_ID`).
    fn niu_node(niu: Self::Niu) -> (u8, u8);
    /// `NOC_ID_LOGICAL`: the translated coordinates the ARC firmware programmed.
    fn niu_id_logical(niu: Self::Niu) -> (u8, u8);
    /// Command buffer `buf` may be programmed (`NOC_CMD_CTRL` reads ready).
    fn buf_free(niu: Self::Niu, buf: CmdBuf) -> bool;
    /// Programs command buffer `buf` with one packet of `len` bytes and sends it.
    fn send(niu: Self::Niu, buf: CmdBuf, targ: Endpoint, ret: Endpoint, len: u32, ctrl: u32);
    /// Programs the read command buffer with what the reads of one batch share: the
    /// coordinate word of the local L1 they land in (its local bits 35:32 are 0), the length
    /// and `ctrl`. Each read is then [`Chip::send_read`]: the registers keep their values
    /// from one command to the next (tt-metal's `noc_async_read_set_state`).
    fn read_batch(niu: Self::Niu, ret_coord: u32, len: u32, ctrl: u32);
    /// Sends one read of a batch ([`Chip::read_batch`]): from `targ` into local L1 at
    /// `ret_local`, the other registers as the batch set them (tt-metal's
    /// `noc_async_read_with_state`).
    fn send_read(niu: Self::Niu, targ: Endpoint, ret_local: u32);
    /// Sets the read command buffer's transaction id.
    fn set_read_id(niu: Self::Niu, id: u8);
    /// `NIU_MST_RD_RESP_RECEIVED`.
    fn reads_received(niu: Self::Niu) -> u32;
    /// `NIU_MST_WR_ACK_RECEIVED`.
    fn acks_received(niu: Self::Niu) -> u32;
    /// `NIU_MST_WRITE_REQS_OUTGOING_ID(id)`.
    fn writes_outgoing(niu: Self::Niu, id: u8) -> u32;
    /// `NIU_MST_REQS_OUTSTANDING_ID(id)`.
    fn reqs_outstanding(niu: Self::Niu, id: u8) -> u32;

    /// `tiles_received` of circular buffer `cb`.
    fn tiles_received(streams: Self::Streams, cb: u8) -> Reg<u32, RW>;
    /// `tiles_acked` of circular buffer `cb`.
    fn tiles_acked(streams: Self::Streams, cb: u8) -> Reg<u32, RW>;
}

/// The pieces both PACs spell alike (their NIU blocks, command buffers, node and logical-id
/// words and stream windows have the same names and shapes), written once: `id` maps a
/// command buffer's role to the PAC's id; `fns` are the `Chip` functions built on them. Paths
/// resolve where the macro is used, in each chip's module.
macro_rules! pac_alike {
    (id) => {
        const fn id(buf: CmdBuf) -> CmdBufId {
            match buf {
                CmdBuf::Write => CmdBufId::Buf0,
                CmdBuf::Read => CmdBufId::Buf1,
                CmdBuf::SmallWrite => CmdBufId::Buf2,
                CmdBuf::Atomic => CmdBufId::Buf3,
            }
        }
    };
    (fns) => {
        #[inline(always)]
        unsafe fn steal_niu(noc: komorebi_hal::NocId) -> Niu {
            // SAFETY: the caller upholds `Chip::steal_niu`'s contract, which is the PAC's.
            unsafe {
                match noc {
                    komorebi_hal::NocId::Noc0 => Niu::steal_niu0(),
                    komorebi_hal::NocId::Noc1 => Niu::steal_niu1(),
                }
            }
        }
        #[inline(always)]
        unsafe fn steal_streams() -> Streams {
            // SAFETY: the caller upholds `Chip::steal_streams`'s contract, which is the PAC's.
            unsafe { Streams::steal() }
        }
        #[inline(always)]
        fn niu_node(niu: Niu) -> (u8, u8) {
            let node = niu.cmd_buf(CmdBufId::WRITE).node_id().read();
            (node.x(), node.y())
        }
        #[inline(always)]
        fn niu_id_logical(niu: Niu) -> (u8, u8) {
            let w = niu.cfg(cfg::NOC_ID_LOGICAL).read();
            ((w & 0x3F) as u8, (w >> 6 & 0x3F) as u8)
        }
        #[inline(always)]
        fn buf_free(niu: Niu, buf: CmdBuf) -> bool {
            niu.cmd_buf(id(buf)).cmd_ctrl().read() == niu::NOC_CTRL_STATUS_READY
        }
        #[inline(always)]
        fn unicast_coord(x: u8, y: u8) -> Option<u32> {
            addr::unicast_coord(x, y).ok()
        }
        #[inline(always)]
        fn multicast_coord(start: (u8, u8), end: (u8, u8)) -> Option<u32> {
            addr::multicast_coord(start, end).ok()
        }
    };
}

/// Tenstorrent Blackhole, through `blackhole-pac`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Blackhole;

/// Tenstorrent Wormhole B0, through `wormhole-pac`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wormhole;

mod blackhole {
    use blackhole_pac::addr;
    use blackhole_pac::grid::{self, Noc0Xy, TileKind};
    use blackhole_pac::harvest::HarvestMask;
    use blackhole_pac::niu::{
        self, CmdBufId, Counter, Niu, NocCtrl, PacketTag, TransactionId, cfg,
    };
    use blackhole_pac::stream::{self, CbIndex, Streams};
    use blackhole_pac::translate::Translation;
    use tt_reg::{RW, Reg};

    use super::{Blackhole, Chip, CmdBuf, Endpoint, Memory};

    pac_alike!(id);

    /// `cb` as an index; the handles check `cb < CIRCULAR_BUFFERS` before they ask, so the
    /// wrap never applies.
    const fn cb_index(cb: u8) -> CbIndex {
        match CbIndex::new(cb % stream::CIRCULAR_BUFFERS as u8) {
            Some(i) => i,
            None => panic!("every index below CIRCULAR_BUFFERS is one"),
        }
    }

    const TENSIX_Y: [u8; 10] = {
        let mut rows = [0u8; 10];
        let mut i = 0;
        while i < rows.len() {
            rows[i] = grid::TENSIX_Y_FIRST + i as u8;
            i += 1;
        }
        rows
    };

    impl Chip for Blackhole {
        const NAME: &'static str = "Blackhole";
        const PCI_DEVICE_ID: u16 = 0xB140;
        type Niu = Niu;
        type Streams = Streams;
        type Harvest = HarvestMask;
        type Translation = Translation;

        const GRID: (u8, u8) = (grid::GRID_X, grid::GRID_Y);
        const TENSIX_X: &'static [u8] = &grid::TENSIX_X;
        const TENSIX_Y: &'static [u8] = &TENSIX_Y;
        const L1_SIZE: u32 = blackhole_pac::tensix::L1_SIZE;
        const L1_ALIGN: u32 = addr::L1_ALIGN;
        const DRAM_READ_ALIGN: u32 = addr::DRAM_READ_ALIGN;
        const MAX_PACKET_BYTES: u32 = addr::MAX_PACKET_BYTES;
        const CIRCULAR_BUFFERS: u8 = stream::CIRCULAR_BUFFERS as u8;
        // `configure_core` turns the cache off at boot.
        const L0_DATA_CACHE: bool = false;
        const RAW_BELOW: u8 = 0;

        #[inline(always)]
        fn configure_core() {
            #[cfg(target_arch = "riscv32")]
            // SAFETY: `fence` only orders and drops the L0 cache's lines (it is write-through,
            // never dirty); setting `cfg0` bit 3 only turns that cache off.
            unsafe {
                core::arch::asm!(
                    "fence",
                    "csrrs zero, {cfg0}, {off}",
                    cfg0 = const blackhole_pac::tensix::CSR_CFG0,
                    off = in(reg) blackhole_pac::tensix::CFG0_L0_DATA_CACHE_OFF,
                    options(nostack, preserves_flags),
                );
            }
        }

        #[inline(always)]
        fn memory(x: u8, y: u8) -> Option<Memory> {
            match Noc0Xy::new(x, y)?.memory()? {
                TileKind::Tensix => Some(Memory::Tensix),
                TileKind::Dram { .. } => Some(Memory::Dram),
                _ => None,
            }
        }
        #[inline(always)]
        fn column_enabled(harvest: HarvestMask, x: u8) -> bool {
            !harvest.is_harvested(x)
        }
        #[inline(always)]
        fn row_enabled(_: HarvestMask, _: u8) -> bool {
            true
        }
        const NO_HARVEST: HarvestMask = HarvestMask::NONE;
        #[inline(always)]
        fn harvest(word: u32) -> Option<HarvestMask> {
            HarvestMask::new(word).ok()
        }
        #[inline(always)]
        fn logical(harvest: HarvestMask, x: u8, y: u8) -> Option<(u8, u8)> {
            harvest.noc0_to_logical(x, y)
        }
        #[inline(always)]
        fn translation(harvest: HarvestMask, fused_dram: Option<u8>) -> Translation {
            Translation::with_dram(harvest, fused_dram)
        }
        #[inline(always)]
        fn to_translated(t: &Translation, x: u8, y: u8) -> Option<(u8, u8)> {
            t.to_translated(Noc0Xy::new(x, y)?).map(|t| t.get())
        }

        pac_alike!(fns);
        #[inline(always)]
        fn niu_init(niu: Niu) {
            for buf in super::CMD_BUFS {
                let buf = niu.cmd_buf(id(buf));
                buf.packet_tag().write_value(PacketTag::default());
                buf.brcst_exclude().write_value(0);
            }
            niu.clear_outstanding_req_cnt().write_value(0xFFFF);
        }
        /// Blackhole's split (`addr::AddrRegs`): `MID` local bits 35:32, `HI` the coordinates.
        #[inline(always)]
        fn send(niu: Niu, buf: CmdBuf, t: Endpoint, r: Endpoint, len: u32, ctrl: u32) {
            let buf = niu.cmd_buf(id(buf));
            buf.targ_addr_lo().write_value(t.local as u32);
            buf.targ_addr_mid()
                .write_value((t.local >> 32) as u32 & 0xF);
            buf.targ_addr_hi().write_value(t.coord);
            buf.ret_addr_lo().write_value(r.local as u32);
            buf.ret_addr_mid().write_value((r.local >> 32) as u32 & 0xF);
            buf.ret_addr_hi().write_value(r.coord);
            buf.at_len_be().write_value(len);
            buf.ctrl().write_value(NocCtrl(ctrl));
            buf.cmd_ctrl().write_value(1);
        }
        #[inline(always)]
        fn read_batch(niu: Niu, ret_coord: u32, len: u32, ctrl: u32) {
            let buf = niu.cmd_buf(CmdBufId::READ);
            buf.ret_addr_mid().write_value(0);
            buf.ret_addr_hi().write_value(ret_coord);
            buf.at_len_be().write_value(len);
            buf.ctrl().write_value(NocCtrl(ctrl));
        }
        #[inline(always)]
        fn send_read(niu: Niu, t: Endpoint, ret_local: u32) {
            let buf = niu.cmd_buf(CmdBufId::READ);
            buf.targ_addr_lo().write_value(t.local as u32);
            buf.targ_addr_mid()
                .write_value((t.local >> 32) as u32 & 0xF);
            buf.targ_addr_hi().write_value(t.coord);
            buf.ret_addr_lo().write_value(ret_local);
            buf.cmd_ctrl().write_value(1);
        }
        #[inline(always)]
        fn set_read_id(niu: Niu, id: u8) {
            let mut tag = PacketTag::default();
            tag.set_transaction_id(id);
            niu.cmd_buf(CmdBufId::READ).packet_tag().write_value(tag);
        }
        #[inline(always)]
        fn reads_received(niu: Niu) -> u32 {
            niu.status(Counter::MstRdRespReceived).read()
        }
        #[inline(always)]
        fn acks_received(niu: Niu) -> u32 {
            niu.status(Counter::MstWrAckReceived).read()
        }
        #[inline(always)]
        fn writes_outgoing(niu: Niu, id: u8) -> u32 {
            match TransactionId::new(id) {
                Some(id) => niu.write_reqs_outgoing(id).read(),
                None => 0,
            }
        }
        #[inline(always)]
        fn reqs_outstanding(niu: Niu, id: u8) -> u32 {
            match TransactionId::new(id) {
                Some(id) => niu.reqs_outstanding(id).read(),
                None => 0,
            }
        }

        #[inline(always)]
        fn tiles_received(streams: Streams, cb: u8) -> Reg<u32, RW> {
            streams.tiles_received(cb_index(cb))
        }
        #[inline(always)]
        fn tiles_acked(streams: Streams, cb: u8) -> Reg<u32, RW> {
            streams.tiles_acked(cb_index(cb))
        }
    }
}

mod wormhole {
    use tt_reg::{RW, Reg};
    use wormhole_pac::addr;
    use wormhole_pac::grid::{self, Tile};
    use wormhole_pac::harvest::HarvestMask;
    use wormhole_pac::niu::{self, CmdBufId, Niu, cfg, counter};
    use wormhole_pac::stream::{self, Streams};
    use wormhole_pac::translate::Translation;

    use super::{Chip, CmdBuf, Endpoint, Memory, Wormhole};

    pac_alike!(id);

    impl Chip for Wormhole {
        const NAME: &'static str = "Wormhole B0";
        const PCI_DEVICE_ID: u16 = 0x401E;
        type Niu = Niu;
        type Streams = Streams;
        type Harvest = HarvestMask;
        type Translation = Translation;

        const GRID: (u8, u8) = (grid::GRID_X, grid::GRID_Y);
        const TENSIX_X: &'static [u8] = &grid::TENSIX_X;
        const TENSIX_Y: &'static [u8] = &grid::TENSIX_Y;
        const L1_SIZE: u32 = wormhole_pac::tensix::L1_SIZE;
        const L1_ALIGN: u32 = addr::L1_ALIGNMENT;
        const DRAM_READ_ALIGN: u32 = addr::DRAM_READ_ALIGNMENT;
        const MAX_PACKET_BYTES: u32 = addr::NOC_MAX_BURST_SIZE;
        const CIRCULAR_BUFFERS: u8 = stream::CIRCULAR_BUFFERS as u8;
        const L0_DATA_CACHE: bool = false;
        const RAW_BELOW: u8 = wormhole_pac::translate::IDENTITY_ENTRIES;

        #[inline(always)]
        fn memory(x: u8, y: u8) -> Option<Memory> {
            match grid::tile_at(x, y)? {
                Tile::Tensix => Some(Memory::Tensix),
                Tile::Dram { .. } => Some(Memory::Dram),
                _ => None,
            }
        }
        #[inline(always)]
        fn column_enabled(_: HarvestMask, _: u8) -> bool {
            true
        }
        #[inline(always)]
        fn row_enabled(harvest: HarvestMask, y: u8) -> bool {
            !harvest.is_harvested(y)
        }
        const NO_HARVEST: HarvestMask = HarvestMask::NONE;
        #[inline(always)]
        fn harvest(word: u32) -> Option<HarvestMask> {
            HarvestMask::new(word).ok()
        }
        #[inline(always)]
        fn logical(harvest: HarvestMask, x: u8, y: u8) -> Option<(u8, u8)> {
            harvest.rows().noc0_to_logical(x, y)
        }
        #[inline(always)]
        fn translation(harvest: HarvestMask, _fused_dram: Option<u8>) -> Translation {
            Translation::new(harvest)
        }
        #[inline(always)]
        fn to_translated(t: &Translation, x: u8, y: u8) -> Option<(u8, u8)> {
            t.from_noc0(x, y)
        }

        pac_alike!(fns);
        #[inline(always)]
        unsafe fn start_other_cores() {
            use wormhole_pac::tensix as t;
            let cfg = |word: u32| t::cfg_addr(word) as usize as *mut u32;
            // SAFETY: the caller is BRISC of a Wormhole Tensix tile (`Chip::start_other_cores`),
            // where the configuration words and the soft-reset register are mapped and only it
            // writes them now.
            unsafe {
                // No override: NCRISC starts at 0x12000, TRISC0 at 0x6000, where the images are.
                cfg(t::TRISC_RESET_PC_OVERRIDE_CFG).write_volatile(0);
                cfg(t::NCRISC_RESET_PC_OVERRIDE_CFG).write_volatile(0);
                // Nothing the ISA documents orders these stores before the release below (a
                // store to another region may land first), and neither a `fence` nor a load of a
                // configuration word, which could, runs on ttsim's Wormhole (it refuses both).
                // tt-metal's BRISC firmware relies on the same program order with no barrier
                // (its `device_setup`, then `deassert_ncrisc_trisc`); so does this.
                let reset = t::SOFT_RESET_0 as *mut u32;
                let held = reset.read_volatile();
                let [_, trisc0, _, _, ncrisc] = t::SOFT_RESET_BITS;
                reset.write_volatile(held & !(trisc0 | ncrisc));
            }
        }
        /// No `NOC_BRCST_EXCLUDE` to clear on Wormhole.
        #[inline(always)]
        fn niu_init(niu: Niu) {
            for buf in super::CMD_BUFS {
                niu.cmd_buf(id(buf)).packet_tag().write_value(0);
            }
            niu.clear_outstanding_req_cnt().write_value(0xFFFF);
        }
        /// Wormhole's split (`addr::split`): `MID` holds local bits 35:32 and the coordinates;
        /// there is no `HI`.
        #[inline(always)]
        fn send(niu: Niu, buf: CmdBuf, t: Endpoint, r: Endpoint, len: u32, ctrl: u32) {
            let buf = niu.cmd_buf(id(buf));
            buf.targ_addr_lo().write_value(t.local as u32);
            buf.targ_addr_mid()
                .write_value(t.coord | ((t.local >> 32) as u32 & 0xF));
            buf.ret_addr_lo().write_value(r.local as u32);
            buf.ret_addr_mid()
                .write_value(r.coord | ((r.local >> 32) as u32 & 0xF));
            buf.at_len_be().write_value(len);
            buf.ctrl().write_value(ctrl);
            buf.cmd_ctrl().write_value(niu::NOC_CTRL_SEND_REQ);
        }
        #[inline(always)]
        fn read_batch(niu: Niu, ret_coord: u32, len: u32, ctrl: u32) {
            let buf = niu.cmd_buf(CmdBufId::READ);
            buf.ret_addr_mid().write_value(ret_coord);
            buf.at_len_be().write_value(len);
            buf.ctrl().write_value(ctrl);
        }
        #[inline(always)]
        fn send_read(niu: Niu, t: Endpoint, ret_local: u32) {
            let buf = niu.cmd_buf(CmdBufId::READ);
            buf.targ_addr_lo().write_value(t.local as u32);
            buf.targ_addr_mid()
                .write_value(t.coord | ((t.local >> 32) as u32 & 0xF));
            buf.ret_addr_lo().write_value(ret_local);
            buf.cmd_ctrl().write_value(niu::NOC_CTRL_SEND_REQ);
        }
        #[inline(always)]
        fn set_read_id(niu: Niu, id: u8) {
            niu.cmd_buf(CmdBufId::READ)
                .packet_tag()
                .write_value(((id & 0xF) as u32) << niu::PACKET_TAG_TRANSACTION_ID_SHIFT);
        }
        #[inline(always)]
        fn reads_received(niu: Niu) -> u32 {
            niu.status(counter::NIU_MST_RD_RESP_RECEIVED).read()
        }
        #[inline(always)]
        fn acks_received(niu: Niu) -> u32 {
            niu.status(counter::NIU_MST_WR_ACK_RECEIVED).read()
        }
        #[inline(always)]
        fn writes_outgoing(niu: Niu, id: u8) -> u32 {
            niu.write_reqs_outgoing(id).read()
        }
        #[inline(always)]
        fn reqs_outstanding(niu: Niu, id: u8) -> u32 {
            niu.reqs_outstanding(id).read()
        }

        #[inline(always)]
        fn tiles_received(streams: Streams, cb: u8) -> Reg<u32, RW> {
            streams.tiles_received(cb)
        }
        #[inline(always)]
        fn tiles_acked(streams: Streams, cb: u8) -> Reg<u32, RW> {
            streams.tiles_acked(cb)
        }
    }
}
