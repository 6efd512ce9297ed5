//! # tt-kmd-sys
//!
//! The raw ioctl ABI of tt-kmd, Tenstorrent's Linux kernel driver, at ioctl API version 2
//! ([`TENSTORRENT_DRIVER_VERSION`]), read from the driver's `ioctl.h` (tt-kmd 4af7192,
//! driver 2.10.x) and nothing more:
//!
//! * every request number (0..=16), as `rustix` opcodes on Linux ([`IOCTL_ALLOCATE_TLB`], ...)
//!   and as plain numbers everywhere ([`nr`]);
//! * every in/out struct, `#[repr(C)]` with every reserved field of the header spelled out (no
//!   implicit padding, so no uninitialised bytes ever reach the kernel), named after the C struct
//!   in Rust style ([`AllocateTlbIn`] for `tenstorrent_allocate_tlb_in`; search the docs for the
//!   C name, each struct carries it as a `doc(alias)`); `Default` is all zero with the size field
//!   set (see below);
//! * the flag values, mapping ids, PCI ids and mmap offsets;
//! * thin `unsafe fn` wrappers, one per ioctl (Linux only), that pass a `&mut` struct to
//!   `rustix::ioctl::ioctl` with an [`Updater`](rustix::ioctl::Updater);
//! * [`LAYOUT`], the size of every C struct and the offset of every field as this crate lays them
//!   out; the tests compare it with the numbers gcc prints for the real header, and
//!   `cargo run -p tt-kmd-sys --example layout` prints it in the same `name number` format.
//!
//! The structs build on every host; the opcodes and the ioctl functions exist on Linux only
//! (`#[cfg(target_os = "linux")]`), where the driver is.
//!
//! ## The three in/out conventions
//!
//! The driver's ioctls are all `_IO(0xFA, n)`: the request code encodes no size and no direction,
//! so each struct says for itself how much the kernel may read and write. Three patterns:
//!
//! 1. **`output_size_bytes`** (GET_DEVICE_INFO, GET_DRIVER_INFO, RESET_DEVICE, PIN_PAGES,
//!    LOCK_CTL; QUERY_MAPPINGS with `output_mapping_count`). The struct is `{ in, out }`; the
//!    kernel clears `output_size_bytes` bytes of `out`, then copies `min(output_size_bytes,
//!    sizeof(its out))`. **The value must never exceed the real `out` buffer**, or the kernel
//!    writes past it. The `Default`s set it to exactly `size_of` the out struct (for
//!    [`QueryMappings<N>`], the count `N`). An older driver with a shorter `out` leaves the tail
//!    zero, which is why new fields are appended.
//! 2. **`argsz`** (SET_NOC_CLEANUP, SET_POWER_STATE, EXPORT_TLB_DMABUF). One struct, no in/out
//!    split, beginning `u32 argsz; u32 flags`. The driver at this version requires `argsz ==
//!    sizeof(struct)` exactly, `flags == 0` and reserved fields 0 (else `EINVAL`). The
//!    `Default`s set `argsz`; re-set it before reusing a struct the kernel wrote.
//! 3. **Fixed structs** (ALLOCATE_DMA_BUF, MAP_PEER_BAR, ALLOCATE_TLB, FREE_TLB, CONFIGURE_TLB,
//!    UNPIN_PAGES). The kernel reads `in` and writes `out` whole; any layout change is an ABI
//!    break. Reserved fields must be zero (the `Default`).
//!
//! ## Gating on versions
//!
//! GET_DRIVER_INFO returns two things: `driver_version`, the **ioctl API version**, and (since
//! tt-kmd 2.0.0) the driver's semantic version in `driver_version_{major,minor,patch}`.
//!
//! * **Refuse API < 2.** Version 2 came with tt-kmd 2.0.0 and is the first with the current TLB
//!   ioctl layout working (1.32..1.34 had an older or buggy TLB ABI under API 1). tt-umd
//!   (`KMD_MINIMUM_VERSION 2.0.0`) and luwen refuse older drivers too. Every struct here is the
//!   API-2 layout.
//! * **Gate individual features on the semantic version**, with the constants of [`since`]:
//!   SET_NOC_CLEANUP 2.2.0, reset flags 3..=6 2.4.0, SET_POWER_STATE and the `O_APPEND`
//!   power-aware open 2.6.0, blocking lock 2.7.0, read-only pinning 2.9.0, EXPORT_TLB_DMABUF and
//!   `O_EXCL` 2.10.0. An ioctl the driver does not know gets `EINVAL`, like a bad argument, so
//!   the version is the only reliable way to tell the two apart.
//!
//! ## Errors that are not about the arguments
//!
//! * An fd whose device was removed, or one opened before a reset (any other fd's destructive
//!   RESET_DEVICE), gets `ENODEV` for every ioctl and every mmap from then on: open again.
//! * While a reset waits for hardware re-initialisation, only GET_DEVICE_INFO, GET_DRIVER_INFO
//!   and RESET_DEVICE work; the rest get `ENODEV`.
//! * An unknown request number gets `EINVAL`; a file that is not a tt-kmd node (a regular file,
//!   `/dev/null`) gets `ENOTTY` from the VFS.
//!
//! ## Safety of the ioctl functions
//!
//! Every function is a `pub unsafe fn(fd: BorrowedFd, arg: &mut Struct) -> rustix::io::Result<()>`
//! and returns `Err(errno)` exactly as the kernel answered. Its contract:
//!
//! * `fd` must be a tt-kmd device node (`/dev/tenstorrent/N`), or a file known to reject
//!   `0xFAnn` request codes (a regular file or `/dev/null` answers `ENOTTY`). The codes are `_IO`
//!   codes with no size or direction, so another driver's node could take the pointer for
//!   anything.
//! * The size fields of the struct (`output_size_bytes`, `output_mapping_count`, `argsz`) must
//!   not exceed the real struct: the kernel writes as much as they say. The `Default`s are
//!   right; a value copied from elsewhere may not be.
//!
//! ## What is not here
//!
//! No `open`, no mmap, no ownership of windows or buffers, no error types beyond `rustix`'s
//! `Errno`, no device-class logic (window counts, the TLB register encoding, NoC coordinates):
//! that is `komorebi-pcie` (module `kmd`) and `blackhole-pac`. No GET_HARVESTING struct either:
//! the header defines none and the driver answers it with `EINVAL`. The DMA buffer mmap offset
//! depends on the page size and is returned by ALLOCATE_DMA_BUF; [`dma_buf_mmap_offset`] only
//! documents the formula.

