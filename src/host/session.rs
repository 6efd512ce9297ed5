//! `Session`: one open chip, its grid, and the commands posted to its tiles; `Report`: what a
//! command came to; `Run` and `Feeder`: ways to run commands.
//!
//! A command goes to every tile of its group: the session writes each tile's program words and
//! header into the tile's next free slot and publishes it by writing the slot's index word last.
//! A tile's report is read from the slot's report record once the tile's reported index has
//! reached the command. A command whose tiles do not all report by its deadline, or any of whose
//! kernels gave up, is a **timeout**; its report lists every core's first give-up.
//!
//! The session knows no program: the handlers and the reader of a program's own give-up
//! records ([`ProgramRecords`]) come from whoever opens it (the broadcast's
//! `komorebi::app::broadcast::open_session`). Two things it takes from `komorebi-broadcast`
//! are not the broadcast's: the chip's grid of enabled Tensix tiles (`layout::Geometry`, which
//! lives with the host layout functions that are defined over it, in a `no_std` crate the
//! firmware shares), and the give-up record's operand field, named `broadcast` in the reports
//! and their JSON, which the kernel ABI's records carry for every program.

use std::collections::HashMap;

use komorebi_broadcast::layout::Geometry;
use komorebi_hal::{LogicalRect, LogicalXy, Role, Xy};
use komorebi_kernel::Command;
use komorebi_kernel::abi::{self, KernelGiveUp};
use komorebi_kernel::handler::HandlerSet;
use serde::Serialize;

pub use crate::host::backend::{Backend, DEFAULT_FIRMWARE_DIR};
use crate::host::device::{Advance, ClockKind, Device, Peek};
use crate::host::wrap;

mod error;
mod ticket;
pub use error::SessionError;
pub use ticket::Ticket;

/// One core's program words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileProgram {
    /// The reader's words.
    pub reader: Vec<u32>,
    /// The writer's words.
    pub writer: Vec<u32>,
    /// The compute kernel's words.
    pub compute: Vec<u32>,
}

/// A command to post.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// Handler id.
    pub handler: u16,
    /// Flags (`abi::FLAG_EXCLUSIVE`).
    pub flags: u16,
    /// The group: every core of it gets the command.
    pub group: LogicalRect,
    /// Cycles any single wait may last.
    pub wait_limit: u64,
    /// Cycles the whole command may run, from its post, before the host reports it timed out;
    /// `None`: [`default_budget`] of the wait limit, a backstop for a tile that never reports
    /// (the device's wait limits catch stalls), which a command of many blocks can outrun.
    pub budget: Option<u64>,
    /// One program for every core, or one per core of the group, row by row.
    pub programs: Vec<TileProgram>,
}

/// Until when to let a device run, from cycle `now`, for late commands with `budgets` to go
/// quiet: for good on a device that says when nothing can change (`knows_idle`, the
/// simulator), else one more of the longest budget: a card never says so, and a core that
/// never reports would hold the host for good.
pub fn quiet_deadline(budgets: impl Iterator<Item = u64>, now: u64, knows_idle: bool) -> u64 {
    if knows_idle {
        return u64::MAX;
    }
    now.saturating_add(budgets.max().unwrap_or(0))
}

/// A core's give-up, decoded. (It reads back from its JSON too: ranks of a run over several
/// hosts send theirs to rank 0.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoreGiveUp {
    /// Logical coordinates `[x, y]`.
    pub core: [u8; 2],
    /// Where: `broadcast_done`, `broadcast_valid`, `broadcast_free`, `broadcast_begin`, a
    /// kernel-level name (`compute_timeout`, `data_mismatch`, `not_exclusive`, ...), or
    /// [`ANOTHER_COMMAND`].
    #[serde(rename = "where")]
    pub place: &'static str,
    /// The broadcast it concerned.
    pub broadcast: u8,
    /// The block.
    pub block: u32,
    /// The kernel that recorded it (`reader`, `writer`, `compute`; `broadcast area` for a
    /// broadcast call's record), or [`HOST`] for one the
    /// host found.
    pub kernel: &'static str,
}

impl<'de> serde::Deserialize<'de> for CoreGiveUp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Read {
            core: [u8; 2],
            #[serde(rename = "where")]
            place: String,
            broadcast: u8,
            block: u32,
            kernel: String,
        }
        let r = Read::deserialize(d)?;
        Ok(Self {
            core: r.core,
            place: static_name(r.place),
            broadcast: r.broadcast,
            block: r.block,
            kernel: static_name(r.kernel),
        })
    }
}

