import CMCPClient
import Foundation

// URL-mode elicitation and the tasks extension (SEP-2663). Manual input mode
// is `ClientOptions.manualInput`; its errors carry `InputRequiredError.unanswered`.

/// The elicitation modes a handler answers (`MCP_ELICITATION_FORM`, `MCP_ELICITATION_URL`).
public struct ElicitationModes: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Form mode: `requestedSchema`, answered with `content`.
    public static let form = ElicitationModes(rawValue: UInt32(MCP_ELICITATION_FORM))
    /// URL mode: the user opens `url` out of band; an `accept` carries no `content` (dropped).
    public static let url = ElicitationModes(rawValue: UInt32(MCP_ELICITATION_URL))
}

/// A listener given one JSON object (a task status, a span).
final class JSONListenerBox: CallbackBox {
    let fn: @Sendable (JSON) -> Void
    init(_ fn: @escaping @Sendable (JSON) -> Void) { self.fn = fn }
}

let jsonListenerThunk: mcp_task_status_fn = { userdata, task, length in
    guard let userdata else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! JSONListenerBox
    box.fn((try? JSON.parse(string(task, length: length))) ?? .object([:]))
}

extension Client {
    // MARK: URL-mode elicitation

    /// Registers the `elicitation/create` handler for `modes` and declares exactly those
    /// (`elicitation: {"url": {}}` for `.url` alone). A request in another mode is never handed
    /// to the handler: servers that check capabilities answer -32021 (`MCPStatus.capabilityMissing`),
    /// others leave it to the host (`MCPError.inputRequired` listing it in `unanswered`). Throws
    /// with `MCPStatus.invalidArg`, registering nothing, for no mode (`[]`) or a mode the
    /// configuration's `capabilities` override does not declare.
    public func onElicitation(modes: ElicitationModes, _ handler: @escaping @Sendable (JSON) throws -> JSON) throws {
        try registerElicitation(modes, InputHandlerBox { request in answer(request.responder) { try handler(request.params) } })
    }

    /// As `onElicitation(modes:_:)`, replying later through the request's `Responder`.
    public func onElicitation(modes: ElicitationModes, deferred handler: @escaping @Sendable (InputRequest) -> Void) throws {
        try registerElicitation(modes, InputHandlerBox(handler))
    }

    /// As `onElicitation(modes:_:)`, with an async handler run in its own Task.
    public func onElicitation(modes: ElicitationModes, async handler: @escaping @Sendable (JSON) async throws -> JSON) throws {
        try registerElicitation(modes, asyncInputBox(handler))
    }

    private func registerElicitation(_ modes: ElicitationModes, _ box: InputHandlerBox) throws {
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(box)
        try check { mcp_client_on_elicitation_modes(handle, modes.rawValue, inputThunk, ud, releaseUserdata, $0) }
    }

    // MARK: tasks extension

    /// The task status listener (nil removes it): on the dispatcher thread, the task object
    /// (`taskId`, `status`, `statusMessage`, ...) of every task any call follows, on each change
    /// of status or status message. Keep `taskId` to `resumeTask` it, in this process or another.
    public func onTaskStatus(_ handler: (@Sendable (JSON) -> Void)?) throws {
        guard let handler else {
            try check { mcp_client_on_task_status(handle, nil, nil, nil, $0) }
            return
        }
        let ud = retainedUserdata(JSONListenerBox(handler))
        try check { mcp_client_on_task_status(handle, jsonListenerThunk, ud, releaseUserdata, $0) }
    }

    /// Follows task `id` to its end as `callTool` would (input through the handlers; cancelling
    /// sends `tasks/cancel`); returns the `CallToolResult`. A failed task throws `.rpc` with its
    /// error, a cancelled one `.cancelled`, an unknown id `.rpc` -32602.
    public func resumeTask(_ id: String, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let i = try s.c(id)
            return try options.withC(s) { o in try checkJSON { mcp_client_resume_task(handle, i, o, $0, $1) } }
        }
    }

    /// One `tasks/get`: the task as the server has it now.
    public func getTask(_ id: String, options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let i = try s.c(id)
            return try options.withC(s) { o in try checkJSON { mcp_client_get_task(handle, i, o, $0, $1) } }
        }
    }

    /// `tasks/cancel` (cooperative: the task ends as `cancelled` when the server gets to it).
    public func cancelTask(_ id: String, options: CallOptions = CallOptions()) throws {
        try withCStrings { s in
            let i = try s.c(id)
            try options.withC(s) { o in try check { mcp_client_cancel_task(handle, i, o, $0) } }
        }
    }

    /// `tasks/update` with `answers` (key → answer) gathered by hand after `.inputRequired` from
    /// a followed task (manual input mode); the task then goes on.
    public func updateTask(_ id: String, answers: JSON, options: CallOptions = CallOptions()) throws {
        try withCStrings { s in
            let (i, a) = (try s.c(id), try s.json(answers))
            try options.withC(s) { o in try check { mcp_client_update_task(handle, i, a, o, $0) } }
        }
    }

    // The async forms are started calls (`mcp_client_*_task_start`): no thread waits; Task
    // cancellation cancels the call (a cancelled resume sends `tasks/cancel`).

    public func resumeTask(_ id: String, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let i = try s.c(id)
                return try options.withC(s, for: call) { o in
                    mcp_client_resume_task_start(handle, i, o, done, ud, out, err)
                }
            }
        }
    }

    public func getTask(_ id: String, options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let i = try s.c(id)
                return try options.withC(s, for: call) { o in mcp_client_get_task_start(handle, i, o, done, ud, out, err) }
            }
        }
    }

    public func cancelTask(_ id: String, options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let i = try s.c(id)
                return try options.withC(s, for: call) { o in
                    mcp_client_cancel_task_start(handle, i, o, done, ud, out, err)
                }
            }
        }
    }

    public func updateTask(_ id: String, answers: JSON, options: CallOptions = CallOptions()) async throws {
        _ = try await startCall { call, done, ud, out, err in
            try withCStrings { s in
                let (i, a) = (try s.c(id), try s.json(answers))
                return try options.withC(s, for: call) { o in
                    mcp_client_update_task_start(handle, i, a, o, done, ud, out, err)
                }
            }
        }
    }
}
