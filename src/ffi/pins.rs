//! Tool pinning (the `tool_pinning` configuration key): the hook told of each change (and
//! deciding it under policy `ask`), and the pins listed, approved and forgotten.

use super::boundary::{ffi_boundary, out};
use super::client::{act, mcp_client, on_client};
use super::error::mcp_error;
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::status::mcp_status;
use super::strings::{arg_str, give_json, opt_str, to_c};
use crate::base::BoxFuture;
use crate::error::Error;
use crate::pin::{PinEvent, PinHook};
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A tool pin hook: `event_json` is `{"type": "tool_pin", "server", "tool", "change": "new" |
/// "changed" | "removed", "policy", "old", "new", "diff"}`, borrowed for the callback's duration.
/// Under policy `ask` the answer approves (`true`: the new definition is pinned) or withholds
/// (`false`) the tool; under `warn` and `block` it is ignored. Runs on the dispatcher thread, in
/// order; the listing that saw the change waits for it (at most the request timeout, then
/// `false`).
pub type mcp_tool_pin_fn = Option<unsafe extern "C" fn(userdata: *mut c_void, event_json: *const c_char) -> bool>;

/// Sets (NULL: removes) the tool pin hook. `userdata_free` runs exactly once. A client whose
/// configuration has no `tool_pinning` (or policy `off`) keeps no hook and returns
/// `MCP_UNSUPPORTED`. Any thread.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_tool_pin(
    client: *mut mcp_client,
    hook: mcp_tool_pin_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            fc.client.tool_pinning_on()?;
            let hook = hook.map(|f| {
                let dispatcher = fc.dispatcher.clone();
                Arc::new(move |event: PinEvent| {
                    let (answer, answered) = tokio::sync::oneshot::channel();
                    let (ud, text) = (userdata.clone(), to_c(event.to_json().to_string()));
                    dispatcher.post(Box::new(move || {
                        // SAFETY: host callback; `text` borrowed for its duration.
                        let approve = unsafe { f(ud.ptr(), text.as_ptr()) };
                        let _ = answer.send(approve);
                    }));
                    Box::pin(async move { answered.await.unwrap_or(false) }) as crate::BoxFuture<'static, bool>
                }) as PinHook
            });
            fc.client.on_tool_pin(hook);
            Ok(())
        })
    })
}

/// The pins of the client's server: `{"server", "policy", "tools": [{"name", "digest",
/// "definition", "state", "pending"?}]}` with `state` one of `pinned`, `changed`, `withheld`,
/// `removed`, `new`; `pending` the listed definition waiting for approval. Reads the store (no
/// server request). `MCP_UNSUPPORTED` without `tool_pinning`. Caller frees `*pins_json_out` with
/// `mcp_string_free`. Not from a callback (`MCP_REENTRANT_CALL`).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_tool_pins(
    client: *mut mcp_client,
    pins_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            out(pins_json_out, "pins_json_out")?;
            // Boxed, as approve and forget are: one dyn future type for `block_on`'s paths.
            let pins = fc.block_on(Box::pin(fc.client.tool_pins()) as BoxFuture<'_, Result<Value, Error>>)?;
            give_json(pins_json_out, &pins);
            Ok(())
        })
    })
}

/// Approves the last listed definition of `tool` (changed or new): it is pinned (in the store),
/// listed and callable again. `MCP_INVALID_ARG` when no definition of `tool` waits;
/// `MCP_UNSUPPORTED` without `tool_pinning`. Not from a callback (`MCP_REENTRANT_CALL`).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_approve_tool_pin(
    client: *mut mcp_client,
    tool: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, std::ptr::null(), |c, _| {
            let tool = arg_str(tool, "tool")?;
            Ok(Box::pin(c.approve_tool_pin(tool)) as BoxFuture<'_, Result<(), Error>>)
        })
    })
}

/// Forgets the pin of `tool` (pinned afresh when next listed), or with `tool` NULL every pin of
/// the client's server (the next listing is pinned as a first use). `MCP_UNSUPPORTED` without
/// `tool_pinning`. Not from a callback (`MCP_REENTRANT_CALL`).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_forget_tool_pin(
    client: *mut mcp_client,
    tool: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, std::ptr::null(), |c, _| {
            let tool = opt_str(tool, "tool")?;
            Ok(Box::pin(c.forget_tool_pin(tool)) as BoxFuture<'_, Result<(), Error>>)
        })
    })
}
