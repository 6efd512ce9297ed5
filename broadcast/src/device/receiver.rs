//! The receiver's call: `arrive` waits for the VALID that announces a block (sending DONE markers
//! meanwhile) and hands the block to compute.

use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::NocMulticast;
use komorebi_hal::{DataMovement, Pause};

use super::cause::{Fail, GiveUp, cb_cause, ctrl_fail};
use super::state::Broadcast;
use super::wait::wait_for;
use crate::area::{self, Where, marker_count};
use crate::args::MAX_BLOCKS;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
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
        let args = self.admit(&mut dm.ctrl, false, block, MAX_BLOCKS - 1, PLACE)?;
        let seq = self.sequence as u16;
        let valid = area::area(self.id) + area::VALID;
        let needed = block + 1;
        let mut pump = self.pump_state();
        let DataMovement { noc, ctrl, pause } = dm;
        let mut until = None;
        let cb = &mut self.cb;
        let (taken, pages, state) = (self.blocks, args.pages, &mut pump);
        // `move`: the closure holds the values it reads rather than references to them (as
        // `cast`'s does).
        let r = wait_for(
            ctrl,
            pause,
            &mut until,
            &mut self.wait_cycles,
            PLACE,
            &mut move |c| {
                state.pump(noc, cb, c, pages, taken, false)?;
                let word = c.load(valid).map_err(ctrl_fail)?;
                Ok(marker_count(word, seq).is_some_and(|n| n as u32 >= needed))
            },
        )
        .await;
        self.apply(pump);
        r?;
        self.cb.push(args.pages).map_err(|e| (PLACE, cb_cause(e)))?;
        self.blocks += 1;
        Ok(())
    }
}
