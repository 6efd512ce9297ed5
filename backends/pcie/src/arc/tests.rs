//! The ARC message queue and the open's waits against a fake ARC.
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use blackhole_pac::arc::{self, msg, tag};
use std::time::Duration;

use super::port::*;
use super::queue::*;
use super::wait::*;
use crate::bar::LockOp;
use crate::error::PcieError;
use crate::telemetry::ArcRead;

/// A fake ARC in memory: scratch, a queue control block with 4 queues of `n` entries,
/// and a telemetry table whose AICLK and GDDR_STATUS a test sets. `serve` says how it
/// answers the IRQ.
struct FakeArc {
    words: RefCell<BTreeMap<u64, u32>>,
    serve: Serve,
    /// Cycles each wait passes; 0 models a device whose clock does not move.
    step: u64,
    waits: Cell<u64>,
    /// After this many waits following AICLK_GO_BUSY, AICLK reads `busy`.
    ramp: Option<u64>,
    busy: u32,
    go_busy_at: Cell<Option<u64>>,
    /// Tries of ARC's message lock another process still refuses (`u32::MAX`: for good).
    other_holds: Cell<u32>,
    /// Whether this process holds the lock; every queue write asserts it.
    ours: Cell<bool>,
    /// Waits before the telemetry pointers read anything but 0 (the firmware publishes them
    /// after its message queue is up).
    telemetry_after: Cell<u64>,
    /// Ignore the next interrupt: its request is answered at the one after (a late answer).
    late_once: Cell<bool>,
    /// Take the next request and never answer it, nor any later one (a handler that hangs).
    hang_next: Cell<bool>,
    hung: Cell<bool>,
}

#[derive(Copy, Clone, PartialEq)]
enum Serve {
    /// Answer every request with status `.0` and the value 7, but `AICLK_GO_BUSY` with 0
    /// (the exit code of success).
    Status(u32),
    /// Answer `AICLK_GO_BUSY` with status 0 and exit code `.0`.
    GoBusyExit(u32),
    /// Never answer.
    Silent,
}

const QCB: u32 = arc::ARC_CSM_BASE + 0x100;
const Q0: u32 = arc::ARC_CSM_BASE + 0x200;
const N: u32 = 2;
const TABLE: u32 = arc::ARC_CSM_BASE + 0x4000;
const DATA: u32 = arc::ARC_CSM_BASE + 0x5000;
const TAGS: [u16; 5] = [
    tag::AICLK,
    tag::AICLK_LIMIT_MAX,
    tag::GDDR_STATUS,
    tag::ENABLED_GDDR,
    tag::FLASH_BUNDLE_VERSION,
];

impl FakeArc {
    fn new(serve: Serve) -> Self {
        let mut w = BTreeMap::new();
        w.insert(arc::SCRATCH_RAM_2, arc::ARC_BOOT_READY);
        w.insert(msg::SCRATCH_RAM_11, QCB);
        w.insert(arc::SCRATCH_RAM_13, TABLE);
        w.insert(arc::SCRATCH_RAM_12, DATA);
        w.insert(QCB as u64, Q0);
        w.insert(QCB as u64 + 4, N | 4 << 8);
        w.insert(TABLE as u64, 1 << 16);
        w.insert(TABLE as u64 + 4, TAGS.len() as u32);
        for (i, t) in TAGS.iter().enumerate() {
            w.insert(
                TABLE as u64 + 8 + 4 * i as u64,
                arc::telemetry_entry(*t, i as u16),
            );
        }
        let arc = Self {
            words: RefCell::new(w),
            serve,
            step: 1350,
            waits: Cell::new(0),
            ramp: Some(3),
            busy: 1350,
            go_busy_at: Cell::new(None),
            other_holds: Cell::new(0),
            ours: Cell::new(false),
            telemetry_after: Cell::new(0),
            late_once: Cell::new(false),
            hang_next: Cell::new(false),
            hung: Cell::new(false),
        };
        arc.set(tag::AICLK, 800);
        arc.set(tag::AICLK_LIMIT_MAX, 1350);
        arc.set(tag::GDDR_STATUS, 0x5555);
        arc.set(tag::ENABLED_GDDR, 0xFF);
        arc.set(tag::FLASH_BUNDLE_VERSION, 19 << 24 | 5 << 16);
        arc
    }

