//! The `tracing` bridge (`--features tracing`): each span record becomes a `tracing` span whose
//! fields carry the OpenTelemetry MCP conventions' names, its events `tracing` events inside it,
//! and a session record an event; the span's parent is the host's span the call's future was
//! instrumented with. A small subscriber of the test's own captures what is emitted.
#![cfg(feature = "tracing")]

mod common;

use common::*;
use mcp_client::observe::{TracingObserver, TRACING_TARGET};
use mcp_client::ListKind;
use serde_json::json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Instrument, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

#[derive(Clone, Debug)]
struct CapturedSpan {
    id: u64,
    name: &'static str,
    target: String,
    parent: Option<u64>,
    fields: Fields,
}

#[derive(Clone, Debug)]
struct CapturedEvent {
    span: Option<u64>,
    target: String,
    fields: Fields,
}

#[derive(Default)]
struct Captured {
    spans: Vec<CapturedSpan>,
    events: Vec<CapturedEvent>,
}

/// Keeps every span (with the fields recorded on it later) and event, and which span was
/// current on the thread when each was made.
struct Capture {
    seen: Arc<Mutex<Captured>>,
    next: AtomicU64,
}

thread_local! {
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), value.to_string());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), value.to_string());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

fn current() -> Option<u64> {
    ENTERED.with(|e| e.borrow().last().copied())
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = Fields::new();
        attrs.record(&mut Collect(&mut fields));
        let parent = match attrs.parent() {
            Some(p) => Some(p.into_u64()),
            None if attrs.is_contextual() => current(),
            None => None,
        };
        self.seen.lock().unwrap().spans.push(CapturedSpan {
            id,
            name: attrs.metadata().name(),
            target: attrs.metadata().target().to_string(),
            parent,
            fields,
        });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut seen = self.seen.lock().unwrap();
        if let Some(s) = seen.spans.iter_mut().find(|s| s.id == span.into_u64()) {
            values.record(&mut Collect(&mut s.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Collect(&mut fields));
        let span = event.parent().map(Id::into_u64).or_else(current);
        self.seen.lock().unwrap().events.push(CapturedEvent {
            span,
            target: event.metadata().target().to_string(),
            fields,
        });
    }

    fn enter(&self, span: &Id) {
        ENTERED.with(|e| e.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        ENTERED.with(|e| {
            let mut e = e.borrow_mut();
            if let Some(at) = e.iter().rposition(|s| *s == span.into_u64()) {
                e.remove(at);
            }
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_become_tracing_spans_with_the_conventions_names_under_the_hosts_span() {
    let seen = Arc::new(Mutex::new(Captured::default()));
    tracing::subscriber::set_global_default(Capture {
        seen: seen.clone(),
        next: AtomicU64::new(0),
    })
    .expect("the only subscriber of this test binary");

    let fx = Fixture::modern(&[]);
    let client = fx.client();
    client.connect().await.unwrap();
    client.set_observer(Some(Arc::new(TracingObserver)));
    client.on_elicitation(|_| async move { Ok(json!({"action": "accept", "content": {"value": "v"}})) });

    let host = tracing::info_span!("host.request");
    let host_id = host.id().expect("a span id").into_u64();
    client
        .call_tool("echo", Some(json!({"text": "t"})), &none())
        .instrument(host.clone())
        .await
        .unwrap();
    client
        .call_tool("fail", None, &none())
        .instrument(host.clone())
        .await
        .unwrap();
    client
        .call_tool("three_rounds", None, &none())
        .instrument(host)
        .await
        .unwrap();
    client.list(ListKind::Tools, None, &none()).await.unwrap();
    client.close().await;

    let seen = seen.lock().unwrap();
    let ours: Vec<&CapturedSpan> = seen.spans.iter().filter(|s| s.target == TRACING_TARGET).collect();
    assert_eq!(ours.len(), 4, "{ours:#?}");
    let field = |s: &CapturedSpan, k: &str| s.fields.get(k).cloned();

    let echo = ours[0];
    assert_eq!(echo.name, "mcp.client.operation");
    assert_eq!(echo.parent, Some(host_id), "the host's span is the parent");
    assert_eq!(field(echo, "otel.name").as_deref(), Some("tools/call echo"));
    assert_eq!(field(echo, "otel.kind").as_deref(), Some("client"));
    assert_eq!(field(echo, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(field(echo, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(field(echo, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(field(echo, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(field(echo, "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_eq!(
        field(echo, "mcp.metric").as_deref(),
        Some("mcp.client.operation.duration")
    );
    assert!(field(echo, "jsonrpc.request.id").is_some());
    assert!(field(echo, "error.type").is_none() && field(echo, "otel.status_code").is_none());
    let duration: f64 = field(echo, "mcp.duration_s").unwrap().parse().unwrap();
    assert!(duration >= 0.0);

    let fail = ours[1];
    assert_eq!(field(fail, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(field(fail, "otel.status_code").as_deref(), Some("ERROR"));
    assert_eq!(field(fail, "otel.status_description").as_deref(), Some("tool_error"));

    let rounds = ours[2];
    let inside: Vec<&CapturedEvent> = seen.events.iter().filter(|e| e.span == Some(rounds.id)).collect();
    assert_eq!(inside.len(), 3, "{inside:#?}");
    for (n, event) in inside.iter().enumerate() {
        assert_eq!(event.fields.get("name").map(String::as_str), Some("mcp.mrtr.round"));
        assert_eq!(event.fields.get("mcp.mrtr.round"), Some(&(n + 1).to_string()));
    }

    // Without an instrumented future the operation's span has no parent here.
    assert_eq!(field(ours[3], "otel.name").as_deref(), Some("tools/list"));
    assert_eq!(ours[3].parent, None);

    let sessions: Vec<&CapturedEvent> = seen
        .events
        .iter()
        .filter(|e| {
            e.target == TRACING_TARGET
                && e.fields.get("mcp.metric").map(String::as_str) == Some("mcp.client.session.duration")
        })
        .collect();
    assert_eq!(sessions.len(), 1, "the close ends the session");
    assert_eq!(
        sessions[0].fields.get("network.transport").map(String::as_str),
        Some("pipe")
    );
    assert!(!sessions[0].fields.contains_key("error.type"));
}
