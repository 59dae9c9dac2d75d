// swift-tools-version:5.9
// The Swift binding of mcp_client (bindings/swift). This manifest sits at the repository root
// because SwiftPM only resolves a remote dependency whose Package.swift is at the root of the
// repository; the sources stay in bindings/swift and are reached with `path:`.
//
// The native library is not built by SwiftPM: install it (`make install`) and let SwiftPM find
// it through pkg-config. CMCPClient reads mcp_client.pc (PKG_CONFIG_PATH is honoured): Cflags
// give the directory of <mcp_client.h>, Libs the library to link. The installed mcp_client.pc
// links the shared library; a directory whose mcp_client.pc is (a link to) mcp_client-static.pc,
// put first in PKG_CONFIG_PATH, links the static archive instead. No unsafe flags, so any
// package can depend on this one. See bindings/swift/README.md.
import PackageDescription

let package = Package(
    name: "MCPClient",
    products: [
        .library(name: "MCPClient", targets: ["MCPClient"]),
    ],
    targets: [
        .systemLibrary(
            name: "CMCPClient",
            path: "bindings/swift/Sources/CMCPClient",
            pkgConfig: "mcp_client"
        ),
        .target(name: "MCPClient", dependencies: ["CMCPClient"], path: "bindings/swift/Sources/MCPClient"),
        .executableTarget(
            name: "mcp-swift-example",
            dependencies: ["MCPClient"],
            path: "bindings/swift/Sources/mcp-swift-example"
        ),
        .testTarget(
            name: "MCPClientTests",
            dependencies: ["MCPClient"],
            path: "bindings/swift/Tests/MCPClientTests"
        ),
    ]
)
