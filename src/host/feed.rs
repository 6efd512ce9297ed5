//! The two ways a caller runs commands on a [`Session`]: one at a time ([`Feeder`]), or as a
//! batch posted as slots and exclusivity allow ([`Run`]).

use komorebi_hal::{LogicalRect, LogicalXy};
use komorebi_kernel::abi;

use crate::host::session::{CommandSpec, Report, Session, SessionError, Ticket, TileProgram};

/// Runs commands one at a time: post, wait for the report, decode it.
#[derive(Debug)]
pub struct Feeder<'s> {
    session: &'s mut Session,
}

impl<'s> Feeder<'s> {
    /// A feeder on `session`.
    pub fn new(session: &'s mut Session) -> Self {
        Self { session }
    }

    /// The session.
    pub fn session(&mut self) -> &mut Session {
        self.session
    }

    /// Runs one command to its report.
    pub fn run(&mut self, spec: &CommandSpec) -> Result<Report, SessionError> {
        let ticket = self.session.post(spec)?;
        self.session.wait(&[&ticket])?;
        self.session.report(&ticket)
    }

    /// Runs every command in turn and checks each report with `check`; returns the reports, or
    /// the index and message of the first that fails its check.
    pub fn run_checked(
        &mut self,
        specs: &[CommandSpec],
        mut check: impl FnMut(usize, &Report) -> Result<(), String>,
    ) -> Result<Vec<Report>, (usize, String)> {
        let mut out = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let report = self.run(spec).map_err(|e| (i, e.to_string()))?;
            check(i, &report).map_err(|m| (i, m))?;
            out.push(report);
        }
        Ok(out)
    }
}

/// A batch of commands with one wait limit: posted as soon as slots and exclusivity allow,
/// reports collected as they come.
#[derive(Debug)]
pub struct Run<'s> {
    session: &'s mut Session,
    wait_limit: u64,
    in_flight: Vec<Ticket>,
    /// Commands reported as timed out (or published on some of their cores only) whose cores
    /// have not all reported yet: they may still run, so they still hold their tiles (and
    /// those cores' command slots) against overlapping commands.
    late: Vec<Late>,
    reports: Vec<Report>,
}

/// A command of a [`Run`] that may still run after its report.
#[derive(Debug)]
struct Late {
    ticket: Ticket,
    /// The cores that had not reported.
    unreported: Vec<[u8; 2]>,
    /// Published on those cores only (`SessionError::PartlyPublished`): it holds them, not its
    /// whole group.
    partial: bool,
}

impl Late {
    /// Whether a command on `group` (with `exclusive`) may not be posted while this one runs.
    fn blocks(&self, group: LogicalRect, exclusive: bool) -> bool {
        if !(self.ticket.exclusive || exclusive) {
            return false;
        }
        match self.partial {
            true => self.unreported.iter().any(|&[x, y]| group.contains(x, y)),
            false => self.ticket.group.overlaps(group),
        }
    }
}

impl<'s> Run<'s> {
    /// A run on `session` whose commands wait at most `wait_limit` cycles per wait.
    pub fn new(session: &'s mut Session, wait_limit: u64) -> Self {
        Self {
            session,
            wait_limit,
            in_flight: Vec::new(),
            late: Vec::new(),
            reports: Vec::new(),
        }
    }

    fn collect_oldest(&mut self) -> Result<(), SessionError> {
        let Some(t) = self.in_flight.first() else {
            return Ok(());
        };
        self.session.wait(&[t])?;
        let r = self.session.report(t)?;
        let t = self.in_flight.remove(0);
        if !r.unreported.is_empty() {
            self.late.push(Late {
                ticket: t,
                unreported: r.unreported.clone(),
                partial: false,
            });
        }
        self.reports.push(r);
        Ok(())
    }

    /// Waits for the late commands that `group` (with `exclusive`) may not overlap, or whose
    /// cores' command slots a post found full (`full`): each for one more of its budgets
    /// ([`Session::quiet_deadline`]; for good on the simulator). One still running refuses the
    /// submit ([`SessionError::StillRunning`]).
    fn settle_late(
        &mut self,
        group: LogicalRect,
        exclusive: bool,
        full: Option<LogicalXy>,
    ) -> Result<(), SessionError> {
        let mut i = 0;
        while i < self.late.len() {
            let late = &self.late[i];
            let blocks = late.blocks(group, exclusive)
                || full.is_some_and(|c| late.unreported.contains(&[c.x, c.y]));
            if !blocks {
                i += 1;
                continue;
            }
            let t = &late.ticket;
            if !self.session.is_reported(t)? {
                let deadline = self.session.quiet_deadline(&[t]);
                self.session.wait_any(&[t], deadline)?;
            }
            if !self.session.is_reported(t)? {
                return Err(SessionError::StillRunning {
                    sequence: t.sequence,
                    group: t.group,
                    cores: late
                        .unreported
                        .iter()
                        .map(|&[x, y]| LogicalXy::new(x, y))
                        .collect(),
                });
            }
            self.late.remove(i);
        }
        Ok(())
    }

    /// Submits a command (handler, flags, group, programs); waits for earlier commands first
    /// when an overlapping exclusive one is in flight or the cores' slots are full. Returns the
    /// command's sequence number.
    pub fn submit(
        &mut self,
        handler: u16,
        flags: u16,
        group: LogicalRect,
        programs: Vec<TileProgram>,
    ) -> Result<u32, SessionError> {
        let exclusive = flags & abi::FLAG_EXCLUSIVE != 0;
        while self
            .in_flight
            .iter()
            .any(|t| (t.exclusive || exclusive) && t.group.overlaps(group))
        {
            self.collect_oldest()?;
        }
        self.settle_late(group, exclusive, None)?;
        let spec = CommandSpec {
            handler,
            flags,
            group,
            wait_limit: self.wait_limit,
            budget: None,
            programs,
        };
        loop {
            match self.session.post(&spec) {
                Err(SessionError::SlotsFull { .. }) if !self.in_flight.is_empty() => {
                    self.collect_oldest()?
                }
                // Only late commands hold the slots: wait for the ones on that core.
                Err(SessionError::SlotsFull { core }) if !self.late.is_empty() => {
                    let before = self.late.len();
                    self.settle_late(group, exclusive, Some(core))?;
                    if self.late.len() == before {
                        return Err(SessionError::SlotsFull { core });
                    }
                }
                // The cores that took it run it: it holds them as a late command does.
                Err(e @ SessionError::PartlyPublished { .. }) => {
                    if let SessionError::PartlyPublished {
                        published, ticket, ..
                    } = &e
                    {
                        self.late.push(Late {
                            ticket: (**ticket).clone(),
                            unreported: published.iter().map(|c| [c.x, c.y]).collect(),
                            partial: true,
                        });
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
                Ok(t) => {
                    let seq = t.sequence;
                    self.in_flight.push(t);
                    return Ok(seq);
                }
            }
        }
    }

    /// Waits for every command in flight and returns all reports, in submission order.
    pub fn finish(mut self) -> Result<Vec<Report>, SessionError> {
        while !self.in_flight.is_empty() {
            self.collect_oldest()?;
        }
        Ok(self.reports)
    }
}
