//! The `matmul_schedule` program: the data movement of a tiled matrix product (SUMMA) as a
//! schedule of many small groups with dependencies, run through the dispatcher on the simulator.
//!
//! The output `C = A x B` is cut into blocks; each block belongs to one group of cores
//! (`block` columns x rows of the rectangle). Step `k` of a block multicasts the `k`-th panel of
//! A along the group's rows and of B down its columns: one broadcast command, `EXCLUSIVE` as the
//! broadcast requires, in which every compute kernel checks every byte it receives. The panels'
//! bytes are the broadcast program's test pattern for step `k`, not matrix values: what this
//! schedules and checks is the movement, not the arithmetic. Once every block of a block row
//! has done its last step, that row's **write-back** runs: a broadcast along the whole row panel
//! (a larger group overlapping all of the row's block groups).
//!
//! What the dispatcher does here: every step of a block is seeded at once, pinned to the
//! block's group; with two slots per group the dispatcher would post step `k + 1` while `k`
//! runs, but the tile reservations keep exclusive commands on the same tiles apart, so the steps
//! run one after another in queue order. Block groups are spread over the workers; a block's
//! last step sends a message to the worker owning its row's write-back group, whose plugin
//! instance counts them and submits the write-back (a dependency across workers without a shared
//! lock).

use std::collections::HashMap;

use komorebi_broadcast::args::MAX_BLOCKS;
use komorebi_broadcast::layout::Geometry;
use komorebi_hal::LogicalRect;
use serde::Serialize;

use crate::app::broadcast::{BroadcastConfig, BroadcastError, BroadcastPlan};
use crate::dispatch::{
    Cx, DispatchConfig, DispatchSummary, Dispatcher, Finished, GroupId, GroupInfo, Outcome, Place,
    Plugin, Ready, SimTarget, SlotView,
};
use crate::host::session::{Backend, CommandSpec};

/// The most steps a schedule takes: the dispatcher is seeded with every step of every block at
/// once (up to 120 blocks of one core), which this keeps within some tens of MB of host memory.
/// Every step's data must also fit a DRAM bank, which allows fewer with large blocks (refused
/// naming `--steps` and the most the shape allows); that data lives in the simulator's memory,
/// so a schedule near the limit needs gigabytes of it.
pub const MAX_STEPS: u32 = 4096;

/// The schedule's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulConfig {
    /// The cores the product runs on (logical); its columns and rows must be multiples of the
    /// block's.
    pub rect: LogicalRect,
    /// Cores per block group: columns, rows.
    pub block: (u8, u8),
    /// Steps (panels of the inner dimension): 1..=[`MAX_STEPS`].
    pub steps: u32,
    /// Blocks of data per panel multicast.
    pub blocks_per_step: u32,
    /// Simulator seed.
    pub seed: u64,
}

impl Default for MatmulConfig {
    fn default() -> Self {
        Self {
            rect: LogicalRect::new(0, 0, 12, 10),
            block: (3, 2),
            steps: 4,
            blocks_per_step: 4,
            seed: 0,
        }
    }
}

/// What a schedule came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatmulSummary {
    /// Every command succeeded and every byte checked.
    pub ok: bool,
    /// Block groups (one an output block: not `--blocks-per-step`'s data blocks).
    pub block_groups: usize,
    /// Row write-back groups.
    pub row_groups: usize,
    /// Commands run.
    pub commands: u64,
    /// Bytes compute kernels checked.
    pub checked_bytes: u64,
    /// Simulated cycles of the whole schedule.
    pub cycles: u64,
    /// Commands that did not succeed, as `group step: why`.
    pub failures: Vec<String>,
    /// The dispatcher's figures.
    pub dispatch: DispatchSummary,
}

impl std::fmt::Display for MatmulSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "matmul schedule on the simulator: {}, {}, {}",
            crate::num::count(self.block_groups as u64, "block group", "block groups"),
            crate::num::count(self.row_groups as u64, "row write-back", "row write-backs"),
            crate::num::count(self.commands, "command", "commands")
        )?;
        writeln!(f, "  checked by compute: {} bytes", self.checked_bytes)?;
        writeln!(f, "  simulated:          {} cycles", self.cycles)?;
        for line in self.dispatch.to_string().lines() {
            writeln!(f, "  {line}")?;
        }
        for x in &self.failures {
            writeln!(f, "  FAILED: {x}")?;
        }
        write!(f, "  result: {}", if self.ok { "ok" } else { "FAILED" })
    }
}

