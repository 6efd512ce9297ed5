//! The driver backend without a card: what opening things that are not a Blackhole gives.

#![cfg(target_os = "linux")]

use std::path::PathBuf;

use komorebi_pcie::PcieError;
use komorebi_pcie::kmd::{KmdBar, enumerate, enumerate_in};

/// A fresh directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "komorebi-pcie-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_missing_path_is_no_such_device() {
    let dir = TempDir::new("missing");
    let path = dir.0.join("7");
    match KmdBar::open(&path) {
        Err(PcieError::NoSuchDevice { path: p }) => assert_eq!(p, path.display().to_string()),
        other => panic!("expected NoSuchDevice, got {other:?}"),
    }
}

#[test]
fn a_regular_file_is_not_tt_kmd() {
    let dir = TempDir::new("regular");
    let path = dir.0.join("0");
    std::fs::write(&path, b"not a device").expect("write temp file");
    match KmdBar::open(&path) {
        Err(PcieError::NotTtKmd { path: p, why }) => {
            assert_eq!(p, path.display().to_string());
            assert!(why.contains("GET_DRIVER_INFO"), "{why}");
            assert!(why.contains("ENOTTY"), "{why}");
        }
        other => panic!("expected NotTtKmd, got {other:?}"),
    }
}

#[test]
fn dev_null_is_not_tt_kmd() {
    if !std::path::Path::new("/dev/null").exists() {
        return;
    }
    match KmdBar::open("/dev/null") {
        // Either sysfs named its class (`mem`) or the ioctl answered ENOTTY.
        Err(PcieError::NotTtKmd { path, why }) => {
            assert_eq!(path, "/dev/null");
            assert!(why.contains("mem") || why.contains("ENOTTY"), "{why}");
        }
        other => panic!("expected NotTtKmd, got {other:?}"),
    }
}

#[test]
fn a_directory_is_not_tt_kmd() {
    let dir = TempDir::new("dir");
    match KmdBar::open(&dir.0) {
        Err(PcieError::NotTtKmd { why, .. }) => assert!(why.contains("directory"), "{why}"),
        other => panic!("expected NotTtKmd, got {other:?}"),
    }
}

#[test]
fn enumerate_without_dev_tenstorrent_is_empty() {
    if std::path::Path::new("/dev/tenstorrent").exists()
        || std::env::var_os("TT_VISIBLE_DEVICES").is_some()
    {
        eprintln!("/dev/tenstorrent or TT_VISIBLE_DEVICES exists here: the check does not apply");
        return;
    }
    assert_eq!(enumerate(), Vec::new());
}

#[test]
fn enumerate_skips_what_is_not_a_numeric_character_device() {
    let dir = TempDir::new("enum");
    std::fs::write(dir.0.join("0"), b"regular file").expect("write");
    std::fs::create_dir(dir.0.join("by-id")).expect("mkdir");
    std::os::unix::fs::symlink("/dev/null", dir.0.join("by-id").join("blackhole-1"))
        .expect("symlink");
    std::os::unix::fs::symlink("/dev/null", dir.0.join("null")).expect("symlink");
    assert_eq!(enumerate_in(&dir.0), Vec::new());
}

#[test]
fn enumerate_lists_a_node_it_cannot_use_with_its_error() {
    if !std::path::Path::new("/dev/null").exists() {
        return;
    }
    let dir = TempDir::new("enum-err");
    // A numeric name for a character device that is not tt-kmd: listed, with the reason.
    std::os::unix::fs::symlink("/dev/null", dir.0.join("3")).expect("symlink");
    let nodes = enumerate_in(&dir.0);
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    assert_eq!(nodes[0].node, Some(3));
    assert_eq!(nodes[0].pci_address, None);
    assert!(
        matches!(nodes[0].error, Some(PcieError::NotTtKmd { .. })),
        "{nodes:?}"
    );
    assert!(!nodes[0].is_blackhole());
}

#[test]
fn a_missing_directory_enumerates_to_nothing() {
    let dir = TempDir::new("gone");
    assert_eq!(enumerate_in(&dir.0.join("nothing-here")), Vec::new());
}
