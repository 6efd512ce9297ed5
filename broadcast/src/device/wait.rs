//! The waits and control-area records every broadcast call shares.

use komorebi_hal::Pause;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::wait::{WaitError, call_deadline, wait_until_deadline};

use komorebi_hal::noc::NocMulticast;

use super::cause::{CallCause, Fail, ctrl_fail, noc_cause};
use crate::area::{self, GiveUpRecord, Where, marker_count};

/// Waits for `ready` until the call's deadline, adding the cycles waited to `wait_cycles`; a
/// wait that fails fails at `place`.
///
/// The deadline is the call's, one wait limit from its first wait that did not hold at once:
/// `deadline` starts `None` for a call and is set by that wait ([`komorebi_hal::call_deadline`]);
/// the call's later waits end by it too, so the call as a whole ends within one limit. A call
/// whose every wait holds at once reads neither the clock nor the limit (on the baby cores
/// three MMIO loads and two L1 loads: a sender's `reserve` most of the time).
///
/// The condition is a `dyn` closure so that every wait of a broadcast shares one state machine:
/// on the baby cores that is the difference between fitting L1's code space and not. The
/// place is an argument for the same reason: the failure is put together here once, not after
/// each wait.
///
/// The first poll is made here, inlined at each wait: most waits of a protocol call hold at
/// once, and entering the shared wait saves and restores twelve registers (about 40 cycles a
/// wait on the baby cores, decisions D31). A condition that does not hold is polled again at
/// once by the shared wait, which is what a wait's next round would do anyway.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
#[inline(always)]
pub(super) async fn wait_for<K, P>(
    ctrl: &mut K,
    pause: &mut P,
    deadline: &mut Option<u64>,
    wait_cycles: &mut u64,
    place: Where,
    ready: &mut dyn FnMut(&mut K) -> Result<bool, CallCause>,
) -> Result<(), Fail>
where
    K: ControlBlock,
    P: Pause,
{
    match ready(ctrl) {
        Ok(true) => Ok(()),
        Ok(false) => wait_shared(ctrl, pause, deadline, wait_cycles, place, ready).await,
        Err(c) => Err((place, c)),
    }
}

/// [`wait_for`] once its first poll failed: one function for every wait.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn wait_shared<K, P>(
    ctrl: &mut K,
    pause: &mut P,
    deadline: &mut Option<u64>,
    wait_cycles: &mut u64,
    place: Where,
    ready: &mut dyn FnMut(&mut K) -> Result<bool, CallCause>,
) -> Result<(), Fail>
where
    K: ControlBlock,
    P: Pause,
{
    let deadline = match *deadline {
        Some(d) => d,
        None => *deadline.insert(call_deadline(ctrl).map_err(|k| (place, CallCause::Control(k)))?),
    };
    let cause = match wait_until_deadline(ctrl, pause, deadline, ready).await {
        Ok(waited) => {
            *wait_cycles = wait_cycles.saturating_add(waited);
            return Ok(());
        }
        Err(WaitError::TimedOut { waited }) => {
            *wait_cycles = wait_cycles.saturating_add(waited);
            CallCause::TimedOut
        }
        Err(WaitError::Stopped { waited }) => {
            *wait_cycles = wait_cycles.saturating_add(waited);
            CallCause::Stopped
        }
        Err(WaitError::Control(k)) => CallCause::Control(k),
        Err(WaitError::Condition(c)) => c,
    };
    Err((place, cause))
}

// The conditions below are built by named functions, not written as closures in the calls
// that wait: closures are named after the function they are written in, and those of one
// function differ only in the hash the symbol mangling appends, which takes in the absolute path
// of the source tree. The firmware's linker lays functions out in name order, so several such
// closures in one function were laid out in a different order in another checkout, and the
// simulated cores' branch predictor, indexed by address, ran the same code some 0.5% faster or
// slower (decisions D64). `tests/firmware_layout.rs` holds every image to one function a name.

/// Condition: every acknowledged write this core's NoC issued has been acknowledged.
pub(super) fn writes_acked<K, N: NocMulticast>(
    noc: &mut N,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |_| noc.writes_acked().map_err(noc_cause)
}

/// Condition: every write this core's NoC issued has left its source.
pub(super) fn writes_sent<K, N: NocMulticast>(
    noc: &mut N,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |_| noc.writes_sent().map_err(noc_cause)
}

/// Condition: [`receivers_done`] with `needed`.
pub(super) fn all_receivers_done<K: ControlBlock>(
    id: u8,
    seq: u16,
    receivers: u8,
    needed: u32,
    known: &mut u32,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |c| receivers_done(c, id, seq, receivers, needed, known)
}

/// True when every rank 1..=receivers has a DONE word of this command with count >= `needed`.
///
/// `known` is the least count every receiver was last seen at (0 at the command's start): a
/// receiver's count only grows within a command, so a count at or below it holds without a
/// load, and a poll that holds raises it to the least count it read. The sender is the slower
/// side in steady state, so its receivers are often a block ahead and every other cast's wait
/// holds at once (a poll reads a word per receiver: some 30 cycles each on the baby cores).
pub(super) fn receivers_done<K: ControlBlock>(
    ctrl: &mut K,
    id: u8,
    seq: u16,
    receivers: u8,
    needed: u32,
    known: &mut u32,
) -> Result<bool, CallCause> {
    if needed <= *known {
        return Ok(true);
    }
    let mut least = u32::MAX;
    let mut offset = area::done_by(id, 1);
    for _ in 0..receivers {
        let word = ctrl.load(offset).map_err(ctrl_fail)?;
        let count = marker_count(word, seq).map_or(0, u32::from);
        if count < needed {
            return Ok(false);
        }
        least = least.min(count);
        offset += area::SLOT_BYTES;
    }
    *known = least;
    Ok(true)
}

/// Stores `record` unless the area already holds a give-up of the same command. A broadcast id
/// with no area of its own (words naming id 2 or more, refused) records nothing: `area` keeps
/// the id's low bit only, and its record would land in a live broadcast's area.
pub(super) fn record_first<K: ControlBlock>(
    ctrl: &mut K,
    id: u8,
    record: GiveUpRecord,
) -> Result<(), K::Error> {
    if id >= area::MAX_BROADCASTS {
        return Ok(());
    }
    let base = area::area(id);
    let held = [
        ctrl.load(base + area::GIVE_UP_WHERE)?,
        ctrl.load(base + area::GIVE_UP_BLOCK)?,
        ctrl.load(base + area::GIVE_UP_SEQUENCE)?,
    ];
    if let Some(old) = GiveUpRecord::from_words(held) {
        if old.sequence == record.sequence {
            return Ok(());
        }
    }
    let [where_word, block, sequence] = record.words();
    // The where word cleared first and written last: a reader that reads it before and after
    // the block and sequence and finds it the same, and not 0, read one record, not the old
    // one's place with the new one's block (the host reads a running tile's area).
    ctrl.store(base + area::GIVE_UP_WHERE, 0)?;
    ctrl.store(base + area::GIVE_UP_BLOCK, block)?;
    ctrl.store(base + area::GIVE_UP_SEQUENCE, sequence)?;
    ctrl.store(base + area::GIVE_UP_WHERE, where_word)
}
