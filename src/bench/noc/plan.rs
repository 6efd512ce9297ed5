//! The flags checked and converted: every core in raw coordinates of the NoC in use, the
//! DRAM port tt-metal uses, what one run issues.

use blackhole_pac::addr::MAX_PACKET_BYTES;
use blackhole_pac::grid::Noc0Xy;
use blackhole_pac::harvest::{DramBanks, HarvestMask};
use komorebi_hal::noc::WriteMode;
use komorebi_hal::{LogicalRect, LogicalXy, NocId, Rect, Xy};

use super::error::NocBenchError;
use super::flags::{MAX_DELIVERIES, NocBenchFlags, Pattern};

/// NoC0 coordinates of the port of DRAM bank `bank` that tt-metal's kernels read and write
/// through on `noc` (`None` for a bank above 7): `blackhole_pac::grid::dram_endpoint`, from
/// tt-metal's Blackhole DRAM metadata.
pub fn dram_port(bank: u8, noc: NocId) -> Option<(u8, u8)> {
    blackhole_pac::grid::dram_endpoint(bank, noc.index())
}

/// The transfers of a run, in raw coordinates of the NoC in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Transfers {
    /// Unicast writes to one node.
    Write(Xy),
    /// Multicasts to one rectangle.
    Multicast(Rect),
    /// Unicast writes to each node in turn.
    OneToAll(Vec<Xy>),
    /// Reads from one DRAM port.
    DramRead(Xy),
}

/// What the sender's kernel does: everything it needs, in raw coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Job {
    pub(super) transfers: Transfers,
    pub(super) size: u32,
    pub(super) count: u32,
    pub(super) mode: WriteMode,
    pub(super) linked: bool,
}

/// A checked `komorebi bench noc` run: the flags with every coordinate on the NoC in use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NocBench {
    pub(super) pattern: Pattern,
    pub(super) harvest: HarvestMask,
    pub(super) fused_dram: Option<u8>,
    pub(super) noc: NocId,
    pub(super) sender_noc0: (u8, u8),
    pub(super) job: Job,
    pub(super) destinations: u32,
    pub(super) cores_written: u32,
    pub(super) what: String,
}

fn raw(p: (u8, u8)) -> Result<Xy, NocBenchError> {
    Xy::new(p.0, p.1).map_err(|e| NocBenchError::Run(format!("coordinate {p:?}: {e}")))
}

/// Raw coordinates as the text output shows them: `(x,y)`, like logical ones.
fn show(p: Xy) -> String {
    format!("({},{})", p.x(), p.y())
}

fn not_for(flag: &'static str, allowed: &'static str, pattern: Pattern) -> NocBenchError {
    NocBenchError::NotForPattern {
        flag,
        allowed,
        pattern,
    }
}

