//! # komorebi-sim
//!
//! A deterministic, timed simulator of one Tenstorrent Blackhole chip that implements the
//! komorebi HAL. It is the default backend of every example and test: no Blackhole card is
//! needed. For the native kernels it also models a Wormhole B0 ([`SimConfig::wormhole`],
//! [`ChipModel`]): its grid, row harvesting, DRAM banks, L1 and circular buffers, its own PCIe
//! windows and its ARC in BAR0 ([`arc_wormhole`]), with timing calibrated against tt-metal's
//! measured Wormhole figures ([`Timing::wormhole`]). What follows describes the Blackhole; the
//! firmware cores model only it.
//!
//! ## What it models
//! * **The chip**: the 17 x 12 NoC0 and NoC1 tori with real raw coordinates; the Tensix tiles of a
//!   harvest mask (default two columns harvested, 120 Tensix); 1536 KiB of L1 per Tensix and
//!   8 DRAM banks of 4 GiB, both sparse (allocated on first write), or 7 with
//!   [`SimConfig::fused_dram`]: ARC telemetry then leaves the fused bank out, translated DRAM
//!   coordinates follow the ARC firmware's table for it, and any access to one of its ports, by
//!   the NoC ([`Violation::FusedDram`], refused with `ErrorKind::Fault`) or the host
//!   ([`SimError::FusedDram`]), is a fault, never data (its clock is off on a card).
//! * **Per Tensix**: NIU0 and NIU1 with Blackhole's counter semantics (reads done; non-posted and
//!   posted writes sent; acks, one per destination of a multicast); up to 64 circular buffers
//!   with pushed/popped counters and both kernels' pointers; the control block in L1 with its
//!   stop flag and wait limit; one clock per kernel.
//! * **The NoC**: dimension-order routing (NoC0 X then Y, NoC1 Y then X, each in the + direction
//!   of its own raw coordinates); multicast to a rectangle with the hardware's wrap semantics
//!   (reversed corners wrap around the torus, so a wrong corner order misdelivers, as on
//!   silicon), the sender excluded unless the mode includes it (loopback), only Tensix tiles
//!   receiving, never reads; linked runs of multicasts that keep their path reserved; packets of
//!   at most 16 KiB (longer transfers split); links arbitrated per VC class as packets arrive,
//!   with wormhole forwarding (`link`).
//! * **Ordering**: only what the hardware orders: writes of one source on one NoC to one
//!   destination set in the ordered class (static VC) arrive in issue order. With
//!   `SimConfig::adversarial` everything else (relaxed writes, read responses, acks, writes to
//!   other destinations) is delayed by a seeded random amount, and scheduling ties are broken at
//!   random, so unordered things really do come in other orders.
//! * **Hardware bugs as errors**: an inline write to L1 is refused (`HardwareHazard`) and
//!   recorded; a write's source bytes are read when the packet leaves, so changing the source
//!   before `writes_sent` delivers the changed bytes. A read or unicast write during a linked
//!   run is refused (`InvalidMode`); a firmware core that issues one anyway through the NIU
//!   registers hangs that NIU, which initiates nothing more, and the run records a
//!   [`Violation::LinkedRunHungNiu`] naming the tile, NIU and request.
//! * **Timing** ([`Timing`]): 64-byte flits, one flit per cycle per link, 9-cycle router hops,
//!   5-cycle NIU hops, issue floors, path reservation per multicast (once per linked run), acks
//!   and loopback copies through the ejection port, DRAM 512 GB/s over 8 banks (half rate for a
//!   repeated row), AICLK 1.35 GHz; calibrated against tt-metal's measured figures in
//!   tt-metal's shapes (`tests/calibration.rs`).
//! * **Checks a chip cannot make**: a NoC write onto circular-buffer pages that the consumer has
//!   not popped is a [`Violation`] with tile, buffer, page and cycle.
//! * **Faults** ([`Fault`]): stall a kernel (from a cycle, or at a push/pop count), freeze a
//!   tile, drop or delay one transaction matching a filter; for the host, a hung device (every
//!   BAR read all 0xFF) or a dead tile.
//! * **Trace**: optional Chrome/Perfetto JSON of every transfer and kernel wait, held in memory
//!   ([`SimConfig::trace`], [`Sim::trace_json`]) or streamed to a writer as the events happen
//!   ([`Sim::trace_to`], [`Sim::finish_trace`]), so a long run's trace costs no memory.
//!
//! ## Execution
//! Every kernel of every tile is an `async` task of one single-threaded executor in virtual
//! time. A kernel waiting through `komorebi_hal::wait_until` parks until something on its tile
//! changes or its deadline comes; when every task waits, time jumps to the next event, so a
//! timeout in an idle chip costs one step. The seed fixes every choice: the same seed and
//! inputs give the same run, cycle for cycle.
//!
//! Approximation, stated: a kernel's HAL calls take effect at once, at the kernel's own clock,
//! which can run a few tens of cycles ahead of the global time of the event that woke it.
//!
//! ## Host side
//! Two ways in. The simulator's own accessors read and write any tile's L1 and DRAM at once,
//! past every window, fault and held write ([`Sim::read_l1`], [`Sim::write_l1`],
//! [`Sim::multicast_l1`], [`Sim::read_dram`], [`Sim::write_dram`]): for tests and for what a
//! card has no equivalent of. And the PCIe device ([`Sim::bar_write`], [`Sim::bar_read`]),
//! which presents what a card presents, so the PCIe backend drives it exactly as it drives a
//! card's mapped windows (docs/blackhole.md, "PCIe BARs" and "TLB windows"):
//! * **BAR0/BAR4 TLB windows** (202 x 2 MiB, 8 x 4 GiB), programmed through their
//!   configuration registers at BAR0 `0x1FC0_0000`; BAR0 also holds the PCIe tile's
//!   `NIU_CFG_0` (bit 14: translation) and `NOC_NODE_ID` ((2, 0)). Other BAR0 offsets are
//!   [`SimError::BadBar`].
//! * **Translated coordinates** ([`SimConfig::translation`], on by default, as in production):
//!   a window's coordinates go through `blackhole_pac::translate`; a multicast's translated
//!   corners bound a raw rectangle with the hardware's wrap semantics.
//! * **Targets**: a Tensix's L1 and its registers at `0xFFB0_0000..` (soft reset, reset PCs
//!   and overrides, the 64-bit wall clock with its latch, `NOC_ID_LOGICAL`); DRAM banks at raw
//!   or translated coordinates; ARC at (8, 0) with boot status and the telemetry table
//!   ([`arc`]).
//! * **Boot** ([`SimConfig::boot`], [`Sim::set_boot_hook`], [`Sim::boot_failures`]): a chip
//!   held in reset boots a core when the host clears its soft-reset bit and the core's image
//!   header and reset PC are right; the host's hook then starts the native kernel of that
//!   role, or the image itself ([`Sim::spawn_firmware`]). Setting the bit again stops the
//!   core's task.
//! * **Firmware cores** ([`Sim::spawn_firmware`], [`riscv`], [`CoreFault`]): an RV32IM hart
//!   (with Blackhole's Zba and Zbb on a Blackhole)
//!   per core executes whatever L1 holds, from the core's reset PC, by a documented cost rule;
//!   its loads and stores reach L1, the NIU command buffers and counters (which drive the same
//!   NoC engine as the native HAL), the circular buffers' stream counters and the tile
//!   registers. An access the model does not know stops that core with a [`CoreFault`].
//! * **Ordering** ([`SimConfig::reorder_posted_writes`]): writes through windows that are not
//!   `Strict` are held per destination and land in a seeded random order (at a read-back of
//!   the same tile, before a Strict write to it, or when time passes), so publishing an index
//!   word without a barrier is observably wrong.
//!
//! Virtual time passes only when the host asks: [`Sim::run_until`] / [`Sim::run`] (until the
//! chip is idle or a deadline) and [`Sim::advance`] (a host that waits: the clock moves even
//! when the chip is idle).
//!
//! ## Layout
//! The files follow the chip. Leaf modules hold plain data and pure functions and import
//! nothing of the crate but other leaves; every other module uses only its children and
//! modules below it in this table, so the imports form a tree with no circle (the workspace's
//! `tests/house.rs` checks both: `the_simulator_s_leaf_modules_import_only_leaves` and
//! `every_crate_s_files_import_each_other_without_circles`).
//!
//! | Module | What it is for | What it guarantees |
//! |---|---|---|
//! | [`rng`] | SplitMix64, the workspace's one seeded generator | leaf; a state gives one sequence, forever |
//! | `packet` | tile indices, NoC targets, VC classes, write/read packets, queue items | leaf, plain data |
//! | `task` | a kernel task's scheduling state and bookkeeping | leaf, plain data |
//! | `report` | [`Violation`], [`Stats`], [`TaskInfo`], [`CbState`], [`NiuCounters`], [`KernelLogLine`](kernel_log::KernelLogLine) | leaf, plain data |
//! | [`kernel_log`] | the native kernels' log lines: the process's `log` logger, filing each record under the task being polled | uses `world`, `report` |
//! | `error` | [`SimError`], the host side's refusals | leaf |
//! | `boot` | [`Boot`], [`Core`], [`BootFailure`]; the check a released core's image passes | leaf |
//! | [`config`], [`timing`] | [`SimConfig`], [`SourceRead`] and the calibrated [`Timing`] model | leaves (`config` uses `boot`, `timing`) |
//! | [`arc`] | ARC's boot status, telemetry table and message queues as a window reaches them ([`arc::ArcState`]) | leaf; the telemetry is computed from the configuration, the cycle and the clock the last AICLK message set |
//! | [`arc_wormhole`] | a Wormhole B0's ARC as the host reaches it through BAR0: scratch-register messages, telemetry pointers and table ([`arc_wormhole::WormholeArc`]) | uses `config` and `error` only |
//! | `regs` | a Tensix's registers a host reaches: soft reset, reset PCs, wall clock, `NOC_ID_LOGICAL` | leaf |
//! | `posted` | host writes held per destination, in a seeded random order | leaf; uses `rng` |
//! | [`memory`] | sparse byte memory for L1 and DRAM | leaf; untouched bytes read 0 |
//! | [`route`] | dimension-order routes and raw coordinates, as pure functions | leaf; no state |
//! | [`fault`] | [`Fault`] and the armed transaction faults | leaf; a fault fires once |
//! | [`trace`] | Chrome/Perfetto trace events, held or streamed to a writer | leaf; a streamed trace keeps no events, and closes its JSON when dropped |
//! | [`profile`] | the firmware cores' cycle profiles: cycles by `pc` and call stack ([`CoreProfile`]) | leaf (uses `riscv`, `memory`); addresses only, no names |
//! | `mmio` | a baby core's register space: which register an address is, the command-buffer registers, a command read from them | leaf |
//! | `niu` | an NIU's counters and issue pipeline | leaf; counters wrap as the hardware's |
//! | [`riscv`] | an RV32IM + Zicsr (+ Zba, Zbb on Blackhole) baby-core hart ([`riscv::Hart`]), its [`riscv::Bus`] trait, cycle [`riscv::Cost`] rule and [`riscv::Probe`] for profilers; the firmware cores (`core`) run it | leaf (its files `riscv::{op, decode, cost, bus, stop, probe, hart, ram}` import only each other); faults are values, never panics |
//! | `tile` | Tensix tiles: L1, NIUs, circular buffers, ejection ports, registers; the coordinate grid | uses leaves only |
//! | `dram` | the 8 DRAM banks and their bandwidth (the fused bank's accesses are refused before they reach it: `bar`, `engine`) | uses `memory` only |
//! | `link` | routes as trees of hops; per-link, per-class arbitration as packets arrive, wormhole tails, path reservation and linked runs | uses leaves only |
//! | `scheduler` | the event queue in virtual time; parking, waking, deadlines, stalls, clocks | uses leaves only; one random stream per run |
//! | `world` | the chip as one state; the NoC's transactions from departure to landing | uses the parts above, never `hal` or `sim` |
//! | `engine` | the NoC requests a Tensix issues, checked, counted and queued: one engine for the native HAL and the firmware's NIU registers | uses `world` and leaves |
//! | `pcie` | the BAR0/BAR4 TLB windows: configuration words, translation, where an access lands; the PCIe tile's BAR0 registers | decodes only; uses `tile` and leaves |
//! | `bar` | the host's BAR accesses carried out on the world: targets, faults, held writes | uses `world`, `pcie` and leaves; soft-reset changes go back to `sim` |
//! | [`hal`] | the HAL on the simulated chip: [`SimNoc`] (`hal/noc.rs`), [`SimCb`] (`hal/cb.rs`), [`SimCtrl`] (`hal/ctrl.rs`), [`SimPause`] (`hal/pause.rs`), errors (`hal/error.rs`), [`KernelEnv`] | uses `world`, `engine` and leaves |
//! | `sim` | [`Sim`], the host's handle and the kernels' executor; stops and boots cores | uses `world`, `hal`, `bar` and leaves |

