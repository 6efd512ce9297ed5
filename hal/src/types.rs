//! Value types shared by the traits. Each validates on construction, so a value that exists is
//! one every backend can be handed.

use core::fmt;

/// Largest coordinate on either axis. The HAL's coordinate space is 64 x 64 nodes (6 bits per
/// axis, the NoC node-id width of every Tenstorrent NoC); a backend refuses coordinates outside
/// its own grid with `ErrorKind::InvalidAddress`.
pub const COORD_MAX: u8 = 63;
/// Bits of a node-local NoC address.
pub const LOCAL_ADDR_BITS: u32 = 36;
/// Alignment every [`L1Addr`] has (one 32-bit word). NoCs may need more for transfers and say so
/// with `ErrorKind::Misaligned`.
pub const L1_ADDR_ALIGN: u32 = 4;

/// A value that cannot be one of the HAL's types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueError {
    /// A coordinate above [`COORD_MAX`].
    Coordinate {
        /// The coordinate given.
        value: u8,
    },
    /// A rectangle whose start lies after its end on `axis` (`'x'` or `'y'`).
    Reversed {
        /// The axis.
        axis: char,
        /// Start coordinate on that axis.
        start: u8,
        /// End coordinate on that axis.
        end: u8,
    },
    /// An L1 address that is not a multiple of [`L1_ADDR_ALIGN`].
    Misaligned {
        /// The address given.
        addr: u32,
    },
    /// A local address of more than [`LOCAL_ADDR_BITS`] bits.
    LocalAddress {
        /// The address given.
        addr: u64,
    },
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Coordinate { value } => {
                write!(
                    f,
                    "coordinate {value} is out of range (allowed: 0..={COORD_MAX})"
                )
            }
            Self::Reversed { axis, start, end } => write!(
                f,
                "rectangle start {axis}={start} lies after end {axis}={end} \
                 (allowed: start <= end; use Rect::wrapping for a torus-wrapping rectangle)"
            ),
            Self::Misaligned { addr } => write!(
                f,
                "L1 address {addr:#x} is not a multiple of {L1_ADDR_ALIGN} (a 32-bit word)"
            ),
            Self::LocalAddress { addr } => write!(
                f,
                "local address {addr:#x} does not fit {LOCAL_ADDR_BITS} bits \
                 (allowed: 0..={:#x})",
                (1u64 << LOCAL_ADDR_BITS) - 1
            ),
        }
    }
}

impl core::error::Error for ValueError {}

/// Which of a node's two NoCs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum NocId {
    /// NoC 0.
    Noc0 = 0,
    /// NoC 1.
    Noc1 = 1,
}

impl NocId {
    /// The NoC with index `index` (0 or 1).
    pub const fn new(index: u8) -> Option<Self> {
        match index {
            0 => Some(Self::Noc0),
            1 => Some(Self::Noc1),
            _ => None,
        }
    }

    /// The index, 0 or 1.
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// NoC0 coordinates of raw `p` of this NoC on a `grid` of `(width, height)` nodes; `None`
    /// off the grid, or when the grid is larger than the coordinate space (64 x 64). The NoCs run in opposite directions, so NoC1's `(x, y)` is NoC0's
    /// `(width - 1 - x, height - 1 - y)` (the same rule on Blackhole and Wormhole).
    ///
    /// ```
    /// use komorebi_hal::{NocId, Xy};
    /// let p = Xy::new(1, 2).unwrap();
    /// assert_eq!(NocId::Noc1.noc0_of(p, (17, 12)), Xy::new(15, 9).ok());
    /// assert_eq!(NocId::Noc0.noc0_of(p, (17, 12)), Some(p));
    /// assert_eq!(NocId::Noc1.noc0_of(Xy::new(17, 0).unwrap(), (17, 12)), None);
    /// // No grid larger than the coordinate space (0..=63) has a NoC0 coordinate here.
    /// assert_eq!(NocId::Noc1.noc0_of(p, (100, 12)), None);
    /// ```
    pub const fn noc0_of(self, p: Xy, grid: (u8, u8)) -> Option<Xy> {
        let (w, h) = grid;
        // A grid wider or taller than the coordinate space would mirror past COORD_MAX.
        if p.x >= w || p.y >= h || w > COORD_MAX + 1 || h > COORD_MAX + 1 {
            return None;
        }
        Some(match self {
            Self::Noc0 => p,
            Self::Noc1 => Xy {
                x: w - 1 - p.x,
                y: h - 1 - p.y,
            },
        })
    }
}

/// A node's raw coordinates on one NoC.
///
/// Aligned to its size (`align(2)`), as [`Rect`] is (`align(4)`): the firmware copies and
/// compares them whole rather than a byte at a time, which its code space feels (about 290
/// bytes of the reader's and the writer's).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(align(2))]
pub struct Xy {
    x: u8,
    y: u8,
}

