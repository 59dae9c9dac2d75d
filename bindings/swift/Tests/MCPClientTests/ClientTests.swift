import Foundation
import XCTest

@testable import MCPClient

/// Connection, lists and the plain calls against the fixture server over stdio.
final class ClientTests: XCTestCase {
    func testConnectStdioModern() throws {
        let client = try fixtureClient()
        XCTAssertEqual(client.era, .notConnected)
        assertMCPError(try client.serverInfo()) { if case .other(let i) = $0 { return i.status == MCPStatus.notConnected } else { return false } }
        let info = try client.connect()
        XCTAssertEqual(info.era, .modern)
        XCTAssertEqual(info.protocolVersion, "2026-07-28")
        XCTAssertEqual(info.serverInfo["name"]?.stringValue, "mcp-fixture-server")
        XCTAssertEqual(info.instructions, "Fixture server for mcp_client tests.")
        XCTAssertNotNil(info.capabilities["tools"])
        XCTAssertEqual(client.era, .modern)
        XCTAssertEqual(try client.connect().protocolVersion, "2026-07-28", "connect is idempotent")
        XCTAssertEqual(try client.serverInfo().era, .modern)
    }

    func testPinnedLegacyModeOnDualServer() throws {
        let client = try fixtureClient(options: ClientOptions(mode: .legacy))
        let info = try client.connect()
        XCTAssertEqual(info.era, .legacy)
        XCTAssertEqual(client.era, .legacy)
    }

    func testListsWithPagination() throws {
        let client = try fixtureClient(["--page-size", "4"])
        let first = try client.list(.tools)
        XCTAssertEqual(first["tools"]?.arrayValue?.count, 4)
        XCTAssertEqual(first["nextCursor"]?.stringValue, "page-2")
        let second = try client.list(.tools, cursor: "page-2")
        XCTAssertEqual(second["tools"]?.arrayValue?.count, 4)

        let tools = try client.tools().compactMap { $0["name"]?.stringValue }
        XCTAssertGreaterThan(tools.count, 20)
        for name in ["echo", "add", "elicit_once", "three_rounds", "hang", "crash", "rpc_error"] {
            XCTAssertTrue(tools.contains(name), "missing tool \(name)")
        }
        XCTAssertEqual(Set(try client.prompts().compactMap { $0["name"]?.stringValue }),
                       ["greeting", "needs_input", "plain"])
        let uris = try client.resources().compactMap { $0["uri"]?.stringValue }
        XCTAssertTrue(uris.contains("fixture://static"))
        XCTAssertEqual(try client.resourceTemplates().first?["uriTemplate"]?.stringValue, "fixture://items/{id}")

        assertMCPError(try client.list(.tools, cursor: "bogus")) {
            if case .rpc(-32602, _, _) = $0 { return true } else { return false }
        }
    }

