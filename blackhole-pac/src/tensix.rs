//! Tensix tile facts: L1, local memories, soft reset, reset PCs, debug registers.
//!
//! Sources: tt-isa-documentation `BlackholeA0/TensixTile/BabyRISCV/README.md` and
//! `BlackholeA0/TensixTile/SoftReset.md` (both upstream; `SoftReset.md` read at 585749d);
//! tt-umd `blackhole_implementation.hpp`; tt-metal `dev_mem_map.h` (docs/blackhole.md, "Tensix
//! cores" and "tt-metal L1 map").

use tt_reg::fieldset;

/// L1 bytes per Tensix (0x0000_0000..0x0018_0000).
pub const L1_SIZE: u32 = 1536 * 1024;
/// L1 bytes the ARC firmware uses as scratch (`16..32`): nothing else may be loaded there
/// (tt-metal `dev_mem_map.h`; docs/blackhole.md, "Boot state").
pub const L1_ARC_SCRATCH: core::ops::Range<u32> = 16..32;
/// L1 bytes tt-metal reports as usable (`worker_l1_size`).
pub const L1_USABLE_SIZE: u32 = 1_499_136;
/// Private local data RAM base of each baby core.
pub const LOCAL_MEM_BASE: u32 = 0xFFB0_0000;
/// Local data RAM of BRISC and NCRISC.
pub const LOCAL_MEM_DM_SIZE: u32 = 8 * 1024;
/// Local data RAM of each TRISC.
pub const LOCAL_MEM_TRISC_SIZE: u32 = 4 * 1024;
/// L0 data cache bytes (4 lines of 16 B; not coherent).
pub const L0_DCACHE_SIZE: u32 = 64;
/// End of tt-metal's fixed L1 map (`MEM_MAP_END`); kernels and buffers live above it.
pub const TT_METAL_MEM_MAP_END: u32 = 0x9F00;
/// tt-metal's inline-write scratch (`MEM_L1_INLINE_BASE`), 16 B per NoC per DM core.
pub const TT_METAL_L1_INLINE_BASE: u32 = 32;

/// `RISCV_DEBUG_REG_SOFT_RESET_0` (also writable over the NoC).
pub const SOFT_RESET_ADDR: u32 = 0xFFB1_21B0;
/// Soft-reset bits of all five baby cores.
pub const SOFT_RESET_ALL_CORES: u32 = (1 << 11) | (1 << 12) | (1 << 13) | (1 << 14) | (1 << 18);

fieldset! {
    /// `RISCV_DEBUG_REG_SOFT_RESET_0`: a set bit holds that core in reset.
    pub struct SoftReset {
        /// BRISC (RISCV_B, data movement 0).
        flag brisc, set_brisc @ 11;
        /// TRISC0 (unpack).
        flag trisc0, set_trisc0 @ 12;
        /// TRISC1 (math).
        flag trisc1, set_trisc1 @ 13;
        /// TRISC2 (pack).
        flag trisc2, set_trisc2 @ 14;
        /// NCRISC (RISCV_NC, data movement 1).
        flag ncrisc, set_ncrisc @ 18;
        /// Staggered start (tt-umd `SOFT_RESET_STAGGERED_START`).
        flag staggered_start, set_staggered_start @ 31;
    }
}

/// Reset PC of BRISC.
pub const BRISC_RESET_PC: u32 = 0x0;
/// Default reset PCs of TRISC0, TRISC1, TRISC2.
pub const TRISC_RESET_PC: [u32; 3] = [0x6000, 0xA000, 0xE000];
/// Default reset PC of NCRISC.
pub const NCRISC_RESET_PC: u32 = 0x1_2000;
/// `TRISC_RESET_PC_OVERRIDE`.
pub const TRISC_RESET_PC_OVERRIDE: u32 = 0xFFB1_2234;
/// TRISC0..2 override PC registers.
pub const TRISC_RESET_PC_REGS: [u32; 3] = [0xFFB1_2228, 0xFFB1_222C, 0xFFB1_2230];
/// `NCRISC_RESET_PC_OVERRIDE`.
pub const NCRISC_RESET_PC_OVERRIDE: u32 = 0xFFB1_223C;
/// NCRISC override PC register.
pub const NCRISC_RESET_PC_REG: u32 = 0xFFB1_2238;
/// PC snapshot registers of B, NC, T0, T1, T2.
pub const PC_SNAPSHOT: [u32; 5] = [
    0xFFB1_3138,
    0xFFB1_313C,
    0xFFB1_3140,
    0xFFB1_3144,
    0xFFB1_3148,
];
/// `RISCV_DEBUG_REG_WALL_CLOCK_L`: the tile's 64-bit cycle counter, low half; reading it latches
/// the high half into [`WALL_CLOCK_H_LATCHED`] (tt-metal and tt-llk headers,
/// `RISCV_DEBUG_REGS_START_ADDR | 0x1F0`).
pub const WALL_CLOCK_L: u32 = 0xFFB1_21F0;
/// The live high half of the wall clock (`RISCV_DEBUG_REG_WALL_CLOCK_L+4`, which tt-metal's
/// headers do not name: tt-isa-documentation `WormholeB0/TensixTile/DebugTimestamper.md`, to
/// which `BlackholeA0/TensixTile/DebugTimestamper.md` defers, "The behavior is identical").
pub const WALL_CLOCK_H_LIVE: u32 = 0xFFB1_21F4;
/// The high half latched by the last read of [`WALL_CLOCK_L`].
pub const WALL_CLOCK_H_LATCHED: u32 = 0xFFB1_21F8;
/// `cfg0`, CSR 0x7C0: a baby core's configuration bits, some of which tt-metal's firmware sets
/// at boot (`set_l1_data_cache` in tt-metal `tt_metal/hw/inc/internal/tt-1xx/risc_common.h`;
/// ttsim calls it `CSR_CFG0`).
pub const CSR_CFG0: u32 = 0x7C0;
/// `cfg0` bit 3: the core's L0 data cache (4 lines of 16 bytes, write-through, covering L1) off.
/// tt-metal's firmware sets it at every boot unless `TT_METAL_ENABLE_L1_DATA_CACHE_RISCVS` names
/// the core (`set_l1_data_cache<false>`: `fence`, then `csrrs zero, 0x7c0, t1` with `t1` = 8);
/// clearing it turns the cache on again.
pub const CFG0_L0_DATA_CACHE_OFF: u32 = 1 << 3;
/// `cfg0` at reset: every field clear except `StMergeTimer` (bits 13..17), 16
/// (tt-isa-documentation `BlackholeA0/TensixTile/BabyRISCV/CSRs.md`, `cfg0`: "At reset, all
/// fields are initialized to zero/clear, except for `StMergeTimer`, which is initialized to
/// `16`"). The L0 data cache is on until firmware sets [`CFG0_L0_DATA_CACHE_OFF`].
pub const CFG0_RESET: u32 = 16 << 13;
/// The Tensix NIU0's `NOC_ID_LOGICAL` as a NoC address within the tile (bits 0..5 x, 6..11 y:
/// the tile's translated coordinates, which firmware programs).
pub const NOC_ID_LOGICAL_ADDR: u32 = crate::niu::NIU0_BASE as u32
    + crate::niu::NOC_CFG_OFFSET as u32
    + 4 * crate::niu::cfg::NOC_ID_LOGICAL as u32;

/// AICLK (and NoC clock) under load, in MHz.
pub const AICLK_BUSY_MHZ: u32 = 1350;
/// AICLK when idle, in MHz.
pub const AICLK_IDLE_MHZ: u32 = 800;
