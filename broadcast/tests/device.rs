//! Interaction tests of the device side against komorebi-mock: the exact NoC calls (in a
//! `Sequence`), the exact control-block stores and buffer pushes, for sender, receiver,
//! padding, both broadcasts, and every give-up path.
//!
//! The control block and circular buffer mocks are backed by a shared `State` so that the
//! protocol sees consistent words and counters, and every store and push is logged. The control
//! block is 0x1000 bytes, as a tile's is: a load or store beyond it, or not on a word, fails as
//! a backend's would.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use komorebi_broadcast::area::{self, GiveUpRecord, Where, marker};
use komorebi_broadcast::args::{Along, BroadcastArgs};
use komorebi_broadcast::device::{Broadcast, Cause, Context, GiveUp};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::DataMovement;
use komorebi_hal::LogicalRect;
use komorebi_hal::control;
use komorebi_hal::noc::{self, NocMulticast, PageReads, ReadTag, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Spin, Xy, block_on};
use komorebi_mock::{MockCircularBuffer, MockControlBlock, MockNocMulticast};
use mockall::Sequence;
use mockall::predicate::eq;

const CTRL: u32 = 0x1_0000;
const CB_BASE: u32 = 0x2_0000;
const PAGE: u32 = 64;
const PAGES: u16 = 2;
const WINDOW: u8 = 2;
const SEQ: u32 = 0x0001_0007;
const S16: u16 = 7;

/// How the fake compute kernel pops.
#[derive(Copy, Clone, PartialEq)]
enum ComputeMode {
    /// Pops nothing.
    Idle,
    /// Every read of `popped` first pops everything pushed.
    PopsAll,
    /// Every read of `pages_ready` first pops one block (`PAGES` pages), if one is there.
    PopsABlockPerReady,
}

struct State {
    words: BTreeMap<u32, u32>,
    stores: Vec<(u32, u32)>,
    loads: Vec<u32>,
    clock: u64,
    stop: bool,
    stops_requested: u32,
    pushed: u16,
    popped: u16,
    pushes: Vec<u16>,
    compute: ComputeMode,
    /// Runs on every control-block load: lets a test change words "from the NoC".
    on_load: Option<LoadHook>,
    /// A store to this offset fails (a control block that cannot be written there).
    fail_store_at: Option<u32>,
}

type Shared = Arc<Mutex<State>>;
type LoadHook = Box<dyn FnMut(&mut BTreeMap<u32, u32>, u32) + Send>;

fn shared() -> Shared {
    Arc::new(Mutex::new(State {
        words: BTreeMap::new(),
        stores: Vec::new(),
        loads: Vec::new(),
        clock: 0,
        stop: false,
        stops_requested: 0,
        pushed: 0,
        popped: 0,
        pushes: Vec::new(),
        compute: ComputeMode::Idle,
        on_load: None,
        fail_store_at: None,
    }))
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

/// A tile's control block is 0x1000 bytes of words.
fn check_offset(off: u32) -> Result<(), control::ErrorKind> {
    if off >= 0x1000 {
        Err(control::ErrorKind::OutOfRange)
    } else if off % 4 != 0 {
        Err(control::ErrorKind::Misaligned)
    } else {
        Ok(())
    }
}

fn ctrl(s: &Shared, wait_limit: u64) -> MockControlBlock {
    let mut c = MockControlBlock::new();
    c.expect_len().return_const(0x1000u32);
    c.expect_addr().returning(|off| Ok(l1(CTRL + off)));
    let st = s.clone();
    c.expect_load().returning(move |off| {
        check_offset(off)?;
        let mut g = st.lock().unwrap();
        g.loads.push(off);
        let mut hook = g.on_load.take();
        if let Some(h) = hook.as_mut() {
            h(&mut g.words, off);
        }
        g.on_load = hook;
        Ok(*g.words.get(&off).unwrap_or(&0))
    });
    let st = s.clone();
    c.expect_store().returning(move |off, v| {
        check_offset(off)?;
        let mut g = st.lock().unwrap();
        if g.fail_store_at == Some(off) {
            return Err(control::ErrorKind::Other);
        }
        g.words.insert(off, v);
        g.stores.push((off, v));
        Ok(())
    });
    let st = s.clone();
    c.expect_now().returning(move || {
        let mut g = st.lock().unwrap();
        g.clock += 1;
        g.clock
    });
    c.expect_wait_limit().returning(move || Ok(wait_limit));
    let st = s.clone();
    c.expect_stop_requested()
        .returning(move || Ok(st.lock().unwrap().stop));
    let st = s.clone();
    c.expect_request_stop().returning(move || {
        let mut g = st.lock().unwrap();
        g.stop = true;
        g.stops_requested += 1;
        Ok(())
    });
    c
}

fn cb(s: &Shared) -> MockCircularBuffer {
    cb_of_window(s, WINDOW)
}

/// The buffer of a broadcast with window `window`: `window * PAGES` pages.
fn cb_of_window(s: &Shared, window: u8) -> MockCircularBuffer {
    let capacity = window as u16 * PAGES;
    let mut b = MockCircularBuffer::new();
    b.expect_capacity().return_const(capacity);
    b.expect_page_size().return_const(PAGE);
    b.expect_base().return_const(l1(CB_BASE));
    let st = s.clone();
    b.expect_write_ptr().returning(move || {
        let g = st.lock().unwrap();
        l1(CB_BASE + (g.pushed % capacity) as u32 * PAGE)
    });
    let st = s.clone();
    b.expect_pushed()
        .returning(move || Ok(st.lock().unwrap().pushed));
    let st = s.clone();
    b.expect_popped().returning(move || {
        let mut g = st.lock().unwrap();
        if g.compute == ComputeMode::PopsAll {
            g.popped = g.pushed;
        }
        Ok(g.popped)
    });
    let st = s.clone();
    b.expect_pages_free().returning(move || {
        let mut g = st.lock().unwrap();
        if g.compute == ComputeMode::PopsAll {
            g.popped = g.pushed;
        }
        Ok(capacity - g.pushed.wrapping_sub(g.popped))
    });
    let st = s.clone();
    b.expect_pages_ready().returning(move || {
        let mut g = st.lock().unwrap();
        if g.compute == ComputeMode::PopsAll {
            g.popped = g.pushed;
        }
        if g.compute == ComputeMode::PopsABlockPerReady && g.pushed != g.popped {
            g.popped = g.popped.wrapping_add(PAGES);
        }
        Ok(g.pushed.wrapping_sub(g.popped))
    });
    let st = s.clone();
    b.expect_push().returning(move |n| {
        let mut g = st.lock().unwrap();
        g.pushed = g.pushed.wrapping_add(n);
        g.pushes.push(n);
        Ok(())
    });
    b
}

/// A column of 3 cores on NoC0 (logical (0,0)..(0,2), NoC0 (1,2)..(1,4)): (0,0) sends to
/// NoC0 (1,3)..(1,4). Broadcast 0, CB 5, window 2, 2 pages of 64 bytes.
fn column_words(core: (u8, u8)) -> [u32; 11] {
    words(0, LogicalRect::new(0, 0, 1, 3), Along::Column, core)
}

fn group() -> LogicalRect {
    LogicalRect::new(0, 0, 3, 3)
}

fn words(id: u8, rect: LogicalRect, along: Along, core: (u8, u8)) -> [u32; 11] {
    words_of_window(id, rect, along, core, WINDOW)
}

fn words_of_window(
    id: u8,
    rect: LogicalRect,
    along: Along,
    core: (u8, u8),
    window: u8,
) -> [u32; 11] {
    let g = common::blackhole(0);
    let params = BroadcastParams {
        broadcast: id,
        cb: 5,
        window,
        pages: PAGES,
    };
    let all = broadcast_args(&g, group(), rect, along, NocId::Noc0, params).unwrap();
    all.iter().find(|a| a.core == core).unwrap().words
}

fn context() -> Context {
    Context {
        sequence: SEQ,
        group: group(),
        exclusive: true,
    }
}

fn noc_at(x: u8, y: u8) -> MockNocMulticast {
    let mut n = MockNocMulticast::new();
    n.expect_noc().return_const(NocId::Noc0);
    n.expect_node().return_const(xy(x, y));
    n
}

fn rect() -> Rect {
    Rect::new(xy(1, 3), xy(1, 4)).unwrap()
}

const VALID0: u32 = area::CONTROL_BROADCAST + area::VALID;

type Dm = DataMovement<MockNocMulticast, MockControlBlock, Spin>;

fn dm(noc: MockNocMulticast, ctrl: MockControlBlock) -> Dm {
    DataMovement {
        noc,
        ctrl,
        pause: Spin,
    }
}

/// Expects, in order, the NoC calls of a sender's cast of one block into `slot`.
fn expect_cast(noc: &mut MockNocMulticast, seq: &mut Sequence, slot: u32) {
    noc.expect_reads_done()
        .times(1)
        .in_sequence(seq)
        .returning(|| Ok(true));
    expect_data_and_valid(noc, seq, slot);
}

/// Expects, in order, what a cast does once the block's reads landed (and, past the first lap,
/// the receivers marked its slot): `writes_sent` (nothing outgoing), the data multicast from
/// `slot`, VALID (without waiting for the data to leave).
fn expect_data_and_valid(noc: &mut MockNocMulticast, seq: &mut Sequence, slot: u32) {
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(seq)
        .returning(|| Ok(true));
    noc.expect_multicast()
        .with(
            eq(l1(slot)),
            eq(rect()),
            eq(l1(slot)),
            eq(PAGES as u32 * PAGE),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(seq)
        .returning(|_, _, _, _, _| Ok(()));
    noc.expect_multicast()
        .with(
            eq(l1(CTRL + VALID0)),
            eq(rect()),
            eq(l1(CTRL + VALID0)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(seq)
        .returning(|_, _, _, _, _| Ok(()));
}

fn given_up_record(s: &Shared, id: u8) -> Option<GiveUpRecord> {
    let g = s.lock().unwrap();
    let base = area::area(id);
    let w = |o| *g.words.get(&(base + o)).unwrap_or(&0);
    GiveUpRecord::from_words([
        w(area::GIVE_UP_WHERE),
        w(area::GIVE_UP_BLOCK),
        w(area::GIVE_UP_SEQUENCE),
    ])
}

// ---- sender --------------------------------------------------------------------------------

#[test]
fn words_name_the_sender_and_the_receivers_rectangle() {
    let a = BroadcastArgs::decode(&column_words((0, 0))).unwrap();
    assert_eq!(
        (a.rank, a.receivers, a.core, a.sender),
        (0, 2, (1, 2), (1, 2))
    );
    assert_eq!((a.start, a.end), ((1, 3), (1, 4)));
    let b = BroadcastArgs::decode(&column_words((0, 2))).unwrap();
    assert_eq!((b.rank, b.core), (2, (1, 4)));
    let outside = BroadcastArgs::decode(&column_words((1, 1))).unwrap();
    assert!(!outside.included());
}

#[test]
fn sender_casts_data_then_valid_then_hands_the_block_to_its_compute() {
    let s = shared();
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    expect_cast(&mut noc, &mut seq, CB_BASE + 128);
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 0));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    assert!(b.ok() && b.included() && b.sender());
    for block in 0..2 {
        let slot = block_on(b.reserve(&mut dm, block)).unwrap();
        assert_eq!(slot, l1(CB_BASE + block * 128));
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    let g = s.lock().unwrap();
    assert_eq!(g.pushes, vec![PAGES, PAGES]);
    let valid: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == VALID0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(valid, vec![marker(S16, 1), marker(S16, 2)]);
    // Nothing to wait for below the window: no DONE-BY word was read.
    assert!(
        !g.loads
            .iter()
            .any(|&o| o >= area::done_by(0, 1) && o <= area::done_by(0, 2))
    );
}

#[test]
fn sender_reuses_a_slot_only_after_every_receiver_marked_it_this_command() {
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    {
        let mut g = s.lock().unwrap();
        // Rank 1 is done with block 0; rank 2's word is from the previous command (seq 6).
        g.words.insert(area::done_by(0, 1), marker(S16, 1));
        g.words.insert(area::done_by(0, 2), marker(S16 - 1, 9));
        let mut reads = 0;
        g.on_load = Some(Box::new(move |words, off| {
            if off == area::done_by(0, 2) {
                reads += 1;
                if reads == 5 {
                    words.insert(off, marker(S16, 1));
                }
            }
        }));
    }
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    expect_cast(&mut noc, &mut seq, CB_BASE + 128);
    // Block 2: the wait for markers, then the reads landed, then the multicast into slot 0.
    // Block 1's writes are still outgoing when the data goes, so VALID waits for `writes_sent`.
    noc.expect_reads_done()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(false));
    let st = s.clone();
    noc.expect_multicast()
        .with(
            eq(l1(CB_BASE)),
            eq(rect()),
            eq(l1(CB_BASE)),
            eq(128),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |_, _, _, _, _| {
            let g = st.lock().unwrap();
            assert_eq!(
                g.words[&area::done_by(0, 2)],
                marker(S16, 1),
                "multicast before rank 2 marked block 0"
            );
            Ok(())
        });
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_multicast()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Ok(()));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 0));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    for block in 0..3 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert!(b.wait_cycles() > 0);
}

