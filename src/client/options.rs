//! Client configuration and per-request options.

use super::cancel::CancelToken;
use crate::transport::TransportConfig;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// The longest timeout (or total cap, or grace period) the library takes, in milliseconds:
/// 2^40 ms, about 34.8 years. Longer values are refused, not wrapped or clamped (a host
/// converting seconds to milliseconds can overflow); hosts mean "none" with 0 or a negative
/// value where the option allows it.
pub(crate) const MAX_TIMEOUT_MS: u64 = 1 << 40;

/// `ms` as a duration, refused past [`MAX_TIMEOUT_MS`].
pub fn timeout_ms(key: &str, ms: u64) -> crate::error::Result<Duration> {
    if ms > MAX_TIMEOUT_MS {
        return Err(crate::error::Error::invalid(format!(
            "{key} is {ms} ms; the most a timeout may be is {MAX_TIMEOUT_MS} ms (about 34 years)"
        )));
    }
    Ok(Duration::from_millis(ms))
}

/// An environment variable name the setters would take: not empty, no '=' and no NUL.
pub fn check_env_name(name: &str) -> crate::error::Result<()> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(crate::error::Error::invalid(format!(
            "environment variable name {name:?}: a name is non-empty and has no '=' (or NUL)"
        )));
    }
    Ok(())
}

/// How `connect` chooses the protocol era.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ConnectMode {
    /// Probe with `server/discover`; fall back to `initialize` on any non-modern answer or silence.
    #[default]
    Auto,
    /// 2026-07-28 only.
    Modern,
    /// `initialize` at the newest legacy version.
    Legacy,
    /// Exactly this protocol version (its era follows from it).
    Pinned(String),
}

/// How a [`crate::Client`] reaches its server and behaves; [`ClientConfig::new`] gives the
/// defaults, [`ClientConfig::from_json`] the flat JSON form the C ABI and the bindings use.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// How to reach the server.
    pub transport: TransportConfig,
    /// How `connect` chooses the protocol era.
    pub mode: ConnectMode,
    /// `Implementation` object sent as `clientInfo`.
    pub client_info: Value,
    /// Declared client capabilities; `None` derives them from the registered handlers.
    pub capabilities: Option<Value>,
    /// Default per-request timeout; zero means none.
    pub request_timeout: Duration,
    /// How long `auto` waits for the `server/discover` probe before trying `initialize`.
    pub probe_timeout: Duration,
    /// Rounds of `input_required` driven automatically before giving up (SEP-2322).
    pub input_required_max_rounds: u32,
    /// Page cap for the all-pages list calls.
    pub max_pages: usize,
    /// Bound on a whole connect (process start, era detection, handshake); zero means none.
    pub connect_timeout: Duration,
    /// Opt-in: reconnect after the connection is lost (`None`: a lost connection stays lost).
    pub reconnect: Option<ReconnectPolicy>,
    /// Declare the skills extension (SEP-2640) in the derived capabilities. Opt-in: servers
    /// that see it stop offering their fallback tool for loading skills, which a host that
    /// does not load skills itself would then miss.
    pub skills: bool,
    /// Input kinds declared without a handler, answered by the host from the `InputRequired`
    /// error (manual input mode; JSON key `manual_input`).
    pub manual_input: super::input_modes::ManualInput,
    /// Declare the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): servers may then
    /// answer `tools/call` with a task, which the call follows to its end. Opt-in.
    pub tasks: bool,
    /// OAuth 2.1 authorization of an HTTP server's requests (`crate::auth`): on a 401 the client
    /// discovers the authorization server and obtains a token itself. Exclusive with the HTTP
    /// transport's `bearer_token`; unused with stdio.
    pub oauth: Option<Box<crate::auth::OAuthConfig>>,
    /// Where `auto` keeps the era it detected per HTTP origin (default: the process's
    /// [`crate::EraCache::shared`]).
    pub era_cache: super::EraCache,
    /// Response caching (SEP-2549); on by default, `false` turns it off client-wide.
    pub response_cache: bool,
    /// Bound on the response cache's entries (0 turns caching off).
    pub response_cache_max_entries: usize,
    /// Check `structuredContent` against the tool's declared `outputSchema`; on by default.
    pub validate_output_schema: bool,
}