    fn set(&self, t: u16, v: u32) {
        let i = TAGS.iter().position(|&x| x == t).unwrap() as u64;
        self.words.borrow_mut().insert(DATA as u64 + 4 * i, v);
    }

    fn word(&self, a: u64) -> u32 {
        let unpublished = [arc::SCRATCH_RAM_12, arc::SCRATCH_RAM_13].contains(&a)
            && self.waits.get() < self.telemetry_after.get();
        if unpublished {
            return 0;
        }
        self.words.borrow().get(&a).copied().unwrap_or(0)
    }

    fn queue(q: u32) -> u64 {
        (Q0 + q * (msg::HEADER_BYTES + 2 * N * msg::ENTRY_BYTES)) as u64
    }

    fn irq(&self) {
        if self.late_once.replace(false) || self.hung.get() {
            return;
        }
        for q in 0..4 {
            let base = Self::queue(q);
            let (w, mut r) = (self.word(base), self.word(base + 16));
            let mut rw = self.word(base + 20);
            if r != w && self.hang_next.replace(false) {
                // Taken, and its handler never returns.
                self.hung.set(true);
                self.words.borrow_mut().insert(base + 16, (r + 1) % (2 * N));
                return;
            }
            // As the firmware's `start_next_message`: no request is taken while the response
            // ring is full (N responses unread).
            while r != w && (rw + 2 * N - self.word(base + 4)) % (2 * N) < N {
                let req = base + (msg::HEADER_BYTES + (r % N) * msg::ENTRY_BYTES) as u64;
                let code = self.word(req);
                if code == msg::code::AICLK_GO_BUSY {
                    self.go_busy_at.set(Some(self.waits.get()));
                }
                let resp = base + (msg::HEADER_BYTES + (N + rw % N) * msg::ENTRY_BYTES) as u64;
                let first = match (self.serve, code == msg::code::AICLK_GO_BUSY) {
                    (Serve::Silent, _) => return,
                    (Serve::Status(s), false) => s | 7 << 16,
                    (Serve::Status(s), true) => s,
                    (Serve::GoBusyExit(exit), _) => exit << 16,
                };
                self.words.borrow_mut().insert(resp, first);
                self.words.borrow_mut().insert(resp + 4, code);
                r = (r + 1) % (2 * N);
                rw = (rw + 1) % (2 * N);
            }
            self.words.borrow_mut().insert(base + 16, r);
            self.words.borrow_mut().insert(base + 20, rw);
        }
    }
}

impl ArcRead for FakeArc {
    fn arc_read32(&self, addr: u64) -> Result<u32, PcieError> {
        Ok(self.word(addr))
    }
}

impl ArcPort for FakeArc {
    fn arc_write32(&self, addr: u64, value: u32) -> Result<(), PcieError> {
        assert!(
            self.ours.get(),
            "an ARC write at {addr:#x} without the message lock"
        );
        if addr == msg::ARC_MISC_CNTL {
            assert_eq!(value, msg::ARC_MISC_CNTL_IRQ);
            self.irq();
            return Ok(());
        }
        self.words.borrow_mut().insert(addr, value);
        Ok(())
    }
    fn arc_wait(&self) -> u64 {
        self.waits.set(self.waits.get() + 1);
        if let (Some(at), Some(ramp)) = (self.go_busy_at.get(), self.ramp)
            && self.waits.get() >= at + ramp
        {
            self.set(tag::AICLK, self.busy);
        }
        self.step
    }
    fn message_lock(&self, op: LockOp) -> Result<bool, PcieError> {
        match op {
            LockOp::Acquire if self.other_holds.get() > 0 => {
                if self.other_holds.get() != u32::MAX {
                    self.other_holds.set(self.other_holds.get() - 1);
                }
                Ok(false)
            }
            LockOp::Acquire => Ok(!self.ours.replace(true)),
            LockOp::Release => Ok(self.ours.replace(false)),
        }
    }
}

