package mcpclient

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startHTTPFixture runs `mcp-fixture-server --http 127.0.0.1:0 --record <file> args...` and
// returns its URL and the record file. The server lives while its stdin is open.
func startHTTPFixture(t *testing.T, args ...string) (url, record string) {
	t.Helper()
	record = filepath.Join(t.TempDir(), "record.jsonl")
	cmd := exec.Command(fixture, append([]string{"--http", "127.0.0.1:0", "--record", record}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "fixture: listening on ") {
				lines <- strings.TrimPrefix(l, "fixture: listening on ")
			}
		}
	}()
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case url = <-lines:
		return url, record
	case err := <-exited:
		t.Fatalf("HTTP fixture exited: %v: %s", err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP fixture printed no URL")
	}
	return "", ""
}

func TestHTTPModern(t *testing.T) {
	url, record := startHTTPFixture(t, "--page-size", "3")
	c, err := NewHTTP(url, WithHeader("X-Go-Test", "binding"), WithBearerToken("s3cret"))
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	defer c.Close()
	withAllHandlers(t, c)
	info, err := c.Connect(testCtx(t))
	if err != nil {
		t.Fatalf("Connect over HTTP: %v", err)
	}
	if info.Era != EraModern {
		t.Fatalf("info %+v", info)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "over http"}); got != "over http" {
		t.Fatalf("echo: %q", got)
	}
	if got := callText(t, c, "elicit_once", nil); got != "Hello, Ada!" {
		t.Fatalf("elicit_once: %q", got)
	}
	if got := callText(t, c, "three_rounds", nil); got != "steps: v1,v2,v3" {
		t.Fatalf("three_rounds: %q", got)
	}
	all, err := c.ListAll(testCtx(t), KindTools)
	if err != nil || !strings.Contains(string(all), `"elicit_once"`) {
		t.Fatalf("ListAll: %v", err)
	}
	_, err = c.CallTool(testCtx(t), "rpc_error", nil)
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32050 {
		t.Fatalf("rpc_error: %v", err)
	}
	c.Close()
	rec, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ToLower(string(rec))
	if !strings.Contains(text, `"authorization":"bearer s3cret"`) {
		t.Errorf("no Authorization: Bearer header recorded")
	}
	if !strings.Contains(text, `"x-go-test":"binding"`) {
		t.Errorf("no X-Go-Test header recorded")
	}
}

func TestHTTPLegacy(t *testing.T) {
	url, _ := startHTTPFixture(t, "--era", "legacy")
	c, err := NewHTTP(url)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	defer c.Close()
	withAllHandlers(t, c)
	info, err := c.Connect(testCtx(t))
	if err != nil {
		t.Fatalf("Connect over HTTP (legacy): %v", err)
	}
	if info.Era != EraLegacy {
		t.Fatalf("info %+v", info)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "legacy http"}); got != "legacy http" {
		t.Fatalf("echo: %q", got)
	}
	if got := callText(t, c, "elicit_once", nil); got != "Hello, Ada!" {
		t.Fatalf("elicit_once: %q", got)
	}
}
