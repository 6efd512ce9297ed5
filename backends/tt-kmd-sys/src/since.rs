//! The first tt-kmd release (semantic version, as GET_DRIVER_INFO reports it) with each feature
//! newer than API 2 itself (`git describe --contains` of the commit that added it).

/// API version 2, the semantic version in GET_DRIVER_INFO, `ALLOCATE_DMA_BUF_NOC_DMA`.
pub const API_2: (u8, u8, u8) = (2, 0, 0);
/// SET_NOC_CLEANUP.
pub const SET_NOC_CLEANUP: (u8, u8, u8) = (2, 2, 0);
/// Reset flags 3..=6 (USER_RESET, ASIC_RESET, ASIC_DMC_RESET, POST_RESET).
pub const RESET_ASIC_FLAGS: (u8, u8, u8) = (2, 4, 0);
/// SET_POWER_STATE, and `O_APPEND` at open meaning "power-aware" (initial power state 0).
pub const SET_POWER_STATE: (u8, u8, u8) = (2, 6, 0);
/// `LOCK_CTL_ACQUIRE_BLOCKING`.
pub const LOCK_ACQUIRE_BLOCKING: (u8, u8, u8) = (2, 7, 0);
/// `PIN_PAGES_READ_ONLY`.
pub const PIN_PAGES_READ_ONLY: (u8, u8, u8) = (2, 9, 0);
/// EXPORT_TLB_DMABUF (also needs Linux 5.8 or later).
pub const EXPORT_TLB_DMABUF: (u8, u8, u8) = (2, 10, 0);
/// `O_EXCL` at open meaning an exclusive open.
pub const OPEN_EXCLUSIVE: (u8, u8, u8) = (2, 10, 0);
