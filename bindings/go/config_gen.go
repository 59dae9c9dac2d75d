// Generated from include/mcp_client.config.schema.json by tests/config_schema.rs (cargo test --features schema --test config_schema): do not edit.

package mcpclient

// OAuthConfig: OAuth 2.1 settings for an HTTP server that requires authorization.
//
// Every field is optional: nil leaves the key out.
type OAuthConfig struct {
	// Grant How tokens are obtained. One of: authorization_code, client_credentials, jwt_bearer, enterprise.
	Grant *string `json:"grant,omitempty"`
	// ClientID A pre-registered client id (authorization code), or the client-credentials client.
	ClientID *string `json:"client_id,omitempty"`
	// ClientSecret The pre-registered client's secret (needs `client_id` and `issuer`).
	ClientSecret *string `json:"client_secret,omitempty"`
	// TokenEndpointAuthMethod Forces a token endpoint authentication method (otherwise the registration answer or the server's metadata decides). One of: client_secret_basic, client_secret_post, none, private_key_jwt.
	TokenEndpointAuthMethod *string `json:"token_endpoint_auth_method,omitempty"`
	// Issuer The authorization server the pre-registered credentials belong to: required with a secret or key, which go to that issuer only.
	Issuer *string `json:"issuer,omitempty"`
	// ClientMetadataURL A Client ID Metadata Document URL (https, with a path).
	ClientMetadataURL *string `json:"client_metadata_url,omitempty"`
	// ClientName `client_name` for dynamic registration (default: `client_info.name`).
	ClientName *string `json:"client_name,omitempty"`
	// ApplicationType `application_type` for dynamic registration. One of: native, web.
	ApplicationType *string `json:"application_type,omitempty"`
	// RedirectURI A redirect URI the host receives itself; unset: the built-in loopback listener.
	RedirectURI *string `json:"redirect_uri,omitempty"`
	// LoopbackPort The loopback listener's port; 0: an ephemeral one. Default: 0.
	LoopbackPort *uint16 `json:"loopback_port,omitempty"`
	// LoopbackPath The loopback listener's path (starts with /). Default: "/callback".
	LoopbackPath *string `json:"loopback_path,omitempty"`
	// Scopes Scopes added to those the protocol's rules choose: an array, or a space-separated string.
	Scopes any `json:"scopes,omitempty"`
	// OfflineAccess Ask for `offline_access` (a refresh token) when the authorization server lists it. Default: true.
	OfflineAccess *bool `json:"offline_access,omitempty"`
	// PrivateKeyPEM `private_key_jwt`: the signing key, PEM (PKCS#8, or PKCS#1 RSA).
	PrivateKeyPEM *string `json:"private_key_pem,omitempty"`
	// SigningAlgorithm The JWS algorithm for `private_key_pem` (ES256, ES384, RS256..512, PS256..512, EdDSA); default: from the key.
	SigningAlgorithm *string `json:"signing_algorithm,omitempty"`
	// AuthorizationTimeoutMs How long the host has to complete a browser authorization, in ms (1 to a day). Default: 300000.
	AuthorizationTimeoutMs *uint64 `json:"authorization_timeout_ms,omitempty"`
	// MaxStepUp Re-authorizations for more scope (403 `insufficient_scope`) per request (at most 10). Default: 2.
	MaxStepUp *uint64 `json:"max_step_up,omitempty"`
	// OpenBrowser Without an authorization callback, open the system browser on the authorization URL. Default: false.
	OpenBrowser *bool `json:"open_browser,omitempty"`
	// AllowHTTP Allow authorization servers (and metadata) on plain http:// outside loopback hosts. Default: false.
	AllowHTTP *bool `json:"allow_http,omitempty"`
	// AllowPrivateNetworks Let the flows contact loopback, private and carrier-grade NAT addresses. Default: false.
	AllowPrivateNetworks *bool `json:"allow_private_networks,omitempty"`
	// AllowHosts Hosts the flows may contact whatever their addresses: names, `*.domain`, IP addresses, ranges (`10.0.0.0/8`); a `resource_metadata` the server names on such a host is read at any path (elsewhere off its origin only at the well-known path).
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// DenyHosts Hosts the flows never contact (same forms).
	DenyHosts []string `json:"deny_hosts,omitempty"`
	// Dpop DPoP (RFC 9449): true: proofs signed with a key generated for the client; a `dpop_private_key_*` key turns it on too (false with a key is refused).
	Dpop *bool `json:"dpop,omitempty"`
	// DpopPrivateKeyPEM DPoP with the host's P-256 key, PEM (PKCS#8) (excludes `dpop_private_key_jwk`).
	DpopPrivateKeyPEM *string `json:"dpop_private_key_pem,omitempty"`
	// DpopPrivateKeyJwk DPoP with the host's P-256 key as a JWK: an object or its JSON text.
	DpopPrivateKeyJwk any `json:"dpop_private_key_jwk,omitempty"`
	// WorkloadJWT `grant` `jwt_bearer`: the workload's JWT (excludes `workload_jwt_file`; without either, the host's assertion provider).
	WorkloadJWT *string `json:"workload_jwt,omitempty"`
	// WorkloadJWTFile `grant` `jwt_bearer`: a file holding the workload's JWT, read again before every token request.
	WorkloadJWTFile *string `json:"workload_jwt_file,omitempty"`
	// IDToken `grant` `enterprise`: the user's ID token (excludes `id_token_file`; without either, the host's assertion provider).
	IDToken *string `json:"id_token,omitempty"`
	// IDTokenFile `grant` `enterprise`: a file holding the user's ID token.
	IDTokenFile *string `json:"id_token_file,omitempty"`
	// IdpTokenEndpoint `grant` `enterprise`: the identity provider's token endpoint (http or https), where the ID token is exchanged for an ID-JAG.
	IdpTokenEndpoint *string `json:"idp_token_endpoint,omitempty"`
	// IdpClientID `grant` `enterprise`: this client's id at the identity provider.
	IdpClientID *string `json:"idp_client_id,omitempty"`
	// IdpClientSecret `grant` `enterprise`: this client's secret at the identity provider.
	IdpClientSecret *string `json:"idp_client_secret,omitempty"`
	// TokenStoreDir Keep credentials in files in this directory (0600), locked across processes, instead of memory (unless the host sets a token store).
	TokenStoreDir *string `json:"token_store_dir,omitempty"`
}

