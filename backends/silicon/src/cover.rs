//! Which enabled Tensix tiles a multicast rectangle reaches, and the corners to write for it
//! (raw, or translated), for [`SiliconNoc`](crate::SiliconNoc)'s multicasts. Pure functions of
//! the chip, its harvest and translation, and the rectangle: a handle works them out once for
//! each rectangle it casts to and remembers them.

use komorebi_hal::{NocId, Rect};

use crate::chip::Chip;

/// The enabled Tensix tiles a rectangle covers: columns times rows, since a chip harvests
/// whole columns (Blackhole) or whole rows (Wormhole).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cover {
    /// The lowest and highest NoC0 column that is an enabled Tensix column inside the
    /// rectangle (`(255, 0)` when there is none).
    pub(crate) columns: (u8, u8),
    /// How many such columns.
    pub(crate) n_columns: u32,
    /// The same for rows.
    pub(crate) rows: (u8, u8),
    /// How many such rows.
    pub(crate) n_rows: u32,
}

impl Cover {
    /// The enabled Tensix tiles raw `rect` of NoC `noc` covers on a chip `C` with `harvest`
    /// (wrap included, as the hardware reads reversed corners). Tensix tiles form whole columns
    /// x whole rows, so each NoC0 axis is tested on its own, through the NoC1 mirror on NoC1.
    /// Tiles of other kinds inside the rectangle opt out of multicasts (the NIUs' `ROUTER_CFG`
    /// column and row masks, which the chip's firmware sets and ttsim sets at reset), so they
    /// are not receivers.
    pub(crate) fn of<C: Chip>(noc: NocId, harvest: C::Harvest, rect: Rect) -> Self {
        let mirrored = noc == NocId::Noc1;
        let own = |v0: u8, len: u8| if mirrored { len - 1 - v0 } else { v0 };
        let (w, h) = C::GRID;
        let mut c = Cover {
            columns: (u8::MAX, 0),
            n_columns: 0,
            rows: (u8::MAX, 0),
            n_rows: 0,
        };
        for &x0 in C::TENSIX_X {
            if rect.spans_x(own(x0, w)) && C::column_enabled(harvest, x0) {
                c.columns = (c.columns.0.min(x0), x0);
                c.n_columns += 1;
            }
        }
        for &y0 in C::TENSIX_Y {
            if rect.spans_y(own(y0, h)) && C::row_enabled(harvest, y0) {
                c.rows = (c.rows.0.min(y0), y0);
                c.n_rows += 1;
            }
        }
        c
    }

    /// The corners to write for a multicast of NoC `noc` over this cover of raw `rect`: `rect`
    /// as given without translation; under a translation (its [`Axes`]) the translated corners
    /// of the covered enabled columns and rows, which must reach exactly them: the Tensix
    /// columns (rows) whose translated x (y) lies between the corners must be the covered ones
    /// (`None` otherwise).
    /// Enabled columns and rows translate in order and harvested ones beyond them (Blackhole's
    /// columns to x 15/16, Wormhole's rows after the enabled ones), so a rectangle over enabled
    /// tiles stays one and a corner on a harvested tile is never written. NoC1 gets the corners
    /// swapped (start at the NoC0-order maximum), as the ISA and tt-metal prescribe.
    pub(crate) fn corners(
        self,
        noc: NocId,
        axes: Option<&Axes>,
        rect: Rect,
    ) -> Option<[(u8, u8); 2]> {
        let Some(axes) = axes else {
            let (s, e) = (rect.start(), rect.end());
            return Some([(s.x(), s.y()), (e.x(), e.y())]);
        };
        let (lo, hi) = (axes.x(self.columns.0)?, axes.x(self.columns.1)?);
        let (y_lo, y_hi) = (axes.y(self.rows.0)?, axes.y(self.rows.1)?);
        if Axes::between(&axes.x_rank, lo, hi) != self.n_columns
            || Axes::between(&axes.y_rank, y_lo, y_hi) != self.n_rows
        {
            return None;
        }
        Some(match noc {
            NocId::Noc0 => [(lo, y_lo), (hi, y_hi)],
            NocId::Noc1 => [(hi, y_hi), (lo, y_lo)],
        })
    }
}

/// Under a translation, the translated x of each Tensix column and y of each Tensix row (NoC0
/// coordinates, `NONE` for none), indexed by the raw coordinate: what [`Cover::corners`] looks
/// up for every Tensix column and row of a rectangle it learns. A handle's translation never
/// changes, so they are worked out once, when it is made: translating each column and row at
/// each rectangle learned cost a tile's first multicast of a command some 1,700 cycles on the
/// baby cores (2026-12-05).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Axes {
    x: [u8; 32],
    y: [u8; 32],
    /// How many Tensix columns translate to an x at or below each translated x: the columns
    /// between two translated x are a difference of two of these, not a count over them all.
    x_rank: [u8; 32],
    /// The same for the rows' translated y.
    y_rank: [u8; 32],
}

