import CMCPClient

/// The host's source of the JWTs the assertion grants need when the `oauth` configuration holds
/// none: `kind` is "workload_jwt" (grant "jwt_bearer", workload identity federation) or
/// "id_token" (grant "enterprise"), `audience` the authorization server or identity provider.
final class AssertionBox: CallbackBox {
    let provide: (String, String) -> String?
    init(provide: @escaping (String, String) -> String?) {
        self.provide = provide
    }
}

let assertionThunk: mcp_assertion_fn = { userdata, kind, audience, slot in
    guard let userdata, let slot else { return }
    let box = Unmanaged<CallbackBox>.fromOpaque(userdata).takeUnretainedValue() as! AssertionBox
    guard let jwt = box.provide(kind.map { String(cString: $0) } ?? "", audience.map { String(cString: $0) } ?? ""),
          !jwt.isEmpty, !jwt.utf8.contains(0) else { return }
    jwt.withCString { _ = mcp_assertion_slot_set(slot, $0, nil) }
}

extension Client {
    /// Registers the source of the workload JWT / ID token (read it fresh each time: platform
    /// tokens rotate). Returning nil ends that authorization (`MCPError.authRequired`). Runs on
    /// the dispatcher thread.
    public func setAssertionProvider(_ provide: @escaping @Sendable (_ kind: String, _ audience: String) -> String?) throws {
        let ud = retainedUserdata(AssertionBox(provide: provide))
        try check { mcp_client_set_assertion_provider(handle, assertionThunk, ud, releaseUserdata, $0) }
    }

    /// Removes the assertion provider.
    public func removeAssertionProvider() throws {
        try check { mcp_client_set_assertion_provider(handle, nil, nil, nil, $0) }
    }
}
