//! Host side: which cores form which broadcasts, their multicast rectangles, and each core's
//! `BroadcastArgs` words. Pure functions, no I/O, no allocation (`heapless`), usable in `no_std`.
//!
//! Coordinates: *logical* `(column, row)` name cores of the dense Tensix grid; *NoC0* and *NoC1*
//! coordinates are raw coordinates of each NoC. A [`Geometry`] maps logical to NoC0 and knows the
//! NoC grid size, which gives NoC1 (`x1 = width - 1 - x0`, `y1 = height - 1 - y0`). The layout
//! is chip-neutral: a chip's facts (which columns and rows its harvest mask leaves, its grid,
//! its DRAM banks) come from its register crate through [`Geometry::new`] and
//! [`Geometry::with_fused_dram`], called by the host (`komorebi::chip`); this crate names no
//! chip. A geometry also carries the chip's fused DRAM bank, if it has one, so a plan made from
//! it reads from the working banks only; the layout itself does not use it.
//!
//! Rules these functions keep:
//! * A broadcast is a run of cores of one logical row inside one *panel* (a run of columns with
//!   consecutive NoC0 x), or of one logical column inside one run of rows with consecutive NoC0
//!   y (Blackhole's rows are one such run; Wormhole's split at its Ethernet row and at harvested
//!   rows), so its cores are consecutive on the NoC.
//! * Rank 0 (the sender) sits where the NoC's direction starts: NoC0 top of a column / left end
//!   of a row (multicast +y / +x), NoC1 bottom / right end (-y / -x in NoC0 terms, which is +y /
//!   +x in NoC1's own coordinates). Ranks count along the direction.
//! * The multicast rectangle covers exactly the receivers, in the chosen NoC's raw coordinates,
//!   start <= end.

use core::fmt;

use heapless::Vec as BoundedVec;
use komorebi_hal::{LogicalRect, NocId};

use crate::area::MAX_RECEIVERS;
use crate::args::{
    ARGS_WORDS, Along, ArgsError, BroadcastArgs, MAX_BUFFER_PAGES, MAX_WINDOW, RANK_NONE, RawXy,
};

/// Most logical columns or rows a geometry may have.
pub const MAX_LINES: usize = 16;
/// Most cores in one broadcast (a sender and 15 receivers).
pub const MAX_CORES: usize = MAX_RECEIVERS as usize + 1;
/// Most broadcasts of one rectangle, and most cores of one group.
pub const MAX_GROUP: usize = MAX_LINES * MAX_LINES;

/// What was wrong with a layout request, and what is allowed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutError {
    /// A harvest mask with bits the chip's masks do not have.
    HarvestMask {
        /// The mask given.
        mask: u32,
        /// The bits a mask of the chip may have.
        allowed: u32,
    },
    /// A geometry with no or too many columns or rows, coordinates outside the NoC grid, or
    /// NoC0 x / y not strictly ascending.
    Geometry,
    /// A rectangle with no columns or no rows.
    EmptyRect(LogicalRect),
    /// A rectangle reaching outside the logical grid.
    OutsideGrid {
        /// The rectangle.
        rect: LogicalRect,
        /// Logical columns of the grid.
        columns: u8,
        /// Logical rows of the grid.
        rows: u8,
    },
    /// A rectangle reaching outside the group.
    OutsideGroup {
        /// The rectangle.
        rect: LogicalRect,
        /// The group.
        group: LogicalRect,
    },
    /// A broadcast of no core, or of more than 16.
    TooManyCores(usize),
    /// A broadcast whose cores are not consecutive on the NoC (or not in one line).
    NotConsecutive,
    /// Broadcast words that would not decode (window, pages, id).
    Args(ArgsError),
    /// A fused DRAM bank the chip does not have.
    FusedDram {
        /// The bank given.
        bank: u8,
        /// The chip's banks.
        banks: u8,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::HarvestMask { mask, allowed } => {
                write!(
                    f,
                    "harvest mask {mask:#x} has bits outside {allowed:#x} (allowed: 0..={allowed:#x})"
                )
            }
            Self::Geometry => write!(
                f,
                "geometry needs 1..={MAX_LINES} columns and rows with strictly ascending NoC0 \
                 coordinates inside the NoC grid, and a grid of at most 64 x 64 nodes"
            ),
            Self::EmptyRect(r) => {
                write!(
                    f,
                    "rectangle {r} is empty (allowed: at least 1 column and 1 row)"
                )
            }
            Self::OutsideGrid {
                rect,
                columns,
                rows,
            } => write!(
                f,
                "rectangle {rect} reaches outside the {columns}x{rows} logical grid \
                 (allowed: x0 + columns <= {columns}, y0 + rows <= {rows})"
            ),
            Self::OutsideGroup { rect, group } => {
                write!(f, "rectangle {rect} reaches outside the group {group}")
            }
            Self::TooManyCores(n) => {
                write!(
                    f,
                    "a broadcast of {n} cores (allowed: 1..={MAX_CORES}, 15 receivers)"
                )
            }
            Self::NotConsecutive => {
                f.write_str("broadcast cores are not consecutive in one line of the NoC")
            }
            Self::Args(e) => write!(f, "{e}"),
            Self::FusedDram { bank, banks: 0 } => write!(
                f,
                "fused DRAM bank {bank} does not exist: the chip has no DRAM bank (allowed: none)"
            ),
            Self::FusedDram { bank, banks } => write!(
                f,
                "fused DRAM bank {bank} does not exist (allowed: 0..={}, or none)",
                banks - 1
            ),
        }
    }
}