impl Axes {
    /// No translation for this coordinate.
    const NONE: u8 = 0xFF;

    /// The axes of translation `t` on chip `C`: a column's x as its tile in the first Tensix
    /// row translates, a row's y as its tile in the first Tensix column does.
    pub(crate) fn of<C: Chip>(t: &C::Translation) -> Self {
        let (y0, x0) = (C::TENSIX_Y[0], C::TENSIX_X[0]);
        let mut axes = Axes {
            x: [Self::NONE; 32],
            y: [Self::NONE; 32],
            x_rank: [0; 32],
            y_rank: [0; 32],
        };
        for &x in C::TENSIX_X {
            if let Some((tx, _)) = C::to_translated(t, x, y0) {
                axes.x[x as usize & 31] = tx;
                axes.x_rank[tx as usize & 31] += 1;
            }
        }
        for &y in C::TENSIX_Y {
            if let Some((_, ty)) = C::to_translated(t, x0, y) {
                axes.y[y as usize & 31] = ty;
                axes.y_rank[ty as usize & 31] += 1;
            }
        }
        // Counts at each coordinate, summed into counts at or below it.
        for rank in [&mut axes.x_rank, &mut axes.y_rank] {
            for i in 1..32 {
                rank[i] += rank[i - 1];
            }
        }
        axes
    }

    /// How many of the columns (rows) `rank` counts translate to `lo..=hi` (0 when `hi < lo`).
    fn between(rank: &[u8; 32], lo: u8, hi: u8) -> u32 {
        let below = match lo {
            0 => 0,
            lo => rank[(lo - 1) as usize & 31],
        };
        rank[hi as usize & 31].saturating_sub(below) as u32
    }

    /// The translated x of raw Tensix column `x` (`None`: not one, or not translated).
    fn x(&self, x: u8) -> Option<u8> {
        Some(self.x[x as usize & 31]).filter(|&t| t != Self::NONE)
    }

    /// The translated y of raw Tensix row `y` (`None`: not one, or not translated).
    fn y(&self, y: u8) -> Option<u8> {
        Some(self.y[y as usize & 31]).filter(|&t| t != Self::NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::{Blackhole, Wormhole};

    /// `Axes::between` counts what a count over every Tensix column (row) would: for every
    /// harvest mask a chip takes (up to two of its harvested lines, every pair) and every
    /// translated range, of both chips.
    fn counts_match<C: Chip>(words: impl Iterator<Item = u32>) {
        let mut masks = 0;
        for word in words {
            let Some(harvest) = C::harvest(word) else {
                continue;
            };
            masks += 1;
            let t = C::translation(harvest, None);
            let axes = Axes::of::<C>(&t);
            let (y0, x0) = (C::TENSIX_Y[0], C::TENSIX_X[0]);
            let tx = |x: u8| C::to_translated(&t, x, y0).map(|(tx, _)| tx);
            let ty = |y: u8| C::to_translated(&t, x0, y).map(|(_, ty)| ty);
            for lo in 0..32u8 {
                for hi in 0..32u8 {
                    let count = |set: &[u8], f: &dyn Fn(u8) -> Option<u8>| {
                        set.iter()
                            .filter(|&&v| f(v).is_some_and(|t| lo <= t && t <= hi))
                            .count() as u32
                    };
                    assert_eq!(
                        Axes::between(&axes.x_rank, lo, hi),
                        count(C::TENSIX_X, &tx),
                        "columns, harvest {word:#x}, {lo}..={hi}"
                    );
                    assert_eq!(
                        Axes::between(&axes.y_rank, lo, hi),
                        count(C::TENSIX_Y, &ty),
                        "rows, harvest {word:#x}, {lo}..={hi}"
                    );
                }
            }
            for &x in C::TENSIX_X {
                assert_eq!(axes.x(x), tx(x), "column {x}, harvest {word:#x}");
            }
            for &y in C::TENSIX_Y {
                assert_eq!(axes.y(y), ty(y), "row {y}, harvest {word:#x}");
            }
        }
        assert!(masks > 10, "only {masks} harvest masks taken");
    }

    #[test]
    fn a_range_counts_the_same_lines_as_a_count_over_all_of_them() {
        let pairs = || (0..14u32).flat_map(|a| (0..14u32).map(move |b| 1 << a | 1 << b));
        counts_match::<Blackhole>(core::iter::once(0).chain(pairs()));
        counts_match::<Wormhole>(core::iter::once(0).chain(pairs()));
    }
}
