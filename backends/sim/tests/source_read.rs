//! `SimConfig::source_read`: the adversaries that read a NoC write's source at either end of
//! the interval the hardware may read it in (at issue, or when the packet leaves and
//! `writes_sent` counts it), and report a source changed in that interval.

mod common;

use common::*;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{ControlBlock, Role};
use komorebi_sim::*;

/// Writes a control word (0xAAAA) from (1,2) to (1,3), then stores 0xBBBB into the source,
/// right after the issue or only once `writes_sent` says the write left; returns what landed
/// and the violations.
fn source_changed(read: SourceRead, wait_for_sent: bool) -> (u32, Vec<Violation>) {
    let mut s = Sim::new(SimConfig {
        source_read: read,
        ..SimConfig::default()
    });
    set_limit(&mut s, (1, 2), 1_000_000);
    s.spawn((1, 2), Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        ctrl.store(0x300, 0xAAAA).unwrap();
        noc.write(
            ctrl.addr(0x300).unwrap(),
            at((1, 3), CTRL.base + 0x300),
            4,
            WriteMode::ORDERED,
        )
        .unwrap();
        if wait_for_sent {
            wait(&mut ctrl, &mut pause, |_| {
                noc.writes_sent().map_err(|e| format!("{e}"))
            })
            .await
            .unwrap();
        }
        ctrl.store(0x300, 0xBBBB).unwrap();
    })
    .unwrap();
    s.run(1_000_000);
    let landed = s.read_l1_u32((1, 3), CTRL.base + 0x300).unwrap();
    (landed, s.violations())
}

fn is_source_change(v: &[Violation]) -> bool {
    matches!(
        v,
        [Violation::SourceChangedInFlight {
            tile: (1, 2),
            addr,
            ..
        }] if *addr == CTRL.base + 0x300
    )
}

#[test]
fn the_early_reader_sends_the_bytes_of_the_issue_and_flags_the_change() {
    let (landed, v) = source_changed(SourceRead::IssueChecked, false);
    assert_eq!(landed, 0xAAAA);
    assert!(is_source_change(&v), "{v:?}");
}

#[test]
fn the_late_reader_sends_the_changed_bytes_and_flags_the_change() {
    let (landed, v) = source_changed(SourceRead::DepartureChecked, false);
    assert_eq!(landed, 0xBBBB);
    assert!(is_source_change(&v), "{v:?}");
}

#[test]
fn the_default_reads_at_departure_without_a_check() {
    let (landed, v) = source_changed(SourceRead::Departure, false);
    assert_eq!(landed, 0xBBBB);
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_source_changed_only_after_writes_sent_is_no_violation_in_either_mode() {
    for read in [SourceRead::IssueChecked, SourceRead::DepartureChecked] {
        let (landed, v) = source_changed(read, true);
        assert_eq!(landed, 0xAAAA, "{read:?}");
        assert!(v.is_empty(), "{read:?}: {v:?}");
    }
}

#[test]
fn a_source_changed_before_writes_sent_delivers_the_changed_bytes() {
    // The default reads the source when the packet leaves, as Blackhole does.
    assert_eq!(source_changed(SourceRead::Departure, false).0, 0xBBBB);
    assert_eq!(source_changed(SourceRead::Departure, true).0, 0xAAAA);
}