impl core::error::Error for LayoutError {}

/// Logical -> NoC0 mapping and the NoC grid size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    noc0_x: BoundedVec<u8, MAX_LINES>,
    noc0_y: BoundedVec<u8, MAX_LINES>,
    grid: (u8, u8),
    fused_dram: Option<u8>,
}

impl Geometry {
    /// A geometry: NoC0 x of each logical column, NoC0 y of each logical row (both strictly
    /// ascending), inside a NoC grid of `grid` = (width, height); no DRAM bank fused.
    pub fn new(noc0_x: &[u8], noc0_y: &[u8], grid: (u8, u8)) -> Result<Self, LayoutError> {
        let ascending = |v: &[u8], limit: u8| {
            !v.is_empty() && v.windows(2).all(|w| w[0] < w[1]) && v.iter().all(|&c| c < limit)
        };
        // The HAL's coordinates are 0..=COORD_MAX: a larger grid's NoC1 mirror has none.
        let space = u16::from(komorebi_hal::types::COORD_MAX) + 1;
        if u16::from(grid.0) > space || u16::from(grid.1) > space {
            return Err(LayoutError::Geometry);
        }
        if !ascending(noc0_x, grid.0) || !ascending(noc0_y, grid.1) {
            return Err(LayoutError::Geometry);
        }
        Ok(Self {
            noc0_x: BoundedVec::from_slice(noc0_x).map_err(|_| LayoutError::Geometry)?,
            noc0_y: BoundedVec::from_slice(noc0_y).map_err(|_| LayoutError::Geometry)?,
            grid,
            fused_dram: None,
        })
    }

    /// The same geometry on a chip of `banks` DRAM banks whose bank `fused_dram` is fused off,
    /// or none; a bank the chip does not have is refused.
    pub fn with_fused_dram(self, fused_dram: Option<u8>, banks: u8) -> Result<Self, LayoutError> {
        match fused_dram {
            Some(bank) if bank >= banks => Err(LayoutError::FusedDram { bank, banks }),
            _ => Ok(Self { fused_dram, ..self }),
        }
    }

    /// The chip's fused DRAM bank, if it has one.
    pub fn fused_dram(&self) -> Option<u8> {
        self.fused_dram
    }

    /// The NoC grid, (width, height).
    pub fn grid(&self) -> (u8, u8) {
        self.grid
    }

    /// Logical columns.
    pub fn columns(&self) -> u8 {
        self.noc0_x.len() as u8
    }

