//! The handshake peer (`Broadcast::handshake`, with `reserve` and `finish`) against komorebi-mock:
//! the exact NoC calls each core makes, in order, the exact control-block words it stores and
//! the buffer pushes, and where it gives up.
//!
//! A column of 3 cores on NoC0 (logical (0,0)..(0,2), NoC0 (1,2)..(1,4)): the sender (1,2)
//! multicasts to (1,3)..(1,4). Broadcast 0, window 2, 2 pages of 64 bytes: slots of 128 bytes.
//! The fake NoC records every call and answers at once (`writes_sent` as the test sets it); the
//! control block is 0x1000 bytes of words, and every `now()` is one cycle.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use komorebi_broadcast::area::{self, GiveUpRecord, Where, marker};
use komorebi_broadcast::args::Along;
use komorebi_broadcast::device::{Broadcast, Cause, Context, GiveUp};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::noc::WriteMode;
use komorebi_hal::{
    DataMovement, L1Addr, LogicalRect, NocAddr, NocId, Rect, Spin, Xy, block_on, control,
};
use komorebi_mock::{MockCircularBuffer, MockControlBlock, MockNocMulticast};

const CTRL: u32 = 0x1_0000;
const CB_BASE: u32 = 0x2_0000;
const PAGE: u32 = 64;
const PAGES: u16 = 2;
const WINDOW: u8 = 2;
const CAPACITY: u16 = WINDOW as u16 * PAGES;
const SEQ: u32 = 0x0001_0007;
const S16: u16 = 7;
const VALID0: u32 = area::CONTROL_BROADCAST + area::VALID;
const MARKER_SRC0: u32 = area::CONTROL_BROADCAST + area::MARKER_SOURCE;

/// A NoC call, as the fake NoC records it.
#[derive(Clone, Debug, PartialEq)]
enum Call {
    ReadsDone,
    WritesSent,
    WritesAcked,
    Write(L1Addr, NocAddr, u32, WriteMode),
    Multicast(L1Addr, Rect, L1Addr, u32, WriteMode),
}

#[derive(Default)]
struct State {
    words: BTreeMap<u32, u32>,
    stores: Vec<(u32, u32)>,
    clock: u64,
    stops_requested: u32,
    pushes: Vec<u16>,
    pushed: u16,
    popped: u16,
    /// Compute pops every page pushed as soon as the buffer is asked.
    pops_all: bool,
    /// What `writes_sent` answers.
    sent: bool,
    calls: Vec<Call>,
    /// Both receivers' ready words say `count` once the sender loaded them `after` times in
    /// all: `(after, count)` (the receivers' NoC writes landing during the sender's wait).
    ready_after: Option<(u32, u16)>,
    loads_of_done_by: u32,
}

type Shared = Arc<Mutex<State>>;

