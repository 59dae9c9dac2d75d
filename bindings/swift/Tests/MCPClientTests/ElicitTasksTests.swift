import Dispatch
import Foundation
import XCTest

@testable import MCPClient

/// From Swift: URL-mode elicitation, manual input mode, -32042 and the tasks extension
/// (follow, status listener, get, cancel, resume, update) against the fixture's `url_*` and
/// `task_*` tools.
final class ElicitTasksTests: XCTestCase {
    func testURLModeHandlerGetsURLRequests() throws {
        let client = try fixtureClient()
        let seen = Locked<[JSON]>([])
        try client.onElicitation(modes: .url) { params in
            seen.with { $0.append(params) }
            return ["action": "accept", "content": ["dropped": true]]
        }
        XCTAssertEqual(text(try client.callTool("url_login")), "url login: accept")
        XCTAssertEqual(seen.get.first?["mode"]?.stringValue, "url")
        XCTAssertTrue(seen.get.first?["url"]?.stringValue?.hasPrefix("https://") ?? false)
        // URL mode alone is declared: the server never sends a form request, the call fails
        // -32021 saying what would declare form mode, and the handler is not called.
        assertMCPError(try client.callTool("elicit_once")) {
            $0.status == MCPStatus.capabilityMissing
                && $0.message.contains("register an elicitation handler for form mode")
        }
        XCTAssertEqual(seen.get.count, 1)
        // A handler with no mode could never be asked: refused.
        assertMCPError(try client.onElicitation(modes: []) { _ in ["action": "accept"] }) {
            $0.status == MCPStatus.invalidArg && $0.message.contains("one mode at least")
        }
    }

    func testAFormHandlerLeavesURLRequestsUnanswered() throws {
        let client = try fixtureClient(["--lax-capabilities"])
        try client.onElicitation(modes: .form) { _ in ["action": "accept"] }
        let error = assertMCPError(try client.callTool("url_login")) {
            if case .inputRequired = $0 { return true }
            return false
        }
        guard case .inputRequired(let e) = error else { return }
        XCTAssertEqual(e.unanswered["login"]?["params"]?["mode"]?.stringValue, "url")
    }

    func testLegacyURLElicitationRequiredCarriesItsElicitations() throws {
        let client = try fixtureClient(["--era", "legacy"])
        let error = assertMCPError(try client.callTool("url_required")) {
            if case .urlElicitationRequired = $0 { return true }
            return false
        }
        guard case .urlElicitationRequired(let e) = error else { return }
        XCTAssertEqual(e.info.rpcCode, -32042)
        XCTAssertEqual(e.elicitations.first?["elicitationId"]?.stringValue, "fixture-elicitation-1")
    }

    func testManualInputListsTheUnansweredAndARetryFinishes() throws {
        var options = ClientOptions()
        options.manualInput = ["elicitation"]
        let client = try fixtureClient(options: options)
        let error = assertMCPError(try client.callTool("elicit_once")) {
            if case .inputRequired = $0 { return true }
            return false
        }
        guard case .inputRequired(let e) = error else { return }
        XCTAssertEqual(Array(e.unanswered.keys), ["name"])
        let result = try client.callTool(
            "elicit_once", inputResponses: ["name": ["action": "accept", "content": ["name": "Swift"]]],
            requestState: e.requestState)
        XCTAssertEqual(text(result), "Hello, Swift!")
    }

    /// A client declaring tasks whose status listener records every event; `events` waits for
    /// the next one.
    private func taskClient(manualInput: [String]? = nil) throws -> (Client, Locked<[JSON]>, DispatchSemaphore) {
        var options = ClientOptions()
        options.tasks = true
        options.manualInput = manualInput
        let client = try fixtureClient(options: options)
        let events = Locked<[JSON]>([])
        let signal = DispatchSemaphore(value: 0)
        try client.onTaskStatus { task in
            events.with { $0.append(task) }
            signal.signal()
        }
        return (client, events, signal)
    }

    /// Waits for a status event matching `match`; its task id.
    private func taskID(_ events: Locked<[JSON]>, _ signal: DispatchSemaphore, _ match: (JSON) -> Bool) -> String? {
        while true {
            if let hit = events.get.first(where: match) { return hit["taskId"]?.stringValue }
            if signal.wait(timeout: .now() + 10) == .timedOut { return nil }
        }
    }

    func testATaskIsFollowedWithStatusEvents() throws {
        let (client, events, signal) = try taskClient()
        XCTAssertEqual(text(try client.callTool("task_echo", arguments: ["text": "swift"])), "task: swift")
        XCTAssertNotNil(taskID(events, signal) { $0["status"]?.stringValue == "completed" })
        XCTAssertEqual(events.get.map { $0["status"]?.stringValue ?? "" }, ["working", "working", "completed"])
        assertMCPError(try client.callTool("task_fail")) {
            if case .rpc(let code, _, _) = $0 { return code == -32603 }
            return false
        }
        try client.onTaskStatus(nil)
    }

