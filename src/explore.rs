//! Schedule exploration: random seeds x random shapes of the broadcast, with the adversary on.
//!
//! Each case's seed fixes both its shape (window 1..=8, blocks 0..=64, pages 1..=8, page size
//! 64..=256, or one case in eight blocks over one packet: up to 8 blocks of 5..=8 pages of 4
//! or 8 KiB, or one in 32 blocks of more pages than a read tag counts: up to 6 blocks of
//! 200..=1,024 pages of 64 bytes at a window up to 4; along rows, columns or both, inside one panel of columns: on a Blackhole p150 a
//! column of up to 10 cores or a row of up to 6; on a Wormhole B0 a row of up to 4 and a column
//! of up to 10 rows, which the layout cuts at the Ethernet row into runs of 5; on the simulators
//! one case in four on other harvesting, a Blackhole with 0 to 4 of its 14 columns harvested
//! (panels of 1 to 7 columns) or a Wormhole with 1 or 2 of its 10 rows, the rectangle inside
//! that grid) and, on the simulator, its schedule (on ttsim or a card the device's own
//! harvesting and schedule run, and no violation can be seen: there a case checks the bytes,
//! the counts, the reports and the give-ups). A case passes when every byte arrived and was
//! checked in order (exact counts), no slot was multicast before it was popped (no violation),
//! nothing deadlocked (every tile reported), and nothing gave up (no fault was injected): each
//! of those checks is [`judge`]'s. A failing case prints the command that replays it.

use komorebi_broadcast::Along;
use komorebi_broadcast::layout::{self};
use komorebi_hal::{LogicalRect, NocId};
use komorebi_sim::rng::SplitMix64;
use serde::Serialize;

use blackhole_pac::harvest::HarvestMask;
use wormhole_pac::harvest::HarvestMask as RowHarvestMask;

use crate::app::broadcast::{self, BroadcastConfig, DeviceChoice};
use crate::chip::ChipKind;
use crate::host::device::ClockKind;

/// The shape of case `seed` on `chip` with the chip's default harvesting (a Blackhole p150's
/// two columns, no Wormhole row): what a case on ttsim or a card runs, whose harvesting is
/// their own.
pub fn shape(seed: u64, chip: ChipKind) -> BroadcastConfig {
    shape_on(seed, chip, false)
}