fn shared() -> Shared {
    Arc::new(Mutex::new(State {
        sent: true,
        ..State::default()
    }))
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

fn ctrl(s: &Shared, wait_limit: u64) -> MockControlBlock {
    let mut c = MockControlBlock::new();
    c.expect_len().return_const(0x1000u32);
    c.expect_addr().returning(|off| Ok(l1(CTRL + off)));
    let st = s.clone();
    c.expect_load().returning(move |off| {
        if off >= 0x1000 || off % 4 != 0 {
            return Err(control::ErrorKind::OutOfRange);
        }
        let mut g = st.lock().unwrap();
        if off == area::done_by(0, 1) || off == area::done_by(0, 2) {
            g.loads_of_done_by += 1;
            if let Some((after, count)) = g.ready_after {
                if g.loads_of_done_by > after {
                    g.words.insert(area::done_by(0, 1), marker(S16, count));
                    g.words.insert(area::done_by(0, 2), marker(S16, count));
                }
            }
        }
        Ok(*g.words.get(&off).unwrap_or(&0))
    });
    let st = s.clone();
    c.expect_store().returning(move |off, v| {
        if off >= 0x1000 || off % 4 != 0 {
            return Err(control::ErrorKind::OutOfRange);
        }
        let mut g = st.lock().unwrap();
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
    c.expect_stop_requested().returning(|| Ok(false));
    let st = s.clone();
    c.expect_request_stop().returning(move || {
        st.lock().unwrap().stops_requested += 1;
        Ok(())
    });
    c
}

fn cb(s: &Shared) -> MockCircularBuffer {
    let mut b = MockCircularBuffer::new();
    b.expect_capacity().return_const(CAPACITY);
    b.expect_page_size().return_const(PAGE);
    b.expect_base().return_const(l1(CB_BASE));
    let st = s.clone();
    b.expect_write_ptr().returning(move || {
        let g = st.lock().unwrap();
        l1(CB_BASE + (g.pushed % CAPACITY) as u32 * PAGE)
    });
    fn popped(g: &mut State) -> u16 {
        if g.pops_all {
            g.popped = g.pushed;
        }
        g.popped
    }
    let st = s.clone();
    b.expect_popped()
        .returning(move || Ok(popped(&mut st.lock().unwrap())));
    let st = s.clone();
    b.expect_pages_free().returning(move || {
        let mut g = st.lock().unwrap();
        Ok(CAPACITY - g.pushed.wrapping_sub(popped(&mut g)))
    });
    let st = s.clone();
    b.expect_pages_ready().returning(move || {
        let mut g = st.lock().unwrap();
        Ok(g.pushed.wrapping_sub(popped(&mut g)))
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

/// The NoC of the core at NoC0 (x, y), recording every call.
fn noc(s: &Shared, x: u8, y: u8) -> MockNocMulticast {
    let mut n = MockNocMulticast::new();
    n.expect_noc().return_const(NocId::Noc0);
    n.expect_node().return_const(xy(x, y));
    let st = s.clone();
    n.expect_reads_done().returning(move || {
        st.lock().unwrap().calls.push(Call::ReadsDone);
        Ok(true)
    });
    let st = s.clone();
    n.expect_writes_sent().returning(move || {
        let mut g = st.lock().unwrap();
        g.calls.push(Call::WritesSent);
        Ok(g.sent)
    });
    let st = s.clone();
    n.expect_writes_acked().returning(move || {
        st.lock().unwrap().calls.push(Call::WritesAcked);
        Ok(true)
    });
    let st = s.clone();
    n.expect_write().returning(move |src, dst, len, mode| {
        st.lock()
            .unwrap()
            .calls
            .push(Call::Write(src, dst, len, mode));
        Ok(())
    });
    let st = s.clone();
    n.expect_multicast()
        .returning(move |src, rect, dst, len, mode| {
            st.lock()
                .unwrap()
                .calls
                .push(Call::Multicast(src, rect, dst, len, mode));
            Ok(())
        });
    n
}

type Dm = DataMovement<MockNocMulticast, MockControlBlock, Spin>;

fn group() -> LogicalRect {
    LogicalRect::new(0, 0, 3, 3)
}

/// Core `core` (logical) of the column: its data movement and its broadcast, checked `ok`.
fn core(s: &Shared, core: (u8, u8), wait_limit: u64) -> (Dm, Broadcast<MockCircularBuffer>) {
    let params = BroadcastParams {
        broadcast: 0,
        cb: 5,
        window: WINDOW,
        pages: PAGES,
    };
    let column = LogicalRect::new(0, 0, 1, 3);
    let all = broadcast_args(
        &common::blackhole(0),
        group(),
        column,
        Along::Column,
        NocId::Noc0,
        params,
    )
    .unwrap();
    let words = all.iter().find(|a| a.core == core).unwrap().words;
    // Logical column 0 is NoC0 x 1, logical rows 0..=2 NoC0 y 2..=4; (1,1) is outside.
    let (x, y) = if core.0 == 0 {
        (1, core.1 + 2)
    } else {
        (2, core.1 + 2)
    };
    let mut dm = DataMovement {
        noc: noc(s, x, y),
        ctrl: ctrl(s, wait_limit),
        pause: Spin,
    };
    let context = Context {
        sequence: SEQ,
        group: group(),
        exclusive: true,
    };
    let b = Broadcast::new(&mut dm, cb(s), &context, &words, 0);
    assert!(b.ok());
    (dm, b)
}

/// Rank `rank`'s ready word at the sender (1,2): its DONE-BY word.
fn ready_dst(rank: u8) -> NocAddr {
    NocAddr::l1(xy(1, 2), l1(CTRL + area::done_by(0, rank)))
}

fn ready_write(rank: u8) -> Call {
    Call::Write(
        l1(CTRL + MARKER_SRC0),
        ready_dst(rank),
        4,
        WriteMode::ORDERED,
    )
}

fn rect() -> Rect {
    Rect::new(xy(1, 3), xy(1, 4)).unwrap()
}

fn data(slot: u32) -> Call {
    Call::Multicast(l1(slot), rect(), l1(slot), 128, WriteMode::ORDERED)
}

fn flag() -> Call {
    Call::Multicast(
        l1(CTRL + VALID0),
        rect(),
        l1(CTRL + VALID0),
        4,
        WriteMode::ORDERED,
    )
}

/// Every value stored at `offset`, in order.
fn stored(s: &Shared, offset: u32) -> Vec<u32> {
    let g = s.lock().unwrap();
    g.stores
        .iter()
        .filter(|(o, _)| *o == offset)
        .map(|&(_, v)| v)
        .collect()
}

fn calls(s: &Shared) -> Vec<Call> {
    std::mem::take(&mut s.lock().unwrap().calls)
}

fn record(s: &Shared) -> Option<GiveUpRecord> {
    let g = s.lock().unwrap();
    let w = |o| *g.words.get(&(area::area(0) + o)).unwrap_or(&0);
    GiveUpRecord::from_words([
        w(area::GIVE_UP_WHERE),
        w(area::GIVE_UP_BLOCK),
        w(area::GIVE_UP_SEQUENCE),
    ])
}

fn give_up(place: Where, block: u32, cause: Cause) -> GiveUp {
    GiveUp {
        place,
        broadcast: 0,
        block,
        cause,
    }
}

// ---- receiver ------------------------------------------------------------------------------

#[test]
fn a_receiver_says_ready_for_each_block_then_takes_it_on_the_flag_and_finish_sends_nothing_more() {
    let s = shared();
    {
        let mut g = s.lock().unwrap();
        g.pops_all = true;
        g.words.insert(VALID0, marker(S16, 3));
    }
    // Rank 2, the last core of the column.
    let (mut dm, mut b) = core(&s, (0, 2), 1_000);
    assert!(b.included() && !b.sender());
    for block in 0..3 {
        block_on(b.handshake(&mut dm, block)).unwrap();
        // Per block: the previous ready write left, then this one, from the marker source.
        assert_eq!(
            calls(&s),
            [Call::WritesSent, ready_write(2)],
            "block {block}"
        );
        assert_eq!(b.blocks(), block + 1);
    }
    assert_eq!(
        stored(&s, MARKER_SRC0),
        [marker(S16, 1), marker(S16, 2), marker(S16, 3)]
    );
    assert_eq!(s.lock().unwrap().pushes, [PAGES, PAGES, PAGES]);
    block_on(b.finish(&mut dm)).unwrap();
    // The last ready word already said 3 blocks: `finish` only waits for its acknowledgement.
    assert_eq!(calls(&s), [Call::WritesAcked]);
    assert_eq!(stored(&s, MARKER_SRC0).len(), 3);
    let g = s.lock().unwrap();
    assert_eq!(
        g.pushes,
        [PAGES, PAGES, PAGES, PAGES],
        "3 blocks and 1 padding block"
    );
    assert_eq!(g.words[&VALID0], 0);
    assert_eq!(g.words[&(area::area(0) + area::STATS_BLOCKS)], 3);
    assert_eq!(b.give_up(), None);
}

#[test]
fn a_receiver_takes_a_block_only_on_a_flag_of_this_command_that_counts_it() {
    // The flag says 1 block: block 0 is taken, block 1 waits for it (after saying ready) until
    // the limit.
    let s = shared();
    s.lock().unwrap().pops_all = true;
    s.lock().unwrap().words.insert(VALID0, marker(S16, 1));
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    block_on(b.handshake(&mut dm, 0)).unwrap();
    let expected = give_up(Where::BroadcastValid, 1, Cause::TimedOut);
    assert_eq!(block_on(b.handshake(&mut dm, 1)), Err(expected));
    assert_eq!(
        calls(&s),
        [
            Call::WritesSent,
            ready_write(1),
            Call::WritesSent,
            ready_write(1)
        ]
    );
    assert_eq!(stored(&s, MARKER_SRC0), [marker(S16, 1), marker(S16, 2)]);
    assert_eq!(s.lock().unwrap().pushes, [PAGES]);
    assert_eq!(
        record(&s),
        Some(GiveUpRecord {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 1,
            sequence: SEQ,
        })
    );
    assert_eq!(s.lock().unwrap().stops_requested, 0);
    assert_eq!(b.blocks(), 1);
    // A flag an earlier command left (sequence 6) counts nothing.
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16 - 1, 9));
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    assert_eq!(
        block_on(b.handshake(&mut dm, 0)),
        Err(give_up(Where::BroadcastValid, 0, Cause::TimedOut))
    );
    assert!(s.lock().unwrap().pushes.is_empty());
}

#[test]
fn a_receiver_says_ready_only_once_its_own_slot_is_free() {
    // Compute pops nothing: blocks 0 and 1 fill the window, and block 2's slot (slot 0) never
    // frees, so the receiver never says it is ready for it.
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    block_on(b.handshake(&mut dm, 0)).unwrap();
    block_on(b.handshake(&mut dm, 1)).unwrap();
    calls(&s);
    assert_eq!(
        block_on(b.handshake(&mut dm, 2)),
        Err(give_up(Where::BroadcastFree, 2, Cause::TimedOut))
    );
    assert_eq!(calls(&s), []);
    assert_eq!(stored(&s, MARKER_SRC0), [marker(S16, 1), marker(S16, 2)]);
    assert_eq!(s.lock().unwrap().pushes, [PAGES, PAGES]);
}

#[test]
fn a_receiver_changes_its_ready_word_only_once_the_previous_write_left() {
    let s = shared();
    s.lock().unwrap().pops_all = true;
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    s.lock().unwrap().sent = false;
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    assert_eq!(
        block_on(b.handshake(&mut dm, 0)),
        Err(give_up(Where::BroadcastValid, 0, Cause::TimedOut))
    );
    let c = calls(&s);
    assert!(
        c.len() > 1 && c.iter().all(|c| *c == Call::WritesSent),
        "{c:?}"
    );
    assert_eq!(stored(&s, MARKER_SRC0), []);
}

#[test]
fn a_receiver_whose_buffer_is_not_at_the_blocks_slot_gives_up_broadcast_free() {
    // Something else pushed a page into the buffer (compute pops it): the write pointer is one
    // page past slot 0, so block 0's slot is not where the next push lands.
    let s = shared();
    s.lock().unwrap().pops_all = true;
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    s.lock().unwrap().pushed = 1;
    assert_eq!(
        block_on(b.handshake(&mut dm, 0)),
        Err(give_up(Where::BroadcastFree, 0, Cause::NotAtSlotZero))
    );
    assert_eq!(calls(&s), []);
}

#[test]
fn a_core_outside_the_broadcast_or_a_block_out_of_order_is_misuse() {
    let s = shared();
    let (mut dm, mut b) = core(&s, (1, 1), 100);
    assert!(!b.included());
    assert_eq!(
        block_on(b.handshake(&mut dm, 0)),
        Err(give_up(Where::BroadcastValid, 0, Cause::Misuse))
    );
    let s = shared();
    s.lock().unwrap().words.insert(VALID0, marker(S16, 3));
    let (mut dm, mut b) = core(&s, (0, 1), 100);
    assert_eq!(
        block_on(b.handshake(&mut dm, 1)),
        Err(give_up(Where::BroadcastValid, 1, Cause::Misuse))
    );
    assert_eq!(calls(&s), []);
    assert_eq!(b.blocks(), 0);
}

// ---- sender --------------------------------------------------------------------------------

#[test]
fn the_sender_casts_a_block_once_every_receiver_is_ready_for_it_and_flushes_before_the_flag() {
    let s = shared();
    s.lock().unwrap().pops_all = true;
    // Both receivers say they are ready for block 0 once the sender loaded their words 4 times
    // (its fifth poll: a poll stops at the first word not ready, rank 1's).
    s.lock().unwrap().ready_after = Some((4, 1));
    let (mut dm, mut b) = core(&s, (0, 0), 1_000);
    assert!(b.sender());
    assert_eq!(block_on(b.reserve(&mut dm, 0)), Ok(l1(CB_BASE)));
    block_on(b.handshake(&mut dm, 0)).unwrap();
    // No multicast before both words said 1; then the reads, the data, a flush, the flag
    // (never a `writes_sent` before the data: the peer does not look, it flushes).
    assert_eq!(s.lock().unwrap().loads_of_done_by, 6);
    assert_eq!(
        calls(&s),
        [Call::ReadsDone, data(CB_BASE), Call::WritesSent, flag()]
    );
    assert_eq!(stored(&s, VALID0), [marker(S16, 1)]);
    assert_eq!(s.lock().unwrap().pushes, [PAGES]);
    // Block 1: the receivers still say 1, not ready for block 1: the sender waits for them
    // until the limit, gives up broadcast_done and stops its tile.
    assert_eq!(block_on(b.reserve(&mut dm, 1)), Ok(l1(CB_BASE + 128)));
    let expected = give_up(Where::BroadcastDone, 1, Cause::TimedOut);
    assert_eq!(block_on(b.handshake(&mut dm, 1)), Err(expected));
    assert_eq!(calls(&s), []);
    assert_eq!(s.lock().unwrap().stops_requested, 1);
    assert_eq!(
        record(&s),
        Some(GiveUpRecord {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 1,
            sequence: SEQ,
        })
    );
}

#[test]
fn the_sender_stores_the_flag_only_once_the_data_left() {
    let s = shared();
    s.lock().unwrap().pops_all = true;
    s.lock().unwrap().ready_after = Some((0, 1));
    s.lock().unwrap().sent = false;
    let (mut dm, mut b) = core(&s, (0, 0), 100);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    assert_eq!(
        block_on(b.handshake(&mut dm, 0)),
        Err(give_up(Where::BroadcastDone, 0, Cause::TimedOut))
    );
    let c = calls(&s);
    assert_eq!(c[..3], [Call::ReadsDone, data(CB_BASE), Call::WritesSent]);
    assert!(c[3..].iter().all(|c| *c == Call::WritesSent), "{c:?}");
    assert_eq!(stored(&s, VALID0), []);
    assert!(s.lock().unwrap().pushes.is_empty());
}
