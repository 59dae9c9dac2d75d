//! JSON-RPC and MCP error codes the client acts on, and the rest of the standard table (the C
//! header restates them; a test in `ffi::codes` keeps both equal).
#![allow(dead_code)]

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// Modern HTTP: a header disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// Modern: the request needs client capabilities that were not declared.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// Modern: `_meta` protocol version unsupported; `data.supported` lists the server's versions.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Legacy: URL elicitation required (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
