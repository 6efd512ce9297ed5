//! The resource bound of a job: the least cycles any one resource of the chip needs for the
//! work the job gives it, computed from the layout and the simulator's routes; the largest of
//! them, and which resource it is (the *binding* resource).
//!
//! # What it counts, per job
//!
//! Every count follows what the protocol must do in a job that completes (every block of every
//! broadcast read, cast, announced and popped), priced as the simulator's engine prices it
//! (`komorebi_sim::Timing`):
//!
//! * **DRAM**, per bank: the bytes it serves (each sender's page stream `g % 8` from the bank the
//!   DRAM placement chose for it, `placement`; never the fused DRAM bank) at
//!   `dram_bank_bytes_per_cycle`; and all working banks together at their count (8, or 7 on a
//!   Blackhole with a fused bank; a Wormhole's 6) times that (never more than the busiest bank, since the simulator
//!   models the chip's ceiling as the banks' sum).
//! * **Links**, every directed link of both NoCs: the flits (a header flit plus one per flit of
//!   the chip's size, 64 bytes or Wormhole's 32, per packet of at most 16 KiB or Wormhole's 8) of every read request (1 flit, sender to bank) and
//!   response (bank to sender, from the port the placement chose), on the unicast routes of
//!   [`komorebi_sim::route::Grid::unicast_links`] over the chip's grid ([`crate::chip::route_grid`]);
//!   of every data and VALID multicast, on the tree of [`komorebi_sim::route::Grid::multicast_tree`];
//!   and of every DONE marker (a 4-byte write, receiver to sender). A link carries one flit a
//!   cycle of each class (below).
//! * **NIUs**, the one each data-movement kernel issues through (NIU0 for the reader's NoC0,
//!   NIU1 for the writer's NoC1), each as its two issue pipelines (reads and writes leave from
//!   different command buffers, which issue independently): `read_issue_floor` per read packet
//!   on the read pipeline; on the write pipeline, per multicast packet
//!   `max(write_issue_floor, reserve + flits)`, the path reservation `reserve` =
//!   `reserve_base + reserve_per_hop * H` (H: hops to the farthest receiver) paid by every
//!   packet, as the program's multicasts are unlinked; `max(write_issue_floor, flits)` per marker.
//! * **Ejection ports**, per core and NoC: the flits of every packet that lands there (read
//!   responses at a sender, multicasts at a receiver, markers at a sender) and one cycle per
//!   acknowledgement (a sender's per receiver and multicast packet, a receiver's per marker).
//! * **Compute**, with `--check full` only: every word it reads and checks, for every block of
//!   every broadcast the core takes part in (a sender's compute checks its own blocks too):
//!   `compute_scan_word_cycles` each for the native kernels, which the simulator charges that
//!   per word; one cycle each for the firmware (`--exec firmware`), whose cores run
//!   instructions: a word takes at least its load, and a core issues at most one instruction a
//!   cycle (BH README, "EX1"), whatever the checking code does besides. With `--check none`
//!   compute reads nothing.
//!
//! DONE markers are counted at the fewest a completing job can send: markers carry a count, so
//! one can answer several blocks, but the sender cannot cast block `b >= window` before a marker
//! of at least `b - window + 1`, sent while at most `b` blocks had been cast; so each receiver
//! sends at least `(blocks - 1) / window + 1` markers (the last one saying every block; one
//! marker when `blocks` is 0).
//!
//! The handshake peer (`--protocol handshake`, `komorebi_kernel::handshake_handler`) moves the
//! same blocks with the same packets: the same reads, the same data multicast and 4-byte flag
//! (its VALID) per block, and a 4-byte ready write from each receiver to the sender, priced as
//! a DONE marker. Only the count of those differs: a receiver writes one ready word per block,
//! before the block is cast, so it sends exactly `blocks` (one, its last word, when `blocks` is
//! 0). The bound of a handshake job counts that many.
//!
//! # Why it is a lower bound
//!
//! In the simulator each of these resources does one unit of work at a time: a bank serves one
//! request after another at no more than its rate (a request to the row of the bank's previous
//! one runs at half the rate, which the bound does not count), an NIU takes one command after
//! another for at least the cycles above, an ejection port passes one flit a cycle, a compute
//! kernel's reads are charged to its one clock. Nothing of a job starts before its command is
//! posted, and the job is not reported before its reads have landed, its multicasts and markers
//! are acknowledged and compute has popped every block; so the job lasts at least as long as any
//! one resource's work. Jobs are one command each on the same group, `EXCLUSIVE`: the test
//! feeder posts a job after the last one reported and the dispatcher does not start a job on
//! tiles an earlier one still holds (`plan.rs`, `run.rs`), so jobs run back to back and the
//! run's bound is the job's times the jobs.
//!
//! A link is counted at one flit a cycle *per virtual-channel class* (unicast requests,
//! multicasts, responses): the bound is its busiest class's flits. The hardware carries one flit
//! a cycle in all, but the simulator's link model (`komorebi_sim`'s `link.rs`) interleaves a late
//! packet of another class by giving it round-robin turns without delaying the ones already
//! crossing, so where classes share a link it can carry a little more than a flit a cycle; within
//! one class it serves packets first come, first served at one flit a cycle, which no run can
//! beat. On the program's binding links one class carries everything (responses on the links
//! into the W senders' row), so the two counts agree there; the DRAM placement prices the
//! hardware's count (all classes together).

