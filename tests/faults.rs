//! The give-up path end to end (the broadcast specification's "When a core stalls", which the
//! `komorebi_broadcast` crate docs restate): for every fault class, the give-ups recorded are
//! exactly those the specification describes, the command is a timeout with every
//! core's first give-up, every tile reports (every kernel returned), and the next command on the
//! same tiles succeeds without any reset.
//!
//! Shapes: one broadcast, so the expectations are exact. W down column 2 on NoC1: sender at the
//! bottom (2, 9), receivers (2, 8) .. (2, 0); A along row 4 on NoC0: sender (0, 4), receivers
//! (1, 4) .. (5, 4). Window 2, 8 blocks.

use komorebi::app::broadcast::{
    self, BroadcastConfig, BroadcastSummary, DeviceChoice, FaultKind, FaultSpec,
};
use komorebi::dispatch::DispatchConfig;
use komorebi::host::backend::Exec;
use komorebi::host::session::CoreGiveUp;
use komorebi_hal::{LogicalRect, LogicalXy};

const WINDOW: u32 = 2;
const BLOCKS: u32 = 8;

fn column() -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(2, 0, 1, 10),
        rows: false,
        blocks: BLOCKS,
        window: WINDOW as u8,
        pages: 2,
        page_size: 256,
        jobs: 2,
        wait_limit: Some(200_000),
        ..BroadcastConfig::default()
    }
}

fn row() -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 4, 6, 1),
        rows: true,
        columns: false,
        ..column()
    }
}

fn run(mut cfg: BroadcastConfig, kind: FaultKind, core: (u8, u8), block: u32) -> BroadcastSummary {
    cfg.faults = vec![FaultSpec {
        kind,
        core: core.into(),
        block,
    }];
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert_eq!(s.results.len(), 2);
    assert!(
        s.results[0].timeout && !s.results[0].ok,
        "{kind:?}: the faulty job is a timeout\n{s}"
    );
    assert!(
        s.results[1].ok,
        "{kind:?}: the next job on the same tiles succeeds\n{s}"
    );
    assert_eq!(s.mismatches, 0, "{s}");
    assert!(s.violations.is_empty(), "{kind:?}: {:?}", s.violations);
    assert!(
        s.unfired_faults.is_empty(),
        "{kind:?} fired: {:?}",
        s.unfired_faults
    );
    assert_eq!(s.exit_code(), 3);
    // The dispatcher runs the same jobs to the same end: virtual time stands still while the
    // host works, so even the cycle counts agree with the feeder's.
    let mut d = broadcast::run_dispatched(&cfg, &DispatchConfig::default(), &|_| {}).unwrap();
    let figures = d.dispatch.take().expect("the dispatcher's figures");
    assert_eq!(d, s, "{kind:?}: dispatcher and feeder disagree");
    assert_eq!((figures.timed_out, figures.reported), (1, 1), "{kind:?}");
    assert_eq!(figures.held_at_end, 0, "{kind:?}: every core reported");
    s
}

/// The first give-ups recorded in broadcast areas, per core.
fn areas(s: &BroadcastSummary) -> Vec<&CoreGiveUp> {
    s.giveups
        .iter()
        .filter(|g| g.kernel == "broadcast area")
        .map(|g| &g.record)
        .collect()
}

fn at(s: &BroadcastSummary, core: (u8, u8)) -> Vec<&CoreGiveUp> {
    areas(s)
        .into_iter()
        .filter(|g| g.core == [core.0, core.1])
        .collect()
}

fn single(s: &BroadcastSummary, core: (u8, u8)) -> &CoreGiveUp {
    let g = at(s, core);
    assert_eq!(g.len(), 1, "core {core:?}: {g:?}");
    g[0]
}

