//! Spans by the OpenTelemetry semantic conventions for MCP: each operation the client sends
//! ends as one CLIENT span handed to the observer, named `{mcp.method.name} {target}`, with the
//! convention's attributes and an event per MRTR round and task poll, over stdio and HTTP
//! against the fixture server.

mod common;

use common::*;
use mcp_client::observe::{AttrValue, Observer, SessionRecord, Span, SpanKind, SpanParent};
use mcp_client::{
    Client, ClientConfig, ConnectMode, Error, ErrorKind, HttpConfig, ListKind, RequestOptions, TraceContext,
    TransportConfig,
};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An observer keeping every span it is given.
#[derive(Default)]
struct Recorder(Mutex<Vec<Span>>);

impl Observer for Recorder {
    fn span_ended(&self, span: &Span) {
        self.0.lock().unwrap().push(span.clone());
    }
}

impl Recorder {
    fn watch(client: &Client) -> Arc<Recorder> {
        let recorder = Arc::new(Recorder::default());
        client.set_observer(Some(recorder.clone()));
        recorder
    }

    /// The spans ended since the last call.
    fn take(&self) -> Vec<Span> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// The spans ended since the last call: the handshake `handshake` of a lazy connect, then
    /// the call's, which is returned.
    fn after(&self, handshake: &str) -> Span {
        let mut spans = self.take();
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 2, "{spans:#?}");
        assert_eq!(names[0], handshake);
        spans.remove(1)
    }

    /// The one span ended since the last call.
    fn one(&self) -> Span {
        let mut spans = self.take();
        assert_eq!(spans.len(), 1, "{spans:#?}");
        spans.remove(0)
    }
}

fn str_attr(span: &Span, key: &str) -> Option<String> {
    span.attribute(key).and_then(AttrValue::as_str).map(str::to_string)
}