    /// Logical rows.
    pub fn rows(&self) -> u8 {
        self.noc0_y.len() as u8
    }

    /// NoC0 x of each logical column.
    pub fn noc0_x(&self) -> &[u8] {
        &self.noc0_x
    }

    /// NoC0 y of each logical row.
    pub fn noc0_y(&self) -> &[u8] {
        &self.noc0_y
    }

    /// NoC0 coordinates of logical `(x, y)`.
    pub fn noc0(&self, core: RawXy) -> Option<RawXy> {
        Some((
            *self.noc0_x.get(core.0 as usize)?,
            *self.noc0_y.get(core.1 as usize)?,
        ))
    }

    /// Raw coordinates on `noc` of logical `(x, y)`.
    pub fn noc_xy(&self, core: RawXy, noc: NocId) -> Option<RawXy> {
        let p = self.noc0(core)?;
        Some(match noc {
            NocId::Noc0 => p,
            NocId::Noc1 => mirror(self.grid, p),
        })
    }

    /// The whole logical grid as a rectangle.
    pub fn full(&self) -> LogicalRect {
        LogicalRect::new(0, 0, self.columns(), self.rows())
    }

    fn check_inside(&self, rect: LogicalRect) -> Result<(), LayoutError> {
        if rect.is_empty() {
            return Err(LayoutError::EmptyRect(rect));
        }
        if !self.full().covers(rect) {
            return Err(LayoutError::OutsideGrid {
                rect,
                columns: self.columns(),
                rows: self.rows(),
            });
        }
        Ok(())
    }
}

/// NoC1 raw coordinates of NoC0 `p` on a `grid` = (width, height) torus: the two NoCs run in
/// opposite directions over the same routers, so each numbers them from the other's far corner.
///
/// This is the chip-neutral form of the rule, for a geometry of any grid size; it is not a
/// second copy of Blackhole's conversion (`blackhole_pac::grid::Noc0Xy::to_noc1`, the same
/// mirror fixed to 17 x 12), and the layout tests check the two agree on every Blackhole tile.
/// `p` lies inside `grid` ([`Geometry::new`] checks every coordinate).
const fn mirror(grid: (u8, u8), p: RawXy) -> RawXy {
    (grid.0 - 1 - p.0, grid.1 - 1 - p.1)
}

/// A run of logical columns with consecutive NoC0 x: row broadcasts never cross one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Panel {
    /// First logical column.
    pub first_column: u8,
    /// Columns.
    pub columns: u8,
}

/// The panels of a column mapping: maximal runs of logical columns whose NoC0 x are consecutive.
/// Only the first [`MAX_LINES`] columns are looked at (a [`Geometry`] has at most that many).
pub fn panels(noc0_x: &[u8]) -> BoundedVec<Panel, MAX_LINES> {
    runs(noc0_x)
        .iter()
        .map(|&(first_column, columns)| Panel {
            first_column,
            columns,
        })
        .collect()
}

/// Maximal runs of consecutive coordinates in `noc0` (ascending), as `(first index, length)`:
/// a column mapping's panels, or a row mapping's runs, which column broadcasts never cross.
fn runs(noc0: &[u8]) -> BoundedVec<(u8, u8), MAX_LINES> {
    let mut out: BoundedVec<(u8, u8), MAX_LINES> = BoundedVec::new();
    for (i, &c) in noc0.iter().enumerate().take(MAX_LINES) {
        let continues = i > 0 && noc0[i - 1].checked_add(1) == Some(c);
        match out.last_mut() {
            Some(run) if continues => run.1 += 1,
            // Capacity is MAX_LINES and at most MAX_LINES coordinates are taken.
            _ => {
                let _ = out.push((i as u8, 1));
            }
        }
    }
    out
}

/// One broadcast: its cores in rank order (rank 0 sends), as logical coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BroadcastCores {
    cores: BoundedVec<RawXy, MAX_CORES>,
}

