import CMCPClient
import Foundation

/// A model API's function-calling format.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// OpenAI Chat Completions `tools`.
    case openAIChat = "openai-chat"
    /// OpenAI Responses `tools`.
    case openAIResponses = "openai-responses"
    /// Anthropic Messages `tools`.
    case anthropic
    /// Gemini `functionDeclarations`.
    case gemini
}

/// Tools for the model (`mcp_export_*`): a tool list in the OpenAI, Anthropic or Gemini
/// function-calling format, the model's tool calls found in its reply, and results as the
/// API's tool-result messages. Dispatch is on a `Client` or a `Hub`
/// (`dispatchToolCall(_:call:)`). Pure functions: any thread.
///
///     let exported = try ModelTools.export(client.tools(), format: .anthropic)
///     // send exported["tools"] to the API; then, for its reply:
///     for call in try ModelTools.calls(in: reply, exported: exported) {
///         let message = try client.dispatchToolCall(exported, call: call)  // a tool_result block
///     }
public enum ModelTools {
    /// Exports `tools` (a `tools/list` result, its `tools` array, or a hub's merged list,
    /// whose tools name their member in `_meta`) to `format`. `strict`: OpenAI strict mode
    /// where a schema allows it; `origins`: `{listed name: {"server", "tool"}}`. Returns
    /// `{"format", "tools", "routes", "report"}`: send `tools` to the API, keep the whole value
    /// for `calls(in:exported:)` and dispatch. A tool the format cannot take is left out and its
    /// report entry says why.
    public static func export(_ tools: JSON, format: ExportFormat = .openAIChat, strict: Bool = false,
                              geminiLegacyParameters: Bool = false, describeTitle: Bool = false,
                              describeAnnotations: Bool = false, maxRefDepth: Int? = nil,
                              origins: JSON? = nil) throws -> JSON {
        var options: [String: JSON] = ["format": .string(format.rawValue)]
        if strict { options["strict"] = .bool(true) }
        if geminiLegacyParameters { options["gemini_legacy_parameters"] = .bool(true) }
        if describeTitle { options["describe_title"] = .bool(true) }
        if describeAnnotations { options["describe_annotations"] = .bool(true) }
        if let maxRefDepth { options["max_ref_depth"] = .int(Int64(maxRefDepth)) }
        return try withCStrings { s in
            let (t, o, g) = (try s.c(tools.text), try s.c(JSON.object(options).text), try s.json(origins))
            return try checkJSON { mcp_export_tools(t, o, g, $0, $1) }
        }
    }

    /// The tool calls in a model's `reply` (a message or response as the API returned it, a
    /// list of content blocks or parts, or one call), each as the API shaped it.
    public static func calls(in reply: JSON, exported: JSON) throws -> [JSON] {
        try withCStrings { s in
            let (e, r) = (try s.c(exported.text), try s.c(reply.text))
            return try checkJSON { mcp_export_calls(e, r, $0, $1) }.arrayValue ?? []
        }
    }

    /// The API's tool-result message answering `call` with `result`, a `CallToolResult` the
    /// host got itself (`maxChars` cuts long text and says so).
    public static func resultMessage(_ exported: JSON, call: JSON, result: JSON,
                                     options: DispatchOptions = DispatchOptions()) throws -> JSON {
        try withCStrings { s in
            let (e, c, r, o) = (try s.c(exported.text), try s.c(call.text), try s.c(result.text),
                                try s.json(options.json))
            return try checkJSON { mcp_export_result(e, c, r, o, $0, $1) }
        }
    }
}

/// How a model's call is answered: `maxChars` cuts long text (with an explicit marker),
/// `resourcesAsText` puts resource links and embedded resources in as text, `images` keeps
/// image blocks where the format takes them, `errorsAsResults: false` throws protocol errors
/// and timeouts instead of answering the model with them.
public struct DispatchOptions: Sendable {
    public var maxChars: Int?
    public var resourcesAsText: Bool
    public var images: Bool
    public var errorsAsResults: Bool

