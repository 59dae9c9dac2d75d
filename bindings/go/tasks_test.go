package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tasks extension, manual input mode and -32042 from Go.
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

// A handler registered for URL mode declares elicitation.url and receives the modern URL
// request; a form-only handler is never handed it (the request is left to the host).
func TestURLModeElicitationHandler(t *testing.T) {
	c := newFixture(t, nil)
	var seen json.RawMessage
	if err := c.OnElicitationModes(ElicitationURL, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		seen = append(json.RawMessage(nil), params...)
		return json.RawMessage(`{"action":"accept"}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(testCtx(t), "url_login", nil)
	if err != nil || !strings.Contains(string(res), "url login: accept") {
		t.Fatalf("url_login: %s %v", res, err)
	}
	if !strings.Contains(string(seen), `"mode":"url"`) {
		t.Fatalf("the handler saw %s", seen)
	}
	// URL mode alone is declared, so the server never sends this client a form request: the
	// call fails -32021, saying what would declare form mode, and the handler is not called.
	seen = nil
	_, err = c.CallTool(testCtx(t), "elicit_once", nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusCapabilityMissing ||
		!strings.Contains(e.Message, "register an elicitation handler for form mode") || seen != nil {
		t.Fatalf("a form request to a URL-only client: %v (handler saw %s)", err, seen)
	}
	// A handler with no mode could never be asked: refused.
	if err := c.OnElicitationModes(0, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	}); !errors.Is(err, ErrInvalidArg) || !strings.Contains(err.Error(), "one mode at least") {
		t.Fatalf("no mode: %v", err)
	}
	form := newFixture(t, []string{"--lax-capabilities"})
	if err := form.OnElicitationModes(ElicitationForm, func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		t.Error("a form-only handler was handed a URL request")
		return nil, errors.New("unexpected")
	}); err != nil {
		t.Fatal(err)
	}
	_, err = form.CallTool(testCtx(t), "url_login", nil)
	var ir *InputRequiredError
	if !errors.As(err, &ir) || !strings.Contains(string(ir.Unanswered), `"login"`) {
		t.Fatalf("form-only: %v", err)
	}
	if err := c.OnElicitationModes(ElicitationURL, nil); err != nil {
		t.Fatalf("removing: %v", err)
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

// A task asking for input under manual input mode: the call fails with the request, the status
// listener names the task, UpdateTask delivers the host's answer and the task completes with it.
func TestTaskStatusListenerAndUpdateTask(t *testing.T) {
	c := newFixture(t, nil, WithTasks(), WithManualInput("elicitation"))
	ids := make(chan string, 16)
	if err := c.OnTaskStatus(func(task json.RawMessage) {
		var v struct{ TaskID, Status string }
		if json.Unmarshal(task, &v) == nil && v.Status == "input_required" {
			ids <- v.TaskID
		}
	}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(testCtx(t), "task_input", nil)
	var ir *InputRequiredError
	if !errors.As(err, &ir) || !strings.Contains(string(ir.Unanswered), `"confirm":{`) {
		t.Fatalf("task_input: %v", err)
	}
	var id string
	select {
	case id = <-ids:
	case <-testCtx(t).Done():
		t.Fatal("no input_required status event")
	}
	answer := json.RawMessage(`{"confirm":{"action":"accept","content":{"confirmed":true}}}`)
	if err := c.UpdateTask(testCtx(t), id, answer); err != nil {
		t.Fatal(err)
	}
	// Poll by hand as a host would, at the task's pollIntervalMs (the fixture flags faster polls).
	for i := 0; i < 10; i++ {
		time.Sleep(60 * time.Millisecond)
		task, err := c.GetTask(testCtx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(task), `"status":"completed"`) {
			if !strings.Contains(string(task), `confirmed: {\"action\":\"accept\"`) || strings.Contains(string(task), `"isError":true`) {
				t.Fatalf("completed: %s", task)
			}
			if err := c.OnTaskStatus(nil); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("the answered task never completed")
}

// The call's timeout bounds the wait for a task that stays working: ErrTimeout at the bound,
// the message naming the limit, tasks/cancel sent, and no tasks/get once the call returned.
func TestTaskCallEndsAtItsTimeout(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	c := newFixture(t, []string{"--record", record}, WithTasks())
	requests := func(method string) int {
		data, _ := os.ReadFile(record)
		return strings.Count(string(data), `"method":"`+method+`"`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second) // a safety cap
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "task_stuck", nil, WithTimeout(400*time.Millisecond))
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("task_stuck: %v", err)
	}
	if took < 400*time.Millisecond || took > 2500*time.Millisecond {
		t.Fatalf("ended after %v", took)
	}
	msg := err.Error()
	if !strings.Contains(msg, "timed out after 400 ms: the limit is this call's timeout") ||
		!strings.HasSuffix(msg, "; tasks/cancel sent") {
		t.Fatalf("message: %s", msg)
	}
	if n := requests("tasks/cancel"); n != 1 {
		t.Fatalf("%d tasks/cancel sent", n)
	}
	gets := requests("tasks/get")
	time.Sleep(300 * time.Millisecond)
	if n := requests("tasks/get"); n != gets {
		t.Fatalf("still polling: %d tasks/get, then %d", gets, n)
	}
}
