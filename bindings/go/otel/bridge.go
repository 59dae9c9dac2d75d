package mcpotel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the bridge's tracer and meter.
const ScopeName = "github.com/mcp-client/mcp_client/bindings/go/otel"

// Metric names, unit and bucket boundaries, as the conventions give them.
const (
	OperationDuration = "mcp.client.operation.duration"
	SessionDuration   = "mcp.client.session.duration"
	DurationUnit      = "s"
)

// DurationBuckets are the explicit bucket boundaries (seconds) of both histograms.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// ProvisionalName names a bridge span at its start when the binding cannot tell the call's
// method beforehand (mcpclient.Operation is empty: Connect, tasks, skills, apps,
// DispatchToolCall); the operation's record names it when it ends.
const ProvisionalName = "mcp"

// lateLimit bounds the spans of failed calls kept for a record that comes after the call
// returned (a cancelled call's operation may end after its caller stopped waiting).
const lateLimit = 64

// Option configures Instrument.
type Option func(*config)

type config struct {
	tracer     trace.TracerProvider
	meter      metric.MeterProvider
	propagator propagation.TextMapPropagator
	enrich     bool
}

// WithTracerProvider sets the tracer provider (default: the global one, read at Instrument).
func WithTracerProvider(p trace.TracerProvider) Option { return func(c *config) { c.tracer = p } }

// WithMeterProvider sets the meter provider (default: the global one, read at Instrument).
func WithMeterProvider(p metric.MeterProvider) Option { return func(c *config) { c.meter = p } }

// WithPropagator sets the propagator whose traceparent, tracestate and baggage fields go into
// each request's params._meta. Default: the global propagator when it writes traceparent,
// else W3C Trace Context and Baggage.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.propagator = p }
}

// WithToolSpanEnrichment turns the enrichment of the host's open execute_tool span on (the
// default) or off (then every tools/call gets its own CLIENT span, a child of that span).
func WithToolSpanEnrichment(on bool) Option { return func(c *config) { c.enrich = on } }

type toolSpanKey struct{}

// ContextWithToolSpan marks the span current in ctx as the host's execute_tool span for the
// tool call about to be made, for tracers whose spans do not expose their name and attributes
// (the OpenTelemetry SDK's do: its spans named "execute_tool …" or carrying
// gen_ai.operation.name=execute_tool are found without this).
func ContextWithToolSpan(ctx context.Context) context.Context {
	return context.WithValue(ctx, toolSpanKey{}, trace.SpanContextFromContext(ctx))
}

// Bridge is one client's (or one hub's) instrumentation.
type Bridge struct {
	client     instrumented
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	operation  metric.Float64Histogram
	session    metric.Float64Histogram
	enrich     bool

	mu      sync.Mutex
	started map[trace.SpanID]*started // the bridge's spans of calls in flight
	late    []*started                // ended calls whose span waits for its record
	hosts   map[trace.SpanID]*host    // the host's execute_tool spans of calls in flight
}

// started is a CLIENT span the bridge started for a call, with the records that named it as
// their parent so far.
type started struct {
	span    trace.Span
	method  string // the call's method, when the binding knew it (the record that names the span)
	records []*record
}

type host struct {
	span     trace.Span
	calls    int
	enriched bool
}

// instrumented is what a bridge attaches to: a *mcpclient.Client or a *mcpclient.Hub.
type instrumented interface {
	SetTraceScope(mcpclient.TraceScope)
	OnSpanSync(func(json.RawMessage)) error
}

// Instrument sets c's trace context source and record listener (SetTraceScope, OnSpanSync):
// it replaces whatever was set there. Close removes them.
func Instrument(c *mcpclient.Client, opts ...Option) (*Bridge, error) {
	return attach(c, opts)
}

