//! Numbers of the driver outside `ioctl.h`: the PCI ids (`enumerate.h`) and the mmap offsets of
//! the BARs, TLB windows and DMA buffers (`memory.c`). Imports none of the crate's other files.

/// PCI vendor id of Tenstorrent.
pub const PCI_VENDOR_ID_TENSTORRENT: u16 = 0x1E52;
/// PCI device id of Blackhole.
pub const PCI_DEVICE_ID_BLACKHOLE: u16 = 0xB140;
/// PCI device id of Wormhole.
pub const PCI_DEVICE_ID_WORMHOLE: u16 = 0x401E;
/// PCI device id of Grayskull.
pub const PCI_DEVICE_ID_GRAYSKULL: u16 = 0xFACA;

/// The span of mmap offsets each BAR mapping kind owns (2^36).
pub const MMAP_RESOURCE_SIZE: u64 = 1 << 36;
/// mmap offset of BAR0, uncached (plus the offset in the BAR).
pub const MMAP_OFFSET_RESOURCE0_UC: u64 = 0 << 36;
/// mmap offset of BAR0, write-combined.
pub const MMAP_OFFSET_RESOURCE0_WC: u64 = 1 << 36;
/// mmap offset of BAR2, uncached.
pub const MMAP_OFFSET_RESOURCE1_UC: u64 = 2 << 36;
/// mmap offset of BAR2, write-combined.
pub const MMAP_OFFSET_RESOURCE1_WC: u64 = 3 << 36;
/// mmap offset of BAR4, uncached.
pub const MMAP_OFFSET_RESOURCE2_UC: u64 = 4 << 36;
/// mmap offset of BAR4, write-combined.
pub const MMAP_OFFSET_RESOURCE2_WC: u64 = 5 << 36;
/// Base of the mmap offsets of TLB windows, uncached. A window's offset is this plus its offset
/// in BAR0 (a BAR4 window: plus 512 MiB plus its offset in BAR4); ALLOCATE_TLB returns it as
/// `mmap_offset_uc`. The mapping must start exactly there and be at most the window long.
pub const MMAP_OFFSET_TLB_UC: u64 = 6 << 36;
/// Base of the mmap offsets of TLB windows, write-combined (`mmap_offset_wc`).
pub const MMAP_OFFSET_TLB_WC: u64 = 7 << 36;

/// The mmap offset of DMA buffer `buf_index` on a host with pages of `page_size` bytes:
/// `(page_size - 256 + buf_index) << 32` (memory.c). `None` if `page_size` is below 256 or the
/// result overflows. ALLOCATE_DMA_BUF returns the offset as `mapping_offset`: use that.
pub const fn dma_buf_mmap_offset(page_size: u64, buf_index: u8) -> Option<u64> {
    match page_size.checked_sub(256) {
        Some(base) => match base.checked_add(buf_index as u64) {
            Some(pages) if pages >> 32 == 0 => Some(pages << 32),
            _ => None,
        },
        None => None,
    }
}
