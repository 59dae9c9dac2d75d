//! Legacy Streamable HTTP (2025-03-26 … 2025-11-25): the `initialize` POST and its session id,
//! `MCP-Protocol-Version` with the negotiated version, the GET stream for server→client traffic,
//! SSE resumption with `Last-Event-ID` after the `retry:` interval, cancellation by POSTing
//! `notifications/cancelled`, one re-initialisation when the session expires (404), and DELETE
//! on close. A refused `initialize` (400, 404, 405) falls back to HTTP+SSE (2024-11-05).

use super::reply::Post;
use super::{header_value, Inner, Outcome, Wire, DELETE_LIMIT, ERROR_BODY_MAX, SESSION_HEADER, VERSION_HEADER};
use crate::error::{Error, ErrorKind, Result};
use crate::net::request::Fields;
use crate::protocol::{jsonrpc, methods, RequestId};
use hyper::body::Bytes;
use reqwest::header::HeaderName;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::AbortHandle;

/// The reconnection delay when the server named none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Ceiling of the backoff between failed reconnections.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The first version that has the `MCP-Protocol-Version` header.
const VERSION_HEADER_SINCE: &str = "2025-06-18";
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// A GET stream open this long counts as working even if it carried nothing.
const QUIET_STREAM_OK: Duration = Duration::from_secs(10);

/// One legacy session on the wire.
pub(super) struct Session {
    /// The `initialize` request as the client sent it (replayed to start a new session).
    init: Value,
    session_id: Option<String>,
    /// The negotiated version, from the `initialize` answer.
    version: Option<String>,
    /// Bumped by every re-initialisation.
    generation: u64,
    /// `notifications/initialized` went out (so a new session replays it and opens a GET stream).
    initialized: bool,
    get_stream: Option<AbortHandle>,
}

impl Session {
    /// The server's `Mcp-Session-Id`, once it gave one.
    pub(super) fn id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    pub(super) fn new(init: Value) -> Self {
        Session {
            init,
            session_id: None,
            version: None,
            generation: 0,
            initialized: false,
            get_stream: None,
        }
    }
}

/// The headers of a request in the current session.
struct Snapshot {
    headers: Fields,
    session_id: Option<String>,
    generation: u64,
}

fn backoff(retry: Option<Duration>, failures: u32) -> Duration {
    let base = retry.unwrap_or(DEFAULT_RETRY);
    if failures == 0 {
        return base;
    }
    base.saturating_mul(1 << failures.min(6)).min(MAX_BACKOFF.max(base))
}

impl Inner {
    fn snapshot(&self) -> Snapshot {
        let st = self.state.lock().unwrap();
        let mut headers = Fields::default();
        let Wire::Streamable(session) = &st.wire else {
            return Snapshot {
                headers,
                session_id: None,
                generation: 0,
            };
        };
        if let Some(v) = session.session_id.as_deref().and_then(header_value) {
            headers.insert(HeaderName::from_static(SESSION_HEADER), v);
        }
        if let Some(version) = &session.version {
            if version.as_str() >= VERSION_HEADER_SINCE {
                if let Some(v) = header_value(version) {
                    headers.insert(HeaderName::from_static(VERSION_HEADER), v);
                }
            }
        }
        Snapshot {
            headers,
            session_id: session.session_id.clone(),
            generation: session.generation,
        }
    }

    /// Mutates the legacy session of generation `generation`, if it is still the current one.
    fn with_session<T>(&self, generation: Option<u64>, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        let mut st = self.state.lock().unwrap();
        match &mut st.wire {
            Wire::Streamable(s) if generation.is_none_or(|g| g == s.generation) => Some(f(s)),
            _ => None,
        }
    }

