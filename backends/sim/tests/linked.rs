//! Linked runs and loopback multicasts on the simulated chip: a loopback multicast lands in its
//! sender too and is acknowledged by it, a linked run keeps its rectangle and holds its path
//! until its last multicast has passed (another sender's multicast through that path waits for
//! it), a run refuses reads and unicast writes until it is closed, and a unicast write takes
//! neither mode.

mod common;

use common::*;
use komorebi_hal::noc::{ErrorKind, NocMulticast, ReadTag, WriteMode};
use komorebi_hal::{ControlBlock, Pause, Rect, Role};
use komorebi_sim::*;

fn rect(s: (u8, u8), e: (u8, u8)) -> Rect {
    Rect::new(xy(s), xy(e)).unwrap()
}

#[test]
fn a_loopback_multicast_lands_in_the_sender_too_and_is_acknowledged_by_it() {
    for loopback in [false, true] {
        let mut s = sim();
        let me = (1, 2);
        set_limit(&mut s, me, 1 << 40);
        s.write_l1(me, 0x2_0000, &[0xA5; 64]).unwrap();
        s.spawn(me, Role::Reader, move |env| async move {
            let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
            let mode = if loopback {
                WriteMode::ORDERED.with_loopback()
            } else {
                WriteMode::ORDERED
            };
            noc.multicast(l1(0x2_0000), rect((1, 2), (2, 3)), l1(0x3_0000), 64, mode)
                .unwrap();
            wait(&mut ctrl, &mut pause, |_| {
                noc.writes_acked().map_err(|e| e.to_string())
            })
            .await
            .unwrap();
        })
        .unwrap();
        assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
        for tile in [(1, 2), (2, 2), (1, 3), (2, 3)] {
            let mut got = [0u8; 64];
            s.read_l1(tile, 0x3_0000, &mut got).unwrap();
            let expected = if tile == me && !loopback { 0 } else { 0xA5 };
            assert_eq!(got, [expected; 64], "{tile:?}, loopback {loopback}");
        }
        let n = s.niu(me, 0).unwrap();
        assert_eq!(n.acks_received, 3 + loopback as u32);
        assert_eq!(n.acks_expected, n.acks_received);
    }
}

#[test]
fn a_multicast_with_no_receivers_cannot_end_an_open_run() {
    // A run on the sender's own tile opened with loopback: a multicast without it reaches no
    // one, sends no packet, and so neither continues nor closes the run (the HAL's rule).
    let mut s = sim();
    let me = (1, 2);
    set_limit(&mut s, me, 1 << 40);
    let errors = log();
    let e = errors.clone();
    s.spawn(me, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let own = rect(me, me);
        let looped = WriteMode::ORDERED.with_loopback();
        noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 64, looped.linked())
            .unwrap();
        let refused = noc
            .multicast(l1(0x2_0000), own, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap_err();
        e.borrow_mut().push((refused.kind, refused.to_string()));
        noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 64, looped)
            .unwrap();
        // Closed: an empty multicast completes at once again, and a read goes.
        noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap();
        noc.read(at((2, 2), 0x3_0000), l1(0x4_0000), 64).unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    let errors = errors.borrow();
    assert_eq!(
        *errors,
        [(
            ErrorKind::InvalidMode,
            "a multicast with no receivers sends no packet, so it cannot continue \
             or close the open linked run: close it with a multicast that reaches a receiver"
                .to_string()
        )]
    );
    assert_eq!(
        s.niu(me, 0).unwrap().acks_received,
        2,
        "the two that reached the sender"
    );
}

