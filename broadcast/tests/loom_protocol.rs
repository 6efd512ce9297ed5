//! A loom model of the broadcast that runs the real protocol code: the device side
//! ([`Broadcast`]'s `reserve`, `cast`, `arrive`, `finish`) and the compute side
//! ([`compute::receive`], [`compute::done`], [`compute::end`]), over a loom-backed implementation
//! of the HAL traits. There is no hand-kept copy of the protocol to drift from it.
//!
//! # The chip
//!
//! One sender and one receiver (a column of two cores on NoC0; and a column of three, two
//! receivers, window 1 and 2 blocks), window 1 (3 blocks) and 2 (4
//! blocks, so a slot is reused twice; the sender casting block by block, and reading ahead; and 3
//! blocks, which finish pads with an empty one), blocks of one two-word page (so a delivery can
//! be seen half done). The shared words start as an earlier command (sequence 4) left them, with
//! counts past this command's, so a protocol that took them for this command's would be caught.
//! Each tile is ONE loom thread (the model's main thread is the sender, a spawned thread each
//! receiver) running its two kernels, data movement and compute, as two futures polled
//! round-robin by a tiny executor, as the simulator runs them; which kernel a round polls first
//! is a model parameter, and the sound chip runs with both. Loom's cost is in cross-thread
//! interleavings, so only what crosses tiles is a loom atomic:
//!
//! * a receiver's buffer words (the sender's multicasts write them) and its VALID word;
//! * the sender's DONE-BY words of its receivers' ranks (their DONE markers write them);
//! * each tile's remote generation, bumped after every delivery into the tile by another.
//! * each tile's remote generation, bumped after every delivery into the tile by the other one.
//!
//! Everything a tile only touches itself (its other control words, its buffer counters, the
//! sender's own buffer, the marker and VALID sources) is a plain `std` atomic, invisible to loom:
//! the two kernels of a tile interleave only where they pause, in the executor's fixed order.
//! A transfer into another tile's word loom does not track fails the model ("add it to the
//! shared words"), so the split cannot hide a new cross-tile write.
//!
//! Writes are delivered at issue: the issuing kernel reads the source and writes every
//! destination word in order (stronger than the HAL's ordering contract, which is allowed), so
//! `writes_sent` and `writes_acked` always hold. DRAM reads land as late as a NoC may land them:
//! when the kernel waits for them (`reads_done`, or `tagged_reads_done` of their tag), so a cast
//! that waits for the wrong tag sends stale words, and a read issued into a slot still in use
//! is caught at issue. Delivery into the other tile is a sequence of
//! loom stores, so the other tile can run between any two words of it.
//!
//! `Pause` is [`Spin`] (pending once). The executor polls both futures; when a round stored
//! nothing on the tile and no delivery arrived since it began, it parks the tile's thread until
//! the next delivery into it (loom's `park`/`unpark`). A waiting kernel therefore costs loom
//! nothing per spin, and a chip in which both tiles park is a deadlock, which loom reports. The
//! control block's clock advances by one per call of `now`, far below the wait limit.
//!
//! # The checks
//!
//! * no slot is written before the destination's compute popped the block that was in it (each
//!   delivery into a buffer is checked against the destination's `popped` count);
//! * compute reads exactly block `b`'s bytes as block `b` (VALID never seen before its data);
//! * every kernel finishes without a give-up and every block reaches both computes;
//! * after the command, the sender's DONE-BY and the receiver's VALID are clear (no marker landed
//!   after finish cleared them; sound chips only, as the flawed ones fail earlier checks).
//!
//! Flawed chips show the checks fail: a sender whose DONE-BY loads read one block ahead (it
//! reuses a slot before the receiver's DONE), a NoC that holds a block's data multicast
//! until after the VALID issued behind it (VALID overtakes the data), a NoC whose tag
//! completion answers for the other tag, and a sender that reads its first receiver's DONE-BY
//! word for its second's (two receivers). Models of one receiver run at preemption bound
//! [`BOUND`], of two at [`BOUND_TWO_RECEIVERS`] (`LOOM_MAX_PREEMPTIONS` overrides both).
//! Measured (release, 2 cores): 12,000-18,000 executions per sound model of one receiver at
//! bound 3, 31,000 for two receivers at bound 2, the whole file in 12 s;
//! the window-1 DONE flaw is caught from bound 0, the others from bound 1. `--nocapture` prints
//! each model's executions.
//!
//! Not built with `--cfg komorebi_blocking`: there every wait is a plain spinning function, and
//! two kernels cannot share a thread; the protocol source is the same in both builds.

