//! The NIU (NoC interface unit) register block seen from a Tensix RISC-V.
//!
//! Each Tensix has two NIUs, one per NoC, at [`NIU0_BASE`] and [`NIU1_BASE`]; each has four
//! identical command buffers ("request initiators") at `base + i * 0x800`, configuration words
//! `NOC_CFG(n)` at `base + 0x100 + 4n` and status counters `NOC_STATUS(n)` at
//! `base + 0x200 + 4n`. Sources: tt-isa-documentation `BlackholeA0/NoC/MemoryMap.md` and
//! `NoC/Counters.md`; tt-metal `tt_metal/hw/inc/internal/tt-1xx/blackhole/noc/noc_parameters.h`
//! (docs/blackhole.md, "NIU registers", "Command buffers" and "NIU counters").

use tt_reg::{R, RW, Reg, W, fieldset};

/// NIU0 (NoC0) register base.
pub const NIU0_BASE: usize = 0xFFB2_0000;
/// NIU1 (NoC1) register base: `NIU0_BASE + NOC_INSTANCE_OFFSET`.
pub const NIU1_BASE: usize = 0xFFB3_0000;
/// Distance between the two NIUs' register blocks.
pub const NOC_INSTANCE_OFFSET: usize = 0x1_0000;
/// Distance between command buffers.
pub const NOC_CMD_BUF_OFFSET: usize = 0x800;
/// Command buffers per NIU.
pub const NOC_CMD_BUFS: usize = 4;
/// Offset of `NOC_CFG(0)`.
pub const NOC_CFG_OFFSET: usize = 0x100;
/// Offset of `NOC_STATUS(0)`.
pub const NOC_STATUS_OFFSET: usize = 0x200;
/// Bytes of one NIU register block that this crate describes (through the last status word).
pub const NIU_BLOCK_BYTES: usize = NOC_CMD_BUFS * NOC_CMD_BUF_OFFSET;
/// Offset of `NOC_CLEAR_OUTSTANDING_REQ_CNT` from the NIU's base: once per NIU, not per command
/// buffer (ISA `BlackholeA0/NoC/MemoryMap.md`: `NIU_BASE + 0x0060`, "Clear NIU transaction ID
/// counters"; the command buffers' blocks at `+ i * 0x800` repeat only the identification and
/// FIFO-status words). Write a bit mask: bit `i` zeroes `NIU_MST_REQS_OUTSTANDING_ID(i)`.
pub const NOC_CLEAR_OUTSTANDING_REQ_CNT: usize = 0x60;
/// PCIe tile's NoC0 NIU registers in BAR0 (host view).
pub const PCIE_NIU0_BAR0: u32 = 0x1FD0_4000;
/// PCIe tile's NoC1 NIU registers in BAR0 (host view).
pub const PCIE_NIU1_BAR0: u32 = 0x1FD1_4000;

/// Command-buffer register offsets (from the command buffer's base).
pub mod cmd {
    /// Target address bits 31..0.
    pub const NOC_TARG_ADDR_LO: usize = 0x00;
    /// Target address bits 63..32 (tt-metal writes `(addr >> 32) & 0x1000_000F`).
    pub const NOC_TARG_ADDR_MID: usize = 0x04;
    /// Target coordinate word.
    pub const NOC_TARG_ADDR_HI: usize = 0x08;
    /// Return address bits 31..0.
    pub const NOC_RET_ADDR_LO: usize = 0x0C;
    /// Return address bits 63..32.
    pub const NOC_RET_ADDR_MID: usize = 0x10;
    /// Return coordinate word.
    pub const NOC_RET_ADDR_HI: usize = 0x14;
    /// Packet tag (transaction id in bits 10..13).
    pub const NOC_PACKET_TAG: usize = 0x18;
    /// Request type and flags ([`super::NocCtrl`]).
    pub const NOC_CTRL: usize = 0x1C;
    /// Length in bytes, byte-enable mask, or atomic opcode and operands.
    pub const NOC_AT_LEN_BE: usize = 0x20;
    /// High 32 bits of a 64-bit length or byte-enable mask.
    pub const NOC_AT_LEN_BE_1: usize = 0x24;
    /// Inline or atomic data.
    pub const NOC_AT_DATA: usize = 0x28;
    /// Non-rectangular broadcast configuration.
    pub const NOC_BRCST_EXCLUDE: usize = 0x2C;
    /// L1 accumulate instruction (unsafe on Blackhole; keep 0).
    pub const NOC_L1_ACC_AT_INSTRN: usize = 0x30;
    /// Security control.
    pub const NOC_SEC_CTRL: usize = 0x34;
    /// Write 1 to send; reads 0 when the command buffer is free.
    pub const NOC_CMD_CTRL: usize = 0x40;
    /// This node's id ([`super::NodeId`]).
    pub const NOC_NODE_ID: usize = 0x44;
    /// This node's endpoint id ([`super::EndpointId`]).
    pub const NOC_ENDPOINT_ID: usize = 0x48;
    /// Command-buffer FIFO availability.
    pub const CMD_BUF_AVAIL: usize = 0x64;
    /// Command-buffer FIFO overflow.
    pub const CMD_BUF_OVFL: usize = 0x68;
}