#[test]
fn a_linked_run_keeps_its_rectangle_and_a_unicast_takes_neither_mode() {
    let mut s = sim();
    let me = (1, 2);
    set_limit(&mut s, me, 1 << 40);
    let errors = log();
    let e = errors.clone();
    s.spawn(me, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let (column, other) = (rect((1, 3), (1, 11)), rect((2, 3), (2, 11)));
        let linked = WriteMode::ORDERED.linked();
        noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 64, linked)
            .unwrap();
        let refused = noc
            .multicast(l1(0x2_0000), other, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap_err();
        e.borrow_mut().push((refused.kind, refused.to_string()));
        for mode in [linked, WriteMode::ORDERED.with_loopback()] {
            let refused = noc
                .write(l1(0x2_0000), at((1, 3), 0x3_0000), 64, mode)
                .unwrap_err();
            e.borrow_mut().push((refused.kind, refused.to_string()));
        }
        noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap();
        noc.multicast(l1(0x2_0000), other, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    let errors = errors.borrow();
    assert_eq!(errors.len(), 3);
    assert_eq!(errors[0].0, ErrorKind::InvalidMode);
    assert!(
        errors[0]
            .1
            .contains("a linked run to (1, 3)..=(1, 11) is open"),
        "{}",
        errors[0].1
    );
    for (kind, text) in &errors[1..] {
        assert_eq!(*kind, ErrorKind::InvalidMode);
        assert!(text.contains("neither linked nor loopback"), "{text}");
    }
    assert_eq!(
        s.niu(me, 0).unwrap().acks_received,
        3 * 9,
        "three multicasts of 9"
    );
}

#[test]
fn a_linked_run_refuses_reads_and_unicast_writes_until_it_is_closed() {
    // A read or unicast write would hang the NIU on the card (HAL "A run holds the NIU"): each
    // is refused and issues no packet; the same calls go once the run is closed.
    let mut s = sim();
    let (me, other) = ((1, 2), (2, 3));
    set_limit(&mut s, me, 1 << 40);
    s.write_l1(other, 0x5_0000, &[0x5A; 64]).unwrap();
    s.write_l1(me, 0x2_0000, &[0xC3; 64]).unwrap();
    let errors = log();
    let e = errors.clone();
    s.spawn(me, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let column = rect((1, 3), (1, 11));
        let tag = ReadTag::new(2).unwrap();
        noc.multicast(
            l1(0x2_0000),
            column,
            l1(0x3_0000),
            64,
            WriteMode::ORDERED.linked(),
        )
        .unwrap();
        let from = at(other, 0x5_0000);
        let to = at(other, 0x6_0000);
        let refused = [
            noc.read(from, l1(0x4_0000), 64),
            noc.read_tagged(from, l1(0x4_1000), 64, tag),
            noc.write(l1(0x2_0000), to, 64, WriteMode::ORDERED),
            noc.write(l1(0x2_0000), to, 64, WriteMode::RELAXED),
        ];
        for r in refused {
            let r = r.unwrap_err();
            e.borrow_mut().push((r.kind, r.to_string()));
        }
        // Nothing was issued: no read to wait for, and the NIU is not hung.
        assert!(noc.reads_done().unwrap());
        noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap();
        noc.read(from, l1(0x4_0000), 64).unwrap();
        noc.read_tagged(from, l1(0x4_1000), 64, tag).unwrap();
        noc.write(l1(0x2_0000), to, 64, WriteMode::ORDERED).unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            Ok(noc.reads_done().map_err(|e| e.to_string())?
                && noc.writes_acked().map_err(|e| e.to_string())?)
        })
        .await
        .unwrap();
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    let errors = errors.borrow();
    assert_eq!(errors.len(), 4);
    for (i, (kind, text)) in errors.iter().enumerate() {
        assert_eq!(*kind, ErrorKind::InvalidMode, "call {i}");
        let what = if i < 2 { "a read" } else { "a unicast write" };
        assert!(
            text.contains(&format!(
                "a linked run to (1, 3)..=(1, 11) is open on NoC0: {what} now would hang the NIU"
            )),
            "call {i}: {text}"
        );
    }
    // Packets: two multicasts, one unicast write and two read requests, nothing refused.
    assert_eq!(s.stats().packets, 5);
    let n = s.niu(me, 0).unwrap();
    assert_eq!((n.reads_issued, n.reads_done), (2, 2));
    assert_eq!(n.nonposted_writes_issued, 3);
    assert_eq!(n.acks_received, 2 * 9 + 1);
    for addr in [0x4_0000, 0x4_1000] {
        let mut got = [0u8; 64];
        s.read_l1(me, addr, &mut got).unwrap();
        assert_eq!(got, [0x5A; 64], "read into {addr:#x}");
    }
    let mut got = [0u8; 64];
    s.read_l1(other, 0x6_0000, &mut got).unwrap();
    assert_eq!(got, [0xC3; 64]);
    assert!(s.violations().is_empty(), "{:?}", s.violations());
}

/// Sender A at (1, 2) multicasts down column 1 (rows 3..=11): four multicasts, the fourth
/// `gap` cycles after the third, linked (all but the last) or not; it returns the cycle it
/// issued the fourth. Sender B at (16, 3) multicasts at once to (1, 4)..=(1, 5): its NoC0 tree
/// wraps to column 1 at row 3 and goes down links A's tree holds. Returns (A's fourth issue,
/// B's last ack), both on the chip's clock.
fn held_path(linked: bool, gap: u64) -> (u64, u64) {
    let mut s = sim();
    let (a, b) = ((1, 2), (16, 3));
    set_limit(&mut s, a, 1 << 40);
    set_limit(&mut s, b, 1 << 40);
    let times = log();
    let t = times.clone();
    s.spawn(a, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let column = rect((1, 3), (1, 11));
        let mode = if linked {
            WriteMode::ORDERED.linked()
        } else {
            WriteMode::ORDERED
        };
        for _ in 0..3 {
            noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 64, mode)
                .unwrap();
        }
        let until = ctrl.now() + gap;
        while ctrl.now() < until {
            pause.pause(until).await;
        }
        t.borrow_mut().push(("a", ctrl.now()));
        noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 64, WriteMode::ORDERED)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
    })
    .unwrap();
    let t = times.clone();
    s.spawn(b, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        noc.multicast(
            l1(0x2_0000),
            rect((1, 4), (1, 5)),
            l1(0x3_1000),
            64,
            WriteMode::ORDERED,
        )
        .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
        t.borrow_mut().push(("b", ctrl.now()));
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    let get = |who| times.borrow().iter().find(|(w, _)| *w == who).unwrap().1;
    (get("a"), get("b"))
}

