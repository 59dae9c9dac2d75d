import Dispatch
import Foundation
import XCTest

@testable import MCPClient

/// Cancellation, timeouts, close, a dying server and JSON-RPC errors.
final class FailureTests: XCTestCase {
    func testCancelTokenFromAnotherThread() throws {
        let client = try fixtureClient()
        try client.connect()
        let token = CancelToken()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { token.cancel() }
        let started = Date()
        assertMCPError(try client.callTool("hang", timeout: 10, cancel: token)) {
            if case .cancelled = $0 { return true } else { return false }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(token.isCancelled)
        // The server was told (notifications/cancelled) and the connection still works.
        let ids = try JSON.parse(text(try client.callTool("cancelled_ids")) ?? "[]")
        XCTAssertEqual(ids.arrayValue?.count, 1, "\(ids)")
    }

    /// A call made with an already-cancelled token must fail at once without reaching the server
    /// (c-abi-conventions §12: "Operations that start after cancellation fail at once"). The same
    /// path serves an async call whose Task was cancelled before it started.
    /// LIBRARY BUG (kept failing on purpose): Session::request sends the request, then notices
    /// the token and sends notifications/cancelled; when the answer wins the race the call even
    /// returns the tool's result.
    func testAlreadyCancelledTokenSendsNothing() throws {
        let record = FileManager.default.temporaryDirectory
            .appendingPathComponent("mcp-swift-record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: record) }
        let client = try fixtureClient(["--record", record])
        try client.connect()
        let token = CancelToken()
        token.cancel()
        assertMCPError(try client.callTool("echo", arguments: ["text": "must-not-be-sent"], cancel: token)) {
            if case .cancelled = $0 { return true } else { return false }
        }
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "sync point"])), "sync point")
        let sent = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
        XCTAssertTrue(sent.contains("sync point"), "the record file holds the wire")
        XCTAssertFalse(sent.contains("must-not-be-sent"),
                       "LIBRARY BUG: a call with an already-cancelled token was still sent to the server:\n\(sent)")
    }

    func testAsyncTaskCancellation() async throws {
        let signal = try FixtureSignal()
        let client = try fixtureClient(signal.args)
        try await client.connect()
        let task = Task { try await client.callTool("hang", timeout: 10) }
        signal.wait("request tools/call hang")  // the call reached the server: it waits
        let started = Date()
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("the hang call returned")
        } catch MCPError.cancelled {
        } catch {
            XCTFail("unexpected error \(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let echoed = try await client.callTool("echo", arguments: ["text": "still alive"])
        XCTAssertEqual(text(echoed), "still alive")
    }

    func testTimeout() throws {
        let client = try fixtureClient()
        try client.connect()
        let started = Date()
        assertMCPError(try client.callTool("slow", arguments: ["ms": 5000], timeout: 0.2)) {
            if case .timeout = $0 { return true } else { return false }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        XCTAssertEqual(text(try client.callTool("slow", arguments: ["ms": 10], timeout: 5)), "slept 10")
    }

    func testCloseWithCallsInFlight() throws {
        let signal = try FixtureSignal()
        let client = try fixtureClient(signal.args)
        try client.connect()
        let outcomes = Locked<[String]>([])
        let group = DispatchGroup()
        for i in 0..<3 {
            group.enter()
            background {
                defer { group.leave() }
                do {
                    _ = try client.callTool(i == 0 ? "hang" : "slow", arguments: i == 0 ? nil : ["ms": 8000], timeout: 10)
                    outcomes.with { $0.append("returned") }
                } catch MCPError.closed {
                    outcomes.with { $0.append("closed") }
                } catch {
                    outcomes.with { $0.append("\(error)") }
                }
            }
        }
        signal.wait("request tools/call ", count: 3)  // every call reached the server: all blocked
        let started = Date()
        client.close()
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success, "blocked calls were not woken by close")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(outcomes.get, ["closed", "closed", "closed"])
        client.close()  // idempotent
        assertMCPError(try client.callTool("echo", arguments: ["text": "x"])) {
            if case .closed = $0 { return true } else { return false }
        }
    }

    func testCloseFromHandler() throws {
        let client = try fixtureClient()
        try client.onElicitation { [weak client] _ in
            client?.close()
            return ["action": "decline"]
        }
        assertMCPError(try client.callTool("elicit_once")) {
            if case .closed = $0 { return true } else { return false }
        }
    }

    func testServerCrashNamesExitStatus() throws {
        let client = try fixtureClient()
        try client.connect()
        let error = assertMCPError(try client.callTool("crash")) {
            if case .serverExited = $0 { return true } else { return false }
        }
        let message = error?.message ?? ""
        XCTAssertTrue(message.contains("status 7"), message)
        XCTAssertTrue(message.contains("crashing on purpose"), "the stderr tail is part of the message: \(message)")
        assertMCPError(try client.callTool("echo", arguments: ["text": "x"])) { _ in true }
    }

    func testRPCError() throws {
        let client = try fixtureClient()
        let error = assertMCPError(try client.callTool("rpc_error")) {
            if case .rpc(-32050, _, _) = $0 { return true } else { return false }
        }
        guard case .rpc(let code, let message, let data)? = error else { return }
        XCTAssertEqual(code, -32050)
        XCTAssertEqual(message, "fixture error")  // the server's own message
        XCTAssertEqual(try JSON.parse(data ?? "null")["detail"]?.stringValue, "on purpose")
        XCTAssertEqual(error?.info.rpcCode, -32050)

        assertMCPError(try client.callTool("no_such_tool")) {
            if case .rpc(-32602, _, _) = $0 { return true } else { return false }
        }
    }

    func testGarbageOnStdoutIsAProtocolViolation() throws {
        let client = try fixtureClient()
        try client.connect()
        assertMCPError(try client.callTool("garbage")) { $0.status == MCPStatus.protocolViolation }
    }

    func testBadConfigurationAndMissingServer() throws {
        assertMCPError(try Client(config: ["command": "x", "no_such_key": 1])) { $0.status == MCPStatus.invalidArg }
        let client = try fixtureClient()
        assertMCPError(try client.callTool("ec\u{0}ho")) { $0.status == MCPStatus.invalidArg }
        let missing = try Client(stdio: "/nonexistent/mcp-server")
        assertMCPError(try missing.connect()) { _ in true }
    }

    func testPingIsUnsupportedOnModernServers() throws {
        let client = try fixtureClient()
        try client.connect()
        assertMCPError(try client.ping()) { $0.status == MCPStatus.unsupported }
    }
}