//! # What it does not count
//!
//! Latency (router and NIU hops, DRAM and turnaround latencies, the round trips of a block's
//! reads, the VALID and the markers), the protocol's serial dependencies (a block is cast only
//! after its reads land; slot reuse waits for every receiver's DONE; compute waits for VALID;
//! the handshake's sender reads a block only after the previous block's flag and casts it only
//! after every receiver's ready word, so one block is in flight at a time),
//! the kernels' own time programming commands and polling, DRAM row conflicts, and contention
//! between resources (a response waiting for a link while its bank idles). Any of these can
//! make a run slower than the bound, never faster; `efficiency` = bound / cycles says how close
//! a run came.

use komorebi_broadcast::args::BroadcastArgs;
use komorebi_hal::LogicalXy;
use komorebi_kernel::broadcast_handler::program::{Check, STREAMS};
use komorebi_sim::Timing;
use komorebi_sim::route::Dir;

use super::config::Protocol;
use super::load::{JobBound, LinkClass, Load, NiuPipe, ReadStream, Resource};
use super::plan::BroadcastPlan;

/// The sizes of the packets a transfer of `bytes` is split into.
fn packets(bytes: u32, timing: &Timing) -> impl Iterator<Item = u32> {
    let max = timing.max_packet_bytes.max(1);
    (0..bytes.div_ceil(max)).map(move |i| (bytes - i * max).min(max))
}

/// DONE markers (komorebi) or ready words (the handshake) a receiver sends at the least in a
/// job of `blocks` blocks (module docs).
fn least_markers(protocol: Protocol, blocks: u32, window: u8) -> u64 {
    match (protocol, blocks) {
        (_, 0) => 1,
        (Protocol::Komorebi, b) => ((b - 1) / window.max(1) as u32 + 1) as u64,
        (Protocol::Handshake, b) => b as u64,
    }
}

impl BroadcastPlan {
    /// Every sender's page streams with their work in one job, senders in the plan's order
    /// (operands, then cores), streams in order; streams with no page are left out.
    pub(super) fn read_streams(&self, timing: &Timing) -> Vec<ReadStream> {
        let cfg = &self.cfg;
        let pages = cfg.blocks as u64 * cfg.pages as u64;
        let mut out = Vec::new();
        for (operand, s) in self.operands.iter().enumerate() {
            for (core, a) in self.decoded[operand].iter().enumerate() {
                if !a.included() || a.rank != 0 {
                    continue;
                }
                for stream in 0..STREAMS {
                    let count =
                        pages / STREAMS as u64 + ((stream as u64) < pages % STREAMS as u64) as u64;
                    if count == 0 {
                        continue;
                    }
                    let (mut bytes, mut response_flits, mut request_flits) = (0, 0, 0);
                    for n in packets(cfg.page_size, timing) {
                        bytes += count * n as u64;
                        request_flits += count;
                        response_flits += count * timing.flits(n);
                    }
                    out.push(ReadStream {
                        operand,
                        core,
                        stream,
                        noc: s.noc.index(),
                        me: a.core,
                        bytes,
                        request_flits,
                        response_flits,
                    });
                }
            }
        }
        out
    }

