//! How a waiting firmware kernel lets time pass between two polls: not at all.

use komorebi_hal::Pause;

/// Polls again at once, with no spin-loop hint between polls.
///
/// The baby cores are in-order and single-threaded, so a hint has nothing to yield to; and
/// `core::hint::spin_loop`'s `pause` is a `fence w, 0`, which on these cores only makes the
/// next instruction wait for it to retire (ISA `BabyRISCV/README.md`, "EX1"). ttsim refuses
/// that encoding ("UnsupportedFunctionality in rv32_fence: fence_mode=0x10"), and tt-metal's
/// firmware never emits it. Outside the blocking build (host tests) it is
/// [`Spin`](komorebi_hal::Spin).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Poll;

#[cfg(komorebi_blocking)]
impl Pause for Poll {
    #[inline(always)]
    fn pause(&mut self, _deadline: u64) {}
}

#[cfg(not(komorebi_blocking))]
impl Pause for Poll {
    #[inline]
    async fn pause(&mut self, deadline: u64) {
        komorebi_hal::Spin.pause(deadline).await
    }
}
