//! The firmware images are laid out the same wherever the source tree is checked out.
//!
//! The firmware's linker places functions in the order of their symbol names. Rust's symbols
//! end in a hash (`17h` and sixteen hex digits) that takes in each crate's metadata, which cargo
//! derives from the absolute path of every path dependency outside the firmware's own
//! workspace (`examples/firmware`): all of `hal`, `broadcast`, `kernel` and `backends/silicon`.
//! Two functions whose names differ only in that hash (closures of one function, which are all
//! `{{closure}}`) are therefore placed in an order that depends on the checkout's path, and the
//! simulated cores' branch predictor, indexed by address, runs them a little faster or slower:
//! before this test, the 03 default on `pcie-sim` took 241,650 cycles built in one directory and
//! 240,300 in another (docs/decisions.md, D64). With one function a name, the order no longer
//! depends on the hash. The tests build every image set (both chips, both handlers) and the
//! default set once more in a copy of the tree under a longer path, which needs the
//! `riscv32im-unknown-none-elf` target.

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use komorebi::host::backend::{ImageHandler, built_firmware_in, built_firmware_with};
use komorebi_hal::Role;
use komorebi_pcie::chip::ChipKind;
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// `name` without the hash Rust's legacy mangling appends (`17h<16 hex digits>E` at the end).
fn without_hash(name: &str) -> &str {
    const HASH: usize = "17h0123456789abcdefE".len();
    let Some(start) = name.len().checked_sub(HASH) else {
        return name;
    };
    let tail = &name.as_bytes()[start..];
    let is_hash = tail.starts_with(b"17h")
        && tail.ends_with(b"E")
        && tail[3..HASH - 1].iter().all(u8::is_ascii_hexdigit);
    if is_hash { &name[..start] } else { name }
}

/// The function names of the ELF image `bytes` (hash removed) that name more than one function,
/// and how many function names carried a hash (none: the check would see nothing, as in an
/// image without symbols or with another mangling).
fn shared_names(bytes: &[u8]) -> (Vec<String>, usize) {
    let file = object::File::parse(bytes).expect("an ELF image");
    let mut count: BTreeMap<&str, u32> = BTreeMap::new();
    let mut hashed = 0;
    for sym in file.symbols() {
        if let (SymbolKind::Text, true, Ok(name)) = (sym.kind(), sym.size() > 0, sym.name()) {
            let bare = without_hash(name);
            hashed += usize::from(bare.len() != name.len());
            *count.entry(bare).or_default() += 1;
        }
    }
    let shared = count
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(name, n)| format!("{n} x {name}"))
        .collect();
    (shared, hashed)
}

#[test]
fn the_hash_is_taken_off_a_mangled_name_and_nothing_else() {
    assert_eq!(
        without_hash("_ZN4core3ptr13read_volatile17h0123456789abcdefE"),
        "_ZN4core3ptr13read_volatile"
    );
    // Not a hash: too short, not hex, no `E`.
    for name in [
        "memcpy",
        "_ZN1a17h0123E",
        "_ZN1a17h0123456789abcdeXE",
        "x17h0123456789abcdef",
    ] {
        assert_eq!(without_hash(name), name);
    }
}

#[test]
fn no_two_functions_of_any_firmware_image_share_a_name() {
    for kind in [ChipKind::Blackhole, ChipKind::Wormhole] {
        for handler in [ImageHandler::Broadcast, ImageHandler::Handshake] {
            let dir = built_firmware_with(kind, handler).unwrap_or_else(|e| panic!("{e}"));
            for role in Role::ALL {
                let path = dir.join(role.name());
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let (shared, hashed) = shared_names(&bytes);
                assert!(
                    hashed > 0,
                    "{}: no function name carries the legacy mangling's hash, so this check \
                     would see no two functions of one name (an image without symbols, or v0 \
                     mangling): look at the image's names and adapt `without_hash`",
                    path.display()
                );
                assert!(
                    shared.is_empty(),
                    "{}: functions whose names differ only in their hash, so their order \
                     depends on the checkout's path (write each closure that is not inlined \
                     in a function of its own, as `broadcast/src/device/wait.rs` says):\n{}",
                    path.display(),
                    shared.join("\n")
                );
            }
        }
    }
}

/// Copies the source tree at `from` into `to`, leaving out build outputs (`target`) and `.git`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            if name != "target" && name != ".git" {
                copy_tree(&entry.path(), &to.join(&name));
            }
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// What a loader puts in memory: each loadable segment's address and bytes.
fn loaded(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*bytes).expect("an ELF image");
    file.segments()
        .map(|s| (s.address(), s.data().expect("segment bytes").to_vec()))
        .collect()
}

/// The property itself, whatever the mechanism: the default images built in a copy of the tree
/// under another, longer path are byte for byte the ones built here.
#[test]
fn the_images_built_under_another_path_are_the_same_bytes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let here = built_firmware_with(ChipKind::Blackhole, ImageHandler::Broadcast)
        .unwrap_or_else(|e| panic!("{e}"));
    let copy = TreeCopy::of(&root);
    let there = built_firmware_in(&copy.0, ChipKind::Blackhole, ImageHandler::Broadcast)
        .unwrap_or_else(|e| panic!("{e}"));
    for role in Role::ALL {
        let (a, b) = (here.join(role.name()), there.join(role.name()));
        assert!(
            loaded(&a) == loaded(&b),
            "{} and {} load different bytes: the firmware's layout depends on the checkout's \
             path",
            a.display(),
            b.display()
        );
    }
}

/// A copy of the source tree at `root` ([`copy_tree`]) in a directory of its own (named by
/// the process and a count) under `target`, removed when dropped, a failed assertion's
/// unwinding included. One directory for every run let two runs in one checkout (a debug and
/// a release `cargo test`, say) remove each other's copy while its firmware built, failing one
/// of them with a build error.
struct TreeCopy(PathBuf);

impl TreeCopy {
    fn of(root: &Path) -> Self {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let dir = root
            .join("target")
            .join("firmware-layout-check")
            .join(format!(
                "a-checkout-under-a-longer-path-than-this-one-{}-{}",
                std::process::id(),
                MADE.fetch_add(1, Ordering::Relaxed)
            ));
        // A copy left by a killed run whose process had this id.
        let _ = std::fs::remove_dir_all(&dir);
        copy_tree(root, &dir);
        Self(dir)
    }
}

impl Drop for TreeCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_tree_copy_is_its_own_and_goes_when_its_test_fails() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let failed = std::thread::spawn(move || {
        let copy = TreeCopy::of(&root);
        assert!(copy.0.join("examples/firmware/Cargo.toml").is_file());
        panic!("{}", copy.0.display());
    })
    .join();
    let message = failed.expect_err("the thread panicked");
    let dir = PathBuf::from(message.downcast_ref::<String>().expect("the copy's path"));
    let own = format!("-{}-", std::process::id());
    assert!(dir.to_string_lossy().contains(&own), "{}", dir.display());
    assert!(!dir.exists(), "{} left behind", dir.display());
}
