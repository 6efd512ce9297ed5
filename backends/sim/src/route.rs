//! Dimension-order routing, as pure functions: which routers a packet passes. `link` times
//! packets along exactly these paths.
//!
//! Coordinates are raw coordinates of the NoC in use; both NoCs move only in the + direction of
//! their own coordinates (NoC0 right and down, NoC1 left and up in NoC0 terms) and wrap around
//! the torus. Unicast: NoC0 goes X first, then Y; NoC1 Y first, then X. Multicast trees are
//! X-major on NoC0 and Y-major on NoC1 ([`Grid::multicast_tree`], the one definition of a tree: `link`
//! times packets along it, and a host that bounds a program's link traffic counts its links).
//!
//! Every function is a [`Grid`]'s: the torus its chip's packets go round (Blackhole's 17 x 12,
//! Wormhole B0's 10 x 12).
//!
//! Leaf module: imports nothing of the crate.

use blackhole_pac::grid::forward_hops;

/// A chip's NoC grid: the torus packets go round, (width, height).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
}

/// A step out of a router: `+x` (0) or `+y` (1).
pub type Dir = usize;

impl Grid {
    /// Blackhole's 17 x 12 grid.
    pub const BLACKHOLE: Grid = Grid {
        width: blackhole_pac::grid::GRID_X,
        height: blackhole_pac::grid::GRID_Y,
    };
    /// Wormhole B0's 10 x 12 grid.
    pub const WORMHOLE: Grid = Grid {
        width: wormhole_pac::grid::GRID_X,
        height: wormhole_pac::grid::GRID_Y,
    };

    /// Raw coordinates on `noc` of NoC0 `(x, y)`, and back (the mapping is its own inverse:
    /// NoC1 numbers the grid from the opposite corner, `(width - 1 - x, height - 1 - y)`).
    /// Points outside the grid stay as they are.
    pub fn raw(self, noc: u8, p: (u8, u8)) -> (u8, u8) {
        if noc == 0 || p.0 >= self.width || p.1 >= self.height {
            p
        } else {
            (self.width - 1 - p.0, self.height - 1 - p.1)
        }
    }

    /// The next router from `p` in direction `dir`.
    pub fn step(self, p: (u8, u8), dir: Dir) -> (u8, u8) {
        // (In 16 bits, and a grid of no columns or rows taken as one: a point off the grid
        // steps onto it rather than overflow or divide by zero.)
        let next = |v: u8, len: u8| ((v as u16 + 1) % len.max(1) as u16) as u8;
        if dir == 0 {
            (next(p.0, self.width), p.1)
        } else {
            (p.0, next(p.1, self.height))
        }
    }

    /// The links a unicast from `from` to `to` on `noc` crosses: `(router, direction out of
    /// it)`.
    pub fn unicast_links(self, noc: u8, from: (u8, u8), to: (u8, u8)) -> Vec<((u8, u8), Dir)> {
        let order = if noc == 0 { [0, 1] } else { [1, 0] };
        let mut p = from;
        let mut out = Vec::new();
        for dir in order {
            let n = if dir == 0 {
                forward_hops(p.0, to.0, self.width)
            } else {
                forward_hops(p.1, to.1, self.height)
            };
            for _ in 0..n {
                out.push((p, dir));
                p = self.step(p, dir);
            }
        }
        out
    }

    /// The routers a unicast passes, from `from` to `to` inclusive.
    pub fn unicast_path(self, noc: u8, from: (u8, u8), to: (u8, u8)) -> Vec<(u8, u8)> {
        let mut path = vec![from];
        path.extend(
            self.unicast_links(noc, from, to)
                .into_iter()
                .map(|(p, d)| self.step(p, d)),
        );
        path
    }

    /// Router hops from `from` to `to` (either NoC: the hop count does not depend on the
    /// order).
    pub fn hops(self, from: (u8, u8), to: (u8, u8)) -> u64 {
        forward_hops(from.0, to.0, self.width) as u64
            + forward_hops(from.1, to.1, self.height) as u64
    }
}

/// One link of a multicast tree: the router it leaves, its direction out of that router, and
/// the tree's link before it (`None`: it leaves the source's router).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TreeLink {
    /// The router the link leaves (raw coordinates of the tree's NoC).
    pub from: (u8, u8),
    /// Its direction out of `from`.
    pub dir: Dir,
    /// Index in [`MulticastTree::links`] of the link before it; `None` at the source.
    pub parent: Option<u16>,
}

