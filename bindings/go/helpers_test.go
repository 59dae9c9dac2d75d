package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fixture is the mcp-fixture-server binary: $MCP_FIXTURE, else <repo>/target/debug.
var fixture string

func TestMain(m *testing.M) {
	fixture = os.Getenv("MCP_FIXTURE")
	if fixture == "" {
		_, file, _, _ := runtime.Caller(0)
		fixture = filepath.Join(filepath.Dir(file), "..", "..", "target", "debug", "mcp-fixture-server")
	}
	if abs, err := filepath.Abs(fixture); err == nil {
		fixture = abs
	}
	if _, err := os.Stat(fixture); err != nil {
		fmt.Fprintf(os.Stderr, "fixture server not found at %s (build it with `cargo build --workspace` or set MCP_FIXTURE): %v\n", fixture, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// testTimeout bounds every test's own context.
const testTimeout = 15 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newFixture creates a client for the fixture with server flags args; it is closed at cleanup.
func newFixture(t *testing.T, args []string, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithShutdownGrace(500 * time.Millisecond)}, opts...)
	c, err := NewStdio(fixture, args, opts...)
	if err != nil {
		t.Fatalf("NewStdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func connected(t *testing.T, args []string, opts ...Option) *Client {
	t.Helper()
	c := newFixture(t, args, opts...)
	if _, err := c.Connect(testCtx(t)); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return c
}

// text is the joined text content of a CallTool result.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	r, err := DecodeToolResult(raw)
	if err != nil {
		t.Fatalf("not a CallToolResult: %v: %s", err, raw)
	}
	return r.Text()
}

func callText(t *testing.T, c *Client, name string, args any, opts ...CallOption) string {
	t.Helper()
	raw, err := c.CallTool(testCtx(t), name, args, opts...)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return text(t, raw)
}

func mustJSON(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	return m
}

var stepRE = regexp.MustCompile(`Step (\d+) of 3`)

// answerForm accepts any form elicitation: strings get "Ada" (or v<n> for three_rounds'
// "Step n of 3"), booleans true, numbers 1.
func answerForm(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	content := map[string]any{}
	for name, prop := range p.RequestedSchema.Properties {
		switch prop.Type {
		case "boolean":
			content[name] = true
		case "number", "integer":
			content[name] = 1
		default:
			if m := stepRE.FindStringSubmatch(p.Message); m != nil {
				content[name] = "v" + m[1]
			} else {
				content[name] = "Ada"
			}
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}

func answerSampling(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"a fine summary"},"model":"go-test"}`), nil
}

func answerRoots(_ context.Context, _ json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"roots":[{"uri":"file:///one","name":"one"},{"uri":"file:///two"}]}`), nil
}

// within fails the test when f does not return in d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