/// The shape of case `seed` on `chip`; with `harvest`, one case in four on other harvesting
/// (a Blackhole with 0 to 4 of its 14 columns harvested, a Wormhole with 1 or 2 of its 10 rows),
/// the rectangle drawn inside that grid's panels and rows. The harvesting comes from a stream
/// of its own, so a case left on the default harvesting has the shape [`shape`] gives.
pub fn shape_on(seed: u64, chip: ChipKind, harvest: bool) -> BroadcastConfig {
    let word = if harvest {
        harvest_word(seed, chip)
    } else {
        None
    };
    let mut cfg = BroadcastConfig {
        chip,
        ..BroadcastConfig::default()
    };
    if let Some(w) = word {
        match chip {
            ChipKind::Blackhole => cfg.harvest = HarvestMask::new(w).unwrap_or(cfg.harvest),
            ChipKind::Wormhole => {
                cfg.row_harvest = RowHarvestMask::new(w).unwrap_or(cfg.row_harvest)
            }
        }
    }
    // The grid the harvesting leaves (the default one's cannot fail; a drawn one that did
    // would fall back to it).
    // (`panels` finds the runs of consecutive NoC0 coordinates: given the rows' y, runs of rows.)
    let grid = cfg
        .flags_geometry()
        .map(|g| {
            let row_runs = layout::panels(g.noc0_y());
            (layout::panels(g.noc0_x()), g.rows() as u64, row_runs)
        })
        .ok()
        .filter(|(p, rows, _)| !p.is_empty() && *rows > 0);
    let Some((panels, rows, row_runs)) = grid else {
        return shape_on(seed, chip, false);
    };
    let panels: Vec<(u64, u64)> = panels
        .iter()
        .map(|p| (p.first_column as u64, p.columns as u64))
        .collect();
    let widest = panels.iter().map(|p| p.1).max().unwrap_or(1);
    let mut r = SplitMix64::new(seed ^ 0x5EED_0000_0000_0001);
    let kind = r.range(0, 2);
    // A row needs two columns: with no panel that wide, columns only. (Not reached with the
    // harvesting drawn here: a Blackhole with at most 4 of its 14 columns harvested keeps a
    // panel of 2 or more, a Wormhole's panels are 4 wide; it guards a wider draw.)
    let kind = if kind == 0 && widest < 2 { 1 } else { kind };
    let (rows_on, columns) = (kind != 1, kind != 0);
    // Within one panel of columns with consecutive NoC x (a p150's two of 6, logical 0..=5
    // and 6..=11; a Wormhole's two of 4, NoC0 x 1..=4 and 6..=9) and the grid's rows (10 on
    // both unharvested).
    let (w, h) = match kind {
        0 => (r.range(2, widest), r.range(1, 3.min(rows))),
        1 => (r.range(1, 3).min(widest), r.range(2.min(rows), rows)),
        _ => (r.range(1, widest), r.range(1, rows)),
    };
    let w = if kind == 2 && w == 1 && h == 1 && widest >= 2 {
        2
    } else {
        w
    };
    let fit: Vec<(u64, u64)> = panels.into_iter().filter(|p| p.1 >= w).collect();
    let (first, width) = fit[r.range(0, fit.len() as u64 - 1) as usize];
    let x0 = first + r.range(0, width - w);
    let mut y0 = r.range(0, rows - h);
    // A column's cores are cut where NoC y skips a row (a Wormhole's Ethernet row, a harvested
    // row): a rectangle whose rows fall one in each run multicasts nothing down its columns,
    // and a case along columns only would test nothing. Such a case takes its rows elsewhere
    // (other cases keep their draw, so their seeds replay as before).
    let down_a_column = |y0: u64| {
        row_runs.iter().any(|run| {
            let (first, len) = (run.first_column as u64, run.columns as u64);
            y0.max(first) + 2 <= (y0 + h).min(first + len)
        })
    };
    if kind == 1 && !down_a_column(y0) {
        let ok: Vec<u64> = (0..=rows - h).filter(|&y| down_a_column(y)).collect();
        if let Some(&y) = ok.get(r.range(0, (ok.len() as u64).max(1) - 1) as usize) {
            y0 = y;
        }
    }
    let (mut blocks, mut pages) = (r.range(0, 64) as u32, r.range(1, 8) as u16);
    let mut page_size = 64 * r.range(1, 4) as u32;
    let mut window = r.range(1, 8) as u8;
    // One case in eight moves blocks of more than one packet (16 KiB on Blackhole, 8 KiB on a
    // Wormhole): 5 to 8 pages of 4 KiB, or of 8 KiB at a window up to 4 (at most 256 KiB of
    // buffer a broadcast), and at most 8 blocks, for time.
    if r.range(0, 7) == 0 {
        pages = r.range(5, 8) as u16;
        page_size = if window <= 4 {
            4096 * r.range(1, 2) as u32
        } else {
            4096
        };
        blocks = blocks.min(8);
    }
    // One case in 32 (drawn from a stream of its own, so the others keep their shapes) moves
    // blocks of more pages than a read tag counts in flight (255): 200 to 1,024 pages of 64
    // bytes, at a window up to 4 and at most 6 blocks, for time.
    if let Some(many) = many_pages(seed) {
        (pages, page_size) = (many, 64);
        window = window.min(4);
        blocks = blocks.min(6);
    }
    let case = BroadcastConfig {
        rect: LogicalRect::new(x0 as u8, y0 as u8, w as u8, h as u8),
        blocks,
        pages,
        page_size,
        window,
        jobs: 2,
        rows: rows_on,
        columns,
        seed,
        adversarial: true,
        ..cfg
    };
    // The shape's own wait limit (1,000,000 for all but the many-page cases, whose firmware
    // compute may take longer over a window), written out so that a replay names it.
    BroadcastConfig {
        wait_limit: Some(case.shape_wait_limit()),
        ..case
    }
}

/// The pages of case `seed` when it is one of the one in 32 with many small pages (200 to
/// 1,024: at most 256 KiB a buffer at window 4), else `None`.
fn many_pages(seed: u64) -> Option<u16> {
    let mut r = SplitMix64::new(seed ^ 0x3A6E_0000_0000_0003);
    (r.range(0, 31) == 0).then(|| r.range(200, 1024) as u16)
}

