//! Session, Run and feeder: refusals, rule 3, host-deadline timeouts, and commands after a
//! failed one on the same tiles.

use komorebi::app::broadcast::{BroadcastConfig, BroadcastPlan, open_session};
use komorebi::host::session::Ticket;
use komorebi::{Backend, CommandSpec, Feeder, Run, Session, TileProgram};
use komorebi_broadcast::args::BroadcastArgs;
use komorebi_hal::{LogicalRect, LogicalXy, Role};
use komorebi_kernel::abi;
use komorebi_kernel::broadcast_handler::BROADCAST_HANDLER;
use komorebi_kernel::broadcast_handler::program::{BroadcastProgram, MoverProgram};
use komorebi_sim::{Fault, SimConfig};

#[path = "common/failing_device.rs"]
mod failing_device;
use failing_device::FailingWrite;

fn session() -> Session {
    open_session(Backend::Simulator(SimConfig::default())).unwrap()
}

/// Freezes the simulated tile of logical `core` from the start: it never reports.
fn freeze(s: &mut Session, core: LogicalXy) {
    let tile = s.noc0(core).unwrap().get();
    s.device()
        .simulator()
        .unwrap()
        .inject(Fault::FreezeTile { tile, at: 0 })
        .unwrap();
}

fn plan(session: &mut Session, rect: LogicalRect) -> BroadcastPlan {
    let cfg = BroadcastConfig {
        rect,
        blocks: 4,
        pages: 2,
        page_size: 256,
        jobs: 4,
        ..BroadcastConfig::default()
    };
    let plan = BroadcastPlan::new(&cfg, session.geometry()).unwrap();
    plan.prepare(session).unwrap();
    plan
}

/// A tile's program of the broadcast handler that runs no broadcast.
fn no_broadcast() -> TileProgram {
    let w = BroadcastProgram::default().encode().unwrap();
    TileProgram {
        compute: w.compute.to_vec(),
        ..TileProgram::default()
    }
}

/// A command of the broadcast handler that runs no broadcast.
fn empty(group: LogicalRect) -> CommandSpec {
    CommandSpec {
        handler: BROADCAST_HANDLER,
        flags: abi::FLAG_EXCLUSIVE,
        group,
        wait_limit: 100_000,
        budget: None,
        programs: vec![no_broadcast()],
    }
}

#[test]
fn the_session_learns_the_grid_and_prepares_every_tile() {
    let s = session();
    assert_eq!((s.geometry().columns(), s.geometry().rows()), (12, 10));
    assert_eq!(
        s.noc0(LogicalXy::new(6, 0)),
        komorebi_hal::Xy::new(11, 2).ok()
    );
    for core in [LogicalXy::new(0, 0), LogicalXy::new(11, 9)] {
        assert_eq!(s.control_word(core, abi::HEADER_MAGIC).unwrap(), abi::MAGIC);
        assert_eq!(
            s.control_word(core, abi::HEADER_VERSION).unwrap(),
            abi::ABI_VERSION
        );
        assert_eq!(
            s.control_word(core, abi::HEADER_TILE).unwrap(),
            core.x as u32 | (core.y as u32) << 8
        );
    }
}

#[test]
fn a_record_of_another_sequence_under_the_same_index_is_not_this_command_s_report() {
    // A command that ran and reported; a ticket for the same cores and indices but another
    // sequence (the host posting an index again after a publish that failed yet landed) must
    // not take that report for its own: that command did not run there, so it is refused on
    // both cores, naming why.
    let mut s = session();
    let group = LogicalRect::new(1, 1, 2, 1);
    let ticket = s.post(&empty(group)).unwrap();
    s.wait(&[&ticket]).unwrap();
    let ran = s.report(&ticket).unwrap();
    assert!(ran.ok && ran.unreported.is_empty(), "{ran:?}");
    let mut other: Ticket = ticket.clone();
    other.sequence = ticket.sequence.wrapping_add(1);
    let r = s.report(&other).unwrap();
    assert!(r.refused && !r.ok && r.unreported.is_empty(), "{r:?}");
    assert_eq!(
        r.give_ups
            .iter()
            .map(|g| (g.core, g.place, g.kernel))
            .collect::<Vec<_>>(),
        [
            ([1, 1], "another_command", "host"),
            ([2, 1], "another_command", "host")
        ]
    );
}