// ReconnectConfig: The reconnect policy: up to `max_attempts` connects with exponential backoff between them.
//
// Every field is optional: nil leaves the key out.
type ReconnectConfig struct {
	// MaxAttempts Connects tried per loss (at least 1). Default: 5.
	MaxAttempts *uint32 `json:"max_attempts,omitempty"`
	// InitialBackoffMs The wait before the second attempt, in ms; it doubles for each further one. Default: 100.
	InitialBackoffMs *uint64 `json:"initial_backoff_ms,omitempty"`
	// MaxBackoffMs The longest wait between attempts, in ms. Default: 5000.
	MaxBackoffMs *uint64 `json:"max_backoff_ms,omitempty"`
}

// ToolPinningConfig: Tool pinning (`tool_pinning`): trust on first use for tool definitions.
//
// Every field is optional: nil leaves the key out.
type ToolPinningConfig struct {
	// Policy What a changed or new tool does: `warn` reports it, `block` withholds it until approved, `ask` lets the host's hook decide; `off` keeps no pins. One of: off, warn, block, ask.
	Policy *string `json:"policy,omitempty"`
	// Identity The server identity pins are filed under (default: stdio command, arguments and working directory; HTTP origin and path).
	Identity *string `json:"identity,omitempty"`
	// StoreDir A directory where pins are kept across restarts (one 0600 file per server, written atomically under a lock); absent: in memory, unless the host sets a store.
	StoreDir *string `json:"store_dir,omitempty"`
	// IgnoreMeta The `_meta` keys left out of a tool's pinned definition (a key also matches by its last `/` segment); absent: traceparent, tracestate, baggage, etag, lastModified, timestamp.
	IgnoreMeta []string `json:"ignore_meta,omitempty"`
}

