//! The plugin: the VMS split of a scheduling policy into a **request handler** (what a finished
//! command means) and an **assigner** (which ready command goes into an empty slot).
//!
//! Each worker thread owns one plugin instance and calls it sequentially (`&mut self`), so plugin
//! code needs no locks, as in VMS, but without VMS's one global master lock: a plugin instance
//! sees the commands of its own shard of groups. Instances talk to each other with messages
//! ([`Cx::send`]), which the receiving instance handles in [`Plugin::receive`], again on its own
//! thread.

use komorebi_hal::LogicalRect;

use super::config::GroupId;
use super::measure::CommandTimes;
use crate::host::session::{CommandSpec, Report, SessionError};

/// Where a ready command may run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Only on this group; only its owner's worker posts it, so it is never stolen.
    Group(GroupId),
    /// On any group whose assigner takes it; it waits in a work-stealing queue, so an idle
    /// worker may take it (never once it is in flight).
    Any,
    /// Preferably on this group (its data is there): it waits among the stealable commands of
    /// the group's owner, whose assigner sees it first, but an idle worker may still take it
    /// for a group of its own, as with [`Place::Any`].
    Near(GroupId),
}

impl Place {
    /// The group it names, if it names one.
    pub fn group(self) -> Option<GroupId> {
        match self {
            Place::Group(g) | Place::Near(g) => Some(g),
            Place::Any => None,
        }
    }
}

/// A command that is ready: its plugin payload and where it may run.
#[derive(Debug)]
pub struct Ready<W> {
    pub(crate) work: W,
    pub(crate) place: Place,
    pub(crate) id: u64,
    /// Raw host clock ticks when it was made ready (nanoseconds only once it is handled).
    pub(crate) queued: u64,
    /// Whether a worker took it from another worker's deque (work stealing): not a seed taken
    /// from the shared queue, nor a follow-up handed to its group's worker.
    pub(crate) stolen: bool,
}

impl<W> Ready<W> {
    /// The plugin's payload.
    pub fn work(&self) -> &W {
        &self.work
    }

    /// Where it may run.
    pub fn place(&self) -> Place {
        self.place
    }

    /// Its id, unique in the run.
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// One of the dispatcher's groups: a rectangle of logical cores of one chip, and the worker
/// owning it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Its id (its index in the list the dispatcher was given).
    pub id: GroupId,
    /// The chip whose cores it covers (an index into the dispatcher's chips; 0 with one).
    pub chip: usize,
    /// Its cores, on its chip's logical grid.
    pub rect: LogicalRect,
    /// The worker that owns it (its shard of the groups).
    pub worker: usize,
}

/// An empty scheduling slot offered to the assigner.
#[derive(Debug)]
pub struct SlotView<'a> {
    /// The slot's group.
    pub group: &'a GroupInfo,
    /// The slot's index in the group (`0..depth`).
    pub slot: usize,
    /// Commands of this group in flight now.
    pub in_flight: usize,
}

/// What became of a command.
#[derive(Debug)]
pub enum Outcome {
    /// Every core reported and no kernel gave up; `report.ok` is false only if some core
    /// refused the command (`report.refused`: an unknown handler, a command not exclusive, a
    /// core outside its group; not [`Outcome::Refused`], which the command never reached a core
    /// for) or found bytes other than the ones sent.
    Reported(Report),
    /// A give-up: some kernel gave up (its wait limit passed, the tile was stopped, or its
    /// broadcast refused bad words: `report.give_ups` says which), or the command's deadline
    /// passed with cores still busy (`report.unreported`). The report has every core's first
    /// give-up. The command's tiles stay reserved until all its cores have reported.
    TimedOut(Report),
    /// The command was not posted, or the device refused to take it.
    Refused(Refusal),
    /// The command never ran: the device could do nothing more and no slot could take it (its
    /// tiles are held by commands that will never finish, or no assigner accepted it). An
    /// assigner is shown a worker's newest `lookahead` stealable commands
    /// ([`DispatchConfig::lookahead`](super::DispatchConfig)), so one that declines all of them
    /// never sees the older ones, which are abandoned with them.
    Abandoned,
}

