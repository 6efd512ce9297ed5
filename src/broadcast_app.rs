//! The 03_broadcast program: jobs of two broadcasts over a rectangle, every byte checked.
//!
//! Each job is one command on the rectangle's group carrying up to two broadcasts: **A** (id 0)
//! along rows on NoC0 (sender at the left end of each row inside a panel, run by the reader) and
//! **W** (id 1) along columns on NoC1 (sender at the bottom of each column, run by the writer).
//! DRAM holds a pattern unique per (job, broadcast, block, page), pages interleaved over the 8
//! banks; every compute kernel checks every byte it receives and the order of blocks, and pops
//! them. Jobs run one at a time through the test feeder.

use std::path::PathBuf;

use blackhole_pac::grid::DRAM_WORKER_PORT;
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::area;
use komorebi_broadcast::args::{Along, BroadcastArgs, MAX_BLOCKS, MAX_BUFFER_PAGES, MAX_WINDOW};
use komorebi_broadcast::layout::{self, BroadcastParams, Noc};
use komorebi_hal::LogicalRect;
use komorebi_hal::{NocId, Role, Xy};
use komorebi_kernel::abi;
use komorebi_kernel::broadcast_handler::program::{
    BANKS, BroadcastProgram, ComputeStream, MoverProgram, ProgramError,
};
use komorebi_kernel::broadcast_handler::{BROADCAST_HANDLER, pattern_word};
use komorebi_sim::{SimConfig, Timing};
use serde::Serialize;

use crate::dispatch::{
    Cx, DispatchConfig, DispatchSummary, Dispatcher, Finished, GroupId, GroupInfo, Outcome, Place,
    Plugin, PostHook, Ready, SimTarget, SlotView, Target, trace_events,
};
use crate::host::session::{
    Backend, CommandSpec, CoreGiveUp, Report, Session, SessionError, Ticket, TileProgram,
};

/// L1 address of the first broadcast buffer: above the control block and the firmware images
/// (`examples/firmware`'s layout ends at 0x30000).
pub const BUFFER_BASE: u32 = 0x4_0000;
/// Where the DRAM data of the jobs starts in every bank.
pub const DRAM_BASE: u64 = 0x100_0000;

/// A fault class of `--fault KIND:X,Y[:BLOCK]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A receiver's data-movement kernel stops calling its broadcast calls before BLOCK.
    StallDm,
    /// A receiver's compute stops popping at BLOCK.
    StallCompute,
    /// The sender's own compute stops popping at BLOCK.
    StallSenderCompute,
    /// The core's BLOCK-th DONE marker (counting from 0) is lost on the NoC.
    DropMarker,
    /// The BLOCK-th VALID write to the core (counting from 0) is lost on the NoC.
    DropValid,
    /// The core's broadcast words are corrupted.
    BadWords,
    /// The host sets the core's stop flag once the core has seen BLOCK blocks.
    HostStop,
}

impl FaultKind {
    /// Every kind with its flag name.
    pub const ALL: [(FaultKind, &'static str); 7] = [
        (Self::StallDm, "stall-dm"),
        (Self::StallCompute, "stall-compute"),
        (Self::StallSenderCompute, "stall-sender-compute"),
        (Self::DropMarker, "drop-marker"),
        (Self::DropValid, "drop-valid"),
        (Self::BadWords, "bad-words"),
        (Self::HostStop, "host-stop"),
    ];

    /// The flag name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("?", |(_, n)| n)
    }
}

/// One fault of a run: applied to the first job only.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaultSpec {
    /// Which fault.
    pub kind: FaultKind,
    /// The core, logical.
    pub core: (u8, u8),
    /// The block (or the marker / VALID number) it concerns.
    pub block: u32,
}

impl std::str::FromStr for FaultSpec {
    type Err = String;

    /// `KIND:X,Y[:BLOCK]`.
    fn from_str(s: &str) -> Result<Self, String> {
        let allowed = || {
            FaultKind::ALL
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = s.split(':');
        let kind = parts.next().unwrap_or("");
        let kind = FaultKind::ALL
            .iter()
            .find(|(_, n)| *n == kind)
            .map(|(k, _)| *k)
            .ok_or_else(|| format!("'{kind}' is not a fault kind (allowed: {})", allowed()))?;
        let core = parts
            .next()
            .ok_or_else(|| format!("'{s}' is not KIND:X,Y[:BLOCK]"))?;
        let xy: Vec<_> = core.split(',').map(|v| v.trim().parse::<u8>()).collect();
        let core = match xy.as_slice() {
            [Ok(x), Ok(y)] => (*x, *y),
            _ => return Err(format!("'{core}' is not X,Y (logical core coordinates)")),
        };
        let block = match parts.next() {
            None => 0,
            Some(b) => b
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("'{b}' is not a block number"))?,
        };
        if parts.next().is_some() {
            return Err(format!("'{s}' is not KIND:X,Y[:BLOCK]"));
        }
        Ok(Self { kind, core, block })
    }
}

