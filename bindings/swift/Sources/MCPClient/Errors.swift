import CMCPClient

/// The library's status codes (`mcp_status`), under Swift names. Stable: never renumbered.
public enum MCPStatus {
    public static let ok = MCP_OK
    public static let nullArg = MCP_NULL_ARG
    public static let invalidUTF8 = MCP_INVALID_UTF8
    public static let invalidJSON = MCP_INVALID_JSON
    public static let invalidArg = MCP_INVALID_ARG
    public static let closed = MCP_CLOSED
    public static let reentrantCall = MCP_REENTRANT_CALL
    /// The client has not connected yet (thrown as `.other`); distinct from `closed`.
    public static let notConnected = MCP_NOT_CONNECTED
    public static let unsupported = MCP_UNSUPPORTED
    public static let forked = MCP_FORKED
    public static let io = MCP_IO
    public static let timeout = MCP_TIMEOUT
    public static let cancelled = MCP_CANCELLED
    public static let serverExited = MCP_SERVER_EXITED
    public static let httpStatus = MCP_HTTP_STATUS
    public static let authRequired = MCP_AUTH_REQUIRED
    public static let messageTooLarge = MCP_MESSAGE_TOO_LARGE
    public static let jsonrpcError = MCP_JSONRPC_ERROR
    public static let protocolViolation = MCP_PROTOCOL_VIOLATION
    public static let versionMismatch = MCP_VERSION_MISMATCH
    public static let capabilityMissing = MCP_CAPABILITY_MISSING
    public static let inputRequired = MCP_INPUT_REQUIRED
    public static let inputRoundsExceeded = MCP_INPUT_ROUNDS_EXCEEDED
    public static let handlerFailed = MCP_HANDLER_FAILED
    public static let urlElicitationRequired = MCP_URL_ELICITATION_REQUIRED
    /// A skill file or entry failed the SEP-2640 checks (thrown as `.other`); no content returned.
    public static let skillVerificationFailed = MCP_SKILL_VERIFICATION_FAILED
    /// A tool's `structuredContent` does not match its declared `outputSchema` (thrown as
    /// `.outputSchemaInvalid`).
    public static let outputSchemaInvalid = MCP_OUTPUT_SCHEMA_INVALID
    /// Tool pinning withholds the tool (thrown as `.other`): its definition is not the pinned
    /// one, or it is new; `Client.approveToolPin` lets it through.
    public static let toolPinChanged = MCP_TOOL_PIN_CHANGED
    public static let `internal` = MCP_INTERNAL
    public static let panic = MCP_PANIC

    /// The library's English text for a status ("the server exited or closed the connection").
    public static func describe(_ status: Int32) -> String {
        String(cString: mcp_status_str(status))
    }

    /// The name of a status's C constant ("MCP_TIMEOUT" for `timeout`), or "MCP_UNKNOWN" for a
    /// value that is no status.
    public static func name(_ status: Int32) -> String {
        String(cString: mcp_status_name(status))
    }
}

/// What every failure carries: the status, the library's message, when the server answered
/// with a JSON-RPC error object its code and data, and when an HTTP answer caused the failure its
/// status and `WWW-Authenticate` challenge.
public struct MCPErrorInfo: Sendable, CustomStringConvertible {
    public let status: Int32
    public let message: String
    public let rpcCode: Int64?
    public let dataJSON: String?
    /// The HTTP status of the answer that caused the error (`.authRequired`: 401 or 403; HTTP
    /// transport errors), or nil.
    public let httpStatus: Int?
    /// `.authRequired`: the server's `WWW-Authenticate` challenge (several joined with ", "), or
    /// nil. It never holds credentials.
    public let wwwAuthenticate: String?
    /// `.authRequired`: the registered OAuth error code an authorization server answered
    /// (`invalid_grant`, `invalid_scope`, `unauthorized_client`, …), or nil.
    public let oauthError: String?

    public init(status: Int32, message: String, rpcCode: Int64? = nil, dataJSON: String? = nil,
                httpStatus: Int? = nil, wwwAuthenticate: String? = nil, oauthError: String? = nil) {
        self.status = status
        self.message = message
        self.rpcCode = rpcCode
        self.dataJSON = dataJSON
        self.httpStatus = httpStatus
        self.wwwAuthenticate = wwwAuthenticate
        self.oauthError = oauthError
    }

    /// The status as text, e.g. "timed out".
    public var statusText: String { MCPStatus.describe(status) }

    /// The name of the status's C constant, e.g. "MCP_TIMEOUT".
    public var statusName: String { MCPStatus.name(status) }

    public var description: String { "\(message) [status \(status): \(statusText)]" }
}