/// One command of the schedule: step `step` on `group` (`step == steps` is a write-back).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The group.
    pub group: GroupId,
    /// The step.
    pub step: u32,
}

struct Schedule<'a> {
    plans: &'a [BroadcastPlan],
    steps: u32,
    blocks_per_row: u32,
    /// Group -> its block row, for block groups.
    block_row: &'a [Option<usize>],
    /// Block row -> its write-back group.
    row_group: &'a [GroupId],
    finished_in_row: HashMap<usize, u32>,
    commands: u64,
    checked_bytes: u64,
    failures: Vec<String>,
    progress: &'a (dyn Fn(u64) + Sync),
}

impl Plugin for Schedule<'_> {
    type Work = Step;
    type Message = usize;

    fn handle(&mut self, f: Finished<Step>, cx: &mut Cx<'_, Step, usize>) {
        let Step { group, step } = f.work;
        self.commands += 1;
        (self.progress)(1);
        match &f.outcome {
            Outcome::Reported(r) if r.ok => {
                // Every core reported success; the bytes its compute checked must be all of
                // them too (a kernel that checked fewer blocks would report success as well).
                let checked = r.stats.iter().map(|(_, s)| s[2] as u64).sum::<u64>();
                let expected = self.plans[group.0 as usize].checked_bytes_per_job();
                if checked != expected {
                    self.failures.push(format!(
                        "group {} step {step}: compute checked {checked} bytes of {expected}",
                        group.0
                    ));
                }
                self.checked_bytes += checked;
            }
            other => self
                .failures
                .push(format!("group {} step {step}: {other:?}", group.0)),
        }
        if let Some(row) = self.block_row[group.0 as usize]
            && step + 1 == self.steps
        {
            let owner = cx.groups()[self.row_group[row].0 as usize].worker;
            cx.send(owner, row);
        }
    }

    fn receive(&mut self, row: usize, cx: &mut Cx<'_, Step, usize>) {
        let n = self.finished_in_row.entry(row).or_default();
        *n += 1;
        if *n == self.blocks_per_row {
            let group = self.row_group[row];
            let step = Step {
                group,
                step: self.steps,
            };
            if cx.submit(step, Place::Group(group)).is_err() {
                self.failures
                    .push(format!("row {row}: no write-back group"));
            }
        }
    }

    fn assign(&mut self, _slot: &SlotView<'_>, candidates: &[Ready<Step>]) -> Option<usize> {
        // Only pinned steps exist; the first is the group's next step.
        (!candidates.is_empty()).then_some(0)
    }

    fn command(&mut self, work: &Step, _group: &GroupInfo) -> CommandSpec {
        // A row group's plan holds its one write-back, as its job 0.
        let job = if work.step == self.steps {
            0
        } else {
            work.step
        };
        self.plans[work.group.0 as usize].spec(job)
    }
}

/// Runs the schedule `cfg` through the dispatcher configured by `dispatch`.
pub fn run(cfg: &MatmulConfig, dispatch: &DispatchConfig) -> Result<MatmulSummary, BroadcastError> {
    run_with_progress(cfg, dispatch, &|_| {})
}

/// Commands the schedule `cfg` runs: every block's steps and one write-back per block row, the
/// blocks that fit whole in the rectangle counted (0 for a block of no columns or rows; a
/// block that does not tile the rectangle is refused when the schedule is checked).
pub fn commands(cfg: &MatmulConfig) -> u64 {
    let ((bc, br), r) = (cfg.block, cfg.rect);
    if bc == 0 || br == 0 {
        return 0;
    }
    let (blocks, rows) = (
        (r.columns / bc) as u64 * (r.rows / br) as u64,
        (r.rows / br) as u64,
    );
    blocks * cfg.steps as u64 + rows
}

