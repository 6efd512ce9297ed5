//! What the dispatcher needs of a chip ([`Target`]), and two targets: [`NullTarget`], a device
//! that completes every command the moment it is posted (for measuring the dispatcher itself),
//! and [`SimTarget`], the simulator on a thread of its own.
//!
//! A target takes posted commands and later publishes what became of each into the command's
//! slot [`Mailbox`]; workers find out by polling their mailboxes (the host's scan of report
//! words). On a card the mailbox words would be the tiles' report words read through a TLB
//! window; on the simulator the device thread mirrors them into host memory.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::mailbox::{Mailbox, Published};
use crate::host::device::ClockKind;
use crate::host::session::{CommandSpec, Report, Session, SessionError, Ticket};

/// Where the outcome of one posted command goes: its slot's mailbox and the command's epoch.
#[derive(Clone, Debug)]
pub struct Posting {
    /// The slot's mailbox.
    pub mailbox: Arc<Mailbox>,
    /// The command's epoch in that mailbox.
    pub epoch: u64,
}

impl Posting {
    /// Publishes `what` for this command; `false` if it was stale or out of order.
    pub fn publish(&self, what: Published) -> bool {
        self.mailbox.publish(self.epoch, what)
    }
}

/// What [`Target::drive`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Drive {
    /// The device ran, or a refusal was published since the last drive: something may have
    /// been published.
    Progress,
    /// Nothing can change any more: every command the device could finish is finished, and
    /// nothing was published since the last drive. On a device that cannot tell (a card,
    /// [`Device::knows_idle`](crate::host::device::Device::knows_idle)), also: commands past
    /// their deadline did not go quiet within one more of their budgets.
    Idle,
    /// The device can no longer be used: [`SimTarget`]'s device thread ended (a post hook or
    /// the session panicked; it runs the session of every backend, the simulator's, ttsim's or
    /// a card's), a command was published on some of its cores only, or a report could not be
    /// read. What is in flight on it will never be published. The dispatcher ends the run with
    /// [`DispatchError::DeviceLost`](super::DispatchError::DeviceLost), saying why.
    Lost,
}

/// A chip as the dispatcher uses it. Shared by every worker, so `Sync`; posting never waits for
/// the command to run.
pub trait Target: Sync {
    /// Posts `command` to every core of its group; what becomes of it is published to
    /// `posting`, at once or later. An error here means nothing was posted, and nothing is
    /// published to `posting`.
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError>;

    /// Lets the device run until something is published or nothing can change (on a card,
    /// which cannot tell, until commands past their deadline have had one more budget). The
    /// dispatcher calls it only when every worker has nothing else to do, so on the simulator
    /// virtual time stands still while the host works. `Progress` also when something was published since
    /// the last drive outside it (a refusal found after [`post`](Self::post) returned): the
    /// dispatcher decides that the run stalled only on `Idle`, so a publication no drive
    /// reported would let it abandon work that the freed slot could still run.
    fn drive(&self) -> Drive;

    /// Lets every chip of a run run, as [`drive`](Self::drive) does one: `Lost` when any chip
    /// is, else `Progress` when any made progress. Each chip's clock moves only while it is
    /// driven, so chips whose drives overlap in host time keep their own device time. One after
    /// the other unless a target can do better.
    fn drive_all(chips: &[&Self]) -> Drive
    where
        Self: Sized,
    {
        chips
            .iter()
            .fold(Drive::Idle, |done, chip| done.and(chip.drive()))
    }

    /// The device clock's frequency in MHz (for converting device cycles to time).
    fn aiclk_mhz(&self) -> u32;

    /// What the device clock counts (device time, or ttsim's steps).
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }

    /// Why a drive answered [`Drive::Lost`], if the target knows (the run's
    /// [`DispatchError::DeviceLost`](super::DispatchError::DeviceLost) says it, and names the
    /// first chip that answers here; in a run of several chips, a chip lost whose target says
    /// nothing is not named).
    fn lost_reason(&self) -> Option<String> {
        None
    }
}

impl Drive {
    /// Two chips' drives as one: `Lost` wins over `Progress`, which wins over `Idle`.
    pub fn and(self, other: Drive) -> Drive {
        match (self, other) {
            (Drive::Lost, _) | (_, Drive::Lost) => Drive::Lost,
            (Drive::Progress, _) | (_, Drive::Progress) => Drive::Progress,
            (Drive::Idle, Drive::Idle) => Drive::Idle,
        }
    }
}

