import Foundation
import MCPClient
import XCTest

/// The trace context source: its members reach the server exactly, a call's own members win
/// without asking, an invalid value throws `.invalidArg`, and nil removes the source.
final class TraceTests: XCTestCase {
    func testTraceContextSource() throws {
        let client = try fixtureClient()
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let asked = Counter()
        try client.setTraceContext {
            asked.add()
            return TraceContext(traceparent: parent, tracestate: "rojo=1", baggage: "k=v")
        }
        let seen = try client.callTool("echo_meta")["structuredContent"]
        XCTAssertEqual(seen?["traceparent"]?.stringValue, parent)
        XCTAssertEqual(seen?["tracestate"]?.stringValue, "rojo=1")
        XCTAssertEqual(seen?["baggage"]?.stringValue, "k=v")
        let own = "00-11111111111111111111111111111111-2222222222222222-00"
        let mine = try client.callTool("echo_meta", options: CallOptions(meta: ["traceparent": .string(own)]))
        XCTAssertEqual(mine["structuredContent"]?["traceparent"]?.stringValue, own)
        XCTAssertEqual(asked.value, 1)
        try client.setTraceContext { TraceContext(traceparent: "bad") }
        XCTAssertThrowsError(try client.callTool("echo_meta")) { error in
            XCTAssertEqual((error as? MCPError)?.status, MCPStatus.invalidArg)
        }
        try client.setTraceContext(nil)
        XCTAssertNil(try client.callTool("echo_meta")["structuredContent"]?["traceparent"])
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
