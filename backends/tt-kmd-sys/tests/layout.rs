//! The crate's layouts against the C header, two ways:
//!
//! 1. [`LAYOUT`] (what the `layout` example prints) against the list gcc printed for the real
//!    `ioctl.h` of tt-kmd 4af71921 (2026-07-16). How that list was made, once, by hand: a short
//!    script read every `struct tenstorrent_* { ... }` of the header and wrote a C program with
//!    `printf("%s %zu\n", name, sizeof(struct name))` and one `offsetof` line per field, in
//!    header order; `gcc -Wall` (x86-64 Linux, `<linux/types.h>`) compiled it against the
//!    header and its output is pasted below verbatim (179 lines: 45 structs, 134 fields). The
//!    test does not need gcc.
//! 2. A few anchors worked out by hand from the C declarations (natural alignment, no packing),
//!    asserted straight on the Rust types, not through the table.

use core::mem::{align_of, offset_of, size_of};

use tt_kmd_sys::*;

/// gcc x86-64, tt-kmd `ioctl.h` @ 4af71921ac021e24859ae15d8438997a44dbbf58.
const GCC: &str = "\
tenstorrent_get_device_info_in 4
tenstorrent_get_device_info_in.output_size_bytes 0
tenstorrent_get_device_info_out 20
tenstorrent_get_device_info_out.output_size_bytes 0
tenstorrent_get_device_info_out.vendor_id 4
tenstorrent_get_device_info_out.device_id 6
tenstorrent_get_device_info_out.subsystem_vendor_id 8
tenstorrent_get_device_info_out.subsystem_id 10
tenstorrent_get_device_info_out.bus_dev_fn 12
tenstorrent_get_device_info_out.max_dma_buf_size_log2 14
tenstorrent_get_device_info_out.pci_domain 16
tenstorrent_get_device_info_out.reserved 18
tenstorrent_get_device_info 24
tenstorrent_get_device_info.in 0
tenstorrent_get_device_info.out 4
tenstorrent_query_mappings_in 8
tenstorrent_query_mappings_in.output_mapping_count 0
tenstorrent_query_mappings_in.reserved 4
tenstorrent_mapping 24
tenstorrent_mapping.mapping_id 0
tenstorrent_mapping.reserved 4
tenstorrent_mapping.mapping_base 8
tenstorrent_mapping.mapping_size 16
tenstorrent_query_mappings_out 0
tenstorrent_query_mappings_out.mappings 0
tenstorrent_query_mappings 8
tenstorrent_query_mappings.in 0
tenstorrent_query_mappings.out 8
tenstorrent_allocate_dma_buf_in 24
tenstorrent_allocate_dma_buf_in.requested_size 0
tenstorrent_allocate_dma_buf_in.buf_index 4
tenstorrent_allocate_dma_buf_in.flags 5
tenstorrent_allocate_dma_buf_in.reserved0 6
tenstorrent_allocate_dma_buf_in.reserved1 8
tenstorrent_allocate_dma_buf_out 40
tenstorrent_allocate_dma_buf_out.physical_address 0
tenstorrent_allocate_dma_buf_out.mapping_offset 8
tenstorrent_allocate_dma_buf_out.size 16
tenstorrent_allocate_dma_buf_out.reserved0 20
tenstorrent_allocate_dma_buf_out.noc_address 24
tenstorrent_allocate_dma_buf_out.reserved1 32
tenstorrent_allocate_dma_buf 64
tenstorrent_allocate_dma_buf.in 0
tenstorrent_allocate_dma_buf.out 24
tenstorrent_free_dma_buf_in 0
tenstorrent_free_dma_buf_out 0
tenstorrent_free_dma_buf 0
tenstorrent_free_dma_buf.in 0
tenstorrent_free_dma_buf.out 0
tenstorrent_get_driver_info_in 4
tenstorrent_get_driver_info_in.output_size_bytes 0
tenstorrent_get_driver_info_out 12
tenstorrent_get_driver_info_out.output_size_bytes 0
tenstorrent_get_driver_info_out.driver_version 4
tenstorrent_get_driver_info_out.driver_version_major 8
tenstorrent_get_driver_info_out.driver_version_minor 9
tenstorrent_get_driver_info_out.driver_version_patch 10
tenstorrent_get_driver_info_out.reserved0 11
tenstorrent_get_driver_info 16
tenstorrent_get_driver_info.in 0
tenstorrent_get_driver_info.out 4
tenstorrent_reset_device_in 8
tenstorrent_reset_device_in.output_size_bytes 0
tenstorrent_reset_device_in.flags 4
tenstorrent_reset_device_out 8
tenstorrent_reset_device_out.output_size_bytes 0
tenstorrent_reset_device_out.result 4
tenstorrent_reset_device 16
tenstorrent_reset_device.in 0
tenstorrent_reset_device.out 8
tenstorrent_pin_pages_in 24
tenstorrent_pin_pages_in.output_size_bytes 0
tenstorrent_pin_pages_in.flags 4
tenstorrent_pin_pages_in.virtual_address 8
tenstorrent_pin_pages_in.size 16
tenstorrent_pin_pages_out 8
tenstorrent_pin_pages_out.physical_address 0
tenstorrent_pin_pages_out_extended 16
tenstorrent_pin_pages_out_extended.physical_address 0
tenstorrent_pin_pages_out_extended.noc_address 8
tenstorrent_unpin_pages_in 24
tenstorrent_unpin_pages_in.virtual_address 0
tenstorrent_unpin_pages_in.size 8
tenstorrent_unpin_pages_in.reserved 16
tenstorrent_unpin_pages_out 0
tenstorrent_unpin_pages 24
tenstorrent_unpin_pages.in 0
tenstorrent_unpin_pages.out 24
tenstorrent_pin_pages 32
tenstorrent_pin_pages.in 0
tenstorrent_pin_pages.out 24
tenstorrent_lock_ctl_in 12
tenstorrent_lock_ctl_in.output_size_bytes 0
tenstorrent_lock_ctl_in.flags 4
tenstorrent_lock_ctl_in.index 8
tenstorrent_lock_ctl_in.reserved 9
tenstorrent_lock_ctl_out 4
tenstorrent_lock_ctl_out.value 0
tenstorrent_lock_ctl_out.reserved 1
tenstorrent_lock_ctl 16
tenstorrent_lock_ctl.in 0
tenstorrent_lock_ctl.out 12
tenstorrent_map_peer_bar_in 24
tenstorrent_map_peer_bar_in.peer_fd 0
tenstorrent_map_peer_bar_in.peer_bar_index 4
tenstorrent_map_peer_bar_in.peer_bar_offset 8
tenstorrent_map_peer_bar_in.peer_bar_length 12
tenstorrent_map_peer_bar_in.flags 16
tenstorrent_map_peer_bar_in.reserved 20
tenstorrent_map_peer_bar_out 16
tenstorrent_map_peer_bar_out.dma_address 0
tenstorrent_map_peer_bar_out.reserved 8
tenstorrent_map_peer_bar 40
tenstorrent_map_peer_bar.in 0
tenstorrent_map_peer_bar.out 24
tenstorrent_allocate_tlb_in 16
tenstorrent_allocate_tlb_in.size 0
tenstorrent_allocate_tlb_in.reserved 8
tenstorrent_allocate_tlb_out 32
tenstorrent_allocate_tlb_out.id 0
tenstorrent_allocate_tlb_out.reserved0 4
tenstorrent_allocate_tlb_out.mmap_offset_uc 8
tenstorrent_allocate_tlb_out.mmap_offset_wc 16
tenstorrent_allocate_tlb_out.reserved1 24
tenstorrent_allocate_tlb 48
tenstorrent_allocate_tlb.in 0
tenstorrent_allocate_tlb.out 16
tenstorrent_free_tlb_in 4
tenstorrent_free_tlb_in.id 0
tenstorrent_free_tlb_out 0
tenstorrent_free_tlb 4
tenstorrent_free_tlb.in 0
tenstorrent_free_tlb.out 4
tenstorrent_noc_tlb_config 32
tenstorrent_noc_tlb_config.addr 0
tenstorrent_noc_tlb_config.x_end 8
tenstorrent_noc_tlb_config.y_end 10
tenstorrent_noc_tlb_config.x_start 12
tenstorrent_noc_tlb_config.y_start 14
tenstorrent_noc_tlb_config.noc 16
tenstorrent_noc_tlb_config.mcast 17
tenstorrent_noc_tlb_config.ordering 18
tenstorrent_noc_tlb_config.linked 19
tenstorrent_noc_tlb_config.static_vc 20
tenstorrent_noc_tlb_config.reserved0 21
tenstorrent_noc_tlb_config.reserved1 24
tenstorrent_configure_tlb_in 40
tenstorrent_configure_tlb_in.id 0
tenstorrent_configure_tlb_in.reserved 4
tenstorrent_configure_tlb_in.config 8
tenstorrent_configure_tlb_out 8
tenstorrent_configure_tlb_out.reserved 0
tenstorrent_configure_tlb 48
tenstorrent_configure_tlb.in 0
tenstorrent_configure_tlb.out 40
tenstorrent_set_noc_cleanup 32
tenstorrent_set_noc_cleanup.argsz 0
tenstorrent_set_noc_cleanup.flags 4
tenstorrent_set_noc_cleanup.enabled 8
tenstorrent_set_noc_cleanup.x 9
tenstorrent_set_noc_cleanup.y 10
tenstorrent_set_noc_cleanup.noc 11
tenstorrent_set_noc_cleanup.reserved0 12
tenstorrent_set_noc_cleanup.addr 16
tenstorrent_set_noc_cleanup.data 24
tenstorrent_power_state 40
tenstorrent_power_state.argsz 0
tenstorrent_power_state.flags 4
tenstorrent_power_state.reserved0 8
tenstorrent_power_state.validity 9
tenstorrent_power_state.power_flags 10
tenstorrent_power_state.power_settings 12
tenstorrent_export_tlb_dmabuf 32
tenstorrent_export_tlb_dmabuf.argsz 0
tenstorrent_export_tlb_dmabuf.flags 4
tenstorrent_export_tlb_dmabuf.tlb_id 8
tenstorrent_export_tlb_dmabuf.fd 12
tenstorrent_export_tlb_dmabuf.offset 16
tenstorrent_export_tlb_dmabuf.size 24
";

