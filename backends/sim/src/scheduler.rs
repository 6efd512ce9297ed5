//! The discrete-event core: the event queue in virtual time and the kernel tasks' scheduling
//! (parking, waking, deadlines, stalls, clocks).
//!
//! Items are ordered by `(time, class, seq)`: NoC events before kernel wake-ups at the same
//! cycle (so a kernel woken at `t` sees what landed at `t`), and `seq` in push order, or drawn
//! from the seeded [`SplitMix64`] when the adversary is on (a seeded schedule). The same
//! generator draws the adversary's delivery delays ([`Scheduler::jitter`]), so every random
//! choice of a run comes from one stream in one order.
//!
//! Imports only leaf modules (`packet`, `task`, `rng`). Which tile a task waits on is the
//! world's business: [`Scheduler::park`] says whether to register the task as a waiter, and
//! [`Scheduler::wake`] takes the waiters of a tile that changed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::packet::{Item, TileIx};
use crate::rng::SplitMix64;
use crate::task::{TaskMeta, TaskState};

#[derive(Debug)]
struct Entry {
    time: u64,
    class: u8,
    seq: u64,
    item: Item,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.class, self.seq) == (other.time, other.class, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.class, other.seq).cmp(&(self.time, self.class, self.seq))
    }
}

/// The event queue, the tasks, and the adversary's generator.
#[derive(Debug)]
pub(crate) struct Scheduler {
    queue: BinaryHeap<Entry>,
    seq: u64,
    /// Break ties and delay deliveries at random.
    adversarial: bool,
    rng: SplitMix64,
    pub tasks: Vec<TaskMeta>,
    /// `(cycle, task)` of stalls still to come.
    stall_times: Vec<(u64, usize)>,
}

impl Scheduler {
    /// An empty queue; `rng` draws the adversary's choices when `adversarial`.
    pub(crate) fn new(adversarial: bool, rng: SplitMix64) -> Self {
        Self {
            queue: BinaryHeap::new(),
            seq: 0,
            adversarial,
            rng,
            tasks: Vec::new(),
            stall_times: Vec::new(),
        }
    }

    /// Queues `item` at `time`.
    pub(crate) fn push(&mut self, time: u64, item: Item) {
        let class = u8::from(matches!(item, Item::Wake { .. } | Item::Deadline { .. }));
        let seq = if self.adversarial {
            self.rng.next_u64()
        } else {
            self.seq
        };
        self.seq += 1;
        self.queue.push(Entry {
            time,
            class,
            seq,
            item,
        });
    }

    /// The earliest item, after marking the tasks whose stall time has come by its time.
    pub(crate) fn pop(&mut self) -> Option<(u64, Item)> {
        let e = self.queue.pop()?;
        if !self.stall_times.is_empty() {
            self.apply_stall_times(e.time);
        }
        Some((e.time, e.item))
    }

    /// The time of the earliest item.
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.queue.peek().map(|e| e.time)
    }

    /// The adversary's extra delay for one delivery: `0..=max` at random, 0 when it is off.
    pub(crate) fn jitter(&mut self, max: u64) -> u64 {
        if self.adversarial {
            self.rng.below(max + 1)
        } else {
            0
        }
    }

    /// Parks `task` until a change to its tile (unless `sleeping`) or `deadline`. Returns the
    /// new epoch, and the task's tile when the caller must register it as a waiter there.
    ///
    /// A task keeps at most one `Deadline` entry in the queue: a wait that ends early leaves
    /// its entry, and the next wait reuses it if it is not later than the new deadline (the
    /// entry then wakes the task early, which a wait allows, or is re-armed for the later
    /// deadline). So the queue does not fill up with the deadlines of waits long over.
    pub(crate) fn park(
        &mut self,
        task: usize,
        deadline: u64,
        sleeping: bool,
    ) -> (u64, Option<TileIx>) {
        let t = &mut self.tasks[task];
        t.epoch += 1;
        t.state = TaskState::Parked {
            woken: false,
            sleeping,
        };
        t.parked_at = t.local;
        let at = deadline.max(t.local);
        t.deadline = if deadline == u64::MAX { u64::MAX } else { at };
        let (epoch, tile) = (t.epoch, t.tile);
        if deadline != u64::MAX && t.deadline_entry.is_none_or(|e| e > at) {
            t.deadline_entry = Some(at);
            self.push(at, Item::Deadline { task });
        }
        (epoch, (!sleeping).then_some(tile))
    }

    /// A `Deadline` entry of `task` came at `time`: the wake-up to run, if any.
    pub(crate) fn deadline_due(&mut self, task: usize, time: u64) -> Option<u64> {
        let t = &mut self.tasks[task];
        if t.deadline_entry != Some(time) {
            return None;
        }
        t.deadline_entry = None;
        if !matches!(t.state, TaskState::Parked { woken: false, .. }) || t.deadline == u64::MAX {
            return None;
        }
        if t.deadline <= time {
            return Some(t.epoch);
        }
        let at = t.deadline;
        t.deadline_entry = Some(at);
        self.push(at, Item::Deadline { task });
        None
    }

    /// Wakes every parked (not sleeping) task of `waiters` at `time` or its own clock.
    pub(crate) fn wake(&mut self, waiters: Vec<usize>, time: u64) {
        for task in waiters {
            let t = &mut self.tasks[task];
            if let TaskState::Parked {
                woken: false,
                sleeping: false,
            } = t.state
            {
                t.state = TaskState::Parked {
                    woken: true,
                    sleeping: false,
                };
                let (at, epoch) = (time.max(t.local), t.epoch);
                self.push(at, Item::Wake { task, epoch });
            }
        }
    }

    /// Stalls `task` from cycle `at` on (at once if `at` has passed `now`).
    pub(crate) fn stall_at(&mut self, task: usize, at: u64, now: u64) {
        if at <= now.max(self.tasks[task].local) {
            self.tasks[task].stalled = true;
        } else {
            self.stall_times.push((at, task));
        }
    }

    /// Marks the tasks whose stall time has come by `time`.
    fn apply_stall_times(&mut self, time: u64) {
        let tasks = &mut self.tasks;
        self.stall_times.retain(|&(at, task)| {
            if at <= time {
                tasks[task].stalled = true;
                false
            } else {
                true
            }
        });
    }

    /// Adds `cycles` to a task's clock (brought up to `now` first) and returns the new time.
    pub(crate) fn charge(&mut self, task: usize, cycles: u64, now: u64) -> u64 {
        let t = &mut self.tasks[task];
        t.local = t.local.max(now) + cycles;
        t.local
    }

    /// Whether a fault stopped `task`.
    pub(crate) fn stalled(&self, task: usize) -> bool {
        self.tasks[task].stalled
    }
}
