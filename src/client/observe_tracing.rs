//! The `tracing` bridge (cargo feature `tracing`): [`TracingObserver`] turns each span record
//! into a `tracing` span and each session record into a `tracing` event, with the
//! OpenTelemetry MCP conventions' names as their fields, so a Rust host that traces with
//! `tracing` (and exports through `tracing-opentelemetry`, which reads the `otel.*` fields)
//! sees the library's operations in its own traces.
//!
//! Delivery is synchronous on the thread polling the call (see [`super::observe`]): the span is
//! made there, so its parent is the host's current span, the one the call's future was
//! instrumented with. A `tracing` span cannot be backdated: it opens and closes when the
//! operation has ended, and carries the operation's own times as the fields
//! `mcp.start_unix_nano`, `mcp.end_unix_nano` and `mcp.duration_s` (the value of the
//! `mcp.client.operation.duration` histogram).

use super::observe::{AttrValue, Observer, SessionRecord, Span, SpanEvent, OPERATION_DURATION, SESSION_DURATION};
use std::time::SystemTime;
use tracing::field::Empty;

/// The target of every span and event the bridge makes.
pub const TARGET: &str = "mcp_client::otel";

/// An [`Observer`] that emits `tracing` spans and events (see the module documentation). Set it
/// with `client.set_observer(Some(Arc::new(TracingObserver)))`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TracingObserver;

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
        .unwrap_or(0)
}

/// Records attribute `key` on `span` (ignored when `span` has no such field).
fn record(span: &tracing::Span, key: &str, value: &AttrValue) {
    match value {
        AttrValue::Str(s) => span.record(key, s.as_str()),
        AttrValue::Int(i) => span.record(key, *i),
    };
}

fn int(event: &SpanEvent, key: &str) -> Option<i64> {
    event.attributes.iter().find_map(|(k, v)| match v {
        AttrValue::Int(i) if *k == key => Some(*i),
        _ => None,
    })
}

fn text<'a>(event: &'a SpanEvent, key: &str) -> Option<&'a str> {
    event
        .attributes
        .iter()
        .find_map(|(k, v)| (*k == key).then(|| v.as_str()).flatten())
}

impl Observer for TracingObserver {
    fn span_ended(&self, span: &Span) {
        let made = tracing::info_span!(
            target: TARGET,
            "mcp.client.operation",
            otel.name = %span.name,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            gen_ai.operation.name = Empty,
            jsonrpc.request.id = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            mcp.protocol.version = Empty,
            mcp.session.id = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            network.protocol.version = Empty,
            server.address = Empty,
            server.port = Empty,
            mcp.server.name = Empty,
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            mcp.parent.traceparent = Empty,
            mcp.parent.tracestate = Empty,
            mcp.start_unix_nano = unix_nanos(span.start),
            mcp.end_unix_nano = unix_nanos(span.end),
            mcp.duration_s = span.duration_seconds(),
            mcp.metric = OPERATION_DURATION,
        );
        for (key, value) in &span.attributes {
            record(&made, key, value);
        }
        if let Some(message) = &span.error_message {
            made.record("otel.status_code", "ERROR");
            made.record("otel.status_description", message.as_str());
        }
        if let Some(parent) = &span.parent {
            made.record("mcp.parent.traceparent", parent.traceparent.as_str());
            if let Some(state) = &parent.tracestate {
                made.record("mcp.parent.tracestate", state.as_str());
            }
        }
        let _in = made.enter();
        for event in &span.events {
            tracing::info!(
                target: TARGET,
                name = event.name,
                time_unix_nano = unix_nanos(event.time),
                mcp.mrtr.round = int(event, "mcp.mrtr.round"),
                mcp.mrtr.input_requests = int(event, "mcp.mrtr.input_requests"),
                mcp.task.id = text(event, "mcp.task.id"),
                mcp.retry.attempt = int(event, "mcp.retry.attempt"),
                http.response.status_code = int(event, "http.response.status_code"),
                "{}",
                event.name
            );
        }
    }

    fn session_ended(&self, session: &SessionRecord) {
        let attr = |key: &str| session.attribute(key).and_then(AttrValue::as_str);
        let port = session.attribute("server.port").and_then(|v| match v {
            AttrValue::Int(i) => Some(*i),
            AttrValue::Str(_) => None,
        });
        tracing::info!(
            target: TARGET,
            name = "mcp.client.session",
            mcp.metric = SESSION_DURATION,
            mcp.duration_s = session.duration_seconds(),
            mcp.start_unix_nano = unix_nanos(session.start),
            mcp.end_unix_nano = unix_nanos(session.end),
            mcp.protocol.version = attr("mcp.protocol.version"),
            mcp.session.id = attr("mcp.session.id"),
            network.transport = attr("network.transport"),
            network.protocol.name = attr("network.protocol.name"),
            network.protocol.version = attr("network.protocol.version"),
            server.address = attr("server.address"),
            server.port = port,
            mcp.server.name = attr("mcp.server.name"),
            error.type = attr("error.type"),
            "mcp session ended"
        );
    }
}