#[test]
fn sender_whose_marker_wait_times_out_gives_up_broadcast_done_and_stops_its_tile() {
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    expect_cast(&mut noc, &mut seq, CB_BASE + 128);
    // Block 2: the receivers are asked before the reads, and never mark block 0: no NoC call.
    let mut dm = dm(noc, ctrl(&s, 40));
    let w = column_words((0, 0));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    for block in 0..2 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    block_on(b.reserve(&mut dm, 2)).unwrap();
    let expected = GiveUp {
        place: Where::BroadcastDone,
        broadcast: 0,
        block: 2,
        cause: Cause::TimedOut,
    };
    assert_eq!(block_on(b.cast(&mut dm, 2)), Err(expected));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 2,
            sequence: SEQ
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 1);
    assert_eq!(b.give_up(), Some(expected));
    // Every later call returns the same give-up without touching the NoC (no expectation left),
    // whatever its block, and does not ask the tile to stop again.
    assert_eq!(block_on(b.cast(&mut dm, 2)), Err(expected));
    assert_eq!(block_on(b.reserve(&mut dm, 3)), Err(expected));
    assert_eq!(block_on(b.finish(&mut dm)), Err(expected));
    assert_eq!(s.lock().unwrap().stops_requested, 1);
}

#[test]
fn sender_finish_pads_waits_for_last_markers_and_acks_then_clears_its_table() {
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    {
        let mut g = s.lock().unwrap();
        g.words.insert(area::done_by(0, 1), marker(S16, 3));
        g.words.insert(area::done_by(0, 2), marker(S16, 3));
    }
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    for block in 0..3u32 {
        noc.expect_reads_done()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|| Ok(true));
        let slot = CB_BASE + (block % 2) * 128;
        noc.expect_writes_sent()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|| Ok(true));
        noc.expect_multicast()
            .with(
                eq(l1(slot)),
                eq(rect()),
                eq(l1(slot)),
                eq(128),
                eq(WriteMode::ORDERED),
            )
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _, _| Ok(()));
        noc.expect_multicast()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _, _| Ok(()));
    }
    noc.expect_writes_acked()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 0));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    for block in 0..3 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    let before = s.lock().unwrap().stores.len();
    block_on(b.finish(&mut dm)).unwrap();
    let g = s.lock().unwrap();
    // 3 blocks, window 2: one padding block.
    assert_eq!(g.pushes, vec![2, 2, 2, 2]);
    let base = area::area(0);
    assert_eq!(
        g.stores[before..],
        [
            (area::done_by(0, 1), 0),
            (area::done_by(0, 2), 0),
            (base + area::VALID, 0),
            (base + area::STATS_BLOCKS, 3),
            (base + area::STATS_WAIT_CYCLES, b.wait_cycles() as u32),
        ]
    );
}

#[test]
fn a_broadcast_of_no_block_still_finishes_on_every_core() {
    let s = shared();
    s.lock()
        .unwrap()
        .words
        .insert(area::done_by(0, 1), marker(S16, 0));
    s.lock()
        .unwrap()
        .words
        .insert(area::done_by(0, 2), marker(S16, 0));
    let mut noc = noc_at(1, 2);
    noc.expect_writes_acked().times(1).returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 0));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    block_on(b.finish(&mut dm)).unwrap();
    assert!(
        s.lock().unwrap().pushes.is_empty(),
        "no padding for 0 blocks"
    );
}

// ---- receiver ------------------------------------------------------------------------------

fn marker_dst(rank: u8) -> NocAddr {
    NocAddr::l1(xy(1, 2), l1(CTRL + area::done_by(0, rank)))
}

const MARKER_SRC0: u32 = area::CONTROL_BROADCAST + area::MARKER_SOURCE;

#[test]
fn receiver_takes_a_block_only_on_this_commands_valid_and_marks_pops_meanwhile() {
    let s = shared();
    {
        let mut g = s.lock().unwrap();
        g.words.insert(VALID0, marker(S16 - 1, 9)); // left by the previous command
        let mut reads = 0;
        g.on_load = Some(Box::new(move |words, off| {
            if off == VALID0 {
                reads += 1;
                match reads {
                    4 => {
                        words.insert(off, marker(S16, 1));
                    }
                    8 => {
                        words.insert(off, marker(S16, 2));
                    }
                    _ => {}
                }
            }
        }));
    }
    let mut noc = noc_at(1, 3);
    let mut seq = Sequence::new();
    // While waiting for block 1, compute pops block 0: one marker, sent once the NoC is free.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    assert!(b.included() && !b.sender());
    block_on(b.arrive(&mut dm, 0)).unwrap();
    assert_eq!(
        s.lock().unwrap().pushes,
        vec![PAGES],
        "pushed once VALID said 1"
    );
    s.lock().unwrap().popped = PAGES; // compute pops block 0
    block_on(b.arrive(&mut dm, 1)).unwrap();
    let g = s.lock().unwrap();
    assert_eq!(g.pushes, vec![PAGES, PAGES]);
    let markers: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == MARKER_SRC0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(markers, vec![marker(S16, 1)]);
}

#[test]
fn receiver_changes_its_marker_source_only_after_the_previous_marker_left() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    let mut noc = noc_at(1, 3);
    let mut seq = Sequence::new();
    // Marker for block 0, then compute pops block 1 while that marker is still in the NIU.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    let st = s.clone();
    noc.expect_writes_sent()
        .times(3)
        .in_sequence(&mut seq)
        .returning(move || {
            let g = st.lock().unwrap();
            assert_eq!(
                g.words[&MARKER_SRC0],
                marker(S16, 1),
                "source changed before writes_sent"
            );
            Ok(false)
        });
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    noc.expect_writes_sent().returning(|| Ok(true));
    noc.expect_writes_acked().times(1).returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    block_on(b.arrive(&mut dm, 0)).unwrap();
    s.lock().unwrap().popped = PAGES;
    block_on(b.arrive(&mut dm, 1)).unwrap();
    s.lock().unwrap().popped = 2 * PAGES;
    block_on(b.finish(&mut dm)).unwrap();
    let g = s.lock().unwrap();
    let markers: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == MARKER_SRC0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(markers, vec![marker(S16, 1), marker(S16, 2)]);
}

#[test]
fn receiver_finish_pads_sends_the_last_marker_waits_for_its_ack_and_clears_valid() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let mut noc = noc_at(1, 4);
    let mut seq = Sequence::new();
    noc.expect_writes_sent().returning(|| Ok(true));
    // Markers 1, 2 during the arrives, 3 in finish: each the cumulative count.
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(2)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(3)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    noc.expect_writes_acked()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 2));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    for block in 0..3 {
        block_on(b.arrive(&mut dm, block)).unwrap();
    }
    block_on(b.finish(&mut dm)).unwrap();
    let g = s.lock().unwrap();
    assert_eq!(g.pushes, vec![2, 2, 2, 2], "3 blocks + 1 padding block");
    let markers: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == MARKER_SRC0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(
        markers,
        vec![marker(S16, 1), marker(S16, 2), marker(S16, 3)]
    );
    assert_eq!(g.words[&VALID0], 0);
    assert_eq!(g.words[&(area::area(0) + area::STATS_BLOCKS)], 3);
}

