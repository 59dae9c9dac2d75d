import CMCPClient

/// A tool pin hook's box: the event (`server`, `tool`, `change`, `policy`, `old`, `new`,
/// `diff`) in, the decision out (read under policy "ask" only).
final class ToolPinBox: CallbackBox {
    let fn: @Sendable (JSON) -> Bool
    init(_ fn: @escaping @Sendable (JSON) -> Bool) { self.fn = fn }
}

let toolPinThunk: mcp_tool_pin_fn = { userdata, event in
    guard let userdata, let event else { return false }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! ToolPinBox
    return box.fn((try? JSON.parse(String(cString: event))) ?? .object([:]))
}

extension Client {
    // MARK: tool pinning ("tool_pinning" in the configuration)

    /// The hook (nil removes it) told of each changed, new or removed tool, on the dispatcher
    /// thread; the listing waits for it. Under policy "ask" its answer approves (true) or
    /// withholds (false) the tool. Throws `MCPStatus.unsupported` when pinning is off.
    public func onToolPin(_ hook: (@Sendable (JSON) -> Bool)?) throws {
        guard let hook else {
            try check { mcp_client_on_tool_pin(handle, nil, nil, nil, $0) }
            return
        }
        let ud = retainedUserdata(ToolPinBox(hook))
        try check { mcp_client_on_tool_pin(handle, toolPinThunk, ud, releaseUserdata, $0) }
    }

    /// The pins of the client's server: `{"server", "policy", "tools": [{"name", "digest",
    /// "definition", "state", "pending"?}]}`. Reads the pin store; sends nothing.
    public func toolPins() throws -> JSON {
        try checkJSON { mcp_client_tool_pins(handle, $0, $1) }
    }

    /// Pins the last listed definition of `tool` (changed or new): listed and callable again.
    public func approveToolPin(_ tool: String) throws {
        try withCStrings { s in
            let t = try s.c(tool)
            try check { mcp_client_approve_tool_pin(handle, t, $0) }
        }
    }

    /// Forgets the pin of `tool` (pinned afresh when next listed); nil: every pin of the server.
    public func forgetToolPin(_ tool: String? = nil) throws {
        try withCStrings { s in
            let t = try s.c(tool)
            try check { mcp_client_forget_tool_pin(handle, t, $0) }
        }
    }
}
