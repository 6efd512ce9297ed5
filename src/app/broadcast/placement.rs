//! DRAM placement: which DRAM bank each sender reads each of its page streams from.
//!
//! A sender's pages form eight streams (page `g` is in stream `g % 8`, since program version 2); each
//! stream is read from one bank, through the port tt-metal's kernels use for that bank on the
//! sender's NoC ([`blackhole_pac::grid::dram_endpoint`]). The bank of every stream of every
//! sender is the host's choice; each sender reads its own copy of the pages, and the host
//! writes each page of a copy into the bank its stream is read from (`plan::fill_dram`). Copies
//! share spans of the banks' addresses, layers, each at a shift of whole pages into its layer
//! that keeps its pages off the others' ([`Layers`]): the data takes a few layers of each bank
//! rather than a span a copy.
//!
//! Every bank it chooses is a working one: on a chip with a fused DRAM bank (the plan's
//! geometry says which) the candidates are the other 7, and the plain interleave goes round
//! them (stream `i` from the `i mod 7`-th working bank). This module is the one place a
//! stream's bank is chosen, so no program, DRAM write or priced read names the fused bank.
//!
//! # Why not the plain interleave
//!
//! Reading stream `i` from bank `i` on every sender spreads each sender's bytes evenly over
//! the banks, but not its responses over the links. A response travels the sender's NoC in
//! dimension order, so the responses to senders that share a row or a column share the links
//! where they turn into it. The 03 default shows it: the 12 W senders (NoC1, Y first) sit on
//! one row, and every response to them enters that row at one of the two DRAM columns; read
//! from all eight banks, most of them cross the link next to the east DRAM column, which then
//! carries 1.7 times the DRAM time (the binding resource of the resource bound, `bound`).
//!
//! # What it chooses
//!
//! [`Placement::choose`] prices every choice as the resource bound does (`bound`: bytes per
//! bank at the bank's rate, flits per directed link, on the simulator's routes) and assigns the
//! streams greedily, each to the bank that keeps the busiest resource it touches (its bank and
//! every link of its requests' and responses' routes, on top of the multicasts, VALIDs and
//! markers, which do not depend on the choice) lowest; ties go to the shorter route, then the
//! lower bank. Streams are taken stream by stream across the senders (stream 0 of every sender,
//! then stream 1, ...), so every sender's early choices see the others'. It then revisits every
//! stream, taking its reads out and choosing again against all the others, until a pass
//! changes nothing (at most [`PASSES`] passes). The result: senders read mostly from the banks
//! on their side of the chip, as far as the banks' bytes stay balanced, which is what the
//! bound needs (a bank is as busy as the busiest link into a row).
//!
//! It is a heuristic: the best placement is an integer program, and this one only promises
//! never to be worse than the first stream-by-stream pass it refines. It depends only on the
//! plan (rectangle, harvest mask, fused DRAM bank, blocks, pages, page size), so every run of
//! the same flags reads from the same banks. `komorebi layout` prints it.

use komorebi_hal::{NocId, Xy};
use komorebi_kernel::broadcast_handler::program::STREAMS;
use komorebi_sim::Timing;

use super::load::{Load, ReadStream, dram_cycles, link_index};
use crate::chip::{ChipKind, DramSet};

/// Most passes over all streams [`Placement::choose`] makes.
pub const PASSES: usize = 8;

/// The raw coordinates on `noc` of the port of `bank` of `chip` that a sender on that NoC
/// reads through ([`crate::chip::dram_port`]).
pub fn bank_port(chip: ChipKind, bank: u8, noc: NocId) -> (u8, u8) {
    // A working bank of the chip and NoC 0 or 1: always a port, inside the grid.
    crate::chip::dram_port(chip, bank, noc).unwrap_or((0, 0))
}

/// The bank each sender reads each of its page streams from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Per operand of the plan, per core in the plan's word order: the bank of each stream
    /// (`None` for a core that sends nothing).
    banks: Vec<Vec<Option<[u8; STREAMS]>>>,
    /// The NoC of each operand.
    nocs: Vec<NocId>,
    /// The banks it may choose: the chip's working ones.
    dram_banks: DramSet,
    /// The chip the banks are on.
    chip: ChipKind,
    /// Where each sender's copy lies in its banks, from `banks` (kept with them).
    layers: Layers,
    /// Pages in each sender's copy.
    pages: u64,
}