mod layout;
#[cfg(target_os = "linux")]
mod sys;

pub use layout::LAYOUT;
#[cfg(target_os = "linux")]
pub use sys::*;

use core::mem::size_of;

/// The ioctl API version this crate describes, the `driver_version` GET_DRIVER_INFO returns.
pub const TENSTORRENT_DRIVER_VERSION: u32 = 2;

/// The ioctl "magic" (type) byte of every request: `_IO(0xFA, n)`.
pub const TENSTORRENT_IOCTL_MAGIC: u8 = 0xFA;

/// The request numbers `n` of `_IO(0xFA, n)`, on every host. The full request code is
/// `0xFA00 | n` (the Linux opcodes are the `IOCTL_*` constants at the crate root).
pub mod nr {
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
}

/// The first tt-kmd release (semantic version, as GET_DRIVER_INFO reports it) with each feature
/// newer than API 2 itself (`git describe --contains` of the commit that added it).
pub mod since {
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
}

// ---------------------------------------------------------------------------------------------
// Constants of ioctl.h

/// `mapping_id` of an unused [`Mapping`] entry (the kernel zeroes unused entries).
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
/// `PinPagesIn::flags`: also map the pages for NoC DMA (use [`PinPagesExtended`] to get the
/// NoC address).
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

// ---------------------------------------------------------------------------------------------
// PCI ids (enumerate.h) and mmap offsets (memory.c)

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

// ---------------------------------------------------------------------------------------------
// Structs

/// `u32` size of `T`, for the size fields (every struct here is far below 4 GiB).
const fn size_u32<T>() -> u32 {
    size_of::<T>() as u32
}

/// GET_DEVICE_INFO input.
#[doc(alias = "tenstorrent_get_device_info_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GetDeviceInfoIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<GetDeviceInfoOut>()`.
    pub output_size_bytes: u32,
}

impl Default for GetDeviceInfoIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<GetDeviceInfoOut>(),
        }
    }
}

