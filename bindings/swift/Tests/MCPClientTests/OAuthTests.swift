import Foundation
import XCTest

@testable import MCPClient

/// OAuth 2.1 against `mcp-fixture-server --http 127.0.0.1:0 --oauth`: the fixture is the
/// protected MCP endpoint and its own authorization server, and `/authorize` redirects at once, so
/// a handler answers with `Client.fetchRedirect` instead of a browser.
final class OAuthTests: XCTestCase {
    private func fixture(_ extra: [String] = []) throws -> HTTPFixture {
        try HTTPFixture(["--oauth"] + extra)
    }

    /// The fixture's issuer: its URL without `/mcp`; secrets are configured for it.
    private func issuer(_ server: HTTPFixture) -> JSON {
        .string(String(server.url.dropLast("/mcp".count)))
    }

    private func client(_ server: HTTPFixture, oauth: JSON = [:], mode: Mode = .auto) throws -> Client {
        try Client(http: server.url, oauth: oauth, options: ClientOptions(mode: mode, requestTimeout: 10))
    }

    /// A token store shared by clients (what a keychain would be).
    final class MemoryStore: @unchecked Sendable {
        let records = Locked<[String: String]>([:])
        let loads = Locked<[String]>([])
        let saves = Locked<[String]>([])

        func install(on client: Client) throws {
            try client.setTokenStore(
                load: { issuer in
                    self.loads.with { $0.append(issuer) }
                    return self.records.with { $0[issuer] }
                },
                save: { issuer, record in
                    self.saves.with { $0.append(issuer) }
                    self.records.with { $0[issuer] = record }
                })
        }
    }