impl Placement {
    /// No sender (a plan being built).
    pub(super) fn empty() -> Self {
        Self {
            banks: Vec::new(),
            nocs: Vec::new(),
            dram_banks: DramSet::new(ChipKind::Blackhole, None),
            chip: ChipKind::Blackhole,
            layers: Layers::default(),
            pages: 0,
        }
    }

    /// Stream `i` of every sender from the `i`-th working bank, counting round (with every
    /// bank working, bank `i`: program version 1's only layout): for each operand its NoC
    /// and, per core in the plan's word order, whether it sends; `pages` in each copy.
    pub(super) fn interleaved(
        operands: &[(NocId, Vec<bool>)],
        chip: ChipKind,
        dram_banks: DramSet,
        pages: u64,
    ) -> Self {
        let every = interleave(dram_banks);
        let banks: Vec<Vec<_>> = operands
            .iter()
            .map(|(_, senders)| senders.iter().map(|&s| s.then_some(every)).collect())
            .collect();
        Self {
            layers: layers(&banks, pages),
            banks,
            pages,
            nocs: operands.iter().map(|&(noc, _)| noc).collect(),
            dram_banks,
            chip,
        }
    }

    /// The placement the module docs describe, from `interleaved` (the senders), for the
    /// senders' `streams` on top of `load` (the work that does not depend on the placement),
    /// priced with `timing`.
    pub(super) fn choose(
        interleaved: Self,
        streams: &[ReadStream],
        mut load: Load,
        timing: &Timing,
    ) -> Self {
        let mut placement = interleaved;
        if streams.is_empty() {
            return placement;
        }
        let chip = placement.chip;
        let mut order: Vec<usize> = (0..streams.len()).collect();
        order.sort_by_key(|&i| (streams[i].stream, i));
        let mut chosen: Vec<Option<u8>> = vec![None; streams.len()];
        for _ in 0..PASSES {
            let mut changed = false;
            for &i in &order {
                let s = &streams[i];
                let noc = placement.nocs[s.operand];
                if let Some(b) = chosen[i] {
                    load.reads(s, b, bank_port(chip, b, noc), -1);
                }
                let best = placement
                    .dram_banks
                    .iter()
                    .min_by_key(|&b| price(&load, s, b, bank_port(chip, b, noc), timing))
                    .unwrap_or(placement.dram_banks.nth(0));
                load.reads(s, best, bank_port(chip, best, noc), 1);
                changed |= chosen[i] != Some(best);
                chosen[i] = Some(best);
            }
            if !changed {
                break;
            }
        }
        for (s, b) in streams.iter().zip(chosen) {
            if let (Some(Some(banks)), Some(b)) = (
                placement
                    .banks
                    .get_mut(s.operand)
                    .and_then(|c| c.get_mut(s.core)),
                b,
            ) {
                banks[s.stream] = b;
            }
        }
        placement.layers = layers(&placement.banks, placement.pages);
        placement
    }

    /// Where each sender's copy lies in its banks.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The banks of the streams of core `core` (the plan's word order) of operand `operand`;
    /// `None` unless that core sends.
    pub fn banks(&self, operand: usize, core: usize) -> Option<[u8; STREAMS]> {
        self.banks.get(operand)?.get(core).copied().flatten()
    }

    /// The bank and port (raw on the stream's NoC) `stream` reads from.
    pub(super) fn port(&self, stream: &ReadStream) -> (u8, (u8, u8)) {
        let bank = self
            .banks(stream.operand, stream.core)
            .map_or(self.dram_banks.nth(stream.stream), |b| b[stream.stream]);
        (bank, bank_port(self.chip, bank, self.nocs[stream.operand]))
    }

    /// The DRAM port of each stream of core `core` of operand `operand`, as its program names
    /// them (a core that sends nothing reads nothing: it gets the plain interleave).
    pub(super) fn ports(&self, operand: usize, core: usize) -> [Xy; STREAMS] {
        let noc = self.nocs[operand];
        let banks = self
            .banks(operand, core)
            .unwrap_or(interleave(self.dram_banks));
        banks.map(|b| {
            let (x, y) = bank_port(self.chip, b, noc);
            // DRAM ports sit inside the grid: always valid coordinates.
            Xy::new(x, y).unwrap_or_default()
        })
    }
}

