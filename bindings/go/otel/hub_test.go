package mcpotel

import (
	"context"
	"encoding/json"
	"testing"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// hubHarness is a hub of fixture members with a bridge (InstrumentHub) on an SDK tracer
// provider and meter provider; the harness's helpers check its spans and data points.
func hubHarness(t *testing.T, members ...string) (*harness, *mcpclient.Hub) {
	t.Helper()
	hub, err := mcpclient.NewHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	for _, name := range members {
		addFixture(t, hub, name)
	}
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b, err := InstrumentHub(hub, WithTracerProvider(tp), WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	version := ""
	ms, err := hub.Members()
	if err != nil || len(ms) != len(members) {
		t.Fatalf("members %+v %v", ms, err)
	}
	for _, m := range ms {
		if m.State != "connected" {
			t.Fatalf("member %+v", m)
		}
		version = m.ProtocolVersion
	}
	conn := map[string]any{"network.transport": "pipe", "mcp.protocol.version": version}
	// The start's connects and list watches are spans of their own, outside any host span.
	for _, s := range spans.Ended() {
		if s.Parent().IsValid() {
			t.Fatalf("%s of the start has parent %v", s.Name(), s.Parent())
		}
	}
	spans.Reset()
	return &harness{t: t, bridge: b, spans: spans, metrics: reader, host: tp.Tracer("host"), version: version, conn: conn}, hub
}

func addFixture(t *testing.T, hub *mcpclient.Hub, name string) {
	t.Helper()
	cfg := map[string]any{"command": fixture, "shutdown_grace_ms": 500, "request_timeout_ms": 10000}
	if err := hub.AddMember(name, cfg); err != nil {
		t.Fatal(err)
	}
}

// seenTraceparent is the traceparent the fixture's echo_meta tool received.
func seenTraceparent(t *testing.T, result json.RawMessage) string {
	t.Helper()
	var r struct {
		StructuredContent struct {
			Traceparent string `json:"traceparent"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("%s: %v", result, err)
	}
	return r.StructuredContent.Traceparent
}

func toolAttrs(tool, server string) map[string]any {
	return map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": tool,
		"gen_ai.operation.name": "execute_tool", "mcp.server.name": server}
}

func TestHubRoutedCallIsTheMembersSpanUnderTheCaller(t *testing.T) {
	h, hub := hubHarness(t, "fix", "alt")
	// The first routed call lists the members' tools to route by: child spans of the call's.
	var result json.RawMessage
	parent := h.under(func(c context.Context) {
		var err error
		if result, err = hub.CallTool(c, "alt__echo_meta", nil); err != nil {
			t.Fatal(err)
		}
	})
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range h.ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	calls, lists := byName["tools/call echo_meta"], byName["tools/list"]
	if len(calls) != 1 || len(lists) != 2 || len(h.ended()) != 3 {
		t.Fatalf("spans %v", byName)
	}
	call := calls[0]
	parentIs(t, call, parent)
	h.attrs(call, toolAttrs("echo_meta", "alt"))
	if got := seenTraceparent(t, result); got != traceparentOf(call) {
		t.Fatalf("the server saw %q, the span is %q", got, traceparentOf(call))
	}
	servers := map[string]bool{}
	for _, l := range lists {
		parentIs(t, l, call.SpanContext())
		for _, kv := range l.Attributes() {
			if kv.Key == "mcp.server.name" {
				servers[kv.Value.AsString()] = true
			}
		}
	}
	if !servers["fix"] || !servers["alt"] {
		t.Fatalf("the lists' members %v", servers)
	}
	h.point(toolAttrs("echo_meta", "alt"), 1)

	// Once listed, a call is one span; a member added later is covered too.
	addFixture(t, hub, "late")
	if err := hub.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.ListTools(ctx(t)); err != nil {
		t.Fatal(err)
	}
	h.spans.Reset()
	parent = h.under(func(c context.Context) {
		var err error
		if result, err = hub.CallTool(c, "late__echo_meta", nil); err != nil {
			t.Fatal(err)
		}
	})
	call = h.only("tools/call echo_meta")
	parentIs(t, call, parent)
	h.attrs(call, toolAttrs("echo_meta", "late"))
	if got := seenTraceparent(t, result); got != traceparentOf(call) {
		t.Fatalf("the server saw %q, the span is %q", got, traceparentOf(call))
	}
	h.point(toolAttrs("echo_meta", "late"), 1)

	// Closed: the hub's source and listener are gone.
	if err := h.bridge.Close(); err != nil {
		t.Fatal(err)
	}
	h.spans.Reset()
	if result, err := hub.CallTool(ctx(t), "late__echo_meta", nil); err != nil || seenTraceparent(t, result) != "" {
		t.Fatalf("after Close: %s %v", result, err)
	}
	if got := h.ended(); len(got) != 0 {
		t.Fatalf("after Close: %d spans", len(got))
	}
}

func TestHubEnrichesTheHostsExecuteToolSpanKeepingItsToolName(t *testing.T) {
	h, hub := hubHarness(t, "fix")
	if _, err := hub.ListTools(ctx(t)); err != nil {
		t.Fatal(err)
	}
	h.spans.Reset()
	c, span := h.host.Start(ctx(t), "execute_tool fix__echo_meta", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "fix__echo_meta")))
	result, err := hub.CallTool(c, "fix__echo_meta", nil)
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	if got := h.ended(); len(got) != 0 {
		t.Fatalf("the bridge made %d spans of its own", len(got))
	}
	var host sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.SpanContext().SpanID() == span.SpanContext().SpanID() {
			host = s
		}
	}
	if host == nil {
		t.Fatal("the host's span did not end")
	}
	if got := seenTraceparent(t, result); got != traceparentOf(host) {
		t.Fatalf("the server saw %q, the host's span is %q", got, traceparentOf(host))
	}
	h.attrs(host, toolAttrs("fix__echo_meta", "fix"))
}

func TestHubOnSpanAndTraceContextWithoutTheBridge(t *testing.T) {
	hub, err := mcpclient.NewHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	addFixture(t, hub, "fix")
	records := make(chan json.RawMessage, 16)
	if err := hub.OnSpan(func(r json.RawMessage) { records <- r }); err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	hub.SetTraceContext(func(context.Context) mcpclient.TraceContext {
		return mcpclient.TraceContext{Traceparent: tp, Baggage: "k=v"}
	})
	if err := hub.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	result, err := hub.CallTool(ctx(t), "fix__echo_meta", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := seenTraceparent(t, result); got != tp {
		t.Fatalf("the server saw %q", got)
	}
	for {
		select {
		case raw := <-records:
			var r record
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if r.Name != "tools/call echo_meta" {
				continue
			}
			if r.stringAttr("mcp.server.name") != "fix" || r.Parent == nil || r.Parent.Traceparent != tp {
				t.Fatalf("record %s", raw)
			}
			return
		case <-ctx(t).Done():
			t.Fatal("no record of the call")
		}
	}
}
