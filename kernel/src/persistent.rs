//! The persistent loop each of a tile's three kernels runs: wait for the next command, run the
//! handler body, mark it done; the reader also writes the tile's report once all three are done.
//!
//! Guarantees:
//! * A kernel takes command `k + 1` only once the tile's report of command `k` is written, so
//!   commands of one tile never overlap, and the stop flag a failed command's sender set
//!   (cleared by the reporter just before it reports) never reaches the next one. A stop the
//!   host writes names no command: one that lands after the reporter cleared the flag stops the
//!   tile's next command (a host stops a command by writing the flag while it runs, and clears
//!   it after).
//! * Every kernel refuses a command the same way (unknown handler, missing `EXCLUSIVE` on a
//!   broadcast handler, a tile outside the group, malformed word counts), so a refused command
//!   is refused by the whole tile and no body runs.
//! * Waiting for a command never times out and ignores the stop flag.

use komorebi_hal::control::{self, Error as _};
use komorebi_hal::{Compute, ControlBlock, DataMovement, LogicalRect, NocMulticast, Pause, Role};

use crate::abi::{self, GiveUpCode, KernelGiveUp};
use crate::command::{Command, CommandCtrl};
use crate::handler::{Buffers, HandlerSet, Outcome};

/// Why a kernel's loop returned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KernelExit {
    /// An exit command (handler 0).
    Exit,
    /// The control block failed: the kernel cannot go on.
    ControlFailed(control::ErrorKind),
}

/// The reader kernel (NoC0); also the tile's reporter.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn reader<N, K, P, B, H>(
    noc: N,
    ctrl: K,
    pause: P,
    buffers: B,
    handlers: &mut H,
) -> KernelExit
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    run(DmBody::<N, false>(noc), ctrl, pause, buffers, handlers).await
}

/// The writer kernel (NoC1).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn writer<N, K, P, B, H>(
    noc: N,
    ctrl: K,
    pause: P,
    buffers: B,
    handlers: &mut H,
) -> KernelExit
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    run(DmBody::<N, true>(noc), ctrl, pause, buffers, handlers).await
}

/// The compute kernel.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn compute<K, P, B, H>(ctrl: K, pause: P, buffers: B, handlers: &mut H) -> KernelExit
where
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    run(ComputeBody, ctrl, pause, buffers, handlers).await
}

/// What one kernel does with a command the loop accepted. The loop is generic over it, so each
/// kernel's state machine holds only its own body's future (an `async fn` keeps a state for
/// every await point, even a statically dead one).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
trait Body<K, P, B, H> {
    /// Which kernel.
    const ROLE: Role;
    /// Forgets earlier transfers (data-movement kernels).
    fn resync(&mut self);
    /// Runs handler `id` on `command`.
    async fn run(
        &mut self,
        handlers: &mut H,
        ctrl: CommandCtrl<'_, K>,
        pause: &mut P,
        buffers: &B,
        command: &Command,
    ) -> Outcome;
}

/// A data-movement kernel's body: the reader's (`WRITER = false`) or the writer's.
struct DmBody<N, const WRITER: bool>(N);

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<N, K, P, B, H, const WRITER: bool> Body<K, P, B, H> for DmBody<N, WRITER>
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    const ROLE: Role = if WRITER { Role::Writer } else { Role::Reader };

    fn resync(&mut self) {
        let _ = self.0.resync();
    }

    async fn run(
        &mut self,
        handlers: &mut H,
        ctrl: CommandCtrl<'_, K>,
        pause: &mut P,
        buffers: &B,
        command: &Command,
    ) -> Outcome {
        let mut dm = DataMovement {
            noc: &mut self.0,
            ctrl,
            pause,
        };
        if WRITER {
            handlers
                .writer(command.handler, &mut dm, buffers, command)
                .await
        } else {
            handlers
                .reader(command.handler, &mut dm, buffers, command)
                .await
        }
    }
}