impl Xy {
    /// The node at `(x, y)`; both must be at most [`COORD_MAX`].
    pub const fn new(x: u8, y: u8) -> Result<Self, ValueError> {
        if x > COORD_MAX {
            return Err(ValueError::Coordinate { value: x });
        }
        if y > COORD_MAX {
            return Err(ValueError::Coordinate { value: y });
        }
        Ok(Self { x, y })
    }

    /// x.
    pub const fn x(self) -> u8 {
        self.x
    }

    /// y.
    pub const fn y(self) -> u8 {
        self.y
    }

    /// `(x, y)`.
    pub const fn get(self) -> (u8, u8) {
        (self.x, self.y)
    }
}

impl fmt::Display for Xy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// A multicast rectangle in the raw coordinates of the NoC that carries it: every node with
/// `start.x <= x <= end.x` and `start.y <= y <= end.y`, inclusive.
///
/// [`Rect::new`] refuses a start after its end. Hardware takes such corners as a rectangle that
/// wraps around the torus; that is almost always a coordinate-conversion bug, so it is only
/// built on purpose with [`Rect::wrapping`].
///
/// Aligned to its size (`align(4)`), for the firmware's code space (see [`Xy`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(align(4))]
pub struct Rect {
    start: Xy,
    end: Xy,
}

impl Rect {
    /// The rectangle `start..=end`; `start` must not lie after `end` on either axis.
    pub const fn new(start: Xy, end: Xy) -> Result<Self, ValueError> {
        if start.x > end.x {
            return Err(ValueError::Reversed {
                axis: 'x',
                start: start.x,
                end: end.x,
            });
        }
        if start.y > end.y {
            return Err(ValueError::Reversed {
                axis: 'y',
                start: start.y,
                end: end.y,
            });
        }
        Ok(Self { start, end })
    }

    /// The rectangle with corners `start` and `end` exactly as hardware reads them: on an axis
    /// where `start > end` it wraps around the torus and covers `v <= end || v >= start`.
    pub const fn wrapping(start: Xy, end: Xy) -> Self {
        Self { start, end }
    }

    /// The rectangle of one node.
    pub const fn single(node: Xy) -> Self {
        Self {
            start: node,
            end: node,
        }
    }

    /// Start corner.
    pub const fn start(self) -> Xy {
        self.start
    }

    /// End corner.
    pub const fn end(self) -> Xy {
        self.end
    }

    /// True when an axis wraps around the torus.
    pub const fn is_wrapping(self) -> bool {
        self.start.x > self.end.x || self.start.y > self.end.y
    }

    /// Whether `node` lies in the rectangle (torus wrap included).
    pub const fn contains(self, node: Xy) -> bool {
        self.spans_x(node.x) && self.spans_y(node.y)
    }

    /// Whether column `x` lies in the rectangle's x span (torus wrap included); for a backend
    /// that tests whole columns and rows apart, as multicast receivers form them.
    #[inline]
    pub const fn spans_x(self, x: u8) -> bool {
        span_contains(self.start.x, self.end.x, x)
    }

    /// Whether row `y` lies in the rectangle's y span (torus wrap included).
    #[inline]
    pub const fn spans_y(self, y: u8) -> bool {
        span_contains(self.start.y, self.end.y, y)
    }
}

/// Whether `v` lies on the span `start..=end` of one torus axis; `start > end` wraps past the
/// grid's edge and covers `v <= end || v >= start`, as the hardware reads reversed corners.
#[inline]
const fn span_contains(start: u8, end: u8, v: u8) -> bool {
    if start <= end {
        start <= v && v <= end
    } else {
        v >= start || v <= end
    }
}

impl fmt::Display for Rect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..={}", self.start, self.end)
    }
}

/// A byte address in a node's local L1 memory, word aligned.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct L1Addr(u32);

impl L1Addr {
    /// Address 0.
    pub const ZERO: Self = Self(0);

    /// The address `addr`; must be a multiple of [`L1_ADDR_ALIGN`].
    pub const fn new(addr: u32) -> Result<Self, ValueError> {
        if addr % L1_ADDR_ALIGN != 0 {
            return Err(ValueError::Misaligned { addr });
        }
        Ok(Self(addr))
    }

    /// The address.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// `self + bytes`, or `None` if the sum overflows or is not word aligned.
    pub const fn offset(self, bytes: u32) -> Option<Self> {
        match self.0.checked_add(bytes) {
            Some(a) if a % L1_ADDR_ALIGN == 0 => Some(Self(a)),
            _ => None,
        }
    }
}

impl fmt::Display for L1Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// An address on the NoC: a node and a local address in it (L1, DRAM, registers).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct NocAddr {
    node: Xy,
    local: u64,
}

impl NocAddr {
    /// `local` in `node`; `local` must fit [`LOCAL_ADDR_BITS`] bits.
    pub const fn new(node: Xy, local: u64) -> Result<Self, ValueError> {
        if local >> LOCAL_ADDR_BITS != 0 {
            return Err(ValueError::LocalAddress { addr: local });
        }
        Ok(Self { node, local })
    }

    /// The L1 address `addr` of `node`.
    pub const fn l1(node: Xy, addr: L1Addr) -> Self {
        Self {
            node,
            local: addr.0 as u64,
        }
    }