/// `NOC_CMD_CTRL` reads this when the command buffer can take a new request.
pub const NOC_CTRL_STATUS_READY: u32 = 0;

/// Indices `n` of the `NOC_CFG(n)` configuration words.
pub mod cfg {
    /// `NIU_CFG_0` ([`super::NiuCfg0`]).
    pub const NIU_CFG_0: usize = 0x00;
    /// `ROUTER_CFG_0`; `ROUTER_CFG_n` is `ROUTER_CFG_0 + n` for n in 0..5.
    pub const ROUTER_CFG_0: usize = 0x01;
    /// `ROUTER_CFG_1`: column broadcast opt-out mask by x (bits 0..16).
    pub const ROUTER_CFG_1: usize = 0x02;
    /// `ROUTER_CFG_3`: row broadcast opt-out mask by y (bits 0..11).
    pub const ROUTER_CFG_3: usize = 0x04;
    /// `NOC_X_ID_TRANSLATE_TABLE_0`; tables 0..6 follow.
    pub const NOC_X_ID_TRANSLATE_TABLE_0: usize = 0x06;
    /// `NOC_Y_ID_TRANSLATE_TABLE_0`; tables 0..6 follow.
    pub const NOC_Y_ID_TRANSLATE_TABLE_0: usize = 0x0C;
    /// `NOC_ID_LOGICAL`: this NIU's translated coordinates.
    pub const NOC_ID_LOGICAL: usize = 0x12;
    /// `NOC_ID_TRANSLATE_COL_MASK`.
    pub const NOC_ID_TRANSLATE_COL_MASK: usize = 0x14;
    /// `NOC_ID_TRANSLATE_ROW_MASK`.
    pub const NOC_ID_TRANSLATE_ROW_MASK: usize = 0x15;
    /// `DDR_COORD_TRANSLATE_TABLE_0`; tables 0..6 follow.
    pub const DDR_COORD_TRANSLATE_TABLE_0: usize = 0x16;
    /// `DDR_COORD_TRANSLATE_COL_SWAP`.
    pub const DDR_COORD_TRANSLATE_COL_SWAP: usize = 0x1C;
    /// `NIU_TRANS_COUNT_RTZ_CFG`.
    pub const NIU_TRANS_COUNT_RTZ_CFG: usize = 0x1E;
    /// `NIU_TRANS_COUNT_RTZ_CLR`.
    pub const NIU_TRANS_COUNT_RTZ_CLR: usize = 0x1F;
    /// Entries per translate table register (32 entries x 5 bits, 6 per word).
    pub const TRANSLATE_ENTRIES_PER_WORD: usize = 6;
    /// Bits per translate table entry.
    pub const TRANSLATE_ID_WIDTH: u32 = 5;
}

