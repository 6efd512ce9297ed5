//! The workers' idle handshake: what a worker that found nothing to do does, and how the run
//! learns that nothing can move any more.
//!
//! A worker with nothing to do registers as a sleeper ([`Sleep::prepare`]), notes the run's
//! activity and looks for work once more. Finding none, it leaves the active count. The last
//! worker to leave it does not sleep: it drives the devices (on the simulator, runs them until
//! something is published), unless another worker is driving already (one driver at a time),
//! and wakes every sleeper when done. The others sleep until work is published, a driver
//! finishes or the run ends.
//!
//! What it guarantees (`tests/loom_dispatch.rs` checks each on this code):
//! - no worker is left asleep while another can still make progress: a sleeper's ticket was
//!   taken before its last look, so anything published after that look wakes it, and the last
//!   worker to go idle drives instead of sleeping, then wakes the rest;
//! - at most one worker drives at a time;
//! - a stall (the idle generation moves, and the workers abandon what can never be placed) is
//!   declared only by a drive that found the devices idle after every worker's last fruitless
//!   look began at the run's current activity: work made after a worker's look (which bumps the
//!   activity) keeps the run from declaring a stall until that worker looked again.

use crossbeam_utils::CachePadded;

use super::park::Sleep;
use super::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use super::target::Drive;

/// The idle handshake's shared state for a run of `workers` workers.
#[derive(Debug)]
pub struct Idle {
    sleep: Sleep,
    /// Workers not idle (every worker starts active).
    active: AtomicUsize,
    /// A worker is driving the devices.
    driving: AtomicBool,
    /// Moves each time a drive declares a stall.
    generation: AtomicU64,
    /// Per worker: bumped after every pass of that worker that did something and every drive
    /// of it that published; the sum is the run's activity. (One padded word per worker: a
    /// shared counter bumped by every pass was a contended line, and it slowed every read of
    /// the words beside it.)
    activity: Box<[CachePadded<AtomicU64>]>,
    /// Per worker: the activity when its last fruitless look for work began.
    rescanned: Box<[AtomicU64]>,
}

/// What [`Idle::idle`] came to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Idled {
    /// The last look found work: the worker goes on at once.
    Found,
    /// The worker was the last one active and drove the devices, with this result.
    Drove(Drive),
    /// The worker slept until woken.
    Slept,
}

impl Idle {
    /// The state of a run of `workers` workers, all active, no activity yet.
    pub fn new(workers: usize) -> Self {
        Self {
            sleep: Sleep::new(),
            active: AtomicUsize::new(workers),
            driving: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            activity: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            rescanned: (0..workers).map(|_| AtomicU64::new(u64::MAX)).collect(),
        }
    }

    /// The sleepers' event count: [`Sleep::notify`] after making work visible,
    /// [`Sleep::wake_all`] to end the run.
    pub fn sleep(&self) -> &Sleep {
        &self.sleep
    }

    /// The run's activity: the sum of every worker's count. Each count only grows, so a sum
    /// read while some grow lies between the sums before and after the reads: a look for work
    /// that began before some activity never compares equal to a sum read after it.
    pub fn activity(&self) -> u64 {
        self.activity.iter().map(|a| a.load(Ordering::SeqCst)).sum()
    }

    /// Counts activity of worker `me` (a pass that did something). A worker number past the
    /// run's counts nothing.
    pub fn bump(&self, me: usize) {
        debug_assert!(
            me < self.activity.len(),
            "worker {me} of {}",
            self.activity.len()
        );
        if let Some(a) = self.activity.get(me) {
            a.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// How many stalls were declared so far (a worker that sees it move abandons what can
    /// never be placed).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Worker `me` found nothing to do. `look` looks for work once more (true: found some);
    /// `drive` drives the devices, if this worker turns out to be the last active one and no
    /// other is driving. Returns when the worker should look for work again. A `me` that is not
    /// one of the run's workers (`new`'s count) gets [`Idled::Found`] at once: it is not
    /// counted among the active, and taking it off them would let the count wrap, every real
    /// worker then sleeping for good.
    pub fn idle(
        &self,
        me: usize,
        look: impl FnOnce() -> bool,
        drive: impl FnOnce() -> Drive,
    ) -> Idled {
        if me >= self.activity.len() {
            return Idled::Found;
        }
        let ticket = self.sleep.prepare();
        let activity = self.activity();
        // (An abort after the ticket was taken wakes it: the sleep below returns at once.)
        if look() {
            self.sleep.cancel(ticket);
            return Idled::Found;
        }
        if let Some(r) = self.rescanned.get(me) {
            r.store(activity, Ordering::SeqCst);
        }
        let last = self.active.fetch_sub(1, Ordering::SeqCst) == 1;
        if last
            && self
                .driving
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            self.sleep.cancel(ticket);
            let drove = drive();
            match drove {
                Drive::Progress => self.bump(me),
                Drive::Idle => {
                    // Nothing can change on the device, and every worker looked for work in
                    // vain since anything last happened: what is ready now can never be placed.
                    let now = self.activity();
                    if self
                        .rescanned
                        .iter()
                        .all(|r| r.load(Ordering::SeqCst) == now)
                    {
                        self.generation.fetch_add(1, Ordering::SeqCst);
                    }
                }
                Drive::Lost => {}
            }
            self.driving.store(false, Ordering::SeqCst);
            self.active.fetch_add(1, Ordering::SeqCst);
            self.sleep.wake_all();
            Idled::Drove(drove)
        } else {
            self.sleep.sleep(ticket);
            self.active.fetch_add(1, Ordering::SeqCst);
            Idled::Slept
        }
    }
}