#![cfg(not(komorebi_blocking))]

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32 as StdU32, AtomicU64 as StdU64, Ordering::Relaxed};
use std::task::{Context as TaskContext, Waker};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering::SeqCst};
use loom::thread;

use komorebi_broadcast::area::{self, marker_count};
use komorebi_broadcast::args::{Along, BroadcastArgs};
use komorebi_broadcast::compute;
use komorebi_broadcast::device::{Broadcast, Context};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::noc::{ReadTag, WriteMode};
use komorebi_hal::{
    CircularBuffer, Compute, ControlBlock, DataMovement, L1Addr, LogicalRect, NocAddr, NocId,
    NocMulticast, Rect, Spin, Xy, cb, control, noc,
};

/// The preemption bound every model of one receiver runs at.
const BOUND: usize = 3;
/// The preemption bound of the models of two receivers: three threads at bound 3 take 1.3
/// million executions (90 s), at bound 2 some 31,000 (2 s).
const BOUND_TWO_RECEIVERS: usize = 2;
/// L1 address of the control block.
const CTRL: u32 = 0x1_0000;
/// Most receivers a model runs.
const MAX_RECEIVERS: u8 = 2;
/// Control-block offsets the model holds: broadcast 0's area up to DONE-BY rank
/// [`MAX_RECEIVERS`].
const CTRL_FIRST: u32 = area::CONTROL_BROADCAST;
const CTRL_END: u32 = area::done_by(0, MAX_RECEIVERS) + 4;
/// L1 address of the broadcast's circular buffer.
const CB_BASE: u32 = 0x2_0000;
/// Bytes per page: two words, so a block's delivery can be seen half done.
const PAGE: u32 = 8;
/// Pages per block.
const PAGES: u16 = 1;
const SLOT_BYTES: u32 = PAGE * PAGES as u32;
/// The command's sequence number (the markers carry its low half).
const SEQ: u32 = 0x0003_0005;
/// Cycles (calls of `now`) any wait may last: far more than any execution needs.
const WAIT_LIMIT: u64 = 100_000;
/// What a slot holds before anything was delivered into it.
const EMPTY: u32 = u32::MAX;
const SENDER: usize = 0;

/// Word `i` of block `block`, as DRAM holds it.
fn data(block: u32, i: u32) -> u32 {
    0xDA00_0000 | block << 8 | i
}

/// The block a data word belongs to, if it is one.
fn block_of(word: u32) -> Option<u32> {
    (word >> 24 == 0xDA).then_some((word >> 8) & 0xFFFF)
}

/// A way to break the chip, to show that the model catches it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Flaw {
    None,
    /// The sender's DONE-BY loads of this command read one block more than was marked.
    DoneOneAhead,
    /// The NoC holds a block multicast and delivers it after the VALID multicast behind it.
    ValidOvertakesData,
    /// The NoC's per-tag completion answers for the wrong tag: waiting for tag `t` lands the
    /// reads of the other slot's tag (a sender reading ahead then casts a slot whose reads have
    /// not landed).
    TagsSwapped,
    /// The sender's DONE-BY load of rank 2 answers rank 1's word (a sender that waits for its
    /// first receiver only): only a model of two receivers can see it.
    Rank2ReadsRank1,
}

/// A word of L1: loom-tracked if the other tile writes or reads it, else plain.
enum Word {
    Local(StdU32),
    Shared(AtomicU32),
}

impl Word {
    fn new(shared: bool, v: u32) -> Self {
        if shared {
            Word::Shared(AtomicU32::new(v))
        } else {
            Word::Local(StdU32::new(v))
        }
    }

    fn load(&self) -> u32 {
        match self {
            Word::Local(w) => w.load(Relaxed),
            Word::Shared(w) => w.load(SeqCst),
        }
    }

    fn store(&self, v: u32) {
        match self {
            Word::Local(w) => w.store(v, Relaxed),
            Word::Shared(w) => w.store(v, SeqCst),
        }
    }
}

/// One tile's L1 words, buffer counters and executor state.
struct Tile {
    node: Xy,
    ctrl: Vec<Word>,
    buffer: Vec<Word>,
    /// Cumulative pages pushed and popped (the hardware's wrapping `u16`s).
    pushed: StdU32,
    popped: StdU32,
    stop: StdU32,
    /// Stores this tile's own kernels made: the executor polls again while it moves.
    local: StdU64,
    /// Deliveries into this tile from the other one: the executor parks until it moves.
    remote: AtomicU32,
    /// The tile's loom thread, to unpark after a delivery.
    thread: std::sync::Mutex<Option<thread::Thread>>,
}

