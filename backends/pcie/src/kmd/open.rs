//! Opening a node and telling what it is: `KmdBar::open` and its steps (the open flags, the sysfs
//! class check before any ioctl, GET_DRIVER_INFO, GET_DEVICE_INFO, the busy clock through
//! SET_POWER_STATE, the firmware version and BAR4 size from sysfs), which `enumerate` shares.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use blackhole_pac::tlb::{TLB_4G_COUNT, TLB_4G_SIZE, TLB_CONFIG_BASE};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use rustix::mm::ProtFlags;
use tt_kmd_sys as sys;

use super::address::{PciAddress, node_number};
use super::device::{
    ARC_RESET_UNIT_BAR0, ARC_RESET_UNIT_LEN, BAR0_REGS_LEN, BAR0_REGS_OFFSET, BAR0_TLB_CONFIG_LEN,
    KmdBar,
};
use super::errno::{errno_message, mmap_error, not_tt_kmd_or, open_error};
use super::mmio::MmioMap;
use crate::bar::DeviceIdentity;
use crate::error::PcieError;

/// tt-kmd's sysfs class directory; device `N` is `tenstorrent!N` in it.
pub const SYSFS_CLASS_DIR: &str = "/sys/class/tenstorrent";
/// The oldest ioctl API this module speaks (tt-kmd 2.0.0).
pub const MIN_API_VERSION: u32 = 2;

const CLOCK_CONSEQUENCE: &str =
    "AICLK stays at its 800 MHz idle; byte and half-word L1 stores may fail (tt-umd #2812)";

/// Opens a node with `access` (`RDONLY` or `RDWR`, with `APPEND` for a probe: a power-aware
/// client starting from "everything off", whose open and close send no power message),
/// close-on-exec and non-blocking (an `O_EXCL` holder elsewhere is `EAGAIN`, not a wait).
/// [`KmdBar::open`] never passes `APPEND`: it runs the card.
pub(super) fn open_node(path: &Path, access: OFlags) -> Result<OwnedFd, PcieError> {
    rustix::fs::open(
        path,
        access | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| open_error(&path.display().to_string(), e))
}

