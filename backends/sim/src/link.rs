//! The NoC links and how packets cross them: routes as trees of hops, per-link per-class
//! arbitration in arrival order, wormhole (cut-through) forwarding, and the path reservation of
//! multicasts, held across a linked run.
//!
//! # The model, and its sources
//! * **Links.** Every router has one output link per axis and NoC (`+x`, `+y` in the NoC's own
//!   raw coordinates); a link carries one 64-byte flit per cycle and a head crosses a router in
//!   `Timing::router_hop` = 9 cycles (ISA `BlackholeA0/NoC/README.md`, "Performance": "Router to
//!   neighbouring router: one flit (512 bits) per cycle per axis, 9 cycles").
//! * **Arbitration as packets arrive.** A packet's head asks for each link when it reaches the
//!   router in front of it (one event per hop, in time order), not when the packet leaves its
//!   NIU, so a packet never waits behind one that arrives later. Requests of the same virtual
//!   channel class (unicast requests, multicast requests, responses: the ISA's VC class bits)
//!   wait for each other, first come first served; packets of different classes interleave
//!   flit by flit on the physical link (`BlackholeA0/NoC/RoutingPaths.md` of the
//!   `jasondavies/tt-isa-documentation` fork: "if the two packets have the same virtual circuit
//!   number, then one packet will wait for the other. Otherwise, the two packets will be
//!   interleaved onto the link"; the number there is the whole four-bit one, dateline, class and
//!   buddy bits, which the model takes at the granularity of the class). Interleaving is
//!   modelled by the link's flit budget: a packet that finds `b` flits of other classes still to
//!   cross gets round-robin turns, so its tail leaves `min(b, F)` cycles later than alone. The
//!   packets it interleaves with are not delayed, so where classes mix a link can carry a little
//!   more than one flit per cycle in total (never more than one of a class); the host's resource
//!   bound counts links per class for that reason (decisions D15).
//! * **Wormhole.** "NoC routers always operate in cut-through mode" (`RoutingPaths.md`, same fork):
//!   the head goes on as soon as it has a link, the flits follow one per cycle, and a packet holds
//!   its class on a link until its tail has crossed. A packet whose upstream tail is late (it
//!   waited further back, or shares a link) cannot leave its tail earlier downstream. Router
//!   buffers are taken to be deep enough that a packet blocked at one hop does not hold the links
//!   behind it: the sources read give no buffer depth (stated approximation).
//! * **Path reservation.** A multicast sets `NOC_CMD_PATH_RESERVE`: "all routers in the
//!   broadcast tree must inform the initiating tile that they're ready to receive the broadcast
//!   before any data can leave" (ISA README). The cost of that handshake is the NIU's (see
//!   `Timing::reserve_base`, `reserve_per_hop`); here the reservation claims the whole tree at
//!   once, so two runs never deadlock on each other's half trees.
//! * **Linked runs.** `NOC_CMD_VC_LINKED`: "all NoC routers along the path (or, for broadcast,
//!   the tree) taken by the request will not allow the chosen virtual channel numbers to be used
//!   by any other transactions until the last request in the transaction has finished passing
//!   through them" (ISA `MemoryMap.md`, `NOC_CTRL` bit 6). A linked packet marks its tree's
//!   links held by its run; the run's own packets pass, other multicasts wait at their
//!   reservation until the run's last packet (unlinked) has crossed each link.
//!
//! Acknowledgements are single flits whose latency is counted hop by hop by the world; they
//! take no link time here (they are one flit each on the response class).
//!
//! Imports only leaf modules (`memory` for its hasher, `packet`, `report`, `route`).

use std::collections::HashMap;
use std::rc::Rc;

use blackhole_pac::grid;

use crate::memory::FastHash;
use crate::packet::{Hold, VC_CLASSES, Vc};
use crate::report::Stats;

const GX: u8 = grid::GRID_X;
const GY: u8 = grid::GRID_Y;

/// "No hop": the source's own router, where a route starts.
pub(crate) const ROOT: u16 = u16::MAX;

