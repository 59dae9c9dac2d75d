//! Response caching (SEP-2549) in the C ABI: the per-call modes for `mcp_call_opts.cache_mode`
//! and the client's cache controls; the configuration switches of both features
//! (response caching, output schema validation). The cache itself is `crate::client`'s (`cache.rs`).
//! Also the era cache's clear (what `auto` learnt per HTTP origin).

use super::boundary::ffi_boundary;
use super::client::{mcp_client, on_client};
use super::config::{mcp_config, set};
use super::error::{mcp_error, Failure};
use super::status::mcp_status;
use super::strings::arg_str;
use crate::client::CacheMode;
use serde_json::json;
use std::ffi::c_char;

/// `mcp_call_opts.cache_mode`: answer from a fresh cache entry when there is one (default).
pub const MCP_CACHE_USE: u32 = 0;
/// `mcp_call_opts.cache_mode`: always ask the server, then store its answer.
pub const MCP_CACHE_REFRESH: u32 = 1;
/// `mcp_call_opts.cache_mode`: always ask the server and store nothing.
pub const MCP_CACHE_BYPASS: u32 = 2;

/// The core mode for a C `cache_mode` value.
pub(crate) fn mode(value: u32) -> Result<CacheMode, Failure> {
    match value {
        MCP_CACHE_USE => Ok(CacheMode::Use),
        MCP_CACHE_REFRESH => Ok(CacheMode::Refresh),
        MCP_CACHE_BYPASS => Ok(CacheMode::Bypass),
        other => Err(Failure::invalid(format!(
            "cache_mode {other} is not MCP_CACHE_USE, MCP_CACHE_REFRESH or MCP_CACHE_BYPASS"
        ))),
    }
}

/// Sets the authorization context the response cache files `private` entries under (the
/// host's name for the current principal, e.g. issuer plus subject; "" at creation). A new
/// value drops the previous context's private entries; `public` entries stay shared. Any
/// thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_set_cache_partition(
    client: *mut mcp_client,
    partition: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            fc.client.set_cache_partition(arg_str(partition, "partition")?);
            Ok(())
        })
    })
}

/// Empties the client's response cache. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_clear_cache(client: *mut mcp_client, err_out: *mut *mut mcp_error) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            fc.client.clear_cache();
            Ok(())
        })
    })
}

/// Response caching (SEP-2549) for the whole client (default on, at most 512 entries): fresh
/// results of `server/discover`, the list calls and `resources/read` are served without a round
/// trip while `now < received + ttlMs` (capped at 24 h); list_changed and resources/updated
/// notifications invalidate. `enabled` false, or `max_entries` 0, turns it off.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_response_cache(
    config: *mut mcp_config,
    enabled: bool,
    max_entries: u32,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        set(config, "response_cache", || Ok(json!(enabled)))?;
        set(config, "response_cache_max_entries", || Ok(json!(max_entries)))
    })
}

/// Output schema validation for the whole client (default on): a tool result whose
/// `structuredContent` does not match the tool's `outputSchema` fails with
/// `MCP_OUTPUT_SCHEMA_INVALID`. Per call: `mcp_call_opts.skip_output_validation`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_validate_output_schema(
    config: *mut mcp_config,
    enabled: bool,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        set(config, "validate_output_schema", || Ok(json!(enabled)))
    })
}

/// Forgets the eras `auto` detected per HTTP origin in the cache this client uses (by default
/// the process's, shared by every client), so the next connect to such an origin probes
/// `server/discover` again. A connect whose cached era the server refuses (a server upgraded in
/// place) detects again by itself; clearing spares it that refused `initialize`, and lets a
/// server that still accepts the old era be probed for a newer one. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_clear_era_cache(
    client: *mut mcp_client,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            fc.client.era_cache().clear();
            Ok(())
        })
    })
}
