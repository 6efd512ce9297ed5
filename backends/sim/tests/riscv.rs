//! The RV32IM + Zicsr (+ Zba, Zbb) hart (`komorebi_sim::riscv`): instruction semantics on edge values, the
//! cost rule's exact cycle totals, faults, retries, the counters, self-modifying code, and
//! random programs that must never panic nor overrun `until_cycle`.

use komorebi_sim::riscv::bus::{LOCAL_RAM_BASE, LOCAL_RAM_DM};
use komorebi_sim::riscv::{
    AccessKind, Bus, BusResult, Cost, Faster, Fault, FaultKind, Flow, Hart, HartConfig, Isa,
    NoProbe, Probe, RamBus, Size, SpeedUp, SpeedUpError, Stop,
};
use proptest::prelude::*;

/// A tiny RV32IM + Zicsr (+ Zba, Zbb) encoder for the tests (registers are `u32` 0..=31).
mod enc;
use enc::*;

const RAM: u32 = 64 * 1024;

fn machine(program: &[u32]) -> (Hart, RamBus) {
    machine_with(program, Cost::default())
}

fn machine_with(program: &[u32], cost: Cost) -> (Hart, RamBus) {
    let mut bus = RamBus::new(0, RAM);
    bus.write_words(0, program);
    (
        Hart::new(HartConfig {
            cost,
            ..HartConfig::data_movement(7, 0)
        }),
        bus,
    )
}

/// The blocking rule (`Cost::pipelined` off): each instruction's whole cost before the next.
fn blocking() -> Cost {
    Cost {
        pipelined: false,
        ..Cost::default()
    }
}

/// A data-movement hart under the blocking rule, starting at 0.
fn blocking_hart() -> Hart {
    Hart::new(HartConfig {
        cost: blocking(),
        ..HartConfig::data_movement(0, 0)
    })
}

/// Runs `program` (which must end in `ecall`) to its `ecall` and returns the hart.
fn exec(program: &[u32], regs: &[(usize, u32)]) -> Hart {
    let (mut hart, mut bus) = machine(program);
    for &(r, v) in regs {
        hart.set_reg(r, v);
    }
    let stop = hart.run(&mut bus, 1_000_000);
    assert!(matches!(stop, Stop::Ecall { .. }), "{stop:?}");
    hart
}

/// `x3 = op(x1 = a, x2 = b)` for a register-register instruction.
fn rr(op: fn(u32, u32, u32) -> u32, a: u32, b: u32) -> u32 {
    exec(&[op(3, 1, 2), ECALL], &[(1, a), (2, b)]).reg(3)
}

/// `x3 = op(x1 = a, imm)` for a register-immediate instruction.
fn ri(op: fn(u32, u32, i32) -> u32, a: u32, imm: i32) -> u32 {
    exec(&[op(3, 1, imm), ECALL], &[(1, a)]).reg(3)
}

fn fault(stop: Stop) -> Fault {
    match stop {
        Stop::Fault(f) => f,
        other => panic!("expected a fault, got {other:?}"),
    }
}

#[test]
fn rv32i_register_operations_on_edge_values() {
    const MIN: u32 = 0x8000_0000;
    assert_eq!(rr(add, 0x7FFF_FFFF, 1), MIN);
    assert_eq!(rr(add, u32::MAX, 1), 0);
    assert_eq!(rr(sub, 0, 1), u32::MAX);
    assert_eq!(rr(sub, MIN, 1), 0x7FFF_FFFF);
    assert_eq!(rr(slt, u32::MAX, 1), 1); // -1 < 1
    assert_eq!(rr(slt, 1, u32::MAX), 0);
    assert_eq!(rr(slt, MIN, 0x7FFF_FFFF), 1);
    assert_eq!(rr(sltu, u32::MAX, 1), 0);
    assert_eq!(rr(sltu, 1, u32::MAX), 1);
    assert_eq!(rr(sltu, 5, 5), 0);
    assert_eq!(rr(sll, 1, 31), MIN);
    assert_eq!(rr(sll, 1, 32), 1); // only the low 5 bits count
    assert_eq!(rr(sll, 3, 0xFFFF_FFE1), 6);
    assert_eq!(rr(srl, MIN, 31), 1);
    assert_eq!(rr(sra, MIN, 31), u32::MAX);
    assert_eq!(rr(sra, (-8i32) as u32, 1), (-4i32) as u32);
    assert_eq!(rr(sra, 0x4000_0000, 30), 1);
    assert_eq!(rr(xor, 0xF0F0_F0F0, 0xFF00_FF00), 0x0FF0_0FF0);
    assert_eq!(rr(or, 0xF0F0_F0F0, 0x0F00_0000), 0xFFF0_F0F0);
    assert_eq!(rr(and, 0xF0F0_F0F0, 0xFF00_FF00), 0xF000_F000);
}

/// `x3 = op(x1 = a)` for a one-register instruction.
fn r1(op: fn(u32, u32) -> u32, a: u32) -> u32 {
    exec(&[op(3, 1), ECALL], &[(1, a)]).reg(3)
}

#[test]
fn zba_and_zbb_operations_on_edge_values() {
    const MIN: u32 = 0x8000_0000;
    assert_eq!(rr(sh1add, 0x8000_0001, 5), 7); // the carry out of bit 31 is lost
    assert_eq!(rr(sh2add, 3, u32::MAX), 11);
    assert_eq!(rr(sh3add, 0x2000_0000, 8), 8);
    assert_eq!(rr(andn, 0xF0F0_F0F0, 0xFF00_FF00), 0x00F0_00F0);
    assert_eq!(rr(orn, 0x0000_000F, 0xFFFF_FF00), 0x0000_00FF);
    assert_eq!(rr(xnor, 0xF0F0_F0F0, 0xFF00_FF00), 0xF00F_F00F);
    assert_eq!(rr(min, u32::MAX, 1), u32::MAX); // -1 < 1
    assert_eq!(rr(min, MIN, 0x7FFF_FFFF), MIN);
    assert_eq!(rr(minu, u32::MAX, 1), 1);
    assert_eq!(rr(max, u32::MAX, 1), 1);
    assert_eq!(rr(max, MIN, 0x7FFF_FFFF), 0x7FFF_FFFF);
    assert_eq!(rr(maxu, u32::MAX, 1), u32::MAX);
    assert_eq!(rr(rol, 0x8000_0001, 1), 3);
    assert_eq!(rr(rol, 0x8000_0001, 33), 3); // only the low 5 bits count
    assert_eq!(rr(ror, 3, 1), 0x8000_0001);
    assert_eq!(rr(ror, 0x1234_5678, 0), 0x1234_5678);
    assert_eq!(
        exec(&[rori(3, 1, 8), ECALL], &[(1, 0x1234_5678)]).reg(3),
        0x7812_3456
    );
    assert_eq!(r1(clz, 0), 32);
    assert_eq!(r1(clz, 1), 31);
    assert_eq!(r1(clz, MIN), 0);
    assert_eq!(r1(ctz, 0), 32);
    assert_eq!(r1(ctz, MIN), 31);
    assert_eq!(r1(cpop, 0), 0);
    assert_eq!(r1(cpop, u32::MAX), 32);
    assert_eq!(r1(cpop, 0x8000_0101), 3);
    assert_eq!(r1(sext_b, 0x1234_5680), 0xFFFF_FF80);
    assert_eq!(r1(sext_b, 0xFFFF_FF7F), 0x7F);
    assert_eq!(r1(sext_h, 0x0000_8000), 0xFFFF_8000);
    assert_eq!(r1(sext_h, 0xFFFF_7FFF), 0x7FFF);
    assert_eq!(r1(zext_h, 0xFFFF_8001), 0x8001);
    assert_eq!(r1(orc_b, 0x0100_8000), 0xFF00_FF00);
    assert_eq!(r1(orc_b, 0), 0);
    assert_eq!(r1(rev8, 0x1234_5678), 0x7856_3412);
}