#[test]
fn receiver_waiting_for_valid_gives_up_broadcast_valid_without_stopping_its_tile() {
    let s = shared();
    let noc = noc_at(1, 3);
    let mut dm = dm(noc, ctrl(&s, 30));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    let expected = GiveUp {
        place: Where::BroadcastValid,
        broadcast: 0,
        block: 0,
        cause: Cause::TimedOut,
    };
    assert_eq!(block_on(b.arrive(&mut dm, 0)), Err(expected));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 0,
            sequence: SEQ
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

#[test]
fn finish_waiting_for_own_compute_gives_up_broadcast_free() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 1));
    let mut noc = noc_at(1, 3);
    noc.expect_writes_sent().returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 30));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    block_on(b.arrive(&mut dm, 0)).unwrap();
    let r = block_on(b.finish(&mut dm));
    assert_eq!(
        r,
        Err(GiveUp {
            place: Where::BroadcastFree,
            broadcast: 0,
            block: 1,
            cause: Cause::TimedOut
        })
    );
}

/// A receiver's `finish` keeps its markers going while it waits for its own compute, as `arrive`
/// does: a block popped during that wait is marked then, and the last marker follows.
#[test]
fn a_receiver_marks_a_block_its_compute_pops_while_finish_waits_for_the_rest() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 2));
    let mut noc = noc_at(1, 3);
    let mut seq = Sequence::new();
    let st = s.clone();
    // The marker of block 0: while the receiver waits for its compute (which pops block 1 on
    // the next poll), so before that compute popped the last block.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(move || {
            let g = st.lock().unwrap();
            assert_eq!(
                (g.pushed, g.popped),
                (2 * PAGES, PAGES),
                "compute popped block 0 only"
            );
            Ok(true)
        });
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(2)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    noc.expect_writes_sent().returning(|| Ok(true));
    noc.expect_writes_acked().times(1).returning(|| Ok(true));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    block_on(b.arrive(&mut dm, 0)).unwrap();
    block_on(b.arrive(&mut dm, 1)).unwrap();
    s.lock().unwrap().compute = ComputeMode::PopsABlockPerReady;
    block_on(b.finish(&mut dm)).unwrap();
    let g = s.lock().unwrap();
    let markers: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == MARKER_SRC0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(markers, vec![marker(S16, 1), marker(S16, 2)]);
}

#[test]
fn a_sender_whose_compute_never_pops_gives_up_finish_broadcast_free_without_stopping_its_tile() {
    let s = shared();
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    let mut dm = dm(noc, ctrl(&s, 30));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    block_on(b.cast(&mut dm, 0)).unwrap();
    // Compute never pops block 0: no NoC call follows (no expectation left).
    let expected = GiveUp {
        place: Where::BroadcastFree,
        broadcast: 0,
        block: 1,
        cause: Cause::TimedOut,
    };
    assert_eq!(block_on(b.finish(&mut dm)), Err(expected));
    assert_eq!(
        given_up_record(&s, 0).map(|g| g.place),
        Some(Where::BroadcastFree)
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

#[test]
fn a_stopped_tile_ends_the_wait_without_a_further_stop_request() {
    let s = shared();
    s.lock().unwrap().stop = true;
    let noc = noc_at(1, 3);
    let mut dm = dm(noc, ctrl(&s, 1_000_000));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    let r = block_on(b.arrive(&mut dm, 0));
    assert_eq!(
        r,
        Err(GiveUp {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 0,
            cause: Cause::Stopped
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

/// "Every call ... checks the tile's stop flag" (the specification), not only a wait whose
/// condition does not hold: on a stopped tile a sender's `reserve` with its slot free and a
/// `finish` of no block give up `Stopped` at their places before any NoC traffic (the NoC
/// mock expects nothing), and a call after an earlier give-up returns that one first
/// (decisions D58).
#[test]
fn a_stopped_tile_stops_every_call_even_one_whose_waits_hold_at_once() {
    let stopped = |place, block| GiveUp {
        place,
        broadcast: 0,
        block,
        cause: Cause::Stopped,
    };
    let w = column_words((0, 0));
    let s = shared();
    let mut d = dm(noc_at(1, 2), ctrl(&s, 1_000_000));
    let mut b = Broadcast::new(&mut d, cb(&s), &context(), &w, 0);
    s.lock().unwrap().stop = true;
    assert_eq!(
        block_on(b.reserve(&mut d, 0)),
        Err(stopped(Where::BroadcastFree, 0))
    );
    let s = shared();
    let mut d = dm(noc_at(1, 2), ctrl(&s, 1_000_000));
    let mut b = Broadcast::new(&mut d, cb(&s), &context(), &w, 0);
    s.lock().unwrap().stop = true;
    assert_eq!(
        block_on(b.finish(&mut d)),
        Err(stopped(Where::BroadcastDone, 0))
    );
    // An earlier give-up (a cast before any reserve) is what a later call returns.
    let s = shared();
    let mut d = dm(noc_at(1, 2), ctrl(&s, 1_000_000));
    let mut b = Broadcast::new(&mut d, cb(&s), &context(), &w, 0);
    let misuse = block_on(b.cast(&mut d, 0)).unwrap_err();
    assert_eq!(misuse.cause, Cause::Misuse);
    s.lock().unwrap().stop = true;
    assert_eq!(block_on(b.reserve(&mut d, 0)), Err(misuse));
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

// ---- two broadcasts ------------------------------------------------------------------------

#[test]
fn two_broadcasts_on_one_core_use_their_own_areas() {
    let s = shared();
    // Core (0,1) receives column broadcast 0 and sends row broadcast 1 (cores (0,1)..(2,1)).
    let row = LogicalRect::new(0, 1, 3, 1);
    let w1 = words(1, row, Along::Row, (0, 1));
    let a1 = BroadcastArgs::decode(&w1).unwrap();
    assert_eq!(
        (a1.broadcast, a1.rank, a1.start, a1.end),
        (1, 0, (2, 3), (3, 3))
    );
    let row_rect = Rect::new(xy(2, 3), xy(3, 3)).unwrap();
    let valid1 = area::area(1) + area::VALID;
    s.lock().unwrap().words.insert(VALID0, marker(S16, 1));
    let mut noc = noc_at(1, 3);
    let mut seq = Sequence::new();
    noc.expect_reads_done()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_multicast()
        .with(
            eq(l1(0x3_0000)),
            eq(row_rect),
            eq(l1(0x3_0000)),
            eq(128),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Ok(()));
    noc.expect_multicast()
        .with(
            eq(l1(CTRL + valid1)),
            eq(row_rect),
            eq(l1(CTRL + valid1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Ok(()));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let w0 = column_words((0, 1));
    let mut b0 = Broadcast::new(&mut dm, cb(&s), &context(), &w0, 0);
    // Broadcast 1's buffer is another CB at 0x3_0000 with its own counters.
    let s1 = shared();
    let mut cb1 = MockCircularBuffer::new();
    cb1.expect_capacity().return_const(4u16);
    cb1.expect_page_size().return_const(PAGE);
    cb1.expect_base().return_const(l1(0x3_0000));
    cb1.expect_write_ptr().return_const(l1(0x3_0000));
    cb1.expect_popped().returning(|| Ok(0));
    cb1.expect_pages_free().returning(|| Ok(4));
    let st = s1.clone();
    cb1.expect_push().returning(move |n| {
        st.lock().unwrap().pushes.push(n);
        Ok(())
    });
    let mut b1 = Broadcast::new(&mut dm, cb1, &context(), &w1, 0);
    assert!(b0.included() && !b0.sender() && b1.sender());
    block_on(b0.arrive(&mut dm, 0)).unwrap();
    block_on(b1.reserve(&mut dm, 0)).unwrap();
    block_on(b1.cast(&mut dm, 0)).unwrap();
    let g = s.lock().unwrap();
    assert_eq!(g.words[&valid1], marker(S16, 1));
    assert_eq!(g.pushes, vec![PAGES]);
    assert_eq!(s1.lock().unwrap().pushes, vec![PAGES]);
}

// ---- broadcast_begin and misuse ------------------------------------------------------------

fn begin_cause(
    words: &[u32],
    context: Context,
    node: (u8, u8),
    noc_id: NocId,
) -> (bool, Option<GiveUp>, Shared) {
    let s = shared();
    let mut noc = MockNocMulticast::new();
    noc.expect_noc().return_const(noc_id);
    noc.expect_node().return_const(xy(node.0, node.1));
    let mut dm = dm(noc, ctrl(&s, 100));
    let b = Broadcast::new(&mut dm, cb(&s), &context, words, 0);
    (b.ok(), b.give_up(), s)
}

#[test]
fn bad_words_give_up_broadcast_begin_before_any_noc_traffic() {
    let mut w = column_words((0, 1));
    w[10] ^= 0x10;
    let (ok, g, s) = begin_cause(&w, context(), (1, 3), NocId::Noc0);
    assert!(!ok);
    assert!(matches!(
        g,
        Some(GiveUp {
            place: Where::BroadcastBegin,
            cause: Cause::BadWords(_),
            ..
        })
    ));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastBegin,
            broadcast: 0,
            block: 0,
            sequence: SEQ
        })
    );
    // Words that do not fit the command.
    let (ok, g, _) = begin_cause(&w[..5], context(), (1, 3), NocId::Noc0);
    assert!(!ok && matches!(g.unwrap().cause, Cause::BadWords(_)));
}

#[test]
fn words_for_another_group_noc_core_or_buffer_give_up_broadcast_begin() {
    let w = column_words((0, 1));
    let cause = |ctx: Context, node: (u8, u8), noc: NocId| {
        begin_cause(&w, ctx, node, noc).1.map(|g| g.cause)
    };
    let other_group = Context {
        group: LogicalRect::new(0, 0, 2, 3),
        ..context()
    };
    assert_eq!(
        cause(other_group, (1, 3), NocId::Noc0),
        Some(Cause::WrongGroup {
            command: other_group.group,
            words: group()
        })
    );
    assert_eq!(
        cause(
            Context {
                exclusive: false,
                ..context()
            },
            (1, 3),
            NocId::Noc0
        ),
        Some(Cause::NotExclusive)
    );
    assert_eq!(cause(context(), (1, 3), NocId::Noc1), Some(Cause::WrongNoc));
    assert_eq!(
        cause(context(), (1, 4), NocId::Noc0),
        Some(Cause::WrongCore)
    );
    // A buffer of another size.
    let s = shared();
    let mut buf = MockCircularBuffer::new();
    buf.expect_capacity().return_const(6u16);
    buf.expect_base().return_const(l1(CB_BASE));
    buf.expect_write_ptr().return_const(l1(CB_BASE));
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 100));
    let b = Broadcast::new(&mut dm, buf, &context(), &w, 0);
    assert_eq!(
        b.give_up().map(|g| g.cause),
        Some(Cause::BufferSize {
            expected: 4,
            capacity: 6
        })
    );
    // A buffer not at slot 0.
    let mut buf = MockCircularBuffer::new();
    buf.expect_capacity().return_const(4u16);
    buf.expect_base().return_const(l1(CB_BASE));
    buf.expect_write_ptr().return_const(l1(CB_BASE + 64));
    let b = Broadcast::new(&mut dm, buf, &context(), &w, 0);
    assert_eq!(b.give_up().map(|g| g.cause), Some(Cause::NotAtSlotZero));
    // A buffer at slot 0 by its write pointer whose counters still hold a page (an earlier
    // command's recovery that did not end): this command's blocks would go into other slots.
    let mut buf = MockCircularBuffer::new();
    buf.expect_capacity().return_const(4u16);
    buf.expect_base().return_const(l1(CB_BASE));
    buf.expect_write_ptr().return_const(l1(CB_BASE));
    buf.expect_pages_free().returning(|| Ok(3));
    let b = Broadcast::new(&mut dm, buf, &context(), &w, 0);
    let g = b.give_up().unwrap();
    assert_eq!(
        (g.place, g.cause),
        (Where::BroadcastBegin, Cause::BufferNotEmpty { pages: 1 })
    );
    // Pages of no bytes (every slot would lie at the buffer's base), pages that are not whole
    // words (the next slot would not be word-aligned), and a buffer beyond 32-bit addresses (a
    // slot's offset would overflow): refused at the start.
    for bytes in [0, 6, 0x4000_0000] {
        let mut buf = MockCircularBuffer::new();
        buf.expect_capacity().return_const(4u16);
        buf.expect_base().return_const(l1(CB_BASE));
        buf.expect_write_ptr().return_const(l1(CB_BASE));
        buf.expect_pages_free().returning(|| Ok(4));
        buf.expect_page_size().return_const(bytes);
        let b = Broadcast::new(&mut dm, buf, &context(), &w, 0);
        let g = b.give_up().unwrap();
        assert_eq!(g.cause, Cause::PageSize { bytes }, "{bytes}");
        assert_eq!(g.place, Where::BroadcastBegin, "{bytes}");
    }
}

#[test]
fn only_the_first_give_up_of_a_command_is_kept() {
    let s = shared();
    // A record left by the previous command is replaced ...
    s.lock()
        .unwrap()
        .words
        .insert(area::area(0) + area::GIVE_UP_WHERE, 2);
    s.lock()
        .unwrap()
        .words
        .insert(area::area(0) + area::GIVE_UP_SEQUENCE, SEQ - 1);
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 10));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    assert!(block_on(b.arrive(&mut dm, 0)).is_err());
    let first = given_up_record(&s, 0).unwrap();
    assert_eq!((first.place, first.sequence), (Where::BroadcastValid, SEQ));
    // ... but a second give-up of the same command is not recorded over the first.
    let mut w2 = w;
    w2[10] ^= 1;
    let again = Broadcast::new(&mut dm, cb(&s), &context(), &w2, 0);
    assert!(!again.ok());
    assert_eq!(given_up_record(&s, 0), Some(first));
}

/// Words naming broadcast id 2 are refused, and their refusal is recorded in no area: `area`
/// keeps an id's low bit, so it would land over broadcast 0's live record and statistics.
#[test]
fn a_refused_id_with_no_area_of_its_own_records_over_no_other_broadcast() {
    let s = shared();
    let live = [
        (area::area(0) + area::GIVE_UP_WHERE, 0),
        (area::area(0) + area::STATS_BLOCKS, 7),
        (area::area(0) + area::STATS_WAIT_CYCLES, 99),
    ];
    s.lock().unwrap().words.extend(live);
    let before = s.lock().unwrap().words.clone();
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 10));
    let mut w = column_words((0, 1));
    w[0] = 2;
    let b = Broadcast::new(&mut dm, MockCircularBuffer::new(), &context(), &w, 0);
    let g = b.give_up().expect("refused");
    assert_eq!((g.place, g.broadcast), (Where::BroadcastBegin, 2));
    let g = komorebi_broadcast::device::refuse_without_buffer(
        &mut dm.ctrl,
        &context(),
        2,
        Cause::NoBuffer { index: 3 },
    );
    assert_eq!((g.place, g.broadcast), (Where::BroadcastBegin, 2));
    assert_eq!(s.lock().unwrap().words, before, "no area word changed");
    // Id 0's refusal is recorded in its own area, as ever.
    w[0] = 0;
    w[10] ^= 1;
    let b = Broadcast::new(&mut dm, MockCircularBuffer::new(), &context(), &w, 0);
    assert_eq!(b.give_up().map(|g| g.broadcast), Some(0));
    assert_eq!(
        given_up_record(&s, 0).map(|r| r.place),
        Some(Where::BroadcastBegin)
    );
}

