//! The handshake peer's calls: a tt-metal-style handshake over the same words, buffers and
//! control-block words as komorebi's broadcast, so the two can be compared on equal terms
//! (`komorebi_kernel::handshake_handler` runs them; its docs cite the tt-metal kernels).
//!
//! The call is `Broadcast::handshake`; this module holds the receiver's waits, as `pump` holds
//! komorebi's markers, and the count the sender waits for (`needed`, komorebi's too).
//!
//! ```text
//! for block in 0..blocks {
//!     if b.sender() {
//!         let slot = b.reserve(&mut dm, block).await?;        // own slot free
//!         // read the block's pages from DRAM into `slot`
//!         b.handshake(&mut dm, block).await?;  // every receiver ready for `block`, reads
//!                                              // landed, multicast, flush, flag, push
//!     } else {
//!         b.handshake(&mut dm, block).await?;  // own slot free, ready, flag, push
//!     }
//! }
//! b.finish(&mut dm).await?;                           // as komorebi's
//! ```
//!
//! # The words
//!
//! Nothing new is laid out in the control block. The *ready* word of receiver rank `r` is its
//! DONE-BY word at the sender ([`area::done_by`]); the *flag* is the VALID word, multicast from
//! the sender's own VALID word as komorebi's VALID is; a receiver writes its ready word from its
//! marker-source slot. Both carry the command's sequence as every marker does
//! ([`area::marker`]), so a word an earlier command left never counts.
//!
//! tt-metal's receiver signals ready with `noc_semaphore_inc`, an atomic increment of the
//! sender's semaphore, and the sender resets the semaphore to 0 before each multicast. The HAL
//! has no atomic, so here each receiver writes its own count instead: `marker(seq, block + 1)`
//! into its rank's word at the sender, one 4-byte NoC write per receiver and block (the same
//! traffic as the increment), and the sender waits until every rank's word counts at least
//! `block + 1` (nothing to reset: the count only grows).
//!
//! # What it guarantees
//!
//! * A receiver says it is ready for block `b` only once its own slot `b % window` is free (its
//!   compute popped block `b - window`), and the sender multicasts block `b` only once every
//!   receiver said so: a block never lands on a page its compute has not popped.
//! * Strictly serial per block, as tt-metal's kernels: the sender issues block `b + 1`'s reads
//!   only after block `b`'s flag (`reserve` comes after `handshake` returned). The sender flushes
//!   (`writes_sent`) between data and flag where tt-metal flushes on Blackhole
//!   (`noc_async_writes_flushed`, which compares `NIU_MST_NONPOSTED_WR_REQ_SENT` with its count
//!   of writes issued; komorebi's `writes_sent` waits for `NIU_MST_WRITE_REQS_OUTGOING_ID(0)`
//!   instead, decisions D12); it also lets the flag's source change only once the previous flag
//!   left.
//! * A receiver's ready write changes the marker source only once `writes_sent` says its
//!   previous write left, and is an ordinary NoC write (never an inline write).
//! * Every call gives up within one wait limit, or on the stop flag, and records the first
//!   give-up of the command, exactly as komorebi's calls do (the module docs of `device`);
//!   `finish` is komorebi's: a receiver's last ready word already says
//!   every block, so it sends nothing more; the sender waits for it, then clears its ready
//!   words and a receiver its flag.
//!
//! # Where a give-up is recorded
//!
//! The sender's calls give up where komorebi's do (`broadcast_free` waiting for its own slot,
//! `broadcast_done` waiting for its reads, the receivers' ready words, its multicasts). A
//! receiver gives up `broadcast_free` waiting for its own slot (its compute) and
//! `broadcast_valid` sending its ready word or waiting for the flag.

use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{DataMovement, L1Addr, NocAddr, Pause};

use super::cause::{CallCause, Fail, GiveUp, cb_cause, ctrl_fail, issued};
use super::part::Part;
use super::state::Broadcast;
use super::wait::{wait_for, writes_sent};
use crate::area::{self, Where, marker, marker_count};
use crate::args::{BroadcastArgs, MAX_BLOCKS};

/// The count every receiver's DONE-BY word must reach before the sender casts `block`:
/// komorebi's, that it popped block `block - window` (that slot's; none in the first lap), or
/// with `handshake` that it is ready for `block` (which says as much, and that it waits for it).
#[inline(always)]
pub(super) fn needed(handshake: bool, block: u32, window: u8) -> Option<u32> {
    if handshake {
        Some(block + 1)
    } else {
        block
            .checked_sub(window as u32)
            .map(|previous| previous + 1)
    }
}

/// What a receiver's [`ready`] needs of its broadcast.
#[derive(Copy, Clone, Debug)]
pub(super) struct Ready {
    /// The broadcast's words.
    pub(super) args: BroadcastArgs,
    /// The low half of the command's sequence number.
    pub(super) seq: u16,
    /// The block it is about.
    pub(super) block: u32,
    /// Bytes per slot.
    pub(super) slot_bytes: u32,
    /// The marker-source slot (the ready write's source).
    pub(super) src: L1Addr,
    /// This receiver's ready word at the sender (its DONE-BY word).
    pub(super) dst: NocAddr,
}

