//! The timing model's parameters, in AICLK cycles, with defaults calibrated against the
//! measured Blackhole figures of tt-metal's data-movement tests, which docs/calibration.md lists
//! with their sources. `tests/calibration.rs` runs each measured pattern on the simulator and checks it
//! lands within 15% of the published figure.
//!
//! How the parts combine (a unicast write of `F` flits over `H` router hops, acked over `H'`):
//!
//! ```text
//! depart  = max(issue time, NIU free) + issue_latency
//! arrive  = depart + niu_hop + per link: max(t, class free) + router_hop ... + niu_hop + (F - 1)
//!           (each link is asked for when the head reaches it; the tail follows, `link`)
//! ack     = arrive + ack_turnaround + niu_hop + router_hop * H' + niu_hop, then one cycle of
//!           the sender's ejection port
//! NIU free after depart: max(write_issue_floor, F)            (reads: read_issue_floor; reads
//!           and writes leave from separate command buffers, each its own pipeline, `niu`)
//! multicast NIU occupancy: reserve_base + reserve_per_hop * H + F   (the path reserved per
//!           packet; a linked run's later packets: max(write_issue_floor, F))
//! ```
//!
//! `reserve_base` and `reserve_per_hop` are the least-squares fit of tt-metal's unlinked
//! multicast table (docs/calibration.md, "Multicast"); `H` counts hops to the farthest destination along the
//! route, torus wrap included. Everything else is a hardware figure (router and NIU hops, flit
//! size, DRAM bandwidth) or fit to one latency measurement each (issue and turnaround latencies,
//! DRAM latencies).
//!
//! # What the native kernels are charged: tt-metal's costs, or the firmware's
//!
//! The native kernels run the protocol's code for free and are charged per HAL call
//! (`kernel_issue_cycles` a NoC command, `kernel_call_cycles` any other call of a
//! data-movement kernel, `compute_call_cycles` any other call of compute, the circular
//! buffers' counters included) and per word copied or checked (`compute_read_word_cycles`,
//! `compute_scan_word_cycles`). [`KernelCosts`] chooses the per-call charges:
//!
//! - [`KernelCosts::TtMetal`] (the default): 8 cycles a NoC command, 1 any other call, the
//!   cost of tt-metal's lean data-movement kernels, whose measured figures the model is
//!   calibrated against (`tests/calibration.rs` issues their patterns back to back with these
//!   charges). The issue's speed targets for the firmware are stated against these.
//! - [`KernelCosts::Firmware`]: what each call costs in komorebi's firmware, measured, so that a
//!   native run predicts a firmware run (`--kernel-costs firmware`).
//!
//! The firmware's costs, from PC traces of the 03 default (`komorebi broadcast --device
//! pcie-sim --exec firmware --check none`) over 100,000 cycles of steady state (cycles 100,000
//! to 200,000), commit c448c57, 2026-12-05, pipelined cost rule with overlapping loads:
//!
//! | call | where it was measured | firmware | `TtMetal` | `Firmware` |
//! |---|---|---|---|---|
//! | a NoC command | the column sender (writer of (6, 11)): 224 page reads in 24,616 cycles (`read_block` and `issue_pages`: 110 each) and 112 multicasts in 8,288 (74 each) | 98 | 8 | 98 |
//! | another call of a data-movement kernel | a receiver (writer of (2, 3)): 343 rounds of `arrive`'s wait in 70,503 cycles (marker pump, condition, wait loop, clock), 205 a round of four calls (compute's popped count, the VALID word, the stop flag, the clock) | 51 | 1 | 51 |
//! | another call of compute | compute of (6, 11): 1,702 rounds of its wait for pages in 65,685 cycles, 38.6 a round of three calls (pages ready, the stop flag, the clock) | 12.9 | 1 | 13 |
//! | a word compute checks | `check_page`'s loop (`compute_scan_word_cycles` below) | 5.94 | 6 | 6 |
//!
//! The firmware's other code (decoding a command's program, some 34 cycles a word of the
//! command, the protocol's bookkeeping between calls) has no call of its own; the command's
//! words are loaded one call each, which stands for their decoding too. How far a native run
//! with the firmware's costs is from the firmware run is tested on five shapes in both check
//! modes (`tests/firmware_exec.rs`) and recorded in docs/decisions.md (D41).
//!
//! Leaf module: imports nothing of the crate.

