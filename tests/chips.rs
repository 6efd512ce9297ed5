//! Several chips under one host (`--chips`): the jobs spread over independent simulated chips,
//! every byte checked as on one chip, the device time shrinking with the chips, each chip's
//! give-ups under its name, and the flags a run on several chips refuses.

mod common;
use common::komorebi;

use komorebi::app::broadcast::{
    self, BroadcastConfig, BroadcastError, BroadcastSummary, chip_seed,
};
use komorebi::dispatch::DispatchConfig;
use komorebi_hal::LogicalRect;

fn shape(chips: u32, jobs: u32) -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 4, 4),
        blocks: 8,
        pages: 2,
        jobs,
        chips,
        ..BroadcastConfig::default()
    }
}

fn run(cfg: &BroadcastConfig) -> BroadcastSummary {
    broadcast::run_dispatched(cfg, &DispatchConfig::default(), &|_| {})
        .unwrap_or_else(|e| panic!("--chips {} --seed {}: {e}", cfg.chips, cfg.seed))
}

#[test]
fn four_chips_check_every_byte_of_one_and_run_the_jobs_as_fast_as_their_busiest_chip() {
    let one = run(&shape(1, 32));
    let four = run(&shape(4, 32));
    for s in [&one, &four] {
        assert!(s.ok && s.violations.is_empty(), "{s}");
        assert_eq!(s.exit_code(), 0);
        assert_eq!(s.results.len(), 32);
    }
    // The same jobs, the same bytes: only where they ran differs.
    assert_eq!(four.received_bytes, one.received_bytes);
    assert_eq!(four.checked_bytes, one.checked_bytes);
    assert!(one.checked_bytes > 0);
    assert_eq!(one.chips.len(), 1);
    assert_eq!((one.chips[0].jobs, one.chips[0].cycles), (32, one.cycles));
    assert_eq!(four.chips.len(), 4);
    for (c, chip) in four.chips.iter().enumerate() {
        assert_eq!(chip.chip, c as u32);
        assert_eq!(chip.seed, Some(chip_seed(0, c as u32)));
        // No chip idles while another has work: eight each as a rule; a job may move to
        // another chip with the host threads' timing (work stealing), seen under load as 9 /
        // 9 / 7 / 7 on 2026-12-05.
        assert!((6..=10).contains(&chip.jobs), "chip {c}: {four}");
        assert!(chip.cycles <= four.cycles);
    }
    assert_eq!(four.chips.iter().map(|c| c.jobs).sum::<u32>(), 32);
    let busiest = four.chips.iter().map(|c| c.jobs).max().unwrap();
    assert_eq!(
        four.cycles,
        four.chips.iter().map(|c| c.cycles).max().unwrap()
    );
    // Jobs per second of device time: the chips run at once, so the run lasts as long as its
    // busiest chip's jobs (eight of 32 each: at least 3.6 times as fast as one chip).
    let speedup = one.cycles as f64 / four.cycles as f64;
    let least = 0.9 * 32.0 / busiest as f64;
    assert!(
        speedup >= least,
        "4 chips ran 32 jobs in {} cycles (the busiest {busiest}), one chip in {}: x{speedup:.2}, \
         not x{least:.2}",
        four.cycles,
        one.cycles
    );
    // The bound counts a chip's share of the jobs (eight); the run, its busiest chip's: a job
    // stolen lowers the efficiency by that share (8 of 9, seen in 19 of 200 looped runs
    // under load on 2026-12-05).
    assert_eq!(four.bound_cycles * 4, one.bound_cycles);
    let share = 8.0 / busiest as f64;
    assert!(
        four.efficiency.unwrap() > 0.9 * share * one.efficiency.unwrap(),
        "efficiency {:?} on 4 chips (the busiest {busiest} jobs), {:?} on one",
        four.efficiency,
        one.efficiency
    );
}

#[test]
fn uneven_jobs_run_on_every_chip_over_any_workers() {
    for (chips, jobs, workers) in [(3, 10, 1), (3, 10, 3), (2, 7, 2), (5, 3, 2)] {
        let cfg = shape(chips, jobs);
        let dispatch = DispatchConfig {
            workers,
            ..DispatchConfig::default()
        };
        let s = broadcast::run_dispatched(&cfg, &dispatch, &|_| {}).unwrap();
        assert!(s.ok, "{s}");
        let ran: Vec<u32> = s.chips.iter().map(|c| c.jobs).collect();
        assert_eq!(ran.iter().sum::<u32>(), jobs, "{ran:?}");
        // Every chip takes part. How evenly depends on the host threads' timing: a worker may
        // find another's ready jobs out of its queue for a moment (offered to that worker's
        // assigner) and let the device run with its chip idle ([5, 2] for 7 jobs on 2 chips was
        // seen once in 500 runs); the 32-job run above is even.
        assert!(
            ran.iter().all(|&n| n >= 1) || jobs < chips,
            "--chips {chips} --jobs {jobs} --workers {workers}: {ran:?}"
        );
    }
}

#[test]
fn a_fault_gives_up_on_chip_0_only_and_the_report_names_the_chip() {
    let fault = |chips| BroadcastConfig {
        faults: vec!["stall-dm:1,0:2".parse().unwrap()],
        wait_limit: Some(200_000),
        ..shape(chips, 4)
    };
    let one = run(&fault(1));
    let two = run(&fault(2));
    assert_eq!((one.timeouts, two.timeouts), (1, 1));
    assert_eq!(two.exit_code(), 3);
    // Job 0 carries the faults and runs on chip 0, where they were armed.
    assert!(!two.chips[0].giveups.is_empty());
    assert_eq!(
        two.chips[0].giveups, one.giveups,
        "the same records as on one chip"
    );
    assert_eq!(two.chips[0].timeouts, 1);
    assert!(two.chips[1].giveups.is_empty());
    assert_eq!(
        two.giveups, one.giveups,
        "the run's list keeps every chip's"
    );
    let text = two.to_string();
    let g = &one.giveups[0];
    let line = format!(
        "give-up: job {} chip 0 core ({},{}) {} broadcast {} block {}",
        g.job, g.core[0], g.core[1], g.place, g.broadcast, g.block
    );
    assert!(text.contains(&line), "{line}\n{text}");
}

