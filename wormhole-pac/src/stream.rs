//! NoC-overlay stream registers used as circular-buffer counters.
//!
//! As on Blackhole, circular buffer `n` keeps its shared counters in overlay stream `n`
//! (`OPERAND_START_STREAM = 0`), 0x1000 bytes a stream from 0xFFB4_0000; but the registers
//! differ: `tiles_received` is register 4 (`STREAM_REMOTE_DEST_BUF_SIZE_REG_INDEX`) and
//! `tiles_acked` register 3 (`STREAM_REMOTE_DEST_BUF_START_REG_INDEX`), where Blackhole has 10
//! and 8. Sources: tt-metal `tt_metal/hw/inc/internal/tt-1xx/wormhole/stream_io_map.h` and
//! `noc/noc_overlay_parameters.h`; ttsim `data/wh/tile_regs.json` (`noc_overlay_stream`:
//! `remote_dest_buf_start` at 0xC, `remote_dest_buf_size` at 0x10; ttsim keeps 17 bits of each).

use tt_reg::{RW, Reg};

/// Base of the overlay stream registers (`NOC_OVERLAY_START_ADDR`).
pub const STREAM_BASE: usize = 0xFFB4_0000;
/// Bytes between consecutive streams (`NOC_STREAM_REG_SPACE_SIZE`).
pub const STREAM_STRIDE: usize = 0x1000;
/// Overlay streams of a Tensix tile (`NOC_NUM_STREAMS`).
pub const STREAMS: usize = 64;
/// Circular buffers per core (tt-metal `tt_metal/api/tt-metalium/circular_buffer_constants.h`:
/// `NUM_CIRCULAR_BUFFERS` is 32 under `ARCH_WORMHOLE`, 64 on Blackhole).
pub const CIRCULAR_BUFFERS: usize = 32;
/// Register index of `tiles_received` (pages pushed by the producer).
pub const TILES_RECEIVED_REG: usize = 4;
/// Register index of `tiles_acked` (pages popped by the consumer).
pub const TILES_ACKED_REG: usize = 3;
/// Bytes of the stream register window this crate describes.
pub const STREAM_BLOCK_BYTES: usize = STREAMS * STREAM_STRIDE;

tt_reg::block! {
    /// The overlay stream register window over a base pointer (made only through `unsafe`).
    ///
    /// ```compile_fail,E0133
    /// let streams = wormhole_pac::stream::Streams::steal(); // needs `unsafe`
    /// ```
    pub struct Streams; bytes = "[`STREAM_BLOCK_BYTES`]";
}

impl Streams {
    /// The window of this core on a Tensix RISC-V of a Wormhole, at [`STREAM_BASE`].
    ///
    /// # Safety
    /// Only on a Tensix baby core of a Wormhole; the kernels sharing the registers must agree
    /// who writes which counter (the producer `tiles_received`, the consumer `tiles_acked`).
    pub const unsafe fn steal() -> Self {
        // SAFETY: the caller upholds `from_ptr`'s contract for the MMIO window.
        unsafe { Self::from_ptr(STREAM_BASE as *mut ()) }
    }

    const fn reg(self, stream: usize, reg: usize) -> Reg<u32, RW> {
        // SAFETY: `from_ptr`'s contract covers every stream register below STREAM_BLOCK_BYTES;
        // the stream is taken modulo STREAMS.
        unsafe {
            Reg::from_ptr(
                self.ptr
                    .wrapping_add((stream % STREAMS) * STREAM_STRIDE + reg * 4)
                    as *mut u32,
            )
        }
    }

    /// `tiles_received` of circular buffer `cb` (taken modulo [`CIRCULAR_BUFFERS`]).
    pub const fn tiles_received(self, cb: u8) -> Reg<u32, RW> {
        self.reg(cb as usize % CIRCULAR_BUFFERS, TILES_RECEIVED_REG)
    }

    /// `tiles_acked` of circular buffer `cb` (taken modulo [`CIRCULAR_BUFFERS`]).
    pub const fn tiles_acked(self, cb: u8) -> Reg<u32, RW> {
        self.reg(cb as usize % CIRCULAR_BUFFERS, TILES_ACKED_REG)
    }
}