    /// The immediate form: return the URL the browser was redirected to.
    func testAuthorizationCodeFlowWithFetchRedirect() throws {
        let server = try fixture()
        let client = try client(server)
        let seen = Locked<[AuthorizationRequest]>([])
        try client.onAuthorization { request in
            seen.with { $0.append(request) }
            return try Client.fetchRedirect(request.url, timeout: 5)
        }
        let info = try client.connect()
        XCTAssertEqual(info.serverInfo["name"]?.stringValue, "mcp-fixture-server")
        XCTAssertEqual(text(try client.callTool("add", arguments: ["a": 2, "b": 3])), "5")
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "authorized"])), "authorized")
        let requests = seen.get
        XCTAssertEqual(requests.count, 1, "the token is reused: one authorization")
        XCTAssertTrue(requests.first?.url.contains("/authorize?") ?? false)
        XCTAssertTrue(requests.first?.url.contains("code_challenge_method=S256") ?? false)
        XCTAssertTrue(requests.first?.redirectURI?.hasPrefix("http://127.0.0.1:") ?? false,
                      "the loopback listener's redirect URI: \(String(describing: requests.first?.redirectURI))")
        client.close()
    }

    /// The deferred form: the responder goes to another thread and is completed later.
    func testDeferredResponderCompletedFromAnotherThread() throws {
        let server = try fixture()
        let client = try client(server)
        let calls = Locked(0)
        let replyThrew = Locked<Error?>(nil)
        try client.onAuthorization(deferred: { request, responder in
            calls.with { $0 += 1 }
            background {
                Thread.sleep(forTimeInterval: 0.05)  // a deliberately late reply
                do {
                    try responder.reply(redirectURL: try Client.fetchRedirect(request.url, timeout: 5))
                } catch {
                    replyThrew.with { $0 = error }
                    try? responder.fail("\(error)")
                }
            }
        })
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "later"])), "later")
        XCTAssertEqual(calls.get, 1)
        XCTAssertNil(replyThrew.get)
        client.close()
    }

    /// nil: the loopback listener receives the redirect. The "browser" here is a GET of the
    /// redirect URL, which reaches the listener (it answers 200, so fetchRedirect reports that).
    func testNilLeavesTheRedirectToTheLoopbackListener() throws {
        let server = try fixture()
        let client = try client(server)
        let listenerStatus = Locked<Int?>(nil)
        try client.onAuthorization { request in
            let location = try Client.fetchRedirect(request.url, timeout: 5)
            do {
                _ = try Client.fetchRedirect(location, timeout: 5)
            } catch let e as MCPError {
                listenerStatus.with { $0 = e.httpStatus }
            }
            return nil
        }
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "via listener"])), "via listener")
        XCTAssertEqual(listenerStatus.get, 200)
        client.close()
    }

    /// A host-handled `redirect_uri`: the handler sees it and must answer; nil then fails the
    /// flow (there is no loopback listener).
    func testHostRedirectURI() throws {
        let server = try fixture()
        let redirect = "http://127.0.0.1:1/swift-callback"
        let client = try client(server, oauth: ["redirect_uri": .string(redirect)])
        let seen = Locked<String?>(nil)
        try client.onAuthorization { request in
            seen.with { $0 = request.redirectURI }
            return try Client.fetchRedirect(request.url, timeout: 5)
        }
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "host redirect"])), "host redirect")
        XCTAssertEqual(seen.get, redirect)
        client.close()

        let empty = try self.client(server, oauth: ["redirect_uri": .string(redirect)])
        try empty.onAuthorization { _ in nil }
        assertMCPError(try empty.callTool("echo", arguments: ["text": "x"])) {
            if case .authRequired = $0 { return true } else { return false }
        }
        empty.close()
    }

    /// The first client saves its record; a second client with the same store reuses it and
    /// never calls its handler.
    func testTokenStoreSavesAndASecondClientReusesTheRecord() throws {
        let server = try fixture()
        let store = MemoryStore()
        do {
            let first = try client(server)
            try store.install(on: first)
            try first.onAuthorization { try Client.fetchRedirect($0.url, timeout: 5) }
            XCTAssertEqual(text(try first.callTool("echo", arguments: ["text": "one"])), "one")
            first.close()
        }
        let records = store.records.get
        XCTAssertEqual(records.count, 1)
        XCTAssertFalse(store.saves.get.isEmpty)
        let (issuer, recordText) = try XCTUnwrap(records.first)
        XCTAssertTrue(issuer.hasPrefix("http://127.0.0.1:"), issuer)
        let record = try JSON.parse(recordText)
        XCTAssertNotNil(record["client"]?["client_id"]?.stringValue, "a dynamically registered client: \(record)")
        XCTAssertTrue(recordText.contains("\"access_token\""), "the record holds the tokens")

        let loadsBefore = store.loads.get.count
        let second = try client(server)
        try store.install(on: second)
        let secondCalls = Locked(0)
        try second.onAuthorization(deferred: { _, responder in
            secondCalls.with { $0 += 1 }
            try? responder.fail("the second client must not need a browser")
        })
        XCTAssertEqual(text(try second.callTool("echo", arguments: ["text": "two"])), "two")
        XCTAssertEqual(secondCalls.get, 0)
        XCTAssertGreaterThan(store.loads.get.count, loadsBefore)
        second.close()
    }

    /// Every way a handler can fail ends the call with `.authRequired` (nothing hangs).
    func testHandlerFailuresFailTheCallWithAuthRequired() throws {
        let server = try fixture()
        func expectAuthRequired(_ client: Client, containing needle: String?, line: UInt = #line) {
            let error = assertMCPError(try client.callTool("echo", arguments: ["text": "x"]), line: line) {
                if case .authRequired = $0 { return true } else { return false }
            }
            XCTAssertEqual(error?.status, MCPStatus.authRequired, line: line)
            if let needle {
                XCTAssertTrue(error?.message.contains(needle) ?? false, "\(String(describing: error))", line: line)
            }
            client.close()
        }

        struct NoBrowser: Error, CustomStringConvertible { var description: String { "no browser available" } }
        let throwing = try client(server)
        try throwing.onAuthorization { _ in throw NoBrowser() }
        expectAuthRequired(throwing, containing: "no browser available")

        let failing = try client(server)
        try failing.onAuthorization(deferred: { _, responder in try? responder.fail("the user closed the browser") })
        expectAuthRequired(failing, containing: "the user closed the browser")

        let dropping = try client(server)
        try dropping.onAuthorization(deferred: { _, _ in })
        expectAuthRequired(dropping, containing: "without replying")

        let later = try client(server)
        try later.onAuthorization(deferred: { _, responder in
            background {
                Thread.sleep(forTimeInterval: 0.05)  // a deliberately late failure
                try? responder.fail("denied later")
            }
        })
        expectAuthRequired(later, containing: "denied later")

        // An unusable redirect: the call fails, the client is not poisoned.
        let forged = try client(server)
        let calls = Locked(0)
        try forged.onAuthorization { request in
            let n = calls.with { c -> Int in
                c += 1
                return c
            }
            return n == 1 ? "http://127.0.0.1:1/callback?code=forged&state=wrong"
                : try Client.fetchRedirect(request.url, timeout: 5)
        }
        assertMCPError(try forged.callTool("echo", arguments: ["text": "x"])) { _ in true }
        XCTAssertEqual(text(try forged.callTool("echo", arguments: ["text": "retry works"])), "retry works")
        forged.close()
    }

    /// Without OAuth the 401 is `.authRequired` with the HTTP status and the challenge.
    func testUnauthorizedErrorValues() throws {
        let server = try fixture()
        let plain = try Client(http: server.url, options: ClientOptions(requestTimeout: 10))
        let error = assertMCPError(try plain.connect()) {
            if case .authRequired = $0 { return true } else { return false }
        }
        XCTAssertEqual(error?.httpStatus, 401)
        XCTAssertEqual(error?.info.httpStatus, 401)
        let challenge = error?.wwwAuthenticate ?? ""
        XCTAssertTrue(challenge.contains("Bearer"), challenge)
        XCTAssertTrue(challenge.contains("resource_metadata="), challenge)
        XCTAssertTrue(challenge.contains("/.well-known/oauth-protected-resource"), challenge)
        plain.close()

        let wrongToken = try Client(http: server.url, bearerToken: "not-a-token", options: ClientOptions(requestTimeout: 10))
        let wrong = assertMCPError(try wrongToken.callTool("echo", arguments: ["text": "x"])) {
            if case .authRequired = $0 { return true } else { return false }
        }
        XCTAssertEqual(wrong?.httpStatus, 401)
        XCTAssertTrue(wrong?.wwwAuthenticate?.contains("Bearer") ?? false)
        wrongToken.close()

        // Errors without an HTTP answer carry neither value.
        let local = assertMCPError(try Client.fetchRedirect("not a url")) { $0.status == MCPStatus.invalidArg }
        if let local {
            XCTAssertNil(local.httpStatus)
            XCTAssertNil(local.wwwAuthenticate)
        }
    }

    /// A pre-registered client with the client_credentials grant needs no handler.
    func testClientCredentials() throws {
        let server = try fixture(["--oauth-client", "swift-app:swift-secret"])
        let client = try client(server, oauth: ["grant": "client_credentials", "client_id": "swift-app",
                                                "client_secret": "swift-secret", "issuer": issuer(server)])
        let calls = Locked(0)
        try client.onAuthorization { _ in
            calls.with { $0 += 1 }
            return nil
        }
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "m2m"])), "m2m")
        XCTAssertEqual(calls.get, 0)
        client.close()

        // A wrong secret: .authRequired with the token endpoint's OAuth error code.
        let bad = try self.client(server, oauth: ["grant": "client_credentials", "client_id": "swift-app",
                                                  "client_secret": "wrong", "issuer": issuer(server)])
        let refused = assertMCPError(try bad.callTool("echo", arguments: ["text": "x"])) {
            if case .authRequired = $0 { return true }
            return false
        }
        XCTAssertEqual(refused?.oauthError, "invalid_client")
        bad.close()
    }

    /// An assertion grant asks the provider for the workload's JWT; the fixture knows no
    /// jwt-bearer grant, so the refusal carries its OAuth error code (and never the JWT).
    func testAssertionProvider() throws {
        let server = try fixture([])
        let client = try client(server, oauth: ["grant": "jwt_bearer"])
        let asked = Locked([String]())
        try client.setAssertionProvider { kind, audience in
            asked.with { $0.append("\(kind) \(audience)") }
            return "eyJ.workload.sig"
        }
        let refused = assertMCPError(try client.callTool("echo", arguments: ["text": "x"])) {
            if case .authRequired = $0 { return true }
            return false
        }
        XCTAssertEqual(refused?.oauthError, "unsupported_grant_type")
        XCTAssertFalse(refused?.message.contains("eyJ.workload.sig") ?? true)
        XCTAssertEqual(asked.get, ["workload_jwt \(server.url.dropLast("/mcp".count))"])
        try client.removeAssertionProvider()
        client.close()
    }

    /// A pre-registered client (authorization code) with one-second tokens: after expiry the
    /// library refreshes and saves the new token, without a second browser step.
    func testPreregisteredClientRefreshesAfterExpiry() throws {
        let server = try fixture(["--oauth-client", "swift-app:swift-secret", "--oauth-token-ttl", "1"])
        let client = try client(server, oauth: ["client_id": "swift-app", "client_secret": "swift-secret",
                                                "issuer": issuer(server)])
        let store = MemoryStore()
        try store.install(on: client)
        let urls = Locked<[String]>([])
        try client.onAuthorization { request in
            urls.with { $0.append(request.url) }
            return try Client.fetchRedirect(request.url, timeout: 5)
        }
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "first"])), "first")
        XCTAssertEqual(urls.get.count, 1)
        XCTAssertTrue(urls.get.first?.contains("client_id=swift-app") ?? false)
        let before = store.records.get
        Thread.sleep(forTimeInterval: 1.5)  // the token's lifetime runs out: the expiry under test
        XCTAssertEqual(text(try client.callTool("echo", arguments: ["text": "after expiry"])), "after expiry")
        XCTAssertEqual(urls.get.count, 1, "refreshed, not authorized again")
        let after = store.records.get
        XCTAssertEqual(after.count, 1)
        XCTAssertNotEqual(after.values.first, before.values.first, "the refreshed token was saved")
        client.close()
    }

    /// A responder answered after its flow ended (the authorization timed out) throws
    /// `.cancelled`; a second answer is refused.
    func testLateResponderIsCancelled() throws {
        let server = try fixture()
        let client = try client(server, oauth: ["authorization_timeout_ms": 300], mode: .modern)
        let kept = Locked<(AuthResponder, String)?>(nil)
        try client.onAuthorization(deferred: { request, responder in kept.with { $0 = (responder, request.url) } })
        let started = Date()
        assertMCPError(try client.callTool("echo", arguments: ["text": "x"])) { _ in true }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let (responder, url) = try XCTUnwrap(kept.get)
        XCTAssertFalse(responder.isCompleted)
        XCTAssertTrue(responder.isCancelled)
        assertMCPError(try responder.reply(redirectURL: try Client.fetchRedirect(url, timeout: 5))) {
            if case .cancelled = $0 { return true } else { return false }
        }
        XCTAssertTrue(responder.isCompleted)
        assertMCPError(try responder.fail()) { $0.status == MCPStatus.invalidArg }
        kept.with { $0 = nil }
        client.close()
    }

    func testConfigAndFetchRedirectErrors() throws {
        assertMCPError(try Client(http: "http://127.0.0.1:9/mcp", oauth: ["nope": 1])) {
            $0.status == MCPStatus.invalidArg
        }
        assertMCPError(try Client(http: "http://127.0.0.1:9/mcp", oauth: [1, 2])) {
            $0.status == MCPStatus.invalidArg
        }
        assertMCPError(try Client.fetchRedirect("not a url")) { $0.status == MCPStatus.invalidArg }
        let server = try fixture()
        let error = assertMCPError(try Client.fetchRedirect(server.url, timeout: 3)) { _ in true }
        XCTAssertNotNil(error?.httpStatus, "the MCP endpoint answers a GET with a status, not a redirect")
        let client = try client(server)
        try client.onAuthorization { _ in nil }
        try client.removeAuthorizationHandler()
        try client.setTokenStore(load: { _ in "not json" }, save: { _, _ in })
        try client.resetTokenStore()
        client.close()
    }

    /// A denied authorization ends the connect in every mode: auto mode does not repeat it
    /// through `initialize`, so the handler runs once.
    func testFailedAuthorizationAsksTheHandlerOnceInEveryMode() throws {
        let server = try fixture()
        for mode in [Mode.auto, .modern, .legacy] {
            let client = try client(server, mode: mode)
            let calls = Locked(0)
            try client.onAuthorization(deferred: { _, responder in
                calls.with { $0 += 1 }
                try? responder.fail("the user denied the authorization")
            })
            let error = assertMCPError(try client.connect()) {
                if case .authRequired = $0 { return true } else { return false }
            }
            XCTAssertTrue(error?.message.contains("the user denied the authorization") ?? false, "\(mode)")
            XCTAssertEqual(error?.httpStatus, 401, "\(mode)")
            XCTAssertEqual(calls.get, 1, "\(mode): \(String(describing: error))")
            client.close()
        }
    }
}