    func testATaskIsResumedReadAndCancelledByID() throws {
        let (client, events, signal) = try taskClient()
        try client.connect()  // the 20 ms caps below are for the tasks, not for starting the server
        assertMCPError(try client.callTool("task_echo", arguments: ["text": "again"], options: CallOptions(maxTotal: 0.02))) {
            if case .timeout = $0 { return true }
            return false
        }
        let echo = try XCTUnwrap(taskID(events, signal) { _ in true })
        XCTAssertEqual(text(try client.resumeTask(echo)), "task: again")
        assertMCPError(try client.callTool("task_slow", options: CallOptions(maxTotal: 0.02))) {
            if case .timeout = $0 { return true }
            return false
        }
        let slow = try XCTUnwrap(taskID(events, signal) { $0["taskId"]?.stringValue != echo })
        XCTAssertEqual(try client.getTask(slow)["status"]?.stringValue, "working")
        try client.cancelTask(slow)
        XCTAssertEqual(try client.getTask(slow)["status"]?.stringValue, "cancelled")
        assertMCPError(try client.resumeTask(slow)) {
            if case .cancelled = $0 { return true }
            return false
        }
        assertMCPError(try client.resumeTask("task-none")) {
            if case .rpc(let code, _, _) = $0 { return code == -32602 }
            return false
        }
    }

    /// The call's timeout bounds the wait for a task that stays working: `.timeout` at the
    /// bound, the message naming the limit, tasks/cancel sent, and no tasks/get afterwards.
    func testACallTimeoutEndsATaskThatStaysWorking() throws {
        let record = FileManager.default.temporaryDirectory
            .appendingPathComponent("mcp-swift-task-timeout-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: record) }
        var options = ClientOptions()
        options.tasks = true
        let client = try fixtureClient(["--record", record], options: options)
        func requests(_ method: String) -> Int {
            let sent = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return sent.components(separatedBy: "\"method\":\"\(method)\"").count - 1
        }
        let started = Date()
        let error = assertMCPError(try client.callTool("task_stuck", options: CallOptions(timeout: 0.4, maxTotal: 6))) {
            if case .timeout = $0 { return true }
            return false
        }
        let took = Date().timeIntervalSince(started)
        XCTAssertTrue(took >= 0.4 && took < 2.5, "ended after \(took) s")
        let message = error?.message ?? ""
        XCTAssertTrue(message.contains("timed out after 400 ms: the limit is this call's timeout"), message)
        XCTAssertTrue(message.hasSuffix("; tasks/cancel sent"), message)
        XCTAssertEqual(requests("tasks/cancel"), 1)
        let gets = requests("tasks/get")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(requests("tasks/get"), gets, "still polling after the call ended")
    }

    /// The async forms. The fixture numbers tasks per process (`task-<n>`), so this client's
    /// first task is task-1.
    func testAsyncTaskCalls() async throws {
        var options = ClientOptions()
        options.tasks = true
        let client = try fixtureClient(options: options)
        try await client.connect()  // the 20 ms cap is for the task, not for starting the server
        do {
            _ = try await client.callTool("task_slow", options: CallOptions(maxTotal: 0.02))
            XCTFail("task_slow ended within 20 ms")
        } catch let e as MCPError {
            guard case .timeout = e else { return XCTFail("\(e)") }
        }
        let status = try await client.getTask("task-1")["status"]?.stringValue
        XCTAssertEqual(status, "working")
        try await client.updateTask("task-1", answers: [:])
        try await client.cancelTask("task-1")
        do {
            _ = try await client.resumeTask("task-1")
            XCTFail("a cancelled task resumed")
        } catch let e as MCPError {
            guard case .cancelled = e else { return XCTFail("\(e)") }
        }
    }

    func testUpdateTaskDeliversAnAnswerGatheredByHand() throws {
        let (client, events, signal) = try taskClient(manualInput: ["elicitation"])
        let error = assertMCPError(try client.callTool("task_input")) {
            if case .inputRequired = $0 { return true }
            return false
        }
        guard case .inputRequired(let e) = error else { return }
        XCTAssertNotNil(e.unanswered["confirm"])
        let id = try XCTUnwrap(taskID(events, signal) { $0["status"]?.stringValue == "input_required" })
        try client.updateTask(id, answers: ["confirm": ["action": "accept", "content": ["confirmed": true]]])
        // Poll by hand as a host would, at the task's pollIntervalMs (the fixture flags faster polls).
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: 0.06)
            let task = try client.getTask(id)
            guard task["status"]?.stringValue == "completed" else { continue }
            let result = try XCTUnwrap(task["result"])
            XCTAssertNotEqual(result["isError"], true)
            XCTAssertTrue(text(result)?.hasPrefix("confirmed: ") ?? false, "\(result)")
            XCTAssertTrue(text(result)?.contains("\"confirmed\":true") ?? false, "\(result)")
            return
        }
        XCTFail("the answered task never completed")
    }
}
