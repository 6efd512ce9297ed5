//! The NIU (NoC interface unit) registers of a Tensix or Ethernet tile, as offsets.
//!
//! Four command buffers ("request initiators") 0x400 apart; no `*_HI` address registers (the
//! coordinates sit in the middle word: [`crate::addr`]) and no `NOC_BRCST_EXCLUDE`. Sources:
//! tt-isa-documentation `WormholeB0/NoC/MemoryMap.md` and `NoC/Counters.md`; tt-metal
//! `tt_metal/hw/inc/internal/tt-1xx/wormhole/noc/noc_parameters.h`; ttsim
//! `data/wh/tile_regs.json` (`noc_regs`, checked by `tests/ttsim_regs.rs`).

/// The NoC0 NIU's registers in a Tensix or Ethernet tile.
pub const NIU0_BASE: usize = 0xFFB2_0000;
/// The NoC1 NIU's registers.
pub const NIU1_BASE: usize = 0xFFB3_0000;
/// From one NIU's registers to the other's (`NOC_INSTANCE_OFFSET`).
pub const NOC_INSTANCE_OFFSET: usize = 0x1_0000;
/// From one command buffer to the next (`NOC_CMD_BUF_OFFSET`; Blackhole's is 0x800).
pub const NOC_CMD_BUF_OFFSET: usize = 0x400;
/// Command buffers per NIU.
pub const NOC_CMD_BUFS: usize = 4;
/// The configuration words, `NOC_CFG(n)` at `NIU_BASE + NOC_CFG_OFFSET + 4 n`.
pub const NOC_CFG_OFFSET: usize = 0x100;
/// The counters, `NOC_STATUS(n)` at `NIU_BASE + NOC_STATUS_OFFSET + 4 n`.
pub const NOC_STATUS_OFFSET: usize = 0x200;
/// Bytes of one NIU's register block.
pub const NIU_BLOCK_BYTES: usize = NOC_CMD_BUFS * NOC_CMD_BUF_OFFSET;
/// Writing bit `i` here zeroes `NIU_MST_REQS_OUTSTANDING_ID(i)` (once per NIU).
pub const NOC_CLEAR_OUTSTANDING_REQ_CNT: usize = 0x50;

/// Offsets inside one command buffer (from `NIU_BASE + buffer * NOC_CMD_BUF_OFFSET`).
pub mod cmd {
    /// Target address bits 31:0.
    pub const NOC_TARG_ADDR_LO: usize = 0x00;
    /// Target address bits 35:32 and the coordinates (bits 63:32 of the NoC address).
    pub const NOC_TARG_ADDR_MID: usize = 0x04;
    /// Return address bits 31:0.
    pub const NOC_RET_ADDR_LO: usize = 0x0C;
    /// Return address bits 35:32 and the coordinates.
    pub const NOC_RET_ADDR_MID: usize = 0x10;
    /// Transaction id (bits 13:10) and stream fields.
    pub const NOC_PACKET_TAG: usize = 0x18;
    /// Request type and flags ([`super::ctrl`]).
    pub const NOC_CTRL: usize = 0x1C;
    /// Length in bytes, byte enables, or atomic opcode.
    pub const NOC_AT_LEN_BE: usize = 0x20;
    /// Inline or atomic data.
    pub const NOC_AT_DATA: usize = 0x24;
    /// Write 1 to send; reads 0 once the buffer may be programmed again.
    pub const NOC_CMD_CTRL: usize = 0x28;
    /// This NIU's raw coordinates and the grid size (read only; repeated in every buffer).
    pub const NOC_NODE_ID: usize = 0x2C;
    /// This tile's index, group and type (read only).
    pub const NOC_ENDPOINT_ID: usize = 0x30;
}

/// `NOC_CMD_CTRL` value that sends the programmed request.
pub const NOC_CTRL_SEND_REQ: u32 = 1;
/// `NOC_CMD_CTRL` value of a buffer that may be programmed.
pub const NOC_CTRL_STATUS_READY: u32 = 0;
/// Transaction ids of `NOC_PACKET_TAG` (bits 13:10).
pub const TRANSACTION_IDS: u8 = 16;
/// Shift of the transaction id in `NOC_PACKET_TAG` (`NOC_PACKET_TAG_TRANSACTION_ID`).
pub const PACKET_TAG_TRANSACTION_ID_SHIFT: u32 = 10;

