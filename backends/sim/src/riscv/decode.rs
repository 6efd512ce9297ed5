//! The RV32IM decoder, with Zicsr, Zba and Zbb on a hart whose [`Isa`] has them: one 32-bit
//! word to one [`Op`], exactly as the RISC-V unprivileged spec (RV32I, M, Zicsr, B chapters)
//! encodes them, with every fixed field checked. Any other word is [`Op::Illegal`]:
//! compressed encodings (low bits not `0b11`), RV64 forms, other extensions (A, F, Zbs, Zbkb's
//! `pack` with a second register, Zifencei's `fence.i`: the baby cores do not implement it
//! (tt-isa-documentation `WormholeB0/TensixTile/BabyRISCV/InstructionCache.md`: it runs "as if
//! it were a `nop`"; Blackhole's `InstructionSet.md`, in the `jasondavies` fork, lists no
//! Zifencei, and its README has unsupported instructions "result in UndefinedBehavior"), so
//! firmware that used it would not get what it asked for, ...), Zicsr, Zba and Zbb words on a
//! hart without them, `mret`/`wfi`, reserved `funct` values, shifts by an immediate with bit 5
//! set, unknown CSRs, and every CSR access that would write a read-only CSR.
//!
//! Why a decoder of our own and not a crate: `raki` 1.3 accepts
//! Zbb words such as `andn`/`rol`/`min` as plain `and`/`sll`/`xor` (it does not check `funct7`
//! for most register-register operations), and folds `csrrs rd, cycle, rs1` into a read that
//! drops `rs1`; `riscv-decode` 0.2 is an RV64GC decoder (accepts `ld`/`sd`, 6-bit shift amounts)
//! and does not check `jalr`'s `funct3`. Filtering either would take the field checks this
//! file is made of.
//!
//! Pure function of the word and the [`Isa`]; never panics.

use super::op::{AluOp, Cond, Counter, CsrOp, DivOp, MulOp, Op, Size, UnaryOp};

/// The instruction-set extensions a hart implements beyond RV32IM, as far as the decoder knows
/// them: what [`decode`] accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Isa {
    /// Zicsr, the CSR instructions (`csrrw`, `csrrs`, `csrrc` and their immediate forms).
    pub zicsr: bool,
    /// Zba, address generation (`sh1add`, `sh2add`, `sh3add`).
    pub zba: bool,
    /// Zbb, basic bit manipulation (`andn`, `min`, `clz`, `cpop`, `zext.h`, `rev8`, ...).
    pub zbb: bool,
    /// The configuration CSR `cfg0` (0x7C0), read and written by `csrrw`/`csrrs`/`csrrc`: a
    /// Blackhole core's (tt-metal `tt_metal/hw/inc/internal/tt-1xx/risc_common.h`,
    /// `set_l1_data_cache`; ttsim's `CSR_CFG0`). Bit 3 turns the core's L0 data cache off.
    pub cfg0: bool,
}

impl Isa {
    /// RV32IM alone: a Wormhole baby core's instructions (tt-isa-documentation
    /// `WormholeB0/TensixTile/BabyRISCV/README.md`; ttsim's `wh` build refuses every CSR
    /// instruction, and has no Zba or Zbb either).
    pub const RV32IM: Isa = Isa {
        zicsr: false,
        zba: false,
        zbb: false,
        cfg0: false,
    };

    /// RV32IM + Zicsr + Zba + Zbb: a Blackhole baby core's integer instructions (the
    /// `jasondavies/tt-isa-documentation` fork's
    /// `BlackholeA0/TensixTile/BabyRISCV/InstructionSet.md`, a page the upstream repository does
    /// not have, which lists Zaamo and parts of F, Zfh and Zbkb too: the firmware is not built
    /// for those, so they stay illegal here), and its `cfg0` CSR.
    pub const BLACKHOLE: Isa = Isa {
        zicsr: true,
        zba: true,
        zbb: true,
        cfg0: true,
    };
}

