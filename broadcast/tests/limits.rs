//! The limits of a broadcast call, at their edges.
//!
//! * A call gives up within one wait limit in all, not one limit per wait inside it. The NoC and the DONE-BY words become ready at fixed cycles after the call starts, each step
//!   well inside one limit on its own, so a call that gave each of its waits the whole limit
//!   would succeed after more than one limit. The clock is the control block's: every `now()`
//!   is one cycle, so cycles here are rounds of the waits, and nothing depends on real time.
//! * A call reads the clock and the limit only once one of its waits does not hold at once:
//!   its deadline is one limit from there.
//! * A command has at most `MAX_BLOCKS` (32,767) blocks on the device as in compute's `end` and
//!   in the host's words: the sender casts block 32,766 and finishes, and is refused block
//!   32,767 (by `reserve` and by `cast`), a receiver arrives block 32,766 and is refused block
//!   32,767; compute's `end` takes 32,767 blocks and refuses 32,768.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use komorebi_broadcast::area::{self, GiveUpRecord, Where, marker};
use komorebi_broadcast::args::{Along, MAX_BLOCKS};
use komorebi_broadcast::compute::{ComputeError, end};
use komorebi_broadcast::device::{Broadcast, Cause, Context, GiveUp};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::{Compute, DataMovement, L1Addr, LogicalRect, NocId, Spin, Xy, block_on};
use komorebi_mock::{MockCircularBuffer, MockControlBlock, MockNocMulticast};

const LIMIT: u64 = 1_000;
/// The slack the device module documents, as cycles of this clock: one poll of each wait still
/// to come and the steps that do not wait. Far below a limit, and independent of it.
const SLACK: u64 = 40;
const CTRL: u32 = 0x1_0000;
const CB_BASE: u32 = 0x2_0000;
const PAGE: u32 = 64;
const PAGES: u16 = 2;
const WINDOW: u8 = 2;
const SEQ: u32 = 0x0001_0007;
const S16: u16 = 7;

#[derive(Default)]
struct State {
    clock: u64,
    words: BTreeMap<u32, u32>,
    pushed: u16,
    /// Cycle at which `reads_done` starts to say true.
    reads_at: u64,
    /// Cycle at which `writes_sent` starts to say true.
    sent_at: u64,
    /// Cycle at which `writes_acked` starts to say true.
    acked_at: u64,
    /// Cycle at which ranks 1 and 2 have their DONE word of this command.
    done_at: u64,
    /// The count of those DONE words.
    done_count: u16,
    /// The tile's stop flag.
    stop: bool,
}

type Shared = Arc<Mutex<State>>;

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

fn group() -> LogicalRect {
    LogicalRect::new(0, 0, 3, 3)
}

/// The sender's words of a column of 3 cores with `pages` pages a block: logical (0,0) at NoC0
/// (1,2) sends to (1,3)..(1,4).
fn sender_words_of(pages: u16) -> [u32; 11] {
    let g = common::blackhole(0);
    let params = BroadcastParams {
        broadcast: 0,
        cb: 5,
        window: WINDOW,
        pages,
    };
    let rect = LogicalRect::new(0, 0, 1, 3);
    let all = broadcast_args(&g, group(), rect, Along::Column, NocId::Noc0, params).unwrap();
    all.iter().find(|a| a.core == (0, 0)).unwrap().words
}

fn ctrl(s: &Shared) -> MockControlBlock {
    let mut c = MockControlBlock::new();
    c.expect_len().return_const(0x1000u32);
    c.expect_addr().returning(|off| Ok(l1(CTRL + off)));
    let st = s.clone();
    c.expect_load().returning(move |off| {
        let g = st.lock().unwrap();
        let done = [area::done_by(0, 1), area::done_by(0, 2)];
        if done.contains(&off) && g.clock >= g.done_at {
            return Ok(marker(S16, g.done_count));
        }
        Ok(*g.words.get(&off).unwrap_or(&0))
    });
    let st = s.clone();
    c.expect_store().returning(move |off, v| {
        st.lock().unwrap().words.insert(off, v);
        Ok(())
    });
    let st = s.clone();
    c.expect_now().returning(move || {
        let mut g = st.lock().unwrap();
        g.clock += 1;
        g.clock
    });
    c.expect_wait_limit().returning(|| Ok(LIMIT));
    let st = s.clone();
    c.expect_stop_requested()
        .returning(move || Ok(st.lock().unwrap().stop));
    c.expect_request_stop().returning(|| Ok(()));
    c
}