/// What every `tools/call` span over stdio carries, whatever its outcome.
fn assert_tool_span(span: &Span, tool: &str) {
    assert_eq!(span.name, format!("tools/call {tool}"));
    assert_eq!(span.kind, SpanKind::Client);
    assert!(span.end >= span.start);
    assert_eq!(str_attr(span, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(str_attr(span, "gen_ai.tool.name").as_deref(), Some(tool));
    assert_eq!(str_attr(span, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    let id = str_attr(span, "jsonrpc.request.id").expect("a request id");
    assert!(id.parse::<u64>().is_ok(), "{id}");
    assert_eq!(str_attr(span, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_spans_for_success_tool_error_protocol_error_timeout_and_mrtr() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let spans = Recorder::watch(&client);

    client
        .call_tool("echo", Some(json!({"text": "a"})), &none())
        .await
        .unwrap();
    let ok = spans.one();
    assert_tool_span(&ok, "echo");
    assert_eq!(str_attr(&ok, "network.transport").as_deref(), Some("pipe"));
    assert!(ok.attribute("server.address").is_none());
    assert!(ok.attribute("error.type").is_none() && ok.error_message.is_none());
    assert!(ok.events.is_empty());
    // The request id is the one the server saw.
    let sent = &fx.wire.tool_calls("echo")[0];
    assert_eq!(str_attr(&ok, "jsonrpc.request.id"), Some(sent["id"].to_string()));

    client.call_tool("fail", None, &none()).await.unwrap();
    let tool_error = spans.one();
    assert_tool_span(&tool_error, "fail");
    assert_eq!(str_attr(&tool_error, "error.type").as_deref(), Some("tool_error"));
    assert!(tool_error.attribute("rpc.response.status_code").is_none());

    let e = client.call_tool("rpc_error", None, &none()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Rpc);
    let rpc = spans.one();
    assert_tool_span(&rpc, "rpc_error");
    assert_eq!(str_attr(&rpc, "error.type").as_deref(), Some("-32050"));
    assert_eq!(str_attr(&rpc, "rpc.response.status_code").as_deref(), Some("-32050"));
    assert_eq!(rpc.error_message.as_deref(), Some("fixture error"));

    let quick = RequestOptions {
        timeout: Some(Duration::from_millis(200)),
        ..RequestOptions::default()
    };
    let e = client.call_tool("hang", None, &quick).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let timeout = spans.one();
    assert_tool_span(&timeout, "hang");
    assert_eq!(str_attr(&timeout, "error.type").as_deref(), Some("timeout"));
    assert!(timeout.duration_seconds() >= 0.2, "{}", timeout.duration_seconds());

    client.on_elicitation(|_| async move { Ok(json!({"action": "accept", "content": {"value": "v"}})) });
    client.call_tool("three_rounds", None, &none()).await.unwrap();
    let mrtr = spans.one();
    assert_tool_span(&mrtr, "three_rounds");
    let rounds: Vec<_> = mrtr.events.iter().filter(|e| e.name == "mcp.mrtr.round").collect();
    assert_eq!(rounds.len(), 3, "{mrtr:#?}");
    for (n, round) in rounds.iter().enumerate() {
        assert_eq!(round.attributes[0], ("mcp.mrtr.round", AttrValue::Int(n as i64 + 1)));
        assert_eq!(round.attributes[1], ("mcp.mrtr.input_requests", AttrValue::Int(1)));
        assert!(round.time >= mrtr.start && round.time <= mrtr.end);
    }
    // The span's id is the first leg's.
    let first_leg = &fx.wire.tool_calls("three_rounds")[0];
    assert_eq!(str_attr(&mrtr, "jsonrpc.request.id"), Some(first_leg["id"].to_string()));

    // Without an observer nothing is reported.
    client.set_observer(None);
    client
        .call_tool("echo", Some(json!({"text": "b"})), &none())
        .await
        .unwrap();
    assert!(spans.take().is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_polls_are_events_and_other_methods_are_named_by_their_method() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    client.connect().await.unwrap();
    let spans = Recorder::watch(&client);
    client
        .call_tool("task_echo", Some(json!({"text": "t"})), &none())
        .await
        .unwrap();
    let task = spans.one();
    assert_tool_span(&task, "task_echo");
    let polls = task.events.iter().filter(|e| e.name == "mcp.task.poll").count();
    assert_eq!(polls, fx.wire.requests("tasks/get").len());
    assert!(polls >= 1);

    client.request("tools/list", None, &none()).await.unwrap();
    let list = spans.one();
    assert_eq!(list.name, "tools/list");
    assert!(list.attribute("gen_ai.operation.name").is_none());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_spans_carry_the_server_address_and_port_in_both_eras() {
    for mode in [ConnectMode::Modern, ConnectMode::Legacy] {
        let server = HttpFixture::start(&[]);
        let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
        config.mode = mode.clone();
        config.request_timeout = REQUEST_TIMEOUT;
        let client = Client::new(config);
        let spans = Recorder::watch(&client);
        client
            .call_tool("echo", Some(json!({"text": "h"})), &none())
            .await
            .unwrap();
        let mut taken = spans.take();
        assert_eq!(taken.len(), 2, "{taken:#?}");
        let span = taken.remove(1);
        let handshake = taken.remove(0);
        assert_eq!(
            handshake.name,
            if mode == ConnectMode::Legacy {
                "initialize"
            } else {
                "server/discover"
            }
        );
        for key in [
            "network.transport",
            "server.address",
            "mcp.protocol.version",
            "mcp.session.id",
        ] {
            assert_eq!(handshake.attribute(key), span.attribute(key), "{key}");
        }
        assert_eq!(span.name, "tools/call echo", "{mode:?}");
        assert_eq!(str_attr(&span, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(str_attr(&span, "server.address").as_deref(), Some("127.0.0.1"));
        let port = url_port(&server.1);
        assert_eq!(span.attribute("server.port"), Some(&AttrValue::Int(port)));
        assert!(str_attr(&span, "mcp.protocol.version").is_some());
        // Only a legacy Streamable HTTP session has an id (the fixture's is 32 hex digits).
        match mode {
            ConnectMode::Legacy => assert_eq!(str_attr(&span, "mcp.session.id").map(|s| s.len()), Some(32)),
            _ => assert!(span.attribute("mcp.session.id").is_none()),
        }
        let metric: Vec<&str> = span.metric_attributes().map(|(k, _)| *k).collect();
        assert!(metric.contains(&"server.port") && !metric.contains(&"jsonrpc.request.id"));
        client.close().await;
    }
}

/// The port of a `http://127.0.0.1:PORT/…` URL.
fn url_port(url: &str) -> i64 {
    let rest = url.strip_prefix("http://127.0.0.1:").expect(url);
    rest[..rest.find('/').unwrap_or(rest.len())].parse().unwrap()
}

/// A legacy HTTP session the server drops is renewed by the transport (a new `initialize`, the
/// request sent again): still one span per call, without an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_renewed_by_the_transport_stays_inside_one_clean_span() {
    let record = TempPath::new("observe-renewed.jsonl");
    let server = HttpFixture::start(&["--record", &record.as_string(), "--expire-session-after", "2"]);
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
    config.mode = ConnectMode::Legacy;
    config.request_timeout = REQUEST_TIMEOUT;
    let client = Client::new(config);
    let spans = Recorder::watch(&client);
    for n in 0..3 {
        client.request("tools/list", None, &none()).await.unwrap();
        // The transport's renewal is inside the call: only the first call connects.
        let span = if n == 0 { spans.after("initialize") } else { spans.one() };
        assert_eq!(span.name, "tools/list");
        assert!(span.attribute("error.type").is_none(), "{span:#?}");
    }
    let initializes = record
        .lines()
        .iter()
        .filter(|l| l.contains("\"method\":\"initialize\""))
        .count();
    assert_eq!(initializes, 2, "the session was renewed once");
    client.close().await;
}

/// The `traceparent` a test source gives the `n`th time it is asked (its parent id is `n`).
fn nth_parent(n: usize) -> String {
    format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{n:016x}-01")
}

/// Call options whose trace source counts how often it is asked and gives `nth_parent`.
fn counted_source() -> (RequestOptions, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let opts = RequestOptions {
        trace_source: Some(Arc::new(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            TraceContext::new(Some(&nth_parent(n)), Some("vendor=one"), None)
                .map_err(|e| Error::new(ErrorKind::InvalidArgument, e))
        })),
        ..RequestOptions::default()
    };
    (opts, asked)
}

/// The trace source is asked once per operation — not per MRTR leg, not for an answer from the
/// response cache — and what it gave is the span's `parent` and on every leg on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_source_is_asked_once_per_operation_and_is_the_spans_parent() {
    let fx = Fixture::modern(&["--cache-ttl-ms", "60000"]);
    let client = fx.client();
    client.connect().await.unwrap();
    let spans = Recorder::watch(&client);
    let (opts, asked) = counted_source();

    client.on_elicitation(|_| async move { Ok(json!({"action": "accept", "content": {"value": "v"}})) });
    client.call_tool("three_rounds", None, &opts).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1, "one operation, three legs");
    let span = spans.one();
    let parent = SpanParent {
        traceparent: nth_parent(1),
        tracestate: Some("vendor=one".into()),
    };
    assert_eq!(span.parent.as_ref(), Some(&parent));
    let record = span.to_json();
    assert_eq!(record["record"], "span");
    assert_eq!(
        record["parent"],
        json!({"traceparent": nth_parent(1), "tracestate": "vendor=one"})
    );
    let legs = fx.wire.tool_calls("three_rounds");
    assert_eq!(legs.len(), 4);
    for leg in &legs {
        assert_eq!(leg["params"]["_meta"]["traceparent"], nth_parent(1), "{leg}");
    }

    // A list from the server asks; the same list again comes from the cache: not asked, no span.
    client.list(ListKind::Tools, None, &opts).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(spans.one().parent.unwrap().traceparent, nth_parent(2));
    client.list(ListKind::Tools, None, &opts).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 2, "a cache answer asks nothing");
    assert!(spans.take().is_empty());
    assert_eq!(fx.wire.requests("tools/list").len(), 1);

    // A call's own trace context wins over the source, and is the parent (no tracestate).
    let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let mine = RequestOptions {
        trace: TraceContext::new(Some(own), None, None).unwrap(),
        ..opts.clone()
    };
    client
        .call_tool("echo", Some(json!({"text": "t"})), &mine)
        .await
        .unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    let span = spans.one();
    assert_eq!(span.to_json()["parent"], json!({"traceparent": own}));

    // Without any trace context there is no parent.
    client
        .call_tool("echo", Some(json!({"text": "u"})), &none())
        .await
        .unwrap();
    assert!(spans.one().to_json().get("parent").is_none());
    client.close().await;
}

/// The observer runs before the call's result is returned, on the thread polling the call; one
/// that panics leaves the call's result and the client intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_delivered_before_the_result_and_a_panicking_observer_harms_nothing() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    client.set_observer(Some(Arc::new(move |span: &Span| {
        count.fetch_add(1, Ordering::SeqCst);
        if span.name == "tools/call fail" {
            panic!("an observer that panics");
        }
    })));
    let result = client
        .call_tool("echo", Some(json!({"text": "a"})), &none())
        .await
        .unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 1, "delivered before the result: {result}");
    let failed = client.call_tool("fail", None, &none()).await.unwrap();
    assert_eq!(failed["isError"], true);
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    client
        .call_tool("echo", Some(json!({"text": "b"})), &none())
        .await
        .unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    client.close().await;
}