/// The program's parameters (the flags of `komorebi broadcast` and the example).
#[derive(Clone, Debug, PartialEq)]
pub struct BroadcastConfig {
    /// The rectangle (and group), logical `x0, y0, columns, rows`.
    pub rect: LogicalRect,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Pages per block.
    pub pages: u16,
    /// Bytes per page.
    pub page_size: u32,
    /// Window.
    pub window: u8,
    /// Jobs.
    pub jobs: u32,
    /// Run broadcast A (along rows).
    pub rows: bool,
    /// Run broadcast W (along columns).
    pub columns: bool,
    /// Harvest mask of the simulated chip.
    pub harvest: HarvestMask,
    /// Seed.
    pub seed: u64,
    /// Reorder everything the hardware does not order (seeded).
    pub adversarial: bool,
    /// Cycles any single wait may last.
    pub wait_limit: u64,
    /// Write a Chrome/Perfetto trace here.
    pub trace: Option<PathBuf>,
    /// Faults injected into the first job.
    pub faults: Vec<FaultSpec>,
}

impl Default for BroadcastConfig {
    fn default() -> Self {
        Self {
            rect: LogicalRect::new(0, 0, 12, 10),
            blocks: 16,
            pages: 4,
            page_size: 2048,
            window: 2,
            jobs: 8,
            rows: true,
            columns: true,
            harvest: HarvestMask::P100_P150,
            seed: 0,
            adversarial: false,
            wait_limit: 1_000_000,
            trace: None,
            faults: Vec::new(),
        }
    }
}

/// A configuration that cannot run, or a run that could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BroadcastError {
    /// A flag value that is not allowed: which flag, and why.
    #[error("{flag}: {why}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// The session failed.
    #[error("{0}")]
    Session(#[from] SessionError),
    /// The trace could not be written.
    #[error("--trace: {0}")]
    Trace(String),
    /// A core's program failed its checks (a host bug: the plan builds them).
    #[error("the program of core {core:?}: {error}")]
    Program {
        /// The core, logical.
        core: (u8, u8),
        /// What is wrong.
        error: ProgramError,
    },
    /// The dispatcher refused the run or a job.
    #[error("dispatcher: {0}")]
    Dispatch(String),
}

fn flag(flag: &'static str, why: impl Into<String>) -> BroadcastError {
    BroadcastError::Flag {
        flag,
        why: why.into(),
    }
}

/// One job's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobResult {
    /// Job number.
    pub job: u32,
    /// Every core reported success.
    pub ok: bool,
    /// The command timed out.
    pub timeout: bool,
}

/// What a run came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BroadcastSummary {
    /// Every job succeeded and every byte checked.
    pub ok: bool,
    /// Jobs run.
    pub jobs: u32,
    /// Blocks per broadcast per job.
    pub blocks: u32,
    /// Broadcasts of A and of W per job.
    pub broadcasts: [usize; 2],
    /// Bytes receivers got by multicast (all jobs).
    pub received_bytes: u64,
    /// Bytes compute kernels checked (all jobs; senders' own compute included).
    pub checked_bytes: u64,
    /// Simulated cycles of all jobs.
    pub cycles: u64,
    /// The same in microseconds at AICLK.
    pub micros: f64,
    /// The resource bound of all jobs, in cycles.
    pub bound_cycles: u64,
    /// `bound_cycles / cycles`.
    pub achieved_over_bound: f64,
    /// Cycles spent waiting in broadcast calls, summed over cores: A, W.
    pub wait_cycles: [u64; 2],
    /// Jobs that timed out.
    pub timeouts: u32,
    /// Jobs with a data mismatch.
    pub mismatches: u32,
    /// Every core's first give-ups, all jobs.
    pub giveups: Vec<CoreGiveUp>,
    /// Per job.
    pub results: Vec<JobResult>,
    /// Protocol violations the simulator saw.
    pub violations: Vec<String>,
    /// The dispatcher's figures, when the jobs ran through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<DispatchSummary>,
}

impl BroadcastSummary {
    /// The process exit code: 0 all checked, 1 data mismatch, 3 timeout.
    pub fn exit_code(&self) -> u8 {
        if self.timeouts > 0 {
            3
        } else if self.mismatches > 0 || !self.ok {
            1
        } else {
            0
        }
    }
}

/// A broadcast of the program: A or W.
#[derive(Copy, Clone, Debug)]
struct Stream {
    id: u8,
    along: Along,
    noc: Noc,
    cb: u8,
    base: u32,
}

