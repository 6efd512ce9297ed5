//! The device as a `Bar`: `KmdBar` (its fd, identity and BAR0 register mappings), the hang
//! check on BAR0, and the `Bar` implementation: TLB windows allocated, configured and freed
//! through the ioctls and accessed through their mappings, BAR0 register reads, and the time
//! estimate of `pass_time`.

use std::fmt;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use blackhole_pac::arc::{HUNG_READ, PCIE_NOC_NODE_ID_BAR0};
use blackhole_pac::tlb::{KERNEL_TLB_INDEX, TLB_CONFIG_BASE, TlbConfig, TlbSize};
use rustix::io::Errno;
use rustix::mm::ProtFlags;
use tt_kmd_sys as sys;

use super::errno::{ioctl_error, mmap_error};
use super::mmio::{MmioMap, store_fence};
use super::window::{KmdWindow, noc_tlb_config, size_name};
use crate::bar::{Bar, DeviceIdentity, LockOp, Mapping};
use crate::error::PcieError;

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
/// BAR0 offset of a Wormhole's ARC reset unit, mapped read-write: the scratch registers and
/// `ARC_MISC_CNTL` that carry the host's messages (`wormhole_pac::arc`).
pub const ARC_RESET_UNIT_BAR0: u32 = 0x1FF3_0000;
/// Length of that mapping.
pub const ARC_RESET_UNIT_LEN: u32 = 0x1000;
/// How long [`Bar::pass_time`] asks to sleep.
pub const PASS_TIME_SLEEP: Duration = Duration::from_micros(1);

const BAR0_MAPPED: &str = "0x1FC0_0000..0x1FC0_1000 (TLB configuration, read-only) and \
                           0x1FD0_0000..0x2000_0000 (NIU configuration, ARC)";

