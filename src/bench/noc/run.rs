//! One run on the simulator: the sender's kernel, its figure, and the report.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use komorebi_hal::noc::{self, Error as _, NocMulticast};
use komorebi_hal::wait::Pause;
use komorebi_hal::{ControlBlock, L1Addr, NocAddr, Role, wait_until};
use komorebi_sim::{RunOutcome, Sim, SimConfig, SimError};
use serde::Serialize;

use super::error::NocBenchError;
use super::flags::{DRAM_ADDR, DST_ADDR, Pattern, SRC_ADDR};
use super::plan::{Job, NocBench, Transfers};

impl NocBench {
    /// Runs the pattern once on a fresh simulated chip and reports it.
    pub fn run(&self) -> Result<NocBenchReport, NocBenchError> {
        let (sim, cycles) = self.simulate(|_| Ok(()))?;
        let config = sim.config();
        let (transactions, bytes) = (self.transactions(), self.bytes());
        let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Ok(NocBenchReport {
            pattern: self.pattern,
            cycles,
            transactions,
            bytes,
            destinations: self.destinations,
            cycles_per_transaction: per(cycles, transactions),
            bytes_per_cycle: per(bytes, cycles),
            micros: config.timing.micros(cycles),
            aiclk_mhz: config.timing.aiclk_mhz,
            noc: self.noc.index(),
            size: self.job.size,
            what: self.what.clone(),
            harvest: self.harvest.bits(),
            fused_dram: self.fused_dram,
        })
    }

    /// Runs the pattern on a fresh simulated chip that `prepare` may set up first (the tests
    /// write sources with it); the chip afterwards, and the kernel's cycles.
    pub(super) fn simulate(
        &self,
        prepare: impl FnOnce(&mut Sim) -> Result<(), SimError>,
    ) -> Result<(Sim, u64), NocBenchError> {
        let failed = |e: SimError| NocBenchError::Run(e.to_string());
        let mut sim = Sim::try_new(SimConfig {
            harvest: self.harvest,
            fused_dram: self.fused_dram,
            ..SimConfig::default()
        })
        .map_err(failed)?;
        prepare(&mut sim).map_err(failed)?;
        let config = sim.config();
        // The barrier must never give up: the largest wait limit (the runtime's "never").
        let limit = config.control.base + config.control.wait_limit_offset;
        for offset in [0, 4] {
            sim.write_l1_u32(self.sender_noc0, limit + offset, u32::MAX)
                .map_err(failed)?;
        }
        let out: Rc<RefCell<Option<Result<u64, String>>>> = Rc::default();
        let (o, job) = (out.clone(), self.job.clone());
        sim.spawn(
            self.sender_noc0,
            Role::mover(self.noc),
            move |env| async move {
                let result = match env.noc() {
                    Some(mut noc) => {
                        kernel(&mut noc, &mut env.ctrl(), &mut env.pause(), &job).await
                    }
                    None => Err("the kernel has no NoC".into()),
                };
                *o.borrow_mut() = Some(result);
            },
        )
        .map_err(failed)?;
        let outcome = sim.run(u64::MAX);
        let result = out.borrow_mut().take();
        let cycles = match (outcome, result) {
            (_, Some(Err(e))) => return Err(NocBenchError::Run(e)),
            (RunOutcome::Quiescent, Some(Ok(cycles))) => cycles,
            (outcome, _) => {
                return Err(NocBenchError::Run(format!(
                    "the kernel did not finish (the simulation ended {outcome:?})"
                )));
            }
        };
        Ok((sim, cycles))
    }
}

/// Issues one request; when the NoC is busy, waits until it takes it.
async fn issue<N, K, P>(
    noc: &mut N,
    ctrl: &mut K,
    pause: &mut P,
    mut request: impl FnMut(&mut N) -> Result<(), N::Error>,
) -> Result<(), String>
where
    N: NocMulticast,
    N::Error: fmt::Display,
    K: ControlBlock,
    P: Pause,
{
    match request(noc) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == noc::ErrorKind::Busy => {}
        Err(e) => return Err(e.to_string()),
    }
    wait_until(ctrl, pause, |_| match request(noc) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == noc::ErrorKind::Busy => Ok(false),
        Err(e) => Err(e),
    })
    .await
    .map(drop)
    .map_err(|e| e.to_string())
}