/// A Wormhole core (RV32IM + Zicsr alone) stops at a Zbb word with an illegal-instruction
/// fault, its registers untouched; a Blackhole core runs it.
#[test]
fn zbb_words_are_illegal_on_an_rv32im_hart() {
    let program = [addi(1, 0, 5), cpop(3, 1), ECALL];
    let mut bus = RamBus::new(0, RAM);
    bus.write_words(0, &program);
    let mut hart = Hart::new(HartConfig {
        isa: Isa::RV32IM,
        ..HartConfig::data_movement(0, 0)
    });
    let f = fault(hart.run(&mut bus, 1_000));
    assert_eq!(
        (f.pc, f.kind),
        (4, FaultKind::IllegalInstruction { word: program[1] })
    );
    assert_eq!(hart.reg(3), 0);
    assert_eq!(exec(&program, &[]).reg(3), 2);
}

/// A Blackhole core's `cfg0`: read and written by `csrrw`/`csrrs`/`csrrc` and their immediate
/// forms (`csrrs` of x0 only reads), 0x2_0000 at reset (`StMergeTimer` 16: BH `CSRs.md`); a load from L1 while its bit 3 is clear (the
/// L0 data cache on) is counted, one from local RAM or with the bit set is not.
#[test]
fn cfg0_turns_the_l0_data_cache_off_and_loads_with_it_on_are_counted() {
    let local = LOCAL_RAM_BASE as i32;
    let program = [
        lw(5, 0, 0x100), // L1, cache on: counted
        lui(11, (local as u32) >> 12),
        lw(5, 11, 0), // local RAM: not counted
        addi(6, 0, 8),
        csrrs(7, CFG0, 6),     // x7 = 0x2_0000; cache off
        lw(5, 0, 0x104),       // not counted
        csrrci(8, CFG0, 8),    // x8 = 0x2_0008; cache on
        lw(5, 0, 0x108),       // counted
        csrrwi(9, CFG0, 0x13), // x9 = 0x2_0000; cfg0 = 0x13
        csrrs(10, CFG0, 0),    // x10 = 0x13, a read
        csrrc(12, CFG0, 0),    // a read too
        addi(14, 0, 8),
        csrrw(13, CFG0, 14), // x13 = 0x13; cfg0 = 8
        csrrsi(15, CFG0, 2), // x15 = 8; cfg0 = 0xA
        lw(5, 0, 0x10C),     // the cache off: not counted
        ECALL,
    ];
    let hart = exec(&program, &[]);
    assert_eq!(hart.l1_loads_with_l0_on(), 2);
    assert_eq!(hart.cfg0(), 0xA);
    assert_eq!(
        [7, 8, 9, 10, 12, 13, 15].map(|r| hart.reg(r)),
        [0x2_0000, 0x2_0008, 0x2_0000, 0x13, 0x13, 0x13, 8]
    );
    // A Wormhole core has no `cfg0`, and counts nothing.
    let mut bus = RamBus::new(0, RAM);
    bus.write_words(0, &[lw(5, 0, 0x100), csrrs(7, CFG0, 6), ECALL]);
    let mut hart = Hart::new(HartConfig {
        isa: Isa::RV32IM,
        ..HartConfig::data_movement(0, 0)
    });
    let f = fault(hart.run(&mut bus, 1_000));
    assert_eq!(
        f.kind,
        FaultKind::IllegalInstruction {
            word: csrrs(7, CFG0, 6)
        }
    );
    assert_eq!(hart.l1_loads_with_l0_on(), 0);
}

#[test]
fn rv32i_immediate_operations_on_edge_values() {
    assert_eq!(ri(addi, 0, -2048), (-2048i32) as u32);
    assert_eq!(ri(addi, 0x7FFF_FFFF, 1), 0x8000_0000);
    assert_eq!(ri(addi, 5, 2047), 2052);
    assert_eq!(ri(slti, (-5i32) as u32, -4), 1);
    assert_eq!(ri(slti, 0, -1), 0);
    // sltiu compares with the sign-extended immediate as unsigned: -1 is 0xFFFF_FFFF.
    assert_eq!(ri(sltiu, 0xFFFF_FFFE, -1), 1);
    assert_eq!(ri(sltiu, u32::MAX, -1), 0);
    assert_eq!(ri(sltiu, 0, 1), 1); // seqz
    assert_eq!(ri(xori, 0x1234_5678, -1), !0x1234_5678); // not
    assert_eq!(ri(ori, 0x100, 0x0FF), 0x1FF);
    assert_eq!(ri(andi, 0xFFFF_FFFF, -2048), 0xFFFF_F800);
    let sh = |op: fn(u32, u32, u32) -> u32, a: u32, n: u32| {
        exec(&[op(3, 1, n), ECALL], &[(1, a)]).reg(3)
    };
    assert_eq!(sh(slli, 1, 31), 0x8000_0000);
    assert_eq!(sh(srli, 0x8000_0000, 31), 1);
    assert_eq!(sh(srai, 0x8000_0000, 31), u32::MAX);
    assert_eq!(sh(srai, 0x7FFF_FFFF, 31), 0);
    assert_eq!(sh(srai, (-100i32) as u32, 2), (-25i32) as u32);
    let h = exec(
        &[lui(1, 0xFFFFF), auipc(2, 0x80000), auipc(3, 0), ECALL],
        &[],
    );
    assert_eq!(h.reg(1), 0xFFFF_F000);
    assert_eq!(h.reg(2), 0x8000_0004); // pc 4 + 0x8000_0000
    assert_eq!(h.reg(3), 8);
}

#[test]
fn m_extension_on_edge_values() {
    const MIN: u32 = 0x8000_0000;
    let m1 = u32::MAX; // -1
    assert_eq!(rr(mul, MIN, m1), MIN);
    assert_eq!(rr(mul, 0x1234_5678, 0x10), 0x2345_6780);
    assert_eq!(rr(mulh, MIN, MIN), 0x4000_0000); // 2^62
    assert_eq!(rr(mulh, MIN, m1), 0); // 2^31
    assert_eq!(rr(mulh, m1, m1), 0); // 1
    assert_eq!(rr(mulh, MIN, 1), m1); // -2^31: high word all ones
    assert_eq!(rr(mulhu, m1, m1), 0xFFFF_FFFE);
    assert_eq!(rr(mulhu, MIN, MIN), 0x4000_0000);
    assert_eq!(rr(mulhsu, MIN, m1), MIN); // -2^31 * (2^32 - 1)
    assert_eq!(rr(mulhsu, m1, m1), m1); // -(2^32 - 1)
    assert_eq!(rr(mulhsu, 1, m1), 0);
    // Division by zero: quotient all ones, remainder the dividend.
    assert_eq!(rr(div, 7, 0), m1);
    assert_eq!(rr(divu, 7, 0), m1);
    assert_eq!(rr(rem, 7, 0), 7);
    assert_eq!(rr(remu, 7, 0), 7);
    assert_eq!(rr(rem, MIN, 0), MIN);
    // Overflow: -2^31 / -1 = -2^31, remainder 0.
    assert_eq!(rr(div, MIN, m1), MIN);
    assert_eq!(rr(rem, MIN, m1), 0);
    // Rounding toward zero; the remainder takes the dividend's sign.
    assert_eq!(rr(div, (-7i32) as u32, 2), (-3i32) as u32);
    assert_eq!(rr(rem, (-7i32) as u32, 2), m1);
    assert_eq!(rr(div, 7, (-2i32) as u32), (-3i32) as u32);
    assert_eq!(rr(rem, 7, (-2i32) as u32), 1);
    assert_eq!(rr(divu, 0xFFFF_FFF9, 2), 0x7FFF_FFFC);
    assert_eq!(rr(remu, 0xFFFF_FFF9, 2), 1);
    assert_eq!(rr(divu, MIN, m1), 0);
    assert_eq!(rr(remu, MIN, m1), MIN);
}

