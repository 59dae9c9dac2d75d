//! What an HTTP answer means for the request it carried: a JSON body, an event stream, 202,
//! or an error status (with or without a JSON-RPC error), bounded reads, and the errors that
//! say what to check when a connect fails.

use super::stream::{EventStream, Found};
use super::{excerpt, Inner, EVENT_STREAM, SESSION_HEADER};
use crate::error::{Error, ErrorKind, Result};
use crate::net::redact;
use crate::net::reply::Reply;
use crate::net::request::Request;
use crate::protocol::jsonrpc;
use crate::protocol::RequestId;
use crate::transport::framing::probe_answer;
use crate::transport::ResultAt;
use reqwest::header::CONTENT_TYPE;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Largest error-status body read for its JSON-RPC error or an excerpt.
pub(super) const ERROR_BODY_MAX: usize = 64 * 1024;

/// What to do about a request that never got an HTTP answer, for the causes newcomers meet.
pub(super) fn connect_hint(cause: &str, scheme: &str) -> &'static str {
    let lower = cause.to_ascii_lowercase();
    if scheme == "https" && (lower.contains("invalidcontenttype") || lower.contains("corrupt message")) {
        "; the server at this address does not speak TLS: if it serves plain HTTP, use an http:// URL"
    } else if lower.contains("connection refused") {
        "; nothing accepts connections at this address: is the server running, on this host and port?"
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        "; the host name does not resolve: check the URL"
    } else if scheme == "http" && lower.contains("connection reset") {
        "; the server dropped the connection: if it serves HTTPS, use an https:// URL"
    } else {
        ""
    }
}

/// What to do about an HTTP status at connect, by status.
pub(super) fn status_hint(status: u16) -> &'static str {
    match status {
        404 => "nothing serves MCP at this URL: check its path (MCP endpoints are often at /mcp)",
        405 => "this URL does not accept POST: check that it is the MCP endpoint (often /mcp)",
        400 => "the server refused the request: check that the URL is an MCP endpoint and whether it needs headers (\"headers\", \"bearer_token\")",
        _ => "check the URL and the server's logs",
    }
}

/// The answer to the request a reply carried.
pub(super) enum Answer {
    /// Decoded: it came in a batch, or as an error without an id, or was read for something.
    Value(Value),
    /// The answer's own bytes (a JSON body or an event's data), undecoded: it goes to the
    /// waiting caller as `Inbound::Answer`, which decodes only what it needs (a C host gets the
    /// server's text of `result`), instead of a `Value` built here and written out again there.
    Raw {
        id: RequestId,
        bytes: Vec<u8>,
        error_code: Option<i64>,
        /// Where the `result` sits (an answer without `error`).
        result: ResultAt,
    },
}

#[derive(Deserialize)]
struct ErrorCode {
    code: i64,
}

impl Answer {
    /// `bytes` as the undecoded answer to `id`, when they are one (`framing::probe_answer`,
    /// whose id is `id`), with the code of an error (the -32020 retry reads it; a code that is
    /// no integer sends the answer to the full decoder). Otherwise the bytes come back.
    pub(super) fn raw(bytes: Vec<u8>, id: &RequestId) -> std::result::Result<Answer, Vec<u8>> {
        let probed = match probe_answer(&bytes) {
            Some(answer) if answer.id == *id => answer,
            _ => return Err(bytes),
        };
        let error_code = match probed.error {
            None => None,
            Some(error) => match serde_json::from_str::<ErrorCode>(error.get()) {
                Ok(error) => Some(error.code),
                Err(_) => return Err(bytes),
            },
        };
        let result = probed.result;
        Ok(Answer::Raw {
            id: id.clone(),
            bytes,
            error_code,
            result,
        })
    }

    /// The answer decoded (for the few answers the transport reads: `initialize`, `tools/list`).
    pub(super) fn into_value(self) -> Result<Value> {
        match self {
            Answer::Value(v) => Ok(v),
            Answer::Raw { bytes, .. } => serde_json::from_slice(&bytes)
                .map_err(|e| Error::protocol(format!("the server's answer is not JSON: {e}"))),
        }
    }

    /// The code of an error answer.
    pub(super) fn error_code(&self) -> Option<i64> {
        match self {
            Answer::Value(v) => v.get("error")?.get("code")?.as_i64(),
            Answer::Raw { error_code, .. } => *error_code,
        }
    }
}

/// What a POST (or a resuming GET) produced for the request it carried.
pub(super) enum Outcome {
    /// The answer; `rest` is the stream it came on, to be drained after delivery.
    Answer {
        message: Answer,
        rest: Option<Box<EventStream>>,
    },
    /// 202 or an empty 2xx body.
    Accepted,
    /// An error status without a JSON-RPC answer in the body.
    Status { status: StatusCode, excerpt: String },
    /// The reply ended without the answer; a legacy stream may be resumed from `last_event_id`.
    Ended {
        why: String,
        last_event_id: Option<String>,
        retry: Option<Duration>,
    },
}

