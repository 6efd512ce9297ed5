//! What a host reads of the ARC management tile and the PCIe tile's own registers: the
//! telemetry table, boot status, the PCIe NIU's configuration in BAR0.
//!
//! Sources (docs/blackhole.md, "PCIe BARs", "Translated coordinates", "ARC telemetry" and
//! "ARC messages"): tt-kmd `blackhole.c`
//! (`blackhole_populate_telemetry_cache`), tt-umd `blackhole_arc_telemetry_reader.cpp`,
//! `telemetry.hpp`, `blackhole_implementation.hpp`, `hang_detector.cpp`; tt-kmd
//! `test/tlbs.cpp` (`is_blackhole_noc_translation_enabled`).

/// ARC's NoC0 coordinates (the same in the translated system).
pub const ARC_XY: (u8, u8) = crate::grid::ARC;
/// The NoC address of ARC's APB space as a TLB window reaches it (`0x8000_0000 + offset`).
pub const ARC_APB_NOC_BASE: u64 = 0x8000_0000;
/// ARC's APB space in BAR0, usable only when the PCIe tile in use is at NoC0 x = 11 (p100).
pub const ARC_APB_BAR0: u32 = 0x1FF0_0000;
/// The ARC reset unit's `SCRATCH_RAM(0)`: `SCRATCH_RAM(n)` = `RESET_SCRATCH_BASE + 4 n`, n < 64
/// (ARC NoC address: APB space `0x8000_0000` + reset unit `0x3_0000` + `0x400`; tt-umd
/// `device/api/umd/device/arch/blackhole_implementation.hpp`, `SCRATCH_RAM_0`; the firmware's
/// `SCRATCH_RAM[0-63]`, tt-zephyr-platforms `lib/tenstorrent/bh_arc/status_reg.h` at 74122be,
/// which uses words up to 63; ttsim's `data/bh/tile_regs.json` models only the first 16).
/// Despite the name, not the reset unit's `SCRATCH(n)` words, which sit at `+ 0x60` (tt-umd
/// `ARC_RESET_SCRATCH_OFFSET`).
pub const RESET_SCRATCH_BASE: u64 = 0x8003_0400;
/// `SCRATCH_RAM_2`: ARC boot status; ready when `value & 7 == ARC_BOOT_READY`.
pub const SCRATCH_RAM_2: u64 = RESET_SCRATCH_BASE + 4 * 2;
/// The ready value of `SCRATCH_RAM_2 & 7`: bit 0 the message queue ready, bits 1..2 the
/// hardware init status 2, done (tt-zephyr-platforms `status_reg.h`, `STATUS_BOOT_STATUS0`,
/// and `init.h`, `HWInitStatus`).
pub const ARC_BOOT_READY: u32 = 5;
/// The hardware init status (bits 1..2 of `SCRATCH_RAM_2`) that says it failed
/// (`kHwInitError`): the firmware stays so until the board is reset, and
/// `STATUS_ERROR_STATUS0` names the stage that failed.
pub const ARC_HW_INIT_ERROR: u32 = 3;
/// `SCRATCH_RAM_12`: pointer to the telemetry data (u32 values).
pub const SCRATCH_RAM_12: u64 = RESET_SCRATCH_BASE + 4 * 12;
/// `SCRATCH_RAM_13`: pointer to the telemetry table (version, count, entries).
pub const SCRATCH_RAM_13: u64 = RESET_SCRATCH_BASE + 4 * 13;
/// ARC CSM, where both telemetry pointers must lie (`0x1000_0000 .. +512 KiB`).
pub const ARC_CSM_BASE: u32 = 0x1000_0000;
/// Bytes of ARC CSM.
pub const ARC_CSM_BYTES: u32 = 512 * 1024;
/// The newest telemetry table major version a reader understands.
pub const TELEMETRY_MAJOR_MAX: u32 = 1;

/// A telemetry table entry: tag in the low half, word offset into the data in the high half.
pub const fn telemetry_entry(tag: u16, offset: u16) -> u32 {
    tag as u32 | (offset as u32) << 16
}

/// The telemetry tags the host uses (tt-umd `telemetry.hpp`).
pub mod tag {
    /// AICLK in MHz.
    pub const AICLK: u16 = 14;
    /// AXICLK in MHz.
    pub const AXICLK: u16 = 15;
    /// ARCCLK in MHz.
    pub const ARCCLK: u16 = 16;
    /// Firmware bundle version (`tt_fw_bundle_ver`).
    pub const FLASH_BUNDLE_VERSION: u16 = 28;
    /// ARC timer heartbeat.
    pub const TIMER_HEARTBEAT: u16 = 32;
    /// Enabled Tensix columns, die order (bit set = enabled).
    pub const ENABLED_TENSIX_COL: u16 = crate::harvest::TELEMETRY_TAG_ENABLED_TENSIX_COL;
    /// Enabled Ethernet channels.
    pub const ENABLED_ETH: u16 = 35;
    /// Enabled GDDR banks (bit set = enabled); a p100 has one fused
    /// ([`DramBanks::from_enabled_gddr`](crate::harvest::DramBanks::from_enabled_gddr)).
    pub const ENABLED_GDDR: u16 = crate::harvest::TELEMETRY_TAG_ENABLED_GDDR;
    /// Whether NoC coordinate translation is on.
    pub const NOC_TRANSLATION: u16 = 40;
    /// GDDR training status, two bits per channel from channel 0 in bits 1:0: `0b01` trained,
    /// `0b10` or `0b11` failed, `0b00` still training (tt-umd
    /// `firmware_info_provider_implementation.cpp`, `decode_dram_status_bits`). From firmware
    /// 19.7.0 the upper half reports each channel's BIST the same way.
    pub const GDDR_STATUS: u16 = 22;
    /// The highest AICLK the firmware allows, in MHz: the busy clock tt-umd waits for
    /// (`get_max_clock_freq`).
    pub const AICLK_LIMIT_MAX: u16 = 63;
}