/// An observer keeping spans and session records.
#[derive(Default)]
struct Both(Mutex<(Vec<Span>, Vec<SessionRecord>)>);

impl Observer for Both {
    fn span_ended(&self, span: &Span) {
        self.0.lock().unwrap().0.push(span.clone());
    }

    fn session_ended(&self, session: &SessionRecord) {
        self.0.lock().unwrap().1.push(session.clone());
    }
}

impl Both {
    fn watch(client: &Client) -> Arc<Both> {
        let both = Arc::new(Both::default());
        client.set_observer(Some(both.clone()));
        both
    }

    fn spans(&self) -> Vec<Span> {
        std::mem::take(&mut self.0.lock().unwrap().0)
    }

    fn sessions(&self) -> Vec<SessionRecord> {
        std::mem::take(&mut self.0.lock().unwrap().1)
    }
}

/// With `span_tool_payloads` a tool call's span carries its arguments and, when it succeeded,
/// its result, as JSON text; without it, neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_payloads_are_in_the_span_only_when_asked_for() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.span_tool_payloads = true);
    let spans = Recorder::watch(&client);
    let result = client
        .call_tool("echo", Some(json!({"text": "payload"})), &none())
        .await
        .unwrap();
    let span = spans.after("server/discover");
    let arguments = str_attr(&span, "gen_ai.tool.call.arguments").expect("the arguments");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&arguments).unwrap(),
        json!({"text": "payload"})
    );
    let given = str_attr(&span, "gen_ai.tool.call.result").expect("the result");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&given).unwrap(), result);
    assert!(span
        .metric_attributes()
        .all(|(k, _)| !k.starts_with("gen_ai.tool.call.")));
    // A tool error: the arguments, no result (the convention gives it for a success only).
    client.call_tool("fail", None, &none()).await.unwrap();
    let failed = spans.one();
    assert_eq!(str_attr(&failed, "gen_ai.tool.call.arguments").as_deref(), Some("{}"));
    assert!(failed.attribute("gen_ai.tool.call.result").is_none());
    // Other methods never carry them.
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    assert!(spans.one().attribute("gen_ai.tool.call.arguments").is_none());
    client.close().await;

    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let spans = Recorder::watch(&client);
    client
        .call_tool("echo", Some(json!({"text": "quiet"})), &none())
        .await
        .unwrap();
    let span = spans.after("server/discover");
    assert!(span.attribute("gen_ai.tool.call.arguments").is_none());
    assert!(span.attribute("gen_ai.tool.call.result").is_none());
    client.close().await;
}

