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

    /// Each operation ends as one span by the OpenTelemetry MCP conventions; a tool error sets
    /// `error.type`.
    func testSpanListener() throws {
        let client = try fixtureClient()
        let spans = Spans()
        try client.onSpan { spans.add($0) }
        _ = try client.callTool("echo", arguments: ["text": "s"])
        _ = try client.callTool("fail")
        let deadline = Date().addingTimeInterval(5)
        while spans.all.count < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let got = spans.all
        // The connect the first call made (its handshake), then the two calls.
        XCTAssertEqual(got.count, 3)
        XCTAssertEqual(got.first?["name"]?.stringValue, "server/discover")
        XCTAssertEqual(got[1]["name"]?.stringValue, "tools/call echo")
        XCTAssertEqual(got[1]["attributes"]?["gen_ai.tool.name"]?.stringValue, "echo")
        XCTAssertEqual(got[1]["attributes"]?["network.transport"]?.stringValue, "pipe")
        XCTAssertNil(got[1]["attributes"]?["error.type"])
        XCTAssertEqual(got.last?["name"]?.stringValue, "tools/call fail")
        XCTAssertEqual(got.last?["attributes"]?["error.type"]?.stringValue, "tool_error")
        try client.onSpan(nil)
    }
}

private final class Spans: @unchecked Sendable {
    private let lock = NSLock()
    private var spans: [JSON] = []
    func add(_ span: JSON) { lock.lock(); spans.append(span); lock.unlock() }
    var all: [JSON] { lock.lock(); defer { lock.unlock() }; return spans }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