/// The NIU status counters, `NOC_STATUS(n)`. All 32-bit and wrapping, except the
/// per-transaction-id ones (8-bit), which are reached through [`Niu::reqs_outstanding`] and
/// [`Niu::write_reqs_outgoing`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[allow(missing_docs)] // each variant is the counter of the same name in the ISA document
pub enum Counter {
    MstAtomicRespReceived = 0x00,
    MstWrAckReceived = 0x01,
    MstRdRespReceived = 0x02,
    MstRdDataWordReceived = 0x03,
    MstCmdAccepted = 0x04,
    MstRdReqSent = 0x05,
    MstNonpostedAtomicSent = 0x06,
    MstPostedAtomicSent = 0x07,
    MstNonpostedWrDataWordSent = 0x08,
    MstPostedWrDataWordSent = 0x09,
    MstNonpostedWrReqSent = 0x0A,
    MstPostedWrReqSent = 0x0B,
    MstNonpostedWrReqStarted = 0x0C,
    MstPostedWrReqStarted = 0x0D,
    MstRdReqStarted = 0x0E,
    MstNonpostedAtomicStarted = 0x0F,
    // 0x10..0x2F: per transaction id, see `Niu::reqs_outstanding` / `write_reqs_outgoing`.
    // Order confirmed against tt-isa-documentation BlackholeA0/NoC/Counters.md (indices 48..61).
    SlvAtomicRespSent = 0x30,
    SlvWrAckSent = 0x31,
    SlvRdRespSent = 0x32,
    SlvRdDataWordSent = 0x33,
    SlvReqAccepted = 0x34,
    SlvRdReqReceived = 0x35,
    SlvNonpostedAtomicReceived = 0x36,
    SlvPostedAtomicReceived = 0x37,
    SlvNonpostedWrDataWordReceived = 0x38,
    SlvPostedWrDataWordReceived = 0x39,
    SlvNonpostedWrReqReceived = 0x3A,
    SlvPostedWrReqReceived = 0x3B,
    SlvNonpostedWrReqStarted = 0x3C,
    SlvPostedWrReqStarted = 0x3D,
    TransCountRtzNum = 0x5E,
    TransCountRtzSource = 0x5F,
}

/// Index of `NIU_MST_REQS_OUTSTANDING_ID(0)`.
pub const REQS_OUTSTANDING_ID_BASE: usize = 0x10;
/// Index of `NIU_MST_WRITE_REQS_OUTGOING_ID(0)`.
pub const WRITE_REQS_OUTGOING_ID_BASE: usize = 0x20;
/// Transaction ids 0..16.
pub const TRANSACTION_IDS: u8 = 16;

/// A NoC transaction id, 0..16.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TransactionId(u8);

impl TransactionId {
    /// A transaction id; `None` unless `id < 16`.
    pub const fn new(id: u8) -> Option<Self> {
        if id < TRANSACTION_IDS {
            Some(Self(id))
        } else {
            None
        }
    }
    /// The id.
    pub const fn get(self) -> u8 {
        self.0
    }
}

/// The four command buffers. tt-metal's dedicated-NoC assignment is given as constants.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmdBufId {
    Buf0 = 0,
    Buf1 = 1,
    Buf2 = 2,
    Buf3 = 3,
}

impl CmdBufId {
    /// tt-metal: large writes and multicasts.
    pub const WRITE: Self = Self::Buf0;
    /// tt-metal: reads.
    pub const READ: Self = Self::Buf1;
    /// tt-metal: small and register writes (semaphores, markers).
    pub const SMALL_WRITE: Self = Self::Buf2;
    /// tt-metal: atomics.
    pub const ATOMIC: Self = Self::Buf3;
}

/// Request types in `NOC_CTRL` bits 0..1.
pub mod request {
    /// Read (`NOC_CMD_RD`).
    pub const READ: u8 = 0;
    /// Atomic (`NOC_CMD_AT`).
    pub const ATOMIC: u8 = 1;
    /// Write (`NOC_CMD_WR`).
    pub const WRITE: u8 = 2;
}

/// Static VC tt-metal uses for unicast reads and writes (class 0b00).
pub const UNICAST_VC: u8 = 1;
/// Static VC tt-metal uses for multicast writes (class 0b10).
pub const MULTICAST_VC: u8 = 4;
/// Static VC tt-metal uses for dispatch multicasts.
pub const DISPATCH_MULTICAST_VC: u8 = 5;