/// A server that exits in the middle of an idempotent call: under a reconnect policy the call
/// goes again on a new connection, one span with an `mcp.reconnect.retry` event and no error;
/// the lost session ends as a session record with `error.type`, the client's close ends the
/// second one without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_is_an_event_and_each_session_ends_as_a_record() {
    let fx = Fixture::modern(&["--exit-after-lists", "2"]);
    let client = fx.client_with(|c| c.reconnect = Some(mcp_client::ReconnectPolicy::default()));
    let seen = Both::watch(&client);
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    let first = seen.spans();
    let names: Vec<&str> = first.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["server/discover", "tools/list"]);
    assert!(first[1].events.is_empty());
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    // The reconnect inside the call is a handshake of its own, then the call's one span.
    let spans = seen.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["server/discover", "tools/list"], "one operation: {spans:#?}");
    assert!(spans[0].start >= first[1].end);
    let retried = &spans[1];
    let retries: Vec<_> = retried
        .events
        .iter()
        .filter(|e| e.name == "mcp.reconnect.retry")
        .collect();
    assert_eq!(retries.len(), 1, "{retried:#?}");
    assert_eq!(retries[0].attributes, vec![("mcp.retry.attempt", AttrValue::Int(1))]);
    assert!(retried.attribute("error.type").is_none(), "{retried:#?}");
    let lost = seen.sessions();
    assert_eq!(lost.len(), 1, "{lost:#?}");
    assert_eq!(
        lost[0].attribute("error.type").and_then(AttrValue::as_str),
        Some("server_exited")
    );
    assert_eq!(
        lost[0].attribute("network.transport").and_then(AttrValue::as_str),
        Some("pipe")
    );
    assert!(lost[0].duration_seconds() > 0.0);
    assert_eq!(lost[0].to_json()["record"], "session");
    client.close().await;
    let closed = seen.sessions();
    assert_eq!(closed.len(), 1);
    assert!(closed[0].attribute("error.type").is_none(), "{closed:#?}");
    assert_eq!(
        closed[0].attribute("mcp.protocol.version").and_then(AttrValue::as_str),
        Some("2026-07-28")
    );
    assert!(closed[0].start >= lost[0].end);
    let metric: Vec<&str> = closed[0].metric_attributes().map(|(k, _)| *k).collect();
    assert!(metric.contains(&"network.transport") && !metric.contains(&"mcp.session.id"));
}

