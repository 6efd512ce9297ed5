//! [`Hart`]: one baby RISC-V core's architectural state and its execution loop.

use blackhole_pac::tensix::{CFG0_L0_DATA_CACHE_OFF, CFG0_RESET};

use super::bus::LOCAL_RAM_TRISC;
use super::bus::{AccessKind, Bus, BusResult, L1_BASE, L1_SIZE, LOCAL_RAM_BASE, LOCAL_RAM_DM};
use super::cost::Cost;
use super::decode::{Isa, decode};
use super::op::{Cond, Counter, CsrOp, DivOp, MulOp, Op, Size};
use super::probe::{Flow, NoProbe, Probe, is_link};
use super::stop::{Fault, FaultKind, Stop};

/// Entries of the decoded-instruction cache (direct-mapped by `pc`): 1024 entries of 24 bytes,
/// 24 KiB per hart, enough for 4 KiB of code (twice the cores' 2 KiB instruction caches). The
/// branch predictor's tables share its index (`pc[11:2]`, [`Cost`]'s docs).
const CACHE_ENTRIES: usize = 1024;

/// One decoded-instruction cache entry: the raw word and what it decodes to, and the branch
/// predictor's state for the pcs of this index. The decode is used only when the word fetched
/// at its `pc` is `word` again, so code written after a run began is decoded afresh; the
/// predictor's state survives a refill (a tagless table: aliasing pcs share it). The initial
/// entries hold word 0, which decodes to [`Op::Illegal`] like any fetched 0, so they need no
/// valid bit.
#[derive(Clone, Copy)]
struct Entry {
    word: u32,
    op: Op,
    /// 2-bit saturating direction counter of a conditional branch: taken predicted from 2 up.
    counter: u8,
    /// Where the last jump at this index went (`u32::MAX`: none yet, never a target as
    /// targets are 4-byte aligned).
    target: u32,
}

/// A direction counter's reset value: weakly not-taken.
const WEAKLY_NOT_TAKEN: u8 = 1;

/// How to build a [`Hart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HartConfig {
    /// The value `mhartid` reads. (Silicon reads 0 on every core, `BabyRISCV/CSRs.md`; the
    /// simulator may pass 0 to match, or a core number to tell cores apart.)
    pub id: u32,
    /// The `pc` the hart starts at.
    pub reset_pc: u32,
    /// Bytes of local data RAM at `LOCAL_RAM_BASE`, owned by the hart; rounded down to a
    /// multiple of 4. [`LOCAL_RAM_DM`] (8 KiB) or [`LOCAL_RAM_TRISC`] (4 KiB).
    pub local_ram_bytes: u32,
    /// Start of the region instructions may be fetched from.
    pub code_start: u32,
    /// End (exclusive) of the region instructions may be fetched from.
    pub code_end: u32,
    /// The cost rule.
    pub cost: Cost,
    /// The extensions the hart decodes beyond RV32IM.
    pub isa: Isa,
}

impl HartConfig {
    /// A data-movement core (RISCV B or NC): 8 KiB of local RAM, code in L1, Blackhole costs
    /// and instructions ([`Isa::BLACKHOLE`]), starting at `reset_pc`.
    pub fn data_movement(id: u32, reset_pc: u32) -> Self {
        HartConfig {
            id,
            reset_pc,
            local_ram_bytes: LOCAL_RAM_DM,
            code_start: L1_BASE,
            code_end: L1_BASE + L1_SIZE,
            cost: Cost::default(),
            isa: Isa::BLACKHOLE,
        }
    }

    /// A compute core (RISCV T0, T1, T2): as [`HartConfig::data_movement`] with 4 KiB of
    /// local RAM.
    pub fn compute(id: u32, reset_pc: u32) -> Self {
        HartConfig {
            local_ram_bytes: LOCAL_RAM_TRISC,
            ..Self::data_movement(id, reset_pc)
        }
    }
}

