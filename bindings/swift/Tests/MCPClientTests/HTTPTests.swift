import Foundation
import XCTest

@testable import MCPClient

/// Streamable HTTP against `mcp-fixture-server --http 127.0.0.1:0`.
///
/// The functional tests point the library at a CA bundle when run-tests.sh staged one
/// (MCP_SWIFT_CA_BUNDLE → SSL_CERT_FILE), so they test HTTP itself even in a root without
/// ca-certificates; `testPlainHTTPNeedsNoTrustStore` runs without one, as a minimal container would.
final class HTTPTests: XCTestCase {
    override func setUp() {
        super.setUp()
        if let bundle = ProcessInfo.processInfo.environment["MCP_SWIFT_CA_BUNDLE"], !bundle.isEmpty {
            setenv("SSL_CERT_FILE", bundle, 1)
        }
    }

    override func tearDown() {
        unsetenv("SSL_CERT_FILE")
        super.tearDown()
    }

    /// Plain `http://` needs no TLS, so it must work on a machine without a CA trust store.
    func testPlainHTTPNeedsNoTrustStore() throws {
        let server = try fixture()
        unsetenv("SSL_CERT_FILE")
        let hasSystemBundle = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                               "/etc/ssl/cert.pem"].contains { FileManager.default.fileExists(atPath: $0) }
        if hasSystemBundle { throw XCTSkip("this machine has a CA trust store") }
        let client = try Client(http: server.url, options: ClientOptions(requestTimeout: 10))
        do {
            let info = try client.connect()
            XCTAssertEqual(info.era, .modern)
        } catch {
            XCTFail("LIBRARY BUG: a plain-HTTP client fails without system CA certificates: \(error)")
        }
        client.close()
    }

    private func fixture(_ extra: [String] = []) throws -> HTTPFixture {
        try HTTPFixture(extra)
    }

    func testHTTPModern() throws {
        let record = FileManager.default.temporaryDirectory
            .appendingPathComponent("mcp-swift-http-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: record) }
        let server = try fixture(["--record", record])
        XCTAssertTrue(server.url.hasPrefix("http://127.0.0.1:"), server.url)
        XCTAssertTrue(server.url.hasSuffix("/mcp"), server.url)
        let client = try Client(
            http: server.url, headers: ["X-Swift-Test": "yes"], bearerToken: "swift-token",
            options: ClientOptions(requestTimeout: 10))
        let info = try client.connect()
        XCTAssertEqual(info.era, .modern)
        XCTAssertEqual(info.serverInfo["name"]?.stringValue, "mcp-fixture-server")
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "over http"])), "over http")
        XCTAssertTrue(try client.tools().count > 20)
        try client.onElicitation { _ in ["action": "accept", "content": ["name": "Web"]] }
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, Web!")
        assertMCPError(try client.callTool("rpc_error")) {
            if case .rpc(-32050, _, _) = $0 { return true } else { return false }
        }
        let token = CancelToken()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { token.cancel() }
        assertMCPError(try client.callTool("hang", timeout: 10, cancel: token)) {
            if case .cancelled = $0 { return true } else { return false }
        }
        client.close()
        // Every request carried the configured headers and the bearer token.
        let sent = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").lowercased()
        XCTAssertTrue(sent.contains("bearer swift-token"), "no bearer token in the recorded requests")
        XCTAssertTrue(sent.contains("x-swift-test"), "no custom header in the recorded requests")
    }

    func testHTTPLegacy() throws {
        let server = try fixture(["--era", "legacy"])
        let client = try Client(http: server.url, options: ClientOptions(requestTimeout: 10))
        try client.onElicitation { _ in ["action": "accept", "content": ["name": "Old Web"]] }
        let info = try client.connect()
        XCTAssertEqual(info.era, .legacy)
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "legacy http"])), "legacy http")
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, Old Web!")
        client.close()
    }
}
