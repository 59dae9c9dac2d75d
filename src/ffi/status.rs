//! Status codes: stable numbers, grouped in ranges, never renumbered or reused.

use super::boundary::ffi_boundary;
use crate::error::ErrorKind;
use std::ffi::c_char;

/// A status code; `MCP_OK` (0) is success.
pub type mcp_status = i32;

pub const MCP_OK: mcp_status = 0;
// 1–99: API misuse
pub const MCP_NULL_ARG: mcp_status = 1;
pub const MCP_INVALID_UTF8: mcp_status = 2;
pub const MCP_INVALID_JSON: mcp_status = 3;
pub const MCP_INVALID_ARG: mcp_status = 4;
pub const MCP_CLOSED: mcp_status = 5;
pub const MCP_REENTRANT_CALL: mcp_status = 6;
// 7 is retired (MCP_ALREADY_USED was never returned: a consumed handle cannot be detected).
pub const MCP_UNSUPPORTED: mcp_status = 8;
pub const MCP_FORKED: mcp_status = 9;
/// The client has not connected yet (`mcp_client_server_info` before `mcp_client_connect`);
/// `MCP_CLOSED` is only for a client that was closed.
pub const MCP_NOT_CONNECTED: mcp_status = 10;
// 100–199: transport
pub const MCP_IO: mcp_status = 100;
pub const MCP_TIMEOUT: mcp_status = 101;
pub const MCP_CANCELLED: mcp_status = 102;
pub const MCP_SERVER_EXITED: mcp_status = 103;
pub const MCP_HTTP_STATUS: mcp_status = 104;
pub const MCP_AUTH_REQUIRED: mcp_status = 105;
pub const MCP_MESSAGE_TOO_LARGE: mcp_status = 106;
// 200–299: protocol
pub const MCP_JSONRPC_ERROR: mcp_status = 200;
pub const MCP_PROTOCOL_VIOLATION: mcp_status = 201;
pub const MCP_VERSION_MISMATCH: mcp_status = 202;
pub const MCP_CAPABILITY_MISSING: mcp_status = 203;
// 300–399: MCP semantics
pub const MCP_INPUT_REQUIRED: mcp_status = 300;
pub const MCP_INPUT_ROUNDS_EXCEEDED: mcp_status = 301;
pub const MCP_HANDLER_FAILED: mcp_status = 302;
/// A legacy server answered -32042: the user must open the URLs of
/// `mcp_error_elicitations_json`, then the call may be retried.
pub const MCP_URL_ELICITATION_REQUIRED: mcp_status = 303;
/// A skill file or entry failed verification (SEP-2640): size, digest or frontmatter differ from
/// the listed entry, or the entry breaks the structural rules. No content is returned.
pub const MCP_SKILL_VERIFICATION_FAILED: mcp_status = 304;
/// A tool's `structuredContent` does not match the `outputSchema` its `tools/list` entry
/// declared, or is missing. `mcp_error_message` says where; `mcp_error_result_json` holds the
/// raw result. On by default; off per client (`"validate_output_schema": false`) or per call
/// (`mcp_call_opts.skip_output_validation`).
pub const MCP_OUTPUT_SCHEMA_INVALID: mcp_status = 305;
/// A `tools/call` of a tool that tool pinning withholds (`"tool_pinning"` with policy `block`,
/// or `ask` refused): its listed definition differs from the pinned one, or it is new on a
/// server whose tools were pinned. `mcp_client_approve_tool_pin` lets it through.
pub const MCP_TOOL_PIN_CHANGED: mcp_status = 306;
// 900–999: internal
pub const MCP_INTERNAL: mcp_status = 900;
pub const MCP_PANIC: mcp_status = 901;

pub(crate) fn of_kind(kind: ErrorKind) -> mcp_status {
    match kind {
        ErrorKind::InvalidArgument => MCP_INVALID_ARG,
        ErrorKind::Closed => MCP_CLOSED,
        ErrorKind::Unsupported => MCP_UNSUPPORTED,
        ErrorKind::Io => MCP_IO,
        ErrorKind::Timeout => MCP_TIMEOUT,
        ErrorKind::Cancelled => MCP_CANCELLED,
        ErrorKind::ServerExited => MCP_SERVER_EXITED,
        ErrorKind::MessageTooLarge => MCP_MESSAGE_TOO_LARGE,
        ErrorKind::AuthRequired => MCP_AUTH_REQUIRED,
        ErrorKind::HttpStatus => MCP_HTTP_STATUS,
        ErrorKind::Rpc => MCP_JSONRPC_ERROR,
        ErrorKind::ProtocolViolation => MCP_PROTOCOL_VIOLATION,
        ErrorKind::VersionMismatch => MCP_VERSION_MISMATCH,
        ErrorKind::CapabilityMissing => MCP_CAPABILITY_MISSING,
        ErrorKind::InputRequired => MCP_INPUT_REQUIRED,
        ErrorKind::InputRoundsExceeded => MCP_INPUT_ROUNDS_EXCEEDED,
        ErrorKind::HandlerFailed => MCP_HANDLER_FAILED,
        ErrorKind::SkillVerificationFailed => MCP_SKILL_VERIFICATION_FAILED,
        ErrorKind::UrlElicitationRequired => MCP_URL_ELICITATION_REQUIRED,
        ErrorKind::OutputSchemaInvalid => MCP_OUTPUT_SCHEMA_INVALID,
        ErrorKind::ToolPinChanged => MCP_TOOL_PIN_CHANGED,
        ErrorKind::Reentrant => MCP_REENTRANT_CALL,
        ErrorKind::Internal => MCP_INTERNAL,
    }
}