#[test]
fn unknown_handlers_and_missing_exclusive_are_refused_by_every_core() {
    let mut s = session();
    let group = LogicalRect::new(2, 2, 2, 2);
    let mut spec = empty(group);
    spec.handler = 77;
    let r = Feeder::new(&mut s).run(&spec).unwrap();
    assert!(r.refused && !r.ok && !r.timeout, "{r:?}");
    assert_eq!(r.give_ups.len(), 4 * 3, "three kernels of four cores");
    assert!(r.give_ups.iter().all(|g| g.place == "unknown_handler"));
    let mut spec = empty(group);
    spec.flags = 0;
    let r = Feeder::new(&mut s).run(&spec).unwrap();
    assert!(r.refused);
    assert!(r.give_ups.iter().all(|g| g.place == "not_exclusive"));
    // And the tiles take the next command.
    let r = Feeder::new(&mut s).run(&empty(group)).unwrap();
    assert!(r.ok, "{r:?}");
}

#[test]
fn words_built_for_another_group_give_up_broadcast_begin_and_the_next_command_succeeds() {
    let mut s = session();
    let rect = LogicalRect::new(0, 0, 3, 2);
    let p = plan(&mut s, rect);
    let mut spec = p.spec(0);
    // Rule 3: the command names a group other than the one the words were built for.
    spec.group = LogicalRect::new(0, 0, 3, 3);
    spec.programs.extend(std::iter::repeat_n(no_broadcast(), 3));
    let r = Feeder::new(&mut s).run(&spec).unwrap();
    assert!(r.timeout && !r.ok, "{r:?}");
    let begins = r
        .give_ups
        .iter()
        .filter(|g| g.place == "broadcast_begin")
        .count();
    assert_eq!(
        begins,
        2 * rect.len(),
        "both broadcasts of every core of the rectangle: {:?}",
        r.give_ups
    );
    for job in 1..4 {
        let r = Feeder::new(&mut s).run(&p.spec(job)).unwrap();
        assert!(r.ok, "job {job}: {r:?}");
    }
}

#[test]
fn corrupted_words_give_up_broadcast_begin_on_that_core_only() {
    let mut s = session();
    let rect = LogicalRect::new(4, 4, 1, 3);
    let p = plan(&mut s, rect);
    let begins = |r: &komorebi::Report| -> Vec<([u8; 2], u8)> {
        r.give_ups
            .iter()
            .filter(|g| g.place == "broadcast_begin")
            .map(|g| (g.core, g.broadcast))
            .collect()
    };
    // The writer's arguments with one bit flipped after their check word was made: its
    // broadcast (W, id 1) gives up at begin; the tile's program itself is sound.
    let mut spec = p.spec(0);
    let mut writer = MoverProgram::decode(Role::Writer, &spec.programs[1].writer).unwrap();
    let args = BroadcastArgs::decode(&writer.args).unwrap();
    let mut flipped = args;
    flipped.start.1 ^= 1;
    writer.args = flipped.encode_stale(&args);
    spec.programs[1].writer = writer.encode().to_vec();
    let r = Feeder::new(&mut s).run(&spec).unwrap();
    assert!(r.timeout);
    assert_eq!(begins(&r), vec![([4, 5], 1)]);
    let r = Feeder::new(&mut s).run(&p.spec(1)).unwrap();
    assert!(r.ok, "{r:?}");
    // A word of the program changed under its check word: the whole tile's program is
    // refused, so both of its broadcasts give up at begin.
    let mut spec = p.spec(2);
    spec.programs[1].writer[13] ^= 0x40;
    let r = Feeder::new(&mut s).run(&spec).unwrap();
    assert!(r.timeout);
    assert_eq!(begins(&r), vec![([4, 5], 0), ([4, 5], 1)]);
    let r = Feeder::new(&mut s).run(&p.spec(3)).unwrap();
    assert!(r.ok, "{r:?}");
}

