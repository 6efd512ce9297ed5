//! The work a job gives each resource of the chip, as the resource bound (`bound`) and the DRAM
//! placement (`placement`) count it: the resources, their loads, and the bound they come to.
//!
//! Leaf module of `app::broadcast`: the bound and the placement both price work here, and
//! neither imports the other.

use std::collections::BTreeMap;
use std::fmt;

use blackhole_pac::grid::{DRAM_BANKS, GRID_X, GRID_Y};

use crate::chip::DramSet;
use komorebi_hal::LogicalXy;
use komorebi_sim::Timing;
use komorebi_sim::route::{Dir, Grid};

// Links and banks are indexed over the widest chip's grid and bank count (Blackhole's 17 x 12
// and 8), which hold a Wormhole's (10 x 12 and 6).
const _: () = assert!(
    wormhole_pac::grid::GRID_X <= GRID_X
        && wormhole_pac::grid::GRID_Y <= GRID_Y
        && wormhole_pac::grid::DRAM_BANKS <= DRAM_BANKS
);

/// One resource of the chip, as the bound counts it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// One DRAM bank.
    DramBank(u8),
    /// All working DRAM banks together: how many (8, or 7 with a fused bank).
    Dram(u8),
    /// A directed link of a NoC: from router `from` to its neighbour `to`, raw coordinates of
    /// that NoC.
    Link {
        /// The NoC (0 or 1).
        noc: u8,
        /// The router the link leaves.
        from: (u8, u8),
        /// The router it reaches.
        to: (u8, u8),
    },
    /// One issue pipeline of the NIU of `noc` of a core (the reader's for NoC0, the writer's
    /// for NoC1).
    Niu {
        /// The NoC (0 or 1).
        noc: u8,
        /// The core, logical.
        core: LogicalXy,
        /// Which pipeline: reads and writes are issued from different command buffers.
        pipe: NiuPipe,
    },
    /// The ejection port of `noc` of a core.
    Eject {
        /// The NoC (0 or 1).
        noc: u8,
        /// The core, logical.
        core: LogicalXy,
    },
    /// A core's compute kernel (its checking of the words it reads).
    Compute(LogicalXy),
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::DramBank(b) => write!(f, "DRAM bank {b}"),
            Self::Dram(banks) => write!(f, "DRAM ({banks} banks together)"),
            Self::Link { noc, from, to } => write!(
                f,
                "link NoC{noc} ({},{})->({},{})",
                from.0, from.1, to.0, to.1
            ),
            Self::Niu { noc, core, pipe } => write!(f, "NIU{noc} {pipe} of {core}"),
            Self::Eject { noc, core } => write!(f, "ejection port NoC{noc} of {core}"),
            Self::Compute(core) => write!(f, "compute {core}"),
        }
    }
}

/// An NIU's issue pipelines: the command buffer reads leave from and the one writes
/// (multicasts and markers) leave from. Each takes one command at a time; the two do not wait
/// for each other.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NiuPipe {
    /// The read command buffer.
    Reads,
    /// The write command buffer.
    Writes,
}

impl fmt::Display for NiuPipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Reads => "reads",
            Self::Writes => "writes",
        })
    }
}

/// The bound of one job: its cycles and the resource that needs them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct JobBound {
    /// The least cycles the busiest resource needs for one job.
    pub cycles: u64,
    /// That resource (the first in [`Resource`]'s order among equals).
    pub binding: Resource,
}

/// Directed links of one NoC: 17 x 12 routers (Blackhole's; a Wormhole's 10 x 12 use the
/// first 10 of each row), two directions out of each.
const LINKS_PER_NOC: usize = GRID_X as usize * GRID_Y as usize * 2;

/// A directed link's index in [`Load::link_flits`].
pub(super) fn link_index(noc: u8, from: (u8, u8), dir: Dir) -> usize {
    ((noc as usize * GRID_Y as usize + from.1 as usize) * GRID_X as usize + from.0 as usize) * 2
        + dir
}

/// The virtual-channel classes a link arbitrates apart, as the simulator's link model has them
/// (`komorebi_sim`'s `link.rs`, from the ISA's VC class bits).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum LinkClass {
    /// Unicast requests: read requests, DONE markers, ready words.
    Unicast = 0,
    /// Multicast requests: data, VALID words, flags.
    Multicast = 1,
    /// Responses: read data.
    Response = 2,
}

/// Work per resource: cycles, or bytes for the DRAM banks, or flits for the links (kept
/// dense: the DRAM placement prices every candidate against them).
///
/// Links are counted twice: all flits together (`link_flits`, the chip's rate of one flit a
/// cycle, which the placement prices), and per class (`class_flits`, which the bound uses).
/// The simulator lets a packet of one class interleave with the flits of another without
/// delaying them (D14, D15), so a link shared by classes may carry a little more than a flit a
/// cycle there, never more than a flit a cycle of one class: only the per-class count is sure
/// never to exceed a run.
pub(super) struct Load {
    cycles: BTreeMap<Resource, u64>,
    /// Bytes per bank, indexed by bank (the fused bank's stays 0: nothing reads it).
    pub(super) dram_bytes: [u64; DRAM_BANKS],
    /// The banks that work: all of them together serve at their count times a bank's rate.
    dram_banks: DramSet,
    pub(super) link_flits: Vec<u64>,
    class_flits: Vec<u64>,
    /// The chip's routers: its routes and links.
    grid: Grid,
}

