//! Device side of the broadcast: what the reader (NoC0) or writer (NoC1) kernel of each core of
//! a broadcast calls, generic over the HAL.
//!
//! ```text
//! let mut b = Broadcast::new(&mut dm, cb, &context, program_words, first_word);
//! if !b.ok() { return; }                       // bad words: broadcast_begin recorded
//! if b.included() {
//!     for block in 0..blocks {
//!         if b.sender() {
//!             let slot = b.reserve(&mut dm, block).await?;   // slot block % window
//!             // read the block's pages from DRAM into `slot` with dm.noc.read(..)
//!             b.cast(&mut dm, block).await?;    // reads landed, receivers done with
//!                                               // block - window, multicast, VALID, push
//!         } else {
//!             b.arrive(&mut dm, block).await?;  // VALID >= block + 1, push
//!         }
//!     }
//!     b.finish(&mut dm).await?;                 // compute popped all, padding, last markers
//! }
//! ```
//!
//! # Reading ahead
//!
//! A sender may reserve blocks ahead of the one it casts next: up to `window - 1` of them,
//! in order, each once its own compute popped the block that was in its slot. It reads each
//! reserved block's pages with [`read_tag`](Broadcast::read_tag) (`NocMulticast::read_tagged`),
//! so `cast` waits for that block's reads only, while the reads of later blocks are still in
//! flight:
//!
//! ```text
//! for block in 0..blocks {
//!     while reserved < blocks.min(block + window)
//!         && (reserved == block || b.reserve_ready(reserved)?) {
//!         let slot = b.reserve(&mut dm, reserved).await?;
//!         // read block `reserved`'s pages into `slot` with read_tagged(.., b.read_tag(reserved))
//!         reserved += 1;
//!     }
//!     b.cast(&mut dm, block).await?;
//! }
//! ```
//!
//! Reading ahead changes no rule: a slot is still written on the receivers only after every
//! receiver's DONE says its block left, and on the sender only after its own compute popped it
//! (and after the multicast that sent its previous block left, which `cast` waits for before
//! it pushes). When no block beyond `block` is reserved, `cast` waits for every read, tagged or
//! not, so a sender that never reads ahead may read with plain `read`.
//!
//! # What it guarantees
//!
//! * The sender multicasts block `b` into slot `b % window` of every receiver only when every
//!   receiver's DONE marker of this command says its compute popped block `b - window`; its own
//!   compute gets every block through its own buffer.
//! * A receiver hands block `b` to its compute only when its VALID word of this command says at
//!   least `b + 1` blocks were cast. VALID and data travel on the same NoC, to the same
//!   rectangle, ordered, so the data is there before the VALID that announces it.
//! * Receivers send their DONE markers from inside `arrive` (also while waiting) and `finish`,
//!   from their marker-source slot, with an ordinary NoC write (never an inline write: broken
//!   into L1 on Blackhole), and change the source only once `writes_sent` says the previous one
//!   left.
//! * `finish` returns only when this core's compute popped every block, the buffer is padded to
//!   whole windows (so the next command starts at slot 0 everywhere), and this core's last
//!   transfers are acknowledged: the sender's multicasts, a receiver's final marker. The sender
//!   also waits for every receiver's final marker, so when any core of a broadcast reports, no
//!   word of this command is still in flight towards it; it then clears its DONE-BY table and a
//!   receiver its VALID word.
//! * Every call gives up within one run's wait limit, or on the tile's stop flag: it takes its
//!   deadline (now + the limit) once, at its start, and every wait inside it ends by that
//!   deadline, not one limit after the wait's own start. The slack past the deadline is bounded
//!   and does not grow with the limit: one poll of the condition of each wait still to come (a
//!   wait past its deadline polls once, so a condition that holds is taken; at most five waits
//!   in a call) and the call's steps that do not wait (control-block stores, at most 17 in the
//!   sender's `finish`; one buffer push; the give-up record). A call that fails
//!   records the first give-up of this command in the broadcast's area (where, broadcast, block,
//!   sequence), and every later call returns the same [`GiveUp`] at once. A sender whose wait
//!   for markers or for its own NoC barriers times out (`broadcast_done`) also sets its tile's
//!   stop flag.
//!
//! # The handshake peer
//!
//! [`Broadcast::handshake`] (with `reserve`, `finish`) runs a tt-metal-style handshake over the
//! same words and buffer, with the guarantees above (`handshake`'s docs say the rest).
//!
//! # Where each part lives
//!
//! This file holds the core's state ([`Broadcast`]), its accessors and the give-up bookkeeping
//! every call shares (`admit`, `settle`, `give_up_with`). The calls, by what they do: `setup`
//! (`new`, `refuse`: the words' checks), `sender` (`reserve`, `reserve_ready`, `read_tag`,
//! `cast`), `receiver` (`arrive`), `finish`, `handshake` (the peer's call and its waits); the
//! pieces they share: `pump` (a receiver's DONE markers), `wait` (the deadline and the one wait
//! loop), `cause` (why a call gave up), `context`, `part` (sender, receiver or excluded).