// The blocking build of the device crates (the firmware's, decisions D8) turns `Pause::pause`
// and every protocol call into plain fns; the simulator interleaves kernels as async tasks and
// has no such build. Refuse it here, with the reason, rather than at the first mismatched impl.
#[cfg(komorebi_blocking)]
compile_error!(
    "komorebi-sim runs kernels as async tasks; build it without --cfg komorebi_blocking"
);

pub mod arc;
pub mod arc_wormhole;
mod bar;
mod boot;
pub mod config;
mod core;
mod dram;
mod engine;
mod error;
pub mod fault;
pub mod hal;
pub mod kernel_log;
mod link;
pub mod memory;
mod mmio;
mod niu;
mod packet;
mod pcie;
mod posted;
pub mod profile;
mod regs;
mod report;
pub mod riscv;
pub mod rng;
pub mod route;
mod scheduler;
mod sim;
mod sim_logs;
mod sim_trace;
mod task;
mod tile;
pub mod timing;
pub mod trace;
mod world;

pub use boot::{Boot, BootFailure, Core};
pub use config::{ChipModel, SimConfig, SourceRead};
pub use error::SimError;
pub use fault::{Fault, StallFrom, TxAction, TxFilter, TxKind};
pub use hal::{CbError, CtrlError, KernelEnv, NocError, SimCb, SimCtrl, SimNoc, SimPause};
pub use profile::{CoreProfile, ProfileSample};
pub use report::{CbState, CoreFault, NiuCounters, Stats, TaskInfo, Violation};
pub use sim::{BootHook, RunOutcome, Sim};
pub use timing::{KernelCosts, Timing};
