import CMCPClient
import Foundation

/// The three kinds of server requests a host can answer.
public enum InputKind: Sendable {
    /// `elicitation/create` (reply with an `ElicitResult`: `{"action": "accept", "content": {...}}`)
    case elicitation
    /// `sampling/createMessage` (reply with a `CreateMessageResult`)
    case sampling
    /// `roots/list` (reply with a `ListRootsResult`: `{"roots": [{"uri": ...}]}`)
    case roots
}

/// Completes one server request (an input: `reply`, `fail(code:message:)`) or one authorization
/// (the OAuth browser step: `reply(redirectURL:)`, `fail(_:)`), now or later, from any thread.
/// Exactly one reply counts; a Responder released without a reply fails the request
/// (`MCPError.handlerFailed`, or `MCPError.authRequired` for an authorization).
public final class Responder: @unchecked Sendable {
    private let lock = NSLock()
    private var handle: OpaquePointer?

    init(_ handle: OpaquePointer) { self.handle = handle }

    private func take() throws -> OpaquePointer {
        lock.lock()
        defer { lock.unlock() }
        guard let h = handle else { throw MCPError.invalid("this responder was already completed") }
        handle = nil
        return h
    }

    /// Answers with a result object. Throws `MCPError.cancelled` when the answer is no longer
    /// wanted (the call was cancelled, timed out or the client closed); the reply is consumed
    /// either way.
    public func reply(_ result: JSON) throws {
        try reply(json: result.text)
    }

    /// Answers with a result object given as JSON text.
    public func reply(json: String) throws {
        let h = try take()
        if json.utf8.contains(0) {
            _ = mcp_responder_reply_error(h, -32603, "the handler's reply contained NUL", nil)
            throw MCPError.invalid("the reply contained NUL")
        }
        try json.withCString { text in try check { mcp_responder_reply_json(h, text, $0) } }
    }

    /// Fails the input with a JSON-RPC error code and message.
    public func fail(code: Int64 = -32603, message: String) throws {
        let h = try take()
        let clean = message.replacingOccurrences(of: "\u{0}", with: " ")
        try clean.withCString { text in try check { mcp_responder_reply_error(h, code, text, $0) } }
    }

    /// Authorization: completes the flow with the URL the browser was redirected to (with `code`,
    /// `state` and maybe `iss`); the library checks `state` and `iss` and exchanges the code.
    /// Throws `MCPError.cancelled` when the answer is no longer wanted; consumed either way.
    public func reply(redirectURL: String) throws {
        let h = try take()
        if redirectURL.utf8.contains(0) {
            _ = mcp_responder_reply_error(h, 0, "the redirect URL contained NUL", nil)
            throw MCPError.invalid("the redirect URL contained NUL")
        }
        try redirectURL.withCString { url in try check { mcp_responder_reply_url(h, url, $0) } }
    }

    /// Authorization: ends the flow (the user cancelled, no browser could open); the waiting call
    /// throws `MCPError.authRequired` with `message` (nil: a generic one).
    public func fail(_ message: String? = nil) throws {
        let h = try take()
        guard let message else {
            try check { mcp_responder_reply_error(h, 0, nil, $0) }
            return
        }
        let clean = message.replacingOccurrences(of: "\u{0}", with: " ")
        try clean.withCString { text in try check { mcp_responder_reply_error(h, 0, text, $0) } }
    }

    /// True once the answer is no longer wanted (or this responder was completed).
    public var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let h = handle else { return true }
        return mcp_responder_is_cancelled(h)
    }

    /// Runs `handler` once, on the client's dispatcher thread, when the answer stops being wanted
    /// (the call was cancelled, timed out or closed, a sibling input failed, the authorization
    /// flow ended) — at once if that already happened — so a handler answering later need not
    /// poll `isCancelled`. Never after a reply; the responder must still be answered (a reply then
    /// throws `MCPError.cancelled`). One hook per responder: a new one replaces the old.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) throws {
        lock.lock()
        defer { lock.unlock() }
        guard let h = handle else { return }  // already answered: the hook could never run
        let ud = retainedUserdata(CancelHookBox(handler))
        try check { mcp_responder_on_cancel(h, cancelHookThunk, ud, releaseUserdata, $0) }
    }

    /// True once a reply was sent.
    public var isCompleted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return handle == nil
    }

    deinit {
        if let h = handle {
            _ = mcp_responder_reply_error(h, -32603, "the Swift handler released its Responder without replying", nil)
        }
    }
}