impl Tile {
    fn word(&self, addr: u32) -> &Word {
        assert_eq!(addr % 4, 0, "misaligned L1 access at {addr:#x}");
        if (CTRL + CTRL_FIRST..CTRL + CTRL_END).contains(&addr) {
            &self.ctrl[((addr - CTRL - CTRL_FIRST) / 4) as usize]
        } else if (CB_BASE..CB_BASE + self.buffer.len() as u32 * 4).contains(&addr) {
            &self.buffer[((addr - CB_BASE) / 4) as usize]
        } else {
            panic!("L1 address {addr:#x} is outside the model");
        }
    }

    fn touched(&self) {
        self.local.fetch_add(1, Relaxed);
    }
}

/// A transfer whose source was read out at issue.
struct Delivery {
    from: usize,
    to: Vec<usize>,
    dst: u32,
    words: Vec<u32>,
}

struct Chip {
    tiles: Vec<Tile>,
    window: u32,
    flaw: Flaw,
}

impl Chip {
    fn new(nodes: &[Xy], window: u8, flaw: Flaw) -> Self {
        let window = window as u32;
        let ctrl = |tile: usize| {
            (CTRL_FIRST..CTRL_END)
                .step_by(4)
                .map(|off| {
                    // The sender's DONE-BY words of its receivers' ranks, a receiver's VALID.
                    let shared = match tile {
                        SENDER => (1..nodes.len() as u8).any(|rank| off == area::done_by(0, rank)),
                        _ => off == area::area(0) + area::VALID,
                    };
                    // The shared words as an earlier command (sequence 4) left them, counts past
                    // this command's: a protocol that read them as this command's would reuse a
                    // slot early or hand compute a block before its data, which the checks catch.
                    let stale = match tile {
                        SENDER => area::marker(SEQ as u16 - 1, u16::MAX),
                        _ => area::marker(SEQ as u16 - 1, 3),
                    };
                    Word::new(shared, if shared { stale } else { 0 })
                })
                .collect()
        };
        let buffer = |tile: usize| {
            (0..window * SLOT_BYTES / 4)
                .map(|_| Word::new(tile != SENDER, EMPTY))
                .collect()
        };
        Chip {
            tiles: nodes
                .iter()
                .enumerate()
                .map(|(t, &node)| Tile {
                    node,
                    ctrl: ctrl(t),
                    buffer: buffer(t),
                    pushed: StdU32::new(0),
                    popped: StdU32::new(0),
                    stop: StdU32::new(0),
                    local: StdU64::new(0),
                    remote: AtomicU32::new(0),
                    thread: std::sync::Mutex::new(None),
                })
                .collect(),
            window,
            flaw,
        }
    }

    /// Checks that a delivery of `block` into `tile`'s buffer at `addr` reuses its slot only
    /// after that tile's compute popped the block that was in it.
    fn check_slot(&self, tile: usize, addr: u32, block: Option<u32>) {
        if !(CB_BASE..CB_BASE + self.window * SLOT_BYTES).contains(&addr) {
            return;
        }
        // Words that are no block's (a slot sent before its reads landed): the receiving
        // compute catches them as data that had not arrived.
        let Some(block) = block else {
            return;
        };
        assert_eq!(
            (addr - CB_BASE) / SLOT_BYTES,
            block % self.window,
            "block {block} delivered into the wrong slot"
        );
        if let Some(previous) = block.checked_sub(self.window) {
            let popped = self.tiles[tile].popped.load(Relaxed) / PAGES as u32;
            assert!(
                popped > previous,
                "tile {tile}: block {block} delivered into the slot of block {previous} before \
                 its compute popped it (slot reused before its DONE)"
            );
        }
    }

    /// Writes a transfer into its destinations, word by word; wakes every other tile it wrote.
    fn deliver(&self, d: Delivery) {
        for &to in &d.to {
            let tile = &self.tiles[to];
            self.check_slot(to, d.dst, block_of(d.words[0]));
            for (i, &w) in d.words.iter().enumerate() {
                let word = tile.word(d.dst + 4 * i as u32);
                if to != d.from {
                    assert!(
                        matches!(word, Word::Shared(_)),
                        "tile {} writes word {:#x} of tile {to}, which loom does not track: add \
                         it to the shared words",
                        d.from,
                        d.dst + 4 * i as u32
                    );
                }
                word.store(w);
            }
            if to == d.from {
                tile.touched();
            } else {
                tile.remote.fetch_add(1, SeqCst);
                if let Some(t) = tile.thread.lock().unwrap().as_ref() {
                    t.unpark();
                }
            }
        }
    }
}