/// All timing parameters. `Timing::default()` is the calibrated Blackhole model.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    /// AICLK in MHz (the NoC runs in the same clock domain).
    pub aiclk_mhz: u32,
    /// Bytes per flit.
    pub flit_bytes: u32,
    /// Largest NoC packet payload; longer transfers are split.
    pub max_packet_bytes: u32,
    /// Cycles per router-to-router hop (ISA: 9).
    pub router_hop: u64,
    /// Cycles NIU <-> router (ISA: about 5).
    pub niu_hop: u64,
    /// Cycles from programming a command buffer to the header leaving the NIU.
    pub issue_latency: u64,
    /// Cycles from a write committing at its destination to its ack leaving.
    pub ack_turnaround: u64,
    /// Cycles from a read request arriving at an L1 to the response leaving.
    pub read_turnaround: u64,
    /// Least cycles an NIU spends per write command (measured: ~24).
    pub write_issue_floor: u64,
    /// Least cycles an NIU spends per read command (measured: ~36).
    pub read_issue_floor: u64,
    /// Fixed part of a multicast's path reservation (fit: 8.5).
    pub reserve_base: f64,
    /// Path reservation per hop to the farthest destination (fit: 15.9).
    pub reserve_per_hop: f64,
    /// Extra cycles a DRAM read spends in the bank beyond an L1 read: fit so that tt-metal's
    /// single 64 B read of bank 0 by core (0, 0) on NoC1 (29 router hops there and back) takes
    /// its measured 486 cycles (the model gives 481: the fit predates later changes to the path).
    pub dram_read_latency: u64,
    /// Extra cycles a DRAM write spends in the bank beyond an L1 write: fit to the same test's
    /// single 64 B write on NoC0 (29 hops with the ack), 399 cycles.
    pub dram_write_latency: u64,
    /// One bank's bandwidth, bytes per cycle: 512 GB/s over 8 banks = 64 GB/s = 47.4 B/cycle
    /// at 1.35 GHz. The chip's aggregate ceiling is exactly the sum of the banks' (7 x 64 GB/s
    /// on a p100 too), so it is modelled per bank: a separate aggregate resource never binds.
    pub dram_bank_bytes_per_cycle: f64,
    /// A request to the same row of this many bytes as its bank's previous request runs at half
    /// the bank's rate. tt-metal's estimator measures one core reading one address of one bank
    /// again and again at 21-24 B/cycle (2-16 KiB reads: half of 47.4), while readers of
    /// consecutive pages get the whole bank (46.3) and so does a lone 16 KiB read (186 GB/s
    /// over 8 banks with one read in flight). A GDDR6 row (page) of a x16 channel is 2 KiB
    /// (JEDEC JESD250); back-to-back column accesses within one bank group wait tCCD_L rather
    /// than tCCD_S, which is the likely cause; the controller's address map is not published.
    pub dram_row_bytes: u32,
    /// Cycles a kernel spends programming a NoC command (MMIO stores).
    pub kernel_issue_cycles: u64,
    /// Cycles a data-movement kernel spends on any other HAL call (a register or L1 word
    /// access).
    pub kernel_call_cycles: u64,
    /// Cycles a compute kernel spends on any HAL call (its circular buffers' counters, the
    /// control block, the clock): the same as `kernel_call_cycles` with tt-metal's costs, less
    /// with the firmware's, whose compute rounds are tighter ([`KernelCosts`]).
    pub compute_call_cycles: u64,
    /// Cycles a compute kernel spends per 32-bit word it copies out of a circular-buffer page
    /// with `read_page`: 21, the word-copy loop of the firmware's `SiliconCb::read_page` (an L1
    /// load, 8, a store to local RAM and the loop), 20.5 a word in the firmware profile of
    /// 2026-12-04 (at commit cfb991f, when compute's check still copied every page), under the
    /// blocking cost rule of that date: no image copies pages any more, so it was not measured
    /// again under the pipelined rule.
    pub compute_read_word_cycles: u64,
    /// Cycles a compute kernel spends per 32-bit word of a page it scans (`scan_page`), the
    /// work on each word included: 6, what the compute firmware's check spends, measured with
    /// the firmware profiler under the baby-core cost rule (`riscv::Cost::default()`: branch
    /// prediction, pipelined, loads overlapping): `komorebi broadcast --device pcie-sim --exec
    /// firmware --rect 0,0,4,4 --blocks 4 --pages 2 --window 2 --jobs 2 --check full --profile
    /// F` (2026-12-05) charges compute's `check_page` 1,556,608 cycles for 262,144 words: 5.94
    /// a word, of which the four-word loop of `words_follow` 5.83 (per word an L1 load, whose
    /// 8 cycles overlap the loop's other loads, an xor, an or, an add and a quarter of the
    /// loop's counter and branch), per-page work 0.1. While the model held the Load/Store Unit
    /// for each L1 load until it was back (until 2026-12-05, decisions D37) it was 10.45; under
    /// the blocking rule 12.0 (2026-12-04); before the pattern became affine in the word 57.5
    /// (a copy out of L1, 20.5, then a hash per word). A native kernel's own arithmetic costs
    /// nothing else, so this is where the compute kernel's work on the data it receives is
    /// charged; 0 models a compute kernel whose work is free.
    pub compute_scan_word_cycles: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            aiclk_mhz: 1350,
            flit_bytes: 64,
            max_packet_bytes: 16384,
            router_hop: 9,
            niu_hop: 5,
            issue_latency: 40,
            ack_turnaround: 40,
            read_turnaround: 58,
            write_issue_floor: 24,
            read_issue_floor: 36,
            reserve_base: 8.5,
            reserve_per_hop: 15.9,
            dram_read_latency: 93,
            dram_write_latency: 24,
            dram_bank_bytes_per_cycle: 512.0e9 / 8.0 / 1.35e9,
            dram_row_bytes: 2048,
            kernel_issue_cycles: 8,
            kernel_call_cycles: 1,
            compute_call_cycles: 1,
            compute_read_word_cycles: 21,
            compute_scan_word_cycles: 6,
        }
    }
}

