//! The JSON configuration, typed: the one definition of every key the C ABI (`mcp_config_new`),
//! the bindings and [`crate::ClientConfig::from_json`] take.
//!
//! The serde structs here are the JSON-facing form only: serde checks key names
//! (`deny_unknown_fields`) and types and fills in defaults; `convert` turns them into the
//! internal types (`ClientConfig`, `StdioConfig`, `HttpConfig`, `OAuthConfig`, `ReconnectPolicy`)
//! and applies the checks that span keys. The doc comments are the schema's descriptions:
//! `schema` (feature `schema`) derives `schema/config.schema.json` from these types
//! (tests/config_schema.rs keeps the committed file and the bindings' generated type hints in step).
//!
//! Adding a key: one field here (doc comment, serde default if it has one), one line in
//! `convert` moving it onto the internal type; the schema, the fuzzer's key lists and the
//! bindings' types follow (run `cargo test --features schema --test config_schema` and commit what it rewrites).

mod convert;
mod entry;
mod parse;
mod suggest;

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub use parse::parse;
pub(crate) use parse::parse_key;
#[cfg(feature = "schema")]
pub use parse::{keys, schema};

// The defaults live in `base` (which every layer may import): the internal types' constructors
// below this module use them too.
pub use crate::base::defaults::{self, MAX_TIMEOUT_MS};

// serde's `default = "..."` takes a path to a function.
mod d {
    use super::defaults as v;
    pub fn request_timeout_ms() -> u64 {
        v::REQUEST_TIMEOUT_MS
    }
    pub fn probe_timeout_ms() -> u64 {
        v::PROBE_TIMEOUT_MS
    }
    pub fn connect_timeout_ms() -> u64 {
        v::CONNECT_TIMEOUT_MS
    }
    pub fn input_required_max_rounds() -> u32 {
        v::INPUT_REQUIRED_MAX_ROUNDS
    }
    pub fn max_pages() -> u64 {
        v::MAX_PAGES
    }
    pub fn max_message_bytes() -> u64 {
        v::MAX_MESSAGE_BYTES
    }
    pub fn max_attempts() -> u32 {
        v::RECONNECT_MAX_ATTEMPTS
    }
    pub fn initial_backoff_ms() -> u64 {
        v::RECONNECT_INITIAL_BACKOFF_MS
    }
    pub fn max_backoff_ms() -> u64 {
        v::RECONNECT_MAX_BACKOFF_MS
    }
    pub fn loopback_path() -> String {
        v::LOOPBACK_PATH.into()
    }
    pub fn authorization_timeout_ms() -> u64 {
        v::AUTHORIZATION_TIMEOUT_MS
    }
    pub fn max_step_up() -> u64 {
        v::MAX_STEP_UP
    }
    pub fn response_cache_max_entries() -> u64 {
        v::RESPONSE_CACHE_MAX_ENTRIES
    }
    pub fn yes() -> bool {
        true
    }
}

/// The connection settings of one client: a flat JSON object with exactly one of `command`
/// (a stdio server) or `url` (a Streamable HTTP server). A key set to null counts as absent.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(title = "mcp_client configuration"))]
pub struct Config {
    // --- stdio ---
    /// stdio: the server program, looked up in PATH, or a path.
    pub command: Option<String>,
    /// stdio: the server's arguments.
    pub args: Option<Vec<String>>,
    /// stdio: environment variables set for the server (on top of what `env_mode` passes on).
    pub env: Option<BTreeMap<String, String>>,
    /// stdio: which of the host's environment variables the server gets.
    pub env_mode: Option<EnvMode>,
    /// stdio: the server's working directory.
    pub cwd: Option<String>,
    /// stdio: how many of the server's last stderr lines error messages quote (at most 1000).
    #[cfg_attr(feature = "schema", schemars(range(max = 1000), extend("default" = defaults::STDERR_TAIL_LINES)))]
    pub stderr_tail_lines: Option<u64>,
    /// stdio: each shutdown step (stdin closed, SIGTERM, SIGKILL) waits this long, in ms.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_TIMEOUT_MS), extend("default" = defaults::SHUTDOWN_GRACE_MS)))]
    pub shutdown_grace_ms: Option<u64>,

    // --- HTTP ---
    /// HTTP: the server's endpoint, `https://` (or `http://`), without credentials.
    pub url: Option<String>,
    /// HTTP: extra request headers, name to value.
    pub headers: Option<BTreeMap<String, String>>,
    /// HTTP: a static bearer token (excludes `oauth`).
    pub bearer_token: Option<String>,
    /// HTTP: OAuth 2.1 authorization (excludes `bearer_token`).
    pub oauth: Option<OAuth>,
    /// HTTP: let tokens go over plain http to hosts that are not loopback.
    #[cfg_attr(feature = "schema", schemars(extend("default" = false)))]
    pub allow_insecure_http: Option<bool>,
    /// HTTP: host names pinned to an IP address or a non-empty array of them (like curl's
    /// --resolve; the OAuth address checks still apply).
    pub resolve: Option<BTreeMap<String, Addresses>>,
    /// HTTP: the proxy for the server's requests, `http://` or `https://` (`user:password@` for
    /// proxy authentication), instead of the environment's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`;
    /// `""`: no proxy.
    pub proxy: Option<String>,

