//! JSON-RPC and MCP error codes for C hosts, with the `MCP_JSONRPC_` prefix (for
//! `mcp_responder_reply_error` and for reading `mcp_error_jsonrpc_code`). cbindgen needs literal
//! values; a test keeps them equal to `crate::protocol::codes`, the one definition the library uses.
// Read by cbindgen for the header, not by Rust code.
#![allow(dead_code)]

pub const MCP_JSONRPC_PARSE_ERROR: i64 = -32700;
pub const MCP_JSONRPC_INVALID_REQUEST: i64 = -32600;
pub const MCP_JSONRPC_METHOD_NOT_FOUND: i64 = -32601;
pub const MCP_JSONRPC_INVALID_PARAMS: i64 = -32602;
pub const MCP_JSONRPC_INTERNAL_ERROR: i64 = -32603;
/// Modern HTTP: a header disagrees with the body.
pub const MCP_JSONRPC_HEADER_MISMATCH: i64 = -32020;
/// Modern: the request needs client capabilities that were not declared.
pub const MCP_JSONRPC_MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// Modern: `_meta` protocol version unsupported; `data.supported` lists the server's versions.
pub const MCP_JSONRPC_UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Legacy: URL elicitation required (2025-11-25).
pub const MCP_JSONRPC_URL_ELICITATION_REQUIRED: i64 = -32042;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codes;

    #[test]
    fn the_c_names_carry_the_protocols_values() {
        let pairs = [
            (MCP_JSONRPC_PARSE_ERROR, codes::PARSE_ERROR),
            (MCP_JSONRPC_INVALID_REQUEST, codes::INVALID_REQUEST),
            (MCP_JSONRPC_METHOD_NOT_FOUND, codes::METHOD_NOT_FOUND),
            (MCP_JSONRPC_INVALID_PARAMS, codes::INVALID_PARAMS),
            (MCP_JSONRPC_INTERNAL_ERROR, codes::INTERNAL_ERROR),
            (MCP_JSONRPC_HEADER_MISMATCH, codes::HEADER_MISMATCH),
            (
                MCP_JSONRPC_MISSING_REQUIRED_CLIENT_CAPABILITY,
                codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            ),
            (
                MCP_JSONRPC_UNSUPPORTED_PROTOCOL_VERSION,
                codes::UNSUPPORTED_PROTOCOL_VERSION,
            ),
            (MCP_JSONRPC_URL_ELICITATION_REQUIRED, codes::URL_ELICITATION_REQUIRED),
        ];
        for (c_value, value) in pairs {
            assert_eq!(c_value, value);
        }
    }
}
