//! The host's messages to Wormhole's ARC: a code into a reset-unit scratch register, an
//! interrupt, and the answer in two others. Sources: tt-umd
//! `device/api/umd/device/arch/wormhole_implementation.hpp` (`ARC_MSG_COMMON_PREFIX`,
//! `ARC_RESET_SCRATCH_OFFSET`, `ARC_RESET_ARC_MISC_CNTL_OFFSET`, `ARC_RESET_SCRATCH_RES0_OFFSET`,
//! `ARC_RESET_SCRATCH_RES1_OFFSET`, `ARC_RESET_SCRATCH_STATUS_OFFSET`, `arc_message_type`); ttsim
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
/// The argument word of a message that takes none: tt-umd's default arguments `0xFFFF,
/// 0xFFFF` ("firmware treats 0xFFFFFFFF as no argument", `WormholeArcMessenger`).
pub const NO_ARGUMENT: u32 = 0xFFFF_FFFF;
/// BAR0 offsets ARC answers at: its CSM and its APB registers.
pub const BAR0_ARC: core::ops::Range<u32> = 0x1FE8_0000..0x2000_0000;

/// BAR0 offset of ARC's CSM (its 512 KiB of on-chip memory, ARC address
/// [`CSM_BASE`]; tt-umd `ARC_CSM_BAR0_XBAR_OFFSET_START`).
pub const CSM_BAR0: u32 = 0x1FE8_0000;
/// ARC's address of its CSM (tt-kmd `telemetry.h` `ARC_CSM_BASE`).
pub const CSM_BASE: u32 = 0x1000_0000;
/// Bytes of CSM (tt-kmd `ARC_CSM_SIZE`, `1 << 19`).
pub const CSM_SIZE: u32 = 1 << 19;
/// CSM offset of the PCIe DMA request word, nonzero while ARC serves a host DMA (tt-umd
/// `ARC_CSM_ARC_PCIE_DMA_REQUEST`).
pub const CSM_PCIE_DMA_REQUEST: u32 = 0x7_84D4;
/// BAR0 offset of the reset unit's `NOC_NODEID_X_0`, which the ARC firmware from bundle 18.4
/// fills with the CSM address of its telemetry table (tt-umd
/// `WormholeArcTelemetryReader::get_telemetry_address`; tt-kmd `ARC_TELEMETRY_PTR`).
pub const TELEMETRY_TABLE_PTR_BAR0: u32 = 0x1FF3_01D0;
/// BAR0 offset of `NOC_NODEID_Y_0`: the CSM address of the telemetry data (tt-kmd
/// `ARC_TELEMETRY_DATA`).
pub const TELEMETRY_DATA_PTR_BAR0: u32 = 0x1FF3_01D4;
/// BAR0 offset of the ARC tile's NoC0 NIU (tt-umd `NIU_CFG_NOC0_BAR_ARC_ADDR`; the ISA's
/// `WormholeB0/ARCTile` APB map, 0x5_0000).
pub const ARC_NIU0_BAR0: u32 = 0x1FF5_0000;
/// BAR0 offset of the ARC NIU's `NOC_NODE_ID`: 0xFFFF_FFFF from a hung bus (tt-umd
/// `WormholeHangDetector::read_hang_check_reg_via_bar`).
pub const ARC_NOC_NODE_ID_BAR0: u32 = ARC_NIU0_BAR0 + 0x2C;
/// BAR0 offset of the ARC NIU's `NIU_CFG_0`, bit 14 set when the firmware turned NoC
/// translation on (tt-umd `WormholeTTDevice::get_noc_translation_enabled`).
pub const ARC_NIU_CFG_0_BAR0: u32 = ARC_NIU0_BAR0 + 0x100;
/// `NIU_CFG_0`'s translation bit.
pub const NIU_CFG_0_TRANSLATE: u32 = 1 << 14;
/// What a read of a hung bus returns.
pub const HUNG_READ: u32 = 0xFFFF_FFFF;