impl BroadcastConfig {
    fn streams(&self) -> Vec<Stream> {
        let bytes = self.window as u32 * self.pages as u32 * self.page_size;
        let mut out = Vec::new();
        if self.rows {
            out.push(Stream {
                id: 0,
                along: Along::Row,
                noc: Noc::Noc0,
                cb: 0,
                base: BUFFER_BASE,
            });
        }
        if self.columns {
            out.push(Stream {
                id: 1,
                along: Along::Column,
                noc: Noc::Noc1,
                cb: 1,
                base: BUFFER_BASE + bytes * out.len() as u32,
            });
        }
        out
    }

    fn validate(&self) -> Result<(), BroadcastError> {
        if self.blocks > MAX_BLOCKS {
            return Err(flag(
                "--blocks",
                format!("{} (allowed: 0..={MAX_BLOCKS})", self.blocks),
            ));
        }
        if self.pages == 0 {
            return Err(flag("--pages", "0 (allowed: 1..)"));
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(flag(
                "--window",
                format!("{} (allowed: 1..={MAX_WINDOW})", self.window),
            ));
        }
        if self.window as u32 * self.pages as u32 > MAX_BUFFER_PAGES {
            return Err(flag(
                "--pages",
                format!(
                    "window * pages = {} (allowed: at most {MAX_BUFFER_PAGES})",
                    self.window as u32 * self.pages as u32
                ),
            ));
        }
        if self.page_size == 0 || self.page_size % 64 != 0 || self.page_size > 1 << 20 {
            return Err(flag(
                "--page-size",
                format!(
                    "{} (allowed: a multiple of 64 up to 1 MiB; DRAM reads are 64-byte aligned)",
                    self.page_size
                ),
            ));
        }
        if self.jobs == 0 {
            return Err(flag("--jobs", "0 (allowed: 1..)"));
        }
        if !self.rows && !self.columns {
            return Err(flag("--along", "no broadcast (allowed: row, column, both)"));
        }
        let buffers = self.streams().len() as u64
            * self.window as u64
            * self.pages as u64
            * self.page_size as u64;
        let room = blackhole_pac::tensix::L1_SIZE as u64 - BUFFER_BASE as u64;
        if buffers > room {
            return Err(flag(
                "--page-size",
                format!(
                    "buffers of {buffers} bytes do not fit the {room} bytes of L1 above {BUFFER_BASE:#x}"
                ),
            ));
        }
        let region = self.region_bytes();
        let need = DRAM_BASE + region * 2 * self.jobs as u64;
        if need > blackhole_pac::grid::DRAM_BANK_USABLE_SIZE {
            return Err(flag(
                "--jobs",
                format!(
                    "the jobs' data needs {need} bytes per DRAM bank (allowed: {})",
                    blackhole_pac::grid::DRAM_BANK_USABLE_SIZE
                ),
            ));
        }
        Ok(())
    }

    /// Bytes each bank holds of one broadcast of one job.
    fn region_bytes(&self) -> u64 {
        (self.blocks as u64 * self.pages as u64).div_ceil(BANKS as u64) * self.page_size as u64
    }

    fn dram_base(&self, job: u32, id: u8) -> u64 {
        DRAM_BASE + (job as u64 * 2 + id as u64) * self.region_bytes()
    }
}

fn hal_noc(noc: Noc) -> NocId {
    match noc {
        Noc::Noc0 => NocId::Noc0,
        Noc::Noc1 => NocId::Noc1,
    }
}

/// Each DRAM bank's worker port, in the raw coordinates of `noc`.
fn bank_coordinates(noc: NocId) -> [Xy; BANKS] {
    core::array::from_fn(|b| {
        let (x, y) = DRAM_WORKER_PORT[b];
        let (x, y) = match noc {
            NocId::Noc0 => (x, y),
            NocId::Noc1 => blackhole_pac::grid::noc0_to_noc1(x, y).unwrap_or((x, y)),
        };
        // DRAM ports sit inside the 17 x 12 grid: always valid coordinates.
        Xy::new(x, y).unwrap_or_default()
    })
}

/// Writes every job's pattern into DRAM.
fn fill_dram(
    session: &mut Session,
    cfg: &BroadcastConfig,
    streams: &[Stream],
) -> Result<(), SessionError> {
    let mut page = vec![0u8; cfg.page_size as usize];
    for job in 0..cfg.jobs {
        for s in streams {
            let base = cfg.dram_base(job, s.id);
            for g in 0..cfg.blocks * cfg.pages as u32 {
                let (block, p) = (g / cfg.pages as u32, g % cfg.pages as u32);
                for (w, chunk) in page.chunks_mut(4).enumerate() {
                    chunk.copy_from_slice(
                        &pattern_word(job, s.id, block, p, w as u32).to_le_bytes(),
                    );
                }
                let addr = base + (g / BANKS as u32) as u64 * cfg.page_size as u64;
                session
                    .device()
                    .write_dram((g % BANKS as u32) as u8, addr, &page)?;
            }
        }
    }
    Ok(())
}

