//! TLB windows: `KmdWindow` (its id, its mapping, a reference to the device's fd; unmapped and
//! freed on drop), the bounds and alignment check of every access through it, and
//! `noc_tlb_config`, the ioctl's view of a `TlbConfig`.

use std::fmt;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use blackhole_pac::tlb::{TlbConfig, TlbSize};
use rustix::io::Errno;
use tt_kmd_sys as sys;

use super::mmio::MmioMap;
use crate::bar::{Mapping, WindowHandle};
use crate::error::PcieError;

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
pub(super) fn size_name(size: TlbSize) -> &'static str {
    match size {
        TlbSize::Size2M => "2 MiB",
        TlbSize::Size4G => "4 GiB",
    }
}

/// One TLB window of a [`KmdBar`](super::KmdBar): its id, its mapping (exactly the window's
/// size), and a reference to the device's fd. Dropping it unmaps and frees it (errors ignored);
/// use [`Bar::free`](crate::bar::Bar::free) to see them.
pub struct KmdWindow {
    pub(super) id: u32,
    pub(super) size: TlbSize,
    pub(super) mapping: Mapping,
    /// `None` only while being freed.
    pub(super) map: Option<MmioMap>,
    pub(super) fd: Arc<OwnedFd>,
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
    pub(super) fn span(&self, offset: u64, len: usize) -> Result<(&MmioMap, usize), PcieError> {
        if !offset.is_multiple_of(4) || !len.is_multiple_of(4) {
            return Err(PcieError::Unaligned { offset, len });
        }
        let out = PcieError::OutOfWindow {
            offset,
            len,
            size: self.size.bytes(),
        };
        let map = self.map.as_ref().ok_or_else(|| out.clone())?;
        let end = offset.checked_add(len as u64).ok_or_else(|| out.clone())?;
        if end > map.len() as u64 {
            return Err(out);
        }
        let start = usize::try_from(offset).map_err(|_| out)?;
        Ok((map, start))
    }

    /// FREE_TLB on the window's fd.
    pub(super) fn free_tlb(&self) -> Result<(), Errno> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use blackhole_pac::tlb::TlbOrdering;

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
}