/// What the simulator charges its native kernels per HAL call (the module docs have the
/// figures and where the firmware's were measured). The firmware's own cores are charged per
/// instruction whatever this says.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum KernelCosts {
    /// tt-metal's lean kernels: 8 cycles a NoC command, 1 any other call (the default, what the
    /// timing model is calibrated with).
    #[default]
    TtMetal,
    /// komorebi's firmware as profiled: 98 cycles a NoC command, 51 any other call of a
    /// data-movement kernel, 13 of compute.
    Firmware,
}

impl KernelCosts {
    /// Every choice, as `--kernel-costs` names them.
    pub const ALL: [Self; 2] = [Self::TtMetal, Self::Firmware];

    /// The name `--kernel-costs` and the JSON give it: `tt-metal` or `firmware`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::TtMetal => "tt-metal",
            Self::Firmware => "firmware",
        }
    }

    /// `(kernel_issue_cycles, kernel_call_cycles, compute_call_cycles)`.
    const fn charges(self) -> (u64, u64, u64) {
        match self {
            Self::TtMetal => (8, 1, 1),
            Self::Firmware => (98, 51, 13),
        }
    }
}

impl std::fmt::Display for KernelCosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for KernelCosts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| {
                format!("'{s}' is not a --kernel-costs choice (allowed: tt-metal, firmware)")
            })
    }
}

/// The most cycles any one latency, cost, floor or delay of the model may be (some 13 minutes
/// at 1.35 GHz): with simulated time kept below [`TIME_LIMIT`], sums of a few of them never
/// overflow 64 bits.
pub const MAX_DELAY: u64 = 1 << 40;

/// The simulated time no run passes (some 108 years at 1.35 GHz): [`crate::Sim::run`] and
/// [`crate::Sim::advance`] stop there.
pub const TIME_LIMIT: u64 = 1 << 62;

impl Timing {
    /// This timing with the native kernels charged `costs` per call; everything else is kept.
    pub fn with_kernel_costs(self, costs: KernelCosts) -> Self {
        let (issue, call, compute) = costs.charges();
        Self {
            kernel_issue_cycles: issue,
            kernel_call_cycles: call,
            compute_call_cycles: compute,
            ..self
        }
    }

