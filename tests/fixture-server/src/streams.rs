//! Sinks that feed HTTP responses. Handler threads never touch sockets:
//! they send into a channel that the connection's own thread drains
//! ([`ChannelSink`], one per POST), or into a legacy session's
//! [`EventHub`], which numbers events, keeps them for `Last-Event-ID`
//! replay and forwards them to the session's GET stream when one is open.

use crate::sink::Sink;
use crate::wire::{self, RpcError};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a connection thread receives.
#[derive(Debug, PartialEq)]
pub enum Out {
    /// A JSON-RPC message and, for errors, the HTTP status hint.
    Msg(Value, Option<u16>),
    /// A line that is not JSON (the `garbage` tool).
    Raw(String),
    /// A numbered session event (GET streams).
    Event(u64, String),
    /// The session ended or a newer GET stream replaced this one.
    Close,
}

/// Whether `msg` is the response to the request `id` (so it ends the
/// request's HTTP response).
pub fn is_final(msg: &Value, id: &Value) -> bool {
    msg.get("method").is_none()
        && (msg.get("result").is_some() || msg.get("error").is_some())
        && msg.get("id") == Some(id)
}

/// The sink of one HTTP request: everything goes to its connection thread.
pub struct ChannelSink {
    tx: Sender<Out>,
    open: AtomicBool,
}

impl ChannelSink {
    pub fn new() -> (Arc<ChannelSink>, Receiver<Out>) {
        let (tx, rx) = mpsc::channel();
        let sink = ChannelSink {
            tx,
            open: AtomicBool::new(true),
        };
        (Arc::new(sink), rx)
    }

    /// Called by the connection thread when it stops reading.
    pub fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
    }

    fn put(&self, out: Out) {
        if self.open.load(Ordering::SeqCst) && self.tx.send(out).is_err() {
            self.close();
        }
    }
}

impl Sink for ChannelSink {
    fn send(&self, msg: &Value) {
        self.put(Out::Msg(msg.clone(), None));
    }

    fn send_raw(&self, line: &str) {
        self.put(Out::Raw(line.to_string()));
    }

    fn send_error(&self, id: &Value, err: &RpcError) {
        self.put(Out::Msg(wire::error_message(id, err), err.http_status));
    }

    fn alive(&self) -> bool {
        self.open.load(Ordering::SeqCst)
    }
}

/// How many events a session keeps for replay.
const LOG_LIMIT: usize = 1000;

#[derive(Default)]
struct Hub {
    /// The last id handed out (events and priming events share the space).
    last_id: u64,
    log: VecDeque<(u64, String)>,
    /// The highest event id handed to a stream.
    delivered: u64,
    /// The open GET stream: (token, channel).
    stream: Option<(u64, Sender<Out>)>,
    tokens: u64,
    /// When the server last closed (or saw close) a GET stream.
    last_close: Option<Instant>,
    ended: bool,
}

/// A legacy session's server→client traffic.
#[derive(Default)]
pub struct EventHub {
    hub: Mutex<Hub>,
}

/// Events to replay: those after `after`, or (no `Last-Event-ID`) those no
/// stream has received yet.
fn replay(hub: &mut Hub, after: Option<u64>) -> Vec<(u64, String)> {
    let from = after.unwrap_or(hub.delivered);
    let events: Vec<(u64, String)> = hub.log.iter().filter(|(id, _)| *id > from).cloned().collect();
    if let Some((last, _)) = events.last() {
        hub.delivered = hub.delivered.max(*last);
    }
    events
}

impl EventHub {
    pub fn new() -> Arc<EventHub> {
        Arc::new(EventHub::default())
    }

    fn lock(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Numbers, logs and (if a stream is open) forwards one event.
    pub fn push(&self, text: String) {
        let mut hub = self.lock();
        if hub.ended {
            return;
        }
        hub.last_id += 1;
        let id = hub.last_id;
        hub.log.push_back((id, text.clone()));
        if hub.log.len() > LOG_LIMIT {
            hub.log.pop_front();
        }
        if let Some((_, tx)) = &hub.stream {
            if tx.send(Out::Event(id, text)).is_ok() {
                hub.delivered = id;
            } else {
                hub.stream = None;
            }
        }
    }

    /// Opens a live stream, replacing (closing) any previous one. Returns
    /// its token, its channel and the events to write first.
    pub fn attach(&self, after: Option<u64>) -> (u64, Receiver<Out>, Vec<(u64, String)>) {
        let mut hub = self.lock();
        let events = replay(&mut hub, after);
        let (tx, rx) = mpsc::channel();
        if hub.ended {
            let _ = tx.send(Out::Close);
        }
        hub.tokens += 1;
        let token = hub.tokens;
        if let Some((_, old)) = hub.stream.replace((token, tx)) {
            let _ = old.send(Out::Close);
        }
        (token, rx, events)
    }

    /// The stream `token` ended.
    pub fn detach(&self, token: u64) {
        let mut hub = self.lock();
        if hub.stream.as_ref().is_some_and(|(t, _)| *t == token) {
            hub.stream = None;
        }
        hub.last_close = Some(Instant::now());
    }

    /// SEP-1699 polling: the events to replay, a fresh priming event id
    /// (greater than all of them) and the time since the previous GET
    /// stream closed. No stream stays attached.
    pub fn poll(&self, after: Option<u64>) -> (Vec<(u64, String)>, u64, Option<Duration>) {
        let mut hub = self.lock();
        let events = replay(&mut hub, after);
        hub.last_id += 1;
        (events, hub.last_id, hub.last_close.map(|t| t.elapsed()))
    }

    /// The server just closed a polling GET stream.
    pub fn closed_now(&self) {
        self.lock().last_close = Some(Instant::now());
    }

    /// The session ended: close the stream, drop later events.
    pub fn end(&self) {
        let mut hub = self.lock();
        hub.ended = true;
        if let Some((_, tx)) = hub.stream.take() {
            let _ = tx.send(Out::Close);
        }
    }
}

impl Sink for EventHub {
    fn send(&self, msg: &Value) {
        self.push(serde_json::to_string(msg).unwrap_or_default());
    }

