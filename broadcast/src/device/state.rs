//! The state of one core's part in one broadcast ([`Broadcast`]), its accessors, and the
//! give-up bookkeeping every call shares: `admit` (may this call run now), `settle` (record a
//! call's failure once), `give_up_with`, and the receiver's marker state lent to a wait.

use komorebi_hal::L1Addr;
use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;

use super::cause::{CallCause, Cause, Fail, GiveUp, ctrl_fail};
use super::part::Part;
use super::pump::{Popped, Pump};
use super::wait::record_first;
use crate::area::{self, GiveUpRecord, Where};
use crate::args::BroadcastArgs;

/// What an admitted call needs of the words ([`Broadcast::admit`]).
#[derive(Copy, Clone, Debug)]
pub(super) struct Admitted {
    /// Slots in the buffer.
    pub window: u8,
    /// Pages a block.
    pub pages: u16,
}

/// One core's part in one broadcast of one command. See the module docs.
#[derive(Debug)]
pub struct Broadcast<C> {
    pub(super) cb: C,
    pub(super) args: Option<BroadcastArgs>,
    pub(super) id: u8,
    pub(super) sequence: u32,
    pub(super) part: Part,
    pub(super) slot_bytes: u32,
    pub(super) valid_src: L1Addr,
    pub(super) marker_src: L1Addr,
    /// Blocks cast (sender) or handed to compute (receiver) so far.
    pub(super) blocks: u32,
    /// Blocks reserved so far (sender): `blocks..reserved` are reserved and not cast yet.
    pub(super) reserved: u32,
    pub(super) popped: Popped,
    pub(super) marker_sent: Option<u16>,
    /// Sender: the least DONE-BY count every receiver was last seen at (see `receivers_done`).
    pub(super) done_known: u32,
    /// Sender: blocks whose data multicast is known to have left (it was issued before a
    /// `writes_sent` that said true), so that their slots may be read into again (`reserve`).
    pub(super) blocks_sent: u32,
    pub(super) wait_cycles: u64,
    pub(super) failed: Option<GiveUp>,
    pub(super) finished: bool,
    /// Sender: the slot of the block reserved last (`read` reads into it alone).
    pub(super) reserved_slot: L1Addr,
    /// Sender: a block's reads fit a read tag's count (`ReadTag::fits`), so that `cast` may
    /// wait for them by their tag; made once, at setup.
    pub(super) tags_fit: bool,
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
    /// True when the words fit this command, core and buffer.
    pub fn ok(&self) -> bool {
        self.args.is_some()
            && !matches!(
                self.failed,
                Some(GiveUp {
                    place: Where::BroadcastBegin,
                    ..
                })
            )
    }

    /// True when this core takes part in the broadcast.
    pub fn included(&self) -> bool {
        self.ok() && !matches!(self.part, Part::Excluded)
    }

    /// True when this core is the broadcast's sender.
    pub fn sender(&self) -> bool {
        self.ok() && matches!(self.part, Part::Sender { .. })
    }

    /// The decoded words, if they were valid.
    pub fn args(&self) -> Option<&BroadcastArgs> {
        self.args.as_ref()
    }

    /// The first give-up of this broadcast, if any.
    pub fn give_up(&self) -> Option<GiveUp> {
        self.failed
    }

    /// Cycles spent waiting so far.
    pub fn wait_cycles(&self) -> u64 {
        self.wait_cycles
    }

    /// Blocks cast (sender) or handed to compute (receiver) so far.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// The broadcast buffer.
    pub fn buffer(&mut self) -> &mut C {
        &mut self.cb
    }

    /// Records a give-up (the first of this command only) and remembers it. Once there is one,
    /// returns it at once: every later call gives up with the first give-up (module docs). The
    /// calls use it for their own give-ups; a kernel for steps it makes itself around them (a
    /// sender's DRAM read refused, say), so the first give-up of the command is the one kept.
    ///
    /// Not inlined: every call's failure comes here, and a copy at each would be paid for in the
    /// firmware's code space on every path that never fails.
    #[inline(never)]
    pub fn give_up_with<K: ControlBlock>(
        &mut self,
        ctrl: &mut K,
        place: Where,
        block: u32,
        cause: Cause,
    ) -> GiveUp {
        if let Some(first) = self.failed {
            return first;
        }
        let give_up = GiveUp {
            place,
            broadcast: self.id,
            block,
            cause,
        };
        self.failed = Some(give_up);
        let record = GiveUpRecord {
            place,
            broadcast: self.id,
            block,
            sequence: self.sequence,
        };
        // Recording is best effort: we are failing already, and a control block that cannot
        // be written has nothing better to tell.
        let _ = record_first(ctrl, self.id, record);
        let _ = self.store_stats(ctrl);
        if place == Where::BroadcastDone
            && cause == Cause::TimedOut
            && matches!(self.part, Part::Sender { .. })
        {
            let _ = ctrl.request_stop();
        }
        give_up
    }

