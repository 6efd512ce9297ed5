//! The handshake peer's calls: a tt-metal-style handshake over the same words, buffers and
//! control-block words as komorebi's broadcast, so the two can be compared on equal terms
//! (`komorebi_kernel::handshake_handler` runs them; its docs cite the tt-metal kernels).
//!
//! ```text
//! for block in 0..blocks {
//!     if b.sender() {
//!         let slot = b.reserve(&mut dm, block).await?;        // own slot free
//!         // read the block's pages from DRAM into `slot`
//!         b.cast_when_ready(&mut dm, block).await?;   // reads landed, every receiver ready
//!                                                     // for `block`, multicast, flush, flag,
//!                                                     // push
//!     } else {
//!         b.ready_and_arrive(&mut dm, block).await?;  // own slot free, ready, flag, push
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
//!   only after block `b`'s flag ([`reserve`](Broadcast::reserve) comes after
//!   [`cast_when_ready`](Broadcast::cast_when_ready) returned). The sender's flush
//!   (`writes_sent`) between data and flag is the one tt-metal makes on Blackhole; it also lets
//!   the flag's source change only once the previous flag left.
//! * A receiver's ready write changes the marker source only once `writes_sent` says its
//!   previous write left, and is an ordinary NoC write (never an inline write).
//! * Every call gives up within one wait limit, or on the stop flag, and records the first
//!   give-up of the command, exactly as komorebi's calls do (the module docs of `device`);
//!   [`finish`](Broadcast::finish) is komorebi's: a receiver's last ready word already says
//!   every block, so it sends nothing more; the sender waits for it, then clears its ready
//!   words and a receiver its flag.
//!
//! # Where a give-up is recorded
//!
//! The sender's calls give up where komorebi's do (`broadcast_free` waiting for its own slot,
//! `broadcast_done` waiting for its reads, the receivers' ready words, its multicasts). A
//! receiver gives up `broadcast_free` waiting for its own slot (its compute) and
//! `broadcast_valid` sending its ready word or waiting for the flag.

use komorebi_hal::cb::{CircularBuffer, Error as _};
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{DataMovement, Pause};

use super::cause::{Cause, Fail, ctrl_cause, issued, noc_cause};
use super::wait::{deadline, wait_for};
use super::{Broadcast, GiveUp, Part};
use crate::area::{self, Where, marker, marker_count};
use crate::args::MAX_BLOCKS;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
    /// Handshake sender, after [`reserve`](Self::reserve) and the block's reads: once the reads
    /// have landed and every receiver's ready word says it is ready for `block`, multicasts the
    /// block to its slot on every receiver, flushes, multicasts the flag (VALID), then hands
    /// the block to its own compute.
    pub async fn cast_when_ready<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let r = self.cast_inner::<true, N, K, P>(dm, block).await;
        self.settle(&mut dm.ctrl, block, r)
    }

    /// Handshake receiver: waits until its own slot for `block` is free, says it is ready for
    /// `block` (its ready word at the sender), waits for the flag of `block`, then hands the
    /// block to its compute.
    pub async fn ready_and_arrive<N, K, P>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        block: u32,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
    {
        let r = self.ready_inner(dm, block).await;
        self.settle(&mut dm.ctrl, block, r)
    }

    async fn ready_inner<N, K, P>(
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
        let Part::Receiver { done_dst } = self.part else {
            return Err((PLACE, Cause::Misuse));
        };
        let (seq, pages) = (self.sequence as u16, args.pages);
        let DataMovement { noc, ctrl, pause } = dm;
        let until = deadline(ctrl).map_err(|c| (Where::BroadcastFree, c))?;
        // Own slot free (tt-metal's `cb_reserve_back`): compute popped block `block - window`.
        let cb = &mut self.cb;
        wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
            Ok(cb.pages_free().map_err(|e| Cause::Cb(e.kind()))? >= pages)
        })
        .await
        .map_err(|c| (Where::BroadcastFree, c))?;
        let slot = self
            .cb
            .base()
            .offset((block % args.window as u32) * self.slot_bytes);
        if slot != Some(self.cb.write_ptr()) {
            return Err((Where::BroadcastFree, Cause::NotAtSlotZero));
        }
        // Ready: the marker source changes only once the previous ready write left.
        wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
            noc.writes_sent().map_err(noc_cause)
        })
        .await
        .map_err(|c| (PLACE, c))?;
        let count = (block + 1) as u16;
        ctrl.store(
            area::area(self.id) + area::MARKER_SOURCE,
            marker(seq, count),
        )
        .map_err(|e| (PLACE, ctrl_cause(e)))?;
        let src = self.marker_src;
        wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |_| {
            issued(noc.write(src, done_dst, 4, WriteMode::ORDERED))
        })
        .await
        .map_err(|c| (PLACE, c))?;
        // `finish` sends a last marker only if this one does not say every block.
        self.marker_sent = Some(count);
        // The flag: VALID of this command says `block` was cast.
        let valid = area::area(self.id) + area::VALID;
        wait_for(ctrl, pause, until, &mut self.wait_cycles, &mut |c| {
            let word = c.load(valid).map_err(ctrl_cause)?;
            Ok(marker_count(word, seq).is_some_and(|n| n as u32 > block))
        })
        .await
        .map_err(|c| (PLACE, c))?;
        self.cb
            .push(pages)
            .map_err(|e| (PLACE, Cause::Cb(e.kind())))?;
        self.blocks += 1;
        Ok(())
    }
}
