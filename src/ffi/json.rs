//! JSON helpers for hosts without a JSON library: read one value out of a JSON document by
//! RFC 6901 pointer (e.g. "/content/0/text").

use super::boundary::{ffi_boundary, out};
use super::error::{mcp_error, Failure};
use super::status::{mcp_status, MCP_INVALID_JSON};
use super::strings::{arg_str, give, give_json, has_nul};
use serde_json::Value;
use std::ffi::c_char;

fn lookup(json: *const c_char, pointer: *const c_char) -> Result<Value, Failure> {
    let text = arg_str(json, "json")?;
    let pointer = arg_str(pointer, "pointer")?;
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| Failure::new(MCP_INVALID_JSON, format!("json is not valid JSON: {e}")))?;
    doc.pointer(pointer)
        .cloned()
        .ok_or_else(|| Failure::invalid(format!("no value at JSON pointer {pointer:?}")))
}

/// The value at `pointer` (RFC 6901; "" is the whole document) in `json`, as JSON text.
/// `MCP_INVALID_ARG` when there is no such value. Free the output with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_json_pointer(
    json: *const c_char,
    pointer: *const c_char,
    value_json_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(value_json_out, "value_json_out")?;
        give_json(value_json_out, &lookup(json, pointer)?);
        Ok(())
    })
}

/// The string at `pointer` in `json`, unquoted. `MCP_INVALID_ARG` when there is no such value
/// or it is not a string. Free the output with `mcp_string_free`.
#[no_mangle]
#[must_use]
pub unsafe extern "C" fn mcp_json_string(
    json: *const c_char,
    pointer: *const c_char,
    value_out: *mut *mut c_char,
    err_out: *mut *mut mcp_error,
) -> mcp_status {
    ffi_boundary!(err_out, {
        out(value_out, "value_out")?;
        match lookup(json, pointer)? {
            // Handed over whole or refused: a C string would end at an embedded U+0000.
            Value::String(s) if has_nul(s.as_bytes()) => Err(Failure::invalid(
                "the string at that pointer contains U+0000, which a C string cannot carry; \
                 read it with mcp_json_pointer (JSON escapes it as \\u0000)",
            )),
            Value::String(s) => {
                give(value_out, s);
                Ok(())
            }
            other => Err(Failure::invalid(format!(
                "the value at that pointer is not a string: {other}"
            ))),
        }
    })
}