/// GET_DEVICE_INFO output.
#[doc(alias = "tenstorrent_get_device_info_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GetDeviceInfoOut {
    /// The kernel's full size of this struct.
    pub output_size_bytes: u32,
    /// PCI vendor id ([`PCI_VENDOR_ID_TENSTORRENT`]).
    pub vendor_id: u16,
    /// PCI device id ([`PCI_DEVICE_ID_BLACKHOLE`], ...).
    pub device_id: u16,
    /// PCI subsystem vendor id.
    pub subsystem_vendor_id: u16,
    /// PCI subsystem id.
    pub subsystem_id: u16,
    /// Bits 0..3 function, 3..8 device, 8..16 bus.
    pub bus_dev_fn: u16,
    /// log2 of the largest DMA buffer (since driver 1.0).
    pub max_dma_buf_size_log2: u16,
    /// PCI domain (since driver 1.23).
    pub pci_domain: u16,
    /// Reserved.
    pub reserved: u16,
}

/// GET_DEVICE_INFO (`output_size_bytes` convention).
#[doc(alias = "tenstorrent_get_device_info")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GetDeviceInfo {
    /// C `in`.
    pub input: GetDeviceInfoIn,
    /// C `out`.
    pub output: GetDeviceInfoOut,
}

/// QUERY_MAPPINGS input.
#[doc(alias = "tenstorrent_query_mappings_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueryMappingsIn {
    /// Entries of `out` the kernel may write (it fills at most 6 and zeroes the rest).
    pub output_mapping_count: u32,
    /// Reserved.
    pub reserved: u32,
}

/// One BAR mapping QUERY_MAPPINGS reports.
#[doc(alias = "tenstorrent_mapping")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// [`MAPPING_RESOURCE0_UC`] .. [`MAPPING_RESOURCE2_WC`], or [`MAPPING_UNUSED`].
    pub mapping_id: u32,
    /// Reserved.
    pub reserved: u32,
    /// The mmap offset of the mapping.
    pub mapping_base: u64,
    /// Its size (the BAR's length).
    pub mapping_size: u64,
}

impl Mapping {
    /// An all-zero (unused) entry.
    pub const ZERO: Self = Self {
        mapping_id: MAPPING_UNUSED,
        reserved: 0,
        mapping_base: 0,
        mapping_size: 0,
    };
}

/// QUERY_MAPPINGS output: C's flexible array `mappings[0]`, here with `N` entries.
#[doc(alias = "tenstorrent_query_mappings_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueryMappingsOut<const N: usize> {
    /// The entries; no count is returned, scan for `mapping_id != MAPPING_UNUSED`.
    pub mappings: [Mapping; N],
}

impl<const N: usize> Default for QueryMappingsOut<N> {
    fn default() -> Self {
        Self {
            mappings: [Mapping::ZERO; N],
        }
    }
}

/// QUERY_MAPPINGS with room for `N` entries: `8 + 24 * N` bytes. The driver reports at most 6
/// (BAR0, BAR2, BAR4, each UC and WC), so `QueryMappings<6>` (or more) sees them all.
#[doc(alias = "tenstorrent_query_mappings")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueryMappings<const N: usize> {
    /// C `in`.
    pub input: QueryMappingsIn,
    /// C `out`.
    pub output: QueryMappingsOut<N>,
}

impl<const N: usize> Default for QueryMappings<N> {
    /// All zero with `output_mapping_count = N`.
    fn default() -> Self {
        Self {
            input: QueryMappingsIn {
                output_mapping_count: N as u32,
                reserved: 0,
            },
            output: QueryMappingsOut::default(),
        }
    }
}

/// ALLOCATE_DMA_BUF input.
#[doc(alias = "tenstorrent_allocate_dma_buf_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateDmaBufIn {
    /// Bytes: a nonzero multiple of the page size, at most `1 << max_dma_buf_size_log2`.
    pub requested_size: u32,
    /// The buffer's index, below [`MAX_DMA_BUFS`] and unused on this fd.
    pub buf_index: u8,
    /// [`ALLOCATE_DMA_BUF_NOC_DMA`] or 0.
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
    /// Its NoC address (valid with [`ALLOCATE_DMA_BUF_NOC_DMA`]).
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

/// GET_DRIVER_INFO input.
#[doc(alias = "tenstorrent_get_driver_info_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GetDriverInfoIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<GetDriverInfoOut>()`.
    pub output_size_bytes: u32,
}

impl Default for GetDriverInfoIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<GetDriverInfoOut>(),
        }
    }
}

