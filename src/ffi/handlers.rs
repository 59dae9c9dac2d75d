//! Host callbacks: input handlers (elicitation, sampling, roots) answered through responders,
//! and listeners for notifications and log lines. All run on the client's dispatcher thread.

use super::boundary::ffi_boundary;
use super::client::{on_client, FfiClient};
use super::dispatcher::Dispatcher;
use super::error::{mcp_error, Failure};
use super::responder::ResponderState;
use super::responders::mcp_responder;
use super::status::mcp_status;
use super::strings::to_c;
use crate::client::{HandlerError, InputHandler, InputKind, InputRequest, LogLine, NotificationFn};
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
        state.set_hook_poster(self.dispatcher.clone());
        let watch = Unwanted(state.clone(), self.dispatcher.clone(), cancel.clone());
        let posted = self.dispatcher.post(Box::new(move || {
            // Cancelling the call's token waits for this callback; once it is cancelled, the
            // host is not called at all (mcp_cancel_token_cancel's promise).
            let busy = cancel.enter_callback();
            if busy.cancelled() {
                state.finish(Err(HandlerError::new("the call was cancelled before the handler ran")));
                return;
            }
            let responder = mcp_responder::input(state.clone());
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
                mcp_responder::release(responder);
                state.finish(default_answer(kind));
            }
        }));
        let mut rx = rx;
        Box::pin(async move {
            if !posted {
                return Err(HandlerError::new("the client is shutting down"));
            }
            let answer = tokio::select! {
                answer = &mut rx => answer,
                _ = watch.2.cancelled() => {
                    watch.announce();
                    rx.await
                }
            };
            drop(watch);
            answer.unwrap_or_else(|_| Err(HandlerError::new("the handler finished without answering")))
        })
    }
}

/// Announces "no longer wanted" to a responder's cancel hook: when its call's token is
/// cancelled, or when the call stops waiting (drops this) before the answer came.
/// Input handlers and the authorization callback share it.
pub(crate) struct Unwanted<T>(
    pub(crate) Arc<ResponderState<T>>,
    pub(crate) Arc<Dispatcher>,
    pub(crate) crate::client::CancelToken,
);

impl<T> Unwanted<T> {
    pub(crate) fn announce(&self) {
        if let Some(hook) = self.0.unwanted() {
            self.1.post(hook);
        }
    }
}

impl<T> Drop for Unwanted<T> {
    fn drop(&mut self) {
        self.announce();
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
        let handler = callback.map(|callback| input_handler(fc, kind, callback, userdata));
        fc.client.set_handler(kind, handler);
        Ok(())
    })
}

/// A C input handler as the client's `InputHandler` (also used by `mcp_client_on_elicitation_modes`).
pub(crate) fn input_handler(
    fc: &FfiClient,
    kind: InputKind,
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, usize, *mut mcp_responder),
    userdata: Arc<Userdata>,
) -> Arc<dyn InputHandler> {
    Arc::new(FfiInputHandler {
        callback,
        userdata,
        dispatcher: fc.dispatcher.clone(),
        kind,
    })
}

/// Registers the `elicitation/create` handler (NULL `handler` unregisters) and declares the
/// `elicitation` capability for form mode (URL mode: `mcp_client_on_elicitation_modes`). Replacing a handler releases the old userdata once it is idle.
/// `userdata_free` runs exactly once, even when this call fails.
#[no_mangle]
#[must_use]
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

/// Registers the `sampling/createMessage` handler and declares `sampling` (with `tools` when
/// the configuration sets `sampling_tools`: the params JSON then may carry `tools` and
/// `toolChoice`, and the answer `tool_use` blocks, each naming an offered tool with an `id` and
/// an object `input`; a malformed answer goes to the server as an error). As
/// `mcp_client_on_elicitation`. Deprecated by the 2026-07-28 specification (SEP-2577, removal
/// no earlier than the first release after 2027-07-28): it keeps working, on both eras.
#[no_mangle]
#[must_use]
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
/// Deprecated by the 2026-07-28 specification (SEP-2577, removal no earlier than the first
/// release after 2027-07-28): it keeps working, on both eras.
#[no_mangle]
#[must_use]
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
#[must_use]
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
#[must_use]
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
