//! The timing model against the measured Blackhole figures of `shared/design/blackhole-perf.md`
//! (tt-metal's data-movement tests): every pattern runs on the simulator and must land within
//! 15% of the published number. Times are virtual cycles, so these are exact, repeatable checks
//! of the model, not wall-clock measurements.

mod common;

use common::*;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{NocAddr, Rect, Role};
use komorebi_sim::*;

/// What one kernel measures: cycles from its first issue to its barrier.
fn measure<F, Fut>(sim: &mut Sim, tile: (u8, u8), kernel: Role, body: F) -> u64
where
    F: FnOnce(SimNoc, SimCtrl, SimPause) -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    set_limit(sim, tile, 1 << 40);
    let out = log();
    let o = out.clone();
    sim.spawn(tile, kernel, move |env| async move {
        let (noc, mut ctrl, pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        use komorebi_hal::ControlBlock;
        let t0 = ctrl.now();
        let mut ctrl2 = ctrl.clone();
        body(noc, ctrl, pause).await;
        o.borrow_mut().push(ctrl2.now() - t0);
    })
    .unwrap();
    assert_eq!(sim.run(u64::MAX), RunOutcome::Quiescent);
    out.borrow()[0]
}

fn within(name: &str, got: f64, published: f64) {
    let err = (got - published) / published;
    println!(
        "{name}: simulated {got:.1}, published {published:.1} ({:+.1}%)",
        err * 100.0
    );
    assert!(
        err.abs() <= 0.15,
        "{name}: simulated {got:.1}, published {published:.1} ({:+.1}%)",
        err * 100.0
    );
}

async fn barrier(noc: &mut SimNoc, ctrl: &mut SimCtrl, pause: &mut SimPause, acked: bool) {
    wait(ctrl, pause, |_| {
        let r = if acked {
            noc.writes_acked()
        } else {
            noc.reads_done()
        };
        r.map_err(|e| e.to_string())
    })
    .await
    .unwrap();
}

fn writes(to: (u8, u8), size: u32, count: u32) -> u64 {
    let mut s = sim();
    measure(
        &mut s,
        (2, 4),
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            for _ in 0..count {
                noc.write(l1(0x2_0000), at(to, 0x4_0000), size, WriteMode::ORDERED)
                    .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, true).await;
        },
    )
}

fn reads(from: (u8, u8), size: u32, count: u32) -> u64 {
    let mut s = sim();
    measure(
        &mut s,
        (2, 4),
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            for _ in 0..count {
                noc.read(NocAddr::l1(xy(from), l1(0x2_0000)), l1(0x4_0000), size)
                    .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, false).await;
        },
    )
}

#[test]
fn single_transfer_latencies() {
    // (2,4) -> (2,5) is the next core on the same axis; (3,5) the diagonal neighbour.
    within(
        "write 64 B, same-axis neighbour",
        writes((2, 5), 64, 1) as f64,
        207.0,
    );
    within(
        "write 64 B, diagonal neighbour",
        writes((3, 5), 64, 1) as f64,
        360.0,
    );
    within("write 64 B, loopback", writes((2, 4), 64, 1) as f64, 107.0);
    within(
        "read 64 B, same-axis neighbour",
        reads((2, 5), 64, 1) as f64,
        227.0,
    );
    within(
        "read 64 B, diagonal neighbour",
        reads((3, 5), 64, 1) as f64,
        373.0,
    );
}

#[test]
fn back_to_back_unicast_throughput() {
    within(
        "256 diagonal writes of 64 B",
        writes((3, 5), 64, 256) as f64,
        6226.0,
    );
    within(
        "256 diagonal writes of 2 KiB",
        writes((3, 5), 2048, 256) as f64,
        9071.0,
    );
    within(
        "256 diagonal writes of 16 KiB",
        writes((3, 5), 16384, 256) as f64,
        67724.0,
    );
    within(
        "256 diagonal reads of 64 B",
        reads((3, 5), 64, 256) as f64,
        9300.0,
    );
    within(
        "256 diagonal reads of 64 KiB",
        reads((3, 5), 65536, 256) as f64,
        272_294.0,
    );
}