#[test]
fn calls_out_of_order_or_for_the_wrong_role_are_misuse() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 5));
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 100));
    let w = column_words((0, 1));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    let r = block_on(b.arrive(&mut dm, 1));
    assert_eq!(r.map_err(|g| g.cause), Err(Cause::Misuse));
    let mut b = Broadcast::new(
        &mut dm,
        cb(&s),
        &Context {
            sequence: SEQ + 1,
            ..context()
        },
        &w,
        0,
    );
    assert_eq!(
        block_on(b.cast(&mut dm, 0)).map_err(|g| g.cause),
        Err(Cause::Misuse)
    );
}

// ---- edges of the calls --------------------------------------------------------------------

#[test]
fn a_core_outside_the_rectangle_is_ok_but_takes_no_part_and_every_call_is_misuse() {
    let s = shared();
    // Core (1,1) of the group is not in column 0's broadcast: rank 0xFF.
    let w = column_words((1, 1));
    let mut dm = dm(noc_at(2, 3), ctrl(&s, 100));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &w, 0);
    assert!(b.ok());
    assert!(!b.included());
    assert!(!b.sender());
    assert_eq!(b.give_up(), None);
    assert_eq!(
        b.args()
            .map(|a| (a.broadcast, a.rank, a.receivers, a.window, a.cb, a.pages)),
        Some((0, 0xFF, 0, 2, 5, 2))
    );
    // Its statistics of this command start at 0.
    assert_eq!(s.lock().unwrap().stores, vec![(0xA30, 0), (0xA34, 0)]);
    assert_eq!(
        block_on(b.arrive(&mut dm, 0)),
        Err(GiveUp {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 0,
            cause: Cause::Misuse,
        })
    );
}

#[test]
fn the_sender_and_a_receiver_hand_out_their_decoded_words() {
    let s = shared();
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 100));
    let b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 1)), 0);
    let a = b.args().unwrap();
    assert_eq!(
        (a.rank, a.receivers, a.core, a.sender, a.start, a.end),
        (1, 2, (1, 3), (1, 2), (1, 3), (1, 4))
    );
    let mut dm = crate::dm(noc_at(1, 2), ctrl(&s, 100));
    let b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    assert_eq!(b.args().map(|a| a.rank), Some(0));
    assert!(b.sender());
}

#[test]
fn a_control_block_that_cannot_reset_the_statistics_fails_broadcast_begin() {
    let s = shared();
    // The statistics' block count of area 0 cannot be written.
    s.lock().unwrap().fail_store_at = Some(0xA30);
    let mut dm = dm(noc_at(1, 2), ctrl(&s, 100));
    let b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    assert!(!b.ok());
    assert!(!b.included());
    assert!(!b.sender());
    assert_eq!(
        b.give_up(),
        Some(GiveUp {
            place: Where::BroadcastBegin,
            broadcast: 0,
            block: 0,
            cause: Cause::Control(control::ErrorKind::Other),
        })
    );
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastBegin,
            broadcast: 0,
            block: 0,
            sequence: SEQ
        })
    );
}

#[test]
fn a_receiver_may_not_reserve_a_sender_may_not_arrive_and_no_call_follows_finish() {
    let misuse = |place, block| GiveUp {
        place,
        broadcast: 0,
        block,
        cause: Cause::Misuse,
    };
    // A receiver reserving a slot.
    let s = shared();
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 100));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 1)), 0);
    assert_eq!(
        block_on(b.reserve(&mut dm, 0)),
        Err(misuse(Where::BroadcastFree, 0))
    );
    // A sender arriving.
    let s = shared();
    let mut dm = crate::dm(noc_at(1, 2), ctrl(&s, 100));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    assert_eq!(
        block_on(b.arrive(&mut dm, 0)),
        Err(misuse(Where::BroadcastValid, 0))
    );
    // A sender that finished a command of no block, then reserves.
    let s = shared();
    {
        let mut g = s.lock().unwrap();
        g.words.insert(area::done_by(0, 1), marker(S16, 0));
        g.words.insert(area::done_by(0, 2), marker(S16, 0));
    }
    let mut noc = noc_at(1, 2);
    noc.expect_writes_acked().times(1).returning(|| Ok(true));
    let mut dm = crate::dm(noc, ctrl(&s, 100));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    block_on(b.finish(&mut dm)).unwrap();
    assert_eq!(
        block_on(b.reserve(&mut dm, 0)),
        Err(misuse(Where::BroadcastFree, 0))
    );
}

#[test]
fn a_sender_stops_its_tile_only_when_its_wait_for_markers_or_barriers_times_out() {
    // Compute never pops: the third reserve finds no free slot and times out (broadcast_free).
    let s = shared();
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    expect_cast(&mut noc, &mut seq, CB_BASE + 128);
    let mut dm = dm(noc, ctrl(&s, 40));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    for block in 0..2 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert_eq!(
        block_on(b.reserve(&mut dm, 2)),
        Err(GiveUp {
            place: Where::BroadcastFree,
            broadcast: 0,
            block: 2,
            cause: Cause::TimedOut,
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
    // A sender's cast out of order (broadcast_done, but misuse) does not stop it either.
    let s = shared();
    let mut dm = crate::dm(noc_at(1, 2), ctrl(&s, 40));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    assert_eq!(
        block_on(b.cast(&mut dm, 1)),
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 1,
            cause: Cause::Misuse,
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

#[test]
fn a_sender_reuses_slot_1_for_block_3_only_when_every_receiver_popped_2_blocks() {
    // Both ranks say this command's count 1: enough for block 2 (block 0 popped), not for
    // block 3 (block 1 not popped yet).
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    {
        let mut g = s.lock().unwrap();
        g.words.insert(area::done_by(0, 1), marker(S16, 1));
        g.words.insert(area::done_by(0, 2), marker(S16, 1));
    }
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    expect_cast(&mut noc, &mut seq, CB_BASE + 128);
    expect_cast(&mut noc, &mut seq, CB_BASE);
    // Block 3 waits for the receivers before its reads: no NoC call.
    let mut dm = dm(noc, ctrl(&s, 40));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    for block in 0..3 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert_eq!(block_on(b.reserve(&mut dm, 3)), Ok(l1(CB_BASE + 128)));
    assert_eq!(
        block_on(b.cast(&mut dm, 3)),
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 3,
            cause: Cause::TimedOut,
        })
    );
}

#[test]
fn a_receiver_takes_block_1_only_when_valid_says_2_blocks() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 1));
    let mut dm = dm(noc_at(1, 3), ctrl(&s, 30));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 1)), 0);
    block_on(b.arrive(&mut dm, 0)).unwrap();
    assert_eq!(
        block_on(b.arrive(&mut dm, 1)),
        Err(GiveUp {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 1,
            cause: Cause::TimedOut,
        })
    );
    assert_eq!(
        s.lock().unwrap().pushes,
        vec![PAGES],
        "block 1 never pushed"
    );
}

