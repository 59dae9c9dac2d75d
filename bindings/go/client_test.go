package mcpclient

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestABIAndVersion(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	if LibraryABIVersion() != ABIVersion {
		t.Fatalf("ABI %d, header %d", LibraryABIVersion(), ABIVersion)
	}
	if !strings.HasPrefix(LibraryVersion(), "mcp_client/") {
		t.Fatalf("version %q", LibraryVersion())
	}
	if StatusTimeout.String() == "" || !StatusTimeout.IsTransport() || StatusClosed.IsTransport() {
		t.Fatal("status helpers")
	}
}

func TestConnectStdio(t *testing.T) {
	c := newFixture(t, nil)
	if c.Era() != EraNone {
		t.Fatalf("era before connect: %q", c.Era())
	}
	if _, err := c.ServerInfo(); err == nil {
		t.Fatal("ServerInfo before connect should fail")
	}
	info, err := c.Connect(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != EraModern || info.ProtocolVersion != "2026-07-28" {
		t.Fatalf("info %+v", info)
	}
	if !strings.Contains(string(info.Implementation), "mcp-fixture-server") || info.Instructions != "Fixture server for mcp_client tests." {
		t.Fatalf("info %+v", info)
	}
	again, err := c.Connect(testCtx(t)) // idempotent
	if err != nil || again.ProtocolVersion != info.ProtocolVersion {
		t.Fatalf("second connect: %v %+v", err, again)
	}
	got, err := c.ServerInfo()
	if err != nil || got.Era != EraModern || c.Era() != EraModern {
		t.Fatalf("ServerInfo: %v %+v", err, got)
	}
}

func TestModesAndVersions(t *testing.T) {
	c := connected(t, nil, WithMode(ModeLegacy))
	if info, _ := c.ServerInfo(); info.Era != EraLegacy || info.ProtocolVersion != "2025-11-25" {
		t.Fatalf("legacy mode: %+v", info)
	}
	c = connected(t, nil, WithProtocolVersion("2025-06-18"))
	if info, _ := c.ServerInfo(); info.Era != EraLegacy || info.ProtocolVersion != "2025-06-18" {
		t.Fatalf("pinned version: %+v", info)
	}
	c = connected(t, nil, WithMode(ModeModern), WithClientInfo("go-test", "9.9"))
	raw := callText(t, c, "echo_meta", nil)
	if !strings.Contains(raw, `"go-test"`) {
		t.Fatalf("clientInfo not sent: %s", raw)
	}
}

func TestConfigErrors(t *testing.T) {
	_, err := NewStdio(fixture, nil, WithSetting("no_such_key", 1))
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArg || !strings.Contains(e.Message, "no_such_key") {
		t.Fatalf("unknown key: %v", err)
	}
	if !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("errors.Is(ErrInvalidArg): %v", err)
	}
	_, err = NewStdio(fixture, nil, WithSetting("request_timeout", 1))
	if !errors.As(err, &e) || e.Message != `unknown configuration key "request_timeout"; did you mean "request_timeout_ms"?` {
		t.Fatalf("a near miss names the known key: %v", err)
	}
	c := newFixture(t, nil)
	if _, err := c.CallTool(testCtx(t), "echo", make(chan int)); err == nil {
		t.Fatal("unmarshalable args accepted")
	}
	_, err = c.CallTool(testCtx(t), "echo", json.RawMessage(`{"text":`))
	if !errors.As(err, &e) || e.Status != StatusInvalidJSON {
		t.Fatalf("bad raw JSON: %v", err)
	}
	_, err = c.ListAll(testCtx(t), KindTools, WithRequestState("x"))
	if !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("request state on a list: %v", err)
	}
	bad, err := NewStdio("/nonexistent/mcp-server", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Connect(testCtx(t)); err == nil {
		t.Fatal("connecting to a missing command succeeded")
	}
}