/// GET_DRIVER_INFO output.
#[doc(alias = "tenstorrent_get_driver_info_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GetDriverInfoOut {
    /// The kernel's full size of this struct.
    pub output_size_bytes: u32,
    /// The ioctl API version ([`TENSTORRENT_DRIVER_VERSION`] = 2 for tt-kmd 2.0.0 and later).
    pub driver_version: u32,
    /// Semantic version, major (0 before tt-kmd 2.0.0).
    pub driver_version_major: u8,
    /// Semantic version, minor.
    pub driver_version_minor: u8,
    /// Semantic version, patch.
    pub driver_version_patch: u8,
    /// Reserved.
    pub reserved0: u8,
}

/// GET_DRIVER_INFO (`output_size_bytes` convention).
#[doc(alias = "tenstorrent_get_driver_info")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GetDriverInfo {
    /// C `in`.
    pub input: GetDriverInfoIn,
    /// C `out`.
    pub output: GetDriverInfoOut,
}

/// RESET_DEVICE input.
#[doc(alias = "tenstorrent_reset_device_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResetDeviceIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<ResetDeviceOut>()`.
    pub output_size_bytes: u32,
    /// One of the `RESET_DEVICE_*` values (not a bit set).
    pub flags: u32,
}

impl Default for ResetDeviceIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<ResetDeviceOut>(),
            flags: 0,
        }
    }
}

/// RESET_DEVICE output.
#[doc(alias = "tenstorrent_reset_device_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResetDeviceOut {
    /// The kernel's full size of this struct.
    pub output_size_bytes: u32,
    /// 0 on success.
    pub result: u32,
}

/// RESET_DEVICE (`output_size_bytes` convention). A destructive reset makes every other fd of
/// the device answer `ENODEV` and every old mapping fault (`SIGBUS`).
#[doc(alias = "tenstorrent_reset_device")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResetDevice {
    /// C `in`.
    pub input: ResetDeviceIn,
    /// C `out`.
    pub output: ResetDeviceOut,
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
    /// Its NoC address (with [`PIN_PAGES_NOC_DMA`]).
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

/// LOCK_CTL input.
#[doc(alias = "tenstorrent_lock_ctl_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockCtlIn {
    /// Bytes of `out` the kernel may clear and write; at most `size_of::<LockCtlOut>()`.
    pub output_size_bytes: u32,
    /// One of the `LOCK_CTL_*` values.
    pub flags: u32,
    /// The lock, below [`RESOURCE_LOCK_COUNT`].
    pub index: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

impl Default for LockCtlIn {
    fn default() -> Self {
        Self {
            output_size_bytes: size_u32::<LockCtlOut>(),
            flags: 0,
            index: 0,
            reserved: [0; 3],
        }
    }
}

/// LOCK_CTL output.
#[doc(alias = "tenstorrent_lock_ctl_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockCtlOut {
    /// The result; see the `LOCK_CTL_*` flags.
    pub value: u8,
    /// Reserved.
    pub reserved: [u8; 3],
}

/// LOCK_CTL (`output_size_bytes` convention). Locks are released when the fd closes.
#[doc(alias = "tenstorrent_lock_ctl")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockCtl {
    /// C `in`.
    pub input: LockCtlIn,
    /// C `out`.
    pub output: LockCtlOut,
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

/// ALLOCATE_TLB input.
#[doc(alias = "tenstorrent_allocate_tlb_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateTlbIn {
    /// Exactly one of the device's window sizes (Blackhole: 2 MiB or 4 GiB), else `EINVAL`.
    pub size: u64,
    /// Reserved.
    pub reserved: u64,
}

/// ALLOCATE_TLB output.
#[doc(alias = "tenstorrent_allocate_tlb_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateTlbOut {
    /// The window's id (its index).
    pub id: u32,
    /// Reserved.
    pub reserved0: u32,
    /// mmap offset of the window, uncached.
    pub mmap_offset_uc: u64,
    /// mmap offset of the window, write-combined.
    pub mmap_offset_wc: u64,
    /// Reserved.
    pub reserved1: u64,
}

/// ALLOCATE_TLB (fixed struct). `ENOMEM` when every window of the size is taken. The window
/// belongs to the fd and is freed when the fd closes.
#[doc(alias = "tenstorrent_allocate_tlb")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AllocateTlb {
    /// C `in`.
    pub input: AllocateTlbIn,
    /// C `out`.
    pub output: AllocateTlbOut,
}