#[test]
fn dram_latency_and_bandwidth() {
    // Bank 1's port 2 is NoC0 (0, 3): same row as the reader at (1, 3).
    let mut s = sim();
    let dram = NocAddr::new(xy((0, 3)), 0).unwrap();
    let read = measure(
        &mut s,
        (1, 3),
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            noc.read(dram, l1(0x4_0000), 64).unwrap();
            barrier(&mut noc, &mut ctrl, &mut pause, false).await;
        },
    );
    within("DRAM read 64 B", read as f64, 486.0);
    let mut s = sim();
    let write = measure(
        &mut s,
        (1, 3),
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            noc.write(l1(0x4_0000), dram, 64, WriteMode::ORDERED)
                .unwrap();
            barrier(&mut noc, &mut ctrl, &mut pause, true).await;
        },
    );
    within("DRAM write 64 B", write as f64, 399.0);
    // One core reading all banks round robin, 4 KiB reads.
    let mut s = sim();
    let ports: Vec<(u8, u8)> = blackhole_pac::grid::DRAM_WORKER_PORT.to_vec();
    let all = measure(
        &mut s,
        (1, 3),
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            for i in 0..256 {
                let p = ports[i % 8];
                noc.read(NocAddr::new(xy(p), 0).unwrap(), l1(0x4_0000), 4096)
                    .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, false).await;
        },
    );
    within(
        "one core, all banks round robin, B/cycle",
        256.0 * 4096.0 / all as f64,
        59.3,
    );
}

#[test]
fn dram_aggregate_bandwidth_with_one_reader_per_bank() {
    // Eight readers, each next to its bank (same row), 16 KiB reads.
    let readers = [
        (1, 0, 11),
        (1, 1, 2),
        (1, 2, 4),
        (1, 3, 7),
        (11, 4, 11),
        (11, 5, 2),
        (11, 6, 4),
        (11, 7, 7),
    ];
    let mut s = sim();
    let bytes = 64 * 16384u64;
    let out = log();
    for &(x, bank, y) in &readers {
        let port = blackhole_pac::grid::DRAM_PORTS[bank]
            .iter()
            .copied()
            .find(|p| p.1 == y)
            .unwrap();
        set_limit(&mut s, (x, y), 1 << 40);
        let o = out.clone();
        s.spawn((x, y), Role::Reader, move |env| async move {
            use komorebi_hal::ControlBlock;
            let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
            let t0 = ctrl.now();
            for i in 0..64u64 {
                noc.read(
                    NocAddr::new(xy(port), i * 16384).unwrap(),
                    l1(0x4_0000),
                    16384,
                )
                .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, false).await;
            o.borrow_mut().push(ctrl.now() - t0);
        })
        .unwrap();
    }
    s.run(u64::MAX);
    let slowest = *out.borrow().iter().max().unwrap();
    let per_core = bytes as f64 / slowest as f64;
    within("8 readers, one per bank: B/cycle per core", per_core, 46.3);
    within(
        "8 readers, one per bank: B/cycle total",
        8.0 * per_core,
        371.0,
    );
}

fn multicasts(sender: (u8, u8), start: (u8, u8), end: (u8, u8), size: u32, count: u32) -> u64 {
    let mut s = sim();
    measure(
        &mut s,
        sender,
        Role::Reader,
        move |mut noc, mut ctrl, mut pause| async move {
            let rect = Rect::new(xy(start), xy(end)).unwrap();
            for _ in 0..count {
                noc.multicast(l1(0x2_0000), rect, l1(0x4_0000), size, WriteMode::ORDERED)
                    .unwrap();
            }
            barrier(&mut noc, &mut ctrl, &mut pause, true).await;
        },
    )
}

#[test]
fn unlinked_multicast_per_packet_cost() {
    let per = |c: u64| c as f64 / 256.0;
    // "lb": sender inside the rectangle (at its corner); "no-lb": sender just east of it.
    within(
        "2x2 lb, 64 B",
        per(multicasts((2, 4), (2, 4), (3, 5), 64, 256)),
        40.4,
    );
    within(
        "3x3 lb, 64 B",
        per(multicasts((2, 4), (2, 4), (4, 6), 64, 256)),
        72.4,
    );
    within(
        "2x2 no-lb, 64 B",
        per(multicasts((4, 4), (2, 4), (3, 5), 64, 256)),
        278.3,
    );
    within(
        "5x5 no-lb, 64 B",
        per(multicasts((6, 4), (1, 4), (5, 8), 64, 256)),
        328.3,
    );
    let bw = |c: u64| 256.0 * 65536.0 / c as f64;
    within(
        "2x2 lb, 64 KiB, B/cycle",
        bw(multicasts((2, 4), (2, 4), (3, 5), 65536, 256)),
        53.1,
    );
    within(
        "3x3 lb, 64 KiB, B/cycle",
        bw(multicasts((2, 4), (2, 4), (4, 6), 65536, 256)),
        47.6,
    );
}