#[test]
fn layout_table_matches_gcc() {
    let expected: Vec<(&str, usize)> = GCC
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, n) = l.split_once(' ').expect("gcc line: name number");
            (name, n.parse().expect("gcc number"))
        })
        .collect();
    assert_eq!(expected.len(), 179);
    let missing: Vec<_> = expected.iter().filter(|e| !LAYOUT.contains(e)).collect();
    let extra: Vec<_> = LAYOUT.iter().filter(|e| !expected.contains(e)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "gcc has, the crate lacks: {missing:?}\nthe crate has, gcc lacks: {extra:?}"
    );
    // Same order too (the header's), so the example's output diffs clean against gcc's.
    assert_eq!(LAYOUT, expected.as_slice());
}

#[test]
fn every_struct_and_field_is_listed_once() {
    for (i, (name, _)) in LAYOUT.iter().enumerate() {
        assert!(
            !LAYOUT[..i].iter().any(|(n, _)| n == name),
            "{name} listed twice"
        );
    }
    assert_eq!(LAYOUT.iter().filter(|(n, _)| !n.contains('.')).count(), 45);
}

/// Hand-derived from the declarations (sizes in bytes; u64 aligns to 8, u32 to 4, u16 to 2).
#[test]
fn hand_derived_anchors() {
    // in {u32} (4) + out {u32, 8 x u16} (4 + 16 = 20, align 4) = 24; out at 4.
    assert_eq!(size_of::<GetDeviceInfoOut>(), 20);
    assert_eq!(size_of::<GetDeviceInfo>(), 24);
    assert_eq!(offset_of!(GetDeviceInfo, output), 4);
    assert_eq!(offset_of!(GetDeviceInfoOut, device_id), 6);
    assert_eq!(offset_of!(GetDeviceInfoOut, pci_domain), 16);
    // in {u32, u32} (8) + out {u32, u32, u8 x 4} (12) = 16.
    assert_eq!(size_of::<GetDriverInfo>(), 16);
    assert_eq!(offset_of!(GetDriverInfoOut, driver_version_major), 8);
    // in {u64, u64} (16) + out {u32, u32, u64, u64, u64} (32) = 48; out at 16.
    assert_eq!(size_of::<AllocateTlbIn>(), 16);
    assert_eq!(size_of::<AllocateTlbOut>(), 32);
    assert_eq!(size_of::<AllocateTlb>(), 48);
    assert_eq!(offset_of!(AllocateTlb, output), 16);
    assert_eq!(offset_of!(AllocateTlbOut, mmap_offset_uc), 8);
    // {u64; 4 x u16 at 8..16; 5 x u8 at 16..21; u8[3] at 21; u32[2] at 24} = 32.
    assert_eq!(size_of::<NocTlbConfig>(), 32);
    assert_eq!(offset_of!(NocTlbConfig, x_end), 8);
    assert_eq!(offset_of!(NocTlbConfig, y_start), 14);
    assert_eq!(offset_of!(NocTlbConfig, noc), 16);
    assert_eq!(offset_of!(NocTlbConfig, static_vc), 20);
    assert_eq!(offset_of!(NocTlbConfig, reserved0), 21);
    assert_eq!(offset_of!(NocTlbConfig, reserved1), 24);
    // in {u32 id, u32, config (32, align 8) at 8} = 40; out {u64} at 40; total 48.
    assert_eq!(size_of::<ConfigureTlbIn>(), 40);
    assert_eq!(offset_of!(ConfigureTlbIn, config), 8);
    assert_eq!(offset_of!(ConfigureTlb, output), 40);
    assert_eq!(size_of::<ConfigureTlb>(), 48);
    // {u32, u32, 4 x u8, u32, u64 at 16, u64 at 24} = 32.
    assert_eq!(size_of::<SetNocCleanup>(), 32);
    assert_eq!(offset_of!(SetNocCleanup, addr), 16);
    // {u32, u32, u8, u8, u16 at 10, u16[14] at 12..40} = 40.
    assert_eq!(size_of::<PowerState>(), 40);
    assert_eq!(offset_of!(PowerState, power_settings), 12);
    // {u32, u32, u32, s32, u64 at 16, u64 at 24} = 32.
    assert_eq!(size_of::<ExportTlbDmabuf>(), 32);
    // in {u32, u32} (8) + N x {u32, u32, u64, u64} (24, align 8) = 8 + 24 N.
    assert_eq!(size_of::<Mapping>(), 24);
    assert_eq!(size_of::<QueryMappings<0>>(), 8);
    assert_eq!(size_of::<QueryMappings<1>>(), 32);
    assert_eq!(size_of::<QueryMappings<6>>(), 8 + 24 * 6);
    assert_eq!(offset_of!(QueryMappings<6>, output), 8);
    // in {u32, u8, u8, u8[2], u64[2] at 8} = 24; out {u64, u64, u32, u32, u64, u64} = 40.
    assert_eq!(size_of::<AllocateDmaBuf>(), 64);
    // in {u32, u32, u8, u8[3]} = 12; out {u8, u8[3]} = 4 at 12.
    assert_eq!(size_of::<LockCtl>(), 16);
    assert_eq!(offset_of!(LockCtl, output), 12);
    // in {6 x u32} = 24; out {u64, u64} at 24.
    assert_eq!(size_of::<MapPeerBar>(), 40);
    // in {u32, u32, u64, u64} = 24; out {u64} = 8; the extended out {u64, u64} = 16.
    assert_eq!(size_of::<PinPages>(), 32);
    assert_eq!(size_of::<PinPagesExtended>(), 40);
    assert_eq!(offset_of!(PinPagesExtended, output), 24);
    // in {u64 x 3} = 24, out {} = 0.
    assert_eq!(size_of::<UnpinPages>(), 24);
    // in {u32 id} = 4, out {} = 0 at 4.
    assert_eq!(size_of::<FreeTlb>(), 4);
    assert_eq!(offset_of!(FreeTlb, output), 4);
    // in {u32, u32} + out {u32, u32} = 16.
    assert_eq!(size_of::<ResetDevice>(), 16);
    // The empty structs: size 0, as in GNU C (C++ would say 1).
    assert_eq!(size_of::<FreeDmaBufIn>(), 0);
    assert_eq!(size_of::<FreeDmaBufOut>(), 0);
    assert_eq!(size_of::<FreeDmaBuf>(), 0);
    assert_eq!(size_of::<FreeTlbOut>(), 0);
    assert_eq!(size_of::<UnpinPagesOut>(), 0);
    assert_eq!(size_of::<QueryMappingsOut<0>>(), 0);
}

#[test]
fn alignments_are_the_c_ones() {
    // What the kernel's copy_from_user does not care about, but an array of them would.
    assert_eq!(align_of::<AllocateTlb>(), 8);
    assert_eq!(align_of::<GetDeviceInfo>(), 4);
    assert_eq!(align_of::<LockCtlOut>(), 1);
    assert_eq!(align_of::<PowerState>(), 4);
    assert_eq!(align_of::<QueryMappings<0>>(), 8);
}