/// The sender's kernel: every transaction of `job`, then one barrier; the cycles from just
/// before the first issue to just after the barrier.
async fn kernel<N, K, P>(noc: &mut N, ctrl: &mut K, pause: &mut P, job: &Job) -> Result<u64, String>
where
    N: NocMulticast,
    N::Error: fmt::Display,
    K: ControlBlock,
    P: Pause,
{
    let addr = |a: u32| L1Addr::new(a).map_err(|e| format!("L1 address {a:#x}: {e}"));
    let (src, dst, len) = (addr(SRC_ADDR)?, addr(DST_ADDR)?, job.size);
    let dram = match job.transfers {
        Transfers::DramRead(port) => {
            Some(NocAddr::new(port, DRAM_ADDR).map_err(|e| e.to_string())?)
        }
        _ => None,
    };
    let t0 = ctrl.now();
    match &job.transfers {
        Transfers::Write(node) => {
            for _ in 0..job.count {
                let to = NocAddr::l1(*node, dst);
                issue(noc, ctrl, pause, |n| n.write(src, to, len, job.mode)).await?;
            }
        }
        Transfers::OneToAll(nodes) => {
            for node in nodes {
                let to = NocAddr::l1(*node, dst);
                for _ in 0..job.count {
                    issue(noc, ctrl, pause, |n| n.write(src, to, len, job.mode)).await?;
                }
            }
        }
        Transfers::Multicast(rect) => {
            for i in 0..job.count {
                let last = i + 1 == job.count;
                let mode = if job.linked && !last {
                    job.mode.linked()
                } else {
                    job.mode
                };
                issue(noc, ctrl, pause, |n| {
                    n.multicast(src, *rect, dst, len, mode)
                })
                .await?;
            }
        }
        Transfers::DramRead(_) => {
            if let Some(from) = dram {
                for _ in 0..job.count {
                    issue(noc, ctrl, pause, |n| n.read(from, dst, len)).await?;
                }
            }
        }
    }
    let reads = dram.is_some();
    wait_until(ctrl, pause, |_| {
        if reads {
            noc.reads_done()
        } else {
            noc.writes_acked()
        }
    })
    .await
    .map_err(|e| format!("the barrier: {e}"))?;
    Ok(ctrl.now() - t0)
}

/// What `komorebi bench noc` prints: the JSON fields, and more for the text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NocBenchReport {
    /// The pattern.
    pub pattern: Pattern,
    /// Cycles from the first issue to the barrier completing, at AICLK.
    pub cycles: u64,
    /// Transactions issued (one-to-all: `--count` x cores written).
    pub transactions: u64,
    /// Bytes the sender injects, or reads for dram-read: transactions x `--size`.
    pub bytes: u64,
    /// Receiving nodes of one transaction (see [`NocBench::destinations`]).
    pub destinations: u32,
    /// `cycles / transactions`.
    pub cycles_per_transaction: f64,
    /// `bytes / cycles`.
    pub bytes_per_cycle: f64,
    /// The cycles in microseconds at AICLK.
    pub micros: f64,
    /// AICLK in MHz.
    pub aiclk_mhz: u32,
    /// The NoC, 0 or 1.
    pub noc: u8,
    /// Bytes of one transaction.
    pub size: u32,
    /// Who sends to whom, in words (the text's first line: sender, target or rectangle, the
    /// DRAM bank and its port).
    pub what: String,
    /// The simulated chip's harvest mask (die-order columns).
    pub harvest: u16,
    /// The simulated chip's fused DRAM bank (left out of the JSON when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
}

impl fmt::Display for NocBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} on NoC{}: {}; {} of {} B, {} B in all, {} each",
            self.pattern,
            self.noc,
            self.what,
            crate::num::count(self.transactions, "transaction", "transactions"),
            self.size,
            self.bytes,
            crate::num::count(u64::from(self.destinations), "destination", "destinations"),
        )?;
        write!(
            f,
            "{} cycles ({:.2} us at {} MHz AICLK): {:.1} cycles/transaction, {:.2} B/cycle",
            self.cycles,
            self.micros,
            self.aiclk_mhz,
            self.cycles_per_transaction,
            self.bytes_per_cycle
        )
    }
}
