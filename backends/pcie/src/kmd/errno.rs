//! errno to `PcieError`: what a failing `open(2)`, ioctl, mmap or munmap of a tt-kmd node means,
//! and the system's message for an errno. Imports none of the module's other files.

use rustix::io::Errno;

use crate::error::PcieError;

/// The system's message for `errno`, without std's "(os error N)" suffix.
pub(super) fn errno_message(errno: Errno) -> String {
    let text = std::io::Error::from(errno).to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// What `open(2)` failing with `errno` means for a device node.
pub(super) fn open_error(path: &str, errno: Errno) -> PcieError {
    let path = path.to_string();
    match errno {
        Errno::NOENT | Errno::NXIO | Errno::NOTDIR => PcieError::NoSuchDevice { path },
        Errno::ACCESS | Errno::PERM => PcieError::PermissionDenied { path },
        Errno::BUSY | Errno::AGAIN => PcieError::Busy { path },
        Errno::NODEV => PcieError::Gone { path },
        Errno::ISDIR => PcieError::NotTtKmd {
            path,
            why: "a directory".to_string(),
        },
        _ => PcieError::Ioctl {
            path,
            ioctl: "open",
            errno: errno.raw_os_error(),
            message: errno_message(errno),
        },
    }
}

/// What an ioctl failing with `errno` means, when no errno is special to it.
pub(super) fn ioctl_error(path: &str, ioctl: &'static str, errno: Errno) -> PcieError {
    match errno {
        Errno::NODEV => PcieError::Gone {
            path: path.to_string(),
        },
        _ => PcieError::Ioctl {
            path: path.to_string(),
            ioctl,
            errno: errno.raw_os_error(),
            message: errno_message(errno),
        },
    }
}

/// What an mmap or munmap failing with `errno` means.
pub(super) fn mmap_error(path: &str, what: String, errno: Errno) -> PcieError {
    match errno {
        Errno::NODEV => PcieError::Gone {
            path: path.to_string(),
        },
        _ => PcieError::Mmap {
            path: path.to_string(),
            what,
            errno: errno.raw_os_error(),
            message: errno_message(errno),
        },
    }
}

/// The first ioctl's answer on a file that is not a tt-kmd node.
pub(super) fn not_tt_kmd_or(path: &str, ioctl: &'static str, errno: Errno) -> PcieError {
    match errno {
        Errno::NOTTY | Errno::INVAL => PcieError::NotTtKmd {
            path: path.to_string(),
            why: format!(
                "{ioctl} answered {} ({})",
                errno_name(errno),
                errno_message(errno)
            ),
        },
        _ => ioctl_error(path, ioctl, errno),
    }
}

fn errno_name(errno: Errno) -> &'static str {
    match errno {
        Errno::NOTTY => "ENOTTY",
        Errno::INVAL => "EINVAL",
        _ => "an error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_map_to_the_errors() {
        let p = "/dev/tenstorrent/0";
        assert!(matches!(
            open_error(p, Errno::NOENT),
            PcieError::NoSuchDevice { .. }
        ));
        assert!(matches!(
            open_error(p, Errno::ACCESS),
            PcieError::PermissionDenied { .. }
        ));
        assert!(matches!(
            open_error(p, Errno::PERM),
            PcieError::PermissionDenied { .. }
        ));
        assert!(matches!(open_error(p, Errno::BUSY), PcieError::Busy { .. }));
        assert!(matches!(
            open_error(p, Errno::AGAIN),
            PcieError::Busy { .. }
        ));
        assert!(matches!(
            open_error(p, Errno::NODEV),
            PcieError::Gone { .. }
        ));
        assert!(matches!(
            ioctl_error(p, "CONFIGURE_TLB", Errno::NODEV),
            PcieError::Gone { .. }
        ));
        match ioctl_error(p, "FREE_TLB", Errno::BUSY) {
            PcieError::Ioctl {
                ioctl,
                errno,
                message,
                ..
            } => {
                assert_eq!((ioctl, errno), ("FREE_TLB", 16));
                assert!(!message.contains("os error"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            not_tt_kmd_or(p, "GET_DRIVER_INFO", Errno::NOTTY),
            PcieError::NotTtKmd { .. }
        ));
    }
}
