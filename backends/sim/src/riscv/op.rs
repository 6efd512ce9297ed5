//! The decoded form of one RV32IM instruction (and, on a hart whose
//! [`Isa`](super::decode::Isa) has them, Zicsr, Zba and Zbb): what [`decode`](super::decode::decode)
//! produces and the hart executes. Plain data, small and `Copy` (12 bytes), so the hart's
//! decoded-instruction cache holds it by value; the one-cycle integer operations also say what
//! they compute ([`AluOp::apply`], [`UnaryOp::apply`]).
//!
//! Immediates are stored already sign-extended and shifted into place; nothing depends on the
//! instruction's address, so one decoded word is valid wherever it sits.

/// Width of a memory access. Accesses must be naturally aligned (the address a multiple of the
/// width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// One byte (`lb`, `lbu`, `sb`).
    Byte,
    /// Two bytes (`lh`, `lhu`, `sh`).
    Half,
    /// Four bytes (`lw`, `sw`, instruction fetch).
    Word,
}

impl Size {
    /// The width in bytes: 1, 2 or 4.
    #[inline]
    pub const fn bytes(self) -> u32 {
        match self {
            Size::Byte => 1,
            Size::Half => 2,
            Size::Word => 4,
        }
    }
}

/// The comparison of a conditional branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// `beq`: equal.
    Eq,
    /// `bne`: not equal.
    Ne,
    /// `blt`: less than, signed.
    Lt,
    /// `bge`: greater or equal, signed.
    Ge,
    /// `bltu`: less than, unsigned.
    Ltu,
    /// `bgeu`: greater or equal, unsigned.
    Geu,
}

/// A one-cycle integer operation of two operands: RV32I's (register-register or
/// register-immediate form), and Zba's and Zbb's (register-register; `rori` the one immediate
/// form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `add`/`addi`.
    Add,
    /// `sub` (register form only).
    Sub,
    /// `sll`/`slli`: shift left by the low 5 bits.
    Sll,
    /// `slt`/`slti`: 1 if less than, signed.
    Slt,
    /// `sltu`/`sltiu`: 1 if less than, unsigned (the immediate is sign-extended first).
    Sltu,
    /// `xor`/`xori`.
    Xor,
    /// `srl`/`srli`: logical shift right by the low 5 bits.
    Srl,
    /// `sra`/`srai`: arithmetic shift right by the low 5 bits.
    Sra,
    /// `or`/`ori`.
    Or,
    /// `and`/`andi`.
    And,
    /// `sh1add` (Zba): `(a << 1) + b`.
    Sh1add,
    /// `sh2add` (Zba): `(a << 2) + b`.
    Sh2add,
    /// `sh3add` (Zba): `(a << 3) + b`.
    Sh3add,
    /// `andn` (Zbb): `a & !b`.
    Andn,
    /// `orn` (Zbb): `a | !b`.
    Orn,
    /// `xnor` (Zbb): `!(a ^ b)`.
    Xnor,
    /// `min` (Zbb): the lesser, signed.
    Min,
    /// `minu` (Zbb): the lesser, unsigned.
    Minu,
    /// `max` (Zbb): the greater, signed.
    Max,
    /// `maxu` (Zbb): the greater, unsigned.
    Maxu,
    /// `rol` (Zbb): rotate left by the low 5 bits.
    Rol,
    /// `ror`/`rori` (Zbb): rotate right by the low 5 bits.
    Ror,
}

impl AluOp {
    /// The result on operands `a` and `b` (the second a register or an immediate): one cycle in
    /// EX1, as every integer instruction (BH README, "EX1").
    #[inline(always)]
    pub fn apply(self, a: u32, b: u32) -> u32 {
        match self {
            Self::Add => a.wrapping_add(b),
            Self::Sub => a.wrapping_sub(b),
            Self::Sll => a << (b & 31),
            Self::Slt => u32::from((a as i32) < (b as i32)),
            Self::Sltu => u32::from(a < b),
            Self::Xor => a ^ b,
            Self::Srl => a >> (b & 31),
            Self::Sra => ((a as i32) >> (b & 31)) as u32,
            Self::Or => a | b,
            Self::And => a & b,
            Self::Sh1add => (a << 1).wrapping_add(b),
            Self::Sh2add => (a << 2).wrapping_add(b),
            Self::Sh3add => (a << 3).wrapping_add(b),
            Self::Andn => a & !b,
            Self::Orn => a | !b,
            Self::Xnor => !(a ^ b),
            Self::Min => (a as i32).min(b as i32) as u32,
            Self::Minu => a.min(b),
            Self::Max => (a as i32).max(b as i32) as u32,
            Self::Maxu => a.max(b),
            Self::Rol => a.rotate_left(b & 31),
            Self::Ror => a.rotate_right(b & 31),
        }
    }
}

