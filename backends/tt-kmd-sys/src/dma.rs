//! The structs of the ioctls for memory the device reaches by DMA: ALLOCATE_DMA_BUF and
//! FREE_DMA_BUF (driver-allocated buffers), PIN_PAGES and UNPIN_PAGES (host pages), and
//! MAP_PEER_BAR (another device's BAR).

use crate::size::size_u32;

/// ALLOCATE_DMA_BUF input.
#[doc(alias = "tenstorrent_allocate_dma_buf_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateDmaBufIn {
    /// Bytes: a nonzero multiple of the page size, at most `1 << max_dma_buf_size_log2`.
    pub requested_size: u32,
    /// The buffer's index, below [`MAX_DMA_BUFS`](crate::MAX_DMA_BUFS) and unused on this fd.
    pub buf_index: u8,
    /// [`ALLOCATE_DMA_BUF_NOC_DMA`](crate::ALLOCATE_DMA_BUF_NOC_DMA) or 0.
    pub flags: u8,
    /// Reserved.
    pub reserved0: [u8; 2],
    /// Reserved.
    pub reserved1: [u64; 2],
}

/// ALLOCATE_DMA_BUF output.
#[doc(alias = "tenstorrent_allocate_dma_buf_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateDmaBufOut {
    /// The buffer's physical address or IOVA, as the device sees it.
    pub physical_address: u64,
    /// The mmap offset to map it at.
    pub mapping_offset: u64,
    /// Its size.
    pub size: u32,
    /// Reserved.
    pub reserved0: u32,
    /// Its NoC address (valid with
    /// [`ALLOCATE_DMA_BUF_NOC_DMA`](crate::ALLOCATE_DMA_BUF_NOC_DMA)).
    pub noc_address: u64,
    /// Reserved.
    pub reserved1: u64,
}

/// ALLOCATE_DMA_BUF (fixed struct).
#[doc(alias = "tenstorrent_allocate_dma_buf")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateDmaBuf {
    /// C `in`.
    pub input: AllocateDmaBufIn,
    /// C `out`.
    pub output: AllocateDmaBufOut,
}

/// FREE_DMA_BUF input (empty).
#[doc(alias = "tenstorrent_free_dma_buf_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeDmaBufIn {}

/// FREE_DMA_BUF output (empty).
#[doc(alias = "tenstorrent_free_dma_buf_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeDmaBufOut {}

/// FREE_DMA_BUF (size 0). The driver always answers `EINVAL`: buffers live until the fd closes.
#[doc(alias = "tenstorrent_free_dma_buf")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeDmaBuf {
    /// C `in`.
    pub input: FreeDmaBufIn,
    /// C `out`.
    pub output: FreeDmaBufOut,
}

/// PIN_PAGES input.
#[doc(alias = "tenstorrent_pin_pages_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PinPagesIn {
    /// Bytes of `out` the kernel may clear and write: 8 ([`PinPagesOut`]) or 16
    /// ([`PinPagesOutExtended`], to get the NoC address).
    pub output_size_bytes: u32,
    /// `PIN_PAGES_*` bits.
    pub flags: u32,
    /// Page-aligned start of the memory to pin.
    pub virtual_address: u64,
    /// Page-aligned nonzero length.
    pub size: u64,
}

impl Default for PinPagesIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<PinPagesOut>(),
            flags: 0,
            virtual_address: 0,
            size: 0,
        }
    }
}

/// PIN_PAGES output.
#[doc(alias = "tenstorrent_pin_pages_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PinPagesOut {
    /// The pinned memory's physical address or IOVA.
    pub physical_address: u64,
}

/// PIN_PAGES output with the NoC address (`output_size_bytes` = 16).
#[doc(alias = "tenstorrent_pin_pages_out_extended")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PinPagesOutExtended {
    /// The pinned memory's physical address or IOVA.
    pub physical_address: u64,
    /// Its NoC address (with [`PIN_PAGES_NOC_DMA`](crate::PIN_PAGES_NOC_DMA)).
    pub noc_address: u64,
}

/// UNPIN_PAGES input. Only a whole pinning can be unpinned.
#[doc(alias = "tenstorrent_unpin_pages_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnpinPagesIn {
    /// The virtual address that was pinned (the original one, even if remapped since).
    pub virtual_address: u64,
    /// The size that was pinned.
    pub size: u64,
    /// Reserved, must be 0.
    pub reserved: u64,
}

/// UNPIN_PAGES output (empty).
#[doc(alias = "tenstorrent_unpin_pages_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnpinPagesOut {}

/// UNPIN_PAGES (fixed struct).
#[doc(alias = "tenstorrent_unpin_pages")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnpinPages {
    /// C `in`.
    pub input: UnpinPagesIn,
    /// C `out`.
    pub output: UnpinPagesOut,
}

/// PIN_PAGES (`output_size_bytes` convention), with the 8-byte output.
#[doc(alias = "tenstorrent_pin_pages")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PinPages {
    /// C `in`.
    pub input: PinPagesIn,
    /// C `out`.
    pub output: PinPagesOut,
}

/// PIN_PAGES with the 16-byte output (not a struct of `ioctl.h`: `tenstorrent_pin_pages` with
/// `tenstorrent_pin_pages_out_extended` as its `out`, which the driver fills when
/// `output_size_bytes` is 16, the `Default` here).
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PinPagesExtended {
    /// C `in`.
    pub input: PinPagesIn,
    /// C `out`, extended.
    pub output: PinPagesOutExtended,
}

impl Default for PinPagesExtended {
    fn default() -> Self {
        Self {
            input: PinPagesIn {
                output_size_bytes: size_u32::<PinPagesOutExtended>(),
                ..PinPagesIn::default()
            },
            output: PinPagesOutExtended::default(),
        }
    }
}

/// MAP_PEER_BAR input.
#[doc(alias = "tenstorrent_map_peer_bar_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MapPeerBarIn {
    /// An fd of another tt-kmd device of the same class.
    pub peer_fd: u32,
    /// The peer's BAR index.
    pub peer_bar_index: u32,
    /// Offset in that BAR.
    pub peer_bar_offset: u32,
    /// Length to map.
    pub peer_bar_length: u32,
    /// Must be 0.
    pub flags: u32,
    /// Reserved.
    pub reserved: u32,
}

/// MAP_PEER_BAR output.
#[doc(alias = "tenstorrent_map_peer_bar_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MapPeerBarOut {
    /// The DMA address at which this device reaches the peer's BAR range.
    pub dma_address: u64,
    /// Reserved.
    pub reserved: u64,
}

/// MAP_PEER_BAR (fixed struct).
#[doc(alias = "tenstorrent_map_peer_bar")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MapPeerBar {
    /// C `in`.
    pub input: MapPeerBarIn,
    /// C `out`.
    pub output: MapPeerBarOut,
}
