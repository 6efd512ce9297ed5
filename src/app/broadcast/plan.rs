//! The plan of a run: the layout of both broadcasts, every core's typed program, the buffers
//! and the DRAM data.

use komorebi_broadcast::area;
use komorebi_broadcast::args::BroadcastArgs;
use komorebi_broadcast::layout::{self, BroadcastParams};
use komorebi_hal::{LogicalXy, Role};
use komorebi_kernel::abi;
use komorebi_kernel::broadcast_handler::program::{
    BroadcastProgram, Check, ComputeInput, MoverProgram, STREAMS,
};
use komorebi_kernel::broadcast_handler::{PATTERN_STRIDE, pattern_base};
use komorebi_sim::Timing;

use crate::host::session::{CommandSpec, Session, SessionError, TileProgram};

use super::config::{BroadcastConfig, DRAM_BASE, DRAM_RING, DeviceChoice, Operand};
use super::error::{BroadcastError, flag};
use super::faults::{FaultKind, FaultSpec};
use super::placement::Placement;
use super::summary::BroadcastSummary;

/// Writes job `job`'s pattern into DRAM region `region` (a function of job
/// ([`BroadcastPlan::pattern_job`]), broadcast, block, page and word: nothing is kept between
/// jobs): every sender's copy, its page `g` at `base + g * page_size` of the bank it reads its
/// stream `g % 8` from, `base` its layer's (`placement`).
pub(super) fn fill_dram(
    session: &mut Session,
    plan: &BroadcastPlan,
    job: u32,
    region: u32,
) -> Result<(), SessionError> {
    let cfg = &plan.cfg;
    let mut page = vec![0u8; cfg.page_size as usize];
    for (i, s) in plan.operands.iter().enumerate() {
        // Every sender's copy: its base, and the bank of each of its streams.
        let copies: Vec<(u64, [u8; STREAMS])> = (0..plan.words[i].len())
            .filter_map(|core| {
                let banks = plan.placement.banks(i, core)?;
                Some((plan.dram_base(region, i, core), banks))
            })
            .collect();
        for g in 0..cfg.blocks * cfg.pages as u32 {
            let (block, p) = (g / cfg.pages as u32, g % cfg.pages as u32);
            // `pattern_word`, followed a word at a time as compute follows it: one hash a page.
            let mut word = pattern_base(plan.pattern_job(job), s.id, block, p);
            for chunk in page.chunks_mut(4) {
                chunk.copy_from_slice(&word.to_le_bytes());
                word = word.wrapping_add(PATTERN_STRIDE);
            }
            for &(base, banks) in &copies {
                let addr = base + g as u64 * cfg.page_size as u64;
                session
                    .device()
                    .write_dram(banks[g as usize % STREAMS], addr, &page)?;
            }
        }
    }
    Ok(())
}

/// For each of `cores` (one operand's), the place among the senders (the included cores of rank
/// 0, in order) of the sender it reads from; 0 if it is not there.
fn senders_of(cores: &[BroadcastArgs]) -> Vec<u64> {
    let senders: Vec<_> = cores
        .iter()
        .filter(|s| s.included() && s.rank == 0)
        .map(|s| s.core)
        .collect();
    cores
        .iter()
        .map(|a| senders.iter().position(|&s| s == a.sender).unwrap_or(0) as u64)
        .collect()
}

/// The commands of a run: every core's broadcast words, the buffers and the DRAM data.
#[derive(Clone, Debug)]
pub struct BroadcastPlan {
    pub(super) cfg: BroadcastConfig,
    pub(super) operands: Vec<Operand>,
    /// Every core's argument words, per operand.
    pub(super) words: Vec<Vec<layout::CoreArgs>>,
    /// The same decoded.
    pub(super) decoded: Vec<Vec<BroadcastArgs>>,
    /// Per operand, per core of `decoded`: the place among the operand's senders of the sender
    /// whose pages the core reads (0 if none), for [`BroadcastPlan::dram_base`]. Found once:
    /// every job's every command asks for it for every core.
    sender_of: Vec<Vec<u64>>,
    /// Broadcasts of A and of W.
    pub(super) counts: [usize; 2],
    /// Each job's data is written just before it runs, in a ring of `DRAM_RING` regions
    /// (otherwise every job has its own region, written by `prepare`).
    pub(super) per_job: bool,
    /// The bank each sender reads each of its page streams from.
    pub(super) placement: Placement,
    /// Senders of A and of W (each reads its own copy of the pages).
    pub(super) senders: [u64; 2],
    /// Where the plan's DRAM data starts in every bank.
    pub(super) dram_start: u64,
    /// Added to every job's number in its data pattern ([`Self::pattern_job`]).
    pattern_salt: u32,
    /// The grid the plan was laid out on: the flags' on the simulators, the device's own on
    /// ttsim and a card.
    geometry: layout::Geometry,
}

