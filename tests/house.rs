//! The house rules of every crate's sources, checked on the files themselves: the imports
//! between a crate's files form a tree with no circle, the simulator's leaf modules import only
//! leaves, and no source file is over 800 lines (tests, benches and examples aside).
//!
//! File `b` imports file `a` when `b` names a path into `a` (`crate::a::..`, or `super::`/`self::`
//! paths that lead there, in a `use` line or inline), or declares `mod a;` (a module uses the
//! children it declares). A re-export at a crate's root (`crate::Item`) counts as an import of
//! `lib.rs`, so a file that uses one sits in a circle with the root: files name the module an
//! item lives in. Run with `--nocapture` to see every crate's graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose sources are checked, by folder (the firmware and fuzz workspaces too).
const CRATES: &[&str] = &[
    ".",
    "blackhole-pac",
    "wormhole-pac",
    "hal",
    "broadcast",
    "kernel",
    "backends/silicon",
    "backends/pcie",
    "backends/tt-kmd-sys",
    "backends/mock",
    "backends/sim",
    "examples/firmware",
];

/// The simulator's modules that hold plain data or pure functions (its `lib.rs` table).
const SIM_LEAVES: &[&str] = &[
    "arc",
    "boot",
    "config",
    "error",
    "fault",
    "hal::error",
    "memory",
    "mmio",
    "niu",
    "packet",
    "posted",
    "profile",
    "regs",
    "report",
    "riscv",
    "riscv::bus",
    "riscv::cost",
    "riscv::decode",
    "riscv::hart",
    "riscv::op",
    "riscv::probe",
    "riscv::ram",
    "riscv::stop",
    "rng",
    "route",
    "task",
    "timing",
    "trace",
];

const MAX_LINES: usize = 800;

fn root(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(krate)
}

/// Every library source file of `krate` as `(module path, text)`: `lib.rs` is `crate`,
/// `hal/mod.rs` is `hal`, `hal/noc.rs` is `hal::noc`. Binaries (`main.rs`, `bin/`) are left
/// out: they are roots of their own.
fn sources(krate: &str) -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                if prefix.is_empty() && name == "bin" {
                    continue;
                }
                walk(&path, &format!("{prefix}{name}::"), out);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let module = match (prefix, name.as_str()) {
                ("", "lib") => "crate".to_string(),
                ("", "main") => continue,
                (p, "mod") => p.trim_end_matches("::").to_string(),
                (p, n) => format!("{p}{n}"),
            };
            out.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut out = BTreeMap::new();
    walk(&root(krate).join("src"), "", &mut out);
    out
}

/// `super::` and `self::` paths of `code` in module `module`, as paths from the crate root.
fn relative_paths(module: &str, code: &str) -> Vec<Vec<String>> {
    let here: Vec<String> = if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    let mut out = Vec::new();
    for (prefix, up) in [("super::", 1usize), ("self::", 0)] {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at..];
            // `super::super::` counts each step; an identifier ending in `super` is not a path.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                rest = &rest[prefix.len()..];
                continue;
            }
            let mut steps = 0;
            while let Some(r) = rest.strip_prefix(prefix) {
                rest = r;
                steps += up;
            }
            let base = &here[..here.len().saturating_sub(steps)];
            // The path ends with its statement (a `use` group may span lines).
            let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
            let paths = crate_paths(&format!("crate::{statement}"));
            if paths.is_empty() {
                // `super::*`: the parent itself.
                out.push(base.to_vec());
            }
            for p in paths {
                let mut full = base.to_vec();
                full.extend(p);
                out.push(full);
            }
        }
    }
    out
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len())
}

/// The paths after each `crate::` of `code`, as their segments (a braced group gives one path
/// per top-level item).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let mut path = Vec::new();
        let mut s = rest;
        loop {
            if let Some(group) = s.strip_prefix('{') {
                // One path per top-level item: its first segment is enough to find the module
                // (a nested module is always named by the item's own path).
                let mut depth = 0;
                let mut item = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            paths.push(with(&path, &item));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
                paths.push(with(&path, &item));
                path.clear();
                break;
            }
            let n = ident_len(s);
            if n == 0 {
                break;
            }
            path.push(s[..n].to_string());
            s = &s[n..];
            match s.strip_prefix("::") {
                Some(t) => s = t,
                None => break,
            }
        }
        if !path.is_empty() {
            paths.push(path);
        }
    }
    paths
}

fn with(prefix: &[String], item: &str) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.extend(
        item.trim()
            .split("::")
            .map(|seg| seg[..ident_len(seg)].to_string())
            .filter(|seg| !seg.is_empty()),
    );
    path
}

/// The code of a file without comments (line comments only; no crate has block comments) and
/// without its inline modules (`mod tests { .. }`): their `super::` is the file itself, and
/// what a file's tests import is not an import between files.
fn code(text: &str) -> String {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let l = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let t = l.trim_start().trim_start_matches("pub ");
        if depth == 0 && t.starts_with("mod ") && t.trim_end().ends_with('{') {
            depth = 1;
            continue;
        }
        if depth > 0 {
            depth += l.matches('{').count();
            depth -= l.matches('}').count().min(depth);
            continue;
        }
        out.push(l);
    }
    out.join("\n")
}