#[test]
fn a_tile_that_never_reports_times_out_at_the_host_deadline() {
    let mut s = session();
    let group = LogicalRect::new(0, 0, 2, 1);
    freeze(&mut s, LogicalXy::new(1, 0));
    let r = Feeder::new(&mut s).run(&empty(group)).unwrap();
    assert!(r.timeout && !r.ok);
    // The simulator knows at once that nothing can change any more, so the wait ends early.
    assert_eq!(r.unreported, vec![[1, 0]]);
    // The other tile took it and takes the next one.
    let r = Feeder::new(&mut s)
        .run(&empty(LogicalRect::new(0, 0, 1, 1)))
        .unwrap();
    assert!(r.ok);
}

#[test]
fn a_run_keeps_disjoint_groups_in_flight_together_and_runs_an_overlapping_one_after_them_on_shared_tiles()
 {
    let mut s = session();
    let mut run = Run::new(&mut s, 100_000);
    let a = run
        .submit(
            BROADCAST_HANDLER,
            abi::FLAG_EXCLUSIVE,
            LogicalRect::new(0, 0, 2, 2),
            empty(LogicalRect::new(0, 0, 2, 2)).programs,
        )
        .unwrap();
    let b = run
        .submit(
            BROADCAST_HANDLER,
            abi::FLAG_EXCLUSIVE,
            LogicalRect::new(4, 0, 2, 2),
            empty(LogicalRect::new(4, 0, 2, 2)).programs,
        )
        .unwrap();
    let c = run
        .submit(
            BROADCAST_HANDLER,
            abi::FLAG_EXCLUSIVE,
            LogicalRect::new(1, 1, 4, 1),
            empty(LogicalRect::new(1, 1, 4, 1)).programs,
        )
        .unwrap();
    let reports = run.finish().unwrap();
    assert_eq!(
        reports.iter().map(|r| r.sequence).collect::<Vec<_>>(),
        vec![a, b, c]
    );
    assert!(reports.iter().all(|r| r.ok), "{reports:?}");
    // In flight together: each of the disjoint commands started before the other finished.
    let (ra, rb, rc) = (&reports[0], &reports[1], &reports[2]);
    assert!(
        ra.started_at < rb.finished_at && rb.started_at < ra.finished_at,
        "a ran {}..{}, b {}..{}: not together",
        ra.started_at,
        ra.finished_at,
        rb.started_at,
        rb.finished_at
    );
    // Serialized: on each tile c shares with a or b (its command index 2 there), c started
    // only after that tile reported the earlier command (index 1). Each tile's own record
    // words, so the tiles' clocks are never compared with each other.
    let word = |s: &Session, x, index: u32, offset| {
        s.control_word(LogicalXy::new(x, 1), abi::record_of(index) + offset)
            .unwrap()
    };
    for x in [1, 4] {
        assert_eq!(
            (
                word(&s, x, 1, abi::RECORD_INDEX),
                word(&s, x, 2, abi::RECORD_INDEX)
            ),
            (1, 2)
        );
        let earlier_finished = word(&s, x, 1, abi::RECORD_FINISHED);
        let c_started = word(&s, x, 2, abi::RECORD_STARTED);
        assert!(
            c_started >= earlier_finished,
            "tile ({x}, 1): c started at {c_started} before the earlier command finished at {earlier_finished}"
        );
    }
    assert!(rc.started_at > 0 && rc.finished_at >= rc.started_at);
}