/// One RV32IM hart (with its [`Isa`]'s extensions): 32 registers (`x0` reads 0), `pc`, cycle
/// and retired-instruction counts, its private local data RAM, and a decoded-instruction cache.
///
/// The hart owns its local data RAM because only its own loads and stores reach it at
/// `LOCAL_RAM_BASE`, at a fixed latency and without contention (BH README, "Local Data RAM"):
/// serving it here keeps the most frequent accesses (the stack) off the bus. The simulator
/// reaches it for the slow-path alias (`0xFFB1_4000..`, open to the NoC and other cores) and
/// for loading images through [`Hart::local_ram`] and [`Hart::local_ram_mut`].
pub struct Hart {
    x: [u32; 32],
    pc: u32,
    cycle: u64,
    instret: u64,
    id: u32,
    code_start: u32,
    code_end: u32,
    cost: Cost,
    isa: Isa,
    /// The configuration CSR `cfg0` ([`Isa::cfg0`]); [`CFG0_RESET`] at reset.
    cfg0: u32,
    /// Loads from L1 made while a Blackhole core's L0 data cache was on ([`Hart::l0_data_cache_on`]).
    l1_loads_with_l0_on: u64,
    local: Box<[u8]>,
    cache: Box<[Entry; CACHE_ENTRIES]>,
    pipe: Pipeline,
    /// Cycles of made-faster instructions not yet charged (below the factor), carried to the
    /// next one (`retire_faster`).
    faster_carry: u64,
}

/// Entries of the Retire Unit's retire-order queue (BH README, "Retire Unit").
const RETIRE_QUEUE: usize = super::cost::RETIRE_QUEUE as usize;

/// The timing state of the pipelined cost rule ([`Cost::pipelined`]; the module docs of
/// `cost` say what it models).
#[derive(Clone, Copy, Debug)]
struct Pipeline {
    /// The cycle from which each register's value can be forwarded to an instruction entering
    /// EX1 (`x0` is always ready).
    ready: [u64; 32],
    /// The retire cycles of the last [`RETIRE_QUEUE`] instructions, oldest at `next`.
    retired: [u64; RETIRE_QUEUE],
    next: usize,
    /// The retire cycle of the last instruction.
    last_retired: u64,
    /// The retire cycle of the last serializing instruction ([`Uses::serial`]): no later
    /// instruction enters EX1 before it.
    serial_retired: u64,
}

impl Pipeline {
    const fn new() -> Self {
        Pipeline {
            ready: [0; 32],
            retired: [0; RETIRE_QUEUE],
            next: 0,
            last_retired: 0,
            serial_retired: 0,
        }
    }
}

/// What an instruction reads and writes and how it uses the pipeline, for the pipelined cost
/// rule.
#[derive(Copy, Clone)]
struct Uses {
    /// Source registers (0: none).
    sources: [u8; 2],
    /// Destination register (0: none).
    dest: u8,
    /// A load or multiply: holds EX1 one cycle and forwards after its latency.
    latent: bool,
    /// No instruction after it enters EX1 before it retires (CSR accesses, `fence`, `ecall`,
    /// `ebreak`: BH README, "EX1"); it occupies EX1 for its whole cost. It does not itself wait
    /// for earlier instructions other than serializing ones, except a `fence` ([`Uses::drain`]).
    serial: bool,
    /// Enters EX1 only once every earlier instruction has retired: a `fence`, which "will not
    /// enter the Load/Store Unit until ... all in-flight loads have determined their result"
    /// (BH `InstructionSet.md`).
    drain: bool,
}

