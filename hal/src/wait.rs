//! The wait primitive: poll a condition until it holds, the run's wait limit passes, or the
//! tile is asked to stop. Everything that waits in komorebi waits through [`wait_until`].
//!
//! Between polls a waiting kernel calls [`Pause::pause`] with its deadline. The backend decides
//! how time passes: silicon (`komorebi_silicon::Poll`) and unit tests ([`Spin`]) poll again at
//! once; the simulator suspends
//! the kernel until something it could observe changes or the deadline comes, so a timeout in an
//! idle chip fires without stepping through idle cycles. (`embedded-hal-async`'s `DelayNs` cannot
//! say "until something changes or this cycle", which is why this is a trait of its own; see
//! `docs/decisions.md`.)
//!
//! With `--cfg komorebi_blocking` every `async fn` here, and in the protocol and kernel crates,
//! is compiled as a plain `fn` (maybe-async's `must_be_sync`): a core that runs one kernel
//! spins in the wait itself instead of re-entering a state machine from an executor, which is
//! what the firmware builds. Source and behaviour are the same in both builds.

use crate::control::{self, ControlBlock, Error as _};

/// How a waiting kernel lets time pass between two polls of its condition.
///
/// In the blocking build (`--cfg komorebi_blocking`) `pause` is a plain
/// `fn pause(&mut self, deadline: u64)`, so a backend's impl must compile both ways: mark an
/// `async fn` impl `#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]`, as this
/// crate's `&mut T` impl is, or write one impl for each build behind `cfg`s, as [`Spin`]'s and
/// `komorebi_silicon::Poll`'s are. (Declare the cfg to the `unexpected_cfgs` lint, as the
/// workspace's `Cargo.toml` does.)
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub trait Pause {
    /// Returns when the condition may have changed or cycle `deadline` has come, whichever is
    /// first. Returning early is always allowed (the caller polls again).
    async fn pause(&mut self, deadline: u64);
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<T: Pause + ?Sized> Pause for &mut T {
    #[inline]
    async fn pause(&mut self, deadline: u64) {
        T::pause(self, deadline).await
    }
}

/// Polls again at once: after yielding to the executor once (so other tasks on a cooperative
/// executor run), or in the blocking build after a spin-loop hint. Right for unit tests. The
/// firmware polls with `komorebi_silicon::Poll` instead, which issues no hint: the hint is a
/// `pause` (`fence w, 0`), which ttsim refuses and the baby cores do not need.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Spin;

#[cfg(not(komorebi_blocking))]
impl Pause for Spin {
    #[inline]
    async fn pause(&mut self, _deadline: u64) {
        embassy_futures::yield_now().await
    }
}

#[cfg(komorebi_blocking)]
impl Pause for Spin {
    #[inline]
    fn pause(&mut self, _deadline: u64) {
        core::hint::spin_loop()
    }
}

/// Why a wait ended without its condition.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaitError<E> {
    /// The wait limit passed.
    TimedOut {
        /// Cycles waited.
        waited: u64,
    },
    /// The tile's stop flag was set.
    Stopped {
        /// Cycles waited.
        waited: u64,
    },
    /// The control block failed (reading the clock's wait limit or the stop flag).
    Control(control::ErrorKind),
    /// The condition failed.
    Condition(E),
}

impl<E> WaitError<E> {
    /// Cycles waited before the wait ended (0 for a failure).
    pub fn waited(&self) -> u64 {
        match *self {
            Self::TimedOut { waited } | Self::Stopped { waited } => waited,
            Self::Control(_) | Self::Condition(_) => 0,
        }
    }
}

impl<E: core::fmt::Display> core::fmt::Display for WaitError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TimedOut { waited } => write!(f, "wait limit passed after {waited} cycles"),
            Self::Stopped { waited } => write!(f, "tile asked to stop after {waited} cycles"),
            Self::Control(e) => write!(f, "control block: {e}"),
            Self::Condition(e) => write!(f, "{e}"),
        }
    }
}

