//! Why a hart stopped: [`Stop`], and the typed [`Fault`] it carries when the program did
//! something the core does not support. Faults are values, never panics.

use super::bus::AccessKind;

/// What went wrong, and where in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The word at `pc` is not an instruction the hart implements (RV32IM and its
    /// [`Isa`](super::decode::Isa)'s extensions, never `fence.i`; including
    /// writes to its read-only CSRs). The hardware's behaviour is undefined (BH README,
    /// "Instruction set"); the model stops.
    IllegalInstruction {
        /// The raw instruction word.
        word: u32,
    },
    /// A load or store whose address is not a multiple of its width, or a jump or taken
    /// branch to an address that is not a multiple of 4 (`access` is then
    /// [`AccessKind::Fetch`] and `pc` is the jump's). The baby cores do not support misaligned
    /// accesses: Wormhole's documentation says they are silently rounded down to the aligned
    /// address (`WormholeB0/TensixTile/BabyRISCV/README.md`, "Faults / exceptions"), which
    /// corrupts data unnoticed; the model stops instead, so the bug is seen.
    Misaligned {
        /// The misaligned address.
        addr: u32,
        /// The access.
        access: AccessKind,
    },
    /// The bus answered [`BusResult::Fault`](super::bus::BusResult::Fault).
    Bus {
        /// The address of the access.
        addr: u32,
        /// The access.
        access: AccessKind,
    },
    /// `pc` is outside the hart's code region (L1 by default: instructions cannot be executed
    /// from any other memory, BH README "Frontend").
    FetchOutsideCode,
}

/// A fault: the instruction at `pc` was not executed, and the hart's state (`pc`, registers,
/// cycle and instret) is as it was before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fault {
    /// Address of the faulting instruction.
    pub pc: u32,
    /// What went wrong.
    pub kind: FaultKind,
}

/// Why [`Hart::run`](super::hart::Hart::run) or [`Hart::step`](super::hart::Hart::step)
/// returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stop {
    /// The hart's cycle count reached `until_cycle` (only from `run`).
    Cycle,
    /// The bus answered `Retry` to an access of the instruction at `pc`: nothing changed; run
    /// again once simulated time has passed.
    Retry {
        /// Address of the instruction that will be executed again.
        pc: u32,
        /// Address of the access that must be retried.
        addr: u32,
        /// The access.
        access: AccessKind,
    },
    /// An `ecall` at `pc` retired (as a `nop`, then the core pauses, as silicon does:
    /// `WormholeB0/TensixTile/BabyRISCV/DebugInterface.md`, "ebreak and ecall instructions");
    /// the hart's `pc` is `pc + 4`, so running again resumes after it.
    Ecall {
        /// Address of the `ecall`.
        pc: u32,
    },
    /// An `ebreak` at `pc` retired; as for [`Stop::Ecall`].
    Ebreak {
        /// Address of the `ebreak`.
        pc: u32,
    },
    /// The program faulted; the hart cannot go on (running again faults again).
    Fault(Fault),
}
