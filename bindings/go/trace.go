package mcpclient

import (
	"context"
	"encoding/json"
	"sync/atomic"
)

// TraceContext is W3C trace context (SEP-414): Traceparent, and optionally Tracestate and
// Baggage, in their W3C formats; empty strings are absent.
type TraceContext struct {
	Traceparent string
	Tracestate  string
	Baggage     string
}

// TraceContextSource gives the trace context of the call about to start, from the call's ctx
// (for example its OpenTelemetry span: see the otel subpackage). A zero TraceContext is none.
type TraceContextSource func(ctx context.Context) TraceContext

type traceSourceBox struct{ fn TraceContextSource }

// SetTraceContext sets (nil removes) the client's trace context source: it is asked on the
// calling goroutine, with the call's ctx, at the start of each call whose WithMeta has no
// traceparent or baggage member, and what it gives goes on every request of the call (MRTR
// retries, task polls, pages, the retry after a reconnect). An invalid value fails the call
// with StatusInvalidArg before anything is sent. (The Go form of the C ABI's
// mcp_client_set_trace_context_fn, asked in Go so that it sees the call's ctx.)
func (c *Client) SetTraceContext(fn TraceContextSource) {
	if fn == nil {
		c.core.trace.Store(nil)
		return
	}
	c.core.trace.Store(&traceSourceBox{fn: fn})
}

// withTrace adds the source's context to the call's _meta entries when the call has none of
// its own; the library checks the values.
func withTrace(ctx context.Context, source *atomic.Pointer[traceSourceBox], s *callSettings) *Error {
	box := source.Load()
	if box == nil {
		return nil
	}
	meta := map[string]json.RawMessage{}
	if s.meta != nil {
		if err := json.Unmarshal(s.meta, &meta); err != nil {
			return nil // not an object: the library refuses it with its own message
		}
		if meta["traceparent"] != nil || meta["baggage"] != nil {
			return nil
		}
	}
	t := box.fn(ctx)
	for key, value := range map[string]string{"traceparent": t.Traceparent, "tracestate": t.Tracestate, "baggage": t.Baggage} {
		if value != "" {
			text, _ := json.Marshal(value)
			meta[key] = text
		}
	}
	if len(meta) == 0 {
		return nil
	}
	text, err := json.Marshal(meta)
	if err != nil {
		return &Error{Status: StatusInvalidArg, Message: "the call's _meta with its trace context: " + err.Error()}
	}
	s.meta = text
	return nil
}
