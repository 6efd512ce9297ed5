//! NoC addresses: 36 bits of local address, then the coordinates.
//!
//! The 64-bit NoC address is `y << 42 | x << 36 | local` for a unicast and `start_y << 54 |
//! start_x << 48 | end_y << 42 | end_x << 36 | local` for a multicast (tt-metal
//! `NOC_XY_ADDR`, `NOC_MULTICAST_ADDR`); a command buffer takes its low word in `*_ADDR_LO` and
//! all of its high word, local bits 35:32 and the coordinates, in `*_ADDR_MID` (tt-metal
//! `noc_nonblocking_api.h`: `NOC_TARG_ADDR_COORDINATE = NOC_TARG_ADDR_MID`). There is no high
//! register: Blackhole's split (`MID = (addr >> 32) & 0x1000000F`, `HI = addr >> 36`) does not
//! apply. Sources: tt-isa-documentation `WormholeB0/NoC/MemoryMap.md` (`NOC_TARG_ADDR`),
//! tt-metal `noc_parameters.h`.

/// Bits of local address.
pub const NOC_ADDR_LOCAL_BITS: u32 = 36;
/// Bits of each coordinate.
pub const NOC_ADDR_NODE_ID_BITS: u32 = 6;
/// The largest local address.
pub const NOC_LOCAL_ADDR_MAX: u64 = (1 << NOC_ADDR_LOCAL_BITS) - 1;
/// The host's window in the PCIe tile: local address bit 35 (`0x8_0000_0000`; Blackhole's is
/// bit 60).
pub const NOC_PCIE_ADDR_BASE: u64 = 0x8_0000_0000;
/// Bytes of a flit.
pub const NOC_WORD_BYTES: u32 = 32;
/// The largest payload of one request (256 flits): "the maximum allowed value for a single
/// request is 8192 bytes" (tt-isa-documentation `WormholeB0/NoC/MemoryMap.md`,
/// `NOC_AT_LEN_BE`); larger transfers are split into requests in software.
pub const NOC_MAX_BURST_SIZE: u32 = 8192;
/// Alignment of L1 reads and writes.
pub const L1_ALIGNMENT: u32 = 16;
/// Alignment of DRAM reads (DRAM writes: 16).
pub const DRAM_READ_ALIGNMENT: u32 = 32;
/// Alignment of PCIe reads (PCIe writes: 16).
pub const PCIE_READ_ALIGNMENT: u32 = 32;

/// What an address could not be encoded from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A coordinate of 64 or more.
    Coordinate(u8),
    /// A local address beyond 36 bits.
    Local(u64),
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Coordinate(c) => write!(f, "coordinate {c} (allowed: 0..=63)"),
            Self::Local(a) => write!(f, "local address {a:#x} (allowed: below 2^36)"),
        }
    }
}

impl core::error::Error for EncodeError {}

const fn coord(c: u8) -> Result<u32, EncodeError> {
    if c as u32 >= 1 << NOC_ADDR_NODE_ID_BITS {
        return Err(EncodeError::Coordinate(c));
    }
    Ok(c as u32)
}

/// The coordinate bits of a unicast to `(x, y)` as they sit in `*_ADDR_MID` (`x << 4 | y <<
/// 10`, tt-metal `NOC_XY_ENCODING`).
pub const fn unicast_coord(x: u8, y: u8) -> Result<u32, EncodeError> {
    match (coord(x), coord(y)) {
        (Ok(x), Ok(y)) => Ok((x << 4) | (y << 10)),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// The coordinate bits of a multicast over the rectangle `start..=end` (tt-metal
/// `NOC_MULTICAST_ENCODING`: end x bits 9:4, end y 15:10, start x 21:16, start y 27:22).
pub const fn multicast_coord(start: (u8, u8), end: (u8, u8)) -> Result<u32, EncodeError> {
    match (coord(start.0), coord(start.1), coord(end.0), coord(end.1)) {
        (Ok(sx), Ok(sy), Ok(ex), Ok(ey)) => Ok((ex << 4) | (ey << 10) | (sx << 16) | (sy << 22)),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => Err(e),
    }
}

/// The `(LO, MID)` register words of local address `local` with coordinate bits `coord`.
pub const fn split(coord: u32, local: u64) -> Result<(u32, u32), EncodeError> {
    if local > NOC_LOCAL_ADDR_MAX {
        return Err(EncodeError::Local(local));
    }
    Ok((local as u32, coord | (local >> 32) as u32))
}

/// The 64-bit unicast address of `local` in tile `(x, y)`.
pub const fn unicast_addr(x: u8, y: u8, local: u64) -> Result<u64, EncodeError> {
    match (unicast_coord(x, y), local <= NOC_LOCAL_ADDR_MAX) {
        (Ok(c), true) => Ok(((c as u64) << 32) | local),
        (Err(e), _) => Err(e),
        (_, false) => Err(EncodeError::Local(local)),
    }
}
