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

// Operation is what a call will send, as far as the binding knows before it starts: the MCP
// method (tools/call, prompts/get, resources/read, resources/subscribe, resources/unsubscribe,
// a list method, completion/complete, ping, logging/setLevel, a Request's method; empty for
// calls whose requests the library chooses: Connect, tasks, skills, apps, DispatchToolCall) and
// its target: the tool's or prompt's name, or the resource's URI.
type Operation struct {
	Method string
	Target string
}

// TraceScope is a TraceContextSource that also gets the call's Operation and is told when the
// call has ended: besides the context it gives a function (nil for none) that the client calls
// exactly once, after the call completed (its span records, if any, already delivered to an
// OnSpanSync listener) and before the call returns, with the call's error (nil on success). A
// bridge uses it to start a span for the call and to drop it when the call sent nothing (a
// cache hit, a call refused before sending).
type TraceScope func(ctx context.Context, op Operation) (TraceContext, func(err error))

type traceSourceBox struct {
	fn    TraceContextSource
	scope TraceScope
}

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

// SetTraceScope sets (nil removes) a trace context source that is also told when each call
// ends (see TraceScope); it replaces SetTraceContext's source, and is asked the same way: on
// the calling goroutine, with the call's ctx, at the start of each call whose WithMeta has no
// traceparent or baggage member.
func (c *Client) SetTraceScope(fn TraceScope) {
	if fn == nil {
		c.core.trace.Store(nil)
		return
	}
	c.core.trace.Store(&traceSourceBox{scope: fn})
}

// ask gives the source's context and the function to call when the call ends (nil for none).
func (b *traceSourceBox) ask(ctx context.Context, op Operation) (TraceContext, func(error)) {
	if b.scope != nil {
		return b.scope(ctx, op)
	}
	return b.fn(ctx), nil
}

// withTrace adds the source's context to the call's _meta entries when the call has none of
// its own; the library checks the values. end (never nil) is to be called once the call ended,
// with its error; on a non-nil *Error it has been called already.
func withTrace(ctx context.Context, source *atomic.Pointer[traceSourceBox], s *callSettings) (end func(error), e *Error) {
	end = func(error) {}
	box := source.Load()
	if box == nil {
		return end, nil
	}
	meta := map[string]json.RawMessage{}
	if s.meta != nil {
		if err := json.Unmarshal(s.meta, &meta); err != nil {
			return end, nil // not an object: the library refuses it with its own message
		}
		if meta["traceparent"] != nil || meta["baggage"] != nil {
			return end, nil
		}
	}
	t, done := box.ask(ctx, s.op)
	if done != nil {
		end = done
	}
	for key, value := range map[string]string{"traceparent": t.Traceparent, "tracestate": t.Tracestate, "baggage": t.Baggage} {
		if value != "" {
			text, _ := json.Marshal(value)
			meta[key] = text
		}
	}
	if len(meta) == 0 {
		return end, nil
	}
	text, err := json.Marshal(meta)
	if err != nil {
		e = &Error{Status: StatusInvalidArg, Message: "the call's _meta with its trace context: " + err.Error()}
		end(e)
		return end, e
	}
	s.meta = text
	return end, nil
}