/// Polls `ready` until it returns true; returns the cycles waited: 0 when the condition held at
/// its first poll (no clock is read then), else counted from the cycle after that poll.
///
/// Order of checks on every round: the condition first (so a condition that already holds is
/// never refused, even with a wait limit of 0), then the stop flag, then the deadline
/// (`start + wait_limit`, saturating, `start` read after the first poll failed), then
/// [`Pause::pause`]. The condition gets the control
/// block, so it may read control words; its own error type `E` is passed through as
/// [`WaitError::Condition`], and failures of the control block's own calls come back as
/// [`WaitError::Control`] with their kind.
///
/// This is one wait with the whole limit. A call made of several waits that must give up within
/// one limit in all takes its [`call_deadline`] once and waits with [`wait_until_deadline`].
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn wait_until<K, P, E, F>(
    ctrl: &mut K,
    pause: &mut P,
    ready: F,
) -> Result<u64, WaitError<E>>
where
    K: ControlBlock,
    P: Pause,
    F: FnMut(&mut K) -> Result<bool, E>,
{
    poll(ctrl, pause, None, ready).await
}

/// The cycle by which a call that starts now must have given up: now plus the run's wait limit
/// (saturating). A call made of several waits takes it once, at its start, and gives it to each
/// of its waits ([`wait_until_deadline`]), so the call as a whole ends within one limit.
pub fn call_deadline<K: ControlBlock>(ctrl: &mut K) -> Result<u64, control::ErrorKind> {
    let start = ctrl.now();
    let limit = ctrl.wait_limit().map_err(|e| e.kind())?;
    Ok(start.saturating_add(limit))
}

/// Polls `ready` as [`wait_until`] does, but gives up at the absolute cycle `deadline` (from
/// [`call_deadline`]) rather than one wait limit from now; returns the cycles waited.
///
/// A deadline already past still polls the condition once (the condition comes first), so a
/// condition that holds is taken; one that does not ends the wait at once with
/// [`WaitError::TimedOut`] (or [`WaitError::Stopped`] when the stop flag is set: the flag is
/// looked at before the deadline).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn wait_until_deadline<K, P, E, F>(
    ctrl: &mut K,
    pause: &mut P,
    deadline: u64,
    ready: F,
) -> Result<u64, WaitError<E>>
where
    K: ControlBlock,
    P: Pause,
    F: FnMut(&mut K) -> Result<bool, E>,
{
    poll(ctrl, pause, Some(deadline), ready).await
}

/// The loop of both waits: until `deadline`, or one wait limit from the first poll that failed.
/// A condition that holds at its first poll costs no clock read (most waits of a protocol call
/// hold at once, and on the baby cores a wall-clock read is three MMIO loads): the clock and the
/// limit are read once that poll failed, and the cycles waited count from there. One call of
/// the condition in the loop, so each wait's condition is compiled once.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn poll<K, P, E, F>(
    ctrl: &mut K,
    pause: &mut P,
    deadline: Option<u64>,
    mut ready: F,
) -> Result<u64, WaitError<E>>
where
    K: ControlBlock,
    P: Pause,
    F: FnMut(&mut K) -> Result<bool, E>,
{
    // `(start, deadline)` once the first poll failed.
    let mut clock: Option<(u64, u64)> = None;
    loop {
        if ready(ctrl).map_err(WaitError::Condition)? {
            return Ok(clock.map_or(0, |(start, _)| ctrl.now().saturating_sub(start)));
        }
        let (start, until) = match clock {
            Some(c) => c,
            None => {
                let start = ctrl.now();
                let until = match deadline {
                    Some(d) => d,
                    None => start.saturating_add(
                        ctrl.wait_limit()
                            .map_err(|e| WaitError::Control(e.kind()))?,
                    ),
                };
                *clock.insert((start, until))
            }
        };
        if ctrl
            .stop_requested()
            .map_err(|e| WaitError::Control(e.kind()))?
        {
            return Err(WaitError::Stopped {
                waited: ctrl.now().saturating_sub(start),
            });
        }
        let now = ctrl.now();
        if now >= until {
            return Err(WaitError::TimedOut {
                waited: now.saturating_sub(start),
            });
        }
        pause.pause(until).await;
    }
}

/// Runs a future to completion by polling it in a loop: the executor of a core that runs one
/// kernel and has nothing else to do (embassy-futures' `block_on`: its waker does nothing and
/// every `Pending` is polled again at once).
#[cfg(not(komorebi_blocking))]
pub use embassy_futures::block_on;

/// The blocking build's executor: every protocol call has run to its end before it returns, so
/// this hands back its result. Kernel entry points read the same in both builds.
#[cfg(komorebi_blocking)]
pub fn block_on<T>(done: T) -> T {
    done
}
