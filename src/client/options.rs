//! Client configuration and per-request options.

use super::cancel::CancelToken;
use crate::base::defaults;
use crate::transport::TransportConfig;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

// Hosts mean "none" with 0 or a negative value where the option allows it.
pub(crate) use crate::base::defaults::MAX_TIMEOUT_MS;

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
    /// `tools/call` spans carry the call's arguments and result (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`, JSON text); off by default (they may be sensitive).
    pub span_tool_payloads: bool,
    /// Tool pinning (`crate::pin`): `None` or policy `off` keeps no pins.
    pub tool_pinning: Option<crate::pin::PinSettings>,
    /// Declare `sampling.tools` (SEP-1577) with `sampling`: the sampling handler then receives
    /// the request's `tools` and `toolChoice` and may answer with `tool_use` content. Opt-in.
    pub sampling_tools: bool,
    /// Declare the MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`): the host can
    /// render `text/html;profile=mcp-app` views. Opt-in.
    pub apps: bool,
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
            max_attempts: defaults::RECONNECT_MAX_ATTEMPTS,
            initial_backoff: Duration::from_millis(defaults::RECONNECT_INITIAL_BACKOFF_MS),
            max_backoff: Duration::from_millis(defaults::RECONNECT_MAX_BACKOFF_MS),
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
}

impl ClientConfig {
    /// The defaults (auto era detection, 60 s timeouts) for `transport`.
    pub fn new(transport: TransportConfig) -> Self {
        ClientConfig {
            transport,
            mode: ConnectMode::Auto,
            client_info: json!({"name": "mcp_client", "version": env!("CARGO_PKG_VERSION")}),
            capabilities: None,
            request_timeout: Duration::from_millis(defaults::REQUEST_TIMEOUT_MS),
            probe_timeout: Duration::from_millis(defaults::PROBE_TIMEOUT_MS),
            input_required_max_rounds: defaults::INPUT_REQUIRED_MAX_ROUNDS,
            max_pages: defaults::MAX_PAGES as usize,
            connect_timeout: Duration::from_millis(defaults::CONNECT_TIMEOUT_MS),
            reconnect: None,
            skills: false,
            manual_input: Default::default(),
            tasks: false,
            oauth: None,
            era_cache: super::EraCache::shared(),
            response_cache: true,
            response_cache_max_entries: super::cache::DEFAULT_MAX_ENTRIES,
            validate_output_schema: true,
            span_tool_payloads: false,
            tool_pinning: None,
            sampling_tools: false,
            apps: false,
        }
    }

    /// Whether the client declares `sampling.tools`: `sampling_tools`, or the `capabilities`
    /// override says so.
    pub(crate) fn declares_sampling_tools(&self) -> bool {
        match &self.capabilities {
            Some(caps) => caps.pointer("/sampling/tools").is_some(),
            None => self.sampling_tools,
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
    /// `None`: the client's default; `Some(ZERO)`: no timeout. A `tools/call` answered with a
    /// task waits at most this long for the task's end (counted from the request the task
    /// answered; each answered input round starts it again); when it passes, the call fails
    /// with `Timeout` and the client sends `tasks/cancel`.
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever the server reports progress (a progress token is sent);
    /// for a followed task, each change of its status or status message is progress too.
    pub reset_timeout_on_progress: bool,
    /// Upper bound for the whole call, MRTR rounds and progress resets included. When it ends
    /// the wait for a task, the task is left running (follow it again with `resume_task`).
    pub max_total: Option<Duration>,
    /// Cancels the call (the server is told, in its era's way). Dropping the call's future (a
    /// `tokio::time::timeout` or `select!` of the host's own) cancels it too.
    pub cancel: Option<CancelToken>,
    /// Called with each progress notification for the call.
    pub on_progress: Option<ProgressFn>,
    /// Extra `_meta` entries (the protocol's reserved keys always win). `traceparent`,
    /// `tracestate` and `baggage` entries must be valid W3C values (else `InvalidArgument`).
    pub meta: Option<Map<String, Value>>,
    /// W3C trace context (SEP-414) for every request this call sends: the first, each MRTR
    /// retry, each task poll, each retry after a reconnect. It replaces `meta`'s trace entries.
    pub trace: Option<crate::protocol::trace::TraceContext>,
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
    /// Where the caller's current trace context comes from when `trace` is `None`: asked once
    /// for each operation the call sends (see [`super::observe`]), on the thread that polls the
    /// call's future, before that operation's first request; never for an answer from the
    /// response cache. What it gives is the operation's `trace` (an error fails the call).
    pub trace_source: Option<TraceSource>,
    /// Where the call's spans go instead of the observer (the C ABI hands them to the host on
    /// the thread that completes the call). Internal: leave it `None`.
    #[doc(hidden)]
    pub spans: Option<Arc<super::observe::SpanSink>>,
}

/// A source of the caller's current W3C trace context (see [`RequestOptions::trace_source`]).
pub type TraceSource =
    Arc<dyn Fn() -> crate::error::Result<Option<crate::protocol::trace::TraceContext>> + Send + Sync>;

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total", &self.max_total)
            .field("log_level", &self.log_level)
            .field("trace", &self.trace)
            .finish_non_exhaustive()
    }
}