impl BroadcastPlan {
    /// Lays out `cfg` on `geometry`, every job with its own DRAM region written by
    /// [`BroadcastPlan::prepare`] (for callers that post [`BroadcastPlan::spec`]s themselves);
    /// refuses flags that cannot run.
    pub fn new(cfg: &BroadcastConfig, geometry: &layout::Geometry) -> Result<Self, BroadcastError> {
        let plan = Self {
            per_job: false,
            ..Self::per_job(cfg, geometry)?
        };
        // The plan's own senders, on the device's geometry (the flags' `--harvest` grid may
        // differ, and lay the rectangle out otherwise or not at all).
        let need = plan.dram_end();
        let usable = crate::chip::dram_bank_usable(cfg.chip);
        if need > usable {
            return Err(flag(
                "--jobs",
                format!("the jobs' data needs {need} bytes per DRAM bank (allowed: {usable})"),
            ));
        }
        Ok(plan)
    }

    /// The grid the plan was laid out on (the flags' on the simulators, the device's own on
    /// ttsim and a card, whose harvesting the flags do not set).
    pub fn geometry(&self) -> &layout::Geometry {
        &self.geometry
    }

    /// The chip's working DRAM banks (its geometry's fused DRAM bank left out): the only ones
    /// the placement chooses, so the only ones the plan writes, reads and prices. (A geometry
    /// only carries a bank `with_fused_dram` accepted.)
    pub(super) fn dram_banks(&self) -> crate::chip::DramSet {
        crate::chip::DramSet::new(self.cfg.chip, self.geometry.fused_dram())
    }

    /// Lays out `cfg` on `geometry` with each job's data written just before it runs
    /// ([`BroadcastPlan::write_job_data`]) into a ring of DRAM regions, on the geometry's
    /// working DRAM banks only; refuses flags that cannot run.
    pub fn per_job(
        cfg: &BroadcastConfig,
        geometry: &layout::Geometry,
    ) -> Result<Self, BroadcastError> {
        cfg.validate()?;
        Self::lay_out(cfg, geometry)
    }