/// Why a command was not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The device refused it.
    #[error("the device refused the command: {0}")]
    Device(SessionError),
    /// The plugin built it for another group than the slot's.
    #[error("the command was built for group {spec} but assigned to a slot of group {slot}")]
    WrongGroup {
        /// The group in the command.
        spec: LogicalRect,
        /// The slot's group.
        slot: LogicalRect,
    },
}

/// A finished command handed to the request handler.
#[derive(Debug)]
pub struct Finished<W> {
    /// The payload it was submitted with.
    pub work: W,
    /// Its id.
    pub id: u64,
    /// The group it was posted to or refused on (`Some` for a command reported, timed out or
    /// refused, [`Outcome::Refused`] included, whose refusal names the group); `None` for one
    /// abandoned before any group took it.
    pub group: Option<GroupId>,
    /// What became of it.
    pub outcome: Outcome,
    /// Its timestamps so far (`handled` is not known yet).
    pub times: CommandTimes,
}

/// What the request handler may do: submit follow-up commands and message other workers.
#[derive(Debug)]
pub struct Cx<'a, W, M> {
    pub(crate) worker: usize,
    pub(crate) workers: usize,
    pub(crate) groups: &'a [GroupInfo],
    pub(crate) submitted: &'a mut Vec<(W, Place)>,
    pub(crate) messages: &'a mut Vec<(usize, M)>,
}

impl<W, M> Cx<'_, W, M> {
    /// Submits a follow-up command: ready now, to run where `place` says. Gives the work back
    /// if `place` names no group of the dispatcher.
    pub fn submit(&mut self, work: W, place: Place) -> Result<(), W> {
        if let Some(g) = place.group()
            && g.0 as usize >= self.groups.len()
        {
            return Err(work);
        }
        self.submitted.push((work, place));
        Ok(())
    }

    /// Sends `message` to the plugin instance of worker `worker` (wrapped into range).
    ///
    /// A message is work: it counts as progress, and a worker drains its inbox before it looks
    /// at anything else. So a message is not a way to wait or retry: an instance that answers a
    /// message with another to itself (or two that answer each other) keeps its worker from
    /// ever going idle, and the device is driven only when every worker is idle, so the command
    /// it waits for never ends. Retry in [`Plugin::handle`], on a command's end.
    pub fn send(&mut self, worker: usize, message: M) {
        self.messages.push((worker % self.workers, message));
    }

    /// This worker's index (it owns the groups whose [`GroupInfo::worker`] it is).
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Every group of the dispatcher.
    pub fn groups(&self) -> &[GroupInfo] {
        self.groups
    }
}

/// A scheduling policy in the VMS split. One instance per worker; see the module docs.
pub trait Plugin: Send {
    /// A command's payload: what the plugin needs to build it and to make sense of its end.
    type Work: Send;
    /// What instances send each other.
    type Message: Send;

    /// The request handler: `finished` has ended; record what it means, and submit follow-ups.
    /// A reported command's tiles are still reserved while this runs, so the device state it
    /// left is stable; a timed-out command's tiles stay reserved until its cores report (they
    /// may still be running it); a refused or abandoned command holds none.
    fn handle(
        &mut self,
        finished: Finished<Self::Work>,
        cx: &mut Cx<'_, Self::Work, Self::Message>,
    );

    /// A message from another instance (or this one). Not a place to poll: see [`Cx::send`].
    fn receive(&mut self, message: Self::Message, cx: &mut Cx<'_, Self::Work, Self::Message>) {
        let _ = (message, cx);
    }

    /// The assigner: which of `candidates` goes into `slot` (an index into it), or none for
    /// now. The candidates are the first command pinned to the slot's group, then the first
    /// few of this worker's stealable ones. Posting still needs the command's tiles: if they
    /// are reserved, the command waits and the slot stays empty.
    fn assign(&mut self, slot: &SlotView<'_>, candidates: &[Ready<Self::Work>]) -> Option<usize>;

    /// The command `work` becomes on `group`: its `group` field must be `group.rect`.
    fn command(&mut self, work: &Self::Work, group: &GroupInfo) -> CommandSpec;
}