    pub(super) fn store_stats<K: ControlBlock>(&self, ctrl: &mut K) -> Result<(), K::Error> {
        // (An id with no area of its own stores nothing: see `record_first`.)
        if self.id >= area::MAX_BROADCASTS {
            return Ok(());
        }
        let base = area::area(self.id);
        ctrl.store(base + area::STATS_BLOCKS, self.blocks)?;
        ctrl.store(
            base + area::STATS_WAIT_CYCLES,
            self.wait_cycles.min(u32::MAX as u64) as u32,
        )
    }

    /// The outcome of a call: `Ok`, or the recorded give-up.
    pub(super) fn settle<T, K: ControlBlock>(
        &mut self,
        ctrl: &mut K,
        block: u32,
        r: Result<T, Fail>,
    ) -> Result<T, GiveUp> {
        r.map_err(|(place, cause)| self.give_up_with(ctrl, place, block, cause.into()))
    }

    /// Checks a call may go ahead: no earlier give-up, the right role, the next block, and
    /// `block` at most `last`. A command has at most [`MAX_BLOCKS`] blocks, as compute's `end`
    /// and the host's words allow: a per-block call (`reserve`, `cast`, `arrive`) passes its
    /// block with `last` = `MAX_BLOCKS - 1`, `finish` the number of blocks with `MAX_BLOCKS`.
    /// The next block is the next to reserve for `reserve`, the next to cast or hand over for
    /// the others.
    pub(super) fn admit<K: ControlBlock>(
        &self,
        ctrl: &mut K,
        sender: bool,
        block: u32,
        last: u32,
        place: Where,
    ) -> Result<Admitted, Fail> {
        self.admit_next(ctrl, sender, block, self.blocks, last, place)
    }

    /// [`Self::admit`] with the next block given. Returns the two fields every call uses, not
    /// the whole words: a copy of them at every call cost the baby cores some 20 instructions.
    pub(super) fn admit_next<K: ControlBlock>(
        &self,
        ctrl: &mut K,
        sender: bool,
        block: u32,
        next: u32,
        last: u32,
        place: Where,
    ) -> Result<Admitted, Fail> {
        if let Some(g) = self.failed {
            return Err((g.place, CallCause::Earlier));
        }
        let args = self
            .args
            .as_ref()
            .ok_or((Where::BroadcastBegin, CallCause::Misuse))?;
        let role_ok = match self.part {
            Part::Sender { .. } => sender,
            Part::Receiver { .. } => !sender,
            Part::Excluded => false,
        };
        if !role_ok || self.finished || block != next || block > last {
            return Err((place, CallCause::Misuse));
        }
        // "Every call ... checks the tile's stop flag" (the specification): here, once a call,
        // whether or not it then waits, after the checks above (an earlier give-up and these
        // misuses come first; a call's own later checks, such as `cast` before `reserve`,
        // come after it). A wait looks at the flag only while its condition does not hold, so
        // a call whose waits all held at once went on past a stop, and where a stop ended a
        // broadcast depended on how fast the cores ran (decisions D58).
        if ctrl.stop_requested().map_err(|e| (place, ctrl_fail(e)))? {
            return Err((place, CallCause::Stopped));
        }
        Ok(Admitted {
            window: args.window,
            pages: args.pages,
        })
    }

    /// Not inlined: `arrive` and `finish` take it, and a copy in each costs more than the call.
    #[inline(never)]
    pub(super) fn pump_state(&self) -> Pump {
        Pump {
            popped: self.popped,
            sent: self.marker_sent,
            src: self.marker_src,
            src_offset: area::area(self.id) + area::MARKER_SOURCE,
            dst: self.part.done_dst(),
            seq: self.sequence as u16,
        }
    }

    pub(super) fn apply(&mut self, pump: Pump) {
        self.popped = pump.popped;
        self.marker_sent = pump.sent;
    }
}
