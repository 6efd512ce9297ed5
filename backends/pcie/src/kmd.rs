//! The driver's [`Bar`]: a Blackhole card through tt-kmd's ioctls and mmaps (Linux only).
//!
//! * [`enumerate`] lists `/dev/tenstorrent/N`, sorted by PCI address (node numbers change
//!   across resets, PCI addresses do not; tt-umd sorts the same way), each with what it is or
//!   why it cannot be used, filtered by `TT_VISIBLE_DEVICES` when that is set.
//! * [`KmdBar::open`] opens one node, checks that it is tt-kmd with ioctl API 2 or later and a
//!   Blackhole, maps the BAR0 registers, checks the device answers, and asks the driver for the
//!   busy clock (SET_POWER_STATE, tt-kmd 2.6.0 and later).
//! * [`KmdWindow`] is one TLB window: allocated (ALLOCATE_TLB, checked before anything is
//!   mapped), mapped with exactly its size, accessed with volatile 32-bit loads and stores
//!   only, configured (CONFIGURE_TLB), unmapped and freed.
//!
//! # Lifetimes
//!
//! A window holds a reference to the device's file descriptor, so it stays usable (and can be
//! freed) even after its [`KmdBar`] is dropped; the fd closes when the last of them goes.
//! [`Bar::free`] unmaps, then FREE_TLB, and reports errors; dropping a window does the same and
//! ignores them. A window that could not be freed is freed by the driver when the fd closes.
//!
//! # What the driver does not check, and what this module does
//!
//! CONFIGURE_TLB truncates out-of-range coordinates, NoC and ordering values silently, so
//! [`Bar::configure`] validates with [`TlbConfig::encode`] first and answers
//! [`PcieError::TlbConfig`]. The ioctl's `static_vc` byte is only the *enable* bit of the
//! register: a `TlbConfig::static_vc` of `Some(vc)` enables a static VC, but the VC number
//! (buddy and class bits) **cannot be set through the ioctl** and stays 0 (pcie-host-facts.md
//! §1.2); pass `None` for multicast, which needs class 0b10.
//!
//! # After a reset
//!
//! A destructive reset by anyone makes every ioctl on this fd answer `ENODEV`
//! ([`PcieError::Gone`]), and an access through an old mapping raises `SIGBUS`, which this
//! module does not catch. Open the device again.

use std::ffi::c_void;
use std::fmt;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blackhole_pac::arc::{HUNG_READ, PCIE_NOC_NODE_ID_BAR0};
use blackhole_pac::tlb::{
    KERNEL_TLB_INDEX, TLB_4G_COUNT, TLB_4G_SIZE, TLB_CONFIG_BASE, TlbConfig, TlbSize,
};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};
use tt_kmd_sys as sys;

use crate::bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
use crate::error::PcieError;

/// Where tt-kmd puts its device nodes.
pub const DEVICE_DIR: &str = "/dev/tenstorrent";
/// tt-kmd's sysfs class directory; device `N` is `tenstorrent!N` in it.
pub const SYSFS_CLASS_DIR: &str = "/sys/class/tenstorrent";
/// The environment variable that restricts [`enumerate`] (see [`select_visible`]).
pub const VISIBLE_DEVICES_VAR: &str = "TT_VISIBLE_DEVICES";
/// The oldest ioctl API this module speaks (tt-kmd 2.0.0).
pub const MIN_API_VERSION: u32 = 2;
/// The AICLK, in MHz, that [`Bar::pass_time`] converts host time at (the busy clock).
pub const AICLK_BUSY_MHZ: u64 = 1350;
/// Start of the BAR0 register range mapped at open: the PCIe tile's NIU configuration and ARC's
/// APB space (`0x1FD0_0000 .. 0x2000_0000`, 3 MiB, as tt-umd maps it).
pub const BAR0_REGS_OFFSET: u32 = 0x1FD0_0000;
/// Length of that range.
pub const BAR0_REGS_LEN: u32 = 3 << 20;
/// Length of the TLB configuration registers' range mapped at open (read-only), from
/// [`TLB_CONFIG_BASE`]: every window's three words and the strided registers.
pub const BAR0_TLB_CONFIG_LEN: u32 = 4096;
/// How long [`Bar::pass_time`] asks to sleep.
pub const PASS_TIME_SLEEP: Duration = Duration::from_micros(1);

const BAR0_MAPPED: &str = "0x1FC0_0000..0x1FC0_1000 (TLB configuration, read-only) and \
                           0x1FD0_0000..0x2000_0000 (NIU configuration, ARC)";
const CLOCK_CONSEQUENCE: &str =
    "AICLK stays at its 800 MHz idle; byte and half-word L1 stores may fail (tt-umd #2812)";

// ---------------------------------------------------------------------------------------------
// PCI addresses and enumeration

/// A PCI address, ordered as tt-umd orders devices (domain, bus, device, function).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    /// PCI domain (segment).
    pub domain: u16,
    /// Bus.
    pub bus: u8,
    /// Device (0..32).
    pub device: u8,
    /// Function (0..8).
    pub function: u8,
}

impl PciAddress {
    /// The address GET_DEVICE_INFO reports: `pci_domain` and `bus_dev_fn` (bits 0..3 function,
    /// 3..8 device, 8..16 bus).
    pub const fn from_kmd(pci_domain: u16, bus_dev_fn: u16) -> Self {
        Self {
            domain: pci_domain,
            bus: (bus_dev_fn >> 8) as u8,
            device: ((bus_dev_fn >> 3) & 0x1F) as u8,
            function: (bus_dev_fn & 0x7) as u8,
        }
    }
}