    // --- both ---
    /// Bound on one incoming message, in bytes (at least 1024: smaller values are raised).
    #[serde(default = "d::max_message_bytes")]
    pub max_message_bytes: u64,
    /// How `connect` chooses the protocol era (ignored when `protocol_version` is set).
    pub mode: Option<Mode>,
    /// Exactly this protocol version (its era follows from it).
    pub protocol_version: Option<String>,
    /// The `Implementation` object sent as `clientInfo` (default: this library's name and version).
    pub client_info: Option<Map<String, Value>>,
    /// Declared client capabilities (default: derived from the registered handlers).
    pub capabilities: Option<Map<String, Value>>,
    /// Default per-request timeout in ms; 0: none.
    #[serde(default = "d::request_timeout_ms")]
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_TIMEOUT_MS)))]
    pub request_timeout_ms: u64,
    /// How long `auto` waits for the `server/discover` probe before trying `initialize`, in ms.
    #[serde(default = "d::probe_timeout_ms")]
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_TIMEOUT_MS)))]
    pub probe_timeout_ms: u64,
    /// Rounds of `input_required` driven automatically before giving up.
    #[serde(default = "d::input_required_max_rounds")]
    pub input_required_max_rounds: u32,
    /// Page cap for the all-pages list calls.
    #[serde(default = "d::max_pages")]
    pub max_pages: u64,
    /// Bound on a whole connect (process start, era detection, handshake) in ms; 0: none.
    #[serde(default = "d::connect_timeout_ms")]
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_TIMEOUT_MS)))]
    pub connect_timeout_ms: u64,
    /// Opt-in: reconnect after the connection is lost (absent: a lost connection stays lost).
    pub reconnect: Option<Reconnect>,
    /// Declare the skills extension (SEP-2640) in the derived capabilities.
    #[serde(default)]
    pub skills: bool,
    /// Manual input mode: input kinds declared without a handler; the host answers them itself
    /// from the `InputRequired` error and retries with the responses and the `requestState`.
    pub manual_input: Option<Vec<InputKind>>,
    /// Declare the tasks extension (SEP-2663): servers may answer `tools/call` with a task,
    /// which the call follows to its end.
    #[serde(default)]
    pub tasks: bool,
    /// Response caching (SEP-2549) for the whole client; false turns it off.
    #[serde(default = "d::yes")]
    pub response_cache: bool,
    /// Bound on the response cache's entries (0 turns caching off; at most 2^20).
    #[serde(default = "d::response_cache_max_entries")]
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_RESPONSE_CACHE_ENTRIES)))]
    pub response_cache_max_entries: u64,
    /// Check a tool result's `structuredContent` against the tool's `outputSchema`.
    #[serde(default = "d::yes")]
    pub validate_output_schema: bool,
    /// Spans of `tools/call` carry the call's arguments and result as JSON text
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`): off by default, as they may
    /// hold sensitive data.
    #[serde(default)]
    pub span_tool_payloads: bool,
    /// Tool pinning: each tool's definition is remembered when first listed and every later
    /// listing is checked against it (absent: off).
    pub tool_pinning: Option<ToolPinning>,
    /// Declare `sampling.tools` (SEP-1577) with `sampling`: sampling requests may then offer
    /// `tools` and a `toolChoice`, which the sampling handler receives, and its answer may hold
    /// `tool_use` content (checked before the server sees it).
    #[serde(default)]
    pub sampling_tools: bool,
    /// Declare the MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`) with the MIME
    /// type `text/html;profile=mcp-app`: the host can render apps' views.
    #[serde(default)]
    pub apps: bool,
    /// C ABI: where a client's I/O and callbacks run (`isolated`: threads of its own, the
    /// default; `shared`: the process's shared runtime and dispatcher). The Rust API runs on the
    /// caller's runtime and ignores it.
    #[serde(default)]
    pub runtime: Runtime,
}

/// Where a C-ABI client runs (`runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Runtime {
    /// Its own runtime driver and dispatcher threads.
    #[default]
    Isolated,
    /// The process's shared runtime and dispatcher: threads stay flat as clients grow.
    Shared,
}

/// The most entries `response_cache_max_entries` may ask for.
pub const MAX_RESPONSE_CACHE_ENTRIES: u64 = 1 << 20;

