import CMCPClient
import Foundation

/// Which protocol era to speak. `.auto` probes `server/discover` and falls back to `initialize`.
public enum Mode: String, Sendable {
    case auto, modern, legacy
}

/// The era a connected client speaks.
public enum Era: Sendable, Equatable {
    case notConnected, modern, legacy
}

/// Settings shared by both transports (the flat JSON configuration of the library).
public struct ClientOptions: Sendable {
    public var mode: Mode = .auto
    /// Pins one protocol version (e.g. "2025-06-18"); overrides `mode`.
    public var protocolVersion: String?
    /// Default per-request timeout in seconds (library default 60; ≤ 0: none).
    public var requestTimeout: Double?
    /// How long the auto mode waits for `server/discover` (library default 5 s).
    public var probeTimeout: Double?
    /// `input_required` rounds driven automatically (library default 10).
    public var inputRequiredMaxRounds: Int?
    public var maxPages: Int?
    public var clientInfo: JSON?
    /// Overrides the capabilities otherwise derived from the registered handlers.
    public var capabilities: JSON?
    /// Response caching (SEP-2549; library default on). `false` turns it off client-wide.
    public var responseCache: Bool?
    /// Bound on cached entries (library default 512; 0 turns caching off).
    public var responseCacheMaxEntries: Int?
    /// Check tool results against their `outputSchema` (library default on).
    public var validateOutputSchema: Bool?
    /// Input kinds answered by hand, without a handler ("elicitation", "elicitation.url",
    /// "sampling", "roots"): declared, so servers send their `input_required` round, and the call
    /// throws `MCPError.inputRequired` whose `unanswered` lists what to answer (key `manual_input`).
    public var manualInput: [String]?
    /// Declares the tasks extension (SEP-2663): a `callTool` the server answers with a task
    /// follows it to its result (key `tasks`; see `onTaskStatus`, `resumeTask`).
    public var tasks: Bool?
    /// Declares `sampling.tools` (SEP-1577) with sampling: the `onSampling` handler's params may
    /// carry `tools` and `toolChoice`, and its answer `tool_use` content, each naming an offered
    /// tool with an `id` and an object `input` (key `sampling_tools`).
    public var samplingTools: Bool?
    /// Declares the MCP Apps extension (SEP-1865): the host renders `text/html;profile=mcp-app`
    /// views (key `apps`; see `toolUI`, `Client.readApp`).
    public var apps: Bool?
    /// Any other configuration key, passed through as is.
    public var extra: [String: JSON] = [:]

    public init(
        mode: Mode = .auto, protocolVersion: String? = nil, requestTimeout: Double? = nil,
        probeTimeout: Double? = nil, inputRequiredMaxRounds: Int? = nil
    ) {
        self.mode = mode
        self.protocolVersion = protocolVersion
        self.requestTimeout = requestTimeout
        self.probeTimeout = probeTimeout
        self.inputRequiredMaxRounds = inputRequiredMaxRounds
    }

    func apply(to config: inout [String: JSON]) {
        if mode != .auto { config["mode"] = .string(mode.rawValue) }
        if let protocolVersion { config["protocol_version"] = .string(protocolVersion) }
        if let requestTimeout { config["request_timeout_ms"] = .int(max(0, Int64(requestTimeout * 1000))) }
        if let probeTimeout { config["probe_timeout_ms"] = .int(max(0, Int64(probeTimeout * 1000))) }
        if let inputRequiredMaxRounds { config["input_required_max_rounds"] = .int(Int64(inputRequiredMaxRounds)) }
        if let maxPages { config["max_pages"] = .int(Int64(maxPages)) }
        if let clientInfo { config["client_info"] = clientInfo }
        if let capabilities { config["capabilities"] = capabilities }
        if let responseCache { config["response_cache"] = .bool(responseCache) }
        if let responseCacheMaxEntries { config["response_cache_max_entries"] = .int(Int64(responseCacheMaxEntries)) }
        if let validateOutputSchema { config["validate_output_schema"] = .bool(validateOutputSchema) }
        if let manualInput { config["manual_input"] = .array(manualInput.map { .string($0) }) }
        if let tasks { config["tasks"] = .bool(tasks) }
        if let samplingTools { config["sampling_tools"] = .bool(samplingTools) }
        if let apps { config["apps"] = .bool(apps) }
        for (k, v) in extra { config[k] = v }
    }
}

/// One progress notification of a call.
public struct ProgressUpdate: Sendable {
    public let progress: Double
    public let total: Double?
    public let message: String?
}

/// How one call uses the response cache (SEP-2549: `server/discover`, the lists, `readResource`).
public enum CacheMode: UInt32, Sendable {
    /// A fresh entry answers; otherwise ask the server and store its answer (default).
    case use = 0
    /// Always ask the server, then store its answer.
    case refresh = 1
    /// Always ask the server and store nothing.
    case bypass = 2
}

/// Per-call options.
public struct CallOptions: @unchecked Sendable {
    /// Response cache use for cacheable methods.
    public var cacheMode: CacheMode = .use
    /// `callTool`: `false` skips the check of `structuredContent` against the tool's `outputSchema`.
    public var validateOutput = true
    /// Per-request timeout in seconds: nil uses the client default; ≤ 0 or `.infinity`: none.
    /// It also bounds a call's wait for a task (then `.timeout`, and tasks/cancel is sent).
    public var timeout: Double?
    /// Cap for the whole call (MRTR rounds and progress resets included), in seconds. When it
    /// ends the wait for a task, the task is left running (`resumeTask` follows it again).
    public var maxTotal: Double?
    /// Restart the timeout on each progress notification.
    public var resetTimeoutOnProgress = false
    /// Cancels the call when cancelled.
    public var cancel: CancelToken?
    /// Extra `_meta` entries.
    public var meta: JSON?
    /// Modern servers: this request's log level ("debug" … "emergency").
    public var logLevel: String?
    /// Called on the client's dispatcher thread for each progress notification, never after the
    /// call returns.
    public var onProgress: (@Sendable (ProgressUpdate) -> Void)?

