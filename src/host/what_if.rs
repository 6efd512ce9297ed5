//! What-if runs of the firmware (`--speed-up`): the code of named functions made faster on the
//! simulator's RISC-V cores, to learn whether making it faster would shorten a run.
//!
//! A profile says where a core spends its cycles; it does not say which of them a run waits
//! for. Cores wait on one another (a sender on its receivers' markers, a receiver on the
//! sender's VALID, compute on both), so a function that takes a third of one core's cycles can
//! be off the run's critical path, and one that takes a tenth can be on it. Dividing the cycles
//! of a function's instructions by a factor and running again answers it directly (the idea of
//! causal profiling: Curtsinger and Berger, "Coz: Finding Code that Counts with Causal
//! Profiling", SOSP 2015, where the speed-up is virtual; here the simulator's clock makes it
//! real).
//!
//! A function is named by a part of its demangled name, as a profile's summary and flame graph
//! show it (`read_block`, `NocMulticast>::multicast`). Its code is every instruction of the
//! three images whose frames, the DWARF's inlined frames included, name it: its own code and
//! what is inlined into it, not the functions it calls out of line (name those too).

use std::collections::BTreeSet;
use std::path::Path;

use komorebi_sim::riscv::SpeedUp;

use super::profile::{ProfileError, load_symbols};

/// The code a what-if run makes faster, and what it was asked and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhatIf {
    /// The code's address ranges (the images' own addresses) and the factor.
    pub code: SpeedUp,
    /// The parts of names asked for (`--speed-up`).
    pub asked: Vec<String>,
    /// Every function whose code was found for them, demangled, sorted.
    pub functions: Vec<String>,
}

/// The code of the functions whose names contain any of `names`, in the firmware images
/// `reader`, `writer` and `compute` in `dir`, made `factor` times faster. Refused: a name no
/// function has (the error names it), a factor outside `2..=64`, an image that cannot be read.
pub fn resolve(dir: &Path, names: &[String], factor: u32) -> Result<WhatIf, ProfileError> {
    let images = load_symbols(dir)?;
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut functions = BTreeSet::new();
    let mut found = vec![false; names.len()];
    for (_, symbols) in &images {
        for (start, end) in symbols.function_ranges() {
            // RV32IM: every instruction is 4 bytes; the images' addresses are L1's (32 bits).
            for pc in (start..end).step_by(4) {
                let Ok(pc) = u32::try_from(pc) else { continue };
                let mut hit = false;
                for frame in symbols.frames(pc) {
                    for (i, name) in names.iter().enumerate() {
                        if frame.contains(name.as_str()) {
                            found[i] = true;
                            hit = true;
                            functions.insert(frame.clone());
                        }
                    }
                }
                if hit {
                    match ranges.last_mut() {
                        Some(last) if last.1 == pc => last.1 = pc + 4,
                        _ => ranges.push((pc, pc + 4)),
                    }
                }
            }
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(ProfileError::NoSuchFunction {
            name: names[i].clone(),
            dir: dir.display().to_string(),
        });
    }
    let code = SpeedUp::new(factor, &ranges).map_err(|e| ProfileError::SpeedUp(e.to_string()))?;
    Ok(WhatIf {
        code,
        asked: names.to_vec(),
        functions: functions.into_iter().collect(),
    })
}

/// What a run's report says of its what-if (`--speed-up`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SpeedUpSummary {
    /// The factor the code's cycles were divided by.
    pub factor: u32,
    /// The parts of names asked for.
    pub asked: Vec<String>,
    /// The functions whose code ran faster.
    pub functions: Vec<String>,
}

impl From<&WhatIf> for SpeedUpSummary {
    fn from(w: &WhatIf) -> Self {
        Self {
            factor: w.code.factor(),
            asked: w.asked.clone(),
            functions: w.functions.clone(),
        }
    }
}

impl std::fmt::Display for SpeedUpSummary {
    /// Two lines: what ran faster, and the functions.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "what-if: the code of {} functions named like {} ran {} times faster (the cycles \
             above are not the firmware's as built)",
            self.functions.len(),
            self.asked
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", "),
            self.factor
        )?;
        writeln!(f, "  {}", self.functions.join("; "))
    }
}
