//! Value-type validation and the wait primitive's semantics, against a small stateful fake.

use core::convert::Infallible;

use komorebi_hal::control::{self, ControlBlock};
use komorebi_hal::types::{COORD_MAX, ValueError};
use komorebi_hal::wait::WaitError;
use komorebi_hal::{
    L1Addr, NocAddr, NocId, Pause, Rect, Spin, Xy, block_on, call_deadline, wait_until,
    wait_until_deadline,
};

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

#[test]
fn coordinates_validate() {
    assert_eq!(Xy::new(COORD_MAX, 0).map(|p| p.x()), Ok(63));
    assert_eq!(Xy::new(64, 0), Err(ValueError::Coordinate { value: 64 }));
    assert_eq!(Xy::new(0, 200), Err(ValueError::Coordinate { value: 200 }));
    assert_eq!(NocId::new(1), Some(NocId::Noc1));
    assert_eq!(NocId::new(2), None);
}

#[test]
fn rectangles_refuse_reversed_corners_unless_asked_to_wrap() {
    let r = Rect::new(xy(2, 3), xy(5, 3)).unwrap();
    assert!(r.contains(xy(2, 3)) && r.contains(xy(5, 3)) && !r.contains(xy(6, 3)));
    assert!(!r.contains(xy(3, 4)));
    assert!(!r.is_wrapping());
    assert_eq!(
        Rect::new(xy(5, 3), xy(2, 3)),
        Err(ValueError::Reversed {
            axis: 'x',
            start: 5,
            end: 2
        })
    );
    assert_eq!(
        Rect::new(xy(1, 9), xy(1, 2)),
        Err(ValueError::Reversed {
            axis: 'y',
            start: 9,
            end: 2
        })
    );
    let w = Rect::wrapping(xy(15, 2), xy(1, 2));
    assert!(w.is_wrapping());
    assert!(w.contains(xy(16, 2)) && w.contains(xy(0, 2)) && w.contains(xy(1, 2)));
    assert!(!w.contains(xy(8, 2)));
    let msg = ValueError::Reversed {
        axis: 'x',
        start: 5,
        end: 2,
    }
    .to_string();
    assert!(msg.contains("start <= end"), "{msg}");
}

#[test]
fn addresses_validate() {
    assert_eq!(L1Addr::new(0x1000).map(L1Addr::get), Ok(0x1000));
    assert_eq!(
        L1Addr::new(0x1002),
        Err(ValueError::Misaligned { addr: 0x1002 })
    );
    assert_eq!(
        L1Addr::new(0x1000).unwrap().offset(4).map(L1Addr::get),
        Some(0x1004)
    );
    assert_eq!(L1Addr::new(0x1000).unwrap().offset(2), None);
    assert_eq!(L1Addr::new(0xFFFF_FFFC).unwrap().offset(4), None);
    assert!(NocAddr::new(xy(1, 2), (1 << 36) - 1).is_ok());
    assert_eq!(
        NocAddr::new(xy(1, 2), 1 << 36),
        Err(ValueError::LocalAddress { addr: 1 << 36 })
    );
    let a = NocAddr::l1(xy(3, 4), L1Addr::new(0x40).unwrap());
    assert_eq!((a.node(), a.local()), (xy(3, 4), 0x40));
    assert_eq!(a.to_string(), "(3, 4):0x40");
}

/// A control block whose clock advances by `tick` on every `now()`, with a stop flag that turns
/// on after `stop_after` reads of it.
struct FakeCtrl {
    clock: u64,
    tick: u64,
    limit: u64,
    stop_reads: u32,
    stop_after: Option<u32>,
    words: [u32; 16],
}

impl FakeCtrl {
    fn new(limit: u64, tick: u64) -> Self {
        Self {
            clock: 1000,
            tick,
            limit,
            stop_reads: 0,
            stop_after: None,
            words: [0; 16],
        }
    }
}

impl control::ErrorType for FakeCtrl {
    type Error = control::ErrorKind;
}