    /// Serves one legacy request: `body` is its JSON text; `initialize`, when it is one, its
    /// message (for the 2024 fallback).
    pub(super) async fn legacy_request(
        self: &Arc<Self>,
        id: RequestId,
        method: Cow<'static, str>,
        body: Bytes,
        mut initialize: Option<Value>,
    ) {
        let mut reinitialised = false;
        loop {
            let snap = self.snapshot();
            let request = self.post_body(&self.url, body.clone(), snap.headers);
            let sent = self.send_for(request, &Post(&method), Some(&id)).await;
            let exchange = match sent {
                Ok(response) => self.outcome(response, Some(&id)).await,
                Err(e) => Err(e),
            };
            let exchange = match exchange {
                Ok(x) => x,
                Err(e) => return self.fail(id, e),
            };
            if let Some(message) = initialize.take() {
                return match exchange.outcome {
                    Outcome::Status { status, excerpt } if matches!(status.as_u16(), 400 | 404 | 405) => {
                        self.fallback_2024(id, message, status, excerpt).await
                    }
                    Outcome::Answer { message: answer, rest } => {
                        let answer = match answer.into_value() {
                            Ok(answer) => answer,
                            Err(e) => return self.fail(id, e),
                        };
                        self.learn_session(&answer, exchange.session_id, snap.generation);
                        self.deliver(answer);
                        self.drain(rest).await
                    }
                    other => self.finish(&id, &method, other).await,
                };
            }
            // A 404 to a request that carried the session id: the session is gone (whatever
            // the body says), so start a new one and send the request again, once.
            if exchange.status == StatusCode::NOT_FOUND && snap.session_id.is_some() && !reinitialised {
                reinitialised = true;
                self.inbound.note(Some(&id), "mcp.session.renewed", Some(404));
                if let Outcome::Answer { rest, .. } = exchange.outcome {
                    self.drain(rest).await;
                }
                if let Err(e) = self.reinitialize(snap.generation).await {
                    return self.fail(
                        id,
                        e.context(&format!("{method}: the session expired and could not be renewed")),
                    );
                }
                continue;
            }
            match exchange.outcome {
                Outcome::Ended {
                    why,
                    last_event_id: Some(last),
                    retry,
                } => return self.resume(id, &method, why, last, retry).await,
                // The answer will come on the GET stream.
                Outcome::Accepted => return,
                other => return self.finish(&id, &method, other).await,
            }
        }
    }

    /// Records what the `initialize` answer says: the session id and the negotiated version.
    fn learn_session(&self, answer: &Value, session_id: Option<String>, generation: u64) {
        let version = answer
            .get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.with_session(Some(generation), |s| {
            s.session_id = session_id;
            if version.is_some() {
                s.version = version;
            }
        });
    }

    /// A request's stream ended before its answer but named an event id: resume it with GET and
    /// `Last-Event-ID`, waiting the `retry:` interval first; bounded attempts.
    async fn resume(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        why: String,
        mut last: String,
        mut retry: Option<Duration>,
    ) {
        let mut failures = 0u32;
        loop {
            if failures >= self.cfg.max_reconnect_attempts.max(1) {
                return self.fail(
                    id,
                    Error::new(
                        ErrorKind::Io,
                        format!("{method}: {why}; resuming the stream failed {failures} times"),
                    ),
                );
            }
            tokio::time::sleep(backoff(retry, failures)).await;
            let mut headers = self.snapshot().headers;
            if let Some(v) = header_value(&last) {
                headers.insert(LAST_EVENT_ID, v);
            }
            let response = match self
                .send_http(self.get_stream_request(&self.url, headers), &"GET (resume)")
                .await
            {
                Ok(r) => r,
                Err(_) => {
                    failures += 1;
                    continue;
                }
            };
            match self.outcome(response, Some(&id)).await {
                Ok(x) => match x.outcome {
                    Outcome::Answer { message, rest } => {
                        self.deliver_answer(message);
                        return self.drain(rest).await;
                    }
                    Outcome::Ended {
                        last_event_id,
                        retry: r,
                        ..
                    } => {
                        match last_event_id {
                            Some(l) if l != last => {
                                last = l;
                                failures = 0;
                            }
                            _ => failures += 1,
                        }
                        retry = r.or(retry);
                    }
                    other => return self.finish(&id, method, other).await,
                },
                Err(e) => return self.fail(id, e),
            }
        }
    }

