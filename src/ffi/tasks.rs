//! The tasks extension (SEP-2663) in the C ABI: a status listener, resume by id, and the three
//! `tasks/*` requests. Following a task is `mcp_client_call_tool` itself, blocking or started
//! (with `"tasks": true` in the configuration); the polling lives in `crate::client::tasks`.

use super::boundary::ffi_boundary;
use super::client::{act, call, mcp_client, on_client};
use super::error::mcp_error;
use super::error::Failure;
use super::handlers::{mcp_userdata_free_fn, Userdata};
use super::opts::mcp_call_opts;
use super::status::mcp_status;
use super::strings::{arg_str, opt_json_object, to_c};
use crate::client::{Reply, TaskStatusFn};
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// A task status listener: `task_json` (borrowed, `task_len` bytes) is the task object —
/// `taskId`, `status` (`working`, `input_required`, `completed`, `failed`, `cancelled`),
/// `statusMessage`, `pollIntervalMs`, `ttlMs`, `createdAt`, ... — on creation and on every
/// change of status or status message. Persist `taskId` to resume the task in a new process.
pub type mcp_task_status_fn =
    Option<unsafe extern "C" fn(userdata: *mut c_void, task_json: *const c_char, task_len: usize)>;

/// Declares the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on every modern
/// request (default false; JSON key `tasks`). Servers may then answer `mcp_client_call_tool`
/// with a task, which the call follows to its end: it polls `tasks/get` at the task's
/// `pollIntervalMs`, answers `input_required` states with the registered handlers (each input
/// key once, through `tasks/update`), returns the `completed` task's result, and sends
/// `tasks/cancel` when the call's cancel token fires. The call's timeout (`timeout_ms` in its
/// options, else `request_timeout_ms`) bounds the wait for the task: when it passes the call
/// fails with `MCP_TIMEOUT` and `tasks/cancel` is sent; a task expected to run longer needs a
/// longer timeout (or `MCP_TIMEOUT_NONE` with `max_total_ms`), or `reset_timeout_on_progress`.
/// A call ended by its `max_total_ms` leaves the task running: resume it with
/// `mcp_client_resume_task`. Either way nothing polls after the call returns.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_config_set_tasks(
    config: *mut super::config::mcp_config,
    enabled: bool,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        super::config::set(config, "tasks", || Ok(serde_json::json!(enabled)))
    })
}

/// Sets (NULL: removes) the client's task status listener, called on the dispatcher thread for
/// every task any call follows. `userdata_free` runs exactly once.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_on_task_status(
    client: *mut mcp_client,
    listener: mcp_task_status_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            let listener = listener.map(|f| {
                let dispatcher = fc.dispatcher.clone();
                Arc::new(move |task: &Value| {
                    let (ud, text) = (userdata.clone(), to_c(task.to_string()));
                    // Status changes are few and each matters: never dropped like listener traffic.
                    dispatcher.post(Box::new(move || {
                        // SAFETY: host callback; `text` borrowed for its duration.
                        unsafe { f(ud.ptr(), text.as_ptr(), text.as_bytes().len()) }
                    }));
                }) as TaskStatusFn
            });
            fc.client.on_task_status(listener);
            Ok(())
        })
    })
}

/// Follows the task `task_id` (from a status listener, possibly of another process) to its end
/// as a blocking `mcp_client_call_tool` would: input requests go to the registered handlers,
/// cancelling `opts`'s token sends `tasks/cancel`, and the timeout bounds the wait from this
/// call's start as it bounds a task call's (`MCP_TIMEOUT`, `tasks/cancel` sent). Result: the
/// tool's `CallToolResult` JSON.
/// A `failed` task is `MCP_JSONRPC_ERROR` with its error; a `cancelled` one `MCP_CANCELLED`;
/// an unknown or expired id `MCP_JSONRPC_ERROR` -32602. `MCP_INVALID_ARG` without `"tasks":
/// true` in the configuration, `MCP_UNSUPPORTED` on a legacy connection.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_resume_task(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?;
            Ok(async move { c.resume_task_reply(id, &ro).await })
        })
    })
}

/// One `tasks/get`: the task as the server has it now (JSON). Errors as `mcp_client_resume_task`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_get_task(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        call(client, opts, result_json_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?;
            Ok(async move { c.get_task(id, &ro).await.map(Reply::from) })
        })
    })
}

/// `tasks/cancel` (cooperative: the task ends as `cancelled` when the server gets to it).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_cancel_task(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| {
            let id = arg_str(task_id, "task_id")?;
            Ok(async move { c.cancel_task(id, &ro).await })
        })
    })
}

/// `tasks/update` with `input_responses_json` (an object, key → answer) the host gathered
/// itself after `MCP_INPUT_REQUIRED` from a followed task; then resume the task.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_client_update_task(
    client: *mut mcp_client,
    task_id: *const c_char,
    input_responses_json: *const c_char,
    opts: *const mcp_call_opts,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        act(client, opts, |c, ro| {
            let id = arg_str(task_id, "task_id")?;
            let responses = opt_json_object(input_responses_json, "input_responses_json")?
                .ok_or_else(|| Failure::null("input_responses_json"))?;
            Ok(async move { c.update_task(id, responses, &ro).await })
        })
    })
}