#[test]
fn flags_that_cover_one_chip_are_refused_with_what_is_allowed() {
    let refused = |cfg: BroadcastConfig| match broadcast::run_dispatched(
        &cfg,
        &DispatchConfig::default(),
        &|_| {},
    ) {
        Err(BroadcastError::Flag { flag, why }) => format!("{flag}: {why}"),
        other => panic!("{other:?}"),
    };
    assert_eq!(refused(shape(0, 2)), "--chips: 0 (allowed: 1..=32)");
    assert_eq!(refused(shape(33, 2)), "--chips: 33 (allowed: 1..=32)");
    let traced = BroadcastConfig {
        trace: Some("t.json".into()),
        ..shape(2, 2)
    };
    assert_eq!(
        refused(traced),
        "--chips: 2 chips in all with --trace: --trace covers one chip (allowed: --trace with \
         one chip in all: --chips 1, without --mpi or on one rank)"
    );
    match broadcast::run(&shape(2, 2), |_| {}) {
        Err(e) => assert_eq!(
            e.to_string(),
            "--chips: 2 with the test feeder: it runs one job at a time on one chip (allowed: \
             --chips with the dispatcher, the default; --feeder with --chips 1)"
        ),
        Ok(s) => panic!("{s}"),
    }
}

#[test]
fn the_cli_spreads_the_jobs_and_its_json_keeps_every_field_and_adds_the_chips() {
    let args = |chips: &'static str| {
        vec![
            "broadcast",
            "--rect",
            "0,0,2,2",
            "--blocks",
            "2",
            "--pages",
            "2",
            "--jobs",
            "6",
            "--json",
            "--chips",
            chips,
        ]
    };
    let (code, out, err) = komorebi(&args("3"));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (_, one, _) = komorebi(&args("1"));
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&v),
        keys(&one),
        "the same fields on one chip and three"
    );
    let chips = v["chips"].as_array().unwrap();
    assert_eq!(chips.len(), 3);
    // What the dispatcher guarantees: every job run once, every chip takes part, and a chip
    // runs at most its own two jobs (home `j mod 3`) besides those it moved in. Two each is
    // the common split, but an idle chip takes another's job, so the counts depend on host
    // thread timing (a 3 / 2 / 1 split seen in CI).
    let mut jobs = 0;
    for (c, chip) in chips.iter().enumerate() {
        assert_eq!(chip["chip"], c);
        assert_eq!(chip["device"], "sim");
        assert_eq!(chip["aiclk_mhz"], 1350, "each chip's own clock");
        let (ran, moved) = (
            chip["jobs"].as_u64().unwrap(),
            chip["moved"].as_u64().unwrap(),
        );
        assert!(ran >= 1 && ran - moved <= 2, "chip {c}: {chip}");
        jobs += ran;
        assert_eq!(chip["giveups"], serde_json::json!([]));
    }
    assert_eq!(jobs, 6);
    assert_eq!(v["checked_bytes"], one["checked_bytes"]);
    let (code, _, err) = komorebi(&["broadcast", "--chips", "2", "--feeder"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: --chips: 2 with the test feeder"),
        "{err}"
    );
    let (code, _, err) = komorebi(&["broadcast", "--chips", "40"]);
    assert_eq!(code, 2);
    assert!(err.contains("--chips"), "{err}");
}

#[test]
fn every_give_up_names_its_job_and_every_job_the_chip_that_ran_it() {
    // A wait limit of 0 gives up any wait that does not hold at once: every job gives up.
    let cfg = BroadcastConfig {
        wait_limit: Some(0),
        ..shape(2, 6)
    };
    let s = run(&cfg);
    assert_eq!(s.exit_code(), 3);
    let jobs: Vec<u32> = s.results.iter().map(|r| r.job).collect();
    assert_eq!(jobs, (0..6).collect::<Vec<_>>());
    for c in 0..2 {
        let ran = s.results.iter().filter(|r| r.chip == Some(c)).count() as u32;
        assert_eq!(ran, s.chips[c as usize].jobs, "chip {c}");
    }
    // The run's list in job order, each job's give-ups under the chip its result names.
    let order: Vec<u32> = s.giveups.iter().map(|g| g.job).collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    for r in &s.results {
        let of_job = |list: &[broadcast::JobGiveUp]| -> Vec<broadcast::JobGiveUp> {
            list.iter().filter(|g| g.job == r.job).cloned().collect()
        };
        let all = of_job(&s.giveups);
        assert!(!all.is_empty(), "job {} gave up nowhere", r.job);
        let chip = r.chip.expect("a job that ran names its chip") as usize;
        assert_eq!(of_job(&s.chips[chip].giveups), all, "job {}", r.job);
        assert!(
            of_job(&s.chips[1 - chip].giveups).is_empty(),
            "job {}",
            r.job
        );
    }
    let last = s.giveups.last().unwrap();
    let line = format!(
        "give-up: job 5 chip {} core ({},{}) {}",
        s.results[5].chip.unwrap(),
        last.core[0],
        last.core[1],
        last.place
    );
    assert!(s.to_string().contains(&line), "{line}\n{s}");
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["giveups"][0]["job"], 0);
    assert_eq!(json["results"][5]["chip"], s.results[5].chip.unwrap());
}