#[inline(always)]
fn uses(op: &Op) -> Uses {
    let (sources, serial) = match *op {
        Op::Lui { .. } | Op::Auipc { .. } | Op::Jal { .. } | Op::Illegal => ([0, 0], false),
        Op::Jalr { rs1, .. }
        | Op::AluImm { rs1, .. }
        | Op::Unary { rs1, .. }
        | Op::Load { rs1, .. } => ([rs1, 0], false),
        Op::Branch { rs1, rs2, .. }
        | Op::Alu { rs1, rs2, .. }
        | Op::Mul { rs1, rs2, .. }
        | Op::Div { rs1, rs2, .. }
        | Op::Store { rs1, rs2, .. } => ([rs1, rs2], false),
        Op::CsrRead { .. } | Op::Fence | Op::Ecall | Op::Ebreak => ([0, 0], true),
        Op::Cfg0 { src, imm, .. } => ([if imm { 0 } else { src }, 0], true),
    };
    let (dest, latent) = match *op {
        Op::Load { rd, .. } | Op::Mul { rd, .. } => (rd, true),
        Op::Lui { rd, .. }
        | Op::Auipc { rd, .. }
        | Op::AluImm { rd, .. }
        | Op::Alu { rd, .. }
        | Op::Unary { rd, .. }
        | Op::Div { rd, .. }
        | Op::CsrRead { rd, .. }
        | Op::Cfg0 { rd, .. }
        | Op::Jal { rd, .. }
        | Op::Jalr { rd, .. } => (rd, false),
        Op::Branch { .. } | Op::Store { .. } | Op::Fence | Op::Ecall | Op::Ebreak | Op::Illegal => {
            (0, false)
        }
    };
    Uses {
        sources,
        dest: dest & 31,
        latent,
        serial,
        drain: matches!(op, Op::Fence),
    }
}

impl Hart {
    /// A hart in its reset state: registers 0, `pc` at `config.reset_pc`, counts 0, local RAM
    /// zero (as silicon clears it after reset, BH README "Local Data RAM"). An instruction
    /// costs at least a cycle whatever `config.cost.base` says: a loop of free instructions
    /// never let [`Hart::run`] reach its cycle, and it never returned.
    pub fn new(mut config: HartConfig) -> Self {
        config.cost.base = config.cost.base.max(1);
        let cache: Box<[Entry; CACHE_ENTRIES]> = Box::new(
            [Entry {
                word: 0,
                op: Op::Illegal,
                counter: WEAKLY_NOT_TAKEN,
                target: u32::MAX,
            }; CACHE_ENTRIES],
        );
        Hart {
            x: [0; 32],
            pc: config.reset_pc,
            cycle: 0,
            instret: 0,
            id: config.id,
            code_start: config.code_start,
            code_end: config.code_end,
            cost: config.cost,
            isa: config.isa,
            cfg0: if config.isa.cfg0 { CFG0_RESET } else { 0 },
            l1_loads_with_l0_on: 0,
            local: vec![0; (config.local_ram_bytes & !3) as usize].into_boxed_slice(),
            cache,
            pipe: Pipeline::new(),
            faster_carry: 0,
        }
    }

    /// The misprediction cycles of a jump at cache index `slot` to `target`: none when the
    /// last-target buffer held `target` (which it then holds).
    #[inline]
    fn jump_penalty(&mut self, slot: usize, target: u32) -> u32 {
        let entry = &mut self.cache[slot];
        let predicted = self.cost.predict && entry.target == target;
        entry.target = target;
        if predicted { 0 } else { self.cost.mispredict }
    }

    /// The misprediction cycles of a conditional branch at cache index `slot` that went
    /// `taken`, after which its 2-bit counter moves toward what it did.
    #[inline]
    fn branch_penalty(&mut self, slot: usize, taken: bool) -> u32 {
        if !self.cost.predict {
            return if taken { self.cost.mispredict } else { 0 };
        }
        let entry = &mut self.cache[slot];
        let predicted_taken = entry.counter >= 2;
        entry.counter = if taken {
            (entry.counter + 1).min(3)
        } else {
            entry.counter.saturating_sub(1)
        };
        if predicted_taken == taken {
            0
        } else {
            self.cost.mispredict
        }
    }

