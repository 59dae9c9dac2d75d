//! Spans and metrics by the OpenTelemetry semantic conventions for MCP (`docs/gen-ai/mcp.md` in
//! the GenAI semantic-conventions repository, status Development): one CLIENT [`Span`] per MCP
//! operation, ended and handed to the client's [`Observer`] with the operation's duration for
//! the `mcp.client.operation.duration` histogram. Nothing here runs, allocates or formats when
//! no observer is set: the request path asks `Client::observer` once per call.
//!
//! Delivery is synchronous: the observer runs on the thread that completes the operation,
//! before the call's result reaches its caller (in Rust, before the call's future is ready; in
//! the C ABI, before a blocking call returns or a started call's completion runs, on that same
//! thread). An observer that panics is caught and the call goes on unharmed.

#[cfg(feature = "tracing")]
pub use super::observe_tracing::{TracingObserver, TARGET as TRACING_TARGET};
use super::wait::Wait;
use super::{CacheMode, Client, RequestOptions};
use crate::error::{Error, ErrorKind};
use crate::protocol::trace::TraceContext;
use crate::protocol::{jsonrpc, methods};
use crate::transport::TransportConfig;
use serde_json::{Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The operation histogram's name.
pub const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// Its unit (UCUM seconds).
pub const OPERATION_DURATION_UNIT: &str = "s";
/// Its bucket boundaries (the convention's `ExplicitBucketBoundaries`).
pub const OPERATION_DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The session histogram's name (a [`SessionRecord`]'s duration).
pub const SESSION_DURATION: &str = "mcp.client.session.duration";
/// Its unit (UCUM seconds); its buckets are [`OPERATION_DURATION_BUCKETS`].
pub const SESSION_DURATION_UNIT: &str = "s";

/// `error.type` of a `tools/call` answered with `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";

/// The attribute naming the server a record comes from by the name the host gives it (a hub
/// member's name, its key in the configuration file): [`Observer::server_name`]. The
/// conventions have no such attribute; the name is the library's, low in cardinality, so the
/// histograms keep it.
pub const SERVER_NAME: &str = "mcp.server.name";

/// An attribute value: the convention's attributes are strings, and `server.port` an int.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// A string attribute.
    Str(String),
    /// An integer attribute (`server.port`, event counters).
    Int(i64),
}

impl AttrValue {
    /// The string value, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            AttrValue::Int(_) => None,
        }
    }

    fn to_json(&self) -> Value {
        match self {
            AttrValue::Str(s) => Value::String(s.clone()),
            AttrValue::Int(i) => Value::from(*i),
        }
    }
}

/// Attributes in the order they were set, keyed by the convention's names.
pub type Attributes = Vec<(&'static str, AttrValue)>;

/// What a span and a session record share: their attributes, and their start and end (the
/// histograms' value).
struct Recorded<'a> {
    attributes: &'a Attributes,
    start: SystemTime,
    end: SystemTime,
}

impl<'a> Recorded<'a> {
    fn attribute(&self, key: &str) -> Option<&'a AttrValue> {
        self.attributes.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Seconds from start to end (zero when the clock went back).
    fn duration_seconds(&self) -> f64 {
        self.end.duration_since(self.start).unwrap_or_default().as_secs_f64()
    }

    /// The attributes named in `metric` (a histogram's list), in the record's order.
    fn metric_attributes(
        &self,
        metric: &'static [&'static str],
    ) -> impl Iterator<Item = &'a (&'static str, AttrValue)> {
        self.attributes.iter().filter(move |(k, _)| metric.contains(k))
    }
}

/// `attributes` as a JSON object, in their order.
fn attributes_json(attributes: &Attributes) -> Value {
    Value::Object(
        attributes
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_json()))
            .collect::<Map<_, _>>(),
    )
}

/// Something that happened within an operation: `mcp.mrtr.round` (an `input_required` round
/// answered), `mcp.task.poll` (a `tasks/get` of a task the call follows), `mcp.reconnect.retry`
/// (the call sent again after a reconnect).
#[derive(Clone, Debug, PartialEq)]
pub struct SpanEvent {
    /// `mcp.mrtr.round`, `mcp.task.poll` or `mcp.reconnect.retry`.
    pub name: &'static str,
    /// When it happened.
    pub time: SystemTime,
    /// Its attributes (`mcp.mrtr.round` and `mcp.mrtr.input_requests`, `mcp.task.id`,
    /// `mcp.retry.attempt`).
    pub attributes: Attributes,
}

/// The span kind: the library only reports operations it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// `CLIENT`: an operation this client sent.
    Client,
}

/// The trace context an operation carried (its W3C `traceparent` and `tracestate`): the parent
/// of its span, and how a bridge finds the span it started for the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanParent {
    /// The W3C `traceparent` the operation's requests carried.
    pub traceparent: String,
    /// Its `tracestate`, when there was one.
    pub tracestate: Option<String>,
}