#[test]
fn a_receiver_marks_a_block_once_and_only_when_compute_popped_all_its_pages() {
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 4));
    let mut noc = noc_at(1, 3);
    let mut seq = Sequence::new();
    // One marker in all: block 0, once compute popped both its pages.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_write()
        .with(
            eq(l1(CTRL + MARKER_SRC0)),
            eq(marker_dst(1)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _| Ok(()));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 1)), 0);
    block_on(b.arrive(&mut dm, 0)).unwrap();
    // One page of block 0's two popped: no marker.
    s.lock().unwrap().popped = 1;
    block_on(b.arrive(&mut dm, 1)).unwrap();
    // Both popped: marker 1.
    s.lock().unwrap().popped = PAGES;
    block_on(b.arrive(&mut dm, 2)).unwrap();
    // Nothing more popped: no second marker 1.
    block_on(b.arrive(&mut dm, 3)).unwrap();
    let g = s.lock().unwrap();
    let markers: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == MARKER_SRC0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(markers, vec![marker(S16, 1)]);
    assert_eq!(g.pushes, vec![PAGES; 4]);
}

#[test]
fn a_busy_noc_is_asked_again_and_any_other_noc_error_gives_up_the_block() {
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    noc.expect_reads_done()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    // The data multicast: busy, then taken. Each try first asks whether anything is outgoing;
    // the answer of the try that was taken (something is) is the one that counts, so VALID
    // then waits for `writes_sent`.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_multicast()
        .with(
            eq(l1(CB_BASE)),
            eq(rect()),
            eq(l1(CB_BASE)),
            eq(128),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Err(noc::ErrorKind::Busy));
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(false));
    noc.expect_multicast()
        .with(
            eq(l1(CB_BASE)),
            eq(rect()),
            eq(l1(CB_BASE)),
            eq(128),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Ok(()));
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    // VALID: busy twice, then taken.
    noc.expect_multicast()
        .with(
            eq(l1(CTRL + VALID0)),
            eq(rect()),
            eq(l1(CTRL + VALID0)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(2)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Err(noc::ErrorKind::Busy));
    noc.expect_multicast()
        .with(
            eq(l1(CTRL + VALID0)),
            eq(rect()),
            eq(l1(CTRL + VALID0)),
            eq(4),
            eq(WriteMode::ORDERED),
        )
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Ok(()));
    // Block 1's data multicast is refused for good.
    noc.expect_reads_done()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    noc.expect_multicast()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _, _, _, _| Err(noc::ErrorKind::Fault));
    let mut dm = dm(noc, ctrl(&s, 1_000));
    let mut b = Broadcast::new(&mut dm, cb(&s), &context(), &column_words((0, 0)), 0);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    block_on(b.cast(&mut dm, 0)).unwrap();
    block_on(b.reserve(&mut dm, 1)).unwrap();
    assert_eq!(
        block_on(b.cast(&mut dm, 1)),
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 1,
            cause: Cause::Noc(noc::ErrorKind::Fault),
        })
    );
    let g = s.lock().unwrap();
    assert_eq!(g.pushes, vec![PAGES], "only block 0 reached compute");
    // Not a timeout: the tile is not stopped.
    assert_eq!(g.stops_requested, 0);
}

#[test]
fn a_reserve_whose_slot_is_not_the_buffers_write_pointer_gives_up_broadcast_free() {
    // Something else pushed one page between the words' check and the reserve: the write
    // pointer is at page 1, not at slot 0 where block 0 goes.
    let s = shared();
    let mut buf = MockCircularBuffer::new();
    buf.expect_capacity().return_const(4u16);
    buf.expect_page_size().return_const(PAGE);
    buf.expect_base().return_const(l1(CB_BASE));
    let mut seq = Sequence::new();
    buf.expect_write_ptr()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(l1(CB_BASE));
    buf.expect_write_ptr()
        .in_sequence(&mut seq)
        .return_const(l1(CB_BASE + PAGE));
    buf.expect_popped().returning(|| Ok(0));
    // Empty when the words are checked; the page pushed after.
    let mut free = Sequence::new();
    buf.expect_pages_free()
        .times(1)
        .in_sequence(&mut free)
        .returning(|| Ok(4));
    buf.expect_pages_free()
        .in_sequence(&mut free)
        .returning(|| Ok(3));
    let mut dm = dm(noc_at(1, 2), ctrl(&s, 100));
    let mut b = Broadcast::new(&mut dm, buf, &context(), &column_words((0, 0)), 0);
    assert!(b.ok() && b.sender());
    assert_eq!(
        block_on(b.reserve(&mut dm, 0)),
        Err(GiveUp {
            place: Where::BroadcastFree,
            broadcast: 0,
            block: 0,
            cause: Cause::NotAtSlotZero,
        })
    );
}

#[test]
fn a_refusal_without_a_buffer_records_broadcast_begin_and_zero_statistics_in_its_area() {
    let s = shared();
    let mut c = ctrl(&s, 100);
    let g = komorebi_broadcast::device::refuse_without_buffer(
        &mut c,
        &context(),
        1,
        Cause::NoBuffer { index: 9 },
    );
    assert_eq!(
        g,
        GiveUp {
            place: Where::BroadcastBegin,
            broadcast: 1,
            block: 0,
            cause: Cause::NoBuffer { index: 9 },
        }
    );
    // Area 1 is at 0xB40: the where word (0xB60) cleared, block 0 (0xB64), sequence (0xB68),
    // then the where word `4 | 1 << 8 | 7 << 16` (the sequence's low half) last; statistics 0 blocks (0xB70) and 0 wait cycles
    // (0xB74).
    assert_eq!(
        s.lock().unwrap().stores,
        vec![
            (0xB60, 0),
            (0xB64, 0),
            (0xB68, SEQ),
            (0xB60, 0x0007_0104),
            (0xB70, 0),
            (0xB74, 0),
        ]
    );
}

// ---- reading ahead -------------------------------------------------------------------------

/// A slot: `PAGES` pages of `PAGE` bytes.
const SLOT: u32 = PAGES as u32 * PAGE;

/// The sender of column 0 (logical (0,0), NoC0 (1,2)) with window `window`, its buffer
/// `window * PAGES` pages at `CB_BASE`.
fn ahead_sender(
    s: &Shared,
    noc: MockNocMulticast,
    window: u8,
) -> (Dm, Broadcast<MockCircularBuffer>) {
    let mut dm = dm(noc, ctrl(s, 1_000));
    let column = LogicalRect::new(0, 0, 1, 3);
    let w = words_of_window(0, column, Along::Column, (0, 0), window);
    let b = Broadcast::new(&mut dm, cb_of_window(s, window), &context(), &w, 0);
    assert!(b.ok() && b.sender());
    (dm, b)
}

/// Where the tests say page `g` of the broadcast is in DRAM (the device never reads it).
fn dram_page(g: u32) -> NocAddr {
    NocAddr::new(xy(0, 11), 0x1000 + (g * PAGE) as u64).unwrap()
}

/// Issues block `block`'s reads into `slot` with its read tag, one per page, as the handler
/// does.
fn read_ahead(dm: &mut Dm, b: &Broadcast<MockCircularBuffer>, block: u32, slot: L1Addr) {
    for page in 0..PAGES as u32 {
        let dst = slot.offset(page * PAGE).unwrap();
        let g = block * PAGES as u32 + page;
        dm.noc
            .read_tagged(dram_page(g), dst, PAGE, b.read_tag(block))
            .unwrap();
    }
}

/// A NoC call of the sender, as [`logging_noc`] logs it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Call {
    Read { dst: u32, tag: u8 },
    TagDone { tag: u8, done: bool },
    AllDone(bool),
    Multicast { src: u32, len: u32 },
    WritesSent,
}

/// The reads of a [`logging_noc`], whose completion per tag the test controls.
#[derive(Default)]
struct Reads {
    calls: Vec<Call>,
    /// By tag: how many more polls say its reads have not landed (0 or absent: landed).
    pending: BTreeMap<u8, u32>,
    /// By tag: how many polls a tag's reads take to land once issued (absent: at once).
    delay: BTreeMap<u8, u32>,
    /// How many more `writes_sent` polls say a write is still outgoing (0: every write left).
    unsent: u32,
}

/// NoC0 (1,2) that logs every call. A read of tag `t` keeps `t` outstanding for `delay[t]`
/// polls: each `tagged_reads_done(t)` while it is counts one, and each `reads_done` counts one
/// for every tag outstanding. Every multicast is taken; writes have left once `unsent` polls
/// of `writes_sent` said they had not.
fn logging_noc(r: &Arc<Mutex<Reads>>) -> MockNocMulticast {
    let mut n = noc_at(1, 2);
    let st = r.clone();
    n.expect_read_tagged().returning(move |_, dst, len, tag| {
        assert_eq!(len, PAGE);
        let mut g = st.lock().unwrap();
        let d = g.delay.get(&tag.get()).copied().unwrap_or(0);
        g.pending.insert(tag.get(), d);
        g.calls.push(Call::Read {
            dst: dst.get(),
            tag: tag.get(),
        });
        Ok(())
    });
    let st = r.clone();
    n.expect_tagged_reads_done().returning(move |tag| {
        let mut g = st.lock().unwrap();
        let done = match g.pending.get_mut(&tag.get()) {
            Some(p) if *p > 0 => {
                *p -= 1;
                false
            }
            _ => true,
        };
        g.calls.push(Call::TagDone {
            tag: tag.get(),
            done,
        });
        Ok(done)
    });
    let st = r.clone();
    n.expect_reads_done().returning(move || {
        let mut g = st.lock().unwrap();
        let mut done = true;
        for p in g.pending.values_mut().filter(|p| **p > 0) {
            *p -= 1;
            done = false;
        }
        g.calls.push(Call::AllDone(done));
        Ok(done)
    });
    let st = r.clone();
    n.expect_multicast()
        .returning(move |src, r, dst, len, mode| {
            assert_eq!((r, dst, mode), (rect(), src, WriteMode::ORDERED));
            st.lock().unwrap().calls.push(Call::Multicast {
                src: src.get(),
                len,
            });
            Ok(())
        });
    let st = r.clone();
    n.expect_writes_sent().returning(move || {
        let mut g = st.lock().unwrap();
        g.calls.push(Call::WritesSent);
        let sent = g.unsent == 0;
        g.unsent = g.unsent.saturating_sub(1);
        Ok(sent)
    });
    n
}