    /// The node.
    pub const fn node(self) -> Xy {
        self.node
    }

    /// The local address.
    pub const fn local(self) -> u64 {
        self.local
    }
}

impl fmt::Display for NocAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:#x}", self.node, self.local)
    }
}

/// A core's *logical* coordinates: column `x`, row `y` of the dense grid of a chip's usable
/// cores (see [`LogicalRect`]).
///
/// Logical coordinates are chip-neutral; they are not NoC coordinates ([`Xy`]). A backend or a
/// host layout maps them to the raw coordinates of its chip's NoCs.
///
/// ```
/// use komorebi_hal::{LogicalRect, LogicalXy};
/// let group = LogicalRect::new(2, 0, 3, 10);
/// assert!(group.contains_xy(LogicalXy::new(4, 9)));
/// assert!(!group.contains_xy(LogicalXy::from((5, 0))));
/// assert_eq!(<(u8, u8)>::from(LogicalXy::new(4, 9)), (4, 9));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LogicalXy {
    /// Logical column.
    pub x: u8,
    /// Logical row.
    pub y: u8,
}

impl LogicalXy {
    /// The core at logical column `x`, row `y`.
    pub const fn new(x: u8, y: u8) -> Self {
        Self { x, y }
    }
}

impl From<(u8, u8)> for LogicalXy {
    fn from((x, y): (u8, u8)) -> Self {
        Self { x, y }
    }
}

impl From<LogicalXy> for (u8, u8) {
    fn from(p: LogicalXy) -> Self {
        (p.x, p.y)
    }
}

impl fmt::Display for LogicalXy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.x, self.y)
    }
}

/// A rectangle of *logical* core coordinates: `columns` x `rows` cores from `(x0, y0)`.
///
/// Logical coordinates number a chip's usable cores densely from `(0, 0)`, skipping harvested
/// columns and rows, so the same rectangle means the same cores' shape on every part; a backend
/// or a host layout maps them to the NoC coordinates of its chip. Groups, broadcast rectangles
/// and command targets are all `LogicalRect`s.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LogicalRect {
    /// First logical column.
    pub x0: u8,
    /// First logical row.
    pub y0: u8,
    /// Columns.
    pub columns: u8,
    /// Rows.
    pub rows: u8,
}

impl LogicalRect {
    /// The rectangle `columns` x `rows` from `(x0, y0)`.
    pub const fn new(x0: u8, y0: u8, columns: u8, rows: u8) -> Self {
        Self {
            x0,
            y0,
            columns,
            rows,
        }
    }

    /// Packs the rectangle into one word (`x0 | y0 << 8 | columns << 16 | rows << 24`).
    pub const fn word(self) -> u32 {
        self.x0 as u32
            | (self.y0 as u32) << 8
            | (self.columns as u32) << 16
            | (self.rows as u32) << 24
    }

    /// Unpacks [`Self::word`].
    pub const fn from_word(w: u32) -> Self {
        Self {
            x0: w as u8,
            y0: (w >> 8) as u8,
            columns: (w >> 16) as u8,
            rows: (w >> 24) as u8,
        }
    }

    /// Whether logical `(x, y)` lies inside.
    pub const fn contains(self, x: u8, y: u8) -> bool {
        x >= self.x0
            && y >= self.y0
            && (x as u16) < self.x0 as u16 + self.columns as u16
            && (y as u16) < self.y0 as u16 + self.rows as u16
    }

    /// Whether the core at `p` lies inside ([`Self::contains`] on a [`LogicalXy`]).
    pub const fn contains_xy(self, p: LogicalXy) -> bool {
        self.contains(p.x, p.y)
    }

    /// Whether `other` lies entirely inside.
    pub const fn covers(self, other: LogicalRect) -> bool {
        other.x0 >= self.x0
            && other.y0 >= self.y0
            && other.x0 as u16 + other.columns as u16 <= self.x0 as u16 + self.columns as u16
            && other.y0 as u16 + other.rows as u16 <= self.y0 as u16 + self.rows as u16
    }

    /// Whether the two rectangles share a core.
    pub const fn overlaps(self, other: LogicalRect) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && (self.x0 as u16) < other.x0 as u16 + other.columns as u16
            && (other.x0 as u16) < self.x0 as u16 + self.columns as u16
            && (self.y0 as u16) < other.y0 as u16 + other.rows as u16
            && (other.y0 as u16) < self.y0 as u16 + self.rows as u16
    }

    /// Cores inside: columns x rows. A rectangle reaching past coordinate 255, which no grid
    /// has, counts places [`Self::contains`] does not (every caller bounds its rectangles by a
    /// grid first).
    pub const fn len(self) -> usize {
        self.columns as usize * self.rows as usize
    }

    /// True when there is no core inside.
    pub const fn is_empty(self) -> bool {
        self.columns == 0 || self.rows == 0
    }
}

impl core::fmt::Display for LogicalRect {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{},{},{},{}", self.x0, self.y0, self.columns, self.rows)
    }
}
