//! The NoC links: one reservation per directed link and VC class, and the timing of a packet
//! hop by hop along the routes of `route` (unicast paths and multicast trees).
//!
//! Imports only leaf modules (`packet`, `report`, `route`).

use std::collections::HashMap;

use blackhole_pac::grid::{self, forward_hops as fwd};

use crate::packet::{Target, VC_CLASSES, Vc};
use crate::report::Stats;

const GX: u8 = grid::GRID_X;
const GY: u8 = grid::GRID_Y;

/// When each directed link of both NoCs is free, per VC class.
#[derive(Debug)]
pub(crate) struct Links {
    free: Vec<u64>,
    /// Cycles per router-to-router hop (`Timing::router_hop`).
    router_hop: u64,
}

impl Links {
    /// Every link idle; a hop costs `router_hop` cycles.
    pub(crate) fn new(router_hop: u64) -> Self {
        Self {
            free: vec![0; 2 * GX as usize * GY as usize * 2 * VC_CLASSES],
            router_hop,
        }
    }

    fn link(noc: u8, p: (u8, u8), dir: usize, class: Vc) -> usize {
        (((noc as usize * GY as usize + p.1 as usize) * GX as usize + p.0 as usize) * 2 + dir)
            * VC_CLASSES
            + class as usize
    }

    /// Moves a packet of `flits` over one link out of `p` in direction `dir`, from time `t`;
    /// returns when its head reaches the next router. Each VC class has its own reservation:
    /// routers interleave flits of different classes on a link, so a one-flit request does not
    /// wait behind a 257-flit response.
    #[allow(clippy::too_many_arguments)]
    fn hop(
        &mut self,
        noc: u8,
        p: (u8, u8),
        dir: usize,
        t: u64,
        flits: u64,
        class: Vc,
        stats: &mut Stats,
    ) -> u64 {
        let l = Self::link(noc, p, dir, class);
        let start = t.max(self.free[l]);
        self.free[l] = start + flits;
        stats.flit_hops += flits;
        start + self.router_hop
    }

    fn step(p: (u8, u8), dir: usize) -> (u8, u8) {
        crate::route::step(p, dir)
    }

    /// Head arrival at the router of `to` for a unicast from `from` leaving its router at `t`
    /// (NoC0: X then Y; NoC1: Y then X, in its own raw coordinates).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn route_unicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        to: (u8, u8),
        mut t: u64,
        flits: u64,
        class: Vc,
        stats: &mut Stats,
    ) -> u64 {
        for (p, dir) in crate::route::unicast_links(noc, from, to) {
            t = self.hop(noc, p, dir, t, flits, class, stats);
        }
        t
    }

    /// Head arrival times at the router of each destination of a multicast tree from `from`
    /// (NoC0 X-major, NoC1 Y-major), in the order of `dests`.
    pub(crate) fn route_multicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        dests: &[(Target, (u8, u8))],
        t0: u64,
        flits: u64,
        stats: &mut Stats,
    ) -> Vec<u64> {
        let (major, minor) = if noc == 0 { (0usize, 1usize) } else { (1, 0) };
        let coord = |p: (u8, u8), d: usize| if d == 0 { p.0 } else { p.1 };
        let len = |d: usize| if d == 0 { GX } else { GY };
        let major_max = dests
            .iter()
            .map(|&(_, p)| fwd(coord(from, major), coord(p, major), len(major)))
            .max()
            .unwrap_or(0);
        // Along the major axis from the sender.
        let mut spine = Vec::with_capacity(major_max as usize + 1);
        let (mut p, mut t) = (from, t0);
        spine.push(t);
        for _ in 0..major_max {
            t = self.hop(noc, p, major, t, flits, Vc::Multicast, stats);
            p = Self::step(p, major);
            spine.push(t);
        }
        // One branch along the minor axis per major position that has destinations.
        let mut branches: HashMap<u8, Vec<u64>> = HashMap::new();
        for k in 0..=major_max {
            let reach = dests
                .iter()
                .filter(|&&(_, d)| fwd(coord(from, major), coord(d, major), len(major)) == k)
                .map(|&(_, d)| fwd(coord(from, minor), coord(d, minor), len(minor)))
                .max();
            let Some(reach) = reach else { continue };
            let mut q = from;
            for _ in 0..k {
                q = Self::step(q, major);
            }
            let mut times = vec![spine[k as usize]];
            let mut tt = spine[k as usize];
            for _ in 0..reach {
                tt = self.hop(noc, q, minor, tt, flits, Vc::Multicast, stats);
                q = Self::step(q, minor);
                times.push(tt);
            }
            branches.insert(k, times);
        }
        dests
            .iter()
            .map(|&(_, d)| {
                let k = fwd(coord(from, major), coord(d, major), len(major));
                let j = fwd(coord(from, minor), coord(d, minor), len(minor));
                branches[&k][j as usize]
            })
            .collect()
    }
}