fn graph(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in files {
        let code = code(text);
        let out = edges.entry(module.clone()).or_default();
        for path in crate_paths(&code)
            .into_iter()
            .chain(relative_paths(module, &code))
        {
            // The longest prefix of the path that is a file's module.
            let target = (1..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|m| files.contains_key(m))
                .unwrap_or_else(|| "crate".to_string());
            if &target != module {
                out.insert(target);
            }
        }
        for line in code.lines() {
            let l = line.trim_start().trim_start_matches("pub ");
            if let Some(name) = l.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                let child = if module == "crate" {
                    name.to_string()
                } else {
                    format!("{module}::{name}")
                };
                out.insert(child);
            }
        }
    }
    edges
}

/// A circle of the graph, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|m| m == next).unwrap();
                    let mut c = stack[from..].to_vec();
                    c.push(next.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node.as_str())
            && let Some(c) = visit(node, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn every_crate_s_files_import_each_other_without_circles() {
    let mut circles = Vec::new();
    for krate in CRATES {
        let files = sources(krate);
        let edges = graph(&files);
        println!("== {krate}");
        for (module, uses) in &edges {
            let uses: Vec<_> = uses.iter().map(String::as_str).collect();
            println!("{module:24} -> {}", uses.join(", "));
        }
        if let Some(c) = circle(&edges) {
            circles.push(format!("{krate}: {}", c.join(" -> ")));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_simulator_s_leaf_modules_import_only_leaves() {
    let edges = graph(&sources("backends/sim"));
    for leaf in SIM_LEAVES {
        let uses = edges
            .get(*leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        for used in uses {
            assert!(
                SIM_LEAVES.contains(&used.as_str()),
                "leaf module {leaf} imports {used}, which is not a leaf"
            );
        }
    }
}

/// The crates above the HAL's implementations, which must carry to any chip unchanged.
const CHIP_NEUTRAL: &[&str] = &["hal", "broadcast", "kernel"];

#[test]
fn the_chip_neutral_crates_name_no_chip_in_their_code_or_dependencies() {
    let mut named = Vec::new();
    for krate in CHIP_NEUTRAL {
        for (module, text) in sources(krate) {
            for line in code(&text).lines() {
                let lower = line.to_ascii_lowercase();
                for chip in ["blackhole", "wormhole"] {
                    if lower.contains(chip) {
                        named.push(format!("{krate}: {module}: `{}` names {chip}", line.trim()));
                    }
                }
            }
        }
        // The library's own dependencies: a chip's register crate may be a dev-dependency.
        let manifest = std::fs::read_to_string(root(krate).join("Cargo.toml")).unwrap();
        let mut section = "";
        for line in manifest.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                section = t;
                continue;
            }
            if section == "[dependencies]"
                && (t.starts_with("blackhole-pac") || t.starts_with("wormhole-pac"))
            {
                named.push(format!("{krate}: Cargo.toml [dependencies]: {t}"));
            }
        }
    }
    assert!(named.is_empty(), "{}", named.join("\n"));
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut long = Vec::new();
    for krate in CRATES {
        for (module, text) in sources(krate) {
            let lines = text.lines().count();
            if lines > MAX_LINES {
                long.push(format!("{krate}: {module} has {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn the_parser_reads_paths_groups_and_relative_paths() {
    let mut got =
        crate_paths("use crate::a::{B, c::D};\nlet x = crate::e::f(1);\nuse crate::{G, h};");
    got.sort();
    let want: Vec<Vec<String>> = [
        &["G"][..],
        &["a", "B"],
        &["a", "c", "D"],
        &["e", "f"],
        &["h"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(got, want);
    let rel = relative_paths(
        "app::broadcast::plan",
        "use super::config::Operand;\nuse super::*;",
    );
    assert_eq!(
        rel,
        vec![
            vec!["app", "broadcast", "config", "Operand"],
            vec!["app", "broadcast"],
        ]
    );
    // A circle is found, and a tree is not one.
    let files: BTreeMap<String, String> = [
        ("crate".to_string(), "mod a;\nmod b;".to_string()),
        ("a".to_string(), "use crate::b::X;".to_string()),
        ("b".to_string(), "pub struct X;".to_string()),
    ]
    .into();
    assert_eq!(circle(&graph(&files)), None);
    let mut with_circle = files.clone();
    with_circle.insert("b".to_string(), "use super::a::Y;".to_string());
    assert!(circle(&graph(&with_circle)).is_some());
}

// ---- the repository stands alone ------------------------------------------------------------

/// Every text file of the repository, `(path from the root, text)`: build output (`target`
/// folders) and git's own files left out.
fn repository_texts() -> Vec<(PathBuf, String)> {
    const TEXT: &[&str] = &[
        "rs", "md", "toml", "sh", "ld", "yml", "yaml", "json", "py", "txt", "cfg",
    ];
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            // `.git` is a folder in a clone and a file in a worktree: git's either way.
            if name == ".git" {
                continue;
            }
            if path.is_dir() {
                if name != "target" {
                    walk(root, &path, out);
                }
                continue;
            }
            let ext = path.extension().map(|e| e.to_string_lossy().to_string());
            // Files without an extension are scripts (`.ci/run`) when they are text.
            if ext.as_deref().is_some_and(|e| !TEXT.contains(&e)) {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// `rel` (a path relative to folder `dir` of the repository) stays inside the repository.
fn stays_inside(dir: &Path, rel: &str) -> bool {
    let mut depth = dir.components().count() as i64;
    for part in rel.split('/') {
        match part {
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// Every path in `text` that starts with `../` (after a blank, a quote, a bracket or `=`).
fn parent_paths(text: &str) -> Vec<&str> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("../") {
        let start = at + i;
        let before = text[..start].chars().next_back();
        let end = text[start..]
            .find(|c: char| !path_char(c))
            .map_or(text.len(), |n| start + n);
        if before.is_none_or(|c| !path_char(c)) {
            out.push(&text[start..end]);
        }
        at = end.max(start + 3);
    }
    out
}

/// What in `text` (of the file at `path`) refers outside the repository: a `../` path that
/// leaves it, an absolute path into the machine it was written on, or one of the design notes
/// that were never part of it. CI's script may use the third-party source it builds ttsim from.
fn outside_references(path: &Path, text: &str) -> Vec<String> {
    // Spelled in two parts, so that this file does not name them itself.
    let notes = [
        "blackhole-facts",
        "blackhole-perf",
        "pcie-host-facts",
        "scale-facts",
        "style-anchors",
        "vms-notes",
        "architecture",
    ]
    .map(|n| format!("{n}.{}", "md"));
    let ci_may_use = [
        "../shared/third-party/ttsim",
        "../shared/tools/build-ttsim.sh",
    ];
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut found = Vec::new();
    for p in parent_paths(text) {
        let allowed = path == Path::new(".ci/run") && ci_may_use.iter().any(|a| p.starts_with(a));
        if !allowed && !stays_inside(dir, p) {
            found.push(p.to_string());
        }
    }
    for abs in ["/work/", "/home/"] {
        if text.contains(abs) {
            found.push(abs.to_string());
        }
    }
    for note in notes {
        if text.contains(&note) {
            found.push(note);
        }
    }
    found
}

/// Lines of `text` that speak of a development session (`session 3`, `this session`, `in
/// session`) rather than a commit or a date. The host runtime's `Session` ("a session", "the
/// session") is not one.
fn session_mentions(text: &str) -> Vec<String> {
    let phrases = [
        "this session",
        "last session",
        "previous session",
        "next session",
        "earlier session",
        "later session",
        "in session",
        "development session",
    ];
    let mut found = Vec::new();
    for line in text.lines() {
        let lower = line.to_lowercase();
        let numbered = lower.match_indices("session ").any(|(i, s)| {
            lower[i + s.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        });
        if numbered || phrases.iter().any(|p| lower.contains(p)) {
            found.push(line.trim().to_string());
        }
    }
    found
}

#[test]
fn no_file_refers_outside_the_repository_and_no_text_speaks_of_sessions() {
    let mut bad = Vec::new();
    for (path, text) in repository_texts() {
        if path == Path::new("tests/house.rs") {
            continue;
        }
        for r in outside_references(&path, &text) {
            bad.push(format!(
                "{}: refers outside the repository: {r}",
                path.display()
            ));
        }
        for line in session_mentions(&text) {
            bad.push(format!(
                "{}: names a session (cite a commit or a date): {line}",
                path.display()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_standalone_checks_catch_what_they_are_for() {
    let file = Path::new("docs/x.md");
    assert_eq!(
        outside_references(file, "see ../../shared/design/notes and ../README.md"),
        ["../../shared/design/notes"],
        "docs/../README.md is inside, docs/../../ is not"
    );
    assert_eq!(
        outside_references(
            Path::new(".ci/run"),
            "bash ../shared/tools/build-ttsim.sh out"
        ),
        Vec::<String>::new(),
        "CI builds ttsim from the third-party source"
    );
    assert_eq!(
        outside_references(Path::new("build.rs"), "// see ../shared/tools/x"),
        ["../shared/tools/x"],
        "only CI's script may use them"
    );
    assert_eq!(
        outside_references(file, "read /work/notes and blackhole-facts.md"),
        ["/work/", "blackhole-facts.md"]
    );
    assert_eq!(
        outside_references(file, "include_str!(\"../README.md\") a..b x/../y"),
        Vec::<String>::new()
    );
    assert_eq!(
        session_mentions(
            "measured in session 3\nThe session writes\nthis session's figure\nSession 12"
        ),
        [
            "measured in session 3",
            "this session's figure",
            "Session 12"
        ]
    );
}