fn quick() -> OpenTimeouts {
    OpenTimeouts {
        arc_ready: Duration::from_millis(1),
        dram_training: Duration::from_millis(1),
        arc_message: Duration::from_millis(1),
        aiclk: Duration::from_millis(1),
        telemetry: Duration::from_millis(1),
    }
}

#[test]
fn a_message_goes_through_the_application_queue_and_the_pointers_wrap_at_2n() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    assert_eq!(q.base, FakeArc::queue(3));
    assert_eq!(q.entries, N);
    for round in 0..9u32 {
        let r = q
            .send(&arc, 0x11, &[round, 2], Duration::from_millis(1))
            .unwrap();
        assert_eq!((r.status, r.value, r.words[0]), (0, 7, 0x11));
        let req = q.base + (msg::HEADER_BYTES + (round % N) * msg::ENTRY_BYTES) as u64;
        assert_eq!(
            arc.word(req + 4),
            round,
            "argument 0 in request slot {}",
            round % N
        );
        assert_eq!(
            arc.word(q.base),
            (round + 1) % (2 * N),
            "write pointer wraps at 2n"
        );
        assert_eq!(
            arc.word(q.base + 4),
            (round + 1) % (2 * N),
            "read pointer too"
        );
    }
    assert!(matches!(
        q.send(&arc, 0x11, &[0; 8], Duration::from_millis(1)),
        Err(PcieError::ArcMessage { why, .. }) if why.contains("at most 7")
    ));
}

#[test]
fn error_statuses_full_queues_and_silence_are_typed_errors() {
    for (status, says) in [(0xFF, "does not know"), (0xF0, "error status 0xf0")] {
        let arc = FakeArc::new(Serve::Status(status));
        let q = MessageQueue::locate(&arc, 3).unwrap();
        let e = q
            .send(&arc, 0x99, &[], Duration::from_millis(1))
            .unwrap_err();
        assert!(
            matches!(&e, PcieError::ArcMessage { code: 0x99, why } if why.contains(says)),
            "{e}"
        );
    }
    let silent = FakeArc::new(Serve::Silent);
    let q = MessageQueue::locate(&silent, 3).unwrap();
    let e = q
        .send(&silent, 0x11, &[], Duration::from_millis(1))
        .unwrap_err();
    assert!(e.to_string().contains("no response within"), "{e}");
    // Two unanswered requests fill a ring of 2: the third finds no room.
    q.send(&silent, 0x11, &[], Duration::from_millis(1))
        .unwrap_err();
    let e = q
        .send(&silent, 0x11, &[], Duration::from_millis(1))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("ARC left 2 requests untaken or unanswered"),
        "{e}"
    );
    // A device whose clock does not move is still bounded, by real time.
    let mut still = FakeArc::new(Serve::Silent);
    still.step = 0;
    let q = MessageQueue::locate(&still, 3).unwrap();
    q.send(&still, 0x11, &[], Duration::from_millis(1))
        .unwrap_err();
}

#[test]
fn a_control_block_outside_csm_or_without_the_queue_is_refused() {
    let arc = FakeArc::new(Serve::Status(0));
    let e = MessageQueue::locate(&arc, 4).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ARC message queue: the queue control block: it describes 4 queue(s); queue 4 was asked \
         for"
    );
    arc.words.borrow_mut().insert(msg::SCRATCH_RAM_11, 0x1234);
    assert!(matches!(
        MessageQueue::locate(&arc, 3),
        Err(PcieError::ArcMessage { why, .. }) if why.contains("not a word of ARC CSM")
    ));
    arc.words
        .borrow_mut()
        .insert(msg::SCRATCH_RAM_11, arc::HUNG_READ);
    assert!(matches!(
        MessageQueue::locate(&arc, 3),
        Err(PcieError::Hung { .. })
    ));
    arc.words.borrow_mut().insert(msg::SCRATCH_RAM_11, QCB);
    arc.words.borrow_mut().insert(QCB as u64 + 4, 4 << 8);
    assert!(matches!(
        MessageQueue::locate(&arc, 3),
        Err(PcieError::ArcMessage { why, .. }) if why.contains("0 entries")
    ));
}