/// A kernel's NoC0 handle.
struct LoomNoc {
    chip: Arc<Chip>,
    tile: usize,
    /// A block multicast held back (only with [`Flaw::ValidOvertakesData`]).
    held: Option<Delivery>,
    /// DRAM reads issued and not landed yet, with their tag (`None`: untagged). A read lands
    /// only when the kernel waits for it (`reads_done`, or `tagged_reads_done` of its tag), the
    /// latest a NoC may land it: a slot cast before its own reads were waited for goes out
    /// with stale words, which the receiver's compute catches.
    reads: Vec<(Option<ReadTag>, Delivery)>,
}

impl noc::ErrorType for LoomNoc {
    type Error = noc::ErrorKind;
}

impl LoomNoc {
    fn tile_at(&self, node: Xy) -> Result<usize, noc::ErrorKind> {
        self.chip
            .tiles
            .iter()
            .position(|t| t.node == node)
            .ok_or(noc::ErrorKind::InvalidAddress)
    }

    /// Reads the source out (the transfer has left once this returns).
    fn source(&self, src: u32, len: u32) -> Vec<u32> {
        let tile = &self.chip.tiles[self.tile];
        (0..len / 4)
            .map(|i| tile.word(src + 4 * i).load())
            .collect()
    }

    fn flush(&mut self) {
        if let Some(d) = self.held.take() {
            self.chip.deliver(d);
        }
    }

    /// Issues a read of a whole block from DRAM into this tile (it lands when waited for).
    fn issue_read(&mut self, src: NocAddr, dst: L1Addr, len: u32, tag: Option<ReadTag>) {
        assert_eq!(len, SLOT_BYTES, "the model reads whole blocks");
        let block = (src.local() / SLOT_BYTES as u64) as u32;
        // The slot must be free when the read is issued, not only when it lands.
        self.chip.check_slot(self.tile, dst.get(), Some(block));
        let d = Delivery {
            from: self.tile,
            to: vec![self.tile],
            dst: dst.get(),
            words: (0..len / 4).map(|i| data(block, i)).collect(),
        };
        self.reads.push((tag, d));
    }

    /// Lands the reads `which` selects.
    fn land(&mut self, which: impl Fn(Option<ReadTag>) -> bool) {
        let (now, later): (Vec<_>, Vec<_>) = self.reads.drain(..).partition(|(t, _)| which(*t));
        self.reads = later;
        for (_, d) in now {
            self.chip.deliver(d);
        }
    }
}

impl NocMulticast for LoomNoc {
    fn noc(&self) -> NocId {
        NocId::Noc0
    }

    fn node(&self) -> Xy {
        self.chip.tiles[self.tile].node
    }

    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), noc::ErrorKind> {
        self.issue_read(src, dst, len, None);
        Ok(())
    }

    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), noc::ErrorKind> {
        self.issue_read(src, dst, len, Some(tag));
        Ok(())
    }

    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, noc::ErrorKind> {
        let tag = if self.chip.flaw == Flaw::TagsSwapped {
            ReadTag::cyclic(tag.get() as u32 + 1)
        } else {
            tag
        };
        self.land(|t| t == Some(tag));
        Ok(true)
    }

    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        _mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        let to = self.tile_at(dst.node())?;
        let words = self.source(src.get(), len);
        self.chip.deliver(Delivery {
            from: self.tile,
            to: vec![to],
            dst: dst.local() as u32,
            words,
        });
        Ok(())
    }

    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        _mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        let to: Vec<usize> = (0..self.chip.tiles.len())
            .filter(|&t| t != self.tile && rect.contains(self.chip.tiles[t].node))
            .collect();
        if to.is_empty() {
            return Ok(());
        }
        let d = Delivery {
            from: self.tile,
            to,
            dst: dst.get(),
            words: self.source(src.get(), len),
        };
        if self.chip.flaw == Flaw::ValidOvertakesData && len != 4 {
            self.flush();
            self.held = Some(d);
        } else {
            self.chip.deliver(d);
            self.flush();
        }
        Ok(())
    }

    fn reads_done(&mut self) -> Result<bool, noc::ErrorKind> {
        self.land(|_| true);
        Ok(true)
    }

    fn writes_sent(&mut self) -> Result<bool, noc::ErrorKind> {
        Ok(true)
    }

    fn writes_acked(&mut self) -> Result<bool, noc::ErrorKind> {
        self.flush();
        Ok(true)
    }

    fn resync(&mut self) -> Result<(), noc::ErrorKind> {
        Ok(())
    }
}

