//! Where each sender's copy of a plan's pages lies in DRAM, as `komorebi layout` prints it: the
//! bank of each of its page streams and the layer of the banks' address space the copy takes
//! (`placement`), and the bytes the layers take. Read-only views of the plan; the plan itself
//! writes and addresses the copies.

use komorebi_hal::LogicalXy;
use komorebi_kernel::broadcast_handler::program::STREAMS;

use super::plan::BroadcastPlan;

impl BroadcastPlan {
    /// The senders of broadcast `id` (0: A, 1: W), logical, in layout order, each with the
    /// bank of each of its page streams (the DRAM placement) and the layer its copy lies in with
    /// its shift into it in pages ([`Layers`](super::Layers)); empty when the plan does not run
    /// that broadcast.
    pub fn sender_banks(&self, id: u8) -> Vec<(LogicalXy, [u8; STREAMS], (u32, u8))> {
        let Some(i) = self.operands.iter().position(|s| s.id == id) else {
            return Vec::new();
        };
        self.words[i]
            .iter()
            .enumerate()
            .filter_map(|(core, c)| Some((c.core.into(), self.placement.banks(i, core)?)))
            .enumerate()
            .map(|(sender, (xy, banks))| (xy, banks, self.placement.layers().of(i, sender as u64)))
            .collect()
    }

    /// How many layers deep the senders' copies lie in each bank ([`Layers`](super::Layers)).
    pub fn dram_layers(&self) -> u32 {
        self.placement.layers().count()
    }

    /// Bytes of one layer ([`super::placement::Layers`]): a copy's span and the largest shift.
    pub(super) fn layer_bytes(&self) -> u64 {
        let shift = u64::from(self.placement.layers().max_shift());
        self.cfg
            .copy_bytes()
            .saturating_add(shift * u64::from(self.cfg.page_size))
    }

    /// Bytes of every bank one job's data takes: its layers.
    pub(super) fn layers_bytes(&self) -> u64 {
        u64::from(self.placement.layers().count()).saturating_mul(self.layer_bytes())
    }
}
