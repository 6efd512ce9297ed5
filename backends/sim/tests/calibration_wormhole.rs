//! The Wormhole B0 timing model (`Timing::wormhole()`) against tt-metal's NoC estimator table,
//! `tests/tt_metal/tt_metal/data_movement/noc_estimator/noc_latencies.yaml` in
//! `tenstorrent/tt-metal` (commit 1fc91107), the rows with no `arch` key: tt-metal's loader
//! (`tt_metal/impl/experimental/noc_estimator/yaml_loader.cpp`, commit 1aed94cc) reads a
//! missing key as `DEFAULT_ARCH`, which `common/types.hpp` beside the table (commit 795d9149)
//! defines as `WORMHOLE_B0` (`arch: 3` is Blackhole). Each pattern runs on the simulated
//! Wormhole in the shape tt-metal measured it; docs/calibration.md, "Wormhole B0", has every
//! figure and where it comes from.
//!
//! Each figure has its own tolerance. The rows the parameters were set from (the 64 B
//! single-transfer latencies, the 256-transfer 64 B rates, the 64 B DRAM latencies) are held to
//! 2%; every other row is held out (no parameter was set from it) and held to 15%, as the
//! Blackhole rows are, or tighter where the model lands closer, so that a change that moves a row
//! is seen. docs/calibration.md ("Not met, and not checked") says why the model misses the rows it
//! misses by more than 5%.
//!
//! Shapes (tt-metal `noc_estimator_tests/test_noc_estimator.cpp`): the sender is logical core
//! (0, 0), NoC0 (1, 1); "same-axis" is logical (0, 1), "diagonal" (1, 1). Writes on NoC0
//! (RISCV_0), reads on NoC1 (RISCV_1's default). Every transfer is issued back to back, then one
//! barrier; the figure is the kernel's time from its first issue to the barrier's end. The
//! grid is taken unharvested: the measured part's harvested row is not published, and no shape
//! here reaches past logical row 7.
//!
//! `CALIBRATION_REPORT=1 cargo test -p komorebi-sim --test calibration_wormhole -- --nocapture
//! --test-threads 1` prints every figure without stopping at the first one outside its bound.

mod common;

use common::*;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{ControlBlock, NocAddr, Role};
use komorebi_sim::route::Grid;
use komorebi_sim::*;
use wormhole_pac::grid::{TENSIX_X, TENSIX_Y};
use wormhole_pac::harvest::HarvestMask;

/// NoC0 coordinates of logical core `(x, y)` of the unharvested Wormhole.
fn core(x: u8, y: u8) -> (u8, u8) {
    (TENSIX_X[x as usize], TENSIX_Y[y as usize])
}

/// DRAM channel 0's port for worker cores (tt-metal `wormhole_b0_80_arch.yaml`,
/// `dram_preferred_worker_endpoint`: 0-11), NoC0 coordinates; the same tile on both NoCs.
const DRAM0: (u8, u8) = (0, 11);

fn chip() -> Sim {
    Sim::new(SimConfig {
        wormhole: Some(HarvestMask::NONE),
        timing: Timing::wormhole(),
        ..SimConfig::default()
    })
}

/// Runs `body` as the kernel on `noc` of `tile` (NoC0) and returns its cycles from its first
/// issue to its end.
fn measure<F, Fut>(tile: (u8, u8), noc: u8, body: F) -> u64
where
    F: FnOnce(SimNoc, SimCtrl, SimPause) -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let mut sim = chip();
    set_limit(&mut sim, tile, 1 << 40);
    let out = log();
    let o = out.clone();
    let role = if noc == 0 { Role::Reader } else { Role::Writer };
    sim.spawn(tile, role, move |env| async move {
        let (noc, mut ctrl, pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let t0 = ctrl.now();
        let mut ctrl2 = ctrl.clone();
        body(noc, ctrl, pause).await;
        o.borrow_mut().push(ctrl2.now() - t0);
    })
    .unwrap();
    assert_eq!(sim.run(u64::MAX), RunOutcome::Quiescent);
    out.borrow()[0]
}

/// `count` writes of `size` bytes from logical (0, 0) to NoC0 `to` at `addr`, one barrier.
fn writes_at(to: (u8, u8), addr: u64, size: u32, count: u32) -> u64 {
    measure(
        core(0, 0),
        0,
        move |mut noc, mut ctrl, mut pause| async move {
            for _ in 0..count {
                let dst = NocAddr::new(xy(to), addr).unwrap();
                noc.write(l1(0x2_0000), dst, size, WriteMode::ORDERED)
                    .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, true).await;
        },
    )
}