impl BroadcastCores {
    /// A broadcast of `cores` in rank order; at most 16.
    pub fn new(cores: &[RawXy]) -> Result<Self, LayoutError> {
        if cores.is_empty() {
            return Err(LayoutError::TooManyCores(0));
        }
        Ok(Self {
            cores: BoundedVec::from_slice(cores)
                .map_err(|_| LayoutError::TooManyCores(cores.len()))?,
        })
    }

    /// Cores in rank order.
    pub fn cores(&self) -> &[RawXy] {
        &self.cores
    }

    /// The sender.
    pub fn sender(&self) -> RawXy {
        self.cores[0]
    }

    /// Receivers.
    pub fn receivers(&self) -> u8 {
        (self.cores.len() - 1) as u8
    }

    /// Rank of logical `core`, if it is in this broadcast.
    pub fn rank_of(&self, core: RawXy) -> Option<u8> {
        self.cores.iter().position(|&c| c == core).map(|r| r as u8)
    }
}

/// The broadcasts of `rect` along rows or columns, for `noc`: every core of the rectangle in
/// exactly one broadcast, cores in rank order.
pub fn broadcasts(
    geometry: &Geometry,
    rect: LogicalRect,
    along: Along,
    noc: NocId,
) -> Result<BoundedVec<BroadcastCores, MAX_GROUP>, LayoutError> {
    geometry.check_inside(rect)?;
    let mut out: BoundedVec<BroadcastCores, MAX_GROUP> = BoundedVec::new();
    let mut line: BoundedVec<RawXy, MAX_LINES> = BoundedVec::new();
    let mut emit = |line: &mut BoundedVec<RawXy, MAX_LINES>| -> Result<(), LayoutError> {
        if noc == NocId::Noc1 {
            line.reverse();
        }
        if line.len() > MAX_CORES {
            return Err(LayoutError::TooManyCores(line.len()));
        }
        let b = BroadcastCores::new(line)?;
        out.push(b)
            .map_err(|_| LayoutError::TooManyCores(MAX_GROUP + 1))?;
        line.clear();
        Ok(())
    };
    match along {
        Along::Column => {
            // Row panels: a chip whose Tensix rows have gaps (Wormhole's Ethernet row,
            // harvested rows) splits each column there, as row broadcasts split at column gaps.
            let row_runs = runs(geometry.noc0_y());
            for x in rect.x0..rect.x0 + rect.columns {
                for &(first, rows) in &row_runs {
                    let from = first.max(rect.y0);
                    let to = (first + rows).min(rect.y0 + rect.rows);
                    if from >= to {
                        continue;
                    }
                    for y in from..to {
                        let _ = line.push((x, y));
                    }
                    emit(&mut line)?;
                }
            }
        }
        Along::Row => {
            let panels = panels(geometry.noc0_x());
            for y in rect.y0..rect.y0 + rect.rows {
                for p in &panels {
                    let from = p.first_column.max(rect.x0);
                    let to = (p.first_column + p.columns).min(rect.x0 + rect.columns);
                    if from >= to {
                        continue;
                    }
                    for x in from..to {
                        let _ = line.push((x, y));
                    }
                    emit(&mut line)?;
                }
            }
        }
    }
    Ok(out)
}

/// The multicast corners `(start, end)` of a broadcast's receivers in `noc`'s raw coordinates,
/// start <= end; `None` for a broadcast without receivers. Refuses a broadcast whose cores
/// are not consecutive on the NoC, starting at the sender, in `noc`'s direction.
pub fn broadcast_rect(
    geometry: &Geometry,
    broadcast: &BroadcastCores,
    noc: NocId,
) -> Result<Option<(RawXy, RawXy)>, LayoutError> {
    let mut raw: BoundedVec<RawXy, MAX_CORES> = BoundedVec::new();
    for &c in broadcast.cores() {
        let p = geometry.noc_xy(c, noc).ok_or(LayoutError::OutsideGrid {
            rect: LogicalRect::new(c.0, c.1, 1, 1),
            columns: geometry.columns(),
            rows: geometry.rows(),
        })?;
        let _ = raw.push(p);
    }
    if raw.len() == 1 {
        return Ok(None);
    }
    // Each next rank is one step further along one fixed axis, in the NoC's + direction.
    let along_x = raw[1].0 != raw[0].0;
    let consecutive = raw.windows(2).all(|w| {
        if along_x {
            w[1].1 == w[0].1 && w[0].0.checked_add(1) == Some(w[1].0)
        } else {
            w[1].0 == w[0].0 && w[0].1.checked_add(1) == Some(w[1].1)
        }
    });
    if !consecutive {
        return Err(LayoutError::NotConsecutive);
    }
    Ok(Some((raw[1], raw[raw.len() - 1])))
}

