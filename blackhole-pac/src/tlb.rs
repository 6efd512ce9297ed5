//! PCIe TLB windows: host apertures into the NoC, and their configuration encoding.
//!
//! BAR0 holds 202 windows of 2 MiB (window 201 belongs to the kernel driver), BAR4 holds 8 of
//! 4 GiB (indices 202..210). Each window's configuration is a 96-bit value in three `u32`s at
//! [`TLB_CONFIG_BASE`]` + 12 * index`. Sources: the `jasondavies/tt-isa-documentation`
//! fork's `BlackholeA0/PCIExpressTile/HostToDeviceTLBs.md`; tt-kmd `blackhole.c` (`struct
//! TLB_2M_REG`, `TLB_4G_REG`); docs/blackhole.md, "TLB windows".

/// 2 MiB windows in BAR0.
pub const TLB_2M_COUNT: u32 = 202;
/// 4 GiB windows in BAR4.
pub const TLB_4G_COUNT: u32 = 8;
/// Index of the first 4 GiB window.
pub const TLB_4G_FIRST_INDEX: u32 = 202;
/// The 2 MiB window the kernel driver keeps for itself (programmed with strict ordering).
pub const KERNEL_TLB_INDEX: u32 = 201;
/// Windows that also support strided / excluded multicast.
pub const TLB_STRIDED_COUNT: u32 = 32;
/// Size of a 2 MiB window.
pub const TLB_2M_SIZE: u64 = 2 << 20;
/// Size of a 4 GiB window.
pub const TLB_4G_SIZE: u64 = 4 << 30;
/// BAR0 offset of the window configuration registers.
pub const TLB_CONFIG_BASE: u32 = 0x1FC0_0000;
/// Bytes per window configuration (three `u32`).
pub const TLB_CONFIG_BYTES: u32 = 12;
/// BAR0 offset of the strided-multicast registers of windows 0..32.
pub const TLB_STRIDED_BASE: u32 = 0x1FC0_09D8;
/// BAR0 size.
pub const BAR0_SIZE: u64 = 512 << 20;

/// The two window sizes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TlbSize {
    /// 2 MiB windows in BAR0.
    Size2M,
    /// 4 GiB windows in BAR4.
    Size4G,
}

impl TlbSize {
    /// Bytes of one window.
    pub const fn bytes(self) -> u64 {
        match self {
            Self::Size2M => TLB_2M_SIZE,
            Self::Size4G => TLB_4G_SIZE,
        }
    }
}

/// Where window `index` is mapped: `(BAR number, offset in that BAR, size)`; `None` for an
/// index past 209.
pub const fn window_location(index: u32) -> Option<(u8, u64, TlbSize)> {
    if index < TLB_2M_COUNT {
        Some((0, index as u64 * TLB_2M_SIZE, TlbSize::Size2M))
    } else if index < TLB_4G_FIRST_INDEX + TLB_4G_COUNT {
        Some((
            4,
            (index - TLB_4G_FIRST_INDEX) as u64 * TLB_4G_SIZE,
            TlbSize::Size4G,
        ))
    } else {
        None
    }
}

/// BAR0 offset of window `index`'s configuration, or `None` for an index past 209.
pub const fn config_offset(index: u32) -> Option<u32> {
    if index < TLB_4G_FIRST_INDEX + TLB_4G_COUNT {
        Some(TLB_CONFIG_BASE + TLB_CONFIG_BYTES * index)
    } else {
        None
    }
}

/// BAR0 offset of window `index`'s strided register, for the first 32 windows.
pub const fn strided_offset(index: u32) -> Option<u32> {
    if index < TLB_STRIDED_COUNT {
        Some(TLB_STRIDED_BASE + 4 * index)
    } else {
        None
    }
}

/// The `ordering` field.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TlbOrdering {
    /// 0: default (relaxed).
    Relaxed = 0,
    /// 1: strict AXI ordering.
    Strict = 1,
    /// 2: posted writes (no ack).
    Posted = 2,
    /// 3: counted writes.
    Counted = 3,
}

/// One window's configuration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TlbConfig {
    /// The NoC address the window's first byte maps to (local address in the target tile);
    /// must be a multiple of the window size.
    pub addr: u64,
    /// Target (x, y) for unicast, or the multicast rectangle's end corner.
    pub end: (u8, u8),
    /// The multicast rectangle's start corner (ignored for unicast; write (0, 0)).
    pub start: (u8, u8),
    /// Which NoC carries the window's requests: 0 (NoC0) or 1 (NoC1), the value of the
    /// `noc_sel` field. Chip-neutral code holding a `komorebi_hal::NocId` passes its `index()`.
    pub noc: u8,
    /// Multicast to the Tensix tiles of the rectangle `start..=end`.
    pub multicast: bool,
    /// Ordering mode.
    pub ordering: TlbOrdering,
    /// Linked transactions (never safe: the kernel driver may use its window at any time).
    pub linked: bool,
    /// Static VC: `Some(vc)` with `vc` in 0..8 (buddy bit 0, class bits 1..2); `None` = dynamic.
    pub static_vc: Option<u8>,
}

/// A configuration that the window cannot hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TlbError {
    /// `addr` is not a multiple of the window size.
    Misaligned {
        /// The address given.
        addr: u64,
        /// The window size it must be a multiple of.
        size: u64,
    },
    /// `addr >> log2(size)` does not fit the `local_offset` field.
    AddrTooLarge(u64),
    /// A coordinate above 63.
    Coordinate(u8),
    /// A static VC above 7.
    StaticVc(u8),
    /// A NoC index other than 0 or 1.
    Noc(u8),
}