/// A kernel's handle to its tile's control block.
struct LoomCtrl {
    chip: Arc<Chip>,
    tile: usize,
    clock: u64,
}

impl control::ErrorType for LoomCtrl {
    type Error = control::ErrorKind;
}

impl ControlBlock for LoomCtrl {
    fn len(&self) -> u32 {
        CTRL_END
    }

    fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
        L1Addr::new(CTRL + offset).map_err(|_| control::ErrorKind::OutOfRange)
    }

    fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
        let read = match self.chip.flaw {
            Flaw::Rank2ReadsRank1 if offset == area::done_by(0, 2) => area::done_by(0, 1),
            _ => offset,
        };
        let word = self.chip.tiles[self.tile].word(CTRL + read).load();
        if self.chip.flaw == Flaw::DoneOneAhead
            && offset == area::done_by(0, 1)
            && marker_count(word, SEQ as u16).is_some()
        {
            return Ok(word + 1);
        }
        Ok(word)
    }

    fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind> {
        let tile = &self.chip.tiles[self.tile];
        tile.word(CTRL + offset).store(value);
        tile.touched();
        Ok(())
    }

    fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
        Ok(self.chip.tiles[self.tile].stop.load(Relaxed) != 0)
    }

    fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
        let tile = &self.chip.tiles[self.tile];
        tile.stop.store(1, Relaxed);
        tile.touched();
        Ok(())
    }

    fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
        Ok(WAIT_LIMIT)
    }

    fn now(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}

/// A kernel's handle to its tile's broadcast buffer: the producer's (data movement) or the
/// consumer's (compute), each keeping its own pointer as the baby cores do.
struct LoomCb {
    chip: Arc<Chip>,
    tile: usize,
    /// Pages from the base to the write pointer (producer) or the read pointer (consumer).
    at: u16,
}

impl cb::ErrorType for LoomCb {
    type Error = cb::ErrorKind;
}

impl LoomCb {
    fn tile(&self) -> &Tile {
        &self.chip.tiles[self.tile]
    }

    fn advance(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        if self.at + pages > self.capacity() {
            return Err(cb::ErrorKind::Wrap);
        }
        self.at = (self.at + pages) % self.capacity();
        Ok(())
    }
}

impl CircularBuffer for LoomCb {
    fn capacity(&self) -> u16 {
        (self.chip.window * PAGES as u32) as u16
    }

    fn page_size(&self) -> u32 {
        PAGE
    }

    fn base(&self) -> L1Addr {
        L1Addr::new(CB_BASE).unwrap()
    }

    fn pushed(&mut self) -> Result<u16, cb::ErrorKind> {
        Ok(self.tile().pushed.load(Relaxed) as u16)
    }

    fn popped(&mut self) -> Result<u16, cb::ErrorKind> {
        Ok(self.tile().popped.load(Relaxed) as u16)
    }

    fn write_ptr(&self) -> L1Addr {
        L1Addr::new(CB_BASE + self.at as u32 * PAGE).unwrap()
    }

    fn push(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        if self.pages_free()? < pages {
            return Err(cb::ErrorKind::Overflow);
        }
        self.advance(pages)?;
        self.tile().pushed.fetch_add(pages as u32, Relaxed);
        self.tile().touched();
        Ok(())
    }

    fn read_ptr(&self) -> L1Addr {
        L1Addr::new(CB_BASE + self.at as u32 * PAGE).unwrap()
    }

    fn pop(&mut self, pages: u16) -> Result<(), cb::ErrorKind> {
        if self.pages_ready()? < pages {
            return Err(cb::ErrorKind::Underflow);
        }
        self.advance(pages)?;
        self.tile().popped.fetch_add(pages as u32, Relaxed);
        self.tile().touched();
        Ok(())
    }

    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), cb::ErrorKind> {
        if page >= self.pages_ready()? {
            return Err(cb::ErrorKind::Underflow);
        }
        let len = buf.len() as u32;
        if offset + len > PAGE || offset % 4 != 0 || len % 4 != 0 {
            return Err(cb::ErrorKind::OutOfRange);
        }
        let page = (self.at as u32 + page as u32) % self.capacity() as u32;
        let addr = CB_BASE + page * PAGE + offset;
        for (i, chunk) in buf.chunks_mut(4).enumerate() {
            let w = self.tile().word(addr + 4 * i as u32).load();
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        Ok(())
    }
}