/// The compute kernel's body.
struct ComputeBody;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl<K, P, B, H> Body<K, P, B, H> for ComputeBody
where
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    const ROLE: Role = Role::Compute;

    fn resync(&mut self) {}

    async fn run(
        &mut self,
        handlers: &mut H,
        ctrl: CommandCtrl<'_, K>,
        pause: &mut P,
        buffers: &B,
        command: &Command,
    ) -> Outcome {
        let mut k = Compute { ctrl, pause };
        handlers
            .compute(command.handler, &mut k, buffers, command)
            .await
    }
}

fn refused(code: GiveUpCode) -> Outcome {
    Outcome {
        give_up: Some(KernelGiveUp {
            code,
            broadcast: 0,
            block: 0,
        }),
        stat: 0,
    }
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn run<Y, K, P, B, H>(
    mut body: Y,
    mut ctrl: K,
    mut pause: P,
    buffers: B,
    handlers: &mut H,
) -> KernelExit
where
    Y: Body<K, P, B, H>,
    K: ControlBlock,
    P: Pause,
    B: Buffers,
    H: HandlerSet,
{
    macro_rules! ctl {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => return KernelExit::ControlFailed(e.kind()),
            }
        };
    }
    let role = Y::ROLE;
    let mut last = ctl!(ctrl.load(abi::kernel_word(abi::KERNEL_DONE, role)));
    let mut command = Command::new(0, 0, 0, 0, LogicalRect::new(0, 0, 0, 0), 0);
    loop {
        let next = last.wrapping_add(1);
        let slot = abi::slot_of(next);
        loop {
            let published = ctl!(ctrl.load(slot)) == next;
            if published && ctl!(ctrl.load(abi::REPORT_INDEX)) == last {
                break;
            }
            pause.pause(u64::MAX).await;
        }
        if role == Role::Reader {
            let started = ctrl.now() as u32;
            ctl!(ctrl.store(abi::record_of(next) + abi::RECORD_STARTED, started));
        }
        let loaded = match command.load(&mut ctrl, slot) {
            Ok(()) => Ok(&command),
            Err(Some(kind)) => return KernelExit::ControlFailed(kind),
            Err(None) => Err(()),
        };
        let tile = ctl!(ctrl.load(abi::HEADER_TILE));
        let (outcome, sequence, exit) = match loaded {
            // (`load` read the header, the sequence number among it, before refusing the words.)
            Err(()) => (refused(GiveUpCode::BadCommand), command.sequence, false),
            Ok(c) if c.handler == abi::HANDLER_EXIT => (Outcome::default(), c.sequence, true),
            Ok(c) => {
                #[cfg(feature = "defmt")]
                defmt::debug!(
                    "command {=u32} (handler {=u16}) started",
                    c.sequence,
                    c.handler
                );
                #[cfg(feature = "log")]
                log::debug!("command {} (handler {}) started", c.sequence, c.handler);
                let outcome = match handlers.lookup(c.handler) {
                    None => refused(GiveUpCode::UnknownHandler),
                    Some(true) if !c.exclusive() => refused(GiveUpCode::NotExclusive),
                    Some(_) if !c.group.contains(tile as u8, (tile >> 8) as u8) => {
                        refused(GiveUpCode::NotInGroup)
                    }
                    Some(_) => {
                        // Nothing of an earlier command is still of interest: forget its
                        // transfers, so a lost acknowledgement cannot block this one.
                        body.resync();
                        let cc = CommandCtrl::new(&mut ctrl, c.wait_limit);
                        body.run(handlers, cc, &mut pause, &buffers, c).await
                    }
                };
                (outcome, c.sequence, false)
            }
        };
        #[cfg(any(feature = "defmt", feature = "log"))]
        log_outcome(sequence, &outcome);
        let (word, block) = outcome.give_up.map_or((0, 0), |g| (g.word(), g.block));
        let record = abi::record_of(next);
        ctl!(ctrl.store(abi::kernel_word(record + abi::RECORD_GIVE_UP, role), word));
        ctl!(ctrl.store(
            abi::kernel_word(record + abi::RECORD_GIVE_UP_BLOCK, role),
            block
        ));
        ctl!(ctrl.store(
            abi::kernel_word(record + abi::RECORD_STAT, role),
            outcome.stat
        ));
        ctl!(ctrl.store(abi::kernel_word(abi::KERNEL_DONE, role), next));
        if role == Role::Reader {
            if let Err(kind) = report(&mut ctrl, &mut pause, next, sequence).await {
                return KernelExit::ControlFailed(kind);
            }
        }
        last = next;
        if exit {
            return KernelExit::Exit;
        }
    }
}