    /// The `mhartid` value.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// Address of the next instruction.
    pub fn pc(&self) -> u32 {
        self.pc
    }
    /// Move `pc` (for a boot or a debugger). A misaligned or out-of-code `pc` faults at the
    /// next fetch.
    pub fn set_pc(&mut self, pc: u32) {
        self.pc = pc;
    }
    /// Register `x[i]` (`i` taken modulo 32); `x0` is always 0.
    pub fn reg(&self, i: usize) -> u32 {
        self.x[i & 31]
    }
    /// Set register `x[i]` (`i` modulo 32); writes to `x0` are discarded.
    pub fn set_reg(&mut self, i: usize, value: u32) {
        self.x[i & 31] = value;
        self.x[0] = 0;
    }
    /// All 32 registers.
    pub fn regs(&self) -> &[u32; 32] {
        &self.x
    }
    /// Core clock cycles elapsed: the sum of every retired instruction's cost and every stall.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    /// Instructions retired.
    pub fn instret(&self) -> u64 {
        self.instret
    }
    /// Let the hart's clock reach `cycle` without retiring anything (a stall while the caller
    /// waited, after a [`Stop::Retry`] for example). The clock never goes back: an earlier
    /// `cycle` does nothing.
    pub fn stall_until(&mut self, cycle: u64) {
        self.stall_until_probed(cycle, &mut NoProbe);
    }

    /// [`Hart::stall_until`], telling `probe` how long the stall was.
    pub fn stall_until_probed<P: Probe>(&mut self, cycle: u64, probe: &mut P) {
        if cycle > self.cycle {
            probe.stalled(cycle - self.cycle);
            self.cycle = cycle;
        }
    }
    /// The cost rule in use (a bus can take its L1 and MMIO defaults from it).
    pub fn cost(&self) -> &Cost {
        &self.cost
    }
    /// The configuration CSR `cfg0` ([`Isa::cfg0`]): [`CFG0_RESET`] until the program writes
    /// it (0 on a hart without it).
    pub fn cfg0(&self) -> u32 {
        self.cfg0
    }
    /// Loads from L1 this hart made while its L0 data cache was on: a Blackhole core ([`Isa::cfg0`])
    /// whose `cfg0` bit 3 ([`CFG0_L0_DATA_CACHE_OFF`]) is clear. The model has no L0 data cache
    /// (every L1 load costs the miss latency and sees L1); firmware that runs with the cache on
    /// must `fence` before loading what the NoC wrote, so a count here tells firmware that runs
    /// without fences that it left the cache on.
    pub fn l1_loads_with_l0_on(&self) -> u64 {
        self.l1_loads_with_l0_on
    }
    /// Whether a load of `addr` goes through an L0 data cache that is on (`addr` in L1).
    #[inline(always)]
    fn l0_data_cache_on(&self, addr: u32) -> bool {
        self.isa.cfg0
            && self.cfg0 & CFG0_L0_DATA_CACHE_OFF == 0
            && addr.wrapping_sub(L1_BASE) < L1_SIZE
    }
    /// The local data RAM, byte 0 at `LOCAL_RAM_BASE`.
    pub fn local_ram(&self) -> &[u8] {
        &self.local
    }
    /// The local data RAM, writable.
    pub fn local_ram_mut(&mut self) -> &mut [u8] {
        &mut self.local
    }

    /// Run until the cycle count reaches `until_cycle` ([`Stop::Cycle`]), or a
    /// [`Stop::Retry`], an `ecall`/`ebreak`, or a fault. An instruction is never split: the
    /// run stops at the first instruction boundary at or after `until_cycle`, so the cycle
    /// count ends in `until_cycle ..= until_cycle + max - 1`, `max` being
    /// [`Cost::max_instruction_cycles`] (or unchanged if it was already past `until_cycle`).
    pub fn run<B: Bus>(&mut self, bus: &mut B, until_cycle: u64) -> Stop {
        self.run_probed(bus, until_cycle, &mut NoProbe)
    }

    /// [`Hart::run`], telling `probe` about every instruction that retires.
    pub fn run_probed<B: Bus, P: Probe>(
        &mut self,
        bus: &mut B,
        until_cycle: u64,
        probe: &mut P,
    ) -> Stop {
        while self.cycle < until_cycle {
            if let Some(stop) = self.exec(bus, probe) {
                return stop;
            }
        }
        Stop::Cycle
    }

