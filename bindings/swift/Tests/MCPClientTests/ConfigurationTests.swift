import Foundation
import XCTest

@testable import MCPClient

final class ConfigurationTests: XCTestCase {
    func testATypedConfigurationBuildsAClient() throws {
        var config = Configuration()
        config.command = try fixturePath()
        config.mode = "modern"
        config.requestTimeoutMs = 10_000
        config.connectTimeoutMs = 0  // an explicit zero is sent (0: no bound)
        config.clientInfo = ["name": "swift-typed", "version": "1.0"]
        var reconnect = Configuration.Reconnect()
        reconnect.maxAttempts = 2
        config.reconnect = reconnect
        let client = try Client(configuration: config)
        let meta = try client.callTool("echo_meta")
        XCTAssertTrue(meta.text.contains("swift-typed"), meta.text)
    }

    func testABadValueNamesTheKey() throws {
        var config = Configuration()
        config.command = try fixturePath()
        config.envMode = "everything"
        assertMCPError(try Client(configuration: config)) {
            $0.status == MCPStatus.invalidArg && $0.message.contains("env_mode")
        }
    }

    func testAnUnknownKeyNamesTheNearestKnownOne() throws {
        let config: JSON = ["command": "x", "request_timeout": 5]
        assertMCPError(try Client(config: config)) {
            $0.status == MCPStatus.invalidArg
                && $0.message == #"unknown configuration key "request_timeout"; did you mean "request_timeout_ms"?"#
        }
    }
}