/// Where in its banks each sender's copy of the pages lies: in one of a number of layers, each
/// one copy's span ([`BroadcastConfig::copy_bytes`](super::BroadcastConfig)) and up to 7 pages
/// more, at a shift of 0 to 7 pages into it.
///
/// A sender's page `g` lies at `base + g * page_size` of the bank it reads stream `g % 8` from,
/// so of a copy's span each bank holds only the pages of its streams, every eighth page or some
/// of them: counted in pages from its layer's start, a copy at shift `k` holds in that bank the
/// pages of residues `(s + k) % 8` of its streams `s` there. Two copies whose residues never meet
/// in one bank write disjoint pages of one layer. The host puts each sender, in order, at the
/// first layer and shift where none of its (bank, residue) pairs is taken: a layer holds eight
/// residues of every bank (the 03 default's 32 copies: 7 layers, not 32 spans; at least 5, its
/// busiest bank serving 36 streams). Shifts make a layer up to 7 pages longer, so a plan whose
/// copies are small packs without them when that takes fewer bytes. Far longer jobs fit the
/// banks, and the host writes less address space.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Layers {
    /// Per operand, per sender (in the plan's word order): its layer and shift in pages.
    of: Vec<Vec<(u32, u8)>>,
    /// Layers in all: at least 1 once any core sends.
    count: u32,
    /// The largest shift of any copy: a layer is a copy's span and this many pages.
    max_shift: u8,
}

impl Layers {
    /// The layer and shift (in pages) of the `sender`-th sender (in the plan's word order) of
    /// operand `operand`; `(0, 0)` for one there is not.
    pub(super) fn of(&self, operand: usize, sender: u64) -> (u32, u8) {
        self.of
            .get(operand)
            .and_then(|s| s.get(sender as usize))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Layers in all.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The largest shift of any copy, in pages.
    pub fn max_shift(&self) -> u8 {
        self.max_shift
    }
}

/// Each sender's layer and shift (see [`Layers`]) with the banks `banks` of every operand's
/// cores, their copies of `pages` pages: packed with shifts and without (`pack`), whichever
/// takes fewer bytes of each bank (a shift costs up to 7 pages a layer, much for small copies),
/// without on a tie.
fn layers(banks: &[Vec<Option<[u8; STREAMS]>>], pages: u64) -> Layers {
    let used = pages.min(STREAMS as u64) as usize;
    let (flat, shifted) = (pack(banks, used, 1), pack(banks, used, STREAMS));
    let bytes = |l: &Layers| u64::from(l.count) * (pages + u64::from(l.max_shift));
    if bytes(&shifted) < bytes(&flat) {
        shifted
    } else {
        flat
    }
}

/// The senders, with the banks `banks` of every operand's cores of which the first `used`
/// streams hold pages, taken in order (A's, then W's, each in the plan's word order), each at
/// the first layer, then the least of `shifts` shifts, where none of its (bank, residue) pairs
/// is taken. At most one layer a sender (one span each, as when every copy had its own); at
/// least as many as the most (bank, stream) pairs of one bank over eight (over one unshifted).
fn pack(banks: &[Vec<Option<[u8; STREAMS]>>], used: usize, shifts: usize) -> Layers {
    // The (bank, residue) pairs of a copy's streams at shift `k`: bit `bank * 8 + residue`. A
    // bank past the mask's 16 (none has more than 8) takes every pair: a layer of its own.
    let pairs = |banks: &[u8; STREAMS], k: usize| {
        banks
            .iter()
            .take(used)
            .enumerate()
            .fold(0u128, |m, (s, &b)| {
                let bit = u32::from(b) * STREAMS as u32 + ((s + k) % STREAMS) as u32;
                m | 1u128.checked_shl(bit).unwrap_or(u128::MAX)
            })
    };
    // Per layer, its (bank, residue) pairs taken.
    let mut taken: Vec<u128> = Vec::new();
    let (mut of, mut max_shift) = (Vec::with_capacity(banks.len()), 0u8);
    for cores in banks {
        let mut places = Vec::new();
        for banks in cores.iter().flatten() {
            let fit = taken.iter().enumerate().find_map(|(layer, &t)| {
                (0..shifts).find_map(|k| {
                    let p = pairs(banks, k);
                    (t & p == 0).then_some((layer, k, p))
                })
            });
            let (layer, k, p) = fit.unwrap_or_else(|| {
                taken.push(0);
                (taken.len() - 1, 0, pairs(banks, 0))
            });
            taken[layer] |= p;
            max_shift = max_shift.max(k as u8);
            places.push((layer as u32, k as u8));
        }
        of.push(places);
    }
    Layers {
        of,
        count: taken.len() as u32,
        max_shift,
    }
}

/// The plain interleave of the streams over `dram_banks`: stream `i` from the `i`-th working
/// bank, counting round.
fn interleave(dram_banks: DramSet) -> [u8; STREAMS] {
    core::array::from_fn(|i| dram_banks.nth(i))
}

/// What reading `stream` from `bank` through `port` costs against `load`: the busiest resource
/// it touches afterwards (its bank in cycles, every link of its routes in flits), then the
/// flits it adds in all (the shorter route), then the bank.
fn price(
    load: &Load,
    stream: &ReadStream,
    bank: u8,
    port: (u8, u8),
    timing: &Timing,
) -> (u64, u64, u8) {
    let bytes = load.dram_bytes[bank as usize] + stream.bytes;
    let mut busiest = dram_cycles(bytes, timing.dram_bank_bytes_per_cycle);
    let mut added = 0;
    for (route_links, flits) in [
        (
            load.grid().unicast_links(stream.noc, stream.me, port),
            stream.request_flits,
        ),
        (
            load.grid().unicast_links(stream.noc, port, stream.me),
            stream.response_flits,
        ),
    ] {
        for (from, dir) in route_links {
            busiest = busiest.max(load.link_flits[link_index(stream.noc, from, dir)] + flits);
            added += flits;
        }
    }
    (busiest, added, bank)
}

#[cfg(test)]
mod tests {