    /// Execute one instruction. `None` if it retired normally; otherwise why it stopped (an
    /// `ecall`/`ebreak` did retire; a retry or fault did not).
    pub fn step<B: Bus>(&mut self, bus: &mut B) -> Option<Stop> {
        self.exec(bus, &mut NoProbe)
    }

    #[inline]
    fn local_offset(&self, addr: u32) -> Option<usize> {
        let off = addr.wrapping_sub(LOCAL_RAM_BASE) as usize;
        (off < self.local.len()).then_some(off)
    }

    #[inline(always)]
    fn exec<B: Bus, P: Probe>(&mut self, bus: &mut B, probe: &mut P) -> Option<Stop> {
        let pc = self.pc;
        let fault = |kind| Some(Stop::Fault(Fault { pc, kind }));
        if pc & 3 != 0 {
            return fault(FaultKind::Misaligned {
                addr: pc,
                access: AccessKind::Fetch,
            });
        }
        if pc < self.code_start || pc >= self.code_end {
            return fault(FaultKind::FetchOutsideCode);
        }
        let (word, fetch_cycles) = match bus.fetch(pc, self.cycle) {
            BusResult::Done { value, cycles } => (value, cycles),
            BusResult::Retry => {
                return Some(Stop::Retry {
                    pc,
                    addr: pc,
                    access: AccessKind::Fetch,
                });
            }
            BusResult::Fault => {
                return fault(FaultKind::Bus {
                    addr: pc,
                    access: AccessKind::Fetch,
                });
            }
        };
        let slot = (pc >> 2) as usize % CACHE_ENTRIES;
        let entry = &mut self.cache[slot];
        if entry.word != word {
            entry.word = word;
            entry.op = decode(word, self.isa);
        }
        let op = entry.op;
        let u = uses(&op);
        let base = self.cost.base;
        // The cycle this instruction enters EX1 (the pipelined rule), or now (the blocking one).
        let at = if self.cost.pipelined {
            self.issue_cycle(u)
        } else {
            self.cycle
        };
        let mut next = pc.wrapping_add(4);
        let mut stop = None;
        let mut flow = Flow::Other;
        // Register read (the index is 0..=31 by construction; the mask drops the check).
        macro_rules! x {
            ($r:expr) => {
                self.x[($r & 31) as usize]
            };
        }
        let cycles = match op {
            Op::Lui { rd, imm } => {
                self.x[(rd & 31) as usize] = imm;
                base
            }
            Op::Auipc { rd, imm } => {
                self.x[(rd & 31) as usize] = pc.wrapping_add(imm);
                base
            }
            Op::Jal { rd, offset } => {
                let target = pc.wrapping_add(offset as u32);
                if target & 3 != 0 {
                    return fault(FaultKind::Misaligned {
                        addr: target,
                        access: AccessKind::Fetch,
                    });
                }
                self.x[(rd & 31) as usize] = next;
                next = target;
                if is_link(rd) {
                    flow = Flow::Call { target };
                }
                base + self.jump_penalty(slot, target)
            }
            Op::Jalr { rd, rs1, offset } => {
                let target = x!(rs1).wrapping_add(offset as u32) & !1;
                if target & 3 != 0 {
                    return fault(FaultKind::Misaligned {
                        addr: target,
                        access: AccessKind::Fetch,
                    });
                }
                self.x[(rd & 31) as usize] = next;
                next = target;
                if is_link(rd) {
                    flow = Flow::Call { target };
                } else if is_link(rs1) {
                    flow = Flow::Return;
                }
                base + self.jump_penalty(slot, target)
            }
            Op::Branch {
                cond,
                rs1,
                rs2,
                offset,
            } => {
                let (a, b) = (x!(rs1), x!(rs2));
                let taken = match cond {
                    Cond::Eq => a == b,
                    Cond::Ne => a != b,
                    Cond::Lt => (a as i32) < (b as i32),
                    Cond::Ge => (a as i32) >= (b as i32),
                    Cond::Ltu => a < b,
                    Cond::Geu => a >= b,
                };
                if taken {
                    let target = pc.wrapping_add(offset as u32);
                    if target & 3 != 0 {
                        return fault(FaultKind::Misaligned {
                            addr: target,
                            access: AccessKind::Fetch,
                        });
                    }
                    next = target;
                }
                base + self.branch_penalty(slot, taken)
            }
            Op::Load {
                size,
                signed,
                rd,
                rs1,
                offset,
            } => {
                let addr = x!(rs1).wrapping_add(offset as u32);
                let access = AccessKind::Load(size);
                if addr & (size.bytes() - 1) != 0 {
                    return fault(FaultKind::Misaligned { addr, access });
                }
                let (raw, latency) = match self.local_offset(addr) {
                    Some(off) => (read_le(&self.local, off, size), self.cost.load_local),
                    None => match bus.load(addr, size, at) {
                        BusResult::Done { value, cycles } if self.l0_data_cache_on(addr) => {
                            self.l1_loads_with_l0_on += 1;
                            (value, cycles)
                        }
                        BusResult::Done { value, cycles } => (value, cycles),
                        BusResult::Retry => return Some(Stop::Retry { pc, addr, access }),
                        BusResult::Fault => return fault(FaultKind::Bus { addr, access }),
                    },
                };
                self.x[(rd & 31) as usize] = match (size, signed) {
                    (Size::Byte, true) => raw as u8 as i8 as u32,
                    (Size::Byte, false) => raw & 0xFF,
                    (Size::Half, true) => raw as u16 as i16 as u32,
                    (Size::Half, false) => raw & 0xFFFF,
                    (Size::Word, _) => raw,
                };
                latency.max(base)
            }
            Op::Store {
                size,
                rs1,
                rs2,
                offset,
            } => {
                let addr = x!(rs1).wrapping_add(offset as u32);
                let value = x!(rs2);
                let access = AccessKind::Store(size);
                if addr & (size.bytes() - 1) != 0 {
                    return fault(FaultKind::Misaligned { addr, access });
                }
                let cycles = match self.local_offset(addr) {
                    Some(off) => {
                        write_le(&mut self.local, off, size, value);
                        self.cost.store_local
                    }
                    None => match bus.store(addr, size, value, at) {
                        BusResult::Done { cycles, .. } => cycles,
                        BusResult::Retry => return Some(Stop::Retry { pc, addr, access }),
                        BusResult::Fault => return fault(FaultKind::Bus { addr, access }),
                    },
                };
                cycles.max(base)
            }
            Op::AluImm { op, rd, rs1, imm } => {
                self.x[(rd & 31) as usize] = op.apply(x!(rs1), imm);
                base
            }
            Op::Alu { op, rd, rs1, rs2 } => {
                self.x[(rd & 31) as usize] = op.apply(x!(rs1), x!(rs2));
                base
            }
            Op::Unary { op, rd, rs1 } => {
                self.x[(rd & 31) as usize] = op.apply(x!(rs1));
                base
            }
            Op::Mul { op, rd, rs1, rs2 } => {
                let (a, b) = (x!(rs1), x!(rs2));
                self.x[(rd & 31) as usize] = match op {
                    MulOp::Mul => a.wrapping_mul(b),
                    MulOp::Mulh => ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32,
                    MulOp::Mulhsu => ((i64::from(a as i32) * i64::from(b)) >> 32) as u32,
                    MulOp::Mulhu => ((u64::from(a) * u64::from(b)) >> 32) as u32,
                };
                self.cost.mul
            }
            Op::Div { op, rd, rs1, rs2 } => {
                let (a, b) = (x!(rs1), x!(rs2));
                let (value, cycles) = self.divide(op, a, b);
                self.x[(rd & 31) as usize] = value;
                cycles
            }
            Op::CsrRead { rd, csr } => {
                self.x[(rd & 31) as usize] = match csr {
                    Counter::Cycle => at as u32,
                    Counter::CycleH => (at >> 32) as u32,
                    Counter::Instret => self.instret as u32,
                    Counter::InstretH => (self.instret >> 32) as u32,
                    Counter::MHartId => self.id,
                };
                self.cost.csr
            }
            Op::Cfg0 { rd, op, src, imm } => {
                let operand = if imm { u32::from(src) } else { x!(src) };
                let old = self.cfg0;
                // `csrrs`/`csrrc` of x0 or an immediate 0 only read (Zicsr chapter).
                if op == CsrOp::Write || src != 0 {
                    self.cfg0 = match op {
                        CsrOp::Write => operand,
                        CsrOp::Set => old | operand,
                        CsrOp::Clear => old & !operand,
                    };
                }
                self.x[(rd & 31) as usize] = old;
                self.cost.csr
            }
            Op::Fence => self.cost.fence,
            Op::Ecall => {
                stop = Some(Stop::Ecall { pc });
                self.cost.csr
            }
            Op::Ebreak => {
                stop = Some(Stop::Ebreak { pc });
                self.cost.csr
            }
            Op::Illegal => return fault(FaultKind::IllegalInstruction { word }),
        };
        self.x[0] = 0;
        self.pc = next;
        let faster = probe.speed_up(pc);
        let cycles = if faster > 1 {
            self.retire_faster(u, at, cycles, fetch_cycles, faster)
        } else if self.cost.pipelined {
            self.retire(u, at, cycles, fetch_cycles)
        } else {
            u64::from(cycles) + u64::from(fetch_cycles)
        };
        self.cycle = self.cycle.saturating_add(cycles);
        self.instret = self.instret.wrapping_add(1);
        probe.retired(pc, flow, cycles);
        stop
    }

