//! The cost rule: how many core clock cycles (AICLK, 1.35 GHz on Blackhole) each instruction
//! takes. Every number comes from Tenstorrent's `tt-isa-documentation`, file
//! `BlackholeA0/TensixTile/BabyRISCV/README.md` ("BH README" below), unless its comment says
//! otherwise.
//!
//! The rule, per retired instruction:
//! * every instruction: [`Cost::base`], plus the cycles its instruction fetch reports (0 for an
//!   instruction-cache hit);
//! * `mul*`: [`Cost::mul`] instead of `base`;
//! * `div*`/`rem*`: [`Cost::div_cycles`] instead of `base`;
//! * loads: the load's latency instead of `base` (at least `base`): [`Cost::load_local`] for
//!   the hart's own data RAM, otherwise what the [`Bus`](super::bus::Bus) reports (this struct's
//!   `load_l1` / `load_mmio` are the defaults a bus should use);
//! * stores: likewise with [`Cost::store_local`] or the bus's figure;
//! * a branch or jump (`b*`, `jal`, `jalr`): `base`, plus [`Cost::mispredict`] when the
//!   predictor ([`Cost::predict`]) guessed it wrong;
//! * `csrr*`, `ecall`, `ebreak`: [`Cost::csr`]; `fence`: [`Cost::fence`].
//!
//! **Pipelined** ([`Cost::pipelined`], the default), as the BH README describes the pipeline:
//! an instruction enters EX1 once the instruction before it left EX1, the values of its source
//! registers can be forwarded ("EX1": operands "from the register file, or ... from the buffers
//! in the Retire Unit"), and a retire-queue entry is free (eight entries, one retired a cycle,
//! in order: "Retire Unit"). A load or multiply holds EX1 one cycle and forwards its result
//! after its latency, so "`N - 1` independent instructions need to follow the load if the
//! latency is to be entirely hidden" ("Load/Store Unit"); a dependent instruction waits out the
//! rest. Loads overlap one another: tt-isa-documentation's
//! `BlackholeA0/TensixTile/BabyRISCV/MemoryOrdering.md` ("Mechanical description", "Load then
//! load") has a load emit its read-request on entering the Load/Store Unit, the memory
//! subsystem accept a request a cycle, and "the later load might emit a read-request before the
//! earlier load's read-response has been obtained"; a load leaves the retire-order queue only
//! with its response, so at most eight are in flight. (Until 2026-12-05 the model held the
//! Load/Store Unit while a load to L1 or MMIO was out: decisions D37 has the figures before and
//! after.) A divide, a mispredicted branch's bubble and a CSR access, `fence`, `ecall` or
//! `ebreak` hold EX1 for their whole cost. No instruction enters EX1 before every earlier CSR
//! access, `fence`, `ecall` and `ebreak` has retired ("All previous `csrrw` / ... / `fence` /
//! `ecall` / `ebreak` instructions have retired", BH README, "EX1"): those four hold back what
//! follows them, not themselves; a `fence` alone also waits for every earlier instruction
//! (its loads: `InstructionSet.md` of the `jasondavies/tt-isa-documentation` fork, and
//! `MemoryOrdering.md`, "Fences"). Until 2026-12-06 each of the four waited for everything
//! before it (decisions D49). The clock a profile charges to an instruction is its wait to
//! enter EX1 plus the cycles it holds EX1.
//!
//! The instruction cache is not modelled: every fetch hits (decisions D49 says why, and how
//! large the firmware's loops are against the documented caches).
//! Not modelled: the store queue (a load behind a conflicting store, a store waiting for one of
//! its four entries, loads served before queued stores); stores leave at once, unless a bus
//! holds them (the simulator's `late_core_stores`).
//!
//! **Blocking** (`pipelined: false`, the rule before 2026-12-05): an instruction's whole
//! latency is paid before the next one starts, as if the next instruction always used its
//! result: an upper bound for code that hides latency.
//!
//! Either way a contended memory region can report a longer latency through the bus.
//!
//! Branch prediction: the BH README ("Frontend") says the Frontend "_predicts_ all control
//! flow" and ("EX1") that a mispredicted branch costs a four-cycle bubble; it does not describe
//! the predictor. The model (decisions D20) assumes the textbook small-core design: a 2-bit
//! saturating counter per conditional branch (starting weakly not-taken) for its direction, and
//! a last-target buffer for `jal`/`jalr` (a jump is predicted when it goes where it went the
//! last time, so its first execution and a return to a different caller mispredict; no
//! return-address stack is documented, so none is modelled). Both tables are tagless and
//! indexed by `pc[11:2]` (1024 entries): pcs 4 KiB apart share an entry, as they would in any
//! finite tagless table. The silicon's tables may be larger or smarter; with
//! `predict: false` every taken branch and every jump is charged as mispredicted, the upper
//! bound the model used before.

/// Entries of the Retire Unit's retire-order queue: 8 (BH README, "Retire Unit").
pub const RETIRE_QUEUE: u32 = 8;