    /// A notification or an answer to a server request: POST, 202 expected.
    pub(super) async fn legacy_one_way(self: &Arc<Self>, method: Option<&str>, message: &Value) -> Result<()> {
        let what = method.unwrap_or("response");
        let mut reinitialised = false;
        loop {
            let snap = self.snapshot();
            let request = self.post(&self.url, message, snap.headers)?;
            let response = self.send_http(request, &Post(what)).await?;
            let exchange = self.outcome(response, None).await?;
            if exchange.status == StatusCode::NOT_FOUND
                && snap.session_id.is_some()
                && !reinitialised
                && method != Some(methods::INITIALIZED)
            {
                reinitialised = true;
                self.reinitialize(snap.generation).await?;
                continue;
            }
            match exchange.outcome {
                Outcome::Status { status, excerpt } => return Err(self.status_error(what, status, &excerpt)),
                _ => {
                    if method == Some(methods::INITIALIZED) {
                        self.after_initialized(snap.generation);
                    }
                    return Ok(());
                }
            }
        }
    }

    /// The handshake is complete: open the GET stream for server→client traffic.
    fn after_initialized(self: &Arc<Self>, generation: u64) {
        let fresh = self.with_session(Some(generation), |s| {
            let fresh = !s.initialized || s.get_stream.is_none();
            s.initialized = true;
            fresh
        });
        if fresh == Some(true) {
            self.start_get_stream(generation);
        }
    }

    fn start_get_stream(self: &Arc<Self>, generation: u64) {
        let inner = self.clone();
        let handle = self.spawn_background(async move { inner.get_stream(generation).await });
        let old = self.with_session(Some(generation), |s| s.get_stream.replace(handle.clone()));
        match old {
            Some(Some(old)) => old.abort(),
            Some(None) => {}
            // The session moved on meanwhile.
            None => handle.abort(),
        }
    }

    /// The GET stream: delivers what the server sends outside of requests; reconnects after the
    /// `retry:` interval with `Last-Event-ID`; gives up on 4xx (405: the server has none) or after
    /// `max_reconnect_attempts` consecutive failures.
    async fn get_stream(self: Arc<Self>, generation: u64) {
        let mut last: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut failures = 0u32;
        loop {
            let mut snap = self.snapshot();
            if snap.generation != generation || self.is_closed() {
                return;
            }
            if let Some(v) = last.as_deref().and_then(header_value) {
                snap.headers.insert(LAST_EVENT_ID, v);
            }
            let progressed = match self
                .send_http(self.get_stream_request(&self.url, snap.headers), &"GET")
                .await
            {
                Ok(response) if response.status().is_client_error() => {
                    let status = response.status();
                    if status != StatusCode::METHOD_NOT_ALLOWED {
                        self.log(format!(
                            "the server refused the GET stream (HTTP {status}); continuing without it"
                        ));
                    }
                    return;
                }
                Ok(response) if response.status().is_success() => {
                    let opened = tokio::time::Instant::now();
                    let mut stream = super::EventStream::new(response, self.cfg.max_message_bytes);
                    let mut got = false;
                    while let Ok(Some(item)) = async {
                        self.room().await;
                        stream.next().await
                    }
                    .await
                    {
                        got = true;
                        if let Err(e) = self.stream_item(item, None) {
                            self.log(e.message().to_string());
                        }
                    }
                    let new_last = stream.last_event_id();
                    let moved = new_last.is_some() && new_last != last;
                    if new_last.is_some() {
                        last = new_last;
                    }
                    retry = stream.retry().or(retry);
                    // A quiet stream that stayed open a while (an idle timeout) is no failure.
                    got || moved || opened.elapsed() >= QUIET_STREAM_OK
                }
                Err(e) if e.kind() == ErrorKind::AuthRequired => {
                    self.log(format!(
                        "the GET stream is not authorized; continuing without it: {}",
                        e.message()
                    ));
                    return;
                }
                Ok(_) | Err(_) => false,
            };
            failures = if progressed { 0 } else { failures + 1 };
            if failures > self.cfg.max_reconnect_attempts {
                self.log(format!("gave up the GET stream after {} failed attempts", failures));
                return;
            }
            tokio::time::sleep(backoff(retry, failures)).await;
        }
    }

