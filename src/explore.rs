//! Schedule exploration: random seeds x random shapes of the broadcast, with the adversary on.
//!
//! Each case's seed fixes both its shape (window 1..=8, blocks 0..=64, pages 1..=8, page size
//! 64..=256, or one case in eight blocks over one packet: up to 8 blocks of 5..=8 pages of 4
//! or 8 KiB; along rows, columns or both, inside one panel of columns: on a Blackhole 1..=9
//! receivers, a column of up to 10 cores or a row of up to 6; on a Wormhole B0 a row of up to 4
//! and a column of up to 10 rows, which the layout cuts at the Ethernet row into runs of 5) and,
//! on the simulator, its schedule (on ttsim or a card the device's own schedule runs, and no
//! violation can be seen: there a case checks the bytes, the counts, the reports and the
//! give-ups). A case passes when every byte arrived and was checked in order (exact counts), no
//! slot was multicast before it was popped (no violation), nothing deadlocked (every tile
//! reported), and nothing gave up (no fault was injected). A failing case prints the command
//! that replays it.

use komorebi_broadcast::Along;
use komorebi_broadcast::layout::{self};
use komorebi_hal::{LogicalRect, NocId};
use komorebi_sim::rng::SplitMix64;
use serde::Serialize;

use crate::app::broadcast::{self, BroadcastConfig, DeviceChoice};
use crate::chip::ChipKind;

/// The shape of case `seed` on `chip` (with its default harvesting).
pub fn shape(seed: u64, chip: ChipKind) -> BroadcastConfig {
    let mut r = SplitMix64::new(seed ^ 0x5EED_0000_0000_0001);
    let kind = r.range(0, 2);
    let (rows, columns) = (kind != 1, kind != 0);
    // Panels of columns with consecutive NoC x: a p150's two of 6 (logical 0..=5 and 6..=11), a
    // Wormhole's two of 4 (NoC0 x 1..=4 and 6..=9); both grids have 10 rows.
    let panel_width = match chip {
        ChipKind::Blackhole => 6,
        ChipKind::Wormhole => 4,
    };
    let (w, h) = match kind {
        0 => (r.range(2, panel_width), r.range(1, 3)),
        1 => (r.range(1, 3), r.range(2, 10)),
        _ => (r.range(1, panel_width), r.range(1, 10)),
    };
    let w = if kind == 2 && w == 1 && h == 1 { 2 } else { w };
    let panel = r.range(0, 1) * panel_width;
    let x0 = panel + r.range(0, panel_width - w);
    let y0 = r.range(0, 10 - h);
    let (mut blocks, mut pages) = (r.range(0, 64) as u32, r.range(1, 8) as u16);
    let mut page_size = 64 * r.range(1, 4) as u32;
    let window = r.range(1, 8) as u8;
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
    BroadcastConfig {
        chip,
        rect: LogicalRect::new(x0 as u8, y0 as u8, w as u8, h as u8),
        blocks,
        pages,
        page_size,
        window,
        jobs: 2,
        rows,
        columns,
        seed,
        adversarial: true,
        wait_limit: 1_000_000,
        ..BroadcastConfig::default()
    }
}

/// The `komorebi broadcast` command that replays a case: through the test feeder, as the case
/// ran ([`check_case`] runs `broadcast::run`), with the device's path quoted for a POSIX shell.
pub fn replay_command(cfg: &BroadcastConfig) -> String {
    let along = match (cfg.rows, cfg.columns) {
        (true, false) => "row",
        (false, true) => "column",
        _ => "both",
    };
    format!(
        "komorebi broadcast --rect {} --blocks {} --pages {} --page-size {} --window {} --jobs {} --along {along} --harvest {:#x} --seed {} --adversarial --wait-limit {} --feeder",
        cfg.rect,
        cfg.blocks,
        cfg.pages,
        cfg.page_size,
        cfg.window,
        cfg.jobs,
        cfg.harvest_mask(),
        cfg.seed,
        cfg.wait_limit
    ) + match cfg.chip {
        ChipKind::Blackhole => "",
        ChipKind::Wormhole => " --chip wormhole",
    } + &match cfg.device {
        DeviceChoice::Sim => String::new(),
        ref d => {
            let d = d.to_string();
            // A path with a NUL byte cannot be quoted (nor given on a command line).
            let quoted = shlex::try_quote(&d).map_or(d.clone(), |q| q.into_owned());
            format!(" --device {quoted}")
        }
    }
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
    /// Simulated cycles, all cases.
    pub cycles: u64,
    /// Bytes checked by compute, all cases.
    pub checked_bytes: u64,
}

/// Runs one case; `Err` says what was wrong.
pub fn check_case(cfg: &BroadcastConfig) -> Result<broadcast::BroadcastSummary, String> {
    let s = broadcast::run(cfg, |_| {}).map_err(|e| format!("could not run: {e}"))?;
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
    let g = cfg.flags_geometry().map_err(|e| e.to_string())?;
    let block = cfg.pages as u64 * cfg.page_size as u64;
    let (mut streams, mut receivers) = (0, 0);
    for (on, along, noc) in [
        (cfg.rows, Along::Row, NocId::Noc0),
        (cfg.columns, Along::Column, NocId::Noc1),
    ] {
        if on {
            streams += 1;
            receivers += layout::broadcasts(&g, cfg.rect, along, noc)
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
    Ok(s)
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
/// [`check_range`]); `progress(done)` after each.
pub fn explore(
    start: u64,
    count: u64,
    device: &DeviceChoice,
    chip: ChipKind,
    mut progress: impl FnMut(u64),
) -> Exploration {
    let mut out = Exploration {
        cases: 0,
        failures: Vec::new(),
        cycles: 0,
        checked_bytes: 0,
    };
    for seed in (0..count).map_while(|i| start.checked_add(i)) {
        // What the device can run: the firmware on ttsim and a card, the native kernels on
        // the simulators.
        let cfg = BroadcastConfig {
            device: device.clone(),
            exec: device.default_exec(),
            ..shape(seed, chip)
        };
        match check_case(&cfg) {
            Ok(s) => {
                out.cycles += s.cycles;
                out.checked_bytes += s.checked_bytes;
            }
            Err(what) => out.failures.push(Failure {
                seed,
                what,
                replay: replay_command(&cfg),
            }),
        }
        out.cases += 1;
        progress(out.cases);
    }
    out
}

impl std::fmt::Display for Exploration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for fail in &self.failures {
            writeln!(
                f,
                "FAIL seed {}: {}\n  replay: {}",
                fail.seed, fail.what, fail.replay
            )?;
        }
        write!(
            f,
            "{}, {} failed; {} bytes checked, {} simulated cycles",
            crate::num::count(self.cases, "case", "cases"),
            self.failures.len(),
            self.checked_bytes,
            self.cycles
        )
    }
}
