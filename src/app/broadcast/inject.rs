//! The faults of job 0 that act outside the programs: the simulator's transaction faults and
//! the host's stop writes. (Faults in the programs are typed fields: `plan`.)

use komorebi_broadcast::area;
use komorebi_kernel::abi;

use crate::host::device::{Advance, Peek};
use crate::host::session::{Session, SessionError, Ticket};
use crate::host::wrap;

use super::faults::FaultKind;
use super::plan::BroadcastPlan;

impl BroadcastPlan {
    /// Arms the NoC faults of job 0 in the simulator.
    pub(super) fn arm(&self, session: &mut Session) {
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
    /// Job 0's host-stop faults: once the core has seen BLOCK blocks of `ticket`'s command, the
    /// host writes its stop flag; not if the core reported first (or the wait ended another
    /// way). A tile clears its stop flag just before its report, so a stop that lands after
    /// that clear would stop the tile's next command: the host waits for the report and clears
    /// the flag again.
    pub(super) fn host_stops(
        &self,
        session: &mut Session,
        ticket: &Ticket,
    ) -> Result<(), SessionError> {
        {
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
                let report = abi::CONTROL_BASE + abi::REPORT_INDEX;
                let reported =
                    move |peek: &dyn Peek| wrap::at_or_after(peek.peek(noc0, report), index);
                // Once the core has seen BLOCK blocks of this command, the host stops it.
                let valids: Vec<u32> = self
                    .ranks(f.core)
                    .iter()
                    .map(|&(id, _)| abi::CONTROL_BASE + area::area(id) + area::VALID)
                    .collect();
                let seq = ticket.sequence as u16;
                let block = f.block;
                let deadline = ticket.deadline;
                let mut seen = false;
                let mut done = false;
                let stop_at = session.device().advance(deadline, &mut |peek| {
                    seen = block == 0
                        || valids.iter().any(|&a| {
                            area::marker_count(peek.peek(noc0, a), seq)
                                .is_some_and(|n| n as u32 >= block)
                        });
                    done = reported(peek);
                    seen || done
                });
                if stop_at != Advance::Done || !seen || done {
                    continue;
                }
                let stop = abi::CONTROL_BASE + abi::STOP;
                session.device().write_l1(noc0, stop, &1u32.to_le_bytes())?;
                if session
                    .device()
                    .advance(deadline, &mut |peek| reported(peek))
                    == Advance::Done
                {
                    session.device().write_l1(noc0, stop, &0u32.to_le_bytes())?;
                }
            }
        }
        Ok(())
    }
}
