package mcpclient

import (
	"encoding/json"
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