/// A reply with its status and session id header.
pub(super) struct Exchange {
    pub(super) outcome: Outcome,
    pub(super) status: StatusCode,
    pub(super) session_id: Option<String>,
}

/// What a request's errors call it: `POST <method>`, written only when an error is made (a
/// `format!` per request cost an allocation for messages almost never written).
pub(super) struct Post<'a>(pub &'a str);

impl fmt::Display for Post<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "POST {}", self.0)
    }
}

/// Whether a `Content-Type` value names `text/event-stream` (its parameters aside): the
/// media type, between any spaces, before a `;` or the end.
fn is_event_stream(value: &str) -> bool {
    let value = value.trim_start();
    value
        .get(..EVENT_STREAM.len())
        .is_some_and(|media| media.eq_ignore_ascii_case(EVENT_STREAM))
        && value[EVENT_STREAM.len()..]
            .trim_start()
            .bytes()
            .next()
            .is_none_or(|b| b == b';')
}

impl Inner {
    pub(super) async fn execute(&self, request: Request<'_>, what: &(dyn fmt::Display + Sync)) -> Result<Reply> {
        let sent = match &self.direct {
            Some(direct) if direct.serves(&request) => direct.send(request).await,
            _ => self
                .client
                .get()?
                .execute(request.into_reqwest())
                .await
                .map(Reply::from_reqwest)
                .map_err(redact::http_error),
        };
        if let Ok(response) = &sent {
            let version = if response.is_h2() { 2 } else { 1 };
            self.http_version.store(version, std::sync::atomic::Ordering::Relaxed);
        }
        sent.map_err(|cause| {
            let hint = connect_hint(&cause, self.url.scheme());
            Error::new(
                ErrorKind::Io,
                format!("{what} to {} failed: {cause}{hint}", redact::url(&self.url)),
            )
        })
    }

    /// Reads a body to its end, up to `max` bytes; `Err(len)` when it is longer (the rest is not
    /// read and the connection is dropped with the response).
    pub(super) async fn read_bounded(response: &mut Reply, max: usize) -> Result<std::result::Result<Vec<u8>, usize>> {
        response
            .read_bounded(max)
            .await
            .map_err(|cause| Error::new(ErrorKind::Io, format!("reading the response failed: {cause}")))
    }

    pub(super) fn too_large(&self, len: usize) -> Error {
        Error::new(
            ErrorKind::MessageTooLarge,
            format!(
                "the server sent a {len}-byte message; the bound is {} bytes",
                self.cfg.max_message_bytes
            ),
        )
    }

    /// Turns a response into an [`Outcome`] for request `id` (`None`: a notification or answer
    /// was sent). Messages other than the answer are delivered as they are read.
    pub(super) async fn outcome(self: &Arc<Self>, mut response: Reply, id: Option<&RequestId>) -> Result<Exchange> {
        let status = response.status();
        let session_id = response.header(SESSION_HEADER).map(str::to_string);
        let event_stream = response.header(CONTENT_TYPE.as_str()).is_some_and(is_event_stream);
        let outcome = if status.is_success() && event_stream {
            let stream = EventStream::new(response, self.cfg.max_message_bytes);
            match id {
                Some(id) => self.read_for_answer(stream, id).await?,
                None => {
                    // A stream in reply to a notification: deliver whatever it carries.
                    let inner = self.clone();
                    self.spawn_background(async move { inner.drain(Some(Box::new(stream))).await });
                    Outcome::Accepted
                }
            }
        } else if status == StatusCode::ACCEPTED {
            // Whatever a 202 carries ("Accepted") is read and dropped, so the connection is reused.
            let _ = Self::read_bounded(&mut response, ERROR_BODY_MAX).await;
            Outcome::Accepted
        } else if status.is_success() {
            let body = match Self::read_bounded(&mut response, self.cfg.max_message_bytes).await? {
                Ok(body) => body,
                Err(len) => return Err(self.too_large(len)),
            };
            let body = match id {
                Some(id) => match Answer::raw(body, id) {
                    Ok(answer) => {
                        return Ok(Exchange {
                            outcome: Outcome::Answer {
                                message: answer,
                                rest: None,
                            },
                            status,
                            session_id,
                        })
                    }
                    Err(body) => body,
                },
                None => body,
            };
            if body.iter().all(u8::is_ascii_whitespace) {
                Outcome::Accepted
            } else {
                match serde_json::from_slice::<Value>(&body) {
                    Ok(value) => self.answer_in(value, id),
                    Err(e) if id.is_some() => {
                        return Err(Error::protocol(format!(
                            "the server answered HTTP {status} with a body that is not JSON ({e}): {}",
                            excerpt(&body)
                        )))
                    }
                    Err(_) => Outcome::Accepted,
                }
            }
        } else {
            let body = match Self::read_bounded(&mut response, ERROR_BODY_MAX).await {
                Ok(Ok(body)) => body,
                // Too long or broken: an excerpt is all that is wanted anyway.
                _ => Vec::new(),
            };
            match serde_json::from_slice::<Value>(&body) {
                // Only a request's own error answer counts; a refused notification is a status.
                Ok(value) if id.is_some() && jsonrpc::is_error_answer(&value) => self.answer_in(value, id),
                _ => Outcome::Status {
                    status,
                    excerpt: excerpt(&body),
                },
            }
        };
        Ok(Exchange {
            outcome,
            status,
            session_id,
        })
    }