/// Over HTTP the span names the HTTP version; a legacy session the server expired is an
/// `mcp.session.renewed` event of the call that met it, and a session record of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_names_its_version_and_a_renewed_session_is_an_event_and_a_record() {
    let server = HttpFixture::start(&["--expire-session-after", "2"]);
    let mut config = ClientConfig::new(TransportConfig::Http(HttpConfig::new(server.1.clone())));
    config.mode = ConnectMode::Legacy;
    config.request_timeout = REQUEST_TIMEOUT;
    let client = Client::new(config);
    let seen = Both::watch(&client);
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    let mut first = seen.spans();
    let names: Vec<&str> = first.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["initialize", "tools/list"]);
    assert_eq!(str_attr(&first[0], "network.protocol.version").as_deref(), Some("1.1"));
    let first = first.remove(1);
    assert_eq!(str_attr(&first, "network.protocol.version").as_deref(), Some("1.1"));
    let old_id = str_attr(&first, "mcp.session.id").expect("a legacy session id");
    let mut renewed = None;
    for _ in 0..2 {
        client.list(ListKind::Tools, None, &none()).await.unwrap();
        let span = seen.spans().remove(0);
        if span.events.iter().any(|e| e.name == "mcp.session.renewed") {
            renewed = Some(span);
        }
    }
    let renewed = renewed.expect("a call met the expired session");
    assert!(renewed.attribute("error.type").is_none());
    let records = seen.sessions();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(
        records[0].attribute("error.type").and_then(AttrValue::as_str),
        Some("session_expired")
    );
    assert_eq!(
        records[0].attribute("mcp.session.id").and_then(AttrValue::as_str),
        Some(old_id.as_str())
    );
    assert_eq!(
        records[0]
            .attribute("network.protocol.version")
            .and_then(AttrValue::as_str),
        Some("1.1")
    );
    assert_ne!(str_attr(&renewed, "mcp.session.id"), Some(old_id));
    client.close().await;
    let closed = seen.sessions();
    assert_eq!(closed.len(), 1);
    assert!(closed[0].start >= records[0].end);
}