#[test]
fn aiclk_raised_waits_for_telemetry_and_a_clock_that_never_settles_is_a_note() {
    let arc = FakeArc::new(Serve::Status(0));
    let out = raise_aiclk(&arc, &OpenTimeouts::default()).unwrap();
    assert_eq!((out.raised, out.aiclk_mhz, out.note), (true, 1350, None));
    assert!(arc.waits.get() >= 3, "waited for the ramp");

    // ttsim: the message is served, AICLK stays at 1000 MHz.
    let mut stuck = FakeArc::new(Serve::Status(0));
    stuck.ramp = None;
    stuck.set(tag::AICLK, 1000);
    let out = raise_aiclk(&stuck, &quick()).unwrap();
    assert!(!out.raised);
    assert_eq!(out.aiclk_mhz, 1000);
    assert!(
        out.note
            .as_deref()
            .unwrap()
            .starts_with("AICLK did not reach 1350 MHz"),
        "{out:?}"
    );

    // Within 5 % is settled, with a note saying how.
    let mut near = FakeArc::new(Serve::Status(0));
    near.busy = 1300;
    let out = raise_aiclk(&near, &quick()).unwrap();
    assert!(out.raised && out.note.unwrap().contains("within 5%"));

    // A refused message is a note, not a failed open.
    let refused = FakeArc::new(Serve::Status(0xFF));
    let out = raise_aiclk(&refused, &quick()).unwrap();
    assert!(!out.raised && out.note.unwrap().contains("AICLK_GO_BUSY failed"));
    // So is an exit code other than 0, and the clock is not waited for.
    let exit = FakeArc::new(Serve::GoBusyExit(3));
    let out = raise_aiclk(&exit, &OpenTimeouts::default()).unwrap();
    assert!(!out.raised, "{out:?}");
    assert_eq!(
        out.note.as_deref(),
        Some(
            "AICLK_GO_BUSY failed: ARC message 0x52: ARC answered exit code 3 (0 is success); \
             AICLK is 800 MHz"
        )
    );
    assert_eq!(exit.waits.get(), 0, "no wait for a refused clock");
    assert!(settled(1283, 1350) && !settled(1282, 1350) && settled(1417, 1350));
}

#[test]
fn the_clock_goes_back_to_idle_through_the_same_queue_and_its_exit_code_is_checked() {
    let arc = FakeArc::new(Serve::Status(0));
    assert_eq!(
        raise_aiclk(&arc, &OpenTimeouts::default())
            .unwrap()
            .aiclk_mhz,
        1350
    );
    // The fake answers anything but AICLK_GO_BUSY with exit code 7.
    let e = lower_aiclk(&arc, Duration::from_millis(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ARC message 0x54: ARC answered exit code 7 (0 is success)"
    );
    let ok = FakeArc::new(Serve::GoBusyExit(0));
    assert_eq!(lower_aiclk(&ok, Duration::from_millis(1)), Ok(()));
    let silent = FakeArc::new(Serve::Silent);
    assert!(matches!(
        lower_aiclk(&silent, Duration::from_millis(1)),
        Err(PcieError::ArcMessage { code: 0x54, .. })
    ));
    // A queue control block that cannot be read fails the message it was for, by its code.
    let lost = FakeArc::new(Serve::Status(0));
    lost.words.borrow_mut().insert(msg::SCRATCH_RAM_11, 0x1234);
    assert!(matches!(
        lower_aiclk(&lost, Duration::from_millis(1)),
        Err(PcieError::ArcMessage { code: 0x54, why }) if why.contains("the queue control block")
    ));
}

#[test]
fn arc_ready_and_dram_training_are_bounded_waits() {
    let arc = FakeArc::new(Serve::Status(0));
    wait_arc_ready(&arc, Duration::from_millis(1)).unwrap();
    arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, 0x3);
    assert!(matches!(
        wait_arc_ready(&arc, Duration::from_millis(1)),
        Err(PcieError::ArcNotReady { status: 3, .. })
    ));
    arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, 0x15);
    wait_arc_ready(&arc, Duration::from_millis(1)).unwrap();
    // A failed hardware init (bits 1..2 = 3) stays so until a reset: refused at once, not
    // waited on for the bound (300 s by default; here 50 ms, so that without the rule the
    // test fails on the waits rather than hangs), with or without the queue ready.
    for status in [0x7, 0x6] {
        arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, status);
        let waits = arc.waits.get();
        assert!(matches!(
            wait_arc_ready(&arc, Duration::from_millis(50)),
            Err(PcieError::ArcNotReady { status: s, .. }) if s == status
        ));
        assert_eq!(arc.waits.get(), waits, "{status:#x}: no wait");
    }
    arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, 0x15);

    assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
    // Channel 3 still training (0b00), then failed (0b10); a harvested one is skipped.
    arc.set(tag::GDDR_STATUS, 0x5515);
    let e = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap_err();
    assert!(e.to_string().contains("channel(s) 3 still training"), "{e}");
    arc.set(tag::ENABLED_GDDR, 0xF7);
    assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
    arc.set(tag::ENABLED_GDDR, 0xFF);
    arc.set(tag::GDDR_STATUS, 0x5595);
    let e = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap_err();
    assert!(e.to_string().contains("channel(s) 3 failed"), "{e}");
    // From bundle 19.7.0 the BIST half counts too.
    arc.set(tag::GDDR_STATUS, 0x5555);
    arc.set(tag::FLASH_BUNDLE_VERSION, 19 << 24 | 7 << 16);
    assert!(wait_dram_trained(&arc, Duration::from_millis(1)).is_err());
    arc.set(tag::GDDR_STATUS, 0x5555_5555);
    assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
    // A table without GDDR_STATUS is not waited on, and says so.
    let i = TAGS.iter().position(|&t| t == tag::GDDR_STATUS).unwrap() as u64;
    arc.words
        .borrow_mut()
        .insert(TABLE as u64 + 8 + 4 * i, arc::telemetry_entry(99, i as u16));
    let note = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap();
    assert!(note.unwrap().contains("no GDDR_STATUS"));
}

