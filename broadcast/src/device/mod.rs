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

use komorebi_hal::cb::{CircularBuffer, Error as _};
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, ReadTag, WriteMode};
use komorebi_hal::{DataMovement, L1Addr, Pause};

mod cause;
mod context;
mod handshake;
mod part;
mod pump;
mod wait;

pub use cause::{Cause, GiveUp};
pub use context::{Context, refuse_without_buffer};

use cause::{Fail, ctrl_cause, issued, noc_cause};
use part::Part;
use pump::{Popped, Pump};
use wait::{deadline, receivers_done, record_first, wait_for};

use crate::area::{self, GiveUpRecord, Where, marker, marker_count, padding_blocks};
use crate::args::{BroadcastArgs, MAX_BLOCKS};

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
    /// Reads this core's broadcast words at `words[first..first + 11]` and checks them against
    /// the command, this kernel's NoC and core, and the buffer `cb`. On any mismatch the
    /// broadcast is not [`ok`](Self::ok) and a `broadcast_begin` give-up is recorded.
    pub fn new<N, K, P>(
        dm: &mut DataMovement<N, K, P>,
        cb: C,
        context: &Context,
        words: &[u32],
        first: usize,
    ) -> Self
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let mut b = Self::unset(cb, context);
        let words = words.get(first..).unwrap_or(&[]);
        // The id as the words give it, for the record even when the words are bad.
        b.id = words.first().map_or(0, |&w| w as u8);
        match b.setup(dm, context, words) {
            Ok(()) => {
                let ctrl = &mut dm.ctrl;
                let base = area::area(b.id);
                let reset = ctrl
                    .store(base + area::STATS_BLOCKS, 0)
                    .and_then(|()| ctrl.store(base + area::STATS_WAIT_CYCLES, 0));
                if let Err(e) = reset {
                    b.give_up_with(&mut dm.ctrl, Where::BroadcastBegin, 0, ctrl_cause(e));
                }
            }
            Err(cause) => {
                b.args = None;
                b.part = Part::Excluded;
                b.give_up_with(&mut dm.ctrl, Where::BroadcastBegin, 0, cause);
            }
        }
        b
    }

    fn unset(cb: C, context: &Context) -> Self {
        Self {
            cb,
            args: None,
            id: 0,
            sequence: context.sequence,
            part: Part::Excluded,
            slot_bytes: 0,
            valid_src: L1Addr::ZERO,
            marker_src: L1Addr::ZERO,
            blocks: 0,
            reserved: 0,
            popped: Popped {
                last_raw: 0,
                pages: 0,
            },
            marker_sent: None,
            wait_cycles: 0,
            failed: None,
            finished: false,
        }
    }

    /// A broadcast the handler refuses before reading its arguments (for example because the
    /// program around them fails its own checks): records a `broadcast_begin` give-up for
    /// broadcast `id` with `cause`, as [`new`](Self::new) does for bad arguments, and is not
    /// [`ok`](Self::ok).
    pub fn refuse<K: ControlBlock>(
        ctrl: &mut K,
        cb: C,
        context: &Context,
        id: u8,
        cause: Cause,
    ) -> Self {
        let mut b = Self::unset(cb, context);
        b.id = id;
        b.give_up_with(ctrl, Where::BroadcastBegin, 0, cause);
        b
    }

    fn setup<N: NocMulticast, K: ControlBlock, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        context: &Context,
        words: &[u32],
    ) -> Result<(), Cause> {
        let args = BroadcastArgs::decode(words).map_err(Cause::BadWords)?;
        self.id = args.broadcast;
        self.args = Some(args);
        if args.group != context.group {
            return Err(Cause::WrongGroup {
                command: context.group,
                words: args.group,
            });
        }
        if !context.exclusive {
            return Err(Cause::NotExclusive);
        }
        if args.noc != dm.noc.noc().index() {
            return Err(Cause::WrongNoc);
        }
        if !args.included() {
            return Ok(());
        }
        let me = dm.noc.node();
        if (me.x(), me.y()) != args.core {
            return Err(Cause::WrongCore);
        }
        let expected = args.buffer_pages();
        if self.cb.capacity() as u32 != expected {
            return Err(Cause::BufferSize {
                expected,
                capacity: self.cb.capacity(),
            });
        }
        if self.cb.write_ptr() != self.cb.base() {
            return Err(Cause::NotAtSlotZero);
        }
        self.slot_bytes =
            (args.pages as u32)
                .checked_mul(self.cb.page_size())
                .ok_or(Cause::BufferSize {
                    expected,
                    capacity: self.cb.capacity(),
                })?;
        let base = area::area(args.broadcast);
        self.valid_src = dm.ctrl.addr(base + area::VALID).map_err(ctrl_cause)?;
        self.marker_src = dm
            .ctrl
            .addr(base + area::MARKER_SOURCE)
            .map_err(ctrl_cause)?;
        self.popped = Popped {
            last_raw: self.cb.popped().map_err(|e| Cause::Cb(e.kind()))?,
            pages: 0,
        };
        self.part = Part::of(&mut dm.ctrl, &args)?;
        Ok(())
    }

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

    /// Sender: the read tag of block `block`'s reads when it is read ahead (see "Reading
    /// ahead" in the module docs): one tag per slot, `block % window`.
    pub fn read_tag(&self, block: u32) -> ReadTag {
        // A window is at most 8 (`args` checks it), so each slot has a tag of its own.
        ReadTag::cyclic(block % self.args.map_or(1, |a| a.window.max(1)) as u32)
    }

    /// Sender: false when [`reserve`](Self::reserve) of `block` would wait for its slot:
    /// its own compute has not popped the blocks that were in the slots up to it. Never waits
    /// and records nothing. True also when `reserve` would return at once without a slot (a
    /// `block` more than `window - 1` ahead of the next to cast, a buffer that cannot be read),
    /// so a sender asks it only for the next block to reserve, within the window.
    pub fn reserve_ready(&mut self, block: u32) -> bool {
        let (window, pages) = self.args.map_or((0, 0), |a| (a.window, a.pages));
        let ahead = block.wrapping_sub(self.blocks);
        let need = ahead.saturating_add(1).saturating_mul(pages as u32);
        ahead >= window as u32 || self.cb.pages_free().map_or(true, |f| f as u32 >= need)
    }

    /// Sender: waits until slot `block % window` is free in its own buffer (its compute popped
    /// block `block - window`) and returns the slot's address, the same on every core.
    /// `block` is the next block not reserved yet, at most `window - 1` ahead of the next to
    /// cast (module docs, "Reading ahead"); anything else is misuse.
    pub async fn reserve<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<L1Addr, GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let r = self.reserve_inner(dm, block).await;
        self.settle(&mut dm.ctrl, block, r)
    }

    async fn reserve_inner<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<L1Addr, Fail>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        const PLACE: Where = Where::BroadcastFree;
        let args = self.admit_next(true, block, self.reserved, MAX_BLOCKS - 1, PLACE)?;
        let window = args.window as u32;
        // Blocks reserved and not cast: `self.blocks..block`; this one makes one more.
        let ahead = block - self.blocks;
        if ahead >= window {
            return Err((PLACE, Cause::Misuse));
        }
        let until = deadline(&mut dm.ctrl).map_err(|c| (PLACE, c))?;
        let need = (ahead + 1) * args.pages as u32;
        let cb = &mut self.cb;
        wait_for(
            &mut dm.ctrl,
            &mut dm.pause,
            until,
            &mut self.wait_cycles,
            &mut |_| Ok(cb.pages_free().map_err(|e| Cause::Cb(e.kind()))? as u32 >= need),
        )
        .await
        .map_err(|c| (PLACE, c))?;
        // Every command starts at slot 0 and only `cast` pushes, a slot at a time: the next
        // block to cast has its slot at the buffer's write pointer, and the blocks reserved
        // ahead follow it (checked when nothing is reserved ahead, as every block 0 is).
        let slot = self.cb.base().offset((block % window) * self.slot_bytes);
        match slot {
            Some(a) if ahead > 0 || a == self.cb.write_ptr() => {
                self.reserved = block + 1;
                Ok(a)
            }
            _ => Err((PLACE, Cause::NotAtSlotZero)),
        }
    }

    /// Sender: once the block's reads have landed and every receiver is done with block
    /// `block - window`, multicasts the block to its slot on every receiver, then VALID, then
    /// hands it to its own compute.
    pub async fn cast<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let r = self.cast_inner::<false, N, K, P>(dm, block).await;
        self.settle(&mut dm.ctrl, block, r)
    }

    /// `cast`, and with `HANDSHAKE` the peer's: they differ only in the count the DONE-BY words
    /// must reach (a constant: komorebi's build carries none of the peer's code).
    async fn cast_inner<const HANDSHAKE: bool, N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), Fail>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        const PLACE: Where = Where::BroadcastDone;
        let args = self.admit(true, block, MAX_BLOCKS - 1, PLACE)?;
        let Part::Sender { rect, receivers } = self.part else {
            return Err((PLACE, Cause::Misuse));
        };
        if block >= self.reserved {
            // Cast before reserve: the slot was never checked free.
            return Err((PLACE, Cause::Misuse));
        }
        // Blocks read ahead: wait for this block's tag only; else for every read.
        let tag = (self.reserved > block + 1).then(|| self.read_tag(block));
        let (id, seq) = (self.id, self.sequence as u16);
        let DataMovement { noc, ctrl, pause } = dm;
        let until = deadline(ctrl).map_err(|c| (PLACE, c))?;
        // The block's reads have landed in the slot.
        wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
            match tag {
                Some(tag) => noc.tagged_reads_done(tag),
                None => noc.reads_done(),
            }
            .map_err(noc_cause)
        })
        .await
        .map_err(|c| (PLACE, c))?;
        let slot = self.cb.write_ptr();
        if let Some(rect) = rect {
            if let Some(needed) = handshake::needed(HANDSHAKE, block, args.window) {
                wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
                    receivers_done(c, id, seq, receivers, needed)
                })
                .await
                .map_err(|c| (PLACE, c))?;
            }
            let len = self.slot_bytes;
            wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
                issued(noc.multicast(slot, rect, slot, len, WriteMode::ORDERED))
            })
            .await
            .map_err(|c| (PLACE, c))?;
            // The VALID source may change only once the previous VALID left.
            wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
                noc.writes_sent().map_err(noc_cause)
            })
            .await
            .map_err(|c| (PLACE, c))?;
        }
        let offset = area::area(id) + area::VALID;
        ctrl.store(offset, marker(seq, (block + 1) as u16))
            .map_err(|e| (PLACE, ctrl_cause(e)))?;
        if let Some(rect) = rect {
            let src = self.valid_src;
            wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
                issued(noc.multicast(src, rect, src, 4, WriteMode::ORDERED))
            })
            .await
            .map_err(|c| (PLACE, c))?;
        }
        self.cb
            .push(args.pages)
            .map_err(|e| (PLACE, Cause::Cb(e.kind())))?;
        self.blocks += 1;
        Ok(())
    }

    /// The handshake peer's block `block` (module docs): the sender casts it (after `reserve` and
    /// its reads) once every receiver is ready for it; a receiver: own slot, ready, flag, push.
    pub async fn handshake<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let valid = Where::BroadcastValid;
        let r = match (self.part, self.admit(false, block, MAX_BLOCKS - 1, valid)) {
            (Part::Sender { .. }, _) => self.cast_inner::<true, N, K, P>(dm, block).await,
            (Part::Receiver { done_dst }, Ok(args)) => {
                let (seq, slot_bytes) = (self.sequence as u16, self.slot_bytes);
                let r = handshake::Ready {
                    args,
                    seq,
                    block,
                    slot_bytes,
                    src: self.marker_src,
                    dst: done_dst,
                };
                let r = handshake::ready(dm, &mut self.cb, &mut self.wait_cycles, &r).await;
                // The ready word says every block so far: `finish` sends no last marker after it.
                self.marker_sent = r.is_ok().then_some((block + 1) as u16).or(self.marker_sent);
                self.blocks += r.is_ok() as u32;
                r
            }
            (_, admitted) => admitted.and(Err((valid, Cause::Misuse))),
        };
        self.settle(&mut dm.ctrl, block, r)
    }

    /// Receiver: waits until VALID says block `block` was cast (sending DONE markers for what
    /// its compute popped meanwhile), then hands the block to its compute.
    pub async fn arrive<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let r = self.arrive_inner(dm, block).await;
        self.settle(&mut dm.ctrl, block, r)
    }

    async fn arrive_inner<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), Fail>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        const PLACE: Where = Where::BroadcastValid;
        let args = self.admit(false, block, MAX_BLOCKS - 1, PLACE)?;
        let seq = self.sequence as u16;
        let valid = area::area(self.id) + area::VALID;
        let needed = block + 1;
        let mut pump = self.pump_state();
        let DataMovement { noc, ctrl, pause } = dm;
        let until = deadline(ctrl).map_err(|c| (PLACE, c))?;
        let cb = &mut self.cb;
        let taken = self.blocks;
        let r = wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
            pump.pump(noc, cb, c, args.pages, taken, false)?;
            let word = c.load(valid).map_err(ctrl_cause)?;
            Ok(marker_count(word, seq).is_some_and(|n| n as u32 >= needed))
        })
        .await;
        self.apply(pump);
        r.map_err(|c| (PLACE, c))?;
        self.cb
            .push(args.pages)
            .map_err(|e| (PLACE, Cause::Cb(e.kind())))?;
        self.blocks += 1;
        Ok(())
    }

    /// Every core: waits until its compute popped every block, pads the buffer to whole windows,
    /// and waits until its last transfers are acknowledged (see the module docs).
    pub async fn finish<N, K, P>(&mut self, dm: &mut DataMovement<N, K, P>) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let block = self.blocks;
        let r = self.finish_inner(dm).await;
        let r = self.settle(&mut dm.ctrl, block, r);
        if r.is_ok() {
            self.finished = true;
            self.store_stats(&mut dm.ctrl).map_err(|e| {
                self.give_up_with(&mut dm.ctrl, Where::BroadcastFree, block, ctrl_cause(e))
            })?;
        }
        r
    }

    async fn finish_inner<N, K, P>(&mut self, dm: &mut DataMovement<N, K, P>) -> Result<(), Fail>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let sender = matches!(self.part, Part::Sender { .. });
        let place = if sender {
            Where::BroadcastDone
        } else {
            Where::BroadcastValid
        };
        let args = self.admit(sender, self.blocks, MAX_BLOCKS, place)?;
        if self.reserved > self.blocks {
            // A block reserved and never cast: its reads may still be landing in the slot.
            return Err((place, Cause::Misuse));
        }
        let (id, seq, blocks, pages) = (self.id, self.sequence as u16, self.blocks, args.pages);
        let mut pump = self.pump_state();
        let DataMovement { noc, ctrl, pause } = dm;
        let until = deadline(ctrl).map_err(|c| (Where::BroadcastFree, c))?;
        let cb = &mut self.cb;
        // Own compute popped every block (a receiver keeps its markers going meanwhile).
        let r = wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
            if sender {
                Ok(pump.popped.blocks(cb, pages)? >= blocks)
            } else {
                pump.pump(noc, cb, c, pages, blocks, false)?;
                Ok(pump.popped.blocks(cb, pages)? >= blocks)
            }
        })
        .await;
        let r = r.map_err(|c| (Where::BroadcastFree, c));
        if let Err(e) = r {
            self.apply(pump);
            return Err(e);
        }
        let pad = padding_blocks(args.window, blocks) * pages as u32;
        if pad > 0 {
            if let Err(e) = cb.push(pad as u16) {
                self.apply(pump);
                return Err((Where::BroadcastFree, Cause::Cb(e.kind())));
            }
        }
        let r = match self.part {
            Part::Sender { rect, receivers } => {
                let w = Where::BroadcastDone;
                if rect.is_some() {
                    wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
                        receivers_done(c, id, seq, receivers, blocks)
                    })
                    .await
                    .map_err(|c| (w, c))?;
                }
                wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
                    noc.writes_acked().map_err(noc_cause)
                })
                .await
                .map_err(|c| (w, c))?;
                for rank in 1..=receivers {
                    ctrl.store(area::done_by(id, rank), 0)
                        .map_err(|e| (w, ctrl_cause(e)))?;
                }
                ctrl.store(area::area(id) + area::VALID, 0)
                    .map_err(|e| (w, ctrl_cause(e)))
            }
            Part::Receiver { .. } => {
                let w = Where::BroadcastFree;
                let r = wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
                    pump.pump(noc, cb, c, pages, blocks, true)?;
                    Ok(pump.sent == Some(blocks as u16))
                })
                .await;
                self.apply(pump);
                r.map_err(|c| (w, c))?;
                wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
                    noc.writes_acked().map_err(noc_cause)
                })
                .await
                .map_err(|c| (w, c))?;
                ctrl.store(area::area(id) + area::VALID, 0)
                    .map_err(|e| (w, ctrl_cause(e)))
            }
            Part::Excluded => Err((place, Cause::Misuse)),
        };
        self.apply(pump);
        r
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