    public init(
        timeout: Double? = nil, maxTotal: Double? = nil, resetTimeoutOnProgress: Bool = false,
        cancel: CancelToken? = nil, meta: JSON? = nil, logLevel: String? = nil,
        onProgress: (@Sendable (ProgressUpdate) -> Void)? = nil
    ) {
        self.timeout = timeout
        self.maxTotal = maxTotal
        self.resetTimeoutOnProgress = resetTimeoutOnProgress
        self.cancel = cancel
        self.meta = meta
        self.logLevel = logLevel
        self.onProgress = onProgress
    }

    /// These options with the explicit per-call arguments layered on top.
    func with(timeout: Double?, cancel: CancelToken?) -> CallOptions {
        var o = self
        if let timeout { o.timeout = timeout }
        if let cancel { o.cancel = cancel }
        return o
    }

    /// Calls `body` with a C view of these options, valid for the duration of the call. For a
    /// started call (`call`), what the library may still use after `body` returns (the progress
    /// box, the cancel token) is kept by the call until its completion.
    func withC<R>(_ strings: CStrings, for call: StartedCall? = nil,
                  _ body: (UnsafePointer<mcp_call_opts>) throws -> R) throws -> R {
        var opts = mcp_call_opts()
        let initialised = mcp_call_opts_init(&opts, UInt32(MCP_CALL_OPTS_VERSION))
        if initialised != MCP_OK {
            throw MCPError.invalid("the library does not know this header's mcp_call_opts version")
        }
        opts.timeout_ms = milliseconds(timeout)
        opts.max_total_ms = maxTotal.map { max(1, Int64($0 * 1000)) } ?? 0
        opts.reset_timeout_on_progress = resetTimeoutOnProgress
        opts.cancel = cancel?.handle
        opts.meta_json = try strings.json(meta)
        opts.log_level = try strings.c(logLevel)
        opts.cache_mode = cacheMode.rawValue
        opts.skip_output_validation = !validateOutput
        var progressBox: Unmanaged<ProgressBox>? = nil
        if let onProgress {
            let box = Unmanaged.passRetained(ProgressBox(onProgress))
            progressBox = box
            call?.keep(box.takeUnretainedValue())
            opts.on_progress = progressThunk
            opts.progress_userdata = box.toOpaque()
        }
        // The library calls on_progress only while the call runs: release the box afterwards
        // (a started call keeps its own reference until it completed).
        defer { progressBox?.release() }
        if let cancel { call?.keep(cancel) }
        return try withExtendedLifetime(cancel) { try body(&opts) }
    }
}

final class ProgressBox {
    let fn: @Sendable (ProgressUpdate) -> Void
    init(_ fn: @escaping @Sendable (ProgressUpdate) -> Void) { self.fn = fn }
}

private let progressThunk: mcp_progress_fn = { userdata, progress, total, message in
    guard let userdata else { return }
    let box = Unmanaged<ProgressBox>.fromOpaque(userdata).takeUnretainedValue()
    box.fn(ProgressUpdate(progress: progress, total: total.isNaN ? nil : total, message: message.map { String(cString: $0) }))
}

/// A cancellation token: cancelling it cancels every call using it, now and later. Thread-safe.
public final class CancelToken: @unchecked Sendable {
    let handle: OpaquePointer

    public init() {
        guard let h = mcp_cancel_token_new() else { fatalError("mcp_cancel_token_new failed") }
        handle = h
    }

    /// Idempotent; any thread (handlers included).
    public func cancel() { mcp_cancel_token_cancel(handle) }

    public var isCancelled: Bool { mcp_cancel_token_is_cancelled(handle) }

    deinit { mcp_cancel_token_free(handle) }
}

/// List kinds for `Client.list` and `Client.listAll`.
public enum ListKind: Sendable {
    case tools, prompts, resources, resourceTemplates

    var c: Int32 {
        switch self {
        case .tools: return MCP_LIST_TOOLS
        case .prompts: return MCP_LIST_PROMPTS
        case .resources: return MCP_LIST_RESOURCES
        case .resourceTemplates: return MCP_LIST_RESOURCE_TEMPLATES
        }
    }

    /// The key of the merged array in `listAll` results.
    public var key: String {
        switch self {
        case .tools: return "tools"
        case .prompts: return "prompts"
        case .resources: return "resources"
        case .resourceTemplates: return "resourceTemplates"
        }
    }
}

/// What `connect()` returns.
public struct ServerInfo: Sendable {
    public let era: Era
    public let protocolVersion: String
    public let capabilities: JSON
    /// `{"name": ..., "version": ...}`
    public let serverInfo: JSON
    public let instructions: String?
    /// The server's raw discover / initialize result.
    public let raw: JSON
    /// The whole document as the library returned it.
    public let json: JSON

    init(_ json: JSON) {
        self.json = json
        switch json["era"]?.stringValue {
        case "modern": era = .modern
        case "legacy": era = .legacy
        default: era = .notConnected
        }
        protocolVersion = json["protocolVersion"]?.stringValue ?? ""
        capabilities = json["capabilities"] ?? .object([:])
        serverInfo = json["serverInfo"] ?? .null
        instructions = json["instructions"]?.stringValue
        raw = json["raw"] ?? .null
    }
}
