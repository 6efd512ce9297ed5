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
    /// as given without translation; under `translation` the translated corners of the covered
    /// enabled columns and rows, which must reach exactly them: the Tensix columns (rows) whose
    /// translated x (y) lies between the corners must be the covered ones (`None` otherwise).
    /// Enabled columns and rows translate in order and harvested ones beyond them (Blackhole's
    /// columns to x 15/16, Wormhole's rows after the enabled ones), so a rectangle over enabled
    /// tiles stays one and a corner on a harvested tile is never written. NoC1 gets the corners
    /// swapped (start at the NoC0-order maximum), as the ISA and tt-metal prescribe.
    pub(crate) fn corners<C: Chip>(
        self,
        noc: NocId,
        translation: Option<&C::Translation>,
        rect: Rect,
    ) -> Option<[(u8, u8); 2]> {
        let Some(t) = translation else {
            let (s, e) = (rect.start(), rect.end());
            return Some([(s.x(), s.y()), (e.x(), e.y())]);
        };
        let (y0, x0) = (C::TENSIX_Y[0], C::TENSIX_X[0]);
        let tx = |x: u8| C::to_translated(t, x, y0).map(|(tx, _)| tx);
        let ty = |y: u8| C::to_translated(t, x0, y).map(|(_, ty)| ty);
        let (lo, hi) = (tx(self.columns.0)?, tx(self.columns.1)?);
        let (y_lo, y_hi) = (ty(self.rows.0)?, ty(self.rows.1)?);
        let between = |set: &[u8], f: &dyn Fn(u8) -> Option<u8>, lo: u8, hi: u8| {
            set.iter()
                .filter(|&&v| f(v).is_some_and(|t| lo <= t && t <= hi))
                .count() as u32
        };
        if between(C::TENSIX_X, &tx, lo, hi) != self.n_columns
            || between(C::TENSIX_Y, &ty, y_lo, y_hi) != self.n_rows
        {
            return None;
        }
        Some(match noc {
            NocId::Noc0 => [(lo, y_lo), (hi, y_hi)],
            NocId::Noc1 => [(hi, y_hi), (lo, y_lo)],
        })
    }
}