/// One ended CLIENT span, named `{mcp.method.name} {target}` (the tool or prompt name; the bare
/// method without one).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// `{mcp.method.name} {target}`, or `{mcp.method.name}`.
    pub name: String,
    /// Always [`SpanKind::Client`].
    pub kind: SpanKind,
    /// When the operation started (before its connection was made, when it made one).
    pub start: SystemTime,
    /// When its outcome was known.
    pub end: SystemTime,
    /// The convention's attributes that apply, in a fixed order.
    pub attributes: Attributes,
    /// Its MRTR rounds, task polls and reconnect retries, in order.
    pub events: Vec<SpanEvent>,
    /// The status description when the span's status is `ERROR` (set with `error.type`): the
    /// JSON-RPC error's message, or the library's.
    pub error_message: Option<String>,
    /// The trace context the operation carried, when it carried a `traceparent`.
    pub parent: Option<SpanParent>,
}

/// The attributes the convention lists for `mcp.client.operation.duration` (the span's minus
/// `jsonrpc.request.id`, `mcp.session.id`, the opt-in tool payloads and, opt-in there,
/// `mcp.resource.uri`).
const METRIC_ATTRIBUTES: &[&str] = &[
    "mcp.method.name",
    "error.type",
    "gen_ai.prompt.name",
    "gen_ai.tool.name",
    "rpc.response.status_code",
    "gen_ai.operation.name",
    "mcp.protocol.version",
    "network.protocol.name",
    "network.protocol.version",
    "network.transport",
    "server.address",
    "server.port",
    SERVER_NAME,
];

impl Span {
    fn recorded(&self) -> Recorded<'_> {
        Recorded {
            attributes: &self.attributes,
            start: self.start,
            end: self.end,
        }
    }

    /// The value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.recorded().attribute(key)
    }

    /// How long the operation took, in seconds (the histogram's value).
    pub fn duration_seconds(&self) -> f64 {
        self.recorded().duration_seconds()
    }

    /// The attributes the histogram is recorded with.
    pub fn metric_attributes(&self) -> impl Iterator<Item = &(&'static str, AttrValue)> {
        self.recorded().metric_attributes(METRIC_ATTRIBUTES)
    }

    /// `{"record": "span", "name", "kind": "client", "start_unix_nano", "end_unix_nano",
    /// "attributes": {…}, "events": [{"name", "time_unix_nano", "attributes"}], "status":
    /// {"code", "message"}, "parent": {"traceparent", "tracestate"}}` (`parent` only when the
    /// operation carried a trace context, `tracestate` only when it had one).
    pub fn to_json(&self) -> Value {
        let events: Vec<Value> = self
            .events
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name,
                    "time_unix_nano": unix_nanos(e.time),
                    "attributes": attributes_json(&e.attributes),
                })
            })
            .collect();
        let status = match &self.error_message {
            Some(m) => serde_json::json!({"code": "error", "message": m}),
            None => serde_json::json!({"code": "unset"}),
        };
        let mut record = serde_json::json!({
            "record": "span",
            "name": self.name,
            "kind": "client",
            "start_unix_nano": unix_nanos(self.start),
            "end_unix_nano": unix_nanos(self.end),
            "attributes": attributes_json(&self.attributes),
            "events": events,
            "status": status,
        });
        if let Some(parent) = &self.parent {
            let mut p = Map::new();
            p.insert("traceparent".into(), Value::String(parent.traceparent.clone()));
            if let Some(state) = &parent.tracestate {
                p.insert("tracestate".into(), Value::String(state.clone()));
            }
            record["parent"] = Value::Object(p);
        }
        record
    }
}

