//! Dimension-order routing, as pure functions: which routers a packet passes. `link` times
//! packets along exactly these paths.
//!
//! Coordinates are raw coordinates of the NoC in use; both NoCs move only in the + direction of
//! their own coordinates (NoC0 right and down, NoC1 left and up in NoC0 terms) and wrap around
//! the torus. Unicast: NoC0 goes X first, then Y; NoC1 Y first, then X. Multicast trees are
//! X-major on NoC0 and Y-major on NoC1.
//!
//! Leaf module: imports nothing of the crate.

use blackhole_pac::grid::{GRID_X, GRID_Y, forward_hops};

/// Raw coordinates on `noc` of NoC0 `(x, y)`, and back (the mapping is its own inverse: NoC1
/// numbers the grid from the opposite corner; `blackhole-pac` holds the rule). Points outside
/// the grid stay as they are.
pub fn raw(noc: u8, p: (u8, u8)) -> (u8, u8) {
    if noc == 0 {
        p
    } else {
        blackhole_pac::grid::noc0_to_noc1(p.0, p.1).unwrap_or(p)
    }
}

/// A step out of a router: `+x` (0) or `+y` (1).
pub type Dir = usize;

/// The next router from `p` in direction `dir`.
pub fn step(p: (u8, u8), dir: Dir) -> (u8, u8) {
    if dir == 0 {
        ((p.0 + 1) % GRID_X, p.1)
    } else {
        (p.0, (p.1 + 1) % GRID_Y)
    }
}

/// The links a unicast from `from` to `to` on `noc` crosses: `(router, direction out of it)`.
pub fn unicast_links(noc: u8, from: (u8, u8), to: (u8, u8)) -> Vec<((u8, u8), Dir)> {
    let order = if noc == 0 { [0, 1] } else { [1, 0] };
    let mut p = from;
    let mut out = Vec::new();
    for dir in order {
        let n = if dir == 0 {
            forward_hops(p.0, to.0, GRID_X)
        } else {
            forward_hops(p.1, to.1, GRID_Y)
        };
        for _ in 0..n {
            out.push((p, dir));
            p = step(p, dir);
        }
    }
    out
}

/// The routers a unicast passes, from `from` to `to` inclusive.
pub fn unicast_path(noc: u8, from: (u8, u8), to: (u8, u8)) -> Vec<(u8, u8)> {
    let mut path = vec![from];
    path.extend(
        unicast_links(noc, from, to)
            .into_iter()
            .map(|(p, d)| step(p, d)),
    );
    path
}

/// Router hops from `from` to `to` (either NoC: the hop count does not depend on the order).
pub fn hops(from: (u8, u8), to: (u8, u8)) -> u64 {
    forward_hops(from.0, to.0, GRID_X) as u64 + forward_hops(from.1, to.1, GRID_Y) as u64
}