    public init(maxChars: Int? = nil, resourcesAsText: Bool = true, images: Bool = true,
                errorsAsResults: Bool = true) {
        self.maxChars = maxChars
        self.resourcesAsText = resourcesAsText
        self.images = images
        self.errorsAsResults = errorsAsResults
    }

    /// The options JSON (nil: every default).
    var json: JSON? {
        var o: [String: JSON] = [:]
        if let maxChars { o["max_chars"] = .int(Int64(maxChars)) }
        if !resourcesAsText { o["resources_as_text"] = .bool(false) }
        if !images { o["images"] = .bool(false) }
        if !errorsAsResults { o["errors_as_results"] = .bool(false) }
        return o.isEmpty ? nil : .object(o)
    }
}

extension Client {
    /// Makes one model tool call (`call`: one call in the format of `exported`) and returns the
    /// API's tool-result message. The arguments are checked against the tool's input schema
    /// first; an unknown tool, bad arguments, a tool error, a protocol error or a timeout is a
    /// message the model reads, unless `dispatch.errorsAsResults` is false.
    public func dispatchToolCall(_ exported: JSON, call: JSON, dispatch: DispatchOptions = DispatchOptions(),
                                 timeout: Double? = nil, cancel: CancelToken? = nil,
                                 options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (e, c, d) = (try s.c(exported.text), try s.c(call.text), try s.json(dispatch.json))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_client_export_dispatch(handle, e, c, d, o, $0, $1) }
            }
        }
    }

    /// `dispatchToolCall` as a started call: cancelling the Task cancels it.
    public func dispatchToolCall(_ exported: JSON, call: JSON, dispatch: DispatchOptions = DispatchOptions(),
                                 timeout: Double? = nil, cancel: CancelToken? = nil,
                                 options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { started, done, ud, out, err in
            try withCStrings { s in
                let (e, c, d) = (try s.c(exported.text), try s.c(call.text), try s.json(dispatch.json))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: started) { o in
                    mcp_client_export_dispatch_start(handle, e, c, d, o, done, ud, out, err)
                }
            }
        }
    }
}

extension Hub {
    /// `Client.dispatchToolCall` on a hub: the call goes to the member the export's route names
    /// (`ModelTools.export` of `list(.tools)` routes each namespaced name back to its member
    /// and the tool's own name there), under that member's state, call cap and tool filter. A
    /// name the export lacks, a tool the filter withholds or a member the hub no longer has is a
    /// message the model reads too.
    public func dispatchToolCall(_ exported: JSON, call: JSON, dispatch: DispatchOptions = DispatchOptions(),
                                 timeout: Double? = nil, cancel: CancelToken? = nil,
                                 options: CallOptions = CallOptions()) throws -> JSON {
        try withCStrings { s in
            let (e, c, d) = (try s.c(exported.text), try s.c(call.text), try s.json(dispatch.json))
            return try options.with(timeout: timeout, cancel: cancel).withC(s) { o in
                try checkJSON { mcp_hub_export_dispatch(handle, e, c, d, o, $0, $1) }
            }
        }
    }

    /// `dispatchToolCall` as a started call: cancelling the Task cancels it.
    public func dispatchToolCall(_ exported: JSON, call: JSON, dispatch: DispatchOptions = DispatchOptions(),
                                 timeout: Double? = nil, cancel: CancelToken? = nil,
                                 options: CallOptions = CallOptions()) async throws -> JSON {
        try await startCall { started, done, ud, out, err in
            try withCStrings { s in
                let (e, c, d) = (try s.c(exported.text), try s.c(call.text), try s.json(dispatch.json))
                return try options.with(timeout: timeout, cancel: cancel).withC(s, for: started) { o in
                    mcp_hub_export_dispatch_start(handle, e, c, d, o, done, ud, out, err)
                }
            }
        }
    }
}