/// FREE_TLB input.
#[doc(alias = "tenstorrent_free_tlb_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeTlbIn {
    /// The window's id.
    pub id: u32,
}

/// FREE_TLB output (empty).
#[doc(alias = "tenstorrent_free_tlb_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeTlbOut {}

/// FREE_TLB (fixed struct). `EBUSY` while the window is still mapped, `EPERM` if this fd does
/// not own it.
#[doc(alias = "tenstorrent_free_tlb")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FreeTlb {
    /// C `in`.
    pub input: FreeTlbIn,
    /// C `out`.
    pub output: FreeTlbOut,
}

/// A window's NoC target, as CONFIGURE_TLB takes it.
///
/// The driver assigns the fields straight into the register's bitfields without range checks
/// (coordinates 6 bits, `noc` and `ordering` 2 bits): out-of-range values are silently
/// truncated. `static_vc` is the 1-bit *enable* only; the VC buddy and class bits cannot be set
/// through this ioctl and stay 0.
#[doc(alias = "tenstorrent_noc_tlb_config")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NocTlbConfig {
    /// The NoC address of the window's first byte; a multiple of the window size, else `EINVAL`.
    pub addr: u64,
    /// Target x (unicast) or the rectangle's end x (multicast).
    pub x_end: u16,
    /// Target y or the rectangle's end y.
    pub y_end: u16,
    /// The multicast rectangle's start x.
    pub x_start: u16,
    /// The multicast rectangle's start y.
    pub y_start: u16,
    /// 0 = NoC0, 1 = NoC1.
    pub noc: u8,
    /// 1 = multicast to the rectangle.
    pub mcast: u8,
    /// 0 default (relaxed), 1 strict AXI, 2 posted writes, 3 counted writes (the ISA's name;
    /// tt-kmd-lib calls it posted-strict).
    pub ordering: u8,
    /// 1 = linked transactions.
    pub linked: u8,
    /// 1 = use a static VC (enable bit only; the VC number is not settable here).
    pub static_vc: u8,
    /// Reserved.
    pub reserved0: [u8; 3],
    /// Reserved.
    pub reserved1: [u32; 2],
}

/// CONFIGURE_TLB input.
#[doc(alias = "tenstorrent_configure_tlb_in")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConfigureTlbIn {
    /// The window's id (owned by this fd, else `EPERM`).
    pub id: u32,
    /// Reserved.
    pub reserved: u32,
    /// The target.
    pub config: NocTlbConfig,
}

/// CONFIGURE_TLB output (the kernel does not write it).
#[doc(alias = "tenstorrent_configure_tlb_out")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConfigureTlbOut {
    /// Reserved.
    pub reserved: u64,
}

/// CONFIGURE_TLB (fixed struct).
#[doc(alias = "tenstorrent_configure_tlb")]
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConfigureTlb {
    /// C `in`.
    pub input: ConfigureTlbIn,
    /// C `out`.
    pub output: ConfigureTlbOut,
}

/// SET_NOC_CLEANUP (`argsz` convention, tt-kmd 2.2.0+): a NoC write32 the driver performs when
/// the fd is released, so device-side state is cleaned up even if the process dies.
#[doc(alias = "tenstorrent_set_noc_cleanup")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SetNocCleanup {
    /// Must be `size_of::<SetNocCleanup>()` (32).
    pub argsz: u32,
    /// Must be 0.
    pub flags: u32,
    /// 1 = register the action, 0 = clear it.
    pub enabled: u8,
    /// Target tile x (at most 64).
    pub x: u8,
    /// Target tile y (at most 64).
    pub y: u8,
    /// 0 or 1.
    pub noc: u8,
    /// Reserved.
    pub reserved0: u32,
    /// NoC address, 4-byte aligned.
    pub addr: u64,
    /// The value; the upper 32 bits are ignored.
    pub data: u64,
}

impl Default for SetNocCleanup {
    fn default() -> Self {
        Self {
            argsz: size_u32::<Self>(),
            flags: 0,
            enabled: 0,
            x: 0,
            y: 0,
            noc: 0,
            reserved0: 0,
            addr: 0,
            data: 0,
        }
    }
}