    /// The resource bound of one job of this plan (module docs of `bound`), its reads from
    /// the DRAM ports the plan's placement chose.
    pub fn job_bound(&self, timing: &Timing) -> JobBound {
        let mut load = self.load_without_dram(timing, true);
        for stream in self.read_streams(timing) {
            let (bank, port) = self.placement.port(&stream);
            load.reads(&stream, bank, port, 1);
        }
        load.bound(timing)
    }

    /// The work of one job but the DRAM reads' banks and routes, which depend on where each
    /// stream reads from (the placement adds them); without the DONE markers (or ready words)
    /// unless `markers`: their count depends on the window and the protocol, which the DRAM
    /// placement must not (both protocols and every window read the same data).
    pub(super) fn load_without_dram(&self, timing: &Timing, markers: bool) -> Load {
        let cfg = &self.cfg;
        let mut load = Load::new(crate::chip::route_grid(cfg.chip), self.dram_banks());
        let grid = load.grid();
        let page_words = cfg.page_size.div_ceil(4) as u64;
        // `validate` keeps a block inside L1: at most 1.5 MiB.
        let block_bytes = cfg.pages as u32 * cfg.page_size;
        for (i, s) in self.operands.iter().enumerate() {
            let noc = s.noc.index();
            let cores: Vec<(LogicalXy, BroadcastArgs)> = self.words[i]
                .iter()
                .filter_map(|c| Some((c.core.into(), BroadcastArgs::decode(&c.words).ok()?)))
                .filter(|(_, a)| a.included())
                .collect();
            // A firmware core is charged its instructions, of which a word needs one load at
            // least (the native kernels' charge is above the firmware's as built, D49).
            let word_cycles = match cfg.exec {
                crate::host::backend::Exec::Firmware => 1,
                crate::host::backend::Exec::Native => timing.compute_scan_word_cycles,
            };
            for &(core, a) in &cores {
                if cfg.check == Check::Full {
                    let words = cfg.blocks as u64 * cfg.pages as u64 * page_words;
                    load.add(Resource::Compute(core), words * word_cycles);
                }
                if a.rank != 0 {
                    continue;
                }
                let (reads, writes) = (
                    Resource::Niu {
                        noc,
                        core,
                        pipe: NiuPipe::Reads,
                    },
                    Resource::Niu {
                        noc,
                        core,
                        pipe: NiuPipe::Writes,
                    },
                );
                let eject = Resource::Eject { noc, core };
                let me = a.core;
                // The reads' issue and their responses' flits into this core, wherever they
                // come from.
                let pages = cfg.blocks as u64 * cfg.pages as u64;
                for n in packets(cfg.page_size, timing) {
                    load.add(reads, pages * timing.read_issue_floor);
                    load.add(eject, pages * timing.flits(n));
                }
                let receivers: Vec<(LogicalXy, (u8, u8))> = cores
                    .iter()
                    .filter(|(_, r)| r.rank != 0 && r.sender == a.sender)
                    .map(|&(c, r)| (c, r.core))
                    .collect();
                if receivers.is_empty() {
                    continue;
                }
                let dests: Vec<(u8, u8)> = receivers.iter().map(|&(_, d)| d).collect();
                let tree = grid.multicast_tree(noc, me, &dests);
                let tree_links: Vec<((u8, u8), Dir)> =
                    tree.links.iter().map(|l| (l.from, l.dir)).collect();
                let far = dests.iter().map(|&d| grid.hops(me, d)).max().unwrap_or(0);
                let reserve =
                    (timing.reserve_base + timing.reserve_per_hop * far as f64).round() as u64;
                // Every block: its data, then its VALID word, each to every receiver.
                let per_block = packets(block_bytes, timing).chain(packets(4, timing));
                let per_block: Vec<u32> = per_block.collect();
                let blocks = cfg.blocks as u64;
                for &n in &per_block {
                    let flits = timing.flits(n);
                    let niu_cycles = timing.write_issue_floor.max(reserve + flits);
                    load.add(writes, blocks * niu_cycles);
                    load.links(
                        noc,
                        LinkClass::Multicast,
                        tree_links.iter().copied(),
                        blocks * flits,
                    );
                    for &(r, _) in &receivers {
                        load.add(Resource::Eject { noc, core: r }, blocks * flits);
                    }
                    load.add(eject, blocks * receivers.len() as u64);
                }
                // The receivers' DONE markers (the handshake's ready words), each acknowledged.
                if !markers {
                    continue;
                }
                let markers = least_markers(cfg.protocol, cfg.blocks, cfg.window);
                let marker_flits = timing.flits(4);
                for &(r, at) in &receivers {
                    load.add(
                        Resource::Niu {
                            noc,
                            core: r,
                            pipe: NiuPipe::Writes,
                        },
                        markers * timing.write_issue_floor.max(marker_flits),
                    );
                    load.links(
                        noc,
                        LinkClass::Unicast,
                        grid.unicast_links(noc, at, me),
                        markers * marker_flits,
                    );
                    load.add(eject, markers * marker_flits);
                    load.add(Resource::Eject { noc, core: r }, markers);
                }
            }
        }
        load
    }
}

