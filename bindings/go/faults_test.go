package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A NUL byte in a string argument is refused before anything is sent (the C
// ABI would cut the string there); inside JSON arguments U+0000 travels escaped and whole.
func TestNULInStringArgumentsIsRefused(t *testing.T) {
	c := connected(t, []string{"--era", "modern"})
	ctx := testCtx(t)
	checks := map[string]error{}
	_, checks["tool name"] = c.CallTool(ctx, "echo\x00evil", map[string]any{"text": "x"})
	_, checks["uri"] = c.ReadResource(ctx, "file:///a\x00/etc/passwd")
	_, checks["request state"] = c.CallTool(ctx, "elicit_once", nil, WithRequestState("ab\x00cd"))
	_, _, checks["cursor"] = c.List(ctx, KindTools, "page\x00-2")
	_, checks["method"] = c.Request(ctx, "tools/list\x00", nil)
	for what, err := range checks {
		if !errors.Is(err, ErrInvalidArg) || !strings.Contains(err.Error(), "NUL byte") {
			t.Errorf("%s: got %v, want an invalid-argument error about the NUL byte", what, err)
		}
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "echo\x00evil"})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 || r.Content[0].Text != "echo\x00evil" {
		t.Fatalf("echo of a NUL inside JSON: %s (%v)", res, err)
	}
}

// Numbers beyond 64 bits keep their digits on the all-pages path too.
func TestBigNumbersAreExact(t *testing.T) {
	c := connected(t, []string{"--page-size", "7"})
	all, err := c.ListAll(testCtx(t), KindTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, digits := range []string{"123456789012345678901234567890", "-18446744073709551616", "1.000000000000000000001"} {
		if !strings.Contains(string(all), digits) {
			t.Errorf("ListAll lost %s", digits)
		}
	}
}

// With WithReconnect a crashed server is replaced on the next call; the
// CallTool that met the crash fails (not retried) and the states arrive in order.
func TestReconnectAfterACrash(t *testing.T) {
	states := make(chan string, 16)
	c := newFixture(t, nil, WithReconnect(3, 20*time.Millisecond, 200*time.Millisecond))
	if err := c.OnConnectionState(func(s ConnectionState, attempt int, _ string) {
		states <- fmt.Sprintf("%d/%d", s, attempt)
	}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, _, err := c.List(ctx, KindTools, ""); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(ctx, "crash", nil)
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "was not retried") {
		t.Fatalf("crash: %v", err)
	}
	if _, _, err := c.List(ctx, KindTools, ""); err != nil {
		t.Fatalf("list after the crash: %v", err)
	}
	want := []string{"1/0", "2/0", "3/1", "1/0"}
	for i, w := range want {
		select {
		case got := <-states:
			if got != w {
				t.Fatalf("state %d: %s, want %s", i, got, w)
			}
		case <-ctx.Done():
			t.Fatalf("state %d never came", i)
		}
	}
}
