//! Cycle profiles of the firmware cores (`SimConfig::profile_cores`): every retired
//! instruction's cycles, charged to its `pc` under the call stack it ran in.
//!
//! The call stack is the chain of call sites (the `pc` of each `jal`/`jalr` that wrote a link
//! register and has not returned yet), kept as a tree so a call or a return moves one node;
//! charging an instruction is one add into a small direct-mapped table of recent
//! `(node, pc)` keys, which spills into a hash map on a conflict (a loop's instructions stay
//! in the table, so the hash map is rarely touched). Tail calls (`jal x0`/`jalr x0`) push
//! nothing, so the function they reach is charged under the frame of the function that made
//! them, as a debugger's backtrace would show it. What the profile holds is addresses only:
//! naming them (functions, inlined frames) is for whoever has the ELF.
//!
//! Leaf module: imports only the leaves `riscv` and `memory` (its hasher).

use std::collections::HashMap;

use komorebi_hal::Role;

use crate::memory::FastHash;
use crate::riscv::{Flow, Probe};

/// The deepest call stack kept; deeper calls are charged to the deepest node, and their returns
/// leave it there (a firmware core's stack is a few KiB, so real code never gets near it).
const MAX_DEPTH: usize = 256;

/// Slots of the table in front of the hash map: 4096 of 16 bytes, 64 KiB per profiled core.
const RECENT: usize = 4096;

/// A key no instruction has: node `u32::MAX` is never made (`MAX_DEPTH` keeps the tree far
/// smaller).
const EMPTY: u64 = u64::MAX;

/// One call-stack node: its parent and the call site that entered it from there.
#[derive(Copy, Clone, Debug)]
struct Node {
    parent: u32,
    call_site: u32,
    depth: u32,
}

/// The profiler of one firmware core: a [`Probe`] for its hart.
#[derive(Debug)]
pub struct CoreProfiler {
    nodes: Vec<Node>,
    children: HashMap<(u32, u32), u32, FastHash>,
    /// Cycles by `(node << 32) | pc`, for keys not in `recent`.
    cycles: HashMap<u64, u64, FastHash>,
    /// Recently charged keys and their cycles not yet in `cycles`, direct-mapped.
    recent: Box<[(u64, u64)]>,
    current: u32,
    /// Calls made beyond `MAX_DEPTH` and not returned from yet: their returns pop nothing.
    beyond: u32,
    stalled: u64,
    /// Calls by target address (the entry of the function called), at any depth.
    calls: HashMap<u32, u64, FastHash>,
}

impl Default for CoreProfiler {
    fn default() -> Self {
        Self {
            nodes: vec![Node {
                parent: 0,
                call_site: 0,
                depth: 0,
            }],
            children: HashMap::default(),
            cycles: HashMap::default(),
            recent: vec![(EMPTY, 0); RECENT].into_boxed_slice(),
            current: 0,
            beyond: 0,
            stalled: 0,
            calls: HashMap::default(),
        }
    }
}

impl Probe for CoreProfiler {
    #[inline]
    fn retired(&mut self, pc: u32, flow: Flow, cycles: u64) {
        let key = u64::from(self.current) << 32 | u64::from(pc);
        // pcs are word-aligned; the node's bits spread a function's call stacks apart.
        let slot = ((pc >> 2) ^ self.current.wrapping_mul(0x9E37)) as usize % RECENT;
        let entry = &mut self.recent[slot];
        if entry.0 == key {
            entry.1 += cycles;
        } else {
            let (old, old_cycles) = core::mem::replace(entry, (key, cycles));
            if old != EMPTY {
                *self.cycles.entry(old).or_insert(0) += old_cycles;
            }
        }
        match flow {
            Flow::Other => {}
            Flow::Call { target } => {
                *self.calls.entry(target).or_insert(0) += 1;
                let here = self.nodes[self.current as usize];
                if here.depth as usize >= MAX_DEPTH {
                    self.beyond += 1;
                    return;
                }
                let next = self.nodes.len() as u32;
                let child = *self.children.entry((self.current, pc)).or_insert(next);
                if child == next {
                    self.nodes.push(Node {
                        parent: self.current,
                        call_site: pc,
                        depth: here.depth + 1,
                    });
                }
                self.current = child;
            }
            // A return from a call beyond `MAX_DEPTH` leaves the deepest node; one at the root
            // (the code returned from what started the profile) stays at the root.
            Flow::Return if self.beyond > 0 => self.beyond -= 1,
            Flow::Return => self.current = self.nodes[self.current as usize].parent,
        }
    }

    #[inline]
    fn stalled(&mut self, cycles: u64) {
        self.stalled += cycles;
    }
}

impl CoreProfiler {
    /// The call sites from the root down to `node`.
    fn call_sites(&self, mut node: u32) -> Vec<u32> {
        let mut sites = Vec::with_capacity(self.nodes[node as usize].depth as usize);
        while node != 0 {
            let n = self.nodes[node as usize];
            sites.push(n.call_site);
            node = n.parent;
        }
        sites.reverse();
        sites
    }

    /// What was measured so far, ordered by call sites then `pc`.
    pub fn samples(&self) -> Vec<ProfileSample> {
        let mut all = self.cycles.clone();
        for &(key, cycles) in self.recent.iter().filter(|(key, _)| *key != EMPTY) {
            *all.entry(key).or_insert(0) += cycles;
        }
        // (A what-if's sped-up instructions can round down to 0 cycles: nothing to show.)
        let mut out: Vec<ProfileSample> = all
            .iter()
            .filter(|&(_, &cycles)| cycles > 0)
            .map(|(&key, &cycles)| ProfileSample {
                call_sites: self.call_sites((key >> 32) as u32),
                pc: key as u32,
                cycles,
            })
            .collect();
        out.sort_unstable_by(|a, b| (&a.call_sites, a.pc).cmp(&(&b.call_sites, b.pc)));
        out
    }