impl Span {
    /// [`Span::to_json`] as JSON text, written straight into bytes (no `Value` tree, one
    /// buffer): the same text as `to_json().to_string()`, what the C ABI hands its listener.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(640);
        out.extend_from_slice(br#"{"record":"span","name":"#);
        str_to(&mut out, &self.name);
        out.extend_from_slice(br#","kind":"client","start_unix_nano":"#);
        json_to(&mut out, &unix_nanos(self.start));
        out.extend_from_slice(br#","end_unix_nano":"#);
        json_to(&mut out, &unix_nanos(self.end));
        out.extend_from_slice(br#","attributes":"#);
        attributes_to(&mut out, &self.attributes);
        out.extend_from_slice(br#","events":["#);
        for (i, e) in self.events.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"name":"#);
            str_to(&mut out, e.name);
            out.extend_from_slice(br#","time_unix_nano":"#);
            json_to(&mut out, &unix_nanos(e.time));
            out.extend_from_slice(br#","attributes":"#);
            attributes_to(&mut out, &e.attributes);
            out.push(b'}');
        }
        out.extend_from_slice(br#"],"status":"#);
        match &self.error_message {
            Some(m) => {
                out.extend_from_slice(br#"{"code":"error","message":"#);
                str_to(&mut out, m);
                out.push(b'}');
            }
            None => out.extend_from_slice(br#"{"code":"unset"}"#),
        }
        if let Some(parent) = &self.parent {
            out.extend_from_slice(br#","parent":{"traceparent":"#);
            str_to(&mut out, &parent.traceparent);
            if let Some(state) = &parent.tracestate {
                out.extend_from_slice(br#","tracestate":"#);
                str_to(&mut out, state);
            }
            out.push(b'}');
        }
        out.push(b'}');
        out
    }
}

/// A JSON string onto `out`: its bytes as they are when none needs an escape (names, ids,
/// versions: the usual case), else escaped by serde_json.
/// Either way every control character is escaped: the text never holds a NUL byte.
fn str_to(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if needs_escape(bytes) {
        return json_to(out, s);
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.push(b'"');
}

/// Whether `bytes` hold a control character, `"` or `\`, eight bytes at a time: a byte below
/// 0x20 makes `(v - 0x20…) & !v & 0x80…` non-zero, a byte equal to `c` makes a zero byte in
/// `v ^ c…` (each test exact for the word as a whole, whichever byte it points at).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |v: u64, n: u8| v.wrapping_sub(ONES * n as u64) & !v & HIGH != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let v = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        if below(v, 0x20) || below(v ^ (ONES * b'"' as u64), 1) || below(v ^ (ONES * b'\\' as u64), 1) {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// One JSON scalar (a string, escaped as serde_json escapes it, or an integer) onto `out`.
fn json_to<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing a string or an integer into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// Attributes as a JSON object, as a `Map` built from them prints: a key set twice stays where
/// it first came, with its last value.
fn attributes_to(out: &mut Vec<u8>, attributes: &Attributes) {
    out.push(b'{');
    let mut first = true;
    for (i, (key, _)) in attributes.iter().enumerate() {
        if attributes[..i].iter().any(|(k, _)| k == key) {
            continue;
        }
        let later = attributes[i + 1..].iter().rev().find(|(k, _)| k == key);
        let value = later.map_or(&attributes[i].1, |(_, v)| v);
        if !first {
            out.push(b',');
        }
        first = false;
        str_to(out, key);
        out.push(b':');
        match value {
            AttrValue::Str(s) => str_to(out, s),
            AttrValue::Int(n) => json_to(out, n),
        }
    }
    out.push(b'}');
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
        .unwrap_or(0)
}

/// One ended MCP session (a connection's, or a legacy HTTP session the server expired and the
/// client renewed): the value of the `mcp.client.session.duration` histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRecord {
    /// When the session started (its connect began).
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// `mcp.protocol.version`, `mcp.session.id` (when the server gave one), `network.transport`,
    /// `network.protocol.name` and `.version`, `server.address`, `server.port`, and `error.type`
    /// when it did not end by the client's close.
    pub attributes: Attributes,
}

/// The attributes the convention lists for `mcp.client.session.duration`.
const SESSION_METRIC_ATTRIBUTES: &[&str] = &[
    "error.type",
    "mcp.protocol.version",
    "network.protocol.name",
    "network.protocol.version",
    "network.transport",
    "server.address",
    "server.port",
    SERVER_NAME,
];

impl SessionRecord {
    fn recorded(&self) -> Recorded<'_> {
        Recorded {
            attributes: &self.attributes,
            start: self.start,
            end: self.end,
        }
    }

    /// The value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.recorded().attribute(key)
    }

    /// How long the session lasted, in seconds (the histogram's value).
    pub fn duration_seconds(&self) -> f64 {
        self.recorded().duration_seconds()
    }

    /// The attributes the histogram is recorded with (all but `mcp.session.id`).
    pub fn metric_attributes(&self) -> impl Iterator<Item = &(&'static str, AttrValue)> {
        self.recorded().metric_attributes(SESSION_METRIC_ATTRIBUTES)
    }

    /// `{"record": "session", "start_unix_nano", "end_unix_nano", "attributes": {…}}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "record": "session",
            "start_unix_nano": unix_nanos(self.start),
            "end_unix_nano": unix_nanos(self.end),
            "attributes": attributes_json(&self.attributes),
        })
    }
}

/// Receives each operation's span when it ends, synchronously: on the thread that polls the
/// call's future (a tokio worker, or the caller's thread under `block_on`), before the call's
/// result is returned. It must return quickly (it delays the call, and the runtime thread it
/// runs on) and must not wait on the client; a panic in it is caught and ignored.
pub trait Observer: Send + Sync {
    /// One operation ended; record [`Span::duration_seconds`] in the
    /// [`OPERATION_DURATION`] histogram with [`Span::metric_attributes`].
    fn span_ended(&self, span: &Span);

    /// A session ended: record [`SessionRecord::duration_seconds`] in the [`SESSION_DURATION`]
    /// histogram with [`SessionRecord::metric_attributes`]. Called on the thread that saw it
    /// end (the one closing the client, or a runtime thread when the server went away); the
    /// default ignores it.
    fn session_ended(&self, _session: &SessionRecord) {}

    /// The name the host gives the server whose records this observer receives: when `Some`,
    /// every span and session record carries it as [`SERVER_NAME`] (`mcp.server.name`). A
    /// hub's observer answers with each member's name; the default is `None`.
    fn server_name(&self) -> Option<&str> {
        None
    }
}

/// Hands `session` to `observer`, a panic in it caught.
pub(crate) fn deliver_session(observer: &dyn Observer, session: &SessionRecord) {
    let _ = catch_unwind(AssertUnwindSafe(|| observer.session_ended(session)));
}

/// The record of a session from `start` to `end` on a connection with `on`'s facts over
/// `transport`, ended by an error of type `error` (`None`: the client closed it).
pub(crate) fn session_record(
    (start, end): (SystemTime, SystemTime),
    on: &Facts,
    transport: &TransportConfig,
    error: Option<&'static str>,
) -> SessionRecord {
    let mut attributes: Attributes = Vec::new();
    if let Some(version) = &on.version {
        attributes.push(("mcp.protocol.version", AttrValue::Str(version.clone())));
    }
    if let Some(session) = &on.session {
        attributes.push(("mcp.session.id", AttrValue::Str(session.clone())));
    }
    transport_attributes(transport, on.network_version, &mut attributes);
    if let Some(name) = &on.server_name {
        attributes.push((SERVER_NAME, AttrValue::Str(name.clone())));
    }
    if let Some(kind) = error {
        attributes.push(("error.type", AttrValue::Str(kind.into())));
    }
    SessionRecord { start, end, attributes }
}

/// `error.type` of a session that ended with `error` (`None` for the client's own close).
pub(crate) fn session_error_type(error: &Error) -> Option<&'static str> {
    match error.kind() {
        ErrorKind::Closed => None,
        kind => Some(error_type(kind)),
    }
}

/// Hands `span` to `observer`, a panic in it caught (it must not unwind through the request
/// path, nor across the C boundary).
pub(crate) fn deliver(observer: &dyn Observer, span: &Span) {
    let _ = catch_unwind(AssertUnwindSafe(|| observer.span_ended(span)));
}

/// Runs a job elsewhere (the C ABI's dispatcher): where a sink sends spans that end after its
/// call was completed.
pub(crate) type Post = Arc<dyn Fn(Box<dyn FnOnce() + Send>) + Send + Sync>;

/// A call's spans, held until the call completes and handed to their observer then, on the
/// completing thread ([`SpanSink::deliver`]). A span that ends after that (the operation of a
/// started call that was cancelled or closed goes on to its end) goes to `late`.
#[doc(hidden)]
pub struct SpanSink {
    state: Mutex<SinkState>,
    late: Post,
}

#[derive(Default)]
struct SinkState {
    delivered: bool,
    spans: Vec<(Arc<dyn Observer>, Span)>,
}

impl SpanSink {
    pub(crate) fn new(late: Post) -> Arc<SpanSink> {
        Arc::new(SpanSink {
            state: Mutex::default(),
            late,
        })
    }

    pub(crate) fn push(&self, observer: Arc<dyn Observer>, span: Span) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.delivered {
            state.spans.push((observer, span));
            return;
        }
        drop(state);
        (self.late)(Box::new(move || deliver(&*observer, &span)));
    }

    /// Hands the spans held so far to their observers, on this thread; later ones go to `late`.
    pub(crate) fn deliver(&self) {
        let spans = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.delivered = true;
            std::mem::take(&mut state.spans)
        };
        for (observer, span) in spans {
            deliver(&*observer, &span);
        }
    }
}

impl<F: Fn(&Span) + Send + Sync> Observer for F {
    fn span_ended(&self, span: &Span) {
        self(span)
    }
}

/// What an observed operation collects while it runs, shared with its [`Wait`] so the
/// session, the MRTR driver and the task follower can add to it.
#[derive(Default)]
pub(crate) struct Trail {
    state: Mutex<TrailState>,
}

#[derive(Default)]
struct TrailState {
    request_id: Option<String>,
    events: Vec<SpanEvent>,
}

impl Trail {
    /// The id of a request the operation sent; the span keeps the first (the one that started
    /// the operation).
    pub(crate) fn sent(&self, id: &dyn std::fmt::Display) {
        let mut state = self.state.lock().unwrap();
        if state.request_id.is_none() {
            state.request_id = Some(id.to_string());
        }
    }

    pub(crate) fn event(&self, name: &'static str, attributes: Attributes) {
        let event = SpanEvent {
            name,
            time: SystemTime::now(),
            attributes,
        };
        self.state.lock().unwrap().events.push(event);
    }
}

impl Wait {
    /// Adds an event to the operation's span, when it is observed (nothing is made otherwise).
    pub(crate) fn note(&self, name: &'static str, attributes: impl FnOnce() -> Attributes) {
        if let Some(trail) = &self.trail {
            trail.event(name, attributes());
        }
    }
}

/// An observed operation from its start to its span.
pub(crate) struct Operation {
    start: SystemTime,
    method: String,
    target: Option<(&'static str, String)>,
    trail: Arc<Trail>,
    parent: Option<SpanParent>,
    /// `gen_ai.tool.call.arguments`, with `span_tool_payloads`.
    arguments: Option<String>,
}

impl Operation {
    /// Starts observing `method` with `params` (and its `name`, when kept apart from them), sent
    /// with trace context `trace` (the call's, else the `traceparent` of `params`' `_meta`);
    /// `wait` then collects the operation's trail.
    pub(crate) fn start(
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
        trace: Option<&TraceContext>,
        meta: Option<&Map<String, Value>>,
        wait: &mut Wait,
    ) -> Operation {
        let key = match method {
            methods::TOOLS_CALL => Some(("gen_ai.tool.name", "name")),
            methods::PROMPTS_GET => Some(("gen_ai.prompt.name", "name")),
            methods::RESOURCES_READ | "resources/subscribe" | "resources/unsubscribe" => {
                Some(("mcp.resource.uri", "uri"))
            }
            _ => None,
        };
        let apart = jsonrpc::Apart { name, arguments: None };
        let target = key.and_then(|(attr, member)| Some((attr, apart.text(params, member)?.to_string())));
        let trail = Arc::new(Trail::default());
        wait.trail = Some(trail.clone());
        let parent = parent_of(trace, [meta, params.get("_meta").and_then(Value::as_object)]);
        Operation {
            start: SystemTime::now(),
            method: method.to_string(),
            target,
            trail,
            parent,
            arguments: None,
        }
    }

    /// Records a `tools/call`'s arguments (JSON text) as `gen_ai.tool.call.arguments`.
    pub(crate) fn arguments(&mut self, json: String) {
        self.arguments = Some(json);
    }

    /// The span of the operation that ended with `outcome` (`Ok(true)`: a tool result with
    /// `isError: true`) on a connection speaking `version` in session `session` over `transport`.
    pub(crate) fn finish(
        self,
        outcome: std::result::Result<bool, &Error>,
        on: &Facts,
        transport: &TransportConfig,
    ) -> Span {
        let end = SystemTime::now();
        let state = std::mem::take(&mut *self.trail.state.lock().unwrap());
        let name = match &self.target {
            // The convention keeps resource URIs out of span names (high cardinality).
            Some((attr, target)) if *attr != "mcp.resource.uri" => format!("{} {target}", self.method),
            _ => self.method.clone(),
        };
        let tool_call = self.method == methods::TOOLS_CALL;
        // Room for every attribute a span can have: no regrowth on the way.
        let mut attributes: Attributes = Vec::with_capacity(16);
        attributes.push(("mcp.method.name", AttrValue::Str(self.method)));
        if let Some((attr, target)) = self.target {
            attributes.push((attr, AttrValue::Str(target)));
        }
        if tool_call {
            attributes.push(("gen_ai.operation.name", AttrValue::Str("execute_tool".into())));
        }
        if let Some(id) = state.request_id {
            attributes.push(("jsonrpc.request.id", AttrValue::Str(id)));
        }
        let mut error_message = None;
        match outcome {
            Ok(false) => {}
            Ok(true) => {
                attributes.push(("error.type", AttrValue::Str(TOOL_ERROR.into())));
                error_message = Some(TOOL_ERROR.to_string());
            }
            Err(e) => {
                let kind = match e.rpc_error() {
                    Some(rpc) => {
                        let code = rpc.code.to_string();
                        attributes.push(("rpc.response.status_code", AttrValue::Str(code.clone())));
                        code
                    }
                    None => error_type(e.kind()).to_string(),
                };
                attributes.push(("error.type", AttrValue::Str(kind)));
                error_message = Some(e.rpc_error().map_or_else(|| e.to_string(), |r| r.message.clone()));
            }
        }
        if let Some(version) = &on.version {
            attributes.push(("mcp.protocol.version", AttrValue::Str(version.clone())));
        }
        if let Some(session) = &on.session {
            attributes.push(("mcp.session.id", AttrValue::Str(session.clone())));
        }
        transport_attributes(transport, on.network_version, &mut attributes);
        if let Some(name) = &on.server_name {
            attributes.push((SERVER_NAME, AttrValue::Str(name.clone())));
        }
        if let Some(arguments) = self.arguments {
            attributes.push(("gen_ai.tool.call.arguments", AttrValue::Str(arguments)));
        }
        // The convention gives the result only for a call that succeeded.
        if let (Some(result), Ok(false)) = (&on.result, outcome) {
            attributes.push(("gen_ai.tool.call.result", AttrValue::Str(result.clone())));
        }
        Span {
            name,
            kind: SpanKind::Client,
            start: self.start,
            end,
            attributes,
            events: state.events,
            error_message,
            parent: self.parent,
        }
    }
}

/// The operation a connect is made for: the handshake's spans take its trace context as their
/// parent and go to its span sink (so they reach the host before its own span). Empty for an
/// explicit connect without a trace context of its own.
#[derive(Clone, Default)]
pub(crate) struct ConnectFor {
    pub parent: Option<SpanParent>,
    pub spans: Option<Arc<SpanSink>>,
}

impl ConnectFor {
    /// For an operation sent with `opts` (their trace context, else the `traceparent` of their
    /// `_meta`).
    pub(crate) fn of(opts: &RequestOptions) -> ConnectFor {
        ConnectFor {
            parent: parent_of(opts.trace.as_ref(), [opts.meta.as_ref(), None]),
            spans: opts.spans.clone(),
        }
    }
}

/// The parent an operation's span names: its trace context's, else the first `traceparent`
/// (with its `tracestate`) in `metas`.
fn parent_of(trace: Option<&TraceContext>, metas: [Option<&Map<String, Value>>; 2]) -> Option<SpanParent> {
    match trace {
        Some(t) => t.traceparent().map(|p| SpanParent {
            traceparent: p.to_string(),
            tracestate: t.tracestate().map(str::to_string),
        }),
        None => metas.into_iter().flatten().find_map(|m| {
            let text = |k: &str| m.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
            Some(SpanParent {
                traceparent: text("traceparent")?.to_string(),
                tracestate: text("tracestate").map(str::to_string),
            })
        }),
    }
}

/// A handshake operation [`Client::handshake_begin`] started.
pub(crate) struct Handshake {
    observer: Arc<dyn Observer>,
    operation: Operation,
}

/// What an operation's span takes from its connection when it ends.
#[derive(Default)]
pub(crate) struct Facts {
    /// `mcp.protocol.version`.
    pub version: Option<String>,
    /// `mcp.session.id`.
    pub session: Option<String>,
    /// `network.protocol.version` (HTTP's `1.1` or `2`).
    pub network_version: Option<&'static str>,
    /// A `tools/call` result's JSON text, with `span_tool_payloads`.
    pub result: Option<String>,
    /// `mcp.server.name`: the observer's [`Observer::server_name`].
    pub server_name: Option<String>,
}

/// `network.transport`, `network.protocol.name` and `.version`, `server.address` and
/// `server.port`.
fn transport_attributes(transport: &TransportConfig, network_version: Option<&str>, attributes: &mut Attributes) {
    match transport {
        TransportConfig::Stdio(_) => attributes.push(("network.transport", AttrValue::Str("pipe".into()))),
        TransportConfig::Http(cfg) => {
            attributes.push(("network.transport", AttrValue::Str("tcp".into())));
            attributes.push(("network.protocol.name", AttrValue::Str("http".into())));
            if let Some(v) = network_version {
                attributes.push(("network.protocol.version", AttrValue::Str(v.into())));
            }
            if let Ok(url) = url::Url::parse(&cfg.url) {
                if let Some(host) = url.host_str() {
                    attributes.push(("server.address", AttrValue::Str(host.to_string())));
                }
                if let Some(port) = url.port_or_known_default() {
                    attributes.push(("server.port", AttrValue::Int(port.into())));
                }
            }
        }
    }
}

/// `error.type` for a failure without a JSON-RPC error code: a low-cardinality name of its kind.
fn error_type(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Timeout => "timeout",
        ErrorKind::Cancelled => "cancelled",
        ErrorKind::Closed => "closed",
        ErrorKind::Io => "io",
        ErrorKind::ServerExited => "server_exited",
        ErrorKind::HttpStatus => "http_status",
        ErrorKind::AuthRequired => "auth_required",
        ErrorKind::ProtocolViolation => "protocol_violation",
        ErrorKind::VersionMismatch => "version_mismatch",
        ErrorKind::InputRequired => "input_required",
        ErrorKind::InputRoundsExceeded => "input_rounds_exceeded",
        ErrorKind::HandlerFailed => "handler_failed",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::MessageTooLarge => "message_too_large",
        _ => "_OTHER",
    }
}

impl Client {
    /// Sets (or, with `None`, clears) the observer that receives a span for each MCP operation
    /// this client sends (requests answered from the response cache are not operations).
    pub fn set_observer(&self, observer: Option<Arc<dyn Observer>>) {
        let old = std::mem::replace(&mut *self.inner.observer.write().unwrap(), observer);
        drop(old);
    }

    /// Whether an observer is set (the C ABI then gives each call a span sink).
    pub(crate) fn observed(&self) -> bool {
        self.inner.observer.read().unwrap().is_some()
    }

    /// Whether `method` with `params` would be answered from the response cache now (the C
    /// ABI's started calls ask their trace source on the caller's thread only when not).
    pub(crate) fn answered_from_cache(&self, method: &str, params: &Map<String, Value>, opts: &RequestOptions) -> bool {
        let manual = opts.input_responses.is_some() || opts.request_state.is_some();
        if manual || opts.cache != CacheMode::Use {
            return false;
        }
        let cache = &self.inner.cache;
        cache.lookup(method, params).is_some_and(|at| cache.get(&at).is_some())
    }

    /// Makes `conn`'s session, started at `started`, report its end (and each renewal) as a
    /// [`SessionRecord`] to the observer set then, if any.
    pub(super) fn report_session_end(&self, conn: &Arc<super::Connection>, started: SystemTime) {
        let (inner, weak_conn) = (Arc::downgrade(&self.inner), Arc::downgrade(conn));
        let start = Mutex::new(started);
        conn.session.on_end(Box::new(move |end, session_id| {
            let (Some(inner), Some(conn)) = (inner.upgrade(), weak_conn.upgrade()) else {
                return;
            };
            let now = SystemTime::now();
            let began = std::mem::replace(&mut *start.lock().unwrap_or_else(|e| e.into_inner()), now);
            let Some(observer) = inner.observer.read().unwrap().clone() else {
                return;
            };
            let facts = Facts {
                version: Some(conn.version()),
                session: session_id,
                network_version: conn.session.protocol_version(),
                result: None,
                server_name: observer.server_name().map(str::to_string),
            };
            let error = match end {
                super::session::SessionEnd::Closed(e) => session_error_type(e),
                super::session::SessionEnd::Renewed => Some("session_expired"),
            };
            let record = session_record((began, now), &facts, &inner.config.transport, error);
            deliver_session(&*observer, &record);
        }));
    }

    /// The observer, when one is set.
    /// Starts a handshake operation (`initialize`, `server/discover`) sent with `wait`: the wait
    /// to send it with and, when observed, its span, under the trace context of the operation
    /// the connect is made for ([`ConnectFor`]).
    pub(super) fn handshake_begin(&self, method: &str, wait: &Wait) -> (Wait, Option<Handshake>) {
        let mut wait = wait.clone();
        let Some(observer) = self.observer() else {
            return (wait, None);
        };
        let mut operation = Operation::start(method, &Map::new(), None, None, None, &mut wait);
        operation.parent = self
            .inner
            .connect_for
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|f| f.parent.clone());
        (wait, Some(Handshake { observer, operation }))
    }

    /// Ends a handshake operation with what it connected (or its error): the span goes to the
    /// span sink of the operation the connect is made for, else to the observer, now.
    pub(super) fn handshake_end(
        &self,
        op: Handshake,
        session: &super::session::Session,
        outcome: std::result::Result<&super::Connection, &Error>,
    ) {
        let facts = Facts {
            version: outcome.ok().map(super::Connection::version),
            session: session.session_id(),
            network_version: session.protocol_version(),
            result: None,
            server_name: op.observer.server_name().map(str::to_string),
        };
        let span = op
            .operation
            .finish(outcome.map(|_| false), &facts, &self.inner.config.transport);
        let sink = self
            .inner
            .connect_for
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|f| f.spans.clone());
        match sink {
            Some(sink) => sink.push(op.observer, span),
            None => deliver(&*op.observer, &span),
        }
    }