impl fmt::Display for PciAddress {
    /// `dddd:bb:dd.f`, lower-case hex, as sysfs names devices.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

/// One entry of [`enumerate`]: a device node and what opening it showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceNode {
    /// The node's path (`/dev/tenstorrent/0`).
    pub path: String,
    /// `N` of `/dev/tenstorrent/N` (it may change across a reset; the PCI address does not).
    pub node: Option<u32>,
    /// The PCI address, when GET_DEVICE_INFO answered.
    pub pci_address: Option<PciAddress>,
    /// PCI vendor and device id, when GET_DEVICE_INFO answered.
    pub pci_id: Option<(u16, u16)>,
    /// Why the node cannot be used, if it cannot (could not be opened, not tt-kmd, not a
    /// Blackhole, ...). [`KmdBar::open`] checks more (driver version, BAR mappings).
    pub error: Option<PcieError>,
}

impl DeviceNode {
    /// Whether the node looked like a usable Blackhole.
    pub fn is_blackhole(&self) -> bool {
        self.error.is_none()
            && self.pci_id == Some((sys::PCI_VENDOR_ID_TENSTORRENT, sys::PCI_DEVICE_ID_BLACKHOLE))
    }
}

/// Every tt-kmd device node of this host, sorted by PCI address (nodes whose address could not
/// be read last, by node number), restricted by `TT_VISIBLE_DEVICES` when it is set (see
/// [`select_visible`]). No `/dev/tenstorrent` at all is an empty list.
///
/// Each node is opened read-only with `O_NONBLOCK` (so a node held with `O_EXCL` by another
/// process shows as [`PcieError::Busy`] instead of blocking) for one GET_DEVICE_INFO, then
/// closed. Like every plain open this counts as a client of the driver's power aggregation for
/// that moment.
pub fn enumerate() -> Vec<DeviceNode> {
    let nodes = enumerate_in(Path::new(DEVICE_DIR));
    match std::env::var_os(VISIBLE_DEVICES_VAR) {
        Some(spec) => select_visible(nodes, &spec.to_string_lossy()),
        None => nodes,
    }
}

/// [`enumerate`] over the nodes of `dir` (character devices with numeric names; `by-id` and
/// anything else is skipped; symbolic links are followed), without `TT_VISIBLE_DEVICES`.
pub fn enumerate_in(dir: &Path) -> Vec<DeviceNode> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            let path = dir.display().to_string();
            let error = match Errno::from_io_error(&e) {
                Some(errno) => open_error(&path, errno),
                None => PcieError::Ioctl {
                    path: path.clone(),
                    ioctl: "open",
                    errno: 0,
                    message: e.to_string(),
                },
            };
            return vec![DeviceNode {
                path,
                node: None,
                pci_address: None,
                pci_id: None,
                error: Some(error),
            }];
        }
    };
    let mut nodes: Vec<DeviceNode> = entries
        .flatten()
        .filter_map(|entry| {
            let node = entry.file_name().to_str().and_then(node_number)?;
            let path = entry.path();
            let is_char = std::fs::metadata(&path)
                .map(|m| std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()))
                .unwrap_or(false);
            is_char.then(|| probe(&path, node))
        })
        .collect();
    sort_nodes(&mut nodes);
    nodes
}

/// By PCI address, then the nodes without one by node number.
fn sort_nodes(nodes: &mut [DeviceNode]) {
    nodes.sort_by_key(|n| (n.pci_address.is_none(), n.pci_address, n.node));
}

/// Restricts `nodes` (sorted as [`enumerate`] sorts them) to those `spec` names, the
/// `TT_VISIBLE_DEVICES` format of tt-umd: a comma-separated list, whitespace ignored, of
///
/// * integers: an index into `nodes` (this is the PCI-address order, which survives resets;
///   tt-umd today indexes its list sorted by node number, and plans to move to this);
/// * PCI addresses or parts of one (a token with `:` or `.` and otherwise only hex digits):
///   every node whose `dddd:bb:dd.f` contains it (`0000:c` is a whole Galaxy tray).
///
/// The result keeps `nodes`' order, each node once. An empty `spec` selects nothing. A token
/// that matches nothing becomes an entry of its own with [`PcieError::NoSuchDevice`], so a
/// listing shows the mistake (tt-umd throws).
pub fn select_visible(nodes: Vec<DeviceNode>, spec: &str) -> Vec<DeviceNode> {
    let mut keep = vec![false; nodes.len()];
    let mut unmatched = Vec::new();
    for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let mut hit = false;
        if is_bdf_token(token) {
            let token = token.to_ascii_lowercase();
            for (i, node) in nodes.iter().enumerate() {
                if node
                    .pci_address
                    .is_some_and(|a| a.to_string().contains(&token))
                {
                    keep[i] = true;
                    hit = true;
                }
            }
        } else if let Ok(i) = token.parse::<usize>() {
            if let Some(k) = keep.get_mut(i) {
                *k = true;
                hit = true;
            }
        }
        if !hit {
            unmatched.push(token.to_string());
        }
    }
    let mut selected: Vec<DeviceNode> = nodes
        .into_iter()
        .zip(keep)
        .filter_map(|(node, keep)| keep.then_some(node))
        .collect();
    selected.extend(unmatched.into_iter().map(|token| {
        let path = format!("{VISIBLE_DEVICES_VAR} entry `{token}`");
        DeviceNode {
            path: path.clone(),
            node: None,
            pci_address: None,
            pci_id: None,
            error: Some(PcieError::NoSuchDevice { path }),
        }
    }));
    selected
}

fn is_bdf_token(token: &str) -> bool {
    token.contains([':', '.'])
        && token
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
}

/// `N` of a node name that is all decimal digits.
fn node_number(name: &str) -> Option<u32> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

