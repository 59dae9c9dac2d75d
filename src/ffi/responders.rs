//! `mcp_responder`: the one handle a host callback completes, for input handlers (elicitation,
//! sampling, roots) and the OAuth authorization callback alike, so every binding wraps one type.
//! Input handlers answer with a JSON result (`mcp_responder_reply_json`), the authorization
//! callback with the redirect URL (`mcp_responder_reply_url`); both can fail
//! (`mcp_responder_reply_error`), defer and ask whether the answer is still wanted.

use super::boundary::{ffi_boundary, handle_opt, into_handle, take_handle, Handle};
use super::error::{mcp_error, Failure};
use super::responder::ResponderState;
use super::status::{mcp_status, MCP_INVALID_JSON};
use super::strings::{arg_str, opt_str};
use crate::client::HandlerError;
use crate::protocol::codes;
use serde_json::Value;
use std::ffi::c_char;
use std::sync::Arc;

/// The handle a callback completes. Owned by the library during the callback; after
/// `mcp_responder_defer`, owned by the host until a reply call consumes it. Thread-safe.
pub struct mcp_responder {
    inner: Inner,
}

enum Inner {
    /// An input request (elicitation, sampling, roots): answered with a result object.
    Input(Arc<ResponderState<Value>>),
    /// The browser step of an OAuth flow: answered with the redirect URL (`None`: the loopback
    /// listener receives it).
    Authorization(Arc<ResponderState<Option<String>>>),
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle` (a callback's argument), taken
// back once by a reply call or by the library after the callback (`release`).
unsafe impl Handle for mcp_responder {}

impl mcp_responder {
    /// Registers a cancel hook (`mcp_responder_on_cancel`). Both kinds' futures announce
    /// "unwanted" (`handlers::Unwanted`), so both take one.
    pub(crate) fn on_cancel(&self, hook: super::responder::CancelHook) -> Result<(), Failure> {
        let registered = match &self.inner {
            Inner::Input(state) => state.register_hook(hook),
            Inner::Authorization(state) => state.register_hook(hook),
        };
        if registered {
            Ok(())
        } else {
            Err(Failure::invalid("this responder takes no cancel hook"))
        }
    }

    pub(crate) fn input(state: Arc<ResponderState<Value>>) -> *mut mcp_responder {
        into_handle(mcp_responder {
            inner: Inner::Input(state),
        })
    }

    pub(crate) fn authorization(state: Arc<ResponderState<Option<String>>>) -> *mut mcp_responder {
        into_handle(mcp_responder {
            inner: Inner::Authorization(state),
        })
    }

    /// Frees a responder the callback neither consumed nor deferred (it is still the library's).
    pub(crate) fn release(responder: *mut mcp_responder) {
        drop(take_handle(responder));
    }

    fn defer(&self) {
        match &self.inner {
            Inner::Input(s) => s.defer(),
            Inner::Authorization(s) => s.defer(),
        }
    }

    fn is_cancelled(&self) -> bool {
        match &self.inner {
            Inner::Input(s) => s.is_cancelled(),
            Inner::Authorization(s) => s.is_cancelled(),
        }
    }

    /// Ends the request with a handler failure and returns the caller's failure (a reply of the
    /// wrong kind, or an unusable one).
    fn refuse(&self, failure: Failure) -> Result<(), Failure> {
        let why = HandlerError::new(format!("the callback replied badly: {}", failure.message));
        match &self.inner {
            Inner::Input(s) => s.finish(Err(why)),
            Inner::Authorization(s) => s.finish(Err(why)),
        };
        Err(failure)
    }
}

fn take(responder: *mut mcp_responder) -> Result<Box<mcp_responder>, Failure> {
    take_handle(responder).ok_or_else(|| Failure::null("responder"))
}

fn json_object(text: *const c_char) -> Result<Value, Failure> {
    let text = arg_str(text, "result_json")?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("result_json is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Failure::invalid("result_json must be a JSON object"));
    }
    Ok(value)
}

/// Completes an input request with a result object (`ElicitResult`, `CreateMessageResult`,
/// `ListRootsResult`), copied. Always consumes `responder` (except NULL). `MCP_CANCELLED` when
/// the answer is no longer wanted; `MCP_INVALID_JSON`/`MCP_INVALID_ARG` when `result_json` is
/// unusable or `responder` is an authorization responder (the request then fails:
/// `MCP_HANDLER_FAILED` for an input, `MCP_AUTH_REQUIRED` for an authorization).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_responder_reply_json(
    responder: *mut mcp_responder,
    result_json: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let responder = take(responder)?;
        match (&responder.inner, json_object(result_json)) {
            (Inner::Input(state), Ok(value)) => state.reply(Ok(value)),
            (Inner::Authorization(_), Ok(_)) => responder.refuse(Failure::invalid(
                "an authorization responder takes the redirect URL: use mcp_responder_reply_url",
            )),
            (_, Err(failure)) => responder.refuse(failure),
        }
    })
}

/// Completes an authorization with the full URL the browser was redirected to (copied): the
/// library checks its `state` and `iss` and exchanges its `code`. Always consumes `responder`
/// (except NULL). `MCP_CANCELLED` when the answer is no longer wanted; `MCP_INVALID_ARG` for an
/// input responder (the input then fails).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_responder_reply_url(
    responder: *mut mcp_responder,
    redirect_url: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let responder = take(responder)?;
        match (&responder.inner, arg_str(redirect_url, "redirect_url")) {
            (Inner::Authorization(state), Ok(url)) => state.reply(Ok(Some(url.to_string()))),
            (Inner::Input(_), Ok(_)) => responder.refuse(Failure::invalid(
                "an input responder takes a result object: use mcp_responder_reply_json",
            )),
            (_, Err(failure)) => responder.refuse(failure),
        }
    })
}

/// Fails the request with `message` (NULL: a generic one). For an input: JSON-RPC `code` (0:
/// `MCP_JSONRPC_INTERNAL_ERROR`; the `MCP_JSONRPC_*` constants name the usual ones); on a modern
/// connection the call ends with `MCP_HANDLER_FAILED`, on a legacy one the server receives this
/// error. For an authorization (`code` is ignored): the user cancelled or the browser could not
/// open; the waiting call fails with `MCP_AUTH_REQUIRED`. Always consumes `responder` (except
/// NULL).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_responder_reply_error(
    responder: *mut mcp_responder,
    code: i64,
    message: *const c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        let responder = take(responder)?;
        let message = opt_str(message, "message").ok().flatten();
        match &responder.inner {
            Inner::Input(state) => state.reply(Err(HandlerError {
                code: Some(if code == 0 { codes::INTERNAL_ERROR } else { code }),
                message: message.unwrap_or("the handler refused").to_string(),
            })),
            Inner::Authorization(state) => state.reply(Err(HandlerError::new(
                message.unwrap_or("the host did not complete the authorization"),
            ))),
        }
    })
}

/// Keeps `responder` alive after the callback returns, for a reply later from any thread.
/// Only valid inside the callback. A deferred responder must still be completed.
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_defer(responder: *mut mcp_responder) {
    ffi_boundary!({
        if let Some(r) = handle_opt(responder) {
            r.defer();
        }
    })
}

/// True once the answer is no longer wanted (the call was cancelled or timed out, a sibling
/// input failed, the flow ended, or the client closed). True for NULL.
#[no_mangle]
pub unsafe extern "C" fn mcp_responder_is_cancelled(responder: *const mcp_responder) -> bool {
    ffi_boundary!({ handle_opt(responder).is_none_or(|r| r.is_cancelled()) })
}
