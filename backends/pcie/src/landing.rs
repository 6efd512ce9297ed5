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
//! * [`Card::landed`]: every write so far, the multicast ones read back from every tile until
//!   they read what was written (the loader's barrier after it holds the cores in reset, after
//!   its multicast load, and before it releases the cores).
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
            && let (Some(w), Some(at)) = (&t.window, *t.written.borrow())
        {
            bar.read32(w, at)?;
        }
        Ok(())
    }

    /// Reads the word at `at` of `window` back, asking the bus whether it answers when the
    /// word is all ones (a hung card reads so, and each read of it takes a completion timeout:
    /// the first one stops a drain). A written word may be all ones: only a bus that does not
    /// answer is an error.
    fn read_back(
        &self,
        window: &B::Window,
        at: u64,
        what: impl FnOnce() -> String,
    ) -> Result<u32, PcieError> {
        let v = self.bar.borrow().read32(window, at)?;
        if v == blackhole_pac::arc::HUNG_READ {
            let (answers, niu) = self.niu_answers()?;
            if !answers {
                return Err(PcieError::Hung {
                    what: format!("{} and the {niu} NIU's NOC_NODE_ID", what()),
                });
            }
        }
        Ok(v)
    }

    /// Reads back the last word written to each DRAM bank through its own window and the last
    /// word written through the spare window (DRAM pieces, registers), each once: nothing is
    /// read when nothing was written since.
    pub(crate) fn dram_landed(&self) -> Result<(), PcieError> {
        loop {
            let next = self
                .dram_written
                .borrow()
                .first_key_value()
                .map(|(&bank, &at)| (bank, at));
            let Some((bank, at)) = next else { break };
            if let Some(Some(w)) = self.dram.get(bank as usize) {
                self.bar.borrow_mut().fence();
                self.read_back(w, at, || {
                    format!("the last word written to DRAM bank {bank}")
                })?;
            }
            self.dram_written.borrow_mut().remove(&bank);
        }
        let pending = self.spare.borrow().as_ref().and_then(|m| m.written);
        if let Some(at) = pending {
            self.bar.borrow_mut().fence();
            {
                let spare = self.spare.borrow();
                if let Some(m) = spare.as_ref() {
                    self.read_back(&m.window, at, || {
                        "the last word written through the spare window".into()
                    })?;
                }
            }
            if let Some(m) = self.spare.borrow_mut().as_mut() {
                m.written = None;
            }
        }
        Ok(())
    }

    /// Makes every write so far land: DRAM and spare-window writes read back, every tile's
    /// last write through its own window read back, and the last word of the last multicast
    /// read back from every tile until it reads what was written (within 64 reads a tile,
    /// the card let run between them). The multicast went through another window than the read: as tt-umd's
    /// host-to-device barrier, which polls a flag it wrote until the value matches, the value
    /// and not the read's return is what says it landed.
    pub fn landed(&self) -> Result<(), PcieError> {
        self.dram_landed()?;
        for (&p, t) in &self.tiles {
            let written = *t.written.borrow();
            if let (Some(w), Some(at)) = (&t.window, written) {
                self.read_back(w, at, || format!("the last word written to NoC0 {p}"))?;
                // Landed: a later barrier has nothing to read back until the next write.
                *t.written.borrow_mut() = None;
            }
        }
        let last = *self.mcast_written.borrow();
        if let Some((addr, value)) = last {
            for tile in self.tensix().collect::<Vec<_>>() {
                self.multicast_landed_on(tile, addr, value)?;
            }
            *self.mcast_written.borrow_mut() = None;
        }
        Ok(())
    }

    /// Reads the word at L1 `addr` of `tile` until it is `value`, letting the card run between
    /// reads, at most `LANDING_POLLS` times.
    fn multicast_landed_on(&self, tile: Xy, addr: u32, value: u32) -> Result<(), PcieError> {
        let what = || format!("the multicast's last word at {addr:#x} of NoC0 {tile}");
        let mut seen = 0;
        for _ in 0..LANDING_POLLS {
            seen = match &self.tile(tile)?.window {
                Some(w) => self.read_back(w, addr as u64, what)?,
                None => {
                    let mut b = [0; 4];
                    self.read_l1(tile, addr, &mut b)?;
                    u32::from_le_bytes(b)
                }
            };
            // A word of all ones that should not be: a dead tile, or a hung card.
            if seen != value {
                self.check_alive(seen, what)?;
            }
            if seen == value {
                return Ok(());
            }
            self.pass_time();
        }
        Err(PcieError::Target {
            what: what(),
            why: format!(
                "reads {seen:#x}, not the {value:#x} written, after {LANDING_POLLS} reads: the \
                 multicast did not land"
            ),
        })
    }
}

/// Reads of a tile before a multicast that has not landed there is an error ([`Card::landed`]).
const LANDING_POLLS: u32 = 64;

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
