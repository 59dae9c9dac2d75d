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
        ErrorKind::Reentrant => MCP_REENTRANT_CALL,
        ErrorKind::Internal => MCP_INTERNAL,
    }
}

fn text(status: i32) -> &'static [u8] {
    match status {
        MCP_OK => b"ok\0",
        MCP_NULL_ARG => b"a required pointer argument was NULL\0",
        MCP_INVALID_UTF8 => b"a string argument is not valid UTF-8\0",
        MCP_INVALID_JSON => b"a JSON argument does not parse\0",
        MCP_INVALID_ARG => b"invalid argument\0",
        MCP_CLOSED => b"the client is closed\0",
        MCP_REENTRANT_CALL => b"blocking call from a callback or runtime thread\0",
        MCP_UNSUPPORTED => b"not supported by this server, era or build\0",
        MCP_FORKED => b"the client was created before fork()\0",
        MCP_NOT_CONNECTED => b"the client is not connected yet\0",
        MCP_IO => b"transport I/O error\0",
        MCP_TIMEOUT => b"timed out\0",
        MCP_CANCELLED => b"cancelled\0",
        MCP_SERVER_EXITED => b"the server exited or closed the connection\0",
        MCP_HTTP_STATUS => b"unexpected HTTP status\0",
        MCP_AUTH_REQUIRED => b"authorization required\0",
        MCP_MESSAGE_TOO_LARGE => b"message exceeds the size bound\0",
        MCP_JSONRPC_ERROR => b"the server answered with a JSON-RPC error\0",
        MCP_PROTOCOL_VIOLATION => b"the server broke the protocol\0",
        MCP_VERSION_MISMATCH => b"no mutually supported protocol version\0",
        MCP_CAPABILITY_MISSING => b"the server requires an undeclared client capability\0",
        MCP_INPUT_REQUIRED => b"the server requires input (input_required)\0",
        MCP_INPUT_ROUNDS_EXCEEDED => b"too many input_required rounds\0",
        MCP_HANDLER_FAILED => b"an input handler failed\0",
        MCP_URL_ELICITATION_REQUIRED => b"URL elicitation required\0",
        MCP_SKILL_VERIFICATION_FAILED => b"a skill failed verification\0",
        MCP_OUTPUT_SCHEMA_INVALID => b"a tool result does not match its output schema\0",
        MCP_INTERNAL => b"internal error\0",
        MCP_PANIC => b"internal panic (the client is poisoned)\0",
        _ => b"unknown status\0",
    }
}

/// Static, NUL-terminated English text for a status; never NULL, never freed.
#[no_mangle]
pub extern "C" fn mcp_status_str(status: i32) -> *const c_char {
    ffi_boundary!({ text(status).as_ptr().cast() })
}

/// True for the transport range (100–199): the connection or the call's wait failed.
#[no_mangle]
pub extern "C" fn mcp_status_is_transport(status: i32) -> bool {
    ffi_boundary!({ (100..200).contains(&status) })
}
