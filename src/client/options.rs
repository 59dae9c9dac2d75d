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