    /// The pipelined rule: the cycle `op` enters EX1, from now: once its source registers can
    /// be forwarded, a retire-queue entry is free (the instruction eight back has retired),
    /// every earlier serializing instruction has retired (BH README, "EX1": "All previous
    /// `csrrw` / ... / `fence` / `ecall` / `ebreak` instructions have retired") and, for a
    /// `fence`, every earlier instruction. The Load/Store Unit takes a load or store a cycle,
    /// which EX1's one instruction a cycle already gives.
    #[inline(always)]
    fn issue_cycle(&self, u: Uses) -> u64 {
        let p = &self.pipe;
        let mut at = self.cycle.max(p.retired[p.next]).max(p.serial_retired);
        for r in u.sources {
            at = at.max(p.ready[(r & 31) as usize]);
        }
        if u.drain {
            at = at.max(p.last_retired);
        }
        at
    }

    /// The pipelined rule, once `op` executed entering EX1 at `at` with `cost` cycles from the
    /// blocking rule: records when its result is ready and when it retires, and returns the
    /// cycles the hart's clock moves (the wait to enter EX1 plus the cycles it occupies EX1).
    ///
    /// A load's or multiply's cost is its latency: EX1 is held one cycle ([`Cost::base`]) and
    /// the result forwarded `cost` cycles after it entered, so `cost - 1` independent
    /// instructions hide it (BH README, "Load/Store Unit"). A divide holds EX1 for its whole
    /// cost, a mispredicted branch adds its bubble, a serializing instruction holds it for its
    /// whole cost too (the next instruction waits for it to retire). Loads overlap: the
    /// Load/Store Unit emits a load's read-request without waiting for an earlier one's
    /// response, so a run of independent loads costs a cycle each, up to the retire queue's
    /// eight in flight (each retires once its response is back).
    #[inline(always)]
    fn retire(&mut self, u: Uses, at: u64, cost: u32, fetch: u32) -> u64 {
        let base = self.cost.base;
        let (occupied, latency) = if u.latent { (base, cost) } else { (cost, 0) };
        let done = at + u64::from(occupied.max(latency));
        let p = &mut self.pipe;
        if u.dest != 0 {
            // Loads and multiplies forward after their latency, the rest once out of EX1.
            p.ready[u.dest as usize] = done;
        }
        // In order, one a cycle, each once its result is there.
        let retired = done.max(p.last_retired + 1);
        p.last_retired = retired;
        if u.serial {
            p.serial_retired = retired;
        }
        p.retired[p.next] = retired;
        p.next = (p.next + 1) % RETIRE_QUEUE;
        (at - self.cycle) + u64::from(occupied) + u64::from(fetch)
    }

