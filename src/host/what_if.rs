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
//! what is inlined into it, not the functions it calls out of line (name those too). An
//! assembly routine without debug information (the images' `memcpy` and `memset`) is named by
//! its symbol and runs from it to the next symbol.

use std::collections::BTreeSet;
use std::path::Path;

use komorebi_sim::riscv::{SpeedUp, SpeedUpError};

use super::profile::{ProfileError, load_symbols};

/// The highest address a core's code can lie below: a Blackhole's L1 (1.5 MiB), the largest of
/// the chips' (the simulator's cores fetch from nowhere else). A function symbol reaching
/// beyond it (a corrupt `--firmware` image) is cut there.
const CODE_END: u64 = 0x18_0000;

/// Why the code of a what-if run cannot be found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WhatIfError {
    /// A firmware image could not be read or parsed.
    #[error("--speed-up: firmware image {path}: {why}")]
    Image {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// An empty name, which every function would match.
    #[error(
        "--speed-up \"\": an empty name matches every function (allowed: a part of a function's \
         demangled name, for example read_block)"
    )]
    EmptyName,
    /// The same name twice (as the same `--fault` twice is refused: it would say nothing more).
    #[error("--speed-up {name} is given twice (allowed: each name once)")]
    Twice {
        /// The name.
        name: String,
    },
    /// No function of the images has a name containing `name`.
    #[error(
        "--speed-up {name}: no function of the firmware images in {dir} (reader, writer, \
         compute) is named like that (allowed: a part of a demangled name, as a --profile \
         run's summary and flame graph show them, for example read_block)"
    )]
    NoSuchFunction {
        /// The part of a name asked for.
        name: String,
        /// The images' directory.
        dir: String,
    },
    /// The speed-up itself (its factor).
    #[error("--speed-up-by: {0}")]
    SpeedUp(#[from] SpeedUpError),
}

/// The code a what-if run makes faster, with the names asked for and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedSpeedUp {
    /// The code's address ranges (the images' own addresses) and the factor.
    pub code: SpeedUp,
    /// The parts of names asked for (`--speed-up`).
    pub asked: Vec<String>,
    /// Every function whose code was found for them, demangled, sorted.
    pub functions: Vec<String>,
}

/// The code of the functions whose names contain any of `names`, in the firmware images
/// `reader`, `writer` and `compute` in `dir`, made `factor` times faster. Refused: a factor
/// outside [`SpeedUp::MIN_FACTOR`]`..=`[`SpeedUp::MAX_FACTOR`], an empty name, a name no
/// function has (the error names it), an image that cannot be read.
pub fn resolve(dir: &Path, names: &[String], factor: u32) -> Result<NamedSpeedUp, WhatIfError> {
    SpeedUp::check_factor(factor)?;
    if names.iter().any(String::is_empty) {
        return Err(WhatIfError::EmptyName);
    }
    if let Some((_, name)) = names
        .iter()
        .enumerate()
        .find(|&(i, n)| names[..i].contains(n))
    {
        return Err(WhatIfError::Twice { name: name.clone() });
    }
    let images = load_symbols(dir).map_err(|e| match e {
        ProfileError::Elf { path, why } => WhatIfError::Image { path, why },
        ProfileError::Write { path, error } => WhatIfError::Image {
            path,
            why: error.to_string(),
        },
    })?;
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut functions = BTreeSet::new();
    let mut found = vec![false; names.len()];
    for (_, symbols) in &images {
        for (start, end) in symbols.code_ranges() {
            // RV32IM: every instruction is 4 bytes; code lies in L1.
            for pc in (start.min(CODE_END)..end.min(CODE_END)).step_by(4) {
                let pc = pc as u32; // below CODE_END
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
        return Err(WhatIfError::NoSuchFunction {
            name: names[i].clone(),
            dir: dir.display().to_string(),
        });
    }
    Ok(NamedSpeedUp {
        code: SpeedUp::new(factor, &ranges)?,
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

impl From<&NamedSpeedUp> for SpeedUpSummary {
    fn from(w: &NamedSpeedUp) -> Self {
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
            "what-if: the code of {} named like {} ran {} times faster (the cycles above are \
             not the firmware's as built; on pcie-sim they move in 1,350-cycle host polls, the \
             run time a command in finer steps)",
            crate::num::count(self.functions.len() as u64, "function", "functions"),
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

#[cfg(test)]
mod tests {
    use super::SpeedUpSummary;

    #[test]
    fn the_summary_counts_its_functions_in_words() {
        let one = SpeedUpSummary {
            factor: 4,
            asked: vec!["read_block".into()],
            functions: vec!["komorebi_kernel::broadcast_handler::read_block".into()],
        };
        let text = one.to_string();
        assert!(
            text.starts_with("what-if: the code of 1 function named like `read_block` ran 4 times"),
            "{text}"
        );
        assert!(text.contains("1,350-cycle host polls"), "{text}");
        let two = SpeedUpSummary {
            functions: vec!["a::read".into(), "b::read".into()],
            asked: vec!["read".into(), "x".into()],
            ..one
        };
        let text = two.to_string();
        assert!(
            text.starts_with("what-if: the code of 2 functions named like `read`, `x` ran"),
            "{text}"
        );
        assert!(text.ends_with("\n  a::read; b::read\n"), "{text}");
    }
}
