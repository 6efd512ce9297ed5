//! A command as a kernel reads it from its slot, and the control block a handler body sees
//! (whose wait limit is the command's).

use komorebi_hal::ControlBlock;
use komorebi_hal::LogicalRect;
use komorebi_hal::control::{self, Error as _};

use komorebi_hal::Role;

use crate::abi::{self, MAX_PROGRAM_WORDS, SLOT_HEADER_WORDS};

/// One command, decoded from its slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The tile's command index (1-based, consecutive per tile).
    pub index: u32,
    /// The command's sequence number (global).
    pub sequence: u32,
    /// Handler id.
    pub handler: u16,
    /// Flags (`abi::FLAG_EXCLUSIVE`).
    pub flags: u16,
    /// The group it was built for.
    pub group: LogicalRect,
    /// Cycles any single wait may last.
    pub wait_limit: u64,
    counts: [u8; 3],
    words: [u32; MAX_PROGRAM_WORDS],
}

impl Command {
    /// A command to write into a slot (host side, and tests).
    pub fn new(
        index: u32,
        sequence: u32,
        handler: u16,
        flags: u16,
        group: LogicalRect,
        wait_limit: u64,
    ) -> Self {
        Self {
            index,
            sequence,
            handler,
            flags,
            group,
            wait_limit,
            counts: [0; 3],
            words: [0; MAX_PROGRAM_WORDS],
        }
    }

    /// Sets the program words of each kernel; `None` if they do not fit the slot together
    /// (at most 255 per kernel and [`MAX_PROGRAM_WORDS`] in all).
    pub fn with_words(mut self, reader: &[u32], writer: &[u32], compute: &[u32]) -> Option<Self> {
        let total = reader.len() + writer.len() + compute.len();
        if total > MAX_PROGRAM_WORDS || [reader, writer, compute].iter().any(|w| w.len() > 255) {
            return None;
        }
        let mut at = 0;
        for (i, w) in [reader, writer, compute].into_iter().enumerate() {
            self.words[at..at + w.len()].copy_from_slice(w);
            self.counts[i] = w.len() as u8;
            at += w.len();
        }
        Some(self)
    }

    /// True when the command carries `EXCLUSIVE`.
    pub fn exclusive(&self) -> bool {
        self.flags & abi::FLAG_EXCLUSIVE != 0
    }

    /// The program words of `role`.
    pub fn words(&self, role: Role) -> &[u32] {
        let i = role.index();
        let start: usize = self.counts.iter().take(i).map(|&c| c as usize).sum();
        let len = self.counts.get(i).map_or(0, |&c| c as usize);
        // `with_words` and `load` keep the counts within the slot: never empty by accident.
        self.words.get(start..start + len).unwrap_or(&[])
    }

    /// The slot's words: header then program words (word 0, the index, is what publishes it:
    /// a host writes it last).
    pub fn slot_words(&self) -> ([u32; SLOT_HEADER_WORDS], &[u32]) {
        let total: usize = self.counts.iter().map(|&c| c as usize).sum();
        let header = [
            self.index,
            self.sequence,
            self.handler as u32 | (self.flags as u32) << 16,
            self.group.word(),
            self.wait_limit as u32,
            (self.wait_limit >> 32) as u32,
            self.counts[0] as u32 | (self.counts[1] as u32) << 8 | (self.counts[2] as u32) << 16,
            0,
        ];
        (header, &self.words[..total])
    }

    /// Reads the command in the slot at `slot` (an offset of the control block) into `self`,
    /// in place: a command is ~0.5 KiB, which a kernel keeps once rather than copying on a
    /// stack of 2 to 8 KiB (a Wormhole TRISC's local RAM to a Blackhole data-movement core's). `Err(None)` when the word counts do not fit (a malformed command: it is
    /// refused; `self` then holds its header and no words), `Err(Some(kind))` when the control
    /// block fails.
    pub fn load<K: ControlBlock>(
        &mut self,
        ctrl: &mut K,
        slot: u32,
    ) -> Result<(), Option<control::ErrorKind>> {
        let mut h = [0u32; SLOT_HEADER_WORDS];
        ctrl.load_words(slot, 4, &mut h)
            .map_err(|e| Some(e.kind()))?;
        self.index = h[0];
        self.sequence = h[1];
        self.handler = h[2] as u16;
        self.flags = (h[2] >> 16) as u16;
        self.group = LogicalRect::from_word(h[3]);
        self.wait_limit = h[4] as u64 | (h[5] as u64) << 32;
        let counts = [h[6] as u8, (h[6] >> 8) as u8, (h[6] >> 16) as u8];
        self.counts = [0; 3];
        let total: usize = counts.iter().map(|&n| n as usize).sum();
        if total > MAX_PROGRAM_WORDS {
            return Err(None);
        }
        let first = slot + 4 * SLOT_HEADER_WORDS as u32;
        let words = self.words.get_mut(..total).ok_or(None)?;
        ctrl.load_words(first, 4, words)
            .map_err(|e| Some(e.kind()))?;
        self.counts = counts;
        Ok(())
    }
}

/// The control block as a handler body sees it: every call goes to the tile's control block,
/// except `wait_limit`, which is the command's.
#[derive(Debug)]
pub struct CommandCtrl<'a, K> {
    ctrl: &'a mut K,
    wait_limit: u64,
    ignore_stop: bool,
}

impl<'a, K> CommandCtrl<'a, K> {
    /// `ctrl` with the wait limit `wait_limit`.
    pub fn new(ctrl: &'a mut K, wait_limit: u64) -> Self {
        Self {
            ctrl,
            wait_limit,
            ignore_stop: false,
        }
    }

    /// `ctrl` with the wait limit `wait_limit` and a stop flag that always reads false: the
    /// recovery waits after a give-up, which must finish although the tile's stop flag is still
    /// set (the reporter clears it once every kernel is done).
    pub fn recovery(ctrl: &'a mut K, wait_limit: u64) -> Self {
        Self {
            ctrl,
            wait_limit,
            ignore_stop: true,
        }
    }
}

impl<K: ControlBlock> control::ErrorType for CommandCtrl<'_, K> {
    type Error = K::Error;
}

impl<K: ControlBlock> ControlBlock for CommandCtrl<'_, K> {
    fn len(&self) -> u32 {
        self.ctrl.len()
    }
    fn addr(&self, offset: u32) -> Result<komorebi_hal::L1Addr, K::Error> {
        self.ctrl.addr(offset)
    }
    fn load(&mut self, offset: u32) -> Result<u32, K::Error> {
        self.ctrl.load(offset)
    }
    fn load_words(&mut self, first: u32, stride: u32, words: &mut [u32]) -> Result<(), K::Error> {
        self.ctrl.load_words(first, stride, words)
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), K::Error> {
        self.ctrl.store(offset, value)
    }
    fn stop_requested(&mut self) -> Result<bool, K::Error> {
        if self.ignore_stop {
            Ok(false)
        } else {
            self.ctrl.stop_requested()
        }
    }
    fn request_stop(&mut self) -> Result<(), K::Error> {
        self.ctrl.request_stop()
    }
    fn wait_limit(&mut self) -> Result<u64, K::Error> {
        Ok(self.wait_limit)
    }
    fn now(&mut self) -> u64 {
        self.ctrl.now()
    }
}
