//! Tagged reads on the simulated chip: the reads of one tag complete apart from the others', as
//! `NIU_MST_REQS_OUTSTANDING_ID` counts them, through the HAL and through the NIU registers.

mod common;

use common::*;
use komorebi_hal::noc::{NocMulticast, ReadTag};
use komorebi_hal::{NocAddr, Role};
use komorebi_sim::*;

#[test]
fn a_tag_s_reads_are_done_while_another_tag_s_are_still_in_flight() {
    let mut s = sim();
    let me = (1, 2);
    set_limit(&mut s, me, 1 << 40);
    s.write_l1((2, 3), 0x4_0000, &[7; 64]).unwrap();
    let seen = log();
    let out = seen.clone();
    s.spawn(me, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let (slow, fast) = (ReadTag::new(0).unwrap(), ReadTag::new(14).unwrap());
        // 64 KiB from DRAM bank 0 under one tag, then 64 bytes from a neighbour under another.
        let dram = NocAddr::new(xy((0, 11)), 0).unwrap();
        noc.read_tagged(dram, l1(0x10_0000), 65536, slow).unwrap();
        noc.read_tagged(at((2, 3), 0x4_0000), l1(0x2_0000), 64, fast)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.tagged_reads_done(fast).map_err(|e| e.to_string())
        })
        .await
        .unwrap();
        let state = (
            noc.tagged_reads_done(slow).unwrap(),
            noc.reads_done().unwrap(),
        );
        out.borrow_mut().push(state);
        wait(&mut ctrl, &mut pause, |_| {
            noc.tagged_reads_done(slow).map_err(|e| e.to_string())
        })
        .await
        .unwrap();
        let state = (true, noc.reads_done().unwrap());
        out.borrow_mut().push(state);
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    assert_eq!(*seen.borrow(), [(false, false), (true, true)]);
    let mut got = [0u8; 64];
    s.read_l1(me, 0x2_0000, &mut got).unwrap();
    assert_eq!(got, [7; 64]);
}

/// Cycles from issuing a 64-byte read of core (1,2)'s west neighbour's L1 to its landing, by
/// core (2,2) on NoC0, right after it issued a 16 KiB multicast east along its row (or none).
fn read_latency_after_multicast(multicast: bool) -> u64 {
    let mut s = sim();
    let me = (2, 2);
    set_limit(&mut s, me, 1 << 40);
    s.write_l1((1, 2), 0x4_0000, &[9; 64]).unwrap();
    let seen = log();
    let out = seen.clone();
    s.spawn(me, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        if multicast {
            let east = komorebi_hal::Rect::new(xy((3, 2)), xy((7, 2))).unwrap();
            let mode = komorebi_hal::noc::WriteMode::ORDERED;
            noc.multicast(l1(0x2_0000), east, l1(0x2_0000), 16384, mode)
                .unwrap();
        }
        let start = komorebi_hal::ControlBlock::now(&mut ctrl);
        noc.read(at((1, 2), 0x4_0000), l1(0x1_0000), 64).unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            noc.reads_done().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
        let end = komorebi_hal::ControlBlock::now(&mut ctrl);
        out.borrow_mut().push(end - start);
    })
    .unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
    let mut got = [0u8; 64];
    s.read_l1(me, 0x1_0000, &mut got).unwrap();
    assert_eq!(got, [9; 64]);
    seen.borrow()[0]
}

#[test]
fn a_read_does_not_wait_behind_a_multicast_issued_before_it() {
    // Reads and writes leave from separate command buffers: the read's request does not queue
    // behind the multicast's path reservation and 257 flits (about 330 cycles of the write
    // pipeline), and its links (west, then back east into the port) are not the multicast's.
    let alone = read_latency_after_multicast(false);
    let behind = read_latency_after_multicast(true);
    assert!(alone > 100, "a read to a neighbour takes {alone} cycles");
    assert_eq!(behind, alone, "a multicast before it delayed the read");
}

#[test]
fn a_tag_s_count_is_eight_bits_wide_as_on_the_card() {
    // 256 reads of one tag in flight read as none (`NIU_MST_REQS_OUTSTANDING_ID` is 8 bits:
    // the HAL's "Counters"), 255 as some; `reads_done` counts them all.
    for (reads, wrapped) in [(255u32, false), (256, true)] {
        let mut s = sim();
        let me = (1, 2);
        set_limit(&mut s, me, 1 << 40);
        let seen = log();
        let out = seen.clone();
        s.spawn(me, Role::Reader, move |env| async move {
            let mut noc = env.noc().unwrap();
            let tag = ReadTag::new(3).unwrap();
            for i in 0..reads {
                noc.read_tagged(at((2, 3), 0x4_0000), l1(0x2_0000 + 64 * i), 64, tag)
                    .unwrap();
            }
            let state = (
                noc.tagged_reads_done(tag).unwrap(),
                noc.reads_done().unwrap(),
            );
            out.borrow_mut().push(state);
        })
        .unwrap();
        s.run(u64::MAX);
        assert_eq!(*seen.borrow(), [(wrapped, false)], "{reads} reads");
    }
}
