//! Transports move JSON-RPC messages between the session and a server. A transport delivers
//! everything it receives to one inbound channel and decides how a request is cancelled on its
//! wire (stdio: `notifications/cancelled`; modern HTTP: closing the response stream; legacy
//! HTTP: POSTing `notifications/cancelled`).

mod child;
pub mod framing;
pub mod http;
mod line_writer;
pub mod sse;
pub mod stdio;

use crate::error::{Error, Result};
use crate::protocol::RequestId;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::mpsc;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a transport hands to the session.
#[derive(Debug)]
pub enum Inbound {
    /// One decoded JSON-RPC message.
    Message(Value),
    /// An answer (result or error) to request `id`, still undecoded: the waiting caller decodes
    /// it on its own thread, so the thread reading the transport never decodes results, and
    /// what the decoding allocates is allocated and freed by one thread.
    Answer { id: RequestId, line: Vec<u8> },
    /// A message for request `id` could not be accepted (e.g. too large); the request fails.
    RequestFailed { id: RequestId, error: Error },
    /// A diagnostic line (server stderr, skipped input) for the log listener.
    Log { source: &'static str, line: String },
    /// The transport is gone for good; every pending request fails with this error.
    Closed(Error),
    /// Request `id` waits for an authorization (a browser, a token endpoint): its timeout is
    /// held while `paused`, and starts afresh when released. The call's total cap still runs.
    Paused { id: RequestId, paused: bool },
}

pub type InboundSender = mpsc::UnboundedSender<Inbound>;

pub trait Transport: Send + Sync + 'static {
    /// Writes one message. Fails when the transport is closed or the write fails.
    fn send(&self, message: Value) -> BoxFuture<'_, Result<()>>;
    /// Tells the server to stop working on `id`, in this transport's way.
    fn cancel(&self, id: RequestId, reason: String) -> BoxFuture<'_, ()>;
    /// Shuts the transport down and releases its resources; idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
    /// Whether this transport may send `Inbound::Paused` (only an HTTP transport with an
    /// authorization flow does); the session then keeps a hold switch per request.
    fn may_pause(&self) -> bool {
        false
    }
}

/// How to reach a server.
#[derive(Debug, Clone)]
pub enum TransportConfig {
    Stdio(stdio::StdioConfig),
    Http(http::HttpConfig),
}

impl TransportConfig {
    /// Starts a new connection, delivering what it receives to `inbound`.
    pub async fn start(&self, inbound: InboundSender) -> Result<Box<dyn Transport>> {
        self.start_with_auth(inbound, None).await
    }

    /// As [`TransportConfig::start`], sharing the client's authorization state with an HTTP
    /// transport.
    pub(crate) async fn start_with_auth(
        &self,
        inbound: InboundSender,
        auth: Option<std::sync::Arc<crate::auth::AuthContext>>,
    ) -> Result<Box<dyn Transport>> {
        match self {
            TransportConfig::Stdio(cfg) => Ok(Box::new(stdio::StdioTransport::spawn(cfg, inbound)?)),
            TransportConfig::Http(cfg) => Ok(Box::new(http::HttpTransport::start_with_auth(cfg, inbound, auth)?)),
        }
    }

    /// Default per-message size bound.
    pub fn max_message_bytes(&self) -> usize {
        match self {
            TransportConfig::Stdio(cfg) => cfg.max_message_bytes,
            TransportConfig::Http(cfg) => cfg.max_message_bytes,
        }
    }
}