    use komorebi_hal::LogicalRect;

    use super::*;
    use crate::app::broadcast::{BroadcastConfig, BroadcastPlan, JobBound};
    use komorebi_kernel::broadcast_handler::program::Check;

    /// The plan of `cfg` on a p150-shaped chip (harvest 0x3000) or a whole Wormhole, and its
    /// bound with the plain interleave and with the chosen placement.
    fn bounds(cfg: &BroadcastConfig) -> (BroadcastPlan, JobBound, JobBound) {
        let geometry = match cfg.chip {
            ChipKind::Blackhole => crate::chip::blackhole(0x3000).unwrap(),
            ChipKind::Wormhole => crate::chip::wormhole(0).unwrap(),
        };
        let mut plan = BroadcastPlan::per_job(cfg, &geometry).unwrap();
        let t = crate::chip::sim_timing(cfg.chip);
        let chosen = plan.job_bound(&t);
        let placement = plan.placement.clone();
        plan.placement = plan.interleaved_placement();
        let interleaved = plan.job_bound(&t);
        plan.placement = placement;
        (plan, interleaved, chosen)
    }

    fn check_none(cfg: BroadcastConfig) -> BroadcastConfig {
        BroadcastConfig {
            check: Check::None,
            ..cfg
        }
    }

    #[test]
    fn the_03_default_reads_each_w_sender_s_pages_from_the_banks_on_its_side() {
        let cfg = check_none(BroadcastConfig::default());
        let (plan, interleaved, chosen) = bounds(&cfg);
        // Interleaved: nine of the twelve W senders' responses cross the link where the east
        // DRAM column's responses turn into their row (NoC1 (7,0)->(8,0) is NoC0
        // (9,11)->(8,11)), 9 x 64 pages x 33 flits = 19,008 a job (issue 18 measured the same).
        assert_eq!(interleaved.cycles, 19_008);
        assert_eq!(interleaved.binding.to_string(), "link NoC1 (7,0)->(8,0)");
        // Placed: six senders a side, each side's responses entering the row at its own DRAM
        // column: 6 x 64 pages x 33 flits = 12,672 on each entry link.
        assert_eq!(chosen.cycles, 12_672);
        assert_eq!(chosen.binding.to_string(), "link NoC1 (7,0)->(8,0)");
        // W is operand 1; its senders sit on the rectangle's last row. West of DRAM column
        // x = 9 (NoC0 x 1..=6) they read banks 4..=7 (x 9) only; east (x 11..=16) 0..=3.
        let w = 1;
        let mut sides = 0;
        for (core, a) in plan.decoded[w].iter().enumerate() {
            let Some(banks) = plan.placement.banks(w, core) else {
                continue;
            };
            let noc0_x = 16 - a.core.0;
            let west = noc0_x < 9;
            assert!(
                banks.iter().all(|&b| (b >= 4) == west),
                "W sender at NoC0 x {noc0_x} reads banks {banks:?}"
            );
            sides += 1;
        }
        assert_eq!(sides, 12);
    }

