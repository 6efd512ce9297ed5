//! [`Probe`]: what a hart tells an observer about each instruction it retires, for profilers.
//!
//! [`Hart::run_probed`](super::hart::Hart::run_probed) is generic over the probe, so a run with
//! [`NoProbe`] (what [`Hart::run`](super::hart::Hart::run) uses) compiles to the loop without
//! any observer: a profile costs nothing when nobody asks for one.
//!
//! A probe may also make chosen code faster ([`Probe::speed_up`], [`Faster`] over a
//! [`SpeedUp`]): a what-if run, which shows what a run would gain if that code took fewer
//! cycles. Code whose speed-up shortens the run is on its critical path; code whose speed-up
//! does not is not worth making faster alone.

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

    /// The factor the instruction at `pc` is made faster by: the hart divides the cycles its
    /// cost rule charges the instruction, and the latency of its result, by it (1, the
    /// default: as the rule charges them). [`SpeedUp`] says which code a what-if run makes
    /// faster.
    #[inline(always)]
    fn speed_up(&self, pc: u32) -> u32 {
        let _ = pc;
        1
    }
}

impl<P: Probe + ?Sized> Probe for &mut P {
    #[inline(always)]
    fn retired(&mut self, pc: u32, flow: Flow, cycles: u64) {
        P::retired(self, pc, flow, cycles);
    }
    #[inline(always)]
    fn stalled(&mut self, cycles: u64) {
        P::stalled(self, cycles);
    }
    #[inline(always)]
    fn speed_up(&self, pc: u32) -> u32 {
        P::speed_up(self, pc)
    }
}

/// Code made faster in a what-if run: address ranges of firmware code (the functions a user
/// named, found in the images' symbols and debug information by the host) and the factor
/// their cycles are divided by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpeedUp {
    factor: u32,
    /// Sorted, disjoint, none empty: `start..end`.
    ranges: Vec<(u32, u32)>,
}

/// Why a [`SpeedUp`] cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpeedUpError {
    /// The factor is outside what a what-if run takes.
    #[error(
        "speed-up factor {0}: allowed {min}..={max}",
        min = SpeedUp::MIN_FACTOR,
        max = SpeedUp::MAX_FACTOR
    )]
    Factor(u32),
    /// No code to make faster.
    #[error("no code to speed up: every address range is empty (allowed: start below end)")]
    NoCode,
}

impl SpeedUp {
    /// The smallest factor: 1 would change nothing.
    pub const MIN_FACTOR: u32 = 2;
    /// The largest factor: beyond it the code costs next to nothing anyway.
    pub const MAX_FACTOR: u32 = 64;

    /// Refuses a factor outside `MIN_FACTOR..=MAX_FACTOR`.
    pub fn check_factor(factor: u32) -> Result<(), SpeedUpError> {
        if (Self::MIN_FACTOR..=Self::MAX_FACTOR).contains(&factor) {
            Ok(())
        } else {
            Err(SpeedUpError::Factor(factor))
        }
    }

    /// `ranges` (`start..end`, in any order, overlapping or not; empty ones are dropped) made
    /// `factor` times faster.
    pub fn new(factor: u32, ranges: &[(u32, u32)]) -> Result<Self, SpeedUpError> {
        Self::check_factor(factor)?;
        let mut sorted: Vec<(u32, u32)> = ranges.iter().copied().filter(|r| r.0 < r.1).collect();
        sorted.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(sorted.len());
        for (start, end) in sorted {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        if merged.is_empty() {
            return Err(SpeedUpError::NoCode);
        }
        Ok(Self {
            factor,
            ranges: merged,
        })
    }

    /// The factor.
    pub fn factor(&self) -> u32 {
        self.factor
    }

    /// The ranges, sorted and merged.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// The factor at `pc`: [`SpeedUp::factor`] inside a range, else 1.
    #[inline]
    pub fn factor_at(&self, pc: u32) -> u32 {
        // The last range starting at or below `pc`.
        let i = self.ranges.partition_point(|r| r.0 <= pc);
        match i.checked_sub(1).map(|i| self.ranges[i]) {
            Some((_, end)) if pc < end => self.factor,
            _ => 1,
        }
    }
}

/// `probe`, with the code of `speed_up` made faster.
#[derive(Debug)]
pub struct Faster<'a, P> {
    /// The probe told about every instruction (with the cycles as made faster).
    pub probe: P,
    /// What is made faster.
    pub speed_up: &'a SpeedUp,
}

impl<P: Probe> Probe for Faster<'_, P> {
    #[inline(always)]
    fn retired(&mut self, pc: u32, flow: Flow, cycles: u64) {
        self.probe.retired(pc, flow, cycles);
    }
    #[inline(always)]
    fn stalled(&mut self, cycles: u64) {
        self.probe.stalled(cycles);
    }
    #[inline(always)]
    fn speed_up(&self, pc: u32) -> u32 {
        self.speed_up.factor_at(pc)
    }
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
