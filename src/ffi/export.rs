//! Tools for the model (`crate::export`) over JSON text: export a tool list to a model API's
//! format, find the model's tool calls, turn a result into the API's tool-result message, and
//! dispatch a call on a client or a hub (blocking or started).

use super::boundary::{ffi_boundary, out};
use super::call::{mcp_call, mcp_call_done_fn, start, Started};
use super::client::{call, mcp_client};
use super::error::{mcp_error, Failure};
use super::hub::{mcp_hub, routed, start_on_hub};
use super::opts::mcp_call_opts;
use super::status::{mcp_status, MCP_INVALID_JSON};
use super::strings::{arg_str, give_json, opt_str};
use crate::client::Reply;
use crate::export::{export_tools, find_calls, Dispatcher, ExportOptions, Exported, Origin, ResultOptions, ToolCall};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{c_char, c_void};

fn json_arg(ptr: *const c_char, name: &str) -> Result<Value, Failure> {
    serde_json::from_str(arg_str(ptr, name)?)
        .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("{name} is not valid JSON: {e}")))
}

/// Options JSON (NULL or "" → defaults); unknown keys are refused with their name.
fn options<T: DeserializeOwned + Default>(ptr: *const c_char, name: &str) -> Result<T, Failure> {
    match opt_str(ptr, name)?.filter(|s| !s.trim().is_empty()) {
        None => Ok(T::default()),
        Some(text) => serde_json::from_str(text).map_err(|e| Failure::invalid(format!("{name}: {e}"))),
    }
}

fn exported(ptr: *const c_char) -> Result<Exported, Failure> {
    Exported::from_value(&json_arg(ptr, "exported_json")?).map_err(Failure::invalid)
}

fn one_call(exported: &Exported, ptr: *const c_char) -> Result<ToolCall, Failure> {
    ToolCall::parse(exported.format, &json_arg(ptr, "call_json")?).map_err(Failure::invalid)
}

/// The dispatcher, the call and the result options of a dispatch's arguments.
fn prepared(
    exported_json: *const c_char,
    call_json: *const c_char,
    options_json: *const c_char,
) -> Result<(Dispatcher, ToolCall, ResultOptions), Failure> {
    let exported = exported(exported_json)?;
    let tool_call = one_call(&exported, call_json)?;
    let result_opts: ResultOptions = options(options_json, "options_json")?;
    Ok((Dispatcher::new(exported), tool_call, result_opts))
}

/// Exports a tool list (`tools_json`: a `tools/list` result or its `tools` array, or a hub's
/// merged list from `mcp_hub_list`) to a model API's format. `options_json` (may be NULL): `{"format": "openai-chat" | "openai-responses" |
/// "anthropic" | "gemini", "strict", "gemini_legacy_parameters", "describe_title",
/// "describe_annotations", "max_ref_depth"}`. `origins_json` (may be NULL): `{listed name:
/// {"server", "tool"}}`; without an entry, a tool of a hub's merged list goes to the member and
/// own name its `_meta` holds (`"mcp-client/server"`, `"mcp-client/name"`). Output: `{"format", "tools", "routes",
/// "report"}`: `tools` goes to the API, the whole document to the other `mcp_export_*` calls.
/// A tool whose schema the format cannot take is left out and `report` says why. Pure: any
/// thread. Free the output with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_export_tools(
    tools_json: *const c_char,
    options_json: *const c_char,
    origins_json: *const c_char,
    exported_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(exported_json_out, "exported_json_out")?;
        let tools = json_arg(tools_json, "tools_json")?;
        let opts: ExportOptions = options(options_json, "options_json")?;
        let mut origins = crate::hub::origins(&tools);
        if let Some(text) = opt_str(origins_json, "origins_json")? {
            let given: HashMap<String, Origin> =
                serde_json::from_str(text).map_err(|e| Failure::invalid(format!("origins_json: {e}")))?;
            origins.extend(given);
        }
        let done = export_tools(&tools, Some(&origins), &opts).map_err(Failure::invalid)?;
        give_json(exported_json_out, &done.to_value());
        Ok(())
    })
}

/// The tool calls in a model's reply (`reply_json`: a message, a response, a list of blocks or
/// one call, in the export's format), as a JSON array of the call objects as the API shaped
/// them; each goes to `mcp_client_export_dispatch` or `mcp_export_result`. Pure: any thread.
/// Free the output with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_export_calls(
    exported_json: *const c_char,
    reply_json: *const c_char,
    calls_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(calls_json_out, "calls_json_out")?;
        let exported = exported(exported_json)?;
        let reply = json_arg(reply_json, "reply_json")?;
        let calls: Vec<Value> = find_calls(exported.format, &reply).into_iter().cloned().collect();
        give_json(calls_json_out, &Value::Array(calls));
        Ok(())
    })
}

