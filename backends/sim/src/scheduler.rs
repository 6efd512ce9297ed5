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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::packet::{Item, TileIx};
use crate::rng::SplitMix64;
use crate::task::{TaskMeta, TaskState};

/// Times from here on do not fit a [`Queue`] key; they go to its `far` heap.
const FAR: u64 = 1 << 63;

/// The queue of items in `(time, class, seq)` order (earliest first).
///
/// A 4-ary heap of keys packed into one `u128` each (`time`: 63 bits, `class`: 1, `seq`: 64),
/// with the items in a slab beside it: each step of a sift compares one integer (no branch on
/// which field decides, which the CPU cannot predict) and moves 16 bytes of key and 4 of slot
/// number, not an item with its packet. The four children of a node are adjacent, so a sift
/// goes half as deep as in a binary heap. Items at [`FAR`] cycles or later (only a deadline
/// given that far away) wait in a plain heap of full keys, all after every packed one.
///
/// The order is the keys' order, and so the same as any heap's on the same keys: they are
/// distinct, `seq` being a counter (or a 64-bit draw of the adversary: were two draws equal at
/// the same time and class, their order would be the heap's own, as it always was).
#[derive(Debug, Default)]
struct Queue {
    /// The heap: `keys[i]`'s children are `keys[4i + 1 ..= 4i + 4]`.
    keys: Vec<u128>,
    /// The slot of `items` of each key, moved with it.
    slots: Vec<u32>,
    /// `(time, class, seq, slot)` of the items at [`FAR`] or later.
    far: BinaryHeap<Reverse<(u64, u8, u64, u32)>>,
    /// The queued items by slot; `None` in a free slot.
    items: Vec<Option<Item>>,
    /// The free slots of `items`, reused before it grows.
    free: Vec<u32>,
}

impl Queue {
    fn push(&mut self, time: u64, class: u8, seq: u64, item: Item) {
        // The packed key keeps one bit for the class: a larger one would spill into the time.
        debug_assert!(
            class <= 1,
            "event class {class} does not fit the key's one bit"
        );
        let slot = match self.free.pop() {
            Some(slot) => {
                self.items[slot as usize] = Some(item);
                slot
            }
            None => {
                self.items.push(Some(item));
                u32::try_from(self.items.len() - 1).expect("fewer than 2^32 queued items")
            }
        };
        if time >= FAR {
            self.far.push(Reverse((time, class, seq, slot)));
            return;
        }
        let key = (time as u128) << 65 | (class as u128) << 64 | seq as u128;
        // Sift up: move parents down while they come later, then place the key.
        let mut i = self.keys.len();
        self.keys.push(key);
        self.slots.push(slot);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.slots[i] = self.slots[parent];
            i = parent;
        }
        self.keys[i] = key;
        self.slots[i] = slot;
    }

    fn pop(&mut self) -> Option<(u64, Item)> {
        let time_of = |key: u128| (key >> 65) as u64;
        let (time, slot) = match (self.keys.pop(), self.slots.pop()) {
            (Some(last), Some(last_slot)) if self.keys.is_empty() => (time_of(last), last_slot),
            (Some(last), Some(last_slot)) => {
                let top = (time_of(self.keys[0]), self.slots[0]);
                self.sift_down(last, last_slot);
                top
            }
            _ => {
                let Reverse((time, _, _, slot)) = self.far.pop()?;
                (time, slot)
            }
        };
        let item = self.items[slot as usize]
            .take()
            .expect("a queued key's slot holds its item");
        self.free.push(slot);
        Some((time, item))
    }

    /// Places `key` (the last leaf, taken off) from the root down: the earliest child moves up
    /// while it comes before `key`.
    fn sift_down(&mut self, key: u128, slot: u32) {
        let n = self.keys.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let kids = &self.keys[first..(first + 4).min(n)];
            let (mut min, mut min_key) = (0, kids[0]);
            for (c, &k) in kids.iter().enumerate().skip(1) {
                let earlier = k < min_key;
                min = pick_usize(earlier, c, min);
                min_key = pick_u128(earlier, k, min_key);
            }
            if min_key >= key {
                break;
            }
            let min = first + min;
            self.keys[i] = min_key;
            self.slots[i] = self.slots[min];
            i = min;
        }
        self.keys[i] = key;
        self.slots[i] = slot;
    }

    fn peek_time(&self) -> Option<u64> {
        match self.keys.first() {
            Some(&key) => Some((key >> 65) as u64),
            None => self.far.peek().map(|Reverse(e)| e.0),
        }
    }
}

