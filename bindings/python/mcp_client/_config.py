# Generated from include/mcp_client.config.schema.json by tests/config_schema.rs (cargo test --features schema --test config_schema): do not edit.
"""Type hints for the library's JSON configuration (``Client(config)``): every key
is optional; see include/mcp_client.config.schema.json."""

from typing import Any, Dict, List, Literal, TypedDict, Union

__all__ = ["OAuthConfig", "ReconnectConfig", "ToolPinningConfig", "Config"]


class OAuthConfig(TypedDict, total=False):
    """OAuth 2.1 settings for an HTTP server that requires authorization."""

    #: How tokens are obtained.
    grant: Literal["authorization_code", "client_credentials", "jwt_bearer", "enterprise"]

    #: A pre-registered client id (authorization code), or the client-credentials client.
    client_id: str

    #: The pre-registered client's secret (needs `client_id` and `issuer`).
    client_secret: str

    #: Forces a token endpoint authentication method (otherwise the registration answer or the server's metadata decides).
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]

    #: The authorization server the pre-registered credentials belong to: required with a secret or key, which go to that issuer only.
    issuer: str

    #: A Client ID Metadata Document URL (https, with a path).
    client_metadata_url: str

    #: `client_name` for dynamic registration (default: `client_info.name`).
    client_name: str

    #: `application_type` for dynamic registration.
    application_type: Literal["native", "web"]

    #: A redirect URI the host receives itself; unset: the built-in loopback listener.
    redirect_uri: str

    #: The loopback listener's port; 0: an ephemeral one. Default: 0.
    loopback_port: int

    #: The loopback listener's path (starts with /). Default: "/callback".
    loopback_path: str

    #: Scopes added to those the protocol's rules choose: an array, or a space-separated string.
    scopes: Union[List[str], str]

    #: Ask for `offline_access` (a refresh token) when the authorization server lists it. Default: true.
    offline_access: bool

    #: `private_key_jwt`: the signing key, PEM (PKCS#8, or PKCS#1 RSA).
    private_key_pem: str

    #: The JWS algorithm for `private_key_pem` (ES256, ES384, RS256..512, PS256..512, EdDSA); default: from the key.
    signing_algorithm: str

    #: How long the host has to complete a browser authorization, in ms (1 to a day). Default: 300000.
    authorization_timeout_ms: int

    #: Re-authorizations for more scope (403 `insufficient_scope`) per request (at most 10). Default: 2.
    max_step_up: int

    #: Without an authorization callback, open the system browser on the authorization URL. Default: false.
    open_browser: bool

    #: Allow authorization servers (and metadata) on plain http:// outside loopback hosts. Default: false.
    allow_http: bool

    #: Let the flows contact loopback, private and carrier-grade NAT addresses. Default: false.
    allow_private_networks: bool

    #: Hosts the flows may contact whatever their addresses: names, `*.domain`, IP addresses, ranges (`10.0.0.0/8`); a `resource_metadata` the server names on such a host is read at any path (elsewhere off its origin only at the well-known path).
    allow_hosts: List[str]

    #: Hosts the flows never contact (same forms).
    deny_hosts: List[str]

    #: DPoP (RFC 9449): true: proofs signed with a key generated for the client; a `dpop_private_key_*` key turns it on too (false with a key is refused).
    dpop: bool

    #: DPoP with the host's P-256 key, PEM (PKCS#8) (excludes `dpop_private_key_jwk`).
    dpop_private_key_pem: str

    #: DPoP with the host's P-256 key as a JWK: an object or its JSON text.
    dpop_private_key_jwk: Union[Dict[str, Any], str]

    #: `grant` `jwt_bearer`: the workload's JWT (excludes `workload_jwt_file`; without either, the host's assertion provider).
    workload_jwt: str

    #: `grant` `jwt_bearer`: a file holding the workload's JWT, read again before every token request.
    workload_jwt_file: str

    #: `grant` `enterprise`: the user's ID token (excludes `id_token_file`; without either, the host's assertion provider).
    id_token: str

    #: `grant` `enterprise`: a file holding the user's ID token.
    id_token_file: str

    #: `grant` `enterprise`: the identity provider's token endpoint (http or https), where the ID token is exchanged for an ID-JAG.
    idp_token_endpoint: str

    #: `grant` `enterprise`: this client's id at the identity provider.
    idp_client_id: str

    #: `grant` `enterprise`: this client's secret at the identity provider.
    idp_client_secret: str

    #: Keep credentials in files in this directory (0600), locked across processes, instead of memory (unless the host sets a token store).
    token_store_dir: str


class ReconnectConfig(TypedDict, total=False):
    """The reconnect policy: up to `max_attempts` connects with exponential backoff between them."""

    #: Connects tried per loss (at least 1). Default: 5.
    max_attempts: int

    #: The wait before the second attempt, in ms; it doubles for each further one. Default: 100.
    initial_backoff_ms: int

    #: The longest wait between attempts, in ms. Default: 5000.
    max_backoff_ms: int


