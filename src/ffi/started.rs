//! Started forms of the tasks and skills calls, of `subscriptions/listen` and of the legacy
//! subscription requests: each is its blocking function's arguments plus the started-call
//! tail (`done`, `userdata`, `call_out`), run through `ffi/call`'s `start_on` (exactly once,
//! on the delivery path; see that module).

use super::boundary::{ffi_boundary, handle, into_handle, out, take_handle};
use super::call::{mcp_call, mcp_call_done_fn, start, start_on, Started};
use super::client::{mcp_client, on_client, shared};
use super::error::{mcp_error, Failure};
use super::opts::mcp_call_opts;
use super::status::mcp_status;
use super::strings::{arg_str, opt_json_object, opt_str};
use super::subscription::{mcp_subscription, Stream};
use crate::client::{Client, Reply, RequestOptions};
use crate::error::Error;
use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::future::Future;

/// A call whose blocking form returns nothing: its completion carries `{}`.
fn empty(fut: impl Future<Output = Result<(), Error>> + Send + 'static) -> Started<Vec<u8>> {
    Box::pin(async move { fut.await.map(|()| b"{}".to_vec()) })
}

/// `start_on` for a call completing with `{}` on success.
fn start_empty(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    make: impl FnOnce(Client, RequestOptions) -> Result<Started<Vec<u8>>, Failure>,
) -> Result<(), Failure> {
    on_client(client, |fc| start_on(fc, opts, done, userdata, call_out, make))
}

fn owned_value(fut: impl Future<Output = Result<Value, Error>> + Send + 'static) -> Started<Reply> {
    Box::pin(async move { fut.await.map(Reply::from) })
}

/// Started `mcp_client_resume_task`: completes as that call returns (the tool's
/// `CallToolResult` JSON, or its failure). Input requests go to the registered handlers, whose
/// callbacks run on the delivery path; `mcp_call_cancel` (or `opts`'s token) sends
/// `tasks/cancel`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_resume_task_start(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?.to_string();
            Ok(Box::pin(async move { c.resume_task_reply(&id, &ro).await }))
        })
    })
}

/// Started `mcp_client_get_task`: completes with the task JSON.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_get_task_start(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?.to_string();
            Ok(owned_value(async move { c.get_task(&id, &ro).await }))
        })
    })
}

/// Started `mcp_client_cancel_task`: completes with `{}` once the server accepted `tasks/cancel`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_cancel_task_start(
    client: *mut mcp_client,
    task_id: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_empty(client, opts, done, userdata, call_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?.to_string();
            Ok(empty(async move { c.cancel_task(&id, &ro).await }))
        })
    })
}

/// Started `mcp_client_update_task`: completes with `{}` once the server accepted `tasks/update`.
/// `input_responses_json` is checked now (`MCP_NULL_ARG`, `MCP_INVALID_ARG`: `done` never runs).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_update_task_start(
    client: *mut mcp_client,
    task_id: *const c_char,
    input_responses_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_empty(client, opts, done, userdata, call_out, |c, ro| {
            let id = arg_str(task_id, "task_id")?.to_string();
            let responses = opt_json_object(input_responses_json, "input_responses_json")?
                .ok_or_else(|| Failure::null("input_responses_json"))?;
            Ok(empty(async move { c.update_task(&id, responses, &ro).await }))
        })
    })
}

/// Started `mcp_client_list_skills`: completes with `{"skills": [...], "rejected": [...]}`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_list_skills_start(
    client: *mut mcp_client,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            Ok(owned_value(async move { c.list_skills(&ro).await }))
        })
    })
}

/// Started `mcp_client_get_skill`: completes with the checked entry JSON.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_get_skill_start(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let uri = arg_str(uri, "uri")?.to_string();
            Ok(owned_value(async move { c.get_skill(&uri, &ro).await }))
        })
    })
}

