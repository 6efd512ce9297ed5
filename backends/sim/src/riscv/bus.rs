//! What the hart sees of the world: the [`Bus`] trait, through which it fetches instructions
//! and makes every load and store that is not to its own data RAM, and the Blackhole addresses
//! the bus is expected to decode.
//!
//! One interface serves every target: the simulator's implementation decodes the address
//! (L1 at `0x0`, MMIO registers from `0xFFB0_0000` up, NIUs at [`NOC0_REGS`] and [`NOC1_REGS`])
//! and answers with the value and its latency, a fault, or [`BusResult::Retry`] when the access
//! cannot complete at this simulated time (a full command FIFO, a read of a register that
//! waits on an event). The hart owns its local data RAM and never sends accesses to it down
//! the bus.

use super::op::Size;

/// Start of L1 in the core's address space (`MEM_L1_BASE`, BH README "Memory map").
pub const L1_BASE: u32 = 0x0000_0000;
/// Size of a Tensix tile's L1: 1536 KiB (`0x0000_0000` to `0x0017_FFFF`, BH README
/// "Memory map"). Instructions are fetched from L1 only (BH README "Frontend").
pub const L1_SIZE: u32 = blackhole_pac::tensix::L1_SIZE;
/// Start of the core-private local data RAM (`MEM_LOCAL_BASE`, BH README "Memory map").
pub const LOCAL_RAM_BASE: u32 = blackhole_pac::tensix::LOCAL_MEM_BASE;
/// Local data RAM of a data-movement core (RISCV B and NC): 8 KiB (BH README "Local Data RAM").
pub const LOCAL_RAM_DM: u32 = blackhole_pac::tensix::LOCAL_MEM_DM_SIZE;
/// Local data RAM of a compute core (RISCV T0, T1, T2): 4 KiB (BH README "Local Data RAM").
pub const LOCAL_RAM_TRISC: u32 = blackhole_pac::tensix::LOCAL_MEM_TRISC_SIZE;
/// Start of NoC 0's configuration and command registers (NIU 0), `NOC0_REGS_START_ADDR`.
pub const NOC0_REGS: u32 = blackhole_pac::niu::NIU0_BASE as u32;
/// Start of NoC 1's configuration and command registers (NIU 1), `NOC1_REGS_START_ADDR`.
pub const NOC1_REGS: u32 = blackhole_pac::niu::NIU1_BASE as u32;

/// What a memory access was, for faults and retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// An instruction fetch (always a word).
    Fetch,
    /// A data load of this width.
    Load(Size),
    /// A data store of this width.
    Store(Size),
}

/// The answer to one bus access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusResult<T> {
    /// The access completed.
    Done {
        /// The value read (loads: in the low bytes, the hart ignores the rest; stores: `()`).
        value: T,
        /// Its cost in core cycles. For loads and stores, the instruction's cycles (the load
        /// latency of the BH README table; see [`Cost`](super::cost::Cost) for defaults); the
        /// hart charges at least `Cost::base`. For fetches, extra stall cycles on top of the
        /// instruction's own (0 for an instruction-cache hit).
        cycles: u32,
    },
    /// The access cannot complete now. The hart does not retire the instruction: `pc`,
    /// registers and cycle count are unchanged and `run` returns, so the caller can let
    /// simulated time pass and run again, which makes the same access again. The bus must
    /// not have applied any effect of an access it answers `Retry` to.
    Retry,
    /// Nothing answers at this address (or the access is refused): the hart stops with a
    /// bus fault.
    Fault,
}

/// The hart's view of memory and devices. Implemented by the simulator (L1, MMIO, NIUs) and,
/// in tests, by a plain RAM ([`RamBus`](super::ram::RamBus)).
///
/// `at` is the hart's cycle count when the access is made (before the instruction's cost is
/// added), so a device can order accesses in simulated time. Addresses are naturally aligned:
/// the hart faults misaligned data accesses and misaligned fetches before they reach the bus.
/// Accesses to the hart's local data RAM (`LOCAL_RAM_BASE` up to its size) never reach the
/// bus; the rest of the `0xFFB0_0000` window (for example `0xFFB0_1000..0xFFB0_2000` of a
/// compute core, unmapped on silicon) does.
pub trait Bus {
    /// Fetch the instruction word at `addr` (4-aligned, inside the hart's code region).
    fn fetch(&mut self, addr: u32, at: u64) -> BusResult<u32>;
    /// Load `size` bytes at `addr`, little-endian, into the low bytes of the value.
    fn load(&mut self, addr: u32, size: Size, at: u64) -> BusResult<u32>;
    /// Store the low `size` bytes of `value` at `addr`, little-endian.
    fn store(&mut self, addr: u32, size: Size, value: u32, at: u64) -> BusResult<()>;
}