fn ctrl(chip: &Arc<Chip>, tile: usize) -> LoomCtrl {
    LoomCtrl {
        chip: chip.clone(),
        tile,
        clock: 0,
    }
}

fn buffer(chip: &Arc<Chip>, tile: usize) -> LoomCb {
    LoomCb {
        chip: chip.clone(),
        tile,
        at: 0,
    }
}

/// The group of a chip of `tiles` cores: a column, logical (0,0) sending to (0,1) and on.
fn group(tiles: usize) -> LogicalRect {
    LogicalRect::new(0, 0, 1, tiles as u8)
}

fn context(tiles: usize) -> Context {
    Context {
        sequence: SEQ,
        group: group(tiles),
        exclusive: true,
    }
}

/// The data-movement kernel of tile `tile`, running the real device side; a sender that
/// `reads_ahead` reserves and reads every block whose slot is free before it casts the next
/// (the loop of the device module's "Reading ahead").
async fn mover(chip: Arc<Chip>, tile: usize, words: [u32; 11], blocks: u32, reads_ahead: bool) {
    let mut dm = DataMovement {
        noc: LoomNoc {
            chip: chip.clone(),
            tile,
            held: None,
            reads: Vec::new(),
        },
        ctrl: ctrl(&chip, tile),
        pause: Spin,
    };
    let mut b = Broadcast::new(
        &mut dm,
        buffer(&chip, tile),
        &context(chip.tiles.len()),
        &words,
        0,
    );
    assert!(b.ok() && b.included(), "tile {tile}: words refused");
    assert_eq!(b.sender(), tile == SENDER);
    let window = BroadcastArgs::decode(&words).unwrap().window as u32;
    let (mut reserved, mut most_ahead) = (0, 0);
    for block in 0..blocks {
        if b.sender() {
            let last = if reads_ahead {
                blocks.min(block + window)
            } else {
                block + 1
            };
            while reserved < last && (reserved == block || b.reserve_ready(reserved)) {
                let slot = b.reserve(&mut dm, reserved).await.expect("sender: reserve");
                let dram =
                    NocAddr::new(Xy::new(0, 0).unwrap(), (reserved * SLOT_BYTES) as u64).unwrap();
                let tag = b.read_tag(reserved);
                dm.noc.read_tagged(dram, slot, SLOT_BYTES, tag).unwrap();
                reserved += 1;
            }
            most_ahead = most_ahead.max(reserved - block - 1);
            b.cast(&mut dm, block).await.expect("sender: cast");
        } else {
            b.arrive(&mut dm, block).await.expect("receiver: arrive");
        }
    }
    b.finish(&mut dm)
        .await
        .unwrap_or_else(|g| panic!("tile {tile}: finish: {g}"));
    // The first lap's slots are all free: a sender reading ahead had window - 1 blocks in
    // flight beyond the one it cast.
    if b.sender() && reads_ahead {
        assert_eq!(most_ahead, (window - 1).min(blocks.saturating_sub(1)));
    }
}

/// The compute kernel of tile `tile`, running the real compute side and checking every byte.
async fn consumer(chip: Arc<Chip>, tile: usize, window: u8, blocks: u32) {
    let mut c = Compute {
        ctrl: ctrl(&chip, tile),
        pause: Spin,
    };
    let mut cb = buffer(&chip, tile);
    for block in 0..blocks {
        compute::receive(&mut c, &mut cb, PAGES)
            .await
            .unwrap_or_else(|e| panic!("tile {tile}: receive block {block}: {e}"));
        for page in 0..PAGES {
            let mut buf = [0u8; PAGE as usize];
            cb.read_page(page, 0, &mut buf).unwrap();
            for (i, w) in buf.chunks(4).enumerate() {
                let got = u32::from_le_bytes(w.try_into().unwrap());
                let i = page as u32 * PAGE / 4 + i as u32;
                if got == data(block, i) {
                    continue;
                }
                match block_of(got) {
                    Some(b) if b > block => panic!(
                        "tile {tile}: block {block} was overwritten by block {b} before its DONE"
                    ),
                    _ => panic!(
                        "tile {tile}: block {block} handed to compute before its data arrived \
                         (VALID seen before the data): word {i} is {got:#x}"
                    ),
                }
            }
        }
        compute::done(&mut cb, PAGES).unwrap();
    }
    compute::end(&mut c, &mut cb, PAGES, window, blocks)
        .await
        .unwrap_or_else(|e| panic!("tile {tile}: end: {e}"));
}