    /// [`Self::per_job`] without the flags' own checks (which call it to count the DRAM a
    /// placement takes).
    pub(super) fn lay_out(
        cfg: &BroadcastConfig,
        geometry: &layout::Geometry,
    ) -> Result<Self, BroadcastError> {
        if geometry.grid() != cfg.chip.grid() {
            let device = [
                crate::chip::ChipKind::Blackhole,
                crate::chip::ChipKind::Wormhole,
            ]
            .into_iter()
            .find(|k| k.grid() == geometry.grid());
            return Err(flag(
                "--chip",
                match device {
                    Some(k) => format!(
                        "{}: the device is a {k} (allowed: --chip {})",
                        cfg.chip_name(),
                        crate::chip::chip_flag(k)
                    ),
                    None => format!(
                        "{}: the device's grid is {:?}, no chip this host knows",
                        cfg.chip_name(),
                        geometry.grid()
                    ),
                },
            ));
        }
        let rect = cfg.rect;
        let full = geometry.full();
        if rect.is_empty() || !full.covers(rect) {
            // A device's harvesting (a card's, from its ARC) need not be --harvest's.
            let whose = if cfg.flags_geometry().is_ok_and(|g| g.full() == full) {
                cfg.chip_text()
            } else {
                format!("device's {} (its own harvesting)", cfg.chip.name())
            };
            if rect.is_empty() {
                return Err(super::error::empty_rect(rect));
            }
            return Err(flag(
                "--rect",
                format!(
                    "{rect} reaches outside the {c}x{r} logical grid of this {whose} (allowed: \
                     X0 + COLUMNS <= {c} and Y0 + ROWS <= {r})",
                    c = full.columns,
                    r = full.rows,
                ),
            ));
        }
        let operands = cfg.operands();
        let (mut words, mut decoded, mut counts) = (Vec::new(), Vec::new(), [0usize; 2]);
        for s in &operands {
            let params = BroadcastParams {
                broadcast: s.id,
                cb: s.cb,
                window: cfg.window,
                pages: cfg.pages,
            };
            let w = layout::broadcast_args(geometry, rect, rect, s.along, s.noc, params)
                .map_err(|e| flag("--rect", e.to_string()))?;
            counts[s.id as usize] = layout::broadcasts(geometry, rect, s.along, s.noc)
                .map_err(|e| flag("--rect", e.to_string()))?
                .len();
            decoded.push(
                w.iter()
                    .filter_map(|c| BroadcastArgs::decode(&c.words).ok())
                    .collect(),
            );
            words.push(w.to_vec());
        }
        let sender_of = decoded
            .iter()
            .map(|cores: &Vec<BroadcastArgs>| senders_of(cores))
            .collect();
        let mut plan = Self {
            cfg: cfg.clone(),
            operands,
            words,
            decoded,
            sender_of,
            counts,
            per_job: true,
            placement: Placement::empty(),
            senders: [counts[0] as u64, counts[1] as u64],
            dram_start: DRAM_BASE,
            pattern_salt: pattern_salt(&cfg.device),
            geometry: geometry.clone(),
        };
        plan.placement = plan.chosen_placement(&crate::chip::sim_timing(cfg.chip));
        // `validate` sized the data from the flags' harvest mask; the plan's senders come from
        // the device's geometry, which may lay out other panels: check the plan's own end too.
        use crate::num::count;
        let what = format!(
            "{} of {} of {} bytes for {}, their copies {} deep,",
            count(cfg.blocks.into(), "block", "blocks"),
            count(cfg.pages.into(), "page", "pages"),
            cfg.page_size,
            count(plan.senders[0] + plan.senders[1], "sender", "senders"),
            count(plan.placement.layers().count().into(), "layer", "layers")
        );
        if let Some(refused) = cfg.dram_refusal(&what, plan.layers_bytes(), false) {
            return Err(refused);
        }
        Ok(plan)
    }

    /// Configures the broadcast buffers, and writes every job's DRAM data unless the plan
    /// writes each job's just before it runs ([`BroadcastPlan::per_job`]).
    pub fn prepare(&self, session: &mut Session) -> Result<(), SessionError> {
        let cfg = &self.cfg;
        for s in &self.operands {
            session.configure_cb(
                cfg.rect,
                s.cb,
                s.base,
                cfg.page_size,
                cfg.window as u16 * cfg.pages,
            )?;
        }
        if !self.per_job {
            for job in 0..cfg.jobs {
                fill_dram(session, self, job, job)?;
            }
        }
        Ok(())
    }

    /// Writes job `job`'s DRAM data into its region of the ring (`DRAM_RING`), for a plan
    /// made with [`BroadcastPlan::per_job`]; nothing for one whose `prepare` wrote them all.
    pub fn write_job_data(&self, session: &mut Session, job: u32) -> Result<(), SessionError> {
        self.write_job_data_in(session, job, self.region(job))
    }

    /// Writes job `job`'s DRAM data into region `region` of the ring (`0..`[`Self::ring`]) for
    /// a command made with [`Self::faulty_spec_in`] and the same region: a run that picks each
    /// job's region itself (several chips). Nothing for a plan whose `prepare` wrote them all.
    pub(super) fn write_job_data_in(
        &self,
        session: &mut Session,
        job: u32,
        region: u32,
    ) -> Result<(), SessionError> {
        if self.per_job {
            fill_dram(session, self, job, region)?;
        }
        Ok(())
    }

