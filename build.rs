//! Generates the C header with cbindgen. In a git checkout the committed
//! `include/mcp_client.h` is rewritten when it differs, so `git diff` shows any ABI drift.

use std::path::{Path, PathBuf};

fn main() {
    // cbindgen reads the C ABI only (src/ffi), so nothing of the crate's internals reaches C hosts.
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let ffi_sources = ffi_sources(&dir.join("src/ffi"));
    for input in ["src/ffi", "cbindgen.toml", "build.rs", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={input}");
    }
    for file in &ffi_sources {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let target_cfg = |key: &str| std::env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default();
    if target_cfg("OS") == "linux" {
        // What a dynamically linked host records as its dependency: a 0.x release breaks the ABI
        // with each minor version (cargo-c's rule), later ones with each major.
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcp_client.so.{}",
            soversion()
        );
    } else if target_cfg("VENDOR") == "apple" {
        // A host finds the library through its own run paths (an app bundle's Frameworks folder,
        // `-rpath` at link time), never at the path it was built at.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libmcp_client.dylib");
    }
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(format!(
        "\n#define MCP_VERSION_MAJOR {}\n#define MCP_VERSION_MINOR {}\n#define MCP_VERSION_PATCH {}\n\
         /** `resultType` values, for hosts that inspect raw results. */\n\
         #define MCP_RESULT_TYPE_COMPLETE \"complete\"\n\
         #define MCP_RESULT_TYPE_INPUT_REQUIRED \"input_required\"\n",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    ));
    // `with_src` on the module root follows its `mod` declarations: the C ABI and nothing else.
    let builder = cbindgen::Builder::new().with_src(dir.join("src/ffi/mod.rs"));
    let bindings = match builder.with_config(config).generate() {
        Ok(b) => b,
        Err(e) => panic!("cbindgen failed: {e}"),
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("mcp_client.h");
    bindings.write_to_file(&out);
    if dir.join(".git").exists() {
        bindings.write_to_file(dir.join("include/mcp_client.h"));
    }
}

/// The C ABI's source files, each a reason to regenerate the header.
fn ffi_sources(ffi_dir: &Path) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(ffi_dir)
        .expect("src/ffi")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files
}

/// `0.<minor>` before 1.0, then `<major>`; the Makefile derives the same for its symlinks.
fn soversion() -> String {
    match env!("CARGO_PKG_VERSION_MAJOR") {
        "0" => format!("0.{}", env!("CARGO_PKG_VERSION_MINOR")),
        major => major.to_string(),
    }
}
