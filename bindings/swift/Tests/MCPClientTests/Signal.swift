import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The fixture server's `--signal` FIFO (tests/fixture-server/README.md): the server writes
/// `request <method> <name>` when it reads a request, so a test waits until another thread's call
/// reached the server (for `hang`: is blocked for good) instead of sleeping for a guessed time.
final class FixtureSignal {
    let path: String
    private let dir: String
    private var fd: Int32 = -1
    private var buffer = [UInt8]()

    init() throws {
        dir = NSTemporaryDirectory() + "mcp-swift-signal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        path = dir + "/signal.fifo"
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.EIO) }
        // Read-write: opening does not wait for the server, and EOF never comes.
        fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.EIO) }
    }

    deinit {
        if fd >= 0 { close(fd) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The fixture flags that turn the signal on.
    var args: [String] { ["--signal", path] }

    /// Consumes lines until `count` of them started with `prefix`; fails the test after `timeout`.
    func wait(_ prefix: String, count: Int = 1, timeout: TimeInterval = 10,
              file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(timeout)
        var left = count
        while left > 0 {
            while left > 0, let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                if String(decoding: buffer[..<nl], as: UTF8.self).hasPrefix(prefix) { left -= 1 }
                buffer.removeSubrange(...nl)
            }
            if left == 0 { return }
            let ms = Int32(deadline.timeIntervalSinceNow * 1000)
            if ms <= 0 {
                XCTFail("the fixture did not signal \(prefix) \(count) times", file: file, line: line)
                return
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, ms) > 0 {
                var chunk = [UInt8](repeating: 0, count: 1024)
                let got = read(fd, &chunk, chunk.count)
                if got > 0 { buffer.append(contentsOf: chunk[..<got]) }
            }
        }
    }
}