/// A device that completes every command, successfully, the moment it is posted.
#[derive(Copy, Clone, Debug, Default)]
pub struct NullTarget;

impl Target for NullTarget {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        posting.publish(Published::Reported(Report::success(posting.epoch as u32)));
        drop(command);
        Ok(())
    }

    fn drive(&self) -> Drive {
        Drive::Idle
    }

    fn aiclk_mhz(&self) -> u32 {
        1350
    }
}

type SessionJob = Box<dyn FnOnce(&mut Session) + Send>;
/// Called on the device thread right after a command was posted, with its ticket.
pub type PostHook = Box<dyn FnMut(&mut Session, &Ticket) + Send>;

enum Request {
    Post(CommandSpec, Posting),
    Drive(mpsc::Sender<Drive>),
    With(SessionJob),
}

/// The simulator behind a [`Session`] on a device thread of its own (the simulator is
/// single-threaded; workers reach it only through this target).
///
/// Posts are queued to the device thread, which writes them into the tiles' slots at the current
/// virtual time (a post the session refuses is published there, and the next drive says
/// `Progress`). [`drive`](Target::drive) runs the simulator until some watched command's tiles
/// have all reported, an overdue command's tiles are quiet again, or the earliest deadline; it
/// then publishes reports, overdue reports and late completions to the mailboxes. With only
/// overdue commands watched it waits for them for good on the simulator, which says when
/// nothing can change, and one more of their budgets on a card ([`Session::quiet_deadline`]).
/// A device thread that ended (a post hook or the session panicked), a command the session
/// published on some of its cores only ([`SessionError::PartlyPublished`]), or a report that
/// cannot be read makes every later drive `Lost` ([`Target::lost_reason`] says why): the
/// command's worker hears nothing of it, so its tiles stay held, and later posts are refused.
pub struct SimTarget {
    requests: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    aiclk_mhz: u32,
    clock_kind: ClockKind,
    /// Why the device thread answers every drive `Lost`, once it does.
    lost: Arc<std::sync::Mutex<Option<String>>>,
}

impl std::fmt::Debug for SimTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimTarget")
            .field("aiclk_mhz", &self.aiclk_mhz)
            .finish_non_exhaustive()
    }
}

struct Watched {
    ticket: Ticket,
    posting: Posting,
    overdue: bool,
    /// Once overdue: until when a drive with only overdue commands waits for it to go quiet
    /// ([`Session::quiet_deadline`], taken when it went overdue, so that later drives do not
    /// wait a whole budget again).
    quiet_by: u64,
}