fn noc(s: &Shared) -> MockNocMulticast {
    let mut n = MockNocMulticast::new();
    n.expect_noc().return_const(NocId::Noc0);
    n.expect_node().return_const(Xy::new(1, 2).unwrap());
    let st = s.clone();
    n.expect_reads_done().returning(move || {
        let g = st.lock().unwrap();
        Ok(g.clock >= g.reads_at)
    });
    let st = s.clone();
    n.expect_writes_sent().returning(move || {
        let g = st.lock().unwrap();
        Ok(g.clock >= g.sent_at)
    });
    let st = s.clone();
    n.expect_writes_acked().returning(move || {
        let g = st.lock().unwrap();
        Ok(g.clock >= g.acked_at)
    });
    n.expect_multicast().returning(|_, _, _, _, _| Ok(()));
    n
}

/// A buffer whose compute pops everything at once.
fn cb(s: &Shared) -> MockCircularBuffer {
    cb_of(s, PAGES)
}

/// [`cb`] for blocks of `pages` pages.
fn cb_of(s: &Shared, pages: u16) -> MockCircularBuffer {
    let capacity = WINDOW as u16 * pages;
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
    b.expect_popped()
        .returning(move || Ok(st.lock().unwrap().pushed));
    b.expect_pages_free().returning(move || Ok(capacity));
    b.expect_pages_ready().returning(|| Ok(0));
    let st = s.clone();
    b.expect_push().returning(move |n| {
        let mut g = st.lock().unwrap();
        g.pushed = g.pushed.wrapping_add(n);
        Ok(())
    });
    b
}

type Dm = DataMovement<MockNocMulticast, MockControlBlock, Spin>;

fn sender(s: &Shared) -> (Dm, Broadcast<MockCircularBuffer>) {
    sender_of(s, PAGES)
}

/// [`sender`] of `pages` pages a block.
fn sender_of(s: &Shared, pages: u16) -> (Dm, Broadcast<MockCircularBuffer>) {
    let mut dm = DataMovement {
        noc: noc(s),
        ctrl: ctrl(s),
        pause: Spin,
    };
    let context = Context {
        sequence: SEQ,
        group: group(),
        exclusive: true,
    };
    let b = Broadcast::new(
        &mut dm,
        cb_of(s, pages),
        &context,
        &sender_words_of(pages),
        0,
    );
    assert!(b.ok() && b.sender());
    (dm, b)
}

fn clock(s: &Shared) -> u64 {
    s.lock().unwrap().clock
}

/// Sets the cycles, counted from now, at which the NoC barriers and the DONE words hold.
fn ready_in(s: &Shared, reads: u64, sent: u64, acked: u64, done: u64) {
    let mut g = s.lock().unwrap();
    let now = g.clock;
    (g.reads_at, g.sent_at, g.acked_at, g.done_at) =
        (now + reads, now + sent, now + acked, now + done);
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

#[test]
fn a_cast_whose_waits_each_fit_a_limit_but_not_together_gives_up_at_one_limit() {
    let s = shared_state();
    let (mut dm, mut b) = sender(&s);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    // Reads land at 0.6 limit, the data multicast leaves at 1.2 limits: each wait alone is
    // 0.6 limit, the call together 1.2.
    ready_in(&s, 600, 1_200, 0, 0);
    let start = clock(&s);
    let out = block_on(b.cast(&mut dm, 0));
    let took = clock(&s) - start;
    assert_eq!(
        out,
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 0,
            cause: Cause::TimedOut,
        })
    );
    assert!(
        (LIMIT..=LIMIT + SLACK).contains(&took),
        "the call took {took} cycles for a limit of {LIMIT}"
    );
    assert_eq!(
        record(&s).map(|r| (r.place, r.block, r.sequence)),
        Some((Where::BroadcastDone, 0, SEQ))
    );
    assert!(
        b.wait_cycles() <= LIMIT + SLACK,
        "waited {}",
        b.wait_cycles()
    );
}

#[test]
fn a_cast_whose_waits_together_fit_one_limit_succeeds() {
    let s = shared_state();
    let (mut dm, mut b) = sender(&s);
    block_on(b.reserve(&mut dm, 0)).unwrap();
    // The edge on the other side: the last barrier holds just inside the call's limit.
    ready_in(&s, 600, LIMIT - SLACK, 0, 0);
    let start = clock(&s);
    block_on(b.cast(&mut dm, 0)).unwrap();
    let took = clock(&s) - start;
    assert!((LIMIT - SLACK..=LIMIT).contains(&took), "took {took}");
    assert_eq!(record(&s), None);
}

