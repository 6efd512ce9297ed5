//! What a host reads of the ARC management tile and the PCIe tile's own registers: the
//! telemetry table, boot status, the PCIe NIU's configuration in BAR0.
//!
//! Sources (pcie-host-facts.md §2.1, §2.3, §2.6, §2.8): tt-kmd `blackhole.c`
//! (`blackhole_populate_telemetry_cache`), tt-umd `blackhole_arc_telemetry_reader.cpp`,
//! `telemetry.hpp`, `blackhole_implementation.hpp`, `hang_detector.cpp`; tt-kmd
//! `test/tlbs.cpp` (`is_blackhole_noc_translation_enabled`).

/// ARC's NoC0 coordinates (the same in the translated system).
pub const ARC_XY: (u8, u8) = crate::grid::ARC;
/// The NoC address of ARC's APB space as a TLB window reaches it (`0x8000_0000 + offset`).
pub const ARC_APB_NOC_BASE: u64 = 0x8000_0000;
/// ARC's APB space in BAR0, usable only when the PCIe tile in use is at NoC0 x = 11 (p100).
pub const ARC_APB_BAR0: u32 = 0x1FF0_0000;
/// `RESET_SCRATCH(n)` = `RESET_SCRATCH_BASE + 4 n` (ARC NoC address).
pub const RESET_SCRATCH_BASE: u64 = 0x8003_0400;
/// `SCRATCH_RAM_2`: ARC boot status; ready when `value & 7 == ARC_BOOT_READY`.
pub const SCRATCH_RAM_2: u64 = RESET_SCRATCH_BASE + 4 * 2;
/// The ready value of `SCRATCH_RAM_2 & 7`.
pub const ARC_BOOT_READY: u32 = 5;
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
}

/// BAR0 offset of the PCIe NIU0's `NIU_CFG_0` (bit 14: translation on for TLB targets).
pub const PCIE_NIU_CFG_0_BAR0: u32 = crate::niu::PCIE_NIU0_BAR0 + crate::niu::NOC_CFG_OFFSET as u32;
/// BAR0 offset of the PCIe NIU0's `NOC_NODE_ID` (bits 0..5 x, 6..11 y); reading 0xFFFF_FFFF
/// there means the device is hung (tt-umd `hang_detector.cpp`).
pub const PCIE_NOC_NODE_ID_BAR0: u32 =
    crate::niu::PCIE_NIU0_BAR0 + crate::niu::cmd::NOC_NODE_ID as u32;
/// The value every read returns from a hung or reset device.
pub const HUNG_READ: u32 = 0xFFFF_FFFF;