impl SimTarget {
    /// Opens a session with `open` on a new device thread; `hook`, if any, runs after every
    /// post on that thread (the broadcast program's host-stop fault uses it). `open`'s error,
    /// or its panic's message, is the error.
    pub fn spawn<F>(open: F, hook: Option<PostHook>) -> Result<Self, SessionError>
    where
        F: FnOnce() -> Result<Session, SessionError> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Request>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(u32, ClockKind), SessionError>>();
        let lost = Arc::new(std::sync::Mutex::new(None));
        let lost_on_thread = Arc::clone(&lost);
        let thread = std::thread::Builder::new()
            .name("komorebi-sim".into())
            .spawn(move || {
                // A panic while opening is the open's error, with its message (without the
                // catch the caller heard only that the thread ended).
                let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(open))
                    .unwrap_or_else(|payload| {
                        Err(SessionError::Device(crate::host::device::DeviceError::new(
                            format!("the session's open panicked: {}", panic_message(&*payload)),
                        )))
                    });
                let mut session = match opened {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let clock = (session.device().aiclk_mhz(), session.device().clock_kind());
                let _ = ready_tx.send(Ok(clock));
                // A panic (a post hook's, or the session's) ends the thread; its message is why
                // the device is lost, which the run's `DeviceLost` then carries. Recorded before
                // the requests' channel closes (`rx` outlives the call), so a drive waiting in
                // it is answered only once the reason is there (see `await_end` for a drive
                // the panic interrupted).
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    device_thread(&mut session, &rx, hook, &lost_on_thread)
                }));
                if let Err(payload) = ran {
                    let mut lost = lost_on_thread.lock().unwrap_or_else(|p| p.into_inner());
                    lost.get_or_insert_with(|| {
                        format!("its device thread panicked: {}", panic_message(&*payload))
                    });
                }
                drop(rx);
            })
            .map_err(|e| {
                SessionError::Device(crate::host::device::DeviceError::new(format!(
                    "cannot start the simulator thread: {e}"
                )))
            })?;
        let (aiclk_mhz, clock_kind) = ready_rx.recv().unwrap_or_else(|_| {
            Err(SessionError::Device(crate::host::device::DeviceError::new(
                "the simulator thread ended while opening the session",
            )))
        })?;
        Ok(Self {
            requests: Some(tx),
            thread: Some(thread),
            aiclk_mhz,
            clock_kind,
            lost,
        })
    }

    /// Runs `f` on the session, on the device thread, and returns its result (for reading
    /// device state from a request handler, or after a run).
    pub fn with_session<R, F>(&self, f: F) -> Result<R, SessionError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Session) -> R + Send + 'static,
    {
        let (tx, rx) = mpsc::channel();
        self.send(Request::With(Box::new(move |s| {
            let _ = tx.send(f(s));
        })))?;
        rx.recv().map_err(|_| gone())
    }

    /// Waits (at most a second) for a device thread whose channels closed to end: a panic in
    /// the middle of a drive drops that drive's reply while unwinding, before the thread
    /// records why it ended. Not once the reason is recorded (a panic between drives): the
    /// thread may still be dropping its session, which on ttsim or a card takes a while.
    fn await_end(&self) {
        let Some(thread) = &self.thread else {
            return;
        };
        let known = || {
            self.lost
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()
        };
        let since = std::time::Instant::now();
        while !known()
            && !thread.is_finished()
            && since.elapsed() < std::time::Duration::from_secs(1)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn send(&self, r: Request) -> Result<(), SessionError> {
        let requests = self.requests.as_ref().ok_or_else(gone)?;
        requests.send(r).map_err(|_| gone())
    }
}

fn gone() -> SessionError {
    SessionError::Device(crate::host::device::DeviceError::new(
        "the simulator thread has ended",
    ))
}

