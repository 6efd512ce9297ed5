//! One scheduling slot's mailbox: how a command's outcome gets from the device side to the host
//! worker that owns the slot.
//!
//! The state is one word, `epoch << 3 | state`. The worker arms the mailbox for epoch `e` before
//! it posts the command (state `POSTED`); the device side publishes what became of command `e`:
//! its report ([`Published::Reported`]), a report at the deadline with cores still busy
//! ([`Published::Overdue`]), the late completion of such a command ([`Published::Quiet`]), or a
//! refusal ([`Published::Refused`]). A publication names its epoch and is taken only as a legal
//! step from the current state of that epoch; any other (a stale epoch, a duplicate, a step
//! backwards) is dropped and counted, so a late completion can never be read as the outcome of
//! a newer command in the same slot. The worker re-arms the slot only once the last command's
//! state is final (`REPORTED`, `QUIET` or `REFUSED`); until then it is held, and so are its
//! tiles.
//!
//! Orderings: the publisher writes the payload, then the state word with `Release` while it
//! holds the payload's lock; the worker reads the state with `Acquire` and then takes the
//! payload. The loom tests in `tests/loom_dispatch.rs` run a device thread completing late
//! against a worker that reuses the slot.

use super::sync::{AtomicU64, Mutex, Ordering, lock};
use crate::host::session::{Report, SessionError};

const FREE: u64 = 0;
const POSTED: u64 = 1;
const REPORTED: u64 = 2;
const OVERDUE: u64 = 3;
const QUIET: u64 = 4;
const REFUSED: u64 = 5;
const STATE_BITS: u32 = 3;

/// What the device side publishes about one command.
#[derive(Debug)]
pub enum Published {
    /// Every core reported: the report, final.
    Reported(Report),
    /// The deadline passed with cores still busy: the report as it stands (its `unreported`
    /// cores and every core's first give-up). A [`Quiet`](Published::Quiet) follows once they
    /// report.
    Overdue(Report),
    /// The cores of an overdue command have all reported since: its tiles may be used again.
    Quiet,
    /// The device refused to take the command.
    Refused(SessionError),
}

/// What a worker sees when it polls its slot.
#[derive(Debug, PartialEq, Eq)]
pub enum Polled {
    /// Nothing new.
    Pending,
    /// The final report.
    Reported(Report),
    /// The deadline's report; the slot stays held until [`Polled::Quiet`].
    Overdue(Report),
    /// The overdue command's cores have reported.
    Quiet,
    /// The device refused the command.
    Refused(SessionError),
}

/// A slot's mailbox.
#[derive(Debug, Default)]
pub struct Mailbox {
    word: AtomicU64,
    payload: Mutex<Option<Published>>,
    dropped: AtomicU64,
}

fn pack(epoch: u64, state: u64) -> u64 {
    epoch << STATE_BITS | state
}

fn unpack(word: u64) -> (u64, u64) {
    (word >> STATE_BITS, word & ((1 << STATE_BITS) - 1))
}

impl Mailbox {
    /// An empty mailbox (epoch 0, free).
    pub fn new() -> Self {
        Self::default()
    }

    /// The largest epoch a mailbox holds: the word keeps the state in its low bits.
    pub const MAX_EPOCH: u64 = u64::MAX >> STATE_BITS;

    /// Arms the mailbox for command `epoch` (which must be newer than any before, and at most
    /// [`Self::MAX_EPOCH`]); `false`, and nothing changed, if the last command's state is not
    /// final yet or `epoch` is past the largest (its top bits would be lost).
    pub fn arm(&self, epoch: u64) -> bool {
        if epoch > Self::MAX_EPOCH {
            return false;
        }
        let _payload = lock(&self.payload);
        let (last, state) = unpack(self.word.load(Ordering::Acquire));
        if epoch <= last || !matches!(state, FREE | REPORTED | QUIET | REFUSED) {
            return false;
        }
        self.word.store(pack(epoch, POSTED), Ordering::Release);
        true
    }

    /// Settles command `epoch`, armed but not posted (the target's `post` failed: nothing
    /// will be published for it), so that the slot can be armed again; `false`, and nothing
    /// changed, if `epoch` is not the armed command or something was published for it.
    pub fn withdraw(&self, epoch: u64) -> bool {
        let _payload = lock(&self.payload);
        let (current, state) = unpack(self.word.load(Ordering::Acquire));
        if current != epoch || state != POSTED {
            return false;
        }
        self.word.store(pack(epoch, REFUSED), Ordering::Release);
        true
    }

    /// Publishes `what` for command `epoch`; `false` (and counted as dropped) when it is not a
    /// legal next step of that command: a stale epoch, a duplicate, or out of order.
    pub fn publish(&self, epoch: u64, what: Published) -> bool {
        let mut payload = lock(&self.payload);
        let (current, state) = unpack(self.word.load(Ordering::Acquire));
        let next = match (&what, state) {
            (Published::Reported(_), POSTED) => REPORTED,
            (Published::Overdue(_), POSTED) => OVERDUE,
            (Published::Refused(_), POSTED) => REFUSED,
            (Published::Quiet, OVERDUE) => QUIET,
            _ => 0,
        };
        if current != epoch || next == 0 {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        // A quiet keeps an overdue report the worker has not taken yet: it sees both.
        if !matches!(what, Published::Quiet) {
            *payload = Some(what);
        }
        self.word.store(pack(epoch, next), Ordering::Release);
        true
    }

    /// What is new for command `epoch` since the worker's last poll: a report or a refusal is
    /// handed out once; `Quiet` is seen until the mailbox is armed again.
    pub fn poll(&self, epoch: u64) -> Polled {
        let (current, state) = unpack(self.word.load(Ordering::Acquire));
        if current != epoch || state == POSTED {
            return Polled::Pending;
        }
        let taken = lock(&self.payload).take();
        match (state, taken) {
            (REPORTED, Some(Published::Reported(r))) => Polled::Reported(r),
            (OVERDUE | QUIET, Some(Published::Overdue(r))) => Polled::Overdue(r),
            (REFUSED, Some(Published::Refused(e))) => Polled::Refused(e),
            (QUIET, _) => Polled::Quiet,
            // Already taken: nothing new until the next step.
            _ => Polled::Pending,
        }
    }

    /// The epoch and whether its state is final (the slot may be armed again).
    pub fn settled(&self) -> (u64, bool) {
        let (epoch, state) = unpack(self.word.load(Ordering::Acquire));
        (epoch, matches!(state, FREE | REPORTED | QUIET | REFUSED))
    }

    /// Publications dropped as stale or out of order.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