    /// A what-if run's instruction made `factor` times faster ([`Probe::speed_up`]): its own
    /// cycles (those it holds EX1 and its fetch's) divided by `factor`, the remainder carried
    /// to the next such instruction so that a run of them is divided without rounding; its
    /// result's latency divided by `factor`, rounded up (a load's result never comes back at
    /// once); it retires once that result is back, as any instruction does. A wait to enter
    /// EX1 is kept as it is: it waits for an earlier instruction's result or retirement,
    /// already made faster if that instruction was.
    #[cold]
    #[inline(never)]
    fn retire_faster(&mut self, u: Uses, at: u64, cost: u32, fetch: u32, factor: u32) -> u64 {
        let base = self.cost.base;
        let (occupied, latency) = if u.latent && self.cost.pipelined {
            (base, cost)
        } else {
            (cost, 0)
        };
        let wait = at.saturating_sub(self.cycle);
        let own = u64::from(occupied) + u64::from(fetch) + self.faster_carry;
        let factor = u64::from(factor);
        self.faster_carry = own % factor;
        let charged = wait + own / factor;
        let now = self.cycle + charged;
        let done = now + u64::from(latency.saturating_sub(occupied)).div_ceil(factor);
        let p = &mut self.pipe;
        if u.dest != 0 {
            p.ready[u.dest as usize] = done;
        }
        // In order, but not one a cycle: the what-if makes this code's pipeline faster, its
        // retirement with it (at one a cycle, code already near one instruction a cycle could
        // not run faster at all).
        let retired = done.max(p.last_retired);
        p.last_retired = retired;
        if u.serial {
            p.serial_retired = retired;
        }
        p.retired[p.next] = retired;
        p.next = (p.next + 1) % RETIRE_QUEUE;
        charged
    }