/// An input kind a host answers by hand (`manual_input`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub enum InputKind {
    /// Elicitation, form mode (the same as `elicitation.form`).
    #[serde(rename = "elicitation")]
    Elicitation,
    /// Elicitation, form mode.
    #[serde(rename = "elicitation.form")]
    ElicitationForm,
    /// Elicitation, URL mode (the user opens a URL out of band).
    #[serde(rename = "elicitation.url")]
    ElicitationUrl,
    /// `sampling/createMessage`.
    #[serde(rename = "sampling")]
    Sampling,
    /// `roots/list`.
    #[serde(rename = "roots")]
    Roots,
}

/// Which of the host's environment variables a stdio server gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EnvMode {
    /// The default: HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG and LC_* only.
    Allowlist,
    /// All of them (an explicit choice).
    Inherit,
    /// None.
    Replace,
}

/// How `connect` chooses the protocol era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The default: probe with `server/discover`, fall back to `initialize`.
    Auto,
    /// 2026-07-28 only.
    Modern,
    /// `initialize` at the newest legacy version.
    Legacy,
}

/// One IP address or a non-empty array of them.
#[allow(missing_docs)] // the variants are the JSON values (doc comments would become schema entries)
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged, expecting = "an IP address or an array of them")]
pub enum Addresses {
    One(String),
    Many(Vec<String>),
}

/// Tool pinning (`tool_pinning`): trust on first use for tool definitions.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ToolPinning {
    /// What a changed or new tool does: `warn` reports it, `block` withholds it until approved,
    /// `ask` lets the host's hook decide; `off` keeps no pins.
    pub policy: PinPolicy,
    /// The server identity pins are filed under (default: stdio command, arguments and working
    /// directory; HTTP origin and path).
    pub identity: Option<String>,
    /// A directory where pins are kept across restarts (one 0600 file per server, written
    /// atomically under a lock); absent: in memory, unless the host sets a store.
    pub store_dir: Option<String>,
    /// The `_meta` keys left out of a tool's pinned definition (a key also matches by its last
    /// `/` segment); absent: traceparent, tracestate, baggage, etag, lastModified, timestamp.
    pub ignore_meta: Option<Vec<String>>,
}

/// A tool pinning policy (`tool_pinning.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PinPolicy {
    /// No pins are kept or checked.
    Off,
    /// Changes are reported; the tools stay listed and callable.
    Warn,
    /// Changed and new tools are withheld from lists and calls until approved.
    Block,
    /// The host's hook approves or blocks each change (blocks without a hook).
    Ask,
}

/// The reconnect policy: up to `max_attempts` connects with exponential backoff between them.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Reconnect {
    /// Connects tried per loss (at least 1).
    #[serde(default = "d::max_attempts")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub max_attempts: u32,
    /// The wait before the second attempt, in ms; it doubles for each further one.
    #[serde(default = "d::initial_backoff_ms")]
    pub initial_backoff_ms: u64,
    /// The longest wait between attempts, in ms.
    #[serde(default = "d::max_backoff_ms")]
    pub max_backoff_ms: u64,
}

