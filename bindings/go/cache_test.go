package mcpclient

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sent counts the requests of method in the fixture's --record file.
func sent(t *testing.T, record, method string) int {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == method && m.ID != nil {
			n++
		}
	}
	return n
}

func TestResponseCache(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.jsonl")
	c := newFixture(t, []string{"--cache-ttl-ms", "60000", "--record", record})
	ctx := testCtx(t)
	for i := 0; i < 2; i++ {
		if _, _, err := c.List(ctx, KindTools, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := sent(t, record, "tools/list"); n != 1 {
		t.Fatalf("a second tools/list within the TTL went out: %d sent", n)
	}
	if _, _, err := c.List(ctx, KindTools, "", WithCacheMode(CacheBypass)); err != nil {
		t.Fatal(err)
	}
	if n := sent(t, record, "tools/list"); n != 2 {
		t.Fatalf("bypass: %d sent", n)
	}
	if err := c.SetCachePartition("user-b"); err != nil {
		t.Fatal(err)
	}
	if err := c.ClearCache(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.List(ctx, KindTools, ""); err != nil {
		t.Fatal(err)
	}
	if n := sent(t, record, "tools/list"); n != 3 {
		t.Fatalf("after clear: %d sent", n)
	}

	off := filepath.Join(t.TempDir(), "off.jsonl")
	c2 := newFixture(t, []string{"--cache-ttl-ms", "60000", "--record", off}, WithResponseCache(false, 0))
	for i := 0; i < 2; i++ {
		if _, _, err := c2.List(ctx, KindTools, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := sent(t, off, "tools/list"); n != 2 {
		t.Fatalf("cache off: %d sent", n)
	}
}

func TestOutputSchemaValidation(t *testing.T) {
	c := newFixture(t, nil)
	ctx := testCtx(t)
	if _, err := c.CallTool(ctx, "typed", map[string]any{"value": 5}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(ctx, "typed", map[string]any{"value": "five"})
	var detail *OutputSchemaError
	if !errors.Is(err, ErrOutputSchemaInvalid) || !errors.As(err, &detail) {
		t.Fatalf("want ErrOutputSchemaInvalid, got %v", err)
	}
	if !contains(string(detail.Result), `"five"`) || !contains(err.Error(), "/result") {
		t.Fatalf("detail %s, message %v", detail.Result, err)
	}
	if _, err := c.CallTool(ctx, "typed", map[string]any{"value": "five"}, WithoutOutputValidation()); err != nil {
		t.Fatalf("per call off: %v", err)
	}
	off := newFixture(t, nil, WithOutputSchemaValidation(false))
	if _, err := off.CallTool(ctx, "typed", map[string]any{"value": "five"}); err != nil {
		t.Fatalf("per client off: %v", err)
	}
}