/// Which of a tile's kernels its executor polls first in every round.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum First {
    DataMovement,
    Compute,
}

/// Runs tile `tile`'s two kernels to the end, polled round-robin in the order `first` says.
/// When a round changed nothing on the tile and nothing arrived since it began, parks until a
/// delivery from the other tile.
fn run_tile(chip: Arc<Chip>, tile: usize, words: [u32; 11], m: Model) {
    let t = &chip.tiles[tile];
    let dm: Pin<Box<dyn Future<Output = ()>>> =
        Box::pin(mover(chip.clone(), tile, words, m.blocks, m.reads_ahead));
    let compute: Pin<Box<dyn Future<Output = ()>>> =
        Box::pin(consumer(chip.clone(), tile, m.window, m.blocks));
    let mut kernels = match m.first {
        First::DataMovement => [Some(dm), Some(compute)],
        First::Compute => [Some(compute), Some(dm)],
    };
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        let seen = t.remote.load(SeqCst);
        let local = t.local.load(Relaxed);
        for k in &mut kernels {
            if k.as_mut()
                .is_some_and(|f| f.as_mut().poll(&mut cx).is_ready())
            {
                *k = None;
            }
        }
        if kernels.iter().all(Option::is_none) {
            // No later delivery may unpark this thread while it joins the other.
            *t.thread.lock().unwrap() = None;
            return;
        }
        if t.local.load(Relaxed) != local {
            continue;
        }
        while t.remote.load(SeqCst) == seen {
            thread::park();
        }
    }
}

/// One model: the chip's window and blocks, its flaw, and the executors' poll order.
#[derive(Copy, Clone, Debug)]
struct Model {
    window: u8,
    blocks: u32,
    flaw: Flaw,
    first: First,
    /// The sender reads blocks ahead of the one it casts.
    reads_ahead: bool,
    /// Receivers (1 or 2): each a loom thread of its own.
    receivers: u8,
}

fn model(m: Model) {
    let Model {
        window,
        blocks,
        flaw,
        ..
    } = m;
    let geometry = common::blackhole(0);
    let params = BroadcastParams {
        broadcast: 0,
        cb: 0,
        window,
        pages: PAGES,
    };
    assert!((1..=MAX_RECEIVERS).contains(&m.receivers));
    let tiles = 1 + m.receivers as usize;
    let g = group(tiles);
    let all = broadcast_args(&geometry, g, g, Along::Column, NocId::Noc0, params).unwrap();
    let words: Vec<[u32; 11]> = (0..tiles as u8)
        .map(|y| all.iter().find(|a| a.core == (0, y)).unwrap().words)
        .collect();
    let nodes: Vec<Xy> = words
        .iter()
        .map(|w| {
            let a = BroadcastArgs::decode(w).unwrap();
            Xy::new(a.core.0, a.core.1).unwrap()
        })
        .collect();
    assert_eq!(BroadcastArgs::decode(&words[SENDER]).unwrap().rank, 0);

    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(
        std::env::var("LOOM_MAX_PREEMPTIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(match m.receivers {
                1 => BOUND,
                _ => BOUND_TWO_RECEIVERS,
            }),
    );
    // Executions explored (printed with `--nocapture`).
    let runs = std::sync::Arc::new(StdU64::new(0));
    let counted = runs.clone();
    builder.check(move || {
        counted.fetch_add(1, Relaxed);
        let chip = Arc::new(Chip::new(&nodes, window, flaw));
        // Every handle is known before any delivery into its tile (receivers deliver only into
        // the sender, which runs once all are spawned): an unpark is never lost.
        *chip.tiles[SENDER].thread.lock().unwrap() = Some(thread::current());
        let receivers: Vec<_> = (1..tiles)
            .map(|tile| {
                let (c, w) = (chip.clone(), words[tile]);
                let receiver = thread::spawn(move || run_tile(c, tile, w, m));
                *chip.tiles[tile].thread.lock().unwrap() = Some(receiver.thread().clone());
                receiver
            })
            .collect();
        run_tile(chip.clone(), SENDER, words[SENDER], m);
        for receiver in receivers {
            receiver.join().unwrap();
        }
        // Every block reached every compute, every DONE the sender (finish waited for them).
        for t in &chip.tiles {
            assert_eq!(
                t.popped.load(Relaxed),
                blocks.next_multiple_of(window as u32) * PAGES as u32
            );
            assert_eq!(t.stop.load(Relaxed), 0);
        }
        // And finish cleared the shared words: no marker landed after the clear. (A flawed
        // sender leaves one too; its models show the check they are for.)
        if flaw == Flaw::None {
            for rank in 1..tiles {
                let done_by = chip.tiles[SENDER]
                    .word(CTRL + area::done_by(0, rank as u8))
                    .load();
                let valid = chip.tiles[rank]
                    .word(CTRL + area::area(0) + area::VALID)
                    .load();
                assert_eq!(
                    (done_by, valid),
                    (0, 0),
                    "rank {rank}: a marker after finish's clear"
                );
            }
        }
    });
    eprintln!("{m:?}: {} executions", runs.load(Relaxed));
}