/// SET_POWER_STATE (`argsz` convention, tt-kmd 2.6.0+). The driver ORs the flags of every fd
/// (flags past the fd's `validity` count as on) and takes the maximum of each setting, then
/// tells the firmware.
#[doc(alias = "tenstorrent_power_state")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PowerState {
    /// Must be `size_of::<PowerState>()` (40).
    pub argsz: u32,
    /// Must be 0.
    pub flags: u32,
    /// Must be 0.
    pub reserved0: u8,
    /// [`power_validity`]`(flags, settings)`: how many flags and settings are meant.
    pub validity: u8,
    /// `POWER_FLAG_*` bits.
    pub power_flags: u16,
    /// Numeric settings.
    pub power_settings: [u16; POWER_SETTINGS_COUNT],
}

impl Default for PowerState {
    fn default() -> Self {
        Self {
            argsz: size_u32::<Self>(),
            flags: 0,
            reserved0: 0,
            validity: 0,
            power_flags: 0,
            power_settings: [0; POWER_SETTINGS_COUNT],
        }
    }
}

/// EXPORT_TLB_DMABUF (`argsz` convention, tt-kmd 2.10.0+): wraps an owned TLB window in a
/// dma-buf for peer-to-peer DMA. On success `fd` is a new file descriptor the caller owns.
#[doc(alias = "tenstorrent_export_tlb_dmabuf")]
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExportTlbDmabuf {
    /// Must be `size_of::<ExportTlbDmabuf>()` (32).
    pub argsz: u32,
    /// Must be 0.
    pub flags: u32,
    /// The window's id.
    pub tlb_id: u32,
    /// Out: the dma-buf's file descriptor.
    pub fd: i32,
    /// Page-aligned offset in the window.
    pub offset: u64,
    /// Page-aligned size; 0 = to the end of the window.
    pub size: u64,
}

impl Default for ExportTlbDmabuf {
    fn default() -> Self {
        Self {
            argsz: size_u32::<Self>(),
            flags: 0,
            tlb_id: 0,
            fd: 0,
            offset: 0,
            size: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_fields_are_the_real_out_sizes() {
        assert_eq!(GetDeviceInfo::default().input.output_size_bytes, 20);
        assert_eq!(GetDriverInfo::default().input.output_size_bytes, 12);
        assert_eq!(ResetDevice::default().input.output_size_bytes, 8);
        assert_eq!(PinPages::default().input.output_size_bytes, 8);
        assert_eq!(PinPagesExtended::default().input.output_size_bytes, 16);
        assert_eq!(LockCtl::default().input.output_size_bytes, 4);
        assert_eq!(QueryMappings::<6>::default().input.output_mapping_count, 6);
        assert_eq!(QueryMappings::<0>::default().input.output_mapping_count, 0);
        assert_eq!(SetNocCleanup::default().argsz, 32);
        assert_eq!(PowerState::default().argsz, 40);
        assert_eq!(ExportTlbDmabuf::default().argsz, 32);
    }

    #[test]
    fn defaults_are_otherwise_zero() {
        let p = PowerState::default();
        assert_eq!(
            (p.flags, p.reserved0, p.validity, p.power_flags),
            (0, 0, 0, 0)
        );
        assert_eq!(p.power_settings, [0; 14]);
        assert_eq!(
            ConfigureTlb::default().input.config,
            NocTlbConfig::default()
        );
        assert_eq!(AllocateTlb::default().input.size, 0);
        assert_eq!(GetDeviceInfo::default().output, GetDeviceInfoOut::default());
    }

    #[test]
    fn power_validity_is_the_c_macro() {
        // TT_POWER_VALIDITY(4, 0) printed by gcc: 4.
        assert_eq!(power_validity(4, 0), 4);
        assert_eq!(power_validity(15, 14), 0xEF);
        assert_eq!(power_validity(0x1F, 0x1E), 0xEF);
    }

    #[test]
    fn mmap_offsets() {
        assert_eq!(MMAP_OFFSET_TLB_UC, 0x60_0000_0000);
        assert_eq!(MMAP_OFFSET_TLB_WC, 0x70_0000_0000);
        assert_eq!(MMAP_OFFSET_RESOURCE2_WC, 5 * MMAP_RESOURCE_SIZE);
        assert_eq!(dma_buf_mmap_offset(4096, 0), Some(3840 << 32));
        assert_eq!(dma_buf_mmap_offset(4096, 255), Some(4095 << 32));
        assert_eq!(dma_buf_mmap_offset(100, 0), None);
    }
}