#[test]
fn a_finish_waiting_for_markers_then_acks_gives_up_at_one_limit() {
    let s = shared_state();
    let (mut dm, mut b) = sender(&s);
    // No block: finish waits for the receivers' final markers (0.7 limit), then for its own
    // acknowledgements (1.4 limits).
    ready_in(&s, 0, 0, 1_400, 700);
    let start = clock(&s);
    let out = block_on(b.finish(&mut dm));
    let took = clock(&s) - start;
    assert_eq!(
        out.map_err(|g| (g.place, g.cause)),
        Err((Where::BroadcastDone, Cause::TimedOut))
    );
    assert!((LIMIT..=LIMIT + SLACK).contains(&took), "took {took}");
    // The same call with the acknowledgements inside the limit finishes.
    let s = shared_state();
    let (mut dm, mut b) = sender(&s);
    ready_in(&s, 0, 0, LIMIT - SLACK, 700);
    block_on(b.finish(&mut dm)).unwrap();
}

#[test]
fn calls_whose_waits_hold_at_once_read_neither_the_clock_nor_the_limit() {
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    // Every `now()` moves this clock one cycle: none moves it, so none was made. Reads, the
    // DONE words and the multicasts' departures all hold from cycle 0.
    let start = clock(&s);
    for block in 0..4 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert_eq!(clock(&s), start, "a wait that held at once read the clock");
    assert_eq!(b.wait_cycles(), 0);
    // One wait that does not hold at once: the call reads the clock for its deadline.
    ready_in(&s, 5, 0, 0, 0);
    block_on(b.reserve(&mut dm, 4)).unwrap();
    block_on(b.cast(&mut dm, 4)).unwrap();
    assert!(
        clock(&s) > start + 5,
        "the cast waited for its reads by the clock"
    );
}

fn shared_state() -> Shared {
    Arc::new(Mutex::new(State::default()))
}

#[test]
fn the_device_casts_max_blocks_and_refuses_one_more() {
    assert_eq!(MAX_BLOCKS, 32_767);
    let s = shared_state();
    // Every receiver is always done with everything: the waits pass at once.
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert_eq!(b.blocks(), MAX_BLOCKS);
    // The last VALID says 32,767 blocks.
    assert_eq!(
        s.lock().unwrap().words[&(area::area(0) + area::VALID)],
        marker(S16, 32_767)
    );
    let misuse = Err(GiveUp {
        place: Where::BroadcastFree,
        broadcast: 0,
        block: MAX_BLOCKS,
        cause: Cause::Misuse,
    });
    assert_eq!(
        block_on(b.reserve(&mut dm, MAX_BLOCKS)),
        misuse.map(|()| l1(0))
    );
}

#[test]
fn a_sender_with_max_blocks_finishes() {
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    block_on(b.finish(&mut dm)).unwrap();
    // Padding to whole windows: 32,767 blocks in windows of 2 leave one block of padding.
    assert_eq!(
        s.lock().unwrap().pushed,
        ((MAX_BLOCKS + 1) * PAGES as u32) as u16
    );
}

#[test]
fn a_sender_whose_compute_popped_more_than_65536_pages_in_all_finishes() {
    // 32,767 blocks of 4 pages: 131,068 pages, so the buffer's 16-bit popped counter wraps
    // twice before `finish` (a sender reads it nowhere before), and only the pages still in the
    // buffer say whether compute popped every block.
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender_of(&s, 4);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    assert_eq!(block_on(b.finish(&mut dm)), Ok(()));
    assert_eq!(
        s.lock().unwrap().pushed,
        ((MAX_BLOCKS + 1) * 4) as u16,
        "the blocks and one of padding"
    );
    assert_eq!(record(&s), None);
}

#[test]
fn compute_ends_max_blocks_and_refuses_one_more() {
    let s = shared_state();
    let mut compute = Compute {
        ctrl: ctrl(&s),
        pause: Spin,
    };
    let mut cb = MockCircularBuffer::new();
    cb.expect_pages_ready().returning(|| Ok(PAGES));
    // 32,767 blocks in windows of 2: one block of padding to pop.
    cb.expect_pop()
        .with(mockall::predicate::eq(PAGES))
        .times(1)
        .returning(|_| Ok(()));
    block_on(end(&mut compute, &mut cb, PAGES, WINDOW, MAX_BLOCKS)).unwrap();
    assert_eq!(
        block_on(end(&mut compute, &mut cb, PAGES, WINDOW, MAX_BLOCKS + 1)),
        Err(ComputeError::Misuse)
    );
}

