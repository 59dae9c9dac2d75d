import Foundation
import MCPClient
import XCTest

/// Tool pinning through the Swift binding: the fixture changes `echo` after the first listing;
/// under "block" it leaves the list and its calls fail with `MCPStatus.toolPinChanged` until
/// approved; the hook gets the event.
final class PinTests: XCTestCase {
    private func names(_ client: Client) throws -> [String] {
        try client.tools().compactMap { $0["name"]?.stringValue }
    }

    func testBlockWithholdsAChangedToolUntilApproved() throws {
        var options = ClientOptions(mode: .legacy)
        options.extra["tool_pinning"] = ["policy": "block"]
        let client = try fixtureClient([], options: options)
        let seen = Seen()
        try client.onToolPin { event in
            seen.add(event["change"]?.stringValue ?? "")
            return false
        }
        XCTAssertTrue(try names(client).contains("echo"))
        _ = try client.callTool("redefine", arguments: ["mode": "description"])
        XCTAssertFalse(try names(client).contains("echo"))
        XCTAssertThrowsError(try client.callTool("echo", arguments: ["text": "x"])) { error in
            XCTAssertEqual((error as? MCPError)?.info.status, MCPStatus.toolPinChanged)
        }
        XCTAssertEqual(seen.all, ["changed"])
        let pins = try client.toolPins()
        let echo = pins["tools"]?.arrayValue?.first { $0["name"]?.stringValue == "echo" }
        XCTAssertEqual(echo?["state"]?.stringValue, "withheld")
        try client.approveToolPin("echo")
        XCTAssertTrue(try names(client).contains("echo"))
        try client.forgetToolPin()
    }
}

private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