/// `NOC_CTRL` fields (tt-metal's "NOC CMD fields"; bit 31, Blackhole's L1 accumulate, is
/// reserved on Wormhole).
pub mod ctrl {
    /// Atomic (with [`CPY`]); a read or write otherwise.
    pub const AT: u32 = 1 << 0;
    /// Copy: a read or a write.
    pub const CPY: u32 = 0;
    /// A read (with [`CPY`]).
    pub const RD: u32 = 0;
    /// A write.
    pub const WR: u32 = 1 << 1;
    /// `NOC_AT_LEN_BE` is a byte-enable mask (at most 32 bytes).
    pub const WR_BE: u32 = 1 << 2;
    /// The data is `NOC_AT_DATA`.
    pub const WR_INLINE: u32 = 1 << 3;
    /// Non-posted: an acknowledgement comes back.
    pub const RESP_MARKED: u32 = 1 << 4;
    /// A multicast (broadcast) write.
    pub const BRCST_PACKET: u32 = 1 << 5;
    /// Linked to the next request.
    pub const VC_LINKED: u32 = 1 << 6;
    /// The virtual channel is [`static_vc`]'s.
    pub const VC_STATIC: u32 = 1 << 7;
    /// Reserve the multicast's path.
    pub const PATH_RESERVE: u32 = 1 << 8;
    /// No "data left the NIU" notice for the overlay.
    pub const MEM_RD_DROP_ACK: u32 = 1 << 9;
    /// Multicast along y first (`NOC_CMD_BRCST_XY(1)`).
    pub const BRCST_XY: u32 = 1 << 16;
    /// The sender is among the multicast's destinations.
    pub const BRCST_SRC_INCLUDE: u32 = 1 << 17;

    /// The static virtual channel field (`NOC_CMD_STATIC_VC(vc) = vc << 13`).
    pub const fn static_vc(vc: u8) -> u32 {
        ((vc & 0x7) as u32) << 13
    }

    /// Arbitration priority (`NOC_CMD_ARB_PRIORITY(p) = p << 27`).
    pub const fn arb_priority(p: u8) -> u32 {
        ((p & 0xF) as u32) << 27
    }
}

/// Configuration word indices, `NOC_CFG(n)`.
pub mod cfg {
    /// `NIU_CFG_0`.
    pub const NIU_CFG_0: usize = 0x0;
    /// `NIU_CFG_0` bit: coordinate translation on.
    pub const NIU_CFG_0_NOC_ID_TRANSLATE_EN: u32 = 14;
    /// `NIU_CFG_0` bit: tile clock off (a fused-off tile).
    pub const NIU_CFG_0_TILE_CLK_OFF: u32 = 12;
    /// `ROUTER_CFG_1`: multicast opt-out mask by column (bits 9:0).
    pub const ROUTER_CFG_1: usize = 0x2;
    /// `ROUTER_CFG_3`: multicast opt-out mask by row (bits 11:0).
    pub const ROUTER_CFG_3: usize = 0x4;
    /// First of the four X translation words.
    pub const NOC_X_ID_TRANSLATE_TABLE_0: usize = 0x6;
    /// First of the four Y translation words.
    pub const NOC_Y_ID_TRANSLATE_TABLE_0: usize = 0xA;
    /// This tile's translated coordinates (x bits 5:0, y bits 11:6).
    pub const NOC_ID_LOGICAL: usize = 0xE;
}

/// The counters a driver reads, as `NOC_STATUS` indices (the same as Blackhole's).
pub mod counter {
    /// Atomic responses received.
    pub const NIU_MST_ATOMIC_RESP_RECEIVED: usize = 0x00;
    /// Write acknowledgements received.
    pub const NIU_MST_WR_ACK_RECEIVED: usize = 0x01;
    /// Read responses received.
    pub const NIU_MST_RD_RESP_RECEIVED: usize = 0x02;
    /// Posted atomics sent.
    pub const NIU_MST_POSTED_ATOMIC_SENT: usize = 0x07;
    /// Non-posted write requests sent.
    pub const NIU_MST_NONPOSTED_WR_REQ_SENT: usize = 0x0A;
    /// Posted write requests sent.
    pub const NIU_MST_POSTED_WR_REQ_SENT: usize = 0x0B;
    /// First of 16 per-transaction-id outstanding counts (8 bits each).
    pub const NIU_MST_REQS_OUTSTANDING_ID: usize = 0x10;
    /// First of 16 per-transaction-id outgoing write counts (8 bits each).
    pub const NIU_MST_WRITE_REQS_OUTGOING_ID: usize = 0x20;
    /// Posted write requests received.
    pub const NIU_SLV_POSTED_WR_REQ_RECEIVED: usize = 0x3B;
}