/// The cycle costs of the hart's instructions. [`Cost::default`] gives the Blackhole figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Cycles of an instruction with no other rule: 1. BH README, "Baby RISCVs" (single issue,
    /// "one RISCV instruction per cycle") and "EX1" ("Most integer instructions spend exactly
    /// one cycle in EX1").
    pub base: u32,
    /// `mul`, `mulh`, `mulhsu`, `mulhu`: 2. BH README, "EX2": one cycle in EX1 then exactly one
    /// in EX2, so the result is ready two cycles after issue (charged in full: blocking model).
    pub mul: u32,
    /// A divide by 0 or 1, or a signed `-2^31 / -1`: 2. BH README, "EX1", divide bullet ("two
    /// cycles are required").
    pub div_fast: u32,
    /// The least cycles of any other divide: 6. BH README, "EX1": "between six and 33 cycles
    /// ... dependent upon the magnitude of the dividend".
    pub div_min: u32,
    /// The most cycles of any other divide: 33 (same section).
    pub div_max: u32,
    /// Extra cycles of a mispredicted branch or jump: 4. BH README, "EX1": "A mispredicted
    /// branch causes a four cycle pipeline bubble" (branch there covers `jal` and `jalr`).
    pub mispredict: u32,
    /// Whether branches and jumps are predicted (the module docs say how). `false` charges
    /// [`Cost::mispredict`] on every taken branch and every jump (static not-taken prediction).
    pub predict: bool,
    /// `csrrw`/`csrrs`/... , `ecall`, `ebreak`: 2. Not a documented number: BH README, "EX1",
    /// says no instruction enters EX1 until all earlier CSR/`ecall`/`ebreak` instructions have
    /// retired; such an instruction spends one cycle in EX1 and one in the Retire Unit, so the
    /// next one starts two cycles later.
    pub csr: u32,
    /// Whether instructions overlap as the pipeline allows (the module docs): `true`, the
    /// default; `false` charges every instruction its whole latency before the next starts.
    pub pipelined: bool,
    /// `fence`: 3. Not a documented number: like `csr` (fences serialize the same way) plus the
    /// one cycle a fence spends in the Load/Store Unit (BH README, "Pipeline"; the wait for the
    /// store queue to drain is nothing here, as this model has no queued stores).
    pub fence: u32,
    /// Load latency from the hart's own data RAM at `MEM_LOCAL_BASE`: 2. BH README, "Load/Store
    /// Unit", latency table, row "Core-local data RAM via MEM_LOCAL_BASE", and "Local Data RAM".
    pub load_local: u32,
    /// Store to the hart's own data RAM: 1. BH README, "Load/Store Unit": a store's instruction
    /// "spends one cycle in Load/Store and then proceeds directly to the Retire Unit", and
    /// non-L1 regions take "one store every cycle".
    pub store_local: u32,
    /// Default load latency from L1 for a bus: 8. BH README latency table, row "L1 scratchpad
    /// RAM with L0 data cache miss" (">= 8"). The 64-byte L0 data cache (hit: 2) is not
    /// modelled: polling loops on L1 are the common firmware load and must see fresh data.
    pub load_l1: u32,
    /// Default store cost to L1 for a bus: 1. Same section: stores retire after one cycle in
    /// the Load/Store Unit and wait in a four-entry store queue; sustained streams that do not
    /// coalesce are limited to one per five cycles, which this default does not charge.
    pub store_l1: u32,
    /// Default load latency from MMIO (NoC, tile control, PIC, overlay registers): 7. BH README
    /// latency table, rows "NoC 0/1 configuration and command", "Tile control / debug / status"
    /// (">= 7"). Mailboxes and semaphores (>= 3) and Tensix GPRs (>= 4) are faster; a bus
    /// that models them should return those figures.
    pub load_mmio: u32,
    /// Default store cost to MMIO for a bus: 1. BH README, "Load/Store Unit": "Other memory
    /// regions can achieve a throughput of one store every cycle".
    pub store_mmio: u32,
}

impl Default for Cost {
    fn default() -> Self {
        Cost {
            base: 1,
            mul: 2,
            div_fast: 2,
            div_min: 6,
            div_max: 33,
            mispredict: 4,
            predict: true,
            csr: 2,
            pipelined: true,
            fence: 3,
            load_local: 2,
            store_local: 1,
            load_l1: 8,
            store_l1: 1,
            load_mmio: 7,
            store_mmio: 1,
        }
    }
}

impl Cost {
    /// Cycles of a divide or remainder whose dividend has magnitude `magnitude` (its absolute
    /// value for `div`/`rem`, the value itself for `divu`/`remu`), when it is not one of the
    /// fast cases ([`Cost::div_fast`]).
    ///
    /// The documentation gives only the range (6 to 33) and that it grows with the dividend's
    /// magnitude. This model assumes one quotient bit per cycle after one cycle of setup:
    /// `1 + bit length of the magnitude`, clamped to `div_min..=div_max` (so a 32-bit dividend
    /// takes 33, any dividend below 32 takes 6).
    #[inline]
    pub fn div_cycles(&self, magnitude: u32) -> u32 {
        let bits = 32 - magnitude.leading_zeros();
        (1 + bits).clamp(self.div_min, self.div_max.max(self.div_min))
    }

    /// The most cycles one instruction can take under this rule when no bus access takes more
    /// than `bus_max` cycles: the bound on how far [`run`](super::hart::Hart::run) can go past
    /// its `until_cycle` (it stops at most `max_instruction_cycles - 1` cycles after). Pipelined,
    /// an instruction may first wait for an earlier load's result (at most `bus_max`) and for
    /// the retire queue to drain (at most one cycle an entry).
    pub fn max_instruction_cycles(&self, bus_max: u32) -> u64 {
        let fetch = u64::from(bus_max)
            + if self.pipelined {
                u64::from(bus_max) + u64::from(RETIRE_QUEUE)
            } else {
                0
            };
        let data = [
            self.base,
            self.mul,
            self.div_fast,
            self.div_max,
            self.base.saturating_add(self.mispredict),
            self.csr,
            self.fence,
            self.load_local,
            self.store_local,
            bus_max,
        ];
        fetch + u64::from(data.into_iter().max().unwrap_or(0))
    }
}