#[test]
fn bad_specs_are_refused_before_anything_is_posted() {
    let mut s = session();
    let mut spec = empty(LogicalRect::new(10, 0, 3, 1));
    assert!(
        Feeder::new(&mut s)
            .run(&spec)
            .unwrap_err()
            .to_string()
            .contains("outside")
    );
    spec.group = LogicalRect::new(0, 0, 2, 1);
    spec.programs = vec![TileProgram::default(); 3];
    assert!(
        Feeder::new(&mut s)
            .run(&spec)
            .unwrap_err()
            .to_string()
            .contains("3 programs for a group of 2")
    );
    spec.programs = vec![TileProgram {
        reader: vec![0; 200],
        ..TileProgram::default()
    }];
    assert!(
        Feeder::new(&mut s)
            .run(&spec)
            .unwrap_err()
            .to_string()
            .contains("do not fit")
    );
}

#[test]
fn a_post_refused_for_one_tiles_words_writes_no_tile() {
    // Tile 1 of 2 has more words than a command slot holds: the post is refused before tile
    // 0's command is written, so no tile runs it and the next post takes the same slot.
    let mut s = session();
    let group = LogicalRect::new(0, 0, 2, 1);
    let slot = |s: &Session, core| s.control_word(core, abi::slot_of(1)).unwrap();
    let cores = [LogicalXy::new(0, 0), LogicalXy::new(1, 0)];
    let before: Vec<u32> = cores.iter().map(|&c| slot(&s, c)).collect();
    let mut spec = empty(group);
    spec.programs = vec![
        no_broadcast(),
        TileProgram {
            reader: vec![0; abi::MAX_PROGRAM_WORDS + 1],
            ..TileProgram::default()
        },
    ];
    let e = s.post(&spec).unwrap_err().to_string();
    assert!(e.contains("do not fit"), "{e}");
    let after: Vec<u32> = cores.iter().map(|&c| slot(&s, c)).collect();
    assert_eq!(after, before, "no index word written");
    // The same command with good words runs on both tiles, in the slot the refusal left free.
    let report = Feeder::new(&mut s).run(&empty(group)).unwrap();
    assert!(report.ok, "{report:?}");
}

#[test]
fn commands_that_report_after_their_deadline_free_their_slots() {
    // A command's report read before its tile has run it (as at a deadline that passed: the
    // report says unreported, the command is overdue), then the tile reports (late, quiet).
    // Twice, on a tile of two command slots: the third post must still find a free slot.
    let mut s = session();
    let group = LogicalRect::new(0, 0, 1, 1);
    for late in 0..2 {
        let t = s.post(&empty(group)).unwrap();
        let r = s.report(&t).unwrap();
        assert_eq!(
            (r.timeout, r.unreported.clone()),
            (true, vec![[0, 0]]),
            "command {late}"
        );
        s.wait_any(&[&t], u64::MAX).unwrap();
        assert!(s.is_reported(&t).unwrap(), "command {late} reported late");
    }
    let r = Feeder::new(&mut s).run(&empty(group)).unwrap();
    assert!(r.ok, "{r:?}");
}

#[test]
fn a_late_command_is_waited_for_for_good_only_where_the_device_says_when_it_is_idle() {
    use komorebi::host::session::quiet_deadline;
    // A card: one more of the longest budget, from now (saturating).
    assert_eq!(quiet_deadline([900, 400].into_iter(), 1_000, false), 1_900);
    assert_eq!(
        quiet_deadline([900].into_iter(), u64::MAX - 5, false),
        u64::MAX
    );
    // The simulator says when nothing can change: no deadline needed.
    assert_eq!(quiet_deadline([900].into_iter(), 1_000, true), u64::MAX);
    let mut s = session();
    assert!(s.device().knows_idle());
    let t = s.post(&empty(LogicalRect::new(0, 0, 1, 1))).unwrap();
    assert_eq!(t.budget(), t.deadline - t.posted_at);
    assert_eq!(s.quiet_deadline(&[&t]), u64::MAX);
}