func TestEnvAndCwd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server is a /bin/sh script")
	}
	dir := t.TempDir()
	script := `echo "FOO=$FOO HOME=${HOME-unset} PWD=$(pwd)" >&2; exec "$0"`
	lines := make(chan string, 16)
	c, err := NewStdio("/bin/sh", []string{"-c", script, fixture},
		WithEnvMode(EnvReplace), WithEnv("FOO", "bar"), WithCwd(dir), WithShutdownGrace(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.OnLog(func(level, source, message string) {
		if source == "stderr" {
			lines <- message
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	want := "FOO=bar HOME=unset PWD=" + real
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l := <-lines:
			if l == want {
				return
			}
			t.Logf("stderr: %s", l)
		case <-deadline:
			t.Fatalf("never saw %q on stderr", want)
		}
	}
}

func TestListsAndPagination(t *testing.T) {
	c := connected(t, []string{"--page-size", "2"})
	ctx := testCtx(t)
	var names []string
	cursor, pages := "", 0
	for {
		page, next, err := c.List(ctx, KindTools, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		var p struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(page, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Tools) > 2 {
			t.Fatalf("page of %d tools", len(p.Tools))
		}
		for _, tool := range p.Tools {
			names = append(names, tool.Name)
		}
		if next == "" {
			break
		}
		if want := "page-" + itoa(int64(pages+1)); next != want {
			t.Fatalf("cursor %q, want %q", next, want)
		}
		cursor = next
	}
	all, err := c.ListAll(ctx, KindTools)
	if err != nil {
		t.Fatal(err)
	}
	var merged struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(all, &merged); err != nil {
		t.Fatal(err)
	}
	if len(merged.Tools) != len(names) || pages < 10 {
		t.Fatalf("ListAll has %d tools, pages had %d over %d pages", len(merged.Tools), len(names), pages)
	}
	for i := range names {
		if merged.Tools[i].Name != names[i] {
			t.Fatalf("tool %d: %s vs %s", i, merged.Tools[i].Name, names[i])
		}
	}
	for kind, key := range map[ListKind]string{KindPrompts: "prompts", KindResources: "resources", KindResourceTemplates: "resourceTemplates"} {
		raw, err := c.ListAll(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := mustJSON(t, raw)[key]; !ok {
			t.Fatalf("ListAll(%d) lacks %s: %s", kind, key, raw)
		}
	}
	_, _, err = c.List(ctx, KindTools, "bogus")
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 {
		t.Fatalf("invalid cursor: %v", err)
	}
}

func TestCallGetReadComplete(t *testing.T) {
	c := connected(t, nil)
	ctx := testCtx(t)
	if got := callText(t, c, "echo", map[string]any{"text": "héllo \"Go\""}); got != "héllo \"Go\"" {
		t.Fatalf("echo: %q", got)
	}
	raw, err := c.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":40}`))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := DecodeToolResult(raw)
	if r.Text() != "42" || string(r.StructuredContent) != `{"result":42}` {
		t.Fatalf("add: %s", raw)
	}
	raw, err = c.CallTool(ctx, "fail", nil)
	if err != nil {
		t.Fatalf("a tool error is a result: %v", err)
	}
	if r, _ := DecodeToolResult(raw); !r.IsError || r.Text() != "tool failed on purpose" {
		t.Fatalf("fail: %s", raw)
	}
	raw, err = c.CallTool(ctx, "echo_meta", nil, WithMeta(json.RawMessage(`{"example.com/trace":"t-1"}`)))
	if err != nil || !strings.Contains(string(raw), `t-1`) || !strings.Contains(string(raw), "io.modelcontextprotocol/protocolVersion") {
		t.Fatalf("echo_meta: %v %s", err, raw)
	}

	raw, err = c.GetPrompt(ctx, "greeting", map[string]string{"name": "Grace"})
	if err != nil || !strings.Contains(string(raw), "Hello, Grace!") {
		t.Fatalf("greeting: %v %s", err, raw)
	}
	raw, err = c.GetPrompt(ctx, "plain", nil)
	if err != nil || !strings.Contains(string(raw), "A plain prompt with no arguments.") {
		t.Fatalf("plain: %v %s", err, raw)
	}
	raw, err = c.ReadResource(ctx, "fixture://static")
	if err != nil || !strings.Contains(string(raw), "static content") {
		t.Fatalf("static: %v %s", err, raw)
	}
	raw, err = c.ReadResource(ctx, "fixture://binary")
	if err != nil || !strings.Contains(string(raw), "AAECAw==") {
		t.Fatalf("binary: %v %s", err, raw)
	}
	raw, err = c.ReadResource(ctx, "fixture://items/7")
	if err != nil || !strings.Contains(string(raw), "item 7") {
		t.Fatalf("template: %v %s", err, raw)
	}
	_, err = c.ReadResource(ctx, "fixture://nope")
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 || !strings.Contains(string(rpc.Data), "fixture://nope") {
		t.Fatalf("missing resource: %v", err)
	}

	raw, err = c.Complete(ctx, map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": "greeting"},
		"argument": map[string]any{"name": "name", "value": "al"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var comp struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if json.Unmarshal(raw, &comp); strings.Join(comp.Completion.Values, ",") != "alice,albert" {
		t.Fatalf("complete: %s", raw)
	}

	raw, err = c.Request(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "raw"}})
	if err != nil || text(t, raw) != "raw" {
		t.Fatalf("Request: %v %s", err, raw)
	}
	_, err = c.Request(ctx, "no/such/method", nil)
	if !errors.As(err, &rpc) || rpc.Code != -32601 {
		t.Fatalf("unknown method: %v", err)
	}
	if err := c.Ping(ctx); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("modern ping: %v", err)
	}
}

func TestRPCError(t *testing.T) {
	c := connected(t, nil)
	_, err := c.CallTool(testCtx(t), "rpc_error", nil)
	var e *Error
	var rpc *RPCError
	if !errors.As(err, &e) || e.Status != StatusJSONRPCError || !errors.As(err, &rpc) {
		t.Fatalf("rpc_error: %v", err)
	}
	if rpc.Code != -32050 || rpc.Message != "fixture error" || string(rpc.Data) != `{"detail":"on purpose"}` {
		t.Fatalf("rpc_error details: %+v %s", rpc, rpc.Data)
	}
}

func TestCrash(t *testing.T) {
	c := connected(t, []string{"--stderr-banner", "crash-banner"})
	_, err := c.CallTool(testCtx(t), "crash", nil)
	var e *Error
	if !errors.Is(err, ErrServerExited) || !errors.As(err, &e) {
		t.Fatalf("crash: %v", err)
	}
	if !strings.Contains(e.Message, "status 7") {
		t.Fatalf("the error does not name exit status 7: %q", e.Message)
	}
	if !strings.Contains(e.Message, "crashing on purpose") {
		t.Logf("note: the message does not quote the stderr tail: %q", e.Message)
	}
	// Later calls fail too, promptly.
	within(t, 5*time.Second, "call after crash", func() {
		if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err == nil {
			t.Error("a call after the crash succeeded")
		}
	})
}

func TestListeners(t *testing.T) {
	c := newFixture(t, []string{"--stderr-banner", "hello from the fixture"})
	var mu sync.Mutex
	var logs []string
	notes := make(chan string, 32)
	if err := c.OnLog(func(level, source, message string) {
		mu.Lock()
		logs = append(logs, level+"|"+source+"|"+message)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.OnNotification(func(method string, params json.RawMessage) {
		if method != "notifications/progress" { // see TestNotificationListenerExcludesProgress
			notes <- method + " " + string(params)
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var progress []string
	raw, err := c.CallTool(ctx, "progress", map[string]any{"steps": 3, "delay_ms": 5},
		WithLogLevel("info"),
		WithProgress(func(p, total float64, message string) {
			progress = append(progress, itoa(int64(p))+"/"+itoa(int64(total))+" "+message)
		}))
	if err != nil || text(t, raw) != "progress done" {
		t.Fatalf("progress: %v %s", err, raw)
	}
	select {
	case n := <-notes:
		if !strings.HasPrefix(n, "notifications/message ") || !strings.Contains(n, "progress tool ran") {
			t.Fatalf("notification: %s", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/message")
	}
	// Every progress callback has run, in order, when the call returns.
	if got := strings.Join(progress, ","); got != "1/3 step 1,2/3 step 2,3/3 step 3" {
		t.Fatalf("progress: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range logs {
		found = found || l == "info|stderr|hello from the fixture"
	}
	if !found {
		t.Fatalf("stderr banner not logged: %v", logs)
	}
	// Removing listeners works.
	if err := c.OnLog(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.OnNotification(nil); err != nil {
		t.Fatal(err)
	}
}

func TestSignalStackOfLibraryHandlers(t *testing.T) {
	// Go requires signal handlers installed by non-Go code to use SA_ONSTACK. The library
	// installs none (children are reaped by a thread of their own, not through tokio's SIGCHLD
	// handler): after clients have spawned and reaped servers, SIGCHLD still has the Go
	// runtime's own handler, which carries SA_ONSTACK.
	for i := 0; i < 3; i++ {
		c := connected(t, nil)
		callText(t, c, "echo", map[string]any{"text": "x"})
		c.Close()
	}
	const saOnStack = 0x08000000
	const sigchld = 17
	flags, installed, ok := sigactionFlags(sigchld)
	if !ok {
		t.Skip("sigaction unavailable")
	}
	if installed && flags&saOnStack == 0 {
		t.Fatalf("SIGCHLD handler installed without SA_ONSTACK (flags %#x)", flags)
	}
}

// Library bug: include/mcp_client.h (and Client::on_notification) document the notification
// listener as receiving "every server notification except progress (which goes to the call's
// own progress callback)", but Session::on_notification forwards notifications/progress to
// the listener as well (src/client/session.rs: hooks.notify runs after on_progress for every
// method).
func TestNotificationListenerExcludesProgress(t *testing.T) {
	c := newFixture(t, nil)
	var mu sync.Mutex
	var methods []string
	if err := c.OnNotification(func(method string, _ json.RawMessage) {
		mu.Lock()
		methods = append(methods, method)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	if _, err := c.CallTool(testCtx(t), "progress", map[string]any{"steps": 2, "delay_ms": 1},
		WithProgress(func(float64, float64, string) { calls++ })); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("progress callback ran %d times, want 2", calls)
	}
	// An absence window: listener calls still queued run, and none may be a progress
	// notification; nothing marks "none will come", so only time shows it.
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, m := range methods {
		if m == "notifications/progress" {
			t.Fatalf("the notification listener received notifications/progress (got %v); the header says progress is excluded", methods)
		}
	}
}

func TestLimits(t *testing.T) {
	c := connected(t, []string{"--page-size", "2"}, WithMaxMessageBytes(4096), WithMaxPages(2))
	_, err := c.CallTool(testCtx(t), "big", map[string]any{"bytes": 100000})
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusMessageTooLarge {
		t.Fatalf("big message: %v", err)
	}
	// The connection survives an oversized message.
	if got := callText(t, c, "echo", map[string]any{"text": "alive"}); got != "alive" {
		t.Fatal(got)
	}
	if _, err := c.ListAll(testCtx(t), KindTools); err == nil {
		t.Fatal("ListAll over more than max_pages pages succeeded")
	} else {
		t.Logf("max_pages: %v", err)
	}
}