/// The per-broadcast parameters of `broadcast_args`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BroadcastParams {
    /// Broadcast id, 0 or 1.
    pub broadcast: u8,
    /// Circular buffer index of the broadcast buffer.
    pub cb: u8,
    /// Window, 1..=8.
    pub window: u8,
    /// Pages per block; window * pages <= 65 535.
    pub pages: u16,
}

/// One core of a group and its 11 broadcast words.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CoreArgs {
    /// Logical coordinates.
    pub core: RawXy,
    /// The words.
    pub words: [u32; ARGS_WORDS],
}

/// The 11 words of `BroadcastArgs` for every core of `group` (row by row), for the broadcasts of
/// `rect` along `along` on `noc`; cores of the group outside `rect` get rank 0xFF.
pub fn broadcast_args(
    geometry: &Geometry,
    group: LogicalRect,
    rect: LogicalRect,
    along: Along,
    noc: NocId,
    params: BroadcastParams,
) -> Result<BoundedVec<CoreArgs, MAX_GROUP>, LayoutError> {
    geometry.check_inside(group)?;
    geometry.check_inside(rect)?;
    if !group.covers(rect) {
        return Err(LayoutError::OutsideGroup { rect, group });
    }
    if params.window == 0 || params.window > MAX_WINDOW {
        return Err(LayoutError::Args(ArgsError::Window(params.window)));
    }
    if params.pages == 0 {
        return Err(LayoutError::Args(ArgsError::Pages));
    }
    let buffer = params.window as u32 * params.pages as u32;
    if buffer > MAX_BUFFER_PAGES {
        return Err(LayoutError::Args(ArgsError::BufferTooLarge(buffer)));
    }
    if params.broadcast > 1 {
        return Err(LayoutError::Args(ArgsError::BroadcastId(params.broadcast)));
    }
    let all = broadcasts(geometry, rect, along, noc)?;
    let mut rects: BoundedVec<Option<(RawXy, RawXy)>, MAX_GROUP> = BoundedVec::new();
    for b in &all {
        let _ = rects.push(broadcast_rect(geometry, b, noc)?);
    }
    let mut out: BoundedVec<CoreArgs, MAX_GROUP> = BoundedVec::new();
    for y in group.y0..group.y0 + group.rows {
        for x in group.x0..group.x0 + group.columns {
            let mut args = BroadcastArgs {
                broadcast: params.broadcast,
                rank: RANK_NONE,
                receivers: 0,
                window: params.window,
                noc: noc as u8,
                cb: params.cb,
                pages: params.pages,
                core: (0, 0),
                sender: (0, 0),
                start: (0, 0),
                end: (0, 0),
                group,
                rect,
                along,
            };
            let found = all
                .iter()
                .zip(&rects)
                .find_map(|(b, r)| Some((b, r, b.rank_of((x, y))?)));
            if let Some((b, r, rank)) = found {
                let here = geometry.noc_xy((x, y), noc).ok_or(LayoutError::Geometry)?;
                let sender = geometry
                    .noc_xy(b.sender(), noc)
                    .ok_or(LayoutError::Geometry)?;
                let (start, end) = r.unwrap_or((sender, sender));
                args.rank = rank;
                args.receivers = b.receivers();
                args.core = here;
                args.sender = sender;
                args.start = start;
                args.end = end;
            }
            args.validate().map_err(LayoutError::Args)?;
            let _ = out.push(CoreArgs {
                core: (x, y),
                words: args.encode(),
            });
        }
    }
    Ok(out)
}
