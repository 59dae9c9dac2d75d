import Foundation
import XCTest

@testable import MCPClient

/// The C ABI faults that live in this binding: exact big integers and NUL in strings.
final class FaultTests: XCTestCase {
    func testBigIntegersKeepTheirDigits() throws {
        let client = try fixtureClient(["--page-size", "7"])
        let tool = try client.tools().first { $0["name"]?.stringValue == "big_numbers" }
        let n = try XCTUnwrap(tool?["inputSchema"]?["properties"]?["n"])
        XCTAssertEqual(n["maximum"]?.decimalValue, Decimal(string: "123456789012345678901234567890"))
        XCTAssertEqual(n["minimum"]?.decimalValue, Decimal(string: "-18446744073709551616"))
        XCTAssertTrue(n.text.contains("123456789012345678901234567890"), n.text)
        XCTAssertTrue(n.text.contains("-18446744073709551616"), n.text)
        // An ordinary integer stays an Int64.
        XCTAssertEqual(try JSON.parse("42"), .int(42))
    }

    func testNulInStringArgumentsIsRefused() throws {
        let client = try fixtureClient()
        assertMCPError(try client.readResource("file:///a\u{0}/etc/passwd")) { $0.status == MCPStatus.invalidArg }
        assertMCPError(try client.callTool("elicit_once", requestState: "ab\u{0}cd")) { $0.status == MCPStatus.invalidArg }
        let r = try client.callTool("echo", arguments: ["text": "echo\u{0}evil"])
        XCTAssertEqual(r["content"]?[0]?["text"]?.stringValue, "echo\u{0}evil")
    }
}
