//! What a run reports beyond the chip's own state: protocol violations, counts, and the
//! diagnostic views of tasks, circular buffers and NIU counters the host asks for.
//!
//! Leaf module: plain data, imports nothing of the crate.

use komorebi_hal::Role;

/// Something the simulator saw that a real chip would not report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Violation {
    /// A NoC write landed on circular-buffer pages its consumer had not popped.
    OverwroteUnpoppedPages {
        /// NoC0 coordinates of the tile.
        tile: (u8, u8),
        /// Circular buffer index.
        cb: u8,
        /// First overwritten page (index into the buffer).
        page: u16,
        /// L1 address written.
        addr: u32,
        /// Cycle.
        time: u64,
    },
    /// A NoC write's source changed between its issue and its packet's departure (before
    /// `writes_sent` counted it): which bytes went out depends on when the NIU read them
    /// (`SimConfig::source_read`, checked modes only).
    SourceChangedInFlight {
        /// NoC0 coordinates of the writing tile.
        tile: (u8, u8),
        /// L1 address of the packet's source.
        addr: u32,
        /// Cycle of the issue.
        issued: u64,
        /// Cycle the packet left.
        time: u64,
    },
    /// A NoC request to a port of the fused DRAM bank (`SimConfig::fused_dram`): refused, never
    /// served, since on a card nothing answers there (the ARC firmware leaves the bank off).
    FusedDram {
        /// NoC0 coordinates of the requesting tile.
        tile: (u8, u8),
        /// The NoC (0 or 1).
        noc: u8,
        /// The bank.
        bank: u8,
        /// Raw coordinates of the port on that NoC.
        port: (u8, u8),
        /// Cycle.
        time: u64,
    },
    /// An inline write aimed at L1 (broken on Blackhole).
    InlineWriteToL1 {
        /// NoC0 coordinates of the writing tile.
        tile: (u8, u8),
        /// NoC0 coordinates of the target.
        target: (u8, u8),
        /// Cycle.
        time: u64,
    },
    /// A read or unicast write issued while its NIU had a linked multicast run open
    /// (`NOC_CMD_VC_LINKED`): on another virtual channel than the run's, so its VC assignment
    /// fails for ever and the NIU initiates nothing from then on, the run's closing multicast
    /// included (ISA `MemoryMap.md`, `NOC_CTRL` bit 6). The HAL refuses such a call; firmware
    /// driving the NIU registers can still issue it.
    LinkedRunHungNiu {
        /// NoC0 coordinates of the issuing tile.
        tile: (u8, u8),
        /// The NIU (its NoC, 0 or 1).
        noc: u8,
        /// `"read"` or `"unicast write"`.
        request: &'static str,
        /// NoC0 coordinates of the tile or DRAM port read from or written to.
        target: (u8, u8),
        /// The address read from or written to there.
        addr: u64,
        /// Bytes of the request.
        len: u32,
        /// The open run's rectangle, raw corners of NoC `noc` as issued.
        run: ((u8, u8), (u8, u8)),
        /// Cycle of the issue.
        time: u64,
    },
    /// A Blackhole firmware core loaded from L1 with its L0 data cache on (`cfg0` bit 3 clear,
    /// as at reset). komorebi-silicon loads what the NoC writes without a `fence` first, which
    /// is right only with the cache off (`Chip::configure_core`, which komorebi's `_start`
    /// calls): on a card such a load may return a stale value (a word read before its flag, for
    /// example). The model has no L0 data cache, so it flags the load rather than returning
    /// stale data. Recorded at a core's first such load (once each time the core is started).
    LoadWithL0DataCacheOn {
        /// NoC0 coordinates of the tile.
        tile: (u8, u8),
        /// The core's kernel (`"reader"`, `"writer"` or `"compute"`).
        kernel: &'static str,
        /// Cycle of the core's clock when the load was seen (at most one run slice after it).
        time: u64,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OverwroteUnpoppedPages {
                tile,
                cb,
                page,
                addr,
                time,
            } => write!(
                f,
                "cycle {time}: tile {tile:?} CB {cb}: NoC write at {addr:#x} overwrote page {page}, \
                 which compute had not popped"
            ),
            Self::SourceChangedInFlight {
                tile,
                addr,
                issued,
                time,
            } => write!(
                f,
                "cycle {time}: tile {tile:?}: the source at {addr:#x} of a NoC write issued at \
                 cycle {issued} changed before its packet left"
            ),
            Self::FusedDram {
                tile,
                noc,
                bank,
                port,
                time,
            } => write!(
                f,
                "cycle {time}: tile {tile:?}: {}",
                fused_dram_request(*noc, *bank, *port)
            ),
            Self::LoadWithL0DataCacheOn { tile, kernel, time } => write!(
                f,
                "cycle {time}: tile {tile:?} {kernel}: a load from L1 with the core's L0 data \
                 cache on (cfg0 bit 3 clear): firmware that loads without a fence must turn the \
                 cache off first"
            ),
            Self::InlineWriteToL1 { tile, target, time } => {
                write!(
                    f,
                    "cycle {time}: tile {tile:?} issued an inline write to L1 of {target:?}"
                )
            }
            Self::LinkedRunHungNiu {
                tile,
                noc,
                request,
                target,
                addr,
                len,
                run,
                time,
            } => write!(
                f,
                "cycle {time}: tile {tile:?} NIU{noc}: a {request} of {len} bytes at {target:?} \
                 {addr:#x} was issued while a linked multicast run to {:?}..={:?} held the NIU's \
                 virtual channel (NOC_CMD_VC_LINKED): the NIU initiates no request any more, the \
                 run's closing multicast included; close a run before reading or writing unicast",
                run.0, run.1
            ),
        }
    }
}

