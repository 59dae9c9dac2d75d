package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The requestStates the fixture issues (tests/fixture-server/README.md); `\n` is a literal
// backslash + n.
const (
	stateElicitOnce   = `sté:1 {"flow":"elicit_once","round":1,"values":[]} +/=\n 🔑#4bf93ac3968345b1`
	stateThreeRounds1 = `sté:1 {"flow":"three_rounds","round":1,"values":[]} +/=\n 🔑#3ca41149c919ad5b`
	stateThreeRounds2 = `sté:2 {"flow":"three_rounds","round":2,"values":["a"]} +/=\n 🔑#786de8b116c83101`
	statePromptInput  = `sté:1 {"flow":"prompt:needs_input","round":1,"values":[]} +/=\n 🔑#6f3148e0fcc9ec09`
)

func withAllHandlers(t *testing.T, c *Client) {
	t.Helper()
	for _, err := range []error{c.OnElicitation(answerForm), c.OnSampling(answerSampling), c.OnRoots(answerRoots)} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkAutoFlows(t *testing.T, c *Client) {
	t.Helper()
	for tool, want := range map[string]string{
		"elicit_once":       "Hello, Ada!",
		"three_rounds":      "steps: v1,v2,v3",
		"elicit_and_sample": "confirm=accept; summary=a fine summary",
		"roots":             "roots: file:///one,file:///two",
		"sample_only":       "sampled: a fine summary",
	} {
		if got := callText(t, c, tool, nil); got != want {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
	raw, err := c.GetPrompt(testCtx(t), "needs_input", nil)
	if err != nil || !strings.Contains(string(raw), "Topic: Ada") {
		t.Errorf("needs_input: %v %s", err, raw)
	}
	raw, err = c.ReadResource(testCtx(t), "fixture://needs-input")
	if err != nil || !strings.Contains(string(raw), "secret accepted") {
		t.Errorf("needs-input: %v %s", err, raw)
	}
}

func TestMRTRAutomatic(t *testing.T) {
	c := newFixture(t, []string{"--require-elicitation"})
	withAllHandlers(t, c)
	checkAutoFlows(t, c)
	if got := callText(t, c, "state_only", nil); got != "done after 2 state-only rounds" {
		t.Fatalf("state_only: %q", got)
	}
}

func TestMRTRAutomaticLegacy(t *testing.T) {
	c := newFixture(t, []string{"--era", "legacy"})
	withAllHandlers(t, c)
	checkAutoFlows(t, c)
	if c.Era() != EraLegacy {
		t.Fatalf("era %q", c.Era())
	}
}

func TestHandlerCallsClient(t *testing.T) {
	// Handlers run on their own goroutines, so they may use the client (a blocking call from
	// a library callback would be MCP_REENTRANT_CALL).
	c := newFixture(t, nil)
	if err := c.OnElicitation(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		raw, err := c.CallTool(ctx, "echo", map[string]any{"text": "Nested"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"action": "accept", "content": map[string]any{"name": text(t, raw)}})
	}); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "elicit_once", nil); got != "Hello, Nested!" {
		t.Fatalf("%q", got)
	}
}

func TestHandlerAnswersLaterFromAnotherGoroutine(t *testing.T) {
	c := newFixture(t, nil)
	type ask struct {
		params json.RawMessage
		reply  chan json.RawMessage
	}
	asks := make(chan ask)
	if err := c.OnElicitation(func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		a := ask{params, make(chan json.RawMessage, 1)}
		select {
		case asks <- a:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-a.reply:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}); err != nil {
		t.Fatal(err)
	}
	// Two calls in flight, both waiting on their handlers at once: the library's dispatcher
	// thread is not held by the first handler.
	results := make(chan string, 2)
	errs := make(chan error, 2)
	for _, name := range []string{"Ann", "Bob"} {
		go func() {
			raw, err := c.CallTool(testCtx(t), "elicit_once", nil, WithMeta(json.RawMessage(fmt.Sprintf(`{"example.com/who":%q}`, name))))
			if err != nil {
				errs <- err
				return
			}
			r, _ := DecodeToolResult(raw)
			results <- r.Text()
		}()
	}
	var pending []ask
	for len(pending) < 2 {
		select {
		case a := <-asks:
			if !strings.Contains(string(a.params), "What is your name?") {
				t.Fatalf("params: %s", a.params)
			}
			pending = append(pending, a)
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d handlers started concurrently", len(pending))
		}
	}
	// Both handlers are waiting for their answers: they come later by construction.
	for i, a := range pending {
		go func() {
			a.reply <- json.RawMessage(fmt.Sprintf(`{"action":"accept","content":{"name":"N%d"}}`, i))
		}()
	}
	got := map[string]bool{}
	for range 2 {
		select {
		case r := <-results:
			got[r] = true
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(5 * time.Second):
			t.Fatal("calls did not finish")
		}
	}
	if !got["Hello, N0!"] || !got["Hello, N1!"] {
		t.Fatalf("results %v", got)
	}
}

func TestHandlerError(t *testing.T) {
	c := newFixture(t, nil)
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("the user closed the dialog")
	}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(testCtx(t), "elicit_once", nil)
	var e *Error
	if !errors.Is(err, ErrHandlerFailed) || !errors.As(err, &e) {
		t.Fatalf("handler error: %v", err)
	}
	t.Logf("handler failure: %v", err)

	// A panicking handler fails the input too, without crashing.
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "elicit_once", nil); !errors.Is(err, ErrHandlerFailed) {
		t.Fatalf("panicking handler: %v", err)
	}
	// Invalid JSON from the handler fails the input.
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{nope`), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "elicit_once", nil); !errors.Is(err, ErrHandlerFailed) {
		t.Fatalf("bad JSON from handler: %v", err)
	}
	// nil result declines an elicitation; sampling without a result fails.
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "elicit_once", nil); got != "Hello, stranger (declined)" {
		t.Fatalf("decline: %q", got)
	}
	if err := c.OnSampling(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "sample_only", nil); !errors.Is(err, ErrHandlerFailed) {
		t.Fatalf("sampling without result: %v", err)
	}
}

func TestHandlerErrorLegacy(t *testing.T) {
	c := newFixture(t, []string{"--era", "legacy"})
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &RPCError{Code: -32001, Message: "no user here"}
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := c.CallTool(testCtx(t), "elicit_once", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := DecodeToolResult(raw)
	if !r.IsError || r.Text() != "client error: no user here" {
		t.Fatalf("legacy handler error: %s", raw)
	}
}

func TestHandlerContextEndsWhenCallCancelled(t *testing.T) {
	c := newFixture(t, nil)
	ended := make(chan error, 1)
	started := make(chan struct{})
	if err := c.OnElicitation(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-started
		cancel()
	}()
	_, err := c.CallTool(ctx, "elicit_once", nil)
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(3 * time.Second):
		t.Fatal("the handler's context did not end after the call was cancelled")
	}
}

func TestMRTRManual(t *testing.T) {
	c := connected(t, nil, WithManualInput("elicitation", "sampling", "roots")) // answered by hand, so declared
	ctx := testCtx(t)
	_, err := c.CallTool(ctx, "elicit_once", nil)
	var ir *InputRequiredError
	if !errors.Is(err, ErrInputRequired) || !errors.As(err, &ir) {
		t.Fatalf("no handler: %v", err)
	}
	if !ir.HasRequestState || ir.RequestState != stateElicitOnce {
		t.Fatalf("requestState %q, want %q", ir.RequestState, stateElicitOnce)
	}
	var reqs map[string]struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(ir.InputRequests, &reqs); err != nil || reqs["name"].Method != "elicitation/create" || reqs["name"].Params["message"] != "What is your name?" {
		t.Fatalf("inputRequests %s (%v)", ir.InputRequests, err)
	}
	if !strings.Contains(string(ir.Result), `"input_required"`) {
		t.Fatalf("result %s", ir.Result)
	}
	raw, err := c.CallTool(ctx, "elicit_once", nil,
		WithInputResponses(json.RawMessage(`{"name":{"action":"accept","content":{"name":"Lin"}}}`)),
		WithRequestState(ir.RequestState))
	if err != nil || text(t, raw) != "Hello, Lin!" {
		t.Fatalf("retry: %v %s", err, raw)
	}
	// A tampered state is refused by the server.
	_, err = c.CallTool(ctx, "elicit_once", nil,
		WithInputResponses(json.RawMessage(`{"name":{"action":"accept","content":{"name":"Lin"}}}`)),
		WithRequestState(strings.Replace(ir.RequestState, "é", "e", 1)))
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 {
		t.Fatalf("tampered state: %v", err)
	}

	// three_rounds by hand, round by round, with RetryOptions.
	_, err = c.CallTool(ctx, "three_rounds", nil)
	if !errors.As(err, &ir) || ir.RequestState != stateThreeRounds1 {
		t.Fatalf("round 1: %v / %q", err, ir.RequestState)
	}
	_, err = c.CallTool(ctx, "three_rounds", nil, ir.RetryOptions(json.RawMessage(`{"step1":{"action":"accept","content":{"value":"a"}}}`))...)
	if !errors.As(err, &ir) || ir.RequestState != stateThreeRounds2 {
		t.Fatalf("round 2: %v / %q", err, ir.RequestState)
	}
	_, err = c.CallTool(ctx, "three_rounds", nil, ir.RetryOptions(json.RawMessage(`{"step2":{"action":"decline"}}`))...)
	if !errors.As(err, &ir) || !strings.HasPrefix(ir.RequestState, `sté:3 {"flow":"three_rounds","round":3,"values":["a","(decline)"]}`) {
		t.Fatalf("round 3: %v / %q", err, ir.RequestState)
	}
	raw, err = c.CallTool(ctx, "three_rounds", nil, ir.RetryOptions(json.RawMessage(`{"step3":{"action":"accept","content":{"value":"c"}}}`))...)
	if err != nil || text(t, raw) != "steps: a,(decline),c" {
		t.Fatalf("final: %v %s", err, raw)
	}

	// The prompt's state and a state-less flow.
	_, err = c.GetPrompt(ctx, "needs_input", nil)
	if !errors.As(err, &ir) || ir.RequestState != statePromptInput {
		t.Fatalf("prompt: %v", err)
	}
	raw, err = c.GetPrompt(ctx, "needs_input", nil, ir.RetryOptions(json.RawMessage(`{"topic":{"action":"accept","content":{"topic":"cgo"}}}`))...)
	if err != nil || !strings.Contains(string(raw), "Topic: cgo") {
		t.Fatalf("prompt retry: %v %s", err, raw)
	}
	_, err = c.CallTool(ctx, "no_state", nil)
	if !errors.As(err, &ir) || ir.HasRequestState {
		t.Fatalf("no_state: %v %+v", err, ir)
	}
	raw, err = c.CallTool(ctx, "no_state", nil, ir.RetryOptions(json.RawMessage(`{"ok":{"action":"accept","content":{"ok":true}}}`))...)
	if err != nil || text(t, raw) != "no state ok" {
		t.Fatalf("no_state retry: %v %s", err, raw)
	}
	_, err = c.ReadResource(ctx, "fixture://needs-input")
	if !errors.As(err, &ir) {
		t.Fatalf("resource: %v", err)
	}
	raw, err = c.ReadResource(ctx, "fixture://needs-input", ir.RetryOptions(json.RawMessage(`{"password":{"action":"decline"}}`))...)
	if err != nil || !strings.Contains(string(raw), "secret refused") {
		t.Fatalf("resource retry: %v %s", err, raw)
	}
}

func TestRoundsExceeded(t *testing.T) {
	c := newFixture(t, nil, WithMaxRounds(3))
	var calls atomic.Int32
	if err := c.OnElicitation(func(ctx context.Context, p json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return answerForm(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(testCtx(t), "always_input", nil)
	var re *RoundsExceededError
	if !errors.Is(err, ErrInputRoundsExceeded) || !errors.As(err, &re) {
		t.Fatalf("always_input: %v", err)
	}
	if !re.HasRequestState || !strings.HasPrefix(re.RequestState, "loop-") || !strings.Contains(string(re.InputRequests), `"again"`) {
		t.Fatalf("details: %+v", re)
	}
	var ir *InputRequiredError
	if errors.As(err, &ir) {
		t.Fatal("a RoundsExceededError is not an InputRequiredError")
	}
	t.Logf("rounds exceeded after %d handler calls, state %q", calls.Load(), re.RequestState)
}

func TestHandlerReplacement(t *testing.T) {
	// Replacing and removing handlers releases the old handles (userdata_free → Delete).
	before := liveHandles.Load()
	c := newFixture(t, nil)
	var mu sync.Mutex
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("H%d", i)
		if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			defer mu.Unlock()
			return json.RawMessage(`{"action":"accept","content":{"name":"` + name + `"}}`), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := callText(t, c, "elicit_once", nil); got != "Hello, H4!" {
		t.Fatalf("%q", got)
	}
	if err := c.OnElicitation(nil); err != nil {
		t.Fatal(err)
	}
	// Nothing declares elicitation any more: the fixture, like the SDK servers, answers -32021.
	if _, err := c.CallTool(testCtx(t), "elicit_once", nil); !errors.Is(err, &statusSentinel{StatusCapabilityMissing}) {
		t.Fatalf("after removal: %v", err)
	}
	c.Close()
	if after := liveHandles.Load(); after != before {
		t.Fatalf("live handles %d → %d after Close", before, after)
	}
}

// weatherModel uses get_weather while the request allows tools, then answers text; it records
// each request's params.
func weatherModel(seen *[]map[string]any, tool string) HandlerFunc {
	return func(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
		var p map[string]any
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		*seen = append(*seen, p)
		if p["toolChoice"].(map[string]any)["mode"] == "none" {
			return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"mild"}}`), nil
		}
		return json.RawMessage(`{"role":"assistant","model":"m","stopReason":"toolUse","content":[` +
			`{"type":"tool_use","id":"go-1","name":"` + tool + `","input":{"city":"Paris"}}]}`), nil
	}
}

