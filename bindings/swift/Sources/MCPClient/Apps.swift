import CMCPClient

/// MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): a tool's UI link,
/// `{"resourceUri", "visibility", "model", "app"}`, or nil without one (a link that is not
/// `ui://` counts as none). Declare the extension with `ClientOptions.apps`; read a view with
/// `Client.readApp`.
public func toolUI(_ tool: JSON) throws -> JSON? {
    let ui = try withCStrings { s in
        let t = try s.json(tool)
        return try checkJSON { mcp_tool_ui(t, $0, $1) }
    }
    return ui == .null ? nil : ui
}

extension Client {
    /// Reads an MCP Apps view (a `ui://` resource) verified: `text/html;profile=mcp-app`, text
    /// or base64 blob, at most `maxBytes` (0: 4 MiB). Returns `{"uri", "html", "meta"}`; see
    /// `mcp_client_read_app`.
    public func readApp(_ uri: String, maxBytes: Int = 0, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let u = try s.c(uri)
            return try options.withC(s) { o in
                try checkJSON { mcp_client_read_app(handle, u, max(0, maxBytes), o, $0, $1) }
            }
        }
    }

    /// `readApp` as a started call (`mcp_client_read_app_start`).
    public func readApp(_ uri: String, maxBytes: Int = 0, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let u = try s.c(uri)
                return try options.withC(s, for: call) { o in
                    mcp_client_read_app_start(handle, u, max(0, maxBytes), o, done, ud, out, err)
                }
            }
        }
    }
}