    /// Cycles the core's clock moved without retiring anything.
    pub fn stalled_cycles(&self) -> u64 {
        self.stalled
    }

    /// How many calls went to each target address (a function's entry), by address.
    pub fn calls(&self) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = self.calls.iter().map(|(&t, &n)| (t, n)).collect();
        out.sort_unstable();
        out
    }
}

/// The profile of one firmware core (`Sim::core_profiles`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreProfile {
    /// The tile's NoC0 coordinates.
    pub tile: (u8, u8),
    /// The kernel the core ran.
    pub kernel: Role,
    /// Where its cycles went.
    pub samples: Vec<ProfileSample>,
    /// Cycles its clock moved without retiring anything.
    pub stalled: u64,
    /// Calls made, by target address (the entry of the function called), by address.
    pub calls: Vec<(u32, u64)>,
}

/// Cycles spent at one `pc` under one call stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSample {
    /// The `pc` of each call not yet returned from, outermost first.
    pub call_sites: Vec<u32>,
    /// The instruction's address.
    pub pc: u32,
    /// Cycles its executions cost in total.
    pub cycles: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_returns_move_the_stack_and_charge_each_pc_under_it() {
        let mut p = CoreProfiler::default();
        p.retired(0x100, Flow::Other, 1);
        p.retired(0x104, Flow::Call { target: 0x200 }, 5);
        p.retired(0x200, Flow::Other, 8);
        p.retired(0x204, Flow::Call { target: 0x300 }, 5);
        p.retired(0x300, Flow::Return, 5);
        p.retired(0x208, Flow::Return, 5);
        p.retired(0x108, Flow::Call { target: 0x200 }, 5);
        p.retired(0x200, Flow::Other, 8);
        p.retired(0x204, Flow::Other, 1);
        Probe::stalled(&mut p, 7);
        let s = |sites: &[u32], pc, cycles| ProfileSample {
            call_sites: sites.to_vec(),
            pc,
            cycles,
        };
        assert_eq!(
            p.samples(),
            vec![
                s(&[], 0x100, 1),
                s(&[], 0x104, 5),
                s(&[], 0x108, 5),
                s(&[0x104], 0x200, 8),
                s(&[0x104], 0x204, 5),
                s(&[0x104], 0x208, 5),
                s(&[0x104, 0x204], 0x300, 5),
                s(&[0x108], 0x200, 8),
                s(&[0x108], 0x204, 1),
            ]
        );
        assert_eq!(p.stalled_cycles(), 7);
        assert_eq!(p.calls(), [(0x200, 2), (0x300, 1)], "calls by target");
    }

    #[test]
    fn keys_that_share_a_recent_slot_keep_every_cycle() {
        let mut p = CoreProfiler::default();
        // pcs RECENT words apart share a slot at node 0: each charge evicts the other.
        let (a, b) = (0x40, 0x40 + 4 * RECENT as u32);
        for i in 0..10 {
            p.retired(if i % 2 == 0 { a } else { b }, Flow::Other, i + 1);
        }
        let s = |pc, cycles| ProfileSample {
            call_sites: Vec::new(),
            pc,
            cycles,
        };
        assert_eq!(
            p.samples(),
            vec![s(a, 1 + 3 + 5 + 7 + 9), s(b, 2 + 4 + 6 + 8 + 10)]
        );
    }

    /// Calls past `MAX_DEPTH` are charged to the deepest node, and their returns pop nothing:
    /// after them, the code of the deepest function is still charged under its own stack.
    #[test]
    fn calls_past_the_deepest_node_return_to_it() {
        let mut p = CoreProfiler::default();
        for i in 0..MAX_DEPTH as u32 {
            p.retired(0x1000 + 4 * i, Flow::Call { target: 0x8000 }, 1);
        }
        p.retired(0x9000, Flow::Call { target: 0x9100 }, 1); // beyond: not pushed
        p.retired(0x9100, Flow::Call { target: 0x9200 }, 1); // beyond
        p.retired(0x9200, Flow::Return, 1);
        p.retired(0x9104, Flow::Return, 1);
        p.retired(0x9004, Flow::Other, 7); // the deepest function, after its calls
        let deepest: Vec<u32> = (0..MAX_DEPTH as u32).map(|i| 0x1000 + 4 * i).collect();
        let at = |pc| {
            p.samples()
                .into_iter()
                .find(|s| s.pc == pc)
                .map(|s| (s.call_sites, s.cycles))
        };
        assert_eq!(at(0x9004), Some((deepest.clone(), 7)));
        assert_eq!(at(0x9200), Some((deepest, 1)));
    }

    /// A what-if's sped-up instruction can be charged 0 cycles: no sample shows it.
    #[test]
    fn zero_cycle_charges_make_no_sample() {
        let mut p = CoreProfiler::default();
        p.retired(0x10, Flow::Other, 0);
        p.retired(0x14, Flow::Other, 2);
        assert_eq!(
            p.samples(),
            vec![ProfileSample {
                call_sites: Vec::new(),
                pc: 0x14,
                cycles: 2
            }]
        );
    }

    #[test]
    fn a_return_at_the_root_stays_at_the_root() {
        let mut p = CoreProfiler::default();
        p.retired(0x10, Flow::Return, 5);
        p.retired(0x20, Flow::Other, 1);
        assert_eq!(p.samples()[1].call_sites, Vec::<u32>::new());
    }
}
