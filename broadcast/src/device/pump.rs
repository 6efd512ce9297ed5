//! A receiver's DONE markers: how many blocks compute popped, and the marker sender that a wait's
//! condition drives.

use komorebi_hal::cb::CircularBuffer;
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{L1Addr, NocAddr};

use super::cause::{CallCause, cb_cause, ctrl_fail, issued, noc_cause};
use crate::area::marker;

/// Tracks how many pages the compute kernel popped this command, from the wrapping counter.
#[derive(Copy, Clone, Debug)]
pub(super) struct Popped {
    pub(super) last_raw: u16,
    pub(super) pages: u32,
}

impl Popped {
    pub(super) fn blocks<C: CircularBuffer>(
        &mut self,
        cb: &mut C,
        pages: u16,
    ) -> Result<u32, CallCause> {
        let raw = cb.popped().map_err(cb_cause)?;
        self.pages = self
            .pages
            .wrapping_add(raw.wrapping_sub(self.last_raw) as u32);
        self.last_raw = raw;
        // `pages` is at least 1 (the words' checks refuse 0); `max(1)` says so to the compiler,
        // so the firmware carries no division-by-zero panic (and none of its formatting).
        Ok(self.pages / (pages as u32).max(1))
    }
}

/// A receiver's DONE-marker sender, split off the broadcast so a wait's condition can drive it
/// while the broadcast's other fields are borrowed.
#[derive(Copy, Clone, Debug)]
pub(super) struct Pump {
    pub(super) popped: Popped,
    pub(super) sent: Option<u16>,
    pub(super) src: L1Addr,
    pub(super) src_offset: u32,
    pub(super) dst: Option<NocAddr>,
    pub(super) seq: u16,
}

impl Pump {
    /// Sends a DONE marker if compute popped more blocks than the last marker said (or, with
    /// `last`, if the last marker does not say every block), once the previous marker left.
    pub(super) fn pump<N: NocMulticast, C: CircularBuffer, K: ControlBlock>(
        &mut self,
        noc: &mut N,
        cb: &mut C,
        ctrl: &mut K,
        pages: u16,
        taken: u32,
        last: bool,
    ) -> Result<(), CallCause> {
        let Some(dst) = self.dst else { return Ok(()) };
        let popped = self.popped.blocks(cb, pages)?.min(taken) as u16;
        let due = if last {
            self.sent != Some(popped)
        } else {
            popped > self.sent.unwrap_or(0)
        };
        if !due || !noc.writes_sent().map_err(noc_cause)? {
            return Ok(());
        }
        ctrl.store(self.src_offset, marker(self.seq, popped))
            .map_err(ctrl_fail)?;
        if issued(noc.write(self.src, dst, 4, WriteMode::ORDERED))? {
            self.sent = Some(popped);
        }
        Ok(())
    }
}
