package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// hubMark tags a test's member processes through their environment, so the test can look for
// them after Close (processesWith, per platform).
var hubMarks atomic.Int64

func newHubMark() string {
	return fmt.Sprintf("go-hub-%d-%d", os.Getpid(), hubMarks.Add(1))
}

func addFixture(t *testing.T, h *Hub, name, mark string, args ...string) {
	t.Helper()
	if err := h.AddStdio(name, fixture, args, WithEnv("MCP_HUB_TEST_MARK", mark),
		WithProbeTimeout(500*time.Millisecond), WithShutdownGrace(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
}

func TestHubMergesRoutesReportsAndClosesEverything(t *testing.T) {
	mark := newHubMark()
	h, err := NewHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	addFixture(t, h, "fix", mark)
	addFixture(t, h, "old", mark, "--era", "legacy")
	if err := h.AddMember("missing", map[string]any{"command": "/nonexistent/mcp-server"}); err != nil {
		t.Fatal(err)
	}
	var se *Error
	if err := h.AddMember("fix", map[string]any{"command": fixture}); !errors.As(err, &se) || se.Status != StatusInvalidArg {
		t.Fatalf("a second member named fix: %v", err)
	}
	events := make(chan HubEvent, 64)
	if err := h.OnEvent(func(ev HubEvent) { events <- ev }); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ms, err := h.Members()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, m := range ms {
		states[m.Name] = m.State
	}
	if !reflect.DeepEqual(states, map[string]string{"fix": "connected", "old": "connected", "missing": "failed"}) {
		t.Fatalf("states: %+v", ms)
	}
	if ms[1].Era != EraLegacy || ms[2].Error == "" {
		t.Fatalf("members: %+v", ms)
	}
	if n := processesWith(t, mark); n != 2 {
		t.Fatalf("%d member processes, want 2", n)
	}

	raw, err := h.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tl := range tools {
		names[tl.Name] = string(tl.Meta["mcp-client/server"])
	}
	if names["fix__echo"] != `"fix"` || names["old__echo"] != `"old"` {
		t.Fatalf("merged tools: %s", raw)
	}
	res, err := h.CallTool(testCtx(t), "old__echo", map[string]any{"text": "routed"})
	if err != nil || text(t, res) != "routed" {
		t.Fatalf("routed call: %s %v", res, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if n := processesWith(t, mark); n != 0 {
		t.Fatalf("%d member processes left after Close", n)
	}
	if _, err := h.ListTools(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("list after close: %v", err)
	}
	if _, err := h.CallTool(testCtx(t), "fix__echo", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
	var connected []string
	for len(events) > 0 {
		if ev := <-events; ev.Type == "state" && ev.State == "connected" {
			connected = append(connected, ev.Server)
		}
	}
	if len(connected) != 2 {
		t.Fatalf("connected events: %v", connected)
	}
}

func TestHubCallsPromptsResourcesAndContexts(t *testing.T) {
	mark := newHubMark()
	h, err := NewHub(&HubOptions{Separator: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	addFixture(t, h, "fix", mark)
	if err := h.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	changed := make(chan HubEvent, 8)
	if err := h.OnEvent(func(ev HubEvent) {
		if ev.Type == "list_changed" {
			changed <- ev
		}
	}); err != nil {
		t.Fatal(err)
	}
	p, err := h.GetPrompt(testCtx(t), "fix-greeting", map[string]string{"name": "Go"})
	if err != nil || !contains(string(p), "Hello, Go!") {
		t.Fatalf("prompt: %s %v", p, err)
	}
	r, err := h.ReadResource(testCtx(t), "fix", "fixture://static")
	if err != nil || !contains(string(r), "static content") {
		t.Fatalf("resource: %s %v", r, err)
	}
	for _, list := range []func(context.Context) (json.RawMessage, error){h.ListPrompts, h.ListResources, h.ListResourceTemplates} {
		if l, err := list(testCtx(t)); err != nil || len(l) < 3 {
			t.Fatalf("list: %s %v", l, err)
		}
	}
	var se *Error
	if _, err := h.CallTool(testCtx(t), "fix-ecko", nil); !errors.As(err, &se) || se.Status != StatusInvalidArg || !contains(se.Message, "fix-echo") {
		t.Fatalf("unknown tool: %v", err)
	}
	// An ending context cancels the started call at once.
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if _, err := h.CallTool(ctx, "fix-hang", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang under a deadline: %v", err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Fatalf("the deadline took %v", d)
	}
	// A list_changed from the member reaches the listener with its server name.
	if _, err := h.CallTool(testCtx(t), "fix-notify", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-changed:
		if ev.Server != "fix" || ev.List == "" {
			t.Fatalf("list_changed event: %s", ev.Raw)
		}
	case <-testCtx(t).Done():
		t.Fatal("no list_changed event")
	}
}

func TestHubReloadsOneMember(t *testing.T) {
	mark := newHubMark()
	h, err := NewHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.SetMember(testCtx(t), "broken", map[string]any{"command": "/nonexistent/mcp-server"}); err != nil {
		t.Fatal(err)
	}
	cfgJSON := fmt.Sprintf(`{"command": %q, "args": [], "env": {"MCP_HUB_TEST_MARK": %q}, "shutdown_grace_ms": 500}`, fixture, mark)
	if err := h.SetMember(testCtx(t), "broken", json.RawMessage(cfgJSON)); err != nil {
		t.Fatal(err)
	}
	ms, _ := h.Members()
	if len(ms) != 1 || ms[0].State != "connected" {
		t.Fatalf("after the fix: %+v", ms)
	}
	if res, err := h.CallTool(testCtx(t), "broken__echo", map[string]any{"text": "back"}); err != nil || text(t, res) != "back" {
		t.Fatalf("call after reload: %s %v", res, err)
	}
	if err := h.RemoveMember(testCtx(t), "broken"); err != nil {
		t.Fatal(err)
	}
	if n := processesWith(t, mark); n != 0 {
		t.Fatalf("%d processes after RemoveMember", n)
	}
	var se *Error
	if err := h.RemoveMember(testCtx(t), "broken"); !errors.As(err, &se) || se.Status != StatusInvalidArg {
		t.Fatalf("removing an unknown member: %v", err)
	}
	// A typed Config is a member configuration too.
	if err := h.AddMember("typed", Config{Command: &fixture}); err != nil {
		t.Fatal(err)
	}
}

// The hub's context methods: the calls are started calls; Start, the lists, SetMember and
// RemoveMember have no started form in the C ABI and return early when their context ends.
func TestHubContextMethods(t *testing.T) {
	h, err := NewHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	addFixture(t, h, "fix", newHubMark())
	gone, cancel := context.WithCancel(testCtx(t))
	cancel()
	if err := h.Start(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("start with an ended context: %v", err)
	}
	if err := h.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"CallTool", "GetPrompt", "ReadResource", "DispatchToolCall", "ListTools", "ListPrompts", "ListResources", "ListResourceTemplates"} {
		m := reflect.ValueOf(h).MethodByName(name)
		ft := m.Type()
		args := []reflect.Value{reflect.ValueOf(testCtx(t))}
		for j := 1; j < ft.NumIn()-1; j++ {
			args = append(args, placeholder(ft.In(j)))
		}
		before := startedTotal.Load()
		m.Call(args)
		if startedTotal.Load() == before {
			t.Errorf("Hub.%s did not start a call", name)
		}
	}
}

func TestHubFromTextPickStringOffersItsOptions(t *testing.T) {
	vscode := fmt.Sprintf(`{
		"inputs": [{"type": "pickString", "id": "era", "description": "Era", "options": ["legacy", "modern"]},
		           {"type": "command", "id": "folder", "command": "extension.pickFolder"}],
		"servers": {"picked": {"command": %q, "args": ["--era", "${input:era}"]},
		            "cmd": {"command": %q, "args": ["${input:folder}"]}}
	}`, fixture, fixture)
	for _, answer := range []string{"legacy", "ancient"} {
		var asked []HubInput
		read := &HubFileOptions{OnInput: func(in HubInput) (string, bool) {
			asked = append(asked, in)
			return answer, true
		}}
		h, err := NewHubFromText(vscode, nil, read)
		if err != nil {
			t.Fatal(err)
		}
		if len(asked) != 1 || !reflect.DeepEqual(asked[0].Options, []string{"legacy", "modern"}) {
			t.Fatalf("inputs asked: %+v", asked)
		}
		if ws, err := h.Warnings(); err != nil || len(ws) != 1 || !contains(ws[0], `"command" input`) {
			t.Fatalf("warnings: %v %v", ws, err)
		}
		ms, err := h.Members()
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]HubMember{}
		for _, m := range ms {
			states[m.Name] = m
		}
		picked := states["picked"]
		if (answer == "legacy") != (picked.State == "idle") || states["cmd"].State != "failed" {
			t.Fatalf("%s: members %+v", answer, ms)
		}
		if answer == "ancient" && !contains(picked.Error, "not one of the input's options") {
			t.Fatalf("error: %q", picked.Error)
		}
		h.Close()
	}
}

func TestHubFromConfigurationText(t *testing.T) {
	mark := newHubMark()
	vscode := fmt.Sprintf(`{
		// VS Code's shape: an input the host is asked for, a comment and a trailing comma.
		"inputs": [{"type": "promptString", "id": "mark", "description": "Test mark", "password": true}],
		"servers": {
			"fix": {"type": "stdio", "command": %q, "env": {"MCP_HUB_TEST_MARK": "${input:mark}"}},
		},
	}`, fixture)
	var asked []HubInput
	read := &HubFileOptions{OnInput: func(in HubInput) (string, bool) {
		asked = append(asked, in)
		return mark, true
	}}
	h, err := NewHubFromText(vscode, nil, read)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(asked) != 1 || asked[0].ID != "mark" || !asked[0].Password || asked[0].Description != "Test mark" {
		t.Fatalf("inputs asked: %+v", asked)
	}
	if err := h.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := processesWith(t, mark); n != 1 {
		t.Fatalf("%d processes with the answered input in their environment", n)
	}

	// A Claude Desktop file on disk: another host's key is a warning; a reload adds a member.
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	file := fmt.Sprintf(`{"mcpServers": {"fix": {"command": %q, "autoApprove": ["echo"]}}}`, fixture)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := NewHubFromFile(path, &HubOptions{Separator: "-"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ws, err := f.Warnings(); err != nil || len(ws) != 1 || !contains(ws[0], "autoApprove") {
		t.Fatalf("warnings: %v %v", ws, err)
	}
	if err := f.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if res, err := f.CallTool(testCtx(t), "fix-echo", map[string]any{"text": "file"}); err != nil || text(t, res) != "file" {
		t.Fatalf("call: %s %v", res, err)
	}
	file2 := fmt.Sprintf(`{"mcpServers": {"fix": {"command": %q, "autoApprove": ["echo"]}, "two": {"command": %q}}}`, fixture, fixture)
	if err := os.WriteFile(path, []byte(file2), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := f.ReloadFromFile(testCtx(t), path, nil)
	if err != nil || !reflect.DeepEqual(rep.Added, []string{"two"}) || !reflect.DeepEqual(rep.Unchanged, []string{"fix"}) {
		t.Fatalf("reload: %+v %v", rep, err)
	}
	if _, err := f.ReloadFromText(testCtx(t), "{not json", nil); err == nil {
		t.Fatal("a reload from text that is not JSON succeeded")
	}
	if _, err := NewHubFromFile(filepath.Join(dir, "missing.json"), nil, nil); err == nil {
		t.Fatal("a hub from a missing file")
	}
}