/// `count` reads of `size` bytes into logical (0, 0) from NoC0 `from` at `addr`, on NoC1.
fn reads_at(from: (u8, u8), addr: u64, size: u32, count: u32) -> u64 {
    let from = Grid::WORMHOLE.raw(1, from);
    measure(
        core(0, 0),
        1,
        move |mut noc, mut ctrl, mut pause| async move {
            for _ in 0..count {
                let src = NocAddr::new(xy(from), addr).unwrap();
                noc.read(src, l1(0x2_0000), size).unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, false).await;
        },
    )
}

fn writes(to: (u8, u8), size: u32, count: u32) -> f64 {
    writes_at(to, 0x2_0000, size, count) as f64
}

fn reads(from: (u8, u8), size: u32, count: u32) -> f64 {
    reads_at(from, 0x2_0000, size, count) as f64
}

/// One address of DRAM channel 0, as docs/calibration.md's Blackhole DRAM rows are run.
fn dram_writes(size: u32, count: u32) -> f64 {
    writes_at(DRAM0, 0, size, count) as f64
}

fn dram_reads(size: u32, count: u32) -> f64 {
    reads_at(DRAM0, 0, size, count) as f64
}

/// Checks every `(name, simulated, published, tolerance)`, printing all before failing.
fn check(rows: &[(&str, f64, f64, f64)]) {
    let mut outside = Vec::new();
    for &(name, got, published, tol) in rows {
        let err = (got - published) / published;
        let line = format!(
            "{name}: simulated {got:.1}, published {published:.1} ({:+.1}%, bound {:.0}%)",
            err * 100.0,
            tol * 100.0
        );
        println!("{line}");
        if err.abs() > tol {
            outside.push(line);
        }
    }
    if std::env::var_os("CALIBRATION_REPORT").is_none() {
        assert!(
            outside.is_empty(),
            "outside their bounds:\n{}",
            outside.join("\n")
        );
    }
}

/// Fit rows are held to 2%.
const FIT: f64 = 0.02;

#[test]
fn single_transfer_latencies() {
    let (sa, dg) = (core(0, 1), core(1, 1));
    check(&[
        // Fit: ack_turnaround and read_turnaround (router and NIU hops are the ISA's).
        ("write 64 B, same-axis", writes(sa, 64, 1), 206.0, FIT),
        ("write 64 B, diagonal", writes(dg, 64, 1), 296.0, FIT),
        ("read 64 B, same-axis", reads(sa, 64, 1), 205.0, FIT),
        ("read 64 B, diagonal", reads(dg, 64, 1), 293.0, FIT),
        // Held out.
        ("write 2 KiB, same-axis", writes(sa, 2048, 1), 278.0, 0.05),
        ("write 2 KiB, diagonal", writes(dg, 2048, 1), 369.0, 0.05),
        // A lone write of 8 or 16 KiB is measured slower than its flits (24.8 B/cycle past
        // the 64 B latency at 8 KiB, 31.6 only from 32 KiB on); the model streams it at 32.
        ("write 8 KiB, diagonal", writes(dg, 8192, 1), 624.0, 0.13),
        ("write 64 KiB, diagonal", writes(dg, 65536, 1), 2499.0, 0.08),
        ("read 2 KiB, diagonal", reads(dg, 2048, 1), 366.0, 0.05),
        ("read 8 KiB, diagonal", reads(dg, 8192, 1), 589.0, 0.08),
        // Reads stream at 8/9 of a flit a cycle on the chip (below); the model at one.
        ("read 64 KiB, diagonal", reads(dg, 65536, 1), 2597.0, 0.11),
    ]);
}