impl Load {
    /// No work yet, on a chip whose routers are `grid` and whose working DRAM banks are
    /// `dram_banks`.
    pub(super) fn new(grid: Grid, dram_banks: DramSet) -> Self {
        Self {
            grid,
            cycles: BTreeMap::new(),
            dram_bytes: [0; DRAM_BANKS],
            dram_banks,
            link_flits: vec![0; 2 * LINKS_PER_NOC],
            class_flits: vec![0; 2 * LINKS_PER_NOC * 3],
        }
    }

    /// The chip's routers, whose routes the work takes.
    pub(super) fn grid(&self) -> Grid {
        self.grid
    }

    /// The cycles counted for `r` so far (0 for none).
    #[cfg(test)]
    pub(super) fn cycles_of(&self, r: Resource) -> u64 {
        self.cycles.get(&r).copied().unwrap_or(0)
    }

    pub(super) fn add(&mut self, r: Resource, cycles: u64) {
        *self.cycles.entry(r).or_insert(0) += cycles;
    }

    /// `flits` of `class` on every link of `links` (routers and directions on `noc`).
    pub(super) fn links(
        &mut self,
        noc: u8,
        class: LinkClass,
        links: impl IntoIterator<Item = ((u8, u8), Dir)>,
        flits: u64,
    ) {
        for (from, dir) in links {
            let i = link_index(noc, from, dir);
            self.link_flits[i] += flits;
            self.class_flits[i * 3 + class as usize] += flits;
        }
    }

    /// The work of `stream`'s reads when they go to the DRAM port `port` of `bank` (raw
    /// coordinates on the stream's NoC): the bank's bytes, the requests' and responses' links.
    /// `sign` 1 adds them, -1 takes them away again.
    pub(super) fn reads(&mut self, stream: &ReadStream, bank: u8, port: (u8, u8), sign: i64) {
        let apply = |v: &mut u64, d: u64| {
            *v = if sign > 0 {
                *v + d
            } else {
                v.saturating_sub(d)
            };
        };
        apply(&mut self.dram_bytes[bank as usize], stream.bytes);
        let routes = [
            (
                self.grid.unicast_links(stream.noc, stream.me, port),
                LinkClass::Unicast,
                stream.request_flits,
            ),
            (
                self.grid.unicast_links(stream.noc, port, stream.me),
                LinkClass::Response,
                stream.response_flits,
            ),
        ];
        for (links, class, flits) in routes {
            for (from, dir) in links {
                let i = link_index(stream.noc, from, dir);
                apply(&mut self.link_flits[i], flits);
                apply(&mut self.class_flits[i * 3 + class as usize], flits);
            }
        }
    }

    pub(super) fn bound(mut self, timing: &Timing) -> JobBound {
        let rate = timing.dram_bank_bytes_per_cycle;
        let banks = self.dram_bytes;
        for (b, &bytes) in banks.iter().enumerate() {
            if bytes > 0 {
                self.add(Resource::DramBank(b as u8), dram_cycles(bytes, rate));
            }
        }
        let all: u64 = banks.iter().sum();
        let working = self.dram_banks.len();
        if all > 0 {
            self.add(
                Resource::Dram(working as u8),
                dram_cycles(all, rate * working as f64),
            );
        }
        for (i, classes) in self.class_flits.chunks(3).enumerate() {
            // The busiest class: the one whose flits the link must carry one a cycle.
            let flits = classes.iter().copied().max().unwrap_or(0);
            if flits > 0 {
                let (noc, rest) = (i / LINKS_PER_NOC, i % LINKS_PER_NOC);
                let (cell, dir) = (rest / 2, rest % 2);
                let from = (
                    (cell % GRID_X as usize) as u8,
                    (cell / GRID_X as usize) as u8,
                );
                let to = self.grid.step(from, dir);
                *self
                    .cycles
                    .entry(Resource::Link {
                        noc: noc as u8,
                        from,
                        to,
                    })
                    .or_insert(0) += flits;
            }
        }
        let mut best = JobBound {
            cycles: 0,
            binding: Resource::Dram(working as u8),
        };
        for (&r, &c) in &self.cycles {
            if c > best.cycles {
                best = JobBound {
                    cycles: c,
                    binding: r,
                };
            }
        }
        best
    }
}

/// Cycles a bank (or all working banks, at `rate` times their count) needs for `bytes`.
pub(super) fn dram_cycles(bytes: u64, rate: f64) -> u64 {
    (bytes as f64 / rate).ceil() as u64
}

/// One page stream of one sender: the pages `g` with `g % 8 == stream` of a job, read from one
/// DRAM port (the placement's choice), as the bound prices them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct ReadStream {
    /// Index of the broadcast's operand in the plan.
    pub(super) operand: usize,
    /// Index of the sender's core in the plan's words.
    pub(super) core: usize,
    /// Which stream, 0..8.
    pub(super) stream: usize,
    /// The sender's NoC.
    pub(super) noc: u8,
    /// The sender's raw coordinates on that NoC.
    pub(super) me: (u8, u8),
    /// The bytes the stream's reads take from its bank in a job.
    pub(super) bytes: u64,
    /// Flits of the stream's read requests on every link of their route, in a job.
    pub(super) request_flits: u64,
    /// Flits of its responses on every link of theirs.
    pub(super) response_flits: u64,
}
