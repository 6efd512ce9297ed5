//! Order checks: one `mockall::Sequence` across the NoC, control-block and circular-buffer
//! mocks, so the order of control-block stores and buffer pushes relative to NoC calls is
//! asserted, not only each mock's own order:
//!
//! * the sender stores VALID only after the data multicast and the previous VALID left, and
//!   before the VALID multicast (whose source it is); it pushes the block to its own compute
//!   after VALID went out;
//! * a receiver pushes a block to compute only after a load of VALID said the block was cast;
//! * a receiver stores its marker source before the marker write, and only after `writes_sent`;
//! * `finish` clears DONE-BY and VALID only after the acknowledgements;
//! * a give-up is recorded block, sequence, then where, before the tile's stop request.
//!
//! Every sequenced call is strict (`times(1)`); only the clock, the wait limit, the stop flag,
//! getters and the polled words are left unordered. The expected offsets and words are literals
//! of the specification (area 0 at control offset 0xA00; VALID at +0x00, marker source +0x10,
//! give-up +0x20/+0x24/+0x28, statistics +0x30/+0x34, DONE-BY rank r at +0x40 + 0x10 (r - 1);
//! markers `seq << 16 | count`): the command's sequence number is 0x0001_0007, so its markers
//! are 0x0007_nnnn.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use komorebi_broadcast::area::Where;
use komorebi_broadcast::args::Along;
use komorebi_broadcast::device::{Broadcast, Cause, Context, GiveUp};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::noc::WriteMode;
use komorebi_hal::{DataMovement, L1Addr, LogicalRect, NocAddr, NocId, Rect, Spin, Xy, block_on};
use komorebi_mock::{MockCircularBuffer, MockControlBlock, MockNocMulticast};
use mockall::Sequence;
use mockall::predicate::{always, eq};

/// L1 address of the control block in these tests.
const CTRL: u32 = 0x1_0000;
/// L1 address of the broadcast buffer.
const CB_BASE: u32 = 0x2_0000;
const PAGE: u32 = 64;
const PAGES: u16 = 2;
const WINDOW: u8 = 2;
const SEQ: u32 = 0x0001_0007;

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

/// The receivers' rectangle of the column of 3 cores at logical (0,0)..(0,2), NoC0
/// (1,2)..(1,4).
fn rect() -> Rect {
    Rect::new(xy(1, 3), xy(1, 4)).unwrap()
}

/// Broadcast `id`'s words for logical `core` of that column (CB 5, window 2, 2 pages).
fn column_words(id: u8, core: (u8, u8)) -> [u32; 11] {
    let g = common::blackhole(0);
    let params = BroadcastParams {
        broadcast: id,
        cb: 5,
        window: WINDOW,
        pages: PAGES,
    };
    let rect = LogicalRect::new(0, 0, 1, 3);
    let all = broadcast_args(&g, group(), rect, Along::Column, NocId::Noc0, params).unwrap();
    all.iter().find(|a| a.core == core).unwrap().words
}

fn group() -> LogicalRect {
    LogicalRect::new(0, 0, 3, 3)
}

fn context() -> Context {
    Context {
        sequence: SEQ,
        group: group(),
        exclusive: true,
    }
}

/// What the unordered mock calls read: the words loaded from the control block and the
/// buffer's counters.
#[derive(Default)]
struct State {
    words: BTreeMap<u32, u32>,
    pushed: u16,
    popped: u16,
    /// Compute pops everything pushed whenever the protocol looks.
    pops_all: bool,
}

type Shared = Arc<Mutex<State>>;

/// The three mocks and the one sequence they share.
struct Mocks {
    noc: MockNocMulticast,
    ctrl: MockControlBlock,
    cb: MockCircularBuffer,
    seq: Sequence,
    state: Shared,
}