// `if c { a } else { b }` as a mask, without a branch: which child of a node is the earliest is
// a coin toss to the branch predictor, and its misses cost more than this arithmetic.
fn pick_usize(c: bool, a: usize, b: usize) -> usize {
    let mask = (c as usize).wrapping_neg();
    (a & mask) | (b & !mask)
}

fn pick_u128(c: bool, a: u128, b: u128) -> u128 {
    let mask = (c as u128).wrapping_neg();
    (a & mask) | (b & !mask)
}

/// The event queue, the tasks, and the adversary's generator.
#[derive(Debug)]
pub(crate) struct Scheduler {
    queue: Queue,
    seq: u64,
    /// Break ties and delay deliveries at random.
    adversarial: bool,
    rng: SplitMix64,
    pub tasks: Vec<TaskMeta>,
    /// `(cycle, task)` of stalls still to come.
    stall_times: Vec<(u64, usize)>,
}

impl Scheduler {
    /// The waits still open at `now`, `(task, since)`: tasks parked before `now` until a
    /// deadline still to come, or none (a firmware core parks only until its own clock).
    pub(crate) fn open_waits(&self, now: u64) -> Vec<(usize, u64)> {
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                matches!(t.state, TaskState::Parked { .. }) && t.parked_at < now && t.deadline > now
            })
            .map(|(task, t)| (task, t.parked_at))
            .collect()
    }

    /// An empty queue; `rng` draws the adversary's choices when `adversarial`.
    pub(crate) fn new(adversarial: bool, rng: SplitMix64) -> Self {
        Self {
            queue: Queue::default(),
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
        self.queue.push(time, class, seq, item);
    }

    /// The earliest item, after marking the tasks whose stall time has come by its time.
    pub(crate) fn pop(&mut self) -> Option<(u64, Item)> {
        let (time, item) = self.queue.pop()?;
        if !self.stall_times.is_empty() {
            self.apply_stall_times(time);
        }
        Some((time, item))
    }

    /// The time of the earliest item.
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.queue.peek_time()
    }

    /// The adversary's extra delay for one delivery: `0..=max` at random, 0 when it is off.
    pub(crate) fn jitter(&mut self, max: u64) -> u64 {
        if self.adversarial {
            self.rng.up_to(max)
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

    /// Wakes every parked (not sleeping) task of `waiters` at `time` or its own clock, and
    /// empties `waiters` (keeping its buffer for the tile's next waiters).
    pub(crate) fn wake(&mut self, waiters: &mut Vec<usize>, time: u64) {
        for task in waiters.drain(..) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes and pops interleaved against a sorted model: the queue gives `(time, class, seq)`
    /// order, across the packed keys and the `far` heap alike.
    #[test]
    fn the_queue_pops_in_time_class_seq_order_near_and_far() {
        let mut rng = SplitMix64::new(7);
        let mut q = Queue::default();
        let mut model: Vec<(u64, u8, u64, usize)> = Vec::new();
        let times = [0, 1, 5, FAR - 1, FAR, FAR + 3, u64::MAX - 1];
        for n in 0..5000usize {
            let time = if rng.below(4) == 0 {
                times[rng.below(times.len() as u64) as usize]
            } else {
                rng.below(64)
            };
            let (class, seq) = (rng.below(2) as u8, rng.next_u64());
            q.push(time, class, seq, Item::Deadline { task: n });
            model.push((time, class, seq, n));
            if rng.below(3) == 0 {
                model.sort_unstable();
                let (t, _, _, task) = model.remove(0);
                assert_eq!(
                    q.peek_time(),
                    Some(t),
                    "peek before pop {n} gives the earliest time"
                );
                match q.pop() {
                    Some((time, Item::Deadline { task: got })) => {
                        assert_eq!((time, got), (t, task))
                    }
                    other => panic!("popped {other:?}, expected task {task} at {t}"),
                }
            }
        }
        model.sort_unstable();
        for (t, _, _, task) in model {
            match q.pop() {
                Some((time, Item::Deadline { task: got })) => assert_eq!((time, got), (t, task)),
                other => panic!("popped {other:?}, expected task {task} at {t}"),
            }
        }
        assert!(q.pop().is_none() && q.peek_time().is_none());
    }
}