/// BAR0 offset of the PCIe NIU0's `NIU_CFG_0` (bit 14: translation on for TLB targets).
pub const PCIE_NIU_CFG_0_BAR0: u32 = crate::niu::PCIE_NIU0_BAR0 + crate::niu::NOC_CFG_OFFSET as u32;
/// BAR0 offset of the PCIe NIU0's `NOC_NODE_ID` (bits 0..5 x, 6..11 y); reading 0xFFFF_FFFF
/// there means the device is hung (tt-umd `hang_detector.cpp`).
pub const PCIE_NOC_NODE_ID_BAR0: u32 =
    crate::niu::PCIE_NIU0_BAR0 + crate::niu::cmd::NOC_NODE_ID as u32;
/// The value every read returns from a hung or reset device.
pub const HUNG_READ: u32 = 0xFFFF_FFFF;

/// ARC's message queues as a host uses them (tt-umd `device/arc/blackhole_arc_message_queue.cpp`
/// and its header, `blackhole_implementation.hpp`, `types/blackhole_arc.hpp`).
///
/// `SCRATCH_RAM_11` holds the ARC address of the queue control block: a u64 with the first
/// queue's address in bits 31:0, entries per queue in bits 39:32 and the number of queues in
/// bits 47:40. Each queue is a [`msg::HEADER_BYTES`] header, then `n` request entries, then `n`
/// response entries, [`msg::ENTRY_BYTES`] each. The pointers wrap at `2 n`, so that a full queue
/// (`wptr - rptr == n`) differs from an empty one.
pub mod msg {
    /// `SCRATCH_RAM_11`: the ARC address of the queue control block.
    pub const SCRATCH_RAM_11: u64 = super::RESET_SCRATCH_BASE + 4 * 11;
    /// The reset unit's `ARC_MISC_CNTL` (tt-umd `ARC_FW_INT_ADDR` = reset unit + 0x100), as a
    /// window reaches it: writing [`ARC_MISC_CNTL_IRQ`] there interrupts the ARC firmware.
    pub const ARC_MISC_CNTL: u64 = super::ARC_APB_NOC_BASE + 0x3_0100;
    /// The IRQ bit of `ARC_MISC_CNTL` (tt-umd `ARC_FW_INT_VAL` = 65536).
    pub const ARC_MISC_CNTL_IRQ: u32 = 1 << 16;
    /// Bytes of a queue's header.
    pub const HEADER_BYTES: u32 = 32;
    /// Bytes of one request or response entry (8 words: the message code or status word, then
    /// up to 7 arguments or return values).
    pub const ENTRY_BYTES: u32 = 32;
    /// Header word: the request write pointer (the host's).
    pub const REQUEST_WPTR: u32 = 0;
    /// Header word: the response read pointer (the host's).
    pub const RESPONSE_RPTR: u32 = 1;
    /// Header word: the request read pointer (ARC's).
    pub const REQUEST_RPTR: u32 = 4;
    /// Header word: the response write pointer (ARC's).
    pub const RESPONSE_WPTR: u32 = 5;
    /// The queue an application uses (tt-umd `BlackholeArcMessageQueueIndex::APPLICATION`; 0
    /// is the driver's, 1 monitoring, 2 tools).
    pub const APPLICATION_QUEUE: u32 = 3;
    /// A response's status (`word0 & 0xFF`) below this is success; the return value is then
    /// `word0 >> 16`.
    pub const RESPONSE_OK_LIMIT: u32 = 240;
    /// The status of a message code the firmware does not know.
    pub const STATUS_UNKNOWN_CODE: u32 = 0xFF;

    /// Message codes (tt-umd `blackhole::ArcMessageType`).
    pub mod code {
        /// A no-op in tt-umd's list, which the firmware does not support: it answers
        /// [`STATUS_UNKNOWN_CODE`](super::STATUS_UNKNOWN_CODE) (tt-zephyr-platforms
        /// `include/tenstorrent/smc_msg.h` listed `TT_SMC_MSG_NOP`, "not supported", with no
        /// handler registered, until 04e4e3b of 2026-04-07 dropped the code). komorebi sends it
        /// to no card.
        pub const NOP: u32 = 0x11;
        /// Raise AICLK to the busy clock.
        pub const AICLK_GO_BUSY: u32 = 0x52;
        /// Lower AICLK to the idle clock.
        pub const AICLK_GO_LONG_IDLE: u32 = 0x54;
        /// Retrain GDDR channel `arg0`.
        pub const TOGGLE_GDDR_RESET: u32 = 0xB6;
    }
}
