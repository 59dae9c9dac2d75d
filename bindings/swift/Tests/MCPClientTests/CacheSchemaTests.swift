import Foundation
import MCPClient
import XCTest

/// The Swift binding's response caching and output schema validation.
final class CacheSchemaTests: XCTestCase {
    private func toolsLists(_ record: String) -> Int {
        let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        return text.components(separatedBy: "\"tools/list\"").count - 1
    }

    func testSecondToolsListWithinTheTTLSendsNothing() throws {
        let record = NSTemporaryDirectory() + "mcp-swift-cache-\(getpid()).jsonl"
        try? FileManager.default.removeItem(atPath: record)
        defer { try? FileManager.default.removeItem(atPath: record) }
        let client = try fixtureClient(["--cache-ttl-ms", "60000", "--record", record])
        let first = try client.list(.tools)
        XCTAssertEqual(try client.list(.tools), first)
        XCTAssertEqual(toolsLists(record), 1)
        var bypass = CallOptions()
        bypass.cacheMode = .bypass
        _ = try client.list(.tools, options: bypass)
        XCTAssertEqual(toolsLists(record), 2)
        try client.setCachePartition("user-b")
        try client.clearCache()
        _ = try client.list(.tools)
        XCTAssertEqual(toolsLists(record), 3)

        var off = ClientOptions()
        off.responseCache = false
        let offRecord = record + ".off"
        defer { try? FileManager.default.removeItem(atPath: offRecord) }
        let uncached = try fixtureClient(["--cache-ttl-ms", "60000", "--record", offRecord], options: off)
        _ = try uncached.list(.tools)
        _ = try uncached.list(.tools)
        XCTAssertEqual(toolsLists(offRecord), 2)
    }

    func testOutputSchemaValidation() throws {
        let client = try fixtureClient()
        XCTAssertEqual(try client.callTool("typed", arguments: ["value": 5])["structuredContent"]?["result"], 5)
        do {
            _ = try client.callTool("typed", arguments: ["value": "five"])
            XCTFail("expected outputSchemaInvalid")
        } catch MCPError.outputSchemaInvalid(let e) {
            XCTAssertEqual(e.info.status, MCPStatus.outputSchemaInvalid)
            XCTAssertTrue(e.info.message.contains("/result"), e.info.message)
            XCTAssertEqual(e.result["structuredContent"]?["result"], "five")
        }
        var skip = CallOptions()
        skip.validateOutput = false
        XCTAssertEqual(try client.callTool("typed", arguments: ["value": "five"], options: skip)["structuredContent"]?["result"], "five")
        var off = ClientOptions()
        off.validateOutputSchema = false
        XCTAssertEqual(try fixtureClient([], options: off).callTool("typed", arguments: ["value": "five"])["structuredContent"]?["result"], "five")
    }
}