/// A circular buffer must lie in L1 above the firmware (`abi::FIRMWARE_L1_END`): over the
/// firmware's code or control block, past L1's end, of no bytes, or so large its end overflows,
/// it is refused naming what is allowed, and nothing is written; so is an index past the
/// control block's table; one that fits is taken.
#[test]
fn a_circular_buffer_over_the_firmware_or_past_l1_is_refused() {
    let mut s = session();
    let group = LogicalRect::new(0, 0, 1, 1);
    let l1 = komorebi_sim::riscv::bus::L1_SIZE;
    for (base, page_size, pages) in [
        (0x6000, 2048, 4),                          // compute's code
        (abi::CONTROL_BASE, 256, 1),                // the control block
        (abi::FIRMWARE_L1_END - 16, 256, 1),        // its last bytes
        (l1 - 1024, 2048, 1),                       // past L1's end
        (abi::FIRMWARE_L1_END, 0, 4),               // no bytes
        (abi::FIRMWARE_L1_END, u32::MAX, u16::MAX), // an end past 32 bits
        (abi::FIRMWARE_L1_END + 2, 64, 8),          // a base off the NoC's 16 bytes
        (abi::FIRMWARE_L1_END, 40, 8),              // a page size off them
    ] {
        let before = cb_entry(&mut s);
        let e = s
            .configure_cb(group, 0, base, page_size, pages)
            .unwrap_err();
        assert_eq!(
            cb_entry(&mut s),
            before,
            "{base:#x}: a refused buffer wrote its entry"
        );
        let text = e.to_string();
        assert!(
            matches!(e, komorebi::SessionError::Buffer { .. })
                && text.contains(&format!("{:#x}", abi::FIRMWARE_L1_END)),
            "{base:#x} {page_size} {pages}: {text}"
        );
    }
    // An index past the table: refused, saying which are allowed (it was taken, no entry
    // written, and every command naming it refused on the tiles later).
    let e = s
        .configure_cb(group, abi::CB_ENTRIES as u8, abi::FIRMWARE_L1_END, 2048, 4)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "circular buffer 64: a tile has buffers 0..64 (allowed: 0 to 63)"
    );
    s.configure_cb(group, 63, abi::FIRMWARE_L1_END, 2048, 4)
        .unwrap();
    s.configure_cb(group, 0, abi::FIRMWARE_L1_END, 2048, 4)
        .unwrap();
    s.configure_cb(group, 0, l1 - 4096, 2048, 2).unwrap();
    // (The check above can fail: a buffer taken is written.)
    assert_eq!(cb_entry(&mut s)[..3], [l1 - 4096, 2048, 2]);
}

/// Circular buffer 0's table entry of logical core (0, 0): base, page size, pages, 0.
fn cb_entry(s: &mut komorebi::host::session::Session) -> [u32; 4] {
    let (x, y) = s.geometry().noc0((0, 0)).unwrap();
    let tile = komorebi_hal::Xy::new(x, y).unwrap();
    let mut b = [0u8; 16];
    s.device()
        .read_l1(tile, abi::CONTROL_BASE + abi::CB_TABLE, &mut b)
        .unwrap();
    core::array::from_fn(|i| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()))
}