fieldset! {
    /// `NOC_CTRL`: request type and flags (ISA-BH `NoC/MemoryMap.md`). Bits 10..12 and 18..26 are
    /// reserved; bit 31 (L1 accumulate) is broken on Blackhole and must stay 0.
    pub struct NocCtrl {
        /// Request type, see [`request`].
        field request_type, set_request_type: u8 @ 0, 2;
        /// `NOC_CMD_WR_BE`: `NOC_AT_LEN_BE` is a byte-enable mask.
        flag wr_be, set_wr_be @ 2;
        /// `NOC_CMD_WR_INLINE`: data from `NOC_AT_DATA`. Must not target L1 on Blackhole.
        flag wr_inline, set_wr_inline @ 3;
        /// `NOC_CMD_RESP_MARKED`: non-posted (one ack per destination).
        flag resp_marked, set_resp_marked @ 4;
        /// `NOC_CMD_BRCST_PACKET`: multicast.
        flag brcst_packet, set_brcst_packet @ 5;
        /// `NOC_CMD_VC_LINKED`: linked multi-request transaction.
        flag vc_linked, set_vc_linked @ 6;
        /// `NOC_CMD_VC_STATIC`: use the VC in bits 13..15.
        flag vc_static, set_vc_static @ 7;
        /// `NOC_CMD_PATH_RESERVE`: reserve the broadcast path before data leaves.
        flag path_reserve, set_path_reserve @ 8;
        /// `NOC_CMD_MEM_RD_DROP_ACK`.
        flag mem_rd_drop_ack, set_mem_rd_drop_ack @ 9;
        /// `NOC_CMD_STATIC_VC(vc)`: the static VC, bits 13..15 (buddy bit 13, class bits 14..15).
        field static_vc, set_static_vc: u8 @ 13, 3;
        /// `NOC_CMD_BRCST_XY`: broadcast major axis (false = X major, true = Y major).
        flag brcst_xy, set_brcst_xy @ 16;
        /// `NOC_CMD_BRCST_SRC_INCLUDE`: include the sender if it lies in the rectangle.
        flag brcst_src_include, set_brcst_src_include @ 17;
        /// `NOC_CMD_ARB_PRIORITY(p)`; nonzero means software handles deadlock.
        field arb_priority, set_arb_priority: u8 @ 27, 4;
        /// `NOC_CMD_L1_ACC_AT_EN`: broken on Blackhole; keep 0.
        flag l1_acc_at_en, set_l1_acc_at_en @ 31;
    }
}

/// `NOC_CTRL`'s reserved bits (10..12 and 18..26, ISA `BlackholeA0/NoC/MemoryMap.md`), which the
/// hardware may modify. (tt-metal's `noc_cmd_buf_save_state` masks 18..26 and 31 when it saves a
/// command buffer's state.)
pub const NOC_CTRL_RESERVED_MASK: u32 = (0b111 << 10) | (0x1FF << 18);

fieldset! {
    /// `NOC_NODE_ID`: this node's raw coordinates and the grid size.
    pub struct NodeId {
        /// x.
        field x, set_x: u8 @ 0, 6;
        /// y.
        field y, set_y: u8 @ 6, 6;
        /// Grid width (17).
        field width, set_width: u8 @ 12, 7;
        /// Grid height (12).
        field height, set_height: u8 @ 19, 7;
        /// Routing: true = X first (NoC0), false = Y first (NoC1).
        flag x_first, set_x_first @ 28;
    }
}

fieldset! {
    /// `NOC_ENDPOINT_ID`.
    pub struct EndpointId {
        /// Tile index.
        field tile_index, set_tile_index: u8 @ 0, 8;
        /// Tile type, see [`endpoint`].
        field tile_type, set_tile_type: u16 @ 8, 16;
        /// NoC index.
        field noc_index, set_noc_index: u8 @ 24, 8;
    }
}

/// `NOC_ENDPOINT_ID` tile types.
pub mod endpoint {
    /// Tensix.
    pub const TENSIX: u16 = 0x0100;
    /// Ethernet.
    pub const ETHERNET: u16 = 0x0200;
    /// PCIe.
    pub const PCIE: u16 = 0x0300;
    /// ARC.
    pub const ARC: u16 = 0x0500;
    /// DRAM.
    pub const DRAM: u16 = 0x0800;
    /// L2CPU.
    pub const L2CPU: u16 = 0x0901;
    /// Security.
    pub const SECURITY: u16 = 0x0A00;
}

