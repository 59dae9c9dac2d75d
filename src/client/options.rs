//! Client configuration and per-request options.

use super::cancel::CancelToken;
use crate::transport::TransportConfig;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

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

#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub transport: TransportConfig,
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
    /// Declare the skills extension (SEP-2640) in the derived capabilities. Opt-in: servers
    /// that see it stop offering their fallback tool for loading skills, which a host that
    /// does not load skills itself would then miss.
    pub skills: bool,
}

impl ClientConfig {
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
            skills: false,
        }
    }
}

/// A progress notification for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

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
    pub cancel: Option<CancelToken>,
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
const CONFIG_KEYS: &[&str] = &[
    "command",
    "url",
    "headers",
    "bearer_token",
    "oauth",
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
    "skills",
];

impl ClientConfig {
    /// Builds a configuration from one flat JSON object, the form the C ABI and the bindings
    /// use. Exactly one of `command` (stdio) or `url` (HTTP) is given.
    /// stdio: `{"command": "server", "args": [..], "env": {..}, "env_mode": "inherit"|"replace",
    /// "cwd": "..", "stderr_tail_lines": .., "shutdown_grace_ms": ..}`;
    /// HTTP: `{"url": "https://host/mcp", "headers": {"Name": "value", ..}, "bearer_token": ".."}`,
    /// or instead of `bearer_token` an `"oauth": {..}` object (OAuth 2.1 authorization; keys in
    /// [`crate::auth::OAuthConfig::from_json`]);
    /// both: `"mode": "auto"|"modern"|"legacy", "protocol_version": "..",
    /// "request_timeout_ms": 60000, "probe_timeout_ms": 5000, "input_required_max_rounds": 10,
    /// "max_pages": 1000, "client_info": {..}, "capabilities": {..}, "max_message_bytes": ..,
    /// "skills": false` (true declares the skills extension).
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

        let max_message_bytes = number("max_message_bytes")?.map(|n| (n as usize).max(1024));
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
                if let Some(key) = ["headers", "bearer_token", "oauth"].into_iter().find(given) {
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
                http.oauth = match obj.get("oauth") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(Box::new(crate::auth::OAuthConfig::from_json(v)?)),
                };
                if let Some(n) = max_message_bytes {
                    http.max_message_bytes = n;
                }
                http.validate()?;
                TransportConfig::Http(http)
            }
        };

        let mut config = ClientConfig::new(transport);
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
            config.request_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = number("probe_timeout_ms")? {
            config.probe_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = number("input_required_max_rounds")? {
            config.input_required_max_rounds =
                u32::try_from(n).map_err(|_| Error::invalid("input_required_max_rounds is too large"))?;
        }
        if let Some(n) = number("max_pages")? {
            config.max_pages = n as usize;
        }
        config.skills = match obj.get("skills") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::invalid("skills must be true or false")),
        };
        Ok(config)
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
                let v = v
                    .as_str()
                    .ok_or_else(|| Error::invalid(format!("env value of {k} must be a string")))?;
                stdio.env.push((k.clone(), v.to_string()));
            }
        }
        stdio.env_mode = match string("env_mode")?.as_deref() {
            None | Some("inherit") => EnvMode::Inherit,
            Some("replace") => EnvMode::Replace,
            Some(other) => return Err(Error::invalid(format!("env_mode {other:?} is not inherit or replace"))),
        };
        stdio.cwd = string("cwd")?.map(Into::into);
        if let Some(n) = max_message_bytes {
            stdio.max_message_bytes = n;
        }
        if let Some(n) = number("stderr_tail_lines")? {
            stdio.stderr_tail_lines = n as usize;
        }
        if let Some(ms) = number("shutdown_grace_ms")? {
            stdio.shutdown_grace = Duration::from_millis(ms);
        }
        Ok(stdio)
    }
}
