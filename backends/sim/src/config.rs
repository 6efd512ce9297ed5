//! What a simulated chip is made of, and how the simulation behaves.
//!
//! Leaf module: imports only the leaf `timing`.

use blackhole_pac::harvest::HarvestMask;
use komorebi_hal::ControlLayout;
use komorebi_kernel::abi::CONTROL_LAYOUT;

use crate::timing::Timing;

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
    /// The control block's place and words (default: the runtime ABI's).
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
            control: CONTROL_LAYOUT,
            trace: false,
        }
    }
}