impl ControlBlock for FakeCtrl {
    fn len(&self) -> u32 {
        64
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
        L1Addr::new(0x100 + offset).map_err(|_| control::ErrorKind::Misaligned)
    }
    fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
        self.words
            .get(offset as usize / 4)
            .copied()
            .ok_or(control::ErrorKind::OutOfRange)
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind> {
        *self
            .words
            .get_mut(offset as usize / 4)
            .ok_or(control::ErrorKind::OutOfRange)? = value;
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
        self.stop_reads += 1;
        Ok(self.stop_after.is_some_and(|n| self.stop_reads > n))
    }
    fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
        self.stop_after = Some(0);
        Ok(())
    }
    fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
        Ok(self.limit)
    }
    fn now(&mut self) -> u64 {
        self.clock += self.tick;
        self.clock
    }
}

/// Counts pauses and checks each is given the wait's deadline.
struct CountingPause {
    pauses: u32,
    deadlines: Vec<u64>,
}

// Async, or a plain fn in the blocking build: these tests run in both.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl Pause for CountingPause {
    async fn pause(&mut self, deadline: u64) {
        self.pauses += 1;
        self.deadlines.push(deadline);
    }
}

#[test]
fn a_condition_that_holds_is_taken_even_with_a_zero_wait_limit() {
    let mut ctrl = FakeCtrl::new(0, 1);
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |_: &mut FakeCtrl| {
        Ok::<_, control::ErrorKind>(true)
    }));
    // Held at its first poll: nothing waited, and the clock was not read.
    assert_eq!(out, Ok(0));
    assert_eq!(ctrl.clock, 1000);
}

#[test]
fn a_wait_counts_its_cycles_from_the_first_poll_that_failed() {
    let mut ctrl = FakeCtrl::new(1_000, 1);
    let mut polls = 0;
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |_: &mut FakeCtrl| {
        polls += 1;
        Ok::<_, control::ErrorKind>(polls == 3)
    }));
    // The clock ticks 1 a read: the start after poll 1 (1001), the deadline checks after polls 1
    // and 2 (1002, 1003), the end after poll 3 (1004).
    assert_eq!(out, Ok(3));
    assert_eq!(polls, 3);
}

#[test]
fn a_zero_wait_limit_times_out_after_one_poll() {
    let mut ctrl = FakeCtrl::new(0, 1);
    let mut polls = 0;
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |_: &mut FakeCtrl| {
        polls += 1;
        Ok::<_, control::ErrorKind>(false)
    }));
    assert_eq!(out, Err(WaitError::TimedOut { waited: 1 }));
    assert_eq!(polls, 1);
}

#[test]
fn a_wait_ends_at_the_deadline_and_pauses_towards_it() {
    // Start at 1010; limit 100 -> deadline 1110; each now() adds 10.
    let mut ctrl = FakeCtrl::new(100, 10);
    let mut pause = CountingPause {
        pauses: 0,
        deadlines: Vec::new(),
    };
    let out = block_on(wait_until(&mut ctrl, &mut pause, |_: &mut FakeCtrl| {
        Ok::<_, control::ErrorKind>(false)
    }));
    assert_eq!(out, Err(WaitError::TimedOut { waited: 100 }));
    assert_eq!(pause.pauses, 9);
    assert!(pause.deadlines.iter().all(|&d| d == 1110));
}

#[test]
fn a_call_deadline_is_one_limit_from_now_and_saturates() {
    // The clock reads 1010 (1000 + one tick of 10).
    assert_eq!(call_deadline(&mut FakeCtrl::new(100, 10)), Ok(1110));
    assert_eq!(call_deadline(&mut FakeCtrl::new(u64::MAX, 1)), Ok(u64::MAX));
}