// WithSamplingTools declares sampling.tools: tools and toolChoice reach the handler and its
// tool_use answer reaches the server, on both eras (SEP-1577); an unoffered tool fails the call.
func TestSamplingWithTools(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		c := newFixture(t, []string{"--era", era}, WithSamplingTools())
		var seen []map[string]any
		if err := c.OnSampling(weatherModel(&seen, "get_weather")); err != nil {
			t.Fatal(err)
		}
		want := `weather: mild; tool get_weather({"city":"Paris"}) id go-1`
		if got := callText(t, c, "sample_with_tools", nil); got != want {
			t.Fatalf("%s: %q, want %q", era, got, want)
		}
		if len(seen) != 2 || seen[0]["tools"].([]any)[0].(map[string]any)["name"] != "get_weather" {
			t.Fatalf("%s: the handler saw %v", era, seen)
		}
		msgs := seen[1]["messages"].([]any)
		result := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
		if result["type"] != "tool_result" || result["toolUseId"] != "go-1" {
			t.Fatalf("%s: second round %v", era, msgs)
		}
	}
	c := newFixture(t, nil, WithSamplingTools())
	var seen []map[string]any
	if err := c.OnSampling(weatherModel(&seen, "rm_rf")); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(testCtx(t), "sample_with_tools", nil)
	if !errors.Is(err, ErrHandlerFailed) || !contains(err.Error(), "which the request did not offer") {
		t.Fatalf("unoffered tool: %v", err)
	}
}