/// A name read back from JSON as the `&'static str` the records hold: each distinct name is
/// kept once for the process (the names are a fixed set of a few dozen: nothing grows).
fn static_name(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&kept) = names.get(name.as_str()) {
        return kept;
    }
    let kept: &'static str = Box::leak(name.into_boxed_str());
    names.insert(kept);
    kept
}

/// Give-ups a program records in control-block words of its own, beside the kernels' records.
/// A [`Session`] knows no program: whoever opens it with a program's handlers says how to read
/// that program's records (the broadcast's are `komorebi::app::broadcast::BroadcastRecords`).
pub trait ProgramRecords {
    /// Appends to `out` the give-ups of command `sequence` that the tile of logical `core`
    /// holds, reading its control block with `word(offset)`.
    fn give_ups(
        &self,
        core: [u8; 2],
        sequence: u32,
        word: &mut dyn FnMut(u32) -> Result<u32, SessionError>,
        out: &mut Vec<CoreGiveUp>,
    ) -> Result<(), SessionError>;

    /// Whether a kernel's own give-up `give_up` repeats one of these records, so the report
    /// leaves it out.
    fn repeats(&self, give_up: &KernelGiveUp) -> bool;
}

/// What a command came to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The command's sequence number.
    pub sequence: u32,
    /// Every core reported, with status 0.
    pub ok: bool,
    /// Some core did not report by the deadline, or some kernel gave up.
    pub timeout: bool,
    /// Some core refused the command.
    pub refused: bool,
    /// Some compute kernel found bytes other than the ones sent.
    pub mismatch: bool,
    /// Cores that did not report by the deadline (logical).
    pub unreported: Vec<[u8; 2]>,
    /// Every core's first give-ups.
    pub give_ups: Vec<CoreGiveUp>,
    /// Per core, the three kernels' statistics.
    #[serde(skip)]
    pub stats: Vec<(LogicalXy, [u32; 3])>,
    /// Device cycles from posting to the last report (or the deadline).
    pub cycles: u64,
    /// Device cycle at which the first core took the command (0 if none reported).
    pub started_at: u64,
    /// Device cycle at which the last reporting core wrote its report (0 if none reported).
    pub finished_at: u64,
}

impl Report {
    /// A successful report of command `sequence` with nothing else in it (no core listed, no
    /// statistics, no cycles): what a device that checks nothing reports, and the base the
    /// session decodes a real report onto.
    pub fn success(sequence: u32) -> Self {
        Self {
            sequence,
            ok: true,
            timeout: false,
            refused: false,
            mismatch: false,
            unreported: Vec::new(),
            give_ups: Vec::new(),
            stats: Vec::new(),
            cycles: 0,
            started_at: 0,
            finished_at: 0,
        }
    }
}

#[derive(Clone, Debug)]
struct TileState {
    logical: LogicalXy,
    noc0: Xy,
    posted: u32,
    reported: u32,
}

/// One open chip.
pub struct Session {
    device: Box<dyn Device>,
    records: Box<dyn ProgramRecords>,
    geometry: Geometry,
    tiles: Vec<TileState>,
    by_logical: HashMap<LogicalXy, usize>,
    next_sequence: u32,
    /// The low 16 bits of every command's sequence that has not been seen to succeed: taken
    /// when the command is posted, before any tile can see it, and given back only when a
    /// report finds every tile reported with no failure and no give-up. A command that fails,
    /// is published on some tiles only, or is never reported may leave words tagged with them
    /// in its tiles' memory (the broadcast handler's VALID and DONE words carry them, and only
    /// a command that completes clears them), which a later command with the same low bits
    /// would count as its own; no later command gets them while they are held.
    held_low: std::collections::HashSet<u16>,
    /// Its id, which its tickets carry (`Ticket::session`): unique in the process.
    id: u64,
}

/// The id the next [`Session`] gets.
static NEXT_SESSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("tiles", &self.tiles.len())
            .field("next_sequence", &self.next_sequence)
            .finish()
    }
}

/// A command's budget when its [`CommandSpec`] gives none: 64 times its wait limit, at least
/// 64,000,000 cycles. The device-side wait limits catch stalls; this only catches a tile that
/// never reports.
pub fn default_budget(wait_limit: u64) -> u64 {
    wait_limit.max(1_000_000).saturating_mul(64)
}

