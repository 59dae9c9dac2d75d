package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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
