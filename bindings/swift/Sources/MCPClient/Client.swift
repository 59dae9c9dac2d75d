import CMCPClient
import Foundation

/// An MCP client over stdio (a server child process) or Streamable HTTP.
///
/// Thread-safe: calls from many threads are multiplexed over one connection. The blocking
/// methods block the calling thread; the `async` overloads are started calls (Async.swift):
/// nothing blocks while they wait, and cancelling the Task cancels the call. Handlers run on the
/// client's dispatcher thread, one at a time. `close()` wakes every blocked call and completes
/// every started one (`MCPError.closed`); deinit closes and frees.
///
/// `@unchecked Sendable`: the only stored property is the library's handle, an `OpaquePointer`,
/// which Swift does not consider `Sendable`; the library makes every `mcp_client_*` function safe
/// to call from any thread on one handle (it is never mutated from Swift), so sharing is sound.
///
/// Handlers are retained by the library until they are replaced or the client is freed, so a
/// handler that captures its own client strongly keeps it alive: capture it `weak`.
public final class Client: @unchecked Sendable {
    let handle: OpaquePointer

    /// A client from the library's flat JSON configuration (keys `command`, `args`, `env`, `cwd`,
    /// `url`, `headers`, `bearer_token`, `mode`, `request_timeout_ms`, ...).
    public init(config: JSON) throws {
        guard abiChecked else {
            throw MCPError.other(MCPErrorInfo(
                status: MCPStatus.internal,
                message: "libmcp_client ABI \(mcp_abi_version()) does not match the header's \(MCP_ABI_VERSION)"))
        }
        var cfg: OpaquePointer? = nil
        try withCStrings { s in
            let text = try s.c(config.text)
            try check { mcp_config_new(text, &cfg, $0) }
        }
        defer { mcp_config_free(cfg) }
        var client: OpaquePointer? = nil
        try check { mcp_client_new(cfg, &client, $0) }
        guard let client else { throw MCPError.invalid("mcp_client_new returned no client") }
        handle = client
    }

    /// A stdio client: starts `command` (a PATH name or a path) with `args` on `connect()`.
    public convenience init(
        stdio command: String, args: [String] = [], env: [String: String] = [:], replaceEnvironment: Bool = false,
        cwd: String? = nil, options: ClientOptions = ClientOptions()
    ) throws {
        var config: [String: JSON] = ["command": .string(command), "args": .array(args.map { .string($0) })]
        if !env.isEmpty { config["env"] = .object(env.mapValues { .string($0) }) }
        if replaceEnvironment { config["env_mode"] = "replace" }
        if let cwd { config["cwd"] = .string(cwd) }
        options.apply(to: &config)
        try self.init(config: .object(config))
    }

    /// A Streamable HTTP client for `url` (http or https), sending `headers` and, when given,
    /// `Authorization: Bearer <bearerToken>` with every request.
    ///
    /// `oauth` (the configuration's "oauth" object) authorizes through OAuth 2.1 instead when the
    /// server answers 401: e.g. `[:]` (dynamic registration, the loopback listener) or
    /// `["client_id": "app", "client_secret": "…", "issuer": "https://as.example", "scopes": ["mcp"]]`
    /// (a secret or key needs the issuer it belongs to); keys `grant`,
    /// `client_id`, `client_secret`, `token_endpoint_auth_method`, `issuer`,
    /// `client_metadata_url`, `redirect_uri`, `loopback_port`, `scopes`, `offline_access`,
    /// `authorization_timeout_ms`, ... (see `mcp_config_set_oauth`). Register `onAuthorization`
    /// for the browser step and `setTokenStore` to keep credentials.
    public convenience init(
        http url: String, headers: [String: String] = [:], bearerToken: String? = nil, oauth: JSON? = nil,
        options: ClientOptions = ClientOptions()
    ) throws {
        var config: [String: JSON] = ["url": .string(url)]
        if !headers.isEmpty { config["headers"] = .object(headers.mapValues { .string($0) }) }
        if let bearerToken { config["bearer_token"] = .string(bearerToken) }
        if let oauth { config["oauth"] = oauth }
        options.apply(to: &config)
        try self.init(config: .object(config))
    }