// Config: The connection settings of one client: a flat JSON object with exactly one of `command` (a stdio server) or `url` (a Streamable HTTP server). A key set to null counts as absent.
//
// Every field is optional: nil leaves the key out.
type Config struct {
	// Command stdio: the server program, looked up in PATH, or a path.
	Command *string `json:"command,omitempty"`
	// Args stdio: the server's arguments.
	Args []string `json:"args,omitempty"`
	// Env stdio: environment variables set for the server (on top of what `env_mode` passes on).
	Env map[string]string `json:"env,omitempty"`
	// EnvMode stdio: which of the host's environment variables the server gets. One of: allowlist, inherit, replace.
	EnvMode *string `json:"env_mode,omitempty"`
	// Cwd stdio: the server's working directory.
	Cwd *string `json:"cwd,omitempty"`
	// StderrTailLines stdio: how many of the server's last stderr lines error messages quote (at most 1000). Default: 20.
	StderrTailLines *uint64 `json:"stderr_tail_lines,omitempty"`
	// ShutdownGraceMs stdio: each shutdown step (stdin closed, SIGTERM, SIGKILL) waits this long, in ms. Default: 2000.
	ShutdownGraceMs *uint64 `json:"shutdown_grace_ms,omitempty"`
	// URL HTTP: the server's endpoint, `https://` (or `http://`), without credentials.
	URL *string `json:"url,omitempty"`
	// Headers HTTP: extra request headers, name to value.
	Headers map[string]string `json:"headers,omitempty"`
	// BearerToken HTTP: a static bearer token (excludes `oauth`).
	BearerToken *string `json:"bearer_token,omitempty"`
	// Oauth HTTP: OAuth 2.1 authorization (excludes `bearer_token`).
	Oauth *OAuthConfig `json:"oauth,omitempty"`
	// AllowInsecureHTTP HTTP: let tokens go over plain http to hosts that are not loopback. Default: false.
	AllowInsecureHTTP *bool `json:"allow_insecure_http,omitempty"`
	// Resolve HTTP: host names pinned to an IP address or a non-empty array of them (like curl's --resolve; the OAuth address checks still apply).
	Resolve map[string]any `json:"resolve,omitempty"`
	// Proxy HTTP: the proxy for the server's requests, `http://` or `https://` (`user:password@` for proxy authentication), instead of the environment's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`; `""`: no proxy.
	Proxy *string `json:"proxy,omitempty"`
	// MaxMessageBytes Bound on one incoming message, in bytes (at least 1024: smaller values are raised). Default: 8388608.
	MaxMessageBytes *uint64 `json:"max_message_bytes,omitempty"`
	// Mode How `connect` chooses the protocol era (ignored when `protocol_version` is set). One of: auto, modern, legacy.
	Mode *string `json:"mode,omitempty"`
	// ProtocolVersion Exactly this protocol version (its era follows from it).
	ProtocolVersion *string `json:"protocol_version,omitempty"`
	// ClientInfo The `Implementation` object sent as `clientInfo` (default: this library's name and version).
	ClientInfo map[string]any `json:"client_info,omitempty"`
	// Capabilities Declared client capabilities (default: derived from the registered handlers).
	Capabilities map[string]any `json:"capabilities,omitempty"`
	// RequestTimeoutMs Default per-request timeout in ms; 0: none. Default: 60000.
	RequestTimeoutMs *uint64 `json:"request_timeout_ms,omitempty"`
	// ProbeTimeoutMs How long `auto` waits for the `server/discover` probe before trying `initialize`, in ms. Default: 5000.
	ProbeTimeoutMs *uint64 `json:"probe_timeout_ms,omitempty"`
	// InputRequiredMaxRounds Rounds of `input_required` driven automatically before giving up. Default: 10.
	InputRequiredMaxRounds *uint32 `json:"input_required_max_rounds,omitempty"`
	// MaxPages Page cap for the all-pages list calls. Default: 1000.
	MaxPages *uint64 `json:"max_pages,omitempty"`
	// ConnectTimeoutMs Bound on a whole connect (process start, era detection, handshake) in ms; 0: none. Default: 60000.
	ConnectTimeoutMs *uint64 `json:"connect_timeout_ms,omitempty"`
	// Reconnect Opt-in: reconnect after the connection is lost (absent: a lost connection stays lost).
	Reconnect *ReconnectConfig `json:"reconnect,omitempty"`
	// Skills Declare the skills extension (SEP-2640) in the derived capabilities. Default: false.
	Skills *bool `json:"skills,omitempty"`
	// ManualInput Manual input mode: input kinds declared without a handler; the host answers them itself from the `InputRequired` error and retries with the responses and the `requestState`.
	ManualInput []string `json:"manual_input,omitempty"`
	// Tasks Declare the tasks extension (SEP-2663): servers may answer `tools/call` with a task, which the call follows to its end. Default: false.
	Tasks *bool `json:"tasks,omitempty"`
	// ResponseCache Response caching (SEP-2549) for the whole client; false turns it off. Default: true.
	ResponseCache *bool `json:"response_cache,omitempty"`
	// ResponseCacheMaxEntries Bound on the response cache's entries (0 turns caching off; at most 2^20). Default: 512.
	ResponseCacheMaxEntries *uint64 `json:"response_cache_max_entries,omitempty"`
	// ValidateOutputSchema Check a tool result's `structuredContent` against the tool's `outputSchema`. Default: true.
	ValidateOutputSchema *bool `json:"validate_output_schema,omitempty"`
	// SpanToolPayloads Spans of `tools/call` carry the call's arguments and result as JSON text (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): off by default, as they may hold sensitive data. Default: false.
	SpanToolPayloads *bool `json:"span_tool_payloads,omitempty"`
	// ToolPinning Tool pinning: each tool's definition is remembered when first listed and every later listing is checked against it (absent: off).
	ToolPinning *ToolPinningConfig `json:"tool_pinning,omitempty"`
	// SamplingTools Declare `sampling.tools` (SEP-1577) with `sampling`: sampling requests may then offer `tools` and a `toolChoice`, which the sampling handler receives, and its answer may hold `tool_use` content (checked before the server sees it). Default: false.
	SamplingTools *bool `json:"sampling_tools,omitempty"`
	// Apps Declare the MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`) with the MIME type `text/html;profile=mcp-app`: the host can render apps' views. Default: false.
	Apps *bool `json:"apps,omitempty"`
	// Runtime C ABI: where a client's I/O and callbacks run (`isolated`: threads of its own, the default; `shared`: the process's shared runtime and dispatcher). The Rust API runs on the caller's runtime and ignores it. One of: isolated, shared.
	Runtime *string `json:"runtime,omitempty"`
}
