//! `mcp_error` objects, the `Failure` carried inside the FFI layer, and the panic boundary.

use super::boundary::{ffi_boundary, handle_opt, into_handle, out, put, take_handle, Handle};
use super::status::{self, mcp_status, MCP_INVALID_ARG, MCP_NULL_ARG, MCP_PANIC};
use super::strings::{has_nul, to_c};
use crate::error::Error;
use std::any::Any;
use std::ffi::{c_char, CString};
use std::ptr;

/// Why an FFI call failed: a status, a message, and the core error when there is one.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: mcp_status,
    pub message: String,
    pub source: Option<Error>,
}

impl Failure {
    pub fn new(status: mcp_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
            source: None,
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Failure::new(MCP_INVALID_ARG, message)
    }
    pub fn null(name: &str) -> Self {
        Failure::new(MCP_NULL_ARG, format!("{name} is NULL"))
    }
    pub fn panic(payload: Box<dyn Any + Send>) -> Self {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Failure::new(MCP_PANIC, format!("panic inside mcp_client: {text}"))
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure {
            status: status::of_kind(e.kind()),
            message: e.message().to_string(),
            source: Some(e),
        }
    }
}

/// Details of a failed call. Immutable; readable from any thread; strings it returns are
/// borrowed and live until `mcp_error_free`.
pub struct mcp_error {
    status: mcp_status,
    message: CString,
    jsonrpc_code: Option<i64>,
    jsonrpc_message: Option<CString>,
    data_json: Option<CString>,
    input_requests_json: Option<CString>,
    request_state: Option<CString>,
    result_json: Option<CString>,
    http_status: Option<u16>,
    www_authenticate: Option<CString>,
    /// The registered OAuth error code behind an authorization failure.
    oauth_error: Option<CString>,
    /// `MCP_URL_ELICITATION_REQUIRED`: the server's `data.elicitations` (see `ffi::elicitation`).
    pub(crate) elicitations_json: Option<CString>,
    /// `MCP_INPUT_REQUIRED`: the requests no handler answers (see `ffi::elicitation`).
    pub(crate) unanswered_json: Option<CString>,
}

// SAFETY: crosses the ABI only as a `Box` made by `into_handle` (`report`), freed by `mcp_error_free`.
unsafe impl Handle for mcp_error {}

impl mcp_error {
    pub(crate) fn from_failure(f: Failure) -> Self {
        let rpc = f.source.as_ref().and_then(|e| e.rpc_error());
        let input = f.source.as_ref().and_then(|e| e.input_required_data());
        // A requestState is handed back byte-exact or not at all: one holding U+0000 cannot be a
        // C string, so the accessor returns NULL and the message says why.
        let mut message = f.message.clone();
        let state = input.and_then(|i| i.request_state.clone());
        let state = match state {
            Some(s) if has_nul(s.as_bytes()) => {
                message.push_str(
                    "; its requestState contains U+0000, which cannot cross the C ABI: \
                     answer these input requests with registered handlers instead",
                );
                None
            }
            other => other,
        };
        mcp_error {
            status: f.status,
            message: to_c(message),
            jsonrpc_code: rpc.map(|r| r.code),
            jsonrpc_message: rpc.map(|r| to_c(r.message.clone())),
            data_json: rpc.and_then(|r| r.data.as_ref()).map(|d| to_c(d.to_string())),
            input_requests_json: input.map(|i| to_c(i.input_requests.to_string())),
            request_state: state.map(to_c),
            result_json: input
                .map(|i| &i.result)
                .or_else(|| f.source.as_ref().and_then(|e| e.result()))
                .map(|r| to_c(r.to_string())),
            http_status: f.source.as_ref().and_then(|e| e.http_status()),
            www_authenticate: f
                .source
                .as_ref()
                .and_then(|e| e.www_authenticate())
                .map(|w| to_c(w.to_string())),
            oauth_error: f.source.as_ref().and_then(|e| e.oauth_error()).map(to_c),
            elicitations_json: f
                .source
                .as_ref()
                .and_then(|e| e.elicitations())
                .map(|v| to_c(v.to_string())),
            unanswered_json: input.map(|i| to_c(i.unanswered.to_string())),
        }
    }

