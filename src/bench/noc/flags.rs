//! The flags of `komorebi bench noc`, the patterns, and the limits the flags' ranges come from
//! (the L1 buffers and the packet budget of one run).

use std::fmt;

use blackhole_pac::grid::DRAM_BANKS;
use blackhole_pac::harvest::HarvestMask;
use komorebi_hal::{LogicalRect, LogicalXy};
use komorebi_kernel::abi::{CONTROL_BASE, CONTROL_BYTES};
use serde::Serialize;

use crate::cli::{parse_harvest, parse_rect, parse_xy};
use crate::num::ranged;

/// L1 address of the source of every write and multicast, on every core: above the control
/// block (`0x4000..0x5000`) and the firmware images (which end at `0x30000`).
pub const SRC_ADDR: u32 = 0x4_0000;
/// Largest `--size`: 512 KiB. The source and the destination ([`DST_ADDR`]) each take this
/// much, one after the other, so they never overlap (a loopback's sender receives into its
/// destination while it sends from its source).
pub const MAX_SIZE: u32 = 512 * 1024;
/// L1 address where writes, multicasts and DRAM reads land: right after the largest source.
pub const DST_ADDR: u32 = SRC_ADDR + MAX_SIZE;
/// Most packet deliveries of one run: NoC packets (of at most 16 KiB; `--count` x packets per
/// transaction, x cores for one-to-all) x receivers of each (a multicast's destinations, else
/// 1). The sender queues every packet at once and the simulator's work grows with the
/// deliveries, so this bounds a run's memory and wall time: runs at this limit took 6-24 s and
/// at most 385 MB on this project's 2-core machine (debug build, whose simulator is optimized).
pub const MAX_DELIVERIES: u64 = 1 << 21;
/// DRAM address every `dram-read` transaction reads (one fixed address, as tt-metal's DRAM
/// tests read).
pub const DRAM_ADDR: u64 = 0;

const _: () = {
    assert!(SRC_ADDR >= CONTROL_BASE + CONTROL_BYTES);
    assert!(DST_ADDR + MAX_SIZE <= blackhole_pac::tensix::L1_USABLE_SIZE);
    assert!(SRC_ADDR.is_multiple_of(64) && DST_ADDR.is_multiple_of(64));
};

/// `--pattern`: the data-movement pattern of `komorebi bench noc`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// One core writes to one core (--to).
    Unicast,
    /// One core multicasts to a rectangle (--rect; --linked, --loopback).
    Multicast,
    /// One core writes to every other core of a rectangle in turn (--rect).
    OneToAll,
    /// One core reads from a DRAM bank (--bank).
    DramRead,
}

impl Pattern {
    /// The flag value: `unicast`, `multicast`, `one-to-all` or `dram-read`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Unicast => "unicast",
            Self::Multicast => "multicast",
            Self::OneToAll => "one-to-all",
            Self::DramRead => "dram-read",
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The flags of `komorebi bench noc`.
#[derive(clap::Args, Debug, Clone)]
pub struct NocBenchFlags {
    /// The data-movement pattern.
    #[arg(long, value_enum)]
    pub pattern: Pattern,
    /// Bytes of one transaction (1..=524288, decimal or 0x-hex); the simulator splits it into
    /// NoC packets of at most 16 KiB. Source at L1 0x40000, destination at L1 0xC0000.
    #[arg(long, value_name = "BYTES", value_parser = ranged::<u32>(1, MAX_SIZE as u64))]
    pub size: u32,
    /// Transactions back to back, then one barrier (1..=2097152; at most 2097152 deliveries in
    /// all: packets of at most 16 KiB x receivers of each).
    #[arg(long, value_name = "N", value_parser = ranged::<u32>(1, MAX_DELIVERIES), default_value_t = 1)]
    pub count: u32,
    /// The core that issues every transaction, logical X,Y (each 0..=255, inside the logical
    /// grid of --harvest: 12 x 10 for 0x3000).
    #[arg(long, value_name = "X,Y", value_parser = parse_xy, default_value = "0,0")]
    pub sender: LogicalXy,
    /// unicast only (and required there): the target core, logical X,Y (each 0..=255, inside
    /// the logical grid of --harvest; the sender itself is allowed: a write to its own L1).
    #[arg(long, value_name = "X,Y", value_parser = parse_xy)]
    pub to: Option<LogicalXy>,
    /// multicast and one-to-all only (and required there): the rectangle X0,Y0,COLUMNS,ROWS of
    /// logical cores (as `broadcast --rect`: each 0..=255, inside the logical grid of
    /// --harvest).
    #[arg(long, value_name = "X0,Y0,COLUMNS,ROWS", value_parser = parse_rect)]
    pub rect: Option<LogicalRect>,
    /// multicast only: every multicast but the last keeps its path reserved for the next
    /// (linked), the last releases it, as tt-metal's kernels do.
    #[arg(long)]
    pub linked: bool,
    /// multicast only: a sender inside the rectangle receives too and acknowledges
    /// (tt-metal's loopback / INCLUDE_SRC).
    #[arg(long)]
    pub loopback: bool,
    /// dram-read only: the DRAM bank (0..=7 but the fused one; default 0, tt-metal's default
    /// dram_channel, or bank 1 when --fused-dram 0), read through the port tt-metal's kernels
    /// use on the chosen NoC (its Blackhole DRAM metadata, `worker_endpoint`), in NoC0
    /// coordinates: on NoC 0 banks 0..=7 at (0,11) (0,2) (0,9) (0,5) (9,11) (9,3) (9,8) (9,6),
    /// on NoC 1 at (0,1) (0,10) (0,4) (0,7) (9,1) (9,10) (9,4) (9,7).
    #[arg(long, value_name = "N", value_parser = ranged::<u8>(0, DRAM_BANKS as u64 - 1))]
    pub bank: Option<u8>,
    /// The NoC: 0 (the sender's komorebi reader kernel, BRISC) or 1 (its writer, NCRISC);
    /// tt-metal's DRAM read test reads on NoC 1 (its `RISCV_1` reader).
    #[arg(long, value_parser = ranged::<u8>(0, 1), default_value_t = 0)]
    pub noc: u8,
    /// Die-order harvest mask of the simulated chip, decimal or 0x-hex, 0..=0x3fff: 0 harvests
    /// no column (a 14 x 10 logical grid); the default 0x3000 is the p100/p150 mask (12 x 10).
    #[arg(long, value_name = "MASK", value_parser = parse_harvest, default_value = "0x3000")]
    pub harvest: HarvestMask,
    /// dram-read only: the simulated chip's fused DRAM bank, 0..=7 (default: none, all 8 banks
    /// work; a p100 has one): --bank may not name it.
    #[arg(long, value_name = "BANK", value_parser = ranged::<u8>(0, DRAM_BANKS as u64 - 1))]
    pub fused_dram: Option<u8>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
