//! Making the host's writes land: the barrier before a command is published, the read-backs
//! of DRAM and multicast writes, and the drain before the windows are freed.
//!
//! A posted write through a window returns before it reaches its tile, and writes through
//! different windows (a tile's own, a DRAM bank's, the spare, the multicast one) are not
//! ordered with each other on the NoC. A read through a window returns only after the writes
//! before it through that window to that place landed; so each kind of write is read back
//! where the next step needs it (tt-umd's and tt-metal's barriers read back the same way, and
//! on Blackhole include the DRAM cores):
//!
//! * [`Card::publish_barrier`]: before a tile's index word, whatever went to DRAM (a command's
//!   input pages) and through the spare window, then the tile's own writes when its window is
//!   not Strict.
//! * [`Card::landed`]: every write so far, the multicast ones read back from every tile (the
//!   loader's barrier before it releases the cores, and after it holds them in reset).
//! * The drop: everything written, before the windows go back to the driver, which may hand
//!   them to another process to reprogram while a posted write is still on its way (tt-kmd
//!   #286).

use blackhole_pac::tlb::TlbOrdering;
use komorebi_hal::Xy;

use crate::bar::Bar;
use crate::card::Card;
use crate::error::PcieError;

impl<B: Bar> Card<B> {
    /// Makes every write so far to `tile` land before any later one: first every DRAM write
    /// and spare-window write so far (read back: a command's input pages go through other
    /// windows than its words), then a store fence, and when the tile's window is not Strict,
    /// a read back of the last word written to it (the read returns only after the writes
    /// before it to that tile landed).
    pub fn publish_barrier(&self, tile: Xy) -> Result<(), PcieError> {
        self.dram_landed()?;
        let t = self.tile(tile)?;
        let mut bar = self.bar.borrow_mut();
        bar.fence();
        if self.options.tile_ordering != TlbOrdering::Strict
            && self.options.read_back_before_publish
        {
            if let (Some(w), Some(at)) = (&t.window, *t.written.borrow()) {
                bar.read32(w, at)?;
            }
        }
        Ok(())
    }

    /// Reads back the last word written to each DRAM bank through its own window and the last
    /// word written through the spare window (DRAM pieces, registers), each once: nothing is
    /// read when nothing was written since.
    pub(crate) fn dram_landed(&self) -> Result<(), PcieError> {
        let mut bar = self.bar.borrow_mut();
        let mut pending = self.dram_written.borrow_mut();
        if !pending.is_empty() {
            bar.fence();
        }
        while let Some((&bank, &at)) = pending.first_key_value() {
            if let Some(Some(w)) = self.dram.get(bank as usize) {
                bar.read32(w, at)?;
            }
            pending.remove(&bank);
        }
        let mut spare = self.spare.borrow_mut();
        if let Some(moving) = spare.as_mut() {
            if let Some(at) = moving.written {
                bar.fence();
                bar.read32(&moving.window, at)?;
                moving.written = None;
            }
        }
        Ok(())
    }

    /// Makes every write so far land: DRAM and spare-window writes read back, every tile's
    /// last write through its own window read back, and the last word of the last multicast
    /// read back from every tile through its own window (or the spare).
    pub fn landed(&self) -> Result<(), PcieError> {
        self.dram_landed()?;
        {
            let bar = self.bar.borrow();
            for t in self.tiles.values() {
                let written = *t.written.borrow();
                if let (Some(w), Some(at)) = (&t.window, written) {
                    bar.read32(w, at)?;
                    // Landed: a later barrier has nothing to read back until the next write.
                    *t.written.borrow_mut() = None;
                }
            }
        }
        let last = *self.mcast_written.borrow();
        if let Some(addr) = last {
            for tile in self.tensix().collect::<Vec<_>>() {
                self.read_l1(tile, addr, &mut [0; 4])?;
            }
            *self.mcast_written.borrow_mut() = None;
        }
        Ok(())
    }
}

impl<B: Bar> Drop for Card<B> {
    fn drop(&mut self) {
        // Best effort: a card that cannot take the message has nothing better to say at a drop.
        if self.options.idle_clock_at_drop {
            let _ = self.idle_clock();
        }
        // Every write landed before its window goes back (a card that stopped answering has
        // nothing to drain).
        let _ = self.landed();
        // Closing the device frees whatever is left; freeing here returns the windows of a
        // card that stays open (the simulator's pools, a long-lived driver handle).
        let bar = self.bar.get_mut();
        bar.fence();
        let windows = self
            .tiles
            .values_mut()
            .filter_map(|t| t.window.take())
            .chain(self.dram.iter_mut().filter_map(Option::take))
            .chain(self.spare.get_mut().take().map(|m| m.window))
            .chain(self.mcast.get_mut().take().map(|m| m.window));
        for w in windows {
            let _ = bar.free(w);
        }
    }
}
