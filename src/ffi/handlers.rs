//! Host callbacks: input handlers (elicitation, sampling, roots) answered through responders,
//! and listeners for notifications and log lines. All run on the client's dispatcher thread.

use super::boundary::{ffi_boundary, handle_opt, into_handle, take_handle, Handle};
use super::client::{on_client, FfiClient};
use super::dispatcher::Dispatcher;
use super::error::{mcp_error, Failure};
use super::responder::ResponderState;
use super::status::{mcp_status, MCP_INVALID_JSON};
use super::strings::{arg_str, opt_str, to_c};
use crate::client::{HandlerError, InputHandler, InputKind, InputRequest, LogLine, NotificationFn};
use crate::protocol::codes;
use crate::transport::BoxFuture;
use serde_json::{json, Value};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// Releases host userdata.
pub type mcp_userdata_free_fn = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// An input handler: `params_json` (borrowed, `params_len` bytes, `{}` when the server sent no
/// params) is the request's params; complete `responder` exactly once, now or later.
pub type mcp_input_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        method: *const c_char,
        params_json: *const c_char,
        params_len: usize,
        responder: *mut mcp_responder,
    ),
>;

/// A notification listener: every server notification except progress (which goes to the
/// call's own progress callback). Arguments are borrowed for the callback's duration.
pub type mcp_notification_fn = Option<
    unsafe extern "C" fn(userdata: *mut c_void, method: *const c_char, params_json: *const c_char, params_len: usize),
>;

/// A log listener: the server's stderr lines (`source` "stderr", level "info") and the
/// library's warnings (`source` "transport" or "client", level "warning").
pub type mcp_log_fn = Option<
    unsafe extern "C" fn(userdata: *mut c_void, level: *const c_char, source: *const c_char, message: *const c_char),
>;

/// Host userdata with its destructor, run exactly once when the last user is gone.
pub(crate) struct Userdata {
    ptr: *mut c_void,
    free: mcp_userdata_free_fn,
}

// SAFETY: the header requires userdata to be usable from the dispatcher thread.
unsafe impl Send for Userdata {}
// SAFETY: the library never reads through the pointer; it only hands it to host callbacks,
// which the header requires to accept it from the dispatcher thread.
unsafe impl Sync for Userdata {}

impl Userdata {
    pub fn new(ptr: *mut c_void, free: mcp_userdata_free_fn) -> Arc<Userdata> {
        Arc::new(Userdata { ptr, free })
    }
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: host-provided destructor for host-provided data, called once.
            unsafe { free(self.ptr) };
        }
    }
}

