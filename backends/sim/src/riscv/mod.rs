//! A model of one Blackhole "baby" RISC-V core: an RV32IM + Zicsr + Zba + Zbb hart (RV32IM
//! alone with [`Isa::RV32IM`], a Wormhole core's as ttsim's `wh` build runs it) that executes firmware built for
//! `riscv32im-unknown-none-elf`, counting core clock cycles by a documented cost rule.
//!
//! * [`Hart`] ([`hart`]): registers, `pc`, cycle and instret counts, the core's private local
//!   data RAM, and [`Hart::run`] / [`Hart::step`].
//! * [`Bus`] ([`bus`]): instruction fetch, loads and stores of 1, 2 and 4 bytes, each answered
//!   with a value and its latency, a fault, or [`BusResult::Retry`] (the access cannot complete
//!   at this simulated time). The simulator implements it over L1 and the MMIO registers;
//!   [`RamBus`] ([`ram`]) is a flat RAM for tests and benchmarks.
//! * [`Cost`] ([`cost`]): the cost rule and its sources in Tenstorrent's ISA documentation.
//! * [`decode()`] ([`mod@decode`]) and [`Op`] ([`op`]): the decoder and the decoded form.
//! * [`Stop`], [`Fault`] ([`stop`]): why a run returned.
//! * [`Probe`] ([`probe`]): an observer of retired instructions ([`Hart::run_probed`]), for
//!   profilers; [`NoProbe`] compiles away.
//!
//! What it guarantees:
//! * **Exact RV32IM semantics**, and Zicsr's, Zba's and Zbb's where the [`Isa`] has them
//!   (RISC-V unprivileged spec): `x0` reads 0, loads sign- or zero-extend, shifts use the low 5
//!   bits, division by zero and `-2^31 / -1` give the spec's results; `fence` is a no-op that
//!   costs cycles (`fence.i` is illegal: the cores lack Zifencei); `ecall`/`ebreak` retire and stop the run. The CSRs are the
//!   read-only counters `cycle`, `cycleh`, `instret`, `instreth` and `mhartid`, and on
//!   Blackhole the configuration CSR `cfg0`; a counter read returns the count before the
//!   reading instruction; any access that would write a counter is an illegal instruction,
//!   and so is any access to a CSR the silicon lacks (`time` and `timeh` among them,
//!   `BabyRISCV/CSRs.md`). (Silicon makes `cycle`/`instret` writable aliases; the model keeps
//!   them read-only.)
//! * **Faults are values**: an illegal word, a misaligned access or jump target, a bus fault,
//!   a fetch outside the code region (L1) stop the run with a [`Fault`] carrying the
//!   instruction's `pc`; the hart's state is left as it was before that instruction. No input
//!   program makes it panic.
//! * **Retry is clean**: an access answered `Retry` leaves `pc`, registers and counts
//!   unchanged; running again re-executes the instruction.
//! * **Deterministic time**: the cycle count depends only on the program, the bus's answers
//!   and the [`Cost`]; [`Hart::run`] stops at the first instruction boundary at or after its
//!   `until_cycle`, at most [`Cost::max_instruction_cycles`]` - 1` cycles past it.
//! * **Self-modifying code is seen**: every instruction is fetched from the bus; decoded forms
//!   are cached by `pc` and used only while the fetched word is the same.
//!
//! Leaf module: imports nothing of the crate but its own files.

pub mod bus;
pub mod cost;
pub mod decode;
pub mod hart;
pub mod op;
pub mod probe;
pub mod ram;
pub mod stop;

pub use bus::{AccessKind, Bus, BusResult};
pub use cost::Cost;
pub use decode::{Isa, decode};
pub use hart::{Hart, HartConfig};
pub use op::{Op, Size};
pub use probe::{Faster, Flow, NoProbe, Probe, SpeedUp, SpeedUpError};
pub use ram::RamBus;
pub use stop::{Fault, FaultKind, Stop};
