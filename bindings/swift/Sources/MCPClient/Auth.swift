import CMCPClient
import Foundation

/// The browser step of an OAuth authorization-code flow: open `url` in a browser; the
/// authorization server then redirects the browser to `redirectURI` with `code` and `state`.
public struct AuthorizationRequest: Sendable {
    /// The authorization URL to open.
    public let url: String
    /// Where the browser will be sent: the configured `oauth.redirect_uri`, or the built-in
    /// loopback listener's `http://127.0.0.1:<port>/callback`. nil if the library gave none.
    public let redirectURI: String?
}

/// The authorization callback's responder is the same type as an input handler's (one
/// `mcp_responder` in the C API): answer with `reply(redirectURL:)` or `fail(_:)`.
public typealias AuthResponder = Responder

/// The authorization handler (userdata). `immediate` answers inside the callback (a URL, or nil
/// for the loopback listener); `deferred` gets a responder that was deferred first.
final class AuthorizationBox: CallbackBox {
    let immediate: ((AuthorizationRequest) throws -> String?)?
    let deferred: ((AuthorizationRequest, AuthResponder) -> Void)?
    init(immediate: ((AuthorizationRequest) throws -> String?)? = nil,
         deferred: ((AuthorizationRequest, AuthResponder) -> Void)? = nil) {
        self.immediate = immediate
        self.deferred = deferred
    }
}

let authorizationThunk: mcp_authorization_fn = { userdata, url, redirectURI, responder in
    guard let userdata, let responder else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! AuthorizationBox
    let request = AuthorizationRequest(
        url: url.map { String(cString: $0) } ?? "",
        redirectURI: redirectURI.map { String(cString: $0) })
    if let deferred = box.deferred {
        mcp_responder_defer(responder)
        deferred(request, AuthResponder(responder))
        return
    }
    guard let immediate = box.immediate else { return }
    // Answered inside the callback; the responder is never deferred.
    do {
        if let redirect = try immediate(request) {
            if redirect.utf8.contains(0) {
                _ = mcp_responder_reply_error(responder, 0, "the redirect URL contained NUL", nil)
            } else {
                redirect.withCString { _ = mcp_responder_reply_url(responder, $0, nil) }
            }
        }
        // nil: left untouched, so the loopback listener receives the redirect (with a configured
        // oauth.redirect_uri the library ends the flow instead).
    } catch {
        let message = "the Swift authorization handler threw: \(error)".replacingOccurrences(of: "\u{0}", with: " ")
        message.withCString { _ = mcp_responder_reply_error(responder, 0, $0, nil) }
    }
}

/// The token store (userdata): both closures run on the dispatcher thread.
final class TokenStoreBox: CallbackBox {
    let load: (String) -> String?
    let save: (String, String?) -> Void
    init(load: @escaping (String) -> String?, save: @escaping (String, String?) -> Void) {
        self.load = load
        self.save = save
    }
}

let tokenLoadThunk: mcp_token_load_fn = { userdata, issuer, slot in
    guard let userdata, let slot else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! TokenStoreBox
    guard let record = box.load(issuer.map { String(cString: $0) } ?? ""), !record.utf8.contains(0) else { return }
    // An invalid record (not a JSON object) leaves the slot empty: nothing stored.
    record.withCString { _ = mcp_token_slot_set(slot, $0, nil) }
}

let tokenSaveThunk: mcp_token_save_fn = { userdata, issuer, record in
    guard let userdata else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! TokenStoreBox
    box.save(issuer.map { String(cString: $0) } ?? "", record.map { String(cString: $0) })
}

extension Client {
    /// Registers the browser step of the OAuth authorization-code flow (the `oauth` option):
    /// open `request.url` in a browser and return the full URL the browser was redirected to,
    /// or nil when the built-in loopback listener receives the redirect (no `redirect_uri` in
    /// the `oauth` configuration). Throwing fails the authorization (`MCPError.authRequired`).
    /// Runs on the dispatcher thread and blocks it: for a long wait use the deferred form.
    public func onAuthorization(_ handler: @escaping @Sendable (AuthorizationRequest) throws -> String?) throws {
        try registerAuthorization(AuthorizationBox(immediate: handler))
    }

    /// Registers the browser step in deferred form: complete the `AuthResponder` now or later,
    /// from any thread (`reply(redirectURL:)` or `fail(_:)`). Releasing it unanswered fails the
    /// authorization. Return quickly: callbacks of one client run one at a time.
    public func onAuthorization(deferred handler: @escaping @Sendable (AuthorizationRequest, AuthResponder) -> Void)
        throws
    {
        try registerAuthorization(AuthorizationBox(deferred: handler))
    }

    /// Unregisters the authorization handler (the loopback listener alone then waits for the
    /// redirect; with a configured `redirect_uri` an authorization-code flow fails).
    public func removeAuthorizationHandler() throws {
        try check { mcp_client_on_authorization(handle, nil, nil, nil, $0) }
    }

    private func registerAuthorization(_ box: AuthorizationBox) throws {
        // The library owns this reference from here on and releases it exactly once.
        let ud = retainedUserdata(box)
        try check { mcp_client_on_authorization(handle, authorizationThunk, ud, releaseUserdata, $0) }
    }

    /// Keeps OAuth credentials in the host's store (a keychain, a file): one record per
    /// authorization-server issuer, an opaque JSON object as text. `load(issuer)` runs before a
    /// flow and returns what `save` received, or nil; `save(issuer, record)` runs after a
    /// registration or a new token (nil: forget the issuer). The record holds client credentials
    /// and tokens: keep it secret. Both run on the dispatcher thread. Without a store, credentials
    /// live as long as the client.
    public func setTokenStore(load: @escaping @Sendable (_ issuer: String) -> String?,
                              save: @escaping @Sendable (_ issuer: String, _ record: String?) -> Void) throws {
        let ud = retainedUserdata(TokenStoreBox(load: load, save: save))
        try check { mcp_client_set_token_store(handle, tokenLoadThunk, tokenSaveThunk, ud, releaseUserdata, $0) }
    }

    /// Restores the in-memory default token store.
    public func resetTokenStore() throws {
        try check { mcp_client_set_token_store(handle, nil, nil, nil, nil, $0) }
    }

    /// FOR TESTS AND AUTOMATION ONLY: GETs `authorizationURL` once without following redirects
    /// and returns the absolute `Location` it redirects to. Against an authorization server that
    /// redirects at once (no login page), an authorization handler can answer with this; a real
    /// host opens a browser. Blocking (fine inside an authorization handler). `timeout` in
    /// seconds; nil: 30.
    public static func fetchRedirect(_ authorizationURL: String, timeout: Double? = nil) throws -> String {
        let ms: Int64
        if let timeout, timeout > 0 {
            ms = timeout.isFinite ? Int64(min(Double(MCP_MAX_TIMEOUT_MS), max(1, (timeout * 1000).rounded()))) : -1
        } else {
            ms = 0  // MCP_TIMEOUT_DEFAULT: 30 s
        }
        return try withCStrings { s in
            let url = try s.c(authorizationURL)
            return try checkString { mcp_auth_fetch_redirect(url, ms, $0, $1) }
        }
    }
}
