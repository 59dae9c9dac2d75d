module github.com/mcp-client/mcp_client/bindings/go

go 1.22
