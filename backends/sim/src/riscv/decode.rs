//! The RV32IM + Zicsr decoder: one 32-bit word to one [`Op`], exactly as the RISC-V
//! unprivileged spec (RV32I, M, Zicsr, Zifencei chapters) encodes them, with every fixed field
//! checked. Any other word is [`Op::Illegal`]: compressed encodings (low bits not `0b11`), RV64
//! forms, other extensions (A, F, Zba/Zbb, ...), `mret`/`wfi`, reserved `funct` values, shifts
//! by an immediate with bit 5 set, unknown CSRs, and every CSR access that would write a
//! read-only CSR.
//!
//! Why a decoder of our own and not a crate: `raki` 1.3 decodes `fence.i` as an error, accepts
//! Zbb words such as `andn`/`rol`/`min` as plain `and`/`sll`/`xor` (it does not check `funct7`
//! for most register-register operations), and folds `csrrs rd, cycle, rs1` into a read that
//! drops `rs1`; `riscv-decode` 0.2 is an RV64GC decoder (accepts `ld`/`sd`, 6-bit shift amounts)
//! and does not check `jalr`'s `funct3`. Filtering either would take the field checks this
//! file is made of.
//!
//! Pure function of the word; never panics.

use super::op::{AluOp, Cond, Counter, DivOp, MulOp, Op, Size};

/// The decoded form of `word`; [`Op::Illegal`] if the hart does not implement it.
pub fn decode(word: u32) -> Op {
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
                _ => return Op::Illegal,
            };
            let imm = match op {
                AluOp::Sll | AluOp::Srl | AluOp::Sra => imm_i & 31,
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
                _ => Op::Illegal,
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
            _ => Op::Illegal,
        },
        // FENCE: the spec has implementations ignore rd, rs1 and reserved fm/pred/succ values
        // (treating them as a normal fence); FENCE.I likewise ignores its imm, rs1 and rd.
        0x0F => match funct3 {
            0 => Op::Fence,
            1 => Op::FenceI,
            _ => Op::Illegal,
        },
        0x73 => match funct3 {
            0 => match word {
                0x0000_0073 => Op::Ecall,
                0x0010_0073 => Op::Ebreak,
                _ => Op::Illegal,
            },
            4 => Op::Illegal,
            _ => {
                // csrrw/csrrwi always write; csrrs/csrrc (and the immediate forms) write only
                // when rs1 (the 5-bit immediate) is not zero. Every implemented CSR is
                // read-only, so a write is an illegal instruction (Zicsr chapter).
                let writes = matches!(funct3, 1 | 5) || rs1 != 0;
                match Counter::from_address(word >> 20) {
                    Some(csr) if !writes => Op::CsrRead { rd, csr },
                    _ => Op::Illegal,
                }
            }
        },
        _ => Op::Illegal,
    }
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
            decode(0x8000_0063),
            Op::Branch {
                cond: Cond::Eq,
                rs1: 0,
                rs2: 0,
                offset: -4096
            }
        );
        assert_eq!(
            decode(0x7E00_0FE3),
            Op::Branch {
                cond: Cond::Eq,
                rs1: 0,
                rs2: 0,
                offset: 4094
            }
        );
        // jal x0, -1 MiB and +1 MiB - 2.
        assert_eq!(
            decode(0x8000_006F),
            Op::Jal {
                rd: 0,
                offset: -(1 << 20)
            }
        );
        assert_eq!(
            decode(0x7FFF_F06F),
            Op::Jal {
                rd: 0,
                offset: (1 << 20) - 2
            }
        );
        // sw x0, -2048(x0) and 2047(x0).
        assert_eq!(
            decode(0x8000_2023),
            Op::Store {
                size: Size::Word,
                rs1: 0,
                rs2: 0,
                offset: -2048
            }
        );
        assert_eq!(
            decode(0x7E00_2FA3),
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
            assert_eq!(decode(word), Op::Illegal, "{word:#010x}");
        }
    }

    #[test]
    fn fences_ignore_their_reserved_fields() {
        assert_eq!(decode(0x0FF0_000F), Op::Fence); // fence iorw, iorw
        assert_eq!(decode(0x8330_000F), Op::Fence); // fence.tso
        assert_eq!(decode(0x0000_100F), Op::FenceI);
        assert_eq!(
            decode(0xC00020F3),
            Op::CsrRead {
                rd: 1,
                csr: Counter::Cycle
            }
        );
        assert_eq!(
            decode(0xF14060F3), // csrrsi x1, mhartid, 0: does not write
            Op::CsrRead {
                rd: 1,
                csr: Counter::MHartId
            }
        );
    }
}
