//! The request codes and one `unsafe fn` per ioctl (Linux). The safety rules they share are in
//! the crate docs, "Safety of the ioctl functions".

use std::os::fd::BorrowedFd;

use rustix::io::Result;
use rustix::ioctl::{NoArg, Opcode, Updater, ioctl, opcode};

use crate::consts::TENSTORRENT_IOCTL_MAGIC;
use crate::nr;
use crate::{control::*, dma::*, info::*, tlb::*};

/// `TENSTORRENT_IOCTL_GET_DEVICE_INFO` = `_IO(0xFA, 0)`.
#[doc(alias = "TENSTORRENT_IOCTL_GET_DEVICE_INFO")]
pub const IOCTL_GET_DEVICE_INFO: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::GET_DEVICE_INFO);
/// `TENSTORRENT_IOCTL_GET_HARVESTING` = `_IO(0xFA, 1)`.
#[doc(alias = "TENSTORRENT_IOCTL_GET_HARVESTING")]
pub const IOCTL_GET_HARVESTING: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::GET_HARVESTING);
/// `TENSTORRENT_IOCTL_QUERY_MAPPINGS` = `_IO(0xFA, 2)`.
#[doc(alias = "TENSTORRENT_IOCTL_QUERY_MAPPINGS")]
pub const IOCTL_QUERY_MAPPINGS: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::QUERY_MAPPINGS);
/// `TENSTORRENT_IOCTL_ALLOCATE_DMA_BUF` = `_IO(0xFA, 3)`.
#[doc(alias = "TENSTORRENT_IOCTL_ALLOCATE_DMA_BUF")]
pub const IOCTL_ALLOCATE_DMA_BUF: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::ALLOCATE_DMA_BUF);
/// `TENSTORRENT_IOCTL_FREE_DMA_BUF` = `_IO(0xFA, 4)`.
#[doc(alias = "TENSTORRENT_IOCTL_FREE_DMA_BUF")]
pub const IOCTL_FREE_DMA_BUF: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::FREE_DMA_BUF);
/// `TENSTORRENT_IOCTL_GET_DRIVER_INFO` = `_IO(0xFA, 5)`.
#[doc(alias = "TENSTORRENT_IOCTL_GET_DRIVER_INFO")]
pub const IOCTL_GET_DRIVER_INFO: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::GET_DRIVER_INFO);
/// `TENSTORRENT_IOCTL_RESET_DEVICE` = `_IO(0xFA, 6)`.
#[doc(alias = "TENSTORRENT_IOCTL_RESET_DEVICE")]
pub const IOCTL_RESET_DEVICE: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::RESET_DEVICE);
/// `TENSTORRENT_IOCTL_PIN_PAGES` = `_IO(0xFA, 7)`.
#[doc(alias = "TENSTORRENT_IOCTL_PIN_PAGES")]
pub const IOCTL_PIN_PAGES: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::PIN_PAGES);
/// `TENSTORRENT_IOCTL_LOCK_CTL` = `_IO(0xFA, 8)`.
#[doc(alias = "TENSTORRENT_IOCTL_LOCK_CTL")]
pub const IOCTL_LOCK_CTL: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::LOCK_CTL);
/// `TENSTORRENT_IOCTL_MAP_PEER_BAR` = `_IO(0xFA, 9)`.
#[doc(alias = "TENSTORRENT_IOCTL_MAP_PEER_BAR")]
pub const IOCTL_MAP_PEER_BAR: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::MAP_PEER_BAR);
/// `TENSTORRENT_IOCTL_UNPIN_PAGES` = `_IO(0xFA, 10)`.
#[doc(alias = "TENSTORRENT_IOCTL_UNPIN_PAGES")]
pub const IOCTL_UNPIN_PAGES: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::UNPIN_PAGES);
/// `TENSTORRENT_IOCTL_ALLOCATE_TLB` = `_IO(0xFA, 11)`.
#[doc(alias = "TENSTORRENT_IOCTL_ALLOCATE_TLB")]
pub const IOCTL_ALLOCATE_TLB: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::ALLOCATE_TLB);
/// `TENSTORRENT_IOCTL_FREE_TLB` = `_IO(0xFA, 12)`.
#[doc(alias = "TENSTORRENT_IOCTL_FREE_TLB")]
pub const IOCTL_FREE_TLB: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::FREE_TLB);
/// `TENSTORRENT_IOCTL_CONFIGURE_TLB` = `_IO(0xFA, 13)`.
#[doc(alias = "TENSTORRENT_IOCTL_CONFIGURE_TLB")]
pub const IOCTL_CONFIGURE_TLB: Opcode = opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::CONFIGURE_TLB);
/// `TENSTORRENT_IOCTL_SET_NOC_CLEANUP` = `_IO(0xFA, 14)`.
#[doc(alias = "TENSTORRENT_IOCTL_SET_NOC_CLEANUP")]
pub const IOCTL_SET_NOC_CLEANUP: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::SET_NOC_CLEANUP);
/// `TENSTORRENT_IOCTL_SET_POWER_STATE` = `_IO(0xFA, 15)`.
#[doc(alias = "TENSTORRENT_IOCTL_SET_POWER_STATE")]
pub const IOCTL_SET_POWER_STATE: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::SET_POWER_STATE);
/// `TENSTORRENT_IOCTL_EXPORT_TLB_DMABUF` = `_IO(0xFA, 16)`.
#[doc(alias = "TENSTORRENT_IOCTL_EXPORT_TLB_DMABUF")]
pub const IOCTL_EXPORT_TLB_DMABUF: Opcode =
    opcode::none(TENSTORRENT_IOCTL_MAGIC, nr::EXPORT_TLB_DMABUF);

