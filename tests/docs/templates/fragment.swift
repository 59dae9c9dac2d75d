// Template for ```swift fragment blocks (tests/docs/check.py): the block is the body of
// example(_:), called with a `client` on the fixture server, next to stand-ins for what a host
// application provides (a browser, a login sheet, a keychain).
import Foundation
import MCPClient

func openInBrowser(_ url: String) { print("open \(url)") }

/// A login window: the host calls onRedirect with the URL the browser landed on, or onCancel.
final class LoginSheet: @unchecked Sendable {
    var onRedirect: (String) -> Void = { _ in }
    var onCancel: () -> Void = {}
}

/// Secrets by name. Locked: the token store's closures run on the library's threads.
final class Keychain: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: String] = [:]
    subscript(name: String) -> String? {
        get { lock.lock(); defer { lock.unlock() }; return items[name] }
        set { lock.lock(); defer { lock.unlock() }; items[name] = newValue }
    }
}

let loginSheet = LoginSheet()
let keychain = Keychain()

func example(_ client: Client) throws {
    {{BODY}}
}

let client = try Client(stdio: "target/debug/mcp-fixture-server")
defer { client.close() }
try example(client)