// MCP Apps: WithApps declares the extension, ToolUI reads each tool's link, ReadApp returns a
// verified view and refuses one that fails the checks, and ExportTools leaves app-only tools out.
func TestApps(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		c := newFixture(t, []string{"--apps", "--era", era}, WithApps())
		tools, err := c.ListAll(testCtx(t), KindTools)
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(tools, &list); err != nil {
			t.Fatal(err)
		}
		links := map[string]string{}
		for _, tool := range list.Tools {
			var named struct{ Name string }
			_ = json.Unmarshal(tool, &named)
			ui, err := ToolUI(tool)
			if err != nil {
				t.Fatal(err)
			}
			links[named.Name] = string(ui)
		}
		if !contains(links["weather_app"], `"resourceUri":"ui://fixture/weather"`) ||
			!contains(links["refresh_app"], `"model":false`) || links["not_ui_app"] != "null" {
			t.Fatalf("%s: links %v", era, links)
		}
		view, err := c.ReadApp(testCtx(t), "ui://fixture/weather", 0)
		if err != nil || !contains(string(view), "weather app</body>") {
			t.Fatalf("%s: view %s %v", era, view, err)
		}
		if _, err := c.ReadApp(testCtx(t), "ui://fixture/plain-html", 0); !errors.Is(err, ErrProtocolViolation) {
			t.Fatalf("%s: text/html accepted: %v", era, err)
		}
		var big *Error
		if _, err := c.ReadApp(testCtx(t), "ui://fixture/big", 1000); !errors.As(err, &big) || big.Status != StatusMessageTooLarge {
			t.Fatalf("%s: over the bound: %v", era, err)
		}
		exported, err := ExportTools(tools, nil)
		if err != nil || contains(string(exported), `"name":"refresh_app"`) || !contains(string(exported), `"name":"weather_app"`) {
			t.Fatalf("%s: export %s %v", era, exported, err)
		}
	}
}
