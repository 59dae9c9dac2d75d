//! The 2024-11-05 HTTP+SSE transport, reached when the Streamable HTTP `initialize` is refused
//! with 400, 404 or 405: a GET stream whose first event (`endpoint`) names the URL for POSTs;
//! every message is POSTed there and every reply arrives on the GET stream.

use super::{EventStream, Inner, Outcome, Wire};
use crate::error::{Error, ErrorKind, Result};
use crate::net::request::Fields;
use crate::protocol::RequestId;
use crate::transport::sse::SseItem;
use crate::transport::Inbound;
use reqwest::header::CONTENT_TYPE;
use reqwest::{StatusCode, Url};
use serde_json::Value;
use std::sync::Arc;

impl Inner {
    /// Switches to HTTP+SSE after the `initialize` POST was refused, then sends that
    /// `initialize` to the announced endpoint (its answer arrives on the stream).
    pub(super) async fn fallback_2024(
        self: &Arc<Self>,
        id: RequestId,
        message: Value,
        status: StatusCode,
        excerpt: String,
    ) {
        match self.open_2024().await {
            Ok(endpoint) => {
                self.log(format!(
                    "the server refused the Streamable HTTP initialize (HTTP {status}); using the 2024-11-05 HTTP+SSE transport (endpoint {})",
                    crate::net::redact::url(&endpoint)
                ));
                if let Err(e) = self.sse2024_post(&endpoint, &message).await {
                    self.fail(id, e);
                }
            }
            Err(e) => {
                // The first refusal is the news (its status stays on the error); the fallback's
                // failure only confirms there is no MCP server of either kind at this URL.
                let first = self.status_error("initialize", status, &excerpt);
                let message = format!(
                    "{} (the HTTP+SSE (2024-11-05) fallback failed too: {})",
                    first.message(),
                    e.message()
                );
                self.fail(
                    id,
                    Error::new(ErrorKind::HttpStatus, message).with_http_status(status.as_u16()),
                );
            }
        }
    }

    /// Opens the GET stream, waits for its `endpoint` event, and starts reading it.
    async fn open_2024(self: &Arc<Self>) -> Result<Url> {
        let response = self
            .send_http(self.get_stream_request(&self.url, Fields::default()), &"GET (HTTP+SSE)")
            .await?;
        let status = response.status();
        let is_stream = response
            .header(CONTENT_TYPE.as_str())
            .is_some_and(|v| v.trim().to_ascii_lowercase().starts_with("text/event-stream"));
        if !status.is_success() || !is_stream {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "GET {} answered HTTP {status} without an event stream",
                    crate::net::redact::url(&self.url)
                ),
            ));
        }
        let mut stream = EventStream::new(response, self.cfg.max_message_bytes);
        let announced = tokio::time::timeout(self.cfg.connect_timeout, async {
            loop {
                match stream.next().await? {
                    Some(SseItem::Event(event)) if event.kind() == "endpoint" => return Ok(event.data),
                    Some(other) => {
                        self.stream_item(other, None)?;
                    }
                    None => {
                        return Err(Error::new(
                            ErrorKind::Io,
                            "the SSE stream ended before its endpoint event",
                        ))
                    }
                }
            }
        })
        .await
        .map_err(|_| Error::new(ErrorKind::Timeout, "the SSE stream sent no endpoint event in time"))??;
        let endpoint = self
            .url
            .join(String::from_utf8_lossy(&announced).trim())
            .map_err(|e| Error::protocol(format!("the announced endpoint is not a usable URL: {e}")))?;
        // Our headers (the bearer token included) go only where the server URL points.
        if endpoint.origin() != self.url.origin() {
            return Err(Error::protocol(format!(
                "the announced endpoint is on another origin ({}) than {}",
                crate::net::redact::origin(&endpoint),
                crate::net::redact::origin(&self.url)
            )));
        }
        self.state.lock().unwrap().wire = Wire::Sse2024 {
            endpoint: endpoint.clone(),
        };
        let inner = self.clone();
        self.spawn_background(async move { inner.read_2024(stream).await });
        Ok(endpoint)
    }

    /// Reads the HTTP+SSE stream for good; when it ends the connection is over.
    async fn read_2024(self: Arc<Self>, mut stream: EventStream) {
        let why = loop {
            self.room().await;
            match stream.next().await {
                Ok(Some(item)) => {
                    if let Err(e) = self.stream_item(item, None) {
                        self.log(e.message().to_string());
                    }
                }
                Ok(None) => break "the server closed the HTTP+SSE stream".to_string(),
                Err(e) => break format!("the HTTP+SSE stream broke: {}", e.message()),
            }
        };
        if !self.is_closed() {
            let _ = self.inbound.send(Inbound::Closed(Error::new(ErrorKind::Io, why)));
        }
    }

    /// POSTs one message to the announced endpoint; replies come on the stream.
    pub(super) async fn sse2024_post(self: &Arc<Self>, endpoint: &Url, message: &Value) -> Result<()> {
        let what = message.get("method").and_then(Value::as_str).unwrap_or("response");
        let request = self.post(endpoint, message, Fields::default())?;
        let response = self.send_http(request, &format!("POST {what} (HTTP+SSE)")).await?;
        match self.outcome(response, None).await?.outcome {
            Outcome::Status { status, excerpt } => Err(self.status_error(what, status, &excerpt)),
            _ => Ok(()),
        }
    }
}