/// The decoded form of `word` on a hart implementing `isa`; [`Op::Illegal`] if it does not
/// implement it.
pub fn decode(word: u32, isa: Isa) -> Op {
    let rd = ((word >> 7) & 31) as u8;
    let rs1 = ((word >> 15) & 31) as u8;
    let rs2 = ((word >> 20) & 31) as u8;
    let funct3 = (word >> 12) & 7;
    let funct7 = word >> 25;
    // I-type immediate: bits 31:20, sign-extended.
    let imm_i = ((word as i32) >> 20) as u32;
    match word & 0x7F {
        0x37 => Op::Lui {
            rd,
            imm: word & 0xFFFF_F000,
        },
        0x17 => Op::Auipc {
            rd,
            imm: word & 0xFFFF_F000,
        },
        0x6F => Op::Jal {
            rd,
            offset: imm_j(word),
        },
        0x67 if funct3 == 0 => Op::Jalr {
            rd,
            rs1,
            offset: imm_i as i32,
        },
        0x63 => {
            let cond = match funct3 {
                0 => Cond::Eq,
                1 => Cond::Ne,
                4 => Cond::Lt,
                5 => Cond::Ge,
                6 => Cond::Ltu,
                7 => Cond::Geu,
                _ => return Op::Illegal,
            };
            Op::Branch {
                cond,
                rs1,
                rs2,
                offset: imm_b(word),
            }
        }
        0x03 => {
            let (size, signed) = match funct3 {
                0 => (Size::Byte, true),
                1 => (Size::Half, true),
                2 => (Size::Word, true),
                4 => (Size::Byte, false),
                5 => (Size::Half, false),
                _ => return Op::Illegal,
            };
            Op::Load {
                size,
                signed,
                rd,
                rs1,
                offset: imm_i as i32,
            }
        }
        0x23 => {
            let size = match funct3 {
                0 => Size::Byte,
                1 => Size::Half,
                2 => Size::Word,
                _ => return Op::Illegal,
            };
            Op::Store {
                size,
                rs1,
                rs2,
                offset: imm_s(word),
            }
        }
        0x13 => {
            let op = match (funct3, funct7) {
                (0, _) => AluOp::Add,
                (2, _) => AluOp::Slt,
                (3, _) => AluOp::Sltu,
                (4, _) => AluOp::Xor,
                (6, _) => AluOp::Or,
                (7, _) => AluOp::And,
                // RV32: shamt[5] (bit 25) set is reserved, so funct7 must be exact.
                (1, 0x00) => AluOp::Sll,
                (5, 0x00) => AluOp::Srl,
                (5, 0x20) => AluOp::Sra,
                (5, 0x30) if isa.zbb => AluOp::Ror,
                (1, 0x30) | (5, 0x14) | (5, 0x34) if isa.zbb => {
                    return unary(funct3, word >> 20, rd, rs1);
                }
                _ => return Op::Illegal,
            };
            let imm = match op {
                AluOp::Sll | AluOp::Srl | AluOp::Sra | AluOp::Ror => imm_i & 31,
                _ => imm_i,
            };
            Op::AluImm { op, rd, rs1, imm }
        }
        0x33 => match funct7 {
            0x00 => {
                let op = match funct3 {
                    0 => AluOp::Add,
                    1 => AluOp::Sll,
                    2 => AluOp::Slt,
                    3 => AluOp::Sltu,
                    4 => AluOp::Xor,
                    5 => AluOp::Srl,
                    6 => AluOp::Or,
                    _ => AluOp::And,
                };
                Op::Alu { op, rd, rs1, rs2 }
            }
            0x20 => match funct3 {
                0 => Op::Alu {
                    op: AluOp::Sub,
                    rd,
                    rs1,
                    rs2,
                },
                5 => Op::Alu {
                    op: AluOp::Sra,
                    rd,
                    rs1,
                    rs2,
                },
                _ => bitmanip(funct7, funct3, rd, rs1, rs2, isa),
            },
            0x01 => {
                let mul = |op| Op::Mul { op, rd, rs1, rs2 };
                let div = |op| Op::Div { op, rd, rs1, rs2 };
                match funct3 {
                    0 => mul(MulOp::Mul),
                    1 => mul(MulOp::Mulh),
                    2 => mul(MulOp::Mulhsu),
                    3 => mul(MulOp::Mulhu),
                    4 => div(DivOp::Div),
                    5 => div(DivOp::Divu),
                    6 => div(DivOp::Rem),
                    _ => div(DivOp::Remu),
                }
            }
            _ => bitmanip(funct7, funct3, rd, rs1, rs2, isa),
        },
        // FENCE: the spec has implementations ignore rd, rs1 and reserved fm/pred/succ values
        // (treating them as a normal fence). FENCE.I (funct3 1) is Zifencei's: illegal.
        0x0F => match funct3 {
            0 => Op::Fence,
            _ => Op::Illegal,
        },
        0x73 => match funct3 {
            0 => match word {
                0x0000_0073 => Op::Ecall,
                0x0010_0073 => Op::Ebreak,
                _ => Op::Illegal,
            },
            4 => Op::Illegal,
            _ if !isa.zicsr => Op::Illegal,
            _ => {
                // csrrw/csrrwi always write; csrrs/csrrc (and the immediate forms) write only
                // when rs1 (the 5-bit immediate) is not zero. Every implemented CSR but `cfg0`
                // is read-only, so a write is an illegal instruction (Zicsr chapter).
                let writes = matches!(funct3, 1 | 5) || rs1 != 0;
                if word >> 20 == blackhole_pac::tensix::CSR_CFG0 && isa.cfg0 {
                    let op = match funct3 & 3 {
                        1 => CsrOp::Write,
                        2 => CsrOp::Set,
                        _ => CsrOp::Clear,
                    };
                    return Op::Cfg0 {
                        rd,
                        op,
                        src: rs1,
                        imm: funct3 >= 5,
                    };
                }
                match Counter::from_address(word >> 20) {
                    Some(csr) if !writes => Op::CsrRead { rd, csr },
                    _ => Op::Illegal,
                }
            }
        },
        _ => Op::Illegal,
    }
}

