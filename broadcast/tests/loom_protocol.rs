//! A loom model of the broadcast's slot reuse and markers, on atomics: one sender, two
//! receivers, window 1 and 2, 3 blocks. Loom runs every interleaving (and every outcome the
//! memory orderings allow) and checks that:
//!
//! * a slot is never overwritten before every receiver popped the block in it (a receiver that
//!   was told block `b` is there reads exactly `b`);
//! * no execution deadlocks (every thread finishes).
//!
//! The model mirrors `device.rs`: the sender multicasts a block into slot `b % window` of each
//! receiver, then its VALID word (`b + 1`, release); a receiver waits for VALID `>= b + 1`
//! (acquire), reads the slot, pops it and writes its cumulative DONE marker (`b + 1`, release);
//! the sender writes slot `b % window` again only when every DONE is `>= b - window + 1`.
//! Waiting is modelled as the HAL's `Pause` does it on the simulator: park until something
//! changes (a condition variable notified after every store), so an execution in which every
//! thread is parked is a deadlock, which loom reports.
//! A second model with the reuse rule off by one must fail, which shows the check can.

use loom::sync::atomic::{AtomicU32, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

const BLOCKS: u32 = 3;
const RECEIVERS: usize = 2;

struct Receiver {
    slots: Vec<AtomicU32>,
    valid: AtomicU32,
    done: AtomicU32,
}

struct Chip {
    receivers: Vec<Receiver>,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Chip {
    /// Parks until `cond` holds; checked under the lock, so no wake-up is lost.
    fn wait(&self, mut cond: impl FnMut(&Chip) -> bool) {
        let mut guard = self.lock.lock().unwrap();
        while !cond(self) {
            guard = self.changed.wait(guard).unwrap();
        }
    }

    /// Tells every parked thread that something changed.
    fn publish(&self) {
        let _guard = self.lock.lock().unwrap();
        self.changed.notify_all();
    }
}

/// `slack` = 0 is the protocol; 1 lets the sender reuse a slot one block early.
fn model(window: u32, slack: u32) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(move || {
        let chip = Arc::new(Chip {
            receivers: (0..RECEIVERS)
                .map(|_| Receiver {
                    slots: (0..window).map(|_| AtomicU32::new(u32::MAX)).collect(),
                    valid: AtomicU32::new(0),
                    done: AtomicU32::new(0),
                })
                .collect(),
            lock: Mutex::new(()),
            changed: Condvar::new(),
        });
        let handles: Vec<_> = (0..RECEIVERS)
            .map(|r| {
                let chip = chip.clone();
                thread::spawn(move || {
                    for b in 0..BLOCKS {
                        chip.wait(|c| c.receivers[r].valid.load(Ordering::Acquire) > b);
                        let got =
                            chip.receivers[r].slots[(b % window) as usize].load(Ordering::Relaxed);
                        assert_eq!(
                            got, b,
                            "receiver {r}: slot of block {b} was overwritten before it was popped"
                        );
                        chip.receivers[r].done.store(b + 1, Ordering::Release);
                        chip.publish();
                    }
                })
            })
            .collect();
        for b in 0..BLOCKS {
            if b >= window {
                // The block that was in this slot, b - window, must be popped everywhere:
                // DONE >= b - window + 1 (one fewer with `slack`).
                let needed = (b + 1).saturating_sub(window + slack);
                chip.wait(|c| {
                    c.receivers
                        .iter()
                        .all(|r| r.done.load(Ordering::Acquire) >= needed)
                });
            }
            for r in chip.receivers.iter() {
                r.slots[(b % window) as usize].store(b, Ordering::Relaxed);
                r.valid.store(b + 1, Ordering::Release);
            }
            chip.publish();
        }
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_1_never_overwrites_and_never_deadlocks() {
    model(1, 0);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_2_never_overwrites_and_never_deadlocks() {
    model(2, 0);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "overwritten before it was popped")]
fn reusing_a_slot_one_block_early_is_caught() {
    model(2, 1);
}