/// How a lost connection (the stdio server exited, the HTTP server went away) is re-established:
/// on the next call, up to `max_attempts` connects with exponential backoff between them, each
/// re-running era detection. Calls that lost their answer are retried only when idempotent
/// (lists, reads, prompts/get, completion, discover, ping); a `tools/call` never is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Connects tried before the connection stays lost.
    pub max_attempts: u32,
    /// The wait before the second attempt (doubling after).
    pub initial_backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl ReconnectPolicy {
    /// The wait before attempt `n` (1-based): none before the first, then doubling.
    pub fn backoff(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let factor = 1u32.checked_shl(attempt - 2).unwrap_or(u32::MAX);
        self.initial_backoff.saturating_mul(factor).min(self.max_backoff)
    }

    /// `{"max_attempts": 5, "initial_backoff_ms": 100, "max_backoff_ms": 5000}`, every key optional.
    fn from_json(value: &Value) -> crate::error::Result<ReconnectPolicy> {
        use crate::error::Error;
        let obj = value
            .as_object()
            .ok_or_else(|| Error::invalid("reconnect must be a JSON object"))?;
        const KEYS: [&str; 3] = ["max_attempts", "initial_backoff_ms", "max_backoff_ms"];
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(Error::invalid(format!("unknown reconnect key {key:?}")));
        }
        let number = |key: &str| -> crate::error::Result<Option<u64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| Error::invalid(format!("reconnect.{key} must be a non-negative integer"))),
            }
        };
        let mut policy = ReconnectPolicy::default();
        if let Some(n) = number("max_attempts")? {
            policy.max_attempts = u32::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| Error::invalid("reconnect.max_attempts must be between 1 and 2^32-1"))?;
        }
        if let Some(ms) = number("initial_backoff_ms")? {
            policy.initial_backoff = Duration::from_millis(ms);
        }
        if let Some(ms) = number("max_backoff_ms")? {
            policy.max_backoff = Duration::from_millis(ms);
        }
        Ok(policy)
    }
}

impl ClientConfig {
    /// The defaults (auto era detection, 60 s timeouts) for `transport`.
    pub fn new(transport: TransportConfig) -> Self {
        ClientConfig {
            transport,
            mode: ConnectMode::Auto,
            client_info: json!({"name": "mcp_client", "version": env!("CARGO_PKG_VERSION")}),
            capabilities: None,
            request_timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(5),
            input_required_max_rounds: 10,
            max_pages: 1000,
            connect_timeout: Duration::from_secs(60),
            reconnect: None,
            skills: false,
            manual_input: Default::default(),
            tasks: false,
            oauth: None,
            era_cache: super::EraCache::shared(),
            response_cache: true,
            response_cache_max_entries: super::cache::DEFAULT_MAX_ENTRIES,
            validate_output_schema: true,
        }
    }

    /// The HTTP server's URL (`None` for stdio): what OAuth authorizes for.
    pub(crate) fn http_url(&self) -> Option<&str> {
        match &self.transport {
            TransportConfig::Http(http) => Some(&http.url),
            TransportConfig::Stdio(_) => None,
        }
    }
}

/// A progress notification for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable note from the server.
    pub message: Option<String>,
}

/// A progress callback for one request.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Options for one call. The default uses the client's timeout and nothing else.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// `None`: the client's default; `Some(ZERO)`: no timeout.
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever the server reports progress (a progress token is sent).
    pub reset_timeout_on_progress: bool,
    /// Upper bound for the whole call, MRTR rounds and progress resets included.
    pub max_total: Option<Duration>,
    /// Cancels the call (the server is told, in its era's way).
    pub cancel: Option<CancelToken>,
    /// Called with each progress notification for the call.
    pub on_progress: Option<ProgressFn>,
    /// Extra `_meta` entries (the protocol's reserved keys always win).
    pub meta: Option<Map<String, Value>>,
    /// Modern: per-request `_meta` log level (overrides the client's level).
    pub log_level: Option<String>,
    /// Manual MRTR: the `inputResponses` to send on the first leg (tools/call, prompts/get,
    /// resources/read only).
    pub input_responses: Option<Value>,
    /// Manual MRTR: the `requestState` to echo on the first leg.
    pub request_state: Option<String>,
    /// Tasks extension: called with the task on creation and on every change of its status
    /// (besides the client's own listener, [`super::Client::on_task_status`]).
    pub on_task_status: Option<super::tasks::TaskStatusFn>,
    /// How this call uses the response cache (cacheable methods only).
    pub cache: super::cache::CacheMode,
    /// `tools/call`: skip the output schema check for this call.
    pub skip_output_validation: bool,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total", &self.max_total)
            .field("log_level", &self.log_level)
            .finish_non_exhaustive()
    }
}

