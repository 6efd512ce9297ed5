//! A small RV32IM + Zicsr (and Zba, Zbb) instruction encoder for the tests that hand-assemble programs
//! (`riscv.rs`, `firmware_core.rs`). Each test binary uses part of it.
#![allow(dead_code)]
fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}
fn i(imm: i32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    ((imm as u32) & 0xFFF) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}
fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let imm = imm as u32;
    (imm >> 5 & 0x7F) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (imm & 0x1F) << 7 | 0x23
}
fn b(off: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let o = off as u32;
    (o >> 12 & 1) << 31
        | (o >> 5 & 0x3F) << 25
        | rs2 << 20
        | rs1 << 15
        | f3 << 12
        | (o >> 1 & 0xF) << 8
        | (o >> 11 & 1) << 7
        | 0x63
}
pub fn jal(rd: u32, off: i32) -> u32 {
    let o = off as u32;
    (o >> 20 & 1) << 31
        | (o >> 1 & 0x3FF) << 21
        | (o >> 11 & 1) << 20
        | (o >> 12 & 0xFF) << 12
        | rd << 7
        | 0x6F
}
pub fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x67)
}
pub fn lui(rd: u32, upper: u32) -> u32 {
    upper << 12 | rd << 7 | 0x37
}
pub fn auipc(rd: u32, upper: u32) -> u32 {
    upper << 12 | rd << 7 | 0x17
}
macro_rules! imm_ops { ($($name:ident = $f3:expr),*) => { $(
    pub fn $name(rd: u32, rs1: u32, imm: i32) -> u32 { i(imm, rs1, $f3, rd, 0x13) }
)* } }
imm_ops!(addi = 0, slti = 2, sltiu = 3, xori = 4, ori = 6, andi = 7);
pub fn slli(rd: u32, rs1: u32, sh: u32) -> u32 {
    r(0, sh, rs1, 1, rd, 0x13)
}
pub fn srli(rd: u32, rs1: u32, sh: u32) -> u32 {
    r(0, sh, rs1, 5, rd, 0x13)
}
pub fn srai(rd: u32, rs1: u32, sh: u32) -> u32 {
    r(0x20, sh, rs1, 5, rd, 0x13)
}
macro_rules! reg_ops { ($($name:ident = $f7:expr, $f3:expr),*) => { $(
    pub fn $name(rd: u32, rs1: u32, rs2: u32) -> u32 { r($f7, rs2, rs1, $f3, rd, 0x33) }
)* } }
reg_ops!(
    add = 0,
    0,
    sub = 0x20,
    0,
    sll = 0,
    1,
    slt = 0,
    2,
    sltu = 0,
    3,
    xor = 0,
    4,
    srl = 0,
    5,
    sra = 0x20,
    5,
    or = 0,
    6,
    and = 0,
    7,
    mul = 1,
    0,
    mulh = 1,
    1,
    mulhsu = 1,
    2,
    mulhu = 1,
    3,
    div = 1,
    4,
    divu = 1,
    5,
    rem = 1,
    6,
    remu = 1,
    7
);
macro_rules! loads { ($($name:ident = $f3:expr),*) => { $(
    pub fn $name(rd: u32, rs1: u32, imm: i32) -> u32 { i(imm, rs1, $f3, rd, 0x03) }
)* } }
loads!(lb = 0, lh = 1, lw = 2, lbu = 4, lhu = 5);
pub fn sb(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 0)
}
pub fn sh(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 1)
}
pub fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(imm, rs2, rs1, 2)
}
macro_rules! branches { ($($name:ident = $f3:expr),*) => { $(
    pub fn $name(rs1: u32, rs2: u32, off: i32) -> u32 { b(off, rs2, rs1, $f3) }
)* } }
branches!(beq = 0, bne = 1, blt = 4, bge = 5, bltu = 6, bgeu = 7);
macro_rules! csrs { ($($name:ident = $f3:expr),*) => { $(
    pub fn $name(rd: u32, csr: u32, rs1: u32) -> u32 { csr << 20 | rs1 << 15 | $f3 << 12 | rd << 7 | 0x73 }
)* } }
csrs!(
    csrrw = 1,
    csrrs = 2,
    csrrc = 3,
    csrrwi = 5,
    csrrsi = 6,
    csrrci = 7
);
pub const ECALL: u32 = 0x0000_0073;
/// A Blackhole core's configuration CSR (bit 3: its L0 data cache off).
pub const CFG0: u32 = 0x7C0;
pub const EBREAK: u32 = 0x0010_0073;
pub const FENCE: u32 = 0x0FF0_000F;
pub const FENCE_I: u32 = 0x0000_100F;
pub const CYCLE: u32 = 0xC00;
pub const TIME: u32 = 0xC01;
pub const INSTRET: u32 = 0xC02;
pub const CYCLEH: u32 = 0xC80;
pub const TIMEH: u32 = 0xC81;
pub const INSTRETH: u32 = 0xC82;
pub const MHARTID: u32 = 0xF14;

// Zba and Zbb (the RISC-V B chapter's encodings; `zext.h` is RV32's `pack rd, rs1, x0`).
reg_ops!(
    sh1add = 0x10,
    2,
    sh2add = 0x10,
    4,
    sh3add = 0x10,
    6,
    andn = 0x20,
    7,
    orn = 0x20,
    6,
    xnor = 0x20,
    4,
    min = 0x05,
    4,
    minu = 0x05,
    5,
    max = 0x05,
    6,
    maxu = 0x05,
    7,
    rol = 0x30,
    1,
    ror = 0x30,
    5
);
pub fn rori(rd: u32, rs1: u32, sh: u32) -> u32 {
    r(0x30, sh, rs1, 5, rd, 0x13)
}
macro_rules! unary_ops { ($($name:ident = $imm:expr, $f3:expr, $op:expr),*) => { $(
    pub fn $name(rd: u32, rs1: u32) -> u32 { i($imm, rs1, $f3, rd, $op) }
)* } }
unary_ops!(
    clz = 0x600,
    1,
    0x13,
    ctz = 0x601,
    1,
    0x13,
    cpop = 0x602,
    1,
    0x13,
    sext_b = 0x604,
    1,
    0x13,
    sext_h = 0x605,
    1,
    0x13,
    zext_h = 0x080,
    4,
    0x33,
    orc_b = 0x287,
    5,
    0x13,
    rev8 = 0x698,
    5,
    0x13
);
