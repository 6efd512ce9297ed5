//! The constants of `ioctl.h`: the API version and the ioctl magic, the mapping ids, the limits,
//! and each ioctl's flag values (with `power_validity`, the C macro `TT_POWER_VALIDITY`). Imports
//! none of the crate's other files.

/// The ioctl API version this crate describes, the `driver_version` GET_DRIVER_INFO returns.
pub const TENSTORRENT_DRIVER_VERSION: u32 = 2;

/// The ioctl "magic" (type) byte of every request: `_IO(0xFA, n)`.
pub const TENSTORRENT_IOCTL_MAGIC: u8 = 0xFA;

/// `mapping_id` of an unused [`Mapping`](crate::Mapping) entry (the kernel zeroes unused entries).
#[doc(alias = "TENSTORRENT_MAPPING_UNUSED")]
pub const MAPPING_UNUSED: u32 = 0;
/// `mapping_id` of BAR0, uncached.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE0_UC")]
pub const MAPPING_RESOURCE0_UC: u32 = 1;
/// `mapping_id` of BAR0, write-combined.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE0_WC")]
pub const MAPPING_RESOURCE0_WC: u32 = 2;
/// `mapping_id` of BAR2, uncached.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE1_UC")]
pub const MAPPING_RESOURCE1_UC: u32 = 3;
/// `mapping_id` of BAR2, write-combined.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE1_WC")]
pub const MAPPING_RESOURCE1_WC: u32 = 4;
/// `mapping_id` of BAR4, uncached.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE2_UC")]
pub const MAPPING_RESOURCE2_UC: u32 = 5;
/// `mapping_id` of BAR4, write-combined.
#[doc(alias = "TENSTORRENT_MAPPING_RESOURCE2_WC")]
pub const MAPPING_RESOURCE2_WC: u32 = 6;

/// DMA buffers per fd (`buf_index` is below this).
#[doc(alias = "TENSTORRENT_MAX_DMA_BUFS")]
pub const MAX_DMA_BUFS: u32 = 256;
/// Upper bound of a TLB window id (FREE_TLB and CONFIGURE_TLB refuse ids at or above it).
#[doc(alias = "TENSTORRENT_MAX_INBOUND_TLBS")]
pub const MAX_INBOUND_TLBS: u32 = 256;
/// Resource locks per device (LOCK_CTL `index` is below this).
#[doc(alias = "TENSTORRENT_RESOURCE_LOCK_COUNT")]
pub const RESOURCE_LOCK_COUNT: u8 = 64;

/// `AllocateDmaBufIn::flags`: also map the buffer for NoC DMA (`out.noc_address` is valid).
#[doc(alias = "TENSTORRENT_ALLOCATE_DMA_BUF_NOC_DMA")]
pub const ALLOCATE_DMA_BUF_NOC_DMA: u8 = 2;

/// Legacy `ResetDeviceIn::flags`: restore the PCI state after a reset done elsewhere.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_RESTORE_STATE")]
pub const RESET_DEVICE_RESTORE_STATE: u32 = 0;
/// Legacy `ResetDeviceIn::flags`: retrain the PCIe link.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_RESET_PCIE_LINK")]
pub const RESET_DEVICE_RESET_PCIE_LINK: u32 = 1;
/// Legacy `ResetDeviceIn::flags`: a config-space write reset.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_CONFIG_WRITE")]
pub const RESET_DEVICE_CONFIG_WRITE: u32 = 2;
/// `ResetDeviceIn::flags` (2.4.0+): a user reset.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_USER_RESET")]
pub const RESET_DEVICE_USER_RESET: u32 = 3;
/// `ResetDeviceIn::flags` (2.4.0+): an ASIC reset.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_ASIC_RESET")]
pub const RESET_DEVICE_ASIC_RESET: u32 = 4;
/// `ResetDeviceIn::flags` (2.4.0+): an ASIC and DMC reset.
#[doc(alias = "TENSTORRENT_RESET_DEVICE_ASIC_DMC_RESET")]
pub const RESET_DEVICE_ASIC_DMC_RESET: u32 = 5;
/// `ResetDeviceIn::flags` (2.4.0+): the step after a reset (re-initialise the device).
#[doc(alias = "TENSTORRENT_RESET_DEVICE_POST_RESET")]
pub const RESET_DEVICE_POST_RESET: u32 = 6;