/// The harvest word case `seed` draws, or `None` (three cases in four) for the chip's default:
/// a Blackhole's die-order columns (0 to 4 of 14), a Wormhole's rows (1 or 2 of 10).
fn harvest_word(seed: u64, chip: ChipKind) -> Option<u32> {
    let mut r = SplitMix64::new(seed ^ 0x4A27_0000_0000_0002);
    if r.range(0, 3) != 0 {
        return None;
    }
    let (lines, count) = match chip {
        ChipKind::Blackhole => (14, r.range(0, 4)),
        ChipKind::Wormhole => (10, r.range(1, 2)),
    };
    let mut word = 0u32;
    while u64::from(word.count_ones()) < count {
        word |= 1 << r.range(0, lines - 1);
    }
    Some(word)
}

/// Case `seed` on `chip` as it runs on `device`: its shape (one case in four on other
/// harvesting on the simulators), what the device runs (the firmware on ttsim and a card, the
/// native kernels on the simulators), and on the simulators the seed's schedule with the
/// adversary on. ttsim and a card keep their own schedule: they take neither seed nor
/// adversary, so there the seed draws the shape alone.
pub fn case(seed: u64, chip: ChipKind, device: &DeviceChoice) -> BroadcastConfig {
    let simulated = device.in_process();
    let shape = shape_on(seed, chip, simulated);
    BroadcastConfig {
        device: device.clone(),
        exec: device.default_exec(),
        seed: if simulated { shape.seed } else { 0 },
        adversarial: simulated,
        ..shape
    }
}

/// The `komorebi broadcast` command that replays a case: through the test feeder, as the case
/// ran ([`check_case`] runs `broadcast::run`), with the device's path quoted for a POSIX shell,
/// and with the faults and the other settings of what runs that a configuration built by hand
/// may change (`--fault`, `--check`, `--protocol`, `--kernel-costs`, `--fused-dram`, `--exec`,
/// `--firmware`).
pub fn replay_command(cfg: &BroadcastConfig) -> String {
    let along = match (cfg.rows, cfg.columns) {
        (true, false) => "row",
        (false, true) => "column",
        _ => "both",
    };
    // The simulator's schedule: ttsim and a card take neither (`case`).
    let schedule = match cfg.adversarial {
        true => format!(" --seed {} --adversarial", cfg.seed),
        false if cfg.seed != 0 => format!(" --seed {}", cfg.seed),
        false => String::new(),
    };
    format!(
        "komorebi broadcast --rect {} --blocks {} --pages {} --page-size {} --window {} --jobs {} --along {along} --harvest {:#x}{schedule} --wait-limit {} --feeder",
        cfg.rect,
        cfg.blocks,
        cfg.pages,
        cfg.page_size,
        cfg.window,
        cfg.jobs,
        cfg.harvest_mask(),
        cfg.run_wait_limit()
    ) + match cfg.chip {
        ChipKind::Blackhole => "",
        ChipKind::Wormhole => " --chip wormhole",
    } + &match cfg.device {
        DeviceChoice::Sim => String::new(),
        ref d => format!(" --device {}", shell_word(&d.to_string())),
    } + &set_flags(cfg)
}

/// `word` quoted for a POSIX shell (a device or a directory path); as it is when it cannot be
/// (a NUL byte, which no command line can carry either).
fn shell_word(word: &str) -> String {
    shlex::try_quote(word).map_or(word.to_string(), |q| q.into_owned())
}

/// The flags of what a run does that `explore`'s cases leave at their defaults but a caller's
/// configuration may set (a fault, no checking, the handshake, other kernel costs, a fused
/// bank, the other `--exec`, a firmware directory): without them a replay of a failing case
/// built by hand ran another case, one that passed.
fn set_flags(cfg: &BroadcastConfig) -> String {
    let mut out = String::new();
    for fault in &cfg.faults {
        out += &format!(" --fault {fault}");
    }
    if cfg.check == broadcast::Check::None {
        out += " --check none";
    }
    if cfg.protocol != broadcast::Protocol::default() {
        out += &format!(" --protocol {}", cfg.protocol.name());
    }
    if cfg.kernel_costs != komorebi_sim::KernelCosts::default() {
        out += &format!(" --kernel-costs {}", cfg.kernel_costs.name());
    }
    if let Some(bank) = cfg.fused_dram {
        out += &format!(" --fused-dram {bank}");
    }
    if cfg.exec != cfg.device.default_exec() {
        out += &format!(" --exec {}", cfg.exec);
    }
    if let Some(dir) = &cfg.firmware {
        out += &format!(" --firmware {}", shell_word(&dir.to_string_lossy()));
    }
    out
}