    /// The session expired (404): replay `initialize` (and `notifications/initialized`) once for
    /// all requests that saw the same session, under a new session id.
    async fn reinitialize(self: &Arc<Self>, seen: u64) -> Result<()> {
        let _guard = self.reinit.lock().await;
        let current = self.with_session(None, |s| (s.generation, s.init.clone(), s.initialized));
        let Some((generation, init, initialized)) = current else {
            return Err(Error::closed());
        };
        if generation != seen {
            return Ok(());
        }
        if let Some(Some(old)) = self.with_session(Some(seen), |s| s.get_stream.take()) {
            old.abort();
        }
        self.log("the server's session expired (HTTP 404); starting a new one");
        let id = RequestId::Str(format!("mcp-client-reinitialize-{}", seen + 1));
        let mut message = init;
        message["id"] = id.to_value();
        let request = self.post(&self.url, &message, Fields::default())?;
        let response = self.send_http(request, &Post(methods::INITIALIZE)).await?;
        let exchange = self.outcome(response, Some(&id)).await?;
        let answer = match exchange.outcome {
            Outcome::Answer { message, rest } => {
                self.drain(rest).await;
                message.into_value()?
            }
            Outcome::Status { status, excerpt } => return Err(self.status_error("initialize", status, &excerpt)),
            Outcome::Accepted => return Err(Error::protocol("initialize got HTTP 202 and no answer")),
            Outcome::Ended { why, .. } => return Err(Error::new(ErrorKind::Io, format!("initialize: {why}"))),
        };
        if let Some(err) = answer.get("error") {
            return Err(Error::protocol(format!("the server refused the new initialize: {err}")));
        }
        self.learn_session(&answer, exchange.session_id, seen);
        self.with_session(Some(seen), |s| s.generation = seen + 1);
        if initialized {
            let note = jsonrpc::notification(methods::INITIALIZED, None);
            let snap = self.snapshot();
            let response = self
                .send_http(self.post(&self.url, &note, snap.headers)?, &Post(methods::INITIALIZED))
                .await?;
            if let Outcome::Status { status, excerpt } = self.outcome(response, None).await?.outcome {
                return Err(self.status_error("notifications/initialized", status, &excerpt));
            }
            self.with_session(Some(seen + 1), |s| s.initialized = true);
            self.start_get_stream(seen + 1);
        }
        Ok(())
    }

    /// Close: DELETE the session (405 and 404 are fine answers), bounded in time.
    pub(super) async fn end_legacy_session(&self) {
        let snap = self.snapshot();
        if snap.session_id.is_none() {
            return;
        }
        let request = self.request(Method::DELETE, &self.url, snap.headers, None);
        let _ = tokio::time::timeout(DELETE_LIMIT, async {
            let request = self.attach_token(request).await;
            let Ok(client) = self.client.get() else {
                return;
            };
            if let Ok(response) = client.execute(request.into_reqwest()).await {
                let mut response = crate::net::reply::Reply::from_reqwest(response);
                let _ = Inner::read_bounded(&mut response, ERROR_BODY_MAX).await;
            }
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_honours_retry_then_grows() {
        let two = Some(Duration::from_millis(2000));
        assert_eq!(backoff(two, 0), Duration::from_millis(2000));
        assert_eq!(backoff(two, 1), Duration::from_millis(4000));
        assert_eq!(backoff(None, 0), DEFAULT_RETRY);
        assert_eq!(backoff(None, 10), MAX_BACKOFF);
    }
}
