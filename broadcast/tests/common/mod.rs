//! What the tests share: Blackhole's grids as the layout's chip-neutral geometry (the crate
//! names no chip; the host builds geometries the same way, `komorebi::chip`).

use blackhole_pac::grid::{GRID_X, GRID_Y};
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::layout::Geometry;

/// Blackhole's Tensix grid for a die-order harvest mask.
pub fn blackhole(mask: u32) -> Geometry {
    let columns = HarvestMask::new(mask).expect("a Blackhole mask").columns();
    Geometry::new(columns.noc0_x(), columns.noc0_y(), (GRID_X, GRID_Y)).expect("a geometry")
}

/// NoC0 x of each logical column of Blackhole for a die-order harvest mask.
#[allow(dead_code)] // not every test file lays out by columns
pub fn blackhole_noc0_x(mask: u32) -> Vec<u8> {
    blackhole(mask).noc0_x().to_vec()
}