    deinit {
        // Closes, stops the dispatcher and releases every handler box (userdata_free).
        mcp_client_free(handle)
    }

    // MARK: lifecycle

    /// Connects (idempotent): starts the server and settles the era. `options` (a cancel token,
    /// `timeout` and `maxTotal` capping the whole connect) bound this wait.
    @discardableResult
    public func connect(options: CallOptions = CallOptions()) throws -> ServerInfo {
        try withCStrings { s in
            try options.withC(s) { o in ServerInfo(try checkJSON { mcp_client_connect(handle, o, $0, $1) }) }
        }
    }

    /// The server info of a connected client (`MCPStatus.notConnected`, as `.other`, before
    /// connecting).
    public func serverInfo() throws -> ServerInfo {
        ServerInfo(try checkJSON { mcp_client_server_info(handle, $0, $1) })
    }

    public var era: Era {
        switch mcp_client_era(handle) {
        case MCP_ERA_MODERN: return .modern
        case MCP_ERA_LEGACY: return .legacy
        default: return .notConnected
        }
    }

    /// Closes the connection: blocked calls fail with `MCPError.closed`, subscriptions end, the
    /// server is shut down. Idempotent; any thread, handlers included.
    public func close() {
        mcp_client_close(handle)
    }

    /// The authorization context the response cache files private entries under; a new value
    /// drops the old context's private entries (public ones stay shared).
    public func setCachePartition(_ partition: String) throws {
        try withCStrings { s in
            let p = try s.c(partition)
            try check { mcp_client_set_cache_partition(handle, p, $0) }
        }
    }

    /// Empties the response cache.
    public func clearCache() throws {
        try check { mcp_client_clear_cache(handle, $0) }
    }

    // MARK: calls