impl Mocks {
    fn new(node: (u8, u8)) -> Self {
        let mut noc = MockNocMulticast::new();
        noc.expect_noc().return_const(NocId::Noc0);
        noc.expect_node().return_const(xy(node.0, node.1));
        Self {
            noc,
            ctrl: MockControlBlock::new(),
            cb: MockCircularBuffer::new(),
            seq: Sequence::new(),
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    fn store(&mut self, offset: u32, value: u32) {
        self.ctrl
            .expect_store()
            .with(eq(offset), eq(value))
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|_, _| Ok(()));
    }

    /// A store at `offset` of any value (the wait-cycle statistic).
    fn store_any(&mut self, offset: u32) {
        self.ctrl
            .expect_store()
            .with(eq(offset), always())
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|_, _| Ok(()));
    }

    /// One load of `offset` that returns `value`, in sequence.
    fn load(&mut self, offset: u32, value: u32) {
        self.ctrl
            .expect_load()
            .with(eq(offset))
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(move |_| Ok(value));
    }

    fn push(&mut self, pages: u16) {
        let st = self.state.clone();
        self.cb
            .expect_push()
            .with(eq(pages))
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(move |n| {
                let mut g = st.lock().unwrap();
                g.pushed = g.pushed.wrapping_add(n);
                Ok(())
            });
    }

    fn reads_done(&mut self) {
        self.noc
            .expect_reads_done()
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|| Ok(true));
    }

    fn writes_sent(&mut self) {
        self.writes_sent_is(true);
    }

    /// One `writes_sent` that answers `sent`, in sequence.
    fn writes_sent_is(&mut self, sent: bool) {
        self.noc
            .expect_writes_sent()
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(move || Ok(sent));
    }

    fn writes_acked(&mut self) {
        self.noc
            .expect_writes_acked()
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|| Ok(true));
    }

    /// A multicast of `len` bytes from `src` to the same address on every receiver.
    fn multicast(&mut self, src: u32, len: u32) {
        self.noc
            .expect_multicast()
            .with(
                eq(l1(src)),
                eq(rect()),
                eq(l1(src)),
                eq(len),
                eq(WriteMode::ORDERED),
            )
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|_, _, _, _, _| Ok(()));
    }

    /// A 4-byte write from `src` to the sender's (NoC0 (1,2)) control block at `dst`.
    fn write_to_sender(&mut self, src: u32, dst: u32) {
        self.noc
            .expect_write()
            .with(
                eq(l1(src)),
                eq(NocAddr::l1(xy(1, 2), l1(dst))),
                eq(4),
                eq(WriteMode::ORDERED),
            )
            .times(1)
            .in_sequence(&mut self.seq)
            .returning(|_, _, _, _| Ok(()));
    }

    /// The unordered calls, added after the sequenced ones (mockall matches expectations in
    /// the order they were set, skipping those already satisfied): loads of anything but
    /// `strict` read the state's words.
    fn build(
        mut self,
        wait_limit: u64,
        strict: &'static [u32],
    ) -> (Dm, MockCircularBuffer, Shared) {
        let c = &mut self.ctrl;
        c.expect_len().return_const(0x1000u32);
        c.expect_addr().returning(|off| Ok(l1(CTRL + off)));
        let st = self.state.clone();
        c.expect_load()
            .withf(move |off| !strict.contains(off))
            .returning(move |off| Ok(*st.lock().unwrap().words.get(&off).unwrap_or(&0)));
        let clock = Arc::new(Mutex::new(0u64));
        c.expect_now().returning(move || {
            let mut t = clock.lock().unwrap();
            *t += 1;
            *t
        });
        c.expect_wait_limit().returning(move || Ok(wait_limit));
        c.expect_stop_requested().returning(|| Ok(false));
        let capacity = WINDOW as u16 * PAGES;
        let b = &mut self.cb;
        b.expect_capacity().return_const(capacity);
        b.expect_page_size().return_const(PAGE);
        b.expect_base().return_const(l1(CB_BASE));
        let st = self.state.clone();
        b.expect_write_ptr().returning(move || {
            let g = st.lock().unwrap();
            l1(CB_BASE + (g.pushed % capacity) as u32 * PAGE)
        });
        let st = self.state.clone();
        b.expect_pushed()
            .returning(move || Ok(st.lock().unwrap().pushed));
        let st = self.state.clone();
        b.expect_popped().returning(move || {
            let mut g = st.lock().unwrap();
            if g.pops_all {
                g.popped = g.pushed;
            }
            Ok(g.popped)
        });
        let st = self.state.clone();
        b.expect_pages_free().returning(move || {
            let mut g = st.lock().unwrap();
            if g.pops_all {
                g.popped = g.pushed;
            }
            Ok(capacity - g.pushed.wrapping_sub(g.popped))
        });
        let st = self.state.clone();
        b.expect_pages_ready().returning(move || {
            let mut g = st.lock().unwrap();
            if g.pops_all {
                g.popped = g.pushed;
            }
            Ok(g.pushed.wrapping_sub(g.popped))
        });
        let dm = DataMovement {
            noc: self.noc,
            ctrl: self.ctrl,
            pause: Spin,
        };
        (dm, self.cb, self.state)
    }
}