/// The sysfs directory of the character device behind `fd` (`/sys/dev/char/MAJ:MIN`), if `fd`
/// is a character device.
fn char_dev_sysfs(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let st = rustix::fs::fstat(fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::CharacterDevice {
        return None;
    }
    let dev = st.st_rdev;
    Some(PathBuf::from(format!(
        "/sys/dev/char/{}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    )))
}

/// Refuses a character device that sysfs says belongs to another class, before any ioctl
/// reaches it (tt-kmd's request codes carry no size, so another driver could take the pointer
/// for anything). Files that are not character devices answer the ioctls with `ENOTTY`, and a
/// host without sysfs is let through to the same check.
pub(super) fn check_tt_kmd_node(path: &str, fd: BorrowedFd<'_>) -> Result<(), PcieError> {
    let Some(dir) = char_dev_sysfs(fd) else {
        return Ok(());
    };
    let Ok(target) = std::fs::read_link(dir.join("subsystem")) else {
        return Ok(());
    };
    match target.file_name().and_then(|n| n.to_str()) {
        Some("tenstorrent") | None => Ok(()),
        Some(class) => Err(PcieError::NotTtKmd {
            path: path.to_string(),
            why: format!("a character device of class `{class}`, not `tenstorrent`"),
        }),
    }
}

fn driver_info(path: &str, fd: BorrowedFd<'_>) -> Result<sys::GetDriverInfoOut, PcieError> {
    let mut arg = sys::GetDriverInfo::default();
    // SAFETY: `fd` is a tt-kmd node, or a file that is not a character device of another class
    // (check_tt_kmd_node), which answers ENOTTY; `arg` is the Default, whose
    // output_size_bytes is exactly its `out`.
    unsafe { sys::get_driver_info(fd, &mut arg) }
        .map_err(|e| not_tt_kmd_or(path, "GET_DRIVER_INFO", e))?;
    Ok(arg.output)
}

pub(super) fn device_info(
    path: &str,
    fd: BorrowedFd<'_>,
) -> Result<sys::GetDeviceInfoOut, PcieError> {
    let mut arg = sys::GetDeviceInfo::default();
    // SAFETY: as in driver_info: a tt-kmd node or a file that rejects the code; the Default's
    // output_size_bytes is exactly its `out`.
    unsafe { sys::get_device_info(fd, &mut arg) }
        .map_err(|e| not_tt_kmd_or(path, "GET_DEVICE_INFO", e))?;
    Ok(arg.output)
}

/// Refuses a device that is not a Blackhole or a Wormhole B0.
pub(super) fn known_chip(path: &str, info: &sys::GetDeviceInfoOut) -> Result<(), PcieError> {
    if info.vendor_id == sys::PCI_VENDOR_ID_TENSTORRENT
        && [sys::PCI_DEVICE_ID_BLACKHOLE, sys::PCI_DEVICE_ID_WORMHOLE].contains(&info.device_id)
    {
        Ok(())
    } else {
        Err(PcieError::UnknownChip {
            path: path.to_string(),
            vendor: info.vendor_id,
            device: info.device_id,
        })
    }
}

/// Asks for the busy power state on `fd`: the four power flags on (validity 4, no settings).
/// `Ok((raised, note))`; `Err` only when the device is gone.
fn raise_aiclk(
    path: &str,
    fd: BorrowedFd<'_>,
    version: (u8, u8, u8),
) -> Result<(bool, Option<String>), PcieError> {
    let (major, minor, patch) = version;
    if version < sys::since::SET_POWER_STATE {
        return Ok((
            false,
            Some(format!(
                "tt-kmd {major}.{minor}.{patch} has no SET_POWER_STATE (2.6.0+): \
                 {CLOCK_CONSEQUENCE}"
            )),
        ));
    }
    let mut arg = sys::PowerState {
        validity: sys::power_validity(4, 0),
        power_flags: sys::POWER_FLAG_MAX_AI_CLK
            | sys::POWER_FLAG_MRISC_PHY_WAKEUP
            | sys::POWER_FLAG_TENSIX_ENABLE
            | sys::POWER_FLAG_L2CPU_ENABLE,
        ..sys::PowerState::default()
    };
    // SAFETY: `fd` was identified as tt-kmd by GET_DRIVER_INFO; `arg.argsz` is its own size.
    match unsafe { sys::set_power_state(fd, &mut arg) } {
        Ok(()) => Ok((true, None)),
        Err(Errno::NODEV) => Err(PcieError::Gone {
            path: path.to_string(),
        }),
        // tt-kmd answers EINVAL also when ARC did not take the power message (`blackhole.c`
        // `blackhole_set_power_state`: `if (!ok) return -EINVAL`), not only for a bad argument.
        Err(Errno::INVAL) => Ok((
            false,
            Some(format!(
                "SET_POWER_STATE failed: the driver could not deliver the power message to the \
                 ARC firmware, or refused the request (EINVAL): {CLOCK_CONSEQUENCE}"
            )),
        )),
        Err(e) => Ok((
            false,
            Some(format!(
                "SET_POWER_STATE failed: {} (errno {}): {CLOCK_CONSEQUENCE}",
                errno_message(e),
                e.raw_os_error()
            )),
        )),
    }
}

/// The device's sysfs directory: `/sys/class/tenstorrent/tenstorrent!N` when the node's real
/// name is `N`, else the character device's own directory.
fn sysfs_dir(path: &Path, fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let by_number = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()).and_then(node_number))
        .map(|n| Path::new(SYSFS_CLASS_DIR).join(format!("tenstorrent!{n}")))
        .filter(|d| d.is_dir());
    by_number.or_else(|| char_dev_sysfs(fd).filter(|d| d.is_dir()))
}

fn sysfs_attr(dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// 4 GiB windows to use when sysfs does not say how large BAR4 is: all eight only with a driver
/// that checks a window lies in BAR4 before it maps it (tt-kmd 2.7.0, `memory.c`
/// `map_tlb_window`), none with an older one.
pub(crate) fn windows_4g_unknown(driver: (u8, u8, u8)) -> u32 {
    if driver >= (2, 7, 0) { TLB_4G_COUNT } else { 0 }
}

/// 4 GiB windows the device's BAR4 holds (`/sys/bus/pci/devices/<addr>/resource`, line 4),
/// as the driver counts them; `None` if sysfs does not say.
fn bar4_windows(pci: PciAddress) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/sys/bus/pci/devices/{pci}/resource")).ok()?;
    bar_windows(text.lines().nth(4)?)
}

/// `IORESOURCE_UNSET` (Linux `include/linux/ioport.h`): a resource the firmware left without an
/// address; sysfs still shows its size, from start 0.
const IORESOURCE_UNSET: u64 = 0x2000_0000;

/// 4 GiB windows of a BAR from its line of sysfs's `resource` (`start end flags`, in hex): none
/// for a BAR with no address (start 0, or `IORESOURCE_UNSET`: a window there would map from
/// physical address 0 on a driver that does not check), `None` for a line that does not read.
fn bar_windows(line: &str) -> Option<u32> {
    let mut fields = line
        .split_whitespace()
        .map(|f| u64::from_str_radix(f.trim_start_matches("0x"), 16).ok());
    let (start, end, flags) = (fields.next()??, fields.next()??, fields.next()??);
    let len = if start > 0 && end > start && flags & IORESOURCE_UNSET == 0 {
        end - start + 1
    } else {
        0
    };
    Some(
        u32::try_from(len / TLB_4G_SIZE)
            .unwrap_or(u32::MAX)
            .min(TLB_4G_COUNT),
    )
}

impl KmdBar {
    /// Opens the tt-kmd node at `path` (`/dev/tenstorrent/0`, or a `by-id` link).
    ///
    /// In order: open read-write, close-on-exec, non-blocking, **without** `O_APPEND`
    /// (`ENOENT` [`NoSuchDevice`](PcieError::NoSuchDevice), `EACCES`/`EPERM`
    /// [`PermissionDenied`](PcieError::PermissionDenied), `EBUSY`/`EAGAIN`
    /// [`Busy`](PcieError::Busy)); refuse a character device of another class; GET_DRIVER_INFO
    /// (`ENOTTY`/`EINVAL`: [`NotTtKmd`](PcieError::NotTtKmd); API below 2:
    /// [`DriverTooOld`](PcieError::DriverTooOld)); GET_DEVICE_INFO (neither 1e52:b140 nor
    /// 1e52:401e: [`UnknownChip`](PcieError::UnknownChip)); map the BAR0 registers (on a
    /// Wormhole also its ARC reset unit, read-write, for ARC's messages); read the PCIe NIU's
    /// `NOC_NODE_ID`, or a Wormhole's ARC NIU's ([`Hung`](PcieError::Hung) if it reads
    /// 0xFFFF_FFFF); then SET_POWER_STATE
    /// for the busy clock on tt-kmd 2.6.0 and later (when it cannot, `clock_raised` is false
    /// and `clock_note` says why), and the firmware bundle version from sysfs. `ENODEV` at any
    /// step is [`Gone`](PcieError::Gone).
    ///
    /// No release write (SET_NOC_CLEANUP) is registered here: it would land in a tile's L1 at
    /// every close, also when the card was opened only to be listed while another process ran
    /// on it. `firmware::boot` arms it once komorebi's firmware owns the tiles
    /// ([`Bar::arm_release_write`](crate::Bar::arm_release_write); decisions D19).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PcieError> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let fd = open_node(path, OFlags::RDWR)?;
        check_tt_kmd_node(&p, fd.as_fd())?;

        let driver = driver_info(&p, fd.as_fd())?;
        if driver.driver_version < MIN_API_VERSION {
            return Err(PcieError::DriverTooOld {
                path: p,
                found: driver.driver_version,
                needed: MIN_API_VERSION,
            });
        }
        let version = (
            driver.driver_version_major,
            driver.driver_version_minor,
            driver.driver_version_patch,
        );
        let info = device_info(&p, fd.as_fd())?;
        known_chip(&p, &info)?;
        let pci = PciAddress::from_kmd(info.pci_domain, info.bus_dev_fn);

        let map_bar0 = |offset: u32, len: u32, what: &str| {
            MmioMap::map(
                fd.as_fd(),
                sys::MMAP_OFFSET_RESOURCE0_UC + u64::from(offset),
                len as usize,
                ProtFlags::READ,
            )
            .map_err(|e| mmap_error(&p, format!("BAR0 {what} at {offset:#x}"), e))
        };
        let regs = map_bar0(BAR0_REGS_OFFSET, BAR0_REGS_LEN, "registers (NIU, ARC)")?;
        let tlb_regs = map_bar0(TLB_CONFIG_BASE, BAR0_TLB_CONFIG_LEN, "TLB configuration")?;
        let wormhole = info.device_id == sys::PCI_DEVICE_ID_WORMHOLE;
        // A Wormhole's ARC takes the host's messages in its reset unit's registers.
        let arc_regs = wormhole
            .then(|| {
                MmioMap::map(
                    fd.as_fd(),
                    sys::MMAP_OFFSET_RESOURCE0_UC + u64::from(ARC_RESET_UNIT_BAR0),
                    ARC_RESET_UNIT_LEN as usize,
                    ProtFlags::READ | ProtFlags::WRITE,
                )
                .map_err(|e| {
                    mmap_error(
                        &p,
                        format!("BAR0 ARC reset unit at {ARC_RESET_UNIT_BAR0:#x}"),
                        e,
                    )
                })
            })
            .transpose()?;

        let mut bar = Self {
            identity: DeviceIdentity {
                path: p.clone(),
                pci_address: pci.to_string(),
                vendor_id: info.vendor_id,
                device_id: info.device_id,
                api_version: driver.driver_version,
                driver_version: version,
                clock_raised: false,
                clock_note: None,
                firmware_bundle: sysfs_dir(path, fd.as_fd())
                    .and_then(|d| sysfs_attr(&d, "tt_fw_bundle_ver")),
            },
            // A Wormhole has no 4 GiB windows (tt-kmd `wormhole.c`). When sysfs does not say
            // how large BAR4 is, only a driver that checks a window lies in BAR4 before it maps
            // it (2.7.0 on) is trusted with all eight; an older one maps past BAR4's end
            // (`KmdBar::allocate`), so none are used.
            windows_4g: if wormhole {
                0
            } else {
                bar4_windows(pci).unwrap_or(windows_4g_unknown(version))
            },
            regs,
            tlb_regs,
            arc_regs,
            fd: Arc::new(fd),
        };
        bar.check_alive()?;
        let (raised, note) = raise_aiclk(&p, bar.fd.as_fd(), version)?;
        bar.identity.clock_raised = raised;
        bar.identity.clock_note = note;
        Ok(bar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BAR4's windows from its sysfs line: its length over 4 GiB, at most eight; none for a BAR
    /// the firmware left without an address (start 0, or flagged `IORESOURCE_UNSET`, which sysfs
    /// still shows sized).
    #[test]
    fn bar4_s_windows_count_an_assigned_bar_only() {
        let line = |start: u64, len: u64, flags: u64| {
            format!("0x{start:016x} 0x{:016x} 0x{flags:016x}", start + len - 1)
        };
        let (g4, mem64) = (TLB_4G_SIZE, 0x0014_220c);
        assert_eq!(
            bar_windows(&line(0x4000_0000_0000, 32 * g4, mem64)),
            Some(8)
        );
        assert_eq!(bar_windows(&line(0x4000_0000_0000, 2 * g4, mem64)), Some(2));
        assert_eq!(bar_windows(&line(0x4000_0000_0000, g4 / 2, mem64)), Some(0));
        assert_eq!(bar_windows(&line(0, 32 * g4, mem64)), Some(0), "start 0");
        assert_eq!(
            bar_windows(&line(0x4000_0000_0000, 32 * g4, mem64 | IORESOURCE_UNSET)),
            Some(0),
            "unset"
        );
        assert_eq!(
            bar_windows("0x0000000000000000 0x0000000000000000 0x0000000000000000"),
            Some(0)
        );
        assert_eq!(bar_windows("garbage"), None);
    }

    #[test]
    fn a_blackhole_and_a_wormhole_are_known_and_anything_else_is_named() {
        let info = |vendor_id, device_id| sys::GetDeviceInfoOut {
            vendor_id,
            device_id,
            ..sys::GetDeviceInfoOut::default()
        };
        assert!(known_chip("n", &info(0x1E52, 0xB140)).is_ok());
        assert!(known_chip("n", &info(0x1E52, 0x401E)).is_ok());
        let e = known_chip("/dev/tenstorrent/0", &info(0x1E52, 0xFACA)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/tenstorrent/0: PCI id 1e52:faca is not a chip this host drives (a Blackhole is \
             1e52:b140, a Wormhole B0 1e52:401e)"
        );
        assert!(known_chip("n", &info(0x10DE, 0x401E)).is_err());
    }

    #[test]
    fn old_drivers_keep_the_idle_clock() {
        let null = match std::fs::File::open("/dev/null") {
            Ok(f) => f,
            Err(_) => return,
        };
        // 2.5.0 never reaches the ioctl, so any fd will do.
        let (raised, note) = raise_aiclk("x", null.as_fd(), (2, 5, 0)).expect("no ioctl");
        assert!(!raised);
        let note = note.expect("a note");
        assert!(
            note.starts_with("tt-kmd 2.5.0 has no SET_POWER_STATE (2.6.0+)"),
            "{note}"
        );
        assert!(note.contains("800 MHz"), "{note}");
    }
}