/// A one-cycle integer operation of one register (Zbb).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `clz`: leading zero bits (32 for 0).
    Clz,
    /// `ctz`: trailing zero bits (32 for 0).
    Ctz,
    /// `cpop`: set bits.
    Cpop,
    /// `sext.b`: the low byte, sign-extended.
    SextB,
    /// `sext.h`: the low half word, sign-extended.
    SextH,
    /// `zext.h`: the low half word, zero-extended.
    ZextH,
    /// `orc.b`: each byte all ones if any of its bits is set, else zero.
    OrcB,
    /// `rev8`: the bytes in reverse order.
    Rev8,
}

impl UnaryOp {
    /// The result on operand `a`.
    #[inline(always)]
    pub fn apply(self, a: u32) -> u32 {
        match self {
            Self::Clz => a.leading_zeros(),
            Self::Ctz => a.trailing_zeros(),
            Self::Cpop => a.count_ones(),
            Self::SextB => a as u8 as i8 as i32 as u32,
            Self::SextH => a as u16 as i16 as i32 as u32,
            Self::ZextH => a & 0xFFFF,
            Self::OrcB => {
                u32::from_le_bytes(a.to_le_bytes().map(|b| if b == 0 { 0 } else { 0xFF }))
            }
            Self::Rev8 => a.swap_bytes(),
        }
    }
}

/// A multiply of the M extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulOp {
    /// `mul`: low 32 bits of the product.
    Mul,
    /// `mulh`: high 32 bits, signed x signed.
    Mulh,
    /// `mulhsu`: high 32 bits, signed `rs1` x unsigned `rs2`.
    Mulhsu,
    /// `mulhu`: high 32 bits, unsigned x unsigned.
    Mulhu,
}

/// A divide or remainder of the M extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DivOp {
    /// `div`: signed quotient, rounded toward zero.
    Div,
    /// `divu`: unsigned quotient.
    Divu,
    /// `rem`: signed remainder (sign of the dividend).
    Rem,
    /// `remu`: unsigned remainder.
    Remu,
}

/// A CSR the hart implements (Blackhole's baby cores have no `time` or `timeh`, ISA
/// `BabyRISCV/CSRs.md`, so an access to either is an illegal instruction): all read-only (their address bits 11:10 are `0b11`, the RISC-V
/// privileged spec's read-only range).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// `cycle` (0xC00): low 32 bits of the cycle count.
    Cycle,
    /// `instret` (0xC02): low 32 bits of the retired-instruction count.
    Instret,
    /// `cycleh` (0xC80): high 32 bits of the cycle count.
    CycleH,
    /// `instreth` (0xC82): high 32 bits of the retired-instruction count.
    InstretH,
    /// `mhartid` (0xF14): the id given to the hart at construction.
    MHartId,
}

impl Counter {
    /// The CSR of address `csr`, if the hart implements it.
    pub const fn from_address(csr: u32) -> Option<Counter> {
        Some(match csr {
            0xC00 => Counter::Cycle,
            0xC02 => Counter::Instret,
            0xC80 => Counter::CycleH,
            0xC82 => Counter::InstretH,
            0xF14 => Counter::MHartId,
            _ => return None,
        })
    }
}

/// What a `csrrw`/`csrrs`/`csrrc` (or immediate form) does with the CSR's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrOp {
    /// `csrrw`/`csrrwi`: the operand replaces the bits.
    Write,
    /// `csrrs`/`csrrsi`: the operand's bits are set.
    Set,
    /// `csrrc`/`csrrci`: the operand's bits are cleared.
    Clear,
}