    /// Value and cycles of a divide or remainder, with RISC-V's results for division by zero
    /// (quotient all ones, remainder the dividend) and for `-2^31 / -1` (quotient `-2^31`,
    /// remainder 0).
    #[inline]
    fn divide(&self, op: DivOp, a: u32, b: u32) -> (u32, u32) {
        let overflow = a == 0x8000_0000 && b == u32::MAX;
        let signed = matches!(op, DivOp::Div | DivOp::Rem);
        let value = match op {
            DivOp::Div if b == 0 => u32::MAX,
            DivOp::Div => (a as i32).wrapping_div(b as i32) as u32,
            DivOp::Rem if b == 0 => a,
            DivOp::Rem => (a as i32).wrapping_rem(b as i32) as u32,
            DivOp::Divu => a.checked_div(b).unwrap_or(u32::MAX),
            DivOp::Remu => a.checked_rem(b).unwrap_or(a),
        };
        let fast = b == 0 || b == 1 || (signed && overflow);
        let cycles = if fast {
            self.cost.div_fast
        } else if signed {
            self.cost.div_cycles((a as i32).unsigned_abs())
        } else {
            self.cost.div_cycles(a)
        };
        (value, cycles)
    }
}

/// `size` bytes of `mem` at `off`, little-endian (the caller checked alignment and bounds:
/// `off` is a multiple of the size and below the length, which is a multiple of 4).
#[inline]
fn read_le(mem: &[u8], off: usize, size: Size) -> u32 {
    match size {
        Size::Byte => u32::from(mem[off]),
        Size::Half => u32::from(u16::from_le_bytes([mem[off], mem[off + 1]])),
        Size::Word => u32::from_le_bytes([mem[off], mem[off + 1], mem[off + 2], mem[off + 3]]),
    }
}

/// Store the low `size` bytes of `value` into `mem` at `off`, little-endian (as `read_le`).
#[inline]
fn write_le(mem: &mut [u8], off: usize, size: Size, value: u32) {
    let n = size.bytes() as usize;
    mem[off..off + n].copy_from_slice(&value.to_le_bytes()[..n]);
}