/// Defines one wrapper: `$name(fd, &mut $ty)` issuing `$op` through an `Updater`.
macro_rules! updater_ioctl {
    ($(#[$doc:meta])* $name:ident, $op:ident, $ty:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// See the [crate rules](crate#safety-of-the-ioctl-functions): `fd` is a tt-kmd node
        /// (or rejects the code), and the struct's size fields do not exceed it.
        pub unsafe fn $name(fd: BorrowedFd<'_>, arg: &mut $ty) -> Result<()> {
            // SAFETY: `$op` is this struct's request code and `$ty` the `#[repr(C)]` layout of
            // the C struct the driver reads and writes for it (checked by the layout tests);
            // `arg` is a live exclusive borrow for the whole call, so the kernel may write it.
            // That `fd` is a tt-kmd node and the size fields are in bounds is the caller's
            // contract.
            unsafe { ioctl(fd, Updater::<$op, $ty>::new(arg)) }
        }
    };
}

updater_ioctl!(
    /// GET_DEVICE_INFO: PCI ids and address.
    get_device_info,
    IOCTL_GET_DEVICE_INFO,
    GetDeviceInfo
);

/// QUERY_MAPPINGS: the BAR mappings, into `N` entries (the kernel zeroes the ones it does not
/// fill).
///
/// # Safety
///
/// See the [crate rules](crate#safety-of-the-ioctl-functions); `output_mapping_count` must be
/// at most `N`.
pub unsafe fn query_mappings<const N: usize>(
    fd: BorrowedFd<'_>,
    arg: &mut QueryMappings<N>,
) -> Result<()> {
    // SAFETY: IOCTL_QUERY_MAPPINGS takes a `tenstorrent_query_mappings` followed by
    // `output_mapping_count` `tenstorrent_mapping`s; `QueryMappings<N>` is that layout with N
    // entries and the caller keeps the count at most N. `arg` is exclusively borrowed for the
    // call.
    unsafe {
        ioctl(
            fd,
            Updater::<IOCTL_QUERY_MAPPINGS, QueryMappings<N>>::new(arg),
        )
    }
}

updater_ioctl!(
    /// ALLOCATE_DMA_BUF: a DMA buffer the device can reach, mapped later at `mapping_offset`.
    allocate_dma_buf,
    IOCTL_ALLOCATE_DMA_BUF,
    AllocateDmaBuf
);

updater_ioctl!(
    /// FREE_DMA_BUF: always `EINVAL` in the driver (buffers are freed on close).
    free_dma_buf,
    IOCTL_FREE_DMA_BUF,
    FreeDmaBuf
);

updater_ioctl!(
    /// GET_DRIVER_INFO: the ioctl API version and the driver's semantic version. Call it first.
    get_driver_info,
    IOCTL_GET_DRIVER_INFO,
    GetDriverInfo
);

updater_ioctl!(
    /// RESET_DEVICE. A destructive reset invalidates every other fd and mapping of the device.
    reset_device,
    IOCTL_RESET_DEVICE,
    ResetDevice
);

updater_ioctl!(
    /// PIN_PAGES with the 8-byte output (physical address or IOVA).
    pin_pages,
    IOCTL_PIN_PAGES,
    PinPages
);

updater_ioctl!(
    /// PIN_PAGES with the 16-byte output (also the NoC address).
    pin_pages_extended,
    IOCTL_PIN_PAGES,
    PinPagesExtended
);

updater_ioctl!(
    /// LOCK_CTL: acquire, release or test one of the device's 64 locks.
    lock_ctl,
    IOCTL_LOCK_CTL,
    LockCtl
);

updater_ioctl!(
    /// MAP_PEER_BAR: a DMA address for another device's BAR range.
    map_peer_bar,
    IOCTL_MAP_PEER_BAR,
    MapPeerBar
);

updater_ioctl!(
    /// UNPIN_PAGES: undo one whole PIN_PAGES.
    unpin_pages,
    IOCTL_UNPIN_PAGES,
    UnpinPages
);

updater_ioctl!(
    /// ALLOCATE_TLB: claim a window of `input.size`. Check the result before mapping
    /// `output.mmap_offset_*`: on failure they are 0, which is BAR0.
    allocate_tlb,
    IOCTL_ALLOCATE_TLB,
    AllocateTlb
);

updater_ioctl!(
    /// FREE_TLB: release a window; unmap it first (else `EBUSY`).
    free_tlb,
    IOCTL_FREE_TLB,
    FreeTlb
);

updater_ioctl!(
    /// CONFIGURE_TLB: point a window at a NoC target.
    configure_tlb,
    IOCTL_CONFIGURE_TLB,
    ConfigureTlb
);

updater_ioctl!(
    /// SET_NOC_CLEANUP (2.2.0+): register or clear the write done when the fd is released.
    set_noc_cleanup,
    IOCTL_SET_NOC_CLEANUP,
    SetNocCleanup
);

updater_ioctl!(
    /// SET_POWER_STATE (2.6.0+): this fd's power request.
    set_power_state,
    IOCTL_SET_POWER_STATE,
    PowerState
);

updater_ioctl!(
    /// EXPORT_TLB_DMABUF (2.10.0+): on success `arg.fd` is a new dma-buf fd the caller owns and
    /// must close (e.g. `OwnedFd::from_raw_fd`).
    export_tlb_dmabuf,
    IOCTL_EXPORT_TLB_DMABUF,
    ExportTlbDmabuf
);

/// GET_HARVESTING: no struct exists for it; the driver answers `EINVAL` without reading
/// anything. Here only for completeness; harvesting is read from ARC telemetry.
///
/// # Safety
///
/// `fd` is a tt-kmd node, or rejects the code (see the
/// [crate rules](crate#safety-of-the-ioctl-functions)).
pub unsafe fn get_harvesting(fd: BorrowedFd<'_>) -> Result<()> {
    // SAFETY: `NoArg` passes no pointer; the tt-kmd driver does nothing for this code. That
    // `fd` is such a node (or rejects the code) is the caller's contract.
    unsafe { ioctl(fd, NoArg::<IOCTL_GET_HARVESTING>::new()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn request_codes_are_io_fa_n() {
        // gcc printed _IO(0xFA, 0) = 0xfa00, _IO(0xFA, 11) = 0xfa0b, _IO(0xFA, 16) = 0xfa10.
        assert_eq!(IOCTL_GET_DEVICE_INFO as u64, 0xFA00);
        assert_eq!(IOCTL_ALLOCATE_TLB as u64, 0xFA0B);
        assert_eq!(IOCTL_EXPORT_TLB_DMABUF as u64, 0xFA10);
        let all = [
            IOCTL_GET_DEVICE_INFO,
            IOCTL_GET_HARVESTING,
            IOCTL_QUERY_MAPPINGS,
            IOCTL_ALLOCATE_DMA_BUF,
            IOCTL_FREE_DMA_BUF,
            IOCTL_GET_DRIVER_INFO,
            IOCTL_RESET_DEVICE,
            IOCTL_PIN_PAGES,
            IOCTL_LOCK_CTL,
            IOCTL_MAP_PEER_BAR,
            IOCTL_UNPIN_PAGES,
            IOCTL_ALLOCATE_TLB,
            IOCTL_FREE_TLB,
            IOCTL_CONFIGURE_TLB,
            IOCTL_SET_NOC_CLEANUP,
            IOCTL_SET_POWER_STATE,
            IOCTL_EXPORT_TLB_DMABUF,
        ];
        for (n, code) in all.iter().enumerate() {
            assert_eq!(*code as u64, 0xFA00 | n as u64, "request {n}");
        }
    }

    #[test]
    fn dev_null_is_not_tt_kmd() {
        let null = match std::fs::File::open("/dev/null") {
            Ok(f) => f,
            Err(_) => return, // a sandbox without /dev/null: nothing to test
        };
        let mut info = GetDriverInfo::default();
        // SAFETY: /dev/null rejects every ioctl with ENOTTY; the struct's size field is its
        // Default.
        let r = unsafe { get_driver_info(null.as_fd(), &mut info) };
        assert_eq!(r, Err(rustix::io::Errno::NOTTY));
    }
}
