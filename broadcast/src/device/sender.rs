//! The sender's calls: reserving a slot (`reserve`, and `reserve_ready` for reading ahead),
//! reading a block into it (`read`) and casting a block (`cast`: the receivers done with the
//! slot, the reads landed, multicast, VALID, push).

use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, PageReads, ReadTag, WriteMode};
use komorebi_hal::{DataMovement, L1Addr, Pause};

use super::cause::{CallCause, Fail, GiveUp, cb_cause, ctrl_fail, issued, noc_cause};
use super::handshake;
use super::part::Part;
use super::state::Broadcast;
use super::wait::{receivers_done, wait_for};
use crate::area::{self, Where, marker};
use crate::args::MAX_BLOCKS;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
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
    ///
    /// It does not ask the NoC: `reserve` may still wait for the multicast that sent the
    /// slot's last block to leave. The next block to read ahead always goes into the slot of
    /// the block cast last, so that multicast has just been issued; waiting for it to leave
    /// (a packet's departure) costs less than casting the next block before its reads.
    pub fn reserve_ready(&mut self, block: u32) -> bool {
        let (window, pages) = self.args.map_or((0, 0), |a| (a.window, a.pages));
        let ahead = block.wrapping_sub(self.blocks);
        let need = ahead.saturating_add(1).saturating_mul(pages as u32);
        ahead >= window as u32 || self.cb.pages_free().map_or(true, |f| f as u32 >= need)
    }

    /// Whether the data multicast of the block that was in `block`'s slot before it (block
    /// `block - window`) is known to have left, so that reads may land in the slot.
    fn slot_sent(&self, block: u32, window: u32) -> bool {
        block < window || self.blocks_sent > block - window
    }

    /// Sender: waits until slot `block % window` is free in its own buffer (its compute popped
    /// block `block - window`, and the multicast that sent that block left: a NoC barrier whose
    /// timeout gives up `broadcast_done`) and returns the slot's address, the same on every
    /// core.
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
        let args = self.admit_next(
            &mut dm.ctrl,
            true,
            block,
            self.reserved,
            MAX_BLOCKS - 1,
            PLACE,
        )?;
        let window = args.window as u32;
        // Blocks reserved and not cast: `self.blocks..block`; this one makes one more.
        let ahead = block - self.blocks;
        if ahead >= window {
            return Err((PLACE, CallCause::Misuse));
        }
        let mut until = None;
        // The multicast that sent the slot's last block may still be reading it (`cast` issues
        // VALID without waiting for the data to leave): first wait for it to leave, a NoC
        // barrier of the sender (one wait for both: each is code on the baby cores).
        let mut barrier = !self.slot_sent(block, window);
        let need = (ahead + 1) * args.pages as u32;
        let (cb, sent, cast) = (&mut self.cb, &mut self.blocks_sent, self.blocks);
        let noc = &mut dm.noc;
        let waited = wait_for(
            &mut dm.ctrl,
            &mut dm.pause,
            &mut until,
            &mut self.wait_cycles,
            PLACE,
            &mut |_| {
                if barrier {
                    if !noc.writes_sent().map_err(noc_cause)? {
                        return Ok(false);
                    }
                    *sent = cast;
                    barrier = false;
                }
                Ok(cb.pages_free().map_err(cb_cause)? as u32 >= need)
            },
        )
        .await;
        // A give-up while waiting for the NoC is `broadcast_done` (it also stops the tile).
        waited.map_err(|(place, cause)| match barrier {
            true => (Where::BroadcastDone, cause),
            false => (place, cause),
        })?;
        // Every command starts at slot 0 and only `cast` pushes, a slot at a time: the next
        // block to cast has its slot at the buffer's write pointer, and the blocks reserved
        // ahead follow it (checked when nothing is reserved ahead, as every block 0 is).
        let slot = self.cb.base().offset((block % window) * self.slot_bytes);
        match slot {
            Some(a) if ahead > 0 || a == self.cb.write_ptr() => {
                self.reserved = block + 1;
                self.reserved_slot = a;
                Ok(a)
            }
            _ => Err((PLACE, CallCause::NotAtSlotZero)),
        }
    }

    /// Sender: issues the reads `reads` of block `block`, the block reserved last (into its
    /// slot, with [`read_tag`](Self::read_tag)`(block)`), asking a busy NoC again, within one
    /// wait limit and while the tile is not stopped (both give up `broadcast_done`, the sender
    /// waiting for its own NoC). Pages without addresses, of a length that is not whole words,
    /// or more bytes in all than the block's slot holds (pages larger than the buffer's would
    /// run into the next slot or past the buffer) are misuse, refused before any read goes
    /// (`broadcast_begin`: the words give the pages); another NoC error gives up
    /// `broadcast_done`; any other block (none before a reserve, nor a block once cast), reads
    /// into anywhere but the block's slot (`reads.dst` must be the address `reserve` returned),
    /// or a call after a give-up, is refused as every call is (`broadcast_done`). The handshake peer reads its blocks with it too.
    pub async fn read<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
        reads: &PageReads<'_>,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        const PLACE: Where = Where::BroadcastDone;
        // Only the block reserved last (a receiver reserves none), and no call after a give-up
        // (`settle` returns the first). A page without addresses is refused before any read
        // goes: with whole words a page, the pages' addresses grow with their number, so if the
        // last has them every one has.
        // A block reserved and not cast (a receiver reserves none; a cast block's slot is
        // compute's and the multicast's), into that block's own slot only (another may hold a
        // block not yet popped or still being multicast).
        let other = self.reserved <= self.blocks
            || block != self.reserved.wrapping_sub(1)
            || reads.dst != self.reserved_slot;
        let bad_pages = reads.len % 4 != 0
            || reads.count > 0 && reads.page(reads.count - 1).is_none()
            || reads
                .count
                .checked_mul(reads.len)
                .is_none_or(|bytes| bytes > self.slot_bytes);
        let r = if self.failed.is_some() || other || bad_pages {
            let place = if other { PLACE } else { Where::BroadcastBegin };
            Err((place, CallCause::Misuse))
        } else {
            // Most blocks' pages are all taken at once: then no wait is entered.
            match read_pages(&mut dm.noc, 0, reads) {
                Ok(issued) if issued >= reads.count => return Ok(()),
                Ok(mut from) => {
                    let noc = &mut dm.noc;
                    let mut until = None;
                    // A busy NoC took the pages up to some page: asked again from the first
                    // it did not.
                    wait_for(
                        &mut dm.ctrl,
                        &mut dm.pause,
                        &mut until,
                        &mut self.wait_cycles,
                        PLACE,
                        &mut |_| {
                            from = read_pages(noc, from, reads).map_err(noc_cause)?;
                            Ok(from >= reads.count)
                        },
                    )
                    .await
                }
                Err(e) => Err((PLACE, noc_cause(e))),
            }
        };
        self.settle(&mut dm.ctrl, block, r)
    }

    /// Sender: once every receiver is done with block `block - window` and the block's reads
    /// have landed, multicasts the block to its slot on every receiver, then VALID, then
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
    pub(super) async fn cast_inner<const HANDSHAKE: bool, N, K, P>(
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
        let args = self.admit(&mut dm.ctrl, true, block, MAX_BLOCKS - 1, PLACE)?;
        let Part::Sender { rect, receivers } = self.part else {
            return Err((PLACE, CallCause::Misuse));
        };
        if block >= self.reserved {
            // Cast before reserve: the slot was never checked free.
            return Err((PLACE, CallCause::Misuse));
        }
        // Blocks read ahead: wait for this block's tag only; else, or when the block's reads
        // could overflow its tag's count (a block of 256 pages or more), for every read.
        let tag = (self.reserved > block + 1 && self.tags_fit).then(|| self.read_tag(block));
        let (id, seq) = (self.id, self.sequence as u16);
        let needed = rect.and(handshake::needed(HANDSHAKE, block, args.window));
        let (slot, len, src) = (self.cb.write_ptr(), self.slot_bytes, self.valid_src);
        let (valid, valid_word) = (
            area::area(id) + area::VALID,
            marker(seq, (block + 1) as u16),
        );
        let DataMovement { noc, ctrl, pause } = dm;
        let mut until = None;
        let known = &mut self.done_known;
        let sent = &mut self.blocks_sent;
        // One wait for the cast's steps, in order: each poll resumes at the first step not done
        // and goes on while steps succeed. The same steps and deadline as one wait per step,
        // without entering and leaving a wait for each (about 90 cycles each on the baby cores).
        let mut step = CastStep::Receivers;
        // Whether nothing of this kernel was outgoing just before the data multicast (below).
        let mut nothing_outgoing = false;
        // `move`: the closure holds the values it reads (and the step it is at), not references
        // to them, so each poll loads each once rather than through a pointer.
        wait_for(
            ctrl,
            pause,
            &mut until,
            &mut self.wait_cycles,
            PLACE,
            &mut move |c| {
                if step == CastStep::Receivers {
                    // Every receiver is done with the block that was in the slot.
                    if let Some(n) = needed {
                        if !receivers_done(c, id, seq, receivers, n, known)? {
                            return Ok(false);
                        }
                    }
                    step = CastStep::Reads;
                }
                if step == CastStep::Reads {
                    // The block's reads have landed in the slot.
                    let landed = match tag {
                        Some(tag) => noc.tagged_reads_done(tag),
                        None => noc.reads_done(),
                    };
                    if !landed.map_err(noc_cause)? {
                        return Ok(false);
                    }
                    step = CastStep::Data;
                }
                let Some(rect) = rect else {
                    // No receivers: VALID for the record only, and no multicast to leave.
                    c.store(valid, valid_word).map_err(ctrl_fail)?;
                    *sent = block + 1;
                    return Ok(true);
                };
                // The data, then VALID, through one call of `multicast` (each call site of it
                // is a copy or a call on the baby cores).
                loop {
                    if step == CastStep::Valid {
                        // The VALID source may change only once the previous VALID left.
                        if !nothing_outgoing {
                            if !noc.writes_sent().map_err(noc_cause)? {
                                return Ok(false);
                            }
                            // This block's data left too.
                            *sent = block + 1;
                        }
                        c.store(valid, valid_word).map_err(ctrl_fail)?;
                        step = CastStep::ValidCast;
                    }
                    let (from, bytes) = if step == CastStep::Data {
                        // Sampled before the data goes: with nothing outgoing, the previous
                        // VALID has left, so this one may be stored without waiting for the
                        // data to leave too. The handshake peer does not look: it flushes
                        // between data and flag, as tt-metal does.
                        nothing_outgoing = !HANDSHAKE && noc.writes_sent().map_err(noc_cause)?;
                        if nothing_outgoing {
                            // Every block before this one left.
                            *sent = block;
                        }
                        (slot, len)
                    } else {
                        (src, 4)
                    };
                    if !issued(noc.multicast(from, rect, from, bytes, WriteMode::ORDERED))? {
                        return Ok(false);
                    }
                    if step == CastStep::ValidCast {
                        return Ok(true);
                    }
                    step = CastStep::Valid;
                }
            },
        )
        .await?;
        self.cb.push(args.pages).map_err(|e| (PLACE, cb_cause(e)))?;
        self.blocks += 1;
        Ok(())
    }
}

/// `noc.read_pages(from, reads)`, out of line: the NoC's batch of checks and register writes is
/// large code on the baby cores, and the wait's first poll and its later rounds both call it.
#[inline(never)]
fn read_pages<N: NocMulticast>(
    noc: &mut N,
    from: u32,
    reads: &PageReads<'_>,
) -> Result<u32, N::Error> {
    noc.read_pages(from, reads)
}

/// The steps of `cast`'s one wait, in order (see `cast_inner`).
#[derive(Copy, Clone, PartialEq, Eq)]
enum CastStep {
    /// Waiting for every receiver's DONE marker of the block that was in the slot: first, so
    /// that the markers' loads overlap the block's reads still in flight.
    Receivers,
    /// Waiting for the block's reads to land.
    Reads,
    /// Issuing the data multicast.
    Data,
    /// Storing VALID once the previous one left (known at once when nothing was outgoing just
    /// before the data multicast).
    Valid,
    /// Issuing the VALID multicast.
    ValidCast,
}
