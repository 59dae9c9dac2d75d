//! MCP Apps (`crate::apps`) in the C ABI: a tool's UI link, and the verified read of an app's
//! view (blocking and started).

use super::boundary::{ffi_boundary, out};
use super::call::{mcp_call, mcp_call_done_fn, start, Started};
use super::client::{call, mcp_client};
use super::error::{mcp_error, Failure};
use super::opts::mcp_call_opts;
use super::status::{mcp_status, MCP_INVALID_JSON};
use super::strings::{arg_str, give_json};
use crate::apps::{read_app, tool_ui, DEFAULT_MAX_APP_BYTES};
use crate::client::Reply;
use serde_json::Value;
use std::ffi::{c_char, c_void};

fn bound(max_bytes: usize) -> usize {
    match max_bytes {
        0 => DEFAULT_MAX_APP_BYTES,
        n => n,
    }
}

/// The UI link of one tool (`tool_json`: a tool object from a `tools/list` result) under the
/// MCP Apps extension (SEP-1865): `{"resourceUri": "ui://...", "visibility": ["model", "app"],
/// "model": true, "app": true}`, or `null` when the tool has none. The nested
/// `_meta.ui.resourceUri` wins over the deprecated flat `_meta["ui/resourceUri"]`; a link that
/// is not `ui://` counts as none. `visibility` defaults to both; a tool whose visibility leaves
/// out "model" is app-only, and `mcp_export_tools` (and so a hub's export) leaves it out of
/// what the model sees. Pure: any thread. Free the output with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_tool_ui(
    tool_json: *const c_char,
    ui_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(ui_json_out, "ui_json_out")?;
        let tool: Value = serde_json::from_str(arg_str(tool_json, "tool_json")?)
            .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("tool_json is not valid JSON: {e}")))?;
        give_json(ui_json_out, &tool_ui(&tool).map_or(Value::Null, |ui| ui.to_json()));
        Ok(())
    })
}

/// Reads an app's view (`uri`, a `ui://` resource named by a tool's UI link) with
/// `resources/read` and verifies it before returning it: the answer's entry for `uri` has the
/// MIME type `text/html;profile=mcp-app` and its HTML as `text` or base64 `blob` (UTF-8), at
/// most `max_bytes` long (0: 4 MiB). Result: `{"uri", "html", "meta"}`, `meta` the entry's
/// `_meta.ui` (CSP domains, permissions, domain, border preference; `null` without one) for the
/// host's sandbox. `MCP_INVALID_ARG` for a URI that is not `ui://` (nothing is sent),
/// `MCP_MESSAGE_TOO_LARGE` over the bound, `MCP_PROTOCOL_VIOLATION` for any other failed check;
/// nothing unverified is returned. Declare the extension with `"apps": true` in the
/// configuration (the host renders the views). Any thread; not from a callback. Free the result
/// with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_read_app(
    client: *mut mcp_client,
    uri: *const c_char,
    max_bytes: usize,
    opts: *const mcp_call_opts,
    app_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, app_json_out, |c, ro| {
            let uri = arg_str(uri, "uri")?;
            Ok(async move {
                read_app(c, uri, bound(max_bytes), &ro)
                    .await
                    .map(|app| Reply::from(app.to_json()))
            })
        })
    })
}

/// Started `mcp_client_read_app`: completes with the verified `{"uri", "html", "meta"}`, or
/// its failure. `uri` is copied now.
#[no_mangle]
#[must_use]
pub extern "C" fn mcp_client_read_app_start(
    client: *mut mcp_client,
    uri: *const c_char,
    max_bytes: usize,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let uri = arg_str(uri, "uri")?.to_string();
            let fut: Started<Reply> = Box::pin(async move {
                read_app(&c, &uri, bound(max_bytes), &ro)
                    .await
                    .map(|app| Reply::from(app.to_json()))
            });
            Ok(fut)
        })
    })
}