#[test]
fn branches_compare_signed_and_unsigned() {
    // x3 = 1 if the branch is taken (it skips `addi x3, x0, 0`... written as taken -> +8).
    let taken = |br: fn(u32, u32, i32) -> u32, a: u32, b: u32| {
        let p = [addi(3, 0, 1), br(1, 2, 8), addi(3, 0, 0), ECALL];
        exec(&p, &[(1, a), (2, b)]).reg(3) == 1
    };
    let m1 = u32::MAX;
    assert!(taken(beq, 5, 5) && !taken(beq, 5, 6));
    assert!(taken(bne, 5, 6) && !taken(bne, 5, 5));
    assert!(taken(blt, m1, 0) && !taken(blt, 0, m1) && !taken(blt, 3, 3));
    assert!(taken(bge, 0, m1) && taken(bge, 3, 3) && !taken(bge, m1, 0));
    assert!(taken(bltu, 0, m1) && !taken(bltu, m1, 0));
    assert!(taken(bgeu, m1, 0) && taken(bgeu, 3, 3) && !taken(bgeu, 0, m1));
    // Backward branch, jal/jalr links and targets (jalr clears bit 0).
    let p = [
        jal(1, 12),     // 0: -> 12, x1 = 4
        addi(5, 0, 99), // 4: skipped
        ECALL,          // 8
        addi(6, 0, 17), // 12: x6 = 1 + 16 (target 17, bit 0 cleared -> 16)
        jalr(2, 6, 0),  // 16: -> 16 & !1 = 16? no: x6 = 17 -> 16
        ECALL,
    ];
    let (mut hart, mut bus) = machine(&p);
    for _ in 0..4 {
        assert_eq!(hart.step(&mut bus), None);
    }
    // jalr x2, 0(x6) with x6 = 17 jumped to 16 and linked 20.
    assert_eq!(
        (hart.reg(1), hart.reg(2), hart.pc(), hart.reg(5)),
        (4, 20, 16, 0)
    );
}

#[test]
fn x0_stays_zero() {
    let p = [
        addi(0, 0, 5),
        lui(0, 0xFFFFF),
        lw(0, 0, 0x100),
        jal(0, 4),
        mul(0, 1, 1),
        csrrs(0, CYCLE, 0),
        add(3, 0, 0),
        ECALL,
    ];
    let mut bus = RamBus::new(0, RAM);
    bus.write_words(0, &p);
    bus.write_words(0x100, &[0xDEAD_BEEF]);
    let mut hart = Hart::new(HartConfig::data_movement(0, 0));
    hart.set_reg(1, 3);
    hart.set_reg(0, 42);
    assert!(matches!(hart.run(&mut bus, 1000), Stop::Ecall { pc: 28 }));
    assert_eq!((hart.reg(0), hart.reg(3)), (0, 0));
}

#[test]
fn loads_sign_and_zero_extend_from_l1_and_local_ram() {
    for base in [0x200u32, LOCAL_RAM_BASE + 0x40] {
        let p = [
            lui(5, base >> 12),
            addi(5, 5, (base & 0xFFF) as i32),
            sw(1, 5, 0),
            lb(10, 5, 0),
            lbu(11, 5, 0),
            lh(12, 5, 0),
            lhu(13, 5, 0),
            lw(14, 5, 0),
            lb(15, 5, 3),
            lhu(16, 5, 2),
            sb(2, 5, 1), // 0x8081_82F3 -> 0x8081_55F3
            sh(2, 5, 2), // -> 0x5555_55F3
            lw(17, 5, 0),
            ECALL,
        ];
        let h = exec(&p, &[(1, 0x8081_82F3), (2, 0x5555)]);
        assert_eq!(h.reg(10), 0xFFFF_FFF3, "{base:#x}");
        assert_eq!(h.reg(11), 0xF3);
        assert_eq!(h.reg(12), 0xFFFF_82F3);
        assert_eq!(h.reg(13), 0x82F3);
        assert_eq!(h.reg(14), 0x8081_82F3);
        assert_eq!(h.reg(15), 0xFFFF_FF80);
        assert_eq!(h.reg(16), 0x8081);
        assert_eq!(h.reg(17), 0x5555_55F3);
    }
    // The local RAM belongs to the hart: the bus never saw those stores.
    let (mut hart, mut bus) = machine(&[lui(5, LOCAL_RAM_BASE >> 12), sw(1, 5, 8), ECALL]);
    hart.set_reg(1, 0xA1B2_C3D4);
    hart.run(&mut bus, 100);
    assert_eq!(&hart.local_ram()[8..12], &[0xD4, 0xC3, 0xB2, 0xA1]);
    assert_eq!(hart.local_ram().len(), LOCAL_RAM_DM as usize);
    assert_eq!(Hart::new(HartConfig::compute(1, 0)).local_ram().len(), 4096);
}

/// The hart's state that a fault or retry must leave untouched.
fn state(h: &Hart) -> ([u32; 32], u32, u64, u64) {
    (*h.regs(), h.pc(), h.cycle(), h.instret())
}

#[test]
fn misaligned_accesses_fault_with_pc_and_address() {
    let cases: [(u32, u32, FaultKind); 6] = [
        (
            lw(3, 1, 2),
            0x100,
            FaultKind::Misaligned {
                addr: 0x102,
                access: AccessKind::Load(Size::Word),
            },
        ),
        (
            lh(3, 1, 1),
            0x100,
            FaultKind::Misaligned {
                addr: 0x101,
                access: AccessKind::Load(Size::Half),
            },
        ),
        (
            lhu(3, 1, 3),
            0x100,
            FaultKind::Misaligned {
                addr: 0x103,
                access: AccessKind::Load(Size::Half),
            },
        ),
        (
            sw(2, 1, -1),
            0x100,
            FaultKind::Misaligned {
                addr: 0xFF,
                access: AccessKind::Store(Size::Word),
            },
        ),
        (
            sh(2, 1, 1),
            LOCAL_RAM_BASE,
            FaultKind::Misaligned {
                addr: LOCAL_RAM_BASE + 1,
                access: AccessKind::Store(Size::Half),
            },
        ),
        (
            jalr(1, 1, 2),
            0x100,
            FaultKind::Misaligned {
                addr: 0x102,
                access: AccessKind::Fetch,
            },
        ),
    ];
    for (word, x1, kind) in cases {
        let (mut hart, mut bus) = machine(&[addi(9, 0, 1), word, ECALL]);
        hart.set_reg(1, x1);
        hart.set_reg(2, 0xFFFF_FFFF);
        assert_eq!(hart.step(&mut bus), None);
        let before = state(&hart);
        let f = fault(hart.run(&mut bus, 100));
        assert_eq!(f, Fault { pc: 4, kind }, "{word:#010x}");
        assert_eq!(state(&hart), before);
        assert_eq!(bus.read_word(0xFC), Some(0));
        assert_eq!(bus.read_word(0x100), Some(0));
    }
    // A taken branch to a misaligned target faults at the branch; a jal too.
    let (mut hart, mut bus) = machine(&[beq(0, 0, 6), ECALL]);
    let f = fault(hart.run(&mut bus, 100));
    assert_eq!(
        f,
        Fault {
            pc: 0,
            kind: FaultKind::Misaligned {
                addr: 6,
                access: AccessKind::Fetch
            }
        }
    );
    let (mut hart, mut bus) = machine(&[jal(1, 2), ECALL]);
    assert_eq!(
        fault(hart.run(&mut bus, 100)).kind,
        FaultKind::Misaligned {
            addr: 2,
            access: AccessKind::Fetch
        }
    );
    assert_eq!(hart.reg(1), 0); // no link on a faulting jump
}