/// The handshake a call triggers is its own operations: a `server/discover` (modern) or an
/// `initialize` (legacy) span, ended before the call's span, with the call's parent; the trace
/// source is still asked once for the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_connect_is_spans_with_the_triggering_calls_parent() {
    for (fx, handshake, version) in [
        (Fixture::modern(&[]), "server/discover", "2026-07-28"),
        (Fixture::legacy(&[]), "initialize", "2025-11-25"),
    ] {
        let client = fx.client();
        let spans = Recorder::watch(&client);
        let (opts, asked) = counted_source();
        client
            .call_tool("echo", Some(json!({"text": "a"})), &opts)
            .await
            .unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once, for the call");
        let taken = spans.take();
        let names: Vec<&str> = taken.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, [handshake, "tools/call echo"]);
        let (hs, call) = (&taken[0], &taken[1]);
        assert_eq!(hs.kind, SpanKind::Client);
        assert_eq!(str_attr(hs, "mcp.method.name").as_deref(), Some(handshake));
        assert_eq!(str_attr(hs, "mcp.protocol.version").as_deref(), Some(version));
        assert_eq!(str_attr(hs, "network.transport").as_deref(), Some("pipe"));
        assert!(hs.attribute("error.type").is_none() && hs.error_message.is_none());
        let sent = &fx.wire.requests(handshake)[0];
        assert_eq!(str_attr(hs, "jsonrpc.request.id"), Some(sent["id"].to_string()));
        assert_eq!(hs.parent.as_ref().unwrap().traceparent, nth_parent(1));
        assert_eq!(hs.parent, call.parent);
        assert!(hs.start >= call.start && hs.end <= call.end, "inside the call");
        // Connected: the next call has no handshake.
        client
            .call_tool("echo", Some(json!({"text": "b"})), &opts)
            .await
            .unwrap();
        assert_eq!(spans.one().parent.unwrap().traceparent, nth_parent(2));
        client.close().await;
    }
}

/// `auto` against a legacy server: the probe that failed and the `initialize` that connected are
/// two spans, both with the call's parent; an explicit connect's spans have no parent (the trace
/// source is a call's), or the context given to `connect_with`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auto_probe_and_initialize_are_two_spans_and_explicit_connects_their_own() {
    let fx = Fixture::legacy(&[]).mode(ConnectMode::Auto);
    let client = fx.client();
    let spans = Recorder::watch(&client);
    let (opts, asked) = counted_source();
    client.list(ListKind::Tools, None, &opts).await.unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let taken = spans.take();
    let names: Vec<&str> = taken.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["server/discover", "initialize", "tools/list"]);
    let probe = &taken[0];
    assert!(probe.attribute("error.type").is_some(), "{probe:#?}");
    assert!(probe.error_message.is_some());
    assert!(taken[1].attribute("error.type").is_none());
    assert_eq!(
        str_attr(&taken[1], "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    for span in &taken {
        assert_eq!(span.parent.as_ref().unwrap().traceparent, nth_parent(1), "{span:#?}");
    }
    client.close().await;

    let fx = Fixture::modern(&[]);
    let client = fx.client();
    let spans = Recorder::watch(&client);
    client.connect().await.unwrap();
    let hs = spans.one();
    assert_eq!(hs.name, "server/discover");
    assert!(hs.parent.is_none());
    client.close().await;

    let client = fx.client();
    let spans = Recorder::watch(&client);
    let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let with = RequestOptions {
        trace: TraceContext::new(Some(own), None, None).unwrap(),
        ..RequestOptions::default()
    };
    client.connect_with(&with).await.unwrap();
    assert_eq!(spans.one().to_json()["parent"], json!({"traceparent": own}));
    client.close().await;
}

/// The `tools/list` a first `tools/call` sends to learn output schemas is an operation with the
/// call's parent, ended after the call's span; the trace source is not asked for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_output_schema_list_carries_the_calls_trace_context() {
    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    let spans = Recorder::watch(&client);
    let (opts, asked) = counted_source();
    client
        .call_tool("typed", Some(json!({"value": 5})), &opts)
        .await
        .unwrap();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let taken = spans.take();
    let names: Vec<&str> = taken.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["tools/call typed", "tools/list"]);
    for span in &taken {
        assert_eq!(span.parent.as_ref().unwrap().traceparent, nth_parent(1), "{span:#?}");
    }
    let lists = fx.wire.requests("tools/list");
    assert_eq!(lists.len(), 1);
    assert_eq!(lists[0]["params"]["_meta"]["traceparent"], nth_parent(1));
    client.close().await;
}

/// A task request that connects the client (here `tasks/get` of a task the server does not
/// know) gives its handshake the task operation's parent too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_request_that_connects_gives_the_handshake_its_parent() {
    let fx = Fixture::modern(&[]);
    let client = fx.client_with(|c| c.tasks = true);
    let spans = Recorder::watch(&client);
    let (opts, asked) = counted_source();
    assert!(client.get_task("no-such-task", &opts).await.is_err());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let taken = spans.take();
    let names: Vec<&str> = taken.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["server/discover", "tasks/get"]);
    for span in &taken {
        assert_eq!(span.parent.as_ref().unwrap().traceparent, nth_parent(1), "{span:#?}");
    }
    client.close().await;
}