#[cfg(test)]
mod tests {

    use komorebi_hal::LogicalRect;

    use super::*;
    use crate::app::broadcast::config::BroadcastConfig;
    use crate::app::broadcast::load::NiuPipe;

    /// The bound of one job of `cfg` on a p150-shaped chip (harvest 0x3000: logical column
    /// `c` is NoC0 x `c + 1` up to column 5, logical row `r` is NoC0 y `r + 2`), every sender
    /// reading stream `i` from bank `i` (the placement's own tests are in `placement`).
    fn bound(cfg: BroadcastConfig) -> JobBound {
        let geometry = crate::chip::blackhole(0x3000).unwrap();
        let mut plan = BroadcastPlan::per_job(&cfg, &geometry).unwrap();
        plan.placement = plan.interleaved_placement();
        plan.job_bound(&Timing::default())
    }

    fn tiny(rect: LogicalRect, rows: bool, check: Check) -> BroadcastConfig {
        BroadcastConfig {
            rect,
            rows,
            columns: !rows,
            check,
            ..BroadcastConfig::default()
        }
    }

    #[test]
    fn one_sender_and_one_receiver_of_one_small_block_are_bound_by_the_sender_s_niu() {
        // A along row 0: sender (0,0) at NoC0 (1,2), receiver (1,0) at (2,2); one block of one
        // 64-byte page from bank 0. The sender's NIU0 write pipeline: the data multicast and
        // the VALID (2 flits each; reservation 8.5 + 15.9 x 1 hop = 24: max(24, 24 + 2) = 26
        // each): 52. Everything else is less (its read pipeline 36, links 4 flits, ports 6,
        // bank 0 ceil(64 / 47.4) = 2, the receiver's NIU0 one marker of 24).
        let cfg = BroadcastConfig {
            blocks: 1,
            pages: 1,
            page_size: 64,
            window: 1,
            ..tiny(LogicalRect::new(0, 0, 2, 1), true, Check::None)
        };
        let b = bound(cfg.clone());
        assert_eq!(b.cycles, 52);
        assert_eq!(b.binding.to_string(), "NIU0 writes of (0,0)");
        // Checking: 16 words at 6 cycles on each core; the first core in order binds.
        let b = bound(BroadcastConfig {
            check: Check::Full,
            ..cfg.clone()
        });
        assert_eq!(b.cycles, 16 * 6);
        assert_eq!(b.binding, Resource::Compute(LogicalXy::new(0, 0)));
        assert_eq!(b.binding.to_string(), "compute (0,0)");
        // The firmware's cores run instructions: at least one (a load) a word, so 16 cycles,
        // below the sender's NIU (52), which binds again. (At the native kernels' 6 a word a
        // firmware run could beat its bound: the firmware checks in about 5.9.)
        let b = bound(BroadcastConfig {
            check: Check::Full,
            exec: crate::host::backend::Exec::Firmware,
            device: crate::app::broadcast::DeviceChoice::PcieSim,
            ..cfg.clone()
        });
        assert_eq!(b.cycles, 52);
        assert_eq!(b.binding.to_string(), "NIU0 writes of (0,0)");
        let b = bound(BroadcastConfig {
            check: Check::Full,
            exec: crate::host::backend::Exec::Firmware,
            device: crate::app::broadcast::DeviceChoice::PcieSim,
            page_size: 4096,
            ..cfg
        });
        assert_eq!(
            (b.cycles, b.binding.to_string()),
            (1024, "compute (0,0)".into())
        );
    }