/// One core's first give-up recorded in its broadcast area: `(core, place, broadcast, block)`.
type Record = ((u8, u8), &'static str, u8, u32);

/// Every core's [`Record`], in the summary's order (row by row).
fn records(s: &BroadcastSummary) -> Vec<Record> {
    areas(s)
        .iter()
        .map(|g| ((g.core[0], g.core[1]), g.place, g.broadcast, g.block))
        .collect()
}

/// A core that records otherwise than the others: its `(place, block)`, or nothing.
type Except = ((u8, u8), Option<(&'static str, u32)>);

/// The column's records when the sender gives up at `broadcast_done` of `block` and every
/// receiver but `except` at `broadcast_valid` of the same block (the specification's "When a
/// core stalls").
fn column_records(block: u32, except: Option<Except>) -> Vec<Record> {
    let mut out = Vec::new();
    for r in column_receivers() {
        match except {
            Some((c, own)) if c == r => out.extend(own.map(|(place, b)| (r, place, 1, b))),
            _ => out.push((r, "broadcast_valid", 1, block)),
        }
    }
    out.push(((2, 9), "broadcast_done", 1, block));
    out
}

fn column_receivers() -> impl Iterator<Item = (u8, u8)> {
    (0..9).map(|y| (2, y))
}

#[test]
fn stall_dm_sender_records_done_and_the_other_receivers_valid() {
    let k = 3;
    let stalled = (2, 5);
    let s = run(column(), FaultKind::StallDm, stalled, k);
    // The stalled core records nothing (its last markers went out while it waited inside
    // arrive(k - 1)); the sender gives up at broadcast_done of block k, every other receiver
    // at broadcast_valid of the same block.
    assert_eq!(records(&s), column_records(k, Some((stalled, None))));
}

#[test]
fn stall_dm_on_a_row_on_noc0() {
    let s = run(row(), FaultKind::StallDm, (3, 4), 2);
    let mut want = vec![((0, 4), "broadcast_done", 0, 2)];
    want.extend([1, 2, 4, 5].map(|x| ((x, 4), "broadcast_valid", 0, 2)));
    assert_eq!(records(&s), want);
}

#[test]
fn stall_compute_everyone_waits_window_blocks_later() {
    let k = 3;
    let s = run(column(), FaultKind::StallCompute, (2, 5), k);
    let sender = single(&s, (2, 9));
    assert_eq!(
        (sender.place, sender.broadcast, sender.block),
        ("broadcast_done", 1, k + WINDOW)
    );
    for r in column_receivers() {
        let g = single(&s, r);
        assert_eq!(
            (g.place, g.block),
            ("broadcast_valid", k + WINDOW),
            "{r:?} (the stalled core's DM too)"
        );
    }
    let compute: Vec<_> = s
        .giveups
        .iter()
        .filter(|g| g.kernel == "compute" && g.core == [2, 5])
        .collect();
    assert_eq!(compute.len(), 1);
    assert_eq!((compute[0].place, compute[0].block), ("compute_timeout", k));
}

#[test]
fn stall_sender_compute_sender_records_free_and_does_not_stop() {
    let k = 3;
    let s = run(column(), FaultKind::StallSenderCompute, (2, 9), k);
    let sender = single(&s, (2, 9));
    assert_eq!(
        (sender.place, sender.broadcast, sender.block),
        ("broadcast_free", 1, k + WINDOW)
    );
    for r in column_receivers() {
        let g = single(&s, r);
        assert_eq!((g.place, g.block), ("broadcast_valid", k + WINDOW), "{r:?}");
    }
}

#[test]
fn a_lost_marker_is_covered_but_its_ack_never_comes() {
    // The first marker of (2, 5) is lost, with its acknowledgement: the next marker covers it,
    // so the sender completes; the receiver waits for its last markers to leave.
    let s = run(column(), FaultKind::DropMarker, (2, 5), 0);
    let g = single(&s, (2, 5));
    assert_eq!(
        (g.place, g.broadcast, g.block),
        ("broadcast_free", 1, BLOCKS)
    );
    assert_eq!(areas(&s).len(), 1, "{:?}", s.giveups);
}

#[test]
fn a_lost_valid_is_covered_but_the_sender_waits_for_its_barrier() {
    let s = run(column(), FaultKind::DropValid, (2, 5), 0);
    let g = single(&s, (2, 9));
    assert_eq!(
        (g.place, g.broadcast, g.block),
        ("broadcast_done", 1, BLOCKS)
    );
    assert_eq!(areas(&s).len(), 1, "{:?}", s.giveups);
    let s = run(row(), FaultKind::DropValid, (2, 4), 1);
    assert_eq!(records(&s), [((0, 4), "broadcast_done", 0, BLOCKS)]);
}

#[test]
fn bad_words_give_up_broadcast_begin_and_the_broadcast_stalls_at_the_first_reuse() {
    let s = run(column(), FaultKind::BadWords, (2, 5), 0);
    // No marker ever comes from (2, 5), which refused its words: the sender can cast one
    // window and no more.
    assert_eq!(
        records(&s),
        column_records(WINDOW, Some(((2, 5), Some(("broadcast_begin", 0)))))
    );
    // Bad words on the sender: every receiver waits for the first VALID.
    let s = run(column(), FaultKind::BadWords, (2, 9), 0);
    let mut want: Vec<Record> = column_receivers()
        .map(|r| (r, "broadcast_valid", 1, 0))
        .collect();
    want.push(((2, 9), "broadcast_begin", 1, 0));
    assert_eq!(records(&s), want);
}

/// The tile whose data-movement kernel refused its words records the refusal and nothing else:
/// its compute reads the refusal in the broadcast area and stops waiting for blocks at once,
/// rather than timing out at the wait limit as if the blocks were late.
#[test]
fn a_refusal_of_bad_words_is_its_tile_s_only_record() {
    for exec in [Exec::Native, Exec::Firmware] {
        let cfg = BroadcastConfig {
            device: DeviceChoice::PcieSim,
            exec,
            ..column()
        };
        let s = run(cfg, FaultKind::BadWords, (2, 5), 0);
        let mine: Vec<_> = s
            .giveups
            .iter()
            .filter(|g| g.core == [2, 5])
            .map(|g| (g.kernel, g.place))
            .collect();
        assert_eq!(
            mine,
            [("broadcast area", "broadcast_begin")],
            "{exec:?}: {s}"
        );
    }
}

#[test]
fn a_host_stop_stops_that_core_and_the_broadcast_stalls_behind_it() {
    // Stopped once it had seen two blocks, (2, 5) gives up waiting for block 2 as every other
    // receiver then does, and the sender waits for block 2's marker.
    let s = run(column(), FaultKind::HostStop, (2, 5), 2);
    assert_eq!(records(&s), column_records(2, None));
}

#[test]
fn a_host_stop_whose_block_never_comes_is_not_written_into_the_next_job() {
    // Bad words on the sender: no block ever reaches (2, 5), which gives up waiting for VALID
    // and reports; its host stop at block 2 never fires. Written anyway once the wait ended,
    // it stayed set into job 1, which gave up at its first wait on that tile.
    let mut cfg = column();
    cfg.faults = vec![
        FaultSpec {
            kind: FaultKind::BadWords,
            core: (2, 9).into(),
            block: 0,
        },
        FaultSpec {
            kind: FaultKind::HostStop,
            core: (2, 5).into(),
            block: 2,
        },
    ];
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.results[0].timeout, "{s}");
    assert!(
        s.results[1].ok,
        "the next job on the same tiles succeeds\n{s}"
    );
    let g = single(&s, (2, 5));
    assert_eq!((g.place, g.block), ("broadcast_valid", 0), "never stopped");
    let d = broadcast::run_dispatched(&cfg, &DispatchConfig::default(), &|_| {}).unwrap();
    assert!(d.results[1].ok, "through the dispatcher too\n{d}");
}

#[test]
fn faults_another_fault_starves_are_reported_as_never_fired() {
    // Bad words on the sender: it casts nothing, so no VALID reaches (2, 5) and no receiver
    // writes a marker. The run asked for three faults it never got; it says so, in the order
    // the host watched them (its stops during the job, the NoC drops at its report), and
    // through the dispatcher alike.
    let mut cfg = column();
    let fault = |kind, core: (u8, u8), block| FaultSpec {
        kind,
        core: core.into(),
        block,
    };
    cfg.faults = vec![
        fault(FaultKind::BadWords, (2, 9), 0),
        fault(FaultKind::DropMarker, (2, 3), 1),
        fault(FaultKind::DropValid, (2, 5), 2),
        fault(FaultKind::HostStop, (2, 6), 1),
    ];
    let never = ["host-stop:2,6:1", "drop-marker:2,3:1", "drop-valid:2,5:2"];
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.results[0].timeout && s.results[1].ok, "{s}");
    assert_eq!(s.unfired_faults, never);
    assert!(
        s.to_string()
            .contains("warning: --fault drop-valid:2,5:2 never fired"),
        "{s}"
    );
    let d = broadcast::run_dispatched(&cfg, &DispatchConfig::default(), &|_| {}).unwrap();
    assert_eq!(d.unfired_faults, never, "through the dispatcher");
    // Without the bad words the stop at block 1 holds the column back before the second
    // VALID to (2, 5); without the stop too, every fault fires.
    cfg.faults.remove(0);
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert_eq!(s.unfired_faults, ["drop-valid:2,5:2"], "{s}");
    cfg.faults.pop();
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.unfired_faults.is_empty(), "{:?}\n{s}", s.unfired_faults);
}

