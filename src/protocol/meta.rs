//! Reserved `_meta` keys (spec digest §2.3).

pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
pub const PROGRESS_TOKEN: &str = "progressToken";
/// The MCP Apps extension (SEP-1865), declared with `{"mimeTypes": [APP_MIME_TYPE]}`.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The media type of an app's view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Log levels, lowest first (RFC 5424 names, as MCP uses them).
pub const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub fn is_log_level(level: &str) -> bool {
    LOG_LEVELS.contains(&level)
}