/// Refuses a schedule that cannot run, naming the flag of `matmul_schedule` and its value.
fn check(cfg: &MatmulConfig, geometry: &Geometry) -> Result<(), BroadcastError> {
    let bad = |flag: &'static str, why: String| BroadcastError::Flag { flag, why };
    let ((bc, br), r) = (cfg.block, cfg.rect);
    if !(1..=MAX_STEPS).contains(&cfg.steps) {
        return Err(bad(
            "--steps",
            format!("{} (allowed: 1..={MAX_STEPS})", cfg.steps),
        ));
    }
    if cfg.blocks_per_step > MAX_BLOCKS {
        return Err(bad(
            "--blocks-per-step",
            format!("{} (allowed: 0..={MAX_BLOCKS})", cfg.blocks_per_step),
        ));
    }
    let full = geometry.full();
    if r.is_empty() {
        return Err(bad(
            "--rect",
            format!("{r} is empty (allowed: at least 1 column and 1 row)"),
        ));
    }
    if !full.covers(r) {
        return Err(bad(
            "--rect",
            format!(
                "{r} reaches outside the {c}x{rows} logical grid (allowed: X0 + COLUMNS <= {c} \
                 and Y0 + ROWS <= {rows})",
                c = full.columns,
                rows = full.rows
            ),
        ));
    }
    if bc == 0 || br == 0 || r.columns % bc != 0 || r.rows % br != 0 {
        return Err(bad(
            "--block",
            format!(
                "{bc}x{br} blocks do not tile the {}x{} rectangle (allowed: divisors of its columns and rows)",
                r.columns, r.rows
            ),
        ));
    }
    Ok(())
}

/// The bytes of each DRAM bank a schedule's data takes: every block group's data for each step
/// (its plan holds `steps` jobs), and every row group's for its one write-back.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct DataSize {
    /// One step of every block group.
    per_step: u64,
    /// The write-backs of every row group.
    write_back: u64,
}

impl DataSize {
    /// Counts `bytes` of one group's one job: a step's if it is a block group, else a write-back's.
    fn add(&mut self, block_group: bool, bytes: u64) {
        match block_group {
            true => self.per_step += bytes,
            false => self.write_back += bytes,
        }
    }

    /// The bytes of `steps` steps and the write-backs.
    fn of(self, steps: u32) -> u64 {
        self.per_step
            .saturating_mul(steps as u64)
            .saturating_add(self.write_back)
    }
}

/// Refuses a schedule whose data does not fit a DRAM bank (`size`), naming `--steps` and the
/// most the shape allows.
fn check_dram(
    cfg: &MatmulConfig,
    size: DataSize,
    dram_at: &dyn Fn(u32) -> Result<DataSize, BroadcastError>,
) -> Result<(), BroadcastError> {
    let base = crate::app::broadcast::DRAM_BASE;
    let usable = crate::chip::dram_bank_usable(crate::chip::ChipKind::Blackhole);
    let need = base.saturating_add(size.of(cfg.steps));
    if need <= usable {
        return Ok(());
    }
    let room = usable.saturating_sub(base);
    let most = room.saturating_sub(size.write_back) / size.per_step.max(1);
    if most >= 1 {
        return Err(BroadcastError::Flag {
            flag: "--steps",
            why: format!(
                "{} steps of --blocks-per-step {} need {need} bytes of each DRAM bank for every \
                 group's data (allowed: at most {usable}: --steps up to {most} with \
                 --blocks-per-step {})",
                cfg.steps, cfg.blocks_per_step, cfg.blocks_per_step
            ),
        });
    }
    // Not even one step fits: the blocks a step are what to lower. Their data is nearly
    // proportional to them (the copies' layers follow the placement, which the blocks move):
    // a count found so is checked, and lowered by the bytes it still needs until one fits.
    let mut blocks = cfg.blocks_per_step;
    let mut bytes = size.of(cfg.steps);
    let fits = loop {
        let per_block = bytes.div_ceil(u64::from(blocks.max(1)));
        let fewer = (room / per_block.max(1)).min(u64::from(blocks.saturating_sub(1))) as u32;
        if fewer == 0 {
            break None;
        }
        blocks = fewer;
        bytes = dram_at(blocks)?.of(cfg.steps);
        if bytes <= room {
            break Some(blocks);
        }
    };
    let allowed = match fits {
        Some(b) => format!("--blocks-per-step {b} fits with --steps {}", cfg.steps),
        None => "no --blocks-per-step fits".to_string(),
    };
    Err(BroadcastError::Flag {
        flag: "--blocks-per-step",
        why: format!(
            "{} blocks a step for --steps {} need {need} bytes of each DRAM bank for every \
             group's data (allowed: at most {usable}: {allowed})",
            cfg.blocks_per_step, cfg.steps
        ),
    })
}

