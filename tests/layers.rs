//! The crate's top-level modules import each other without a loop: every `crate::x`
//! (and a top-level file's `super::x`) in `src/` is an edge from the file's top-level module to
//! `x`, and the graph of those edges must have no cycle. `base` imports nothing of the crate.
//! Comments are left out (a doc link is no import). Run: `cargo test --test layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The façades that re-export from everywhere: the crate root and the feature-gated modules
/// for tests; nothing imports them.
const FACADES: &[&str] = &["lib", "fuzzing", "testing"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/auth/flow.rs` → `auth`, `src/error.rs` → `error`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a file without its comments (line comments and doc comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal ("http://") is not a comment; strings that hold
            // `crate::` paths do not occur, so cutting there only ever drops text.
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names following `prefix` (`crate::`, `super::`) in `code`.
fn names_after<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `foo_crate::` is another path
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        names.push(&rest[..end]);
    }
    names
}

fn graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        let text = code(&std::fs::read_to_string(file).unwrap());
        let top_level = file.parent() == Some(src.as_path()) || file.file_name().is_some_and(|n| n == "mod.rs");
        let mut targets = names_after(&text, "crate::");
        if top_level && file.parent() != Some(src.as_path()) {
            // In `src/x/mod.rs`, `super::` is the crate root.
            targets.extend(names_after(&text, "super::"));
        }
        for name in targets {
            // A name that is no module is one of the root's re-exports.
            let to = if modules.contains(name) {
                name.to_string()
            } else {
                "lib".to_string()
            };
            if to != from {
                let shown = file.strip_prefix(&src).unwrap().display().to_string();
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(shown);
            }
        }
    }
    edges
}

/// Every cycle through `start` (as module lists), found by depth-first search.
fn cycles(edges: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    fn walk(
        edges: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        start: &str,
        path: &mut Vec<String>,
        found: &mut BTreeSet<Vec<String>>,
    ) {
        let here = path.last().unwrap().clone();
        for next in edges.get(&here).into_iter().flat_map(|m| m.keys()) {
            if next == start {
                // One rotation per cycle: start at its smallest module.
                let min = path.iter().enumerate().min_by_key(|(_, m)| m.as_str()).unwrap().0;
                let mut cycle = path[min..].to_vec();
                cycle.extend_from_slice(&path[..min]);
                found.insert(cycle);
            } else if !path.contains(next) {
                path.push(next.clone());
                walk(edges, start, path, found);
                path.pop();
            }
        }
    }
    let mut found = BTreeSet::new();
    for start in edges.keys() {
        walk(edges, start, &mut vec![start.clone()], &mut found);
    }
    found.into_iter().collect()
}

#[test]
fn the_top_level_modules_import_each_other_without_a_loop() {
    let mut edges = graph();
    for facade in FACADES {
        edges.remove(*facade);
    }
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|cycle| {
            let mut steps = Vec::new();
            for (i, from) in cycle.iter().enumerate() {
                let to = &cycle[(i + 1) % cycle.len()];
                let files: Vec<&String> = edges[from][to].iter().collect();
                steps.push(format!("{from} -> {to} (in {files:?})"));
            }
            steps.join(", ")
        })
        .collect();
    assert!(
        shown.is_empty(),
        "import cycles between top-level modules:\n{}",
        shown.join("\n")
    );
}

#[test]
fn base_imports_nothing_of_the_crate() {
    let edges = graph();
    assert!(!edges.contains_key("base"), "src/base imports {:?}", edges.get("base"));
}

#[test]
fn export_sits_above_client_and_below_ffi() {
    // `export` reads the client (and the layers under it); the C ABI reads `export`, and so may
    // the hub (serving export's `ToolCaller` seam for many servers), never the other way.
    let edges = graph();
    let importers: Vec<&String> = edges
        .iter()
        .filter(|(from, to)| {
            to.contains_key("export") && !FACADES.contains(&from.as_str()) && !["ffi", "hub"].contains(&from.as_str())
        })
        .map(|(from, _)| from)
        .collect();
    assert!(
        importers.is_empty(),
        "modules below the C ABI import export: {importers:?}"
    );
    let below = edges
        .get("export")
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for layer in ["ffi", "hub"] {
        assert!(!below.contains(&layer.to_string()), "export imports {layer}: {below:?}");
    }
    assert!(
        below.contains(&"client".to_string()),
        "export calls tools through the client"
    );
}

#[test]
fn the_check_sees_a_loop_when_there_is_one() {
    let mut edges = graph();
    // The real graph has client -> transport; a transport -> client edge must be reported.
    assert!(edges["client"].contains_key("transport"));
    edges
        .entry("transport".into())
        .or_default()
        .entry("client".into())
        .or_default()
        .insert("(test)".into());
    assert!(cycles(&edges)
        .iter()
        .any(|c| c.contains(&"client".to_string()) && c.contains(&"transport".to_string())));
}

#[test]
fn the_hub_sits_above_client_and_below_ffi() {
    let edges = graph();
    // What the hub builds on: the client and its configuration, and what a client's handlers
    // and errors are made of (authorization handlers, protocol types).
    // `export`: the hub serves the export's `ToolCaller` seam.
    let allowed = ["auth", "base", "client", "config", "error", "export", "protocol", "lib"];
    let hub = edges["hub"].clone();
    assert!(hub.contains_key("client"), "the graph sees the hub's imports: {hub:?}");
    let beyond: Vec<_> = hub.iter().filter(|(to, _)| !allowed.contains(&to.as_str())).collect();
    assert!(beyond.is_empty(), "src/hub imports beyond its layer: {beyond:?}");
    // Only the C ABI (and the crate root's re-exports) stand on the hub.
    let above: Vec<_> = edges
        .iter()
        .filter(|(from, to)| !["ffi", "lib", "testing", "fuzzing"].contains(&from.as_str()) && to.contains_key("hub"))
        .map(|(from, to)| (from, &to["hub"]))
        .collect();
    assert!(above.is_empty(), "modules below the hub import it: {above:?}");
}