impl core::fmt::Display for TlbError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Misaligned { addr, size } => {
                write!(
                    f,
                    "TLB address {addr:#x} is not a multiple of the window size {size:#x}"
                )
            }
            Self::AddrTooLarge(a) => write!(f, "TLB address {a:#x} is beyond the window's reach"),
            Self::Coordinate(c) => write!(f, "TLB coordinate {c} does not fit 6 bits (0..=63)"),
            Self::StaticVc(v) => write!(f, "static VC {v} is not in 0..=7"),
            Self::Noc(n) => write!(f, "NoC {n} is not 0 or 1"),
        }
    }
}

impl core::error::Error for TlbError {}

/// Bit positions of one window size's fields.
struct Layout {
    offset_shift: u32,
    offset_bits: u32,
    x_end: u32,
    y_end: u32,
    x_start: u32,
    y_start: u32,
    noc: u32,
    mcast: u32,
    ordering: u32,
    linked: u32,
    static_vc: u32,
    vc: u32,
}

const LAYOUT_2M: Layout = Layout {
    offset_shift: 21,
    offset_bits: 43,
    x_end: 43,
    y_end: 49,
    x_start: 55,
    y_start: 61,
    noc: 67,
    mcast: 69,
    ordering: 70,
    linked: 72,
    static_vc: 73,
    vc: 75,
};

const LAYOUT_4G: Layout = Layout {
    offset_shift: 32,
    offset_bits: 32,
    x_end: 32,
    y_end: 38,
    x_start: 44,
    y_start: 50,
    noc: 56,
    mcast: 58,
    ordering: 59,
    linked: 61,
    static_vc: 62,
    vc: 64,
};

const fn layout(size: TlbSize) -> &'static Layout {
    match size {
        TlbSize::Size2M => &LAYOUT_2M,
        TlbSize::Size4G => &LAYOUT_4G,
    }
}

const fn field(value: u128, at: u32, bits: u32) -> u128 {
    (value >> at) & ((1u128 << bits) - 1)
}

impl TlbConfig {
    /// A unicast window onto `(x, y)` at `addr`, relaxed ordering, NoC0, dynamic VC.
    pub const fn unicast(x: u8, y: u8, addr: u64) -> Self {
        Self {
            addr,
            end: (x, y),
            start: (0, 0),
            noc: 0,
            multicast: false,
            ordering: TlbOrdering::Relaxed,
            linked: false,
            static_vc: None,
        }
    }

    /// The three configuration words of a window of `size`.
    pub const fn encode(&self, size: TlbSize) -> Result<[u32; 3], TlbError> {
        let l = layout(size);
        if self.addr % size.bytes() != 0 {
            return Err(TlbError::Misaligned {
                addr: self.addr,
                size: size.bytes(),
            });
        }
        let offset = self.addr >> l.offset_shift;
        if l.offset_bits < 64 && offset >> l.offset_bits != 0 {
            return Err(TlbError::AddrTooLarge(self.addr));
        }
        let coords = [self.end.0, self.end.1, self.start.0, self.start.1];
        let mut i = 0;
        while i < 4 {
            if coords[i] > 63 {
                return Err(TlbError::Coordinate(coords[i]));
            }
            i += 1;
        }
        if self.noc > 1 {
            return Err(TlbError::Noc(self.noc));
        }
        let mut v: u128 = offset as u128;
        v |= (self.end.0 as u128) << l.x_end;
        v |= (self.end.1 as u128) << l.y_end;
        v |= (self.start.0 as u128) << l.x_start;
        v |= (self.start.1 as u128) << l.y_start;
        v |= (self.noc as u128) << l.noc;
        v |= (self.multicast as u128) << l.mcast;
        v |= (self.ordering as u128) << l.ordering;
        v |= (self.linked as u128) << l.linked;
        match self.static_vc {
            Some(vc) if vc > 7 => return Err(TlbError::StaticVc(vc)),
            Some(vc) => v |= (1u128 << l.static_vc) | ((vc as u128) << l.vc),
            None => {}
        }
        Ok([v as u32, (v >> 32) as u32, (v >> 64) as u32])
    }

    /// The configuration held by three words of a window of `size` (reserved bits ignored).
    pub const fn decode(words: [u32; 3], size: TlbSize) -> Self {
        let l = layout(size);
        let v = words[0] as u128 | (words[1] as u128) << 32 | (words[2] as u128) << 64;
        let ordering = match field(v, l.ordering, 2) {
            0 => TlbOrdering::Relaxed,
            1 => TlbOrdering::Strict,
            2 => TlbOrdering::Posted,
            _ => TlbOrdering::Counted,
        };
        Self {
            addr: (field(v, 0, l.offset_bits) as u64) << l.offset_shift,
            end: (field(v, l.x_end, 6) as u8, field(v, l.y_end, 6) as u8),
            start: (field(v, l.x_start, 6) as u8, field(v, l.y_start, 6) as u8),
            noc: field(v, l.noc, 1) as u8,
            multicast: field(v, l.mcast, 1) == 1,
            ordering,
            linked: field(v, l.linked, 1) == 1,
            static_vc: if field(v, l.static_vc, 1) == 1 {
                Some(field(v, l.vc, 3) as u8)
            } else {
                None
            },
        }
    }
}