    pub(super) fn observer(&self) -> Option<Arc<dyn Observer>> {
        self.inner.observer.read().unwrap().clone()
    }
}

/// Whether a `tools/call` result says `isError: true` (read from its JSON text).
pub(crate) fn is_tool_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::HttpConfig;

    fn op(method: &str, params: Value) -> (Operation, Wait) {
        let mut wait = Wait::default();
        let op = Operation::start(method, params.as_object().unwrap(), None, None, None, &mut wait);
        (op, wait)
    }

    #[test]
    fn a_tool_call_is_named_by_its_tool_and_carries_the_conventions_attributes() {
        let (op, wait) = op("tools/call", serde_json::json!({"name": "get-weather"}));
        wait.trail.as_ref().unwrap().sent(&7);
        wait.trail.as_ref().unwrap().sent(&8);
        wait.note("mcp.mrtr.round", || vec![("mcp.mrtr.round", AttrValue::Int(1))]);
        let http = TransportConfig::Http(HttpConfig::new("http://127.0.0.1:8123/mcp"));
        let facts = Facts {
            version: Some("2026-07-28".into()),
            session: Some("s1".into()),
            network_version: Some("2"),
            result: None,
            server_name: Some("weather".into()),
        };
        let span = op.finish(Ok(false), &facts, &http);
        assert_eq!(
            span.attribute("network.protocol.version"),
            Some(&AttrValue::Str("2".into()))
        );
        assert_eq!(span.name, "tools/call get-weather");
        let get = |k| span.attribute(k).cloned();
        assert_eq!(get("gen_ai.tool.name"), Some(AttrValue::Str("get-weather".into())));
        assert_eq!(
            get("gen_ai.operation.name"),
            Some(AttrValue::Str("execute_tool".into()))
        );
        assert_eq!(get("jsonrpc.request.id"), Some(AttrValue::Str("7".into())));
        assert_eq!(get("network.transport"), Some(AttrValue::Str("tcp".into())));
        assert_eq!(get("server.address"), Some(AttrValue::Str("127.0.0.1".into())));
        assert_eq!(get("server.port"), Some(AttrValue::Int(8123)));
        assert_eq!(get("error.type"), None);
        assert_eq!(get("mcp.session.id"), Some(AttrValue::Str("s1".into())));
        assert_eq!(get(SERVER_NAME), Some(AttrValue::Str("weather".into())));
        assert!(span.metric_attributes().any(|(k, _)| *k == SERVER_NAME));
        assert_eq!(span.events.len(), 1);
        assert!(span
            .metric_attributes()
            .all(|(k, _)| *k != "jsonrpc.request.id" && *k != "mcp.session.id"));
        assert_eq!(span.to_json()["attributes"]["server.port"], 8123);
    }

    #[test]
    fn resource_uris_stay_out_of_span_names_and_errors_set_the_type() {
        let (op, _wait) = op("resources/read", serde_json::json!({"uri": "file:///a"}));
        let err = Error::new(ErrorKind::Timeout, "slow");
        let span = op.finish(
            Err(&err),
            &Facts::default(),
            &TransportConfig::Http(HttpConfig::new("https://x.test/")),
        );
        assert_eq!(span.name, "resources/read");
        assert_eq!(
            span.attribute("mcp.resource.uri"),
            Some(&AttrValue::Str("file:///a".into()))
        );
        assert_eq!(span.attribute("error.type"), Some(&AttrValue::Str("timeout".into())));
        assert_eq!(span.attribute("server.port"), Some(&AttrValue::Int(443)));
        assert!(span.error_message.is_some());
    }

    #[test]
    fn the_buckets_are_the_conventions() {
        assert_eq!(OPERATION_DURATION_BUCKETS.first(), Some(&0.01));
        assert_eq!(OPERATION_DURATION_BUCKETS.last(), Some(&300.0));
        assert!(OPERATION_DURATION_BUCKETS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_word_test_finds_what_needs_an_escape_anywhere() {
        let slow = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        let mut base: Vec<u8> = b"mcp.method.name tools/call".to_vec();
        assert!(!needs_escape(&base));
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 26] {
            for pos in 0..len {
                for byte in 0..=255u8 {
                    let mut b = base[..len].to_vec();
                    b[pos] = byte;
                    // Neighbours that sit next to the limits (0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x80, 0xff).
                    if pos + 1 < len {
                        b[pos + 1] = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x80, 0xff][byte as usize % 7];
                    }
                    assert_eq!(needs_escape(&b), slow(&b), "{b:?}");
                }
            }
        }
        base.push(b'"');
        assert!(needs_escape(&base));
    }

    #[test]
    fn the_records_text_is_the_json_values_text() {
        let at = |ns: u64| SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
        let event = |name, attributes| SpanEvent {
            name,
            time: at(1_700_000_000_123_456_789),
            attributes,
        };
        let mut span = Span {
            name: "tools/call q\"u\\ote\u{1}\u{e9}\u{1F600}".into(),
            kind: SpanKind::Client,
            start: at(1_700_000_000_000_000_001),
            end: at(1_700_000_000_999_999_999),
            attributes: vec![
                ("mcp.method.name", AttrValue::Str("tools/call".into())),
                ("server.port", AttrValue::Int(-8123)),
                ("error.type", AttrValue::Str("a\nb\t\u{7f}\u{0}".into())),
                (
                    "mcp.method.name",
                    AttrValue::Str("twice: last value, first place".into()),
                ),
                (
                    "server.address",
                    AttrValue::Str("caf\u{e9}.test \u{7f}~ \u{10FFFF}".into()),
                ),
            ],
            events: vec![
                event("mcp.mrtr.round", vec![("mcp.mrtr.round", AttrValue::Int(i64::MAX))]),
                event("mcp.task.poll", vec![]),
            ],
            error_message: Some("</script> \"quoted\"".into()),
            parent: Some(SpanParent {
                traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
                tracestate: Some("congo=t61rcWkgMzE".into()),
            }),
        };
        let same = |span: &Span| {
            assert_eq!(
                String::from_utf8(span.to_json_bytes()).unwrap(),
                span.to_json().to_string()
            )
        };
        same(&span);
        span.parent.as_mut().unwrap().tracestate = None;
        span.start = SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(1);
        same(&span);
        (span.parent, span.error_message, span.events, span.attributes) = (None, None, vec![], vec![]);
        same(&span);
    }
}
