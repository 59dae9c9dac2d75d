import Foundation
import XCTest

@testable import MCPClient

struct FixtureMissing: Error, CustomStringConvertible {
    var description: String { "set MCP_FIXTURE to the mcp-fixture-server binary (run-tests.sh does)" }
}

/// The fixture server binary, from the environment.
func fixturePath() throws -> String {
    guard let path = ProcessInfo.processInfo.environment["MCP_FIXTURE"], !path.isEmpty else { throw FixtureMissing() }
    return path
}

/// A stdio client on the fixture. Every request has a 10 s timeout, so no test can hang.
func fixtureClient(_ args: [String] = [], options: ClientOptions? = nil) throws -> Client {
    var options = options ?? ClientOptions()
    if options.requestTimeout == nil { options.requestTimeout = 10 }
    return try Client(stdio: try fixturePath(), args: args, options: options)
}

/// The first text block of a tool or resource result.
func text(_ result: JSON) -> String? {
    result["content"]?[0]?["text"]?.stringValue ?? result["contents"]?[0]?["text"]?.stringValue
}

/// A thread-safe box for values collected on other threads.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func with<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var get: T { with { $0 } }
}

/// Asserts that `body` throws an MCPError matching `match`; returns the error.
@discardableResult
func assertMCPError<T>(
    _ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line,
    _ match: (MCPError) -> Bool
) -> MCPError? {
    do {
        let value = try body()
        XCTFail("expected an MCPError, got \(value)", file: file, line: line)
    } catch let error as MCPError {
        XCTAssertTrue(match(error), "unexpected error: \(error)", file: file, line: line)
        return error
    } catch {
        XCTFail("expected an MCPError, got \(error)", file: file, line: line)
    }
    return nil
}

/// Runs `body` on a new thread.
func background(_ body: @escaping @Sendable () -> Void) {
    Thread { body() }.start()
}

/// A fixture server process serving HTTP (`--http 127.0.0.1:0`), stopped on deinit.
final class HTTPFixture {
    let process = Process()
    let stdin = Pipe()
    let url: String

    /// The fixture exited or printed no URL; `output` is what it wrote.
    struct DidNotStart: Error { let output: String }

    init(_ extra: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: try fixturePath())
        process.arguments = ["--http", "127.0.0.1:0"] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        process.standardInput = stdin  // the fixture exits when its stdin closes
        let seen = Locked("")
        let found = DispatchSemaphore(value: 0)
        out.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                found.signal()
                return
            }
            let text = seen.with { s -> String in
                s += String(decoding: data, as: UTF8.self)
                return s
            }
            if text.contains("fixture: listening on ") && text.contains("/mcp") { found.signal() }
        }
        process.terminationHandler = { _ in found.signal() }  // e.g. a bad flag
        try process.run()
        _ = found.wait(timeout: .now() + 10)
        // Exited: the other of the two signals (EOF on the output, exit) marks the last output read.
        if !process.isRunning { _ = found.wait(timeout: .now() + 2) }
        let output = seen.get
        guard let range = output.range(of: "fixture: listening on ") else {
            process.terminate()
            throw DidNotStart(output: output)
        }
        url = String(output[range.upperBound...].prefix { !$0.isWhitespace })
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
