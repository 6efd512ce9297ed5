//! The driver's [`Bar`](crate::bar::Bar): a Blackhole or Wormhole B0 card through tt-kmd's
//! ioctls and mmaps (Linux only).
//!
//! * [`enumerate`] lists `/dev/tenstorrent/N`, sorted by PCI address (node numbers change
//!   across resets, PCI addresses do not; tt-umd sorts the same way), each with what it is or
//!   why it cannot be used, filtered by `TT_VISIBLE_DEVICES` when that is set.
//! * [`KmdBar::open`] opens one node, checks that it is tt-kmd with ioctl API 2 or later and a
//!   Blackhole or a Wormhole B0, maps the BAR0 registers, checks the device answers, and asks
//!   the driver for the busy clock (SET_POWER_STATE, tt-kmd 2.6.0 and later).
//! * [`KmdWindow`] is one TLB window: allocated (ALLOCATE_TLB, checked before anything is
//!   mapped), mapped with exactly its size, accessed with volatile 32-bit loads and stores
//!   only, configured (CONFIGURE_TLB), unmapped and freed.
//!
//! # Lifetimes
//!
//! A window holds a reference to the device's file descriptor, so it stays usable (and can be
//! freed) even after its [`KmdBar`] is dropped; the fd closes when the last of them goes.
//! [`Bar::free`](crate::bar::Bar::free) unmaps, then FREE_TLB, and reports errors; dropping a
//! window does the same and ignores them. A window that could not be freed is freed by the
//! driver when the fd closes.
//!
//! # What the driver does not check, and what this module does
//!
//! CONFIGURE_TLB truncates out-of-range coordinates, NoC and ordering values silently, so
//! [`Bar::configure`](crate::bar::Bar::configure) validates with
//! [`TlbConfig::encode`](blackhole_pac::tlb::TlbConfig::encode) first and answers
//! [`PcieError::TlbConfig`](crate::error::PcieError::TlbConfig). The ioctl's `static_vc` byte
//! is only the *enable* bit of the register: a `TlbConfig::static_vc` of `Some(vc)` enables a
//! static VC, but the VC number (buddy and class bits) **cannot be set through the ioctl** and
//! stays 0 (tt-kmd `blackhole.c`, `blackhole_configure_tlb_2M`; docs/blackhole.md, "tt-kmd
//! ioctls"); pass `None` for multicast, which needs class 0b10.
//!
//! # After a reset
//!
//! A destructive reset by anyone makes every ioctl on this fd answer `ENODEV`
//! ([`PcieError::Gone`](crate::error::PcieError::Gone)), and an access through an old mapping
//! raises `SIGBUS`, which this module does not catch. Open the device again.

// Each file below imports only files listed after it in this order: enumeration, open, device,
// window, then the leaves (address, cleanup, errno, mmio), which import none of the others but
// errno.

// The node list: `enumerate`, `TT_VISIBLE_DEVICES`, one GET_DEVICE_INFO per node.
mod enumeration;
// `KmdBar::open` and the steps it shares with `enumerate` (open flags, class check,
// GET_DRIVER_INFO, GET_DEVICE_INFO, SET_POWER_STATE, sysfs).
mod open;
// `KmdBar`, its BAR0 registers, and its `Bar` implementation.
mod device;
// `KmdWindow`: one TLB window, its bounds check, its FREE_TLB.
mod window;
// `PciAddress` and node numbers.
mod address;
// SET_NOC_CLEANUP's argument and its ioctl.
mod cleanup;
// errno to `PcieError`.
mod errno;
// `MmioMap` (volatile word access to a mapping) and `store_fence`.
mod mmio;

pub use address::PciAddress;
pub use device::{
    AICLK_BUSY_MHZ, BAR0_REGS_LEN, BAR0_REGS_OFFSET, BAR0_TLB_CONFIG_LEN, KmdBar, PASS_TIME_SLEEP,
    busy_cycles,
};
pub use enumeration::{
    DEVICE_DIR, DeviceNode, VISIBLE_DEVICES_VAR, enumerate, enumerate_in, select_visible,
};
pub use mmio::store_fence;
pub use open::{MIN_API_VERSION, SYSFS_CLASS_DIR};
pub use window::{KmdWindow, noc_tlb_config};
