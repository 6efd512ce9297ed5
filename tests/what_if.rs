//! What-if runs (`--speed-up`): named firmware functions made faster on the simulated card's
//! RISC-V cores. The same bytes arrive; code the run waits for shortens it; the names found
//! are reported; what cannot be sped up is refused with what is allowed (a device without
//! RISC-V cores: `tests/firmware_exec.rs`, beside `--profile`'s).
//!
//! The tests build the firmware first (`examples/firmware`, once per test binary), which needs
//! the `riscv32im-unknown-none-elf` target.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::{broadcast_json, komorebi};
use komorebi::app::broadcast::{self, BroadcastConfig, BroadcastSummary, Check, DeviceChoice};
use komorebi::host::backend::{Exec, built_firmware};
use komorebi::host::what_if::{self, NamedSpeedUp, WhatIfError};
use komorebi_hal::LogicalRect;

fn firmware() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| built_firmware().unwrap()).clone()
}

/// One job of 8 blocks of 4 pages over a 2 x 2 rectangle, unchecked, on the firmware.
fn shape(speed_up: Option<NamedSpeedUp>, profile: Option<PathBuf>) -> BroadcastConfig {
    BroadcastConfig {
        rect: LogicalRect::new(0, 0, 2, 2),
        blocks: 8,
        pages: 4,
        window: 2,
        jobs: 1,
        check: Check::None,
        device: DeviceChoice::PcieSim,
        exec: Exec::Firmware,
        firmware: Some(firmware()),
        speed_up,
        profile,
        ..BroadcastConfig::default()
    }
}

fn run(cfg: &BroadcastConfig) -> BroadcastSummary {
    broadcast::run(cfg, |_| {}).unwrap()
}