/// A register-register word of OP (`0x33`) that is not RV32IM's: Zba's and Zbb's (`zext.h` is
/// Zbkb's `pack` with `x0` as its second register, the only form Zbb has).
fn bitmanip(funct7: u32, funct3: u32, rd: u8, rs1: u8, rs2: u8, isa: Isa) -> Op {
    let op = match (funct7, funct3) {
        (0x10, 2) if isa.zba => AluOp::Sh1add,
        (0x10, 4) if isa.zba => AluOp::Sh2add,
        (0x10, 6) if isa.zba => AluOp::Sh3add,
        (0x20, 7) if isa.zbb => AluOp::Andn,
        (0x20, 6) if isa.zbb => AluOp::Orn,
        (0x20, 4) if isa.zbb => AluOp::Xnor,
        (0x05, 4) if isa.zbb => AluOp::Min,
        (0x05, 5) if isa.zbb => AluOp::Minu,
        (0x05, 6) if isa.zbb => AluOp::Max,
        (0x05, 7) if isa.zbb => AluOp::Maxu,
        (0x30, 1) if isa.zbb => AluOp::Rol,
        (0x30, 5) if isa.zbb => AluOp::Ror,
        (0x04, 4) if isa.zbb && rs2 == 0 => {
            return Op::Unary {
                op: UnaryOp::ZextH,
                rd,
                rs1,
            };
        }
        _ => return Op::Illegal,
    };
    Op::Alu { op, rd, rs1, rs2 }
}

/// The one-register words of Zbb in OP-IMM (`0x13`), by `funct3` and the word's bits 31:20
/// (the caller checked Zbb and bits 31:25).
fn unary(funct3: u32, imm: u32, rd: u8, rs1: u8) -> Op {
    let op = match (funct3, imm) {
        (1, 0x600) => UnaryOp::Clz,
        (1, 0x601) => UnaryOp::Ctz,
        (1, 0x602) => UnaryOp::Cpop,
        (1, 0x604) => UnaryOp::SextB,
        (1, 0x605) => UnaryOp::SextH,
        (5, 0x287) => UnaryOp::OrcB,
        (5, 0x698) => UnaryOp::Rev8,
        _ => return Op::Illegal,
    };
    Op::Unary { op, rd, rs1 }
}