/// One decoded instruction. Register fields are 0..=31; writes to `x0` are discarded by the
/// hart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `lui rd, imm`: `rd = imm` (`imm` has its low 12 bits zero).
    Lui {
        /// Destination register.
        rd: u8,
        /// The upper immediate, in place.
        imm: u32,
    },
    /// `auipc rd, imm`: `rd = pc + imm`.
    Auipc {
        /// Destination register.
        rd: u8,
        /// The upper immediate, in place.
        imm: u32,
    },
    /// `jal rd, offset`: `rd = pc + 4; pc += offset`.
    Jal {
        /// Link register.
        rd: u8,
        /// Signed byte offset from this instruction.
        offset: i32,
    },
    /// `jalr rd, offset(rs1)`: `rd = pc + 4; pc = (rs1 + offset) & !1`.
    Jalr {
        /// Link register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// Signed byte offset.
        offset: i32,
    },
    /// A conditional branch: `if cond(rs1, rs2) { pc += offset }`.
    Branch {
        /// The comparison.
        cond: Cond,
        /// First operand.
        rs1: u8,
        /// Second operand.
        rs2: u8,
        /// Signed byte offset from this instruction.
        offset: i32,
    },
    /// A load: `rd = extend(mem[rs1 + offset])`.
    Load {
        /// Width.
        size: Size,
        /// Sign-extend (`lb`, `lh`) or zero-extend (`lbu`, `lhu`); `lw` is signed.
        signed: bool,
        /// Destination register.
        rd: u8,
        /// Base register.
        rs1: u8,
        /// Signed byte offset.
        offset: i32,
    },
    /// A store: `mem[rs1 + offset] = low bytes of rs2`.
    Store {
        /// Width.
        size: Size,
        /// Base register.
        rs1: u8,
        /// Register holding the data.
        rs2: u8,
        /// Signed byte offset.
        offset: i32,
    },
    /// A register-immediate integer operation (`addi`, `slli`, ...).
    AluImm {
        /// The operation (never [`AluOp::Sub`]).
        op: AluOp,
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
        /// The sign-extended immediate (the shift amount for shifts).
        imm: u32,
    },
    /// A register-register integer operation (`add`, `sub`, `sll`, ...).
    Alu {
        /// The operation.
        op: AluOp,
        /// Destination register.
        rd: u8,
        /// First source register.
        rs1: u8,
        /// Second source register.
        rs2: u8,
    },
    /// A one-register integer operation of Zbb (`clz`, `cpop`, `zext.h`, ...).
    Unary {
        /// The operation.
        op: UnaryOp,
        /// Destination register.
        rd: u8,
        /// Source register.
        rs1: u8,
    },
    /// A multiply.
    Mul {
        /// The operation.
        op: MulOp,
        /// Destination register.
        rd: u8,
        /// First source register.
        rs1: u8,
        /// Second source register.
        rs2: u8,
    },
    /// A divide or remainder.
    Div {
        /// The operation.
        op: DivOp,
        /// Destination register.
        rd: u8,
        /// Dividend register.
        rs1: u8,
        /// Divisor register.
        rs2: u8,
    },
    /// A read of a read-only CSR (`csrrs rd, csr, x0` and the other forms that do not write).
    CsrRead {
        /// Destination register.
        rd: u8,
        /// The CSR.
        csr: Counter,
    },
    /// An access to a Blackhole core's configuration CSR `cfg0` (0x7C0; a hart whose
    /// [`Isa`](super::decode::Isa) has it): `rd` gets the old bits, then `op` applies the operand
    /// (register `src`'s value, or `src` itself with `imm`). `csrrs`/`csrrc` with `x0` or an
    /// immediate 0 only read.
    Cfg0 {
        /// Destination register (the old bits).
        rd: u8,
        /// What happens to the bits.
        op: CsrOp,
        /// The operand: a register, or the 5-bit immediate with `imm`.
        src: u8,
        /// Whether `src` is the immediate.
        imm: bool,
    },
    /// `fence` (any predecessor/successor sets): ordering only, no effect on this model's state.
    Fence,
    /// `ecall`.
    Ecall,
    /// `ebreak`.
    Ebreak,
    /// Not an instruction this hart implements (RV32IM and the extensions of its
    /// [`Isa`](super::decode::Isa)).
    Illegal,
}