/// One link a packet crosses and the hop before it (`ROOT`: it leaves the source's router).
#[derive(Copy, Clone, Debug)]
struct Hop {
    link: u32,
    parent: u16,
}

/// The part of a route that depends only on its path: its hops, each hop's children and the
/// destinations reached at each. Built once per path and shared by every packet that takes it
/// ([`Links`] keeps them).
#[derive(Debug)]
struct Shape {
    hops: Vec<Hop>,
    /// Children of each hop, the root's last: `kids[kid_at[h]..kid_at[h + 1]]`.
    kid_at: Vec<u32>,
    kids: Vec<u16>,
    /// Destinations reached at the far router of each hop, the root's last (indices into the
    /// destination list the route was built for).
    dest_at: Vec<u32>,
    dests: Vec<u16>,
}

impl Shape {
    fn build(hops: Vec<Hop>, dest_hop: &[u16]) -> Self {
        let n = hops.len();
        let slot = |h: u16| if h == ROOT { n } else { h as usize };
        let csr = |parents: &mut dyn Iterator<Item = usize>, count: usize| {
            let mut at = vec![0u32; n + 2];
            let list: Vec<usize> = parents.collect();
            for &p in &list {
                at[p + 1] += 1;
            }
            for i in 1..at.len() {
                at[i] += at[i - 1];
            }
            let mut fill = at.clone();
            let mut out = vec![0u16; count];
            for (i, &p) in list.iter().enumerate() {
                out[fill[p] as usize] = i as u16;
                fill[p] += 1;
            }
            (at, out)
        };
        let (kid_at, kids) = csr(&mut hops.iter().map(|h| slot(h.parent)), n);
        let (dest_at, dests) = csr(&mut dest_hop.iter().map(|&h| slot(h)), dest_hop.len());
        Self {
            hops,
            kid_at,
            kids,
            dest_at,
            dests,
        }
    }
}

/// A packet's way through the NoC: a chain of hops (unicast) or a tree (multicast), each hop
/// after its parent, with what the packet has done so far.
#[derive(Debug)]
pub(crate) struct Route {
    /// Flits of the packet, header included.
    pub flits: u64,
    class: Vc,
    /// How a multicast holds its links.
    pub hold: Hold,
    shape: Rc<Shape>,
    /// When the tail entered each hop's link, once it has.
    tail: Vec<u64>,
    /// When the tail left the source's NIU.
    pub tail0: u64,
}

impl Route {
    fn new(flits: u64, class: Vc, hold: Hold, shape: Rc<Shape>) -> Self {
        Self {
            flits,
            class,
            hold,
            tail: vec![0; shape.hops.len()],
            shape,
            tail0: 0,
        }
    }

    fn slot(&self, hop: u16) -> usize {
        if hop == ROOT {
            self.shape.hops.len()
        } else {
            hop as usize
        }
    }

    /// The hops that follow `hop` (`ROOT`: those leaving the source's router).
    pub(crate) fn kids(&self, hop: u16) -> &[u16] {
        let (s, shape) = (self.slot(hop), &*self.shape);
        &shape.kids[shape.kid_at[s] as usize..shape.kid_at[s + 1] as usize]
    }

    /// The destinations reached at the far router of `hop` (`ROOT`: at the source's router).
    pub(crate) fn dests(&self, hop: u16) -> &[u16] {
        let (s, shape) = (self.slot(hop), &*self.shape);
        &shape.dests[shape.dest_at[s] as usize..shape.dest_at[s + 1] as usize]
    }

    /// How many hops the route has.
    pub(crate) fn len(&self) -> usize {
        self.shape.hops.len()
    }
}

fn link_of(noc: u8, p: (u8, u8), dir: usize) -> u32 {
    (((noc as u32 * GY as u32 + p.1 as u32) * GX as u32 + p.0 as u32) * 2) + dir as u32
}

const LINKS: usize = 2 * GX as usize * GY as usize * 2;