use komorebi_hal::L1Addr;
use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;

mod cause;
mod context;
mod finish;
mod handshake;
mod part;
mod pump;
mod receiver;
mod sender;
mod setup;
mod wait;

pub use cause::{Cause, GiveUp};
pub use context::{Context, refuse_without_buffer};

use cause::Fail;
use part::Part;
use pump::{Popped, Pump};
use wait::record_first;

use crate::area::{self, GiveUpRecord, Where};
use crate::args::BroadcastArgs;

/// One core's part in one broadcast of one command. See the module docs.
#[derive(Debug)]
pub struct Broadcast<C> {
    cb: C,
    args: Option<BroadcastArgs>,
    id: u8,
    sequence: u32,
    part: Part,
    slot_bytes: u32,
    valid_src: L1Addr,
    marker_src: L1Addr,
    /// Blocks cast (sender) or handed to compute (receiver) so far.
    blocks: u32,
    /// Blocks reserved so far (sender): `blocks..reserved` are reserved and not cast yet.
    reserved: u32,
    popped: Popped,
    marker_sent: Option<u16>,
    wait_cycles: u64,
    failed: Option<GiveUp>,
    finished: bool,
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

    fn store_stats<K: ControlBlock>(&self, ctrl: &mut K) -> Result<(), K::Error> {
        let base = area::area(self.id);
        ctrl.store(base + area::STATS_BLOCKS, self.blocks)?;
        ctrl.store(
            base + area::STATS_WAIT_CYCLES,
            self.wait_cycles.min(u32::MAX as u64) as u32,
        )
    }

    /// The outcome of a call: `Ok`, or the recorded give-up.
    fn settle<T, K: ControlBlock>(
        &mut self,
        ctrl: &mut K,
        block: u32,
        r: Result<T, Fail>,
    ) -> Result<T, GiveUp> {
        r.map_err(|(place, cause)| self.give_up_with(ctrl, place, block, cause))
    }

    /// Checks a call may go ahead: no earlier give-up, the right role, the next block, and
    /// `block` at most `last`. A command has at most [`MAX_BLOCKS`] blocks, as compute's `end`
    /// and the host's words allow: a per-block call (`reserve`, `cast`, `arrive`) passes its
    /// block with `last` = `MAX_BLOCKS - 1`, `finish` the number of blocks with `MAX_BLOCKS`.
    /// The next block is the next to reserve for `reserve`, the next to cast or hand over for
    /// the others.
    fn admit(
        &self,
        sender: bool,
        block: u32,
        last: u32,
        place: Where,
    ) -> Result<BroadcastArgs, Fail> {
        self.admit_next(sender, block, self.blocks, last, place)
    }

    fn admit_next(
        &self,
        sender: bool,
        block: u32,
        next: u32,
        last: u32,
        place: Where,
    ) -> Result<BroadcastArgs, Fail> {
        if let Some(g) = self.failed {
            return Err((g.place, g.cause));
        }
        let args = self.args.ok_or((Where::BroadcastBegin, Cause::Misuse))?;
        let role_ok = match self.part {
            Part::Sender { .. } => sender,
            Part::Receiver { .. } => !sender,
            Part::Excluded => false,
        };
        if !role_ok || self.finished || block != next || block > last {
            return Err((place, Cause::Misuse));
        }
        Ok(args)
    }

    fn pump_state(&self) -> Pump {
        Pump {
            popped: self.popped,
            sent: self.marker_sent,
            src: self.marker_src,
            src_offset: area::area(self.id) + area::MARKER_SOURCE,
            dst: self.part.done_dst(),
            seq: self.sequence as u16,
        }
    }

    fn apply(&mut self, pump: Pump) {
        self.popped = pump.popped;
        self.marker_sent = pump.sent;
    }
}