#[test]
fn a_message_waits_for_the_lock_another_process_holds_and_gives_it_back_whatever_the_answer() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    arc.other_holds.set(3);
    let r = q.send(&arc, 0x11, &[], Duration::from_millis(10)).unwrap();
    assert_eq!(r.value, 7);
    assert_eq!(arc.waits.get(), 3, "one wait a refused try");
    assert!(!arc.ours.get(), "given back after the answer");
    // An answer of failure gives it back too (0xFF: a code the firmware does not know).
    let arc = FakeArc::new(Serve::Status(msg::STATUS_UNKNOWN_CODE));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    assert!(q.send(&arc, 0x11, &[], Duration::from_millis(1)).is_err());
    assert!(!arc.ours.get(), "given back after a refusal");
}

#[test]
fn a_lock_held_for_good_fails_the_message_naming_it_before_anything_is_written() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    arc.other_holds.set(u32::MAX);
    match q.send(&arc, 0x11, &[1], Duration::from_millis(1)) {
        Err(PcieError::ArcMessage { code, why }) => {
            assert_eq!(code, 0x11);
            assert!(
                why.contains("another process held ARC's message lock")
                    && why.contains(&format!("resource lock {MESSAGE_LOCK}")),
                "{why}"
            );
        }
        other => panic!("expected the lock's timeout, got {other:?}"),
    }
    assert_eq!(arc.word(q.base), 0, "no request was written");
    assert!(!arc.ours.get());
}

#[test]
fn an_exchange_that_panics_still_gives_the_lock_back() {
    // A port whose writes panic (as a borrow conflict would): the panic goes on, and the lock,
    // which no one could take again until the device closed, is given back first.
    struct Panicking(FakeArc);
    impl ArcRead for Panicking {
        fn arc_read32(&self, addr: u64) -> Result<u32, PcieError> {
            self.0.arc_read32(addr)
        }
    }
    impl ArcPort for Panicking {
        fn arc_write32(&self, _addr: u64, _value: u32) -> Result<(), PcieError> {
            panic!("the exchange fails");
        }
        fn arc_wait(&self) -> u64 {
            self.0.arc_wait()
        }
        fn message_lock(&self, op: LockOp) -> Result<bool, PcieError> {
            self.0.message_lock(op)
        }
    }
    let arc = Panicking(FakeArc::new(Serve::Status(0)));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        q.send(&arc, 0x11, &[], Duration::from_millis(1))
    }));
    assert!(r.is_err(), "the panic goes on");
    assert!(!arc.0.ours.get(), "given back before it did");
}