#[test]
fn two_host_stops_leave_the_next_job_clean() {
    // Both watched in the same waits, both flags clear for the next job. (A give-up does not
    // tell a stopped core from one stalled behind a stopped neighbour.)
    let mut cfg = column();
    cfg.faults = [(2, 5), (2, 3)]
        .map(|core| FaultSpec {
            kind: FaultKind::HostStop,
            core: core.into(),
            block: 2,
        })
        .to_vec();
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.results[0].timeout && s.results[1].ok, "{s}");
    assert_eq!(records(&s), column_records(2, None));
    let d = broadcast::run_dispatched(&cfg, &DispatchConfig::default(), &|_| {}).unwrap();
    assert!(d.results[1].ok, "through the dispatcher too\n{d}");
}

#[test]
fn faults_with_both_broadcasts_leave_the_next_jobs_clean() {
    for kind in FaultKind::ALL.map(|(k, _)| k) {
        let core = if kind == FaultKind::StallSenderCompute {
            (0, 9)
        } else {
            (3, 4)
        };
        let cfg = BroadcastConfig {
            rect: LogicalRect::new(0, 0, 6, 10),
            jobs: 3,
            blocks: 6,
            pages: 2,
            page_size: 256,
            wait_limit: Some(200_000),
            ..BroadcastConfig::default()
        };
        // Bad words take no block: the core's words are bad from the start.
        let block = if kind == FaultKind::BadWords { 0 } else { 2 };
        let s = run(BroadcastConfig { jobs: 2, ..cfg }, kind, core, block);
        assert!(!areas(&s).is_empty() || !s.giveups.is_empty(), "{kind:?}");
    }
}