    #[test]
    fn placement_never_binds_worse_than_the_interleave_and_is_deterministic() {
        let (bh, wh) = (ChipKind::Blackhole, ChipKind::Wormhole);
        let shapes = [
            (bh, LogicalRect::new(0, 0, 12, 10), true, true, 16, 4, 2048),
            (bh, LogicalRect::new(0, 0, 12, 10), true, false, 16, 4, 2048),
            (bh, LogicalRect::new(0, 0, 12, 10), false, true, 16, 4, 2048),
            (bh, LogicalRect::new(0, 0, 12, 10), true, true, 8, 8, 4096),
            (bh, LogicalRect::new(0, 0, 12, 10), true, true, 5, 3, 1024),
            (bh, LogicalRect::new(2, 3, 4, 5), true, true, 16, 4, 2048),
            (bh, LogicalRect::new(0, 0, 1, 2), true, false, 8, 1, 16384),
            (bh, LogicalRect::new(5, 0, 2, 10), true, true, 3, 1, 64),
            (bh, LogicalRect::new(0, 9, 12, 1), true, true, 16, 4, 2048),
            (wh, LogicalRect::new(0, 0, 8, 10), true, true, 16, 4, 2048),
            (wh, LogicalRect::new(0, 0, 8, 10), true, false, 16, 4, 2048),
            (wh, LogicalRect::new(0, 0, 8, 10), false, true, 16, 4, 2048),
            (wh, LogicalRect::new(0, 0, 8, 10), true, true, 8, 2, 8192),
            (wh, LogicalRect::new(2, 1, 5, 6), true, true, 5, 3, 1024),
            (wh, LogicalRect::new(3, 0, 1, 10), false, true, 8, 1, 16384),
        ];
        for (chip, rect, rows, columns, blocks, pages, page_size) in shapes {
            let cfg = check_none(BroadcastConfig {
                chip,
                rect,
                rows,
                columns,
                blocks,
                pages,
                page_size,
                ..BroadcastConfig::default()
            });
            let (plan, interleaved, chosen) = bounds(&cfg);
            assert!(
                chosen.cycles <= interleaved.cycles,
                "{chip} {rect} rows {rows} columns {columns} {blocks}x{pages}x{page_size}: \
                 placed {chosen:?}, interleaved {interleaved:?}"
            );
            let again = plan.chosen_placement(&crate::chip::sim_timing(chip));
            assert_eq!(again, plan.placement, "{rect}: not deterministic");
        }
    }

    #[test]
    fn a_wormhole_s_placement_is_priced_on_its_own_routes() {
        // The whole 8 x 10 grid, both broadcasts, 16 blocks of 4 pages of 2 KiB: the plain
        // interleave over the 6 banks binds at 29,120 flits on one link, the placement brings
        // the busiest resource down to 20,800; column broadcasts alone, 16,640.
        let wh = |rows, columns| {
            check_none(BroadcastConfig {
                chip: ChipKind::Wormhole,
                rect: LogicalRect::new(0, 0, 8, 10),
                rows,
                columns,
                ..BroadcastConfig::default()
            })
        };
        let (plan, interleaved, chosen) = bounds(&wh(true, true));
        assert_eq!((interleaved.cycles, chosen.cycles), (29_120, 20_800));
        let (_, interleaved, chosen) = bounds(&wh(false, true));
        assert_eq!((interleaved.cycles, chosen.cycles), (29_120, 16_640));
        // Every stream reads one of the Wormhole's six banks.
        for (operand, cores) in plan.decoded.iter().enumerate() {
            for core in 0..cores.len() {
                if let Some(banks) = plan.placement.banks(operand, core) {
                    assert!(banks.iter().all(|&b| b < 6), "{banks:?}");
                }
            }
        }
    }

