//! The C boundary by construction (src/ffi/boundary.rs): a source check that fails when an
//! `extern "C"` function bypasses `ffi_boundary!`, when `catch_unwind` or raw ownership
//! transfers appear outside the audited helpers, or when an unsafe block in the FFI layer is
//! neither an audited helper nor a call into the host.

use std::fs;
use std::path::{Path, PathBuf};

/// Files holding the audited helpers: the only places that turn raw C arguments into Rust
/// values (`Box::from_raw`, `CStr::from_ptr`, `catch_unwind`).
const AUDITED: &[&str] = &["src/ffi/boundary.rs", "src/ffi/strings.rs"];

/// Other unsafe blocks in src/ffi, by file and a phrase of their SAFETY comment.
const OTHER_UNSAFE: &[(&str, &str)] = &[
    ("src/ffi/fork.rs", "registers a handler"),
    ("src/ffi/client.rs", "signal disposition"),
    ("src/ffi/event_loop.rs", "the event descriptor"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with `//` comments blanked (same length, so offsets still match).
fn without_comments(src: &str) -> String {
    src.lines()
        .map(|line| match line.find("//") {
            // a `//` inside a string literal (a URL) is rare here; keep lines with a quote before it
            Some(at) if !line[..at].contains('"') => format!("{}{}", &line[..at], " ".repeat(line.len() - at)),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Problems in one file's source: each `extern "C" fn NAME` definition must have a body that
/// starts with `ffi_boundary!`, and each `#[no_mangle]` must sit on such a function.
fn check_exports(file: &str, src: &str) -> Vec<String> {
    let code = without_comments(src);
    let mut problems = Vec::new();
    let mut rest = code.as_str();
    let mut offset = 0;
    while let Some(at) = rest.find("extern \"C\" fn ") {
        let after = &rest[at + "extern \"C\" fn ".len()..];
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let start = offset + at;
        rest = &rest[at + 1..];
        offset = start + 1;
        if name.is_empty() {
            continue; // a function pointer type, not a definition
        }
        // The body starts at the first `{` after the parameter list's closing parenthesis.
        let sig = &code[start..];
        let mut depth = 0;
        let mut close = None;
        for (i, c) in sig.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            problems.push(format!("{file}: cannot parse the signature of {name}"));
            continue;
        };
        let tail = &sig[close..];
        let (Some(brace), semi) = (tail.find('{'), tail.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < brace) {
            continue; // a declaration (an `extern` block), no body
        }
        if !tail[brace + 1..].trim_start().starts_with("ffi_boundary!") {
            problems.push(format!(
                "{file}: extern \"C\" fn {name} does not run its body through ffi_boundary!"
            ));
        }
    }
    for (at, _) in code.match_indices("#[no_mangle]") {
        let next = code[at + "#[no_mangle]".len()..].trim_start();
        let item = next.split('(').next().unwrap_or("");
        if !item.contains("extern \"C\" fn ") {
            problems.push(format!(
                "{file}: #[no_mangle] on something other than an extern \"C\" fn: {item}"
            ));
        }
    }
    problems
}

/// Problems with unsafe code and panic catching outside the audited helpers.
fn check_helpers(file: &str, src: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if AUDITED.contains(&file) {
        return problems;
    }
    let code = without_comments(src);
    for banned in ["catch_unwind", "Box::from_raw", "CStr::from_ptr", "CString::from_raw"] {
        if code.contains(banned) && file.starts_with("src/ffi/") {
            problems.push(format!(
                "{file}: {banned} outside the audited helpers (use boundary.rs)"
            ));
        }
    }
    if !file.starts_with("src/ffi/") {
        return problems; // extern "C" definitions elsewhere are caught by check_exports
    }
    let lines: Vec<&str> = src.lines().collect();
    for (i, line) in code.lines().enumerate() {
        if !line.contains("unsafe {") {
            continue;
        }
        // The SAFETY comment directly above (possibly several lines).
        let mut comment = String::new();
        for prev in lines[..i].iter().rev() {
            let t = prev.trim_start();
            if !t.starts_with("//") {
                break;
            }
            comment.insert_str(0, t);
        }
        let host = comment.contains("host");
        let listed = OTHER_UNSAFE
            .iter()
            .any(|(f, phrase)| *f == file && comment.contains(phrase));
        if !(host || listed) {
            problems.push(format!(
                "{file}:{}: unsafe block in the FFI layer that is neither a call into the host nor listed \
                 (move it into an audited helper in boundary.rs)",
                i + 1
            ));
        }
    }
    problems
}

#[test]
fn every_export_goes_through_the_boundary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut problems = Vec::new();
    let mut exports = 0;
    for path in files {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let src = fs::read_to_string(&path).unwrap();
        exports += src.matches("#[no_mangle]").count();
        problems.extend(check_exports(&rel, &src));
        problems.extend(check_helpers(&rel, &src));
    }
    assert!(
        exports > 80,
        "only {exports} exports found: is the scan looking at src/?"
    );
    assert!(problems.is_empty(), "boundary violations:\n{}", problems.join("\n"));
}

/// The checks themselves catch what they claim to (so the test above can fail).
#[test]
fn the_checks_catch_bypasses() {
    let bypass = "#[no_mangle]\npub unsafe extern \"C\" fn mcp_x(p: *const u8) -> bool {\n    p.is_null()\n}\n";
    assert_eq!(check_exports("src/ffi/x.rs", bypass).len(), 1);
    let wrapped = "#[no_mangle]\npub extern \"C\" fn mcp_x(\n    a: i32,\n) -> i32 {\n    ffi_boundary!({ a })\n}\n";
    assert!(check_exports("src/ffi/x.rs", wrapped).is_empty());
    let callback = "pub type f = Option<unsafe extern \"C\" fn(userdata: *mut c_void)>;\n";
    assert!(check_exports("src/ffi/x.rs", callback).is_empty());
    let private = "extern \"C\" fn on_event() {\n    COUNT.fetch_add(1, SeqCst);\n}\n";
    assert_eq!(check_exports("src/ffi/x.rs", private).len(), 1);
    let stray = "#[no_mangle]\npub static MCP_X: i32 = 1;\n";
    assert_eq!(check_exports("src/ffi/x.rs", stray).len(), 1);
    let raw = "fn f(p: *mut T) { drop(unsafe { Box::from_raw(p) }); }\n";
    assert_eq!(check_helpers("src/ffi/x.rs", raw).len(), 2); // Box::from_raw and the unsafe block
    let host = "    // SAFETY: host callback, arguments borrowed.\n    unsafe { f(ud) };\n";
    assert!(check_helpers("src/ffi/x.rs", host).is_empty());
    assert!(check_helpers("src/ffi/boundary.rs", raw).is_empty());
}

/// Every function returning a status is declared `MCP_WARN_UNUSED_RESULT` (`#[must_use]` on the
/// export), so a C host that drops a failure gets a compiler warning.
#[test]
fn every_status_returning_export_warns_when_its_result_is_dropped() {
    let header = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/mcp_client.h")).unwrap();
    let mut missing = Vec::new();
    let mut previous = "";
    let mut before = "";
    for line in header.lines() {
        if let Some(rest) = line.strip_prefix("mcp_status ") {
            let name = rest.split('(').next().unwrap_or(rest);
            if rest.contains('(') && previous != "MCP_WARN_UNUSED_RESULT" && before != "MCP_WARN_UNUSED_RESULT" {
                missing.push(name.to_string());
            }
        }
        before = previous;
        previous = line.trim();
    }
    assert!(missing.is_empty(), "add #[must_use] to: {missing:?}");
}
