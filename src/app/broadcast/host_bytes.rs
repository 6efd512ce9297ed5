//! The host memory the simulator takes for a run's DRAM data: whole chunks of each bank a page
//! lands in, counted from the plan the run will write (so the checks before a run refuse what
//! would not fit, and let run what would).

use komorebi_kernel::broadcast_handler::program::STREAMS;

use super::config::{BroadcastConfig, DRAM_RING};
use super::plan::BroadcastPlan;

impl BroadcastConfig {
    /// Host memory a run of these flags needs, roughly, beyond a few megabytes: on the
    /// simulator each chip's DRAM holding the jobs' data (the regions in use, each counted as
    /// [`BroadcastPlan::host_bytes_in`] counts it; a run of several chips writes into two
    /// regions of each chip's ring). A one-chip rank of an `--mpi` run writes into two too, but
    /// is counted as one chip's run (up to four: more than it needs). A `--trace` adds nothing
    /// that grows: its events go to the file as they happen ([`Self::trace_bytes`] is what it
    /// needs on disk).
    pub fn host_bytes(&self) -> u64 {
        if !self.device.in_process() {
            return self.host_bytes_of_jobs();
        }
        let (regions, chips) = if self.chips > 1 {
            (self.jobs.min(2), self.chips.min(self.jobs) as u64)
        } else {
            (self.jobs.min(DRAM_RING), 1)
        };
        self.host_bytes_of_regions(regions)
            .saturating_mul(chips)
            .saturating_add(self.host_bytes_of_jobs())
    }

    /// Host memory one region of the simulator's DRAM takes with a job's data
    /// ([`Self::host_bytes`] for one job on one chip, without the jobs' own bytes).
    pub fn host_bytes_per_region(&self) -> u64 {
        self.host_bytes_of_regions(1)
    }

    /// The first `regions` regions' host memory, each counted from the plan of these flags on
    /// the simulated chip (its harvest and fused bank); their address span when the flags do
    /// not lay out.
    fn host_bytes_of_regions(&self, regions: u32) -> u64 {
        let one = BroadcastConfig {
            jobs: regions.max(1),
            ..self.clone()
        };
        crate::chip::geometry(self.chip, self.harvest_word(), self.fused_dram)
            .ok()
            .and_then(|g| BroadcastPlan::per_job(&one, &g).ok())
            .map_or_else(
                || self.region_bytes().saturating_mul(u64::from(regions)),
                |p| (0..regions).map(|r| p.host_bytes_in(r)).sum(),
            )
    }
}

/// Pages a count walks one by one; past them [`BroadcastPlan::host_bytes_in`] gives a bound
/// instead (a run of 64-byte pages could have tens of millions).
const MAX_COUNTED_PAGES: u64 = 1 << 21;

impl BroadcastPlan {
    /// Host memory the simulator takes for one job's DRAM data at region 0
    /// ([`Self::host_bytes_in`]).
    pub fn host_bytes_per_job(&self) -> u64 {
        self.host_bytes_in(0)
    }

    /// Host memory the simulator takes for DRAM region `region`'s data: every aligned
    /// [`komorebi_sim::memory::CHUNK_BYTES`] of a bank a page lands in. Pages next to each
    /// other in address go to different banks (a sender's page `g` to its stream `g % 8`'s), so
    /// pages under a chunk take a whole chunk in each bank: up to four times their bytes with
    /// 1 KiB pages. Exact (the simulator's own count) up to two million pages; past
    /// them a bound: each page's most chunks, at most every chunk of the region in every bank.
    pub fn host_bytes_in(&self, region: u32) -> u64 {
        let chunk = komorebi_sim::memory::CHUNK_BYTES;
        let page = u64::from(self.cfg.page_size);
        let per_copy = u64::from(self.cfg.blocks) * u64::from(self.cfg.pages);
        let copies: Vec<(u64, [u8; STREAMS])> = (0..self.operands.len())
            .flat_map(|i| (0..self.words[i].len()).map(move |core| (i, core)))
            .filter_map(|(i, core)| {
                let banks = self.placement.banks(i, core)?;
                Some((self.dram_base(region, i, core), banks))
            })
            .collect();
        if per_copy.saturating_mul(copies.len() as u64) > MAX_COUNTED_PAGES {
            let most_per_page = page.div_ceil(chunk) + 1;
            let pages = per_copy.saturating_mul(copies.len() as u64);
            let everything = self.layers_bytes().div_ceil(chunk) + 1;
            return pages
                .saturating_mul(most_per_page)
                .min(everything.saturating_mul(STREAMS as u64))
                .saturating_mul(chunk);
        }
        let mut chunks = std::collections::HashSet::new();
        for (base, banks) in copies {
            for g in 0..per_copy {
                let start = base + g * page;
                for c in start / chunk..(start + page).div_ceil(chunk) {
                    chunks.insert((banks[g as usize % STREAMS], c));
                }
            }
        }
        chunks.len() as u64 * chunk
    }
}
