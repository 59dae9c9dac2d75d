import Foundation

/// Runs a blocking library call on a thread of its own (never on the cooperative pool) and maps
/// Task cancellation to `token`, which the call uses. A Task already cancelled fails at once with
/// `MCPError.cancelled` (the library refuses calls on a cancelled token).
func offload<T>(_ token: CancelToken, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            // The work (and the client it captures) is dropped before the thread ends: Foundation
            // releases a Thread's closure from a thread-exit destructor, and the last reference to
            // a Client must not be released there (mcp_client_free would run after the thread's
            // Rust thread-locals are gone).
            let work = WorkSlot(body)
            let thread = Thread {
                let result = Result { try work.take()() }
                continuation.resume(with: result)
            }
            thread.name = "mcp-swift-call"
            thread.start()
        }
    } onCancel: {
        token.cancel()
    }
}

/// Holds a closure until it is taken (once).
final class WorkSlot<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var body: (@Sendable () throws -> T)?
    init(_ body: @escaping @Sendable () throws -> T) { self.body = body }
    func take() -> @Sendable () throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let b = body!
        body = nil
        return b
    }
}

/// The async API: each method runs its blocking counterpart on its own thread. Cancelling the
/// Task cancels the call (through the `cancel` token when one is given, which then stays
/// cancelled, else through a fresh token).
extension Client {
    private func token(_ explicit: CancelToken?, _ options: CallOptions) -> CancelToken {
        explicit ?? options.cancel ?? CancelToken()
    }

    @discardableResult
    public func connect() async throws -> ServerInfo {
        // Connecting takes no cancel token: Task cancellation closes the client instead.
        try await withTaskCancellationHandler {
            try await offload(CancelToken()) { try self.connect() as ServerInfo }
        } onCancel: {
            self.close()
        }
    }

    public func list(_ kind: ListKind, cursor: String? = nil, options: CallOptions = CallOptions()) async throws
        -> JSON
    {
        let t = token(nil, options)
        return try await offload(t) { try self.list(kind, cursor: cursor, options: options.with(timeout: nil, cancel: t)) }
    }

    public func listAll(_ kind: ListKind, options: CallOptions = CallOptions()) async throws -> JSON {
        let t = token(nil, options)
        return try await offload(t) { try self.listAll(kind, options: options.with(timeout: nil, cancel: t)) }
    }

    public func callTool(
        _ name: String, arguments: JSON? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        let t = token(cancel, options)
        return try await offload(t) {
            try self.callTool(name, arguments: arguments, inputResponses: inputResponses, requestState: requestState,
                              timeout: timeout, cancel: t, options: options)
        }
    }

    public func getPrompt(
        _ name: String, arguments: [String: String]? = nil, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        let t = token(cancel, options)
        return try await offload(t) {
            try self.getPrompt(name, arguments: arguments, inputResponses: inputResponses, requestState: requestState,
                               timeout: timeout, cancel: t, options: options)
        }
    }

    public func readResource(
        _ uri: String, inputResponses: JSON? = nil, requestState: String? = nil,
        timeout: Double? = nil, cancel: CancelToken? = nil, options: CallOptions = CallOptions()
    ) async throws -> JSON {
        let t = token(cancel, options)
        return try await offload(t) {
            try self.readResource(uri, inputResponses: inputResponses, requestState: requestState, timeout: timeout,
                                  cancel: t, options: options)
        }
    }

    public func complete(_ params: JSON, timeout: Double? = nil, cancel: CancelToken? = nil,
                         options: CallOptions = CallOptions()) async throws -> JSON {
        let t = token(cancel, options)
        return try await offload(t) { try self.complete(params, timeout: timeout, cancel: t, options: options) }
    }

    public func request(_ method: String, params: JSON? = nil, timeout: Double? = nil, cancel: CancelToken? = nil,
                        options: CallOptions = CallOptions()) async throws -> JSON {
        let t = token(cancel, options)
        return try await offload(t) {
            try self.request(method, params: params, timeout: timeout, cancel: t, options: options)
        }
    }

    public func listen(_ filter: JSON, options: CallOptions = CallOptions()) async throws -> Subscription {
        let t = token(nil, options)
        return try await offload(t) { try self.listen(filter, options: options.with(timeout: nil, cancel: t)) }
    }
}

extension Subscription {
    /// Waits for the next notification; nil when `timeout` (seconds) passed first. Task
    /// cancellation ends the wait (within about 100 ms) with `MCPError.cancelled`, leaving the
    /// subscription open.
    public func next(timeout: Double? = nil) async throws -> SubscriptionEvent? {
        let stop = CancelToken()  // used only as a thread-safe flag here
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        return try await offload(stop) {
            while true {
                if stop.isCancelled {
                    throw MCPError.cancelled(MCPErrorInfo(status: MCPStatus.cancelled, message: "the Task was cancelled"))
                }
                var slice = 0.1
                if let deadline {
                    let left = deadline.timeIntervalSinceNow
                    if left <= 0 { return nil }
                    slice = min(slice, left)
                }
                if let event = try self.next(timeout: slice) as SubscriptionEvent? { return event }
            }
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
