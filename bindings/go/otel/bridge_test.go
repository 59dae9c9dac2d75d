package mcpotel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// fixture is the mcp-fixture-server binary: $MCP_FIXTURE, else <repo>/target/debug.
var fixture string

func TestMain(m *testing.M) {
	fixture = os.Getenv("MCP_FIXTURE")
	if fixture == "" {
		_, file, _, _ := runtime.Caller(0)
		fixture = filepath.Join(filepath.Dir(file), "..", "..", "..", "target", "debug", "mcp-fixture-server")
	}
	if _, err := os.Stat(fixture); err != nil {
		fmt.Fprintf(os.Stderr, "fixture server not found at %s (cargo build --workspace, or set MCP_FIXTURE): %v\n", fixture, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// The conventions' bucket boundaries, written out here rather than read from the package.
var wantBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

type harness struct {
	t       *testing.T
	client  *mcpclient.Client
	bridge  *Bridge
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	host    trace.Tracer   // the host application's own tracer
	sampled *sampler       // what the sampler saw at each span's start
	version string         // the connection's protocol version
	conn    map[string]any // the connection's attributes, on every span and data point
}

func newHarness(t *testing.T, args []string, bridgeOpts []Option, opts ...mcpclient.Option) *harness {
	t.Helper()
	opts = append([]mcpclient.Option{mcpclient.WithShutdownGrace(500 * time.Millisecond), mcpclient.WithMode(mcpclient.ModeModern)}, opts...)
	c, err := mcpclient.NewStdio(fixture, args, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return instrument(t, c, bridgeOpts, map[string]any{"network.transport": "pipe"})
}

// instrument puts a bridge with an SDK tracer provider (a span recorder) and meter provider (a
// manual reader) on c, connects it, and lists the tools once outside any span.
func instrument(t *testing.T, c *mcpclient.Client, bridgeOpts []Option, conn map[string]any) *harness {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	spans := tracetest.NewSpanRecorder()
	smp := &sampler{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(smp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b, err := Instrument(c, append([]Option{WithTracerProvider(tp), WithMeterProvider(mp)}, bridgeOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Connect(ctx(t))
	if err != nil || info.ProtocolVersion == "" {
		t.Fatalf("Connect: %v %+v", err, info)
	}
	conn["mcp.protocol.version"] = info.ProtocolVersion
	h := &harness{t: t, client: c, bridge: b, spans: spans, metrics: reader, host: tp.Tracer("host"), sampled: smp, version: info.ProtocolVersion, conn: conn}
	// An explicit connect is its own operation: its handshake a span outside any other.
	handshake := "server/discover"
	if info.Era == mcpclient.EraLegacy {
		handshake = "initialize"
	}
	hs := h.only(handshake)
	if hs.Parent().IsValid() {
		t.Fatalf("%s of an explicit connect has parent %v", handshake, hs.Parent())
	}
	h.attrs(hs, map[string]any{"mcp.method.name": handshake})
	spans.Reset()
	// The tools' output schemas are listed once, outside any host span: later tool calls
	// send nothing else.
	if _, _, err := c.List(ctx(t), mcpclient.KindTools, ""); err != nil {
		t.Fatal(err)
	}
	list := h.only("tools/list")
	if list.Parent().IsValid() {
		t.Fatalf("tools/list outside any span has parent %v", list.Parent())
	}
	h.attrs(list, map[string]any{"mcp.method.name": "tools/list"})
	spans.Reset()
	return h
}

// sampler samples everything and keeps what it was shown at each span's start.
type sampler struct {
	mu   sync.Mutex
	seen []sdktrace.SamplingParameters
}

func (s *sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	s.seen = append(s.seen, p)
	s.mu.Unlock()
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample,
		Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}

func (s *sampler) Description() string { return "keeps what it saw" }

// last is what the sampler saw at the start of the latest span.
func (s *sampler) last() sdktrace.SamplingParameters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[len(s.seen)-1]
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return c
}

// ended is every span ended so far but the host's own.
func (h *harness) ended() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.InstrumentationScope().Name == ScopeName {
			out = append(out, s)
		}
	}
	return out
}

// only is the one ended span of the bridge, which must be named name.
func (h *harness) only(name string) sdktrace.ReadOnlySpan {
	h.t.Helper()
	got := h.ended()
	if len(got) != 1 || got[0].Name() != name {
		var names []string
		for _, s := range got {
			names = append(names, s.Name())
		}
		h.t.Fatalf("ended spans %q, want just %q", names, name)
	}
	s := got[0]
	if s.SpanKind() != trace.SpanKindClient {
		h.t.Fatalf("%s: kind %v", name, s.SpanKind())
	}
	if !s.EndTime().After(s.StartTime()) {
		h.t.Fatalf("%s: %v .. %v", name, s.StartTime(), s.EndTime())
	}
	return s
}

// reconnected is the span named name of a call that connected first (a reconnect): the
// bridge's two ended spans are the call's and, under it, the handshake's.
func (h *harness) reconnected(name string) sdktrace.ReadOnlySpan {
	h.t.Helper()
	got := h.ended()
	if len(got) != 2 || got[0].Name() != name || got[1].Name() != "server/discover" {
		var names []string
		for _, s := range got {
			names = append(names, s.Name())
		}
		h.t.Fatalf("ended spans %q, want %q and its server/discover", names, name)
	}
	parentIs(h.t, got[1], got[0].SpanContext())
	h.attrs(got[1], map[string]any{"mcp.method.name": "server/discover"})
	if got[1].StartTime().Before(got[0].StartTime()) || got[1].EndTime().After(got[0].EndTime()) {
		h.t.Fatalf("the handshake %v..%v is not inside the call %v..%v", got[1].StartTime(), got[1].EndTime(), got[0].StartTime(), got[0].EndTime())
	}
	return got[0]
}

var requestID = regexp.MustCompile(`^[0-9]+$`)

// attrs checks a span's attributes are exactly want plus the connection's (h.conn), and a
// jsonrpc.request.id. A *regexp.Regexp value is a pattern the string value must match.
// A nil value in want is an attribute that must be absent.
func (h *harness) attrs(s sdktrace.ReadOnlySpan, want map[string]any) {
	h.t.Helper()
	full := map[string]any{}
	for k, v := range h.conn {
		full[k] = v
	}
	for k, v := range want {
		full[k] = v
		if v == nil {
			delete(full, k)
		}
	}
	got := map[string]any{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = kv.Value.AsInterface()
	}
	if id, ok := got["jsonrpc.request.id"].(string); !ok || !requestID.MatchString(id) {
		h.t.Fatalf("%s: jsonrpc.request.id %v", s.Name(), got["jsonrpc.request.id"])
	}
	delete(got, "jsonrpc.request.id")
	for k, v := range full {
		if re, ok := v.(*regexp.Regexp); ok {
			if str, _ := got[k].(string); !re.MatchString(str) {
				h.t.Fatalf("%s: %s %v, want %v", s.Name(), k, got[k], re)
			}
			got[k] = v
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(full) {
		h.t.Fatalf("%s attributes:\n got %v\nwant %v", s.Name(), got, full)
	}
}

// under runs f inside a host span and checks the bridge's span is its child.
func (h *harness) under(f func(ctx context.Context)) trace.SpanContext {
	c, span := h.host.Start(ctx(h.t), "agent turn")
	f(c)
	span.End()
	return span.SpanContext()
}

func parentIs(t *testing.T, s sdktrace.ReadOnlySpan, parent trace.SpanContext) {
	t.Helper()
	if s.Parent().SpanID() != parent.SpanID() || s.SpanContext().TraceID() != parent.TraceID() {
		t.Fatalf("%s: parent %v, want %v", s.Name(), s.Parent(), parent)
	}
}

func status(t *testing.T, s sdktrace.ReadOnlySpan, code codes.Code, message string) {
	t.Helper()
	if s.Status().Code != code || s.Status().Description != message {
		t.Fatalf("%s: status %+v, want %v %q", s.Name(), s.Status(), code, message)
	}
}

// histogram finds the metric name and checks its unit and buckets; it gives the data points.
func (h *harness) histogram(name string) []metricdata.HistogramDataPoint[float64] {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.metrics.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sm.Scope.Name != ScopeName || m.Unit != "s" {
				h.t.Fatalf("%s: scope %q unit %q", name, sm.Scope.Name, m.Unit)
			}
			hist, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				h.t.Fatalf("%s: %T", name, m.Data)
			}
			for _, dp := range hist.DataPoints {
				if !slices.Equal(dp.Bounds, wantBuckets) {
					h.t.Fatalf("%s: bounds %v", name, dp.Bounds)
				}
			}
			return hist.DataPoints
		}
	}
	return nil
}

// point is the operation histogram's data point with exactly attrs; it must hold count values.
func (h *harness) point(attrs map[string]any, count uint64) metricdata.HistogramDataPoint[float64] {
	h.t.Helper()
	full := map[string]any{}
	for k, v := range h.conn {
		full[k] = v
	}
	for k, v := range attrs {
		full[k] = v
		if v == nil {
			delete(full, k)
		}
	}
	delete(full, "mcp.session.id") // high cardinality: on spans only
	var seen []string
	for _, dp := range h.histogram(OperationDuration) {
		got := map[string]any{}
		for _, kv := range dp.Attributes.ToSlice() {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		if fmt.Sprint(got) == fmt.Sprint(full) {
			if dp.Count != count {
				h.t.Fatalf("%v: count %d, want %d", full, dp.Count, count)
			}
			return dp
		}
		seen = append(seen, fmt.Sprint(got))
	}
	h.t.Fatalf("no %s point with %v among %q", OperationDuration, full, seen)
	return metricdata.HistogramDataPoint[float64]{}
}

// sessions are the session histogram's data points, as their attributes and counts.
func (h *harness) sessions() map[string]uint64 {
	h.t.Helper()
	out := map[string]uint64{}
	for _, dp := range h.histogram(SessionDuration) {
		got := map[string]any{}
		for _, kv := range dp.Attributes.ToSlice() {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		if dp.Sum <= 0 {
			h.t.Fatalf("a session of %v s", dp.Sum)
		}
		out[fmt.Sprint(got)] = dp.Count
	}
	return out
}

// session is the connection's attributes as the session histogram has them, with more.
func (h *harness) session(kv ...any) string {
	m := map[string]any{}
	for k, v := range h.conn {
		if k != "mcp.session.id" {
			m[k] = v
		}
	}
	return fmt.Sprint(with(m, kv...))
}

// legs are the requests of method (and tool name, for tools/call) in the fixture's --record
// file, in order: each one's id and the traceparent in its _meta.
func legs(t *testing.T, record, method, name string) (ids, traceparents []string) {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Name string
				Meta map[string]any `json:"_meta"`
			}
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != method || m.Params.Name != name {
			continue
		}
		tp, _ := m.Params.Meta["traceparent"].(string)
		ids, traceparents = append(ids, string(m.ID)), append(traceparents, tp)
	}
	return ids, traceparents
}

func traceparentOf(s sdktrace.ReadOnlySpan) string {
	return fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())
}

func tool(name string) map[string]any {
	return map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": name, "gen_ai.operation.name": "execute_tool"}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// A successful call: one CLIENT span under the host's, whose context the server received, and
// its duration in the operation histogram without the request id.
func TestSuccess(t *testing.T) {
	h := newHarness(t, nil, nil)
	var raw json.RawMessage
	host := h.under(func(c context.Context) {
		var err error
		if raw, err = h.client.CallTool(c, "echo_meta", nil); err != nil {
			t.Fatal(err)
		}
	})
	s := h.only("tools/call echo_meta")
	parentIs(t, s, host)
	h.attrs(s, tool("echo_meta"))
	status(t, s, codes.Unset, "")
	if len(s.Events()) != 0 {
		t.Fatalf("events %v", s.Events())
	}
	var result struct {
		Meta map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		t.Fatal(err)
	}
	sc := s.SpanContext()
	want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
	if result.Meta["traceparent"] != want {
		t.Fatalf("the server's parent %v, want the client span %s", result.Meta["traceparent"], want)
	}
	// A sampler sees the span's name, kind and the attributes known before sending.
	start := h.sampled.last()
	if start.Name != "tools/call echo_meta" || start.Kind != trace.SpanKindClient ||
		fmt.Sprint(start.Attributes) != fmt.Sprint([]attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.tool.name", "echo_meta"), attribute.String("gen_ai.operation.name", "execute_tool")}) {
		t.Fatalf("at the start: %s %v %v", start.Name, start.Kind, start.Attributes)
	}
	dp := h.point(tool("echo_meta"), 1)
	if d := s.EndTime().Sub(s.StartTime()).Seconds(); dp.Sum <= 0 || dp.Sum > d {
		t.Fatalf("duration %v, the span lasted %v", dp.Sum, d)
	}
}

// A tool error (isError: true) is a result, and an error span with error.type tool_error.
func TestToolError(t *testing.T) {
	h := newHarness(t, nil, nil)
	host := h.under(func(c context.Context) {
		if _, err := h.client.CallTool(c, "fail", nil); err != nil {
			t.Fatal(err)
		}
	})
	s := h.only("tools/call fail")
	parentIs(t, s, host)
	h.attrs(s, with(tool("fail"), "error.type", "tool_error"))
	status(t, s, codes.Error, "tool_error")
	h.point(with(tool("fail"), "error.type", "tool_error"), 1)
}

// A JSON-RPC error answer: error.type and rpc.response.status_code are its code, the status
// its message.
func TestProtocolError(t *testing.T) {
	h := newHarness(t, nil, nil)
	host := h.under(func(c context.Context) {
		_, err := h.client.CallTool(c, "rpc_error", nil)
		var e *mcpclient.Error
		if !errors.As(err, &e) {
			t.Fatalf("rpc_error: %v", err)
		}
	})
	s := h.only("tools/call rpc_error")
	parentIs(t, s, host)
	want := with(tool("rpc_error"), "error.type", "-32050", "rpc.response.status_code", "-32050")
	h.attrs(s, want)
	status(t, s, codes.Error, "fixture error")
	h.point(want, 1)
}

// A call that times out ends its span with error.type timeout, after the timeout.
func TestTimeout(t *testing.T) {
	h := newHarness(t, nil, nil)
	host := h.under(func(c context.Context) {
		_, err := h.client.CallTool(c, "hang", nil, mcpclient.WithTimeout(200*time.Millisecond))
		if !errors.Is(err, mcpclient.ErrTimeout) {
			t.Fatalf("hang: %v", err)
		}
	})
	s := h.only("tools/call hang")
	parentIs(t, s, host)
	h.attrs(s, with(tool("hang"), "error.type", "timeout"))
	if s.Status().Code != codes.Error {
		t.Fatalf("status %+v", s.Status())
	}
	if d := s.EndTime().Sub(s.StartTime()); d < 200*time.Millisecond {
		t.Fatalf("lasted %v", d)
	}
	if dp := h.point(with(tool("hang"), "error.type", "timeout"), 1); dp.Sum < 0.2 {
		t.Fatalf("duration %v", dp.Sum)
	}
}

// An MRTR call with two rounds is one span with an event per round, each round's request
// carrying the span's context.
func TestMRTRTwoRounds(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	h := newHarness(t, []string{"--record", record}, nil)
	host := h.under(func(c context.Context) {
		raw, err := h.client.CallTool(c, "state_only", nil)
		if err != nil || !strings.Contains(string(raw), "done after 2 state-only rounds") {
			t.Fatalf("state_only: %v %s", err, raw)
		}
	})
	s := h.only("tools/call state_only")
	parentIs(t, s, host)
	h.attrs(s, tool("state_only"))
	status(t, s, codes.Unset, "")
	events := s.Events()
	if len(events) != 2 {
		t.Fatalf("events %+v", events)
	}
	for i, e := range events {
		got := map[string]any{}
		for _, kv := range e.Attributes {
			got[string(kv.Key)] = kv.Value.AsInterface()
		}
		want := map[string]any{"mcp.mrtr.round": int64(i + 1), "mcp.mrtr.input_requests": int64(0)}
		if e.Name != "mcp.mrtr.round" || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("event %d: %s %v", i, e.Name, got)
		}
		if e.Time.Before(s.StartTime()) || e.Time.After(s.EndTime()) {
			t.Fatalf("event %d at %v, span %v..%v", i, e.Time, s.StartTime(), s.EndTime())
		}
	}
	h.point(tool("state_only"), 1)
	// Each leg the server received carried the span's context; the span's request id is the
	// first leg's.
	ids, tps := legs(t, record, "tools/call", "state_only")
	if want := traceparentOf(s); fmt.Sprint(tps) != fmt.Sprint([]string{want, want, want}) {
		t.Fatalf("the legs carried %v, want %s", tps, want)
	}
	if len(ids) != 3 {
		t.Fatalf("legs %v, want 3 (two rounds)", ids)
	}
	for _, kv := range s.Attributes() {
		if kv.Key == "jsonrpc.request.id" && kv.Value.AsString() != ids[0] {
			t.Fatalf("request id %s, legs %v", kv.Value.AsString(), ids)
		}
	}
}

// A server that exits in the middle of an idempotent call: under a reconnect policy the call
// goes again on a new connection, as one span with an mcp.reconnect.retry event and no error;
// the lost session is a data point of the session histogram with error.type, and the
// client's close adds the second session's, without.
func TestReconnect(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	h := newHarness(t, []string{"--exit-after-lists", "2", "--record", record}, nil,
		mcpclient.WithReconnect(3, 20*time.Millisecond, 200*time.Millisecond))
	if got := h.sessions(); len(got) != 0 {
		t.Fatalf("sessions before any ended: %v", got)
	}
	host := h.under(func(c context.Context) {
		if _, _, err := h.client.List(c, mcpclient.KindTools, ""); err != nil {
			t.Fatalf("the list the server left: %v", err)
		}
	})
	s := h.reconnected("tools/list")
	parentIs(t, s, host)
	h.attrs(s, map[string]any{"mcp.method.name": "tools/list"})
	status(t, s, codes.Unset, "")
	events := s.Events()
	if len(events) != 1 || events[0].Name != "mcp.reconnect.retry" || len(events[0].Attributes) != 1 ||
		events[0].Attributes[0] != attribute.Int64("mcp.retry.attempt", 1) {
		t.Fatalf("events %+v", events)
	}
	h.point(map[string]any{"mcp.method.name": "tools/list"}, 2)
	// After the harness's list, the lost request and its retry carried the span's context.
	if _, tps := legs(t, record, "tools/list", ""); len(tps) != 3 || tps[1] != traceparentOf(s) || tps[2] != tps[1] || tps[0] == tps[1] {
		t.Fatalf("tools/list requests carried %v, the span is %s", tps, traceparentOf(s))
	}
	lost := h.session("error.type", "server_exited")
	if got := h.sessions(); len(got) != 1 || got[lost] != 1 {
		t.Fatalf("sessions %v, want %s once", got, lost)
	}
	if err := h.client.Close(); err != nil {
		t.Fatal(err)
	}
	if got := h.sessions(); len(got) != 2 || got[lost] != 1 || got[h.session()] != 1 {
		t.Fatalf("sessions after close %v, want %s and %s", got, lost, h.session())
	}
}

// A server that exits under a tool call fails it (tools/call is not retried); the client
// reconnects and the next call's span is whole again.
func TestServerExit(t *testing.T) {
	h := newHarness(t, nil, nil, mcpclient.WithReconnect(3, 20*time.Millisecond, 200*time.Millisecond))
	host := h.under(func(c context.Context) {
		if _, err := h.client.CallTool(c, "crash", nil); !errors.Is(err, mcpclient.ErrServerExited) {
			t.Fatalf("crash: %v", err)
		}
	})
	s := h.only("tools/call crash")
	parentIs(t, s, host)
	// The connection is gone when the operation ends: its record has no mcp.protocol.version.
	crashed := with(tool("crash"), "error.type", "server_exited")
	h.attrs(s, with(crashed, "mcp.protocol.version", nil))
	if s.Status().Code != codes.Error {
		t.Fatalf("status %+v", s.Status())
	}
	h.point(with(crashed, "mcp.protocol.version", nil), 1)
	h.spans.Reset()
	host = h.under(func(c context.Context) {
		if _, err := h.client.CallTool(c, "echo", map[string]any{"text": "again"}); err != nil {
			t.Fatalf("after the reconnect: %v", err)
		}
	})
	s = h.reconnected("tools/call echo")
	parentIs(t, s, host)
	h.attrs(s, tool("echo"))
	status(t, s, codes.Unset, "")
	h.point(tool("echo"), 1)
}

// The host's open execute_tool span gets the operation's attributes instead of a nested
// CLIENT span, stays open, and is the parent the server sees; with enrichment off, or for a
// span that is not execute_tool, the bridge makes its own span.
func TestExecuteToolEnrichment(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, span := h.host.Start(ctx(t), "execute_tool echo_meta",
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "echo_meta")))
	raw, err := h.client.CallTool(c, "echo_meta", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.ended(); len(got) != 0 {
		t.Fatalf("a span of the bridge's own: %v", got[0].Name())
	}
	if !span.IsRecording() {
		t.Fatal("the host's span was ended")
	}
	span.End()
	var hostSpan sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended() {
		if s.SpanContext().SpanID() == span.SpanContext().SpanID() {
			hostSpan = s
		}
	}
	if hostSpan == nil || hostSpan.Name() != "execute_tool echo_meta" || hostSpan.SpanKind() != trace.SpanKindInternal {
		t.Fatalf("host span %v", hostSpan)
	}
	h.attrs(hostSpan, tool("echo_meta"))
	want := fmt.Sprintf("00-%s-%s-01", span.SpanContext().TraceID(), span.SpanContext().SpanID())
	if !strings.Contains(string(raw), want) {
		t.Fatalf("the server's parent in %s, want %s", raw, want)
	}
	h.point(tool("echo_meta"), 1)

	// Another method under an execute_tool span has its own span.
	h.spans.Reset()
	c, span = h.host.Start(ctx(t), "execute_tool echo",
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool")))
	if _, _, err := h.client.List(c, mcpclient.KindPrompts, ""); err != nil {
		t.Fatal(err)
	}
	span.End()
	list := h.only("prompts/list")
	parentIs(t, list, span.SpanContext())
	h.attrs(list, map[string]any{"mcp.method.name": "prompts/list"})
	for _, s := range h.spans.Ended() {
		if s.SpanContext().SpanID() == span.SpanContext().SpanID() && len(s.Attributes()) != 1 {
			t.Fatalf("the execute_tool span was enriched by prompts/list: %v", s.Attributes())
		}
	}

	// Found by name alone, and failing: the host span takes the error too.
	h.spans.Reset()
	c, span = h.host.Start(ctx(t), "execute_tool fail")
	if _, err := h.client.CallTool(c, "fail", nil); err != nil {
		t.Fatal(err)
	}
	span.End()
	if got := h.ended(); len(got) != 0 {
		t.Fatalf("a span of the bridge's own: %v", got[0].Name())
	}
	hostSpan = h.spans.Ended()[0]
	h.attrs(hostSpan, with(tool("fail"), "error.type", "tool_error"))
	status(t, hostSpan, codes.Error, "tool_error")

	// Marked by the host.
	h.spans.Reset()
	c, span = h.host.Start(ctx(t), "run tool")
	if _, err := h.client.CallTool(ContextWithToolSpan(c), "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	span.End()
	if got := h.ended(); len(got) != 0 {
		t.Fatalf("a span of the bridge's own: %v", got[0].Name())
	}
	h.attrs(h.spans.Ended()[0], tool("echo"))

	// Not an execute_tool span: a child CLIENT span.
	h.spans.Reset()
	host := h.under(func(c context.Context) {
		if _, err := h.client.CallTool(c, "echo", map[string]any{"text": "b"}); err != nil {
			t.Fatal(err)
		}
	})
	parentIs(t, h.only("tools/call echo"), host)
}

func TestExecuteToolEnrichmentOff(t *testing.T) {
	h := newHarness(t, nil, []Option{WithToolSpanEnrichment(false)})
	c, span := h.host.Start(ctx(t), "execute_tool echo",
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool")))
	if _, err := h.client.CallTool(c, "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	span.End()
	s := h.only("tools/call echo")
	parentIs(t, s, span.SpanContext())
	h.attrs(s, tool("echo"))
}

// A call carrying its own trace context gets a span from its record, under that context;
// Close removes the bridge.
func TestOwnContextAndClose(t *testing.T) {
	h := newHarness(t, nil, nil)
	const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if _, err := h.client.CallTool(ctx(t), "echo", map[string]any{"text": "a"},
		mcpclient.WithMeta(json.RawMessage(`{"traceparent":"`+own+`"}`))); err != nil {
		t.Fatal(err)
	}
	s := h.only("tools/call echo")
	if p := s.Parent(); !p.IsRemote() || p.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || p.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("parent %v", p)
	}
	h.attrs(s, tool("echo"))
	h.spans.Reset()
	if err := h.bridge.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := h.client.CallTool(ctx(t), "echo_meta", nil)
	if err != nil || strings.Contains(string(raw), "traceparent") || len(h.ended()) != 0 {
		t.Fatalf("after Close: %v %s %d spans", err, raw, len(h.ended()))
	}
}

// A call answered from the response cache sends nothing: its span is never ended (never
// exported). Each page of an all-pages list is an operation: the first names the call's span,
// the later ones are its children (the server saw that span as their parent too).
func TestCacheHitAndPages(t *testing.T) {
	h := newHarness(t, []string{"--cache-ttl-ms", "60000", "--page-size", "2"}, nil)
	before := len(h.spans.Started())
	h.under(func(c context.Context) {
		if _, _, err := h.client.List(c, mcpclient.KindTools, ""); err != nil {
			t.Fatal(err)
		}
	})
	var mine []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Started()[before:] {
		if s.InstrumentationScope().Name == ScopeName {
			mine = append(mine, s)
		}
	}
	if len(mine) != 1 || !mine[0].EndTime().IsZero() || len(h.ended()) != 0 {
		t.Fatalf("a cache hit: %d spans started, %d ended", len(mine), len(h.ended()))
	}
	h.point(map[string]any{"mcp.method.name": "tools/list"}, 1) // the harness's own list only

	var all json.RawMessage
	host := h.under(func(c context.Context) {
		var err error
		if all, err = h.client.ListAll(c, mcpclient.KindTools, mcpclient.WithCacheMode(mcpclient.CacheBypass)); err != nil {
			t.Fatal(err)
		}
	})
	var result struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(all, &result); err != nil {
		t.Fatal(err)
	}
	pages := (len(result.Tools) + 1) / 2
	spans := h.ended()
	if pages < 3 || len(spans) != pages {
		t.Fatalf("%d tools, %d pages, %d spans", len(result.Tools), pages, len(spans))
	}
	var first sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Parent().SpanID() == host.SpanID() {
			first = s
		}
	}
	if first == nil {
		t.Fatal("no page span under the host's")
	}
	for _, s := range spans {
		if s.Name() != "tools/list" || s.SpanKind() != trace.SpanKindClient {
			t.Fatalf("page span %s %v", s.Name(), s.SpanKind())
		}
		h.attrs(s, map[string]any{"mcp.method.name": "tools/list"})
		if s != first {
			parentIs(t, s, first.SpanContext())
			if s.StartTime().Before(first.StartTime()) {
				t.Fatalf("a later page started at %v, the first at %v", s.StartTime(), first.StartTime())
			}
		}
	}
	h.point(map[string]any{"mcp.method.name": "tools/list"}, uint64(1+pages))
}

// Over HTTP the spans carry the server's address and port and the HTTP version; a legacy
// Streamable HTTP session's id is on the spans but not on the data points.
func TestHTTP(t *testing.T) {
	for name, mode := range map[string]mcpclient.Mode{"modern": mcpclient.ModeModern, "legacy": mcpclient.ModeLegacy} {
		t.Run(name, func(t *testing.T) {
			url := startHTTPFixture(t)
			m := regexp.MustCompile(`^http://([0-9.]+):([0-9]+)/`).FindStringSubmatch(url)
			if m == nil {
				t.Fatalf("url %q", url)
			}
			port, _ := strconv.Atoi(m[2])
			conn := map[string]any{"network.transport": "tcp", "network.protocol.name": "http",
				"network.protocol.version": "1.1", "server.address": m[1], "server.port": int64(port)}
			if mode == mcpclient.ModeLegacy {
				conn["mcp.session.id"] = regexp.MustCompile(`^[0-9a-f]{32}$`)
			}
			c, err := mcpclient.NewHTTP(url, mcpclient.WithMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			h := instrument(t, c, nil, conn)
			var raw json.RawMessage
			host := h.under(func(c context.Context) {
				if raw, err = h.client.CallTool(c, "echo_meta", nil); err != nil {
					t.Fatal(err)
				}
			})
			s := h.only("tools/call echo_meta")
			parentIs(t, s, host)
			h.attrs(s, tool("echo_meta"))
			want := fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())
			if !strings.Contains(string(raw), want) {
				t.Fatalf("the server's parent in %s, want %s", raw, want)
			}
			h.point(tool("echo_meta"), 1)
			if err := h.client.Close(); err != nil {
				t.Fatal(err)
			}
			if got := h.sessions(); len(got) != 1 || got[h.session()] != 1 {
				t.Fatalf("sessions %v, want %s", got, h.session())
			}
		})
	}
}

// A legacy session the server expires is renewed inside the call that met it: an
// mcp.session.renewed event of that call's span, which has no error, and a data point of the
// session histogram with error.type session_expired.
func TestSessionRenewed(t *testing.T) {
	url := startHTTPFixture(t, "--expire-session-after", "2")
	m := regexp.MustCompile(`^http://([0-9.]+):([0-9]+)/`).FindStringSubmatch(url)
	port, _ := strconv.Atoi(m[2])
	conn := map[string]any{"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1",
		"server.address": m[1], "server.port": int64(port), "mcp.session.id": regexp.MustCompile(`^[0-9a-f]{32}$`)}
	c, err := mcpclient.NewHTTP(url, mcpclient.WithMode(mcpclient.ModeLegacy))
	if err != nil {
		t.Fatal(err)
	}
	h := instrument(t, c, nil, conn)
	var renewed []sdktrace.ReadOnlySpan
	for i := 0; i < 2; i++ {
		host := h.under(func(c context.Context) {
			if _, _, err := h.client.List(c, mcpclient.KindTools, ""); err != nil {
				t.Fatal(err)
			}
		})
		s := h.only("tools/list")
		parentIs(t, s, host)
		h.attrs(s, map[string]any{"mcp.method.name": "tools/list"})
		status(t, s, codes.Unset, "")
		for _, e := range s.Events() {
			if e.Name == "mcp.session.renewed" {
				renewed = append(renewed, s)
			}
		}
		h.spans.Reset()
	}
	if len(renewed) != 1 {
		t.Fatalf("%d calls met the expired session, want 1", len(renewed))
	}
	expired := h.session("error.type", "session_expired")
	if got := h.sessions(); len(got) != 1 || got[expired] != 1 {
		t.Fatalf("sessions %v, want %s", got, expired)
	}
}

// startHTTPFixture runs the fixture server on 127.0.0.1 and gives its URL; it lives while its
// stdin is open.
func startHTTPFixture(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(fixture, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "fixture: listening on "); ok {
				urls <- l
			}
		}
	}()
	select {
	case url := <-urls:
		return url
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP fixture printed no URL")
	}
	return ""
}

// A call whose ctx ends is cancelled: its span still ends, with error.type cancelled (the
// record may come after the call returned: the bridge keeps the span for it).
func TestCancelled(t *testing.T) {
	h := newHarness(t, nil, nil)
	host := h.under(func(c context.Context) {
		// Cancelled, not a deadline (which the binding hands to the library as its timeout).
		c, cancel := context.WithCancel(c)
		stop := time.AfterFunc(200*time.Millisecond, cancel)
		defer stop.Stop()
		if _, err := h.client.CallTool(c, "hang", nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("hang: %v", err)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for len(h.ended()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s := h.only("tools/call hang")
	parentIs(t, s, host)
	h.attrs(s, with(tool("hang"), "error.type", "cancelled"))
	if s.Status().Code != codes.Error || s.EndTime().Sub(s.StartTime()) < 200*time.Millisecond {
		t.Fatalf("status %+v, lasted %v", s.Status(), s.EndTime().Sub(s.StartTime()))
	}
	h.point(with(tool("hang"), "error.type", "cancelled"), 1)
}

// With span_tool_payloads on, a tool call's span carries its arguments and result as JSON
// text; the histogram does not.
func TestToolPayloads(t *testing.T) {
	h := newHarness(t, nil, nil, mcpclient.WithSetting("span_tool_payloads", true))
	var raw json.RawMessage
	host := h.under(func(c context.Context) {
		var err error
		if raw, err = h.client.CallTool(c, "echo", map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
	})
	s := h.only("tools/call echo")
	parentIs(t, s, host)
	got := map[string]string{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	var args, result any
	if err := json.Unmarshal([]byte(got["gen_ai.tool.call.arguments"]), &args); err != nil || fmt.Sprint(args) != "map[text:hi]" {
		t.Fatalf("arguments %q: %v", got["gen_ai.tool.call.arguments"], err)
	}
	var want any
	_ = json.Unmarshal(raw, &want)
	if err := json.Unmarshal([]byte(got["gen_ai.tool.call.result"]), &result); err != nil || fmt.Sprint(result) != fmt.Sprint(want) {
		t.Fatalf("result %q, the call returned %s", got["gen_ai.tool.call.result"], raw)
	}
	h.attrs(s, with(tool("echo"), "gen_ai.tool.call.arguments", got["gen_ai.tool.call.arguments"],
		"gen_ai.tool.call.result", got["gen_ai.tool.call.result"]))
	h.point(tool("echo"), 1)
}