#[test]
fn illegal_instructions_bus_faults_and_fetches_outside_code() {
    for word in [
        0x48C5_9533u32, // bclr (Zbs: not a Blackhole baby core's)
        csrrw(0, CYCLE, 1),
        csrrs(1, CYCLE, 2),
        csrrwi(1, MHARTID, 0),
        csrrci(1, INSTRET, 1),
        csrrs(1, 0x300, 0),
        // `time` and `timeh`: Blackhole's baby cores have neither (ISA `BabyRISCV/CSRs.md`).
        csrrs(1, TIME, 0),
        csrrs(1, TIMEH, 0),
        0,
        0x4501,
        0x30200073,
    ] {
        let (mut hart, mut bus) = machine(&[addi(1, 0, 1), addi(2, 0, 2), word, ECALL]);
        let stop = hart.run(&mut bus, 100);
        assert_eq!(
            fault(stop),
            Fault {
                pc: 8,
                kind: FaultKind::IllegalInstruction { word }
            }
        );
        assert_eq!((hart.pc(), hart.instret(), hart.cycle()), (8, 2, 2));
        assert_eq!(hart.run(&mut bus, 100), stop, "a fault is sticky");
    }
    // The read-only forms do not fault: csrrc/csrrs with x0, csrrsi/csrrci with 0.
    let h = exec(
        &[
            csrrc(1, MHARTID, 0),
            csrrsi(2, MHARTID, 0),
            csrrci(3, MHARTID, 0),
            ECALL,
        ],
        &[],
    );
    assert_eq!((h.reg(1), h.reg(2), h.reg(3)), (7, 7, 7));
    // A load outside the bus's RAM is a bus fault carrying address and kind.
    let (mut hart, mut bus) = machine(&[lui(1, 0x100), lhu(2, 1, 6), ECALL]);
    let f = fault(hart.run(&mut bus, 100));
    assert_eq!(
        f,
        Fault {
            pc: 4,
            kind: FaultKind::Bus {
                addr: 0x10_0006,
                access: AccessKind::Load(Size::Half)
            }
        }
    );
    let (mut hart, mut bus) = machine(&[lui(1, 0x100), sb(2, 1, 3), ECALL]);
    let f = fault(hart.run(&mut bus, 100));
    assert_eq!(
        f.kind,
        FaultKind::Bus {
            addr: 0x10_0003,
            access: AccessKind::Store(Size::Byte)
        }
    );
    // Code is fetched from L1 only; a jump out of it faults at the next fetch.
    let (mut hart, mut bus) = machine(&[lui(1, LOCAL_RAM_BASE >> 12), jalr(0, 1, 0)]);
    let f = fault(hart.run(&mut bus, 100));
    assert_eq!(
        f,
        Fault {
            pc: LOCAL_RAM_BASE,
            kind: FaultKind::FetchOutsideCode
        }
    );
    // Inside L1 but past the RAM the bus has: the fetch is a bus fault.
    let (mut hart, mut bus) = machine(&[]);
    hart.set_pc(RAM);
    assert_eq!(
        fault(hart.run(&mut bus, 100)).kind,
        FaultKind::Bus {
            addr: RAM,
            access: AccessKind::Fetch
        }
    );
    hart.set_pc(2);
    assert_eq!(
        fault(hart.run(&mut bus, 100)).kind,
        FaultKind::Misaligned {
            addr: 2,
            access: AccessKind::Fetch
        }
    );
}

/// A RAM that answers `Retry` to the next `retries` accesses at `addr`.
struct RetryBus {
    ram: RamBus,
    addr: u32,
    retries: u32,
}

impl RetryBus {
    fn hold(&mut self, addr: u32) -> bool {
        if addr == self.addr && self.retries > 0 {
            self.retries -= 1;
            return true;
        }
        false
    }
}

impl Bus for RetryBus {
    fn fetch(&mut self, addr: u32, at: u64) -> BusResult<u32> {
        if self.hold(addr) {
            BusResult::Retry
        } else {
            self.ram.fetch(addr, at)
        }
    }
    fn load(&mut self, addr: u32, size: Size, at: u64) -> BusResult<u32> {
        if self.hold(addr) {
            BusResult::Retry
        } else {
            self.ram.load(addr, size, at)
        }
    }
    fn store(&mut self, addr: u32, size: Size, value: u32, at: u64) -> BusResult<()> {
        if self.hold(addr) {
            BusResult::Retry
        } else {
            self.ram.store(addr, size, value, at)
        }
    }
}

