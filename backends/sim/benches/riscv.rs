//! Speed of the RV32IM hart: simulated instructions per second of host time, on a loop that
//! mixes ALU work, an L1 load, a local-RAM store and load, a multiply and a taken branch, over
//! a flat RAM bus (every instruction fetched and validated against the decoded cache).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use komorebi_sim::riscv::bus::LOCAL_RAM_BASE;
use komorebi_sim::riscv::{Hart, HartConfig, RamBus, Stop};

/// Instructions of one run: 4 set-up + `ITERATIONS` x 10 in the loop + the `ecall`.
const ITERATIONS: u32 = 100_000;
const INSTRUCTIONS: u64 = 4 + 10 * ITERATIONS as u64 + 1;

/// The loop, hand-assembled (register numbers in the comments).
fn program() -> Vec<u32> {
    let i = |imm: i32, rs1: u32, f3: u32, rd: u32, op: u32| {
        ((imm as u32) & 0xFFF) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
    };
    let r = |f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32| {
        f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | 0x33
    };
    let sw = |rs2: u32, rs1: u32, imm: u32| {
        (imm >> 5) << 25 | rs2 << 20 | rs1 << 15 | 2 << 12 | (imm & 31) << 7 | 0x23
    };
    // bne x1, x0, -36: imm[12|10:5] = 1|111110, imm[4:1|11] = 1110|1.
    let bne_back = 0xFC00_9EE3;
    vec![
        (ITERATIONS >> 12) << 12 | 1 << 7 | 0x37, // lui x1, ITERATIONS >> 12
        i((ITERATIONS & 0xFFF) as i32, 1, 0, 1, 0x13), // addi x1, x1, low bits
        LOCAL_RAM_BASE | 5 << 7 | 0x37,           // lui x5, LOCAL_RAM_BASE
        i(0, 0, 0, 2, 0x13),                      // addi x2, x0, 0
        // loop (pc 16):
        i(0x100, 0, 2, 3, 0x03), // lw x3, 0x100(x0)   (L1)
        r(0, 3, 2, 0, 2),        // add x2, x2, x3
        r(1, 1, 2, 0, 4),        // mul x4, x2, x1
        r(0, 4, 2, 4, 2),        // xor x2, x2, x4
        sw(2, 5, 0),             // sw x2, 0(x5)       (local RAM)
        i(0, 5, 2, 6, 0x03),     // lw x6, 0(x5)       (local RAM)
        i(1, 6, 1, 6, 0x13),     // slli x6, x6, 1
        r(0, 6, 2, 6, 2),        // or x2, x2, x6
        i(-1, 1, 0, 1, 0x13),    // addi x1, x1, -1
        bne_back,                // bne x1, x0, loop
        0x0000_0073,             // ecall
    ]
}

fn bench(c: &mut Criterion) {
    let mut bus = RamBus::new(0, 0x1000);
    bus.write_words(0, &program());
    bus.write_words(0x100, &[3]);
    let mut group = c.benchmark_group("riscv");
    group.throughput(Throughput::Elements(INSTRUCTIONS));
    group.bench_function("loop_instructions", |b| {
        b.iter(|| {
            let mut hart = Hart::new(HartConfig::data_movement(0, 0));
            let stop = hart.run(&mut bus, u64::MAX);
            assert_eq!(stop, Stop::Ecall { pc: 56 });
            assert_eq!(hart.instret(), INSTRUCTIONS);
            black_box(hart.reg(2))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