/// The resource bound of one job, in cycles: the busiest sender's NIU (reads plus multicasts,
/// each packet paying its path reservation), DRAM bandwidth over the 8 banks, and the busiest
/// receiver's ejection port.
fn job_bound(cfg: &BroadcastConfig, args: &[Vec<BroadcastArgs>], timing: &Timing) -> u64 {
    let block = cfg.pages as u64 * cfg.page_size as u64;
    let packets = |bytes: u64| bytes.div_ceil(timing.max_packet_bytes as u64).max(1);
    let flits = timing.flits(timing.max_packet_bytes.min(block as u32)) * packets(block);
    let mut sender = 0u64;
    let mut senders = 0u64;
    for stream in args {
        for a in stream.iter().filter(|a| a.rank == 0 && a.receivers > 0) {
            senders += 1;
            let hops = a.receivers as f64;
            let reserve = (timing.reserve_base + timing.reserve_per_hop * hops).round() as u64;
            let per_block = cfg.pages as u64 * timing.read_issue_floor
                + packets(block) * timing.write_issue_floor.max(reserve)
                + flits
                + timing.write_issue_floor.max(reserve + 2);
            sender = sender.max(per_block * cfg.blocks as u64);
        }
    }
    let dram =
        (senders * cfg.blocks as u64 * block) as f64 / (8.0 * timing.dram_bank_bytes_per_cycle);
    let eject = (args.len() as u64 * cfg.blocks as u64 * (block + 64)) / timing.flit_bytes as u64;
    sender.max(dram.ceil() as u64).max(eject)
}

/// The commands of a run: every core's broadcast words, the buffers and the DRAM data.
#[derive(Clone, Debug)]
pub struct BroadcastPlan {
    cfg: BroadcastConfig,
    streams: Vec<Stream>,
    words: Vec<Vec<layout::CoreArgs>>,
    decoded: Vec<Vec<BroadcastArgs>>,
    counts: [usize; 2],
}

