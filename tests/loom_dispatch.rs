//! Loom models of the dispatcher's concurrency primitives, on the very code the dispatcher runs
//! (its `sync` shim switches to loom's types under `--cfg loom`):
//!
//! * the tile reservation set: two placers with overlapping groups never both hold a tile
//!   exclusively, and a shared holder never coexists with an exclusive one (each holder's use of
//!   a tile goes through a loom cell, so a take or give-back that lost its Acquire or Release is
//!   a reported race); a region never has more shared holders than its slots; a placer blocked
//!   for good never holds, even for a moment, a region another placer wants; a placer refused
//!   by regions taken and given back is woken to look again;
//! * the slot/epoch mailbox: a device thread completes a command late (overdue, then quiet) and
//!   replays a stale publication after the worker has reused the slot for the next command;
//!   the worker sees each step of its own command once and never the stale one;
//! * parking: a sleeper registered after looking for work is always woken by work published
//!   concurrently (a lost wake-up would leave it asleep forever, which loom reports);
//! * the idle handshake (`Idle::idle`, the code a worker with nothing to do runs): of two idle
//!   workers one drives the devices and wakes the other, never two at once (also when the drive
//!   wakes the other, which then goes idle again as the last active worker); a worker left
//!   active wakes an idle one with the work it makes; a stall is declared only once every
//!   worker looked for work since the last activity.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --test
//! loom_dispatch` (CI does).

#![cfg(loom)]

use std::sync::Arc as StdArc;

use komorebi::dispatch::{
    Blocked, Drive, Idle, Idled, Mailbox, Polled, Published, Reservations, Sleep,
};
use komorebi::host::session::Report;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use loom::thread;

/// A tile's command slot as a holder uses it: loom reports a write that no happens-before
/// orders against another holder's access, so a reservation whose take or give-back lost its
/// Acquire or Release (a holder's work not visible to the next) fails here, not only an
/// overlap.
struct TileUse(loom::cell::UnsafeCell<u32>);

impl TileUse {
    /// An exclusive holder's work on the tile.
    fn write(&self) {
        // SAFETY: loom checks that no other holder touches the cell meanwhile; that is the
        // property under test.
        self.0.with_mut(|p| unsafe { *p += 1 });
    }

    /// A shared holder's look at the tile.
    fn read(&self) -> u32 {
        // SAFETY: as above; shared holders only read, at once.
        self.0.with(|p| unsafe { *p })
    }
}

#[test]
fn overlapping_exclusive_reservations_exclude_each_other() {
    loom::model(|| {
        let r = Arc::new(Reservations::new(3));
        let tiles_in_use: Arc<[TileUse; 3]> = Arc::new(std::array::from_fn(|_| {
            TileUse(loom::cell::UnsafeCell::new(0))
        }));
        let held_once = Arc::new(AtomicU32::new(0));
        let groups: [(StdArc<[u32]>, bool); 2] = [
            (StdArc::from(vec![0u32, 1]), true),
            (StdArc::from(vec![1u32, 2]), true),
        ];
        let shared_group: StdArc<[u32]> = StdArc::from(vec![1u32]);
        let mut handles = Vec::new();
        for (tiles, exclusive) in groups {
            let (r, tiles_in_use, held_once) = (r.clone(), tiles_in_use.clone(), held_once.clone());
            handles.push(thread::spawn(move || {
                if let Ok(held) = r.try_reserve(&tiles, exclusive) {
                    held_once.fetch_add(1, Ordering::Relaxed);
                    for &t in tiles.iter() {
                        tiles_in_use[t as usize].write();
                    }
                    r.release(held);
                }
            }));
        }
        if let Ok(held) = r.try_reserve(&shared_group, false) {
            held_once.fetch_add(1, Ordering::Relaxed);
            tiles_in_use[1].read();
            r.release(held);
        }
        for h in handles {
            h.join().unwrap();
        }
        // Someone always gets in: a refusal needs a holder (a set that refused everyone would
        // pass the checks above).
        assert!(
            held_once.load(Ordering::Relaxed) >= 1,
            "no placer ever held"
        );
        assert!(
            (0..3).all(|t| r.word(t) == Some(0)),
            "everything given back"
        );
    });
}