/// A post writes every core's command words before any index word publishes one: a device
/// error among the words leaves the command published nowhere (and the cores' slots free for
/// the next post); one among the index words names the cores that took the command.
#[test]
fn a_device_error_while_posting_publishes_the_command_everywhere_or_names_where_it_did() {
    let group = LogicalRect::new(0, 0, 2, 1);
    let index_word = abi::CONTROL_BASE + abi::slot_of(1);
    // Two writes a core (its words, then its header), then one index word a core.
    for (fail_at, published) in [(0, None), (2, None), (3, None), (4, None), (5, Some(1))] {
        let writes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut s = FailingWrite::new(writes.clone(), fail_at, false)
            .session()
            .unwrap();
        let e = s.post(&empty(group)).unwrap_err();
        let index_writes = |writes: &[(komorebi_hal::Xy, u32, Vec<u8>)]| {
            writes.iter().filter(|w| w.1 == index_word).count()
        };
        let index_writes = index_writes(&writes.lock().unwrap());
        match published {
            None => {
                assert!(
                    matches!(e, komorebi::SessionError::Device(_)),
                    "{fail_at}: {e}"
                );
                assert_eq!(
                    index_writes, 0,
                    "{fail_at}: published before every word was written"
                );
                // Nothing was posted: the next post is each core's command 1 again.
                writes.lock().unwrap().clear();
                s.post(&empty(group)).unwrap();
                let indices: Vec<Vec<u8>> = writes
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|w| w.1 == index_word)
                    .map(|w| w.2.clone())
                    .collect();
                assert_eq!(indices, vec![1u32.to_le_bytes().to_vec(); 2], "{fail_at}");
            }
            Some(n) => {
                assert_eq!(index_writes, n, "{fail_at}");
                let komorebi::SessionError::PartlyPublished {
                    published, cores, ..
                } = &e
                else {
                    panic!("{fail_at}: {e}");
                };
                assert_eq!(*cores, 2);
                assert_eq!(published, &[LogicalXy::new(0, 0)][..n]);
                let text = e.to_string();
                assert!(text.contains(&format!("{n} of its 2 cores")), "{text}");
            }
        }
    }
}

/// A command that timed out with a core still running it keeps its group from overlapping
/// commands: a run waits for it (once more, for good on the simulator) and refuses the submit
/// while it still runs, naming it; a group clear of it goes ahead.
#[test]
fn a_run_posts_nothing_over_a_command_that_timed_out_and_still_runs() {
    let mut s = session();
    freeze(&mut s, LogicalXy::new(1, 0));
    let mut run = Run::new(&mut s, 100_000);
    let late = submit_exclusive(&mut run, LogicalRect::new(0, 0, 2, 1)).unwrap();
    // Overlapping the late command, even on its core that did report.
    for group in [LogicalRect::new(1, 0, 1, 1), LogicalRect::new(0, 0, 1, 1)] {
        let e = submit_exclusive(&mut run, group).unwrap_err();
        assert_eq!(
            e,
            komorebi::SessionError::StillRunning {
                sequence: late,
                group: LogicalRect::new(0, 0, 2, 1),
                cores: vec![LogicalXy::new(1, 0)],
            }
        );
        assert!(
            e.to_string()
                .contains("still runs on (1,0): it timed out there"),
            "{e}"
        );
    }
    submit_exclusive(&mut run, LogicalRect::new(2, 0, 1, 1)).unwrap();
    let reports = run.finish().unwrap();
    assert_eq!(reports.len(), 2);
    assert!(reports[0].timeout && reports[0].unreported == vec![[1, 0]]);
    assert!(reports[1].ok);
}

/// A command published on some of its cores only holds those cores in a run as a late command
/// does: a submit over them is refused while they have not reported; one on its group's other
/// core, or clear of it, goes ahead.
#[test]
fn a_run_posts_nothing_over_a_command_published_on_some_of_its_cores() {
    // Two cores' words and headers, then the index words: the second core's fails.
    let mut s = FailingWrite::new(Default::default(), 5, false)
        .session()
        .unwrap();
    let mut run = Run::new(&mut s, 100_000);
    let pair = LogicalRect::new(0, 0, 2, 1);
    let e = submit_exclusive(&mut run, pair).unwrap_err();
    let komorebi::SessionError::PartlyPublished { ticket, .. } = &e else {
        panic!("{e}");
    };
    let sequence = ticket.sequence;
    assert_eq!(
        submit_exclusive(&mut run, LogicalRect::new(0, 0, 1, 1)),
        Err(komorebi::SessionError::StillRunning {
            sequence,
            group: pair,
            cores: vec![LogicalXy::new(0, 0)],
        })
    );
    // The core that never took it, and a group clear of it, go ahead.
    submit_exclusive(&mut run, LogicalRect::new(1, 0, 1, 1)).unwrap();
    submit_exclusive(&mut run, LogicalRect::new(2, 0, 1, 1)).unwrap();
}