/// One row per status: its value, its constant's name and its English text, NUL-terminated.
/// `status!` spells the name from the constant itself, so the two cannot drift apart; a test
/// checks that every constant above has a row.
macro_rules! status {
    ($name:ident, $text:literal) => {
        (
            $name,
            concat!(stringify!($name), "\0").as_bytes(),
            concat!($text, "\0").as_bytes(),
        )
    };
}

const STATUSES: &[(mcp_status, &[u8], &[u8])] = &[
    status!(MCP_OK, "ok"),
    status!(MCP_NULL_ARG, "a required pointer argument was NULL"),
    status!(MCP_INVALID_UTF8, "a string argument is not valid UTF-8"),
    status!(MCP_INVALID_JSON, "a JSON argument does not parse"),
    status!(MCP_INVALID_ARG, "invalid argument"),
    status!(MCP_CLOSED, "the client is closed"),
    status!(MCP_REENTRANT_CALL, "blocking call from a callback or runtime thread"),
    status!(MCP_UNSUPPORTED, "not supported by this server, era or build"),
    status!(MCP_FORKED, "the client was created before fork()"),
    status!(MCP_NOT_CONNECTED, "the client is not connected yet"),
    status!(MCP_IO, "transport I/O error"),
    status!(MCP_TIMEOUT, "timed out"),
    status!(MCP_CANCELLED, "cancelled"),
    status!(MCP_SERVER_EXITED, "the server exited or closed the connection"),
    status!(MCP_HTTP_STATUS, "unexpected HTTP status"),
    status!(MCP_AUTH_REQUIRED, "authorization required"),
    status!(MCP_MESSAGE_TOO_LARGE, "message exceeds the size bound"),
    status!(MCP_JSONRPC_ERROR, "the server answered with a JSON-RPC error"),
    status!(MCP_PROTOCOL_VIOLATION, "the server broke the protocol"),
    status!(MCP_VERSION_MISMATCH, "no mutually supported protocol version"),
    status!(
        MCP_CAPABILITY_MISSING,
        "the server requires an undeclared client capability"
    ),
    status!(MCP_INPUT_REQUIRED, "the server requires input (input_required)"),
    status!(MCP_INPUT_ROUNDS_EXCEEDED, "too many input_required rounds"),
    status!(MCP_HANDLER_FAILED, "an input handler failed"),
    status!(MCP_URL_ELICITATION_REQUIRED, "URL elicitation required"),
    status!(MCP_SKILL_VERIFICATION_FAILED, "a skill failed verification"),
    status!(
        MCP_OUTPUT_SCHEMA_INVALID,
        "a tool result does not match its output schema"
    ),
    status!(
        MCP_TOOL_PIN_CHANGED,
        "the tool's definition changed since it was pinned (withheld)"
    ),
    status!(MCP_INTERNAL, "internal error"),
    status!(MCP_PANIC, "internal panic (the client is poisoned)"),
];

fn row(status: i32) -> Option<&'static (mcp_status, &'static [u8], &'static [u8])> {
    STATUSES.iter().find(|(value, _, _)| *value == status)
}

/// Static, NUL-terminated English text for a status ("timed out"); "unknown status" for a value
/// that is no status. Never NULL, never freed; any thread.
#[no_mangle]
pub extern "C" fn mcp_status_str(status: i32) -> *const c_char {
    ffi_boundary!({
        row(status)
            .map_or(b"unknown status\0".as_slice(), |r| r.2)
            .as_ptr()
            .cast()
    })
}

/// Static, NUL-terminated name of a status's constant ("MCP_OUTPUT_SCHEMA_INVALID" for 305);
/// "MCP_UNKNOWN" for a value that is no status (no constant has that name). Never NULL, never
/// freed; any thread.
#[no_mangle]
pub extern "C" fn mcp_status_name(status: i32) -> *const c_char {
    ffi_boundary!({ row(status).map_or(b"MCP_UNKNOWN\0".as_slice(), |r| r.1).as_ptr().cast() })
}

/// True for the transport range (100–199): the connection or the call's wait failed.
#[no_mangle]
pub extern "C" fn mcp_status_is_transport(status: i32) -> bool {
    ffi_boundary!({ (100..200).contains(&status) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's NUL-terminated bytes as text (what `mcp_status_name` and `mcp_status_str` point
    /// at; the C tests call those through the ABI).
    fn text(bytes: &'static [u8]) -> &'static str {
        std::str::from_utf8(bytes.strip_suffix(b"\0").expect("NUL-terminated")).unwrap()
    }

    fn name_of(status: i32) -> &'static str {
        text(row(status).map_or(b"MCP_UNKNOWN\0".as_slice(), |r| r.1))
    }

    /// Every `pub const MCP_*: mcp_status` of this file has a row, so a status added without a
    /// name (or text) fails here; and the names are the constants' own.
    #[test]
    fn every_status_constant_has_its_name_and_a_text() {
        let source = include_str!("status.rs");
        let declared: Vec<(&str, i32)> = source
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("pub const ")?;
                let (name, value) = rest.split_once(": mcp_status = ")?;
                Some((name, value.trim_end_matches(';').parse().unwrap()))
            })
            .collect();
        assert_eq!(declared.len(), STATUSES.len(), "one row per status constant");
        for (name, value) in declared {
            assert_eq!(name_of(value), name);
            let sentence = row(value).map(|r| text(r.2));
            assert!(sentence.is_some_and(|t| !t.is_empty()), "{name} has no text");
        }
        for unknown in [-1, 7, 99, 12345, i32::MIN, i32::MAX] {
            assert_eq!(name_of(unknown), "MCP_UNKNOWN");
        }
    }
}
