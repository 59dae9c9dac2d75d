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
}