impl NocBench {
    /// Checks `flags` and converts every core to the raw coordinates of the chosen NoC.
    pub fn new(flags: &NocBenchFlags) -> Result<Self, NocBenchError> {
        let pattern = flags.pattern;
        let multicast = pattern == Pattern::Multicast;
        let takes_rect = matches!(pattern, Pattern::Multicast | Pattern::OneToAll);
        if flags.linked && !multicast {
            return Err(not_for("--linked", "multicast", pattern));
        }
        if flags.linked && flags.count < 2 {
            // The last multicast never keeps its path: one alone is an unlinked one.
            return Err(NocBenchError::LinkedAlone { count: flags.count });
        }
        if flags.loopback && !multicast {
            return Err(not_for("--loopback", "multicast", pattern));
        }
        if flags.to.is_some() && pattern != Pattern::Unicast {
            return Err(not_for("--to", "unicast", pattern));
        }
        if flags.rect.is_some() && !takes_rect {
            return Err(not_for("--rect", "multicast or one-to-all", pattern));
        }
        if flags.bank.is_some() && pattern != Pattern::DramRead {
            return Err(not_for("--bank", "dram-read", pattern));
        }
        // Only a DRAM read meets a bank: elsewhere a fused one changes nothing measured.
        if flags.fused_dram.is_some() && pattern != Pattern::DramRead {
            return Err(not_for("--fused-dram", "dram-read", pattern));
        }
        let noc = if flags.noc == 0 {
            NocId::Noc0
        } else {
            NocId::Noc1
        };
        let mask = flags.harvest.bits();
        let geometry = crate::chip::blackhole(u32::from(mask))
            .map_err(|e| NocBenchError::Run(format!("--harvest {mask:#x}: {e}")))?;
        let (columns, rows) = (geometry.columns(), geometry.rows());
        let on_noc = |flag: &'static str, core: LogicalXy| {
            geometry
                .noc_xy((core.x, core.y), noc)
                .ok_or(NocBenchError::CoreOutside {
                    flag,
                    core,
                    columns,
                    rows,
                    mask,
                })
        };
        let sender = flags.sender;
        let from = show(raw(on_noc("--sender", sender)?)?);
        let on = format!("NoC{} {from}", noc.index());
        let sender_noc0 = geometry
            .noc0((sender.x, sender.y))
            .ok_or_else(|| NocBenchError::Run(format!("sender {sender} has no NoC0 tile")))?;
        let rect = if takes_rect {
            let rect = flags.rect.ok_or(NocBenchError::Missing {
                flag: "--rect",
                value: "X0,Y0,COLUMNS,ROWS",
                pattern,
            })?;
            if rect.is_empty() {
                return Err(NocBenchError::EmptyRect { rect });
            }
            if !geometry.full().covers(rect) {
                return Err(NocBenchError::RectOutside {
                    rect,
                    columns,
                    rows,
                    mask,
                });
            }
            rect
        } else {
            LogicalRect::default()
        };
        let sender_inside = rect.contains_xy(sender);
        let (transfers, destinations, what) = match pattern {
            Pattern::Unicast => {
                let to = flags.to.ok_or(NocBenchError::Missing {
                    flag: "--to",
                    value: "X,Y",
                    pattern,
                })?;
                let node = raw(on_noc("--to", to)?)?;
                let what = format!("{sender} -> {to}, {on} -> {}", show(node));
                (Transfers::Write(node), 1, what)
            }
            Pattern::Multicast => {
                if flags.loopback && !sender_inside {
                    return Err(NocBenchError::LoopbackOutside { rect, sender });
                }
                let receivers = rect.len() - usize::from(sender_inside && !flags.loopback);
                if receivers == 0 {
                    return Err(NocBenchError::NoReceiver { rect, sender });
                }
                let first = (rect.x0, rect.y0);
                let last = (rect.x0 + rect.columns - 1, rect.y0 + rect.rows - 1);
                // Mirroring reverses both axes, so on NoC 1 the last core is the start corner.
                let (start, end) = match noc {
                    NocId::Noc0 => (first, last),
                    NocId::Noc1 => (last, first),
                };
                let corner = |c: (u8, u8)| {
                    let p = on_noc("--rect", LogicalXy::new(c.0, c.1))?;
                    raw(p)
                };
                let noc_rect = Rect::new(corner(start)?, corner(end)?)
                    .map_err(|e| NocBenchError::Run(format!("--rect {rect}: {e}")))?;
                let what = format!(
                    "{sender} -> rect {rect}, {on} -> {}..={}, {}{}",
                    show(noc_rect.start()),
                    show(noc_rect.end()),
                    if flags.linked { "linked" } else { "unlinked" },
                    if flags.loopback { ", loopback" } else { "" }
                );
                (Transfers::Multicast(noc_rect), receivers as u32, what)
            }
            Pattern::OneToAll => {
                let mut nodes = Vec::with_capacity(rect.len());
                // Column by column, as tt-metal's host orders its cores (`corerange_to_cores`,
                // not row-wise: x outer, y inner).
                for x in rect.x0..rect.x0 + rect.columns {
                    for y in rect.y0..rect.y0 + rect.rows {
                        let core = LogicalXy::new(x, y);
                        if core != sender {
                            nodes.push(raw(on_noc("--rect", core)?)?);
                        }
                    }
                }
                if nodes.is_empty() {
                    return Err(NocBenchError::NoOtherCore { rect, sender });
                }
                let what = format!(
                    "{sender} -> {} of rect {rect} but the sender, one after another",
                    match nodes.len() {
                        1 => "the 1 core".to_string(),
                        n => format!("the {n} cores"),
                    }
                );
                (Transfers::OneToAll(nodes), 1, what)
            }
            Pattern::DramRead => {
                // The parser keeps --fused-dram in 0..=7.
                let banks = DramBanks::with_fused(flags.fused_dram).unwrap_or_default();
                let bank = flags.bank.unwrap_or(banks.nth(0));
                if !banks.contains(bank) {
                    return Err(NocBenchError::FusedBank { bank, banks });
                }
                let port0 = dram_port(bank, noc).ok_or_else(|| {
                    NocBenchError::Run(format!("--bank {bank}: no such bank (allowed: 0..=7)"))
                })?;
                let port = match noc {
                    NocId::Noc0 => port0,
                    NocId::Noc1 => Noc0Xy::new(port0.0, port0.1)
                        .map(|p| p.to_noc1().get())
                        .ok_or_else(|| {
                            NocBenchError::Run(format!("DRAM port {port0:?} is off the grid"))
                        })?,
                };
                let node = raw(port)?;
                let what = format!(
                    "DRAM bank {bank} -> {sender}, NoC{} {} -> {from} (the bank's port at NoC0 ({},{}))",
                    noc.index(),
                    show(node),
                    port0.0,
                    port0.1
                );
                (Transfers::DramRead(node), 1, what)
            }
        };
        let cores_written = match &transfers {
            Transfers::OneToAll(nodes) => nodes.len() as u32,
            _ => 1,
        };
        let deliveries = u64::from(flags.count)
            * u64::from(flags.size.div_ceil(MAX_PACKET_BYTES))
            * u64::from(cores_written)
            * u64::from(destinations);
        if deliveries > MAX_DELIVERIES {
            return Err(NocBenchError::TooManyDeliveries {
                count: flags.count,
                deliveries,
            });
        }
        let mut mode = WriteMode::ORDERED;
        if flags.loopback {
            mode = mode.with_loopback();
        }
        Ok(Self {
            pattern,
            harvest: flags.harvest,
            fused_dram: flags.fused_dram,
            noc,
            sender_noc0,
            job: Job {
                transfers,
                size: flags.size,
                count: flags.count,
                mode,
                linked: flags.linked,
            },
            destinations,
            cores_written,
            what,
        })
    }

    /// Receiving nodes of one transaction: a multicast's receiving cores (the sender among them
    /// with `--loopback` when it lies inside the rectangle), 1 otherwise.
    pub fn destinations(&self) -> u32 {
        self.destinations
    }

    /// Transactions the sender issues: `--count`, times the cores written for one-to-all.
    pub fn transactions(&self) -> u64 {
        u64::from(self.job.count) * u64::from(self.cores_written)
    }

    /// Bytes the sender injects (or, for dram-read, reads): transactions x `--size`.
    pub fn bytes(&self) -> u64 {
        self.transactions() * u64::from(self.job.size)
    }
}