/// Logs what became of command `sequence` on this kernel: a give-up or refusal as a warning with
/// the record the host reads (what, broadcast, block), the rest at debug level. One warning site
/// for both, and no kernel name (the host knows whose ring it reads): each site costs some 300
/// bytes of code, and the compute image is within 20 bytes of its 8 KiB (decisions D27). The
/// `log` feature's lines are the `defmt` feature's, word for word (`tests/log.rs` compares a
/// native run's with the firmware's).
#[cfg(any(feature = "defmt", feature = "log"))]
fn log_outcome(sequence: u32, outcome: &Outcome) {
    match outcome.give_up {
        Some(g) => {
            #[cfg(feature = "defmt")]
            defmt::warn!(
                "command {=u32} gave up: {} (broadcast {=u8}, block {=u32})",
                sequence,
                g.code,
                g.broadcast,
                g.block
            );
            #[cfg(feature = "log")]
            log::warn!(
                "command {} gave up: {} (broadcast {}, block {})",
                sequence,
                g.code.name(),
                g.broadcast,
                g.block
            );
        }
        None => {
            #[cfg(feature = "defmt")]
            defmt::debug!("command {=u32} done ({=u32} bytes)", sequence, outcome.stat);
            #[cfg(feature = "log")]
            log::debug!("command {} done ({} bytes)", sequence, outcome.stat);
        }
    }
}

/// The reporter: once writer and compute are done with command `index`, clears the stop flag
/// and writes status, sequence and (last) index.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn report<K: ControlBlock, P: Pause>(
    ctrl: &mut K,
    pause: &mut P,
    index: u32,
    sequence: u32,
) -> Result<(), control::ErrorKind> {
    let k = |e: K::Error| e.kind();
    loop {
        let writer = ctrl
            .load(abi::kernel_word(abi::KERNEL_DONE, Role::Writer))
            .map_err(k)?;
        let compute = ctrl
            .load(abi::kernel_word(abi::KERNEL_DONE, Role::Compute))
            .map_err(k)?;
        if writer == index && compute == index {
            break;
        }
        pause.pause(u64::MAX).await;
    }
    let record = abi::record_of(index);
    let mut status = 0;
    for role in Role::ALL {
        let word = ctrl
            .load(abi::kernel_word(record + abi::RECORD_GIVE_UP, role))
            .map_err(k)?;
        if let Some(g) = KernelGiveUp::from_words(word, 0) {
            status |= match g.code {
                c if c.is_refusal() => abi::STATUS_REFUSED,
                GiveUpCode::DataMismatch => abi::STATUS_MISMATCH,
                _ => abi::STATUS_GAVE_UP,
            };
        }
    }
    ctrl.store(abi::STOP, 0).map_err(k)?;
    let finished = ctrl.now() as u32;
    ctrl.store(record + abi::RECORD_FINISHED, finished)
        .map_err(k)?;
    ctrl.store(record + abi::RECORD_STATUS, status).map_err(k)?;
    ctrl.store(record + abi::RECORD_SEQUENCE, sequence)
        .map_err(k)?;
    ctrl.store(record + abi::RECORD_INDEX, index).map_err(k)?;
    ctrl.store(abi::REPORT_INDEX, index).map_err(k)
}