/// What a cast logs once its wait for reads is over: `writes_sent` (nothing outgoing), data from
/// `slot`, VALID.
fn data_and_valid(slot: u32) -> [Call; 3] {
    [
        Call::WritesSent,
        Call::Multicast {
            src: slot,
            len: SLOT,
        },
        Call::Multicast {
            src: CTRL + VALID0,
            len: 4,
        },
    ]
}

fn take_calls(r: &Arc<Mutex<Reads>>) -> Vec<Call> {
    std::mem::take(&mut r.lock().unwrap().calls)
}

#[test]
fn a_sender_reading_ahead_waits_for_its_blocks_tag_only_and_for_every_read_when_none_is_ahead() {
    // Window 4 of 2 pages: a slot is 128 bytes, the buffer 8 pages. Both receivers popped
    // block 0 already (this command's count 1), so block 4 may reuse slot 0 on them.
    let s = shared();
    {
        let mut g = s.lock().unwrap();
        g.words.insert(area::done_by(0, 1), marker(S16, 1));
        g.words.insert(area::done_by(0, 2), marker(S16, 1));
    }
    let r = Arc::new(Mutex::new(Reads::default()));
    // Block 1's reads (tag 1) land only at the third poll of their tag.
    r.lock().unwrap().delay.insert(1, 2);
    let (mut dm, mut b) = ahead_sender(&s, logging_noc(&r), 4);
    let tags: Vec<u8> = (0..10).map(|k| b.read_tag(k).get()).collect();
    assert_eq!(tags, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    // First lap: every slot is free, so blocks 0..=3 are reserved before block 0 is cast.
    for block in 0..4 {
        assert!(b.reserve_ready(block), "block {block}");
        let slot = block_on(b.reserve(&mut dm, block)).unwrap();
        assert_eq!(slot, l1(CB_BASE + block * SLOT));
        read_ahead(&mut dm, &b, block, slot);
    }
    // Block 4 is `window` ahead of block 0: `reserve` would refuse it at once, not wait, so
    // `reserve_ready` says true (module docs).
    assert!(b.reserve_ready(4));
    // Tag 0 landed, tag 1 has not: cast(0) asks for tag 0 only and goes ahead.
    block_on(b.cast(&mut dm, 0)).unwrap();
    let mut expected: Vec<Call> = (0..4u32)
        .flat_map(|block| {
            (0..PAGES as u32).map(move |page| Call::Read {
                dst: CB_BASE + block * SLOT + page * PAGE,
                tag: block as u8,
            })
        })
        .collect();
    expected.push(Call::TagDone { tag: 0, done: true });
    expected.extend(data_and_valid(CB_BASE));
    assert_eq!(take_calls(&r), expected);
    assert_eq!(
        r.lock().unwrap().pending,
        [(0, 0), (1, 2), (2, 0), (3, 0)].into(),
        "tag 1 still outstanding"
    );
    // Slot 0 is free again only once the sender's own compute popped both pages of block 0.
    assert!(!b.reserve_ready(4));
    s.lock().unwrap().popped = 1;
    assert!(!b.reserve_ready(4));
    s.lock().unwrap().popped = PAGES;
    assert!(b.reserve_ready(4));
    assert_eq!(block_on(b.reserve(&mut dm, 4)), Ok(l1(CB_BASE)));
    // Block 4's reads (tag 0 again) take 3 polls to land.
    r.lock().unwrap().delay.insert(0, 3);
    read_ahead(&mut dm, &b, 4, l1(CB_BASE));
    take_calls(&r);
    // cast(1) waits for tag 1 alone, through its two "not yet".
    block_on(b.cast(&mut dm, 1)).unwrap();
    let mut expected = vec![
        Call::TagDone {
            tag: 1,
            done: false,
        },
        Call::TagDone {
            tag: 1,
            done: false,
        },
        Call::TagDone { tag: 1, done: true },
    ];
    expected.extend(data_and_valid(CB_BASE + SLOT));
    assert_eq!(take_calls(&r), expected);
    for block in 2..4 {
        block_on(b.cast(&mut dm, block)).unwrap();
        let mut expected = vec![Call::TagDone {
            tag: block as u8,
            done: true,
        }];
        expected.extend(data_and_valid(CB_BASE + block * SLOT));
        assert_eq!(take_calls(&r), expected, "block {block}");
    }
    // Nothing reserved beyond block 4: cast(4) waits for every read, here block 4's own.
    block_on(b.cast(&mut dm, 4)).unwrap();
    let mut expected = vec![
        Call::AllDone(false),
        Call::AllDone(false),
        Call::AllDone(false),
        Call::AllDone(true),
    ];
    expected.extend(data_and_valid(CB_BASE));
    assert_eq!(take_calls(&r), expected);
    let g = s.lock().unwrap();
    assert_eq!(g.pushes, vec![PAGES; 5]);
    let valid: Vec<_> = g
        .stores
        .iter()
        .filter(|(o, _)| *o == VALID0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(valid, (1..=5).map(|n| marker(S16, n)).collect::<Vec<_>>());
    assert_eq!(b.give_up(), None);
}

/// A window-1 sender that cast block 0 (nothing was outgoing, so VALID followed the data at
/// once and nothing has said since that the data left) and whose compute popped it.
fn sender_after_block_0_of_window_1(
    s: &Shared,
    r: &Arc<Mutex<Reads>>,
) -> (Dm, Broadcast<MockCircularBuffer>) {
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let (mut dm, mut b) = ahead_sender(s, logging_noc(r), 1);
    let slot = block_on(b.reserve(&mut dm, 0)).unwrap();
    read_ahead(&mut dm, &b, 0, slot);
    block_on(b.cast(&mut dm, 0)).unwrap();
    let mut expected: Vec<Call> = (0..PAGES as u32)
        .map(|page| Call::Read {
            dst: CB_BASE + page * PAGE,
            tag: 0,
        })
        .collect();
    expected.push(Call::AllDone(true));
    expected.extend(data_and_valid(CB_BASE));
    assert_eq!(take_calls(r), expected);
    (dm, b)
}

#[test]
fn a_sender_reads_into_a_slot_only_once_the_multicast_that_sent_its_last_block_left() {
    let s = shared();
    let r = Arc::new(Mutex::new(Reads::default()));
    let (mut dm, mut b) = sender_after_block_0_of_window_1(&s, &r);
    // Block 0's data is still outgoing for the next two polls: slot 0 may still be read by the
    // NIU, so block 1's reads may not land there yet.
    r.lock().unwrap().unsent = 2;
    // `reserve_ready` looks at the buffer only (its docs): the slot's pages are free.
    assert!(b.reserve_ready(1));
    assert_eq!(take_calls(&r), []);
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Ok(l1(CB_BASE)));
    assert_eq!(take_calls(&r), vec![Call::WritesSent; 3]);
    assert_eq!(b.give_up(), None);
}

#[test]
fn a_sender_whose_valid_waited_for_its_data_to_leave_reads_the_next_block_into_that_slot_at_once() {
    // Window 1: block 0's data goes while an earlier write is still outgoing, so VALID waits for
    // `writes_sent`, which then says the data left too: block 1's reads may land in slot 0
    // without asking the NoC again.
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let r = Arc::new(Mutex::new(Reads::default()));
    let (mut dm, mut b) = ahead_sender(&s, logging_noc(&r), 1);
    let slot = block_on(b.reserve(&mut dm, 0)).unwrap();
    read_ahead(&mut dm, &b, 0, slot);
    take_calls(&r);
    r.lock().unwrap().unsent = 1;
    block_on(b.cast(&mut dm, 0)).unwrap();
    assert_eq!(
        take_calls(&r),
        [
            Call::AllDone(true),
            Call::WritesSent,
            Call::Multicast {
                src: CB_BASE,
                len: SLOT
            },
            Call::WritesSent,
            Call::Multicast {
                src: CTRL + VALID0,
                len: 4
            },
        ]
    );
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Ok(l1(CB_BASE)));
    assert_eq!(take_calls(&r), []);
}

#[test]
fn a_sender_without_receivers_stores_valid_multicasts_nothing_and_reuses_its_slot_at_once() {
    // A column of one core, window 1: every cast waits for its reads and stores VALID; there
    // is no multicast to leave, so the next reserve asks the NoC nothing.
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let r = Arc::new(Mutex::new(Reads::default()));
    let mut dm = dm(logging_noc(&r), ctrl(&s, 1_000));
    let one = LogicalRect::new(0, 0, 1, 1);
    let w = words_of_window(0, one, Along::Column, (0, 0), 1);
    let mut b = Broadcast::new(&mut dm, cb_of_window(&s, 1), &context(), &w, 0);
    assert!(b.sender());
    assert_eq!(b.args().map(|a| a.receivers), Some(0));
    for block in 0..3 {
        assert_eq!(block_on(b.reserve(&mut dm, block)), Ok(l1(CB_BASE)));
        assert_eq!(take_calls(&r), [], "block {block}");
        block_on(b.cast(&mut dm, block)).unwrap();
        assert_eq!(take_calls(&r), [Call::AllDone(true)], "block {block}");
    }
    let valid: Vec<_> = s
        .lock()
        .unwrap()
        .stores
        .iter()
        .filter(|(o, _)| *o == VALID0)
        .map(|&(_, v)| v)
        .collect();
    assert_eq!(valid, [marker(S16, 1), marker(S16, 2), marker(S16, 3)]);
    assert_eq!(s.lock().unwrap().pushes, [PAGES, PAGES, PAGES]);
}

