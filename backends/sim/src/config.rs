//! What a simulated chip is made of, and how the simulation behaves.

use blackhole_pac::harvest::HarvestMask;

use crate::timing::Timing;

/// Where the tile control block sits in L1 and where its stop flag and wait limit are. The
/// runtime's ABI (`komorebi-kernel`) owns these numbers and hands them to the simulator; the
/// defaults are that ABI's.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ControlLayout {
    /// L1 address of the control block (16-byte aligned).
    pub base: u32,
    /// Bytes in the control block.
    pub len: u32,
    /// Offset of the stop word (nonzero = stop).
    pub stop_offset: u32,
    /// Offset of the 64-bit wait limit (low word, then high word).
    pub wait_limit_offset: u32,
}

impl Default for ControlLayout {
    fn default() -> Self {
        Self {
            base: 0x4000,
            len: 0x1000,
            stop_offset: 0x10,
            wait_limit_offset: 0x18,
        }
    }
}

/// The configuration of one simulated chip.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Harvested Tensix columns (die order). Default: two columns (NoC0 x = 7 and 10), 120
    /// Tensix, as p100 and p150 parts present with current firmware.
    pub harvest: HarvestMask,
    /// Seed of every random choice (adversarial delays and schedule tie-breaks).
    pub seed: u64,
    /// Reorder, within `jitter_cycles`, everything the hardware does not order, and break
    /// scheduling ties at random.
    pub adversarial: bool,
    /// Largest extra delay the adversary adds to one delivery.
    pub jitter_cycles: u64,
    /// The timing model.
    pub timing: Timing,
    /// The control block's place and words.
    pub control: ControlLayout,
    /// Record a Chrome/Perfetto trace of every NoC transfer and kernel wait.
    pub trace: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            harvest: HarvestMask::P100_P150,
            seed: 0,
            adversarial: false,
            jitter_cycles: 256,
            timing: Timing::default(),
            control: ControlLayout::default(),
            trace: false,
        }
    }
}