    /// One page of a list (`cursor`: the previous page's `nextCursor`); the raw list result.
    public func list(_ kind: ListKind, cursor: String? = nil, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let c = try s.c(cursor)
            return try options.withC(s) { o in try checkJSON { mcp_client_list(handle, kind.c, c, o, $0, $1) } }
        }
    }

    /// Every page of a list, merged: `{"tools": [...]}` (or prompts, resources, resourceTemplates).
    public func listAll(_ kind: ListKind, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            try options.withC(s) { o in try checkJSON { mcp_client_list_all(handle, kind.c, o, $0, $1) } }
        }
    }

    public func tools() throws -> [JSON] { try listAll(.tools)["tools"]?.arrayValue ?? [] }
    public func prompts() throws -> [JSON] { try listAll(.prompts)["prompts"]?.arrayValue ?? [] }
    public func resources() throws -> [JSON] { try listAll(.resources)["resources"]?.arrayValue ?? [] }
    public func resourceTemplates() throws -> [JSON] {
        try listAll(.resourceTemplates)["resourceTemplates"]?.arrayValue ?? []
    }

    /// `tools/call`; returns the `CallToolResult` (a tool error, `isError: true`, is a result,
    /// not a thrown error). Input requests go to the registered handlers; without one the call
    /// throws `MCPError.inputRequired`, and a retry passes `inputResponses` and `requestState`.
    public func callTool(
        _ name: String, arguments: JSON? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) throws -> JSON {
        try withCStrings { s in
            let (n, a, r, st) = (try s.c(name), try s.json(arguments), try s.json(inputResponses), try s.c(requestState))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_call_tool(handle, n, a, r, st, o, $0, $1) }
            }
        }
    }

    /// `prompts/get`; returns the `GetPromptResult`. MRTR as for `callTool`.
    public func getPrompt(
        _ name: String, arguments: [String: String]? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) throws -> JSON {
        try withCStrings { s in
            let args = arguments.map { JSON.object($0.mapValues { .string($0) }) }
            let (n, a, r, st) = (try s.c(name), try s.json(args), try s.json(inputResponses), try s.c(requestState))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_get_prompt(handle, n, a, r, st, o, $0, $1) }
            }
        }
    }

    /// `resources/read`; returns the `ReadResourceResult`. MRTR as for `callTool`.
    public func readResource(
        _ uri: String, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) throws -> JSON {
        try withCStrings { s in
            let (u, r, st) = (try s.c(uri), try s.json(inputResponses), try s.c(requestState))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_read_resource(handle, u, r, st, o, $0, $1) }
            }
        }
    }

    // MARK: skills extension (SEP-2640)

    /// Every page of `skills/list`, checked: `{"skills": [entry], "rejected": [{uri, reason,
    /// entry}]}`. Reads no skill file; `.other` with `MCPStatus.unsupported` when the server did
    /// not declare `io.modelcontextprotocol/skills`. Set `extra["skills"] = true` to declare it.
    public func listSkills(options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            try options.withC(s) { o in try checkJSON { mcp_client_list_skills(handle, o, $0, $1) } }
        }
    }

    /// `skills/get` for a `SKILL.md` URI: the checked entry.
    public func getSkill(_ uri: String, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let u = try s.c(uri)
            return try options.withC(s) { o in try checkJSON { mcp_client_get_skill(handle, u, o, $0, $1) } }
        }
    }

    /// Reads one file of the skill `entry` describes (`fileURI` nil: its `SKILL.md`, which loads
    /// the skill), verified against the entry (size, SHA-256, frontmatter): the content item. A
    /// mismatch, or a file the entry does not list, throws with `MCPStatus.skillVerificationFailed`.
    public func readSkillFile(_ entry: JSON, fileURI: String? = nil, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (e, f) = (try s.json(entry), try s.c(fileURI))
            return try options.withC(s) { o in try checkJSON { mcp_client_read_skill_file(handle, e, f, o, $0, $1) } }
        }
    }

    /// `completion/complete` with `{ref, argument, context?}`; returns the `CompleteResult`.
    public func complete(_ params: JSON, timeout: Double? = nil, cancel: CancelToken? = nil,
                         options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let p = try s.json(params)
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_complete(handle, p, o, $0, $1) }
            }
        }
    }

    /// Any request by method name (`params` gets the era's `_meta`); the raw result.
    public func request(_ method: String, params: JSON? = nil, timeout: Double? = nil, cancel: CancelToken? = nil,
                        options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (m, p) = (try s.c(method), try s.json(params))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_request(handle, m, p, o, $0, $1) }
            }
        }
    }

    /// Legacy `ping` (`MCPStatus.unsupported` on modern servers).
    public func ping(options: CallOptions = CallOptions()) throws {
        try withCStrings { s in try options.withC(s) { o in try check { mcp_client_ping(handle, o, $0) } } }
    }

    /// The server log level: legacy `logging/setLevel`; modern servers get it in later `_meta`.
    public func setLogLevel(_ level: String, options: CallOptions = CallOptions()) throws {
        try withCStrings { s in
            let l = try s.c(level)
            try options.withC(s) { o in try check { mcp_client_set_log_level(handle, l, o, $0) } }
        }
    }

    /// Legacy `resources/subscribe`; updates arrive at `onNotification`.
    public func subscribeResource(_ uri: String, options: CallOptions = CallOptions()) throws {
        try withCStrings { s in
            let u = try s.c(uri)
            try options.withC(s) { o in try check { mcp_client_subscribe_resource(handle, u, o, $0) } }
        }
    }

    /// Legacy `resources/unsubscribe`.
    public func unsubscribeResource(_ uri: String, options: CallOptions = CallOptions()) throws {
        try withCStrings { s in
            let u = try s.c(uri)
            try options.withC(s) { o in try check { mcp_client_unsubscribe_resource(handle, u, o, $0) } }
        }
    }

    /// Tells a legacy server the roots changed (no-op on modern servers).
    public func notifyRootsChanged() throws {
        try check { mcp_client_notify_roots_changed(handle, $0) }
    }

    /// Opens `subscriptions/listen` (modern) with a `SubscriptionFilter`, e.g.
    /// `["toolsListChanged": true, "resourceSubscriptions": ["file:///x"]]`.
    public func listen(_ filter: JSON, options: CallOptions = CallOptions()) throws -> Subscription {
        try withCStrings { s in
            let f = try s.json(filter)
            var sub: OpaquePointer? = nil
            try options.withC(s) { o in try check { mcp_client_listen(handle, f, o, &sub, $0) } }
            guard let sub else { throw MCPError.invalid("mcp_client_listen returned no subscription") }
            return Subscription(sub)
        }
    }

    // MARK: handlers

    /// Registers a handler that answers at once, on the dispatcher thread: return the result
    /// object, or throw (`HandlerError` for a specific code) to fail the input.
    public func setHandler(_ kind: InputKind, _ handler: @escaping @Sendable (JSON) throws -> JSON) throws {
        try register(kind, InputHandlerBox { request in answer(request.responder) { try handler(request.params) } })
    }

    /// Registers a handler that gets the request with its `Responder` and may reply later from
    /// any thread. Return quickly: handlers of one client run one at a time.
    public func setHandler(_ kind: InputKind, deferred handler: @escaping @Sendable (InputRequest) -> Void) throws {
        try register(kind, InputHandlerBox(handler))
    }

    /// Registers an async handler: it runs in its own Task and its result is the reply. The Task
    /// is cancelled when the answer stops being wanted (the library's pushed cancellation).
    public func setHandler(_ kind: InputKind, async handler: @escaping @Sendable (JSON) async throws -> JSON) throws {
        try register(kind, asyncInputBox(handler))
    }

    /// Unregisters the handler of `kind` (its capability is no longer declared).
    public func removeHandler(_ kind: InputKind) throws {
        try check { err in Self.registrar(kind)(handle, nil, nil, nil, err) }
    }

    public func onElicitation(_ handler: @escaping @Sendable (JSON) throws -> JSON) throws {
        try setHandler(.elicitation, handler)
    }
    public func onElicitation(deferred handler: @escaping @Sendable (InputRequest) -> Void) throws {
        try setHandler(.elicitation, deferred: handler)
    }
    public func onElicitation(async handler: @escaping @Sendable (JSON) async throws -> JSON) throws {
        try setHandler(.elicitation, async: handler)
    }
    /// Sampling (with tools under `ClientOptions.samplingTools`) and roots are deprecated by the
    /// 2026-07-28 specification (SEP-2577, removal no earlier than the first release after
    /// 2027-07-28); both keep working, on both eras.
    public func onSampling(_ handler: @escaping @Sendable (JSON) throws -> JSON) throws {
        try setHandler(.sampling, handler)
    }
    public func onSampling(deferred handler: @escaping @Sendable (InputRequest) -> Void) throws {
        try setHandler(.sampling, deferred: handler)
    }
    public func onRoots(_ handler: @escaping @Sendable (JSON) throws -> JSON) throws {
        try setHandler(.roots, handler)
    }

    /// Every server notification except progress: `(method, params)`, on the dispatcher thread.
    public func onNotification(_ handler: (@Sendable (String, JSON) -> Void)?) throws {
        guard let handler else {
            try check { mcp_client_set_notification_handler(handle, nil, nil, nil, $0) }
            return
        }
        let ud = retainedUserdata(NotificationBox(handler))
        try check { mcp_client_set_notification_handler(handle, notificationThunk, ud, releaseUserdata, $0) }
    }

    /// The server's stderr lines and the library's warnings, on the dispatcher thread.
    public func onLog(_ handler: (@Sendable (LogLine) -> Void)?) throws {
        guard let handler else {
            try check { mcp_client_set_log_handler(handle, nil, nil, nil, $0) }
            return
        }
        let ud = retainedUserdata(LogBox(handler))
        try check { mcp_client_set_log_handler(handle, logThunk, ud, releaseUserdata, $0) }
    }

    private typealias Registrar = (OpaquePointer?, mcp_input_fn?, UnsafeMutableRawPointer?, mcp_userdata_free_fn?,
                                   UnsafeMutablePointer<OpaquePointer?>?) -> mcp_status

    private static func registrar(_ kind: InputKind) -> Registrar {
        switch kind {
        case .elicitation: return { mcp_client_on_elicitation($0, $1, $2, $3, $4) }
        case .sampling: return { mcp_client_on_sampling($0, $1, $2, $3, $4) }
        case .roots: return { mcp_client_on_roots($0, $1, $2, $3, $4) }
        }
    }

    private func register(_ kind: InputKind, _ box: InputHandlerBox) throws {
        // The library owns this reference from here on and releases it (userdata_free) exactly
        // once, even when registration fails.
        let ud = retainedUserdata(box)
        try check { err in Self.registrar(kind)(handle, inputThunk, ud, releaseUserdata, err) }
    }
}
