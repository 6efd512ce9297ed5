//! The jobs' DRAM data: the pattern each sender's copy holds, written into the banks its page
//! streams are read from, and the host memory the simulator takes to hold it.

use komorebi_kernel::broadcast_handler::program::STREAMS;
use komorebi_kernel::broadcast_handler::{PATTERN_STRIDE, pattern_base};

use crate::host::session::{Session, SessionError};

use super::plan::BroadcastPlan;

/// Writes job `job`'s pattern into DRAM region `region` (a function of job
/// ([`BroadcastPlan::pattern_job`]), broadcast, block, page and word: nothing is kept between
/// jobs): every sender's copy, its page `g` at
/// `base + g * page_size` of the bank it reads its stream `g % 8` from (`placement`).
pub(super) fn fill_dram(
    session: &mut Session,
    plan: &BroadcastPlan,
    job: u32,
    region: u32,
) -> Result<(), SessionError> {
    let cfg = &plan.cfg;
    let mut page = vec![0u8; cfg.page_size as usize];
    for (i, s) in plan.operands.iter().enumerate() {
        // Every sender's copy: its base, and the bank of each of its streams.
        let copies: Vec<(u64, [u8; STREAMS])> = (0..plan.words[i].len())
            .filter_map(|core| {
                let banks = plan.placement.banks(i, core)?;
                Some((plan.dram_base(region, i, core), banks))
            })
            .collect();
        for g in 0..cfg.blocks * cfg.pages as u32 {
            let (block, p) = (g / cfg.pages as u32, g % cfg.pages as u32);
            // `pattern_word`, followed a word at a time as compute follows it: one hash a page.
            let mut word = pattern_base(plan.pattern_job(job), s.id, block, p);
            for chunk in page.chunks_mut(4) {
                chunk.copy_from_slice(&word.to_le_bytes());
                word = word.wrapping_add(PATTERN_STRIDE);
            }
            for &(base, banks) in &copies {
                let addr = base + g as u64 * cfg.page_size as u64;
                session
                    .device()
                    .write_dram(banks[g as usize % STREAMS], addr, &page)?;
            }
        }
    }
    Ok(())
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
