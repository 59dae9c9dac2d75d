import Dispatch
import Foundation
import XCTest

@testable import MCPClient

/// Multi Round-Trip Requests: automatic (closures), manual (InputRequiredError + retry), and
/// handlers replying later, failing, or releasing their responder.
final class MRTRTests: XCTestCase {
    static let elicitOnceState = #"sté:1 {"flow":"elicit_once","round":1,"values":[]} +/=\n 🔑#4bf93ac3968345b1"#
    static let threeRounds1 = #"sté:1 {"flow":"three_rounds","round":1,"values":[]} +/=\n 🔑#3ca41149c919ad5b"#
    static let threeRounds2 = #"sté:2 {"flow":"three_rounds","round":2,"values":["a"]} +/=\n 🔑#786de8b116c83101"#

    func testAutomaticElicitOnce() throws {
        let client = try fixtureClient()
        let seen = Locked<[JSON]>([])
        try client.onElicitation { params in
            seen.with { $0.append(params) }
            return ["action": "accept", "content": ["name": "Ada"]]
        }
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, Ada!")
        XCTAssertEqual(seen.get.count, 1)
        XCTAssertEqual(seen.get.first?["message"]?.stringValue, "What is your name?")
        XCTAssertEqual(seen.get.first?["requestedSchema"]?["required"], ["name"])
    }

    func testAutomaticThreeRoundsAndDecline() throws {
        let client = try fixtureClient()
        let count = Locked(0)
        try client.onElicitation { _ in
            let n = count.with { c -> Int in
                c += 1
                return c
            }
            return n == 2 ? ["action": "decline"] : ["action": "accept", "content": ["value": .string("v\(n)")]]
        }
        XCTAssertEqual(text(try client.callTool("three_rounds")), "steps: v1,(decline),v3")
        XCTAssertEqual(count.get, 3)
    }

    func testPromptAndResourceMRTR() throws {
        let client = try fixtureClient()
        try client.onElicitation { params in
            if params["requestedSchema"]?["properties"]?["topic"] != nil {
                return ["action": "accept", "content": ["topic": "swift"]]
            }
            return ["action": "accept", "content": ["password": "hunter2"]]
        }
        let prompt = try client.getPrompt("needs_input")
        XCTAssertEqual(prompt["messages"]?[0]?["content"]?["text"]?.stringValue, "Topic: swift")
        XCTAssertEqual(text(try client.readResource("fixture://needs-input")), "secret accepted")
    }

    func testSamplingAndRootsHandlers() throws {
        let client = try fixtureClient()
        try client.onElicitation { _ in ["action": "accept", "content": ["confirmed": true]] }
        try client.onSampling { params in
            XCTAssertEqual(params["maxTokens"]?.intValue, 50)
            return ["role": "assistant", "content": ["type": "text", "text": "a summary"], "model": "swift-test"]
        }
        try client.onRoots { _ in ["roots": [["uri": "file:///a"], ["uri": "file:///b"]]] }
        XCTAssertEqual(text(try client.callTool("elicit_and_sample")), "confirm=accept; summary=a summary")
        XCTAssertEqual(text(try client.callTool("roots")), "roots: file:///a,file:///b")
    }

