//! PCIe TLB windows: 156 of 1 MiB, 10 of 2 MiB and 20 of 16 MiB in BAR0 (the last kept by
//! tt-kmd), each configured by a 64-bit word at `0x1FC0_0000 + 8 i`. Sources:
//! tt-isa-documentation `WormholeB0/PCIExpressTile/TLBs.md`; tt-umd `wormhole_implementation.hpp`
//! (`TLB_COUNT_1M`, `TLB_BASE_2M`, ...); tt-kmd `wormhole.c` (`construct_tlb_config`,
//! `KERNEL_TLB_INDEX`).

/// A size of window.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WindowSize {
    /// 1 MiB: windows 0..=155.
    Mib1,
    /// 2 MiB: windows 156..=165.
    Mib2,
    /// 16 MiB: windows 166..=185.
    Mib16,
}

impl WindowSize {
    /// Every size, smallest first.
    pub const ALL: [WindowSize; 3] = [WindowSize::Mib1, WindowSize::Mib2, WindowSize::Mib16];

    /// log2 of its bytes.
    pub const fn shift(self) -> u32 {
        match self {
            Self::Mib1 => 20,
            Self::Mib2 => 21,
            Self::Mib16 => 24,
        }
    }

    /// Windows of this size.
    pub const fn count(self) -> usize {
        match self {
            Self::Mib1 => 156,
            Self::Mib2 => 10,
            Self::Mib16 => 20,
        }
    }

    /// Index of its first window.
    pub const fn first(self) -> usize {
        match self {
            Self::Mib1 => 0,
            Self::Mib2 => 156,
            Self::Mib16 => 166,
        }
    }

    /// BAR0 offset of its first window.
    pub const fn bar0_base(self) -> u32 {
        match self {
            Self::Mib1 => 0,
            Self::Mib2 => 0x09C0_0000,
            Self::Mib16 => 0x0B00_0000,
        }
    }
}

/// Windows in all.
pub const WINDOWS: usize = 186;
/// The window tt-kmd keeps for itself (16 MiB at BAR0 `0x1E00_0000`).
pub const KERNEL_WINDOW: usize = WINDOWS - 1;
/// BAR0 offset of window 0's configuration word.
pub const CONFIG_BASE: u32 = 0x1FC0_0000;
/// Bits of a tile address a window reaches.
pub const ADDRESS_BITS: u32 = 36;

/// How a window's requests are ordered (`ordering`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ordering {
    /// Relaxed.
    Relaxed = 0,
    /// Strict AXI ordering.
    Strict = 1,
    /// Posted writes.
    Posted = 2,
}

/// What a window targets: a tile, or with `multicast` the rectangle `start..=end`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WindowTarget {
    /// The tile, or the rectangle's end.
    pub end: (u8, u8),
    /// The rectangle's start (ignored for a unicast).
    pub start: (u8, u8),
    /// NoC 0 or 1.
    pub noc: u8,
    /// A multicast to the Tensix rectangle.
    pub multicast: bool,
    /// Request ordering.
    pub ordering: Ordering,
}

/// A window that cannot be configured as asked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TlbError {
    /// An address not aligned to the window's size, or beyond 36 bits.
    Address(u64),
    /// A coordinate of 64 or more, or a NoC other than 0 and 1.
    Target,
}

impl core::fmt::Display for TlbError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Address(a) => write!(
                f,
                "window address {a:#x} (allowed: aligned to the window's size, below 2^36)"
            ),
            Self::Target => f.write_str("window target (allowed: coordinates 0..=63, NoC 0 or 1)"),
        }
    }
}

impl core::error::Error for TlbError {}

/// The configuration word of a window of `size` showing tile address `addr` of `target`, as
/// tt-kmd builds it: `addr >> shift | fields << (36 - shift)`, fields `end_x | end_y << 6 |
/// start_x << 12 | start_y << 18 | noc << 24 | multicast << 25 | ordering << 26`.
pub const fn config(size: WindowSize, addr: u64, target: WindowTarget) -> Result<u64, TlbError> {
    let shift = size.shift();
    if addr & ((1 << shift) - 1) != 0 || addr >> ADDRESS_BITS != 0 {
        return Err(TlbError::Address(addr));
    }
    let (e, s) = (target.end, target.start);
    if e.0 >= 64 || e.1 >= 64 || s.0 >= 64 || s.1 >= 64 || target.noc > 1 {
        return Err(TlbError::Target);
    }
    let fields = e.0 as u64
        | (e.1 as u64) << 6
        | (s.0 as u64) << 12
        | (s.1 as u64) << 18
        | (target.noc as u64) << 24
        | (target.multicast as u64) << 25
        | (target.ordering as u64) << 26;
    Ok((addr >> shift) | (fields << (ADDRESS_BITS - shift)))
}

/// The window a BAR0 offset lies in: its index, size and the offset within it; `None` past
/// the last window.
pub const fn window_at(offset: u64) -> Option<(usize, WindowSize, u64)> {
    let mut i = WindowSize::ALL.len();
    while i > 0 {
        i -= 1;
        let size = WindowSize::ALL[i];
        let base = size.bar0_base() as u64;
        if offset >= base {
            let n = (offset - base) >> size.shift();
            if n >= size.count() as u64 {
                return None;
            }
            return Some((
                size.first() + n as usize,
                size,
                offset & ((1 << size.shift()) - 1),
            ));
        }
    }
    None
}

/// What the configuration word `word` of a window of `size` says: the tile address its first
/// byte shows and its target ([`config`]'s inverse); `None` for the ordering value 3, which
/// the ISA does not define.
pub const fn decode(size: WindowSize, word: u64) -> Option<(u64, WindowTarget)> {
    let shift = size.shift();
    let addr_bits = ADDRESS_BITS - shift;
    let addr = (word & ((1 << addr_bits) - 1)) << shift;
    let f = word >> addr_bits;
    let ordering = match (f >> 26) & 3 {
        0 => Ordering::Relaxed,
        1 => Ordering::Strict,
        2 => Ordering::Posted,
        _ => return None,
    };
    const fn c(f: u64, at: u32) -> u8 {
        ((f >> at) & 0x3F) as u8
    }
    Some((
        addr,
        WindowTarget {
            end: (c(f, 0), c(f, 6)),
            start: (c(f, 12), c(f, 18)),
            noc: ((f >> 24) & 1) as u8,
            multicast: (f >> 25) & 1 != 0,
            ordering,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_fall_in_their_window() {
        assert_eq!(window_at(0), Some((0, WindowSize::Mib1, 0)));
        assert_eq!(window_at(155 << 20 | 4), Some((155, WindowSize::Mib1, 4)));
        assert_eq!(
            window_at(0x09C0_0000 + (2 << 21) + 8),
            Some((158, WindowSize::Mib2, 8))
        );
        assert_eq!(
            window_at(0x1E00_0000),
            Some((KERNEL_WINDOW, WindowSize::Mib16, 0))
        );
        assert_eq!(window_at(0x1F00_0000), None);
    }
}
