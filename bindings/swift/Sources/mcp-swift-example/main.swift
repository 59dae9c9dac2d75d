// A short tour: connect to an MCP server over stdio, list its tools, call one, and answer an
// elicitation with a closure (automatic Multi Round-Trip Requests).
//
//   swift run mcp-swift-example <server command> [args...]     (from the repository root)
//   e.g. swift run mcp-swift-example target/debug/mcp-fixture-server
import Foundation
import MCPClient

let argv = CommandLine.arguments
guard argv.count >= 2 else {
    print("usage: mcp-swift-example <server command> [args...]")
    exit(2)
}

do {
    let client = try Client(stdio: argv[1], args: Array(argv.dropFirst(2)))
    defer { client.close() }

    try client.onElicitation { params in
        print("server asks: \(params["message"]?.stringValue ?? "?")")
        return ["action": "accept", "content": ["name": "Ada"]]
    }

    let info = try client.connect()
    print("connected: \(info.serverInfo["name"]?.stringValue ?? "?"), \(info.era) era, protocol \(info.protocolVersion)")
    print("tools: " + (try client.tools().compactMap { $0["name"]?.stringValue }.joined(separator: ", ")))

    let sum = try client.callTool("add", arguments: ["a": 2, "b": 3])
    print("add(2, 3) = \(sum["content"]?[0]?["text"]?.stringValue ?? "?")")

    let greeting = try client.callTool("elicit_once")  // the handler above answers the server's question
    print(greeting["content"]?[0]?["text"]?.stringValue ?? "?")
} catch {
    print("failed: \(error)")
    exit(1)
}