    #[test]
    fn a_16_kib_page_from_one_bank_is_bound_by_that_bank() {
        // W along column 0 on NoC1: sender (0,1), receiver (0,0); one block of one 16 KiB page
        // from bank 0: ceil(16384 / 47.407) = 346 cycles of bank 0. The sender's NIU1 comes
        // close: read 36, data max(24, 24 + 257) = 281, VALID 26: 343; its ejection port 257
        // (the response) + 2 acks + one 2-flit marker = 261.
        let cfg = BroadcastConfig {
            blocks: 1,
            pages: 1,
            page_size: 16384,
            window: 1,
            ..tiny(LogicalRect::new(0, 0, 1, 2), false, Check::None)
        };
        let b = bound(cfg);
        assert_eq!(b.cycles, 346);
        assert_eq!(b.binding, Resource::DramBank(0));
        assert_eq!(b.binding.to_string(), "DRAM bank 0");
    }

    #[test]
    fn responses_converging_on_a_column_bind_its_links() {
        // A along rows 0 and 1 of column 0: two senders without receivers, (0,0) at NoC0 (1,2)
        // and (0,1) at (1,3), each reading 8 pages of 16 KiB, one from every bank, through the
        // NoC0 ports of rows 11, 2, 9, 5 (x 0) and 11, 3, 8, 6 (x 9). NoC0 routes responses X
        // then Y, so every response from a port off rows 2 and 3 comes down column 1 through
        // (1,11)->(1,0)->(1,1): seven to (1,2) (all but bank 1's, on its row) and six to (1,3)
        // (all but banks 1 and 5): 13 x 257 flits = 3341 on each of those two links; the first
        // in order binds. Each bank serves 2 x 16 KiB: ceil(32768 / 47.407) = 692; each
        // sender's NIU0 8 x 36 = 288, its ejection port 8 x 257 = 2056.
        let cfg = BroadcastConfig {
            blocks: 8,
            pages: 1,
            page_size: 16384,
            window: 1,
            ..tiny(LogicalRect::new(0, 0, 1, 2), true, Check::None)
        };
        let b = bound(cfg.clone());
        assert_eq!(b.cycles, 3341);
        assert_eq!(b.binding.to_string(), "link NoC0 (1,0)->(1,1)");
        // With checking, 8 x 4096 words at 6 cycles each bind.
        let b = bound(BroadcastConfig {
            check: Check::Full,
            ..cfg
        });
        assert_eq!(b.cycles, 8 * 4096 * 6);
        assert_eq!(b.binding.to_string(), "compute (0,0)");
    }

