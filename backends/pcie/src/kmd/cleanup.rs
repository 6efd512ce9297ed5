//! SET_NOC_CLEANUP: the one NoC write tt-kmd makes when this process's descriptor is released
//! (tt-kmd 2.2.0 and later), checked as the driver checks it. A leaf: it imports only `errno`.

use std::os::fd::BorrowedFd;

use rustix::io::Errno;
use tt_kmd_sys as sys;

use crate::error::PcieError;

/// SET_NOC_CLEANUP's argument for a write of `value` at `addr` of `target` (NoC 0), checked
/// as the driver checks it (coordinates, alignment), since the driver answers a bad one with a
/// bare `EINVAL`. Coordinates above 63 fit no NoC (the driver itself allows 64).
pub(super) fn noc_cleanup_arg(
    target: (u8, u8),
    addr: u64,
    value: u32,
) -> Result<sys::SetNocCleanup, PcieError> {
    let (x, y) = target;
    if x > 63 || y > 63 || !addr.is_multiple_of(4) {
        return Err(PcieError::Target {
            what: format!("a release write to ({x}, {y}) at {addr:#x}"),
            why: "needs coordinates 0..=63 and a 4-byte aligned address".into(),
        });
    }
    Ok(sys::SetNocCleanup {
        enabled: 1,
        x,
        y,
        noc: 0,
        addr,
        data: u64::from(value),
        ..sys::SetNocCleanup::default()
    })
}

/// Registers `arg` with SET_NOC_CLEANUP on `fd`, if the driver (`version`) has it:
/// [`PcieError::DriverLacks`] before 2.2.0, without reaching the ioctl.
pub(super) fn set_noc_cleanup(
    path: &str,
    fd: BorrowedFd<'_>,
    version: (u8, u8, u8),
    mut arg: sys::SetNocCleanup,
) -> Result<(), PcieError> {
    if version < sys::since::SET_NOC_CLEANUP {
        return Err(PcieError::DriverLacks {
            path: path.to_string(),
            feature: "SET_NOC_CLEANUP",
            needed: sys::since::SET_NOC_CLEANUP,
            found: version,
        });
    }
    arg.argsz = std::mem::size_of::<sys::SetNocCleanup>() as u32;
    // SAFETY: `fd` was identified as tt-kmd by GET_DRIVER_INFO at open (or rejects the code);
    // `arg.argsz` is exactly its own size.
    unsafe { sys::set_noc_cleanup(fd, &mut arg) }.map_err(|e| match e {
        Errno::NODEV => PcieError::Gone {
            path: path.to_string(),
        },
        e => super::errno::ioctl_error(path, "SET_NOC_CLEANUP", e),
    })
}