/// A function's inclusive cycles over every core of a folded-stacks file.
fn inclusive(folded: &std::path::Path, function: &str) -> u64 {
    std::fs::read_to_string(folded)
        .unwrap()
        .lines()
        .filter(|l| l.split(';').any(|f| f.split(' ').next() == Some(function)))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn the_senders_reads_made_faster_shorten_the_run_and_change_no_byte() {
    // A block's reads: the kernel's `read_block`, the protocol's call of the NoC's batch
    // (`sender::read_pages`) and the page loop it calls out of line.
    let names = ["read_block", "sender::read_pages", "issue_pages"].map(String::from);
    let reads = what_if::resolve(&firmware(), &names, 4).unwrap();
    assert_eq!(reads.code.factor(), 4);
    for f in [
        "komorebi_kernel::broadcast_handler::read_block",
        "komorebi_broadcast::device::sender::read_pages",
        "komorebi_silicon::noc::SiliconNoc<C>::issue_pages",
    ] {
        assert!(
            reads.functions.iter().any(|g| g == f),
            "{f}: {:?}",
            reads.functions
        );
    }
    assert!(
        reads
            .functions
            .iter()
            .all(|f| names.iter().any(|n| f.contains(n.as_str())))
    );
    let dir = std::env::temp_dir().join(format!("komorebi-what-if-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (plain_folded, fast_folded) = (dir.join("plain.folded"), dir.join("fast.folded"));
    let plain = run(&shape(None, Some(plain_folded.clone())));
    let fast = run(&shape(Some(reads.clone()), Some(fast_folded.clone())));
    assert!(plain.ok && fast.ok, "{plain}\n{fast}");
    assert_eq!(fast.received_bytes, plain.received_bytes);
    // The two senders read every block of the run: their reads are on its critical path.
    assert!(
        fast.cycles < plain.cycles,
        "{} !< {}",
        fast.cycles,
        plain.cycles
    );
    // The profile of the faster run charges the reads under three quarters of what it did:
    // their own code a quarter, what else they call out of line (the first batch from a DRAM
    // port looks its tile up) and their waits for earlier results as before, and now polls of
    // the read command buffer, which the NIU's read pipeline holds 36 cycles a read (code four
    // times faster issues a page's read sooner than that; under half before the buffer was
    // held, 13,670 of 21,934 cycles since).
    let block = "komorebi_kernel::broadcast_handler::read_block";
    let (before, after) = (
        inclusive(&plain_folded, block),
        inclusive(&fast_folded, block),
    );
    assert!(before > 0 && after * 4 < before * 3, "{after} of {before}");
    // The report says the cycles are not the firmware's as built, and of which functions.
    let s = fast.speed_up.as_ref().expect("a what-if summary");
    assert_eq!(
        (s.factor, &s.asked, &s.functions),
        (4, &reads.asked, &reads.functions)
    );
    assert!(
        fast.to_string().contains("not the firmware's as built"),
        "{fast}"
    );
    assert!(plain.speed_up.is_none());
    std::fs::remove_dir_all(&dir).ok();
}

/// The images' `memcpy` and `memset` are assembly (no DWARF, no symbol size): they are found
/// by their symbols, from each to the next symbol, as a few whole instructions.
#[test]
fn the_assembly_routines_are_found_by_their_symbols() {
    let w = what_if::resolve(&firmware(), &["memcpy".into(), "memset".into()], 2).unwrap();
    assert_eq!(w.functions, ["memcpy", "memset"], "{:?}", w.functions);
    let ranges = w.code.ranges();
    // Three images, each with both routines (adjacent in each: one range or two, merged
    // where images share addresses).
    assert!((1..=6).contains(&ranges.len()), "{ranges:?}");
    for &(start, end) in ranges {
        assert!(start % 4 == 0 && end % 4 == 0 && start < end, "{ranges:?}");
        // Both routines together are some 70 instructions (284 bytes at 2026-12-05).
        assert!(
            end - start <= 512,
            "routines of a few dozen instructions: {ranges:?}"
        );
    }
}

/// A routine without a size ends with its section: the reader's 8-byte boot stub at 0 (its
/// `_boot`, alone in `.boot`) is its 8 bytes, not everything up to the reader's `_start` at
/// 0x1C000, over the other kernels' code. And a profile names it `_boot`, not what stale debug
/// information says lies at 0, and a pc past it by its address.
#[test]
fn the_boot_stub_is_its_own_eight_bytes() {
    // (`_boot` also names the stub's copies in the other images and `log_boot`.)
    let w = what_if::resolve(&firmware(), &["_boot".into()], 2).unwrap();
    let ranges = w.code.ranges();
    assert_eq!(ranges.first(), Some(&(0, 8)), "{ranges:?}");
    assert!(
        ranges.iter().all(|&(start, end)| end - start < 0x400),
        "every range one routine or function: {ranges:?}"
    );
    let symbols = komorebi::host::profile::load_symbols(&firmware()).unwrap();
    let (_, reader) = symbols
        .iter()
        .find(|(role, _)| *role == komorebi_hal::Role::Reader)
        .unwrap();
    assert_eq!(reader.frames(0), ["_boot"]);
    assert_eq!(reader.frames(4), ["_boot"]);
    // Past the stub's section no routine holds a pc: it is named by its address.
    assert_eq!(reader.frames(8), ["0x8"]);
}

#[test]
fn a_name_no_function_has_and_a_factor_outside_2_to_64_are_refused() {
    let e =
        what_if::resolve(&firmware(), &["read_block".into(), "no_such_fn".into()], 2).unwrap_err();
    assert!(
        matches!(&e, WhatIfError::NoSuchFunction { name, .. } if name == "no_such_fn"),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("--speed-up no_such_fn: no function"),
        "{e}"
    );
    // An empty name would match every function.
    let e = what_if::resolve(&firmware(), &["".into()], 2).unwrap_err();
    assert!(matches!(e, WhatIfError::EmptyName), "{e}");
    // The same name twice says nothing more (as the same fault twice is refused).
    let twice = ["read_block".into(), "memcpy".into(), "read_block".into()];
    let e = what_if::resolve(&firmware(), &twice, 2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--speed-up read_block is given twice (allowed: each name once)"
    );
    for factor in [0, 1, 65] {
        let e = what_if::resolve(&firmware(), &["read_block".into()], factor).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("--speed-up-by: speed-up factor {factor}: allowed 2..=64"),
            "{e}"
        );
    }
    // Nothing to read: the images' directory is named.
    let e = what_if::resolve(std::path::Path::new("/nonexistent"), &["x".into()], 2).unwrap_err();
    assert!(
        matches!(e, WhatIfError::Image { .. }) && e.to_string().contains("/nonexistent"),
        "{e}"
    );
}

#[test]
fn the_command_line_reports_the_functions_and_refuses_what_it_cannot_do() {
    let dir = firmware();
    let dir = dir.to_str().unwrap();
    let flags = [
        "--device",
        "pcie-sim",
        "--exec",
        "firmware",
        "--firmware",
        dir,
        "--rect",
        "0,0,2,2",
        "--blocks",
        "2",
        "--pages",
        "1",
        "--jobs",
        "1",
        "--check",
        "none",
    ];
    let (code, v) = broadcast_json(&[&flags[..], &["--speed-up", "cast_inner"]].concat());
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["speed_up"]["factor"], 2);
    assert_eq!(v["speed_up"]["asked"], serde_json::json!(["cast_inner"]));
    let functions = v["speed_up"]["functions"].as_array().unwrap();
    assert!(!functions.is_empty());
    assert!(
        functions
            .iter()
            .all(|f| f.as_str().unwrap().contains("cast_inner"))
    );
    // A name no function has, a factor out of range, a device without RISC-V cores.
    let (code, _, err) = komorebi(
        &[
            &["broadcast"][..],
            &flags[..],
            &["--speed-up", "no_such_fn"],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--speed-up no_such_fn: no function"), "{err}");
    let (code, _, err) = komorebi(
        &[
            &["broadcast"][..],
            &flags[..],
            &["--speed-up", "read_block", "--speed-up-by", "1"],
        ]
        .concat(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--speed-up-by"), "{err}");
    // The factor alone is refused: it would speed up nothing.
    let (code, _, err) =
        komorebi(&[&["broadcast"][..], &flags[..], &["--speed-up-by", "4"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--speed-up"), "{err}");
    let (code, _, err) = komorebi(&["broadcast", "--speed-up", "read_block"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--speed-up") && err.contains("--device pcie-sim --exec firmware"),
        "{err}"
    );
}