/// `NOC_NODE_ID` fields: raw x (bits 5:0) and y (11:6) of this NIU's own NoC, grid width
/// (18:12) and height (25:19), bit 28 set on NoC0 (x-first routing).
pub const fn node_id(x: u8, y: u8, noc: u8) -> u32 {
    (x as u32 & 0x3F)
        | ((y as u32 & 0x3F) << 6)
        | ((crate::grid::GRID_X as u32) << 12)
        | ((crate::grid::GRID_Y as u32) << 19)
        | (((noc == 0) as u32) << 28)
}

tt_reg::fieldset! {
    /// `NOC_NODE_ID`: this NIU's raw coordinates on its own NoC and the grid size ([`node_id`]).
    pub struct NodeId {
        /// x.
        field x, set_x: u8 @ 0, 6;
        /// y.
        field y, set_y: u8 @ 6, 6;
        /// Grid width (10).
        field width, set_width: u8 @ 12, 7;
        /// Grid height (12).
        field height, set_height: u8 @ 19, 7;
        /// Routing: true = X first (NoC0), false = Y first (NoC1).
        flag x_first, set_x_first @ 28;
    }
}

/// A command buffer: `0..4` ([`NOC_CMD_BUFS`]), tt-metal's assignment as constants (the same
/// as Blackhole's: tt-metal Wormhole `noc_nonblocking_api.h`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmdBufId {
    Buf0 = 0,
    Buf1 = 1,
    Buf2 = 2,
    Buf3 = 3,
}

impl CmdBufId {
    /// tt-metal: large writes and multicasts (`NCRISC_WR_CMD_BUF`).
    pub const WRITE: Self = Self::Buf0;
    /// tt-metal: reads (`NCRISC_RD_CMD_BUF`).
    pub const READ: Self = Self::Buf1;
    /// tt-metal: small writes and register writes (`NCRISC_WR_REG_CMD_BUF`).
    pub const SMALL_WRITE: Self = Self::Buf2;
    /// tt-metal: atomics (`NCRISC_AT_CMD_BUF`).
    pub const ATOMIC: Self = Self::Buf3;
}

tt_reg::block! {
    /// One NIU's register block over a base pointer, as `blackhole_pac::niu::Niu` (the same
    /// safety rules: made only through `unsafe`).
    ///
    /// ```compile_fail,E0133
    /// let niu = wormhole_pac::niu::Niu::steal_niu0(); // needs `unsafe`
    /// ```
    pub struct Niu; bytes = "[`NIU_BLOCK_BYTES`]";
}

impl Niu {
    /// NIU0's block (NoC0) on a Tensix RISC-V, at [`NIU0_BASE`].
    ///
    /// # Safety
    /// Only on a Tensix baby core of a Wormhole, where [`NIU0_BASE`] is NIU0's registers; the
    /// caller must be the only one driving NIU0's command buffers while the block is used.
    pub const unsafe fn steal_niu0() -> Self {
        // SAFETY: the caller upholds `from_ptr`'s contract for NIU0's MMIO block.
        unsafe { Self::from_ptr(NIU0_BASE as *mut ()) }
    }

    /// NIU1's block (NoC1) on a Tensix RISC-V, at [`NIU1_BASE`].
    ///
    /// # Safety
    /// As for [`Niu::steal_niu0`], for NIU1.
    pub const unsafe fn steal_niu1() -> Self {
        // SAFETY: the caller upholds `from_ptr`'s contract for NIU1's MMIO block.
        unsafe { Self::from_ptr(NIU1_BASE as *mut ()) }
    }

    /// Command buffer `id`.
    pub const fn cmd_buf(self, id: CmdBufId) -> CmdBuf {
        CmdBuf {
            ptr: self.ptr.wrapping_add(id as usize * NOC_CMD_BUF_OFFSET),
        }
    }

    /// `NOC_CFG(n)` as a raw word.
    pub const fn cfg(self, n: usize) -> tt_reg::Reg<u32, tt_reg::RW> {
        self.reg_at(NOC_CFG_OFFSET + 4 * (n & 0x3F))
    }

