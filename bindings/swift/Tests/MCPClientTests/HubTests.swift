import Foundation
import XCTest

@testable import MCPClient

/// The hub from Swift: fixture members over stdio and one that cannot start, the merged list,
/// routed calls (sync and async), events, reload, and no server process after close.
final class HubTests: XCTestCase {
    private static let marks = Locked(0)

    /// A fresh marker for one test's member processes (through their environment).
    private func newMark() -> String {
        "swift-hub-\(getpid())-\(Self.marks.with { $0 += 1; return $0 })"
    }

    /// Live processes whose environment holds MCP_HUB_TEST_MARK=mark.
    private func processes(with mark: String) -> Int {
        let needle = Array("MCP_HUB_TEST_MARK=\(mark)\0".utf8)
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let env = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return [UInt8](env).firstRange(of: needle) != nil
        }.count
    }

    private func member(_ mark: String, _ args: [String] = []) throws -> JSON {
        .object([
            "command": .string(try fixturePath()), "args": .array(args.map { .string($0) }),
            "env": ["MCP_HUB_TEST_MARK": .string(mark)], "probe_timeout_ms": 500, "shutdown_grace_ms": 500,
            "request_timeout_ms": 10000,
        ])
    }

    func testHubMergesRoutesAndSurvivesABrokenMember() throws {
        let mark = newMark()
        let events = Locked<[JSON]>([])
        let hub = try Hub(members: [
            "fix": try member(mark), "old": try member(mark, ["--era", "legacy"]),
            "missing": ["command": "/nonexistent/mcp-server"],
        ])
        try hub.onEvent { event in events.with { $0.append(event) } }
        assertMCPError(try hub.addMember("fix", config: try member(mark))) { $0.info.status == MCPStatus.invalidArg }
        try hub.start()
        let states = Dictionary(uniqueKeysWithValues: try hub.members().map {
            ($0["name"]?.stringValue ?? "", $0["state"]?.stringValue ?? "")
        })
        XCTAssertEqual(states, ["fix": "connected", "old": "connected", "missing": "failed"])
        XCTAssertEqual(processes(with: mark), 2)

        let tools = try hub.list(.tools)["tools"]?.arrayValue ?? []
        let names = Set(tools.compactMap { $0["name"]?.stringValue })
        XCTAssertTrue(names.isSuperset(of: ["fix__echo", "old__echo"]), "\(names)")
        XCTAssertTrue(tools.allSatisfy { ["fix", "old"].contains($0["_meta"]?["mcp-client/server"]?.stringValue ?? "") })
        XCTAssertEqual(text(try hub.callTool("old__echo", arguments: ["text": "routed"])), "routed")
        let prompt = try hub.getPrompt("fix__greeting", arguments: ["name": "Swift"])
        XCTAssertEqual(prompt["messages"]?[0]?["content"]?["text"]?.stringValue, "Hello, Swift!")
        XCTAssertEqual(text(try hub.readResource(server: "fix", uri: "fixture://static")), "static content")
        let unknown = assertMCPError(try hub.callTool("fix__ecko")) { $0.info.status == MCPStatus.invalidArg }
        XCTAssertTrue(unknown?.info.message.contains("fix__echo") ?? false)
        XCTAssertEqual(events.get.filter { $0["type"] == "state" && $0["state"] == "connected" }.count, 2)

        hub.close()
        XCTAssertEqual(processes(with: mark), 0)
        assertMCPError(try hub.list(.tools)) { if case .closed = $0 { return true } else { return false } }
    }

    func testAsyncCallsEventStreamAndReload() async throws {
        let mark = newMark()
        let hub = try Hub(separator: "-")
        try hub.addMember("fix", config: try member(mark))
        let events = try hub.events()
        try await hub.start()
        let tools = try await hub.tools()
        XCTAssertTrue(tools.contains { $0["name"] == "fix-echo" })

        let texts = (0..<8).map(String.init)
        let results = try await withThrowingTaskGroup(of: String?.self) { group in
            for t in texts { group.addTask { text(try await hub.callTool("fix-echo", arguments: ["text": .string(t)])) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(Set(results.compactMap { $0 }), Set(texts))
        let resource = try await hub.readResource(server: "fix", uri: "fixture://static")
        XCTAssertEqual(text(resource), "static content")
        let prompt = try await hub.getPrompt("fix-greeting", arguments: ["name": "Async"])
        XCTAssertEqual(prompt["messages"]?[0]?["content"]?["text"]?.stringValue, "Hello, Async!")

        // Task cancellation cancels the started call at once.
        let hung = Task { try await hub.callTool("fix-hang", timeout: 30) }
        try await Task.sleep(nanoseconds: 100_000_000)
        let began = Date()
        hung.cancel()
        do {
            _ = try await hung.value
            XCTFail("the hanging call returned")
        } catch MCPError.cancelled {}
        XCTAssertLessThan(Date().timeIntervalSince(began), 3)

        // A list_changed from the member arrives on the stream with its server.
        _ = try await hub.callTool("fix-notify")
        let watchdog = Task {  // bounds the wait: removing the listener finishes the stream
            try await Task.sleep(nanoseconds: 5_000_000_000)
            try hub.onEvent(nil)
        }
        var sawChange = false
        for await event in events where event["type"] == "list_changed" {
            XCTAssertEqual(event["server"], "fix")
            sawChange = true
            break
        }
        watchdog.cancel()
        XCTAssertTrue(sawChange)

        // Reload one member: broken, then fixed, then removed (its process ends).
        let later = newMark()
        try await hub.setMember("later", config: ["command": "/nonexistent/mcp-server"])
        XCTAssertEqual(try hub.members()[1]["state"], "failed")
        try await hub.setMember("later", config: try member(later))
        XCTAssertEqual(try hub.members()[1]["state"], "connected")
        let back = try await hub.callTool("later-echo", arguments: ["text": "back"])
        XCTAssertEqual(text(back), "back")
        try await hub.removeMember("later")
        XCTAssertEqual(processes(with: later), 0)
        hub.close()
        XCTAssertEqual(processes(with: mark), 0)
    }

    /// One span listener and one trace context source cover every member, a later one too: each
    /// record names its member, a routed call's context reaches the member and is its record's
    /// parent, a blocking call's records are there when it returns, a started read its member's
    /// cache answers asks nothing and makes no record, and nil removes both.
    func testHubSpansAndTraceContextCoverEveryMember() async throws {
        let mark = newMark()
        let hub = try Hub(members: ["fix": try member(mark, ["--cache-ttl-ms", "60000"]), "alt": try member(mark)])
        let records = Locked<[JSON]>([])
        let asked = Locked<[String]>([])
        try hub.onSpan { record in records.with { $0.append(record) } }
        try hub.setTraceContext {
            let parent = asked.with { a -> String in
                a.append(String(format: "00-4bf92f3577b34da6a3ce929d0e0e4736-%016lx-01", a.count + 1))
                return a[a.count - 1]
            }
            return TraceContext(traceparent: parent, baggage: "tenant=a")
        }
        try await hub.start()
        let parentOf = { (r: JSON) in r["parent"]?["traceparent"]?.stringValue }
        let serverOf = { (r: JSON) in r["attributes"]?["mcp.server.name"]?.stringValue }

        // A merged list: one tools/list per member, each under a context of its own.
        records.with { $0.removeAll() }
        _ = try await hub.list(.tools)
        var got = records.get
        XCTAssertEqual(Set(got.compactMap(serverOf)), ["fix", "alt"])
        XCTAssertEqual(got.compactMap { $0["name"]?.stringValue }, ["tools/list", "tools/list"])
        XCTAssertEqual(Set(got.compactMap(parentOf)), Set(asked.get))
        XCTAssertEqual(asked.get.count, 2)

        // A routed call: the member received the context its record names.
        records.with { $0.removeAll() }
        let seen = try await hub.callTool("alt__echo_meta")["structuredContent"]
        got = records.get
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?["name"]?.stringValue, "tools/call echo_meta")
        XCTAssertEqual(got.first.flatMap(serverOf), "alt")
        XCTAssertEqual(seen?["traceparent"]?.stringValue, asked.get.last)
        XCTAssertEqual(got.first.flatMap(parentOf), asked.get.last)
        XCTAssertEqual(seen?["baggage"]?.stringValue, "tenant=a")

        // Started reads: the first goes out (asked once, its record names it); the second comes
        // from the member's cache: nothing asked, no record.
        records.with { $0.removeAll() }
        var before = asked.get.count
        let first = try await hub.readResource(server: "fix", uri: "fixture://static")
        XCTAssertEqual(text(first), "static content")
        XCTAssertEqual(asked.get.count, before + 1)
        got = records.get
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?["name"]?.stringValue, "resources/read")
        XCTAssertEqual(got.first.flatMap(parentOf), asked.get.last)
        let again = try await hub.readResource(server: "fix", uri: "fixture://static")
        XCTAssertEqual(text(again), "static content")
        XCTAssertEqual(asked.get.count, before + 1)
        XCTAssertEqual(records.get.count, 1)

        // A member added later has both.
        try hub.addMember("late", config: try member(mark))
        try await hub.start()
        records.with { $0.removeAll() }
        let late = try await hub.callTool("late__echo_meta")["structuredContent"]
        let call = records.get.first { $0["name"]?.stringValue == "tools/call echo_meta" }
        XCTAssertEqual(call.flatMap(serverOf), "late")
        XCTAssertEqual(call.flatMap(parentOf), late?["traceparent"]?.stringValue)

        // Removed: nothing asked, no records, no context on the wire.
        try hub.onSpan(nil)
        try hub.setTraceContext(nil)
        records.with { $0.removeAll() }
        before = asked.get.count
        let plain = try await hub.callTool("fix__echo_meta")
        XCTAssertNil(plain["structuredContent"]?["traceparent"])
        XCTAssertEqual(asked.get.count, before)
        XCTAssertEqual(records.get.count, 0)
        hub.close()
        XCTAssertEqual(processes(with: mark), 0)
    }

    func testHubPickStringInputOffersItsOptions() throws {
        let fix = JSON.string(try fixturePath()).text
        let vscode = """
            {"inputs": [{"type": "pickString", "id": "era", "description": "Era", "options": ["legacy", "modern"]},
                        {"type": "command", "id": "folder", "command": "extension.pickFolder"}],
             "servers": {"picked": {"command": \(fix), "args": ["--era", "${input:era}"]},
                         "cmd": {"command": \(fix), "args": ["${input:folder}"]}}}
            """
        for answer in ["legacy", "ancient"] {
            let asked = Locked<[HubInput]>([])
            let read = HubReadOptions(onInput: { input in
                asked.with { $0.append(input) }
                return answer
            })
            let hub = try Hub(text: vscode, read: read)
            XCTAssertEqual(asked.get.map(\.options), [["legacy", "modern"]])
            XCTAssertTrue(try hub.warnings().first?.contains("\"command\" input") ?? false)
            let members = try hub.members()
            let member = { (name: String) in members.first { $0["name"]?.stringValue == name } }
            let picked = member("picked")
            XCTAssertEqual(picked?["state"]?.stringValue, answer == "legacy" ? "idle" : "failed")
            if answer != "legacy" {
                XCTAssertTrue(picked?["error"]?.stringValue?.contains("not one of the input's options") ?? false)
            }
            XCTAssertEqual(member("cmd")?["state"]?.stringValue, "failed")
            hub.close()
        }
    }

    func testHubFromConfigurationTextAndFile() throws {
        let mark = newMark()
        let vscode = """
            {
                // VS Code's shape: an input the host is asked for, a comment and a trailing comma.
                "inputs": [{"type": "promptString", "id": "mark", "description": "Test mark", "password": true}],
                "servers": {"fix": {"type": "stdio", "command": \(JSON.string(try fixturePath()).text),
                                    "env": {"MCP_HUB_TEST_MARK": "${input:mark}"}},},
            }
            """
        let asked = Locked<[HubInput]>([])
        let read = HubReadOptions(onInput: { input in
            asked.with { $0.append(input) }
            return mark
        })
        do {
            let hub = try Hub(text: vscode, read: read)
            XCTAssertEqual(asked.get.map(\.id), ["mark"])
            XCTAssertEqual(asked.get.first?.password, true)
            try hub.start()
            XCTAssertEqual(processes(with: mark), 1)
            hub.close()
        }
        XCTAssertEqual(processes(with: mark), 0)

        // A Claude Desktop file on disk: another host's key is a warning; a reload adds a member.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swift-hub-\(newMark())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("claude_desktop_config.json").path
        let fix: JSON = ["command": .string(try fixturePath()), "autoApprove": ["echo"]]
        try JSON.object(["mcpServers": ["fix": fix]]).text.write(toFile: path, atomically: true, encoding: .utf8)
        let hub = try Hub(file: path, separator: "-")
        XCTAssertTrue(try hub.warnings().first?.contains("autoApprove") ?? false)
        try hub.start()
        XCTAssertEqual(text(try hub.callTool("fix-echo", arguments: ["text": "file"])), "file")
        let two: JSON = ["command": .string(try fixturePath())]
        try JSON.object(["mcpServers": ["fix": fix, "two": two]]).text.write(toFile: path, atomically: true, encoding: .utf8)
        let report = try hub.reload(file: path)
        XCTAssertEqual(report["added"], ["two"])
        XCTAssertEqual(report["unchanged"], ["fix"])
        assertMCPError(try hub.reload(text: "{not json")) { $0.info.status == MCPStatus.invalidArg }
        XCTAssertThrowsError(try Hub(file: dir.appendingPathComponent("missing.json").path))
        hub.close()
    }
}
