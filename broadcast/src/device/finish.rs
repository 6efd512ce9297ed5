//! Every core's last call, `finish`: compute popped every block, the buffer padded to whole
//! windows, the last markers sent and every transfer of this core acknowledged.

use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::NocMulticast;
use komorebi_hal::{DataMovement, Pause};

use super::cause::{CallCause, Fail, GiveUp, cb_cause, ctrl_cause, ctrl_fail};
use super::part::Part;
use super::pump::Pump;
use super::state::Broadcast;
use super::wait::{all_receivers_done, wait_for, writes_acked};
use crate::area::{self, Where, padding_blocks};
use crate::args::MAX_BLOCKS;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
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
        let args = self.admit(&mut dm.ctrl, sender, self.blocks, MAX_BLOCKS, place)?;
        if self.reserved > self.blocks {
            // A block reserved and never cast: its reads may still be landing in the slot.
            return Err((place, CallCause::Misuse));
        }
        let (id, seq, blocks, pages) = (self.id, self.sequence as u16, self.blocks, args.pages);
        let mut pump = self.pump_state();
        let DataMovement { noc, ctrl, pause } = dm;
        let mut until = None;
        let cb = &mut self.cb;
        // Own compute popped every block (a receiver keeps its markers going meanwhile): no page
        // of this command is left in the buffer. Asked of the buffer, not of the popped count:
        // that counter wraps at 2^16 pages, and a sender reads it nowhere before this.
        let r = wait_for(
            ctrl,
            pause,
            &mut until,
            &mut self.wait_cycles,
            Where::BroadcastFree,
            &mut all_popped(sender, &mut pump, noc, cb, pages, blocks),
        )
        .await;
        if let Err(e) = r {
            self.apply(pump);
            return Err(e);
        }
        let pad = padding_blocks(args.window, blocks) * pages as u32;
        if pad > 0 {
            if let Err(e) = cb.push(pad as u16) {
                self.apply(pump);
                return Err((Where::BroadcastFree, cb_cause(e)));
            }
        }
        let r = match self.part {
            Part::Sender { rect, receivers } => {
                let w = Where::BroadcastDone;
                if rect.is_some() {
                    let known = &mut self.done_known;
                    wait_for(
                        ctrl,
                        pause,
                        &mut until,
                        &mut self.wait_cycles,
                        w,
                        &mut all_receivers_done(id, seq, receivers, blocks, known),
                    )
                    .await?;
                }
                wait_for(
                    ctrl,
                    pause,
                    &mut until,
                    &mut self.wait_cycles,
                    w,
                    &mut writes_acked(noc),
                )
                .await?;
                for rank in 1..=receivers {
                    ctrl.store(area::done_by(id, rank), 0)
                        .map_err(|e| (w, ctrl_fail(e)))?;
                }
                ctrl.store(area::area(id) + area::VALID, 0)
                    .map_err(|e| (w, ctrl_fail(e)))
            }
            Part::Receiver { .. } => {
                let w = Where::BroadcastFree;
                let r = wait_for(
                    ctrl,
                    pause,
                    &mut until,
                    &mut self.wait_cycles,
                    w,
                    &mut last_marker_sent(&mut pump, noc, cb, pages, blocks),
                )
                .await;
                self.apply(pump);
                r?;
                wait_for(
                    ctrl,
                    pause,
                    &mut until,
                    &mut self.wait_cycles,
                    w,
                    &mut writes_acked(noc),
                )
                .await?;
                ctrl.store(area::area(id) + area::VALID, 0)
                    .map_err(|e| (w, ctrl_fail(e)))
            }
            Part::Excluded => Err((place, CallCause::Misuse)),
        };
        self.apply(pump);
        r
    }
}

/// `finish`'s first condition: compute popped every block, a receiver's markers kept going
/// meanwhile (a named function, not a closure: `wait`'s note says why).
fn all_popped<'a, K: ControlBlock, N: NocMulticast, C: CircularBuffer>(
    sender: bool,
    pump: &'a mut Pump,
    noc: &'a mut N,
    cb: &'a mut C,
    pages: u16,
    blocks: u32,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> + 'a {
    move |c| {
        if !sender {
            pump.pump(noc, cb, c, pages, blocks, false)?;
        }
        Ok(cb.pages_ready().map_err(cb_cause)? == 0)
    }
}

/// A receiver's last condition in `finish`: its marker saying every block has gone out.
fn last_marker_sent<'a, K: ControlBlock, N: NocMulticast, C: CircularBuffer>(
    pump: &'a mut Pump,
    noc: &'a mut N,
    cb: &'a mut C,
    pages: u16,
    blocks: u32,
) -> impl FnMut(&mut K) -> Result<bool, CallCause> + 'a {
    move |c| {
        pump.pump(noc, cb, c, pages, blocks, true)?;
        Ok(pump.sent == Some(blocks as u16))
    }
}
