import CMCPClient
import Foundation

/// One started call (`mcp_*_start`) awaited by a Task: the library completes it exactly once on
/// the client's dispatcher thread (`callDone`), which resumes the continuation; no thread waits.
/// Task cancellation cancels the call (`mcp_call_cancel`), whose completion then follows at once.
final class StartedCall: @unchecked Sendable {  // every mutable field is guarded by `lock`
    private let lock = NSLock()
    private var call: OpaquePointer?
    private var cancelled = false
    private var continuation: CheckedContinuation<JSON, Error>?
    private var kept: [AnyObject] = []

    /// Calls started and not yet completed (the tests wait for and check it).
    private static let counter = Guarded(0)
    static var inFlight: Int { counter.with { $0 } }

    init(_ continuation: CheckedContinuation<JSON, Error>) {
        self.continuation = continuation
        Self.counter.with { $0 += 1 }
    }

    /// Keeps `object` (a progress box, a cancel token) alive until the completion.
    func keep(_ object: AnyObject) {
        lock.lock()
        defer { lock.unlock() }
        kept.append(object)
    }

    /// The start succeeded: a cancel that came first is passed on now.
    func started(_ handle: OpaquePointer?) {
        lock.lock()
        call = handle
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow, let handle { mcp_call_cancel(handle) }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let handle = call
        lock.unlock()
        if let handle { mcp_call_cancel(handle) }
    }

    func complete(_ outcome: Result<JSON, Error>) {
        lock.lock()
        let c = continuation
        continuation = nil
        kept.removeAll()
        lock.unlock()
        Self.counter.with { $0 -= 1 }
        c?.resume(with: outcome)
    }

    // Only after the completion (the userdata reference is released by then), so freeing
    // cannot cancel the call.
    deinit { mcp_call_free(call) }
}

/// Every started call's completion: the userdata is a retained `StartedCall`, released here
/// (the library runs it exactly once). Result and error are borrowed: read them now.
let callDone: mcp_call_done_fn = { userdata, status, result, length, error in
    guard let userdata else { return }
    let call = Unmanaged<StartedCall>.fromOpaque(userdata).takeRetainedValue()
    if status == MCP_OK {
        call.complete(Result { try JSON.parse(string(result, length: length)) })
    } else {
        call.complete(.failure(MCPError.read(status: status, error: error)))
    }
}

typealias CallOut = UnsafeMutablePointer<OpaquePointer?>

/// A value behind a lock.
final class Guarded<T>: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func with<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Starts a call with `start(call, done, userdata, callOut, errOut)` and awaits its completion.
/// A Task cancelled before or during the call ends it with `MCPError.cancelled`.
func startCall(
    _ start: (StartedCall, mcp_call_done_fn, UnsafeMutableRawPointer, CallOut, ErrOut) throws -> mcp_status
) async throws -> JSON {
    let slot = Guarded<StartedCall?>(nil)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSON, Error>) in
            let call = StartedCall(continuation)
            slot.with { $0 = call }
            let userdata = Unmanaged.passRetained(call).toOpaque()
            var handle: OpaquePointer? = nil
            var err: OpaquePointer? = nil
            let status: mcp_status
            do {
                status = try start(call, callDone, userdata, &handle, &err)
            } catch {
                Unmanaged<StartedCall>.fromOpaque(userdata).release()
                call.complete(.failure(error))
                return
            }
            if status != MCP_OK {  // a failed start never completes: the userdata is still ours
                Unmanaged<StartedCall>.fromOpaque(userdata).release()
                call.complete(.failure(MCPError.take(status: status, error: err)))
                return
            }
            call.started(handle)
            // A Task cancelled before this point ran onCancel with an empty slot: pass it on.
            if Task.isCancelled { call.cancel() }
        }
    } onCancel: {
        slot.with { $0 }?.cancel()
    }
}