/// The shape of the unicast from raw `from` to raw `to` on `noc`.
fn unicast_shape(grid: crate::route::Grid, noc: u8, from: (u8, u8), to: (u8, u8)) -> Shape {
    let hops: Vec<Hop> = grid
        .unicast_links(noc, from, to)
        .into_iter()
        .enumerate()
        .map(|(i, (p, dir))| Hop {
            link: link_of(noc, p, dir),
            parent: if i == 0 { ROOT } else { i as u16 - 1 },
        })
        .collect();
    let last = if hops.is_empty() {
        ROOT
    } else {
        hops.len() as u16 - 1
    };
    Shape::build(hops, &[last])
}

/// The shape of the multicast tree from raw `from` to the raw `dests` on `noc`.
fn multicast_shape(grid: crate::route::Grid, noc: u8, from: (u8, u8), dests: &[(u8, u8)]) -> Shape {
    let tree = grid.multicast_tree(noc, from, dests);
    let hops: Vec<Hop> = tree
        .links
        .iter()
        .map(|l| Hop {
            link: link_of(noc, l.from, l.dir),
            parent: l.parent.unwrap_or(ROOT),
        })
        .collect();
    let dest_hop: Vec<u16> = tree.dest_link.iter().map(|d| d.unwrap_or(ROOT)).collect();
    Shape::build(hops, &dest_hop)
}

/// What entering a link gave: when the head and the tail reach the next router.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Crossed {
    pub head: u64,
    pub tail: u64,
}

/// Every directed link of both NoCs: per class when it is free, its flit budget, and what holds
/// it for a linked run.
#[derive(Debug)]
pub(crate) struct Links {
    /// Per link and class: the cycle after the last packet's tail.
    class_free: Vec<u64>,
    /// Per link: the cycle by which every flit given to it so far has crossed.
    flits_free: Vec<u64>,
    /// Per link: the linked run holding its multicast class (0: none).
    held: Vec<u32>,
    /// Per link: packets (world ids) waiting for the run holding it to end.
    waiting: Vec<Vec<u32>>,
    /// Cycles per router-to-router hop (`Timing::router_hop`).
    router_hop: u64,
    /// The chip's grid (its torus routes packets; its links index into Blackhole's tables,
    /// which every chip's grid fits).
    grid: crate::route::Grid,
    /// The shapes of the unicast paths met so far, by `(noc, from, to)`.
    unicasts: HashMap<UnicastKey, Rc<Shape>, FastHash>,
    /// The shapes of the multicast trees met so far, by NoC, source and destinations as bytes
    /// ([`multicast_key`]); emptied when it reaches [`MULTICAST_SHAPES`] entries.
    multicasts: HashMap<Box<[u8]>, Rc<Shape>, FastHash>,
    /// The key being looked up, kept to look up without allocating.
    key: Vec<u8>,
}

/// A unicast path: `(noc, from, to)`.
type UnicastKey = (u8, (u8, u8), (u8, u8));

/// At most this many multicast shapes are kept: a program has few destination sets, but a long
/// run of random ones (a fuzzer's) must not grow the map without bound.
const MULTICAST_SHAPES: usize = 4096;

/// Writes the key of the multicast tree of `dests` from `from` on `noc` into `key`.
fn multicast_key(key: &mut Vec<u8>, noc: u8, from: (u8, u8), dests: &[(u8, u8)]) {
    key.clear();
    key.extend_from_slice(&[noc, from.0, from.1]);
    for &(x, y) in dests {
        key.extend_from_slice(&[x, y]);
    }
}

impl Links {
    /// Every link of `grid` idle; a hop costs `router_hop` cycles.
    pub(crate) fn new(router_hop: u64, grid: crate::route::Grid) -> Self {
        Self {
            grid,
            class_free: vec![0; LINKS * VC_CLASSES],
            flits_free: vec![0; LINKS],
            held: vec![0; LINKS],
            waiting: vec![Vec::new(); LINKS],
            router_hop,
            unicasts: HashMap::default(),
            multicasts: HashMap::default(),
            key: Vec::new(),
        }
    }

