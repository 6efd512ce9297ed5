//! The request numbers `n` of `_IO(0xFA, n)`, on every host. The full request code is
//! `0xFA00 | n` (the Linux opcodes are the `IOCTL_*` constants at the crate root).

/// `TENSTORRENT_IOCTL_GET_DEVICE_INFO`.
pub const GET_DEVICE_INFO: u8 = 0;
/// `TENSTORRENT_IOCTL_GET_HARVESTING` (a no-op that returns `EINVAL`).
pub const GET_HARVESTING: u8 = 1;
/// `TENSTORRENT_IOCTL_QUERY_MAPPINGS`.
pub const QUERY_MAPPINGS: u8 = 2;
/// `TENSTORRENT_IOCTL_ALLOCATE_DMA_BUF`.
pub const ALLOCATE_DMA_BUF: u8 = 3;
/// `TENSTORRENT_IOCTL_FREE_DMA_BUF` (always `EINVAL`: buffers are freed on close).
pub const FREE_DMA_BUF: u8 = 4;
/// `TENSTORRENT_IOCTL_GET_DRIVER_INFO`.
pub const GET_DRIVER_INFO: u8 = 5;
/// `TENSTORRENT_IOCTL_RESET_DEVICE`.
pub const RESET_DEVICE: u8 = 6;
/// `TENSTORRENT_IOCTL_PIN_PAGES`.
pub const PIN_PAGES: u8 = 7;
/// `TENSTORRENT_IOCTL_LOCK_CTL`.
pub const LOCK_CTL: u8 = 8;
/// `TENSTORRENT_IOCTL_MAP_PEER_BAR`.
pub const MAP_PEER_BAR: u8 = 9;
/// `TENSTORRENT_IOCTL_UNPIN_PAGES`.
pub const UNPIN_PAGES: u8 = 10;
/// `TENSTORRENT_IOCTL_ALLOCATE_TLB`.
pub const ALLOCATE_TLB: u8 = 11;
/// `TENSTORRENT_IOCTL_FREE_TLB`.
pub const FREE_TLB: u8 = 12;
/// `TENSTORRENT_IOCTL_CONFIGURE_TLB`.
pub const CONFIGURE_TLB: u8 = 13;
/// `TENSTORRENT_IOCTL_SET_NOC_CLEANUP` (tt-kmd 2.2.0+).
pub const SET_NOC_CLEANUP: u8 = 14;
/// `TENSTORRENT_IOCTL_SET_POWER_STATE` (tt-kmd 2.6.0+).
pub const SET_POWER_STATE: u8 = 15;
/// `TENSTORRENT_IOCTL_EXPORT_TLB_DMABUF` (tt-kmd 2.10.0+).
pub const EXPORT_TLB_DMABUF: u8 = 16;