/// The async API: every call is a started call completed through a continuation (no thread per
/// call). Cancelling the Task cancels the call at once (`MCPError.cancelled`); a `cancel` token
/// in the options cancels it too.
extension Client {
    @discardableResult
    public func connect(options: CallOptions = CallOptions()) async throws -> ServerInfo {
        ServerInfo(try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                try options.withC(s, for: call) { o in mcp_client_connect_start(handle, o, done, ud, out, err) }
            }
        })
    }

    public func list(_ kind: ListKind, cursor: String? = nil, options: CallOptions = CallOptions()) async throws
        -> JSON
    {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let c = try s.c(cursor)
                return try options.withC(s, for: call) { o in
                    mcp_client_list_start(handle, kind.c, c, o, done, ud, out, err)
                }
            }
        }
    }

    public func listAll(_ kind: ListKind, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                try options.withC(s, for: call) { o in mcp_client_list_all_start(handle, kind.c, o, done, ud, out, err) }
            }
        }
    }

    public func callTool(
        _ name: String, arguments: JSON? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (n, a, r, st) = (try s.c(name), try s.json(arguments), try s.json(inputResponses), try s.c(requestState))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_client_call_tool_start(handle, n, a, r, st, o, done, ud, out, err)
                }
            }
        }
    }

    public func getPrompt(
        _ name: String, arguments: [String: String]? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let args = arguments.map { JSON.object($0.mapValues { .string($0) }) }
                let (n, a, r, st) = (try s.c(name), try s.json(args), try s.json(inputResponses), try s.c(requestState))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_client_get_prompt_start(handle, n, a, r, st, o, done, ud, out, err)
                }
            }
        }
    }

    public func readResource(
        _ uri: String, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (u, r, st) = (try s.c(uri), try s.json(inputResponses), try s.c(requestState))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_client_read_resource_start(handle, u, r, st, o, done, ud, out, err)
                }
            }
        }
    }

    public func complete(_ params: JSON, timeout: Double? = nil, cancel: CancelToken? = nil,
                         options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let p = try s.json(params)
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_client_complete_start(handle, p, o, done, ud, out, err)
                }
            }
        }
    }

    public func request(_ method: String, params: JSON? = nil, timeout: Double? = nil, cancel: CancelToken? = nil,
                        options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (m, p) = (try s.c(method), try s.json(params))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: call) { o in
                    mcp_client_request_start(handle, m, p, o, done, ud, out, err)
                }
            }
        }
    }

    /// Legacy `ping` as a started call (`MCPError` with status `unsupported` on modern servers).
    public func ping(options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                try options.withC(s, for: call) { o in mcp_client_ping_start(handle, o, done, ud, out, err) }
            }
        }
    }

    /// The server log level as a started call; an unknown level fails before anything is sent.
    public func setLogLevel(_ level: String, options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let l = try s.c(level)
                return try options.withC(s, for: call) { o in
                    mcp_client_set_log_level_start(handle, l, o, done, ud, out, err)
                }
            }
        }
    }

    public func tools() async throws -> [JSON] { try await listAll(.tools)["tools"]?.arrayValue ?? [] }
    public func prompts() async throws -> [JSON] { try await listAll(.prompts)["prompts"]?.arrayValue ?? [] }
    public func resources() async throws -> [JSON] { try await listAll(.resources)["resources"]?.arrayValue ?? [] }
    public func resourceTemplates() async throws -> [JSON] {
        try await listAll(.resourceTemplates)["resourceTemplates"]?.arrayValue ?? []
    }

    /// Legacy `resources/subscribe` as a started call.
    public func subscribeResource(_ uri: String, options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let u = try s.c(uri)
                return try options.withC(s, for: call) { o in
                    mcp_client_subscribe_resource_start(handle, u, o, done, ud, out, err)
                }
            }
        }
    }

    /// Legacy `resources/unsubscribe` as a started call.
    public func unsubscribeResource(_ uri: String, options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let u = try s.c(uri)
                return try options.withC(s, for: call) { o in
                    mcp_client_unsubscribe_resource_start(handle, u, o, done, ud, out, err)
                }
            }
        }
    }

    /// Tells a legacy server the roots changed (no-op on modern servers), as a started call.
    public func notifyRootsChanged() async throws {
        _ = try await startCall { _, done, ud, out, err in
            mcp_client_notify_roots_changed_start(handle, done, ud, out, err)
        }
    }

    /// `skills/list` (every page, checked) as a started call.
    public func listSkills(options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                try options.withC(s, for: call) { o in mcp_client_list_skills_start(handle, o, done, ud, out, err) }
            }
        }
    }

    /// `skills/get` as a started call.
    public func getSkill(_ uri: String, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let u = try s.c(uri)
                return try options.withC(s, for: call) { o in mcp_client_get_skill_start(handle, u, o, done, ud, out, err) }
            }
        }
    }

    /// The verified read of a skill file as a started call.
    public func readSkillFile(_ entry: JSON, fileURI: String? = nil, options: CallOptions = CallOptions()) async throws
        -> JSON
    {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (e, f) = (try s.json(entry), try s.c(fileURI))
                return try options.withC(s, for: call) { o in
                    mcp_client_read_skill_file_start(handle, e, f, o, done, ud, out, err)
                }
            }
        }
    }

    /// Opens `subscriptions/listen` and returns the subscription once the server acknowledged,
    /// as a started call (`mcp_client_listen_start`): Task cancellation gives the listen up.
    public func listen(_ filter: JSON, options: CallOptions = CallOptions()) async throws -> Subscription {
        let made = Guarded<OpaquePointer?>(nil)  // the handle comes with the start
        do {
            _ = try await startCall { call, done, ud, out, err in
                try withCStrings { s in
                    let f = try s.json(filter)
                    return try options.withC(s, for: call) { o in
                        var sub: OpaquePointer? = nil
                        let status = mcp_client_listen_start(handle, f, o, done, ud, &sub, out, err)
                        made.with { $0 = sub }
                        return status
                    }
                }
            }
        } catch {
            if let sub = made.with({ $0 }) { mcp_subscription_free(sub) }  // never acknowledged
            throw error
        }
        guard let sub = made.with({ $0 }) else { throw MCPError.invalid("mcp_client_listen_start returned no subscription") }
        return Subscription(sub)
    }
}

extension Subscription {
    /// Waits for the next notification; nil when `timeout` (seconds) passed first. A started
    /// read (`mcp_subscription_next_start`): Task cancellation ends it at once with
    /// `MCPError.cancelled`, leaving the subscription open.
    public func next(timeout: Double? = nil) async throws -> SubscriptionEvent? {
        let ms = Self.milliseconds(timeout)
        do {
            return Self.event(try await startCall { _, done, ud, out, err in
                mcp_subscription_next_start(handle, ms, done, ud, out, err)
            })
        } catch MCPError.timeout {
            return nil
        }
    }

    /// The notifications as an async sequence; it finishes when the subscription ends.
    public var events: AsyncThrowingStream<SubscriptionEvent, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    while true {
                        if let event = try await self.next() { continuation.yield(event) }
                    }
                } catch MCPError.closed {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