#[test]
fn waits_on_one_deadline_share_it() {
    // Deadline 1110 from a clock at 1010; each now() adds 10.
    let mut ctrl = FakeCtrl::new(100, 10);
    let deadline = call_deadline(&mut ctrl).unwrap();
    let mut pause = CountingPause {
        pauses: 0,
        deadlines: Vec::new(),
    };
    // The first wait starts at 1020 and takes 40 cycles of the 100.
    let mut polls = 0;
    let first = block_on(wait_until_deadline(
        &mut ctrl,
        &mut pause,
        deadline,
        |_: &mut FakeCtrl| {
            polls += 1;
            Ok::<_, control::ErrorKind>(polls == 4)
        },
    ));
    assert_eq!(first, Ok(40));
    // The second gets what is left (from 1070 to 1110), not a limit of its own.
    let second = block_on(wait_until_deadline(
        &mut ctrl,
        &mut pause,
        deadline,
        |_: &mut FakeCtrl| Ok::<_, control::ErrorKind>(false),
    ));
    assert_eq!(second, Err(WaitError::TimedOut { waited: 40 }));
    assert!(pause.deadlines.iter().all(|&d| d == deadline));
    assert_eq!(ctrl.clock, 1110);
}

#[test]
fn a_past_deadline_polls_once_and_takes_a_condition_that_holds() {
    let mut ctrl = FakeCtrl::new(100, 1);
    let mut polls = 0;
    let out = block_on(wait_until_deadline(
        &mut ctrl,
        &mut Spin,
        5,
        |_: &mut FakeCtrl| {
            polls += 1;
            Ok::<_, control::ErrorKind>(false)
        },
    ));
    assert_eq!(out, Err(WaitError::TimedOut { waited: 1 }));
    assert_eq!(polls, 1);
    let out = block_on(wait_until_deadline(
        &mut ctrl,
        &mut Spin,
        5,
        |_: &mut FakeCtrl| Ok::<_, control::ErrorKind>(true),
    ));
    assert_eq!(out, Ok(0));
}

#[test]
fn the_largest_wait_limit_does_not_overflow() {
    let mut ctrl = FakeCtrl::new(u64::MAX, 1);
    let mut polls = 0;
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |_: &mut FakeCtrl| {
        polls += 1;
        Ok::<_, control::ErrorKind>(polls == 1000)
    }));
    // One `now()` at the start, one per unready round (999), one when ready.
    assert_eq!(out, Ok(1000));
}

#[test]
fn the_stop_flag_ends_a_wait() {
    let mut ctrl = FakeCtrl::new(1_000_000, 1);
    ctrl.stop_after = Some(3);
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |_: &mut FakeCtrl| {
        Ok::<_, control::ErrorKind>(false)
    }));
    assert!(matches!(out, Err(WaitError::Stopped { .. })), "{out:?}");
    assert_eq!(ctrl.stop_reads, 4);
}

#[test]
fn the_condition_reads_control_words_and_its_errors_pass_through() {
    let mut ctrl = FakeCtrl::new(1_000_000, 1);
    let mut round = 0;
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |c: &mut FakeCtrl| {
        round += 1;
        if round == 3 {
            c.store(8, 7)?;
        }
        Ok::<_, control::ErrorKind>(c.load(8)? == 7)
    }));
    assert!(out.is_ok());
    let out = block_on(wait_until(&mut ctrl, &mut Spin, |c: &mut FakeCtrl| {
        Ok::<_, control::ErrorKind>(c.load(4096)? == 0)
    }));
    assert_eq!(
        out,
        Err(WaitError::Condition(control::ErrorKind::OutOfRange))
    );
}

#[test]
fn errors_follow_the_embedded_hal_pattern() {
    use komorebi_hal::cb;
    use komorebi_hal::noc::{self, Error as _};
    assert_eq!(noc::ErrorKind::Busy.kind(), noc::ErrorKind::Busy);
    assert_eq!(cb::Error::kind(&cb::ErrorKind::Wrap), cb::ErrorKind::Wrap);
    fn takes_kind<E: control::Error>(e: E) -> control::ErrorKind {
        e.kind()
    }
    assert_eq!(
        takes_kind(control::ErrorKind::OutOfRange),
        control::ErrorKind::OutOfRange
    );
    let _infallible_is_an_error: fn(Infallible) -> noc::ErrorKind = |e| e.kind();
    assert_eq!(
        noc::ErrorKind::HardwareHazard.to_string(),
        "request would trigger a known hardware bug"
    );
}