impl BroadcastPlan {
    /// Lays out `cfg` on `geometry`; refuses flags that cannot run.
    pub fn new(cfg: &BroadcastConfig, geometry: &layout::Geometry) -> Result<Self, BroadcastError> {
        cfg.validate()?;
        let rect = cfg.rect;
        let full = geometry.full();
        if rect.is_empty() || !full.covers(rect) {
            return Err(flag(
                "--rect",
                format!(
                    "{rect} reaches outside the {}x{} logical grid of harvest mask {:#06x} (or is empty)",
                    full.columns,
                    full.rows,
                    cfg.harvest.bits()
                ),
            ));
        }
        let streams = cfg.streams();
        let (mut words, mut decoded, mut counts) = (Vec::new(), Vec::new(), [0usize; 2]);
        for s in &streams {
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
        Ok(Self {
            cfg: cfg.clone(),
            streams,
            words,
            decoded,
            counts,
        })
    }

    /// Configures the broadcast buffers and writes every job's DRAM data.
    pub fn prepare(&self, session: &mut Session) -> Result<(), SessionError> {
        let cfg = &self.cfg;
        for s in &self.streams {
            session.configure_cb(
                cfg.rect,
                s.cb,
                s.base,
                cfg.page_size,
                cfg.window as u16 * cfg.pages,
            )?;
        }
        fill_dram(session, cfg, &self.streams)
    }

    /// The program of core `core` (row by row in the rectangle) in job `job`, without faults.
    pub fn program(&self, core: usize, job: u32) -> BroadcastProgram {
        let cfg = &self.cfg;
        let mut p = BroadcastProgram::default();
        p.compute.job = job;
        for (i, s) in self.streams.iter().enumerate() {
            let role = Role::mover(hal_noc(s.noc));
            let mover = MoverProgram {
                args: self.words[i][core].words,
                // `validate` bounds blocks by MAX_BLOCKS.
                blocks: cfg.blocks as u16,
                page_size: cfg.page_size,
                dram_base: cfg.dram_base(job, s.id) as u32,
                banks: bank_coordinates(hal_noc(s.noc)),
                stall_before: None,
            };
            if role == Role::Reader {
                p.reader = Some(mover);
            } else {
                p.writer = Some(mover);
            }
            // At most two streams, the capacity.
            let _ = p.compute.streams.push(ComputeStream {
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
    fn command(&self, programs: impl Iterator<Item = BroadcastProgram>) -> CommandSpec {
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
            handler: BROADCAST_HANDLER,
            flags: abi::FLAG_EXCLUSIVE,
            group: cfg.rect,
            wait_limit: cfg.wait_limit,
            programs,
        }
    }

    /// The command of job `job`: one program per core of the rectangle, row by row.
    pub fn spec(&self, job: u32) -> CommandSpec {
        self.command((0..self.cfg.rect.len()).map(|core| self.program(core, job)))
    }

    /// Checks every core's program (job 0's, with the faults: the other jobs differ only in
    /// the job and DRAM address, which the checks do not read).
    fn check_programs(&self) -> Result<(), BroadcastError> {
        for core in 0..self.cfg.rect.len() {
            self.faulty_program(core, 0)
                .check()
                .map_err(|e| BroadcastError::Program {
                    core: self.core(core),
                    error: e,
                })?;
        }
        Ok(())
    }

    /// The rank of logical `core` in each broadcast of the plan: `(broadcast id, rank)`.
    pub fn ranks(&self, core: (u8, u8)) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        for (i, s) in self.streams.iter().enumerate() {
            if let Some((_, a)) = self.words[i]
                .iter()
                .zip(&self.decoded[i])
                .find(|(w, _)| w.core == core)
            {
                if a.included() && (a.rank != 0 || a.receivers > 0) {
                    out.push((s.id, a.rank));
                }
            }
        }
        out
    }

    fn check_faults(&self) -> Result<(), BroadcastError> {
        for f in &self.cfg.faults {
            if !self.cfg.rect.contains(f.core.0, f.core.1) {
                return Err(flag(
                    "--fault",
                    format!(
                        "{}: core {:?} is not in --rect {}",
                        f.kind.name(),
                        f.core,
                        self.cfg.rect
                    ),
                ));
            }
            let stalls = matches!(
                f.kind,
                FaultKind::StallDm | FaultKind::StallCompute | FaultKind::StallSenderCompute
            );
            if stalls && f.block >= self.cfg.blocks {
                return Err(flag(
                    "--fault",
                    format!(
                        "{}: block {} never comes (allowed: 0..{} with --blocks {})",
                        f.kind.name(),
                        f.block,
                        self.cfg.blocks,
                        self.cfg.blocks
                    ),
                ));
            }
            let ranks = self.ranks(f.core);
            let receives = ranks.iter().any(|&(_, r)| r > 0);
            let sends = ranks.iter().any(|&(_, r)| r == 0);
            let needs = match f.kind {
                FaultKind::StallDm
                | FaultKind::StallCompute
                | FaultKind::DropMarker
                | FaultKind::DropValid => (receives, "receives no broadcast"),
                FaultKind::StallSenderCompute => (sends, "sends no broadcast with receivers"),
                FaultKind::BadWords | FaultKind::HostStop => (true, ""),
            };
            if !needs.0 {
                return Err(flag(
                    "--fault",
                    format!("{}: core {:?} {}", f.kind.name(), f.core, needs.1),
                ));
            }
        }
        Ok(())
    }

    /// The program of core `core` in job `job` with the faults applied (they belong to job 0).
    fn faulty_program(&self, core: usize, job: u32) -> BroadcastProgram {
        let mut p = self.program(core, job);
        if job != 0 {
            return p;
        }
        for f in self.cfg.faults.iter().filter(|f| f.core == self.core(core)) {
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
    fn faulty_spec(&self, job: u32) -> CommandSpec {
        self.command((0..self.cfg.rect.len()).map(|core| self.faulty_program(core, job)))
    }

    /// Arms the NoC faults of job 0 in the simulator.
    fn arm(&self, session: &mut Session) {
        for f in &self.cfg.faults {
            let Some(noc0) = session.noc0(f.core) else {
                continue;
            };
            let ranks = self.ranks(f.core);
            let ctrl = abi::CONTROL_BASE as u64;
            let filter = match f.kind {
                // The core's markers: its unicast writes into a DONE-BY table.
                FaultKind::DropMarker => komorebi_sim::TxFilter {
                    kind: Some(komorebi_sim::TxKind::Write),
                    src: Some(noc0),
                    addr: Some(
                        ctrl + area::area(0) as u64
                            ..ctrl + (area::area(1) + area::AREA_BYTES) as u64,
                    ),
                    skip: f.block,
                    ..Default::default()
                },
                // VALID multicasts to the core, of the first broadcast it receives.
                FaultKind::DropValid => {
                    let id = ranks.iter().find(|&&(_, r)| r > 0).map_or(0, |&(id, _)| id);
                    let valid = ctrl + (area::area(id) + area::VALID) as u64;
                    komorebi_sim::TxFilter {
                        kind: Some(komorebi_sim::TxKind::Multicast),
                        dst: Some(noc0),
                        addr: Some(valid..valid + 4),
                        skip: f.block,
                        ..Default::default()
                    }
                }
                _ => continue,
            };
            if let Some(sim) = session.device().simulator() {
                let _ = sim.inject(komorebi_sim::Fault::Transaction {
                    filter,
                    action: komorebi_sim::TxAction::Drop { ack: false },
                });
            }
        }
    }

    /// Runs job `job` through the test feeder's steps (post, wait, report), with job 0's faults.
    pub fn run_job(&self, session: &mut Session, job: u32) -> Result<Report, SessionError> {
        if job == 0 {
            self.arm(session);
        }
        let ticket = session.post(&self.faulty_spec(job))?;
        if job == 0 {
            self.host_stops(session, &ticket)?;
        }
        session.wait(&[&ticket]);
        let report = session.report(&ticket)?;
        if job == 0 {
            if let Some(sim) = session.device().simulator() {
                sim.clear_faults();
            }
        }
        Ok(report)
    }

    /// Job 0's host-stop faults: once the core has seen BLOCK blocks of `ticket`'s command, the
    /// host writes its stop flag.
    fn host_stops(&self, session: &mut Session, ticket: &Ticket) -> Result<(), SessionError> {
        {
            for f in self
                .cfg
                .faults
                .iter()
                .filter(|f| f.kind == FaultKind::HostStop)
            {
                let Some(noc0) = session.noc0(f.core) else {
                    continue;
                };
                // Once the core has seen BLOCK blocks of this command, the host stops it.
                let valids: Vec<u32> = self
                    .ranks(f.core)
                    .iter()
                    .map(|&(id, _)| abi::CONTROL_BASE + area::area(id) + area::VALID)
                    .collect();
                let seq = ticket.sequence as u16;
                let block = f.block;
                let deadline = ticket.deadline;
                session.device().advance(deadline, &mut |peek| {
                    block == 0
                        || valids.iter().any(|&a| {
                            area::marker_count(peek.peek(noc0, a), seq)
                                .is_some_and(|n| n as u32 >= block)
                        })
                });
                session.device().write_l1(
                    noc0,
                    abi::CONTROL_BASE + abi::STOP,
                    &1u32.to_le_bytes(),
                )?;
            }
        }
        Ok(())
    }

    /// Logical coordinates of core `i` of the group (row by row).
    pub fn core(&self, i: usize) -> (u8, u8) {
        let r = self.cfg.rect;
        (
            r.x0 + (i % r.columns as usize) as u8,
            r.y0 + (i / r.columns as usize) as u8,
        )
    }

    /// Broadcasts of A and of W per job.
    pub fn broadcasts(&self) -> [usize; 2] {
        self.counts
    }

    /// Adds what the cores' broadcast areas say of the job just run to `summary`.
    fn account(
        &self,
        session: &Session,
        summary: &mut BroadcastSummary,
    ) -> Result<(), SessionError> {
        let block_bytes = self.cfg.pages as u64 * self.cfg.page_size as u64;
        for (i, s) in self.streams.iter().enumerate() {
            for (core, a) in self.words[i].iter().zip(&self.decoded[i]) {
                let base = area::area(s.id);
                let blocks = session.control_word(core.core, base + area::STATS_BLOCKS)? as u64;
                summary.wait_cycles[s.id as usize] +=
                    session.control_word(core.core, base + area::STATS_WAIT_CYCLES)? as u64;
                if a.rank != 0 {
                    summary.received_bytes += blocks * block_bytes;
                }
            }
        }
        Ok(())
    }
}

/// Runs the program through the test feeder (one job at a time, deterministic);
/// `progress(job)` is called after each job.
pub fn run(
    cfg: &BroadcastConfig,
    progress: impl FnMut(u32),
) -> Result<BroadcastSummary, BroadcastError> {
    run_session(cfg, progress).map(|(summary, _)| summary)
}

fn sim_config(cfg: &BroadcastConfig) -> SimConfig {
    SimConfig {
        harvest: cfg.harvest,
        seed: cfg.seed,
        adversarial: cfg.adversarial,
        trace: cfg.trace.is_some(),
        ..SimConfig::default()
    }
}

impl BroadcastSummary {
    fn empty(cfg: &BroadcastConfig, plan: &BroadcastPlan, timing: &Timing) -> Self {
        Self {
            ok: true,
            jobs: cfg.jobs,
            blocks: cfg.blocks,
            broadcasts: plan.broadcasts(),
            received_bytes: 0,
            checked_bytes: 0,
            cycles: 0,
            micros: 0.0,
            bound_cycles: job_bound(cfg, &plan.decoded, timing) * cfg.jobs as u64,
            achieved_over_bound: 0.0,
            wait_cycles: [0; 2],
            timeouts: 0,
            mismatches: 0,
            giveups: Vec::new(),
            results: Vec::new(),
            violations: Vec::new(),
            dispatch: None,
        }
    }

    /// Adds job `job`'s report.
    fn record(&mut self, job: u32, report: &Report) {
        self.checked_bytes += report.stats.iter().map(|(_, s)| s[2] as u64).sum::<u64>();
        self.timeouts += report.timeout as u32;
        self.mismatches += report.mismatch as u32;
        self.ok &= report.ok;
        self.giveups.extend(report.give_ups.iter().cloned());
        self.results.push(JobResult {
            job,
            ok: report.ok,
            timeout: report.timeout,
        });
    }

    /// Cycles since `start`, the simulator's violations, and the trace (with `extra` events).
    fn close(
        &mut self,
        session: &mut Session,
        cfg: &BroadcastConfig,
        start: u64,
        timing: &Timing,
        extra: Vec<serde_json::Value>,
    ) -> Result<(), BroadcastError> {
        self.cycles = session.device().now() - start;
        self.micros = timing.micros(self.cycles);
        self.achieved_over_bound = if self.cycles == 0 {
            0.0
        } else {
            self.bound_cycles as f64 / self.cycles as f64
        };
        if let Some(sim) = session.device().simulator() {
            self.violations = sim.violations().iter().map(|v| v.to_string()).collect();
            self.ok &= self.violations.is_empty();
            if let (Some(path), Some(mut trace)) = (&cfg.trace, sim.trace_json()) {
                if let Some(events) = trace.get_mut("traceEvents").and_then(|e| e.as_array_mut()) {
                    events.extend(extra);
                }
                let text = serde_json::to_string(&trace)
                    .map_err(|e| BroadcastError::Trace(e.to_string()))?;
                std::fs::write(path, text)
                    .map_err(|e| BroadcastError::Trace(format!("{}: {e}", path.display())))?;
            }
        }
        Ok(())
    }
}

/// Runs the program through the test feeder and hands back the session too, for inspection.
pub fn run_session(
    cfg: &BroadcastConfig,
    mut progress: impl FnMut(u32),
) -> Result<(BroadcastSummary, Session), BroadcastError> {
    cfg.validate()?;
    let sim = sim_config(cfg);
    let timing = sim.timing;
    let mut session = Session::open(Backend::Simulator(sim))?;
    let plan = BroadcastPlan::new(cfg, session.geometry())?;
    plan.check_faults()?;
    plan.check_programs()?;
    plan.prepare(&mut session)?;
    let start = session.device().now();
    let mut summary = BroadcastSummary::empty(cfg, &plan, &timing);
    for job in 0..cfg.jobs {
        let report = plan.run_job(&mut session, job)?;
        plan.account(&session, &mut summary)?;
        summary.record(job, &report);
        progress(job);
    }
    summary.close(&mut session, cfg, start, &timing, Vec::new())?;
    Ok((summary, session))
}

/// The broadcast program as a dispatcher plugin: every job is one exclusive command on the
/// rectangle's group, in job order; the request handler accounts each job's report and the
/// cores' broadcast statistics (read while the job still holds its tiles).
struct BroadcastJobs<'a> {
    plan: &'a BroadcastPlan,
    target: &'a SimTarget,
    progress: &'a (dyn Fn(u32) + Sync),
    summary: BroadcastSummary,
    error: Option<BroadcastError>,
}

impl Plugin for BroadcastJobs<'_> {
    type Work = u32;
    type Message = ();

    fn handle(&mut self, finished: Finished<u32>, _cx: &mut Cx<'_, u32, ()>) {
        let job = finished.work;
        let report = match finished.outcome {
            Outcome::Reported(r) | Outcome::TimedOut(r) => r,
            Outcome::Refused(e) => {
                self.error
                    .get_or_insert(BroadcastError::Dispatch(e.to_string()));
                return;
            }
            Outcome::Abandoned => {
                self.error.get_or_insert(BroadcastError::Dispatch(format!(
                    "job {job} was abandoned: its tiles are held by a command that never finished"
                )));
                return;
            }
        };
        let plan = self.plan.clone();
        let mut summary = self.summary.clone();
        let accounted = self.target.with_session(move |s| {
            if job == 0 {
                if let Some(sim) = s.device().simulator() {
                    sim.clear_faults();
                }
            }
            plan.account(s, &mut summary).map(|()| summary)
        });
        match accounted {
            Ok(Ok(s)) => self.summary = s,
            Ok(Err(e)) | Err(e) => {
                self.error.get_or_insert(e.into());
            }
        }
        self.summary.record(job, &report);
        (self.progress)(job);
    }

    fn assign(&mut self, _slot: &SlotView<'_>, candidates: &[Ready<u32>]) -> Option<usize> {
        // Jobs in order: the lowest job number among the candidates.
        (0..candidates.len()).min_by_key(|&i| *candidates[i].work())
    }

    fn command(&mut self, job: &u32, _group: &GroupInfo) -> CommandSpec {
        self.plan.faulty_spec(*job)
    }
}

/// Runs the program through the dispatcher: the simulator on its own thread, `dispatch`'s
/// workers posting the jobs; `progress(job)` is called after each job. The summary carries the
/// dispatcher's figures, and the trace (if asked for) its per-command slices.
pub fn run_dispatched(
    cfg: &BroadcastConfig,
    dispatch: &DispatchConfig,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<BroadcastSummary, BroadcastError> {
    cfg.validate()?;
    let sim = sim_config(cfg);
    let timing = sim.timing;
    let geometry = layout::Geometry::blackhole(cfg.harvest.bits() as u32)
        .map_err(|e| flag("--harvest", e.to_string()))?;
    let plan = BroadcastPlan::new(cfg, &geometry)?;
    plan.check_faults()?;
    plan.check_programs()?;
    let (p1, p2) = (plan.clone(), plan.clone());
    let mut first = true;
    let hook: PostHook = Box::new(move |s: &mut Session, t: &Ticket| {
        // Job 0 is the first command posted: its host-stop faults act now.
        if std::mem::take(&mut first) {
            let _ = p2.host_stops(s, t);
        }
    });
    let target = SimTarget::spawn(
        move || {
            let mut s = Session::open(Backend::Simulator(sim))?;
            p1.prepare(&mut s)?;
            p1.arm(&mut s);
            Ok(s)
        },
        Some(hook),
    )?;
    let start = target.with_session(|s| s.device().now())?;
    let mut d = Dispatcher::new(&target, geometry.full(), &[cfg.rect], dispatch.clone())
        .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    for job in 0..cfg.jobs {
        d.seed(job, Place::Group(GroupId(0)))
            .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    }
    let result = d
        .run(|_| BroadcastJobs {
            plan: &plan,
            target: &target,
            progress,
            summary: BroadcastSummary::empty(cfg, &plan, &timing),
            error: None,
        })
        .map_err(|e| BroadcastError::Dispatch(e.to_string()))?;
    let mut summary = BroadcastSummary::empty(cfg, &plan, &timing);
    for p in result.plugins {
        if let Some(e) = p.error {
            return Err(e);
        }
        let s = p.summary;
        summary.received_bytes += s.received_bytes;
        summary.checked_bytes += s.checked_bytes;
        summary.wait_cycles[0] += s.wait_cycles[0];
        summary.wait_cycles[1] += s.wait_cycles[1];
        summary.timeouts += s.timeouts;
        summary.mismatches += s.mismatches;
        summary.ok &= s.ok;
        summary.giveups.extend(s.giveups);
        summary.results.extend(s.results);
    }
    summary.results.sort_by_key(|r| r.job);
    summary.ok &= summary.results.len() == cfg.jobs as usize;
    let extra = trace_events(&result.times, target.aiclk_mhz());
    let cfg2 = cfg.clone();
    let closed = target.with_session(move |s| {
        summary
            .close(s, &cfg2, start, &timing, extra)
            .map(|()| summary)
    })?;
    let mut summary = closed?;
    summary.dispatch = Some(result.summary);
    Ok(summary)
}

impl std::fmt::Display for BroadcastSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "broadcast on the simulator: {} jobs of {} blocks; {} A broadcasts (rows, NoC0), {} W broadcasts (columns, NoC1) per job",
            self.jobs, self.blocks, self.broadcasts[0], self.broadcasts[1]
        )?;
        writeln!(f, "  received by multicast: {} bytes", self.received_bytes)?;
        writeln!(f, "  checked by compute:    {} bytes", self.checked_bytes)?;
        writeln!(
            f,
            "  simulated:             {} cycles = {:.1} us at 1350 MHz",
            self.cycles, self.micros
        )?;
        writeln!(
            f,
            "  resource bound:        {} cycles (achieved/bound {:.2})",
            self.bound_cycles, self.achieved_over_bound
        )?;
        writeln!(
            f,
            "  wait cycles:           A {}, W {}",
            self.wait_cycles[0], self.wait_cycles[1]
        )?;
        for v in &self.violations {
            writeln!(f, "  VIOLATION: {v}")?;
        }
        if let Some(d) = &self.dispatch {
            for line in d.to_string().lines() {
                writeln!(f, "  {line}")?;
            }
        }
        for g in &self.giveups {
            writeln!(
                f,
                "  give-up: core ({},{}) {} broadcast {} block {} ({})",
                g.core[0], g.core[1], g.place, g.broadcast, g.block, g.kernel
            )?;
        }
        let verdict = if self.ok {
            "ok: every byte checked"
        } else if self.timeouts > 0 {
            "TIMEOUT"
        } else {
            "DATA MISMATCH"
        };
        write!(
            f,
            "  result: {verdict} ({} timeouts, {} mismatches)",
            self.timeouts, self.mismatches
        )
    }
}
