import CMCPClient
import Foundation

// W3C trace context (SEP-414) through the C ABI's callback: no tracing dependency here. A host
// using swift-distributed-tracing injects its ServiceContext with its instrument into a
// `TraceContext` in the source closure.

/// W3C trace context: `traceparent`, and optionally `tracestate` and `baggage`, in their W3C
/// formats; empty strings are absent.
public struct TraceContext: Sendable, Equatable {
    public var traceparent: String
    public var tracestate: String
    public var baggage: String
    public init(traceparent: String = "", tracestate: String = "", baggage: String = "") {
        self.traceparent = traceparent
        self.tracestate = tracestate
        self.baggage = baggage
    }
}

final class TraceSourceBox: CallbackBox {
    let fn: @Sendable () -> TraceContext?
    init(_ fn: @escaping @Sendable () -> TraceContext?) { self.fn = fn }
}

let traceThunk: mcp_trace_context_fn = { userdata, slot in
    guard let userdata, let slot else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! TraceSourceBox
    guard let t = box.fn() else { return }
    let cut = { (s: String) in s.utf8.contains(0) ? "\u{1}" : s } // a NUL makes the value invalid, not shorter
    cut(t.traceparent).withCString { p in
        cut(t.tracestate).withCString { s in
            cut(t.baggage).withCString { b in
                // An invalid value is remembered by the slot and fails the call (`.invalidArg`).
                _ = mcp_trace_slot_set(slot, p, s, b, nil)
            }
        }
    }
}

extension Client {
    /// The host's current trace context (nil removes the source): asked on the calling thread
    /// at the start of each call whose `CallOptions.meta` has no `traceparent` or `baggage`;
    /// it goes on every request of the call (MRTR retries, task polls, pages, the retry after a
    /// reconnect). An invalid value makes the call throw with `MCPStatus.invalidArg`.
    public func setTraceContext(_ source: (@Sendable () -> TraceContext?)?) throws {
        guard let source else {
            try check { mcp_client_set_trace_context_fn(handle, nil, nil, nil, $0) }
            return
        }
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(TraceSourceBox(source))
        try check { mcp_client_set_trace_context_fn(handle, traceThunk, ud, releaseUserdata, $0) }
    }
}

extension Client {
    /// The span listener (nil removes it, and then nothing is built). Once per MCP operation
    /// this client sends, a span record: its CLIENT span by the OpenTelemetry semantic
    /// conventions for MCP (`record` "span", `name` such as "tools/call echo", `kind`,
    /// `start_unix_nano`, `end_unix_nano`, `attributes`, `events`, `status`, and `parent` when the
    /// call carried a trace context), given on the thread that completes the call before the
    /// call returns. Once per ended session, a session record (`record` "session", the value of
    /// `mcp.client.session.duration`), on the dispatcher thread. The JSON is the library's, whole:
    /// see docs/observability.md.
    public func onSpan(_ handler: (@Sendable (JSON) -> Void)?) throws {
        guard let handler else {
            try check { mcp_client_on_span(handle, nil, nil, nil, $0) }
            return
        }
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(JSONListenerBox(handler))
        try check { mcp_client_on_span(handle, jsonListenerThunk, ud, releaseUserdata, $0) }
    }
}

extension Hub {
    /// The hub's trace context source (nil removes it), for every member, present and added
    /// later: asked on the calling thread, by a call whose `CallOptions.meta` has no
    /// `traceparent` or `baggage`, once for each member request a blocking call sends (the
    /// routed request, and each member's list a merged list or the routing fetches); a started
    /// (`async`) call asks at most once, when it starts, and not when it can tell it sends
    /// nothing (a read its member's cache answers, a name the merged list does not have). What
    /// it gives goes in those requests' `_meta` and is their span records' `parent`. An invalid
    /// value makes the call throw with `MCPStatus.invalidArg`.
    public func setTraceContext(_ source: (@Sendable () -> TraceContext?)?) throws {
        guard let source else {
            try check { mcp_hub_set_trace_context_fn(handle, nil, nil, nil, $0) }
            return
        }
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(TraceSourceBox(source))
        try check { mcp_hub_set_trace_context_fn(handle, traceThunk, ud, releaseUserdata, $0) }
    }

    /// The hub's span listener (nil removes it): every member's span and session records, as
    /// `Client.onSpan` gives them, members added later included, each with the attribute
    /// `mcp.server.name` (its member). A blocking call's records come on the calling thread
    /// before it returns; a started call's before its completion.
    public func onSpan(_ handler: (@Sendable (JSON) -> Void)?) throws {
        guard let handler else {
            try check { mcp_hub_on_span(handle, nil, nil, nil, $0) }
            return
        }
        // The library owns this reference and releases it exactly once, even on failure.
        let ud = retainedUserdata(JSONListenerBox(handler))
        try check { mcp_hub_on_span(handle, jsonListenerThunk, ud, releaseUserdata, $0) }
    }
}
