//! Library and ABI versions.

use super::boundary::ffi_boundary;
use std::ffi::c_char;

/// Bumped on any ABI break; bindings compare it with `MCP_ABI_VERSION` at load.
pub const MCP_ABI_VERSION: u32 = 2;

/// `"mcp_client/<semver>"`: static, never freed.
#[no_mangle]
pub extern "C" fn mcp_version() -> *const c_char {
    ffi_boundary!({ concat!("mcp_client/", env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast() })
}

/// The ABI version this library implements (compare with the header's `MCP_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn mcp_abi_version() -> u32 {
    ffi_boundary!({ MCP_ABI_VERSION })
}
