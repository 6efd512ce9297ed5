//! A Wormhole's 2 MiB windows as the backends that program windows themselves (ttsim and the
//! simulator; a card's driver does it on CONFIGURE_TLB) lay them out: pool window `i` is the
//! chip's window `156 + i`, its aperture at BAR0 `0x09C0_0000 + i * 2 MiB`, configured by the
//! 64-bit word at `0x1FC0_0000 + 8 * (156 + i)` ([`wormhole_pac::tlb`]). A leaf: it imports
//! nothing of the crate.

use blackhole_pac::tlb::{TlbConfig, TlbOrdering};
use wormhole_pac::tlb::{self as wh_tlb, WindowSize};

/// The configuration word of a 2 MiB window showing `config`; why not when a Wormhole window
/// cannot (it has no linked, static-VC or counted fields).
pub fn config_word(config: &TlbConfig) -> Result<u64, String> {
    if config.linked || config.static_vc.is_some() {
        return Err("has no linked or static-VC fields".into());
    }
    let ordering = match config.ordering {
        TlbOrdering::Relaxed => wh_tlb::Ordering::Relaxed,
        TlbOrdering::Strict => wh_tlb::Ordering::Strict,
        TlbOrdering::Posted => wh_tlb::Ordering::Posted,
        TlbOrdering::Counted => return Err("has no counted ordering".into()),
    };
    let target = wh_tlb::WindowTarget {
        end: config.end,
        start: config.start,
        noc: config.noc,
        multicast: config.multicast,
        ordering,
    };
    wh_tlb::config(WindowSize::Mib2, config.addr, target).map_err(|e| e.to_string())
}

/// BAR0 offset of pool window `index`'s configuration word.
pub fn config_offset(index: u32) -> u64 {
    wh_tlb::CONFIG_BASE as u64 + 8 * (WindowSize::Mib2.first() as u64 + index as u64)
}

/// BAR0 offset of `at`, an offset into the pool's 2 MiB apertures laid end to end
/// ([`PoolWindow::place`](crate::pool::PoolWindow::place)).
pub fn aperture(at: u64) -> u64 {
    WindowSize::Mib2.bar0_base() as u64 + at
}
