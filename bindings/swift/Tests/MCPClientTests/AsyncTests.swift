import Foundation
import XCTest

@testable import MCPClient

/// The async API on started calls: no thread per call, Task cancellation cancels the call at
/// once, handlers hear about it through the library's pushed cancellation.
final class AsyncTests: XCTestCase {
    /// Waits until `count` started calls are in flight (the binding's own count).
    private func waitInFlight(_ count: Int) async throws {
        let deadline = Date().addingTimeInterval(10)
        while StartedCall.inFlight < count {
            if Date() > deadline {
                XCTFail("only \(StartedCall.inFlight) of \(count) calls started")
                return
            }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }

    private func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    private func expectCancelled<T>(_ task: Task<T, Error>, file: StaticString = #filePath, line: UInt = #line) async {
        do {
            let value = try await task.value
            XCTFail("expected MCPError.cancelled, got \(value)", file: file, line: line)
        } catch MCPError.cancelled {
        } catch {
            XCTFail("expected MCPError.cancelled, got \(error)", file: file, line: line)
        }
    }

    func testTaskCancellationCancelsStartedCallsAtOnce() async throws {
        let client = try fixtureClient()
        try await client.connect()
        let base = StartedCall.inFlight
        let threads = threadCount()
        let count = 64
        let tasks = (0..<count).map { _ in Task { try await client.callTool("hang", timeout: 30) } }
        try await waitInFlight(base + count)
        XCTAssertLessThan(threadCount() - threads, 16, "\(count) calls in flight must not hold a thread each")
        let started = Date()
        tasks.forEach { $0.cancel() }
        for task in tasks { await expectCancelled(task) }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(StartedCall.inFlight, base)
        let echoed = try await client.callTool("echo", arguments: ["text": "after"])
        XCTAssertEqual(text(echoed), "after")
    }

    func testAlreadyCancelledTaskFailsAtOnce() async throws {
        let client = try fixtureClient()
        try await client.connect()
        let task = Task { () async throws -> JSON in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.callTool("hang", timeout: 30)
        }
        await expectCancelled(task)
    }

    func testPingAndLogLevelAsStartedCalls() async throws {
        let legacy = try fixtureClient(["--era", "legacy"])
        _ = try await legacy.connect()
        try await legacy.ping()
        do {
            try await legacy.setLogLevel("loud")
            XCTFail("an unknown level was accepted")
        } catch let error as MCPError {
            XCTAssertEqual(error.status, MCPStatus.invalidArg)
        }
        try await legacy.setLogLevel("debug")
        let level = try await legacy.callTool("log_level")
        XCTAssertEqual(text(level), "debug")
        let modern = try fixtureClient()
        _ = try await modern.connect()
        do {
            try await modern.ping()
            XCTFail("modern servers removed ping")
        } catch let error as MCPError {
            XCTAssertEqual(error.status, MCPStatus.unsupported)
        }
    }

    func testCloseCompletesStartedCalls() async throws {
        let client = try fixtureClient()
        try await client.connect()
        let base = StartedCall.inFlight
        let task = Task { try await client.callTool("hang", timeout: 30) }
        try await waitInFlight(base + 1)
        client.close()
        do {
            _ = try await task.value
            XCTFail("the hang call returned")
        } catch MCPError.closed {
        } catch {
            XCTFail("expected MCPError.closed, got \(error)")
        }
    }

    func testAsyncHandlerTaskCancelledWhenTheCallIsCancelled() async throws {
        let client = try fixtureClient()
        let (events, signal) = AsyncStream<String>.makeStream()
        try client.onElicitation(async: { _ in
            signal.yield("started")
            do {
                try await Task.sleep(nanoseconds: 20_000_000_000)
                signal.yield("slept: never cancelled")
            } catch {
                signal.yield("cancelled")
            }
            throw HandlerError(message: "gone")
        })
        try await client.connect()
        let call = Task { try await client.callTool("elicit_once") }
        var it = events.makeAsyncIterator()
        let first = await it.next()
        XCTAssertEqual(first, "started")
        call.cancel()
        await expectCancelled(call)
        let second = await it.next()
        XCTAssertEqual(second, "cancelled")
    }

    func testResponderCancelHookRunsWhenTheCallIsCancelled() async throws {
        let client = try fixtureClient()
        let (events, signal) = AsyncStream<String>.makeStream()
        let held = Locked<Responder?>(nil)
        try client.onElicitation(deferred: { request in
            held.with { $0 = request.responder }
            do {
                try request.responder.onCancel { signal.yield("cancelled") }
            } catch {
                signal.yield("onCancel failed: \(error)")
            }
            signal.yield("started")
        })
        try await client.connect()
        let call = Task { try await client.callTool("elicit_once") }
        var it = events.makeAsyncIterator()
        let first = await it.next()
        XCTAssertEqual(first, "started")
        call.cancel()
        await expectCancelled(call)
        let second = await it.next()
        XCTAssertEqual(second, "cancelled")
        let responder = try XCTUnwrap(held.get)
        XCTAssertTrue(responder.isCancelled)
        assertMCPError(try responder.reply(["action": "decline"])) {
            if case .cancelled = $0 { return true } else { return false }
        }
    }

    func testSubscriptionNextTaskCancellation() async throws {
        let client = try fixtureClient()
        let sub = try await client.listen(["toolsListChanged": true])
        let base = StartedCall.inFlight
        let read = Task { try await sub.next() }
        try await waitInFlight(base + 1)
        let started = Date()
        read.cancel()
        await expectCancelled(read)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        let idle = try await sub.next(timeout: 0.05)
        XCTAssertNil(idle, "nothing yet")
        _ = try await client.callTool("notify")
        let event = try await sub.next(timeout: 5)
        XCTAssertEqual(event?.method, "notifications/tools/list_changed")
    }

    /// Status of an `async` call that must fail, or nil (with a failure recorded) if it did not.
    private func failure(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async
        -> MCPError?
    {
        do {
            try await body()
            XCTFail("expected an MCPError", file: file, line: line)
        } catch let e as MCPError {
            return e
        } catch {
            XCTFail("expected an MCPError, got \(error)", file: file, line: line)
        }
        return nil
    }

    /// The started forms of the tasks, skills, listen and legacy subscription calls.
    func testTasksSkillsListenAndLegacyAsStartedCalls() async throws {
        var options = ClientOptions()
        options.tasks = true
        options.manualInput = ["elicitation"]
        let client = try fixtureClient(options: options)
        let waiting = Guarded<String?>(nil)
        try client.onTaskStatus { task in
            if task["status"]?.stringValue == "input_required" { waiting.with { $0 = task["taskId"]?.stringValue } }
        }
        let needsInput = await failure { _ = try await client.callTool("task_input") }
        guard case .inputRequired = needsInput else { return XCTFail("task_input: \(String(describing: needsInput))") }
        let deadline = Date().addingTimeInterval(10)
        while waiting.with({ $0 }) == nil && Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        let id = try XCTUnwrap(waiting.with { $0 })
        try await client.updateTask(id, answers: ["confirm": ["action": "accept", "content": ["confirmed": true]]])
        try await Task.sleep(nanoseconds: 60_000_000)  // the fixture flags polls closer than its pollIntervalMs
        let resumed = try await client.resumeTask(id)
        XCTAssertTrue(text(resumed)?.hasPrefix("confirmed: ") ?? false, "\(resumed)")
        let task = try await client.getTask(id)
        XCTAssertEqual(task["status"]?.stringValue, "completed")
        let unknown = await failure { try await client.cancelTask("task-none") }
        guard case .rpc(let code, _, _) = unknown, code == -32602 else { return XCTFail("\(String(describing: unknown))") }

        var skilled = ClientOptions()
        skilled.extra = ["skills": true]
        let skills = try fixtureClient(["--skills", "genuine"], options: skilled)
        let listing = try await skills.listSkills()
        XCTAssertEqual(listing["rejected"], [])
        let hello = try await skills.getSkill("skill://fixture/hello-world/SKILL.md")
        let md = try await skills.readSkillFile(hello)
        XCTAssertTrue(md["text"]?.stringValue?.contains("Say hello") ?? false, "\(md)")
        let other = await failure {
            _ = try await skills.readSkillFile(hello, fileURI: "skill://fixture/hello-world/other.md")
        }
        XCTAssertEqual(other?.status, MCPStatus.skillVerificationFailed)

        let modern = try fixtureClient()
        let tools = try await modern.tools()
        XCTAssertTrue(tools.contains { $0["name"]?.stringValue == "echo" })
        let sub = try await modern.listen(["toolsListChanged": true])
        XCTAssertEqual(try sub.acknowledged()["toolsListChanged"], true)
        _ = try await modern.callTool("notify")
        let event = try await sub.next(timeout: 5)
        XCTAssertEqual(event?.method, "notifications/tools/list_changed")
        let legacy = try fixtureClient(["--era", "legacy"])
        let refused = await failure { _ = try await legacy.listen(["toolsListChanged": true]) }
        XCTAssertEqual(refused?.status, MCPStatus.unsupported)
        try await legacy.subscribeResource("fixture://static")
        try await legacy.unsubscribeResource("fixture://static")
        try await legacy.notifyRootsChanged()
    }
}