#[test]
fn retry_changes_nothing_and_the_instruction_runs_again() {
    for (addr, access) in [
        (0x400, AccessKind::Load(Size::Word)),
        (0x404, AccessKind::Store(Size::Word)),
        (12, AccessKind::Fetch),
    ] {
        let p = [
            addi(1, 0, 5),
            lw(2, 0, 0x400),
            sw(1, 0, 0x404),
            addi(3, 2, 1),
            ECALL,
        ];
        let mut ram = RamBus::new(0, RAM);
        ram.write_words(0, &p);
        ram.write_words(0x400, &[41]);
        let mut bus = RetryBus {
            ram,
            addr,
            retries: 2,
        };
        let mut hart = blocking_hart();
        let mut stops = 0;
        loop {
            let before = state(&hart);
            match hart.run(&mut bus, 10_000) {
                Stop::Retry {
                    pc,
                    addr: a,
                    access: k,
                } => {
                    assert_eq!((a, k), (addr, access));
                    assert_eq!(pc, hart.pc());
                    // Only the instructions before the retried one have run.
                    assert_eq!(hart.instret(), u64::from(pc / 4));
                    assert_eq!(hart.reg(2), if pc > 4 { 41 } else { 0 });
                    assert_eq!(hart.reg(3), 0);
                    assert!(hart.cycle() >= before.2);
                    // The store is applied once it runs, never while it is retried.
                    let stored = if pc > 8 { 5 } else { 0 };
                    assert_eq!(bus.ram.read_word(0x404), Some(stored));
                    stops += 1;
                    // The caller lets time pass.
                    hart.stall_until(hart.cycle() + 10);
                }
                Stop::Ecall { pc: 16 } => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(stops, 2);
        assert_eq!(
            (hart.reg(2), hart.reg(3), bus.ram.read_word(0x404)),
            (41, 42, Some(5))
        );
        assert_eq!(hart.instret(), 5);
        // 1 + 8 (L1 load) + 1 (store) + 1 + 2 (ecall), plus 2 x 10 cycles stalled.
        assert_eq!(hart.cycle(), 13 + 20);
    }
    // A retry leaves the whole state alone, cycle count included.
    let mut ram = RamBus::new(0, RAM);
    ram.write_words(0, &[addi(1, 0, 5), lw(1, 0, 0x400), ECALL]);
    let mut bus = RetryBus {
        ram,
        addr: 0x400,
        retries: 1,
    };
    let mut hart = blocking_hart();
    assert_eq!(hart.step(&mut bus), None);
    let before = state(&hart);
    assert_eq!(
        hart.step(&mut bus),
        Some(Stop::Retry {
            pc: 4,
            addr: 0x400,
            access: AccessKind::Load(Size::Word)
        })
    );
    assert_eq!(state(&hart), before);
    assert_eq!(hart.step(&mut bus), None);
    assert_eq!((hart.reg(1), hart.pc()), (0, 8));
}

#[test]
fn counters_read_the_count_at_the_reading_instruction() {
    // Each csrr reads the cycles of the instructions before it (the blocking rule; the
    // pipelined one is `the_pipelined_rule_overlaps_what_the_readme_lets_overlap`).
    let p = [
        addi(1, 0, 1),       // 1
        lw(2, 0, 0x100),     // 8
        csrrs(10, CYCLE, 0), // reads 9; costs 2
        mul(3, 1, 1),        // 2
        csrrs(11, CYCLE, 0), // reads 13
        csrrs(12, INSTRET, 0),
        csrrs(13, CYCLEH, 0),
        csrrs(14, CYCLEH, 0),
        csrrs(15, INSTRETH, 0),
        csrrs(16, MHARTID, 0),
        ECALL,
    ];
    let (mut hart, mut bus) = machine_with(&p, blocking());
    for i in 0..10 {
        let (cycle, instret) = (hart.cycle(), hart.instret());
        assert_eq!(hart.step(&mut bus), None);
        if i == 2 {
            assert_eq!(u64::from(hart.reg(10)), cycle);
        }
        if i == 5 {
            assert_eq!(u64::from(hart.reg(12)), instret);
        }
    }
    assert_eq!(hart.reg(10), 9);
    assert_eq!(hart.reg(11), 13);
    assert_eq!(hart.reg(12), 5);
    assert_eq!((hart.reg(13), hart.reg(14), hart.reg(15)), (0, 0, 0));
    assert_eq!(hart.reg(16), 7);
}

#[test]
fn cycleh_and_cycle_read_as_one_64_bit_value() {
    // The usual read loop: cycleh, cycle, cycleh again; retry if the high words differ.
    let p = [
        csrrs(1, CYCLEH, 0),
        csrrs(2, CYCLE, 0),
        csrrs(3, CYCLEH, 0),
        bne(1, 3, -12),
        ECALL,
    ];
    let (mut hart, mut bus) = machine(&p);
    hart.stall_until((1 << 32) - 3);
    assert_eq!(hart.run(&mut bus, u64::MAX), Stop::Ecall { pc: 16 });
    // First pass: cycleh 0 at 2^32 - 3, cycle 0xFFFF_FFFF at 2^32 - 1, cycleh 1 at 2^32 + 1:
    // the high words differ, so the branch goes round again from 2^32 + 8 (taken against its
    // weakly-not-taken counter: 1 + 4). Second pass: cycleh 1, cycle 10 (at 2^32 + 10),
    // cycleh 1, and the branch falls through against its counter, now weakly taken: 1 + 4.
    assert_eq!((hart.reg(1), hart.reg(2), hart.reg(3)), (1, 10, 1));
    assert_eq!(hart.cycle(), (1 << 32) + 21);
    assert_eq!(hart.instret(), 9);
}

#[test]
fn a_loop_costs_exactly_what_the_rule_says() {
    let p = [
        addi(1, 0, 10),  // 0: 1
        addi(2, 0, 0),   // 4: 1
        lw(3, 0, 0x100), // 8: loop: 8 (L1 load)
        add(2, 2, 3),    // 12: 1
        addi(1, 1, -1),  // 16: 1
        bne(1, 0, -12),  // 20: 1, + 4 when mispredicted
        ECALL,           // 24: 2
    ];
    let (mut hart, mut bus) = machine(&p);
    bus.write_words(0x100, &[3]);
    assert_eq!(hart.run(&mut bus, u64::MAX), Stop::Ecall { pc: 24 });
    assert_eq!(hart.reg(2), 30);
    // 2 + 10 * (8 + 1 + 1) + 10 * 1 + 2 * 4 + 2: the back edge mispredicts on its first pass
    // (the counter starts weakly not-taken) and on the exit (by then strongly taken).
    assert_eq!(hart.cycle(), 122);
    assert_eq!(hart.instret(), 43);
    // Without prediction every taken branch pays: 2 + 10 * (8 + 1 + 1) + 9 * 5 + 1 + 2.
    let unpredicted = HartConfig {
        cost: Cost {
            predict: false,
            ..Cost::default()
        },
        ..HartConfig::data_movement(7, 0)
    };
    let mut hart = Hart::new(unpredicted);
    assert_eq!(hart.run(&mut bus, u64::MAX), Stop::Ecall { pc: 24 });
    assert_eq!(hart.cycle(), 150);

    // The same loop on the local RAM, with a store, a call and a return.
    let p = [
        lui(5, LOCAL_RAM_BASE >> 12), // 0: 1
        addi(1, 0, 4),                // 4: 1
        jal(6, 24),                   // 8: 5 (first jump: mispredicted) -> 32
        lw(3, 5, 0),                  // 12: loop: 2 (local)
        addi(3, 3, 7),                // 16: 1
        sw(3, 5, 0),                  // 20: 1 (local)
        addi(1, 1, -1),               // 24: 1
        bne(1, 0, -16),               // 28: 1, + 4 mispredicted
        ECALL,                        // 32: 2 (reached once by the jal... see below)
    ];
    // jal jumps to 32 (the ecall) first: check the jump cost, then run the loop from 12.
    let (mut hart, mut bus) = machine(&p);
    assert_eq!(hart.run(&mut bus, u64::MAX), Stop::Ecall { pc: 32 });
    assert_eq!((hart.cycle(), hart.reg(6)), (1 + 1 + 5 + 2, 12));
    hart.set_pc(12);
    assert_eq!(hart.run(&mut bus, u64::MAX), Stop::Ecall { pc: 32 });
    assert_eq!(
        u32::from_le_bytes(hart.local_ram()[0..4].try_into().unwrap()),
        28
    );
    // 9 + 4 * (2 + 1 + 1 + 1) + 4 * 1 + 2 * 4 (first pass and exit) + 2
    assert_eq!(hart.cycle(), 9 + 20 + 4 + 8 + 2);
}

/// Register values to set before a test instruction: `(register, value)`.
type Regs = &'static [(usize, u32)];

#[test]
fn each_instruction_class_costs_its_documented_cycles() {
    // One instruction alone, under the blocking rule: its whole cost.
    let cost = blocking();
    let cases: [(u32, Regs, u64); 15] = [
        (mul(3, 1, 2), &[], 2),
        (mulhu(3, 1, 2), &[], 2),
        (div(3, 1, 2), &[(1, 100), (2, 0)], 2), // by zero
        (div(3, 1, 2), &[(1, 100), (2, 1)], 2), // by one
        (rem(3, 1, 2), &[(1, 0x8000_0000), (2, u32::MAX)], 2), // overflow
        (div(3, 1, 2), &[(1, 100), (2, 7)], 8), // 7-bit dividend: 1 + 7
        (divu(3, 1, 2), &[(1, u32::MAX), (2, 3)], 33), // 32-bit dividend
        (div(3, 1, 2), &[(1, u32::MAX), (2, 3)], 6), // |-1| = 1: clamped to 6
        (remu(3, 1, 2), &[(1, 0x8000_0000), (2, u32::MAX)], 33), // unsigned: no overflow case
        (FENCE, &[], 3),
        (csrrs(3, CYCLE, 0), &[], 2),
        (jal(0, 8), &[], 5),
        (sw(1, 0, 0x100), &[], 1),
        (lbu(3, 0, 0x100), &[], 8),
        (lui(3, 1), &[], 1),
    ];
    for (word, regs, cycles) in cases {
        let (mut hart, mut bus) = machine_with(&[word, ECALL], cost);
        for &(r, v) in regs {
            hart.set_reg(r, v);
        }
        assert_eq!(hart.step(&mut bus), None);
        assert_eq!(hart.cycle(), cycles, "{word:#010x}");
    }
    assert_eq!(cost.div_cycles(0), 6);
    assert_eq!(cost.div_cycles(1 << 31), 33);
    // A bus's fetch stall adds to the instruction; a slow MMIO load costs its latency.
    let (mut hart, mut bus) = machine_with(&[lw(3, 0, 0x100), ECALL], cost);
    bus.fetch_cycles = 3;
    bus.load_cycles = cost.load_mmio;
    assert_eq!(hart.step(&mut bus), None);
    assert_eq!(hart.cycle(), 3 + 7);
}

/// Steps `program` to its `ecall` (not run) under the default (pipelined) rule and returns
/// the cycle count then and each instruction's charge, as a profile sees them.
fn pipelined_cycles(program: &[u32], load_cycles: u32) -> (u64, Vec<u64>) {
    let (mut hart, mut bus) = machine(program);
    bus.load_cycles = load_cycles;
    let mut charges = Vec::new();
    while hart.pc() / 4 < program.len() as u32 - 1 {
        let before = hart.cycle();
        assert_eq!(hart.step(&mut bus), None);
        charges.push(hart.cycle() - before);
    }
    (hart.cycle(), charges)
}

#[test]
fn the_pipelined_rule_overlaps_what_the_readme_lets_overlap() {
    let l1 = Cost::default().load_l1; // 8
    // A load's latency (8) is paid by the first instruction that reads its result: the load
    // holds EX1 one cycle, the dependent add waits the other seven, then takes its own.
    let (cycles, charges) = pipelined_cycles(&[lw(1, 0, 0x100), add(2, 1, 1), ECALL], l1);
    assert_eq!((cycles, charges), (9, vec![1, 8]));
    // Seven independent instructions after it hide it entirely ("N - 1 independent
    // instructions"); the use after them waits for nothing.
    let mut p = vec![lw(1, 0, 0x100)];
    p.extend((0..7).map(|i| addi(3 + i, 0, 1)));
    p.extend([add(2, 1, 1), ECALL]);
    let (cycles, charges) = pipelined_cycles(&p, l1);
    assert_eq!((cycles, charges), (9, vec![1; 9]));
    // Three of them hide three cycles of it.
    let (cycles, _) = pipelined_cycles(
        &[
            lw(1, 0, 0x100),
            addi(3, 0, 1),
            addi(4, 0, 1),
            addi(5, 0, 1),
            add(2, 1, 1),
            ECALL,
        ],
        l1,
    );
    assert_eq!(cycles, 9);
    // A multiply forwards after two cycles: a dependent instruction waits one.
    let (cycles, charges) = pipelined_cycles(&[mul(1, 2, 2), add(3, 1, 1), ECALL], l1);
    assert_eq!((cycles, charges), (3, vec![1, 2]));
    // Local data RAM (latency 2) takes a load a cycle, and so does L1: a load emits its
    // request without waiting for an earlier load's response (MemoryOrdering.md, "Load then
    // load").
    let (cycles, _) = pipelined_cycles(
        &[
            lui(5, 0xFFB00),
            lw(1, 5, 0),
            lw(2, 5, 4),
            lw(3, 5, 8),
            add(4, 3, 3),
            ECALL,
        ],
        l1,
    );
    // lui 1, three loads a cycle each, the add waits one for the last: 1 + 3 + 2.
    assert_eq!(cycles, 6);
    let (cycles, charges) = pipelined_cycles(&[lw(1, 0, 0x100), lw(2, 0, 0x104), ECALL], l1);
    assert_eq!(
        (cycles, charges),
        (2, vec![1, 1]),
        "the second L1 load enters the cycle after the first"
    );
    // A store after a load that is out enters at once (its data is not the load's).
    let (cycles, charges) = pipelined_cycles(&[lw(1, 0, 0x100), sw(2, 0, 0x200), ECALL], l1);
    assert_eq!((cycles, charges), (2, vec![1, 1]));
    // A CSR read after two loads in flight enters at once (it waits only for earlier CSR
    // accesses, fences, ecalls and ebreaks: BH README, "EX1"), but retires in order, after the
    // second load (at 9), at 10: the instruction after it enters only then.
    let (cycles, charges) = pipelined_cycles(
        &[
            lw(1, 0, 0x100),
            lw(2, 0, 0x104),
            csrrs(3, CYCLE, 0),
            addi(4, 0, 1),
            ECALL,
        ],
        l1,
    );
    assert_eq!((cycles, charges), (11, vec![1, 1, 2, 7]));
    // A fence waits for every earlier instruction (its loads) to retire, then holds EX1 3.
    let (cycles, charges) = pipelined_cycles(&[lw(1, 0, 0x100), FENCE, ECALL], l1);
    assert_eq!((cycles, charges), (11, vec![1, 7 + 3]));
    // Their results forward 8 cycles after each entered: using the second waits for it.
    let (cycles, charges) =
        pipelined_cycles(&[lw(1, 0, 0x100), lw(2, 0, 0x104), add(3, 2, 1), ECALL], l1);
    assert_eq!((cycles, charges), (10, vec![1, 1, 8]));
    // A CSR read reads the cycle it enters, the one after the load's.
    let (mut hart, mut bus) = machine(&[lw(1, 0, 0x100), csrrs(10, CYCLE, 0), ECALL]);
    assert_eq!(hart.step(&mut bus), None);
    assert_eq!(hart.step(&mut bus), None);
    assert_eq!((hart.reg(10), hart.cycle()), (1, 3));
    // The retire queue holds eight: behind a slow load (20 cycles) seven instructions enter,
    // loads among them (eight loads in flight fill it too), and the next waits for the first
    // load to retire.
    let loads: Vec<u32> = (0..9).map(|i| lw(1 + i, 0, 0x100 + 4 * i as i32)).collect();
    let adds = [lw(1, 0, 0x100)]
        .into_iter()
        .chain((0..8).map(|i| addi(3 + i, 0, 1)))
        .collect::<Vec<_>>();
    for mut p in [loads, adds] {
        p.push(ECALL);
        let (cycles, charges) = pipelined_cycles(&p, 20);
        assert_eq!(charges[..8], [1; 8]);
        assert_eq!(
            charges[8],
            20 - 8 + 1,
            "the ninth waits for the first load's retirement at 20"
        );
        assert_eq!(cycles, 21);
    }
    // The blocking rule charges the same program every latency in full.
    let (mut hart, mut bus) = machine_with(&[lw(1, 0, 0x100), add(2, 1, 1), ECALL], blocking());
    assert_eq!(hart.run(&mut bus, 1_000), Stop::Ecall { pc: 8 });
    assert_eq!(hart.cycle(), 8 + 1 + 2);
}

#[test]
fn fence_i_is_an_illegal_instruction() {
    // Neither chip's cores implement Zifencei (a Wormhole core runs it as a `nop`, a Blackhole
    // core's behaviour is undefined): firmware that relied on it would be wrong on a card.
    let (mut hart, mut bus) = machine(&[FENCE_I, ECALL]);
    let f = fault(hart.run(&mut bus, 100));
    assert_eq!(
        (f.pc, f.kind),
        (0, FaultKind::IllegalInstruction { word: FENCE_I })
    );
}

#[test]
fn code_rewritten_after_decoding_is_decoded_again() {
    // Between runs.
    let (mut hart, mut bus) = machine(&[addi(1, 0, 1), ECALL]);
    assert_eq!(hart.run(&mut bus, 100), Stop::Ecall { pc: 4 });
    assert_eq!(hart.reg(1), 1);
    bus.write_words(0, &[addi(1, 0, 2)]);
    hart.set_pc(0);
    assert_eq!(hart.run(&mut bus, 100), Stop::Ecall { pc: 4 });
    assert_eq!(hart.reg(1), 2);
    bus.write_words(0, &[0xFFFF_FFFF]);
    hart.set_pc(0);
    assert_eq!(
        fault(hart.run(&mut bus, 100)).kind,
        FaultKind::IllegalInstruction { word: u32::MAX }
    );

    // Within a run: the loop body rewrites its own first instruction after running it once.
    let p = [
        addi(4, 0, 2),  // 0
        addi(2, 0, 1),  // 4: loop; rewritten to `addi x2, x0, 7`
        sw(5, 0, 4),    // 8
        FENCE,          // 12
        addi(4, 4, -1), // 16
        bne(4, 0, -16), // 20
        ECALL,          // 24
    ];
    let h = exec(&p, &[(5, addi(2, 0, 7))]);
    assert_eq!(h.reg(2), 7);
}

#[test]
fn ebreak_and_ecall_retire_and_resume_after() {
    let (mut hart, mut bus) = machine(&[EBREAK, addi(1, 0, 3), ECALL, addi(1, 1, 1), ECALL]);
    assert_eq!(hart.run(&mut bus, 100), Stop::Ebreak { pc: 0 });
    assert_eq!((hart.pc(), hart.instret(), hart.cycle()), (4, 1, 2));
    assert_eq!(hart.run(&mut bus, 100), Stop::Ecall { pc: 8 });
    assert_eq!(hart.run(&mut bus, 100), Stop::Ecall { pc: 16 });
    assert_eq!(hart.reg(1), 4);
}

#[test]
fn run_stops_at_the_first_boundary_at_or_after_until_cycle() {
    // An endless loop of divides (33 cycles) and adds (1).
    let p = [divu(3, 1, 1), addi(2, 2, 1), jal(0, -8)];
    let (mut hart, mut bus) = machine(&p);
    hart.set_reg(1, u32::MAX);
    assert_eq!(hart.run(&mut bus, 0), Stop::Cycle);
    assert_eq!(
        hart.cycle(),
        0,
        "nothing runs when the hart is already there"
    );
    assert_eq!(hart.run(&mut bus, 1), Stop::Cycle);
    assert_eq!(hart.cycle(), 33, "a divide is not split");
    assert_eq!(hart.run(&mut bus, 34), Stop::Cycle);
    assert_eq!(hart.cycle(), 34);
    assert_eq!(hart.run(&mut bus, 1000), Stop::Cycle);
    // The first pass is 33 + 1 + 5 = 39 cycles (the jump's first execution mispredicts), every
    // later one 33 + 1 + 1 = 35: pass 29 starts at 39 + 27 * 35 = 984, its divide ends at 1017.
    assert_eq!(hart.cycle(), 1017);
}

/// A RAM whose answers are a seeded random mix of latencies, retries and faults.
struct ChaosBus {
    ram: RamBus,
    state: u64,
}

impl ChaosBus {
    fn roll<T>(&mut self, done: BusResult<T>) -> BusResult<T> {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (self.state >> 33) as u32;
        match (r % 64, done) {
            (0..=3, _) => BusResult::Retry,
            (4, _) => BusResult::Fault,
            (_, BusResult::Done { value, .. }) => BusResult::Done {
                value,
                cycles: r >> 27,
            },
            (_, other) => other,
        }
    }
}

/// The most cycles a `ChaosBus` access reports (`r >> 27` of a 31-bit `r`).
const CHAOS_MAX: u32 = 15;

impl Bus for ChaosBus {
    fn fetch(&mut self, addr: u32, at: u64) -> BusResult<u32> {
        let r = self.ram.fetch(addr, at);
        self.roll(r)
    }
    fn load(&mut self, addr: u32, size: Size, at: u64) -> BusResult<u32> {
        let r = self.ram.load(addr, size, at);
        self.roll(r)
    }
    fn store(&mut self, addr: u32, size: Size, value: u32, at: u64) -> BusResult<()> {
        let r = self.ram.store(addr, size, value, at);
        self.roll(r)
    }
}

/// Words that are mostly real instructions (so programs run for a while), some random.
fn word() -> impl Strategy<Value = u32> {
    let reg = || 0u32..32;
    prop_oneof![
        any::<u32>(),
        (reg(), reg(), -64i32..64).prop_map(|(d, s, i)| addi(d, s, i)),
        (reg(), reg(), reg(), 0usize..18).prop_map(|(d, a, b, k)| {
            [
                add, sub, sll, slt, sltu, xor, srl, sra, or, and, mul, mulh, mulhsu, mulhu, div,
                divu, rem, remu,
            ][k](d, a, b)
        }),
        (reg(), reg(), -16i32..16, 0usize..8)
            .prop_map(|(d, s, i, k)| { [lb, lh, lw, lbu, lhu][k % 5](d, s, i) }),
        (reg(), reg(), -16i32..16, 0usize..3).prop_map(|(v, s, i, k)| [sb, sh, sw][k](v, s, i)),
        (reg(), reg(), -32i32..32, 0usize..6)
            .prop_map(|(a, b, o, k)| { [beq, bne, blt, bge, bltu, bgeu][k](a, b, o * 2) }),
        (reg(), -32i32..32).prop_map(|(d, o)| jal(d, o * 2)),
        (reg(), reg(), -8i32..8).prop_map(|(d, s, i)| jalr(d, s, i)),
        (reg(), 0usize..7, reg()).prop_map(|(d, c, s)| {
            csrrs(
                d,
                // `time` and `timeh` are illegal: the generator covers that answer too.
                [CYCLE, TIME, INSTRET, CYCLEH, TIMEH, INSTRETH, MHARTID][c],
                s % 2,
            )
        }),
        Just(FENCE),
        Just(EBREAK),
    ]
}

proptest! {
    #[test]
    fn random_programs_never_panic_and_respect_until_cycle(
        program in prop::collection::vec(word(), 1..64),
        regs in prop::collection::vec(
            prop_oneof![any::<u32>(), 0u32..0x200, LOCAL_RAM_BASE..LOCAL_RAM_BASE + 0x2100], 32),
        untils in prop::collection::vec(0u64..3000, 1..8),
        seed in any::<u64>(),
        faster in prop::option::of((0u32..0x100, 0u32..0x100, 2u32..=64)),
    ) {
        // Some runs with part of the program made faster (a what-if run): the same bounds hold.
        let speed_up = faster
            .and_then(|(a, b, f)| SpeedUp::new(f, &[(4 * a.min(b), 4 * a.max(b))]).ok());
        let mut ram = RamBus::new(0, 0x1000);
        ram.write_words(0, &program);
        let mut bus = ChaosBus { ram, state: seed };
        let mut hart = Hart::new(HartConfig::data_movement(3, 0));
        for (i, &v) in regs.iter().enumerate() {
            hart.set_reg(i, v);
        }
        let max = Cost::default().max_instruction_cycles(CHAOS_MAX);
        let mut until = 0;
        for step in untils {
            until += step;
            let before = hart.cycle();
            let stop = match &speed_up {
                Some(s) => {
                    let mut probe = Faster { probe: NoProbe, speed_up: s };
                    hart.run_probed(&mut bus, until, &mut probe)
                }
                None => hart.run(&mut bus, until),
            };
            prop_assert_eq!(hart.reg(0), 0);
            match stop {
                Stop::Cycle => {
                    prop_assert!(hart.cycle() >= until);
                    if before < until {
                        prop_assert!(hart.cycle() < until + max, "{} past {}", hart.cycle(), until);
                    } else {
                        prop_assert_eq!(hart.cycle(), before);
                    }
                }
                Stop::Retry { pc, .. } => {
                    prop_assert!(hart.cycle() < until);
                    prop_assert_eq!(pc, hart.pc());
                    hart.stall_until(hart.cycle() + 1);
                }
                Stop::Fault(f) => {
                    prop_assert!(hart.cycle() < until.max(before + 1));
                    prop_assert_eq!(f.pc, hart.pc());
                    // A fault is sticky unless the bus's answer was the cause (checked on the
                    // plain RAM, which never retries).
                    if !matches!(f.kind, FaultKind::Bus { .. }) {
                        let again = hart.run(&mut bus.ram, hart.cycle() + 1);
                        prop_assert_eq!(again, stop);
                    }
                    break;
                }
                Stop::Ecall { .. } | Stop::Ebreak { .. } => {
                    prop_assert!(hart.cycle() < until + max);
                }
            }
        }
    }

    #[test]
    fn a_step_that_stops_leaves_the_state_untouched(
        program in prop::collection::vec(word(), 1..64),
        regs in prop::collection::vec(
            prop_oneof![any::<u32>(), 0u32..0x200, LOCAL_RAM_BASE..LOCAL_RAM_BASE + 0x2100], 32),
        seed in any::<u64>(),
    ) {
        let mut ram = RamBus::new(0, 0x1000);
        ram.write_words(0, &program);
        let mut bus = ChaosBus { ram, state: seed };
        let mut hart = Hart::new(HartConfig::compute(1, 0));
        for (i, &v) in regs.iter().enumerate() {
            hart.set_reg(i, v);
        }
        for _ in 0..500 {
            let before = state(&hart);
            match hart.step(&mut bus) {
                None | Some(Stop::Ecall { .. }) | Some(Stop::Ebreak { .. }) => {
                    prop_assert_eq!(hart.instret(), before.3 + 1);
                    prop_assert!(hart.cycle() > before.2);
                }
                Some(Stop::Retry { .. }) => prop_assert_eq!(state(&hart), before),
                Some(Stop::Fault(_)) => {
                    prop_assert_eq!(state(&hart), before);
                    break;
                }
                Some(Stop::Cycle) => prop_assert!(false, "step never stops on the cycle"),
            }
        }
    }

    /// Every word an RV32IM + Zicsr hart decoded before `Isa` (what every hart decoded until
    /// Zba, Zbb and `cfg0` came) decodes the same on a Blackhole hart.
    #[test]
    fn a_blackhole_core_decodes_every_rv32im_zicsr_word_as_before(word in any::<u32>()) {
        let plain = Isa { zicsr: true, ..Isa::RV32IM };
        let before = komorebi_sim::riscv::decode(word, plain);
        if before != komorebi_sim::riscv::Op::Illegal {
            prop_assert_eq!(komorebi_sim::riscv::decode(word, Isa::BLACKHOLE), before);
        }
    }

    #[test]
    fn decoding_any_word_never_panics(word in any::<u32>()) {
        for isa in [komorebi_sim::riscv::Isa::RV32IM, komorebi_sim::riscv::Isa::BLACKHOLE] {
            let _ = komorebi_sim::riscv::decode(word, isa);
        }
    }
}

/// The profiler on a hart: calls through `jal ra`/`jalr ra`, returns through `jalr x0, ra`,
/// a tail call through `jal x0` (no frame), every instruction's cycles charged to its `pc`
/// under the call sites not yet returned from; the totals add up to the hart's clock.
#[test]
fn the_profiler_charges_each_instruction_under_its_call_stack() {
    use komorebi_sim::profile::{CoreProfiler, ProfileSample};
    let p = [
        jal(1, 16),    // 0: call f (16)            1 + 4
        jal(1, 12),    // 4: call f again           1 + 4
        ECALL,         // 8:                        2
        0,             // 12
        jal(5, 12),    // 16: f: call g (28), link x5 1 + 4
        jal(0, 16),    // 20: tail call h (36)      1 + 4
        0,             // 24
        jalr(0, 5, 0), // 28: g: return via x5      1 + 4
        0,             // 32
        addi(3, 3, 1), // 36: h:                    1
        jalr(0, 1, 0), // 40: return (to f's caller) 1 + 4
    ];
    let (mut hart, mut bus) = machine(&p);
    let mut profiler = CoreProfiler::default();
    hart.stall_until_probed(10, &mut profiler);
    let stop = hart.run_probed(&mut bus, u64::MAX, &mut profiler);
    assert_eq!(stop, Stop::Ecall { pc: 8 });
    let s = |sites: &[u32], pc, cycles| ProfileSample {
        call_sites: sites.to_vec(),
        pc,
        cycles,
    };
    assert_eq!(
        profiler.samples(),
        vec![
            s(&[], 0, 5),
            s(&[], 4, 5),
            s(&[], 8, 2),
            s(&[0], 16, 5),
            s(&[0], 20, 5),
            s(&[0], 36, 1),
            s(&[0], 40, 5),
            s(&[0, 16], 28, 5),
            // The second call's jumps go where they went before (predicted, 1 each) but for
            // h's return, which went to 4 and now goes to 8 (mispredicted, 5).
            s(&[4], 16, 1),
            s(&[4], 20, 1),
            s(&[4], 36, 1),
            s(&[4], 40, 5),
            s(&[4, 16], 28, 1),
        ]
    );
    assert_eq!(profiler.stalled_cycles(), 10);
    let charged: u64 = profiler.samples().iter().map(|s| s.cycles).sum();
    assert_eq!(charged + profiler.stalled_cycles(), hart.cycle());
}

/// Runs `program` to its `ecall` with the code in `ranges` made `factor` times faster and
/// returns the cycles charged before the `ecall` (as a profile sees them).
fn cycles_made_faster(program: &[u32], ranges: &[(u32, u32)], factor: u32) -> u64 {
    /// Adds up what every instruction but the `ecall` at `last` was charged.
    struct Charged {
        last: u32,
        total: u64,
    }
    impl Probe for Charged {
        fn retired(&mut self, pc: u32, _flow: Flow, cycles: u64) {
            if pc != self.last {
                self.total += cycles;
            }
        }
        fn stalled(&mut self, cycles: u64) {
            self.total += cycles;
        }
    }
    let (mut hart, mut bus) = machine(program);
    bus.load_cycles = Cost::default().load_l1;
    let speed_up = SpeedUp::new(factor, ranges).unwrap();
    let last = 4 * (program.len() as u32 - 1);
    let mut probe = Faster {
        probe: Charged { last, total: 0 },
        speed_up: &speed_up,
    };
    assert_eq!(
        hart.run_probed(&mut bus, u64::MAX, &mut probe),
        Stop::Ecall { pc: last }
    );
    probe.probe.total
}

#[test]
fn a_speed_up_divides_the_named_code_s_own_cycles_and_nothing_else() {
    // Eight independent instructions: 8 cycles, 4 at twice the speed, 2 at four times.
    let eight: Vec<u32> = (0..8).map(|i| addi(3 + i, 0, 1)).chain([ECALL]).collect();
    assert_eq!(cycles_made_faster(&eight, &[(0x1000, 0x1004)], 2), 8);
    assert_eq!(cycles_made_faster(&eight, &[(0, 32)], 2), 4);
    assert_eq!(cycles_made_faster(&eight, &[(0, 32)], 4), 2);
    // Half of them: the other half keeps its cost.
    assert_eq!(cycles_made_faster(&eight, &[(0, 16)], 4), 1 + 4);
    // A load and its use: 1 + 8 as charged; made twice as fast, the load's latency is 7 / 2
    // rounded up, 4, after its half cycle, and the add's own cycle and the carried half make
    // one: 4 + 1. At 64 times the latency is still a cycle: a result never comes back at once.
    let load_use = [lw(1, 0, 0x100), add(2, 1, 1), ECALL];
    assert_eq!(cycles_made_faster(&load_use, &[(0, 0x1000)], 64), 1);
    assert_eq!(cycles_made_faster(&load_use, &[(0, 8)], 2), 4 + 1);
    // Only the use made faster: the wait for the load's result stays (7), its own cycle is
    // halved (0, carried).
    assert_eq!(cycles_made_faster(&load_use, &[(4, 8)], 2), 1 + 7);
}

#[test]
fn a_faster_load_still_retires_only_with_its_result() {
    // The load made twice as fast (its result 4 cycles after it entered; its half cycle
    // carried), the CSR read and the add after it not: the CSR read enters at once (2), retires
    // after the load, at 5, and the add waits for that: 3 + 1.
    let program = [lw(1, 0, 0x100), csrrs(10, CYCLE, 0), addi(2, 0, 1), ECALL];
    assert_eq!(cycles_made_faster(&program, &[(0, 4)], 2), 2 + 3 + 1);
    // Nine loads made twice as fast (4 cycles of their halves), then a CSR read (2) and an add:
    // eight loads fill the retire queue, the ninth enters when the first retires (at 4); sped
    // up, they retire as their results come, two a cycle (the what-if speeds the retire unit
    // up too), the ninth at 8, the CSR read at 9, and the add enters then (9 - 6 + 1).
    let mut program: Vec<u32> = (0..9).map(|i| lw(1 + i, 0, 0x100 + 4 * i as i32)).collect();
    program.extend([csrrs(10, CYCLE, 0), addi(20, 0, 1), ECALL]);
    assert_eq!(cycles_made_faster(&program, &[(0, 36)], 2), 4 + 2 + 4);
    // Under the blocking rule a faster instruction costs its whole latency divided.
    let (mut hart, mut bus) = machine_with(&[lw(1, 0, 0x100), add(2, 1, 1), ECALL], blocking());
    bus.load_cycles = Cost::default().load_l1;
    let speed_up = SpeedUp::new(4, &[(0, 8)]).unwrap();
    let mut probe = Faster {
        probe: NoProbe,
        speed_up: &speed_up,
    };
    assert_eq!(
        hart.run_probed(&mut bus, u64::MAX, &mut probe),
        Stop::Ecall { pc: 8 }
    );
    // (8 + 1) / 4 = 2, carry 1, then the ecall's 2.
    assert_eq!(hart.cycle(), 2 + 2);
}

#[test]
fn a_speed_up_takes_its_ranges_in_any_order_and_refuses_what_it_cannot_do() {
    let s = SpeedUp::new(3, &[(0x40, 0x80), (0x10, 0x20), (0x18, 0x30), (0x90, 0x90)]).unwrap();
    assert_eq!(s.ranges(), &[(0x10, 0x30), (0x40, 0x80)]);
    assert_eq!(s.factor(), 3);
    for (pc, factor) in [
        (0xC, 1),
        (0x10, 3),
        (0x2C, 3),
        (0x30, 1),
        (0x40, 3),
        (0x7C, 3),
        (0x80, 1),
    ] {
        assert_eq!(s.factor_at(pc), factor, "{pc:#x}");
    }
    assert_eq!(SpeedUp::new(1, &[(0, 4)]), Err(SpeedUpError::Factor(1)));
    assert_eq!(SpeedUp::new(65, &[(0, 4)]), Err(SpeedUpError::Factor(65)));
    assert_eq!(SpeedUp::new(2, &[(4, 4)]), Err(SpeedUpError::NoCode));
    assert_eq!(
        SpeedUpError::Factor(1).to_string(),
        "speed-up factor 1: allowed 2..=64"
    );
}

/// An instruction costs at least a cycle whatever the cost rule says: a loop of free
/// instructions (`base: 0`) never let `run` reach its cycle, and it never returned.
#[test]
fn a_loop_of_instructions_priced_at_nothing_still_lets_time_pass() {
    for pipelined in [false, true] {
        let free = Cost {
            base: 0,
            pipelined,
            ..Cost::default()
        };
        let (mut hart, mut bus) = machine_with(&[enc::jal(0, 0)], free);
        assert!(matches!(hart.run(&mut bus, 1000), Stop::Cycle));
        assert!(hart.cycle() >= 1000, "pipelined {pipelined}");
    }
}