/// S-type immediate: bits 31:25 and 11:7, sign-extended.
fn imm_s(word: u32) -> i32 {
    (((word & 0xFE00_0000) as i32) >> 20) | ((word >> 7) & 0x1F) as i32
}

/// B-type immediate: imm[12|10:5] in bits 31:25, imm[4:1|11] in bits 11:7.
fn imm_b(word: u32) -> i32 {
    let sign = ((word & 0x8000_0000) as i32) >> 19; // imm[12] and up
    let b11 = ((word >> 7) & 1) << 11;
    let b10_5 = ((word >> 25) & 0x3F) << 5;
    let b4_1 = ((word >> 8) & 0xF) << 1;
    sign | (b11 | b10_5 | b4_1) as i32
}

/// J-type immediate: imm[20|10:1|11|19:12] in bits 31:12.
fn imm_j(word: u32) -> i32 {
    let sign = ((word & 0x8000_0000) as i32) >> 11; // imm[20] and up
    let b19_12 = word & 0x000F_F000;
    let b11 = ((word >> 20) & 1) << 11;
    let b10_1 = ((word >> 21) & 0x3FF) << 1;
    sign | (b19_12 | b11 | b10_1) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates_decode_at_their_extremes() {
        // beq x0, x0, -4096 (imm[12] set, all else 0) and +4094.
        assert_eq!(
            decode(0x8000_0063, Isa::RV32IM),
            Op::Branch {
                cond: Cond::Eq,
                rs1: 0,
                rs2: 0,
                offset: -4096
            }
        );
        assert_eq!(
            decode(0x7E00_0FE3, Isa::RV32IM),
            Op::Branch {
                cond: Cond::Eq,
                rs1: 0,
                rs2: 0,
                offset: 4094
            }
        );
        // jal x0, -1 MiB and +1 MiB - 2.
        assert_eq!(
            decode(0x8000_006F, Isa::RV32IM),
            Op::Jal {
                rd: 0,
                offset: -(1 << 20)
            }
        );
        assert_eq!(
            decode(0x7FFF_F06F, Isa::RV32IM),
            Op::Jal {
                rd: 0,
                offset: (1 << 20) - 2
            }
        );
        // sw x0, -2048(x0) and 2047(x0).
        assert_eq!(
            decode(0x8000_2023, Isa::RV32IM),
            Op::Store {
                size: Size::Word,
                rs1: 0,
                rs2: 0,
                offset: -2048
            }
        );
        assert_eq!(
            decode(0x7E00_2FA3, Isa::RV32IM),
            Op::Store {
                size: Size::Word,
                rs1: 0,
                rs2: 0,
                offset: 2047
            }
        );
    }

    #[test]
    fn words_outside_rv32im_zicsr_are_illegal() {
        for word in [
            0x0000_0000u32, // all zero: defined illegal
            0xFFFF_FFFF,    // all ones
            0x0000_4501,    // c.li (compressed)
            0x403170B3,     // andn (Zbb)
            0x603110B3,     // rol (Zbb)
            0x0A3140B3,     // min (Zbb)
            0x20C5A533,     // sh1add (Zba)
            0x000090E7,     // jalr with funct3 = 1
            0x30200073,     // mret
            0x10500073,     // wfi
            0x000000F3,     // ecall with rd = 1
            0x0020B083,     // ld (RV64)
            0x02009093,     // slli with shamt[5] set
            0xC0011073,     // csrrw x0, cycle, x2: writes a read-only CSR
            0xC00120F3,     // csrrs x1, cycle, x2: writes (rs1 != x0)
            0xC000D0F3,     // csrrwi x1, cycle, 1
            0x30002073,     // csrrs x0, mstatus, x0: CSR not implemented
            0x0000200F,     // MISC-MEM funct3 = 2
            0x1000202F,     // lr.w (A)
        ] {
            assert_eq!(decode(word, RV32IM_ZICSR), Op::Illegal, "{word:#010x}");
        }
    }

    /// RV32IM with the CSR instructions: what every hart decoded before `Isa`.
    const RV32IM_ZICSR: Isa = Isa {
        zicsr: true,
        ..Isa::RV32IM
    };

    #[test]
    fn a_wormhole_core_has_no_csr_instructions() {
        // csrrs x1, cycle, x0 and csrrsi x1, mhartid, 0: reads on a Blackhole core.
        for word in [0xC000_20F3u32, 0xF140_60F3] {
            assert_ne!(decode(word, Isa::BLACKHOLE), Op::Illegal, "{word:#010x}");
            assert_eq!(decode(word, Isa::RV32IM), Op::Illegal, "{word:#010x}");
        }
    }

    #[test]
    fn fences_ignore_their_reserved_fields() {
        assert_eq!(decode(0x0FF0_000F, Isa::RV32IM), Op::Fence); // fence iorw, iorw
        assert_eq!(decode(0x8330_000F, Isa::RV32IM), Op::Fence); // fence.tso
        assert_eq!(decode(0x0000_100F, Isa::RV32IM), Op::Illegal);
        assert_eq!(decode(0x0000_100F, Isa::BLACKHOLE), Op::Illegal);
        assert_eq!(
            decode(0xC00020F3, Isa::BLACKHOLE),
            Op::CsrRead {
                rd: 1,
                csr: Counter::Cycle
            }
        );
        assert_eq!(
            decode(0xF14060F3, Isa::BLACKHOLE), // csrrsi x1, mhartid, 0: does not write
            Op::CsrRead {
                rd: 1,
                csr: Counter::MHartId
            }
        );
    }

    /// Every Zba and Zbb word with `a0, a1, a2` (or `a0, a1`, or `a0, a1, 7`), as LLVM's
    /// assembler encodes it (`llvm-mc --triple=riscv32 -mattr=+zba,+zbb -show-encoding`).
    const BITMANIP: [(u32, Op); 21] = {
        const fn alu(op: AluOp) -> Op {
            Op::Alu {
                op,
                rd: 10,
                rs1: 11,
                rs2: 12,
            }
        }
        const fn unary(op: UnaryOp) -> Op {
            Op::Unary {
                op,
                rd: 10,
                rs1: 11,
            }
        }
        [
            (0x20C5_A533, alu(AluOp::Sh1add)),
            (0x20C5_C533, alu(AluOp::Sh2add)),
            (0x20C5_E533, alu(AluOp::Sh3add)),
            (0x40C5_F533, alu(AluOp::Andn)),
            (0x40C5_E533, alu(AluOp::Orn)),
            (0x40C5_C533, alu(AluOp::Xnor)),
            (0x0AC5_C533, alu(AluOp::Min)),
            (0x0AC5_D533, alu(AluOp::Minu)),
            (0x0AC5_E533, alu(AluOp::Max)),
            (0x0AC5_F533, alu(AluOp::Maxu)),
            (0x60C5_9533, alu(AluOp::Rol)),
            (0x60C5_D533, alu(AluOp::Ror)),
            (
                0x6075_D513,
                Op::AluImm {
                    op: AluOp::Ror,
                    rd: 10,
                    rs1: 11,
                    imm: 7,
                },
            ),
            (0x6005_9513, unary(UnaryOp::Clz)),
            (0x6015_9513, unary(UnaryOp::Ctz)),
            (0x6025_9513, unary(UnaryOp::Cpop)),
            (0x6045_9513, unary(UnaryOp::SextB)),
            (0x6055_9513, unary(UnaryOp::SextH)),
            (0x0805_C533, unary(UnaryOp::ZextH)),
            (0x2875_D513, unary(UnaryOp::OrcB)),
            (0x6985_D513, unary(UnaryOp::Rev8)),
        ]
    };

    #[test]
    fn zba_and_zbb_decode_on_blackhole_and_are_illegal_on_rv32im() {
        for (word, op) in BITMANIP {
            assert_eq!(decode(word, Isa::BLACKHOLE), op, "{word:#010x}");
            assert_eq!(decode(word, Isa::RV32IM), Op::Illegal, "{word:#010x}");
        }
        // Each extension alone: Zba's words need Zba, Zbb's need Zbb.
        let zba = Isa {
            zba: true,
            ..Isa::RV32IM
        };
        let zbb = Isa {
            zbb: true,
            ..Isa::RV32IM
        };
        for (i, (word, op)) in BITMANIP.into_iter().enumerate() {
            let (with, without) = if i < 3 { (zba, zbb) } else { (zbb, zba) };
            assert_eq!(decode(word, with), op, "{word:#010x}");
            assert_eq!(decode(word, without), Op::Illegal, "{word:#010x}");
        }
    }

    #[test]
    fn near_misses_of_zba_and_zbb_are_illegal_on_blackhole() {
        for word in [
            0x08C5_C533u32,        // pack a0, a1, a2 (Zbkb): zext.h is only its x0 form
            0x6035_9513,           // clz's neighbour 0x603: no such word
            0x6065_9513,           // 0x606
            0x6005_D513 | 1 << 25, // rori with shamt[5] set
            0x2865_D513,           // orc.b's neighbour 0x286 (brev8 is 0x687, Zbkb)
            0x6875_D513,           // brev8 (Zbkb)
            0x0AC5_9533,           // funct7 0x05, funct3 1 (clmul, Zbc)
            0x20C5_9533,           // funct7 0x10, funct3 1: no Zba word
            0x48C5_9533,           // bclr (Zbs)
            0x2805_9513,           // bseti (Zbs)
        ] {
            assert_eq!(decode(word, Isa::BLACKHOLE), Op::Illegal, "{word:#010x}");
        }
    }

    #[test]
    fn cfg0_is_read_and_written_on_blackhole_only() {
        // csrrs zero, 0x7c0, t0 (tt-metal's `set_l1_data_cache<false>` has t1), csrrc a0, 0x7c0,
        // a1, csrrwi zero, 0x7c0, 8, csrrs a0, 0x7c0, zero (a read), csrrw a0, 0x7c0, a1,
        // csrrsi a0, 0x7c0, 8.
        for (word, op) in [
            (
                0x7C02_A073u32,
                Op::Cfg0 {
                    rd: 0,
                    op: CsrOp::Set,
                    src: 5,
                    imm: false,
                },
            ),
            (
                0x7C05_B573,
                Op::Cfg0 {
                    rd: 10,
                    op: CsrOp::Clear,
                    src: 11,
                    imm: false,
                },
            ),
            (
                0x7C04_5073,
                Op::Cfg0 {
                    rd: 0,
                    op: CsrOp::Write,
                    src: 8,
                    imm: true,
                },
            ),
            (
                0x7C00_2573,
                Op::Cfg0 {
                    rd: 10,
                    op: CsrOp::Set,
                    src: 0,
                    imm: false,
                },
            ),
            (
                0x7C05_9573,
                Op::Cfg0 {
                    rd: 10,
                    op: CsrOp::Write,
                    src: 11,
                    imm: false,
                },
            ),
            (
                0x7C04_6573,
                Op::Cfg0 {
                    rd: 10,
                    op: CsrOp::Set,
                    src: 8,
                    imm: true,
                },
            ),
        ] {
            assert_eq!(decode(word, Isa::BLACKHOLE), op, "{word:#010x}");
            assert_eq!(decode(word, Isa::RV32IM), Op::Illegal, "{word:#010x}");
        }
        // Its neighbours are still unknown CSRs.
        assert_eq!(decode(0x7C12_A073, Isa::BLACKHOLE), Op::Illegal);
        assert_eq!(decode(0x7BF2_A073, Isa::BLACKHOLE), Op::Illegal);
    }
}