/// Opens `path` read-only for one GET_DEVICE_INFO.
fn probe(path: &Path, node: u32) -> DeviceNode {
    let p = path.display().to_string();
    let mut entry = DeviceNode {
        path: p.clone(),
        node: Some(node),
        pci_address: None,
        pci_id: None,
        error: None,
    };
    let info = open_node(path, OFlags::RDONLY).and_then(|fd| {
        check_tt_kmd_node(&p, fd.as_fd())?;
        device_info(&p, fd.as_fd())
    });
    match info {
        Ok(info) => {
            entry.pci_address = Some(PciAddress::from_kmd(info.pci_domain, info.bus_dev_fn));
            entry.pci_id = Some((info.vendor_id, info.device_id));
            entry.error = not_blackhole(&p, &info).err();
        }
        Err(e) => entry.error = Some(e),
    }
    entry
}

// ---------------------------------------------------------------------------------------------
// Errors

/// The system's message for `errno`, without std's "(os error N)" suffix.
fn errno_message(errno: Errno) -> String {
    let text = std::io::Error::from(errno).to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// What `open(2)` failing with `errno` means for a device node.
fn open_error(path: &str, errno: Errno) -> PcieError {
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
fn ioctl_error(path: &str, ioctl: &'static str, errno: Errno) -> PcieError {
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
fn mmap_error(path: &str, what: String, errno: Errno) -> PcieError {
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
fn not_tt_kmd_or(path: &str, ioctl: &'static str, errno: Errno) -> PcieError {
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

// ---------------------------------------------------------------------------------------------
// Opening and identifying

/// Opens a node with `access` (`RDONLY` or `RDWR`), close-on-exec, non-blocking (an `O_EXCL`
/// holder elsewhere is `EAGAIN`, not a wait) and never `O_APPEND` (which would make the fd a
/// power-aware client starting from "everything off").
fn open_node(path: &Path, access: OFlags) -> Result<OwnedFd, PcieError> {
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
fn check_tt_kmd_node(path: &str, fd: BorrowedFd<'_>) -> Result<(), PcieError> {
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

fn device_info(path: &str, fd: BorrowedFd<'_>) -> Result<sys::GetDeviceInfoOut, PcieError> {
    let mut arg = sys::GetDeviceInfo::default();
    // SAFETY: as in driver_info: a tt-kmd node or a file that rejects the code; the Default's
    // output_size_bytes is exactly its `out`.
    unsafe { sys::get_device_info(fd, &mut arg) }
        .map_err(|e| not_tt_kmd_or(path, "GET_DEVICE_INFO", e))?;
    Ok(arg.output)
}

fn not_blackhole(path: &str, info: &sys::GetDeviceInfoOut) -> Result<(), PcieError> {
    if (info.vendor_id, info.device_id)
        == (sys::PCI_VENDOR_ID_TENSTORRENT, sys::PCI_DEVICE_ID_BLACKHOLE)
    {
        Ok(())
    } else {
        Err(PcieError::NotBlackhole {
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

/// 4 GiB windows the device's BAR4 holds (`/sys/bus/pci/devices/<addr>/resource`, line 4),
/// as the driver counts them; `None` if sysfs does not say.
fn bar4_windows(pci: PciAddress) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/sys/bus/pci/devices/{pci}/resource")).ok()?;
    let line = text.lines().nth(4)?;
    let mut fields = line
        .split_whitespace()
        .map(|f| u64::from_str_radix(f.trim_start_matches("0x"), 16).ok());
    let (start, end) = (fields.next()??, fields.next()??);
    let len = if end > start { end - start + 1 } else { 0 };
    Some(
        u32::try_from(len / TLB_4G_SIZE)
            .unwrap_or(u32::MAX)
            .min(TLB_4G_COUNT),
    )
}

// ---------------------------------------------------------------------------------------------
// Mappings

/// One mmap of the device, owned: unmapped on drop. Never exposed as a slice or reference
/// (it is MMIO); every access is a volatile 32-bit load or store at a checked offset.
struct MmioMap {
    ptr: NonNull<c_void>,
    len: usize,
}

// SAFETY: the mapping is an address range of the whole process, not of a thread; this struct
// owns it alone and touches it only through volatile loads and stores, which are valid from
// any thread.
unsafe impl Send for MmioMap {}

impl MmioMap {
    /// Maps `len` bytes of `fd` at mmap offset `offset`, shared.
    fn map(fd: BorrowedFd<'_>, offset: u64, len: usize, prot: ProtFlags) -> Result<Self, Errno> {
        // SAFETY: a null address hint lets the kernel choose a fresh range, so no existing
        // mapping (and no Rust object) is replaced or aliased; the result is owned by the
        // returned value and unmapped once, in unmap or Drop.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                MapFlags::SHARED,
                fd,
                offset,
            )
        }?;
        NonNull::new(ptr)
            .map(|ptr| Self { ptr, len })
            .ok_or(Errno::FAULT)
    }

    /// The word at `offset`, if `offset` is 4-byte aligned and the word inside the mapping.
    fn read32(&self, offset: usize) -> Option<u32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: `offset + 4 <= len` and the mapping is page aligned, so the pointer is inside
        // the live mapping (unmapped only when self goes) and 4-byte aligned; volatile, because
        // it is device memory that no Rust reference covers.
        Some(unsafe {
            self.ptr
                .as_ptr()
                .cast::<u8>()
                .add(offset)
                .cast::<u32>()
                .read_volatile()
        })
    }

    /// Stores `value` at `offset` under the same conditions as [`read32`](Self::read32).
    fn write32(&self, offset: usize, value: u32) -> Option<()> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: as in read32; the mapping was made writable by whoever stores through it
        // (windows map PROT_READ | PROT_WRITE).
        unsafe {
            self.ptr
                .as_ptr()
                .cast::<u8>()
                .add(offset)
                .cast::<u32>()
                .write_volatile(value)
        };
        Some(())
    }

    /// Unmaps now, reporting the error.
    fn unmap(self) -> Result<(), Errno> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the range is the one mmap returned, owned by this value, which is not used
        // again (ManuallyDrop: Drop does not run a second munmap).
        unsafe { rustix::mm::munmap(this.ptr.as_ptr(), this.len) }
    }
}

impl Drop for MmioMap {
    fn drop(&mut self) {
        // SAFETY: the range is the one mmap returned, owned by this value and unmapped only
        // here; nothing can reach it after.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr(), self.len) };
    }
}

// ---------------------------------------------------------------------------------------------
// The device

/// A Blackhole opened through tt-kmd.
pub struct KmdBar {
    fd: Arc<OwnedFd>,
    identity: DeviceIdentity,
    /// BAR0 `BAR0_REGS_OFFSET ..+ BAR0_REGS_LEN`, read-only.
    regs: MmioMap,
    /// BAR0 `TLB_CONFIG_BASE ..+ BAR0_TLB_CONFIG_LEN`, read-only.
    tlb_regs: MmioMap,
    /// 4 GiB windows the device has.
    windows_4g: u32,
}

impl fmt::Debug for KmdBar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KmdBar")
            .field("identity", &self.identity)
            .field("windows_4g", &self.windows_4g)
            .finish_non_exhaustive()
    }
}

impl KmdBar {
    /// Opens the tt-kmd node at `path` (`/dev/tenstorrent/0`, or a `by-id` link).
    ///
    /// In order: open read-write, close-on-exec, non-blocking, **without** `O_APPEND`
    /// (`ENOENT` [`NoSuchDevice`](PcieError::NoSuchDevice), `EACCES`/`EPERM`
    /// [`PermissionDenied`](PcieError::PermissionDenied), `EBUSY`/`EAGAIN`
    /// [`Busy`](PcieError::Busy)); refuse a character device of another class; GET_DRIVER_INFO
    /// (`ENOTTY`/`EINVAL`: [`NotTtKmd`](PcieError::NotTtKmd); API below 2:
    /// [`DriverTooOld`](PcieError::DriverTooOld)); GET_DEVICE_INFO (not 1e52:b140:
    /// [`NotBlackhole`](PcieError::NotBlackhole)); map the BAR0 registers; read the PCIe NIU's
    /// `NOC_NODE_ID` ([`Hung`](PcieError::Hung) if it reads 0xFFFF_FFFF); then SET_POWER_STATE
    /// for the busy clock on tt-kmd 2.6.0 and later (when it cannot, `clock_raised` is false
    /// and `clock_note` says why), and the firmware bundle version from sysfs. `ENODEV` at any
    /// step is [`Gone`](PcieError::Gone).
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
        not_blackhole(&p, &info)?;
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
            windows_4g: bar4_windows(pci).unwrap_or(TLB_4G_COUNT),
            regs,
            tlb_regs,
            fd: Arc::new(fd),
        };
        bar.check_alive()?;
        let (raised, note) = raise_aiclk(&p, bar.fd.as_fd(), version)?;
        bar.identity.clock_raised = raised;
        bar.identity.clock_note = note;
        Ok(bar)
    }

    /// [`PcieError::Hung`] if the PCIe NIU's `NOC_NODE_ID` (BAR0 0x1FD0_4044) reads
    /// 0xFFFF_FFFF, as it does from a hung or reset device (tt-umd's hang detector).
    pub fn check_alive(&self) -> Result<(), PcieError> {
        if self.bar0_read32(PCIE_NOC_NODE_ID_BAR0)? == HUNG_READ {
            return Err(PcieError::Hung {
                what: format!(
                    "{}: PCIe NIU NOC_NODE_ID (BAR0 {PCIE_NOC_NODE_ID_BAR0:#x})",
                    self.identity.path
                ),
            });
        }
        Ok(())
    }

    /// 2 MiB windows the driver lets this process allocate at most (201: the 202nd is the
    /// kernel's) or 4 GiB windows the device's BAR4 holds.
    pub fn window_count(&self, size: TlbSize) -> u32 {
        match size {
            TlbSize::Size2M => KERNEL_TLB_INDEX,
            TlbSize::Size4G => self.windows_4g,
        }
    }

    fn check_owner(&self, window: &KmdWindow) -> Result<(), PcieError> {
        if Arc::ptr_eq(&self.fd, &window.fd) {
            Ok(())
        } else {
            Err(PcieError::ForeignWindow { index: window.id })
        }
    }

    fn path(&self) -> &str {
        &self.identity.path
    }
}

/// The ioctl's view of `config`: every field as the driver takes it, `static_vc` as the enable
/// bit only (the VC number in `config.static_vc` cannot be passed).
pub fn noc_tlb_config(config: &TlbConfig) -> sys::NocTlbConfig {
    sys::NocTlbConfig {
        addr: config.addr,
        x_end: config.end.0.into(),
        y_end: config.end.1.into(),
        x_start: config.start.0.into(),
        y_start: config.start.1.into(),
        noc: config.noc,
        mcast: config.multicast.into(),
        ordering: config.ordering as u8,
        linked: config.linked.into(),
        static_vc: config.static_vc.is_some().into(),
        ..sys::NocTlbConfig::default()
    }
}

/// `size` as the errors name it.
fn size_name(size: TlbSize) -> &'static str {
    match size {
        TlbSize::Size2M => "2 MiB",
        TlbSize::Size4G => "4 GiB",
    }
}