    /// Finds the answer to `id` in a JSON body (one message or a batch); the rest is delivered.
    pub(super) fn answer_in(&self, value: Value, id: Option<&RequestId>) -> Outcome {
        let messages = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        let mut answer = None;
        for message in messages {
            match self.sort(message, id, 0) {
                Found::Answer(m) if answer.is_none() => answer = Some(m),
                _ => {}
            }
        }
        match (answer, id) {
            (Some(message), _) => Outcome::Answer { message, rest: None },
            (None, None) => Outcome::Accepted,
            (None, Some(_)) => Outcome::Ended {
                why: "the server's reply did not contain the answer".into(),
                last_event_id: None,
                retry: None,
            },
        }
    }

    /// Reads an event stream until the answer to `id`, delivering everything before it.
    pub(super) async fn read_for_answer(&self, mut stream: EventStream, id: &RequestId) -> Result<Outcome> {
        loop {
            self.room().await;
            match stream.next().await {
                Ok(Some(item)) => {
                    if let Found::Answer(message) = self.stream_item(item, Some(id))? {
                        // Most replies end with their answer: nothing left to drain.
                        let rest = (!stream.at_end()).then(|| Box::new(stream));
                        return Ok(Outcome::Answer { message, rest });
                    }
                }
                Ok(None) => {
                    return Ok(Outcome::Ended {
                        why: "the server closed the response stream before answering".into(),
                        last_event_id: stream.last_event_id(),
                        retry: stream.retry(),
                    })
                }
                Err(e) => {
                    return Ok(Outcome::Ended {
                        why: e.message().to_string(),
                        last_event_id: stream.last_event_id(),
                        retry: stream.retry(),
                    })
                }
            }
        }
    }

    /// The error for an HTTP status without a JSON-RPC answer.
    pub(super) fn status_error(&self, what: &str, status: StatusCode, excerpt: &str) -> Error {
        let body = if excerpt.is_empty() {
            String::new()
        } else {
            format!(": {excerpt}")
        };
        // At connect a bare status usually means a wrong URL: say what to check.
        let hint = match what {
            "initialize" | "server/discover" if status.is_client_error() => {
                format!("; {}", status_hint(status.as_u16()))
            }
            _ => String::new(),
        };
        Error::new(
            ErrorKind::HttpStatus,
            format!("{what}: HTTP {status} from {}{body}{hint}", redact::url(&self.url)),
        )
        .with_http_status(status.as_u16())
    }

    /// Hands an answer to the session.
    pub(super) fn deliver_answer(&self, answer: Answer) {
        match answer {
            Answer::Value(message) => self.deliver(message),
            Answer::Raw { id, bytes, result, .. } => {
                let _ = self.inbound.send_answer(id, bytes, result);
            }
        }
    }

    /// Delivers an answer, or fails `id` with what the outcome says.
    pub(super) async fn finish(&self, id: &RequestId, what: &str, outcome: Outcome) {
        match outcome {
            Outcome::Answer { message, rest } => {
                self.deliver_answer(message);
                self.drain(rest).await;
            }
            Outcome::Accepted => self.fail(
                id.clone(),
                Error::protocol(format!("the server accepted {what} (HTTP 202) but sent no answer")),
            ),
            Outcome::Status { status, excerpt } => self.fail(id.clone(), self.status_error(what, status, &excerpt)),
            Outcome::Ended { why, .. } => self.fail(id.clone(), Error::new(ErrorKind::Io, format!("{what}: {why}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{connect_hint, is_event_stream, status_hint};

    #[test]
    fn an_event_stream_is_its_media_type_whatever_its_parameters() {
        for yes in [
            "text/event-stream",
            "Text/Event-Stream",
            " text/event-stream ; charset=utf-8",
            "text/event-stream;",
        ] {
            assert!(is_event_stream(yes), "{yes:?}");
        }
        for no in [
            "",
            "application/json",
            "text/event-streams",
            "text/event-stream x",
            "text/event",
            "té",
        ] {
            assert!(!is_event_stream(no), "{no:?}");
        }
    }

    #[test]
    fn connect_failures_say_what_to_check() {
        let tls = "error sending request: client error (Connect): received corrupt message of type InvalidContentType";
        assert!(connect_hint(tls, "https").contains("use an http:// URL"));
        assert!(
            connect_hint("tcp connect error: Connection refused (os error 111)", "http")
                .contains("is the server running")
        );
        assert!(connect_hint("dns error: failed to lookup address information", "https").contains("does not resolve"));
        assert_eq!(connect_hint("something else", "http"), "");
        assert!(status_hint(404).contains("/mcp"));
        assert!(status_hint(405).contains("does not accept POST"));
        assert!(status_hint(400).contains("headers"));
    }
}
