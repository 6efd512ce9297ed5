//! The host machine's memory, for runs that refuse to start what cannot fit (the simulator
//! keeps every byte of DRAM data a run writes in host memory).

/// The host memory available now (Linux's `MemAvailable` from `/proc/meminfo`), if known: `None`
/// elsewhere or when the file cannot be read, and a check then lets the run go.
pub fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `bytes` in GiB, for messages.
pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}
