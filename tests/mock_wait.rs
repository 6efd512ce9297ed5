//! The HAL's wait primitive against komorebi-mock, outside the mock crate: the exact order of
//! control-block calls when a wait is stopped by the tile's stop flag.

use komorebi_hal::control::ErrorKind;
use komorebi_hal::wait::WaitError;
use komorebi_hal::{ControlBlock, block_on, wait_until};
use komorebi_mock::{MockControlBlock, MockPause};
use mockall::Sequence;
use mockall::predicate::{eq, ge};

#[test]
fn a_stopped_tile_ends_the_wait_after_the_current_poll() {
    let mut ctrl = MockControlBlock::new();
    let mut pause = MockPause::new();
    let mut seq = Sequence::new();
    // Round 1: not ready; only then the clock and the limit are read (a condition that holds
    // at once reads no clock); not stopped, before the deadline: pause until cycle 1000.
    ctrl.expect_load()
        .with(eq(0x10))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(0));
    ctrl.expect_now()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(0u64);
    ctrl.expect_wait_limit()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(1_000));
    ctrl.expect_stop_requested()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(false));
    ctrl.expect_now()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(40u64);
    pause
        .expect_pause()
        .with(eq(1_000))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| ());
    // Round 2: still not ready, and now the stop flag is set.
    ctrl.expect_load()
        .with(eq(0x10))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(0));
    ctrl.expect_stop_requested()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(true));
    ctrl.expect_now()
        .times(1)
        .in_sequence(&mut seq)
        .return_const(75u64);

    let out = block_on(wait_until(
        &mut ctrl,
        &mut pause,
        |c: &mut MockControlBlock| Ok::<_, ErrorKind>(c.load(0x10)? == 1),
    ));
    assert_eq!(out, Err(WaitError::Stopped { waited: 75 }));
}

#[test]
fn a_failing_control_block_is_reported_not_retried() {
    let mut ctrl = MockControlBlock::new();
    let mut pause = MockPause::new();
    ctrl.expect_now().return_const(5u64);
    ctrl.expect_wait_limit()
        .times(1)
        .returning(|| Err(ErrorKind::OutOfRange));
    // Polled once (not ready), then the limit cannot be read: reported, not polled again.
    ctrl.expect_load().times(1).returning(|_| Ok(0));
    pause.expect_pause().with(ge(0)).never();
    let out = block_on(wait_until(
        &mut ctrl,
        &mut pause,
        |c: &mut MockControlBlock| Ok::<_, ErrorKind>(c.load(0)? == 1),
    ));
    assert_eq!(out, Err(WaitError::Control(ErrorKind::OutOfRange)));
}