/// An `input_required` result that no handler answered (or that kept coming back): the server's
/// input requests, its opaque request state (byte-exact) and the raw result. Retry the same call
/// with `inputResponses:` (keyed as `inputRequests`) and `requestState:`.
public struct InputRequiredError: Error, Sendable, CustomStringConvertible {
    public let info: MCPErrorInfo
    /// The `inputRequests` map as JSON text (`{}` when the server sent none).
    public let inputRequestsJSON: String
    /// The opaque `requestState`, byte-exact, or nil when the server sent none.
    public let requestState: String?
    /// The raw `input_required` result as JSON text.
    public let resultJSON: String
    /// The entries of `inputRequests` no registered handler answers (all of them in manual input
    /// mode), as JSON text; `{}` for `.inputRoundsExceeded`.
    public var unansweredJSON: String = "{}"

    /// `unansweredJSON`, parsed: key → `{"method": ..., "params": ...}`.
    public var unanswered: [String: JSON] {
        (try? JSON.parse(unansweredJSON))?.objectValue ?? [:]
    }

    /// The `inputRequests` map, parsed: key → `{"method": ..., "params": ...}`.
    public var inputRequests: [String: JSON] {
        (try? JSON.parse(inputRequestsJSON))?.objectValue ?? [:]
    }

    public var result: JSON { (try? JSON.parse(resultJSON)) ?? .null }

    public var description: String { info.description }
}

/// A tool result whose `structuredContent` does not match the `outputSchema` the tool declared
/// in `tools/list` (or is missing): `info.message` says where, `resultJSON` is the raw result.
/// Skip the check with `CallOptions.validateOutput = false` or `ClientOptions.validateOutputSchema`.
public struct OutputSchemaError: Error, Sendable, CustomStringConvertible {
    public let info: MCPErrorInfo
    /// The tool's raw `CallToolResult` as JSON text.
    public let resultJSON: String

    public var result: JSON { (try? JSON.parse(resultJSON)) ?? .null }
    public var description: String { info.description }
}

/// A legacy server's -32042 (`MCP_URL_ELICITATION_REQUIRED`): open the URLs of `elicitations`
/// (each `{"mode": "url", "elicitationId", "url", "message"}`), then retry the call.
public struct URLElicitationRequiredError: Error, Sendable, CustomStringConvertible {
    public let info: MCPErrorInfo
    /// The `data.elicitations` array as JSON text.
    public let elicitationsJSON: String

    public var elicitations: [JSON] { (try? JSON.parse(elicitationsJSON))?.arrayValue ?? [] }
    public var description: String { info.description }
}

/// Every failure the binding throws.
public enum MCPError: Error, Sendable, CustomStringConvertible {
    /// `MCP_INPUT_REQUIRED`: answer by hand and retry (see `InputRequiredError`).
    case inputRequired(InputRequiredError)
    /// `MCP_INPUT_ROUNDS_EXCEEDED`: more rounds than `inputRequiredMaxRounds`; carries the last.
    case inputRoundsExceeded(InputRequiredError)
    /// `MCP_JSONRPC_ERROR`: the server answered with a JSON-RPC error object; `message` is its
    /// `error.message` exactly as sent.
    case rpc(code: Int64, message: String, dataJSON: String?)
    /// `MCP_TIMEOUT`
    case timeout(MCPErrorInfo)
    /// `MCP_CANCELLED`: a cancel token (or the async Task) was cancelled.
    case cancelled(MCPErrorInfo)
    /// `MCP_CLOSED`: the client was closed (before or during the call).
    case closed(MCPErrorInfo)
    /// `MCP_HANDLER_FAILED`: an input handler failed, replied badly or released its responder.
    case handlerFailed(MCPErrorInfo)
    /// `MCP_SERVER_EXITED`: the server process died; the message names its exit status.
    case serverExited(MCPErrorInfo)
    /// `MCP_AUTH_REQUIRED`: the server answered 401/403 and no authorization could be obtained
    /// (no `oauth` configured, the authorization handler failed or released its responder, the
    /// user cancelled); `info.httpStatus` and `info.wwwAuthenticate` carry the server's answer.
    case authRequired(MCPErrorInfo)
    /// `MCP_OUTPUT_SCHEMA_INVALID`: see `OutputSchemaError`.
    case outputSchemaInvalid(OutputSchemaError)
    /// `MCP_URL_ELICITATION_REQUIRED`: see `URLElicitationRequiredError`.
    case urlElicitationRequired(URLElicitationRequiredError)
    /// Any other status (invalid arguments, I/O, protocol violations, reentrant calls, ...).
    case other(MCPErrorInfo)

    /// Status, message, JSON-RPC code and data, whatever the case.
    public var info: MCPErrorInfo {
        switch self {
        case .inputRequired(let e), .inputRoundsExceeded(let e): return e.info
        case .outputSchemaInvalid(let e): return e.info
        case .urlElicitationRequired(let e): return e.info
        case .rpc(let code, let message, let data):
            return MCPErrorInfo(status: MCPStatus.jsonrpcError, message: message, rpcCode: code, dataJSON: data)
        case .timeout(let i), .cancelled(let i), .closed(let i), .handlerFailed(let i), .serverExited(let i),
            .authRequired(let i), .other(let i):
            return i
        }
    }

