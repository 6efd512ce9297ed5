//! [`SimPause`]: how a simulated kernel waits, parked in virtual time until its tile changes or
//! its deadline comes (the `komorebi_hal::Pause` that `wait_until` uses).
//!
//! Imports the world only.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::world::Shared;

/// How a simulated kernel waits: parked until its tile changes or its deadline, in virtual time.
#[derive(Clone)]
pub struct SimPause {
    pub(crate) world: Shared,
    pub(crate) task: usize,
}

impl std::fmt::Debug for SimPause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimPause")
            .field("task", &self.task)
            .finish()
    }
}

/// Pending once (the task has just parked); the executor polls again only on a wake-up. The
/// firmware cores (`core.rs`) yield the same way between their slices.
pub(crate) struct Parked(pub(crate) bool);

impl Future for Parked {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

// The simulator runs every kernel as an async task of its executor, so it has no blocking build
// (`--cfg komorebi_blocking`, the firmware's): lib.rs refuses that cfg with a compile_error, and
// this impl steps aside so that the error is the only one.
#[cfg(not(komorebi_blocking))]
impl komorebi_hal::Pause for SimPause {
    async fn pause(&mut self, deadline: u64) {
        self.world.borrow_mut().park(self.task, deadline, false);
        Parked(false).await
    }
}