// InstrumentHub is Instrument for a hub: every member's operations, members added later
// included, become spans and measurements as a client's do, each with the attribute
// mcp.server.name (the member's name, also on the histograms' data points). A routed call's
// span is its member request's (named by the member's own tool name, "tools/call echo"); the
// member tool list the hub fetches first to route the call is a child span of it. A host's
// execute_tool span for the exported name ("fix__echo") is enriched instead, keeping its
// gen_ai.tool.name. The hub's lists (ListTools, ...) carry no context: their spans are roots.
func InstrumentHub(h *mcpclient.Hub, opts ...Option) (*Bridge, error) {
	return attach(h, opts)
}

func attach(c instrumented, opts []Option) (*Bridge, error) {
	cfg := config{enrich: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tracer == nil {
		cfg.tracer = otel.GetTracerProvider()
	}
	if cfg.meter == nil {
		cfg.meter = otel.GetMeterProvider()
	}
	meter := cfg.meter.Meter(ScopeName)
	operation, err := meter.Float64Histogram(OperationDuration, metric.WithUnit(DurationUnit),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		return nil, err
	}
	session, err := meter.Float64Histogram(SessionDuration, metric.WithUnit(DurationUnit),
		metric.WithDescription("The duration of the MCP session as observed on the MCP client."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		return nil, err
	}
	b := &Bridge{
		client:     c,
		tracer:     cfg.tracer.Tracer(ScopeName),
		propagator: cfg.propagator,
		operation:  operation,
		session:    session,
		enrich:     cfg.enrich,
		started:    map[trace.SpanID]*started{},
		hosts:      map[trace.SpanID]*host{},
	}
	if err := c.OnSpanSync(b.onRecord); err != nil {
		return nil, err
	}
	c.SetTraceScope(b.scope)
	return b, nil
}

// Close removes the bridge's source and listener from the client.
func (b *Bridge) Close() error {
	b.client.SetTraceScope(nil)
	return b.client.OnSpanSync(nil)
}

var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

func (b *Bridge) inject(ctx context.Context) mcpclient.TraceContext {
	p := b.propagator
	if p == nil {
		if p = otel.GetTextMapPropagator(); !slices.Contains(p.Fields(), "traceparent") {
			p = w3c
		}
	}
	carrier := propagation.MapCarrier{}
	p.Inject(ctx, carrier)
	if carrier["traceparent"] == "" {
		return mcpclient.TraceContext{Baggage: carrier["baggage"]}
	}
	return mcpclient.TraceContext{Traceparent: carrier["traceparent"], Tracestate: carrier["tracestate"], Baggage: carrier["baggage"]}
}

// scope is asked at the start of each call: it finds the host's execute_tool span in ctx, or
// starts the call's CLIENT span, and gives that span's context for the wire.
func (b *Bridge) scope(ctx context.Context, op mcpclient.Operation) (mcpclient.TraceContext, func(error)) {
	current := trace.SpanFromContext(ctx)
	if b.enrich && (op.Method == "tools/call" || op.Method == "") && isToolSpan(ctx, current) {
		id := current.SpanContext().SpanID()
		b.mu.Lock()
		h := b.hosts[id]
		if h == nil {
			h = &host{span: current}
			b.hosts[id] = h
		}
		h.calls++
		b.mu.Unlock()
		return b.inject(ctx), func(error) {
			b.mu.Lock()
			if h.calls--; h.calls == 0 {
				delete(b.hosts, id)
			}
			b.mu.Unlock()
		}
	}
	name, attrs := startOf(op)
	ctx, span := b.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	sc := span.SpanContext()
	if !sc.IsValid() {
		return b.inject(ctx), nil // no tracing here: records alone make spans
	}
	s := &started{span: span, method: op.Method}
	b.mu.Lock()
	b.started[sc.SpanID()] = s
	b.mu.Unlock()
	return b.inject(ctx), func(err error) { b.ended(s, err) }
}

// startOf is the span's name and attributes by the conventions as far as op tells them, so that
// a sampler sees them at the start.
func startOf(op mcpclient.Operation) (string, []attribute.KeyValue) {
	if op.Method == "" {
		return ProvisionalName, nil
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", op.Method)}
	name := op.Method
	switch op.Method {
	case "tools/call":
		name += " " + op.Target
		attrs = append(attrs, attribute.String("gen_ai.tool.name", op.Target), attribute.String("gen_ai.operation.name", "execute_tool"))
	case "prompts/get":
		name += " " + op.Target
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", op.Target))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		attrs = append(attrs, attribute.String("mcp.resource.uri", op.Target))
	}
	return name, attrs
}

// ended runs when the call returned: its records have all been delivered (the client hands
// them over before the call returns), so the earliest-started one is the call's own operation
// and names the span; any others (a request the library made for the call — the handshake of
// a connect the call started, which begins after the call and ends before it, or the tools/list
// for output schemas — or each page of an all-pages list) become its children.
func (b *Bridge) ended(s *started, err error) {
	id := s.span.SpanContext().SpanID()
	b.mu.Lock()
	delete(b.started, id)
	records := s.records
	s.records = nil
	if len(records) == 0 && err != nil {
		// A failed call may have sent its request and still be finishing (cancelled):
		// its record may follow.
		b.late = append(b.late, s)
		if len(b.late) > lateLimit {
			b.late = b.late[1:]
		}
	}
	b.mu.Unlock()
	if len(records) == 0 {
		// Nothing went on the wire (a cache hit, a call refused before sending): the span is
		// dropped unended, never exported.
		return
	}
	// The call's own record: the earliest-started of the call's method (a hub's routed call
	// may list its member's tools before it sends the call), else the earliest-started.
	first := records[0]
	for _, r := range records[1:] {
		own, firstOwn := r.stringAttr("mcp.method.name") == s.method, first.stringAttr("mcp.method.name") == s.method
		if (own && !firstOwn) || (own == firstOwn && r.StartUnixNano < first.StartUnixNano) {
			first = r
		}
	}
	b.finish(s.span, first)
	parent := trace.ContextWithSpan(context.Background(), s.span)
	for _, r := range records {
		if r != first {
			b.spanFrom(parent, r)
		}
	}
}

// record is the library's record of an operation or a session (docs/observability.md).
type record struct {
	Record        string                     `json:"record"`
	Name          string                     `json:"name"`
	StartUnixNano int64                      `json:"start_unix_nano"`
	EndUnixNano   int64                      `json:"end_unix_nano"`
	Attributes    map[string]json.RawMessage `json:"attributes"`
	Events        []struct {
		Name         string                     `json:"name"`
		TimeUnixNano int64                      `json:"time_unix_nano"`
		Attributes   map[string]json.RawMessage `json:"attributes"`
	} `json:"events"`
	Status struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Parent *struct {
		Traceparent string `json:"traceparent"`
		Tracestate  string `json:"tracestate"`
	} `json:"parent"`
}

func (r *record) seconds() float64 {
	return float64(r.EndUnixNano-r.StartUnixNano) / float64(time.Second)
}

// onRecord gets each record on the library's delivering thread, before the call returns.
func (b *Bridge) onRecord(raw json.RawMessage) {
	r := new(record)
	if err := json.Unmarshal(raw, r); err != nil {
		otel.Handle(errors.New("mcpotel: a record that is not JSON: " + err.Error()))
		return
	}
	if r.Record == "session" {
		b.session.Record(context.Background(), r.seconds(), metric.WithAttributeSet(only(r.Attributes, sessionMetricKeys)))
		return
	}
	// A record without "record" comes from a library that reports spans only.
	var parent trace.SpanContext
	if r.Parent != nil {
		carrier := propagation.MapCarrier{"traceparent": r.Parent.Traceparent}
		if r.Parent.Tracestate != "" {
			carrier["tracestate"] = r.Parent.Tracestate
		}
		parent = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	}
	id := parent.SpanID()
	b.mu.Lock()
	if s := b.started[id]; s != nil && parent.IsValid() && s.span.SpanContext().TraceID() == parent.TraceID() {
		s.records = append(s.records, r)
		b.mu.Unlock()
		b.measure(trace.ContextWithSpan(context.Background(), s.span), r)
		return
	}
	if i := slices.IndexFunc(b.late, func(s *started) bool {
		return parent.IsValid() && s.span.SpanContext().SpanID() == id && s.span.SpanContext().TraceID() == parent.TraceID()
	}); i >= 0 {
		s := b.late[i]
		b.late = slices.Delete(b.late, i, i+1)
		b.mu.Unlock()
		b.finish(s.span, r)
		b.measure(trace.ContextWithSpan(context.Background(), s.span), r)
		return
	}
	h := b.hosts[id]
	enrich := false
	if h != nil && parent.IsValid() && !h.enriched && h.span.SpanContext().TraceID() == parent.TraceID() &&
		r.stringAttr("mcp.method.name") == "tools/call" {
		h.enriched, enrich = true, true
	}
	b.mu.Unlock()
	ctx := context.Background()
	switch {
	case enrich:
		b.enrichHost(h.span, r)
		ctx = trace.ContextWithSpan(ctx, h.span)
	case h != nil && parent.IsValid():
		ctx = trace.ContextWithSpan(ctx, b.spanFrom(trace.ContextWithSpan(ctx, h.span), r))
	case parent.IsValid():
		ctx = trace.ContextWithSpan(ctx, b.spanFrom(trace.ContextWithRemoteSpanContext(ctx, parent), r))
	default:
		ctx = trace.ContextWithSpan(ctx, b.spanFrom(ctx, r))
	}
	b.measure(ctx, r)
}

// The attributes the conventions list for each histogram: a span's others (jsonrpc.request.id,
// mcp.session.id, mcp.resource.uri, gen_ai.tool.call.*) are high cardinality or opt-in.
var (
	operationMetricKeys = []string{"mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name",
		"rpc.response.status_code", "gen_ai.operation.name", "mcp.protocol.version", "network.protocol.name",
		"network.protocol.version", "network.transport", "server.address", "server.port", "mcp.server.name"}
	sessionMetricKeys = []string{"error.type", "mcp.protocol.version", "network.protocol.name",
		"network.protocol.version", "network.transport", "server.address", "server.port", "mcp.server.name"}
)

// only is the attribute set of the record's attributes named in keys.
func only(m map[string]json.RawMessage, keys []string) attribute.Set {
	var kept []attribute.KeyValue
	for _, k := range keys {
		if raw, ok := m[k]; ok {
			kept = append(kept, convert(k, raw))
		}
	}
	return attribute.NewSet(kept...)
}

// measure records the operation's duration.
func (b *Bridge) measure(ctx context.Context, r *record) {
	b.operation.Record(ctx, r.seconds(), metric.WithAttributeSet(only(r.Attributes, operationMetricKeys)))
}

// finish names the bridge's span by the record and ends it when the operation ended.
func (b *Bridge) finish(span trace.Span, r *record) {
	span.SetName(r.Name)
	span.SetAttributes(attributes(r.Attributes)...)
	addEvents(span, r)
	if r.Status.Code == "error" {
		span.SetStatus(codes.Error, r.Status.Message)
	}
	span.End(trace.WithTimestamp(time.Unix(0, r.EndUnixNano)))
}

// spanFrom makes a whole span from a record, under parent.
func (b *Bridge) spanFrom(parent context.Context, r *record) trace.Span {
	_, span := b.tracer.Start(parent, r.Name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(time.Unix(0, r.StartUnixNano)), trace.WithAttributes(attributes(r.Attributes)...))
	addEvents(span, r)
	if r.Status.Code == "error" {
		span.SetStatus(codes.Error, r.Status.Message)
	}
	span.End(trace.WithTimestamp(time.Unix(0, r.EndUnixNano)))
	return span
}

// enrichHost adds the operation's attributes and events to the host's execute_tool span and,
// when the call failed, its error status; the span stays the host's to end.
func (b *Bridge) enrichHost(span trace.Span, r *record) {
	attrs := attributes(r.Attributes)
	if _, member := r.Attributes["mcp.server.name"]; member {
		// A hub member's: the host named the tool as its model saw it (the exported name).
		attrs = slices.DeleteFunc(attrs, func(kv attribute.KeyValue) bool { return kv.Key == "gen_ai.tool.name" })
	}
	span.SetAttributes(attrs...)
	addEvents(span, r)
	if r.Status.Code == "error" {
		span.SetStatus(codes.Error, r.Status.Message)
	}
}

func addEvents(span trace.Span, r *record) {
	for _, e := range r.Events {
		span.AddEvent(e.Name, trace.WithTimestamp(time.Unix(0, e.TimeUnixNano)),
			trace.WithAttributes(attributes(e.Attributes)...))
	}
}

func (r *record) stringAttr(key string) string {
	var s string
	_ = json.Unmarshal(r.Attributes[key], &s)
	return s
}

// attributes converts a record's JSON attributes: strings, booleans, integers (int64),
// other numbers (float64), arrays of one of those kinds; anything else as its JSON text.
func attributes(m map[string]json.RawMessage) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(m))
	for k, raw := range m {
		out = append(out, convert(k, raw))
	}
	slices.SortFunc(out, func(a, b attribute.KeyValue) int { return strings.Compare(string(a.Key), string(b.Key)) })
	return out
}

func convert(key string, raw json.RawMessage) attribute.KeyValue {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return attribute.String(key, string(raw))
	}
	switch x := v.(type) {
	case string:
		return attribute.String(key, x)
	case bool:
		return attribute.Bool(key, x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return attribute.Int64(key, i)
		}
		if f, err := x.Float64(); err == nil {
			return attribute.Float64(key, f)
		}
	case []any:
		if kv, ok := convertSlice(key, x); ok {
			return kv
		}
	}
	return attribute.String(key, string(bytes.TrimSpace(raw)))
}

