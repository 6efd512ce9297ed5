//! NoC address encodings and multicast rectangle semantics.
//!
//! Software addresses are 64-bit: a 36-bit local address with 6-bit node coordinates above it
//! (tt-metal `noc_parameters.h`: `NOC_XY_ADDR`, `NOC_MULTICAST_ADDR`, `NOC_MULTICAST_ENCODING`;
//! tt-isa-documentation `BlackholeA0/NoC/MemoryMap.md` confirms the coordinate word). The NIU
//! takes them split into `LO` / `MID` / `HI` registers ([`AddrRegs`]).

/// Bits of the node-local part of a NoC address.
pub const NOC_ADDR_LOCAL_BITS: u32 = 36;
/// Bits per coordinate in a NoC address.
pub const NOC_ADDR_NODE_ID_BITS: u32 = 6;
/// Largest local address.
pub const NOC_LOCAL_ADDR_MAX: u64 = (1 << NOC_ADDR_LOCAL_BITS) - 1;
/// Largest coordinate a NoC address can hold.
pub const NOC_COORD_MAX: u8 = (1 << NOC_ADDR_NODE_ID_BITS) - 1;
/// Bit 60 of a 64-bit NoC address selects the PCIe outbound iATU path (`NOC_XY_PCIE_ENCODING`).
pub const NOC_PCIE_ADDR_BIT: u64 = 1 << 60;

/// A coordinate or local address that does not fit the encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A coordinate above 63.
    Coordinate(u8),
    /// A local address of more than 36 bits.
    LocalAddress(u64),
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Coordinate(c) => write!(f, "coordinate {c} does not fit 6 bits (0..=63)"),
            Self::LocalAddress(a) => write!(f, "local address {a:#x} does not fit 36 bits"),
        }
    }
}

impl core::error::Error for EncodeError {}

const fn check_coord(c: u8) -> Result<u64, EncodeError> {
    if c > NOC_COORD_MAX {
        Err(EncodeError::Coordinate(c))
    } else {
        Ok(c as u64)
    }
}

const fn check_local(a: u64) -> Result<u64, EncodeError> {
    if a > NOC_LOCAL_ADDR_MAX {
        Err(EncodeError::LocalAddress(a))
    } else {
        Ok(a)
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

/// `NOC_XY_ADDR(x, y, local) = y << 42 | x << 36 | local`.
pub const fn unicast_addr(x: u8, y: u8, local: u64) -> Result<u64, EncodeError> {
    Ok((tri!(check_coord(y)) << 42) | (tri!(check_coord(x)) << 36) | tri!(check_local(local)))
}

/// `NOC_MULTICAST_ADDR(xs, ys, xe, ye, local) = ys << 54 | xs << 48 | ye << 42 | xe << 36 | local`.
pub const fn multicast_addr(
    start: (u8, u8),
    end: (u8, u8),
    local: u64,
) -> Result<u64, EncodeError> {
    Ok((tri!(check_coord(start.1)) << 54)
        | (tri!(check_coord(start.0)) << 48)
        | (tri!(check_coord(end.1)) << 42)
        | (tri!(check_coord(end.0)) << 36)
        | tri!(check_local(local)))
}

/// Unicast coordinate word for `NOC_TARG_ADDR_HI` / `NOC_RET_ADDR_HI`: `x | y << 6`.
pub const fn unicast_coord(x: u8, y: u8) -> Result<u32, EncodeError> {
    Ok((tri!(check_coord(x)) | (tri!(check_coord(y)) << 6)) as u32)
}

/// Multicast coordinate word: `EndX | EndY << 6 | StartX << 12 | StartY << 18`.
pub const fn multicast_coord(start: (u8, u8), end: (u8, u8)) -> Result<u32, EncodeError> {
    Ok((tri!(check_coord(end.0))
        | (tri!(check_coord(end.1)) << 6)
        | (tri!(check_coord(start.0)) << 12)
        | (tri!(check_coord(start.1)) << 18)) as u32)
}

/// A 64-bit NoC address split the way the NIU's address registers take it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AddrRegs {
    /// `*_ADDR_LO`: address bits 31..0.
    pub lo: u32,
    /// `*_ADDR_MID`: `(addr >> 32) & 0x1000_000F`: local bits 35..32 plus the PCIe bit 60.
    pub mid: u32,
    /// `*_ADDR_HI`: the coordinate word, `(addr >> 36) & 0xFF_FFFF`.
    pub hi: u32,
}

impl AddrRegs {
    /// Splits a 64-bit NoC address (tt-metal's `LO`/`MID`/`HI` rule).
    pub const fn split(addr: u64) -> Self {
        Self {
            lo: addr as u32,
            mid: ((addr >> 32) & 0x1000_000F) as u32,
            hi: ((addr >> 36) & 0xFF_FFFF) as u32,
        }
    }
}

/// Whether coordinate `v` lies in the multicast span `start..=end` of one torus axis.
///
/// `start <= end` covers `start..=end`; `start > end` wraps around the torus and covers
/// `v <= end || v >= start` (tt-isa-documentation `NoC/MemoryMap.md`). A wrapped span is what
/// the hardware does with reversed corners; it is almost never what software meant.
pub const fn span_contains(start: u8, end: u8, v: u8) -> bool {
    if start <= end {
        start <= v && v <= end
    } else {
        v <= end || v >= start
    }
}

/// Whether `(x, y)` lies in the multicast rectangle `start`..`end`, with torus wrap per axis.
pub const fn rect_contains(start: (u8, u8), end: (u8, u8), x: u8, y: u8) -> bool {
    span_contains(start.0, end.0, x) && span_contains(start.1, end.1, y)
}

/// Required alignment, in bytes, of an L1 source or destination of a NoC read or write.
pub const L1_ALIGN: u32 = 16;
/// Required alignment of a DRAM read address (DRAM writes need [`DRAM_WRITE_ALIGN`]).
pub const DRAM_READ_ALIGN: u32 = 64;
/// Required alignment of a DRAM write address.
pub const DRAM_WRITE_ALIGN: u32 = 16;
/// Bytes per flit.
pub const FLIT_BYTES: u32 = 64;
/// Largest payload of one NoC packet (256 flits).
pub const MAX_PACKET_BYTES: u32 = 16384;