    /// Regions of the ring a per-job plan writes its jobs' data into (at most `DRAM_RING`).
    pub(super) fn ring(&self) -> u32 {
        self.cfg.jobs.min(DRAM_RING)
    }

    /// Where core `core` of operand `operand` reads its pages in DRAM region `region`: its own
    /// copy if it sends (a receiver reads nothing: its sender's).
    pub(super) fn dram_base(&self, region: u32, operand: usize, core: usize) -> u64 {
        let sender = self.sender_of[operand].get(core).copied().unwrap_or(0);
        let (layer, shift) = self.placement.layers().of(operand, sender);
        self.dram_start
            + (self.layers_bytes() * u64::from(region))
            + u64::from(layer) * self.layer_bytes()
            + u64::from(shift) * u64::from(self.cfg.page_size)
    }

    /// Every sender reading stream `i` from the `i`-th working bank (bank `i` when every bank
    /// works).
    pub(super) fn interleaved_placement(&self) -> Placement {
        let operands: Vec<_> = self
            .operands
            .iter()
            .zip(&self.decoded)
            .map(|(s, cores)| {
                let senders = cores.iter().map(|a| a.included() && a.rank == 0);
                (s.noc, senders.collect())
            })
            .collect();
        let pages = u64::from(self.cfg.blocks) * u64::from(self.cfg.pages);
        Placement::interleaved(&operands, self.cfg.chip, self.dram_banks(), pages)
    }

    /// The placement `placement` chooses for this plan, priced with `timing`.
    pub(super) fn chosen_placement(&self, timing: &Timing) -> Placement {
        Placement::choose(
            self.interleaved_placement(),
            &self.read_streams(timing),
            self.load_without_dram(timing, false),
            timing,
        )
    }

    /// Where the plan's DRAM data ends in every bank (exclusive): its regions (one per job,
    /// or the ring's) from its start.
    pub fn dram_end(&self) -> u64 {
        let regions = if self.per_job {
            self.ring()
        } else {
            self.cfg.jobs
        };
        // Saturating: `new` compares it with the banks' bytes for any --jobs.
        self.dram_start
            .saturating_add(self.layers_bytes().saturating_mul(regions as u64))
    }

    /// The same plan with its DRAM data from `start` in every bank, for plans that run side by
    /// side (each group of a schedule its own data); refuses data that would end beyond the
    /// banks' usable bytes.
    pub fn with_dram_start(self, start: u64) -> Result<Self, BroadcastError> {
        let moved = Self {
            dram_start: start,
            ..self
        };
        let end = moved.dram_end();
        let usable = crate::chip::dram_bank_usable(moved.cfg.chip);
        if end > usable {
            return Err(flag(
                "--rect",
                format!(
                    "the data of the plans side by side needs {end} bytes per DRAM bank (allowed: {usable})"
                ),
            ));
        }
        Ok(moved)
    }

    /// The DRAM region of job `job` (the feeder's, and the dispatcher's on one chip).
    pub(super) fn region(&self, job: u32) -> u32 {
        if self.per_job { job % DRAM_RING } else { job }
    }

    /// The same plan with its patterns moved on by `offset` jobs, for plans that run side by
    /// side (a schedule's groups): with offsets apart by more than their jobs, no two plans'
    /// jobs send the same bytes, so a block landed in another group's buffer fails the check.
    pub fn with_pattern_offset(mut self, offset: u32) -> Self {
        self.pattern_salt = self.pattern_salt.wrapping_add(offset);
        self
    }

    /// The bytes compute checks in one job: every core of the rectangle checks every block of
    /// the broadcast it is in of each operand (a sender's own compute too); 0 with `--check
    /// none`.
    pub fn checked_bytes_per_job(&self) -> u64 {
        match self.cfg.check {
            Check::None => 0,
            Check::Full => {
                self.cfg.rect.len() as u64
                    * self.operands.len() as u64
                    * u64::from(self.cfg.blocks)
                    * u64::from(self.cfg.pages)
                    * u64::from(self.cfg.page_size)
            }
        }
    }