type Dm = DataMovement<MockNocMulticast, MockControlBlock, Spin>;

/// The sender's cast of block `block` (into slot `block % 2`, 128 bytes): nothing outgoing (so
/// the previous VALID left), data multicast, VALID stored, VALID multicast from where it was
/// stored, pushed to its own compute.
fn expect_cast(m: &mut Mocks, block: u32, valid: u32) {
    m.reads_done();
    // Nothing outgoing before the data: VALID is stored without waiting for the data to leave.
    m.writes_sent();
    m.multicast(CB_BASE + (block % 2) * 128, 128);
    m.store(0xA00, valid);
    m.multicast(CTRL + 0xA00, 4);
    m.push(PAGES);
}

#[test]
fn sender_stores_valid_between_the_data_and_the_valid_multicast_then_pushes() {
    let mut m = Mocks::new((1, 2));
    m.state.lock().unwrap().pops_all = true;
    {
        // Both receivers are done with block 0 (and more) this command.
        let mut g = m.state.lock().unwrap();
        g.words.insert(0xA40, 0x0007_0003);
        g.words.insert(0xA50, 0x0007_0003);
    }
    // `new` resets the statistics.
    m.store(0xA30, 0);
    m.store(0xA34, 0);
    expect_cast(&mut m, 0, 0x0007_0001);
    expect_cast(&mut m, 1, 0x0007_0002);
    expect_cast(&mut m, 2, 0x0007_0003);
    // finish: one padding block, the acknowledgements, then DONE-BY and VALID cleared, then
    // the statistics.
    m.push(PAGES);
    m.writes_acked();
    m.store(0xA40, 0);
    m.store(0xA50, 0);
    m.store(0xA00, 0);
    m.store(0xA30, 3);
    m.store_any(0xA34);
    let (mut dm, cb, _) = m.build(1_000, &[]);
    let w = column_words(0, (0, 0));
    let mut b = Broadcast::new(&mut dm, cb, &context(), &w, 0);
    assert!(b.sender());
    for block in 0..3 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    block_on(b.finish(&mut dm)).unwrap();
    dm.noc.checkpoint();
    dm.ctrl.checkpoint();
    b.buffer().checkpoint();
}

#[test]
fn broadcast_1_sender_uses_the_second_area_at_0xb40() {
    let mut m = Mocks::new((1, 2));
    m.state.lock().unwrap().pops_all = true;
    m.store(0xB70, 0);
    m.store(0xB74, 0);
    m.reads_done();
    // A write still outgoing before the data (of an earlier command, say): VALID's source
    // changes only once `writes_sent` says every write left.
    m.writes_sent_is(false);
    m.multicast(CB_BASE, 128);
    m.writes_sent_is(false);
    m.writes_sent();
    m.store(0xB40, 0x0007_0001);
    m.multicast(CTRL + 0xB40, 4);
    m.push(PAGES);
    let (mut dm, cb, _) = m.build(1_000, &[]);
    let w = column_words(1, (0, 0));
    let mut b = Broadcast::new(&mut dm, cb, &context(), &w, 0);
    assert!(b.sender());
    block_on(b.reserve(&mut dm, 0)).unwrap();
    block_on(b.cast(&mut dm, 0)).unwrap();
    dm.noc.checkpoint();
    dm.ctrl.checkpoint();
    b.buffer().checkpoint();
}

