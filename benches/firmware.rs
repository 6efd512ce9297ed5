//! The firmware executed on the simulated card (`--device pcie-sim --exec firmware`): wall time
//! of the small 03 run (`--rect 0,0,4,4 --blocks 4 --pages 2 --window 2 --jobs 2`), and
//! simulated RISC-V instructions per second of host time over that run (printed once, from
//! the simulator's instruction count and one timed run). `cargo bench --bench firmware`;
//! builds the firmware first.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use komorebi::app::broadcast::{self, BroadcastConfig, DeviceChoice};
use komorebi::host::backend::{Exec, built_firmware};
use komorebi_hal::LogicalRect;

fn config() -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 4, 4),
        blocks: 4,
        pages: 2,
        window: 2,
        jobs: 2,
        device: DeviceChoice::PcieSim,
        exec: Exec::Firmware,
        firmware: Some(built_firmware().expect("the firmware builds")),
        ..BroadcastConfig::default()
    }
}

fn small_run(c: &mut Criterion) {
    let cfg = config();
    let start = Instant::now();
    let (summary, mut session) = broadcast::run_session(&cfg, |_| {}).expect("the run");
    let wall = start.elapsed();
    assert!(summary.ok, "{summary}");
    let stats = session
        .device()
        .simulator()
        .expect("pcie-sim is a simulator")
        .stats();
    // The wall time covers the session's opening and the firmware's load and boot too.
    println!(
        "firmware small run: {} instructions, {} simulated cycles, {:.2} s wall (open, load and \
         boot included): {:.1} M instructions/s",
        stats.instructions,
        summary.cycles,
        wall.as_secs_f64(),
        stats.instructions as f64 / wall.as_secs_f64() / 1e6
    );
    let mut group = c.benchmark_group("firmware");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("small 03 run (4x4, 4 blocks, 2 jobs)", |b| {
        b.iter(|| {
            // A run that gave up would time less work: every timed run must succeed.
            let run = broadcast::run(&cfg, |_| {}).expect("the run");
            assert!(run.ok, "{run}");
            run
        })
    });
    group.finish();
}

criterion_group!(benches, small_run);
criterion_main!(benches);