/// One TLB window of a [`KmdBar`]: its id, its mapping (exactly the window's size), and a
/// reference to the device's fd. Dropping it unmaps and frees it (errors ignored); use
/// [`Bar::free`] to see them.
pub struct KmdWindow {
    id: u32,
    size: TlbSize,
    mapping: Mapping,
    /// `None` only while being freed.
    map: Option<MmioMap>,
    fd: Arc<OwnedFd>,
}

impl fmt::Debug for KmdWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KmdWindow")
            .field("id", &self.id)
            .field("size", &self.size)
            .field("mapping", &self.mapping)
            .finish_non_exhaustive()
    }
}

impl WindowHandle for KmdWindow {
    fn index(&self) -> u32 {
        self.id
    }
    fn size(&self) -> TlbSize {
        self.size
    }
    fn mapping(&self) -> Mapping {
        self.mapping
    }
}

impl KmdWindow {
    /// The mapping and the `usize` offset for `len` bytes at `offset`, checked: 4-byte aligned
    /// offset and whole words, inside the window.
    fn span(&self, offset: u64, len: usize) -> Result<(&MmioMap, usize), PcieError> {
        if offset % 4 != 0 || len % 4 != 0 {
            return Err(PcieError::Unaligned { offset, len });
        }
        let out = PcieError::OutOfWindow {
            offset,
            len,
            size: self.size.bytes(),
        };
        let map = self.map.as_ref().ok_or_else(|| out.clone())?;
        let end = offset.checked_add(len as u64).ok_or_else(|| out.clone())?;
        if end > map.len as u64 {
            return Err(out);
        }
        let start = usize::try_from(offset).map_err(|_| out)?;
        Ok((map, start))
    }

