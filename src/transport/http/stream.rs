//! Reading a `text/event-stream` reply: its items one by one (the answer to the request it
//! carries kept, everything else delivered), and the rest after the answer, bounded in time.

use super::reply::Answer;
use super::{excerpt, Inner};
use crate::error::{Error, ErrorKind, Result};
use crate::net::reply::Reply;
use crate::protocol::jsonrpc;
use crate::protocol::RequestId;
use crate::transport::framing::scan_top_level_id;
use crate::transport::sse::{SpanHint, SseItem, SseParser};
use serde_json::Value;
use std::future::Future;
use std::task::Poll;
use std::time::Duration;

/// How long the rest of a stream is read after its answer before the connection is dropped.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What the last event over several chunks needed, for the next reply's parser.
static REPLY_SPANS: SpanHint = SpanHint::new();

/// A `text/event-stream` body being read.
pub(crate) struct EventStream {
    response: Reply,
    parser: SseParser,
    ended: bool,
}

impl EventStream {
    pub(super) fn new(response: Reply, max: usize) -> Self {
        EventStream {
            response,
            parser: SseParser::sharing(max, &REPLY_SPANS),
            ended: false,
        }
    }

    /// The next item; `Ok(None)` at the end of the body.
    pub(super) async fn next(&mut self) -> Result<Option<SseItem>> {
        loop {
            if let Some(item) = self.parser.next_item() {
                return Ok(Some(item));
            }
            if self.ended {
                return Ok(None);
            }
            // Inside a data line (an answer's, usually), the line's next bytes go straight into
            // the event's data; anything else is fed from the reply's buffer.
            let read = match self.parser.data_to_extend() {
                Some((data, room)) => {
                    let from = data.len();
                    match self.response.append(data, room).await {
                        Ok(0) => Ok(false),
                        Ok(_) => {
                            self.parser.data_added(from);
                            Ok(true)
                        }
                        Err(e) => Err(e),
                    }
                }
                None => match self.response.chunk().await {
                    Ok(Some(bytes)) => {
                        self.parser.feed(bytes);
                        Ok(true)
                    }
                    Ok(None) => Ok(false),
                    Err(e) => Err(e),
                },
            };
            match read {
                Ok(true) => {}
                Ok(false) => {
                    self.ended = true;
                    self.parser.finish();
                }
                Err(e) => {
                    self.ended = true;
                    self.parser.finish();
                    return Err(Error::new(ErrorKind::Io, format!("the event stream broke: {e}")));
                }
            }
        }
    }

    /// Whether nothing can follow: no item waits and the body was read to its end (then there
    /// is nothing to drain, and the reply's connection went home).
    pub(super) fn at_end(&mut self) -> bool {
        !self.parser.has_items() && (self.ended || self.response.at_end())
    }

    pub(super) fn last_event_id(&self) -> Option<String> {
        self.parser.last_event_id().map(str::to_string)
    }

    pub(super) fn retry(&self) -> Option<Duration> {
        self.parser.retry()
    }
}

/// What one stream item meant for the request being served.
pub(super) enum Found {
    Answer(Answer),
    Nothing,
}

impl Inner {
    /// Handles one stream item for the request `id`: the answer is returned, the rest delivered.
    pub(super) fn stream_item(&self, item: SseItem, id: Option<&RequestId>) -> Result<Found> {
        match item {
            SseItem::TooLarge { prefix, len } => {
                let error = self.too_large(len);
                match scan_top_level_id(&prefix).as_ref().and_then(RequestId::from_value) {
                    Some(found) if Some(&found) == id => return Err(error),
                    Some(other) => self.fail(other, error),
                    None => self.log(format!("skipped an SSE event: {}", error.message())),
                }
                Ok(Found::Nothing)
            }
            SseItem::Event(event) => {
                if event.kind() == "endpoint" || event.data.trim_ascii().is_empty() {
                    // Priming events (an id and retry with empty data) carry no message.
                    return Ok(Found::Nothing);
                }
                let weight = event.data.len();
                // The answer's bytes are checked (UTF-8 included) once, by the probe.
                let data = match id {
                    Some(id) => match Answer::raw(event.data, id) {
                        Ok(answer) => return Ok(Found::Answer(answer)),
                        Err(bytes) => bytes,
                    },
                    None => event.data,
                };
                match event_json(&data) {
                    Ok(Value::Array(items)) => {
                        let mut answer = Found::Nothing;
                        let weight = weight / items.len().max(1);
                        for message in items {
                            if let Found::Answer(m) = self.sort(message, id, weight) {
                                answer = Found::Answer(m);
                            }
                        }
                        Ok(answer)
                    }
                    Ok(message) => Ok(self.sort(message, id, weight)),
                    Err(e) => {
                        self.log(format!(
                            "ignored an SSE event that is not JSON ({e}): {}",
                            excerpt(&data)
                        ));
                        Ok(Found::Nothing)
                    }
                }
            }
        }
    }

    /// Keeps the answer to `id` (an error without an id in a direct reply is ours too), delivers
    /// everything else.
    pub(super) fn sort(&self, mut message: Value, id: Option<&RequestId>, weight: usize) -> Found {
        if let Some(id) = id {
            if jsonrpc::is_response(&message) {
                let msg_id = message.get("id").and_then(RequestId::from_value);
                let anonymous_error = msg_id.is_none() && message.get("error").is_some();
                if msg_id.as_ref() == Some(id) || anonymous_error {
                    if anonymous_error {
                        message["id"] = id.to_value();
                    }
                    return Found::Answer(Answer::Value(message));
                }
            }
        }
        self.deliver_metered(message, weight);
        Found::Nothing
    }

    /// Reads what is left of a stream after its answer (bounded in time), so the connection can
    /// be reused; anything still on it is delivered.
    pub(super) async fn drain(&self, rest: Option<Box<EventStream>>) {
        let Some(mut stream) = rest else {
            return;
        };
        let mut draining = std::pin::pin!(async {
            while let Ok(Some(item)) = async {
                self.room().await;
                stream.next().await
            }
            .await
            {
                if let Err(e) = self.stream_item(item, None) {
                    self.log(e.message().to_string());
                }
            }
        });
        // Most replies end with their answer (the body's end came in the same read): then no
        // timer is set up for the bound.
        if std::future::poll_fn(|cx| Poll::Ready(draining.as_mut().poll(cx).is_ready())).await {
            return;
        }
        let _ = tokio::time::timeout(DRAIN_LIMIT, draining).await;
    }
}

/// An event's data as JSON. Bytes that are not UTF-8 are read as the event-stream format
/// decodes them (replaced with U+FFFD); only here, off the answer's quick path, are they looked
/// at for that.
fn event_json(data: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(data).or_else(|e| match std::str::from_utf8(data) {
        Ok(_) => Err(e),
        Err(_) => serde_json::from_str(&String::from_utf8_lossy(data)),
    })
}

#[cfg(test)]
mod tests {
    use super::event_json;
    use serde_json::json;

    #[test]
    fn event_data_that_is_not_utf8_is_read_with_replacements() {
        let data = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"a\xFFb\"}}";
        assert_eq!(
            event_json(data).unwrap(),
            json!({"jsonrpc": "2.0", "method": "m", "params": {"t": "a\u{FFFD}b"}})
        );
        assert_eq!(event_json(b"[1, 2]").unwrap(), json!([1, 2]));
        // Not JSON stays not JSON, UTF-8 or not.
        assert!(event_json(b"{\"a\":").is_err());
        assert!(event_json(b"{\"a\":\xFF").is_err());
    }
}