/// The firmware says ready (its message queue is up) before it publishes telemetry: the open
/// waits for both pointers, as tt-umd does, rather than fail on a pointer of 0; and fails, naming
/// the pointer, when they are never published within the bound.
#[test]
fn telemetry_is_waited_for_until_the_firmware_publishes_it() {
    let arc = FakeArc::new(Serve::Status(0));
    arc.telemetry_after.set(3);
    let t = wait_telemetry(&arc, Duration::from_secs(1)).unwrap();
    assert_eq!(t.get(tag::AICLK), Some(800));
    assert!(arc.waits.get() >= 3);
    let never = FakeArc::new(Serve::Status(0));
    never.telemetry_after.set(u64::MAX);
    let e = wait_telemetry(&never, Duration::from_millis(1)).unwrap_err();
    assert!(
        matches!(&e, PcieError::Telemetry(why) if why.contains("pointer 0x0")),
        "{e}"
    );
}

/// A message that timed out is answered late, after the next message was sent: the next
/// message takes its own response (ARC answers in order, one response a request), not the late
/// one (tt-umd's queue reads the first unread response and would pair them wrongly).
#[test]
fn a_late_answer_to_a_message_that_timed_out_is_not_taken_for_the_next_one_s() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    arc.late_once.set(true);
    let e = q
        .send(
            &arc,
            msg::code::AICLK_GO_LONG_IDLE,
            &[],
            Duration::from_millis(1),
        )
        .unwrap_err();
    assert!(matches!(e, PcieError::ArcMessage { code: 0x54, .. }), "{e}");
    // The next message's interrupt has ARC answer both, the late one first.
    let r = q.send(&arc, 0x42, &[], Duration::from_millis(1)).unwrap();
    assert_eq!(
        r.words[0], 0x42,
        "its own response (FakeArc echoes the code)"
    );
    // And the one after that too, the late response dropped rather than left in the ring.
    let r = q.send(&arc, 0x43, &[], Duration::from_millis(1)).unwrap();
    assert_eq!(r.words[0], 0x43);
}

/// A request ARC took but whose handler never returns, and one behind it: a third message finds
/// two requests unanswered in a ring of two and is refused, not answered by the old response in
/// the slot its answer would take (with the response write pointer two behind its request, the
/// window "answered" and "not yet" would otherwise both read 2).
#[test]
fn a_message_behind_a_hung_handler_is_not_answered_by_an_old_response() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    // A first message, answered: its response stays in slot 0 of the response ring.
    q.send(&arc, 0x41, &[], Duration::from_millis(1)).unwrap();
    arc.hang_next.set(true);
    for code in [0x42, 0x43] {
        q.send(&arc, code, &[], Duration::from_millis(1))
            .unwrap_err();
    }
    let e = q
        .send(&arc, 0x44, &[], Duration::from_millis(1))
        .unwrap_err();
    assert!(
        matches!(&e, PcieError::ArcMessage { code: 0x44, why } if why.contains("unanswered")),
        "{e}"
    );
}

/// Answers a message that timed out left unread would fill the response ring, and ARC takes no
/// request while it is full: the next message drops them and is answered. (Two late answers in
/// a ring of two: without the drop the third message is never taken.)
#[test]
fn answers_left_unread_are_dropped_so_the_next_message_is_taken() {
    let arc = FakeArc::new(Serve::Status(0));
    let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
    let base = FakeArc::queue(msg::APPLICATION_QUEUE);
    // Two answers ARC wrote that no host read: the response write pointer two ahead of the
    // read pointer, the request pointers level with it (both taken and answered).
    for (word, value) in [(0, 2), (4, 0), (16, 2), (20, 2)] {
        arc.words.borrow_mut().insert(base + word, value);
    }
    let r = q.send(&arc, 0x42, &[], Duration::from_millis(1)).unwrap();
    assert_eq!(r.words[0], 0x42);
}