    /// FREE_TLB on the window's fd.
    fn free_tlb(&self) -> Result<(), Errno> {
        let mut arg = sys::FreeTlb {
            input: sys::FreeTlbIn { id: self.id },
            ..sys::FreeTlb::default()
        };
        // SAFETY: the fd is the tt-kmd node the window was allocated on (KmdBar::open
        // identified it); FreeTlb has no size field.
        unsafe { sys::free_tlb(self.fd.as_fd(), &mut arg) }
    }
}

impl Drop for KmdWindow {
    fn drop(&mut self) {
        if let Some(map) = self.map.take() {
            drop(map); // munmap first: FREE_TLB refuses a mapped window
            let _ = self.free_tlb();
        }
    }
}

impl Bar for KmdBar {
    type Window = KmdWindow;

    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    /// ALLOCATE_TLB, checked, then an mmap of exactly the window at the offset the driver
    /// returned (`mmap_offset_uc` or `_wc`), shared, read-write. `ENOMEM` (all taken) and
    /// `EINVAL` (no window of that size, e.g. BAR4 absent) are
    /// [`WindowsExhausted`](PcieError::WindowsExhausted), the latter with `available: 0`. If the
    /// mmap fails the window is freed again.
    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<KmdWindow, PcieError> {
        let path = self.path().to_string();
        let len = usize::try_from(size.bytes()).map_err(|_| PcieError::Mmap {
            path: path.clone(),
            what: format!("a {} window", size_name(size)),
            errno: Errno::NOMEM.raw_os_error(),
            message: "larger than this host's address space".to_string(),
        })?;
        let mut arg = sys::AllocateTlb {
            input: sys::AllocateTlbIn {
                size: size.bytes(),
                reserved: 0,
            },
            ..sys::AllocateTlb::default()
        };
        // SAFETY: `self.fd` is the tt-kmd node identified at open; AllocateTlb has no size
        // field.
        match unsafe { sys::allocate_tlb(self.fd.as_fd(), &mut arg) } {
            Ok(()) => {}
            Err(Errno::NOMEM) => {
                return Err(PcieError::WindowsExhausted {
                    size: size_name(size),
                    available: self.window_count(size),
                });
            }
            Err(Errno::INVAL) => {
                return Err(PcieError::WindowsExhausted {
                    size: size_name(size),
                    available: 0,
                });
            }
            Err(e) => return Err(ioctl_error(&path, "ALLOCATE_TLB", e)),
        }
        // Only now, with the ioctl's success, are the offsets meaningful (they are 0 on failure,
        // which is BAR0's start).
        let out = arg.output;
        let offset = match mapping {
            Mapping::Uncached => out.mmap_offset_uc,
            Mapping::WriteCombined => out.mmap_offset_wc,
        };
        let mut window = KmdWindow {
            id: out.id,
            size,
            mapping,
            map: None,
            fd: Arc::clone(&self.fd),
        };
        match MmioMap::map(
            self.fd.as_fd(),
            offset,
            len,
            ProtFlags::READ | ProtFlags::WRITE,
        ) {
            Ok(map) => {
                window.map = Some(map);
                Ok(window)
            }
            Err(e) => {
                let _ = window.free_tlb(); // nothing is mapped: give the id back
                Err(mmap_error(
                    &path,
                    format!("TLB window {} at mmap offset {offset:#x}", out.id),
                    e,
                ))
            }
        }
    }

    /// CONFIGURE_TLB with `config` validated first ([`TlbConfig::encode`]: the address must be
    /// a multiple of the window size, coordinates at most 63, NoC 0 or 1, else
    /// [`PcieError::TlbConfig`]). `static_vc: Some(_)` sets only the enable bit; the VC number
    /// cannot be set through the ioctl (module docs).
    fn configure(&mut self, window: &mut KmdWindow, config: &TlbConfig) -> Result<(), PcieError> {
        self.check_owner(window)?;
        config.encode(window.size).map_err(PcieError::TlbConfig)?;
        let mut arg = sys::ConfigureTlb {
            input: sys::ConfigureTlbIn {
                id: window.id,
                reserved: 0,
                config: noc_tlb_config(config),
            },
            ..sys::ConfigureTlb::default()
        };
        // SAFETY: `self.fd` is the tt-kmd node identified at open; ConfigureTlb has no size
        // field.
        unsafe { sys::configure_tlb(self.fd.as_fd(), &mut arg) }
            .map_err(|e| ioctl_error(self.path(), "CONFIGURE_TLB", e))
    }

