//! The host memory the simulator takes for a run's DRAM data: whole chunks of each bank a page
//! lands in, counted from the plan the run will write (so the checks before a run refuse what
//! would not fit, and let run what would).

use komorebi_kernel::broadcast_handler::program::STREAMS;

use super::config::{BroadcastConfig, DRAM_RING};
use super::plan::BroadcastPlan;

impl BroadcastConfig {
    /// Host memory a run of these flags needs, roughly, beyond a few megabytes: on the
    /// simulator each chip's DRAM holding the jobs' data (the regions in use: every sender's
    /// copy of its pages, [`Self::host_bytes_per_region`]; a run of several chips writes into two
    /// regions of each chip's ring). A one-chip rank of an `--mpi` run writes into two too, but
    /// is counted as one chip's run (up to four: more than it needs). A `--trace` adds nothing
    /// that grows: its events go to the file as they happen ([`Self::trace_bytes`] is what it
    /// needs on disk).
    pub fn host_bytes(&self) -> u64 {
        let simulated = self.device.in_process();
        let dram = if !simulated {
            0
        } else if self.chips > 1 {
            let chips = self.chips.min(self.jobs) as u64;
            self.host_bytes_per_region()
                .saturating_mul(self.jobs.min(2) as u64)
                .saturating_mul(chips)
        } else {
            self.host_bytes_per_region()
                .saturating_mul(self.jobs.min(DRAM_RING) as u64)
        };
        dram.saturating_add(self.host_bytes_of_jobs())
    }

    /// Host memory one region of the simulator's DRAM takes with a job's data: whole chunks of
    /// each bank a page lands in ([`BroadcastPlan::host_bytes_per_job`]: pages next to
    /// each other go to different banks, so pages under the simulator's 4 KiB chunk take up to
    /// `4096 / page_size` times their bytes); the region's address span when the flags do not
    /// lay out.
    pub fn host_bytes_per_region(&self) -> u64 {
        let one = BroadcastConfig {
            jobs: 1,
            ..self.clone()
        };
        self.flags_geometry()
            .ok()
            .and_then(|g| BroadcastPlan::per_job(&one, &g).ok())
            .map_or_else(|| self.region_bytes(), |p| p.host_bytes_per_job())
    }
}

impl BroadcastPlan {
    /// Host memory the simulator takes for one job's DRAM data (region 0): every aligned
    /// [`komorebi_sim::memory::CHUNK_BYTES`] of a bank a page lands in. Pages next to each
    /// other in address go to different banks (a sender's page `g` to its stream `g % 8`'s), so
    /// pages under a chunk take a whole chunk in each bank: up to four times their bytes with
    /// 1 KiB pages.
    pub fn host_bytes_per_job(&self) -> u64 {
        let chunk = komorebi_sim::memory::CHUNK_BYTES;
        let mut chunks = std::collections::HashSet::new();
        for i in 0..self.operands.len() {
            for core in 0..self.words[i].len() {
                let Some(banks) = self.placement.banks(i, core) else {
                    continue;
                };
                let base = self.dram_base(0, i, core);
                for g in 0..u64::from(self.cfg.blocks) * u64::from(self.cfg.pages) {
                    let start = base + g * u64::from(self.cfg.page_size);
                    let end = start + u64::from(self.cfg.page_size);
                    for c in start / chunk..end.div_ceil(chunk) {
                        chunks.insert((banks[g as usize % STREAMS], c));
                    }
                }
            }
        }
        chunks.len() as u64 * chunk
    }
}
