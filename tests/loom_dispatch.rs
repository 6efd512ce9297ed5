//! Loom models of the dispatcher's concurrency primitives, on the very code the dispatcher runs
//! (its `sync` shim switches to loom's types under `--cfg loom`):
//!
//! * the tile reservation set: two placers with overlapping groups never both hold a tile
//!   exclusively, and a shared holder never coexists with an exclusive one;
//! * the slot/epoch mailbox: a device thread completes a command late (overdue, then quiet) and
//!   replays a stale publication after the worker has reused the slot for the next command;
//!   the worker sees each step of its own command once and never the stale one;
//! * parking: a sleeper registered after looking for work is always woken by work published
//!   concurrently (a lost wake-up would leave it asleep forever, which loom reports).
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test
//! loom_dispatch` (CI does).

#![cfg(loom)]

use std::sync::Arc as StdArc;

use komorebi::dispatch::{Mailbox, Polled, Published, Reservations, Sleep};
use komorebi::host::session::Report;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use loom::thread;

#[test]
fn overlapping_exclusive_reservations_exclude_each_other() {
    loom::model(|| {
        let r = Arc::new(Reservations::new(3));
        // Tiles in use, per tile: +1 shared, +100 exclusive, checked inside the hold.
        let using = Arc::new([AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)]);
        let groups: [(StdArc<[u32]>, bool); 2] = [
            (StdArc::from(vec![0u32, 1]), true),
            (StdArc::from(vec![1u32, 2]), true),
        ];
        let shared_group: StdArc<[u32]> = StdArc::from(vec![1u32]);
        let mut handles = Vec::new();
        for (tiles, exclusive) in groups {
            let (r, using) = (r.clone(), using.clone());
            handles.push(thread::spawn(move || {
                if let Some(held) = r.try_reserve(&tiles, exclusive) {
                    for &t in tiles.iter() {
                        let before = using[t as usize].fetch_add(100, Ordering::SeqCst);
                        assert_eq!(before, 0, "tile {t} held by another command");
                    }
                    for &t in tiles.iter() {
                        using[t as usize].fetch_sub(100, Ordering::SeqCst);
                    }
                    r.release(held);
                }
            }));
        }
        if let Some(held) = r.try_reserve(&shared_group, false) {
            let before = using[1].fetch_add(1, Ordering::SeqCst);
            assert!(before < 100, "a shared holder met an exclusive one");
            using[1].fetch_sub(1, Ordering::SeqCst);
            r.release(held);
        }
        for h in handles {
            h.join().unwrap();
        }
        assert!(
            (0..3).all(|t| r.word(t) == Some(0)),
            "everything given back"
        );
    });
}

#[test]
fn a_late_completion_and_a_stale_publication_never_reach_the_next_command() {
    loom::model(|| {
        let mailbox = Arc::new(Mailbox::new());
        let posted = Arc::new(AtomicU32::new(0));
        assert!(mailbox.arm(1));
        posted.store(1, Ordering::Release);
        let device = {
            let (m, posted) = (mailbox.clone(), posted.clone());
            thread::spawn(move || {
                let mut timed_out = Report::success(1);
                timed_out.timeout = true;
                assert!(m.publish(1, Published::Overdue(timed_out)));
                assert!(m.publish(1, Published::Quiet));
                // Waits for the worker to post command 2 in the same slot.
                while posted.load(Ordering::Acquire) < 2 {
                    thread::yield_now();
                }
                // A stale, duplicate publication for command 1: dropped.
                assert!(!m.publish(1, Published::Reported(Report::success(1))));
                assert!(m.publish(2, Published::Reported(Report::success(2))));
            })
        };
        // Worker: command 1's overdue report, then its quiet; only then the slot is reused.
        let mut seen_overdue = false;
        loop {
            match mailbox.poll(1) {
                Polled::Pending => thread::yield_now(),
                Polled::Overdue(r) => {
                    assert!(!seen_overdue && r.timeout && r.sequence == 1);
                    seen_overdue = true;
                }
                Polled::Quiet => break,
                other => panic!("command 1: unexpected {other:?}"),
            }
        }
        assert!(
            seen_overdue,
            "the timeout is handed over before the slot is free"
        );
        assert!(mailbox.arm(2));
        posted.store(2, Ordering::Release);
        loop {
            match mailbox.poll(2) {
                Polled::Pending => thread::yield_now(),
                Polled::Reported(r) => {
                    assert_eq!(r.sequence, 2);
                    break;
                }
                other => panic!("command 2: unexpected {other:?}"),
            }
        }
        device.join().unwrap();
        assert_eq!(mailbox.dropped(), 1);
    });
}

#[test]
fn a_mailbox_is_not_reused_before_its_command_settles() {
    loom::model(|| {
        let mailbox = Arc::new(Mailbox::new());
        assert!(mailbox.arm(1));
        let device = {
            let m = mailbox.clone();
            thread::spawn(move || {
                let mut r = Report::success(1);
                r.timeout = true;
                assert!(m.publish(1, Published::Overdue(r)));
            })
        };
        // Whatever the interleaving, command 1 is never settled here (posted or overdue).
        assert!(!mailbox.arm(2));
        device.join().unwrap();
        assert!(!mailbox.arm(2), "overdue is not final");
        assert_eq!(mailbox.settled(), (1, false));
    });
}

#[test]
fn a_sleeper_is_never_left_asleep_with_work_published() {
    loom::model(|| {
        let sleep = Arc::new(Sleep::new());
        let work = Arc::new(AtomicBool::new(false));
        let producer = {
            let (sleep, work) = (sleep.clone(), work.clone());
            thread::spawn(move || {
                work.store(true, Ordering::Relaxed);
                sleep.notify();
            })
        };
        // The worker's idle path: register, look again, sleep only if still nothing.
        loop {
            if work.load(Ordering::Relaxed) {
                break;
            }
            let ticket = sleep.prepare();
            if work.load(Ordering::Relaxed) {
                sleep.cancel(ticket);
                break;
            }
            sleep.sleep(ticket);
        }
        producer.join().unwrap();
        assert_eq!(sleep.sleepers(), 0);
    });
}