    /// The number that stands for job `job` in its data pattern (the host's DRAM bytes and
    /// compute's check): the job, plus on a card a value drawn for the run. A card's L1 keeps
    /// the last run's bytes, and a run of the same shape would lay the same ones into the same
    /// slots: a block whose data never landed would then pass the check. The simulators start
    /// from zeroed memory, so their patterns stay the same run after run.
    pub fn pattern_job(&self, job: u32) -> u32 {
        job.wrapping_add(self.pattern_salt)
    }

    /// The program of core `core` (row by row in the rectangle) in job `job`, without faults;
    /// `None` for a core past the rectangle's.
    pub fn program(&self, core: usize, job: u32) -> Option<BroadcastProgram> {
        (core < self.cfg.rect.len()).then(|| self.program_in(core, job, self.region(job)))
    }

    /// [`Self::program`] reading its data from DRAM region `region`.
    fn program_in(&self, core: usize, job: u32, region: u32) -> BroadcastProgram {
        let cfg = &self.cfg;
        let mut p = BroadcastProgram::default();
        p.compute.job = self.pattern_job(job);
        p.compute.check = cfg.check;
        for (i, s) in self.operands.iter().enumerate() {
            let role = Role::mover(s.noc);
            let mover = MoverProgram {
                args: self.words[i][core].words,
                // `validate` bounds blocks by MAX_BLOCKS.
                blocks: cfg.blocks as u16,
                page_size: cfg.page_size,
                dram_base: self.dram_base(region, i, core) as u32,
                banks: self.placement.ports(i, core),
                stall_before: None,
            };
            if role == Role::Reader {
                p.reader = Some(mover);
            } else {
                p.writer = Some(mover);
            }
            // At most two streams, the capacity.
            let _ = p.compute.inputs.push(ComputeInput {
                cb: s.cb,
                pages: cfg.pages,
                window: cfg.window,
                blocks: cfg.blocks as u16,
                page_size: cfg.page_size,
                broadcast: s.id,
                producer: role,
            });
        }
        p
    }

    /// The command of one program per core of the rectangle, row by row (programs the plan
    /// checked when it was made).
    pub(super) fn command(&self, programs: impl Iterator<Item = BroadcastProgram>) -> CommandSpec {
        let cfg = &self.cfg;
        let programs = programs
            .map(|p| {
                let w = p.words();
                TileProgram {
                    reader: w.reader.to_vec(),
                    writer: w.writer.to_vec(),
                    compute: w.compute.to_vec(),
                }
            })
            .collect();
        CommandSpec {
            handler: cfg.protocol.handler(),
            flags: abi::FLAG_EXCLUSIVE,
            group: cfg.rect,
            wait_limit: cfg.run_wait_limit(),
            budget: Some(cfg.command_budget()),
            programs,
        }
    }

    /// The command of job `job`: one program per core of the rectangle, row by row.
    pub fn spec(&self, job: u32) -> CommandSpec {
        let region = self.region(job);
        self.command((0..self.cfg.rect.len()).map(|core| self.program_in(core, job, region)))
    }

    /// Checks every core's program (job 0's, with the faults: the other jobs differ only in
    /// the job and DRAM address, which the checks do not read).
    pub(super) fn check_programs(&self) -> Result<(), BroadcastError> {
        for core in 0..self.cfg.rect.len() {
            self.faulty_program(core, 0)
                .check()
                .map_err(|e| BroadcastError::Program {
                    core: self.core_at(core),
                    error: e,
                })?;
        }
        Ok(())
    }

    /// The program of core `core` in job `job` with the faults applied (they belong to job 0).
    pub(super) fn faulty_program(&self, core: usize, job: u32) -> BroadcastProgram {
        self.faulty_program_in(core, job, self.region(job))
    }