#[test]
fn back_to_back_unicast() {
    let (sa, dg) = (core(0, 1), core(1, 1));
    check(&[
        // Fit: write_issue_floor (22) and read_issue_floor (25).
        (
            "256 writes of 64 B, diagonal",
            writes(dg, 64, 256),
            5906.0,
            FIT,
        ),
        (
            "256 reads of 64 B, diagonal",
            reads(dg, 64, 256),
            6674.0,
            FIT,
        ),
        // Held out: other counts.
        ("4 writes of 64 B", writes(dg, 64, 4), 361.0, 0.03),
        ("16 writes of 64 B", writes(dg, 64, 16), 624.0, 0.03),
        ("64 writes of 64 B", writes(dg, 64, 64), 1682.0, 0.03),
        ("4 reads of 64 B", reads(dg, 64, 4), 359.0, 0.05),
        // The first reads of a run go out faster than the steady 25 cycles (19.6 a read over
        // 16); the model charges every read the floor.
        ("16 reads of 64 B", reads(dg, 64, 16), 587.0, 0.15),
        ("64 reads of 64 B", reads(dg, 64, 64), 1874.0, 0.03),
        (
            "256 writes of 64 B, same-axis",
            writes(sa, 64, 256),
            5819.0,
            0.03,
        ),
        (
            "256 reads of 64 B, same-axis",
            reads(sa, 64, 256),
            6578.0,
            0.03,
        ),
        // Held out: sizes, where the 32-byte flit sets the rate.
        ("256 writes of 1 KiB", writes(dg, 1024, 256), 8957.0, 0.04),
        ("256 writes of 2 KiB", writes(dg, 2048, 256), 17353.0, 0.04),
        (
            "256 writes of 16 KiB",
            writes(dg, 16384, 256),
            134948.0,
            0.04,
        ),
        (
            "256 writes of 64 KiB",
            writes(dg, 65536, 256),
            538626.0,
            0.04,
        ),
        // Reads of 1 KiB and more take 1.125 times their flits on the chip (8/9 of a flit a
        // cycle at every size from 1 to 64 KiB); the model has one rate for both directions.
        ("256 reads of 1 KiB", reads(dg, 1024, 256), 9778.0, 0.12),
        ("256 reads of 2 KiB", reads(dg, 2048, 256), 18811.0, 0.12),
        ("256 reads of 16 KiB", reads(dg, 16384, 256), 146398.0, 0.12),
        ("256 reads of 64 KiB", reads(dg, 65536, 256), 584644.0, 0.12),
    ]);
}

#[test]
fn dram_latency_and_one_bank_rate() {
    check(&[
        // Fit: dram_read_latency and dram_write_latency.
        ("DRAM read 64 B", dram_reads(64, 1), 381.0, FIT),
        ("DRAM write 64 B", dram_writes(64, 1), 426.0, FIT),
        // Held out. A lone 8 KiB access is slower on the chip than its flits and the bank (read)
        // and faster than the model's half-rate bank row (write).
        ("DRAM read 2 KiB", dram_reads(2048, 1), 470.0, 0.05),
        ("DRAM read 8 KiB", dram_reads(8192, 1), 893.0, 0.12),
        ("DRAM write 2 KiB", dram_writes(2048, 1), 511.0, 0.05),
        ("DRAM write 8 KiB", dram_writes(8192, 1), 756.0, 0.14),
        // Back to back, the model's DRAM is up to 7% slow over the first 16 transfers and 7 to
        // 11% fast from 64 on.
        ("4 DRAM reads of 64 B", dram_reads(64, 4), 441.0, 0.05),
        ("16 DRAM reads of 64 B", dram_reads(64, 16), 708.0, 0.08),
        ("64 DRAM reads of 64 B", dram_reads(64, 64), 2104.0, 0.08),
        ("256 DRAM reads of 64 B", dram_reads(64, 256), 7272.0, 0.08),
        ("4 DRAM writes of 128 B", dram_writes(128, 4), 484.0, 0.05),
        ("16 DRAM writes of 128 B", dram_writes(128, 16), 776.0, 0.05),
        (
            "64 DRAM writes of 128 B",
            dram_writes(128, 64),
            2017.0,
            0.11,
        ),
        (
            "256 DRAM writes of 128 B",
            dram_writes(128, 256),
            6784.0,
            0.12,
        ),
        // One bank re-read at one address: 22 B/cycle on the chip, the model's half rate
        // within a row of the 48 B/cycle bank 24.
        (
            "256 DRAM reads of 1 KiB",
            dram_reads(1024, 256),
            12102.0,
            0.08,
        ),
        (
            "256 DRAM reads of 4 KiB",
            dram_reads(4096, 256),
            47355.0,
            0.08,
        ),
        (
            "64 DRAM reads of 8 KiB",
            dram_reads(8192, 64),
            23938.0,
            0.08,
        ),
        (
            "256 DRAM writes of 2 KiB",
            dram_writes(2048, 256),
            24111.0,
            0.09,
        ),
        (
            "256 DRAM writes of 4 KiB",
            dram_writes(4096, 256),
            47988.0,
            0.09,
        ),
    ]);
    // Not checked: 64 B DRAM writes back to back (588, 1429, 4552 and 16968 cycles for 4, 16,
    // 64 and 256), 66 cycles a write in steady state against 25 for 128 B writes; the model
    // has no cost that grows as a write shrinks.
}