    #[test]
    fn two_senders_of_one_column_read_from_their_own_rows_side() {
        // A along rows 0 and 1 of column 0, no receivers, 8 pages of 16 KiB each: interleaved,
        // 13 responses share column 1's links (3341 flits, `bound`'s test). Placed, no link
        // carries more than a sender's own 8 responses, so each sender's ejection port binds:
        // 8 x 257 = 2056.
        let cfg = check_none(BroadcastConfig {
            rect: LogicalRect::new(0, 0, 1, 2),
            rows: true,
            columns: false,
            blocks: 8,
            pages: 1,
            page_size: 16384,
            window: 1,
            ..BroadcastConfig::default()
        });
        let (_, interleaved, chosen) = bounds(&cfg);
        assert_eq!(interleaved.cycles, 3341);
        assert_eq!(chosen.cycles, 2056);
        assert_eq!(chosen.binding.to_string(), "ejection port NoC0 of (0,0)");
    }
    /// Every page of every sender's copy, in every region of the ring, at its own bank and
    /// address: the layers never let two copies share a page's bytes, on Blackhole (every bank
    /// and one fused), on a Wormhole, and over shapes whose senders crowd a few banks.
    #[test]
    fn copies_that_share_a_layer_never_share_a_page() {
        let (bh, wh) = (ChipKind::Blackhole, ChipKind::Wormhole);
        let shapes = [
            (bh, None, LogicalRect::new(0, 0, 12, 10), 16, 4, 2048, 7),
            (bh, Some(3), LogicalRect::new(0, 0, 12, 10), 16, 4, 2048, 8),
            (bh, None, LogicalRect::new(0, 0, 12, 10), 5, 3, 64, 8),
            (bh, None, LogicalRect::new(2, 3, 4, 5), 3, 8, 1024, 4),
            (bh, None, LogicalRect::new(0, 0, 1, 2), 8, 1, 16384, 1),
            // Three pages a copy: streams 3..=7 hold none and take no bank's place.
            (bh, None, LogicalRect::new(0, 0, 12, 10), 1, 3, 2048, 2),
            (wh, None, LogicalRect::new(0, 0, 8, 10), 16, 4, 2048, 12),
        ];
        for (chip, fused, rect, blocks, pages, page_size, layers) in shapes {
            let cfg = BroadcastConfig {
                chip,
                rect,
                blocks,
                pages,
                page_size,
                fused_dram: fused,
                jobs: 3,
                ..BroadcastConfig::default()
            };
            let harvest = if chip == bh { 0x3000 } else { 0 };
            let geometry = crate::chip::geometry(chip, harvest, fused).unwrap();
            let plan = BroadcastPlan::per_job(&cfg, &geometry).unwrap();
            let senders = plan.senders[0] + plan.senders[1];
            let what = format!("{chip} fused {fused:?} {rect} {blocks}x{pages}x{page_size}");
            assert_eq!(plan.placement.layers().count(), layers, "{what}");
            assert!(
                u64::from(plan.placement.layers().count()) < senders,
                "{what}: {senders} senders"
            );
            let mut written = std::collections::HashMap::new();
            for region in 0..3 {
                for (i, cores) in plan.decoded.iter().enumerate() {
                    for core in 0..cores.len() {
                        let Some(banks) = plan.placement.banks(i, core) else {
                            continue;
                        };
                        let base = plan.dram_base(region, i, core);
                        for g in 0..u64::from(blocks) * u64::from(pages) {
                            let at = (banks[g as usize % STREAMS], base + g * u64::from(page_size));
                            if let Some(other) = written.insert(at, (region, i, core, g)) {
                                panic!(
                                    "{what}: {at:?} of {other:?} again for {:?}",
                                    (region, i, core, g)
                                );
                            }
                        }
                    }
                }
            }
            // Each page a whole page apart from every other in its bank, within the plan's end.
            let end = plan.dram_end();
            assert!(
                written
                    .keys()
                    .all(|&(_, a)| a + u64::from(page_size) <= end),
                "{what}"
            );
        }
    }
}
