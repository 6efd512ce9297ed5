//! The crate's layout as `lib.rs` documents it: the source files' imports form a tree with no
//! circle, leaf modules import nothing of the crate but other leaves, and no source file is
//! over 800 lines.
//!
//! An import of file `a` by file `b` is a `crate::a...` path in `b` (a `use` line or a path
//! inline), or a `mod a;` declaration in `b` (a module uses the children it declares). Run with
//! `--nocapture` to see the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules that hold plain data or pure functions.
const LEAVES: &[&str] = &[
    "config",
    "error",
    "fault",
    "hal::error",
    "memory",
    "niu",
    "packet",
    "report",
    "rng",
    "route",
    "task",
    "timing",
    "trace",
];

const MAX_LINES: usize = 800;

/// Every source file as `(module path, text)`: `lib.rs` is `crate`, `hal/mod.rs` is `hal`,
/// `hal/noc.rs` is `hal::noc`.
fn sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}::"), out);
                continue;
            }
            let module = match (prefix, name.as_str()) {
                ("", "lib") => "crate".to_string(),
                (p, "mod") => p.trim_end_matches("::").to_string(),
                (p, n) => format!("{p}{n}"),
            };
            out.insert(module, std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "",
        &mut out,
    );
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

/// The code of a file without comments (line comments only; the crate has no block comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &files {
        let code = code(text);
        let out = edges.entry(module.clone()).or_default();
        for path in crate_paths(&code) {
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
        if !state.contains_key(node.as_str()) {
            if let Some(c) = visit(node, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn imports_form_a_tree_without_circles() {
    let edges = graph();
    for (module, uses) in &edges {
        let uses: Vec<_> = uses.iter().map(String::as_str).collect();
        println!("{module:12} -> {}", uses.join(", "));
    }
    assert_eq!(circle(&edges), None, "an import circle");
    println!("no circle among {} files", edges.len());
}

#[test]
fn leaf_modules_import_only_leaves() {
    let edges = graph();
    for leaf in LEAVES {
        let uses = edges
            .get(*leaf)
            .unwrap_or_else(|| panic!("no module {leaf}"));
        for used in uses {
            assert!(
                LEAVES.contains(&used.as_str()),
                "leaf module {leaf} imports {used}, which is not a leaf"
            );
        }
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    for (module, text) in sources() {
        let lines = text.lines().count();
        assert!(lines <= MAX_LINES, "{module} has {lines} lines");
    }
}

#[test]
fn the_parser_reads_paths_and_groups() {
    let paths =
        crate_paths("use crate::a::{B, c::D};\nlet x = crate::e::f(1);\nuse crate::{G, h};");
    let want: Vec<Vec<&str>> = vec![
        vec!["a", "B"],
        vec!["a", "c", "D"],
        vec!["G"],
        vec!["h"],
        vec!["e", "f"],
    ];
    let mut got = paths;
    got.sort();
    let mut want: Vec<Vec<String>> = want
        .into_iter()
        .map(|p| p.into_iter().map(String::from).collect())
        .collect();
    want.sort();
    assert_eq!(got, want);
}