#[test]
fn a_fault_on_a_core_that_cannot_have_it_is_refused() {
    let mut cfg = column();
    cfg.faults = vec![FaultSpec {
        kind: FaultKind::StallSenderCompute,
        core: LogicalXy::new(2, 5),
        block: 1,
    }];
    let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
    assert_eq!(
        e,
        "--fault: stall-sender-compute: core (2,5) sends no broadcast with receivers (allowed: \
         a core that does, such as (2,9))"
    );
    cfg.faults = vec![FaultSpec {
        kind: FaultKind::StallDm,
        core: LogicalXy::new(7, 7),
        block: 1,
    }];
    let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
    assert_eq!(
        e,
        "--fault: stall-dm: core (7,7) is not in --rect 2,0,1,10 (allowed: X 2..=2, Y 0..=9)"
    );
    // Two stalls of one kernel: the second would replace the first.
    let fault = |s: &str| s.parse::<FaultSpec>().unwrap();
    for (a, b) in [
        ("stall-dm:2,5:1", "stall-dm:2,5:5"),
        ("stall-compute:2,5:1", "stall-compute:2,5:3"),
    ] {
        cfg.faults = vec![fault(a), fault(b)];
        let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
        let core = &a[a.find(':').unwrap() + 1..a.rfind(':').unwrap()];
        assert_eq!(
            e,
            format!(
                "--fault: {a} and {b} stall the same kernel of core ({core}) (allowed: one \
                 stall per kernel of a core)"
            )
        );
    }
    // A fault the core's bad words keep from ever firing, and one given twice.
    cfg.faults = vec![fault("bad-words:2,5"), fault("stall-dm:2,5:3")];
    let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
    assert_eq!(
        e,
        "--fault: stall-dm:2,5:3: core (2,5) has bad-words too, so it runs no block and the fault \
         would never fire (allowed: bad-words with drop-valid or host-stop on one core)"
    );
    // Any fault given twice (a NoC drop's two filters would match one transaction and the
    // second never act alone).
    for twice in ["stall-dm:2,5:3", "drop-marker:2,5:1", "host-stop:2,5:1"] {
        cfg.faults = vec![fault(twice), fault(twice)];
        let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("--fault: {twice} is given twice (allowed: each fault once)")
        );
    }
    // A host stop counts the blocks a core sees in its broadcasts with receivers: a core in
    // none (a row of one core) sees none, so only a stop at once can come.
    cfg.rect = komorebi_hal::LogicalRect::new(0, 0, 1, 2);
    (cfg.rows, cfg.columns) = (true, false);
    cfg.faults = vec![fault("host-stop:0,0:2")];
    let e = broadcast::run(&cfg, |_| {}).unwrap_err().to_string();
    assert_eq!(
        e,
        "--fault: host-stop:0,0:2: core (0,0) takes part in no broadcast with receivers, so it \
         counts no block and block count 2 never comes (allowed: host-stop:0,0:0, a stop at once)"
    );
    assert!("stall-dm:1,2:3".parse::<FaultSpec>().is_ok());
    assert!(
        "melt:1,2"
            .parse::<FaultSpec>()
            .unwrap_err()
            .contains("allowed: stall-dm")
    );
    assert!("stall-dm:1".parse::<FaultSpec>().is_err());
}

#[test]
fn wait_limits_at_the_edges() {
    // 0 cycles: every wait that does not hold at once gives up; the run times out cleanly.
    let cfg = BroadcastConfig {
        wait_limit: Some(0),
        jobs: 1,
        ..column()
    };
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(
        s.results[0].timeout && s.mismatches == 0 && s.violations.is_empty(),
        "{s}"
    );
    assert!(!s.giveups.is_empty());
    // The largest the ABI holds (u64::MAX): nothing times out.
    let cfg = BroadcastConfig {
        wait_limit: Some(u64::MAX),
        ..column()
    };
    let s = broadcast::run(&cfg, |_| {}).unwrap();
    assert!(s.ok, "{s}");
}