#[test]
fn a_sender_whose_multicast_never_leaves_its_slot_gives_up_broadcast_done_and_stops_its_tile() {
    let s = shared();
    let r = Arc::new(Mutex::new(Reads::default()));
    let (mut dm, mut b) = sender_after_block_0_of_window_1(&s, &r);
    r.lock().unwrap().unsent = u32::MAX;
    let expected = GiveUp {
        place: Where::BroadcastDone,
        broadcast: 0,
        block: 1,
        cause: Cause::TimedOut,
    };
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Err(expected));
    assert!(take_calls(&r).iter().all(|c| *c == Call::WritesSent));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 1,
            sequence: SEQ
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 1);
}

#[test]
fn a_sender_reading_ahead_with_window_2_makes_exactly_these_noc_calls() {
    // 3 blocks, window 2, the module docs' loop; compute pops at once and both receivers
    // marked all 3 blocks, so the only waits are for reads.
    let s = shared();
    {
        let mut g = s.lock().unwrap();
        g.compute = ComputeMode::PopsAll;
        g.words.insert(area::done_by(0, 1), marker(S16, 3));
        g.words.insert(area::done_by(0, 2), marker(S16, 3));
    }
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    let expect_reads = |noc: &mut MockNocMulticast, seq: &mut Sequence, block: u32, tag: u8| {
        let slot = CB_BASE + (block % 2) * SLOT;
        for page in 0..PAGES as u32 {
            noc.expect_read_tagged()
                .with(
                    eq(dram_page(block * PAGES as u32 + page)),
                    eq(l1(slot + page * PAGE)),
                    eq(PAGE),
                    eq(ReadTag::new(tag).unwrap()),
                )
                .times(1)
                .in_sequence(seq)
                .returning(|_, _, _, _| Ok(()));
        }
    };
    let expect_tag_done = |noc: &mut MockNocMulticast, seq: &mut Sequence, tag: u8| {
        noc.expect_tagged_reads_done()
            .with(eq(ReadTag::new(tag).unwrap()))
            .times(1)
            .in_sequence(seq)
            .returning(|_| Ok(true));
    };
    // Block 0: reserve and read blocks 0 and 1 (tags 0, 1), then cast 0 on tag 0 alone.
    expect_reads(&mut noc, &mut seq, 0, 0);
    expect_reads(&mut noc, &mut seq, 1, 1);
    expect_tag_done(&mut noc, &mut seq, 0);
    expect_data_and_valid(&mut noc, &mut seq, CB_BASE);
    // Block 1: compute popped block 0, so block 2 is reserved ahead, and once the NoC says
    // block 0's data multicast left (asked: nothing has said so since it went), read into slot
    // 0 (tag 0) before block 1 is cast on tag 1.
    noc.expect_writes_sent()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    expect_reads(&mut noc, &mut seq, 2, 0);
    expect_tag_done(&mut noc, &mut seq, 1);
    expect_data_and_valid(&mut noc, &mut seq, CB_BASE + SLOT);
    // Block 2: nothing reserved beyond it, so every read.
    noc.expect_reads_done()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    expect_data_and_valid(&mut noc, &mut seq, CB_BASE);
    // finish: the receivers' final markers are there; its own multicasts acknowledged.
    noc.expect_writes_acked()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    let (mut dm, mut b) = ahead_sender(&s, noc, 2);
    let (blocks, window) = (3, 2);
    let mut reserved = 0;
    for block in 0..blocks {
        while reserved < (block + window).min(blocks)
            && (reserved == block || b.reserve_ready(reserved))
        {
            let slot = block_on(b.reserve(&mut dm, reserved)).unwrap();
            assert_eq!(slot, l1(CB_BASE + (reserved % 2) * SLOT));
            read_ahead(&mut dm, &b, reserved, slot);
            reserved += 1;
        }
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    block_on(b.finish(&mut dm)).unwrap();
    // 3 blocks and one of padding.
    assert_eq!(s.lock().unwrap().pushes, vec![PAGES; 4]);
}

fn misuse(place: Where, block: u32) -> GiveUp {
    GiveUp {
        place,
        broadcast: 0,
        block,
        cause: Cause::Misuse,
    }
}

/// `b` gave up `g`: it holds it, area 0 records it for this command, the tile was not asked
/// to stop, and every later call returns `g` at once, touching neither the NoC (no expectation
/// left) nor the record.
fn assert_gave_up_for_good(
    s: &Shared,
    dm: &mut Dm,
    b: &mut Broadcast<MockCircularBuffer>,
    g: GiveUp,
) {
    let record = GiveUpRecord {
        place: g.place,
        broadcast: 0,
        block: g.block,
        sequence: SEQ,
    };
    assert_eq!(b.give_up(), Some(g));
    assert_eq!(given_up_record(s, 0), Some(record));
    for block in 0..6 {
        assert_eq!(block_on(b.reserve(dm, block)), Err(g), "reserve({block})");
        assert_eq!(block_on(b.cast(dm, block)), Err(g), "cast({block})");
    }
    assert_eq!(block_on(b.finish(dm)), Err(g), "finish");
    assert_eq!(given_up_record(s, 0), Some(record));
    assert_eq!(s.lock().unwrap().stops_requested, 0);
    assert_eq!(s.lock().unwrap().pushes, Vec::<u16>::new());
}

#[test]
fn a_reserve_that_skips_a_block_is_misuse() {
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 4);
    assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
    let g = misuse(Where::BroadcastFree, 2);
    assert_eq!(block_on(b.reserve(&mut dm, 2)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
}

#[test]
fn a_reserve_of_a_block_reserved_already_is_misuse() {
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 4);
    assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Ok(l1(CB_BASE + SLOT)));
    let g = misuse(Where::BroadcastFree, 1);
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
}

#[test]
fn a_reserve_window_blocks_ahead_of_the_next_cast_is_misuse() {
    // Window 2: blocks 0 and 1 reserved, none cast; block 2 would reuse block 0's slot.
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 2);
    assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Ok(l1(CB_BASE + SLOT)));
    let g = misuse(Where::BroadcastFree, 2);
    assert_eq!(block_on(b.reserve(&mut dm, 2)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
    // Window 4, one block cast and popped: blocks 1..=4 may be reserved, block 5 may not.
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let r = Arc::new(Mutex::new(Reads::default()));
    let (mut dm, mut b) = ahead_sender(&s, logging_noc(&r), 4);
    for block in 0..4 {
        block_on(b.reserve(&mut dm, block)).unwrap();
    }
    block_on(b.cast(&mut dm, 0)).unwrap();
    assert_eq!(block_on(b.reserve(&mut dm, 4)), Ok(l1(CB_BASE)));
    let g = misuse(Where::BroadcastFree, 5);
    assert_eq!(block_on(b.reserve(&mut dm, 5)), Err(g));
    assert_eq!(b.give_up(), Some(g));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastFree,
            broadcast: 0,
            block: 5,
            sequence: SEQ
        })
    );
    take_calls(&r);
    for block in 0..6 {
        assert_eq!(block_on(b.reserve(&mut dm, block)), Err(g));
        assert_eq!(block_on(b.cast(&mut dm, block)), Err(g));
    }
    assert_eq!(block_on(b.finish(&mut dm)), Err(g));
    assert_eq!(take_calls(&r), [], "no NoC call after the give-up");
}

#[test]
fn a_cast_of_a_block_not_reserved_is_misuse() {
    // Nothing reserved.
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 4);
    let g = misuse(Where::BroadcastDone, 0);
    assert_eq!(block_on(b.cast(&mut dm, 0)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
    // Block 0 reserved, block 1 cast.
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 4);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    let g = misuse(Where::BroadcastDone, 1);
    assert_eq!(block_on(b.cast(&mut dm, 1)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
}

#[test]
fn a_finish_with_a_block_reserved_and_not_cast_is_misuse() {
    // Block 0 reserved, none cast: finish of 0 blocks.
    let s = shared();
    let (mut dm, mut b) = ahead_sender(&s, noc_at(1, 2), 2);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    let g = misuse(Where::BroadcastDone, 0);
    assert_eq!(block_on(b.finish(&mut dm)), Err(g));
    assert_gave_up_for_good(&s, &mut dm, &mut b, g);
    // Block 0 cast, block 1 reserved: finish of 1 block, before its compute is waited for.
    let s = shared();
    s.lock().unwrap().compute = ComputeMode::PopsAll;
    let mut noc = noc_at(1, 2);
    let mut seq = Sequence::new();
    expect_cast(&mut noc, &mut seq, CB_BASE);
    let (mut dm, mut b) = ahead_sender(&s, noc, 2);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    block_on(b.cast(&mut dm, 0)).unwrap();
    block_on(b.reserve(&mut dm, 1)).unwrap();
    let g = misuse(Where::BroadcastDone, 1);
    assert_eq!(block_on(b.finish(&mut dm)), Err(g));
    assert_eq!(b.give_up(), Some(g));
    assert_eq!(
        given_up_record(&s, 0),
        Some(GiveUpRecord {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 1,
            sequence: SEQ
        })
    );
    for block in 0..3 {
        assert_eq!(block_on(b.reserve(&mut dm, block)), Err(g));
        assert_eq!(block_on(b.cast(&mut dm, block)), Err(g));
    }
    assert_eq!(block_on(b.finish(&mut dm)), Err(g));
    let g2 = s.lock().unwrap();
    // Block 0 only: no padding was pushed.
    assert_eq!(g2.pushes, vec![PAGES]);
    assert_eq!(g2.stops_requested, 0);
}

// ---- the sender's reads (`read`) ------------------------------------------------------------

/// A sender of window 2 whose NoC answers each `read_tagged` with the next of `answers` (then
/// `Ok`), logging each destination; block 0 reserved.
fn reading_sender(
    s: &Shared,
    answers: Vec<Result<(), noc::ErrorKind>>,
) -> (Dm, Broadcast<MockCircularBuffer>, Arc<Mutex<Vec<u32>>>) {
    let mut noc = noc_at(1, 2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let (st, answers) = (log.clone(), Mutex::new(answers.into_iter()));
    noc.expect_read_tagged().returning(move |_, dst, _, tag| {
        assert_eq!(tag, ReadTag::new(0).unwrap());
        st.lock().unwrap().push(dst.get());
        answers.lock().unwrap().next().unwrap_or(Ok(()))
    });
    let (mut dm, mut b) = ahead_sender(s, noc, 2);
    assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
    (dm, b, log)
}

/// Block 0's pages from one DRAM port at `base` into slot 0.
fn block_0_reads(ports: &[Xy], base: u64) -> PageReads<'_> {
    PageReads {
        ports,
        base,
        first: 0,
        count: PAGES as u32,
        len: PAGE,
        dst: l1(CB_BASE),
        tag: ReadTag::new(0).unwrap(),
    }
}

#[test]
fn a_read_asks_a_busy_noc_again_from_the_first_page_it_did_not_take() {
    let s = shared();
    let busy = Err(noc::ErrorKind::Busy);
    let (mut dm, mut b, log) = reading_sender(&s, vec![busy, busy, Ok(()), busy, Ok(())]);
    let ports = [xy(0, 11)];
    assert_eq!(
        block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000))),
        Ok(())
    );
    let (p0, p1) = (CB_BASE, CB_BASE + PAGE);
    assert_eq!(*log.lock().unwrap(), [p0, p0, p0, p1, p1]);
    assert_eq!(b.give_up(), None);
}