    public var status: Int32 { info.status }
    public var message: String { info.message }
    /// The HTTP status behind the failure, when there was one (see `MCPErrorInfo.httpStatus`).
    public var httpStatus: Int? { info.httpStatus }
    /// The server's `WWW-Authenticate` challenge, for `.authRequired`.
    public var wwwAuthenticate: String? { info.wwwAuthenticate }
    /// The OAuth error code behind an authorization failure, for `.authRequired`.
    public var oauthError: String? { info.oauthError }

    public var description: String {
        switch self {
        case .rpc(let code, let message, let data):
            return "JSON-RPC error \(code): \(message)" + (data.map { " data: \($0)" } ?? "")
        default:
            return info.description
        }
    }

    /// Builds the error for `status` from an `mcp_error` (read completely, then freed).
    static func take(status: Int32, error: OpaquePointer?) -> MCPError {
        defer { mcp_error_free(error) }
        return read(status: status, error: error)
    }

    /// Builds the error for `status` from a borrowed `mcp_error` (a completion's; not freed).
    static func read(status: Int32, error: OpaquePointer?) -> MCPError {
        let message = error.flatMap { mcp_error_message($0) }.map { String(cString: $0) } ?? MCPStatus.describe(status)
        var code: Int64 = 0
        let rpcCode: Int64? = (error != nil && mcp_error_jsonrpc_code(error, &code)) ? code : nil
        let data = error.flatMap { mcp_error_data_json($0) }.map { String(cString: $0) }
        let rpcMessage = error.flatMap { mcp_error_jsonrpc_message($0) }.map { String(cString: $0) }
        var http: UInt16 = 0
        let httpStatus: Int? = (error != nil && mcp_error_http_status(error, &http)) ? Int(http) : nil
        let challenge = error.flatMap { mcp_error_www_authenticate($0) }.map { String(cString: $0) }
        let oauthError = error.flatMap { mcp_error_oauth_error($0) }.map { String(cString: $0) }
        let info = MCPErrorInfo(status: status, message: message, rpcCode: rpcCode, dataJSON: data,
                                httpStatus: httpStatus, wwwAuthenticate: challenge, oauthError: oauthError)
        switch status {
        case MCPStatus.inputRequired, MCPStatus.inputRoundsExceeded:
            var input = InputRequiredError(
                info: info,
                inputRequestsJSON: error.flatMap { mcp_error_input_requests_json($0) }.map { String(cString: $0) }
                    ?? "{}",
                requestState: error.flatMap { mcp_error_request_state($0) }.map { String(cString: $0) },
                resultJSON: error.flatMap { mcp_error_result_json($0) }.map { String(cString: $0) } ?? "null")
            input.unansweredJSON = error.flatMap { mcp_error_unanswered_json($0) }.map { String(cString: $0) } ?? "{}"
            return status == MCPStatus.inputRequired ? .inputRequired(input) : .inputRoundsExceeded(input)
        case MCPStatus.outputSchemaInvalid:
            return .outputSchemaInvalid(OutputSchemaError(
                info: info,
                resultJSON: error.flatMap { mcp_error_result_json($0) }.map { String(cString: $0) } ?? "null"))
        case MCPStatus.urlElicitationRequired:
            return .urlElicitationRequired(URLElicitationRequiredError(
                info: info,
                elicitationsJSON: error.flatMap { mcp_error_elicitations_json($0) }.map { String(cString: $0) } ?? "[]"))
        case MCPStatus.jsonrpcError: return .rpc(code: rpcCode ?? 0, message: rpcMessage ?? message, dataJSON: data)
        case MCPStatus.timeout: return .timeout(info)
        case MCPStatus.cancelled: return .cancelled(info)
        case MCPStatus.closed: return .closed(info)
        case MCPStatus.handlerFailed: return .handlerFailed(info)
        case MCPStatus.serverExited: return .serverExited(info)
        case MCPStatus.authRequired: return .authRequired(info)
        default: return .other(info)
        }
    }

    static func invalid(_ message: String) -> MCPError {
        .other(MCPErrorInfo(status: MCPStatus.invalidArg, message: message))
    }
}

/// Throw this from an input handler to fail the input with a specific JSON-RPC code (legacy
/// servers receive it; modern calls end with `MCPError.handlerFailed`). Any other error thrown
/// from a handler fails the input with -32603 and the error's description.
public struct HandlerError: Error, Sendable {
    public let code: Int64
    public let message: String
    public init(code: Int64 = -32603, message: String) {
        self.code = code
        self.message = message
    }
}