/// Submits an exclusive command of the broadcast handler running no broadcast on `group`.
fn submit_exclusive(run: &mut Run, group: LogicalRect) -> Result<u32, komorebi::SessionError> {
    run.submit(
        BROADCAST_HANDLER,
        abi::FLAG_EXCLUSIVE,
        group,
        empty(group).programs,
    )
}

/// A ticket names its session's tiles: another session (a chip of a multi-chip run) refuses it
/// at every call that reads them, rather than index past its own grid (a panic, when the
/// ticket's session had more tiles) or read its own tiles of the same indices as the ticket's.
#[test]
fn a_ticket_is_refused_by_every_session_but_its_own() {
    let larger = SimConfig {
        harvest: blackhole_pac::harvest::HarvestMask::NONE,
        ..SimConfig::default()
    };
    let mut a = open_session(Backend::Simulator(larger)).unwrap();
    assert_eq!((a.geometry().columns(), a.geometry().rows()), (14, 10));
    let mut b = session();
    let ticket = a.post(&empty(a.geometry().full())).unwrap();
    let mut same = session();
    let of_same = same.post(&empty(LogicalRect::new(0, 0, 2, 2))).unwrap();
    for t in [&ticket, &of_same] {
        let s = &mut b;
        let foreign = |e: komorebi::SessionError| {
            assert_eq!(
                e.to_string(),
                format!(
                    "command {} was posted on another Session (allowed: the tickets its own \
                     post returned)",
                    t.sequence
                )
            );
        };
        foreign(s.report(t).unwrap_err());
        foreign(s.is_reported(t).unwrap_err());
        foreign(s.wait(&[t]).unwrap_err());
        foreign(s.wait_any(&[t], u64::MAX).unwrap_err());
        assert_eq!(s.command_index(t, LogicalXy::new(0, 0)), None);
    }
    // Its own session takes it.
    a.wait(&[&ticket]).unwrap();
    assert!(a.report(&ticket).unwrap().ok);
    assert_eq!(a.command_index(&ticket, LogicalXy::new(13, 9)), Some(1));
}

/// A control word is read only inside the control block, at a word's offset: an offset past it
/// once read other L1 (an offset near 2^32 wrapped round to L1 address 0).
#[test]
fn a_control_word_past_the_block_or_between_words_is_refused() {
    let s = session();
    let core = LogicalXy::new(0, 0);
    for offset in [abi::CONTROL_BYTES, 0x2_0000, 0xFFFF_C000, u32::MAX - 3, 2] {
        let e = s.control_word(core, offset).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "control offset {offset:#x} (allowed: a multiple of 4 below 0x1000, the control \
                 block's bytes)"
            )
        );
    }
    assert_eq!(
        s.control_word(core, abi::CONTROL_BYTES - 4).map(|_| ()),
        Ok(())
    );
}

/// A simulator configuration it cannot run is the session's typed error, not a panic.
#[test]
fn a_simulator_configuration_it_cannot_run_is_refused_by_the_open() {
    let config = SimConfig {
        timing: komorebi_sim::Timing {
            flit_bytes: 0,
            ..komorebi_sim::Timing::default()
        },
        ..SimConfig::default()
    };
    let e = open_session(Backend::Simulator(config)).unwrap_err();
    assert!(
        e.to_string()
            .contains("simulator configuration: timing.flit_bytes is 0 (allowed: at least 1)"),
        "{e}"
    );
}
