//! Setting a core's part up: the checks of its broadcast words against the command, its NoC,
//! its core and its buffer (`Broadcast::new`), and the refusal of words that fail them.

use komorebi_hal::cb::{CircularBuffer, Error as _};
use komorebi_hal::control::ControlBlock;
use komorebi_hal::noc::{NocMulticast, ReadTag};
use komorebi_hal::{DataMovement, L1Addr, Pause};

use super::cause::{Cause, ctrl_cause};
use super::context::Context;
use super::part::Part;
use super::pump::Popped;
use super::state::Broadcast;
use crate::area::{self, Where};
use crate::args::BroadcastArgs;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<C: CircularBuffer> Broadcast<C> {
    /// Reads this core's broadcast words at `words[first..first + 11]` and checks them against
    /// the command, this kernel's NoC and core, and the buffer `cb`. On any mismatch the
    /// broadcast is not [`ok`](Self::ok) and a `broadcast_begin` give-up is recorded.
    ///
    /// The broadcast keeps `cb` (lent back by [`buffer`](Self::buffer)) and never returns it: a
    /// kernel that keeps one buffer handle across commands passes `&mut` it, a
    /// [`CircularBuffer`] too.
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
            done_known: 0,
            blocks_sent: 0,
            wait_cycles: 0,
            failed: None,
            finished: false,
            reserved_slot: L1Addr::ZERO,
            tags_fit: false,
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
        // A handle may place its write pointer at slot 0 whatever its counters hold (the
        // firmware's does): pages left in them would put this command's blocks in other slots.
        let free = self.cb.pages_free().map_err(|e| Cause::Cb(e.kind()))?;
        if free != self.cb.capacity() {
            return Err(Cause::BufferNotEmpty {
                pages: self.cb.capacity().wrapping_sub(free),
            });
        }
        // The whole buffer's bytes, not only a slot's: every slot's offset then fits (the
        // window's slots are `capacity` pages), and a slot must keep the next one word-aligned.
        // A page of no bytes would put every slot at the base, and only the first read or
        // multicast of one (a zero length, refused by the NoC) would give up, in the wrong place.
        let page = self.cb.page_size();
        match expected.checked_mul(page) {
            Some(_) if page != 0 && page % 4 == 0 => self.slot_bytes = args.pages as u32 * page,
            _ => return Err(Cause::PageSize { bytes: page }),
        }
        self.tags_fit = ReadTag::fits(args.pages as u32, page);
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
}