func convertSlice(key string, xs []any) (attribute.KeyValue, bool) {
	var ss []string
	var bs []bool
	var is []int64
	for _, x := range xs {
		switch v := x.(type) {
		case string:
			ss = append(ss, v)
		case bool:
			bs = append(bs, v)
		case json.Number:
			i, err := v.Int64()
			if err != nil {
				return attribute.KeyValue{}, false
			}
			is = append(is, i)
		default:
			return attribute.KeyValue{}, false
		}
	}
	switch len(xs) {
	case len(ss):
		return attribute.StringSlice(key, ss), true
	case len(bs):
		return attribute.BoolSlice(key, bs), true
	case len(is):
		return attribute.Int64Slice(key, is), true
	}
	return attribute.KeyValue{}, false
}

// isToolSpan tells whether span is the host's open execute_tool span: marked by
// ContextWithToolSpan, or an SDK span named "execute_tool …" or with
// gen_ai.operation.name=execute_tool.
func isToolSpan(ctx context.Context, span trace.Span) bool {
	sc := span.SpanContext()
	if !sc.IsValid() || !span.IsRecording() {
		return false
	}
	if marked, ok := ctx.Value(toolSpanKey{}).(trace.SpanContext); ok && marked.Equal(sc) {
		return true
	}
	if a, ok := span.(interface{ Attributes() []attribute.KeyValue }); ok {
		for _, kv := range a.Attributes() {
			if kv.Key == "gen_ai.operation.name" {
				return kv.Value.AsString() == "execute_tool"
			}
		}
	}
	if n, ok := span.(interface{ Name() string }); ok {
		return n.Name() == "execute_tool" || strings.HasPrefix(n.Name(), "execute_tool ")
	}
	return false
}
