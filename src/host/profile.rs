//! Firmware profiles: the simulator's per-core cycle counts by address
//! ([`komorebi_sim::CoreProfile`]) named from the firmware ELF files, and written out as
//! folded stacks, a flame graph and a table of the costliest functions.
//!
//! Names come from the ELF's DWARF (with inlined frames: the firmware is built with
//! `debug = "limited"`, which lives in unloaded sections and costs no code bytes) through
//! `addr2line`, and from its
//! symbol table where there is no DWARF. A `pc` that neither names is written as its address.
//!
//! A stack is the frames of every call not yet returned from (each call site expanded into the
//! functions inlined there), then the frames of the instruction itself, outermost first.
//! *Exclusive* cycles of a function are those of instructions whose innermost frame it is;
//! *inclusive* ones those of every stack it appears in (once per stack, so recursion does not
//! count twice).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use gimli::{EndianArcSlice, RunTimeEndian};
use komorebi_hal::Role;
use komorebi_sim::CoreProfile;
use object::{Object, ObjectSection, ObjectSymbol};

/// What went wrong making a profile.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// A firmware ELF file could not be read or parsed.
    #[error("firmware image {path}: {why}")]
    Elf {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// A profile file could not be written.
    #[error("cannot write the profile {path}: {error}")]
    Write {
        /// The file.
        path: String,
        /// The error.
        error: std::io::Error,
    },
}

type Dwarf = addr2line::Context<EndianArcSlice<RunTimeEndian>>;

/// One firmware image's names: its DWARF and its function symbols.
pub struct Symbols {
    dwarf: Option<Dwarf>,
    /// Function symbols by start address: (end, demangled name).
    functions: BTreeMap<u64, (u64, String)>,
    /// Every other code symbol (assembly labels, without a size) by address: (end of its
    /// section, name).
    labels: BTreeMap<u64, (u64, String)>,
}

impl std::fmt::Debug for Symbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbols")
            .field("dwarf", &self.dwarf.is_some())
            .field("functions", &self.functions.len())
            .field("labels", &self.labels.len())
            .finish()
    }
}

impl Symbols {
    /// The names in the ELF file `bytes` (`path` only for messages).
    pub fn from_elf(path: &str, bytes: &[u8]) -> Result<Self, ProfileError> {
        let bad = |why: String| ProfileError::Elf {
            path: path.to_string(),
            why,
        };
        let file = object::File::parse(bytes).map_err(|e| bad(format!("not an ELF file: {e}")))?;
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let has_dwarf = file.section_by_name(".debug_info").is_some();
        let dwarf = if has_dwarf {
            let load = |id: gimli::SectionId| -> Result<_, gimli::Error> {
                let data = file
                    .section_by_name(id.name())
                    .and_then(|s| s.data().ok())
                    .unwrap_or(&[]);
                Ok(EndianArcSlice::new(Arc::from(data), endian))
            };
            let sections = gimli::Dwarf::load(load).map_err(|e| bad(format!("its DWARF: {e}")))?;
            Some(
                addr2line::Context::from_dwarf(sections)
                    .map_err(|e| bad(format!("its DWARF: {e}")))?,
            )
        } else {
            None
        };
        let mut functions = BTreeMap::new();
        let mut labels = BTreeMap::new();
        for s in file.symbols() {
            let Ok(raw) = s.name() else { continue };
            let section = s
                .section_index()
                .and_then(|i| file.section_by_index(i).ok())
                .filter(|sec| sec.kind() == object::SectionKind::Text);
            let Some(section) = section.filter(|_| !raw.is_empty()) else {
                continue;
            };
            let name =
                addr2line::demangle(raw, gimli::DW_LANG_Rust).unwrap_or_else(|| raw.to_string());
            if s.size() > 0 {
                functions.insert(s.address(), (s.address() + s.size(), name));
            } else if !raw.starts_with(".L") && !raw.starts_with('$') {
                labels.insert(s.address(), (section.address() + section.size(), name));
            }
        }
        Ok(Self {
            dwarf,
            functions,
            labels,
        })
    }