/// Keys `ClientConfig::from_json` accepts; anything else is rejected so typos surface.
pub const CONFIG_KEYS: &[&str] = &[
    "runtime",
    "command",
    "url",
    "headers",
    "bearer_token",
    "oauth",
    "allow_insecure_http",
    "resolve",
    "args",
    "env",
    "env_mode",
    "cwd",
    "max_message_bytes",
    "stderr_tail_lines",
    "shutdown_grace_ms",
    "mode",
    "protocol_version",
    "client_info",
    "capabilities",
    "request_timeout_ms",
    "probe_timeout_ms",
    "input_required_max_rounds",
    "max_pages",
    "connect_timeout_ms",
    "reconnect",
    "skills",
    "manual_input",
    "tasks",
    "response_cache",
    "response_cache_max_entries",
    "validate_output_schema",
];

impl ClientConfig {
    /// Builds a configuration from one flat JSON object, the form the C ABI and the bindings
    /// use. Exactly one of `command` (stdio) or `url` (HTTP) is given.
    /// stdio: `{"command": "server", "args": [..], "env": {..}, "env_mode": "allowlist" (default:
    /// PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_* from the host) | "inherit" | "replace",
    /// "cwd": "..", "stderr_tail_lines": .., "shutdown_grace_ms": ..}`;
    /// HTTP: `{"url": "https://host/mcp", "headers": {"Name": "value", ..}, "bearer_token": ".."}`,
    /// or instead of `bearer_token` an `"oauth": {..}` object (OAuth 2.1 authorization; keys in
    /// [`crate::auth::OAuthConfig::from_json`]); `"allow_insecure_http": true` lets tokens go
    /// over plain http to non-loopback hosts; `"resolve": {"name": "address" | [..]}` pins names;
    /// both: `"mode": "auto"|"modern"|"legacy", "protocol_version": "..",
    /// "request_timeout_ms": 60000, "probe_timeout_ms": 5000, "input_required_max_rounds": 10,
    /// "max_pages": 1000, "client_info": {..}, "capabilities": {..}, "max_message_bytes": ..,
    /// "connect_timeout_ms": 60000` (the whole connect; 0: none), `"skills": false` (true declares
    /// the skills extension), `"tasks": false` (true declares the tasks
    /// extension), `"manual_input": ["elicitation", "elicitation.url", "sampling", "roots"]`
    /// (kinds declared without a handler, answered by hand), and the opt-in
    /// `"reconnect": {"max_attempts": 5, "initial_backoff_ms": 100, "max_backoff_ms": 5000}`.
    pub fn from_json(value: &Value) -> crate::error::Result<ClientConfig> {
        use crate::error::Error;
        use crate::transport::http::HttpConfig;
        let obj = value
            .as_object()
            .ok_or_else(|| Error::invalid("the configuration must be a JSON object"))?;
        if let Some(key) = obj.keys().find(|k| !CONFIG_KEYS.contains(&k.as_str())) {
            return Err(Error::invalid(format!("unknown configuration key {key:?}")));
        }
        let string = |key: &str| -> crate::error::Result<Option<String>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::invalid(format!("{key} must be a string"))),
            }
        };
        let number = |key: &str| -> crate::error::Result<Option<u64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| Error::invalid(format!("{key} must be a non-negative integer"))),
            }
        };
        let object = |key: &str| -> crate::error::Result<Option<Value>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
                Some(_) => Err(Error::invalid(format!("{key} must be a JSON object"))),
            }
        };

        // The C ABI's runtime choice (`ffi/shared_rt`); the core client does not use it.
        match string("runtime")?.as_deref() {
            None | Some("isolated" | "shared") => {}
            Some(other) => {
                return Err(Error::invalid(format!(
                    "runtime must be \"isolated\" or \"shared\", not {other:?}"
                )))
            }
        }
        let max_message_bytes = number("max_message_bytes")?.map(|n| (n as usize).max(1024));
        let mut oauth = None;
        let transport = match (string("command")?, string("url")?) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "the configuration has both \"command\" and \"url\"; give exactly one",
                ))
            }
            (None, None) => {
                return Err(Error::invalid(
                    "the configuration needs a \"command\" (stdio) or a \"url\" (HTTP)",
                ))
            }
            (Some(command), None) => {
                let given = |k: &&str| obj.get(*k).is_some_and(|v| !v.is_null());
                let http_only = ["headers", "bearer_token", "oauth", "allow_insecure_http", "resolve"];
                if let Some(key) = http_only.into_iter().find(given) {
                    return Err(Error::invalid(format!("{key} applies to a \"url\", not a \"command\"")));
                }
                TransportConfig::Stdio(Self::stdio_from_json(obj, command, max_message_bytes)?)
            }
            (None, Some(url)) => {
                let stdio_only = [
                    "args",
                    "env",
                    "env_mode",
                    "cwd",
                    "stderr_tail_lines",
                    "shutdown_grace_ms",
                ];
                let given = |k: &&str| obj.get(*k).is_some_and(|v| !v.is_null());
                if let Some(key) = stdio_only.into_iter().find(given) {
                    return Err(Error::invalid(format!("{key} applies to a \"command\", not a \"url\"")));
                }
                let mut http = HttpConfig::new(url);
                if let Some(headers) = object("headers")? {
                    for (k, v) in headers.as_object().into_iter().flatten() {
                        let v = v
                            .as_str()
                            .ok_or_else(|| Error::invalid(format!("the value of header {k} must be a string")))?;
                        http.headers.push((k.clone(), v.to_string()));
                    }
                }
                http.bearer_token = string("bearer_token")?;
                http.allow_insecure_http = match obj.get("allow_insecure_http") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(Error::invalid("allow_insecure_http must be true or false")),
                };
                http.resolve = resolve_from_json(obj.get("resolve"))?;
                oauth = match obj.get("oauth") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(Box::new(crate::auth::OAuthConfig::from_json(v)?)),
                };
                if let Some(n) = max_message_bytes {
                    http.max_message_bytes = n;
                }
                http.validate_for(oauth.is_some())?;
                TransportConfig::Http(http)
            }
        };

        let mut config = ClientConfig::new(transport);
        config.oauth = oauth;
        config.mode = match (string("mode")?.as_deref(), string("protocol_version")?) {
            (_, Some(v)) => ConnectMode::Pinned(v),
            (None | Some("auto"), None) => ConnectMode::Auto,
            (Some("modern"), None) => ConnectMode::Modern,
            (Some("legacy"), None) => ConnectMode::Legacy,
            (Some(other), None) => return Err(Error::invalid(format!("mode {other:?} is not auto, modern or legacy"))),
        };
        if let Some(info) = object("client_info")? {
            config.client_info = info;
        }
        config.capabilities = object("capabilities")?;
        if let Some(ms) = number("request_timeout_ms")? {
            config.request_timeout = timeout_ms("request_timeout_ms", ms)?;
        }
        if let Some(ms) = number("probe_timeout_ms")? {
            config.probe_timeout = timeout_ms("probe_timeout_ms", ms)?;
        }
        if let Some(n) = number("input_required_max_rounds")? {
            config.input_required_max_rounds =
                u32::try_from(n).map_err(|_| Error::invalid("input_required_max_rounds is too large"))?;
        }
        if let Some(n) = number("max_pages")? {
            config.max_pages = n as usize;
        }
        if let Some(ms) = number("connect_timeout_ms")? {
            config.connect_timeout = timeout_ms("connect_timeout_ms", ms)?;
        }
        config.reconnect = match obj.get("reconnect") {
            None | Some(Value::Null) => None,
            Some(v) => Some(ReconnectPolicy::from_json(v)?),
        };
        config.skills = match obj.get("skills") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("skills must be true or false")),
        };
        if let Some(v) = obj.get("manual_input").filter(|v| !v.is_null()) {
            config.manual_input = super::input_modes::ManualInput::from_json(v)?;
        }
        config.tasks = match obj.get("tasks") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("tasks must be true or false")),
        };
        config.cache_and_schema_from_json(obj)?;
        Ok(config)
    }

    /// `"response_cache": true`, `"response_cache_max_entries": 512`,
    /// `"validate_output_schema": true` (caching and output schema validation).
    fn cache_and_schema_from_json(&mut self, obj: &Map<String, Value>) -> crate::error::Result<()> {
        use crate::error::Error;
        let flag = |key: &str, default: bool| match obj.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Error::invalid(format!("{key} must be true or false"))),
        };
        self.response_cache = flag("response_cache", true)?;
        self.validate_output_schema = flag("validate_output_schema", true)?;
        match obj.get("response_cache_max_entries") {
            None | Some(Value::Null) => {}
            Some(v) => {
                self.response_cache_max_entries = v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| *n <= 1 << 20)
                    .ok_or_else(|| Error::invalid("response_cache_max_entries must be an integer from 0 to 2^20"))?;
            }
        }
        Ok(())
    }

    /// The stdio part of [`ClientConfig::from_json`].
    fn stdio_from_json(
        obj: &Map<String, Value>,
        command: String,
        max_message_bytes: Option<usize>,
    ) -> crate::error::Result<crate::transport::stdio::StdioConfig> {
        use crate::error::Error;
        use crate::transport::stdio::{EnvMode, StdioConfig};
        let string = |key: &str| -> crate::error::Result<Option<String>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::invalid(format!("{key} must be a string"))),
            }
        };
        let number = |key: &str| -> crate::error::Result<Option<u64>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| Error::invalid(format!("{key} must be a non-negative integer"))),
            }
        };
        let mut stdio = StdioConfig::new(command);
        if let Some(args) = obj.get("args") {
            let args = args
                .as_array()
                .ok_or_else(|| Error::invalid("args must be an array of strings"))?;
            stdio.args = args
                .iter()
                .map(|a| {
                    a.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| Error::invalid("args must be an array of strings"))
                })
                .collect::<crate::error::Result<_>>()?;
        }
        match obj.get("env") {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(_) => return Err(Error::invalid("env must be a JSON object")),
        }
        if let Some(Value::Object(env)) = obj.get("env") {
            for (k, v) in env {
                check_env_name(k)?;
                let v = v
                    .as_str()
                    .ok_or_else(|| Error::invalid(format!("env value of {k} must be a string")))?;
                stdio.env.push((k.clone(), v.to_string()));
            }
        }
        stdio.env_mode = match string("env_mode")?.as_deref() {
            None | Some("allowlist") => EnvMode::Allowlist,
            Some("inherit") => EnvMode::Inherit,
            Some("replace") => EnvMode::Replace,
            Some(other) => {
                return Err(Error::invalid(format!(
                    "env_mode {other:?} is not allowlist, inherit or replace"
                )))
            }
        };
        stdio.cwd = string("cwd")?.map(Into::into);
        if let Some(n) = max_message_bytes {
            stdio.max_message_bytes = n;
        }
        if let Some(n) = number("stderr_tail_lines")? {
            // Each kept line may be 8 KiB: the tail's memory stays bounded whatever is asked.
            if n > 1000 {
                return Err(Error::invalid(format!(
                    "stderr_tail_lines is {n}; at most 1000 lines are kept"
                )));
            }
            stdio.stderr_tail_lines = n as usize;
        }
        if let Some(ms) = number("shutdown_grace_ms")? {
            stdio.shutdown_grace = timeout_ms("shutdown_grace_ms", ms)?;
        }
        Ok(stdio)
    }
}

/// `"resolve": {"name": "address" | ["address", ..], ..}`: names pinned to addresses.
fn resolve_from_json(value: Option<&Value>) -> crate::error::Result<Vec<(String, Vec<std::net::IpAddr>)>> {
    use crate::error::Error;
    let bad = || Error::invalid("resolve maps host names to an IP address or an array of them");
    let map = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(bad()),
    };
    map.iter()
        .map(|(name, v)| {
            let texts: Vec<&Value> = match v {
                Value::Array(items) if !items.is_empty() => items.iter().collect(),
                Value::String(_) => vec![v],
                _ => return Err(bad()),
            };
            let addrs = texts
                .into_iter()
                .map(|t| t.as_str().and_then(|s| s.parse().ok()).ok_or_else(bad))
                .collect::<crate::error::Result<Vec<_>>>()?;
            Ok((name.clone(), addrs))
        })
        .collect()
}