fn sound(window: u8, blocks: u32, first: First) {
    model(Model {
        window,
        blocks,
        flaw: Flaw::None,
        first,
        reads_ahead: false,
        receivers: 1,
    });
}

fn reading_ahead(window: u8, blocks: u32, first: First) {
    model(Model {
        window,
        blocks,
        flaw: Flaw::None,
        first,
        reads_ahead: true,
        receivers: 1,
    });
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_1_delivers_every_byte_and_never_deadlocks() {
    sound(1, 3, First::DataMovement);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_1_compute_polled_first() {
    sound(1, 3, First::Compute);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_2_delivers_every_byte_and_never_deadlocks() {
    sound(2, 4, First::DataMovement);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_2_compute_polled_first() {
    sound(2, 4, First::Compute);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn blocks_not_a_multiple_of_the_window_end_with_padding() {
    // Three blocks at window 2: finish pushes one empty block, which compute pops.
    sound(2, 3, First::DataMovement);
    sound(2, 3, First::Compute);
    reading_ahead(2, 3, First::DataMovement);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_2_reading_ahead_delivers_every_byte_and_never_deadlocks() {
    reading_ahead(2, 4, First::DataMovement);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn window_2_reading_ahead_compute_polled_first() {
    reading_ahead(2, 4, First::Compute);
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "slot reused before its DONE")]
fn a_sender_that_reads_done_one_block_ahead_is_caught() {
    model(Model {
        window: 1,
        blocks: 3,
        flaw: Flaw::DoneOneAhead,
        first: First::DataMovement,
        reads_ahead: false,
        receivers: 1,
    });
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "slot reused before its DONE")]
fn a_sender_that_reads_done_one_block_ahead_is_caught_at_window_2() {
    model(Model {
        window: 2,
        blocks: 4,
        flaw: Flaw::DoneOneAhead,
        first: First::Compute,
        reads_ahead: true,
        receivers: 1,
    });
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "handed to compute before its data arrived")]
fn a_noc_whose_tag_completion_answers_for_the_wrong_tag_is_caught_reading_ahead() {
    model(Model {
        window: 2,
        blocks: 4,
        flaw: Flaw::TagsSwapped,
        first: First::DataMovement,
        reads_ahead: true,
        receivers: 1,
    });
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "VALID seen before the data")]
fn a_noc_that_lets_valid_overtake_the_data_is_caught() {
    model(Model {
        window: 1,
        blocks: 2,
        flaw: Flaw::ValidOvertakesData,
        first: First::DataMovement,
        reads_ahead: false,
        receivers: 1,
    });
}

/// Two receivers, each a thread of its own: the sender waits for both ranks' DONE-BY words
/// before it reuses a slot, and each receiver's markers land in its own rank's word. Window 1
/// and 2 blocks at preemption bound 2 (three threads multiply loom's interleavings).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
fn two_receivers_deliver_every_byte_and_never_deadlock() {
    model(Model {
        window: 1,
        blocks: 2,
        flaw: Flaw::None,
        first: First::DataMovement,
        reads_ahead: false,
        receivers: 2,
    });
}

/// The model of two receivers catches a sender that waits for its first receiver only.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "loom model: slow unoptimized; run with --release (CI does)"
)]
#[should_panic(expected = "before its compute popped it")]
fn a_sender_that_waits_for_its_first_receiver_only_is_caught() {
    model(Model {
        window: 1,
        blocks: 2,
        flaw: Flaw::Rank2ReadsRank1,
        first: First::DataMovement,
        reads_ahead: false,
        receivers: 2,
    });
}