    /// [`Self::faulty_program`] reading its data from DRAM region `region`.
    fn faulty_program_in(&self, core: usize, job: u32, region: u32) -> BroadcastProgram {
        let mut p = self.program_in(core, job, region);
        if job != 0 {
            return p;
        }
        for f in self
            .cfg
            .faults
            .iter()
            .filter(|f| f.core == self.core_at(core))
        {
            // `check_faults` keeps stall blocks below --blocks (at most MAX_BLOCKS).
            let stall = Some(f.block as u16);
            match f.kind {
                FaultKind::StallDm => {
                    for (id, _) in self.ranks(f.core).into_iter().filter(|&(_, r)| r > 0) {
                        let mover = if id == 0 {
                            &mut p.reader
                        } else {
                            &mut p.writer
                        };
                        if let Some(m) = mover {
                            m.stall_before = stall;
                        }
                    }
                }
                FaultKind::StallCompute | FaultKind::StallSenderCompute => {
                    p.compute.stall_before = stall;
                }
                FaultKind::BadWords => {
                    // One bit of the first receiver's coordinates flipped after the check
                    // word was made: the words no longer match their check.
                    for m in [&mut p.reader, &mut p.writer].into_iter().flatten() {
                        if let Ok(args) = BroadcastArgs::decode(&m.args) {
                            let mut flipped = args;
                            flipped.start.1 ^= 1;
                            m.args = flipped.encode_stale(&args);
                        }
                    }
                }
                FaultKind::DropMarker | FaultKind::DropValid | FaultKind::HostStop => {}
            }
        }
        p
    }

    /// The command of job `job` with the faults applied (the faults belong to job 0).
    pub(super) fn faulty_spec(&self, job: u32) -> CommandSpec {
        self.faulty_spec_in(job, self.region(job))
    }

    /// [`Self::faulty_spec`] reading its data from DRAM region `region` (see
    /// [`Self::write_job_data_in`]).
    pub(super) fn faulty_spec_in(&self, job: u32, region: u32) -> CommandSpec {
        self.command((0..self.cfg.rect.len()).map(|core| self.faulty_program_in(core, job, region)))
    }
    /// The rank of logical `core` in each broadcast of the plan: `(broadcast id, rank)`.
    pub fn ranks(&self, core: LogicalXy) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        for (i, s) in self.operands.iter().enumerate() {
            if let Some((_, a)) = self.words[i]
                .iter()
                .zip(&self.decoded[i])
                .find(|(w, _)| LogicalXy::from(w.core) == core)
                && a.included()
                && (a.rank != 0 || a.receivers > 0)
            {
                out.push((s.id, a.rank));
            }
        }
        out
    }
    /// Logical coordinates of core `i` of the group (row by row); `None` past its cores.
    pub fn core(&self, i: usize) -> Option<LogicalXy> {
        (i < self.cfg.rect.len()).then(|| self.core_at(i))
    }

    /// [`Self::core`] of a core of the group (`i` below its cores).
    fn core_at(&self, i: usize) -> LogicalXy {
        let r = self.cfg.rect;
        LogicalXy::new(
            r.x0 + (i % r.columns as usize) as u8,
            r.y0 + (i / r.columns as usize) as u8,
        )
    }

    /// Broadcasts of A and of W per job.
    pub fn broadcasts(&self) -> [usize; 2] {
        self.counts
    }

    /// The fused DRAM bank of the plan's chip, if it has one: no stream reads it.
    pub fn fused_dram(&self) -> Option<u8> {
        self.dram_banks().fused()
    }

    /// Adds what the cores' broadcast areas say of the job just run to `summary`.
    pub(super) fn account(
        &self,
        session: &Session,
        summary: &mut BroadcastSummary,
    ) -> Result<(), SessionError> {
        let block_bytes = self.cfg.pages as u64 * self.cfg.page_size as u64;
        for (i, s) in self.operands.iter().enumerate() {
            for (core, a) in self.words[i].iter().zip(&self.decoded[i]) {
                let base = area::area(s.id);
                let blocks =
                    session.control_word(core.core.into(), base + area::STATS_BLOCKS)? as u64;
                summary.wait_cycles[s.id as usize] +=
                    session.control_word(core.core.into(), base + area::STATS_WAIT_CYCLES)? as u64;
                if a.rank != 0 {
                    summary.received_bytes += blocks * block_bytes;
                }
            }
        }
        Ok(())
    }
}