/// The handle an input handler completes. Owned by the library during the callback; after
/// `mcp_responder_defer`, owned by the host until a reply call consumes it.
pub struct mcp_responder {
    state: Arc<ResponderState<Value>>,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle` (the input callback's argument),
// taken back once by a reply call or by the library after the callback.
unsafe impl Handle for mcp_responder {}

struct FfiInputHandler {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, usize, *mut mcp_responder),
    userdata: Arc<Userdata>,
    dispatcher: Arc<Dispatcher>,
    kind: InputKind,
}

impl InputHandler for FfiInputHandler {
    fn handle(&self, request: InputRequest) -> BoxFuture<'static, Result<Value, HandlerError>> {
        let (state, rx) = ResponderState::new(request.cancel.clone());
        let (callback, userdata, kind) = (self.callback, self.userdata.clone(), self.kind);
        let method = to_c(request.method);
        let params = to_c(request.params.unwrap_or_else(|| json!({})).to_string());
        let cancel = request.cancel;
        let posted = self.dispatcher.post(Box::new(move || {
            // Cancelling the call's token waits for this callback; once it is cancelled, the
            // host is not called at all (mcp_cancel_token_cancel's promise).
            let busy = cancel.enter_callback();
            if busy.cancelled() {
                state.finish(Err(HandlerError::new("the call was cancelled before the handler ran")));
                return;
            }
            let responder = into_handle(mcp_responder { state: state.clone() });
            // SAFETY: host callback with the documented arguments; all borrowed for the call.
            unsafe {
                callback(
                    userdata.ptr(),
                    method.as_ptr(),
                    params.as_ptr(),
                    params.as_bytes().len(),
                    responder,
                )
            };
            if state.untouched() {
                // Neither replied nor deferred: the responder is still ours; that means "declined".
                // Not consumed (phase unchanged): the handle is still live and ours.
                drop(take_handle(responder));
                state.finish(default_answer(kind));
            }
        }));
        Box::pin(async move {
            if !posted {
                return Err(HandlerError::new("the client is shutting down"));
            }
            rx.await
                .unwrap_or_else(|_| Err(HandlerError::new("the handler finished without answering")))
        })
    }
}

fn default_answer(kind: InputKind) -> Result<Value, HandlerError> {
    match kind {
        InputKind::Elicitation => Ok(json!({"action": "decline"})),
        InputKind::Sampling | InputKind::Roots => Err(HandlerError::new("the handler returned without answering")),
    }
}

fn register(
    client: *const super::client::mcp_client,
    kind: InputKind,
    callback: mcp_input_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
) -> Result<(), Failure> {
    let userdata = Userdata::new(userdata, userdata_free);
    on_client(client, move |fc: &FfiClient| {
        let handler = callback.map(|callback| {
            Arc::new(FfiInputHandler {
                callback,
                userdata,
                dispatcher: fc.dispatcher.clone(),
                kind,
            }) as Arc<dyn InputHandler>
        });
        fc.client.set_handler(kind, handler);
        Ok(())
    })
}

/// Registers the `elicitation/create` handler (NULL `handler` unregisters) and declares the
/// `elicitation` capability. Replacing a handler releases the old userdata once it is idle.
/// `userdata_free` runs exactly once, even when this call fails.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_on_elicitation(
    client: *mut super::client::mcp_client,
    handler: mcp_input_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        register(client, InputKind::Elicitation, handler, userdata, userdata_free)
    })
}

/// Registers the `sampling/createMessage` handler and declares `sampling`. As
/// `mcp_client_on_elicitation`.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_on_sampling(
    client: *mut super::client::mcp_client,
    handler: mcp_input_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        register(client, InputKind::Sampling, handler, userdata, userdata_free)
    })
}

/// Registers the `roots/list` handler and declares `roots`. As `mcp_client_on_elicitation`.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_on_roots(
    client: *mut super::client::mcp_client,
    handler: mcp_input_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        register(client, InputKind::Roots, handler, userdata, userdata_free)
    })
}

/// Sets (NULL: removes) the notification listener. `userdata_free` runs exactly once.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_set_notification_handler(
    client: *mut super::client::mcp_client,
    listener: mcp_notification_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            let listener = listener.map(|f| {
                let dispatcher = fc.dispatcher.clone();
                Arc::new(move |method: &str, params: &Value| {
                    let (ud, method, params) = (userdata.clone(), to_c(method), to_c(params.to_string()));
                    dispatcher.post_listener(Box::new(move || {
                        // SAFETY: host callback; arguments borrowed for its duration.
                        unsafe { f(ud.ptr(), method.as_ptr(), params.as_ptr(), params.as_bytes().len()) }
                    }));
                }) as NotificationFn
            });
            fc.client.on_notification(listener);
            Ok(())
        })
    })
}

/// Sets (NULL: removes) the log listener. `userdata_free` runs exactly once.
#[no_mangle]
pub unsafe extern "C" fn mcp_client_set_log_handler(
    client: *mut super::client::mcp_client,
    listener: mcp_log_fn,
    userdata: *mut c_void,
    userdata_free: mcp_userdata_free_fn,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let userdata = Userdata::new(userdata, userdata_free);
        on_client(client, move |fc| {
            let listener = listener.map(|f| {
                let dispatcher = fc.dispatcher.clone();
                Arc::new(move |line: &LogLine| {
                    let ud = userdata.clone();
                    let (level, source, message) =
                        (to_c(line.level), to_c(line.source.clone()), to_c(line.message.clone()));
                    dispatcher.post_listener(Box::new(move || {
                        // SAFETY: host callback; arguments borrowed for its duration.
                        unsafe { f(ud.ptr(), level.as_ptr(), source.as_ptr(), message.as_ptr()) }
                    }));
                }) as crate::client::LogFn
            });
            fc.client.on_log(listener);
            Ok(())
        })
    })
}

/// Completes `responder` with a result object (`ElicitResult`, `CreateMessageResult`,
/// `ListRootsResult`), copied. Always consumes `responder` (except NULL). Returns
/// `MCP_CANCELLED` when the answer is no longer wanted, `MCP_INVALID_JSON`/`MCP_INVALID_ARG`
/// when `result_json` is unusable (the input then fails with `MCP_HANDLER_FAILED`).
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_reply_json(
    responder: *mut mcp_responder,
    result_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let responder = take_handle(responder).ok_or_else(|| Failure::null("responder"))?;
        let parsed = arg_str(result_json, "result_json").and_then(|text| {
            serde_json::from_str::<Value>(text)
                .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("result_json is not valid JSON: {e}")))
                .and_then(|v| {
                    if v.is_object() {
                        Ok(v)
                    } else {
                        Err(Failure::invalid("result_json must be a JSON object"))
                    }
                })
        });
        match parsed {
            Ok(value) => responder.state.reply(Ok(value)),
            Err(failure) => {
                responder.state.finish(Err(HandlerError::new(format!(
                    "the handler replied badly: {}",
                    failure.message
                ))));
                Err(failure)
            }
        }
    })
}

/// Fails the input with JSON-RPC `code` (0: `MCP_JSONRPC_INTERNAL_ERROR`; the `MCP_JSONRPC_*`
/// constants name the usual ones) and `message` (NULL: a generic message). On a modern
/// connection the call ends with `MCP_HANDLER_FAILED`; on a legacy one the server receives
/// this error. Always consumes `responder` (except NULL).
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_reply_error(
    responder: *mut mcp_responder,
    code: i64,
    message: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let responder = take_handle(responder).ok_or_else(|| Failure::null("responder"))?;
        let message = opt_str(message, "message")
            .ok()
            .flatten()
            .unwrap_or("the handler refused")
            .to_string();
        let code = if code == 0 { codes::INTERNAL_ERROR } else { code };
        responder.state.reply(Err(HandlerError {
            code: Some(code),
            message,
        }))
    })
}

/// Keeps `responder` alive after the callback returns, for a reply later from any thread.
/// Only valid inside the handler callback. A deferred responder must still be completed.
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_defer(responder: *mut mcp_responder) {
    ffi_boundary!({
        if let Some(r) = handle_opt(responder) {
            r.state.defer();
        }
    })
}

/// True once the answer is no longer wanted (call cancelled, timed out, a sibling input failed,
/// or the client closed).
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_is_cancelled(responder: *const mcp_responder) -> bool {
    ffi_boundary!({ handle_opt(responder).is_none_or(|r| r.state.is_cancelled()) })
}