/// A Blackhole or Wormhole B0 opened through tt-kmd.
pub struct KmdBar {
    pub(super) fd: Arc<OwnedFd>,
    pub(super) identity: DeviceIdentity,
    /// BAR0 `BAR0_REGS_OFFSET ..+ BAR0_REGS_LEN`, read-only.
    pub(super) regs: MmioMap,
    /// BAR0 `TLB_CONFIG_BASE ..+ BAR0_TLB_CONFIG_LEN`, read-only.
    pub(super) tlb_regs: MmioMap,
    /// A Wormhole's ARC reset unit, `ARC_RESET_UNIT_BAR0 ..+ ARC_RESET_UNIT_LEN`, read-write.
    pub(super) arc_regs: Option<MmioMap>,
    /// 4 GiB windows the device has.
    pub(super) windows_4g: u32,
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
    /// [`PcieError::Hung`] if the PCIe NIU's `NOC_NODE_ID` (BAR0 0x1FD0_4044) reads
    /// 0xFFFF_FFFF, as it does from a hung or reset device (tt-umd's hang detector); on a
    /// Wormhole the ARC NIU's (BAR0 0x1FF5_002C, tt-umd's `WormholeHangDetector`).
    pub fn check_alive(&self) -> Result<(), PcieError> {
        if self.is_wormhole() {
            return crate::arc::wormhole::check_alive(self).map_err(|e| match e {
                PcieError::Hung { what } => PcieError::Hung {
                    what: format!("{}: {what}", self.identity.path),
                },
                e => e,
            });
        }
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

    /// 2 MiB windows the driver lets this process allocate at most (Blackhole 201: the 202nd
    /// is the kernel's; Wormhole 10, the kernel keeping a 16 MiB one) or 4 GiB windows the
    /// device's BAR4 holds (none on a Wormhole).
    pub fn window_count(&self, size: TlbSize) -> u32 {
        match (size, self.is_wormhole()) {
            (TlbSize::Size2M, false) => KERNEL_TLB_INDEX,
            (TlbSize::Size2M, true) => wormhole_pac::tlb::WindowSize::Mib2.count() as u32,
            (TlbSize::Size4G, true) => 0,
            (TlbSize::Size4G, false) => self.windows_4g,
        }
    }

    /// Whether the device is a Wormhole (its PCI device id).
    fn is_wormhole(&self) -> bool {
        crate::chip::ChipKind::from_device_id(self.identity.device_id)
            == Some(crate::chip::ChipKind::Wormhole)
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

impl Bar for KmdBar {
    type Window = KmdWindow;

    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    /// ALLOCATE_TLB, checked, then an mmap of exactly the window at the offset the driver
    /// returned (`mmap_offset_uc` or `_wc`), shared, read-write. `ENOMEM` (all taken) and, for a
    /// 4 GiB window, `EINVAL` (no window of that size: BAR4 absent) are
    /// [`WindowsExhausted`](PcieError::WindowsExhausted), the latter with `available: 0`; any
    /// other error keeps its errno. If the mmap fails the window is freed again.
    ///
    /// A 4 GiB window is taken only among those the device's BAR4 holds (`windows_4g`), asked
    /// for nothing when it holds none and given back when the driver hands out another: before
    /// 2.6.0 tt-kmd counted eight whatever BAR4's size, and before 2.7.0 it mapped a window
    /// without checking it lies in BAR4, so a window past BAR4's end (or any, with BAR4
    /// unassigned: from physical address 0) mapped host memory or another device (tt-kmd
    /// `blackhole.c`, "Support small BAR4 configurations"; `memory.c` `map_tlb_window`).
    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<KmdWindow, PcieError> {
        let path = self.path().to_string();
        let in_bar4 = |id: u32| {
            id.checked_sub(blackhole_pac::tlb::TLB_4G_FIRST_INDEX)
                .is_some_and(|i| i < self.window_count(TlbSize::Size4G))
        };
        if size == TlbSize::Size4G && self.window_count(size) == 0 {
            return Err(PcieError::WindowsExhausted {
                size: size_name(size),
                available: 0,
            });
        }
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
            // EINVAL is "no window of that size" for a 4 GiB one (BAR4 absent); for a 2 MiB
            // one, which every device has, a driver or device fault (its errno kept).
            Err(Errno::INVAL) if size == TlbSize::Size4G => {
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
        if size == TlbSize::Size4G && !in_bar4(out.id) {
            let _ = window.free_tlb(); // nothing is mapped: give the id back
            return Err(PcieError::WindowsExhausted {
                size: size_name(size),
                available: self.windows_4g,
            });
        }
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
        // What the driver would refuse, or on a Wormhole drop (static VC), refused here first.
        if self.is_wormhole() {
            crate::wormhole_window::config_word(config).map_err(|why| PcieError::Target {
                what: format!("Wormhole TLB window {}", window.id),
                why,
            })?;
        } else {
            config.encode(window.size).map_err(PcieError::TlbConfig)?;
        }
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

    /// Writes a Wormhole ARC's message registers (scratch 3 and 5, `ARC_MISC_CNTL`) through the
    /// reset unit's read-write mapping, then a store fence; any other offset, and any offset on
    /// a Blackhole (whose messages go through a queue in ARC's memory, over a window), is
    /// [`PcieError::Bar0Unmapped`].
    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        use wormhole_pac::arc as wh;
        let writable = [
            wh::scratch_bar0(wh::SCRATCH_RES0),
            wh::scratch_bar0(wh::SCRATCH_STATUS),
            wh::MISC_CNTL_BAR0,
        ];
        let unmapped = PcieError::Bar0Unmapped {
            offset,
            mapped: "a Wormhole ARC's scratch 3 and 5 and ARC_MISC_CNTL only",
        };
        let Some(map) = self
            .arc_regs
            .as_ref()
            .filter(|_| writable.contains(&offset))
        else {
            return Err(unmapped);
        };
        map.write32((offset - ARC_RESET_UNIT_BAR0) as usize, value)
            .ok_or(unmapped)?;
        store_fence();
        Ok(())
    }

    /// SET_NOC_CLEANUP on this fd: the driver writes `value` at `addr` of `target` when the fd
    /// is released (after the last window holding it is dropped). [`PcieError::DriverLacks`]
    /// on tt-kmd before 2.2.0.
    fn arm_release_write(
        &mut self,
        target: (u8, u8),
        addr: u64,
        value: u32,
    ) -> Result<bool, PcieError> {
        let arg = super::cleanup::noc_cleanup_arg(target, addr, value)?;
        super::cleanup::set_noc_cleanup(
            &self.identity.path,
            self.fd.as_fd(),
            self.identity.driver_version,
            arg,
        )?;
        Ok(true)
    }

    /// LOCK_CTL's non-blocking ACQUIRE or RELEASE (tt-umd takes its locks the same way,
    /// polling: the driver's blocking acquire has deadlocked against a reset; tt-umd
    /// `device/utils/kmd_mutex.cpp` at aa0e173).
    fn resource_lock(&self, index: u8, op: LockOp) -> Result<bool, PcieError> {
        let flags = match op {
            LockOp::Acquire => sys::LOCK_CTL_ACQUIRE,
            LockOp::Release => sys::LOCK_CTL_RELEASE,
        };
        let mut arg = sys::LockCtl {
            input: sys::LockCtlIn {
                flags,
                index,
                ..sys::LockCtlIn::default()
            },
            ..sys::LockCtl::default()
        };
        // SAFETY: the fd was identified as tt-kmd at open; `arg` is LOCK_CTL's struct and its
        // `output_size_bytes` is exactly the size of its `out`.
        unsafe { sys::lock_ctl(self.fd.as_fd(), &mut arg) }
            .map_err(|e| ioctl_error(&self.identity.path, "LOCK_CTL", e))?;
        Ok(arg.output.value == 1)
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

#[cfg(test)]
mod tests {
    use super::*;

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
            arc_regs: None,
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
    fn a_wormhole_is_checked_at_its_arc_niu_and_its_windows_validated_as_its_own() {
        use std::os::unix::fs::FileExt;
        let (mut bar, mut w, regs, _tlb) = fake();
        bar.identity.device_id = 0x401E;
        // Whatever BAR4 would hold, a Wormhole has no 4 GiB windows.
        bar.windows_4g = 8;
        assert_eq!(bar.window_count(TlbSize::Size2M), 10);
        assert_eq!(bar.window_count(TlbSize::Size4G), 0);
        // Alive is the ARC NIU's NOC_NODE_ID (BAR0 0x1FF5_002C), not the Blackhole's PCIe NIU.
        let at = (wormhole_pac::arc::ARC_NOC_NODE_ID_BAR0 - BAR0_REGS_OFFSET) as u64;
        regs.write_at(&0xFFFF_FFFFu32.to_ne_bytes(), 0x4044)
            .expect("pwrite");
        assert!(bar.check_alive().is_ok());
        regs.write_at(&0xFFFF_FFFFu32.to_ne_bytes(), at)
            .expect("pwrite");
        let e = bar.check_alive().unwrap_err();
        assert!(e.to_string().contains("0x1ff5002c"), "{e}");
        // ARC's message registers are written through the reset unit's read-write mapping;
        // nothing else of BAR0 is, and nothing at all on a Blackhole.
        let msg = wormhole_pac::arc::scratch_bar0(wormhole_pac::arc::SCRATCH_STATUS);
        assert!(matches!(
            bar.bar0_write32(msg, 0xAA52),
            Err(PcieError::Bar0Unmapped { .. })
        ));
        let (arc_file, arc_fd) = temp_fd("arc", u64::from(ARC_RESET_UNIT_LEN));
        let rw = ProtFlags::READ | ProtFlags::WRITE;
        bar.arc_regs = Some(
            MmioMap::map(arc_fd.as_fd(), 0, ARC_RESET_UNIT_LEN as usize, rw).expect("map arc"),
        );
        bar.bar0_write32(msg, 0xAA52).expect("scratch 5");
        let mut word = [0u8; 4];
        arc_file
            .read_at(&mut word, u64::from(msg - ARC_RESET_UNIT_BAR0))
            .expect("pread");
        assert_eq!(u32::from_ne_bytes(word), 0xAA52);
        assert!(matches!(
            bar.bar0_write32(wormhole_pac::arc::scratch_bar0(0), 1),
            Err(PcieError::Bar0Unmapped { .. })
        ));
        // Static VC, which a Wormhole's driver drops, is refused before the ioctl.
        let vc = TlbConfig {
            static_vc: Some(2),
            ..TlbConfig::unicast(1, 2, 0)
        };
        let e = bar.configure(&mut w, &vc).unwrap_err();
        assert!(e.to_string().contains("static-VC"), "{e}");
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

    /// A 4 GiB window is not asked of the driver when BAR4 holds none: tt-kmd before 2.6.0
    /// hands out eight whatever BAR4's size, and before 2.7.0 maps one past BAR4's end. When
    /// sysfs does not say, only a driver from 2.7.0 is trusted with them.
    #[test]
    fn no_4_gib_window_is_asked_for_past_bar4() {
        let (mut bar, _w, _regs, _tlb) = fake();
        bar.identity.driver_version = (2, 5, 0);
        bar.windows_4g = 0;
        let e = bar
            .allocate(TlbSize::Size4G, Mapping::WriteCombined)
            .unwrap_err();
        assert_eq!(
            e,
            PcieError::WindowsExhausted {
                size: "4 GiB",
                available: 0
            }
        );
        // With windows in BAR4 the ioctl is reached, which a regular file refuses.
        bar.windows_4g = 2;
        assert!(matches!(
            bar.allocate(TlbSize::Size4G, Mapping::WriteCombined),
            Err(PcieError::Ioctl {
                ioctl: "ALLOCATE_TLB",
                ..
            })
        ));
        use super::super::open::windows_4g_unknown;
        assert_eq!(windows_4g_unknown((2, 6, 9)), 0);
        assert_eq!(windows_4g_unknown((2, 7, 0)), 8);
        assert_eq!(windows_4g_unknown((3, 0, 0)), 8);
    }

    #[test]
    fn the_release_write_is_gated_on_tt_kmd_2_2() {
        let (mut bar, _w, _regs, _tlb) = fake();
        bar.identity.driver_version = (2, 1, 0);
        let e = bar.arm_release_write((1, 2), 0x4010, 1).unwrap_err();
        assert_eq!(
            e,
            PcieError::DriverLacks {
                path: "fake".into(),
                feature: "SET_NOC_CLEANUP",
                needed: (2, 2, 0),
                found: (2, 1, 0),
            }
        );
        assert!(
            e.to_string()
                .contains("needs tt-kmd 2.2.0 or later; this driver is 2.1.0")
        );
        // From 2.2.0 the ioctl is reached, which a regular file refuses.
        bar.identity.driver_version = (2, 2, 0);
        assert!(matches!(
            bar.arm_release_write((1, 2), 0x4010, 1),
            Err(PcieError::Ioctl {
                ioctl: "SET_NOC_CLEANUP",
                ..
            })
        ));
        // A bad target is refused before either.
        for (t, a) in [((64, 2), 0x4010), ((1, 2), 0x4012)] {
            assert!(matches!(
                bar.arm_release_write(t, a, 1),
                Err(PcieError::Target { .. })
            ));
        }
    }

    #[test]
    fn a_resource_lock_step_reaches_lock_ctl() {
        // A regular file refuses the ioctl: the step reached it, and says which.
        let (bar, _w, _regs, _tlb) = fake();
        for op in [LockOp::Acquire, LockOp::Release] {
            match bar.resource_lock(crate::arc::MESSAGE_LOCK, op) {
                Err(PcieError::Ioctl { ioctl, path, .. }) => {
                    assert_eq!((ioctl, path.as_str()), ("LOCK_CTL", "fake"));
                }
                other => panic!("{op:?}: expected LOCK_CTL's refusal, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_release_write_argument_is_the_driver_s_32_bytes() {
        let arg =
            super::super::cleanup::noc_cleanup_arg((17, 12), 0x1_2345_6788, 0xDEAD_BEEF).unwrap();
        // SAFETY: SetNocCleanup is `#[repr(C)]`, 32 bytes with no padding (layout tests), and
        // every bit pattern of its integer fields is a valid byte; the slice lives no longer
        // than `arg`.
        let bytes =
            unsafe { std::slice::from_raw_parts((&raw const arg).cast::<u8>(), size_of_val(&arg)) };
        let mut want = Vec::new();
        want.extend_from_slice(&32u32.to_le_bytes()); // argsz
        want.extend_from_slice(&0u32.to_le_bytes()); // flags
        want.extend_from_slice(&[1, 17, 12, 0]); // enabled, x, y, noc
        want.extend_from_slice(&0u32.to_le_bytes()); // reserved0
        want.extend_from_slice(&0x1_2345_6788u64.to_le_bytes()); // addr
        want.extend_from_slice(&0xDEAD_BEEFu64.to_le_bytes()); // data (low 32 bits used)
        assert_eq!(bytes, &want[..]);
    }

    #[test]
    fn busy_cycles_at_1350_mhz() {
        assert_eq!(busy_cycles(Duration::from_micros(1)), 1350);
        assert_eq!(busy_cycles(Duration::from_nanos(1)), 1);
        assert_eq!(busy_cycles(Duration::MAX), u64::MAX);
    }
}