    /// munmap, then FREE_TLB (which refuses a window still mapped).
    fn free(&mut self, mut window: KmdWindow) -> Result<(), PcieError> {
        self.check_owner(&window)?;
        let id = window.id;
        if let Some(map) = window.map.take() {
            map.unmap()
                .map_err(|e| mmap_error(self.path(), format!("munmap of TLB window {id}"), e))?;
        }
        window
            .free_tlb()
            .map_err(|e| ioctl_error(self.path(), "FREE_TLB", e))
    }

    fn read32(&self, window: &KmdWindow, offset: u64) -> Result<u32, PcieError> {
        let (map, at) = window.span(offset, 4)?;
        map.read32(at).ok_or(PcieError::OutOfWindow {
            offset,
            len: 4,
            size: window.size.bytes(),
        })
    }

    fn write32(&mut self, window: &KmdWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        let (map, at) = window.span(offset, 4)?;
        map.write32(at, value).ok_or(PcieError::OutOfWindow {
            offset,
            len: 4,
            size: window.size.bytes(),
        })
    }

    /// Volatile 32-bit loads, one per word, in address order.
    fn read(&self, window: &KmdWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        let (map, start) = window.span(offset, buf.len())?;
        let out = PcieError::OutOfWindow {
            offset,
            len: buf.len(),
            size: window.size.bytes(),
        };
        for (i, chunk) in buf.chunks_exact_mut(4).enumerate() {
            let word = map.read32(start + 4 * i).ok_or_else(|| out.clone())?;
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        Ok(())
    }

    /// Volatile 32-bit stores, one per word, in address order (a [`Bar::fence`] after, for a
    /// write-combined window).
    fn write(&mut self, window: &KmdWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        let (map, start) = window.span(offset, data.len())?;
        let out = PcieError::OutOfWindow {
            offset,
            len: data.len(),
            size: window.size.bytes(),
        };
        for (i, chunk) in data.chunks_exact(4).enumerate() {
            let mut word = [0u8; 4];
            word.copy_from_slice(chunk);
            map.write32(start + 4 * i, u32::from_ne_bytes(word))
                .ok_or_else(|| out.clone())?;
        }
        Ok(())
    }

    fn fence(&mut self) {
        store_fence();
    }

    /// The 32-bit register at BAR0 `offset`, which must lie in one of the two ranges mapped at
    /// open (TLB configuration `0x1FC0_0000 ..+ 4 KiB`; NIU and ARC `0x1FD0_0000 ..
    /// 0x2000_0000`) and be 4-byte aligned, else [`PcieError::Bar0Unmapped`].
    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        let unmapped = PcieError::Bar0Unmapped {
            offset,
            mapped: BAR0_MAPPED,
        };
        let (map, base) = if offset >= BAR0_REGS_OFFSET {
            (&self.regs, BAR0_REGS_OFFSET)
        } else if offset >= TLB_CONFIG_BASE {
            (&self.tlb_regs, TLB_CONFIG_BASE)
        } else {
            return Err(unmapped);
        };
        map.read32((offset - base) as usize).ok_or(unmapped)
    }

    /// Sleeps [`PASS_TIME_SLEEP`] (1 µs asked; Linux timer slack makes it typically 50 µs or
    /// more) and returns the host time that really passed as AICLK cycles at the busy clock,
    /// [`AICLK_BUSY_MHZ`]: an estimate, exact only if the clock really is at 1350 MHz.
    fn pass_time(&mut self) -> u64 {
        let start = Instant::now();
        std::thread::sleep(PASS_TIME_SLEEP);
        busy_cycles(start.elapsed())
    }
}

/// `elapsed` as AICLK cycles at [`AICLK_BUSY_MHZ`] (saturating).
pub fn busy_cycles(elapsed: Duration) -> u64 {
    let cycles = elapsed.as_nanos() * u128::from(AICLK_BUSY_MHZ) / 1000;
    u64::try_from(cycles).unwrap_or(u64::MAX)
}

