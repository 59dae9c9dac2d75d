import CMCPClient
import Foundation

/// One notification delivered to a subscription.
public struct SubscriptionEvent: Sendable {
    public let method: String
    public let params: JSON
}

/// A live `subscriptions/listen`. Read it from one thread at a time; `cancel()` may come from
/// any thread. Stays valid after its client is closed or freed (it then ends).
public final class Subscription: @unchecked Sendable {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { mcp_subscription_free(handle) }

    /// The filter the server acknowledged (the subset it honours).
    public func acknowledged() throws -> JSON {
        try checkJSON { mcp_subscription_acknowledged(handle, $0, $1) }
    }

    /// Waits up to `timeout` seconds (nil: no limit) for the next notification. Returns nil when
    /// none arrived in time; throws `MCPError.closed` once the subscription ended gracefully and
    /// another error when it ended with one.
    public func next(timeout: Double? = nil) throws -> SubscriptionEvent? {
        let ms = Self.milliseconds(timeout)
        do {
            return Self.event(try checkJSON { mcp_subscription_next(handle, ms, $0, $1) })
        } catch MCPError.timeout {
            return nil
        }
    }

    /// Seconds → `timeout_ms` of a read: nil → no limit (-1), ≤ 0 → a poll (0).
    static func milliseconds(_ timeout: Double?) -> Int64 {
        timeout.map { $0 <= 0 ? 0 : Int64(($0 * 1000).rounded()) } ?? -1
    }

    static func event(_ json: JSON) -> SubscriptionEvent {
        SubscriptionEvent(method: json["method"]?.stringValue ?? "", params: json["params"] ?? .null)
    }

    /// Ends the subscription (the server is told).
    public func cancel() throws {
        try check { mcp_subscription_cancel(handle, $0) }
    }
}