impl Session {
    /// Opens `backend` with the handler set `handlers()` makes (a backend that runs firmware
    /// images runs the handlers the images carry instead), learns the grid (harvesting, and the
    /// fused DRAM bank) and prepares every tile's control block. `records` reads the give-ups
    /// the program keeps in words of its own, for the reports.
    pub fn open_with<H, F>(
        backend: Backend,
        handlers: F,
        records: Box<dyn ProgramRecords>,
    ) -> Result<Self, SessionError>
    where
        H: HandlerSet + 'static,
        F: Fn() -> H + 'static,
    {
        Self::with_device(backend.open(handlers)?, records)
    }

    /// A session on `device`, opened by the caller: one of the backends' devices wrapped (to
    /// inject faults, to log its traffic) or a device of the caller's own. Learns the grid
    /// (harvesting, and the fused DRAM bank) as [`open_with`](Self::open_with) does.
    pub fn with_device(
        device: Box<dyn Device>,
        records: Box<dyn ProgramRecords>,
    ) -> Result<Self, SessionError> {
        let geometry =
            crate::chip::geometry(device.chip(), device.harvest_word(), device.fused_dram())?;
        let mut tiles = Vec::new();
        let mut by_logical = HashMap::new();
        for x in 0..geometry.columns() {
            for y in 0..geometry.rows() {
                let Some(noc0) = geometry.noc0((x, y)).and_then(|(x, y)| Xy::new(x, y).ok()) else {
                    continue;
                };
                by_logical.insert(LogicalXy::new(x, y), tiles.len());
                tiles.push(TileState {
                    logical: LogicalXy::new(x, y),
                    noc0,
                    posted: 0,
                    reported: 0,
                });
            }
        }
        Ok(Self {
            device,
            records,
            geometry,
            tiles,
            by_logical,
            next_sequence: 1,
            held_low: Default::default(),
            id: NEXT_SESSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// The logical grid.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Which chip the session runs on.
    pub fn chip(&self) -> crate::chip::ChipKind {
        self.device.chip()
    }

    /// The harvest mask, as the control block's harvest word carries it (Tensix columns on
    /// Blackhole, rows on Wormhole).
    pub fn harvest_word(&self) -> u32 {
        self.device.harvest_word()
    }

    /// The chip's fused DRAM bank, if it has one.
    pub fn fused_dram(&self) -> Option<u8> {
        self.geometry.fused_dram()
    }

    /// What the device's clock counts (`Device::clock_kind`).
    pub fn clock_kind(&self) -> ClockKind {
        self.device.clock_kind()
    }

    /// The device the session drives.
    pub fn device(&mut self) -> &mut dyn Device {
        self.device.as_mut()
    }

    /// NoC0 coordinates of logical `core`; `None` outside the grid.
    pub fn noc0(&self, core: LogicalXy) -> Option<Xy> {
        self.by_logical.get(&core).map(|&i| self.tiles[i].noc0)
    }

    fn group_tiles(&self, group: LogicalRect) -> Result<Vec<usize>, SessionError> {
        let full = self.geometry.full();
        if group.is_empty() || !full.covers(group) {
            return Err(SessionError::Group {
                group,
                columns: full.columns,
                rows: full.rows,
            });
        }
        let mut out = Vec::with_capacity(group.len());
        for y in group.y0..group.y0 + group.rows {
            for x in group.x0..group.x0 + group.columns {
                out.push(self.by_logical[&LogicalXy::new(x, y)]);
            }
        }
        Ok(out)
    }

    /// Configures circular buffer `index` on every core of `group`: the device's buffer, and
    /// the entry of the control block's buffer table that firmware builds its handle from. A
    /// buffer must lie in L1 above the firmware ([`abi::FIRMWARE_L1_END`]), its base and page
    /// size multiples of [`abi::BUFFER_ALIGN`]: anything else is [`SessionError::Buffer`], and
    /// the firmware would refuse its table entry too. `index` is
    /// below [`abi::CB_ENTRIES`] ([`SessionError::BufferIndex`] otherwise).
    pub fn configure_cb(
        &mut self,
        group: LogicalRect,
        index: u8,
        base: u32,
        page_size: u32,
        pages: u16,
    ) -> Result<(), SessionError> {
        if u32::from(index) >= abi::CB_ENTRIES {
            return Err(SessionError::BufferIndex {
                index,
                count: abi::CB_ENTRIES,
            });
        }
        let end = crate::chip::l1_size(self.chip());
        if !abi::buffer_fits(base, page_size, u32::from(pages), end) {
            return Err(SessionError::Buffer {
                index,
                base,
                page_size,
                pages,
                first: abi::FIRMWARE_L1_END,
                end,
            });
        }
        for t in self.group_tiles(group)? {
            let noc0 = self.tiles[t].noc0;
            self.device
                .configure_cb(noc0, index, base, page_size, pages)?;
            // The table entry firmware builds its handle from.
            let entry: Vec<u8> = [base, page_size, pages as u32, 0]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            let at = abi::CONTROL_BASE + abi::CB_TABLE + index as u32 * abi::CB_ENTRY_BYTES;
            self.device.write_l1(noc0, at, &entry)?;
        }
        Ok(())
    }

    /// Reads the word at control-block offset `offset` of logical `core`: a multiple of 4 below
    /// [`abi::CONTROL_BYTES`], else refused.
    pub fn control_word(&self, core: LogicalXy, offset: u32) -> Result<u32, SessionError> {
        let noc0 = self.noc0(core).ok_or(SessionError::Group {
            group: LogicalRect::new(core.x, core.y, 1, 1),
            columns: self.geometry.columns(),
            rows: self.geometry.rows(),
        })?;
        if !offset.is_multiple_of(4) || offset >= abi::CONTROL_BYTES {
            return Err(SessionError::ControlOffset { offset });
        }
        let mut b = [0; 4];
        self.device
            .read_l1(noc0, abi::CONTROL_BASE + offset, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// The index `ticket`'s command has on logical `core`, if the core is in its group (and
    /// the ticket its own post's).
    pub fn command_index(&self, ticket: &Ticket, core: LogicalXy) -> Option<u32> {
        if ticket.session != self.id {
            return None;
        }
        let t = *self.by_logical.get(&core)?;
        ticket.tiles.iter().find(|&&(u, _)| u == t).map(|&(_, i)| i)
    }

    /// Posts `spec` to every core of its group.
    pub fn post(&mut self, spec: &CommandSpec) -> Result<Ticket, SessionError> {
        let tiles = self.group_tiles(spec.group)?;
        if spec.programs.len() != 1 && spec.programs.len() != tiles.len() {
            return Err(SessionError::Programs {
                expected: tiles.len(),
                got: spec.programs.len(),
            });
        }
        for &t in &tiles {
            let s = &self.tiles[t];
            if s.posted.wrapping_sub(s.reported) >= abi::SLOTS {
                return Err(SessionError::SlotsFull { core: s.logical });
            }
        }
        let sequence = self.free_sequence();
        // Every tile's command is made (and its words checked) before the first is written: a
        // refused post changes no tile. Published on some tiles only, a command would run
        // there while its refusal frees the group for the next one.
        let mut commands = Vec::with_capacity(tiles.len());
        for (i, &t) in tiles.iter().enumerate() {
            let program = &spec.programs[if spec.programs.len() == 1 { 0 } else { i }];
            let index = self.tiles[t].posted.wrapping_add(1);
            let command = Command::new(
                index,
                sequence,
                spec.handler,
                spec.flags,
                spec.group,
                spec.wait_limit,
            )
            .with_words(&program.reader, &program.writer, &program.compute)
            .ok_or(SessionError::TooManyWords {
                core: self.tiles[t].logical,
                words: program.reader.len() + program.writer.len() + program.compute.len(),
                max: abi::MAX_PROGRAM_WORDS,
            })?;
            commands.push((t, index, command));
        }
        self.next_sequence = sequence.wrapping_add(1).max(1);
        // Held from now: a tile may take the command as soon as its index word lands.
        self.held_low.insert(sequence as u16);
        // Before the first index word: on a card a tile takes its command as soon as that word
        // lands, and its record's start must not read as earlier than the posting cycle.
        let now = self.device.now();
        // Every tile's words first, then the index words that publish them: a device error
        // while the words are written (most of the bytes) leaves the command published nowhere.
        for &(t, index, ref command) in &commands {
            let noc0 = self.tiles[t].noc0;
            let (header, words) = command.slot_words();
            let slot = abi::CONTROL_BASE + abi::slot_of(index);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.device
                .write_l1(noc0, slot + 4 * abi::SLOT_HEADER_WORDS as u32, &bytes)?;
            let head: Vec<u8> = header[1..].iter().flat_map(|w| w.to_le_bytes()).collect();
            self.device.write_l1(noc0, slot + 4, &head)?;
        }
        // The command on the cores in `posted`: all of them, or those that took it.
        let ticket = |posted| Ticket {
            session: self.id,
            sequence,
            group: spec.group,
            exclusive: spec.flags & abi::FLAG_EXCLUSIVE != 0,
            tiles: posted,
            posted_at: now,
            deadline: now.saturating_add(
                spec.budget
                    .unwrap_or_else(|| default_budget(spec.wait_limit)),
            ),
        };
        let mut posted: Vec<(usize, u32)> = Vec::with_capacity(tiles.len());
        for (t, index, _) in commands {
            let noc0 = self.tiles[t].noc0;
            let slot = abi::CONTROL_BASE + abi::slot_of(index);
            // The index word last: it publishes the command, so every word before it must
            // have landed (on a card, a relaxed window reorders writes to one tile).
            let published = self
                .device
                .publish_barrier(noc0)
                .and_then(|()| self.device.write_l1(noc0, slot, &index.to_le_bytes()));
            if let Err(error) = published {
                if posted.is_empty() {
                    return Err(error.into());
                }
                // The tiles before this one run the command: say which, so that no caller takes
                // their slots and tiles for free.
                return Err(SessionError::PartlyPublished {
                    error,
                    published: posted.iter().map(|&(u, _)| self.tiles[u].logical).collect(),
                    cores: tiles.len(),
                    ticket: Box::new(ticket(posted)),
                });
            }
            self.tiles[t].posted = index;
            posted.push((t, index));
        }
        Ok(ticket(posted))
    }

    /// [`quiet_deadline`] for `tickets` on the device this [`Session`] owns, from now.
    pub fn quiet_deadline(&self, tickets: &[&Ticket]) -> u64 {
        let budgets = tickets.iter().map(|t| t.budget());
        quiet_deadline(budgets, self.device.now(), self.device.knows_idle())
    }

    /// Refuses tickets of which one another `Session` posted.
    fn own(&self, tickets: &[&Ticket]) -> Result<(), SessionError> {
        match tickets.iter().find(|t| t.session != self.id) {
            None => Ok(()),
            Some(t) => Err(SessionError::ForeignTicket {
                sequence: t.sequence,
            }),
        }
    }

    /// Lets the device run until every core of every ticket has reported, or the earliest
    /// ticket's deadline. Refuses, before running, a ticket another session posted.
    pub fn wait(&mut self, tickets: &[&Ticket]) -> Result<Advance, SessionError> {
        self.own(tickets)?;
        let deadline = tickets.iter().map(|t| t.deadline).min().unwrap_or(0);
        let mut pending: Vec<(Xy, u32)> = tickets.iter().flat_map(|t| self.watch(t)).collect();
        Ok(self.device.advance(deadline, &mut |peek| {
            while let Some(&(tile, index)) = pending.last() {
                if reported(peek, tile, index) {
                    pending.pop();
                } else {
                    return false;
                }
            }
            true
        }))
    }

    /// Lets the device run until every core of at least one of `tickets` has reported, or cycle
    /// `deadline` ([`wait`](Self::wait)'s refusals). With no tickets, returns at once.
    pub fn wait_any(
        &mut self,
        tickets: &[&Ticket],
        deadline: u64,
    ) -> Result<Advance, SessionError> {
        self.own(tickets)?;
        if tickets.is_empty() {
            return Ok(Advance::Done);
        }
        let watched: Vec<Vec<(Xy, u32)>> =
            tickets.iter().map(|t| self.watch(t).collect()).collect();
        Ok(self.device.advance(deadline, &mut |peek| {
            watched
                .iter()
                .any(|w| w.iter().all(|&(tile, index)| reported(peek, tile, index)))
        }))
    }

    /// Whether every core of `ticket` has reported it (the tiles are quiet again). When all
    /// have, their command slots are free for the next posts, as [`report`](Self::report)
    /// frees them: a command that reports only after its deadline (read as overdue, then quiet)
    /// must not keep its slots taken for good. Not before all have: a tile's slot freed early
    /// could take a command whose record overwrites this one's before it is read.
    pub fn is_reported(&mut self, ticket: &Ticket) -> Result<bool, SessionError> {
        self.own(&[ticket])?;
        for &(t, index) in &ticket.tiles {
            let mut b = [0; 4];
            self.device.read_l1(
                self.tiles[t].noc0,
                abi::CONTROL_BASE + abi::REPORT_INDEX,
                &mut b,
            )?;
            if !wrap::at_or_after(u32::from_le_bytes(b), index) {
                return Ok(false);
            }
        }
        for &(t, index) in &ticket.tiles {
            wrap::raise(&mut self.tiles[t].reported, index);
        }
        Ok(true)
    }

    /// `(NoC0 tile, index)` of every core of `ticket`.
    fn watch<'t>(&'t self, ticket: &'t Ticket) -> impl Iterator<Item = (Xy, u32)> + 't {
        ticket
            .tiles
            .iter()
            .map(|&(i, index)| (self.tiles[i].noc0, index))
    }

    /// The sequence the next command gets: `next_sequence`, or the first after it (never 0)
    /// whose low 16 bits are not held (`held_low`; were all 65,536 held, which takes as many
    /// commands failed or in flight, it would stop skipping).
    fn free_sequence(&self) -> u32 {
        let mut sequence = self.next_sequence;
        for _ in 0..=u16::MAX {
            if !self.held_low.contains(&(sequence as u16)) {
                break;
            }
            sequence = sequence.wrapping_add(1).max(1);
        }
        sequence
    }

    /// Reads and decodes the report of `ticket` as it stands now.
    pub fn report(&mut self, ticket: &Ticket) -> Result<Report, SessionError> {
        self.own(&[ticket])?;
        let now = self.device.now();
        let mut r = Report {
            cycles: now.saturating_sub(ticket.posted_at),
            ..Report::success(ticket.sequence)
        };
        // The record's clock words are the low 32 bits of the device clock; a command runs for
        // far less than 2^32 cycles (3 s at 1.35 GHz), so they extend around the posting cycle.
        let extend = |low: u32| wrap::extend_clock(ticket.posted_at, low);
        for &(t, index) in &ticket.tiles {
            let (logical, noc0) = (self.tiles[t].logical, self.tiles[t].noc0);
            let word = |dev: &dyn Device, offset: u32| -> Result<u32, SessionError> {
                let mut b = [0; 4];
                dev.read_l1(noc0, abi::CONTROL_BASE + offset, &mut b)?;
                Ok(u32::from_le_bytes(b))
            };
            let record = abi::record_of(index);
            let reported = wrap::at_or_after(word(self.device.as_ref(), abi::REPORT_INDEX)?, index)
                && word(self.device.as_ref(), record + abi::RECORD_INDEX)? == index;
            // The program's own records of this command.
            let mut read = |offset| word(self.device.as_ref(), offset);
            self.records.give_ups(
                [logical.x, logical.y],
                ticket.sequence,
                &mut read,
                &mut r.give_ups,
            )?;
            if !reported {
                r.unreported.push([logical.x, logical.y]);
                continue;
            }
            wrap::raise(&mut self.tiles[t].reported, index);
            // The tile ran another command under this index than the one posted (an index
            // posted again after a publish that failed yet landed, so the tile's count did not
            // move; or words it read half-written): this command did not run there.
            if word(self.device.as_ref(), record + abi::RECORD_SEQUENCE)? != ticket.sequence {
                r.refused = true;
                r.give_ups.push(CoreGiveUp {
                    core: [logical.x, logical.y],
                    place: ANOTHER_COMMAND,
                    broadcast: 0,
                    block: 0,
                    kernel: HOST,
                });
                continue;
            }
            let started = extend(word(self.device.as_ref(), record + abi::RECORD_STARTED)?);
            let finished = extend(word(self.device.as_ref(), record + abi::RECORD_FINISHED)?);
            r.started_at = if r.started_at == 0 {
                started
            } else {
                r.started_at.min(started)
            };
            r.finished_at = r.finished_at.max(finished);
            let status = word(self.device.as_ref(), record + abi::RECORD_STATUS)?;
            r.timeout |= status & abi::STATUS_GAVE_UP != 0;
            r.refused |= status & abi::STATUS_REFUSED != 0;
            r.mismatch |= status & abi::STATUS_MISMATCH != 0;
            let mut stats = [0u32; 3];
            for role in Role::ALL {
                stats[role as usize] = word(
                    self.device.as_ref(),
                    abi::kernel_word(record + abi::RECORD_STAT, role),
                )?;
                let gw = word(
                    self.device.as_ref(),
                    abi::kernel_word(record + abi::RECORD_GIVE_UP, role),
                )?;
                let block = word(
                    self.device.as_ref(),
                    abi::kernel_word(record + abi::RECORD_GIVE_UP_BLOCK, role),
                )?;
                // Give-ups the program's records hold already are left out.
                if let Some(g) = KernelGiveUp::from_words(gw, block)
                    && !self.records.repeats(&g)
                {
                    r.give_ups.push(CoreGiveUp {
                        core: [logical.x, logical.y],
                        place: g.code.name(),
                        broadcast: g.broadcast,
                        block: g.block,
                        kernel: role.name(),
                    });
                }
            }
            r.stats.push((logical, stats));
        }
        r.timeout |= !r.unreported.is_empty();
        r.ok = !r.timeout && !r.refused && !r.mismatch;
        if r.ok && r.give_ups.is_empty() {
            self.held_low.remove(&(ticket.sequence as u16));
        }
        Ok(r)
    }
}

/// The give-up place of a core whose report of a command's index names another sequence: the
/// tile ran another command under that index (see [`Session::report`]).
pub const ANOTHER_COMMAND: &str = "another_command";

/// The "kernel" of a give-up the host found rather than a kernel recorded ([`ANOTHER_COMMAND`]).
pub const HOST: &str = "host";

/// Whether the tile at NoC0 `tile` has reported its command `index`.
fn reported(peek: &dyn Peek, tile: Xy, index: u32) -> bool {
    wrap::at_or_after(
        peek.peek(tile, abi::CONTROL_BASE + abi::REPORT_INDEX),
        index,
    )
}

#[cfg(test)]
mod tests {
    use crate::app::broadcast::{
        BroadcastConfig, BroadcastPlan, FaultKind, FaultSpec, open_session,
    };
    use crate::host::backend::Backend;
    use komorebi_hal::LogicalRect;

    #[test]
    fn a_failed_command_s_low_sequence_bits_are_never_given_again() {
        // A column whose receiver (2, 5) stalls in job 0: the sender and the other receivers
        // give up with VALID and DONE words tagged with the command's low 16 bits left in
        // their areas. 65,536 sequences later job 1 would take them as its own (a receiver
        // seeing block 0 announced before the sender cast it); the session skips that value.
        let cfg = BroadcastConfig {
            rect: LogicalRect::new(2, 0, 1, 10),
            rows: false,
            blocks: 8,
            pages: 2,
            page_size: 256,
            jobs: 2,
            wait_limit: Some(200_000),
            faults: vec![FaultSpec {
                kind: FaultKind::StallDm,
                core: (2, 5).into(),
                block: 3,
            }],
            ..BroadcastConfig::default()
        };
        let mut s = open_session(Backend::Simulator(komorebi_sim::SimConfig::default())).unwrap();
        let plan = BroadcastPlan::per_job(&cfg, s.geometry()).unwrap();
        plan.prepare(&mut s).unwrap();
        let failed = s.next_sequence;
        let crate::app::broadcast::JobRun { report, quiet, .. } = plan.run_job(&mut s, 0).unwrap();
        assert!(report.timeout && quiet, "{report:?}");
        assert!(s.held_low.contains(&(failed as u16)));
        // Numbering has gone round: the next sequence has the failed one's low bits.
        s.next_sequence = failed + 65_536;
        let report = plan.run_job(&mut s, 1).unwrap().report;
        assert!(report.ok, "{report:?}");
        assert_eq!(s.next_sequence, failed + 65_538, "one sequence skipped");
        // The command that succeeded gave its low bits back; the failed one keeps them.
        assert_eq!(s.held_low.len(), 1);
        assert!(s.held_low.contains(&(failed as u16)));
        // A command is held from its post, before any tile reports (one published on some
        // tiles only, or never reported, stays held).
        plan.write_job_data(&mut s, 2).unwrap();
        let ticket = s.post(&plan.spec(2)).unwrap();
        assert!(s.held_low.contains(&(ticket.sequence as u16)));
        s.wait(&[&ticket]).unwrap();
        assert!(s.report(&ticket).unwrap().ok);
        assert!(!s.held_low.contains(&(ticket.sequence as u16)));
    }
}