/// What a NoC request to a port of the fused DRAM bank is, in words: the violation's text and
/// the refusal's.
pub(crate) fn fused_dram_request(noc: u8, bank: u8, port: (u8, u8)) -> String {
    format!(
        "a NoC{noc} request to DRAM bank {bank} (port {port:?} on NoC{noc}): the bank is fused \
         off on this chip (its clock is off on a card: the request would never be answered)"
    )
}

/// Counts for benchmarks and summaries.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Queue items processed.
    pub events: u64,
    /// Kernel polls.
    pub polls: u64,
    /// Packets sent.
    pub packets: u64,
    /// Flits injected.
    pub flits: u64,
    /// Flit-hops (flits times links crossed).
    pub flit_hops: u64,
    /// Deliveries (one per destination of a packet).
    pub deliveries: u64,
    /// Bytes delivered into L1 by multicasts.
    pub multicast_bytes: u64,
    /// Instructions the firmware cores executed.
    pub instructions: u64,
}

fn role_name<S: serde::Serializer>(role: &Role, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(role.name())
}

/// A task as diagnostics show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TaskInfo {
    /// Task id.
    pub task: usize,
    /// NoC0 coordinates of its tile.
    pub tile: (u8, u8),
    /// Which kernel (serialized as its name).
    #[serde(serialize_with = "role_name")]
    pub kernel: Role,
    /// Its clock.
    pub local: u64,
    /// `running`, `waiting`, `done`, `stalled`, or `reset` (dropped: its core was put back into
    /// soft reset).
    pub state: &'static str,
}

/// A circular buffer as the simulator holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CbState {
    /// L1 address of page 0.
    pub base: u32,
    /// Bytes per page.
    pub page_size: u32,
    /// Pages.
    pub pages: u16,
    /// Pages pushed (wrapping).
    pub pushed: u16,
    /// Pages popped (wrapping).
    pub popped: u16,
    /// The producer's next page.
    pub write_page: u16,
    /// The consumer's oldest page.
    pub read_page: u16,
}

/// One NIU's counters: the hardware's (`NIU_MST_RD_RESP_RECEIVED`,
/// `NIU_MST_(NON)POSTED_WR_REQ_SENT`, `NIU_MST_WR_ACK_RECEIVED`) and the software counts a
/// driver keeps to compare them with.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NiuCounters {
    /// Read packets issued.
    pub reads_issued: u32,
    /// Read responses received.
    pub reads_done: u32,
    /// Non-posted write packets issued.
    pub nonposted_writes_issued: u32,
    /// Non-posted write packets sent.
    pub nonposted_writes_sent: u32,
    /// Posted write packets issued.
    pub posted_writes_issued: u32,
    /// Posted write packets sent.
    pub posted_writes_sent: u32,
    /// Acks expected (one per destination of each non-posted packet).
    pub acks_expected: u32,
    /// Acks received.
    pub acks_received: u32,
}

/// Why a firmware core stopped (`Sim::core_faults`): an instruction it could not execute, or
/// an access or NoC command the model refuses. The core stops; nothing else of the chip does.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CoreFault {
    /// NoC0 coordinates of the tile.
    pub tile: (u8, u8),
    /// The core's kernel (serialized as its name).
    #[serde(serialize_with = "role_name")]
    pub kernel: Role,
    /// Address of the instruction.
    pub pc: u32,
    /// Address of the access, if the fault was an access.
    pub addr: Option<u32>,
    /// What was wrong.
    pub what: String,
    /// The core's cycle.
    pub at: u64,
}

impl std::fmt::Display for CoreFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} core of tile {:?} stopped at pc {:#x}",
            self.kernel, self.tile, self.pc
        )?;
        if let Some(a) = self.addr {
            write!(f, ", address {a:#x}")?;
        }
        write!(f, ", cycle {}: {}", self.at, self.what)
    }
}

/// One line a native kernel logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLogLine {
    /// NoC0 coordinates of its tile.
    pub tile: (u8, u8),
    /// The kernel.
    pub kernel: Role,
    /// The kernel's clock when it logged.
    pub cycle: u64,
    /// The level.
    pub level: log::Level,
    /// The message, its arguments put in.
    pub message: String,
}