#[test]
fn another_sender_s_multicast_through_a_held_path_waits_for_the_run_to_end() {
    let gap = 5_000;
    let (closed, done) = held_path(true, gap);
    assert!(
        done > closed,
        "linked: B's multicast finishes at {done}, after A closes its run at {closed}"
    );
    let (fourth, done) = held_path(false, gap);
    assert!(
        done < fourth,
        "unlinked: B's multicast finishes at {done}, before A's fourth multicast at {fourth}"
    );
}

#[test]
fn packets_that_waited_for_a_held_path_leave_in_the_order_they_were_issued() {
    // A at (1, 2) holds a linked run down column 1 for 5,000 cycles; B at (16, 3), whose tree
    // to (1, 4)..=(1, 5) goes down links A's holds, issues a linked run of 32 KiB (two packets,
    // only the first paying the reservation) and then a 16-byte flag over its first bytes. All
    // three wait for A's run and are asked for their path again in the same cycle, in any
    // order under the adversary; they must still leave, and land, in issue order: the flag
    // last.
    for seed in 0..32 {
        held_then_flag(seed);
    }
}

fn held_then_flag(seed: u64) {
    let mut s = sim_with(seed, seed > 0);
    let (a, b) = ((1, 2), (16, 3));
    set_limit(&mut s, a, 1 << 40);
    set_limit(&mut s, b, 1 << 40);
    s.write_l1(b, 0x2_0000, &[0xAA; 32768]).unwrap();
    s.write_l1(b, 0x1_0000, &[0x55; 16]).unwrap();
    s.spawn(a, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let column = rect((1, 3), (1, 11));
        noc.multicast(
            l1(0x2_0000),
            column,
            l1(0x5_0000),
            64,
            WriteMode::ORDERED.linked(),
        )
        .unwrap();
        let until = ctrl.now() + 5_000;
        while ctrl.now() < until {
            pause.pause(until).await;
        }
        noc.multicast(l1(0x2_0000), column, l1(0x5_0000), 64, WriteMode::ORDERED)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
    })
    .unwrap();
    s.spawn(b, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let two = rect((1, 4), (1, 5));
        let linked = WriteMode::ORDERED.linked();
        noc.multicast(l1(0x2_0000), two, l1(0x3_0000), 32768, linked)
            .unwrap();
        noc.multicast(l1(0x1_0000), two, l1(0x3_0000), 16, WriteMode::ORDERED)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent, "seed {seed}");
    for tile in [(1, 4), (1, 5)] {
        let mut got = vec![0u8; 32768];
        s.read_l1(tile, 0x3_0000, &mut got).unwrap();
        assert_eq!(
            got[..16],
            [0x55; 16],
            "seed {seed}, {tile:?}: the flag landed last"
        );
        assert!(
            got[16..].iter().all(|&b| b == 0xAA),
            "seed {seed}, {tile:?}"
        );
    }
    assert!(
        s.violations().is_empty(),
        "seed {seed}: {:?}",
        s.violations()
    );
}