    #[test]
    fn receivers_send_at_least_one_marker_per_window_of_blocks_and_the_last() {
        let k = Protocol::Komorebi;
        assert_eq!(least_markers(k, 0, 2), 1);
        assert_eq!(least_markers(k, 1, 1), 1);
        assert_eq!(least_markers(k, 2, 1), 2);
        assert_eq!(least_markers(k, 16, 2), 8);
        assert_eq!(least_markers(k, 17, 2), 9);
        assert_eq!(least_markers(k, 5, 8), 1);
    }

    #[test]
    fn handshake_receivers_send_one_ready_word_per_block_whatever_the_window() {
        let h = Protocol::Handshake;
        assert_eq!(least_markers(h, 0, 2), 1);
        assert_eq!(least_markers(h, 1, 1), 1);
        assert_eq!(least_markers(h, 16, 2), 16);
        assert_eq!(least_markers(h, 17, 8), 17);
    }

    #[test]
    fn a_handshake_job_prices_a_ready_word_per_block_where_komorebi_prices_a_marker_per_window() {
        // A along row 0: sender (0,0) at NoC0 (1,2), receiver (1,0) at (2,2); 8 blocks of one
        // 64-byte page, window 8. The receiver's NIU0 write pipeline sends komorebi's one
        // marker (24 cycles: max(write_issue_floor 24, 2 flits)) or the handshake's 8 ready
        // words (8 x 24 = 192); neither binds, so the two bounds are the same.
        let cfg = BroadcastConfig {
            blocks: 8,
            pages: 1,
            page_size: 64,
            window: 8,
            ..tiny(LogicalRect::new(0, 0, 2, 1), true, Check::None)
        };
        let handshake = BroadcastConfig {
            protocol: Protocol::Handshake,
            ..cfg.clone()
        };
        let (k, h) = (bound(cfg.clone()), bound(handshake.clone()));
        assert_eq!(k, h);
        assert_ne!(h.binding.to_string(), "NIU0 writes of (1,0)");
        let geometry = crate::chip::blackhole(0x3000).unwrap();
        let receiver = Resource::Niu {
            noc: 0,
            core: LogicalXy::new(1, 0),
            pipe: NiuPipe::Writes,
        };
        let niu = |cfg: &BroadcastConfig| {
            let plan = BroadcastPlan::per_job(cfg, &geometry).unwrap();
            plan.load_without_dram(&Timing::default(), true)
                .cycles_of(receiver)
        };
        assert_eq!(niu(&cfg), 24);
        assert_eq!(niu(&handshake), 8 * 24);
    }

    #[test]
    fn transfers_split_into_packets_of_at_most_16_kib() {
        let t = Timing::default();
        assert_eq!(packets(4, &t).collect::<Vec<_>>(), vec![4]);
        assert_eq!(packets(16384, &t).collect::<Vec<_>>(), vec![16384]);
        assert_eq!(
            packets(40960, &t).collect::<Vec<_>>(),
            vec![16384, 16384, 8192]
        );
        assert_eq!(packets(0, &t).count(), 0);
    }

    #[test]
    fn resources_are_named_as_the_summary_prints_them() {
        let core = LogicalXy::new(1, 2);
        let names = [
            (Resource::DramBank(5), "DRAM bank 5"),
            (Resource::Dram(8), "DRAM (8 banks together)"),
            (Resource::Dram(7), "DRAM (7 banks together)"),
            (
                Resource::Link {
                    noc: 1,
                    from: (3, 2),
                    to: (4, 2),
                },
                "link NoC1 (3,2)->(4,2)",
            ),
            (
                Resource::Niu {
                    noc: 0,
                    core,
                    pipe: NiuPipe::Reads,
                },
                "NIU0 reads of (1,2)",
            ),
            (
                Resource::Niu {
                    noc: 1,
                    core,
                    pipe: NiuPipe::Writes,
                },
                "NIU1 writes of (1,2)",
            ),
            (
                Resource::Eject { noc: 1, core },
                "ejection port NoC1 of (1,2)",
            ),
            (Resource::Compute(core), "compute (1,2)"),
        ];
        for (r, name) in names {
            assert_eq!(r.to_string(), name);
        }
    }
}