#[test]
fn shared_holders_of_a_region_are_never_more_than_its_slots() {
    // Three shared placers of one region with two slots (`SHARED_MAX`): two spawned, the model's
    // own thread the third. Each takes its slot in a weak compare-and-swap loop, which loom may
    // fail at any try: unbounded, the interleavings never end; two preemptions reach every
    // order of three takes and gives back.
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let r = Arc::new(Reservations::new(1));
        let holders = Arc::new(AtomicU32::new(0));
        let place = |r: &Reservations, holders: &AtomicU32| -> u32 {
            let tiles: StdArc<[u32]> = StdArc::from(vec![0u32]);
            let Ok(held) = r.try_reserve(&tiles, false) else {
                return 0;
            };
            let before = holders.fetch_add(1, Ordering::SeqCst);
            assert!(
                before < komorebi::dispatch::reserve::SHARED_MAX,
                "{} shared holders",
                before + 1
            );
            holders.fetch_sub(1, Ordering::SeqCst);
            r.release(held);
            1
        };
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (r, holders) = (r.clone(), holders.clone());
                thread::spawn(move || place(&r, &holders))
            })
            .collect();
        let mut held = place(&r, &holders);
        held += handles.into_iter().map(|h| h.join().unwrap()).sum::<u32>();
        // At least as many as the slots get in: a refusal needs the slots full.
        assert!(
            held >= komorebi::dispatch::reserve::SHARED_MAX.min(3),
            "{held} held"
        );
        assert_eq!(r.word(0), Some(0));
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

#[test]
fn a_placer_blocked_for_good_never_holds_the_regions_it_shares_with_another() {
    loom::model(|| {
        // Region 1 is held for good (a command running late on a card).
        let r = Arc::new(Reservations::new(2));
        let late = r.try_reserve(&[1], true).expect("free");
        std::mem::forget(late);
        let blocked = {
            let r = r.clone();
            thread::spawn(move || {
                let regions: StdArc<[u32]> = StdArc::from(vec![0u32, 1]);
                assert_eq!(r.try_reserve(&regions, true).err(), Some(Blocked::Refused));
            })
        };
        // A placer of region 0 alone is never refused by the other's attempt.
        let held = r
            .try_reserve(&[0], true)
            .expect("region 0 is free: the blocked placer never takes it, even for a moment");
        r.release(held);
        blocked.join().unwrap();
    });
}

#[test]
fn a_placer_refused_by_a_rolled_back_reservation_is_woken_to_look_again() {
    loom::model(|| {
        let r = Arc::new(Reservations::new(2));
        let sleep = Arc::new(Sleep::new());
        // Takes region 1 and keeps it: a placer of 0 and 1 that looked before may have taken 0
        // and must give it back.
        let keeper = {
            let r = r.clone();
            thread::spawn(move || {
                if let Ok(held) = r.try_reserve(&[1], true) {
                    std::mem::forget(held);
                }
            })
        };
        // The placer of 0 and 1, as a worker does: a command it posts and that completes releases
        // and wakes; a rollback wakes too (the fix); a plain refusal held nothing.
        let both = {
            let (r, sleep) = (r.clone(), sleep.clone());
            thread::spawn(move || {
                let regions: StdArc<[u32]> = StdArc::from(vec![0u32, 1]);
                match r.try_reserve(&regions, true) {
                    Ok(held) => {
                        r.release(held);
                        sleep.notify();
                    }
                    // The worker's rule (`Worker::fill`).
                    Err(blocked) if blocked.wakes_sleepers() => sleep.notify(),
                    Err(_) => {}
                }
            })
        };
        // A placer of region 0 alone parks when refused; it must always get region 0 in the
        // end (a wake-up lost here leaves it asleep for good, which loom reports).
        loop {
            let ticket = sleep.prepare();
            if let Ok(held) = r.try_reserve(&[0], true) {
                sleep.cancel(ticket);
                r.release(held);
                break;
            }
            sleep.sleep(ticket);
        }
        keeper.join().unwrap();
        both.join().unwrap();
    });
}

/// A drive that checks no other drive runs at the same time, and finds the devices idle.
fn lone_idle_drive(driving: &AtomicU32) -> Drive {
    assert_eq!(
        driving.fetch_add(1, Ordering::SeqCst),
        0,
        "two drivers at once"
    );
    thread::yield_now();
    driving.fetch_sub(1, Ordering::SeqCst);
    Drive::Idle
}