    /// The code of every function symbol, `start..end`, and of every assembly routine (a code
    /// symbol without a size, such as the images' `memcpy` and `memset`: from it to the next
    /// symbol or the end of its section, whichever comes first), in address order. A routine
    /// never runs into another section: the reader's 8-byte boot stub at 0 would otherwise
    /// reach its `_start` at 0x1C000, over the other two kernels' code.
    pub fn code_ranges(&self) -> Vec<(u64, u64)> {
        let mut ranges: Vec<(u64, u64)> = self
            .functions
            .iter()
            .map(|(&start, &(end, _))| (start, end))
            .collect();
        for (&at, &(section_end, _)) in &self.labels {
            let inside = self.functions.range(..=at).next_back();
            if inside.is_some_and(|(_, &(end, _))| at < end) {
                continue;
            }
            let end = self.routine_end(at, section_end);
            if end > at {
                ranges.push((at, end));
            }
        }
        ranges.sort_unstable();
        ranges
    }

    /// Where the assembly routine at `at` (a label whose section ends at `section_end`) ends:
    /// at the next symbol or its section's end, whichever comes first.
    fn routine_end(&self, at: u64, section_end: u64) -> u64 {
        let next = [
            self.functions.range(at + 1..).next().map(|(&s, _)| s),
            self.labels.range(at + 1..).next().map(|(&s, _)| s),
        ];
        next.into_iter().flatten().fold(section_end, u64::min)
    }

    /// The frames at `pc`, outermost first: the function containing it, then each function
    /// inlined into it down to the one the instruction belongs to. The debug information is
    /// asked only inside a function symbol (compiled code always lies in one): elsewhere it is
    /// an assembly routine, for which the debug information can hold stale ranges of functions
    /// the linker removed (the reader's boot stub at 0 came out as `core::panicking::panic`).
    pub fn frames(&self, pc: u32) -> Vec<String> {
        let mut frames = Vec::new();
        let at = u64::from(pc);
        let in_function = self
            .functions
            .range(..=at)
            .next_back()
            .is_some_and(|(_, &(end, _))| at < end);
        if let Some(dwarf) = self.dwarf.as_ref().filter(|_| in_function)
            && let Ok(mut iter) = dwarf.find_frames(u64::from(pc)).skip_all_loads()
        {
            while let Ok(Some(frame)) = iter.next() {
                if let Some(Ok(name)) = frame.function.as_ref().map(|f| f.demangle()) {
                    frames.push(clean(&name));
                }
            }
        }
        if frames.is_empty() {
            let pc = u64::from(pc);
            // The function containing `pc`, else the assembly routine containing it (from its
            // label to the next symbol or its section's end: routines have no size), else the
            // address.
            match self.functions.range(..=pc).next_back() {
                Some((_, (end, name))) if pc < *end => frames.push(clean(name)),
                _ => match self.labels.range(..=pc).next_back() {
                    Some((&at, (section_end, name))) if pc < self.routine_end(at, *section_end) => {
                        frames.push(clean(name))
                    }
                    _ => frames.push(format!("{pc:#x}")),
                },
            }
        }
        frames.reverse();
        frames
    }
}

/// A frame name as folded stacks can carry it: `;` separates frames there, so a `;` inside a
/// name (an array type, `[u8; 4]`) becomes `,`.
fn clean(name: &str) -> String {
    name.replace(';', ",")
}

/// The names of the three kernels' images in `dir` (`reader`, `writer`, `compute`, as the
/// loader reads them).
pub fn load_symbols(dir: &Path) -> Result<Vec<(Role, Symbols)>, ProfileError> {
    Role::ALL
        .into_iter()
        .map(|role| {
            let path = dir.join(role.name());
            let shown = path.display().to_string();
            let bytes = std::fs::read(&path).map_err(|e| ProfileError::Elf {
                path: shown.clone(),
                why: e.to_string(),
            })?;
            Ok((role, Symbols::from_elf(&shown, &bytes)?))
        })
        .collect()
}

/// One core's cycles by stack of frame names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreStacks {
    /// The tile's NoC0 coordinates.
    pub tile: (u8, u8),
    /// The kernel.
    pub kernel: Role,
    /// Cycles by stack (outermost frame first).
    pub stacks: BTreeMap<Vec<String>, u64>,
    /// Calls by the function called (the outermost frame at the call's target).
    pub calls: BTreeMap<String, u64>,
}

/// A function's share of a kernel's cycles.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FunctionCycles {
    /// The function (demangled, without hash).
    pub function: String,
    /// Cycles of instructions whose innermost frame it is.
    pub exclusive: u64,
    /// Cycles of every stack it is in.
    pub inclusive: u64,
    /// Times it was called through a call (`jal`/`jalr` writing a link register): 0 for code
    /// always inlined into its callers, and a tail call (a jump) is not counted.
    pub calls: u64,
}