impl Drop for SimTarget {
    fn drop(&mut self) {
        // Closing the channel ends the device thread.
        drop(self.requests.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Target for SimTarget {
    fn post(&self, command: CommandSpec, posting: Posting) -> Result<(), SessionError> {
        self.send(Request::Post(command, posting))
    }

    fn drive(&self) -> Drive {
        Self::drive_all(&[self])
    }

    /// Every chip's device thread runs at once (each simulator is single-threaded, the chips
    /// are independent); returns when all have stopped.
    fn drive_all(chips: &[&Self]) -> Drive {
        let replies: Vec<_> = chips
            .iter()
            .map(|chip| {
                let (tx, rx) = mpsc::channel();
                chip.send(Request::Drive(tx)).ok().map(|()| rx)
            })
            .collect();
        // A chip whose thread ended takes no request and sends no reply: it is lost, and says
        // why unless its thread said so first.
        replies
            .iter()
            .zip(chips)
            .fold(Drive::Idle, |done, (rx, chip)| {
                let drive = rx
                    .as_ref()
                    .and_then(|rx| rx.recv().ok())
                    .unwrap_or_else(|| {
                        chip.await_end();
                        let mut lost = chip.lost.lock().unwrap_or_else(|p| p.into_inner());
                        lost.get_or_insert_with(|| "its device thread ended".into());
                        Drive::Lost
                    });
                done.and(drive)
            })
    }

    fn aiclk_mhz(&self) -> u32 {
        self.aiclk_mhz
    }

    fn lost_reason(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn clock_kind(&self) -> ClockKind {
        self.clock_kind
    }
}

fn device_thread(
    session: &mut Session,
    rx: &mpsc::Receiver<Request>,
    mut hook: Option<PostHook>,
    lost: &std::sync::Mutex<Option<String>>,
) {
    let mut watched: Vec<Watched> = Vec::new();
    // A refusal published here since the last drive: that drive is progress.
    let mut refused = false;
    // Why the device is lost, once it is (a command published on some of its cores only, a
    // report that cannot be read): such a command may run unwatched, so its tiles can never be
    // handed out safely again.
    let mut reason: Option<String> = None;
    while let Ok(request) = rx.recv() {
        match request {
            // Nothing more is posted on a lost device.
            Request::Post(_, posting) if reason.is_some() => {
                let why = reason.clone().unwrap_or_default();
                refused |= posting.publish(Published::Refused(SessionError::Device(
                    crate::host::device::DeviceError {
                        message: format!("the device was lost: {why}"),
                        lost: true,
                    },
                )));
            }
            Request::Post(spec, posting) => match session.post(&spec) {
                Ok(ticket) => {
                    if let Some(h) = hook.as_mut() {
                        h(session, &ticket);
                    }
                    watched.push(Watched {
                        ticket,
                        posting,
                        overdue: false,
                        quiet_by: u64::MAX,
                    });
                }
                // Published nowhere for its worker: its slot stays armed and its tiles held
                // until the run ends, at the next drive, with the device lost.
                Err(e @ SessionError::PartlyPublished { .. }) => lose(lost, &mut reason, &e),
                Err(e) => {
                    refused |= posting.publish(Published::Refused(e));
                }
            },
            Request::Drive(reply) if reason.is_some() => {
                let _ = reply.send(Drive::Lost);
            }
            // A refusal published since the last drive is progress enough: the refused
            // command's slot and tiles are free, and the device must not run on before the
            // workers look (virtual time stands still while the host works).
            Request::Drive(reply) if std::mem::take(&mut refused) => {
                let _ = reply.send(Drive::Progress);
            }
            Request::Drive(reply) => {
                let d = drive(session, &mut watched).unwrap_or_else(|e| {
                    // A report that cannot be read: its command was posted and may still run,
                    // so its tiles stay held, and the device is lost with the error as why.
                    lose(lost, &mut reason, &e);
                    Drive::Lost
                });
                let _ = reply.send(d);
            }
            Request::With(job) => job(session),
        }
    }
}

/// Makes the device thread's device lost, `error` saying why (for [`Target::lost_reason`]).
fn lose(
    lost: &std::sync::Mutex<Option<String>>,
    reason: &mut Option<String>,
    error: &SessionError,
) {
    let why = error.to_string();
    *lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
    *reason = Some(why);
}

/// One drive of the device thread; see [`SimTarget`].
fn drive(session: &mut Session, watched: &mut Vec<Watched>) -> Result<Drive, SessionError> {
    if watched.is_empty() {
        return Ok(Drive::Idle);
    }
    // The earliest deadline of a command not overdue yet; with only overdue ones, the last of
    // their give-up cycles (for good on the simulator).
    let fresh = watched.iter().filter(|w| !w.overdue);
    let deadline = fresh
        .map(|w| w.ticket.deadline)
        .min()
        .unwrap_or_else(|| watched.iter().map(|w| w.quiet_by).max().unwrap_or(u64::MAX));
    let advance = {
        let tickets: Vec<&Ticket> = watched.iter().map(|w| &w.ticket).collect();
        session.wait_any(&tickets, deadline)?
    };
    let idle = advance == crate::host::device::Advance::Idle;
    // A device that says the deadline came has let it pass, whatever its clock reads (a
    // caller's device whose clock stood still while `advance` said so kept every command
    // watched, and the run never ended).
    let came = advance == crate::host::device::Advance::Deadline;
    let now = session.device().now().max(if came { deadline } else { 0 });
    let mut published = false;
    let mut i = 0;
    while i < watched.len() {
        let w = &mut watched[i];
        // A report that cannot be read ends the drive with the device's error (the caller
        // makes the device lost): nothing is published, so the command's tiles stay held.
        let quiet = session.is_reported(&w.ticket)?;
        let what = if quiet && w.overdue {
            Some(Published::Quiet)
        } else if quiet || (!w.overdue && (idle || now >= w.ticket.deadline)) {
            let r = session.report(&w.ticket)?;
            Some(if quiet {
                Published::Reported(r)
            } else {
                Published::Overdue(r)
            })
        } else {
            None
        };
        let Some(what) = what else {
            i += 1;
            continue;
        };
        let last = matches!(what, Published::Reported(_) | Published::Quiet);
        published |= w.posting.publish(what);
        if last {
            watched.swap_remove(i);
        } else {
            w.overdue = true;
            w.quiet_by = session.quiet_deadline(&[&w.ticket]);
            i += 1;
        }
    }
    Ok(if published {
        Drive::Progress
    } else {
        Drive::Idle
    })
}

/// The message of a panic's payload (`panic!`'s text), for a worker's, a device thread's or an
/// `explore` case's panic.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
