//! How a test states a linked run and a loopback multicast with the mock: the write mode is an
//! argument like any other, so an expectation names exactly the mode each call must carry, and a
//! call with another mode fails the test.

use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{L1Addr, Rect, Xy};
use komorebi_mock::MockNocMulticast;
use mockall::Sequence;
use mockall::predicate::{always, eq};

fn rect() -> Rect {
    Rect::new(Xy::new(1, 3).unwrap(), Xy::new(1, 11).unwrap()).unwrap()
}

/// Code under test: `blocks` multicasts of 64 bytes as one linked run, the sender included.
fn send_run<N: NocMulticast>(noc: &mut N, blocks: u32) -> Result<(), N::Error> {
    for b in 0..blocks {
        let at = L1Addr::new(0x2_0000 + 64 * b).unwrap();
        let mode = WriteMode::ORDERED.with_loopback();
        let mode = if b + 1 < blocks { mode.linked() } else { mode };
        noc.multicast(at, rect(), at, 64, mode)?;
    }
    Ok(())
}

fn expect(noc: &mut MockNocMulticast, seq: &mut Sequence, mode: WriteMode) {
    noc.expect_multicast()
        .with(always(), eq(rect()), always(), eq(64), eq(mode))
        .times(1)
        .in_sequence(seq)
        .returning(|_, _, _, _, _| Ok(()));
}

#[test]
fn a_linked_run_is_expected_as_linked_multicasts_then_one_unlinked() {
    let mut noc = MockNocMulticast::new();
    let mut seq = Sequence::new();
    let looped = WriteMode::ORDERED.with_loopback();
    expect(&mut noc, &mut seq, looped.linked());
    expect(&mut noc, &mut seq, looped.linked());
    expect(&mut noc, &mut seq, looped);
    send_run(&mut noc, 3).unwrap();
}

#[test]
#[should_panic(expected = "No matching expectation found")]
fn a_run_left_open_fails_the_expectation_of_its_closing_multicast() {
    let mut noc = MockNocMulticast::new();
    let mut seq = Sequence::new();
    // The test expects the run to end unlinked; code that links its last multicast fails.
    expect(&mut noc, &mut seq, WriteMode::ORDERED.with_loopback());
    let at = L1Addr::new(0x2_0000).unwrap();
    let _ = noc.multicast(
        at,
        rect(),
        at,
        64,
        WriteMode::ORDERED.with_loopback().linked(),
    );
}

#[test]
fn tagged_reads_are_expected_with_their_tag() {
    use komorebi_hal::NocAddr;
    use komorebi_hal::noc::ReadTag;
    let mut noc = MockNocMulticast::new();
    let mut seq = Sequence::new();
    let src = NocAddr::new(Xy::new(0, 11).unwrap(), 0x1000).unwrap();
    let (a, b) = (ReadTag::new(0).unwrap(), ReadTag::new(1).unwrap());
    for tag in [a, b] {
        noc.expect_read_tagged()
            .with(eq(src), always(), eq(2048), eq(tag))
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _| Ok(()));
    }
    noc.expect_tagged_reads_done()
        .with(eq(a))
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_| Ok(true));
    let dst = L1Addr::new(0x2_0000).unwrap();
    noc.read_tagged(src, dst, 2048, a).unwrap();
    noc.read_tagged(src, dst, 2048, b).unwrap();
    assert!(noc.tagged_reads_done(a).unwrap());
}
