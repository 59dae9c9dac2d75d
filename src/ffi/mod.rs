//! The C ABI (see `include/mcp_client.h`).
