//! Every way the host path to a card can fail, each with what was wrong and what is allowed.
//!
//! A device that cannot be used is an error, never a panic: a missing, busy, old, foreign or
//! dead device, exhausted windows, a firmware that does not come up.

/// What went wrong on the host path to a card.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PcieError {
    /// The device node does not exist.
    #[error("{path}: no such device (is tt-kmd loaded? cards appear as /dev/tenstorrent/N)")]
    NoSuchDevice {
        /// The path tried.
        path: String,
    },
    /// The device node exists but may not be opened.
    #[error("{path}: permission denied (install tt-kmd's udev rule, which sets mode 0666)")]
    PermissionDenied {
        /// The path tried.
        path: String,
    },
    /// Another process holds the device exclusively.
    #[error("{path}: device busy (another process holds it open exclusively)")]
    Busy {
        /// The path tried.
        path: String,
    },
    /// The path is not a tt-kmd device (a regular file, `/dev/null`, another driver's node).
    #[error("{path}: not a tt-kmd device ({why})")]
    NotTtKmd {
        /// The path tried.
        path: String,
        /// What showed it.
        why: String,
    },
    /// The driver's ioctl API is older than the one needed.
    #[error(
        "{path}: tt-kmd ioctl API version {found} is too old: version {needed} (tt-kmd 2.0.0 or later) is needed"
    )]
    DriverTooOld {
        /// The path.
        path: String,
        /// The API version the driver reports.
        found: u32,
        /// The API version needed.
        needed: u32,
    },
    /// The device is neither a Blackhole nor a Wormhole B0.
    #[error(
        "{path}: PCI id {vendor:04x}:{device:04x} is not a chip this host drives (a Blackhole is \
         1e52:b140, a Wormhole B0 1e52:401e)"
    )]
    UnknownChip {
        /// The path.
        path: String,
        /// Vendor id found.
        vendor: u16,
        /// Device id found.
        device: u16,
    },
    /// A chip this host path does not drive (yet), or not on this kind of device.
    #[error("PCI device id {device_id:04x}: {why}")]
    UnsupportedChip {
        /// The device id found.
        device_id: u16,
        /// What is missing, and what is allowed.
        why: String,
    },
    /// An ioctl failed.
    #[error("{path}: {ioctl} failed: {message} (errno {errno})")]
    Ioctl {
        /// The path.
        path: String,
        /// The ioctl's name (`ALLOCATE_TLB`), or `open` when opening the node failed for a
        /// reason no other variant names.
        ioctl: &'static str,
        /// The errno.
        errno: i32,
        /// The system's message for it.
        message: String,
    },
    /// Mapping a window or BAR failed.
    #[error("{path}: mmap of {what} failed: {message} (errno {errno})")]
    Mmap {
        /// The path.
        path: String,
        /// What was being mapped.
        what: String,
        /// The errno.
        errno: i32,
        /// The system's message for it.
        message: String,
    },
    /// Every window of the size asked for is taken, or (`available` 0) the device has none of
    /// that size.
    #[error("{}", exhausted(size, *available))]
    WindowsExhausted {
        /// `2 MiB` or `4 GiB`.
        size: &'static str,
        /// Windows of that size the device has.
        available: u32,
    },
    /// A word read back as 0xFFFF_FFFF where it cannot be that: the device is hung or was reset.
    #[error("device hung or reset: {what} read 0xffffffff (reset the board, e.g. `tt-smi -r`)")]
    Hung {
        /// What was read.
        what: String,
    },
    /// The device was reset or removed under an open handle (ENODEV).
    #[error("{path}: the device was reset or removed; open it again")]
    Gone {
        /// The path.
        path: String,
    },
    /// An access that is not whole 4-byte words at a 4-byte aligned offset.
    #[error(
        "access of {len} bytes at {offset:#x} is not 4-byte aligned whole words (the PCIe path moves 32-bit words only)"
    )]
    Unaligned {
        /// Offset asked for.
        offset: u64,
        /// Length asked for.
        len: usize,
    },
    /// An access past the end of a window.
    #[error("access of {len} bytes at {offset:#x} crosses the end of a {size:#x}-byte window")]
    OutOfWindow {
        /// Offset asked for.
        offset: u64,
        /// Length asked for.
        len: usize,
        /// The window's size.
        size: u64,
    },
    /// A window configuration the window cannot hold (address not a multiple of the window
    /// size, a coordinate above 63, a NoC other than 0 or 1, a static VC above 7).
    #[error("TLB configuration: {0}")]
    TlbConfig(blackhole_pac::tlb::TlbError),
    /// A window handed to a [`Bar`](crate::Bar) other than the one that allocated it.
    #[error("TLB window {index} belongs to another device handle")]
    ForeignWindow {
        /// The window's index.
        index: u32,
    },
    /// A BAR0 register offset outside the ranges the backend maps, or not 4-byte aligned.
    #[error("BAR0 offset {offset:#x} is not a mapped, 4-byte aligned register ({mapped})")]
    Bar0Unmapped {
        /// The offset asked for.
        offset: u32,
        /// The ranges that are mapped.
        mapped: &'static str,
    },
    /// A coordinate the window plan cannot reach (not an enabled Tensix, not a DRAM bank).
    #[error("{what}: {why}")]
    Target {
        /// What was addressed.
        what: String,
        /// Why it cannot be.
        why: String,
    },
    /// An access to the fused DRAM bank: nothing answers at its ports on a card.
    #[error(
        "{what}: DRAM bank {bank} is fused off on this chip (ARC telemetry ENABLED_GDDR; its \
         clock is off on a card); the chip has {banks}"
    )]
    FusedDram {
        /// What was asked (bank, address, length).
        what: String,
        /// The fused DRAM bank.
        bank: u8,
        /// The banks that work.
        banks: blackhole_pac::harvest::DramBanks,
    },
    /// ARC telemetry's `ENABLED_GDDR` (tag 36) says more than one DRAM bank is off.
    #[error("ARC telemetry (tag 36): {0}")]
    DramHarvest(blackhole_pac::harvest::DramHarvestError),
    /// ARC telemetry could not be read.
    #[error("ARC telemetry: {0}")]
    Telemetry(String),
    /// ARC's boot status did not say ready (`SCRATCH_RAM_2 & 7 == 5`) within the bounded wait.
    #[error(
        "ARC is not ready: boot status {status:#x} after {waited_ms} ms (ready is 5 in bits 0..2; 6 or 7 there is a failed hardware init; reset the board, e.g. `tt-smi -r`)"
    )]
    ArcNotReady {
        /// The last boot status read.
        status: u32,
        /// How long the host waited.
        waited_ms: u64,
    },
    /// A Wormhole's ARC did not start within the bounded wait, or its watchdog fired
    /// (`crate::arc::wormhole::arc_start`).
    #[error(
        "Wormhole ARC is not ready: {why} (scratch 5 {status:#x}, post code {post_code:#x}) after {waited_ms} ms (ready: scratch 5 is 1 or 0xffffdead, or 0 with post code 0xc0de0001 or 0xc0de003f..=0xc0de007f; reset the board, e.g. `tt-smi -r`)"
    )]
    WormholeArcNotReady {
        /// Scratch register 5 as last read.
        status: u32,
        /// The post code (scratch register 0) as last read.
        post_code: u32,
        /// How long the host waited.
        waited_ms: u64,
        /// Still starting, or its watchdog fired.
        why: String,
    },
    /// An ARC message could not be sent or was refused (the message queue, `crate::arc`).
    #[error("{}", arc_message(*code, why))]
    ArcMessage {
        /// The message code (0 when the queue itself could not be found).
        code: u32,
        /// What went wrong.
        why: String,
    },
    /// DRAM training failed, or had not finished within the bounded wait.
    #[error("DRAM training: {0}")]
    DramTraining(String),
    /// The driver is too old for a feature (the feature's first tt-kmd release is given).
    #[error(
        "{path}: {feature} needs tt-kmd {}.{}.{} or later; this driver is {}.{}.{}",
        needed.0, needed.1, needed.2, found.0, found.1, found.2
    )]
    DriverLacks {
        /// The device node.
        path: String,
        /// The feature (an ioctl's name).
        feature: &'static str,
        /// The first release that has it.
        needed: (u8, u8, u8),
        /// The driver's version.
        found: (u8, u8, u8),
    },
    /// A firmware image could not be used.
    #[error("firmware image {image}: {why}")]
    Firmware {
        /// The image (path or name).
        image: String,
        /// What is wrong with it.
        why: String,
    },
    /// Tiles whose firmware did not come up within the bounded wait.
    #[error("firmware did not start on {} tile(s) within {waited_ms} ms: {}", tiles.len(), tiles.join(", "))]
    FirmwareDidNotStart {
        /// Each tile as `logical (x, y): what its boot words showed`.
        tiles: Vec<String>,
        /// How long the host waited.
        waited_ms: u64,
    },
    /// The simulator refused an access (the simulated card).
    #[error("simulated card: {0}")]
    Simulator(String),
    /// ttsim ended its process: what it reported (its category and message), or how its
    /// server ended.
    #[error("ttsim stopped: {0}")]
    TtsimStopped(crate::ttsim::stop::TtsimStop),
    /// ttsim could not be started: the library, the server, or the server's greeting.
    #[error("ttsim {library}: {why}")]
    TtsimUnavailable {
        /// The `libttsim.so` asked for.
        library: String,
        /// What went wrong.
        why: String,
    },
    /// This host cannot reach a card at all (not Linux).
    #[error("cards are reached through tt-kmd, which needs Linux")]
    Unsupported,
}

/// [`PcieError::WindowsExhausted`]'s text: taken windows, or none of that size at all (tt-kmd's
/// `ALLOCATE_TLB` answers `EINVAL` then, `ENOMEM` when all are taken: `tlb.c`).
fn exhausted(size: &str, available: u32) -> String {
    if available == 0 {
        format!(
            "this device has no {size} TLB window (tt-kmd has none of that size: a 4 GiB window \
             needs 4 GiB of BAR4, sysfs resource4)"
        )
    } else {
        format!(
            "no free {size} TLB window is left (the driver has {available} and all are allocated)"
        )
    }
}

/// [`PcieError::ArcMessage`]'s text: the message, or the queue when no message was sent yet.
fn arc_message(code: u32, why: &str) -> String {
    match code {
        0 => format!("ARC message queue: {why}"),
        code => format!("ARC message {code:#04x}: {why}"),
    }
}