/// Refuses a schedule whose simulated DRAM data does not fit the host's `available` memory
/// (unknown: let it run): `size` the host memory the simulator's banks take for it
/// ([`BroadcastPlan::host_bytes_per_job`] of each group's one job at the banks' start: exact
/// when a copy is whole 4 KiB chunks, as the default's 8 KiB are; within a chunk a copy
/// otherwise).
fn check_host_memory(
    cfg: &MatmulConfig,
    size: DataSize,
    available: Option<u64>,
) -> Result<(), BroadcastError> {
    let need = size.of(cfg.steps);
    match available {
        Some(available) if need > available => {
            use crate::host::memory::gib;
            Err(BroadcastError::Flag {
                flag: "--steps",
                why: format!(
                    "the simulated DRAM data of {} steps of --blocks-per-step {} needs about {:.1} \
                     GiB ({need} bytes) of host memory, {:.1} GiB ({available} bytes) are \
                     available (fewer --steps or --blocks-per-step, or a smaller --rect)",
                    cfg.steps,
                    cfg.blocks_per_step,
                    gib(need),
                    gib(available)
                ),
            })
        }
        _ => Ok(()),
    }
}

/// [`run`], calling `progress(1)` after each command (an increment: commands finish on
/// several workers).
pub fn run_with_progress(
    cfg: &MatmulConfig,
    dispatch: &DispatchConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MatmulSummary, BroadcastError> {
    let (bc, br) = cfg.block;
    let r = cfg.rect;
    // A block group's plan holds its steps' jobs, a row group's its one write-back (job 0).
    let broadcast = |rect: LogicalRect, jobs: u32| BroadcastConfig {
        rect,
        blocks: cfg.blocks_per_step,
        pages: 2,
        page_size: 1024,
        window: 2,
        jobs,
        seed: cfg.seed,
        ..BroadcastConfig::default()
    };
    let base = broadcast(r, 1);
    // The simulated chip below is made from the same configuration, fused DRAM bank and all.
    let geometry = crate::chip::blackhole_fused(base.harvest.bits() as u32, base.fused_dram)
        .map_err(|e| BroadcastError::Flag {
            flag: "--rect",
            why: e.to_string(),
        })?;
    check(cfg, &geometry)?;
    let (mut groups, mut block_row, mut row_group) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..r.rows / br {
        for j in 0..r.columns / bc {
            groups.push(LogicalRect::new(r.x0 + j * bc, r.y0 + i * br, bc, br));
            block_row.push(Some(i as usize));
        }
    }
    for i in 0..r.rows / br {
        row_group.push(GroupId(groups.len() as u32));
        groups.push(LogicalRect::new(r.x0, r.y0 + i * br, r.columns, br));
        block_row.push(None);
    }
    // The checks above make every group's plan valid; should one not be, the message names
    // the user's --rect, not the group's. Each group's data has its own DRAM addresses: its
    // senders' copies follow the previous group's.
    let in_group = |g: LogicalRect, e: BroadcastError| BroadcastError::Flag {
        flag: "--rect",
        why: format!("{r}: its group {g}: {e}"),
    };
    let group_plan = |g: LogicalRect, cfg: &BroadcastConfig| {
        BroadcastPlan::new(cfg, &geometry).map_err(|e| in_group(g, e))
    };
    // Every step of every group has its data in every bank: refused naming the flags that
    // size it, with the most steps the shape allows, before any plan is laid out.
    // The same in host memory: the simulator's banks hold whole chunks of them.
    let nothing = DataSize {
        per_step: 0,
        write_back: 0,
    };
    let (mut size, mut held) = (nothing, nothing);
    for (&g, row) in groups.iter().zip(&block_row) {
        let one = group_plan(g, &broadcast(g, 1))?;
        let (bytes, host) = (
            one.dram_end() - crate::app::broadcast::DRAM_BASE,
            one.host_bytes_per_job(),
        );
        size.add(row.is_some(), bytes);
        held.add(row.is_some(), host);
    }
    // The DRAM of every group's one job at `blocks` a step: the senders' copies lie in layers
    // whose count follows the placement, which the blocks move (`placement::Layers`).
    let dram_at = |blocks: u32| {
        let mut at = nothing;
        for (&g, row) in groups.iter().zip(&block_row) {
            let one = group_plan(
                g,
                &BroadcastConfig {
                    blocks,
                    ..broadcast(g, 1)
                },
            )?;
            at.add(
                row.is_some(),
                one.dram_end() - crate::app::broadcast::DRAM_BASE,
            );
        }
        Ok(at)
    };
    check_dram(cfg, size, &dram_at)?;
    check_host_memory(cfg, held, crate::host::memory::available())?;
    let mut start = crate::app::broadcast::DRAM_BASE;
    // Groups run side by side: each its own data pattern (its jobs' patterns after the last
    // group's), so a block landed in another group's buffer fails the check.
    let plans = groups
        .iter()
        .enumerate()
        .map(|(i, &g)| {
            let jobs = if block_row[i].is_some() { cfg.steps } else { 1 };
            let plan = group_plan(g, &broadcast(g, jobs))?
                .with_dram_start(start)
                .map_err(|e| in_group(g, e))?
                .with_pattern_offset((i as u32).wrapping_mul(cfg.steps.saturating_add(1)));
            start = plan.dram_end();
            Ok(plan)
        })
        .collect::<Result<Vec<_>, BroadcastError>>()?;
    let for_device = plans.clone();
    let sim = komorebi_sim::SimConfig {
        harvest: base.harvest,
        fused_dram: base.fused_dram,
        seed: cfg.seed,
        ..komorebi_sim::SimConfig::default()
    };
    let target = SimTarget::spawn(
        move || {
            let mut s = crate::app::broadcast::open_session(Backend::Simulator(sim))?;
            // Each plan writes its own DRAM data.
            for p in &for_device {
                p.prepare(&mut s)?;
            }
            Ok(s)
        },
        None,
    )?;
    let start = target.with_session(|s| s.device().now())?;
    let dispatch_err = |e: crate::dispatch::DispatchError| BroadcastError::Dispatch(e.to_string());
    let mut d = Dispatcher::new(&target, geometry.full(), &groups, dispatch.clone())
        .map_err(dispatch_err)?;
    let blocks = block_row.iter().filter(|b| b.is_some()).count();
    for g in 0..blocks {
        for step in 0..cfg.steps {
            let group = GroupId(g as u32);
            d.seed(Step { group, step }, Place::Group(group))
                .map_err(dispatch_err)?;
        }
    }
    let result = d
        .run(|_| Schedule {
            plans: &plans,
            steps: cfg.steps,
            blocks_per_row: (r.columns / bc) as u32,
            block_row: &block_row,
            row_group: &row_group,
            finished_in_row: HashMap::new(),
            commands: 0,
            checked_bytes: 0,
            failures: Vec::new(),
            progress,
        })
        .map_err(dispatch_err)?;
    let cycles = target.with_session(move |s| s.device().now() - start)?;
    let mut summary = MatmulSummary {
        ok: true,
        block_groups: blocks,
        row_groups: row_group.len(),
        commands: 0,
        checked_bytes: 0,
        cycles,
        failures: Vec::new(),
        dispatch: result.summary,
    };
    for p in result.plugins {
        summary.commands += p.commands;
        summary.checked_bytes += p.checked_bytes;
        summary.failures.extend(p.failures);
    }
    let expected = blocks as u64 * cfg.steps as u64 + row_group.len() as u64;
    if summary.commands != expected {
        summary.failures.push(format!(
            "{} commands ran, {expected} expected",
            summary.commands
        ));
    }
    summary.ok = summary.failures.is_empty();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_whose_data_does_not_fit_host_memory_is_refused() {
        let cfg = MatmulConfig {
            rect: LogicalRect::new(0, 0, 12, 10),
            block: (3, 2),
            steps: 4,
            blocks_per_step: 4,
            seed: 0,
        };
        const GIB: u64 = 1 << 30;
        // Four steps' data of 1 GiB each and the write-backs' 1 GiB.
        let size = DataSize {
            per_step: GIB,
            write_back: GIB,
        };
        let e = check_host_memory(&cfg, size, Some(5 * GIB - 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--steps: the simulated DRAM data of 4 steps of --blocks-per-step 4 needs about 5.0 \
             GiB (5368709120 bytes) of host memory, 5.0 GiB (5368709119 bytes) are available \
             (fewer --steps or --blocks-per-step, or a smaller --rect)"
        );
        assert!(check_host_memory(&cfg, size, Some(5 * GIB)).is_ok());
        // Unknown: the run goes.
        let huge = DataSize {
            per_step: u64::MAX,
            write_back: 0,
        };
        assert!(check_host_memory(&cfg, huge, None).is_ok());
    }
}
