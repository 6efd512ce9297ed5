//! The host's resources a run needs, checked before it starts: memory for the simulated DRAM
//! data, disk for a trace, output files that can be written. A check that cannot learn what is
//! free lets the run go.

use crate::app::broadcast::BroadcastConfig;
use crate::host::memory::{available as available_memory, gib};

/// Refuses a run that cannot fit in the host's memory, saying how much it needs.
pub fn check_memory(cfg: &BroadcastConfig) -> Result<(), String> {
    let need = cfg.host_bytes();
    let Some(available) = available_memory() else {
        return Ok(());
    };
    if need <= available {
        return Ok(());
    }
    // Name what takes the most: the simulated DRAM data, or the jobs' own records.
    let (flag, what) = if cfg.host_bytes_of_jobs() > need / 2 {
        ("--jobs", "the records of this run's jobs need")
    } else {
        ("--blocks", "the simulated DRAM data of this run needs")
    };
    let chips = if cfg.chips > 1 { ", fewer --chips" } else { "" };
    Err(format!(
        "{flag}: {what} about {:.1} GiB of host memory, {:.1} GiB are available (fewer --jobs or --blocks{chips}, or a smaller --rect)",
        gib(need),
        gib(available)
    ))
}

/// The bytes free to an unprivileged user on the file system that holds `dir`, if known.
#[cfg(target_os = "linux")]
fn free_disk(dir: &std::path::Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

#[cfg(not(target_os = "linux"))]
fn free_disk(_dir: &std::path::Path) -> Option<u64> {
    None
}

/// Refuses a `--trace` whose file cannot fit on its disk, saying how much it needs (the trace
/// is written as the run goes, so it needs disk, not memory).
pub fn check_disk(cfg: &BroadcastConfig) -> Result<(), String> {
    let Some(path) = &cfg.trace else {
        return Ok(());
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    // What the file holds now is freed when it is overwritten.
    let old = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let need = cfg.trace_bytes();
    let Some(free) = free_disk(dir).map(|f| f.saturating_add(old)) else {
        return Ok(());
    };
    if need <= free {
        return Ok(());
    }
    Err(format!(
        "--trace: the trace of this run needs about {:.1} GiB of disk, {:.1} GiB are free in {} (fewer --jobs or --blocks, or a smaller --rect)",
        gib(need),
        gib(free),
        dir.display()
    ))
}

/// [`check_output`] for each of a run's output paths, and no two of them the same file (the
/// second written would destroy the first).
pub fn check_outputs(outputs: &[(&str, &std::path::Path)]) -> Result<(), String> {
    // The same file: the same name in the same directory, however each path reaches it.
    let full = |p: &std::path::Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        std::fs::canonicalize(dir)
            .map(|d| d.join(p.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    // Only files collide: two outputs sent to /dev/null (or another device or pipe) is fine.
    let file = |p: &std::path::Path| std::fs::metadata(p).map_or(true, |m| m.is_file());
    let keys: Vec<_> = outputs
        .iter()
        .map(|(_, p)| file(p).then(|| full(p)))
        .collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let earlier = keys[..i].iter().position(|k| k.is_some() && *k == keys[i]);
        if let Some((other, _)) = earlier.map(|j| &outputs[j]) {
            return Err(format!(
                "{flag} {}: also {other}'s file (allowed: a different file for each output)",
                path.display()
            ));
        }
        check_output(flag, path)?;
    }
    Ok(())
}

/// Checks before a run that the output file `path` of `flag` can be written: an existing file
/// is opened for appending (nothing is changed), a new one is created and removed again. The
/// error is the one-line message.
pub fn check_output(flag: &str, path: &std::path::Path) -> Result<(), String> {
    let bad = |e: std::io::Error| format!("{flag} {}: cannot be written: {e}", path.display());
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(bad)
    } else {
        std::fs::File::create(path).map_err(bad)?;
        std::fs::remove_file(path).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::broadcast::DeviceChoice;

    /// Each simulated chip keeps its own DRAM: the need grows with the chips (two regions of
    /// each chip's ring), and a card's DRAM is not the host's.
    #[test]
    fn the_memory_a_run_needs_counts_every_simulated_chip() {
        let one = BroadcastConfig {
            jobs: 64,
            device: DeviceChoice::PcieSim,
            ..BroadcastConfig::default()
        };
        // One job's region: the ring's regions in use are min(jobs, 4). In host memory it
        // takes more than its pages' bytes (32 senders' copies of 16 blocks of 4 pages of 2
        // KiB), at most twice them: 2 KiB pages next to each other in address go to different
        // banks, each of which holds a whole 4 KiB chunk.
        let region = one.host_bytes_per_region();
        let pages = 32 * 16 * 4 * 2048;
        assert!(region > pages && region <= 2 * pages, "{region} {pages}");
        // And more than the least address span the flags' checks count per bank (each bank
        // holds a part of every layer's span).
        let span = BroadcastConfig {
            jobs: 1,
            ..one.clone()
        }
        .dram_bytes_per_bank();
        assert!(region > span, "{region} {span}");
        // Millions of small pages are bounded, not walked one by one: never below their span.
        let small = BroadcastConfig {
            page_size: 64,
            pages: 64,
            blocks: 4096,
            jobs: 1,
            ..one.clone()
        };
        assert!(small.host_bytes_per_region() >= small.dram_bytes_per_bank());
        assert_eq!(one.host_bytes(), 4 * region + one.host_bytes_of_jobs());
        let four = BroadcastConfig {
            chips: 4,
            ..one.clone()
        };
        assert_eq!(four.host_bytes(), 4 * 2 * region + one.host_bytes_of_jobs());
        // More chips than jobs: the chips without a job write nothing.
        let sparse = BroadcastConfig {
            chips: 8,
            jobs: 3,
            ..one.clone()
        };
        assert_eq!(
            sparse.host_bytes(),
            3 * 2 * region + sparse.host_bytes_of_jobs()
        );
        let card = BroadcastConfig {
            device: DeviceChoice::Card("/dev/tenstorrent/0".into()),
            ..four
        };
        assert_eq!(card.host_bytes(), card.host_bytes_of_jobs());
    }
}
