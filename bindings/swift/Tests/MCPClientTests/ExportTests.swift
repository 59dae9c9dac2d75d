import Foundation
import XCTest

@testable import MCPClient

/// Tools for the model from Swift: the fixture's tools exported to every format, faked model
/// replies' calls found and made on a client and on a hub of two members (one of each era, the
/// legacy one's filter withholding `add`), sync and async, and results converted.
final class ExportTests: XCTestCase {
    /// A model reply holding one call to `name` with `args`, in `format`'s shape.
    private func reply(_ format: ExportFormat, _ name: String, _ args: JSON) -> JSON {
        switch format {
        case .openAIChat:
            return ["role": "assistant", "content": .null, "tool_calls": [
                ["id": "call_1", "type": "function", "function": ["name": .string(name), "arguments": .string(args.text)]],
            ]]
        case .openAIResponses:
            return ["output": [["type": "function_call", "call_id": "call_1", "name": .string(name),
                                "arguments": .string(args.text)]]]
        case .anthropic:
            return ["role": "assistant", "content": [["type": "text", "text": "calling"],
                                                     ["type": "tool_use", "id": "toolu_1", "name": .string(name), "input": args]]]
        case .gemini:
            return ["candidates": [["content": ["role": "model", "parts": [
                ["functionCall": ["id": "g1", "name": .string(name), "args": args]]]]]]]
        }
    }

    /// Everything a result message says, whatever its shape.
    private func said(_ message: JSON) -> String { message.text }

    func testExportFindDispatchAndConvertOnAClient() throws {
        let client = try fixtureClient()
        defer { client.close() }
        let tools = try client.listAll(.tools)
        for format in ExportFormat.allCases {
            let exported = try ModelTools.export(tools, format: format, strict: format == .openAIChat)
            XCTAssertEqual(exported["format"]?.stringValue, format.rawValue)
            XCTAssertEqual(exported["routes"]?["echo"]?["tool"]?.stringValue, "echo")
            let call = { (name: String, args: JSON) throws -> JSON in
                let calls = try ModelTools.calls(in: self.reply(format, name, args), exported: exported)
                XCTAssertEqual(calls.count, 1)
                return calls[0]
            }
            XCTAssertTrue(said(try client.dispatchToolCall(exported, call: try call("echo", ["text": "hi swift"])))
                .contains("hi swift"))
            XCTAssertTrue(said(try client.dispatchToolCall(exported, call: try call("fail", [:])))
                .contains("tool failed on purpose"))
            XCTAssertTrue(said(try client.dispatchToolCall(exported, call: try call("add", ["a": 1])))
                .contains("is missing"))
            let big = try client.dispatchToolCall(exported, call: try call("big", ["bytes": 100]),
                                                  dispatch: DispatchOptions(maxChars: 5))
            XCTAssertTrue(said(big).contains("[truncated: 5 of 100 characters shown]"), said(big))
            let media = try client.dispatchToolCall(exported, call: try call("media", [:]))
            if format == .anthropic { XCTAssertEqual(media["content"]?[1]?["type"]?.stringValue, "image") }
            assertMCPError(try client.dispatchToolCall(exported, call: try call("rpc_error", [:]),
                                                       dispatch: DispatchOptions(errorsAsResults: false))) {
                $0.info.status == MCPStatus.jsonrpcError
            }
            let converted = try ModelTools.resultMessage(exported, call: try call("echo", ["text": "x"]),
                                                         result: ["content": [["type": "text", "text": "done"]]])
            XCTAssertTrue(said(converted).contains("done"))
        }
        let legacy = try ModelTools.export(tools, format: .gemini, geminiLegacyParameters: true)
        XCTAssertNotNil(legacy["tools"]?[0]?["parameters"])
        assertMCPError(try ModelTools.export(["tools": "nope"], format: .anthropic)) {
            $0.info.status == MCPStatus.invalidArg
        }
    }

    func testDispatchAsyncOnAClient() async throws {
        let client = try fixtureClient()
        defer { client.close() }
        let exported = try ModelTools.export(try await client.listAll(.tools), format: .anthropic)
        let call = try ModelTools.calls(in: reply(.anthropic, "echo", ["text": "async"]), exported: exported)[0]
        let message = try await client.dispatchToolCall(exported, call: call)
        XCTAssertEqual(message["tool_use_id"]?.stringValue, "toolu_1")
        XCTAssertEqual(message["content"]?[0]?["text"]?.stringValue, "async")
        let hang = try ModelTools.calls(in: reply(.anthropic, "hang", [:]), exported: exported)[0]
        let late = try await client.dispatchToolCall(exported, call: hang, timeout: 0.2)
        XCTAssertEqual(late["is_error"], .bool(true))
    }

    /// Two fixture members, one of each era; the legacy one's filter withholds `add`.
    private func twoEraHub() throws -> Hub {
        let fixture = try fixturePath()
        let text = JSON.object(["mcpServers": [
            "new": ["command": .string(fixture), "args": ["--era", "modern"]],
            "old": ["command": .string(fixture), "args": ["--era", "legacy"],
                    "mcp_client": ["tools": ["deny": ["add"]]]],
        ]]).text
        return try Hub(text: text)
    }

    func testDispatchOnAHubReachesTheMember() throws {
        let hub = try twoEraHub()
        defer { hub.close() }
        try hub.start()
        for format in ExportFormat.allCases {
            let exported = try ModelTools.export(try hub.list(.tools), format: format)
            XCTAssertEqual(exported["routes"]?["old__echo"]?["server"]?.stringValue, "old")
            XCTAssertEqual(exported["routes"]?["old__echo"]?["tool"]?.stringValue, "echo")
            XCTAssertNil(exported["routes"]?["old__add"])
            let make = { (name: String, args: JSON) throws -> String in
                let call = try ModelTools.calls(in: self.reply(format, name, args), exported: exported)[0]
                return self.said(try hub.dispatchToolCall(exported, call: call))
            }
            XCTAssertTrue(try make("old__echo", ["text": "from old"]).contains("from old"))
            // The modern member's request carries the modern version in _meta; the legacy one's not.
            XCTAssertTrue(try make("new__echo_meta", [:]).contains("2026-07-28"))
            XCTAssertFalse(try make("old__echo_meta", [:]).contains("2026-07-28"))
            for name in ["old__add", "nobody__echo"] {
                XCTAssertTrue(try make(name, ["a": 1, "b": 2]).contains("There is no tool named"), name)
            }
        }
    }

    func testDispatchAsyncOnAHub() async throws {
        let hub = try twoEraHub()
        defer { hub.close() }
        try await hub.start()
        let exported = try ModelTools.export(try await hub.list(.tools), format: .openAIResponses)
        async let fromNew = hub.dispatchToolCall(
            exported, call: try ModelTools.calls(in: reply(.openAIResponses, "new__echo", ["text": "new"]), exported: exported)[0])
        async let fromOld = hub.dispatchToolCall(
            exported, call: try ModelTools.calls(in: reply(.openAIResponses, "old__echo", ["text": "old"]), exported: exported)[0])
        let (a, b) = try await (fromNew, fromOld)
        XCTAssertEqual(a["output"]?.stringValue, "new")
        XCTAssertEqual(b["output"]?.stringValue, "old")
        let withheld = try ModelTools.calls(in: reply(.openAIResponses, "old__add", ["a": 1, "b": 2]), exported: exported)[0]
        let refused = try await hub.dispatchToolCall(exported, call: withheld)
        XCTAssertTrue(refused["output"]?.stringValue?.contains("There is no tool named") ?? false, refused.text)
    }
}