/// Receiver, block `r.block`: waits until its own slot is free (tt-metal's `cb_reserve_back`),
/// writes its ready word to the sender (the increment of tt-metal's `noc_semaphore_inc`), and
/// waits for the flag (VALID) of the block, all within one wait limit; then pushes the block.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub(super) async fn ready<N, K, P, C>(
    dm: &mut DataMovement<N, K, P>,
    cb: &mut C,
    wait_cycles: &mut u64,
    r: &Ready,
) -> Result<(), Fail>
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    const PLACE: Where = Where::BroadcastValid;
    let DataMovement { noc, ctrl, pause } = dm;
    let mut until = None;
    // Own slot free: compute popped block `block - window`.
    let (pages, id) = (r.args.pages, r.args.broadcast);
    wait_for(
        ctrl,
        pause,
        &mut until,
        wait_cycles,
        Where::BroadcastFree,
        &mut pages_free(cb, pages),
    )
    .await?;
    let slot = cb
        .base()
        .offset((r.block % r.args.window.max(1) as u32) * r.slot_bytes);
    if slot != Some(cb.write_ptr()) {
        return Err((Where::BroadcastFree, CallCause::NotAtSlotZero));
    }
    // Ready: the marker source changes only once the previous ready write left.
    wait_for(
        ctrl,
        pause,
        &mut until,
        wait_cycles,
        PLACE,
        &mut writes_sent(noc),
    )
    .await?;
    let count = (r.block + 1) as u16;
    ctrl.store(area::area(id) + area::MARKER_SOURCE, marker(r.seq, count))
        .map_err(|e| (PLACE, ctrl_fail(e)))?;
    let (src, dst) = (r.src, r.dst);
    wait_for(
        ctrl,
        pause,
        &mut until,
        wait_cycles,
        PLACE,
        &mut write_issued(noc, src, dst),
    )
    .await?;
    // The flag: VALID of this command says the block was cast.
    let (valid, seq, block) = (area::area(id) + area::VALID, r.seq, r.block);
    wait_for(
        ctrl,
        pause,
        &mut until,
        wait_cycles,
        PLACE,
        &mut flag_after(valid, seq, block),
    )
    .await?;
    cb.push(pages).map_err(|e| (PLACE, cb_cause(e)))
}

// `ready`'s conditions, named functions rather than closures (`wait`'s note says why).

/// Condition: `cb` has room for `pages` pages.
fn pages_free<K, C: CircularBuffer>(
    cb: &mut C,
    pages: u16,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |_| Ok(cb.pages_free().map_err(cb_cause)? >= pages)
}

/// Condition: the NoC took the 4-byte write from `src` to `dst` (asked again while busy).
fn write_issued<K, N: NocMulticast>(
    noc: &mut N,
    src: L1Addr,
    dst: NocAddr,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |_| issued(noc.write(src, dst, 4, WriteMode::ORDERED))
}

/// Condition: the word at control offset `valid` is a marker of sequence `seq` past `block`.
fn flag_after<K: ControlBlock>(
    valid: u32,
    seq: u16,
    block: u32,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> {
    move |c| {
        let word = c.load(valid).map_err(ctrl_fail)?;
        Ok(marker_count(word, seq).is_some_and(|n| n as u32 > block))
    }
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
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
        let r = match (
            self.part,
            self.admit(&mut dm.ctrl, false, block, MAX_BLOCKS - 1, valid),
        ) {
            (Part::Sender { .. }, _) => self.cast_inner::<true, N, K, P>(dm, block).await,
            (Part::Receiver { done_dst }, Ok(_)) => 'receiver: {
                // Admitted, so the words are there (`admit` refuses a call without them).
                let Some(args) = self.args else {
                    break 'receiver Err((Where::BroadcastBegin, CallCause::Misuse));
                };
                let (seq, slot_bytes) = (self.sequence as u16, self.slot_bytes);
                let r = Ready {
                    args,
                    seq,
                    block,
                    slot_bytes,
                    src: self.marker_src,
                    dst: done_dst,
                };
                let r = ready(dm, &mut self.cb, &mut self.wait_cycles, &r).await;
                // Compute's popped count is 16 bits wide: read it once a block, as komorebi's
                // `arrive` does, so no more than a buffer's pages are popped between two reads
                // (read first in `finish`, it had lost 65,536 pages and that last wait failed).
                let r = r.and_then(|()| {
                    let popped = self.popped.blocks(&mut self.cb, args.pages);
                    popped.map(|_| ()).map_err(|c| (valid, c))
                });
                // The ready word says every block so far: `finish` sends no last marker after it.
                self.marker_sent = r.is_ok().then_some((block + 1) as u16).or(self.marker_sent);
                self.blocks += r.is_ok() as u32;
                r
            }
            (_, admitted) => admitted.and(Err((valid, CallCause::Misuse))),
        };
        self.settle(&mut dm.ctrl, block, r)
    }
}
