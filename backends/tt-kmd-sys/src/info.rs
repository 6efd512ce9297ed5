//! The structs of the ioctls that ask: GET_DEVICE_INFO (PCI ids and address), QUERY_MAPPINGS
//! (the BAR mappings) and GET_DRIVER_INFO (the API and driver versions).

use crate::consts::MAPPING_UNUSED;
use crate::size::size_u32;

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
    /// PCI vendor id ([`PCI_VENDOR_ID_TENSTORRENT`](crate::PCI_VENDOR_ID_TENSTORRENT)).
    pub vendor_id: u16,
    /// PCI device id ([`PCI_DEVICE_ID_BLACKHOLE`](crate::PCI_DEVICE_ID_BLACKHOLE), ...).
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
    /// [`MAPPING_RESOURCE0_UC`](crate::MAPPING_RESOURCE0_UC) ..
    /// [`MAPPING_RESOURCE2_WC`](crate::MAPPING_RESOURCE2_WC), or [`MAPPING_UNUSED`].
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
    /// The ioctl API version ([`TENSTORRENT_DRIVER_VERSION`](crate::TENSTORRENT_DRIVER_VERSION)
    /// = 2 for tt-kmd 2.0.0 and later).
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
