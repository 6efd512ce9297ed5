//! [`Probe`]: what a hart tells an observer about each instruction it retires, for profilers.
//!
//! [`Hart::run_probed`](super::hart::Hart::run_probed) is generic over the probe, so a run with
//! [`NoProbe`] (what [`Hart::run`](super::hart::Hart::run) uses) compiles to the loop without
//! any observer: a profile costs nothing when nobody asks for one.

/// How an instruction moved control, as the RISC-V calling convention reads it (the
/// unprivileged specification's table of return-address-stack hints for `jal`/`jalr`: `x1`
/// and `x5` are link registers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Anything that is not a call or a return (branches and plain jumps included).
    Other,
    /// `jal`/`jalr` writing a link register: a call; control went to `target`.
    Call {
        /// Where the call went.
        target: u32,
    },
    /// `jalr` to a link register, writing none: a return.
    Return,
}

/// An observer of retired instructions.
pub trait Probe {
    /// The instruction at `pc` retired, costing `cycles` (fetch included), and moved control
    /// as `flow` says.
    fn retired(&mut self, pc: u32, flow: Flow, cycles: u64);

    /// The hart's clock moved `cycles` forward without retiring anything
    /// ([`Hart::stall_until`](super::hart::Hart::stall_until)).
    fn stalled(&mut self, cycles: u64);
}

/// The probe that observes nothing (compiled away).
#[derive(Copy, Clone, Debug, Default)]
pub struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn retired(&mut self, _pc: u32, _flow: Flow, _cycles: u64) {}
    #[inline(always)]
    fn stalled(&mut self, _cycles: u64) {}
}

/// Whether register `r` is a link register (`x1` or `x5`).
#[inline(always)]
pub(crate) fn is_link(r: u8) -> bool {
    r == 1 || r == 5
}
