//! The layout table: one entry per C struct (its size) and per field (its offset).

use core::mem::{offset_of, size_of};

use crate::{control::*, dma::*, info::*, tlb::*};

/// Builds the table: for each `"c_struct" RustType { "c_field" rust_field, ... }` an entry
/// `("c_struct", size_of)` then `("c_struct.c_field", offset_of)` per field.
macro_rules! layout {
    ($($cname:literal $ty:ty { $($cfield:literal $field:ident),* $(,)? })*) => {
        &[$(
            ($cname, size_of::<$ty>()),
            $((concat!($cname, ".", $cfield), offset_of!($ty, $field)),)*
        )*]
    };
}

/// Every struct of `ioctl.h` with its size, and every field (`struct.field`) with its offset,
/// under the C names, in the header's order, as this crate lays them out. A nested struct's
/// fields appear under the nested struct's own name; the outer struct lists only the field that
/// holds it (`tenstorrent_get_device_info.out 4`). The flexible-array QUERY_MAPPINGS is measured
/// with no entries (`QueryMappings<0>`), as C's `sizeof` counts it.
///
/// The tests compare this table with the list gcc prints for the real header; the `layout`
/// example prints it.
pub const LAYOUT: &[(&str, usize)] = layout! {
    "tenstorrent_get_device_info_in" GetDeviceInfoIn {
        "output_size_bytes" output_size_bytes,
    }
    "tenstorrent_get_device_info_out" GetDeviceInfoOut {
        "output_size_bytes" output_size_bytes,
        "vendor_id" vendor_id,
        "device_id" device_id,
        "subsystem_vendor_id" subsystem_vendor_id,
        "subsystem_id" subsystem_id,
        "bus_dev_fn" bus_dev_fn,
        "max_dma_buf_size_log2" max_dma_buf_size_log2,
        "pci_domain" pci_domain,
        "reserved" reserved,
    }
    "tenstorrent_get_device_info" GetDeviceInfo {
        "in" input,
        "out" output,
    }
    "tenstorrent_query_mappings_in" QueryMappingsIn {
        "output_mapping_count" output_mapping_count,
        "reserved" reserved,
    }
    "tenstorrent_mapping" Mapping {
        "mapping_id" mapping_id,
        "reserved" reserved,
        "mapping_base" mapping_base,
        "mapping_size" mapping_size,
    }
    "tenstorrent_query_mappings_out" QueryMappingsOut<0> {
        "mappings" mappings,
    }
    "tenstorrent_query_mappings" QueryMappings<0> {
        "in" input,
        "out" output,
    }
    "tenstorrent_allocate_dma_buf_in" AllocateDmaBufIn {
        "requested_size" requested_size,
        "buf_index" buf_index,
        "flags" flags,
        "reserved0" reserved0,
        "reserved1" reserved1,
    }
    "tenstorrent_allocate_dma_buf_out" AllocateDmaBufOut {
        "physical_address" physical_address,
        "mapping_offset" mapping_offset,
        "size" size,
        "reserved0" reserved0,
        "noc_address" noc_address,
        "reserved1" reserved1,
    }
    "tenstorrent_allocate_dma_buf" AllocateDmaBuf {
        "in" input,
        "out" output,
    }
    "tenstorrent_free_dma_buf_in" FreeDmaBufIn {}
    "tenstorrent_free_dma_buf_out" FreeDmaBufOut {}
    "tenstorrent_free_dma_buf" FreeDmaBuf {
        "in" input,
        "out" output,
    }
    "tenstorrent_get_driver_info_in" GetDriverInfoIn {
        "output_size_bytes" output_size_bytes,
    }
    "tenstorrent_get_driver_info_out" GetDriverInfoOut {
        "output_size_bytes" output_size_bytes,
        "driver_version" driver_version,
        "driver_version_major" driver_version_major,
        "driver_version_minor" driver_version_minor,
        "driver_version_patch" driver_version_patch,
        "reserved0" reserved0,
    }
    "tenstorrent_get_driver_info" GetDriverInfo {
        "in" input,
        "out" output,
    }
    "tenstorrent_reset_device_in" ResetDeviceIn {
        "output_size_bytes" output_size_bytes,
        "flags" flags,
    }
    "tenstorrent_reset_device_out" ResetDeviceOut {
        "output_size_bytes" output_size_bytes,
        "result" result,
    }
    "tenstorrent_reset_device" ResetDevice {
        "in" input,
        "out" output,
    }
    "tenstorrent_pin_pages_in" PinPagesIn {
        "output_size_bytes" output_size_bytes,
        "flags" flags,
        "virtual_address" virtual_address,
        "size" size,
    }
    "tenstorrent_pin_pages_out" PinPagesOut {
        "physical_address" physical_address,
    }
    "tenstorrent_pin_pages_out_extended" PinPagesOutExtended {
        "physical_address" physical_address,
        "noc_address" noc_address,
    }
    "tenstorrent_unpin_pages_in" UnpinPagesIn {
        "virtual_address" virtual_address,
        "size" size,
        "reserved" reserved,
    }
    "tenstorrent_unpin_pages_out" UnpinPagesOut {}
    "tenstorrent_unpin_pages" UnpinPages {
        "in" input,
        "out" output,
    }
    "tenstorrent_pin_pages" PinPages {
        "in" input,
        "out" output,
    }
    "tenstorrent_lock_ctl_in" LockCtlIn {
        "output_size_bytes" output_size_bytes,
        "flags" flags,
        "index" index,
        "reserved" reserved,
    }
    "tenstorrent_lock_ctl_out" LockCtlOut {
        "value" value,
        "reserved" reserved,
    }
    "tenstorrent_lock_ctl" LockCtl {
        "in" input,
        "out" output,
    }
    "tenstorrent_map_peer_bar_in" MapPeerBarIn {
        "peer_fd" peer_fd,
        "peer_bar_index" peer_bar_index,
        "peer_bar_offset" peer_bar_offset,
        "peer_bar_length" peer_bar_length,
        "flags" flags,
        "reserved" reserved,
    }
    "tenstorrent_map_peer_bar_out" MapPeerBarOut {
        "dma_address" dma_address,
        "reserved" reserved,
    }
    "tenstorrent_map_peer_bar" MapPeerBar {
        "in" input,
        "out" output,
    }
    "tenstorrent_allocate_tlb_in" AllocateTlbIn {
        "size" size,
        "reserved" reserved,
    }
    "tenstorrent_allocate_tlb_out" AllocateTlbOut {
        "id" id,
        "reserved0" reserved0,
        "mmap_offset_uc" mmap_offset_uc,
        "mmap_offset_wc" mmap_offset_wc,
        "reserved1" reserved1,
    }
    "tenstorrent_allocate_tlb" AllocateTlb {
        "in" input,
        "out" output,
    }
    "tenstorrent_free_tlb_in" FreeTlbIn {
        "id" id,
    }
    "tenstorrent_free_tlb_out" FreeTlbOut {}
    "tenstorrent_free_tlb" FreeTlb {
        "in" input,
        "out" output,
    }
    "tenstorrent_noc_tlb_config" NocTlbConfig {
        "addr" addr,
        "x_end" x_end,
        "y_end" y_end,
        "x_start" x_start,
        "y_start" y_start,
        "noc" noc,
        "mcast" mcast,
        "ordering" ordering,
        "linked" linked,
        "static_vc" static_vc,
        "reserved0" reserved0,
        "reserved1" reserved1,
    }
    "tenstorrent_configure_tlb_in" ConfigureTlbIn {
        "id" id,
        "reserved" reserved,
        "config" config,
    }
    "tenstorrent_configure_tlb_out" ConfigureTlbOut {
        "reserved" reserved,
    }
    "tenstorrent_configure_tlb" ConfigureTlb {
        "in" input,
        "out" output,
    }
    "tenstorrent_set_noc_cleanup" SetNocCleanup {
        "argsz" argsz,
        "flags" flags,
        "enabled" enabled,
        "x" x,
        "y" y,
        "noc" noc,
        "reserved0" reserved0,
        "addr" addr,
        "data" data,
    }
    "tenstorrent_power_state" PowerState {
        "argsz" argsz,
        "flags" flags,
        "reserved0" reserved0,
        "validity" validity,
        "power_flags" power_flags,
        "power_settings" power_settings,
    }
    "tenstorrent_export_tlb_dmabuf" ExportTlbDmabuf {
        "argsz" argsz,
        "flags" flags,
        "tlb_id" tlb_id,
        "fd" fd,
        "offset" offset,
        "size" size,
    }
};
