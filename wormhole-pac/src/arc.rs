//! The host's messages to Wormhole's ARC: a code into a reset-unit scratch register, an
//! interrupt, and the answer in two others. Sources: tt-umd
//! `device/api/umd/device/arch/wormhole_implementation.hpp` (`ARC_MSG_COMMON_PREFIX`,
//! `ARC_RESET_SCRATCH_OFFSET`, `ARC_RESET_ARC_MISC_CNTL_OFFSET`, `ARC_SCRATCH_RES0_OFFSET`,
//! `ARC_SCRATCH_RES1_OFFSET`, `ARC_SCRATCH_STATUS_OFFSET`, `arc_message_type`); ttsim
//! `data/wh/tile_regs.json` (`arc_apb_reset_unit` at APB 0x30000: `scratch` at 0x60,
//! `arc_misc_cntl` at 0x100) and `src/tile.cpp` (`arc_reset_unit_wr32`: the interrupt serves
//! the code in scratch 5, the answer in scratch 3, the status back in scratch 5).

/// BAR0 offset of reset-unit scratch register 0 (the ARC APB window at 0x1FF0_0000, its reset
/// unit at 0x3_0000, the scratch registers at 0x60).
pub const RESET_SCRATCH_BAR0: u32 = 0x1FF3_0060;
/// BAR0 offset of `ARC_MISC_CNTL`.
pub const MISC_CNTL_BAR0: u32 = 0x1FF3_0100;
/// `ARC_MISC_CNTL` bit that interrupts ARC to serve the message.
pub const MISC_CNTL_IRQ0: u32 = 1 << 16;
/// Scratch register of the first answer word (and of the argument).
pub const SCRATCH_RES0: u32 = 3;
/// Scratch register of the second answer word.
pub const SCRATCH_RES1: u32 = 4;
/// Scratch register of the message code and, once served, its status.
pub const SCRATCH_STATUS: u32 = 5;
/// What every message code is written with (`ARC_MSG_COMMON_PREFIX`).
pub const MSG_PREFIX: u32 = 0xAA00;
/// BAR0 offsets ARC answers at: its CSM and its APB registers.
pub const BAR0_ARC: core::ops::Range<u32> = 0x1FE8_0000..0x2000_0000;

/// Message codes (tt-umd `wormhole::arc_message_type`).
pub mod msg {
    /// The AICLK now, MHz (`GET_AICLK`).
    pub const GET_AICLK: u8 = 0x34;
    /// The harvested Tensix rows in ARC's order (`ARC_GET_HARVESTING`:
    /// [`crate::harvest::HarvestMask::from_arc`]).
    pub const ARC_GET_HARVESTING: u8 = 0x57;
}

/// BAR0 offset of scratch register `i`.
pub const fn scratch_bar0(i: u32) -> u32 {
    RESET_SCRATCH_BAR0 + 4 * i
}

/// Whether a status read of scratch 5 says message `code` was served, and its exit code
/// (`status & 0xFFFF == code`, the exit code in the high half).
pub const fn served(status: u32, code: u8) -> Option<u16> {
    if status & 0xFFFF == code as u32 {
        Some((status >> 16) as u16)
    } else {
        None
    }
}
