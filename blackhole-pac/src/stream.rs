//! NoC-overlay stream registers used as circular-buffer counters.
//!
//! tt-metal keeps each circular buffer's shared counters in an overlay stream's registers, not
//! in L1: CB `n` uses stream `n` (`OPERAND_START_STREAM = 0` on Blackhole); the producer's
//! `tiles_received` is register 10 (`STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX`), the consumer's
//! `tiles_acked` register 8 (`STREAM_REMOTE_DEST_BUF_START_REG_INDEX`), both 16-bit counts of
//! pages that wrap. Sources: tt-metal `…/blackhole/stream_io_map.h`,
//! `…/blackhole/noc/noc_overlay_parameters.h` (docs/blackhole.md, "Circular buffers").

use tt_reg::{RW, Reg};

/// Base of the overlay stream registers.
pub const STREAM_BASE: usize = 0xFFB4_0000;
/// Bytes between consecutive streams.
pub const STREAM_STRIDE: usize = 0x1000;
/// Overlay streams (`NOC_NUM_STREAMS`).
pub const STREAMS: usize = 64;
/// Circular buffers per core on Blackhole.
pub const CIRCULAR_BUFFERS: usize = 64;
/// Stream of circular buffer 0.
pub const OPERAND_START_STREAM: usize = 0;
/// Register index of `tiles_received` (pages pushed by the producer).
pub const TILES_RECEIVED_REG: usize = 10;
/// Register index of `tiles_acked` (pages popped by the consumer).
pub const TILES_ACKED_REG: usize = 8;
/// Bytes of the stream register window this crate describes.
pub const STREAM_BLOCK_BYTES: usize = STREAMS * STREAM_STRIDE;

/// `STREAM_REG_ADDR(stream, reg) = STREAM_BASE + stream * 0x1000 + reg * 4`.
pub const fn stream_reg_addr(stream: usize, reg: usize) -> usize {
    STREAM_BASE + stream * STREAM_STRIDE + reg * 4
}

/// A circular buffer index, 0..64.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CbIndex(u8);

impl CbIndex {
    /// A circular buffer index; `None` unless `index < 64`.
    pub const fn new(index: u8) -> Option<Self> {
        if (index as usize) < CIRCULAR_BUFFERS {
            Some(Self(index))
        } else {
            None
        }
    }
    /// The index.
    pub const fn get(self) -> u8 {
        self.0
    }
}

tt_reg::block! {
    /// The overlay stream register window over a base pointer.
    ///
    /// Made only through `unsafe` ([`Streams::from_ptr`], [`Streams::steal`]):
    ///
    /// ```compile_fail,E0133
    /// let streams = blackhole_pac::stream::Streams::steal(); // needs `unsafe`
    /// ```
    pub struct Streams; bytes = "[`STREAM_BLOCK_BYTES`]";
}

impl Streams {
    /// The window of this core on a Tensix RISC-V, at [`STREAM_BASE`].
    ///
    /// # Safety
    /// Only on a Tensix baby core, where [`STREAM_BASE`] is the overlay stream registers (on a
    /// host the address is not mapped and any access is undefined behaviour; build windows over
    /// your own memory with [`Streams::from_ptr`]). The kernels sharing the registers must agree
    /// who writes which counter (tt-metal's rule: the producer `tiles_received`, the consumer
    /// `tiles_acked`).
    pub const unsafe fn steal() -> Self {
        // SAFETY: the caller upholds `from_ptr`'s contract for the stream MMIO window.
        unsafe { Self::from_ptr(STREAM_BASE as *mut ()) }
    }

    const fn reg(self, cb: CbIndex, reg: usize) -> Reg<u32, RW> {
        // `cb < 64` keeps the offset inside the window.
        self.reg_at((OPERAND_START_STREAM + cb.0 as usize) * STREAM_STRIDE + reg * 4)
    }

    /// Pages pushed into circular buffer `cb` (16 significant bits, wrapping).
    pub const fn tiles_received(self, cb: CbIndex) -> Reg<u32, RW> {
        self.reg(cb, TILES_RECEIVED_REG)
    }

    /// Pages popped from circular buffer `cb` (16 significant bits, wrapping).
    pub const fn tiles_acked(self, cb: CbIndex) -> Reg<u32, RW> {
        self.reg(cb, TILES_ACKED_REG)
    }
}