/// One failing case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    /// Its seed.
    pub seed: u64,
    /// What was wrong.
    pub what: String,
    /// The command that replays it.
    pub replay: String,
}

/// What an exploration found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exploration {
    /// Cases run.
    pub cases: u64,
    /// Failing cases.
    pub failures: Vec<Failure>,
    /// The device's clock counts, all cases: simulated cycles, or on ttsim its clock steps
    /// (`clock`).
    pub cycles: u64,
    /// What `cycles` counts, as `komorebi broadcast`'s `clock`.
    pub clock: ClockKind,
    /// Bytes checked by compute, all cases.
    pub checked_bytes: u64,
}

/// Runs one case; `Err` says what was wrong ([`judge`]).
pub fn check_case(cfg: &BroadcastConfig) -> Result<broadcast::BroadcastSummary, String> {
    let s = broadcast::run(cfg, |_| {}).map_err(|e| format!("could not run: {e}"))?;
    judge(cfg, &s)?;
    Ok(s)
}

/// What is wrong with case `cfg`'s run `s`, if anything: a protocol violation, a timeout or a
/// give-up (no fault was asked for), a byte that did not match, or counts other than the
/// shape's (every core checks `blocks * pages * page_size` bytes a job of each broadcast it is
/// in; every receiver receives them).
pub fn judge(cfg: &BroadcastConfig, s: &broadcast::BroadcastSummary) -> Result<(), String> {
    if !s.violations.is_empty() {
        return Err(format!("protocol violation: {}", s.violations.join("; ")));
    }
    if s.timeouts > 0 || !s.giveups.is_empty() {
        let first = s
            .giveups
            .first()
            .map(|g| {
                format!(
                    "{} at core {:?} broadcast {} block {}",
                    g.place, g.core, g.broadcast, g.block
                )
            })
            .unwrap_or_default();
        return Err(format!(
            "{} timeouts, {} give-ups without a fault (first: {first})",
            s.timeouts,
            s.giveups.len()
        ));
    }
    if s.mismatches > 0 || !s.ok {
        return Err("data mismatch".into());
    }
    // The grid the run laid the rectangle out on: on ttsim and a card the device's own, whose
    // harvesting the flags' `--harvest` does not set (a rectangle can cross a panel's edge on
    // one grid and not on the other).
    let flags;
    let g = match &s.laid_out_on {
        Some(g) => g,
        None => {
            flags = cfg.flags_geometry().map_err(|e| e.to_string())?;
            &flags
        }
    };
    let block = cfg.pages as u64 * cfg.page_size as u64;
    let (mut streams, mut receivers) = (0, 0);
    for (on, along, noc) in [
        (cfg.rows, Along::Row, NocId::Noc0),
        (cfg.columns, Along::Column, NocId::Noc1),
    ] {
        if on {
            streams += 1;
            receivers += layout::broadcasts(g, cfg.rect, along, noc)
                .map_err(|e| e.to_string())?
                .iter()
                .map(|b| b.receivers() as u64)
                .sum::<u64>();
        }
    }
    let per_job = cfg.blocks as u64 * block * cfg.jobs as u64;
    let checked = cfg.rect.len() as u64 * streams * per_job;
    if s.checked_bytes != checked || s.received_bytes != receivers * per_job {
        return Err(format!(
            "bytes: checked {} of {checked}, received {} of {}",
            s.checked_bytes,
            s.received_bytes,
            receivers * per_job
        ));
    }
    Ok(())
}

/// Whether `count` cases from seed `start` fit in 64-bit seeds (the last is
/// `start + count - 1`); the error is the message for `--start` and `--seeds`.
pub fn check_range(start: u64, count: u64) -> Result<(), String> {
    if count == 0 || start.checked_add(count - 1).is_some() {
        Ok(())
    } else {
        Err(format!(
            "--start {start} with --seeds {count}: the last seed would be past {} (allowed: START + SEEDS - 1 <= {})",
            u64::MAX,
            u64::MAX
        ))
    }
}