/// `PinPagesIn::flags`: the caller attests that the pages are physically contiguous.
#[doc(alias = "TENSTORRENT_PIN_PAGES_CONTIGUOUS")]
pub const PIN_PAGES_CONTIGUOUS: u32 = 1;
/// `PinPagesIn::flags`: also map the pages for NoC DMA (use
/// [`PinPagesExtended`](crate::PinPagesExtended) to get the NoC address).
#[doc(alias = "TENSTORRENT_PIN_PAGES_NOC_DMA")]
pub const PIN_PAGES_NOC_DMA: u32 = 2;
/// `PinPagesIn::flags`: allocate the NoC DMA address top-down (default bottom-up).
#[doc(alias = "TENSTORRENT_PIN_PAGES_NOC_TOP_DOWN")]
pub const PIN_PAGES_NOC_TOP_DOWN: u32 = 4;
/// `PinPagesIn::flags` (2.9.0+): the device only reads; needs IOMMU translation.
#[doc(alias = "TENSTORRENT_PIN_PAGES_READ_ONLY")]
pub const PIN_PAGES_READ_ONLY: u32 = 8;

/// `LockCtlIn::flags`: try to take the lock (`out.value` 1 = acquired, 0 = held by another).
#[doc(alias = "TENSTORRENT_LOCK_CTL_ACQUIRE")]
pub const LOCK_CTL_ACQUIRE: u32 = 0;
/// `LockCtlIn::flags`: release it (`out.value` 1 = released, 0 = not held by this fd).
#[doc(alias = "TENSTORRENT_LOCK_CTL_RELEASE")]
pub const LOCK_CTL_RELEASE: u32 = 1;
/// `LockCtlIn::flags`: test it (`out.value` bit 0 = held by this fd, bit 1 = held by any).
#[doc(alias = "TENSTORRENT_LOCK_CTL_TEST")]
pub const LOCK_CTL_TEST: u32 = 2;
/// `LockCtlIn::flags` (2.7.0+): wait until acquired (`out.value` 1).
#[doc(alias = "TENSTORRENT_LOCK_CTL_ACQUIRE_BLOCKING")]
pub const LOCK_CTL_ACQUIRE_BLOCKING: u32 = 3;
/// The conventional lock index of Ethernet core 00; `ETHnn` is index `nn`, for 00..=15
/// (`TENSTORRENT_LOCK_INDEX_ETH00` .. `_ETH15`).
#[doc(alias = "TENSTORRENT_LOCK_INDEX_ETH00")]
pub const LOCK_INDEX_ETH00: u8 = 0;
/// How many conventional Ethernet lock indices there are (00..=15).
pub const LOCK_INDEX_ETH_COUNT: u8 = 16;

/// `PowerState::power_flags` bit: 1 = maximum AICLK, 0 = minimum.
#[doc(alias = "TT_POWER_FLAG_MAX_AI_CLK")]
pub const POWER_FLAG_MAX_AI_CLK: u16 = 1 << 0;
/// `PowerState::power_flags` bit: 1 = (DRAM) PHY awake, 0 = powered down.
#[doc(alias = "TT_POWER_FLAG_MRISC_PHY_WAKEUP")]
pub const POWER_FLAG_MRISC_PHY_WAKEUP: u16 = 1 << 1;
/// `PowerState::power_flags` bit: 1 = Tensix enabled, 0 = clock-gated.
#[doc(alias = "TT_POWER_FLAG_TENSIX_ENABLE")]
pub const POWER_FLAG_TENSIX_ENABLE: u16 = 1 << 2;
/// `PowerState::power_flags` bit: 1 = L2CPU enabled, 0 = clock-gated.
#[doc(alias = "TT_POWER_FLAG_L2CPU_ENABLE")]
pub const POWER_FLAG_L2CPU_ENABLE: u16 = 1 << 3;
/// Entries of `PowerState::power_settings`.
pub const POWER_SETTINGS_COUNT: usize = 14;

/// `PowerState::validity` for `flags_count` valid flags (bits 0..4) and `settings_count` valid
/// settings (bits 4..8); each count is masked to 4 bits like the C macro. The driver refuses a
/// value above `power_validity(15, 14)`. Flags past `flags_count` count as *on* in the
/// driver's aggregation, so name every flag you mean to turn off.
#[doc(alias = "TT_POWER_VALIDITY")]
pub const fn power_validity(flags_count: u8, settings_count: u8) -> u8 {
    (flags_count & 0xF) | ((settings_count & 0xF) << 4)
}