    /// `NOC_CLEAR_OUTSTANDING_REQ_CNT` ([`NOC_CLEAR_OUTSTANDING_REQ_CNT`] from the base).
    pub const fn clear_outstanding_req_cnt(self) -> tt_reg::Reg<u32, tt_reg::W> {
        self.reg_at(NOC_CLEAR_OUTSTANDING_REQ_CNT)
    }

    /// Counter `NOC_STATUS(index)` (see [`counter`]).
    pub const fn status(self, index: usize) -> tt_reg::Reg<u32, tt_reg::R> {
        self.reg_at(NOC_STATUS_OFFSET + 4 * (index & 0x7F))
    }

    /// `NIU_MST_REQS_OUTSTANDING_ID(id)` (8-bit), `id` taken modulo 16.
    pub const fn reqs_outstanding(self, id: u8) -> tt_reg::Reg<u32, tt_reg::R> {
        self.status(counter::NIU_MST_REQS_OUTSTANDING_ID + (id as usize & 0xF))
    }

    /// `NIU_MST_WRITE_REQS_OUTGOING_ID(id)` (8-bit), `id` taken modulo 16.
    pub const fn write_reqs_outgoing(self, id: u8) -> tt_reg::Reg<u32, tt_reg::R> {
        self.status(counter::NIU_MST_WRITE_REQS_OUTGOING_ID + (id as usize & 0xF))
    }
}

/// One command buffer of an NIU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CmdBuf {
    ptr: *mut u8,
}

// SAFETY: `CmdBuf` is an address; see `tt_reg::Reg`.
unsafe impl Send for CmdBuf {}
// SAFETY: `CmdBuf` is an address; see `tt_reg::Reg`.
unsafe impl Sync for CmdBuf {}

macro_rules! cmd_regs {
    ($( $(#[$m:meta])* $name:ident : $ty:ty, $acc:ty = $off:expr; )*) => {
        impl CmdBuf {
            $(
                $(#[$m])*
                pub const fn $name(self) -> tt_reg::Reg<$ty, $acc> {
                    // SAFETY: `Niu::from_ptr`'s contract covers every command-buffer register.
                    unsafe { tt_reg::Reg::from_ptr(self.ptr.wrapping_add($off) as *mut $ty) }
                }
            )*
        }
    };
}

cmd_regs! {
    /// `NOC_TARG_ADDR_LO`: local address bits 31:0.
    targ_addr_lo: u32, tt_reg::RW = cmd::NOC_TARG_ADDR_LO;
    /// `NOC_TARG_ADDR_MID`: local address bits 35:32 and the coordinates ([`crate::addr::split`]).
    targ_addr_mid: u32, tt_reg::RW = cmd::NOC_TARG_ADDR_MID;
    /// `NOC_RET_ADDR_LO`.
    ret_addr_lo: u32, tt_reg::RW = cmd::NOC_RET_ADDR_LO;
    /// `NOC_RET_ADDR_MID`.
    ret_addr_mid: u32, tt_reg::RW = cmd::NOC_RET_ADDR_MID;
    /// `NOC_PACKET_TAG`: the transaction id in bits 13:10 ([`PACKET_TAG_TRANSACTION_ID_SHIFT`]).
    packet_tag: u32, tt_reg::RW = cmd::NOC_PACKET_TAG;
    /// `NOC_CTRL` ([`ctrl`]).
    ctrl: u32, tt_reg::RW = cmd::NOC_CTRL;
    /// `NOC_AT_LEN_BE`.
    at_len_be: u32, tt_reg::RW = cmd::NOC_AT_LEN_BE;
    /// `NOC_AT_DATA`.
    at_data: u32, tt_reg::RW = cmd::NOC_AT_DATA;
    /// `NOC_CMD_CTRL`: write [`NOC_CTRL_SEND_REQ`] to send; reads [`NOC_CTRL_STATUS_READY`] when free.
    cmd_ctrl: u32, tt_reg::RW = cmd::NOC_CMD_CTRL;
    /// `NOC_NODE_ID`.
    node_id: NodeId, tt_reg::R = cmd::NOC_NODE_ID;
    /// `NOC_ENDPOINT_ID`.
    endpoint_id: u32, tt_reg::R = cmd::NOC_ENDPOINT_ID;
}