/// OAuth 2.1 settings for an HTTP server that requires authorization.
#[derive(Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OAuth {
    /// How tokens are obtained.
    #[serde(default)]
    pub grant: Grant,
    /// A pre-registered client id (authorization code), or the client-credentials client.
    pub client_id: Option<String>,
    /// The pre-registered client's secret (needs `client_id` and `issuer`).
    pub client_secret: Option<String>,
    /// Forces a token endpoint authentication method (otherwise the registration answer or the
    /// server's metadata decides).
    pub token_endpoint_auth_method: Option<AuthMethod>,
    /// The authorization server the pre-registered credentials belong to: required with a
    /// secret or key, which go to that issuer only.
    pub issuer: Option<String>,
    /// A Client ID Metadata Document URL (https, with a path).
    pub client_metadata_url: Option<String>,
    /// `client_name` for dynamic registration (default: `client_info.name`).
    pub client_name: Option<String>,
    /// `application_type` for dynamic registration.
    #[serde(default)]
    pub application_type: ApplicationType,
    /// A redirect URI the host receives itself; unset: the built-in loopback listener.
    pub redirect_uri: Option<String>,
    /// The loopback listener's port; 0: an ephemeral one.
    #[serde(default)]
    pub loopback_port: u16,
    /// The loopback listener's path (starts with /).
    #[serde(default = "d::loopback_path")]
    pub loopback_path: String,
    /// Scopes added to those the protocol's rules choose: an array, or a space-separated string.
    pub scopes: Option<Scopes>,
    /// Ask for `offline_access` (a refresh token) when the authorization server lists it.
    #[serde(default = "d::yes")]
    pub offline_access: bool,
    /// `private_key_jwt`: the signing key, PEM (PKCS#8, or PKCS#1 RSA).
    pub private_key_pem: Option<String>,
    /// The JWS algorithm for `private_key_pem` (ES256, ES384, RS256..512, PS256..512, EdDSA);
    /// default: from the key.
    pub signing_algorithm: Option<String>,
    /// How long the host has to complete a browser authorization, in ms (1 to a day).
    #[serde(default = "d::authorization_timeout_ms")]
    pub authorization_timeout_ms: u64,
    /// Re-authorizations for more scope (403 `insufficient_scope`) per request (at most 10).
    #[serde(default = "d::max_step_up")]
    pub max_step_up: u64,
    /// Without an authorization callback, open the system browser on the authorization URL.
    #[serde(default)]
    pub open_browser: bool,
    /// Allow authorization servers (and metadata) on plain http:// outside loopback hosts.
    #[serde(default)]
    pub allow_http: bool,
    /// Let the flows contact loopback, private and carrier-grade NAT addresses.
    #[serde(default)]
    pub allow_private_networks: bool,
    /// Hosts the flows may contact whatever their addresses: names, `*.domain`, IP addresses,
    /// ranges (`10.0.0.0/8`); a `resource_metadata` the server names on such a host is read at
    /// any path (elsewhere off its origin only at the well-known path).
    pub allow_hosts: Option<Vec<String>>,
    /// Hosts the flows never contact (same forms).
    pub deny_hosts: Option<Vec<String>>,

    // --- authorization extensions ---
    /// DPoP (RFC 9449): true: proofs signed with a key generated for the client; a
    /// `dpop_private_key_*` key turns it on too (false with a key is refused).
    pub dpop: Option<bool>,
    /// DPoP with the host's P-256 key, PEM (PKCS#8) (excludes `dpop_private_key_jwk`).
    pub dpop_private_key_pem: Option<String>,
    /// DPoP with the host's P-256 key as a JWK: an object or its JSON text.
    pub dpop_private_key_jwk: Option<Jwk>,
    /// `grant` `jwt_bearer`: the workload's JWT (excludes `workload_jwt_file`; without either,
    /// the host's assertion provider).
    pub workload_jwt: Option<String>,
    /// `grant` `jwt_bearer`: a file holding the workload's JWT, read again before every token
    /// request.
    pub workload_jwt_file: Option<String>,
    /// `grant` `enterprise`: the user's ID token (excludes `id_token_file`; without either, the
    /// host's assertion provider).
    pub id_token: Option<String>,
    /// `grant` `enterprise`: a file holding the user's ID token.
    pub id_token_file: Option<String>,
    /// `grant` `enterprise`: the identity provider's token endpoint (http or https), where the
    /// ID token is exchanged for an ID-JAG.
    pub idp_token_endpoint: Option<String>,
    /// `grant` `enterprise`: this client's id at the identity provider.
    pub idp_client_id: Option<String>,
    /// `grant` `enterprise`: this client's secret at the identity provider.
    pub idp_client_secret: Option<String>,
    /// Keep credentials in files in this directory (0600), locked across processes, instead of
    /// memory (unless the host sets a token store).
    pub token_store_dir: Option<String>,
}

/// A JWK: a JSON object, or its text.
#[derive(Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged, expecting = "a JWK object or its JSON text")]
#[allow(missing_docs)] // the variants are the JSON forms
pub enum Jwk {
    Object(Map<String, Value>),
    Text(String),
}

// Secrets stay out of debug output.
impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("grant", &self.grant)
            .field("client_id", &self.client_id)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// How OAuth tokens are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Authorization code with PKCE, through a browser.
    #[default]
    AuthorizationCode,
    /// Machine to machine: the client's own credentials.
    ClientCredentials,
    /// Workload identity federation (RFC 7523): the workload's JWT is the grant.
    JwtBearer,
    /// Enterprise-managed authorization (SEP-990): the user's ID token exchanged at the
    /// identity provider for an ID-JAG, then the JWT-bearer grant.
    Enterprise,
}

/// Token endpoint authentication methods this client implements.
#[allow(missing_docs)] // the variants are the JSON values (doc comments would become schema entries)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    ClientSecretBasic,
    ClientSecretPost,
    None,
    PrivateKeyJwt,
}

/// `application_type` for dynamic client registration.
#[allow(missing_docs)] // the variants are the JSON values (doc comments would become schema entries)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApplicationType {
    #[default]
    Native,
    Web,
}

/// OAuth scopes: an array of scope strings, or one space-separated string.
#[allow(missing_docs)] // the variants are the JSON values (doc comments would become schema entries)
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged, expecting = "an array of scope strings or a space-separated string")]
pub enum Scopes {
    List(Vec<String>),
    Text(String),
}