/// One kernel's part of a profile, for a run's summary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelSummary {
    /// `reader`, `writer` or `compute`.
    pub kernel: &'static str,
    /// Cores that ran it.
    pub cores: usize,
    /// Their cycles, added together.
    pub cycles: u64,
    /// The costliest functions by exclusive cycles, most first.
    pub top: Vec<FunctionCycles>,
}

/// What a profile came to: where it was written, and each kernel's costliest functions.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProfileSummary {
    /// The folded stacks.
    pub folded: std::path::PathBuf,
    /// The flame graph.
    pub flame_graph: std::path::PathBuf,
    /// Reader, writer and compute, those that ran.
    pub kernels: Vec<KernelSummary>,
}

impl std::fmt::Display for ProfileSummary {
    /// The files, then per kernel its cycles and its costliest functions with their share of
    /// the kernel's cycles (exclusive, then inclusive).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "firmware profile: folded stacks in {}, flame graph in {}",
            self.folded.display(),
            self.flame_graph.display()
        )?;
        for k in &self.kernels {
            writeln!(
                f,
                "  {} ({} cores, {} cycles): exclusive, inclusive, calls, function",
                k.kernel, k.cores, k.cycles
            )?;
            let share = |c: u64| 100.0 * c as f64 / k.cycles.max(1) as f64;
            for t in &k.top {
                writeln!(
                    f,
                    "    {:5.1}% {:5.1}% {:>9}  {}",
                    share(t.exclusive),
                    share(t.inclusive),
                    t.calls,
                    t.function
                )?;
            }
        }
        Ok(())
    }
}

/// The named profile of every firmware core of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirmwareProfile {
    /// One entry per core, in spawn order (a core started twice has two).
    pub cores: Vec<CoreStacks>,
}

/// The frame stall cycles are charged to: the core's clock moved without an instruction (the
/// simulator held it back, never the firmware's doing).
pub const STALL_FRAME: &str = "[stalled]";

impl FirmwareProfile {
    /// Names `profiles` with `symbols` (by kernel); a kernel without symbols gets addresses.
    pub fn new(profiles: &[CoreProfile], symbols: &[(Role, Symbols)]) -> Self {
        let mut cache: BTreeMap<(Role, u32), Vec<String>> = BTreeMap::new();
        let mut frames = |role: Role, pc: u32| -> Vec<String> {
            cache
                .entry((role, pc))
                .or_insert_with(|| match symbols.iter().find(|(r, _)| *r == role) {
                    Some((_, s)) => s.frames(pc),
                    None => vec![format!("{pc:#x}")],
                })
                .clone()
        };
        let cores = profiles
            .iter()
            .map(|p| {
                let mut stacks: BTreeMap<Vec<String>, u64> = BTreeMap::new();
                for s in &p.samples {
                    let mut stack = Vec::new();
                    for &site in &s.call_sites {
                        stack.extend(frames(p.kernel, site));
                    }
                    stack.extend(frames(p.kernel, s.pc));
                    *stacks.entry(stack).or_default() += s.cycles;
                }
                if p.stalled > 0 {
                    *stacks.entry(vec![STALL_FRAME.to_string()]).or_default() += p.stalled;
                }
                let mut calls: BTreeMap<String, u64> = BTreeMap::new();
                for &(target, n) in &p.calls {
                    if let Some(callee) = frames(p.kernel, target).into_iter().next() {
                        *calls.entry(callee).or_default() += n;
                    }
                }
                CoreStacks {
                    tile: p.tile,
                    kernel: p.kernel,
                    stacks,
                    calls,
                }
            })
            .collect();
        Self { cores }
    }

    /// Folded stacks, one line per core and stack: `reader@1-2;kernel_main;... 1234`, the
    /// first frame the kernel and its tile's NoC0 coordinates (what `inferno-flamegraph` and
    /// `flamegraph.pl` read).
    pub fn folded(&self) -> String {
        let mut out = String::new();
        for core in &self.cores {
            let root = format!("{}@{}-{}", core.kernel.name(), core.tile.0, core.tile.1);
            for (stack, cycles) in &core.stacks {
                out.push_str(&root);
                for f in stack {
                    out.push(';');
                    out.push_str(f);
                }
                out.push_str(&format!(" {cycles}\n"));
            }
        }
        out
    }