impl BroadcastPlan {
    /// Refuses faults [`BroadcastConfig::check_faults_on_the_rect`] refuses, and those the
    /// broadcasts laid out on this plan's grid make impossible: a core that does not take part
    /// as the kind needs, or a marker or block count that never comes.
    pub(super) fn check_faults(&self) -> Result<(), BroadcastError> {
        self.cfg.check_faults_on_the_rect()?;
        let r = self.cfg.rect;
        for f in &self.cfg.faults {
            // Whether a core's ranks take part as the kind needs: receiving (rank > 0), or
            // sending to receivers (rank 0 in a broadcast with receivers); and why not.
            let needs: Option<(bool, &str)> = match f.kind {
                FaultKind::StallDm
                | FaultKind::StallCompute
                | FaultKind::DropMarker
                | FaultKind::DropValid => Some((true, "receives no broadcast")),
                FaultKind::StallSenderCompute => Some((false, "sends no broadcast with receivers")),
                FaultKind::BadWords | FaultKind::HostStop => None,
            };
            let takes_part = |ranks: &[(u8, u8)], receiver: bool| {
                ranks.iter().any(|&(_, r)| (r > 0) == receiver)
            };
            let ranks = self.ranks(f.core);
            if let Some((receiver, why)) = needs
                && !takes_part(&ranks, receiver)
            {
                let some: Vec<String> = (0..r.len())
                    .map(|i| self.core_at(i))
                    .filter(|&c| takes_part(&self.ranks(c), receiver))
                    .take(4)
                    .map(|c| c.to_string())
                    .collect();
                let allowed = if some.is_empty() {
                    format!("none: no core of --rect {r} does")
                } else {
                    format!("a core that does, such as {}", some.join(", "))
                };
                return Err(flag(
                    "--fault",
                    format!(
                        "{}: core {} {why} (allowed: {allowed})",
                        f.kind.name(),
                        f.core
                    ),
                ));
            }
            self.check_fault_fires(f, &ranks)?;
        }
        Ok(())
    }

    /// Refuses a fault whose marker or block count never comes in job 0 (so the fault could
    /// never fire); `ranks` are the core's ([`Self::ranks`]). The stalls' blocks and bad
    /// words' BLOCK need no layout: [`BroadcastConfig::check_faults_on_the_rect`].
    fn check_fault_fires(&self, f: &FaultSpec, ranks: &[(u8, u8)]) -> Result<(), BroadcastError> {
        let blocks = self.cfg.blocks as u64;
        let receives = ranks.iter().filter(|&&(_, r)| r > 0).count();
        let (count, what) = match f.kind {
            // One DONE marker per block of every broadcast the core receives.
            FaultKind::DropMarker => (blocks * receives as u64, "marker"),
            // One VALID per block of the first broadcast it receives.
            FaultKind::DropValid => (blocks, "VALID write"),
            // The stop may come once the core has seen any number of blocks up to all of them,
            // counted in the VALID words of the broadcasts it takes part in with receivers:
            // with none, only at once (block 0).
            FaultKind::HostStop if ranks.is_empty() && f.block > 0 => {
                return Err(flag(
                    "--fault",
                    format!(
                        "{f}: core {} takes part in no broadcast with receivers, so it counts no \
                         block and block count {} never comes (allowed: {}, a stop at once)",
                        f.core,
                        f.block,
                        FaultSpec { block: 0, ..*f }
                    ),
                ));
            }
            FaultKind::HostStop => (blocks + 1, "block count"),
            FaultKind::StallDm
            | FaultKind::StallCompute
            | FaultKind::StallSenderCompute
            | FaultKind::BadWords => return Ok(()),
        };
        self.cfg.check_fault_block(f, count, what)
    }
}

/// A run's pattern salt on `device` ([`BroadcastPlan::pattern_job`]): drawn anew for each plan
/// on a card (the standard library's random hash keys, drawn per thread and stepped at each
/// `RandomState::new`: no generator to carry for one word), 0 on a simulator.
fn pattern_salt(device: &DeviceChoice) -> u32 {
    use std::hash::BuildHasher;
    match device {
        DeviceChoice::Card(_) => std::hash::RandomState::new().hash_one(0u8) as u32,
        _ => 0,
    }
}
