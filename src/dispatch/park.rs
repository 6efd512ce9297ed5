//! Parking without lost wake-ups: an event count in the style of rayon's sleep protocol.
//!
//! A worker that found nothing to do registers as a sleeper with [`Sleep::prepare`], looks for
//! work once more, and only then sleeps on the ticket it got, until the event count moves past
//! it. Whoever makes work (new ready commands, a released reservation, a device completion) calls
//! [`Sleep::notify`] after making it visible.
//!
//! Why no wake-up is lost: the sleeper does `sleepers += 1; fence(SeqCst); look for work`, and a
//! notifier does `publish work; fence(SeqCst); if sleepers > 0 { events += 1; wake }`. The two
//! fences are totally ordered. If the sleeper's comes first, the notifier sees the sleeper and
//! moves the count, which the sleeper checks under the lock before every wait, so it does not
//! sleep through it; if the notifier's comes first, the sleeper's second look sees the work. A
//! notifier that sees no sleeper pays one fence and one load, no lock and no shared write, which
//! keeps the hot path cheap. The loom tests in `tests/loom_dispatch.rs` check this.

use super::sync::{AtomicU64, AtomicUsize, Condvar, Mutex, Ordering, fence, lock};

/// The event count and the sleepers' lock.
#[derive(Debug, Default)]
pub struct Sleep {
    events: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// A registered sleeper's view of the event count; give it to [`Sleep::sleep`] or
/// [`Sleep::cancel`].
#[derive(Debug)]
#[must_use = "a prepared sleeper stays registered until it sleeps or cancels"]
pub struct SleepTicket {
    seen: u64,
}

impl Sleep {
    /// No sleepers, no events.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the caller as a sleeper. Look for work after this and before
    /// [`sleep`](Self::sleep): work published after the look wakes the sleep.
    pub fn prepare(&self) -> SleepTicket {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        SleepTicket {
            seen: self.events.load(Ordering::SeqCst),
        }
    }

    /// Unregisters a sleeper that found work after all.
    pub fn cancel(&self, ticket: SleepTicket) {
        let _ = ticket;
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sleeps until an event newer than `ticket`, then unregisters.
    pub fn sleep(&self, ticket: SleepTicket) {
        let mut guard = lock(&self.lock);
        while self.events.load(Ordering::SeqCst) == ticket.seen {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        drop(guard);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes every sleeper if there is one; call after making new work visible.
    pub fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake_all();
        }
    }

    /// Moves the event count and wakes every sleeper, whether or not one is registered.
    pub fn wake_all(&self) {
        self.events.fetch_add(1, Ordering::SeqCst);
        // Taking the lock orders this wake after a sleeper's check-then-wait.
        drop(lock(&self.lock));
        self.wake.notify_all();
    }

    /// Sleepers registered now (for diagnostics).
    pub fn sleepers(&self) -> usize {
        self.sleepers.load(Ordering::Relaxed)
    }
}
