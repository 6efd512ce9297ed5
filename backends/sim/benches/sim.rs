//! Simulator speed: simulated flits per wall second and events per wall second, on a workload
//! shaped like the broadcast example (every column of the chip multicasting 8 KiB blocks to its
//! 9 other cores, with a VALID word after each block); and large transfers (issue 17's pattern:
//! one core writing 64 KiB 256 times to each of the 129 other cores of a 13 x 10 grid, 132,096
//! packets of 16 KiB), whose cost per packet must not depend on more than its route.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use komorebi_hal::Role;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{ControlBlock, L1Addr, NocAddr, Rect, Xy, wait_until};
use komorebi_sim::{Sim, SimConfig, Stats};

const BLOCKS: u32 = 32;

/// The tile's 64-bit wait limit at its most (both words: a limit the bench's waits would
/// reach would end them early, and the bench would time less work).
fn no_wait_limit(sim: &mut Sim, tile: (u8, u8)) {
    let control = sim.config().control;
    let at = control.base + control.wait_limit_offset;
    sim.write_l1_u32(tile, at, u32::MAX).unwrap();
    sim.write_l1_u32(tile, at + 4, u32::MAX).unwrap();
}

fn workload() -> Stats {
    let mut sim = Sim::new(SimConfig::default());
    let columns: Vec<u8> = sim.config().harvest.columns().noc0_x().to_vec();
    for &x in &columns {
        let tile = (x, 2);
        no_wait_limit(&mut sim, tile);
        sim.spawn(tile, Role::Reader, move |env| async move {
            let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
            let rect = Rect::new(Xy::new(x, 3).unwrap(), Xy::new(x, 11).unwrap()).unwrap();
            let slot = L1Addr::new(0x2_0000).unwrap();
            let valid = ctrl.addr(0x100).unwrap();
            for block in 0..BLOCKS {
                noc.multicast(slot, rect, slot, 8192, WriteMode::ORDERED)
                    .unwrap();
                ctrl.store(0x100, block + 1).unwrap();
                noc.multicast(valid, rect, valid, 4, WriteMode::ORDERED)
                    .unwrap();
                wait_until(&mut ctrl, &mut pause, |_| noc.writes_sent())
                    .await
                    .unwrap();
            }
            wait_until(&mut ctrl, &mut pause, |_| noc.writes_acked())
                .await
                .unwrap();
        })
        .unwrap();
    }
    sim.run(u64::MAX);
    sim.stats()
}

/// One core writes 64 KiB `count` times to each other core of the unharvested 13 x 10 grid
/// (NoC0 columns 1..=7 and 10..=15, rows 2..=11), then waits for every ack.
fn large_transfers(count: u32) -> Stats {
    let mut sim = Sim::new(SimConfig {
        harvest: blackhole_pac::harvest::HarvestMask::NONE,
        ..SimConfig::default()
    });
    let sender = (1u8, 2u8);
    no_wait_limit(&mut sim, sender);
    let grid: Vec<(u8, u8)> = (1..=7u8)
        .chain(10..=15)
        .flat_map(|x| (2..=11u8).map(move |y| (x, y)))
        .filter(|&t| t != sender)
        .collect();
    assert_eq!(grid.len(), 129);
    sim.spawn(sender, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let at = L1Addr::new(0x4_0000).unwrap();
        for &(x, y) in &grid {
            let dst = NocAddr::l1(Xy::new(x, y).unwrap(), at);
            for _ in 0..count {
                noc.write(at, dst, 65536, WriteMode::ORDERED).unwrap();
            }
        }
        wait_until(&mut ctrl, &mut pause, |_| noc.writes_acked())
            .await
            .unwrap();
    })
    .unwrap();
    sim.run(u64::MAX);
    sim.stats()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("large_transfers");
    g.sample_size(10);
    let stats = large_transfers(256);
    assert_eq!(stats.packets, 129 * 256 * 4);
    g.throughput(Throughput::Elements(stats.packets));
    g.bench_function("one_to_129_cores_256_x_64_KiB", |b| {
        b.iter(|| black_box(large_transfers(256)))
    });
    g.finish();

    let stats = workload();
    let mut g = c.benchmark_group("sim");
    g.sample_size(20);
    g.throughput(Throughput::Elements(stats.flits));
    g.bench_function("flits", |b| b.iter(|| black_box(workload())));
    g.throughput(Throughput::Elements(stats.events));
    g.bench_function("events", |b| b.iter(|| black_box(workload())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
