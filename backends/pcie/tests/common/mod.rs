//! What the pcie tests share: the simulated card with its accesses tapped ([`Tapped`]), so a
//! test can answer some reads itself (a chip that lies, a clock that moves, telemetry patched)
//! or watch every access (the read-backs a barrier makes), and delegate everything else.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;

use blackhole_pac::tlb::{TlbConfig, TlbSize};
use komorebi_pcie::PcieError;
use komorebi_pcie::bar::{Bar, DeviceIdentity, LockOp, Mapping, WindowHandle};
use komorebi_pcie::sim::{SimBar, SimWindow};

/// One access through a window: the window's index, what it was programmed as then, and the
/// offset of the word read or written (a block's last word).
#[derive(Clone, Debug, PartialEq)]
pub enum Access {
    /// A read.
    Read(u32, Option<TlbConfig>, u64),
    /// A write.
    Write(u32, Option<TlbConfig>, u64),
    /// The window given back.
    Free(u32),
}

/// A word read through a window, as a [`Tap`] sees it.
pub struct Read<'a> {
    /// The card, which the tap may still read.
    pub card: &'a SimBar,
    /// The window.
    pub window: &'a SimWindow,
    /// What the window is programmed as, if anything.
    pub config: Option<&'a TlbConfig>,
    /// The offset in the window.
    pub offset: u64,
}

impl Read<'_> {
    /// The address the word has at its target (the window's base plus the offset).
    pub fn at(&self) -> Option<u64> {
        self.config.map(|c| c.addr + self.offset)
    }
}

/// What a test does with the card's accesses; every method does nothing by default.
pub trait Tap {
    /// Answers a word read (`read32`) instead of the card: `None` lets the card answer. A bulk
    /// `read` is only seen ([`Tap::saw`]), never answered.
    fn read32(&self, read: Read<'_>) -> Option<Result<u32, PcieError>> {
        let _ = read;
        None
    }

    /// Sees every access, before the card does it.
    fn saw(&self, access: Access) {
        let _ = access;
    }
}

/// The simulated card with `tap` on its accesses, and what each window was last programmed as.
pub struct Tapped<T> {
    /// The card.
    pub bar: SimBar,
    /// Each window's configuration, by index.
    pub configs: BTreeMap<u32, TlbConfig>,
    /// The test's tap.
    pub tap: T,
}

impl<T> Tapped<T> {
    /// `bar` tapped by `tap`.
    pub fn new(bar: SimBar, tap: T) -> Self {
        Self {
            bar,
            configs: BTreeMap::new(),
            tap,
        }
    }

    fn config(&self, w: &SimWindow) -> Option<TlbConfig> {
        self.configs.get(&w.index()).copied()
    }
}

/// The offset of the last word of `len` bytes at `offset`.
fn last_word(offset: u64, len: usize) -> u64 {
    offset + len.max(4) as u64 - 4
}

impl<T: Tap> Bar for Tapped<T> {
    type Window = SimWindow;
    fn identity(&self) -> &DeviceIdentity {
        self.bar.identity()
    }
    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<SimWindow, PcieError> {
        self.bar.allocate(size, mapping)
    }
    fn configure(&mut self, w: &mut SimWindow, config: &TlbConfig) -> Result<(), PcieError> {
        self.configs.insert(w.index(), *config);
        self.bar.configure(w, config)
    }
    fn free(&mut self, w: SimWindow) -> Result<(), PcieError> {
        self.tap.saw(Access::Free(w.index()));
        self.bar.free(w)
    }
    fn read32(&self, w: &SimWindow, offset: u64) -> Result<u32, PcieError> {
        let config = self.config(w);
        self.tap.saw(Access::Read(w.index(), config, offset));
        let read = Read {
            card: &self.bar,
            window: w,
            config: config.as_ref(),
            offset,
        };
        match self.tap.read32(read) {
            Some(answer) => answer,
            None => self.bar.read32(w, offset),
        }
    }
    fn write32(&mut self, w: &SimWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        self.tap
            .saw(Access::Write(w.index(), self.config(w), offset));
        self.bar.write32(w, offset, value)
    }
    fn read(&self, w: &SimWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        let last = last_word(offset, buf.len());
        self.tap.saw(Access::Read(w.index(), self.config(w), last));
        self.bar.read(w, offset, buf)
    }
    fn write(&mut self, w: &SimWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        let last = last_word(offset, data.len());
        self.tap.saw(Access::Write(w.index(), self.config(w), last));
        self.bar.write(w, offset, data)
    }
    fn fence(&mut self) {
        self.bar.fence()
    }
    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        self.bar.bar0_read32(offset)
    }
    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        self.bar.bar0_write32(offset, value)
    }
    fn arm_release_write(
        &mut self,
        target: (u8, u8),
        addr: u64,
        value: u32,
    ) -> Result<bool, PcieError> {
        self.bar.arm_release_write(target, addr, value)
    }
    fn resource_lock(&self, index: u8, op: LockOp) -> Result<bool, PcieError> {
        self.bar.resource_lock(index, op)
    }
    fn pass_time(&mut self) -> u64 {
        self.bar.pass_time()
    }
}