/// The API's tool-result message answering `call_json` (one call in the export's format) with
/// `result_json`, a `CallToolResult` the host got itself. `options_json` (may be NULL):
/// `{"max_chars", "resources_as_text", "images"}`. Pure: any thread. Free the output with
/// `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_export_result(
    exported_json: *const c_char,
    call_json: *const c_char,
    result_json: *const c_char,
    options_json: *const c_char,
    message_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(message_json_out, "message_json_out")?;
        let exported = exported(exported_json)?;
        let call = one_call(&exported, call_json)?;
        let result = json_arg(result_json, "result_json")?;
        let opts: ResultOptions = options(options_json, "options_json")?;
        let message = Dispatcher::new(exported).result_message(&call, &result, &opts);
        give_json(message_json_out, &message);
        Ok(())
    })
}

/// Makes one model tool call on `client`: `call_json` (one call in the export's format) is
/// mapped back to its tool, its arguments are checked against the tool's original input
/// schema, the tool is called, and the result comes back as the API's tool-result message
/// (Chat `role: "tool"` message, Responses `function_call_output`, Anthropic `tool_result`
/// block, Gemini `functionResponse` part). A call that does not fit, a tool error, a protocol
/// error or a timeout is a message the model reads (`MCP_OK`), unless `options_json` says
/// `"errors_as_results": false`, when protocol errors and timeouts fail the call as
/// `mcp_client_call_tool` would. `options_json` (may be NULL): `{"max_chars",
/// "resources_as_text", "images", "errors_as_results", "timeout_ms"}`. Blocks the calling
/// thread like `mcp_client_call_tool` (same threads, same `opts`). Free the output with
/// `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_export_dispatch(
    client: *mut mcp_client,
    exported_json: *const c_char,
    call_json: *const c_char,
    options_json: *const c_char,
    opts: *const mcp_call_opts,
    message_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, message_json_out, |c, ro| {
            let (dispatcher, tool_call, result_opts) = prepared(exported_json, call_json, options_json)?;
            Ok(async move {
                dispatcher
                    .dispatch(c, &tool_call, &result_opts, &ro)
                    .await
                    .map(Reply::from)
            })
        })
    })
}

/// Started `mcp_client_export_dispatch` (same arguments, copied now): completes once through
/// `done` with the message JSON, like `mcp_client_call_tool_start`.
#[no_mangle]
#[must_use]
pub extern "C" fn mcp_client_export_dispatch_start(
    client: *mut mcp_client,
    exported_json: *const c_char,
    call_json: *const c_char,
    options_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let (dispatcher, tool_call, result_opts) = prepared(exported_json, call_json, options_json)?;
            let fut: Started<Reply> = Box::pin(async move {
                dispatcher
                    .dispatch(&c, &tool_call, &result_opts, &ro)
                    .await
                    .map(Reply::from)
            });
            Ok(fut)
        })
    })
}

/// `mcp_client_export_dispatch` on a hub: the call goes to the member the export's route names
/// (for a hub's list, the tool's member and its own name there), with that member's state,
/// lazy start, call cap and tool filter applied; a member the hub no longer has or a tool its
/// filter withholds is a message the model reads, as is a name the export does not have.
/// Same arguments, options and outcomes as `mcp_client_export_dispatch`. Blocks like
/// `mcp_hub_call_tool`: any thread, not from a callback. Free the output with
/// `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_hub_export_dispatch(
    hub: *mut mcp_hub,
    exported_json: *const c_char,
    call_json: *const c_char,
    options_json: *const c_char,
    opts: *const mcp_call_opts,
    message_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        routed(hub, opts, message_json_out, |hub, ro| {
            let (dispatcher, tool_call, result_opts) = prepared(exported_json, call_json, options_json)?;
            Ok(async move { dispatcher.dispatch(hub, &tool_call, &result_opts, &ro).await })
        })
    })
}

/// Started `mcp_hub_export_dispatch` (same arguments, copied now): completes once through
/// `done` with the message JSON, on the shared dispatcher thread, like
/// `mcp_hub_call_tool_start`. Any thread, callbacks included.
#[no_mangle]
#[must_use]
pub extern "C" fn mcp_hub_export_dispatch_start(
    hub: *mut mcp_hub,
    exported_json: *const c_char,
    call_json: *const c_char,
    options_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_on_hub(hub, opts, done, userdata, call_out, None, |hub, ro| {
            let (dispatcher, tool_call, result_opts) = prepared(exported_json, call_json, options_json)?;
            Ok(Box::pin(async move {
                dispatcher.dispatch(&hub, &tool_call, &result_opts, &ro).await
            }))
        })
    })
}