#[test]
fn of_two_idle_workers_one_drives_and_wakes_the_other() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        let driving = Arc::new(AtomicU32::new(0));
        let other = {
            let (idle, driving) = (idle.clone(), driving.clone());
            thread::spawn(move || idle.idle(1, || false, || lone_idle_drive(&driving)))
        };
        let mine = idle.idle(0, || false, || lone_idle_drive(&driving));
        // The other never sleeps for good (loom reports a thread left blocked).
        let theirs = other.join().unwrap();
        let mut ends = [mine, theirs];
        ends.sort_by_key(|e| matches!(e, Idled::Slept));
        assert_eq!(ends, [Idled::Drove(Drive::Idle), Idled::Slept]);
        // Both looked at the same activity, nothing happened since, and the drive found the
        // devices idle: one stall.
        assert_eq!(idle.generation(), 1);
        assert_eq!(idle.sleep().sleepers(), 0);
    });
}

#[test]
fn a_worker_woken_during_a_drive_never_drives_at_the_same_time() {
    // Worker 1's loop goes on while the run does: unbounded, the interleavings of its rounds
    // never end; two preemptions reach a wake in the middle of the drive and its second idle.
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let idle = Arc::new(Idle::new(2));
        let driving = Arc::new(AtomicU32::new(0));
        let done = Arc::new(AtomicBool::new(false));
        // Worker 1 goes idle again each time it is woken and finds nothing, until the run ends.
        let other = {
            let (idle, driving, done) = (idle.clone(), driving.clone(), done.clone());
            thread::spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    idle.idle(
                        1,
                        || done.load(Ordering::SeqCst),
                        || lone_idle_drive(&driving),
                    );
                }
            })
        };
        // Worker 0's drive publishes something (a device completion's notify), which wakes
        // worker 1 while the drive goes on: worker 1 finds nothing and is then the last active
        // worker, but must not drive while worker 0 does. Then the run ends, as a worker ends it
        // (everything done: every sleeper woken).
        idle.idle(
            0,
            || false,
            || {
                idle.sleep().notify();
                lone_idle_drive(&driving)
            },
        );
        done.store(true, Ordering::SeqCst);
        idle.sleep().wake_all();
        other.join().unwrap();
    });
}

#[test]
fn work_an_active_worker_makes_wakes_an_idle_one() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        let work = Arc::new(AtomicBool::new(false));
        // Worker 1 stays active: it makes work and counts it, as a pass does.
        let maker = {
            let (idle, work) = (idle.clone(), work.clone());
            thread::spawn(move || {
                work.store(true, Ordering::SeqCst);
                idle.bump(1);
                idle.sleep().notify();
            })
        };
        // Worker 0 goes idle until its look finds the work.
        loop {
            let idled = idle.idle(
                0,
                || work.load(Ordering::SeqCst),
                || panic!("worker 1 is active: worker 0 is never the last"),
            );
            if idled == Idled::Found {
                break;
            }
        }
        maker.join().unwrap();
        assert_eq!(idle.generation(), 0);
    });
}

#[test]
fn no_stall_is_declared_while_work_a_worker_missed_is_left() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        let work = Arc::new(AtomicBool::new(false));
        let driving = Arc::new(AtomicU32::new(0));
        // Worker 1 makes work only worker 0 can take (a command for worker 0's group, say),
        // counts it, then finds nothing more for itself.
        let maker = {
            let (idle, work, driving) = (idle.clone(), work.clone(), driving.clone());
            thread::spawn(move || {
                work.store(true, Ordering::SeqCst);
                idle.bump(1);
                idle.idle(1, || false, || lone_idle_drive(&driving))
            })
        };
        // Worker 0 takes the work when a look finds it; a look that began before the work was
        // made misses it, and then the run must not call itself stalled with the work left.
        loop {
            let idled = idle.idle(
                0,
                || work.load(Ordering::SeqCst),
                || lone_idle_drive(&driving),
            );
            if idled != Idled::Found {
                break;
            }
            work.store(false, Ordering::SeqCst);
            idle.bump(0);
        }
        maker.join().unwrap();
        assert!(
            idle.generation() == 0 || !work.load(Ordering::SeqCst),
            "a stall declared with work left that worker 0 never saw"
        );
    });
}