    /// The route of a unicast from raw `from` to raw `to` on `noc` (NoC0: X then Y; NoC1: Y
    /// then X, in its own raw coordinates).
    pub(crate) fn unicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        to: (u8, u8),
        flits: u64,
        class: Vc,
    ) -> Route {
        let shape = self
            .unicasts
            .entry((noc, from, to))
            .or_insert_with(|| Rc::new(unicast_shape(self.grid, noc, from, to)));
        Route::new(flits, class, Hold::Free, Rc::clone(shape))
    }

    /// The tree of a multicast from raw `from` to the raw `dests`, as
    /// [`crate::route::Grid::multicast_tree`] defines it (NoC0 X-major, NoC1 Y-major). A destination
    /// at `from` itself (loopback) is reached at the root.
    pub(crate) fn multicast(
        &mut self,
        noc: u8,
        from: (u8, u8),
        dests: &[(u8, u8)],
        flits: u64,
        hold: Hold,
    ) -> Route {
        multicast_key(&mut self.key, noc, from, dests);
        let shape = match self.multicasts.get(self.key.as_slice()) {
            Some(shape) => Rc::clone(shape),
            None => {
                if self.multicasts.len() >= MULTICAST_SHAPES {
                    self.multicasts.clear();
                }
                let shape = Rc::new(multicast_shape(self.grid, noc, from, dests));
                let key = self.key.as_slice().into();
                self.multicasts.insert(key, Rc::clone(&shape));
                shape
            }
        };
        Route::new(flits, Vc::Multicast, hold, shape)
    }

    /// The path reservation of a multicast: `Err(link)` when a link of its tree is held by
    /// another run (wait for it with [`Links::wait`]); otherwise the tree is the packet's, and a
    /// linked packet marks it held by its run.
    pub(crate) fn reserve(&mut self, route: &Route) -> Result<(), u32> {
        let run = match route.hold {
            Hold::Free => 0,
            Hold::Keep(n) | Hold::Release(n) => n,
        };
        if let Some(h) = route
            .shape
            .hops
            .iter()
            .find(|h| self.held[h.link as usize] != 0 && self.held[h.link as usize] != run)
        {
            return Err(h.link);
        }
        if let Hold::Keep(n) = route.hold {
            for h in &route.shape.hops {
                self.held[h.link as usize] = n;
            }
        }
        Ok(())
    }

    /// Queues packet `id` until the run holding `link` releases it.
    pub(crate) fn wait(&mut self, link: u32, id: u32) {
        self.waiting[link as usize].push(id);
    }

    /// The head of `route` reaches the router in front of `hop` at `t`: it takes the link when
    /// its class there is free, its tail follows the upstream tail and shares the link with
    /// other classes. Returns when head and tail reach the next router; packets released from
    /// waiting (the run's last packet has crossed) go to `woken`, free from the returned tail.
    pub(crate) fn enter(
        &mut self,
        route: &mut Route,
        hop: u16,
        t: u64,
        stats: &mut Stats,
        woken: &mut Vec<u32>,
    ) -> Crossed {
        let h = route.shape.hops[hop as usize];
        let link = h.link as usize;
        let flits = route.flits;
        let tail_in = if h.parent == ROOT {
            route.tail0
        } else {
            route.tail[h.parent as usize] + self.router_hop
        };
        let class = link * VC_CLASSES + route.class as usize;
        let start = t.max(self.class_free[class]);
        let others = self.flits_free[link].saturating_sub(start);
        let tail = (start + flits - 1 + others.min(flits)).max(tail_in);
        self.flits_free[link] = self.flits_free[link].max(start) + flits;
        self.class_free[class] = tail + 1;
        route.tail[hop as usize] = tail;
        stats.flit_hops += flits;
        if let Hold::Release(n) = route.hold {
            if self.held[link] == n {
                self.held[link] = 0;
                woken.append(&mut self.waiting[link]);
            }
        }
        Crossed {
            head: start + self.router_hop,
            tail: tail + self.router_hop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(links: &mut Links, route: &mut Route, t0: u64) -> Vec<(u64, u64)> {
        let mut out = vec![(0, 0); route.len()];
        let mut stats = Stats::default();
        let mut woken = Vec::new();
        let mut todo: Vec<(u16, u64)> = route.kids(ROOT).iter().map(|&k| (k, t0)).collect();
        while let Some((h, t)) = todo.pop() {
            let c = links.enter(route, h, t, &mut stats, &mut woken);
            out[h as usize] = (c.head, c.tail);
            todo.extend(route.kids(h).iter().map(|&k| (k, c.head)));
        }
        out
    }

    #[test]
    fn a_unicast_chain_crosses_one_link_per_hop_head_9_cycles_apart() {
        let mut links = Links::new(9, crate::route::Grid::BLACKHOLE);
        // NoC0 (1, 2) -> (3, 3): two hops along x, one along y.
        let mut r = links.unicast(0, (1, 2), (3, 3), 5, Vc::Unicast);
        assert_eq!(r.len(), 3);
        assert_eq!(r.dests(2), &[0]);
        r.tail0 = 100 + 4;
        let t = times(&mut links, &mut r, 100);
        assert_eq!(t, vec![(109, 113), (118, 122), (127, 131)]);
    }

    #[test]
    fn a_second_packet_of_the_same_class_waits_for_the_first_tail_another_class_interleaves() {
        let mut links = Links::new(9, crate::route::Grid::BLACKHOLE);
        let mut stats = Stats::default();
        let mut w = Vec::new();
        let mut a = links.unicast(0, (1, 2), (2, 2), 257, Vc::Unicast);
        a.tail0 = 256;
        let ca = links.enter(&mut a, 0, 0, &mut stats, &mut w);
        assert_eq!((ca.head, ca.tail), (9, 265));
        let mut b = links.unicast(0, (1, 2), (2, 2), 2, Vc::Unicast);
        b.tail0 = 11;
        let cb = links.enter(&mut b, 0, 10, &mut stats, &mut w);
        assert_eq!(cb.head, 257 + 9, "same class: after the first tail");
        let mut c = links.unicast(0, (1, 2), (2, 2), 2, Vc::Response);
        c.tail0 = 11;
        let cc = links.enter(&mut c, 0, 10, &mut stats, &mut w);
        assert_eq!(cc.head, 19, "another class goes at once");
        assert_eq!(
            cc.tail,
            10 + 1 + 2 + 9,
            "two flits interleaved with the busy link"
        );
    }

    #[test]
    fn a_multicast_tree_reaches_each_destination_at_its_own_hop_and_the_sender_at_the_root() {
        // NoC0 from (1, 2) to the 2 x 2 square (1, 2) ..= (2, 3), sender included.
        let dests = [(1, 2), (2, 2), (1, 3), (2, 3)];
        let mut links = Links::new(9, crate::route::Grid::BLACKHOLE);
        let r = links.multicast(0, (1, 2), &dests, 2, Hold::Free);
        // Spine: one hop along x; branches: one hop down at x = 1 and at x = 2.
        assert_eq!(r.len(), 3);
        assert_eq!(r.dests(ROOT), &[0]);
        assert_eq!(
            r.kids(ROOT).len(),
            2,
            "the spine and the branch at the sender"
        );
        let at = |d: u16| (0..3).find(|&h| r.dests(h).contains(&d)).unwrap();
        assert_eq!(r.kids(at(1)), &[at(3)], "(2, 3) hangs below (2, 2)");
    }

    #[test]
    fn a_linked_run_holds_its_tree_until_its_last_packet_crosses() {
        let mut links = Links::new(9, crate::route::Grid::BLACKHOLE);
        let mut stats = Stats::default();
        let mut woken = Vec::new();
        let dests = [(1, 3), (1, 4)];
        let first = links.multicast(0, (1, 2), &dests, 2, Hold::Keep(7));
        assert_eq!(links.reserve(&first), Ok(()));
        let other = links.multicast(0, (1, 1), &[(1, 3)], 2, Hold::Free);
        let blocked = links.reserve(&other).unwrap_err();
        links.wait(blocked, 42);
        let mut last = links.multicast(0, (1, 2), &dests, 2, Hold::Release(7));
        assert_eq!(links.reserve(&last), Ok(()), "the run's own packets pass");
        last.tail0 = 51;
        links.enter(&mut last, 0, 50, &mut stats, &mut woken);
        assert_eq!(woken, vec![42]);
        assert_eq!(links.reserve(&other), Ok(()));
    }
}
