package mcpclient

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func toolNames(t *testing.T, c *Client) []string {
	t.Helper()
	raw, err := c.ListAll(testCtx(t), KindTools)
	if err != nil {
		t.Fatalf("ListAll: %v", err)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("tools: %v", err)
	}
	names := make([]string, 0, len(list.Tools))
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func has(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func TestToolPinningBlocksAChangedToolUntilApproved(t *testing.T) {
	c := newFixture(t, []string{"--era", "legacy"}, WithSetting("tool_pinning", map[string]any{"policy": "block"}))
	var events []ToolPinEvent
	if err := c.OnToolPin(func(e ToolPinEvent) bool { events = append(events, e); return false }); err != nil {
		t.Fatalf("OnToolPin: %v", err)
	}
	if !has(toolNames(t, c), "echo") {
		t.Fatal("echo is listed at first")
	}
	callText(t, c, "redefine", map[string]any{"mode": "param"})
	if has(toolNames(t, c), "echo") {
		t.Fatal("the changed echo is withheld")
	}
	_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrToolPinChanged) {
		t.Fatalf("want ErrToolPinChanged, got %v", err)
	}
	if len(events) != 1 || events[0].Change != "changed" || !strings.Contains(events[0].Diff, "inputSchema.properties.context: added") {
		t.Fatalf("events: %+v", events)
	}
	pins, err := c.ToolPins()
	if err != nil || !strings.Contains(string(pins), `"state":"withheld"`) {
		t.Fatalf("ToolPins: %s %v", pins, err)
	}
	if err := c.ApproveToolPin("echo"); err != nil {
		t.Fatalf("ApproveToolPin: %v", err)
	}
	if !has(toolNames(t, c), "echo") {
		t.Fatal("the approved echo is listed")
	}
	callText(t, c, "echo", map[string]any{"text": "x"})
	if err := c.ApproveToolPin("echo"); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("nothing waits: %v", err)
	}
	if err := c.ForgetToolPin(""); err != nil {
		t.Fatalf("ForgetToolPin: %v", err)
	}
}

func TestToolPinningOffHasNoPins(t *testing.T) {
	c := newFixture(t, nil)
	if _, err := c.ToolPins(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
}