#[test]
fn after_max_blocks_the_senders_cast_of_one_more_is_refused_on_its_own() {
    // `cast` checks the limit itself, not only through `reserve`: a cast of block 32,767
    // without a reserve is misuse, and nothing is multicast or pushed.
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    let pushed = s.lock().unwrap().pushed;
    assert_eq!(
        block_on(b.cast(&mut dm, MAX_BLOCKS)),
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 32_767,
            cause: Cause::Misuse,
        })
    );
    assert_eq!(s.lock().unwrap().pushed, pushed);
    assert_eq!(b.blocks(), 32_767);
}

#[test]
fn after_max_blocks_a_cast_of_one_more_on_a_stopped_tile_is_misuse_not_a_stop() {
    // A call's own misuse comes before the stop flag (the device module's docs): `cast` of
    // block 32,767 on a stopped tile is misuse, as it is with no stop, for both protocols'
    // senders (the handshake peer's casts through the same checks).
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    s.lock().unwrap().stop = true;
    let misuse = GiveUp {
        place: Where::BroadcastDone,
        broadcast: 0,
        block: 32_767,
        cause: Cause::Misuse,
    };
    assert_eq!(block_on(b.cast(&mut dm, MAX_BLOCKS)), Err(misuse));
    let s = shared_state();
    s.lock().unwrap().done_count = u16::MAX;
    let (mut dm, mut b) = sender(&s);
    for block in 0..MAX_BLOCKS {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.handshake(&mut dm, block)).unwrap();
    }
    s.lock().unwrap().stop = true;
    assert_eq!(block_on(b.handshake(&mut dm, MAX_BLOCKS)), Err(misuse));
}

/// The first receiver of the column, logical (0,1), NoC0 (1,3), whose VALID word says 32,767
/// blocks of this command (so block 32,767 would time out if it were admitted: it is misuse).
fn receiver_told_max_blocks() -> (Shared, Dm, Broadcast<MockCircularBuffer>) {
    let s = shared_state();
    s.lock()
        .unwrap()
        .words
        .insert(area::area(0) + area::VALID, marker(S16, 32_767));
    let mut n = MockNocMulticast::new();
    n.expect_noc().return_const(NocId::Noc0);
    n.expect_node().return_const(Xy::new(1, 3).unwrap());
    n.expect_writes_sent().returning(|| Ok(true));
    n.expect_write().returning(|_, _, _, _| Ok(()));
    let mut dm = DataMovement {
        noc: n,
        ctrl: ctrl(&s),
        pause: Spin,
    };
    let context = Context {
        sequence: SEQ,
        group: group(),
        exclusive: true,
    };
    let g = common::blackhole(0);
    let params = BroadcastParams {
        broadcast: 0,
        cb: 5,
        window: WINDOW,
        pages: PAGES,
    };
    let rect = LogicalRect::new(0, 0, 1, 3);
    let all = broadcast_args(&g, group(), rect, Along::Column, NocId::Noc0, params).unwrap();
    let words = all.iter().find(|a| a.core == (0, 1)).unwrap().words;
    let b = Broadcast::new(&mut dm, cb(&s), &context, &words, 0);
    (s, dm, b)
}

/// What a receiver's call of block 32,767 gives up with, VALID having said 32,767 blocks.
const PAST_MAX_BLOCKS: GiveUp = GiveUp {
    place: Where::BroadcastValid,
    broadcast: 0,
    block: 32_767,
    cause: Cause::Misuse,
};

#[test]
fn a_receiver_arrives_max_blocks_and_is_refused_one_more() {
    let (_s, mut dm, mut b) = receiver_told_max_blocks();
    assert!(b.included() && !b.sender());
    for block in 0..MAX_BLOCKS {
        block_on(b.arrive(&mut dm, block)).unwrap();
    }
    assert_eq!(b.blocks(), 32_767);
    assert_eq!(
        block_on(b.arrive(&mut dm, MAX_BLOCKS)),
        Err(PAST_MAX_BLOCKS)
    );
}

#[test]
fn a_handshake_receiver_takes_max_blocks_and_is_refused_one_more() {
    // The handshake peer's receiver: its flag is the VALID word.
    let (_s, mut dm, mut b) = receiver_told_max_blocks();
    for block in 0..MAX_BLOCKS {
        block_on(b.handshake(&mut dm, block)).unwrap();
    }
    assert_eq!(b.blocks(), 32_767);
    assert_eq!(
        block_on(b.handshake(&mut dm, MAX_BLOCKS)),
        Err(PAST_MAX_BLOCKS)
    );
}