    /// `samplingTools` declares sampling.tools: tools and toolChoice reach the handler, its
    /// tool_use answer reaches the server (SEP-1577), on both eras; an unoffered tool fails.
    func testSamplingWithTools() throws {
        var options = ClientOptions()
        options.samplingTools = true
        for era in ["modern", "legacy"] {
            let client = try fixtureClient(["--era", era], options: options)
            let seen = Locked<[JSON]>([])
            try client.onSampling { params in
                seen.with { $0.append(params) }
                if params["toolChoice"]?["mode"]?.stringValue == "none" {
                    return ["role": "assistant", "model": "m", "content": ["type": "text", "text": "mild"]]
                }
                return ["role": "assistant", "model": "m", "stopReason": "toolUse", "content": [
                    ["type": "tool_use", "id": "swift-1", "name": "get_weather", "input": ["city": "Paris"]],
                ]]
            }
            XCTAssertEqual(
                text(try client.callTool("sample_with_tools")),
                #"weather: mild; tool get_weather({"city":"Paris"}) id swift-1"#)
            XCTAssertEqual(seen.get.count, 2)
            XCTAssertEqual(seen.get.first?["tools"]?[0]?["name"]?.stringValue, "get_weather")
            XCTAssertEqual(seen.get.last?["messages"]?[2]?["content"]?[0]?["toolUseId"]?.stringValue, "swift-1")
        }
        let client = try fixtureClient(options: options)
        try client.onSampling { _ in
            ["role": "assistant", "model": "m", "content": ["type": "tool_use", "id": "x", "name": "rm_rf", "input": [:]]]
        }
        XCTAssertThrowsError(try client.callTool("sample_with_tools")) { error in
            XCTAssertTrue("\(error)".contains("which the request did not offer"), "\(error)")
        }
    }

    /// MCP Apps: each tool's UI link, a verified view, and views that fail the checks.
    func testApps() throws {
        var options = ClientOptions()
        options.apps = true
        for era in ["modern", "legacy"] {
            let client = try fixtureClient(["--apps", "--era", era], options: options)
            let tools = try client.listAll(.tools)
            var links: [String: JSON] = [:]
            for tool in tools["tools"]?.arrayValue ?? [] {
                links[tool["name"]?.stringValue ?? ""] = try toolUI(tool) ?? .null
            }
            XCTAssertEqual(links["weather_app"]?["resourceUri"]?.stringValue, "ui://fixture/weather")
            XCTAssertEqual(links["refresh_app"]?["model"], false)
            XCTAssertEqual(links["not_ui_app"], .null)
            XCTAssertTrue(try client.readApp("ui://fixture/weather")["html"]?.stringValue?.contains("weather app") == true)
            XCTAssertThrowsError(try client.readApp("ui://fixture/plain-html"))
            XCTAssertThrowsError(try client.readApp("ui://fixture/big", maxBytes: 1000))
        }
    }

    /// The async `readApp` (a started call).
    func testAppsAsync() async throws {
        var options = ClientOptions()
        options.apps = true
        let client = try fixtureClient(["--apps"], options: options)
        let blob = try await client.readApp("ui://fixture/blob")
        XCTAssertTrue(blob["html"]?.stringValue?.contains("weather app") == true)
    }

    /// Input answered by hand is declared: the fixture, like the SDK servers, asks only for
    /// declared input (-32021 otherwise).
    private var manualInput: ClientOptions {
        var options = ClientOptions()
        options.extra = ["manual_input": ["elicitation"]]
        return options
    }

    func testManualElicitOnceWithRetry() throws {
        let client = try fixtureClient(options: manualInput)
        let error = assertMCPError(try client.callTool("elicit_once")) {
            if case .inputRequired = $0 { return true } else { return false }
        }
        guard case .inputRequired(let input)? = error else { return }
        XCTAssertEqual(input.info.status, MCPStatus.inputRequired)
        XCTAssertEqual(input.requestState, Self.elicitOnceState, "requestState must be byte-exact")
        XCTAssertEqual(Array(input.requestState?.utf8 ?? "".utf8), Array(Self.elicitOnceState.utf8))
        let request = try XCTUnwrap(input.inputRequests["name"])
        XCTAssertEqual(request["method"]?.stringValue, "elicitation/create")
        XCTAssertEqual(request["params"]?["message"]?.stringValue, "What is your name?")
        XCTAssertEqual(input.result["resultType"]?.stringValue, "input_required")

        let result = try client.callTool(
            "elicit_once", inputResponses: ["name": ["action": "accept", "content": ["name": "Grace"]]],
            requestState: input.requestState)
        XCTAssertEqual(text(result), "Hello, Grace!")

        // A state that is not byte-identical is refused by the server.
        assertMCPError(try client.callTool(
            "elicit_once", inputResponses: ["name": ["action": "accept", "content": ["name": "Grace"]]],
            requestState: Self.elicitOnceState.replacingOccurrences(of: "é", with: "e"))) {
            if case .rpc(-32602, _, _) = $0 { return true } else { return false }
        }
    }

    func testManualThreeRounds() throws {
        let client = try fixtureClient(options: manualInput)
        func inputRequired(_ body: @autoclosure () throws -> JSON) -> InputRequiredError? {
            let e = assertMCPError(try body()) { if case .inputRequired = $0 { return true } else { return false } }
            if case .inputRequired(let input)? = e { return input }
            return nil
        }
        let r1 = try XCTUnwrap(inputRequired(try client.callTool("three_rounds")))
        XCTAssertEqual(r1.requestState, Self.threeRounds1)
        XCTAssertNotNil(r1.inputRequests["step1"])
        let r2 = try XCTUnwrap(inputRequired(try client.callTool(
            "three_rounds", inputResponses: ["step1": ["action": "accept", "content": ["value": "a"]]],
            requestState: r1.requestState)))
        XCTAssertEqual(r2.requestState, Self.threeRounds2)
        XCTAssertNotNil(r2.inputRequests["step2"])
        let r3 = try XCTUnwrap(inputRequired(try client.callTool(
            "three_rounds", inputResponses: ["step2": ["action": "accept", "content": ["value": "b"]]],
            requestState: r2.requestState)))
        XCTAssertTrue(r3.requestState?.hasPrefix(#"sté:3 {"flow":"three_rounds","round":3,"values":["a","b"]}"#) ?? false)
        let done = try client.callTool(
            "three_rounds", inputResponses: ["step3": ["action": "accept", "content": ["value": "c"]]],
            requestState: r3.requestState)
        XCTAssertEqual(text(done), "steps: a,b,c")
    }

    func testHandlerAnswersLaterFromAnotherThread() throws {
        let client = try fixtureClient()
        let handlerThread = Locked<String>("")
        try client.onElicitation(deferred: { request in
            handlerThread.with { $0 = "\(Thread.current)" }
            XCTAssertEqual(request.method, "elicitation/create")
            // A deliberately late reply (its delay is checked below); no thread waits by it.
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
                let wasCancelled = request.responder.isCancelled
                XCTAssertFalse(wasCancelled)
                do {
                    try request.responder.reply(["action": "accept", "content": ["name": "Later"]])
                } catch {
                    XCTFail("reply failed: \(error)")
                }
                let completed = request.responder.isCompleted
                XCTAssertTrue(completed)
                do {
                    try request.responder.reply(["action": "decline"])
                    XCTFail("a second reply was accepted")
                } catch {
                    XCTAssertEqual((error as? MCPError)?.status, MCPStatus.invalidArg)
                }
            }
        })
        let started = Date()
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, Later!")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
    }

    func testAsyncHandler() async throws {
        let client = try fixtureClient()
        try client.onElicitation(async: { params in
            try await Task.sleep(nanoseconds: 50_000_000)  // a deliberately slow async handler
            return ["action": "accept", "content": ["name": .string("async \(params["mode"]?.stringValue ?? "?")")]]
        })
        let result = try await client.callTool("elicit_once")
        XCTAssertEqual(text(result), "Hello, async form!")
    }

    func testReleasedResponderFailsTheCall() throws {
        let client = try fixtureClient()
        try client.onElicitation(deferred: { _ in })  // drops the responder without replying
        let error = assertMCPError(try client.callTool("elicit_once")) {
            if case .handlerFailed = $0 { return true } else { return false }
        }
        XCTAssertTrue(error?.message.contains("released its Responder") ?? false, "\(String(describing: error))")
    }

    func testThrowingHandler() throws {
        let client = try fixtureClient()
        try client.onElicitation { _ in throw HandlerError(code: -32001, message: "no thanks") }
        let error = assertMCPError(try client.callTool("elicit_once")) {
            if case .handlerFailed = $0 { return true } else { return false }
        }
        XCTAssertTrue(error?.message.contains("no thanks") ?? false, "\(String(describing: error))")

        // Legacy: the server receives the JSON-RPC error and turns it into a tool error.
        let legacy = try fixtureClient(["--era", "legacy"])
        try legacy.onElicitation { _ in throw HandlerError(code: -32001, message: "no thanks") }
        let result = try legacy.callTool("elicit_once")
        XCTAssertEqual(result["isError"]?.boolValue, true)
        XCTAssertEqual(text(result), "client error: no thanks")
    }

    func testBlockingCallFromHandlerIsRefused() throws {
        let client = try fixtureClient()
        let inner = Locked<MCPError?>(nil)
        try client.onElicitation { [weak client] _ in
            do {
                _ = try client?.callTool("echo", arguments: ["text": "x"])
            } catch let e as MCPError {
                inner.with { $0 = e }
            }
            return ["action": "decline"]
        }
        XCTAssertEqual(text(try client.callTool("elicit_once")), "Hello, stranger (declined)")
        XCTAssertEqual(inner.get?.status, MCPStatus.reentrantCall)
    }

    func testInputRoundsExceeded() throws {
        let client = try fixtureClient(options: ClientOptions(inputRequiredMaxRounds: 3))
        try client.onElicitation { _ in ["action": "accept", "content": ["value": "again"]] }
        let error = assertMCPError(try client.callTool("always_input")) {
            if case .inputRoundsExceeded = $0 { return true } else { return false }
        }
        if case .inputRoundsExceeded(let input)? = error {
            XCTAssertTrue(input.requestState?.hasPrefix("loop-") ?? false, "\(String(describing: input.requestState))")
            XCTAssertNotNil(input.inputRequests["again"])
        }
    }

    func testHandlersReleasedWhenReplacedAndOnDeinit() throws {
        final class Tracker: @unchecked Sendable {
            let released: XCTestExpectation
            init(_ e: XCTestExpectation) { released = e }
            deinit { released.fulfill() }
        }
        let first = expectation(description: "replaced handler released")
        let second = expectation(description: "handler released when the client is freed")
        var client: Client? = try fixtureClient()
        do {
            let t1 = Tracker(first)
            try client?.onElicitation { _ in _ = t1; return ["action": "decline"] }
            let t2 = Tracker(second)
            try client?.onElicitation { _ in _ = t2; return ["action": "decline"] }
        }
        wait(for: [first], timeout: 5)
        XCTAssertEqual(text(try XCTUnwrap(client).callTool("elicit_once")), "Hello, stranger (declined)")
        client = nil
        wait(for: [second], timeout: 5)
    }
}
