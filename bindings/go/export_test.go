package mcpclient

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The fixture's tools exported for OpenAI Responses, a faked reply's calls found and made.
func TestExportFindAndDispatch(t *testing.T) {
	c := connected(t, nil)
	ctx := testCtx(t)
	tools, err := c.ListAll(ctx, KindTools)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := ExportTools(tools, map[string]any{"format": "openai-responses", "strict": true})
	if err != nil {
		t.Fatal(err)
	}
	reply := json.RawMessage(`{"output":[{"type":"function_call","call_id":"c1","name":"echo","arguments":"{\"text\":\"go\"}"},
		{"type":"function_call","call_id":"c2","name":"echo","arguments":"{oops"}]}`)
	raw, err := FindCalls(exported, reply)
	if err != nil {
		t.Fatal(err)
	}
	var calls []json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil || len(calls) != 2 {
		t.Fatalf("calls: %s (%v)", raw, err)
	}
	msg, err := c.DispatchToolCall(ctx, exported, calls[0], nil)
	if err != nil || string(msg) != `{"type":"function_call_output","call_id":"c1","output":"go"}` {
		t.Fatalf("dispatch: %s (%v)", msg, err)
	}
	msg, err = c.DispatchToolCall(ctx, exported, calls[1], nil)
	if err != nil || !contains(string(msg), "not valid JSON") || !contains(string(msg), `"call_id":"c2"`) {
		t.Fatalf("bad arguments: %s (%v)", msg, err)
	}
	msg, err = ResultMessage(exported, calls[0], json.RawMessage(`{"content":[{"type":"text","text":"abcdef"}]}`), map[string]any{"max_chars": 2})
	if err != nil || !contains(string(msg), "[truncated: 2 of 6 characters shown]") {
		t.Fatalf("result: %s (%v)", msg, err)
	}
	if _, err := ExportTools(tools, map[string]any{"format": "cohere"}); err == nil {
		t.Fatal("an unknown format was accepted")
	}
}

// A hub of two fixture members, one of each era, the legacy one's filter withholding "add":
// its merged list exported, each call made on the member its name routes to; a withheld or
// unknown name is a message the model reads.
func TestHubDispatch(t *testing.T) {
	text := fmt.Sprintf(`{"mcpServers": {
		"new": {"command": %q, "args": ["--era", "modern"]},
		"old": {"command": %q, "args": ["--era", "legacy"], "mcp_client": {"tools": {"deny": ["add"]}}}}}`,
		fixture, fixture)
	h, err := NewHubFromText(text, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := testCtx(t)
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tools, err := h.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := ExportTools(tools, map[string]any{"format": "openai-chat"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Routes map[string]struct{ Server, Tool string } `json:"routes"`
	}
	if err := json.Unmarshal(exported, &doc); err != nil || doc.Routes["old__echo"].Server != "old" ||
		doc.Routes["old__echo"].Tool != "echo" {
		t.Fatalf("routes: %s (%v)", exported, err)
	}
	call := func(name, args string) string {
		c := map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}
		msg, err := h.DispatchToolCall(ctx, exported, c, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(msg)
	}
	if m := call("old__echo", `{"text":"from old"}`); !contains(m, `"content":"from old"`) || !contains(m, `"role":"tool"`) {
		t.Fatalf("old__echo: %s", m)
	}
	if m := call("new__echo_meta", `{}`); !contains(m, "2026-07-28") {
		t.Fatalf("the modern member: %s", m)
	}
	if m := call("old__echo_meta", `{}`); contains(m, "2026-07-28") {
		t.Fatalf("the legacy member: %s", m)
	}
	for _, name := range []string{"old__add", "nobody__echo"} {
		if m := call(name, `{"a":1,"b":2}`); !contains(m, "There is no tool named") {
			t.Fatalf("%s: %s", name, m)
		}
	}
}
