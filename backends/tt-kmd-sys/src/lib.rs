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
//! * **Refuse API < 2.** The TLB ioctls first appeared in ttkmd-1.32 (tt-kmd 377d1f2) with
//!   another layout (`allocate_tlb_out {u32 id; u64 uc; u64 wc}`, `u32` coordinates in
//!   `noc_tlb_config`); the current padded layout is from ttkmd-1.34 (5585b41, "Explicitly pad
//!   structs and reserve space"), while `TENSTORRENT_DRIVER_VERSION` still said 1. API version 2
//!   arrived in ttkmd-2.0.0 (24401a3, "Driver version 1.33 had a bug in the implementation of
//!   the tlb allocation API, which required an API breaking change to fix in 1.34"). So API 1
//!   names three TLB ABIs (none, 1.32's, 1.34's) and only API >= 2 tells the current one. tt-umd
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

// The structs, one file per group of ioctls (they import `consts` and `size`):
mod control;
mod dma;
mod info;
mod tlb;
// The constants: those of `ioctl.h`, and the PCI ids and mmap offsets.
mod consts;
mod pci;
// The size helper of the structs' `Default`s.
mod size;
// The request numbers, and the first driver version of each feature.
pub mod nr;
pub mod since;
// The layout table of every struct.
mod layout;
// The Linux opcodes and ioctl wrappers.
#[cfg(target_os = "linux")]
mod sys;

pub use consts::*;
pub use control::*;
pub use dma::*;
pub use info::*;
pub use layout::LAYOUT;
pub use pci::*;
#[cfg(target_os = "linux")]
pub use sys::*;
pub use tlb::*;

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
