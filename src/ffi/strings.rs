//! Strings across the boundary: borrowed NUL-terminated UTF-8 in, library-allocated out.

use super::boundary::{ffi_boundary, put, take_string};
use super::error::Failure;
use super::status::{MCP_INVALID_JSON, MCP_INVALID_UTF8, MCP_NULL_ARG};
use serde_json::value::RawValue;
use serde_json::Value;
use std::ffi::{c_char, CStr, CString};

/// A required string argument (one that came across the C ABI, see `boundary`).
pub(crate) fn arg_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::new(MCP_NULL_ARG, format!("{name} is NULL")));
    }
    // SAFETY: the header's contract: a non-NULL string argument is NUL-terminated and stays
    // valid and unchanged for the duration of the call.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str()
        .map_err(|e| Failure::new(MCP_INVALID_UTF8, format!("{name} is not UTF-8: {e}")))
}

/// An optional string argument (NULL → `None`).
pub(crate) fn opt_str<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        Ok(None)
    } else {
        arg_str(ptr, name).map(Some)
    }
}

/// An optional JSON argument (NULL → `None`); bad UTF-8 or JSON fails before anything is sent.
pub(crate) fn opt_json(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match opt_str(ptr, name)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("{name} is not valid JSON: {e}"))),
    }
}

/// An optional JSON object argument.
pub(crate) fn opt_json_object(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match opt_json(ptr, name)? {
        Some(v) if !v.is_object() => Err(Failure::invalid(format!("{name} must be a JSON object"))),
        other => Ok(other),
    }
}

/// As [`opt_json_object`], kept as its text (nothing decoded): the same checks, statuses and
/// messages, without building the map (see `jsonrpc::raw_object`).
pub(crate) fn opt_raw_json_object<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a RawValue>, Failure> {
    if !ptr.is_null() {
        // SAFETY: as in `arg_str`.
        let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
        // A plain object (the usual arguments) is checked as JSON and UTF-8 in one quick pass;
        // anything else takes the checks below, with their statuses and messages.
        if let Some(raw) = crate::protocol::fast_json::plain_object_bytes(bytes) {
            return Ok(Some(raw));
        }
    }
    match opt_str(ptr, name)? {
        None => Ok(None),
        Some(text) => match crate::protocol::jsonrpc::raw_object(text) {
            Ok(Some(raw)) => Ok(Some(raw)),
            Ok(None) => Err(Failure::invalid(format!("{name} must be a JSON object"))),
            Err(e) => Err(Failure::new(MCP_INVALID_JSON, format!("{name} is not valid JSON: {e}"))),
        },
    }
}

/// A library-owned C string for text (messages, names, log lines). JSON never holds a raw NUL
/// (it escapes U+0000 as `\u0000`); other text shows each NUL as those six characters rather
/// than ending the C string there or losing it. Data that must be byte-exact (a
/// `requestState`, a string read by `mcp_json_string`) is refused instead, see `has_nul`.
pub(crate) fn to_c(text: impl Into<Vec<u8>>) -> CString {
    let bytes = text.into();
    if !has_nul(&bytes) {
        // SAFETY: no interior NUL, checked just above.
        return unsafe { CString::from_vec_unchecked(bytes) };
    }
    let mut shown = Vec::with_capacity(bytes.len() + 5);
    for b in bytes {
        match b {
            0 => shown.extend_from_slice(b"\\u0000"),
            b => shown.push(b),
        }
    }
    CString::new(shown).unwrap_or_default()
}

/// Whether text holds a NUL byte, which a C string cannot carry.
pub(crate) fn has_nul(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

/// Hands a string to the caller through `out` (which may be NULL when the caller wants none).
pub(crate) fn give(out: *mut *mut c_char, text: impl Into<Vec<u8>>) {
    if !out.is_null() {
        put(out, to_c(text).into_raw());
    }
}

pub(crate) fn give_json(out: *mut *mut c_char, value: &Value) {
    if out.is_null() {
        return;
    }
    let mut bytes = Vec::with_capacity(256);
    if serde_json::to_writer(&mut bytes, value).is_err() {
        bytes.clear();
        bytes.extend_from_slice(b"null");
    }
    give_json_bytes(out, bytes);
}

/// Hands over JSON text that was serialised or validated as JSON: it never holds a NUL byte
/// (JSON escapes every control character inside strings and allows none outside), so it is
/// terminated and handed over without another scan or copy.
pub(crate) fn give_json_bytes(out: *mut *mut c_char, mut bytes: Vec<u8>) {
    if out.is_null() {
        return;
    }
    bytes.push(0);
    debug_assert!(!bytes[..bytes.len() - 1].contains(&0));
    // SAFETY: JSON text holds no NUL byte (see above) and `bytes` now ends with one.
    let text = unsafe { CString::from_vec_with_nul_unchecked(bytes) };
    put(out, text.into_raw());
}

/// Frees a string the library returned. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn mcp_string_free(s: *mut c_char) {
    ffi_boundary!({ drop(take_string(s)) })
}
