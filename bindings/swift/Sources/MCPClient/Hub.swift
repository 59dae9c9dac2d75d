import CMCPClient
import Foundation

/// Many MCP servers as one client (`mcp_hub_*`): every member starts at once, their tools,
/// prompts and resources form one catalogue (tool and prompt names `<member>__<name>`, each item
/// naming its member in `_meta["mcp-client/server"]`), and each call goes to the member that
/// owns it. A member that cannot start is `failed` in `members()`; the hub keeps going.
///
/// Thread-safe like `Client` (`@unchecked Sendable` for the same reason: the only stored
/// property is the library's handle). The `async` calls are started calls: cancelling the Task
/// cancels the call. `start`, `list`, `setMember` and `removeMember` have no started form in the
/// C ABI: their `async` forms wait on a dispatch queue, never on the Task's own thread. `close()`
/// shuts every member down (no server process is left); deinit closes and frees.
public final class Hub: @unchecked Sendable {
    let handle: OpaquePointer

    /// An empty hub: tool and prompt names exported as `<member><separator><name>` (or
    /// unprefixed when `prefix` is false); `defaults` holds configuration keys every member gets
    /// unless its own configuration sets them. Add members, then `start()`.
    public convenience init(separator: String = "__", prefix: Bool = true, defaults: JSON? = nil) throws {
        try self.init(separator: separator, prefix: prefix, defaults: defaults) { mcp_hub_new($0, $1, $2) }
    }

    /// A hub made by `create(options_json, hub_out, err_out)`.
    init(separator: String, prefix: Bool, defaults: JSON?,
         create: (UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>, ErrOut) throws -> mcp_status) throws {
        guard abiChecked else {
            throw MCPError.other(MCPErrorInfo(
                status: MCPStatus.internal,
                message: "libmcp_client ABI \(mcp_abi_version()) does not match the header's \(MCP_ABI_VERSION)"))
        }
        var options: [String: JSON] = ["separator": .string(separator), "prefix": .bool(prefix)]
        if let defaults { options["defaults"] = defaults }
        var hub: OpaquePointer? = nil
        try withCStrings { s in
            let text = try s.c(JSON.object(options).text)
            var err: OpaquePointer? = nil
            let status = try create(text, &hub, &err)
            if status != MCP_OK { throw MCPError.take(status: status, error: err) }
            mcp_error_free(err)
        }
        guard let hub else { throw MCPError.invalid("the library returned no hub") }
        handle = hub
    }

    /// A hub with `members` (name → flat client configuration), not yet started.
    public convenience init(members: [String: JSON], separator: String = "__", prefix: Bool = true,
                            defaults: JSON? = nil) throws {
        try self.init(separator: separator, prefix: prefix, defaults: defaults)
        for (name, config) in members.sorted(by: { $0.key < $1.key }) { try addMember(name, config: config) }
    }

    deinit {
        // Closes every member, stops the listener and releases its box (userdata_free).
        mcp_hub_free(handle)
    }

    /// Adds member `name` with its flat client configuration (`{"command": …}` or `{"url": …}`,
    /// the keys `Client(config:)` takes); `start()` connects it. A configuration the library
    /// refuses makes the member `failed`; a name the hub already has throws.
    public func addMember(_ name: String, config: JSON) throws {
        try withCStrings { s in
            let (n, c) = (try s.c(name), try s.c(config.text))
            try check { mcp_hub_add_member(handle, n, c, $0) }
        }
    }

    /// Connects every member not yet started, all at once; returns when each has connected or
    /// failed (each bounded by its `connect_timeout_ms`). A failed member does not throw.
    public func start() throws {
        try check { mcp_hub_start(handle, $0) }
    }

    /// Each member's `{"name", "state", "error"?, "era"?, "protocolVersion"?, "serverInfo"?}`;
    /// `state` is idle, connecting, connected, reconnecting, failed, disabled or closed. Does not block.
    public func members() throws -> [JSON] {
        try checkJSON { mcp_hub_members_json(handle, $0, $1) }.arrayValue ?? []
    }

    /// The merged list over the connected members: `{"tools": [...]}` (or prompts, resources,
    /// resourceTemplates), names exported.
    public func list(_ kind: ListKind) throws -> JSON {
        try checkJSON { mcp_hub_list(handle, kind.c, $0, $1) }
    }

