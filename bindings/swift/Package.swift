// swift-tools-version:5.9
// The Swift binding of mcp_client (the Rust MCP client exported through a C ABI).
//
// The native library is not built by SwiftPM. Build it first (`cargo build --workspace` in the
// repository root), then tell the linker where libmcp_client.a is:
//
//     swift build -Xlinker -L/path/to/dir-with-libmcp_client.a
//     swift test  -Xlinker -L/path/to/dir-with-libmcp_client.a
//
// or export MCP_CLIENT_LIB_DIR=/path/to/dir (added here as an unsafe linker flag, so only for
// root packages). Point it at a directory holding only the static library to link statically
// (the linker prefers libmcp_client.so when both are present); run-tests.sh does exactly that.
import PackageDescription
import Foundation

var linkerSettings: [LinkerSetting] = []
if let dir = ProcessInfo.processInfo.environment["MCP_CLIENT_LIB_DIR"], !dir.isEmpty {
    linkerSettings.append(.unsafeFlags(["-L", dir]))
}

let package = Package(
    name: "MCPClient",
    products: [
        .library(name: "MCPClient", targets: ["MCPClient"]),
        .executable(name: "mcp-swift-example", targets: ["mcp-swift-example"]),
    ],
    targets: [
        .systemLibrary(name: "CMCPClient", path: "Sources/CMCPClient"),
        .target(name: "MCPClient", dependencies: ["CMCPClient"], linkerSettings: linkerSettings),
        .executableTarget(name: "mcp-swift-example", dependencies: ["MCPClient"]),
        .testTarget(name: "MCPClientTests", dependencies: ["MCPClient"]),
    ]
)
