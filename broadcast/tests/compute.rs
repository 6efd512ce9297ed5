//! The compute side against komorebi-mock: exact pops, padding, give-ups.

use komorebi_broadcast::compute::{ComputeError, done, end, receive};
use komorebi_hal::Compute;
use komorebi_hal::{Spin, block_on};
use komorebi_mock::{MockCircularBuffer, MockControlBlock};
use mockall::Sequence;
use mockall::predicate::eq;

fn compute(limit: u64) -> Compute<MockControlBlock, Spin> {
    let mut c = MockControlBlock::new();
    let mut clock = 0u64;
    c.expect_now().returning(move || {
        clock += 1;
        clock
    });
    c.expect_wait_limit().returning(move || Ok(limit));
    c.expect_stop_requested().returning(|| Ok(false));
    Compute {
        ctrl: c,
        pause: Spin,
    }
}

#[test]
fn receive_waits_for_a_whole_block_then_done_pops_it() {
    let mut cb = MockCircularBuffer::new();
    let mut seq = Sequence::new();
    for ready in [0u16, 1, 3] {
        cb.expect_pages_ready()
            .times(1)
            .in_sequence(&mut seq)
            .returning(move || Ok(ready));
    }
    cb.expect_pop()
        .with(eq(3))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(()));
    let mut k = compute(100);
    block_on(receive(&mut k, &mut cb, 3)).unwrap();
    done(&mut cb, 3).unwrap();
}

#[test]
fn end_pops_exactly_the_padding_of_the_last_window() {
    // 5 blocks, window 4: 3 padding blocks of 2 pages.
    let mut cb = MockCircularBuffer::new();
    let mut seq = Sequence::new();
    cb.expect_pages_ready()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(6));
    cb.expect_pop()
        .with(eq(6))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(()));
    block_on(end(&mut compute(100), &mut cb, 2, 4, 5)).unwrap();
    // Whole windows (and no block at all): nothing to pop.
    let mut cb = MockCircularBuffer::new();
    cb.expect_pop().never();
    block_on(end(&mut compute(100), &mut cb, 2, 4, 8)).unwrap();
    block_on(end(&mut compute(100), &mut cb, 2, 4, 0)).unwrap();
}

#[test]
fn compute_gives_up_at_the_wait_limit_and_refuses_bad_shapes() {
    let mut cb = MockCircularBuffer::new();
    cb.expect_pages_ready().returning(|| Ok(1));
    assert!(matches!(
        block_on(receive(&mut compute(20), &mut cb, 2)),
        Err(ComputeError::TimedOut { .. })
    ));
    assert_eq!(
        block_on(receive(&mut compute(20), &mut cb, 0)),
        Err(ComputeError::Misuse)
    );
    assert_eq!(
        block_on(end(&mut compute(20), &mut cb, 1, 9, 3)),
        Err(ComputeError::Misuse)
    );
    assert_eq!(
        block_on(end(&mut compute(20), &mut cb, 1, 2, 40_000)),
        Err(ComputeError::Misuse)
    );
}

#[test]
fn end_takes_a_window_of_8_and_refuses_no_pages_or_no_window_on_their_own() {
    // Window 8 is allowed (rule 4): 3 blocks leave 5 padding blocks of 1 page.
    let mut cb = MockCircularBuffer::new();
    let mut seq = Sequence::new();
    cb.expect_pages_ready()
        .times(1)
        .in_sequence(&mut seq)
        .returning(|| Ok(5));
    cb.expect_pop()
        .with(eq(5))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(()));
    block_on(end(&mut compute(100), &mut cb, 1, 8, 3)).unwrap();
    // Each bad argument alone, the others in range, is refused before the buffer is touched.
    let mut untouched = MockCircularBuffer::new();
    untouched.expect_pages_ready().never();
    untouched.expect_pop().never();
    for (pages, window, blocks) in [(0, 2, 3), (0, 1, 0), (1, 0, 3), (1, 0, 0), (4, 9, 0)] {
        assert_eq!(
            block_on(end(
                &mut compute(100),
                &mut untouched,
                pages,
                window,
                blocks
            )),
            Err(ComputeError::Misuse),
            "pages {pages} window {window} blocks {blocks}"
        );
    }
}

/// "Every call ... checks the tile's stop flag": a block whose pages are ready at once is not
/// taken on a stopped tile (the wait alone would look at the flag only while they are not
/// ready), nor is `end`'s padding; neither reads the buffer (decisions D58).
#[test]
fn receive_and_end_give_up_on_a_stopped_tile_even_with_their_pages_ready() {
    let mut k = compute(100);
    k.ctrl.checkpoint();
    k.ctrl.expect_stop_requested().returning(|| Ok(true));
    // No expectation on the buffer: any read of it fails the test.
    let mut cb = MockCircularBuffer::new();
    assert_eq!(
        block_on(receive(&mut k, &mut cb, 2)),
        Err(ComputeError::Stopped { waited: 0 })
    );
    assert_eq!(
        block_on(end(&mut k, &mut cb, 2, 2, 1)),
        Err(ComputeError::Stopped { waited: 0 })
    );
}