    /// Calls the tool the merged list names `name` on its member. An unknown name throws
    /// `MCPError.invalidArgument` naming the nearest names; a tool error is a result.
    public func callTool(_ name: String, arguments: JSON? = nil, timeout: Double? = nil, cancel: CancelToken? = nil,
                         options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (n, a) = (try s.c(name), try s.json(arguments))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_hub_call_tool(handle, n, a, o, $0, $1) }
            }
        }
    }

    /// Gets the prompt the merged list names `name` from its member.
    public func getPrompt(_ name: String, arguments: [String: String]? = nil, timeout: Double? = nil,
                          cancel: CancelToken? = nil, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (n, a) = (try s.c(name), try s.json(arguments.map { JSON.object($0.mapValues { .string($0) }) }))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_hub_get_prompt(handle, n, a, o, $0, $1) }
            }
        }
    }

    /// Reads `uri` from member `server`.
    public func readResource(server: String, uri: String, timeout: Double? = nil, cancel: CancelToken? = nil,
                             options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (sv, u) = (try s.c(server), try s.c(uri))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_hub_read_resource(handle, sv, u, o, $0, $1) }
            }
        }
    }

    /// Applies a changed configuration to one member, as a reload does: a new name is added and
    /// started, a changed (or failed) one is closed and started again, an equal one keeps its
    /// connection. Returns once the member has connected or failed.
    public func setMember(_ name: String, config: JSON) throws {
        try withCStrings { s in
            let (n, c) = (try s.c(name), try s.c(config.text))
            try check { mcp_hub_set_member(handle, n, c, $0) }
        }
    }

    /// Removes member `name` and shuts its server down (an unknown name throws).
    public func removeMember(_ name: String) throws {
        try withCStrings { s in
            let n = try s.c(name)
            try check { mcp_hub_remove_member(handle, n, $0) }
        }
    }

    /// The hub's listener (nil removes it): every member's state changes (`{"type": "state",
    /// "server", "state", "error"?}`), list changes (`"list_changed"`, with `"list"`), resource
    /// updates, stderr lines (`"log"`) and notifications, on the library's dispatcher thread.
    public func onEvent(_ handler: (@Sendable (JSON) -> Void)?) throws {
        guard let handler else {
            try check { mcp_hub_on_event(handle, nil, nil, nil, $0) }
            return
        }
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(HubEventBox(handler, finish: nil))
        try check { mcp_hub_on_event(handle, hubEventThunk, ud, releaseUserdata, $0) }
    }

    /// The hub's events as an `AsyncStream` (it replaces any listener). The stream finishes when
    /// the listener is replaced or the hub is freed; it keeps the newest `limit` events unread.
    public func events(bufferingNewest limit: Int = 256) throws -> AsyncStream<JSON> {
        let (stream, continuation) = AsyncStream<JSON>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let ud = retainedUserdata(HubEventBox({ continuation.yield($0) }, finish: { continuation.finish() }))
        try check { mcp_hub_on_event(handle, hubEventThunk, ud, releaseUserdata, $0) }
        return stream
    }

    /// Closes every member: their servers are shut down, started calls fail with
    /// `MCPError.closed`, later calls too. Idempotent; not from the listener.
    public func close() {
        var err: OpaquePointer? = nil
        _ = mcp_hub_close(handle, &err)
        mcp_error_free(err)
    }
}

final class HubEventBox: CallbackBox {
    let fn: @Sendable (JSON) -> Void
    let finish: (@Sendable () -> Void)?
    init(_ fn: @escaping @Sendable (JSON) -> Void, finish: (@Sendable () -> Void)?) {
        self.fn = fn
        self.finish = finish
    }
    deinit { finish?() }
}

let hubEventThunk: mcp_hub_event_fn = { userdata, event in
    guard let userdata, let event else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! HubEventBox
    if let value = try? JSON.parse(String(cString: event)) { box.fn(value) }
}

/// Runs a hub operation with no started form on a dispatch queue and awaits it.
private func offTask<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// The async API: the calls are started calls (Task cancellation cancels them at once); start,
/// list, setMember and removeMember wait on a dispatch queue.
extension Hub {
    public func start() async throws {
        try await offTask { try self.start() }
    }

    public func list(_ kind: ListKind) async throws -> JSON {
        try await offTask { try self.list(kind) }
    }

    public func setMember(_ name: String, config: JSON) async throws {
        try await offTask { try self.setMember(name, config: config) }
    }

    public func removeMember(_ name: String) async throws {
        try await offTask { try self.removeMember(name) }
    }

    public func tools() async throws -> [JSON] { try await list(.tools)["tools"]?.arrayValue ?? [] }

    public func callTool(_ name: String, arguments: JSON? = nil, timeout: Double? = nil, cancel: CancelToken? = nil,
                         options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (n, a) = (try s.c(name), try s.json(arguments))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_hub_call_tool_start(handle, n, a, o, done, ud, out, err)
                }
            }
        }
    }

    public func getPrompt(_ name: String, arguments: [String: String]? = nil, timeout: Double? = nil,
                          cancel: CancelToken? = nil, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (n, a) = (try s.c(name), try s.json(arguments.map { JSON.object($0.mapValues { .string($0) }) }))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_hub_get_prompt_start(handle, n, a, o, done, ud, out, err)
                }
            }
        }
    }

    public func readResource(server: String, uri: String, timeout: Double? = nil, cancel: CancelToken? = nil,
                             options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (sv, u) = (try s.c(server), try s.c(uri))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_hub_read_resource_start(handle, sv, u, o, done, ud, out, err)
                }
            }
        }
    }
}