    /// Wormhole B0's timing, calibrated (2026-12-07) against the Wormhole rows of tt-metal's NoC
    /// estimator table, the rows with no `arch` key (docs/calibration.md, "Wormhole B0";
    /// `tests/calibration_wormhole.rs` holds 83 of them, each to its own bound). Wormhole's own
    /// AICLK (1,000 MHz, tt-umd `AICLK_BUSY_VAL`), flit (32 bytes, tt-metal Wormhole
    /// `NOC_WORD_BYTES`) and packet (8 KiB, `NOC_MAX_BURST_SIZE`), and DRAM rate (288 GB/s over
    /// its 6 banks, Tenstorrent's n150 figure: 48 bytes a cycle a bank). Set from the table: the
    /// write and read turnarounds (25 and 28, from the 64 B latencies' intercept), the issue
    /// floors (22 a write, 25 a read, from back-to-back 64 B transfers) and the DRAM latencies
    /// (85 a read, 128 a write, from one 64 B access of channel 0). Kept at Blackhole's values:
    /// the router and NIU hops (9 and 5, which tt-isa-documentation gives for Wormhole too and
    /// the table's same-axis and diagonal rows confirm), `issue_latency` (the table gives only
    /// its sums with the turnarounds), the multicast reservation (Blackhole's fit is within 6%
    /// of every Wormhole multicast row but the 5 x 5 ones) and the kernel and compute costs.
    /// Not met: reads of 1 KiB and more stream 10% faster in the model than on the chip, whose
    /// reads move 8/9 of a flit a cycle.
    pub fn wormhole() -> Self {
        Self {
            aiclk_mhz: 1000,
            flit_bytes: 32,
            max_packet_bytes: 8192,
            ack_turnaround: 25,
            read_turnaround: 28,
            write_issue_floor: 22,
            read_issue_floor: 25,
            dram_read_latency: 85,
            dram_write_latency: 128,
            dram_bank_bytes_per_cycle: 288.0e9 / 6.0 / 1.0e9,
            ..Self::default()
        }
    }

    /// Flits of a packet carrying `bytes` of payload: one header flit plus the data flits.
    pub fn flits(&self, bytes: u32) -> u64 {
        1 + bytes.div_ceil(self.flit_bytes) as u64
    }

    /// Microseconds of `cycles` at AICLK.
    pub fn micros(&self, cycles: u64) -> f64 {
        cycles as f64 / self.aiclk_mhz as f64
    }

    /// Cycles of `ns` nanoseconds at AICLK, rounded up.
    pub fn cycles_of_ns(&self, ns: u64) -> u64 {
        let cycles = (ns as u128 * self.aiclk_mhz as u128).div_ceil(1000);
        u64::try_from(cycles).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_costs_change_only_the_per_call_charges() {
        let t = Timing::default();
        assert_eq!(t.with_kernel_costs(KernelCosts::TtMetal), t);
        let f = t.with_kernel_costs(KernelCosts::Firmware);
        assert_eq!(
            (
                f.kernel_issue_cycles,
                f.kernel_call_cycles,
                f.compute_call_cycles
            ),
            (98, 51, 13)
        );
        let back = Timing {
            kernel_issue_cycles: t.kernel_issue_cycles,
            kernel_call_cycles: t.kernel_call_cycles,
            compute_call_cycles: t.compute_call_cycles,
            ..f
        };
        assert_eq!(back, t);
        // Wormhole's timing keeps its own clock and flits.
        let w = Timing::wormhole().with_kernel_costs(KernelCosts::Firmware);
        assert_eq!(
            (w.aiclk_mhz, w.flit_bytes, w.kernel_call_cycles),
            (1000, 32, 51)
        );
    }

    #[test]
    fn kernel_costs_parse_their_names_and_refuse_others() {
        for k in KernelCosts::ALL {
            assert_eq!(k.name().parse::<KernelCosts>(), Ok(k));
            assert_eq!(k.to_string(), k.name());
        }
        let e = "fast".parse::<KernelCosts>().unwrap_err();
        assert!(
            e.contains("'fast'") && e.contains("allowed: tt-metal, firmware"),
            "{e}"
        );
    }
}
