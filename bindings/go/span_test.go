package mcpclient

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// Each operation ends as one span by the OpenTelemetry MCP conventions; a tool error sets
// error.type; removing the listener stops them.
func TestSpanListener(t *testing.T) {
	c := newFixture(t, nil)
	type span struct {
		Name       string
		Kind       string
		Attributes map[string]any
		Status     struct{ Code string }
	}
	spans := make(chan span, 16)
	if err := c.OnSpan(func(raw json.RawMessage) {
		var s span
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("span %s: %v", raw, err)
		}
		spans <- s
	}); err != nil {
		t.Fatal(err)
	}
	next := func() span {
		select {
		case s := <-spans:
			return s
		case <-time.After(5 * time.Second):
			t.Fatal("no span")
		}
		return span{}
	}
	if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "fail", nil); err != nil {
		t.Fatal(err)
	}
	// The first call connected: its handshake's record comes first.
	if hs := next(); hs.Name != "server/discover" || hs.Attributes["mcp.method.name"] != "server/discover" || hs.Status.Code != "unset" {
		t.Fatalf("handshake span: %+v", hs)
	}
	ok, failed := next(), next()
	if ok.Name != "tools/call echo" || ok.Kind != "client" || ok.Attributes["gen_ai.tool.name"] != "echo" ||
		ok.Attributes["network.transport"] != "pipe" || ok.Attributes["error.type"] != nil {
		t.Fatalf("echo span: %+v", ok)
	}
	if failed.Name != "tools/call fail" || failed.Attributes["error.type"] != "tool_error" || failed.Status.Code != "error" {
		t.Fatalf("fail span: %+v", failed)
	}
	if err := c.OnSpan(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "b"}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-spans:
		t.Fatalf("a span after removal: %+v", s)
	case <-time.After(200 * time.Millisecond):
	}
}

// OnSpanSync hands a call's record over before the call returns, on the delivering thread,
// and replaces the OnSpan listener.
func TestSpanListenerSync(t *testing.T) {
	c := newFixture(t, nil)
	queued := make(chan json.RawMessage, 4)
	if err := c.OnSpan(func(raw json.RawMessage) { queued <- raw }); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	if err := c.OnSpanSync(func(raw json.RawMessage) {
		var s struct{ Name string }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("record %s: %v", raw, err)
		}
		mu.Lock()
		got = append(got, s.Name)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"echo", "fail"} {
		if _, err := c.CallTool(testCtx(t), tool, map[string]any{"text": "a"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n, last := len(got), ""
		if n > 0 {
			last = got[n-1]
		}
		mu.Unlock()
		if last != "tools/call "+tool {
			t.Fatalf("after CallTool(%s) returned, the records seen were %v", tool, got)
		}
	}
	select {
	case raw := <-queued:
		t.Fatalf("the replaced OnSpan listener got %s", raw)
	case <-time.After(200 * time.Millisecond):
	}
	// A panicking listener loses its record, not the call nor the process.
	calls := 0
	if err := c.OnSpanSync(func(json.RawMessage) { calls++; panic("listener") }); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "p"}); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Fatalf("the panicking listener ran %d times", calls)
	}
}
