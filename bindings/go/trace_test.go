package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

type traceKey struct{}

// The source sees the call's ctx, its members reach the server exactly, a call's own members
// win without asking, an invalid value fails the call, and nil removes the source.
func TestTraceContextSource(t *testing.T) {
	c := connected(t, nil, WithMode(ModeModern))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	asked := 0
	c.SetTraceContext(func(ctx context.Context) TraceContext {
		asked++
		p, _ := ctx.Value(traceKey{}).(string)
		return TraceContext{Traceparent: p, Tracestate: "rojo=1", Baggage: "k=v"}
	})
	ctx := context.WithValue(context.Background(), traceKey{}, parent)
	raw, err := c.CallTool(ctx, "echo_meta", nil, WithMeta(json.RawMessage(`{"x":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	var result struct {
		Meta map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"traceparent": parent, "tracestate": "rojo=1", "baggage": "k=v", "x": 1.0}
	for k, v := range want {
		if result.Meta[k] != v {
			t.Fatalf("%s: got %v in %s", k, result.Meta[k], raw)
		}
	}
	own := `{"traceparent":"00-11111111111111111111111111111111-2222222222222222-00"}`
	raw, err = c.CallTool(ctx, "echo_meta", nil, WithMeta(json.RawMessage(own)))
	if err != nil || !strings.Contains(string(raw), "2222222222222222") || strings.Contains(string(raw), "rojo") || asked != 1 {
		t.Fatalf("the call's own context: %v %s (asked %d)", err, raw, asked)
	}
	_, err = c.CallTool(context.WithValue(ctx, traceKey{}, "bad"), "echo_meta", nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArg || !strings.Contains(e.Message, "traceparent") {
		t.Fatalf("invalid traceparent: %v", err)
	}
	c.SetTraceContext(nil)
	raw, err = c.CallTool(ctx, "echo_meta", nil)
	if err != nil || strings.Contains(string(raw), "traceparent") {
		t.Fatalf("removed: %v %s", err, raw)
	}
}

// A scope's end runs once per call that asked it, after the call's record was delivered and
// before the call returns, with the call's error; the call's own context skips it.
func TestTraceScope(t *testing.T) {
	c := connected(t, nil, WithMode(ModeModern))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var steps []string // the calling goroutine and the delivering thread append in turn
	var mu sync.Mutex
	step := func(s string) { mu.Lock(); steps = append(steps, s); mu.Unlock() }
	if err := c.OnSpanSync(func(raw json.RawMessage) {
		var s struct{ Name string }
		_ = json.Unmarshal(raw, &s)
		step("record " + s.Name)
	}); err != nil {
		t.Fatal(err)
	}
	var ended []error
	c.SetTraceScope(func(ctx context.Context, op Operation) (TraceContext, func(error)) {
		p, _ := ctx.Value(traceKey{}).(string)
		step("ask " + op.Method + " " + op.Target)
		return TraceContext{Traceparent: p}, func(err error) {
			ended = append(ended, err)
			step("end")
		}
	})
	// want lists the steps in order; a call's first tools/call may be followed by the
	// tools/list the library sends for the output schema (its own operation, its own record).
	check := func(want ...string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		var got []string
		for _, s := range steps {
			if s != "record tools/list" {
				got = append(got, s)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("steps %q, want %q", steps, want)
		}
		steps = nil
	}
	ctx := context.WithValue(context.Background(), traceKey{}, parent)
	raw, err := c.CallTool(ctx, "echo_meta", nil)
	if err != nil || !strings.Contains(string(raw), parent) {
		t.Fatalf("echo_meta: %v %s", err, raw)
	}
	check("ask tools/call echo_meta", "record tools/call echo_meta", "end")
	if len(ended) != 1 || ended[0] != nil {
		t.Fatalf("ended %v", ended)
	}
	_, err = c.Request(ctx, "no/such_method", nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("unknown method: %v", err)
	}
	check("ask no/such_method ", "record no/such_method", "end")
	if len(ended) != 2 || ended[1] != err {
		t.Fatalf("ended %v, the call failed with %v", ended, err)
	}
	_, err = c.CallTool(context.WithValue(ctx, traceKey{}, "bad"), "echo_meta", nil)
	if !errors.As(err, &e) || e.Status != StatusInvalidArg {
		t.Fatalf("invalid traceparent: %v", err)
	}
	check("ask tools/call echo_meta", "end") // refused before sending: no operation, no record
	if len(ended) != 3 || ended[2] != err {
		t.Fatalf("ended %v, the call failed with %v", ended, err)
	}
	own := `{"traceparent":"00-11111111111111111111111111111111-2222222222222222-00"}`
	if _, err := c.CallTool(ctx, "echo_meta", nil, WithMeta(json.RawMessage(own))); err != nil {
		t.Fatal(err)
	}
	check("record tools/call echo_meta")
	// The operation as far as the binding knows it beforehand.
	if _, _, err := c.List(ctx, KindPrompts, ""); err != nil {
		t.Fatal(err)
	}
	check("ask prompts/list ", "record prompts/list", "end")
	if _, err := c.ReadResource(ctx, "fixture://static"); err != nil {
		t.Fatal(err)
	}
	check("ask resources/read fixture://static", "record resources/read", "end")
	c.SetTraceScope(nil)
	if raw, err := c.CallTool(ctx, "echo_meta", nil); err != nil || strings.Contains(string(raw), "traceparent") {
		t.Fatalf("removed: %v %s", err, raw)
	}
	check("record tools/call echo_meta")
	if len(ended) != 5 || ended[3] != nil || ended[4] != nil {
		t.Fatalf("ended %v", ended)
	}
}