fieldset! {
    /// `NOC_PACKET_TAG`.
    pub struct PacketTag {
        /// Stream id.
        field stream_id, set_stream_id: u8 @ 0, 6;
        /// Deliver to the overlay.
        flag deliver_to_overlay, set_deliver_to_overlay @ 6;
        /// First packet.
        flag first, set_first @ 7;
        /// Last packet.
        flag last, set_last @ 8;
        /// `HEADER_STORE`.
        flag header_store, set_header_store @ 9;
        /// Transaction id 0..16.
        field transaction_id, set_transaction_id: u8 @ 10, 4;
    }
}

fieldset! {
    /// `NIU_CFG_0` (the bits this stack reads).
    pub struct NiuCfg0 {
        /// `NIU_CFG_0_NOC_ID_TRANSLATE_EN`: coordinate translation is on; X/Y in
        /// `*_ADDR_HI` are translated at `NOC_CMD_CTRL` time.
        flag noc_id_translate_en, set_noc_id_translate_en @ 14;
        /// AXI subordinate enable (DRAM tiles: NoC view of GDDR vs RISC/L1).
        flag axi_subordinate_en, set_axi_subordinate_en @ 15;
    }
}

tt_reg::block! {
    /// One NIU's register block over a base pointer.
    ///
    /// The only ways to make one are `unsafe`: [`Niu::from_ptr`] over memory the caller vouches for,
    /// or [`Niu::steal_niu0`] / [`Niu::steal_niu1`] on the device. Safe code cannot conjure a block
    /// over an arbitrary address:
    ///
    /// ```compile_fail,E0133
    /// let niu = blackhole_pac::niu::Niu::steal_niu0(); // needs `unsafe`
    /// let _ = niu.niu_cfg_0().read();
    /// ```
    ///
    /// ```compile_fail,E0133
    /// let mut word = [0u32; 1024];
    /// let niu = blackhole_pac::niu::Niu::from_ptr(word.as_mut_ptr().cast()); // needs `unsafe`
    /// ```
    ///
    /// ```compile_fail,E0451
    /// // The base pointer is private: no struct literal.
    /// let niu = blackhole_pac::niu::Niu { ptr: blackhole_pac::niu::NIU0_BASE as *mut u8 };
    /// ```
    pub struct Niu; bytes = "`NOC_STATUS_OFFSET + 4 * 0x60` bytes and every command buffer ([`NIU_BLOCK_BYTES`])";
}

impl Niu {
    /// NIU0's block (NoC0) on a Tensix RISC-V, at [`NIU0_BASE`].
    ///
    /// # Safety
    /// Only on a Tensix baby core, where [`NIU0_BASE`] is NIU0's register block (on a host the
    /// address is not mapped and any access is undefined behaviour; build blocks over your own
    /// memory with [`Niu::from_ptr`]). The caller must also be the only one driving NIU0's
    /// command buffers while the block is used (on Tensix: the one kernel owning NoC0), since the
    /// block does nothing to serialise two users.
    pub const unsafe fn steal_niu0() -> Self {
        // SAFETY: the caller upholds `from_ptr`'s contract for NIU0's MMIO block.
        unsafe { Self::from_ptr(NIU0_BASE as *mut ()) }
    }

    /// NIU1's block (NoC1) on a Tensix RISC-V, at [`NIU1_BASE`].
    ///
    /// # Safety
    /// As for [`Niu::steal_niu0`], for NIU1 and the one kernel owning NoC1.
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
    pub const fn cfg(self, n: usize) -> Reg<u32, RW> {
        self.reg_at(NOC_CFG_OFFSET + 4 * (n & 0x3F))
    }

    /// `NIU_CFG_0`.
    pub const fn niu_cfg_0(self) -> Reg<NiuCfg0, RW> {
        self.reg_at(NOC_CFG_OFFSET + 4 * cfg::NIU_CFG_0)
    }

    /// `NOC_CLEAR_OUTSTANDING_REQ_CNT` at [`NOC_CLEAR_OUTSTANDING_REQ_CNT`] from the base: bit
    /// `i` of the mask written zeroes `NIU_MST_REQS_OUTSTANDING_ID(i)`.
    pub const fn clear_outstanding_req_cnt(self) -> Reg<u32, W> {
        self.reg_at(NOC_CLEAR_OUTSTANDING_REQ_CNT)
    }

