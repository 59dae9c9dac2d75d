package mcpclient

// #include "shim.h"
// #include <stdlib.h>
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// ToolPinEvent is one change tool pinning saw in a listing (the "tool_pinning" configuration
// key): a new, changed or removed tool, with the pinned (Old) and listed (New) definitions and
// Diff, one line per changed place.
type ToolPinEvent struct {
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Change string          `json:"change"` // "new", "changed" or "removed"
	Policy string          `json:"policy"`
	Old    json.RawMessage `json:"old"`
	New    json.RawMessage `json:"new"`
	Diff   string          `json:"diff"`
}

type toolPinBox struct {
	fn func(ToolPinEvent) bool
}

// OnToolPin sets (nil removes) the hook told of each tool pin change. Under policy "ask" its
// answer approves (true) or withholds (false) the tool; otherwise it is ignored. It runs on the
// library's dispatcher thread and the listing waits for it, so it must not call the client.
// ErrUnsupported when pinning is off.
func (c *Client) OnToolPin(fn func(ToolPinEvent) bool) error {
	return c.setCallback(fn != nil, func() any { return &toolPinBox{fn: fn} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_tool_pin_hook(p, h, cerr)
		})
}

// ToolPins returns the pins of the client's server as JSON: {"server", "policy", "tools":
// [{"name", "digest", "definition", "state", "pending"?}]}, state one of pinned, changed,
// withheld, removed, new. It reads the pin store and sends nothing.
func (c *Client) ToolPins() (json.RawMessage, error) {
	defer runtime.KeepAlive(c)
	p, e := c.core.acquire()
	if e != nil {
		return nil, e
	}
	defer c.core.release()
	var out *C.char
	var cerr *C.mcp_error
	if st := C.mcp_client_tool_pins(p, &out, &cerr); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	defer C.mcp_string_free(out)
	return json.RawMessage(C.GoString(out)), nil
}

// ApproveToolPin pins the last listed definition of tool (changed or new): it is listed and
// callable again. ErrInvalidArg when no definition of it waits.
func (c *Client) ApproveToolPin(tool string) error {
	return c.pinCall(tool, true, func(p *C.mcp_client, t *C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_approve_tool_pin(p, t, cerr)
	})
}

// ForgetToolPin forgets the pin of tool (pinned afresh when next listed); an empty tool forgets
// every pin of the server (the next listing is pinned as a first use).
func (c *Client) ForgetToolPin(tool string) error {
	return c.pinCall(tool, tool != "", func(p *C.mcp_client, t *C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_forget_tool_pin(p, t, cerr)
	})
}

func (c *Client) pinCall(tool string, named bool, call func(*C.mcp_client, *C.char, **C.mcp_error) C.mcp_status) error {
	defer runtime.KeepAlive(c)
	p, e := c.core.acquire()
	if e != nil {
		return e
	}
	defer c.core.release()
	var t *C.char
	if named {
		t = C.CString(tool)
		defer C.free(unsafe.Pointer(t))
	}
	var cerr *C.mcp_error
	if st := call(p, t, &cerr); st != C.MCP_OK {
		return fromC(st, cerr)
	}
	return nil
}