/// The links a multicast crosses, each once, every link after its parent, and where each
/// destination is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulticastTree {
    /// The links: the spine along the major axis first (from the source on), then the branches
    /// along the minor axis, one major position after another, each from the spine outwards.
    pub links: Vec<TreeLink>,
    /// Per destination (in the order given): the link at whose far router it is reached;
    /// `None`: at the source's router itself (loopback).
    pub dest_link: Vec<Option<u16>>,
}

impl Grid {
    /// The tree of a multicast from raw `from` to the raw `dests` on `noc`: NoC0 X-major, NoC1
    /// Y-major (along the major axis as far as the farthest destination, then a branch along the
    /// minor axis at each major position that has destinations, as far as its farthest one). A
    /// destination at `from` itself (loopback) is reached at the root.
    pub fn multicast_tree(self, noc: u8, from: (u8, u8), dests: &[(u8, u8)]) -> MulticastTree {
        let (major, minor): (Dir, Dir) = if noc == 0 { (0, 1) } else { (1, 0) };
        let coord = |p: (u8, u8), d: Dir| if d == 0 { p.0 } else { p.1 };
        let len = |d: Dir| if d == 0 { self.width } else { self.height };
        let step = |p, d| self.step(p, d);
        let along =
            |p: (u8, u8)| forward_hops(coord(from, major), coord(p, major), len(major)) as usize;
        let across =
            |p: (u8, u8)| forward_hops(coord(from, minor), coord(p, minor), len(minor)) as usize;
        let spine = dests.iter().map(|&d| along(d)).max().unwrap_or(0);
        let mut reach = vec![0usize; spine + 1];
        for &d in dests {
            let k = along(d);
            reach[k] = reach[k].max(across(d));
        }
        let mut links = Vec::with_capacity(spine + reach.iter().sum::<usize>());
        let mut p = from;
        for k in 0..spine {
            links.push(TreeLink {
                from: p,
                dir: major,
                parent: k.checked_sub(1).map(|k| k as u16),
            });
            p = step(p, major);
        }
        // branch_first[k]: index of the first branch link at major position k.
        let mut branch_first = vec![0u16; spine + 1];
        let mut q = from;
        for (k, &r) in reach.iter().enumerate() {
            let mut b = q;
            for j in 0..r {
                let parent = match (j, k) {
                    (0, 0) => None,
                    (0, _) => Some(k as u16 - 1),
                    _ => Some(links.len() as u16 - 1),
                };
                if j == 0 {
                    branch_first[k] = links.len() as u16;
                }
                links.push(TreeLink {
                    from: b,
                    dir: minor,
                    parent,
                });
                b = step(b, minor);
            }
            q = step(q, major);
        }
        let dest_link = dests
            .iter()
            .map(|&d| match (along(d), across(d)) {
                (0, 0) => None,
                (k, 0) => Some(k as u16 - 1),
                (k, j) => Some(branch_first[k] + j as u16 - 1),
            })
            .collect();
        MulticastTree { links, dest_link }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noc0_tree_runs_along_x_then_branches_down_at_each_column_with_destinations() {
        // From (1, 2) to (1, 2)..=(2, 3) and (4, 2): spine (1,2)->(2,2)->(3,2)->(4,2), branches
        // down at x = 1 and x = 2 only.
        let dests = [(2, 2), (1, 3), (2, 3), (4, 2), (1, 2)];
        let t = Grid::BLACKHOLE.multicast_tree(0, (1, 2), &dests);
        let links: Vec<((u8, u8), Dir, Option<u16>)> =
            t.links.iter().map(|l| (l.from, l.dir, l.parent)).collect();
        assert_eq!(
            links,
            vec![
                ((1, 2), 0, None),
                ((2, 2), 0, Some(0)),
                ((3, 2), 0, Some(1)),
                ((1, 2), 1, None),
                ((2, 2), 1, Some(0)),
            ]
        );
        assert_eq!(t.dest_link, vec![Some(0), Some(3), Some(4), Some(2), None]);
    }

    #[test]
    fn a_noc1_tree_runs_along_y_then_x_and_wraps_the_torus() {
        // NoC1 raw: from (3, 10) up to y = 11, wrapping to y = 0, then one branch along x.
        let t = Grid::BLACKHOLE.multicast_tree(1, (3, 10), &[(3, 0), (4, 0)]);
        let links: Vec<((u8, u8), Dir, Option<u16>)> =
            t.links.iter().map(|l| (l.from, l.dir, l.parent)).collect();
        assert_eq!(
            links,
            vec![
                ((3, 10), 1, None),
                ((3, 11), 1, Some(0)),
                ((3, 0), 0, Some(1))
            ]
        );
        assert_eq!(t.dest_link, vec![Some(1), Some(2)]);
    }
}