#[test]
fn receiver_pushes_after_valid_and_stores_each_marker_before_writing_it() {
    // Rank 1: logical (0,1), NoC0 (1,3); its DONE-BY word is the sender's 0xA40.
    let mut m = Mocks::new((1, 3));
    m.store(0xA30, 0);
    m.store(0xA34, 0);
    // arrive(0): VALID not yet there, then a word of the previous command, then block 0 cast:
    // only then the push.
    m.load(0xA00, 0);
    m.load(0xA00, 0x0006_0001);
    m.load(0xA00, 0x0007_0001);
    m.push(PAGES);
    // arrive(1), compute having popped block 0: the previous marker left, the marker source
    // stored, its write issued; then VALID, then the push.
    m.writes_sent();
    m.store(0xA10, 0x0007_0001);
    m.write_to_sender(CTRL + 0xA10, CTRL + 0xA40);
    m.load(0xA00, 0x0007_0002);
    m.push(PAGES);
    // finish, compute having popped block 1: the last marker, its acknowledgement, then VALID
    // cleared, then the statistics.
    m.writes_sent();
    m.store(0xA10, 0x0007_0002);
    m.write_to_sender(CTRL + 0xA10, CTRL + 0xA40);
    m.writes_acked();
    m.store(0xA00, 0);
    m.store(0xA30, 2);
    m.store_any(0xA34);
    let (mut dm, cb, state) = m.build(1_000, &[0xA00]);
    let w = column_words(0, (0, 1));
    let mut b = Broadcast::new(&mut dm, cb, &context(), &w, 0);
    assert!(b.included() && !b.sender());
    block_on(b.arrive(&mut dm, 0)).unwrap();
    state.lock().unwrap().popped = 2;
    block_on(b.arrive(&mut dm, 1)).unwrap();
    state.lock().unwrap().popped = 4;
    block_on(b.finish(&mut dm)).unwrap();
    dm.noc.checkpoint();
    dm.ctrl.checkpoint();
    b.buffer().checkpoint();
}

#[test]
fn a_sender_that_times_out_clears_where_records_block_sequence_then_where_then_stops_its_tile() {
    let mut m = Mocks::new((1, 2));
    m.state.lock().unwrap().pops_all = true;
    m.store(0xA30, 0);
    m.store(0xA34, 0);
    expect_cast(&mut m, 0, 0x0007_0001);
    expect_cast(&mut m, 1, 0x0007_0002);
    // Block 2: no receiver marks block 0 (asked before the reads): the wait passes the limit.
    // The record: its where word cleared, block, sequence, then the where word.
    m.store(0xA20, 0);
    m.store(0xA24, 2);
    m.store(0xA28, 0x0001_0007);
    // `broadcast_done` of broadcast 0, the sequence's low half above.
    m.store(0xA20, 0x0007_0001);
    m.store(0xA30, 2);
    m.store_any(0xA34);
    m.ctrl
        .expect_request_stop()
        .times(1)
        .in_sequence(&mut m.seq)
        .returning(|| Ok(()));
    let (mut dm, cb, _) = m.build(40, &[]);
    let w = column_words(0, (0, 0));
    let mut b = Broadcast::new(&mut dm, cb, &context(), &w, 0);
    for block in 0..2 {
        block_on(b.reserve(&mut dm, block)).unwrap();
        block_on(b.cast(&mut dm, block)).unwrap();
    }
    block_on(b.reserve(&mut dm, 2)).unwrap();
    assert_eq!(
        block_on(b.cast(&mut dm, 2)),
        Err(GiveUp {
            place: Where::BroadcastDone,
            broadcast: 0,
            block: 2,
            cause: Cause::TimedOut,
        })
    );
    dm.noc.checkpoint();
    dm.ctrl.checkpoint();
    b.buffer().checkpoint();
}