    /// For `mcp_error_oauth_error` (`ffi::auth_ext`).
    pub(super) fn oauth_error_ptr(&self) -> *const c_char {
        borrow_str(&self.oauth_error)
    }
}

/// Stores a failure in `*err_out` (when the caller asked for it) and returns its status.
pub(crate) fn report(err_out: *mut *mut mcp_error, failure: Failure) -> mcp_status {
    let status = failure.status;
    if !err_out.is_null() {
        put(err_out, into_handle(mcp_error::from_failure(failure)));
    }
    status
}

pub(crate) fn borrow_str(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(ptr::null(), |c| c.as_ptr())
}

/// The error's status code (`MCP_INVALID_ARG` for a NULL error).
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_error_status(error: *const mcp_error) -> mcp_status {
    ffi_boundary!({ handle_opt(error).map_or(MCP_INVALID_ARG, |e| e.status) })
}

/// UTF-8 message; borrowed, valid until `mcp_error_free`. Never NULL for a non-NULL error.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_message(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| e.message.as_ptr()) })
}

/// The JSON-RPC `error.code` when the server answered with an error object; false otherwise.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_jsonrpc_code(error: *const mcp_error, code_out: *mut i64) -> bool {
    ffi_boundary!({
        match (
            handle_opt(error).and_then(|e| e.jsonrpc_code),
            out(code_out, "code_out"),
        ) {
            (Some(code), Ok(slot)) => {
                *slot = code;
                true
            }
            _ => false,
        }
    })
}

/// The JSON-RPC `error.message` exactly as the server sent it (`mcp_error_message` adds
/// context), or NULL when the server did not answer with an error object. Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_jsonrpc_message(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.jsonrpc_message)) })
}

/// The JSON-RPC `error.data` as JSON, or NULL. Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_data_json(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.data_json)) })
}

/// For `MCP_INPUT_REQUIRED` and `MCP_INPUT_ROUNDS_EXCEEDED`: the `inputRequests` map as JSON
/// (`{}` when the server sent none); NULL otherwise. Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_input_requests_json(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.input_requests_json)) })
}

/// For the input-required statuses: the opaque `requestState`, byte-exact, or NULL when the
/// server sent none — or sent one holding U+0000, which a C string cannot carry (the message
/// then says so; it is never handed over shortened). Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_request_state(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.request_state)) })
}

/// For the input-required statuses: the raw `input_required` result as JSON (the last one for
/// `MCP_INPUT_ROUNDS_EXCEEDED`); for `MCP_OUTPUT_SCHEMA_INVALID`: the tool's raw result; NULL
/// otherwise. Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_result_json(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.result_json)) })
}

/// The HTTP status of the answer that caused the error (`MCP_AUTH_REQUIRED`, and transport
/// errors caused by an HTTP status) in `*status_out`; false when there is none.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_http_status(error: *const mcp_error, status_out: *mut u16) -> bool {
    ffi_boundary!({
        match (
            handle_opt(error).and_then(|e| e.http_status),
            out(status_out, "status_out"),
        ) {
            (Some(status), Ok(slot)) => {
                *slot = status;
                true
            }
            _ => false,
        }
    })
}

/// For `MCP_AUTH_REQUIRED`: the server's `WWW-Authenticate` challenge (several are joined with
/// ", "), or NULL. It never holds credentials. Borrowed.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_www_authenticate(error: *const mcp_error) -> *const c_char {
    ffi_boundary!({ handle_opt(error).map_or(ptr::null(), |e| borrow_str(&e.www_authenticate)) })
}

/// Frees an error. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_error_free(error: *mut mcp_error) {
    ffi_boundary!({ drop(take_handle(error)) })
}