/// ARC's boot as scratch register 5 and the post code (scratch 0) show it (tt-umd
/// `WormholeTTDevice::wait_arc_core_start`, whose table luwen's `check_arc_msg_safe` shares).
pub mod boot {
    /// Scratch 5 of a chip whose ARC watchdog fired (`STATUS_WATCHDOG_TRIGGERED`).
    pub const WATCHDOG: u32 = 0xDEAD_C0DE;
    /// Scratch 5 once the firmware finished its start (`STATUS_INIT_DONE_1`).
    pub const INIT_DONE_1: u32 = 1;
    /// The same, from other firmware (`STATUS_INIT_DONE_2`).
    pub const INIT_DONE_2: u32 = 0xFFFF_DEAD;
    /// Scratch 5 of firmware still starting (`STATUS_BOOT_INCOMPLETE_1`, `_2`).
    pub const BOOT_INCOMPLETE: [u32; 2] = [0x60, 0x1111_0000];
    /// Scratch 5 of a sleeping ARC (`STATUS_ASLEEP_1`, `_2`).
    pub const ASLEEP: [u32; 2] = [0xAA00, 0x55];
    /// Scratch 5 of older firmware, which reports in the post code (`STATUS_OLD_POST_CODE`).
    pub const OLD_POST_CODE: u32 = 0;
    /// The post code of a finished start (`POST_CODE_INIT_DONE`).
    pub const POST_CODE_INIT_DONE: u32 = 0xC0DE_0001;
    /// Post codes of an idle message loop (`POST_CODE_ARC_MSG_HANDLE_DONE` ..=
    /// `POST_CODE_ARC_TIME_LAST`).
    pub const POST_CODE_IDLE: core::ops::RangeInclusive<u32> = 0xC0DE_003F..=0xC0DE_007F;
}

/// Telemetry tags. From bundle 18.4 a table of `tag | offset << 16` entries over a data array
/// (tt-umd `telemetry.hpp` `TelemetryTag`, tt-kmd `telemetry.h`); before it, a flat table
/// indexed by tag whose address message [`msg::GET_SMBUS_TELEMETRY_ADDR`] gives (tt-umd
/// `wormhole_telemetry.hpp` `LegacyTelemetryTag`).
pub mod tag {
    /// The AICLK now, MHz.
    pub const AICLK: u16 = 14;
    /// Each DRAM channel's training, 2 bits a channel: 0b01 trained, 0b00 training, else
    /// failed (tt-umd `get_dram_training_status`).
    pub const GDDR_STATUS: u16 = 22;
    /// The firmware bundle version (major, minor, patch, pre: a byte each from the top).
    pub const FLASH_BUNDLE_VERSION: u16 = 28;
    /// The highest AICLK the firmware allows, MHz (bundle 18.8 and later).
    pub const AICLK_LIMIT_MAX: u16 = 63;
    /// Legacy flat table: DRAM training, 4 bits a channel: 2 trained, 3 skipped, 0 training,
    /// else failed.
    pub const LEGACY_DDR_STATUS: u16 = 14;
    /// Legacy flat table: AICLK now in bits 0..16, the highest in 16..32.
    pub const LEGACY_AICLK: u16 = 24;
    /// Legacy flat table: the firmware bundle version.
    pub const LEGACY_FW_BUNDLE_VERSION: u16 = 49;
    /// Legacy flat table: words.
    pub const LEGACY_TAGS: u16 = 50;
}

/// Message codes (tt-umd `wormhole::arc_message_type`).
pub mod msg {
    /// The CSM address of the legacy flat telemetry table (`GET_SMBUS_TELEMETRY_ADDR`).
    pub const GET_SMBUS_TELEMETRY_ADDR: u8 = 0x2C;
    /// The AICLK now, MHz (`GET_AICLK`).
    pub const GET_AICLK: u8 = 0x34;
    /// Raise AICLK to the busy clock (`ARC_GO_BUSY`).
    pub const ARC_GO_BUSY: u8 = 0x52;
    /// Lower AICLK to idle (`ARC_GO_LONG_IDLE`).
    pub const ARC_GO_LONG_IDLE: u8 = 0x54;
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