/// A server request handed to a deferred handler: reply through `responder`, from any thread.
public struct InputRequest: Sendable {
    /// "elicitation/create", "sampling/createMessage" or "roots/list".
    public let method: String
    /// The request's params (`{}` when the server sent none).
    public let params: JSON
    public let responder: Responder
}

/// Holds a handler closure for the library (userdata); every form defers the responder first, so
/// the reply may come from anywhere.
final class InputHandlerBox: CallbackBox {
    let run: (InputRequest) -> Void
    init(_ run: @escaping (InputRequest) -> Void) { self.run = run }
}

let inputThunk: mcp_input_fn = { userdata, method, params, length, responder in
    guard let userdata, let responder else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! InputHandlerBox
    mcp_responder_defer(responder)
    let text = string(params, length: length)
    let request = InputRequest(
        method: method.map { String(cString: $0) } ?? "",
        params: (try? JSON.parse(text)) ?? .object([:]),
        responder: Responder(responder))
    box.run(request)
}

/// The box of an async handler: each request runs in its own Task, whose result is the reply;
/// the Task is cancelled when the answer stops being wanted (the library's pushed cancellation).
func asyncInputBox(_ handler: @escaping @Sendable (JSON) async throws -> JSON) -> InputHandlerBox {
    InputHandlerBox { request in
        let task = Task.detached {
            do {
                let result = try await handler(request.params)
                answer(request.responder) { result }
            } catch {
                answer(request.responder) { throw error }
            }
        }
        try? request.responder.onCancel { task.cancel() }
    }
}

final class CancelHookBox: CallbackBox {
    let fn: @Sendable () -> Void
    init(_ fn: @escaping @Sendable () -> Void) { self.fn = fn }
}

let cancelHookThunk: mcp_responder_cancel_fn = { userdata in
    guard let userdata else { return }
    (Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! CancelHookBox).fn()
}

/// Answers `responder` with the outcome of a handler.
func answer(_ responder: Responder, with outcome: () throws -> JSON) {
    do {
        let result = try outcome()
        try? responder.reply(result)
    } catch let e as HandlerError {
        try? responder.fail(code: e.code, message: e.message)
    } catch {
        try? responder.fail(code: -32603, message: "\(error)")
    }
}

final class NotificationBox: CallbackBox {
    let fn: @Sendable (String, JSON) -> Void
    init(_ fn: @escaping @Sendable (String, JSON) -> Void) { self.fn = fn }
}

let notificationThunk: mcp_notification_fn = { userdata, method, params, length in
    guard let userdata else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! NotificationBox
    let text = string(params, length: length)
    box.fn(method.map { String(cString: $0) } ?? "", (try? JSON.parse(text)) ?? .object([:]))
}

/// A line from the server's stderr (`source` "stderr") or a library warning ("transport", "client").
public struct LogLine: Sendable {
    public let level: String
    public let source: String
    public let message: String
}

final class LogBox: CallbackBox {
    let fn: @Sendable (LogLine) -> Void
    init(_ fn: @escaping @Sendable (LogLine) -> Void) { self.fn = fn }
}

let logThunk: mcp_log_fn = { userdata, level, source, message in
    guard let userdata else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! LogBox
    box.fn(LogLine(
        level: level.map { String(cString: $0) } ?? "",
        source: source.map { String(cString: $0) } ?? "",
        message: message.map { String(cString: $0) } ?? ""))
}