    func testCallGetReadComplete() throws {
        let client = try fixtureClient()
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "héllo \"wörld\" 🔑"])), "héllo \"wörld\" 🔑")

        let sum = try client.callTool("add", arguments: ["a": 2, "b": 3.5])
        XCTAssertEqual(text(sum), "5.5")
        XCTAssertEqual(sum["structuredContent"]?["result"]?.doubleValue, 5.5)

        let failed = try client.callTool("fail")
        XCTAssertEqual(failed["isError"]?.boolValue, true, "a tool error is a result, not a thrown error")
        XCTAssertEqual(text(failed), "tool failed on purpose")

        let prompt = try client.getPrompt("greeting", arguments: ["name": "Ada"])
        XCTAssertEqual(prompt["messages"]?[0]?["content"]?["text"]?.stringValue, "Hello, Ada!")
        XCTAssertEqual(text(try client.readResource("fixture://static")), "static content")
        XCTAssertEqual(try client.readResource("fixture://binary")["contents"]?[0]?["blob"]?.stringValue, "AAECAw==")
        XCTAssertEqual(text(try client.readResource("fixture://items/42")), "item 42")

        let completion = try client.complete([
            "ref": ["type": "ref/prompt", "name": "greeting"], "argument": ["name": "name", "value": "al"],
        ])
        XCTAssertEqual(completion["completion"]?["values"], ["alice", "albert"])

        let raw = try client.request("tools/call", params: ["name": "echo", "arguments": ["text": "raw"]])
        XCTAssertEqual(text(raw), "raw")

        let meta = try client.callTool("echo_meta", options: CallOptions(meta: ["example.com/trace": "t-1"]))
        XCTAssertEqual(meta["structuredContent"]?["example.com/trace"]?.stringValue, "t-1")
        XCTAssertEqual(meta["structuredContent"]?["io.modelcontextprotocol/protocolVersion"]?.stringValue,
                       "2026-07-28")
    }

    func testSkillsListVerifiedReadAndTamperedFile() throws {
        var options = ClientOptions()
        options.extra = ["skills": true]
        let client = try fixtureClient(["--skills", "genuine"], options: options)
        let listing = try client.listSkills()
        XCTAssertEqual(listing["rejected"], [])
        let hello = try XCTUnwrap(listing["skills"]?[0])
        XCTAssertTrue(text(["contents": [try client.readSkillFile(hello)]])?.contains("Say hello") ?? false)
        let usage = try client.readSkillFile(hello, fileURI: "skill://fixture/hello-world/notes/usage.md")
        XCTAssertEqual(usage["text"]?.stringValue, "Use a friendly tone.\n")
        XCTAssertEqual(try client.getSkill("skill://fixture/hello-world/SKILL.md")["frontmatter"]?["name"], "hello-world")

        let tampered = try fixtureClient(["--skills", "digest"], options: options)
        let entry = try XCTUnwrap(try tampered.listSkills()["skills"]?[0])
        do {
            _ = try tampered.readSkillFile(entry)
            XCTFail("a tampered SKILL.md was returned")
        } catch let error as MCPError {
            XCTAssertEqual(error.status, MCPStatus.skillVerificationFailed)
            XCTAssertTrue(error.message.contains("digest mismatch"), error.message)
        }
    }

    func testProgressCallback() throws {
        let client = try fixtureClient()
        let updates = Locked<[ProgressUpdate]>([])
        let result = try client.callTool(
            "progress", arguments: ["steps": 3, "delay_ms": 10],
            options: CallOptions(onProgress: { update in updates.with { $0.append(update) } }))
        XCTAssertEqual(text(result), "progress done")
        let seen = updates.get
        XCTAssertEqual(seen.map(\.progress), [1, 2, 3])
        XCTAssertEqual(seen.first?.total, 3)
        XCTAssertEqual(seen.last?.message, "step 3")
    }

    func testListenSubscription() throws {
        let client = try fixtureClient()
        let sub = try client.listen(["toolsListChanged": true])
        XCTAssertEqual(try sub.acknowledged()["toolsListChanged"]?.boolValue, true)
        XCTAssertNil(try sub.next(timeout: 0.05), "nothing yet")
        XCTAssertEqual(text(try client.callTool("notify")), "notified")
        let event = try XCTUnwrap(try sub.next(timeout: 5))
        XCTAssertEqual(event.method, "notifications/tools/list_changed")
        XCTAssertEqual(text(try client.callTool("end_listens")), "ended 1 listens")
        assertMCPError(try sub.next(timeout: 5)) { if case .closed = $0 { return true } else { return false } }
    }

    func testListenAsyncEvents() async throws {
        let client = try fixtureClient()
        let sub = try await client.listen(["toolsListChanged": true, "promptsListChanged": true])
        _ = try await client.callTool("notify")
        var methods: [String] = []
        for try await event in sub.events {
            methods.append(event.method)
            if methods.count == 2 { break }
        }
        XCTAssertEqual(Set(methods), ["notifications/tools/list_changed", "notifications/prompts/list_changed"])
        _ = try await client.callTool("end_listens")
        var after: [SubscriptionEvent] = []
        for try await event in sub.events { after.append(event) }  // ends when the listen ends
        XCTAssertTrue(after.isEmpty)
    }

    func testLegacyEra() throws {
        let client = try fixtureClient(["--era", "legacy"])
        let notes = Locked<[String]>([])
        try client.onNotification { method, _ in notes.with { $0.append(method) } }
        try client.onElicitation { params in
            XCTAssertEqual(params["message"]?.stringValue, "What is your name?")
            return ["action": "accept", "content": ["name": "Lovelace"]]
        }
        let info = try client.connect()
        XCTAssertEqual(info.era, .legacy)
        XCTAssertEqual(info.protocolVersion, "2025-11-25")
        XCTAssertEqual(info.serverInfo["name"]?.stringValue, "mcp-fixture-server")
        try client.ping()
        try client.setLogLevel("debug")
        XCTAssertEqual(text(try client.callTool("log_level")), "debug")
        // Legacy servers ask through real server→client requests; the same handler answers.
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, Lovelace!")
        XCTAssertEqual(text(try client.callTool("ping_client")), "client answered ping")
        try client.notifyRootsChanged()
        XCTAssertEqual(text(try client.callTool("notify")), "notified")
        let deadline = Date().addingTimeInterval(5)
        while notes.get.count < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertTrue(notes.get.contains("notifications/tools/list_changed"), "\(notes.get)")
        try client.subscribeResource("fixture://static")
        try client.unsubscribeResource("fixture://static")
    }

    func testLogHandlerSeesServerStderr() throws {
        let client = try fixtureClient(["--stderr-banner", "banner from the fixture"])
        let lines = Locked<[LogLine]>([])
        try client.onLog { line in lines.with { $0.append(line) } }
        try client.connect()
        let deadline = Date().addingTimeInterval(5)
        while !lines.get.contains(where: { $0.message.contains("banner from the fixture") }) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let line = lines.get.first { $0.message.contains("banner from the fixture") }
        XCTAssertEqual(line?.source, "stderr")
    }

    func testJSONValues() throws {
        let value: JSON = ["a": 1, "b": [true, .null, 2.5, "x"], "c": ["d": "é\"\\/"]]
        XCTAssertEqual(try JSON.parse(value.text), value)
        XCTAssertEqual(value.text, #"{"a":1,"b":[true,null,2.5,"x"],"c":{"d":"é\"\\/"}}"#)
        XCTAssertEqual(try JSON.parse("9007199254740993").intValue, 9_007_199_254_740_993)
        XCTAssertEqual(try JSON.parse("\"s\"").stringValue, "s")
        struct Point: Codable, Equatable { var x: Int; var y: String }
        let p = try JSON(encoding: Point(x: 1, y: "z"))
        XCTAssertEqual(try p.decode(Point.self), Point(x: 1, y: "z"))
        assertMCPError(try JSON.parse("{")) { $0.status == MCPStatus.invalidJSON }
    }

    func testVersionConstants() {
        XCTAssertEqual(MCPStatus.describe(MCPStatus.timeout).isEmpty, false)
        XCTAssertTrue(abiChecked)
    }

    /// Every `MCPStatus` constant carries its C constant's name, and the library names no other
    /// status: a status added to the library without a constant here fails.
    func testStatusNames() {
        let all: [Int32: String] = [
            MCPStatus.ok: "MCP_OK", MCPStatus.nullArg: "MCP_NULL_ARG",
            MCPStatus.invalidUTF8: "MCP_INVALID_UTF8", MCPStatus.invalidJSON: "MCP_INVALID_JSON",
            MCPStatus.invalidArg: "MCP_INVALID_ARG", MCPStatus.closed: "MCP_CLOSED",
            MCPStatus.reentrantCall: "MCP_REENTRANT_CALL", MCPStatus.notConnected: "MCP_NOT_CONNECTED",
            MCPStatus.unsupported: "MCP_UNSUPPORTED", MCPStatus.forked: "MCP_FORKED",
            MCPStatus.io: "MCP_IO", MCPStatus.timeout: "MCP_TIMEOUT",
            MCPStatus.cancelled: "MCP_CANCELLED", MCPStatus.serverExited: "MCP_SERVER_EXITED",
            MCPStatus.httpStatus: "MCP_HTTP_STATUS", MCPStatus.authRequired: "MCP_AUTH_REQUIRED",
            MCPStatus.messageTooLarge: "MCP_MESSAGE_TOO_LARGE", MCPStatus.jsonrpcError: "MCP_JSONRPC_ERROR",
            MCPStatus.protocolViolation: "MCP_PROTOCOL_VIOLATION",
            MCPStatus.versionMismatch: "MCP_VERSION_MISMATCH",
            MCPStatus.capabilityMissing: "MCP_CAPABILITY_MISSING",
            MCPStatus.inputRequired: "MCP_INPUT_REQUIRED",
            MCPStatus.inputRoundsExceeded: "MCP_INPUT_ROUNDS_EXCEEDED",
            MCPStatus.handlerFailed: "MCP_HANDLER_FAILED",
            MCPStatus.urlElicitationRequired: "MCP_URL_ELICITATION_REQUIRED",
            MCPStatus.skillVerificationFailed: "MCP_SKILL_VERIFICATION_FAILED",
            MCPStatus.outputSchemaInvalid: "MCP_OUTPUT_SCHEMA_INVALID",
            MCPStatus.toolPinChanged: "MCP_TOOL_PIN_CHANGED",
            MCPStatus.internal: "MCP_INTERNAL", MCPStatus.panic: "MCP_PANIC",
        ]
        for (status, name) in all {
            XCTAssertEqual(MCPStatus.name(status), name)
        }
        let named = (Int32(0)..<1000).filter { MCPStatus.name($0) != "MCP_UNKNOWN" }
        XCTAssertEqual(Set(named), Set(all.keys), "the library names exactly the binding's statuses")
        XCTAssertEqual(MCPStatus.name(12345), "MCP_UNKNOWN")
        let info = MCPErrorInfo(status: MCPStatus.timeout, message: "late")
        XCTAssertEqual(info.statusName, "MCP_TIMEOUT")
        XCTAssertEqual(info.statusText, "timed out")
    }
}