/// Started `mcp_client_read_skill_file`: completes with the verified content item JSON, or
/// `MCP_SKILL_VERIFICATION_FAILED`. `entry_json` is checked and copied now.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_read_skill_file_start(
    client: *mut mcp_client,
    entry_json: *const c_char,
    file_uri: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start(client, opts, done, userdata, call_out, |c, ro| {
            let entry = opt_json_object(entry_json, "entry_json")?.ok_or_else(|| Failure::null("entry_json"))?;
            let file_uri = opt_str(file_uri, "file_uri")?.map(str::to_string);
            Ok(owned_value(async move {
                c.read_skill_file(&entry, file_uri.as_deref(), &ro).await
            }))
        })
    })
}

/// Started `mcp_client_subscribe_resource` (legacy): completes with `{}`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_subscribe_resource_start(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_empty(client, opts, done, userdata, call_out, |c, ro| {
            let uri = arg_str(uri, "uri")?.to_string();
            Ok(empty(async move { c.subscribe_resource(&uri, &ro).await }))
        })
    })
}

/// Started `mcp_client_unsubscribe_resource` (legacy): completes with `{}`.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_unsubscribe_resource_start(
    client: *mut mcp_client,
    uri: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_empty(client, opts, done, userdata, call_out, |c, ro| {
            let uri = arg_str(uri, "uri")?.to_string();
            Ok(empty(async move { c.unsubscribe_resource(&uri, &ro).await }))
        })
    })
}

/// Started `mcp_client_notify_roots_changed`: completes with `{}` once the notification is sent
/// (at once on modern servers).
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_notify_roots_changed_start(
    client: *mut mcp_client,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        start_empty(client, std::ptr::null(), done, userdata, call_out, |c, _| {
            Ok(empty(async move { c.notify_roots_changed().await }))
        })
    })
}

/// Started `mcp_client_listen`. On `MCP_OK`, `*subscription_out` is a new subscription owned by
/// the caller (free it with `mcp_subscription_free`, from any thread, before or after the
/// completion; it is written before the completion can run), and the call completes with the acknowledged filter JSON once the server
/// acknowledged, or with the listen's failure. Read events (`mcp_subscription_next_start`,
/// `mcp_subscription_next`) only after an `MCP_OK` completion: before it they fail with
/// `MCP_INVALID_ARG`, and after a failed one the subscription has nothing to read (free it).
/// Freeing or cancelling the subscription before the acknowledgement gives the listen up (its
/// completion still runs, as `mcp_call_cancel` would make it); so does freeing the call.
#[must_use]
#[no_mangle]
pub extern "C" fn mcp_client_listen_start(
    client: *mut mcp_client,
    filter_json: *const c_char,
    opts: *const mcp_call_opts,
    done: mcp_call_done_fn,
    userdata: *mut c_void,
    subscription_out: *mut *mut mcp_subscription,
    call_out: *mut *mut mcp_call,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        on_client(client, |fc| {
            let subscription_out = out(subscription_out, "subscription_out")?;
            let owner = shared(handle(client, "client")?);
            let before = *subscription_out;
            let mut made = None;
            let started = start_on(fc, opts, done, userdata, call_out, |c, ro| {
                let filter =
                    opt_json_object(filter_json, "filter_json")?.ok_or_else(|| Failure::null("filter_json"))?;
                let stream = Stream::default();
                let sub = into_handle(mcp_subscription::new(owner, stream.clone(), ro.cancel.clone()));
                // Written before the call's task exists, so no completion runs ahead of it.
                *subscription_out = sub;
                made = Some(sub);
                Ok(Box::pin(async move {
                    let subscription = c.listen(filter, &ro).await?;
                    let acknowledged = serde_json::to_vec(subscription.acknowledged()).unwrap_or_default();
                    stream.set(subscription);
                    Ok(acknowledged)
                }) as Started<Vec<u8>>)
            });
            if started.is_err() {
                // Refused after the handle was written: outputs are untouched on failure.
                *subscription_out = before;
                drop(made.and_then(take_handle));
            }
            started
        })
    })
}