    fn send_raw(&self, line: &str) {
        self.push(line.to_string());
    }

    fn alive(&self) -> bool {
        !self.lock().ended
    }
}

/// A legacy request answered with JSON (no `--sse-responses`): the response
/// goes in the POST's body; everything else the handler sends (progress,
/// logs, server→client requests) goes to the session's GET stream.
pub struct SplitSink {
    pub post: Arc<ChannelSink>,
    pub hub: Arc<EventHub>,
    pub reply_id: Value,
}

impl Sink for SplitSink {
    fn send(&self, msg: &Value) {
        if is_final(msg, &self.reply_id) {
            self.post.send(msg);
        } else {
            self.hub.send(msg);
        }
    }

    fn send_raw(&self, line: &str) {
        self.post.send_raw(line);
    }

    fn alive(&self) -> bool {
        self.post.alive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(events: &[(u64, String)]) -> Vec<(u64, &str)> {
        events.iter().map(|(id, t)| (*id, t.as_str())).collect()
    }

    #[test]
    fn final_response_detection() {
        assert!(is_final(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}), &json!(1)));
        assert!(is_final(
            &json!({"jsonrpc": "2.0", "id": "1", "error": {}}),
            &json!("1")
        ));
        assert!(!is_final(
            &json!({"jsonrpc": "2.0", "id": "1", "result": {}}),
            &json!(1)
        ));
        assert!(!is_final(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            &json!(1)
        ));
        assert!(!is_final(&json!({"jsonrpc": "2.0", "method": "n"}), &json!(1)));
    }

    #[test]
    fn channel_sink_keeps_status_hint_and_stops_when_closed() {
        let (sink, rx) = ChannelSink::new();
        sink.send_error(&json!(1), &RpcError::invalid_params("x").bad_request());
        let Out::Msg(msg, hint) = rx.try_recv().unwrap() else {
            panic!()
        };
        assert_eq!((msg["error"]["code"].as_i64(), hint), (Some(-32602), Some(400)));
        sink.close();
        sink.send_raw("late");
        assert!(rx.try_recv().is_err());
        assert!(!sink.alive());
    }

    #[test]
    fn hub_queues_replays_and_forwards() {
        let hub = EventHub::new();
        hub.push("a".into()); // 1, no stream: queued
        let (t1, rx1, first) = hub.attach(None);
        assert_eq!(texts(&first), vec![(1, "a")]);
        hub.push("b".into()); // 2, live
        assert_eq!(rx1.try_recv().unwrap(), Out::Event(2, "b".into()));
        hub.detach(t1);
        hub.push("c".into()); // 3, queued
                              // Resume after 1: replays 2 and 3; a new stream replaces nothing.
        let (_, rx2, resumed) = hub.attach(Some(1));
        assert_eq!(texts(&resumed), vec![(2, "b"), (3, "c")]);
        // A newer stream closes the older one.
        let (t3, _rx3, none) = hub.attach(None);
        assert!(none.is_empty());
        assert_eq!(rx2.try_recv().unwrap(), Out::Close);
        hub.detach(t3);
        // Polling: priming ids are above every event; replay after them is empty.
        let (events, prime, since) = hub.poll(Some(0));
        assert_eq!((events.len(), prime), (3, 4));
        assert!(since.is_some());
        hub.push("d".into()); // 5
        let (events, prime, _) = hub.poll(Some(4));
        assert_eq!((texts(&events), prime), (vec![(5, "d")], 6));
        hub.end();
        hub.push("e".into());
        assert!(!hub.alive());
        let (_, rx, events) = hub.attach(Some(5));
        assert!(events.is_empty());
        assert_eq!(rx.try_recv().unwrap(), Out::Close);
    }

    #[test]
    fn split_sink_routes_by_message() {
        let (post, rx) = ChannelSink::new();
        let hub = EventHub::new();
        let split = SplitSink {
            post,
            hub: Arc::clone(&hub),
            reply_id: json!(7),
        };
        split.notify("notifications/progress", None);
        split.send(&json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}));
        split.send_result(&json!(7), json!({}));
        let Out::Msg(msg, _) = rx.try_recv().unwrap() else {
            panic!()
        };
        assert_eq!(msg["id"], 7);
        assert!(rx.try_recv().is_err());
        let (_, _, queued) = hub.attach(None);
        assert_eq!(queued.len(), 2);
    }
}