/// Runs `count` cases from seed `start` on `chip` (seeds past `u64::MAX` are not run: see
/// [`check_range`]); `progress(done, failure)` after each, with the number of cases run and the
/// case's failure if it failed (so that a caller can show it at once: a run stopped part way
/// keeps what it found). A case whose run panics (a bug in the simulator or the host's code,
/// not in the flags) is a failure like any other, with its seed and the command that replays
/// it, and the cases after it still run.
pub fn explore(
    start: u64,
    count: u64,
    device: &DeviceChoice,
    chip: ChipKind,
    progress: impl FnMut(u64, Option<&Failure>),
) -> Exploration {
    explore_with(start, count, device, chip, check_case, progress)
}

/// [`explore`] with `check` judging each case (the tests give one that panics).
fn explore_with(
    start: u64,
    count: u64,
    device: &DeviceChoice,
    chip: ChipKind,
    mut check: impl FnMut(&BroadcastConfig) -> Result<broadcast::BroadcastSummary, String>,
    mut progress: impl FnMut(u64, Option<&Failure>),
) -> Exploration {
    let mut out = Exploration {
        cases: 0,
        failures: Vec::new(),
        cycles: 0,
        clock: device.clock_kind(),
        checked_bytes: 0,
    };
    for seed in (0..count).map_while(|i| start.checked_add(i)) {
        let cfg = case(seed, chip, device);
        // A panic would end the whole exploration with neither this case's seed nor the
        // failures found before it (the report lists them at the end): caught, it is this case's
        // failure. Nothing outlives a case (each opens its own session), so the next one
        // starts clean; the panic hook has printed the panic's place already.
        let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&cfg)))
            .unwrap_or_else(|p| {
                Err(format!(
                    "panicked: {}",
                    crate::dispatch::panic_message(p.as_ref())
                ))
            });
        let failed = match judged {
            Ok(s) => {
                out.cycles += s.cycles;
                out.checked_bytes += s.checked_bytes;
                false
            }
            Err(what) => {
                out.failures.push(Failure {
                    seed,
                    what,
                    replay: replay_command(&cfg),
                });
                true
            }
        };
        out.cases += 1;
        progress(out.cases, out.failures.last().filter(|_| failed));
    }
    out
}

/// `FAIL seed S: WHAT` and, indented on the next line, `replay: COMMAND`.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FAIL seed {}: {}\n  replay: {}",
            self.seed, self.what, self.replay
        )
    }
}

impl std::fmt::Display for Exploration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for fail in &self.failures {
            writeln!(f, "{fail}")?;
        }
        write!(
            f,
            "{}, {} failed; {} bytes checked, {} {}",
            crate::num::count(self.cases, "case", "cases"),
            self.failures.len(),
            self.checked_bytes,
            self.cycles,
            self.clock.unit()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case that panics is reported with its seed and its replay, and the cases after it
    /// still run and are counted (a panic ended the exploration, naming no seed and losing the
    /// failures found before it).
    #[test]
    fn a_case_that_panics_is_a_failure_with_its_seed_and_the_rest_run() {
        let mut judged = Vec::new();
        let mut shown = Vec::new();
        let out = explore_with(
            40,
            4,
            &DeviceChoice::Sim,
            ChipKind::Blackhole,
            |cfg| {
                judged.push(cfg.seed);
                match cfg.seed {
                    41 => panic!("a simulator bug at seed 41"),
                    42 => Err("data mismatch".into()),
                    _ => check_case(cfg),
                }
            },
            |done, failure| shown.push((done, failure.map(|f| f.seed))),
        );
        assert_eq!(judged, [40, 41, 42, 43]);
        // Each failure is handed over as its case ends, not only in the report.
        assert_eq!(shown, [(1, None), (2, Some(41)), (3, Some(42)), (4, None)]);
        assert_eq!(out.cases, 4);
        // The two sound cases counted, around the panic.
        assert!(out.cycles > 0 && out.checked_bytes > 0, "{out}");
        let seeds: Vec<(u64, &str)> = out
            .failures
            .iter()
            .map(|f| (f.seed, f.what.as_str()))
            .collect();
        assert_eq!(
            seeds,
            [
                (41, "panicked: a simulator bug at seed 41"),
                (42, "data mismatch")
            ]
        );
        let replay = replay_command(&case(41, ChipKind::Blackhole, &DeviceChoice::Sim));
        assert_eq!(out.failures[0].replay, replay);
        assert!(replay.contains(" --seed 41 --adversarial"), "{replay}");
    }
}
