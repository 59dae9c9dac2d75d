// Generated from include/mcp_client.config.schema.json by tests/config_schema.rs (cargo test --features schema --test config_schema): do not edit.

/// The connection settings of one client: a flat JSON object with exactly one of `command` (a stdio server) or `url` (a Streamable HTTP server). A key set to null counts as absent.
/// Every property is optional: nil leaves the key out.
public struct Configuration: Codable, Sendable {
    /// stdio: the server program, looked up in PATH, or a path.
    public var command: String?
    /// stdio: the server's arguments.
    public var args: [String]?
    /// stdio: environment variables set for the server (on top of what `env_mode` passes on).
    public var env: [String: String]?
    /// stdio: which of the host's environment variables the server gets. One of: allowlist, inherit, replace.
    public var envMode: String?
    /// stdio: the server's working directory.
    public var cwd: String?
    /// stdio: how many of the server's last stderr lines error messages quote (at most 1000). Default: 20.
    public var stderrTailLines: UInt64?
    /// stdio: each shutdown step (stdin closed, SIGTERM, SIGKILL) waits this long, in ms. Default: 2000.
    public var shutdownGraceMs: UInt64?
    /// HTTP: the server's endpoint, `https://` (or `http://`), without credentials.
    public var url: String?
    /// HTTP: extra request headers, name to value.
    public var headers: [String: String]?
    /// HTTP: a static bearer token (excludes `oauth`).
    public var bearerToken: String?
    /// HTTP: OAuth 2.1 authorization (excludes `bearer_token`).
    public var oauth: OAuth?
    /// HTTP: let tokens go over plain http to hosts that are not loopback. Default: false.
    public var allowInsecureHTTP: Bool?
    /// HTTP: host names pinned to an IP address or a non-empty array of them (like curl's --resolve; the OAuth address checks still apply).
    public var resolve: [String: JSON]?
    /// HTTP: the proxy for the server's requests, `http://` or `https://` (`user:password@` for proxy authentication), instead of the environment's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`; `""`: no proxy.
    public var proxy: String?
    /// Bound on one incoming message, in bytes (at least 1024: smaller values are raised). Default: 8388608.
    public var maxMessageBytes: UInt64?
    /// How `connect` chooses the protocol era (ignored when `protocol_version` is set). One of: auto, modern, legacy.
    public var mode: String?
    /// Exactly this protocol version (its era follows from it).
    public var protocolVersion: String?
    /// The `Implementation` object sent as `clientInfo` (default: this library's name and version).
    public var clientInfo: [String: JSON]?
    /// Declared client capabilities (default: derived from the registered handlers).
    public var capabilities: [String: JSON]?
    /// Default per-request timeout in ms; 0: none. Default: 60000.
    public var requestTimeoutMs: UInt64?
    /// How long `auto` waits for the `server/discover` probe before trying `initialize`, in ms. Default: 5000.
    public var probeTimeoutMs: UInt64?
    /// Rounds of `input_required` driven automatically before giving up. Default: 10.
    public var inputRequiredMaxRounds: UInt32?
    /// Page cap for the all-pages list calls. Default: 1000.
    public var maxPages: UInt64?
    /// Bound on a whole connect (process start, era detection, handshake) in ms; 0: none. Default: 60000.
    public var connectTimeoutMs: UInt64?
    /// Opt-in: reconnect after the connection is lost (absent: a lost connection stays lost).
    public var reconnect: Reconnect?
    /// Declare the skills extension (SEP-2640) in the derived capabilities. Default: false.
    public var skills: Bool?
    /// Manual input mode: input kinds declared without a handler; the host answers them itself from the `InputRequired` error and retries with the responses and the `requestState`.
    public var manualInput: [String]?
    /// Declare the tasks extension (SEP-2663): servers may answer `tools/call` with a task, which the call follows to its end. Default: false.
    public var tasks: Bool?
    /// Response caching (SEP-2549) for the whole client; false turns it off. Default: true.
    public var responseCache: Bool?
    /// Bound on the response cache's entries (0 turns caching off; at most 2^20). Default: 512.
    public var responseCacheMaxEntries: UInt64?
    /// Check a tool result's `structuredContent` against the tool's `outputSchema`. Default: true.
    public var validateOutputSchema: Bool?
    /// Spans of `tools/call` carry the call's arguments and result as JSON text (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): off by default, as they may hold sensitive data. Default: false.
    public var spanToolPayloads: Bool?
    /// Tool pinning: each tool's definition is remembered when first listed and every later listing is checked against it (absent: off).
    public var toolPinning: ToolPinning?
    /// Declare `sampling.tools` (SEP-1577) with `sampling`: sampling requests may then offer `tools` and a `toolChoice`, which the sampling handler receives, and its answer may hold `tool_use` content (checked before the server sees it). Default: false.
    public var samplingTools: Bool?
    /// Declare the MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`) with the MIME type `text/html;profile=mcp-app`: the host can render apps' views. Default: false.
    public var apps: Bool?
    /// C ABI: where a client's I/O and callbacks run (`isolated`: threads of its own, the default; `shared`: the process's shared runtime and dispatcher). The Rust API runs on the caller's runtime and ignores it. One of: isolated, shared.
    public var runtime: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case command
        case args
        case env
        case envMode = "env_mode"
        case cwd
        case stderrTailLines = "stderr_tail_lines"
        case shutdownGraceMs = "shutdown_grace_ms"
        case url
        case headers
        case bearerToken = "bearer_token"
        case oauth
        case allowInsecureHTTP = "allow_insecure_http"
        case resolve
        case proxy
        case maxMessageBytes = "max_message_bytes"
        case mode
        case protocolVersion = "protocol_version"
        case clientInfo = "client_info"
        case capabilities
        case requestTimeoutMs = "request_timeout_ms"
        case probeTimeoutMs = "probe_timeout_ms"
        case inputRequiredMaxRounds = "input_required_max_rounds"
        case maxPages = "max_pages"
        case connectTimeoutMs = "connect_timeout_ms"
        case reconnect
        case skills
        case manualInput = "manual_input"
        case tasks
        case responseCache = "response_cache"
        case responseCacheMaxEntries = "response_cache_max_entries"
        case validateOutputSchema = "validate_output_schema"
        case spanToolPayloads = "span_tool_payloads"
        case toolPinning = "tool_pinning"
        case samplingTools = "sampling_tools"
        case apps
        case runtime
    }

    /// OAuth 2.1 settings for an HTTP server that requires authorization.
    public struct OAuth: Codable, Sendable {
        /// How tokens are obtained. One of: authorization_code, client_credentials, jwt_bearer, enterprise.
        public var grant: String?
        /// A pre-registered client id (authorization code), or the client-credentials client.
        public var clientID: String?
        /// The pre-registered client's secret (needs `client_id` and `issuer`).
        public var clientSecret: String?
        /// Forces a token endpoint authentication method (otherwise the registration answer or the server's metadata decides). One of: client_secret_basic, client_secret_post, none, private_key_jwt.
        public var tokenEndpointAuthMethod: String?
        /// The authorization server the pre-registered credentials belong to: required with a secret or key, which go to that issuer only.
        public var issuer: String?
        /// A Client ID Metadata Document URL (https, with a path).
        public var clientMetadataURL: String?
        /// `client_name` for dynamic registration (default: `client_info.name`).
        public var clientName: String?
        /// `application_type` for dynamic registration. One of: native, web.
        public var applicationType: String?
        /// A redirect URI the host receives itself; unset: the built-in loopback listener.
        public var redirectURI: String?
        /// The loopback listener's port; 0: an ephemeral one. Default: 0.
        public var loopbackPort: UInt16?
        /// The loopback listener's path (starts with /). Default: "/callback".
        public var loopbackPath: String?
        /// Scopes added to those the protocol's rules choose: an array, or a space-separated string.
        public var scopes: JSON?
        /// Ask for `offline_access` (a refresh token) when the authorization server lists it. Default: true.
        public var offlineAccess: Bool?
        /// `private_key_jwt`: the signing key, PEM (PKCS#8, or PKCS#1 RSA).
        public var privateKeyPEM: String?
        /// The JWS algorithm for `private_key_pem` (ES256, ES384, RS256..512, PS256..512, EdDSA); default: from the key.
        public var signingAlgorithm: String?
        /// How long the host has to complete a browser authorization, in ms (1 to a day). Default: 300000.
        public var authorizationTimeoutMs: UInt64?
        /// Re-authorizations for more scope (403 `insufficient_scope`) per request (at most 10). Default: 2.
        public var maxStepUp: UInt64?
        /// Without an authorization callback, open the system browser on the authorization URL. Default: false.
        public var openBrowser: Bool?
        /// Allow authorization servers (and metadata) on plain http:// outside loopback hosts. Default: false.
        public var allowHTTP: Bool?
        /// Let the flows contact loopback, private and carrier-grade NAT addresses. Default: false.
        public var allowPrivateNetworks: Bool?
        /// Hosts the flows may contact whatever their addresses: names, `*.domain`, IP addresses, ranges (`10.0.0.0/8`); a `resource_metadata` the server names on such a host is read at any path (elsewhere off its origin only at the well-known path).
        public var allowHosts: [String]?
        /// Hosts the flows never contact (same forms).
        public var denyHosts: [String]?
        /// DPoP (RFC 9449): true: proofs signed with a key generated for the client; a `dpop_private_key_*` key turns it on too (false with a key is refused).
        public var dpop: Bool?
        /// DPoP with the host's P-256 key, PEM (PKCS#8) (excludes `dpop_private_key_jwk`).
        public var dpopPrivateKeyPEM: String?
        /// DPoP with the host's P-256 key as a JWK: an object or its JSON text.
        public var dpopPrivateKeyJwk: JSON?
        /// `grant` `jwt_bearer`: the workload's JWT (excludes `workload_jwt_file`; without either, the host's assertion provider).
        public var workloadJWT: String?
        /// `grant` `jwt_bearer`: a file holding the workload's JWT, read again before every token request.
        public var workloadJWTFile: String?
        /// `grant` `enterprise`: the user's ID token (excludes `id_token_file`; without either, the host's assertion provider).
        public var idToken: String?
        /// `grant` `enterprise`: a file holding the user's ID token.
        public var idTokenFile: String?
        /// `grant` `enterprise`: the identity provider's token endpoint (http or https), where the ID token is exchanged for an ID-JAG.
        public var idpTokenEndpoint: String?
        /// `grant` `enterprise`: this client's id at the identity provider.
        public var idpClientID: String?
        /// `grant` `enterprise`: this client's secret at the identity provider.
        public var idpClientSecret: String?
        /// Keep credentials in files in this directory (0600), locked across processes, instead of memory (unless the host sets a token store).
        public var tokenStoreDir: String?

        public init() {}

        enum CodingKeys: String, CodingKey {
            case grant
            case clientID = "client_id"
            case clientSecret = "client_secret"
            case tokenEndpointAuthMethod = "token_endpoint_auth_method"
            case issuer
            case clientMetadataURL = "client_metadata_url"
            case clientName = "client_name"
            case applicationType = "application_type"
            case redirectURI = "redirect_uri"
            case loopbackPort = "loopback_port"
            case loopbackPath = "loopback_path"
            case scopes
            case offlineAccess = "offline_access"
            case privateKeyPEM = "private_key_pem"
            case signingAlgorithm = "signing_algorithm"
            case authorizationTimeoutMs = "authorization_timeout_ms"
            case maxStepUp = "max_step_up"
            case openBrowser = "open_browser"
            case allowHTTP = "allow_http"
            case allowPrivateNetworks = "allow_private_networks"
            case allowHosts = "allow_hosts"
            case denyHosts = "deny_hosts"
            case dpop
            case dpopPrivateKeyPEM = "dpop_private_key_pem"
            case dpopPrivateKeyJwk = "dpop_private_key_jwk"
            case workloadJWT = "workload_jwt"
            case workloadJWTFile = "workload_jwt_file"
            case idToken = "id_token"
            case idTokenFile = "id_token_file"
            case idpTokenEndpoint = "idp_token_endpoint"
            case idpClientID = "idp_client_id"
            case idpClientSecret = "idp_client_secret"
            case tokenStoreDir = "token_store_dir"
        }
    }

    /// The reconnect policy: up to `max_attempts` connects with exponential backoff between them.
    public struct Reconnect: Codable, Sendable {
        /// Connects tried per loss (at least 1). Default: 5.
        public var maxAttempts: UInt32?
        /// The wait before the second attempt, in ms; it doubles for each further one. Default: 100.
        public var initialBackoffMs: UInt64?
        /// The longest wait between attempts, in ms. Default: 5000.
        public var maxBackoffMs: UInt64?

        public init() {}

        enum CodingKeys: String, CodingKey {
            case maxAttempts = "max_attempts"
            case initialBackoffMs = "initial_backoff_ms"
            case maxBackoffMs = "max_backoff_ms"
        }
    }

    /// Tool pinning (`tool_pinning`): trust on first use for tool definitions.
    public struct ToolPinning: Codable, Sendable {
        /// What a changed or new tool does: `warn` reports it, `block` withholds it until approved, `ask` lets the host's hook decide; `off` keeps no pins. One of: off, warn, block, ask.
        public var policy: String?
        /// The server identity pins are filed under (default: stdio command, arguments and working directory; HTTP origin and path).
        public var identity: String?
        /// A directory where pins are kept across restarts (one 0600 file per server, written atomically under a lock); absent: in memory, unless the host sets a store.
        public var storeDir: String?
        /// The `_meta` keys left out of a tool's pinned definition (a key also matches by its last `/` segment); absent: traceparent, tracestate, baggage, etag, lastModified, timestamp.
        public var ignoreMeta: [String]?

        public init() {}

        enum CodingKeys: String, CodingKey {
            case policy
            case identity
            case storeDir = "store_dir"
            case ignoreMeta = "ignore_meta"
        }
    }
}