class ToolPinningConfig(TypedDict, total=False):
    """Tool pinning (`tool_pinning`): trust on first use for tool definitions."""

    #: What a changed or new tool does: `warn` reports it, `block` withholds it until approved, `ask` lets the host's hook decide; `off` keeps no pins.
    policy: Literal["off", "warn", "block", "ask"]

    #: The server identity pins are filed under (default: stdio command, arguments and working directory; HTTP origin and path).
    identity: str

    #: A directory where pins are kept across restarts (one 0600 file per server, written atomically under a lock); absent: in memory, unless the host sets a store.
    store_dir: str

    #: The `_meta` keys left out of a tool's pinned definition (a key also matches by its last `/` segment); absent: traceparent, tracestate, baggage, etag, lastModified, timestamp.
    ignore_meta: List[str]


class Config(TypedDict, total=False):
    """The connection settings of one client: a flat JSON object with exactly one of `command` (a stdio server) or `url` (a Streamable HTTP server). A key set to null counts as absent."""

    #: stdio: the server program, looked up in PATH, or a path.
    command: str

    #: stdio: the server's arguments.
    args: List[str]

    #: stdio: environment variables set for the server (on top of what `env_mode` passes on).
    env: Dict[str, str]

    #: stdio: which of the host's environment variables the server gets.
    env_mode: Literal["allowlist", "inherit", "replace"]

    #: stdio: the server's working directory.
    cwd: str

    #: stdio: how many of the server's last stderr lines error messages quote (at most 1000). Default: 20.
    stderr_tail_lines: int

    #: stdio: each shutdown step (stdin closed, SIGTERM, SIGKILL) waits this long, in ms. Default: 2000.
    shutdown_grace_ms: int

    #: HTTP: the server's endpoint, `https://` (or `http://`), without credentials.
    url: str

    #: HTTP: extra request headers, name to value.
    headers: Dict[str, str]

    #: HTTP: a static bearer token (excludes `oauth`).
    bearer_token: str

    #: HTTP: OAuth 2.1 authorization (excludes `bearer_token`).
    oauth: OAuthConfig

    #: HTTP: let tokens go over plain http to hosts that are not loopback. Default: false.
    allow_insecure_http: bool

    #: HTTP: host names pinned to an IP address or a non-empty array of them (like curl's --resolve; the OAuth address checks still apply).
    resolve: Dict[str, Union[str, List[str]]]

    #: HTTP: the proxy for the server's requests, `http://` or `https://` (`user:password@` for proxy authentication), instead of the environment's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`; `""`: no proxy.
    proxy: str

    #: Bound on one incoming message, in bytes (at least 1024: smaller values are raised). Default: 8388608.
    max_message_bytes: int

    #: How `connect` chooses the protocol era (ignored when `protocol_version` is set).
    mode: Literal["auto", "modern", "legacy"]

    #: Exactly this protocol version (its era follows from it).
    protocol_version: str

    #: The `Implementation` object sent as `clientInfo` (default: this library's name and version).
    client_info: Dict[str, Any]

    #: Declared client capabilities (default: derived from the registered handlers).
    capabilities: Dict[str, Any]

    #: Default per-request timeout in ms; 0: none. Default: 60000.
    request_timeout_ms: int

    #: How long `auto` waits for the `server/discover` probe before trying `initialize`, in ms. Default: 5000.
    probe_timeout_ms: int

    #: Rounds of `input_required` driven automatically before giving up. Default: 10.
    input_required_max_rounds: int

    #: Page cap for the all-pages list calls. Default: 1000.
    max_pages: int

    #: Bound on a whole connect (process start, era detection, handshake) in ms; 0: none. Default: 60000.
    connect_timeout_ms: int

    #: Opt-in: reconnect after the connection is lost (absent: a lost connection stays lost).
    reconnect: ReconnectConfig

    #: Declare the skills extension (SEP-2640) in the derived capabilities. Default: false.
    skills: bool

    #: Manual input mode: input kinds declared without a handler; the host answers them itself from the `InputRequired` error and retries with the responses and the `requestState`.
    manual_input: List[Literal["elicitation", "elicitation.form", "elicitation.url", "sampling", "roots"]]

    #: Declare the tasks extension (SEP-2663): servers may answer `tools/call` with a task, which the call follows to its end. Default: false.
    tasks: bool

    #: Response caching (SEP-2549) for the whole client; false turns it off. Default: true.
    response_cache: bool

    #: Bound on the response cache's entries (0 turns caching off; at most 2^20). Default: 512.
    response_cache_max_entries: int

    #: Check a tool result's `structuredContent` against the tool's `outputSchema`. Default: true.
    validate_output_schema: bool

    #: Spans of `tools/call` carry the call's arguments and result as JSON text (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): off by default, as they may hold sensitive data. Default: false.
    span_tool_payloads: bool

    #: Tool pinning: each tool's definition is remembered when first listed and every later listing is checked against it (absent: off).
    tool_pinning: ToolPinningConfig

    #: Declare `sampling.tools` (SEP-1577) with `sampling`: sampling requests may then offer `tools` and a `toolChoice`, which the sampling handler receives, and its answer may hold `tool_use` content (checked before the server sees it). Default: false.
    sampling_tools: bool

    #: Declare the MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`) with the MIME type `text/html;profile=mcp-app`: the host can render apps' views. Default: false.
    apps: bool

    #: C ABI: where a client's I/O and callbacks run (`isolated`: threads of its own, the default; `shared`: the process's shared runtime and dispatcher). The Rust API runs on the caller's runtime and ignores it.
    runtime: Literal["isolated", "shared"]
