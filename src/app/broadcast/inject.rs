//! The faults of job 0 that act outside the programs: the simulator's transaction faults and
//! the host's stop writes. (Faults in the programs are typed fields: `plan`.)

use komorebi_broadcast::area;
use komorebi_kernel::abi;

use crate::host::device::{Advance, Peek};
use crate::host::session::{Session, SessionError, Ticket};
use crate::host::wrap;

use super::faults::{FaultKind, FaultSpec};
use super::plan::BroadcastPlan;

impl BroadcastPlan {
    /// The NoC faults [`Self::arm`] arms on `session`, in its order.
    fn noc_faults<'a>(&'a self, session: &'a Session) -> impl Iterator<Item = &'a FaultSpec> {
        self.cfg
            .faults
            .iter()
            .filter(move |f| f.kind.is_noc() && session.noc0(f.core).is_some())
    }

    /// Arms the NoC faults of job 0 in the simulator.
    pub(super) fn arm(&self, session: &mut Session) {
        let faults: Vec<FaultSpec> = self.noc_faults(session).copied().collect();
        for f in &faults {
            let Some(noc0) = session.noc0(f.core) else {
                continue;
            };
            let ranks = self.ranks(f.core);
            let ctrl = abi::CONTROL_BASE as u64;
            let filter = match f.kind {
                // The core's markers: its unicast writes into a DONE-BY table.
                FaultKind::DropMarker => komorebi_sim::TxFilter {
                    kind: Some(komorebi_sim::TxKind::Write),
                    src: Some(noc0.get()),
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
                        dst: Some(noc0.get()),
                        addr: Some(valid..valid + 4),
                        skip: f.block,
                        ..Default::default()
                    }
                }
                // Not a NoC fault (`noc_faults` passes none).
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
    /// Disarms job 0's NoC faults (at its report: a later job must not meet them) and gives
    /// those that never fired, as `--fault` names them: their transaction never came (the
    /// broadcast gave up first, or another fault held it back).
    pub(super) fn disarm(&self, session: &mut Session) -> Vec<String> {
        let Some(sim) = session.device().simulator() else {
            return Vec::new();
        };
        let fired = sim.faults_fired();
        sim.clear_faults();
        self.noc_faults(session)
            .zip(fired)
            .filter(|&(_, fired)| !fired)
            .map(|(f, _)| f.to_string())
            .collect()
    }

    /// Job 0's host-stop faults: once the core has seen BLOCK blocks of `ticket`'s command, the
    /// host writes its stop flag; not if the core reported first (or the wait ended another
    /// way). Every fault is watched in the same waits, so one that fires does not make another
    /// miss its block. A tile clears its stop flag just before its report, so a stop that lands
    /// after that clear would stop the tile's next command: once every fault is decided, the
    /// host waits for the stopped cores' reports and clears the flag of each that reported.
    /// Gives the faults that never fired, as `--fault` names them (the core reported, or the
    /// command's time ran out, before it saw BLOCK blocks, or its stop landed too late to stop
    /// anything: the core reported without giving up).
    pub(super) fn host_stops(
        &self,
        session: &mut Session,
        ticket: &Ticket,
    ) -> Result<Vec<String>, SessionError> {
        let seq = ticket.sequence as u16;
        let deadline = ticket.deadline;
        let report = abi::CONTROL_BASE + abi::REPORT_INDEX;
        let stop = abi::CONTROL_BASE + abi::STOP;
        // Per fault: its core, the index of the command there, its VALID words and block, and
        // what became of it (none yet, stopped, or passed: reported first).
        let mut pending: Vec<StopFault> = Vec::new();
        for f in self
            .cfg
            .faults
            .iter()
            .filter(|f| f.kind == FaultKind::HostStop)
        {
            let (Some(noc0), Some(index)) =
                (session.noc0(f.core), session.command_index(ticket, f.core))
            else {
                continue;
            };
            let valids = self
                .ranks(f.core)
                .iter()
                .map(|&(id, _)| abi::CONTROL_BASE + area::area(id) + area::VALID)
                .collect();
            pending.push(StopFault {
                spec: *f,
                noc0,
                index,
                valids,
                block: f.block,
                state: StopState::Waiting,
            });
        }
        // A stop at block 0 is written at once, the command just posted: a device the host
        // watches only every so often (ttsim, every 1,000 steps) could run a short command past
        // its last look at the flag before the first watch.
        for f in pending.iter_mut().filter(|f| f.block == 0) {
            session
                .device()
                .write_l1(f.noc0, stop, &1u32.to_le_bytes())?;
            f.state = StopState::Stopped;
        }
        let reported =
            |peek: &dyn Peek, f: &StopFault| wrap::at_or_after(peek.peek(f.noc0, report), f.index);
        while pending.iter().any(|f| f.state == StopState::Waiting) {
            let mut fire = Vec::new();
            let ended = session.device().advance(deadline, &mut |peek| {
                for (i, f) in pending.iter_mut().enumerate() {
                    if f.state != StopState::Waiting {
                        continue;
                    }
                    if reported(peek, f) {
                        f.state = StopState::Passed;
                    } else if f.valids.iter().any(|&a| {
                        area::marker_count(peek.peek(f.noc0, a), seq)
                            .is_some_and(|n| n as u32 >= f.block)
                    }) {
                        fire.push(i);
                    }
                }
                !fire.is_empty() || pending.iter().all(|f| f.state != StopState::Waiting)
            });
            for i in fire {
                session
                    .device()
                    .write_l1(pending[i].noc0, stop, &1u32.to_le_bytes())?;
                pending[i].state = StopState::Stopped;
            }
            if ended != Advance::Done {
                break;
            }
        }
        let mut unfired: Vec<String> = pending
            .iter()
            .filter(|f| f.state != StopState::Stopped)
            .map(|f| f.spec.to_string())
            .collect();
        let stopped: Vec<&StopFault> = pending
            .iter()
            .filter(|f| f.state == StopState::Stopped)
            .collect();
        session.device().advance(deadline, &mut |peek| {
            stopped.iter().all(|f| reported(peek, f))
        });
        // Each core that reported, whatever the others did: one late core must not leave
        // another's stop set into its next command.
        for f in stopped {
            let mut word = [0; 4];
            session.device().read_l1(f.noc0, report, &mut word)?;
            if wrap::at_or_after(u32::from_le_bytes(word), f.index) {
                session
                    .device()
                    .write_l1(f.noc0, stop, &0u32.to_le_bytes())?;
                // A stop that landed after the core's last broadcast call (a device the host
                // watches only every so often, ttsim's 1,000 steps; every call reads the flag,
                // decisions D58) stopped nothing: the core reported without giving up.
                let status = abi::CONTROL_BASE + abi::record_of(f.index) + abi::RECORD_STATUS;
                session.device().read_l1(f.noc0, status, &mut word)?;
                if u32::from_le_bytes(word) & abi::STATUS_GAVE_UP == 0 {
                    unfired.push(f.spec.to_string());
                }
            }
        }
        Ok(unfired)
    }
}

/// A host-stop fault being watched ([`BroadcastPlan::host_stops`]).
struct StopFault {
    spec: FaultSpec,
    noc0: komorebi_hal::Xy,
    /// The command's index on that core.
    index: u32,
    valids: Vec<u32>,
    block: u32,
    state: StopState,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum StopState {
    /// Its block not seen yet, the core not reported.
    Waiting,
    /// Its stop written.
    Stopped,
    /// The core reported before its block was seen: no stop.
    Passed,
}