    /// The stacks of every core of each kernel added together, the kernel's name first.
    fn by_kernel(&self) -> BTreeMap<Vec<String>, u64> {
        let mut all: BTreeMap<Vec<String>, u64> = BTreeMap::new();
        for core in &self.cores {
            for (stack, cycles) in &core.stacks {
                let mut key = Vec::with_capacity(stack.len() + 1);
                key.push(core.kernel.name().to_string());
                key.extend(stack.iter().cloned());
                *all.entry(key).or_default() += cycles;
            }
        }
        all
    }

    /// A flame graph (SVG) of every kernel, the cores of each added together.
    pub fn flame_graph(&self, title: &str, out: impl std::io::Write) -> std::io::Result<()> {
        let lines: Vec<String> = self
            .by_kernel()
            .into_iter()
            .map(|(stack, cycles)| format!("{} {cycles}", stack.join(";")))
            .collect();
        let mut options = inferno::flamegraph::Options::default();
        options.title = title.to_string();
        options.count_name = "cycles".to_string();
        options.deterministic = true;
        inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), out)
    }

    /// Cycles of every core of `kernel`.
    pub fn kernel_cycles(&self, kernel: Role) -> u64 {
        self.cores
            .iter()
            .filter(|c| c.kernel == kernel)
            .flat_map(|c| c.stacks.values())
            .sum()
    }

    /// The `n` functions of `kernel` with the most exclusive cycles (every core added), most
    /// first; ties by name.
    pub fn top(&self, kernel: Role, n: usize) -> Vec<FunctionCycles> {
        let mut exclusive: BTreeMap<&str, u64> = BTreeMap::new();
        let mut inclusive: BTreeMap<&str, u64> = BTreeMap::new();
        let mut calls: BTreeMap<&str, u64> = BTreeMap::new();
        for core in self.cores.iter().filter(|c| c.kernel == kernel) {
            for (f, &n) in &core.calls {
                *calls.entry(f).or_default() += n;
            }
            for (stack, &cycles) in &core.stacks {
                if let Some(leaf) = stack.last() {
                    *exclusive.entry(leaf).or_default() += cycles;
                }
                let distinct: BTreeSet<&str> = stack.iter().map(String::as_str).collect();
                for f in distinct {
                    *inclusive.entry(f).or_default() += cycles;
                }
            }
        }
        let mut out: Vec<FunctionCycles> = exclusive
            .into_iter()
            .map(|(f, ex)| FunctionCycles {
                function: f.to_string(),
                exclusive: ex,
                inclusive: inclusive.get(f).copied().unwrap_or(ex),
                calls: calls.get(f).copied().unwrap_or(0),
            })
            .collect();
        out.sort_by(|a, b| {
            b.exclusive
                .cmp(&a.exclusive)
                .then_with(|| a.function.cmp(&b.function))
        });
        out.truncate(n);
        out
    }

    /// Each kernel that ran: its cores, cycles and `n` costliest functions.
    pub fn kernels(&self, n: usize) -> Vec<KernelSummary> {
        Role::ALL
            .into_iter()
            .filter_map(|k| {
                let cores = self.cores.iter().filter(|c| c.kernel == k).count();
                (cores > 0).then(|| KernelSummary {
                    kernel: k.name(),
                    cores,
                    cycles: self.kernel_cycles(k),
                    top: self.top(k, n),
                })
            })
            .collect()
    }

    /// Writes the folded stacks to `path` and the flame graph to [`flame_graph_path`]`(path)`, and sums up
    /// each kernel's `n` costliest functions.
    pub fn write(
        &self,
        path: &Path,
        title: &str,
        n: usize,
    ) -> Result<ProfileSummary, ProfileError> {
        let failed = |p: &Path, error| ProfileError::Write {
            path: p.display().to_string(),
            error,
        };
        std::fs::write(path, self.folded()).map_err(|e| failed(path, e))?;
        let svg = flame_graph_path(path);
        let file = std::fs::File::create(&svg).map_err(|e| failed(&svg, e))?;
        let mut out = std::io::BufWriter::new(file);
        self.flame_graph(title, &mut out)
            .and_then(|()| std::io::Write::flush(&mut out))
            .map_err(|e| failed(&svg, e))?;
        Ok(ProfileSummary {
            folded: path.to_path_buf(),
            flame_graph: svg,
            kernels: self.kernels(n),
        })
    }
}

/// Where a profile written to `path` puts its flame graph: `path` with `.svg` appended (so a run
/// can check both before it starts).
pub fn flame_graph_path(path: &Path) -> std::path::PathBuf {
    let mut svg = path.as_os_str().to_owned();
    svg.push(".svg");
    svg.into()
}
