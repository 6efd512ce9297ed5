//! The structs of the TLB window ioctls: ALLOCATE_TLB, FREE_TLB, CONFIGURE_TLB (with
//! `NocTlbConfig`, a window's NoC target) and EXPORT_TLB_DMABUF.

use crate::size::size_u32;

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
