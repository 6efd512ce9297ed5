//! The Tensix tile: L1, the baby cores' soft reset and reset PCs, the wall clock.
//!
//! Sources: tt-isa-documentation `WormholeB0/TensixTile/L1.md`, `SoftReset.md`,
//! `DebugTimestamper.md`, `BabyRISCV/README.md`; tt-metal `wormhole/dev_mem_map.h`
//! (`MEM_L1_SIZE`); tt-umd `wormhole_implementation.hpp` (`TENSIX_L1_SIZE`,
//! `TENSIX_SOFT_RESET_ADDR`).

/// Bytes of L1: 1464 KiB, all of it addressable (tt-umd `TENSIX_L1_SIZE`).
pub const L1_SIZE: u32 = 1_499_136;
/// Bytes of an Ethernet tile's L1 (tt-umd `ETH_L1_SIZE`).
pub const ETH_L1_SIZE: u32 = 256 * 1024;
/// AICLK when busy, MHz (tt-umd `AICLK_BUSY_VAL`).
pub const AICLK_BUSY_MHZ: u32 = 1000;
/// AICLK when idle, MHz (tt-umd `AICLK_IDLE_VAL`).
pub const AICLK_IDLE_MHZ: u32 = 500;
/// The soft-reset register (`RISCV_DEBUG_REG_SOFT_RESET_0`).
pub const SOFT_RESET_0: usize = 0xFFB1_21B0;
/// Its bits: BRISC, TRISC0, TRISC1, TRISC2, NCRISC.
pub const SOFT_RESET_BITS: [u32; 5] = [1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 18];
/// Its value at power-on: all five held.
pub const SOFT_RESET_ALL: u32 = 0x47800;
/// Reset PCs unless overridden: BRISC, TRISC0, TRISC1, TRISC2, NCRISC. (The override
/// registers are Tensix backend configuration words 158..=163, not debug registers as on
/// Blackhole.)
pub const RESET_PCS: [u32; 5] = [0x0, 0x6000, 0xA000, 0xE000, 0x1_2000];
/// The Tensix backend configuration words (`cfg_regs`), a word each; the reset-PC overrides
/// live here on Wormhole (ttsim `data/wh/tile_regs.json` `tensix_cfg`).
pub const TENSIX_CFG_BASE: u32 = 0xFFEF_0000;
/// Configuration word of TRISC0..2's reset PC (`TRISC_RESET_PC_SEC0_PC_ADDR32` .. `SEC2`,
/// tt-metal Wormhole `cfg_defines.h`).
pub const TRISC_RESET_PC_CFG: [u32; 3] = [158, 159, 160];
/// Configuration word enabling TRISCi's reset PC, bit i
/// (`TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en_ADDR32`).
pub const TRISC_RESET_PC_OVERRIDE_CFG: u32 = 161;
/// Configuration word of NCRISC's reset PC (`NCRISC_RESET_PC_PC_ADDR32`).
pub const NCRISC_RESET_PC_CFG: u32 = 162;
/// Configuration word enabling NCRISC's reset PC, bit 0 (ttsim `tensix.cpp`:
/// `NCRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en`).
pub const NCRISC_RESET_PC_OVERRIDE_CFG: u32 = 163;

/// The address of configuration word `word`.
pub const fn cfg_addr(word: u32) -> u32 {
    TENSIX_CFG_BASE + 4 * word
}

/// The wall clock, low word (reading it latches the high word at `+8`).
pub const WALL_CLOCK_L: usize = 0xFFB1_21F0;
/// The live high word of the wall clock (ttsim `data/wh/tile_regs.json` `wall_clock_1`;
/// `RISCV_DEBUG_REG_WALL_CLOCK_L+4` in ISA `WormholeB0/TensixTile/DebugTimestamper.md`), at the
/// same place as Blackhole's live high half (`RISCV_DEBUG_REG_WALL_CLOCK_H`, at `+8` on both
/// chips, is the latched one).
pub const WALL_CLOCK_H_LIVE: usize = 0xFFB1_21F4;
/// The latched high word of the wall clock.
pub const WALL_CLOCK_H: usize = 0xFFB1_21F8;