/// Orders every earlier store, including write-combined ones still in the CPU's buffers, before
/// every later access: an `sfence` on x86-64, then a sequentially consistent fence (`mfence`
/// there, `dmb ish` on AArch64).
pub fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` belongs to SSE, which every x86-64 CPU has (it is in the target's
    // baseline); it has no operands and no other precondition.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use blackhole_pac::tlb::TlbOrdering;

    fn node(addr: Option<(u16, u16)>, n: u32) -> DeviceNode {
        DeviceNode {
            path: format!("/dev/tenstorrent/{n}"),
            node: Some(n),
            pci_address: addr.map(|(d, bdf)| PciAddress::from_kmd(d, bdf)),
            pci_id: Some((0x1E52, 0xB140)),
            error: None,
        }
    }

    /// A regular temp file of `len` bytes (sparse), opened read-write, already unlinked.
    fn temp_fd(tag: &str, len: u64) -> (std::fs::File, OwnedFd) {
        let path = std::env::temp_dir().join(format!(
            "komorebi-kmd-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("temp file");
        file.set_len(len).expect("set_len");
        let _ = std::fs::remove_file(&path);
        let other = file.try_clone().expect("clone");
        (other, OwnedFd::from(file))
    }

    /// A KmdBar and one 2 MiB window whose "BARs" are regular files: the whole access path
    /// (bounds, alignment, volatile loops, BAR0 ranges) without a card. The ioctls reach a
    /// regular file, which answers ENOTTY.
    fn fake() -> (KmdBar, KmdWindow, std::fs::File, std::fs::File) {
        let (regs_file, regs_fd) = temp_fd("regs", u64::from(BAR0_REGS_LEN));
        let (tlb_file, tlb_fd) = temp_fd("tlb", u64::from(BAR0_TLB_CONFIG_LEN));
        let (_, win_fd) = temp_fd("win", TlbSize::Size2M.bytes());
        let rw = ProtFlags::READ | ProtFlags::WRITE;
        let regs = MmioMap::map(regs_fd.as_fd(), 0, BAR0_REGS_LEN as usize, ProtFlags::READ)
            .expect("map regs");
        let tlb_regs = MmioMap::map(
            tlb_fd.as_fd(),
            0,
            BAR0_TLB_CONFIG_LEN as usize,
            ProtFlags::READ,
        )
        .expect("map tlb");
        let map = MmioMap::map(win_fd.as_fd(), 0, 2 << 20, rw).expect("map window");
        let fd = Arc::new(win_fd);
        let bar = KmdBar {
            fd: Arc::clone(&fd),
            identity: DeviceIdentity {
                path: "fake".into(),
                pci_address: "0000:01:00.0".into(),
                vendor_id: 0x1E52,
                device_id: 0xB140,
                api_version: 2,
                driver_version: (2, 10, 0),
                clock_raised: false,
                clock_note: None,
                firmware_bundle: None,
            },
            regs,
            tlb_regs,
            windows_4g: 0,
        };
        let window = KmdWindow {
            id: 5,
            size: TlbSize::Size2M,
            mapping: Mapping::Uncached,
            map: Some(map),
            fd,
        };
        (bar, window, regs_file, tlb_file)
    }

    #[test]
    fn window_accesses_are_volatile_words_checked_for_bounds_and_alignment() {
        let (mut bar, w, _regs, _tlb) = fake();
        let size = TlbSize::Size2M.bytes();
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        bar.write(&w, 8, &data).expect("write");
        assert_eq!(bar.read32(&w, 8), Ok(u32::from_ne_bytes([1, 2, 3, 4])));
        assert_eq!(bar.read32(&w, 12), Ok(u32::from_ne_bytes([5, 6, 7, 8])));
        let mut back = [0u8; 8];
        bar.read(&w, 8, &mut back).expect("read");
        assert_eq!(back, data);
        bar.write32(&w, size - 4, 0xDEAD_BEEF).expect("last word");
        assert_eq!(bar.read32(&w, size - 4), Ok(0xDEAD_BEEF));
        bar.read(&w, 0, &mut []).expect("nothing to read");

        let unaligned = |r: Result<(), PcieError>| matches!(r, Err(PcieError::Unaligned { .. }));
        assert!(unaligned(bar.write32(&w, 2, 0)));
        assert!(unaligned(bar.write(&w, 4, &[0; 6])));
        assert!(unaligned(bar.read(&w, 1, &mut [0; 4])));
        assert!(matches!(
            bar.read32(&w, 6),
            Err(PcieError::Unaligned { .. })
        ));

        let out = |r: Result<(), PcieError>| matches!(r, Err(PcieError::OutOfWindow { .. }));
        assert!(out(bar.write32(&w, size, 0)));
        assert!(out(bar.write(&w, size - 4, &[0; 8])));
        assert!(out(bar.read(&w, u64::MAX - 3, &mut [0; 4])));
        assert!(matches!(
            bar.read32(&w, size),
            Err(PcieError::OutOfWindow { size: s, .. }) if s == size
        ));
        assert_eq!(bar.read32(&w, 8), Ok(u32::from_ne_bytes([1, 2, 3, 4])));
        bar.fence();
    }

    #[test]
    fn bar0_reads_only_the_mapped_ranges() {
        use std::os::unix::fs::FileExt;
        let (bar, _w, regs, tlb) = fake();
        regs.write_at(&0x1234_5678u32.to_ne_bytes(), 0x4044)
            .expect("pwrite");
        tlb.write_at(&0x0ABC_DEF0u32.to_ne_bytes(), 12)
            .expect("pwrite");
        assert_eq!(bar.bar0_read32(PCIE_NOC_NODE_ID_BAR0), Ok(0x1234_5678));
        assert_eq!(bar.bar0_read32(TLB_CONFIG_BASE + 12), Ok(0x0ABC_DEF0));
        assert_eq!(bar.bar0_read32(0x1FFF_FFFC), Ok(0));
        assert!(bar.check_alive().is_ok());
        for offset in [
            0,
            TLB_CONFIG_BASE - 4,
            TLB_CONFIG_BASE + BAR0_TLB_CONFIG_LEN,
            BAR0_REGS_OFFSET - 4,
            PCIE_NOC_NODE_ID_BAR0 + 2,
            0x2000_0000,
            u32::MAX,
        ] {
            assert!(
                matches!(
                    bar.bar0_read32(offset),
                    Err(PcieError::Bar0Unmapped { offset: o, .. }) if o == offset
                ),
                "{offset:#x}"
            );
        }
        regs.write_at(&HUNG_READ.to_ne_bytes(), 0x4044)
            .expect("pwrite");
        assert!(matches!(bar.check_alive(), Err(PcieError::Hung { .. })));
    }

    #[test]
    fn configure_validates_before_the_ioctl_and_refuses_foreign_windows() {
        let (mut bar, mut w, _regs, _tlb) = fake();
        let misaligned = TlbConfig::unicast(8, 0, 0x1000);
        assert!(matches!(
            bar.configure(&mut w, &misaligned),
            Err(PcieError::TlbConfig(
                blackhole_pac::tlb::TlbError::Misaligned { .. }
            ))
        ));
        let far = TlbConfig::unicast(64, 0, 0);
        assert!(matches!(
            bar.configure(&mut w, &far),
            Err(PcieError::TlbConfig(
                blackhole_pac::tlb::TlbError::Coordinate(64)
            ))
        ));
        // A valid one reaches the ioctl, which the regular file refuses.
        assert!(matches!(
            bar.configure(&mut w, &TlbConfig::unicast(8, 0, 0x8000_0000)),
            Err(PcieError::Ioctl {
                ioctl: "CONFIGURE_TLB",
                ..
            })
        ));
        let (_other, mut foreign, _r, _t) = fake();
        assert!(matches!(
            bar.configure(&mut foreign, &TlbConfig::unicast(8, 0, 0)),
            Err(PcieError::ForeignWindow { index: 5 })
        ));
        assert!(matches!(
            bar.free(foreign),
            Err(PcieError::ForeignWindow { index: 5 })
        ));
        // free unmaps (that works on a file), then FREE_TLB, which the file refuses.
        assert!(matches!(
            bar.free(w),
            Err(PcieError::Ioctl {
                ioctl: "FREE_TLB",
                ..
            })
        ));
    }

    #[test]
    fn pci_address_from_bus_dev_fn() {
        // bus 0xc1, device 0x1f, function 7: 0xc1 << 8 | 0x1f << 3 | 7.
        let a = PciAddress::from_kmd(2, 0xC1 << 8 | 0x1F << 3 | 7);
        assert_eq!((a.domain, a.bus, a.device, a.function), (2, 0xC1, 0x1F, 7));
        assert_eq!(a.to_string(), "0002:c1:1f.7");
        assert_eq!(PciAddress::from_kmd(0, 0x0100).to_string(), "0000:01:00.0");
    }

    #[test]
    fn node_numbers_are_all_digits() {
        assert_eq!(node_number("0"), Some(0));
        assert_eq!(node_number("17"), Some(17));
        assert_eq!(node_number("by-id"), None);
        assert_eq!(node_number(""), None);
        assert_eq!(node_number("+1"), None);
        assert_eq!(node_number("1a"), None);
    }

    #[test]
    fn visible_devices_by_index_and_bdf() {
        let nodes = vec![
            node(Some((0, 0x0100)), 3),
            node(Some((0, 0x0200)), 0),
            node(Some((0, 0xC100)), 1),
        ];
        let pick = |spec: &str| -> Vec<String> {
            select_visible(nodes.clone(), spec)
                .into_iter()
                .map(|n| n.path)
                .collect()
        };
        assert_eq!(pick("0"), ["/dev/tenstorrent/3"]);
        assert_eq!(
            pick(" 2 , 0 "),
            ["/dev/tenstorrent/3", "/dev/tenstorrent/1"]
        );
        assert_eq!(pick("0000:02:00.0"), ["/dev/tenstorrent/0"]);
        assert_eq!(pick("0000:C"), ["/dev/tenstorrent/1"]);
        assert_eq!(pick("0000:01:00.0,0"), ["/dev/tenstorrent/3"]);
        assert!(pick("").is_empty());
        let bad = select_visible(nodes.clone(), "7,0000:09");
        assert_eq!(bad.len(), 2);
        assert!(
            bad.iter()
                .all(|n| matches!(n.error, Some(PcieError::NoSuchDevice { .. })))
        );
        assert_eq!(bad[0].path, "TT_VISIBLE_DEVICES entry `7`");
    }

    #[test]
    fn enumerate_sorts_by_pci_address() {
        let mut nodes = [
            node(None, 0),
            node(Some((1, 0x0100)), 1),
            node(Some((0, 0x0300)), 2),
            node(Some((0, 0x0108)), 4),
        ];
        sort_nodes(&mut nodes);
        let order: Vec<u32> = nodes.iter().filter_map(|n| n.node).collect();
        assert_eq!(order, [4, 2, 1, 0]);
    }

    #[test]
    fn the_ioctl_config_carries_only_the_static_vc_enable() {
        let mut c = TlbConfig::unicast(8, 0, 0x8000_0000);
        c.ordering = TlbOrdering::Strict;
        let k = noc_tlb_config(&c);
        assert_eq!((k.addr, k.x_end, k.y_end), (0x8000_0000, 8, 0));
        assert_eq!((k.ordering, k.static_vc, k.mcast, k.noc), (1, 0, 0, 0));
        c.static_vc = Some(2);
        assert_eq!(noc_tlb_config(&c).static_vc, 1);
        c.static_vc = Some(0);
        assert_eq!(noc_tlb_config(&c).static_vc, 1);
        let m = TlbConfig {
            start: (1, 2),
            end: (16, 11),
            multicast: true,
            noc: 1,
            ..TlbConfig::unicast(0, 0, 0)
        };
        let k = noc_tlb_config(&m);
        assert_eq!(
            (k.x_start, k.y_start, k.x_end, k.y_end, k.mcast, k.noc),
            (1, 2, 16, 11, 1, 1)
        );
        assert_eq!((k.reserved0, k.reserved1), ([0; 3], [0; 2]));
    }

    #[test]
    fn busy_cycles_at_1350_mhz() {
        assert_eq!(busy_cycles(Duration::from_micros(1)), 1350);
        assert_eq!(busy_cycles(Duration::from_nanos(1)), 1);
        assert_eq!(busy_cycles(Duration::MAX), u64::MAX);
    }

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