    /// Status counter `counter`.
    pub const fn status(self, counter: Counter) -> Reg<u32, R> {
        self.reg_at(NOC_STATUS_OFFSET + 4 * counter as usize)
    }

    /// `NIU_MST_REQS_OUTSTANDING_ID(id)` (8-bit).
    pub const fn reqs_outstanding(self, id: TransactionId) -> Reg<u32, R> {
        self.reg_at(NOC_STATUS_OFFSET + 4 * (REQS_OUTSTANDING_ID_BASE + id.0 as usize))
    }

    /// `NIU_MST_WRITE_REQS_OUTGOING_ID(id)` (8-bit).
    pub const fn write_reqs_outgoing(self, id: TransactionId) -> Reg<u32, R> {
        self.reg_at(NOC_STATUS_OFFSET + 4 * (WRITE_REQS_OUTGOING_ID_BASE + id.0 as usize))
    }
}

/// One command buffer (request initiator) of an NIU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CmdBuf {
    ptr: *mut u8,
}

// SAFETY: `CmdBuf` is an address; see `Reg`.
unsafe impl Send for CmdBuf {}
// SAFETY: `CmdBuf` is an address; see `Reg`.
unsafe impl Sync for CmdBuf {}

macro_rules! cmd_regs {
    ($( $(#[$m:meta])* $name:ident : $ty:ty, $acc:ty = $off:expr; )*) => {
        impl CmdBuf {
            $(
                $(#[$m])*
                pub const fn $name(self) -> Reg<$ty, $acc> {
                    // SAFETY: `Niu::from_ptr`'s contract covers every command-buffer register.
                    unsafe { Reg::from_ptr(self.ptr.wrapping_add($off) as *mut $ty) }
                }
            )*
        }
    };
}

cmd_regs! {
    /// `NOC_TARG_ADDR_LO`.
    targ_addr_lo: u32, RW = cmd::NOC_TARG_ADDR_LO;
    /// `NOC_TARG_ADDR_MID`.
    targ_addr_mid: u32, RW = cmd::NOC_TARG_ADDR_MID;
    /// `NOC_TARG_ADDR_HI`.
    targ_addr_hi: u32, RW = cmd::NOC_TARG_ADDR_HI;
    /// `NOC_RET_ADDR_LO`.
    ret_addr_lo: u32, RW = cmd::NOC_RET_ADDR_LO;
    /// `NOC_RET_ADDR_MID`.
    ret_addr_mid: u32, RW = cmd::NOC_RET_ADDR_MID;
    /// `NOC_RET_ADDR_HI`.
    ret_addr_hi: u32, RW = cmd::NOC_RET_ADDR_HI;
    /// `NOC_PACKET_TAG`.
    packet_tag: PacketTag, RW = cmd::NOC_PACKET_TAG;
    /// `NOC_CTRL`.
    ctrl: NocCtrl, RW = cmd::NOC_CTRL;
    /// `NOC_AT_LEN_BE`.
    at_len_be: u32, RW = cmd::NOC_AT_LEN_BE;
    /// `NOC_AT_LEN_BE_1`.
    at_len_be_1: u32, RW = cmd::NOC_AT_LEN_BE_1;
    /// `NOC_AT_DATA`.
    at_data: u32, RW = cmd::NOC_AT_DATA;
    /// `NOC_BRCST_EXCLUDE`.
    brcst_exclude: u32, RW = cmd::NOC_BRCST_EXCLUDE;
    /// `NOC_CMD_CTRL`: write 1 to send; reads [`NOC_CTRL_STATUS_READY`] when free.
    cmd_ctrl: u32, RW = cmd::NOC_CMD_CTRL;
    /// `NOC_NODE_ID`.
    node_id: NodeId, R = cmd::NOC_NODE_ID;
    /// `NOC_ENDPOINT_ID`.
    endpoint_id: EndpointId, R = cmd::NOC_ENDPOINT_ID;
    /// `CMD_BUF_AVAIL`.
    cmd_buf_avail: u32, R = cmd::CMD_BUF_AVAIL;
    /// `CMD_BUF_OVFL`.
    cmd_buf_ovfl: u32, R = cmd::CMD_BUF_OVFL;
}