#[test]
fn a_read_that_the_noc_never_takes_gives_up_broadcast_done_at_the_limit_and_stops_the_tile() {
    let s = shared();
    let (mut dm, mut b, _) = reading_sender(&s, vec![Err(noc::ErrorKind::Busy); 100_000]);
    let ports = [xy(0, 11)];
    let r = block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000)));
    let expected = GiveUp {
        place: Where::BroadcastDone,
        broadcast: 0,
        block: 0,
        cause: Cause::TimedOut,
    };
    assert_eq!(r, Err(expected));
    assert_eq!(
        given_up_record(&s, 0).map(|g| (g.place, g.block)),
        Some((Where::BroadcastDone, 0))
    );
    assert_eq!(s.lock().unwrap().stops_requested, 1);

    // On a stopped tile the same wait ends at once, asking no further stop.
    let s = shared();
    let (mut dm, mut b, log) = reading_sender(&s, vec![Err(noc::ErrorKind::Busy); 100_000]);
    s.lock().unwrap().stop = true;
    let r = block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000)));
    assert_eq!(
        r,
        Err(GiveUp {
            cause: Cause::Stopped,
            ..expected
        })
    );
    // The call's attempt at once, its wait's first poll, then the wait's first round: the
    // condition, then the stop flag.
    assert_eq!(log.lock().unwrap().len(), 3);
    assert_eq!(s.lock().unwrap().stops_requested, 0);
}

#[test]
fn a_read_refused_by_the_noc_or_of_a_page_without_addresses_gives_up_the_block() {
    let s = shared();
    let (mut dm, mut b, _) = reading_sender(&s, vec![Ok(()), Err(noc::ErrorKind::InvalidAddress)]);
    let ports = [xy(0, 11)];
    let r = block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000)));
    assert_eq!(
        r,
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 0,
            cause: Cause::Noc(noc::ErrorKind::InvalidAddress),
        })
    );
    // Page 1 would start past DRAM's 36 address bits: the block is misuse, and no page is read.
    let s = shared();
    let (mut dm, mut b, log) = reading_sender(&s, vec![]);
    let base = (1u64 << 36) - PAGE as u64;
    let r = block_on(b.read(&mut dm, 0, &block_0_reads(&ports, base)));
    assert_eq!(
        r,
        Err(GiveUp {
            place: Where::BroadcastBegin,
            broadcast: 0,
            block: 0,
            cause: Cause::Misuse,
        })
    );
    assert_eq!(*log.lock().unwrap(), [0u32; 0]);
    assert_eq!(s.lock().unwrap().stops_requested, 0);
    // Pages of 62 bytes (every other page would land off a word), and pages larger than the
    // buffer's (the block's reads would run into slot 1, and from the last slot past the
    // buffer): misuse, and no page is read.
    for len in [PAGE - 2, PAGE + 4] {
        let s = shared();
        let (mut dm, mut b, log) = reading_sender(&s, vec![]);
        let bad = PageReads {
            len,
            ..block_0_reads(&ports, 0x1000)
        };
        let r = block_on(b.read(&mut dm, 0, &bad));
        assert_eq!(
            r.map_err(|g| (g.place, g.cause)),
            Err((Where::BroadcastBegin, Cause::Misuse)),
            "pages of {len} bytes"
        );
        assert!(log.lock().unwrap().is_empty());
    }
    // Pages smaller than the buffer's fit their slot: read.
    let s = shared();
    let (mut dm, mut b, log) = reading_sender(&s, vec![]);
    let small = PageReads {
        len: PAGE - 4,
        ..block_0_reads(&ports, 0x1000)
    };
    assert_eq!(block_on(b.read(&mut dm, 0, &small)), Ok(()));
    assert_eq!(log.lock().unwrap().len(), PAGES as usize);
}

/// A NoC that logs where each `read_pages` call starts (the mock's `read_pages` is the trait's
/// provided one, which issues `read_tagged` per page), and hands every call to a mock.
struct PagesLogged {
    inner: MockNocMulticast,
    read_pages_from: Vec<u32>,
}

impl noc::ErrorType for PagesLogged {
    type Error = noc::ErrorKind;
}

impl NocMulticast for PagesLogged {
    fn noc(&self) -> NocId {
        self.inner.noc()
    }
    fn node(&self) -> Xy {
        self.inner.node()
    }
    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), noc::ErrorKind> {
        self.inner.read(src, dst, len)
    }
    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        self.inner.write(src, dst, len, mode)
    }
    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), noc::ErrorKind> {
        self.inner.multicast(src, rect, dst, len, mode)
    }
    fn reads_done(&mut self) -> Result<bool, noc::ErrorKind> {
        self.inner.reads_done()
    }
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), noc::ErrorKind> {
        self.inner.read_tagged(src, dst, len, tag)
    }
    fn read_pages(&mut self, from: u32, reads: &PageReads<'_>) -> Result<u32, noc::ErrorKind> {
        self.read_pages_from.push(from);
        self.inner.read_pages(from, reads)
    }
    fn writes_sent(&mut self) -> Result<bool, noc::ErrorKind> {
        self.inner.writes_sent()
    }
    fn writes_acked(&mut self) -> Result<bool, noc::ErrorKind> {
        self.inner.writes_acked()
    }
    fn resync(&mut self) -> Result<(), noc::ErrorKind> {
        self.inner.resync()
    }
}

/// "Most blocks' pages are all taken at once: then no wait is entered": a block whose pages the
/// NoC takes in one `read_pages` is asked of it once; a busy NoC is asked again from the first
/// page it did not take.
#[test]
fn a_read_asks_the_noc_for_its_pages_once_when_it_takes_them_all() {
    for (answers, froms) in [
        (vec![], vec![0]),
        (vec![Ok(()), Err(noc::ErrorKind::Busy)], vec![0, 1]),
    ] {
        let s = shared();
        let mut inner = noc_at(1, 2);
        let answers = Mutex::new(answers.into_iter());
        inner
            .expect_read_tagged()
            .returning(move |_, _, _, _| answers.lock().unwrap().next().unwrap_or(Ok(())));
        let mut dm = DataMovement {
            noc: PagesLogged {
                inner,
                read_pages_from: Vec::new(),
            },
            ctrl: ctrl(&s, 1_000),
            pause: Spin,
        };
        let column = LogicalRect::new(0, 0, 1, 3);
        let w = words_of_window(0, column, Along::Column, (0, 0), 2);
        let mut b = Broadcast::new(&mut dm, cb_of_window(&s, 2), &context(), &w, 0);
        assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
        let ports = [xy(0, 11)];
        assert_eq!(
            block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000))),
            Ok(())
        );
        assert_eq!(dm.noc.read_pages_from, froms);
    }
}

#[test]
fn a_read_of_no_page_is_done_at_once() {
    let s = shared();
    let (mut dm, mut b, log) = reading_sender(&s, vec![]);
    let ports = [xy(0, 11)];
    let none = PageReads {
        count: 0,
        ..block_0_reads(&ports, 0x1000)
    };
    assert_eq!(block_on(b.read(&mut dm, 0, &none)), Ok(()));
    assert!(log.lock().unwrap().is_empty());
    assert_eq!(b.give_up(), None);
}

#[test]
fn a_read_of_any_block_but_the_one_reserved_last_or_after_a_give_up_is_refused() {
    let s = shared();
    let (mut dm, mut b, log) = reading_sender(&s, vec![]);
    let ports = [xy(0, 11)];
    // Block 1 is not reserved: misuse, recorded, and the first give-up from then on.
    let reads = PageReads {
        first: PAGES as u32,
        ..block_0_reads(&ports, 0x1000)
    };
    let first = block_on(b.read(&mut dm, 1, &reads)).unwrap_err();
    assert_eq!(
        (first.place, first.cause),
        (Where::BroadcastDone, Cause::Misuse)
    );
    assert_eq!(
        block_on(b.read(&mut dm, 0, &block_0_reads(&ports, 0x1000))),
        Err(first)
    );
    assert!(log.lock().unwrap().is_empty(), "no read issued");
    // Block 0 reserved, its pages sent into another slot (a block there may not be popped yet)
    // or a word off its own: misuse, and nothing read.
    for dst in [CB_BASE + SLOT, CB_BASE + 4] {
        let s = shared();
        let (mut dm, mut b, log) = reading_sender(&s, vec![]);
        let reads = PageReads {
            dst: l1(dst),
            ..block_0_reads(&ports, 0x1000)
        };
        let g = block_on(b.read(&mut dm, 0, &reads)).unwrap_err();
        assert_eq!(
            (g.place, g.cause),
            (Where::BroadcastDone, Cause::Misuse),
            "{dst:#x}"
        );
        assert!(
            log.lock().unwrap().is_empty(),
            "no read issued into {dst:#x}"
        );
    }
    // Nothing reserved: block u32::MAX is "the block reserved last" by wrapping, and L1 0 the
    // slot never set; still misuse.
    let s = shared();
    let mut noc = noc_at(1, 2);
    noc.expect_read_tagged().never();
    let (mut dm, mut b) = ahead_sender(&s, noc, 2);
    let reads = PageReads {
        dst: l1(0),
        ..block_0_reads(&ports, 0x1000)
    };
    let g = block_on(b.read(&mut dm, u32::MAX, &reads)).unwrap_err();
    assert_eq!((g.place, g.cause), (Where::BroadcastDone, Cause::Misuse));
}
