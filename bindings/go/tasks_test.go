package mcpclient

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Issue 17 from Go: the tasks extension, manual input mode and -32042.
func TestTasksFollowCancelAndResume(t *testing.T) {
	c := newFixture(t, nil, WithTasks())
	if got := callText(t, c, "task_echo", map[string]any{"text": "go"}); got != "task: go" {
		t.Fatalf("%q", got)
	}
	_, err := c.CallTool(testCtx(t), "task_fail", nil)
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32603 {
		t.Fatalf("task_fail: %v", err)
	}
	// A capped call leaves its task running; find its id with tasks/get on the next id.
	_, err = c.CallTool(testCtx(t), "task_slow", nil, WithMaxTotal(20*time.Millisecond))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("capped: %v", err)
	}
	task, err := c.GetTask(testCtx(t), "task-3")
	if err != nil || !strings.Contains(string(task), `"status":"working"`) {
		t.Fatalf("get: %s %v", task, err)
	}
	if err := c.CancelTask(testCtx(t), "task-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResumeTask(testCtx(t), "task-3"); !errors.Is(err, ErrCancelled) {
		t.Fatalf("resume cancelled: %v", err)
	}
}

func TestManualInputAndURLElicitationRequired(t *testing.T) {
	c := newFixture(t, nil, WithManualInput("elicitation"))
	_, err := c.CallTool(testCtx(t), "elicit_once", nil)
	var ir *InputRequiredError
	if !errors.As(err, &ir) || !strings.Contains(string(ir.Unanswered), `"name":{`) {
		t.Fatalf("manual: %v", err)
	}
	res, err := c.CallTool(testCtx(t), "elicit_once", nil,
		ir.RetryOptions([]byte(`{"name":{"action":"accept","content":{"name":"Gopher"}}}`))...)
	if err != nil || !strings.Contains(string(res), "Hello, Gopher!") {
		t.Fatalf("retry: %s %v", res, err)
	}
	legacy := newFixture(t, []string{"--era", "legacy"})
	_, err = legacy.CallTool(testCtx(t), "url_required", nil)
	var rpc *RPCError
	if !errors.Is(err, ErrURLElicitationRequired) || !errors.As(err, &rpc) ||
		!strings.Contains(string(rpc.Elicitations), "fixture-elicitation-1") {
		t.Fatalf("url_required: %v", err)
	}
}