/// `count` multicasts of `size` bytes from `sender` to logical (0, 0) ..= (w - 1, h - 1).
fn multicasts(
    sender: (u8, u8),
    w: u8,
    h: u8,
    lb: bool,
    size: u32,
    count: u32,
    linked: bool,
) -> f64 {
    let (start, end) = (core(0, 0), core(w - 1, h - 1));
    measure(sender, 0, move |mut noc, mut ctrl, mut pause| async move {
        let kernel = (&mut noc, &mut ctrl, &mut pause);
        multicast_burst(kernel, (start, end), size, count, lb, linked).await;
    }) as f64
}

/// The estimator's one-to-all shapes on Wormhole (`sweep_one_to_all`): "lb" senders at the
/// rectangle's first core, inside it; "no-lb" senders at logical (w, 0), just east of its top
/// row. With the published figures: one 64 B multicast (cycles), unlinked and linked 256 x 64 B
/// (cycles a packet) and 256 x 64 KiB (B/cycle).
#[allow(clippy::type_complexity)]
const SHAPES: [(&str, u8, u8, bool, [f64; 5]); 7] = [
    ("2x2 lb", 2, 2, true, [323.0, 42.0, 26.6, 23.2, 30.1]),
    ("3x3 lb", 3, 3, true, [358.0, 73.1, 23.8, 23.4, 29.6]),
    ("5x5 lb", 5, 5, true, [470.0, 183.1, 17.6, 29.7, 27.7]),
    ("8x8 lb", 8, 8, true, [591.0, 279.2, 14.9, 69.0, 24.3]),
    ("2x2 no-lb", 2, 2, false, [450.0, 169.0, 19.1, 23.7, 31.0]),
    ("3x3 no-lb", 3, 3, false, [465.0, 183.1, 18.3, 23.8, 30.3]),
    ("5x5 no-lb", 5, 5, false, [538.0, 247.1, 16.0, 26.9, 30.1]),
];

#[test]
fn multicast_with_blackhole_s_reservation_fit() {
    // All held out: reserve_base and reserve_per_hop are Blackhole's fit, unchanged. The 5 x 5
    // rectangles, the only ones here that span the DRAM column (NoC0 x = 5), reserve slower
    // than the fit (about 19 cycles a hop against 15.9).
    let mut rows = Vec::new();
    for (name, w, h, lb, p) in SHAPES {
        let sender = if lb { core(0, 0) } else { core(w, 0) };
        let m = |size, count, linked| multicasts(sender, w, h, lb, size, count, linked);
        let bw = |cycles: f64| 256.0 * 65536.0 / cycles;
        let wide = if w == 5 { 0.15 } else { 0.06 };
        rows.push((format!("{name}, one of 64 B"), m(64, 1, false), p[0], 0.05));
        rows.push((
            format!("{name}, unlinked 64 B a packet"),
            m(64, 256, false) / 256.0,
            p[1],
            wide,
        ));
        rows.push((
            format!("{name}, unlinked 64 KiB B/cycle"),
            bw(m(65536, 256, false)),
            p[2],
            wide,
        ));
        rows.push((
            format!("{name}, linked 64 B a packet"),
            m(64, 256, true) / 256.0,
            p[3],
            0.03,
        ));
        rows.push((
            format!("{name}, linked 64 KiB B/cycle"),
            bw(m(65536, 256, true)),
            p[4],
            0.07,
        ));
    }
    let rows: Vec<(&str, f64, f64, f64)> = rows
        .iter()
        .map(|(n, g, p, t)| (n.as_str(), *g, *p, *t))
        .collect();
    check(&rows);
}

#[test]
fn wormhole_timing_is_calibrated_not_blackhole_s() {
    // The parameters set from the table differ from Blackhole's; the others are kept.
    let (w, b) = (Timing::wormhole(), Timing::default());
    assert_eq!(
        (
            w.ack_turnaround,
            w.read_turnaround,
            w.write_issue_floor,
            w.read_issue_floor
        ),
        (25, 28, 22, 25)
    );
    assert_eq!((w.dram_read_latency, w.dram_write_latency), (85, 128));
    assert_eq!(
        (
            w.router_hop,
            w.niu_hop,
            w.issue_latency,
            w.reserve_base,
            w.reserve_per_hop
        ),
        (
            b.router_hop,
            b.niu_hop,
            b.issue_latency,
            b.reserve_base,
            b.reserve_per_hop
        )
    );
}
