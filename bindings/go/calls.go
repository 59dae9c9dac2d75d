package mcpclient

/*
#include <stdlib.h>
#include "mcp_client.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"unsafe"
)

// ListKind selects what List and ListAll list.
type ListKind int32

const (
	KindTools             ListKind = C.MCP_LIST_TOOLS
	KindPrompts           ListKind = C.MCP_LIST_PROMPTS
	KindResources         ListKind = C.MCP_LIST_RESOURCES
	KindResourceTemplates ListKind = C.MCP_LIST_RESOURCE_TEMPLATES
)

// optStr is a C copy of *s, or NULL; release with freeC.
func optStr(s *string) *C.char {
	if s == nil {
		return nil
	}
	return cstr(*s)
}

// List fetches one page (cursor "" for the first) and returns the raw list result and its
// nextCursor ("" on the last page).
func (c *Client) List(ctx context.Context, kind ListKind, cursor string, opts ...CallOption) (json.RawMessage, string, error) {
	if err := noNUL("cursor", cursor); err != nil {
		return nil, "", err
	}
	var ccur *C.char
	if cursor != "" {
		ccur = cstr(cursor)
		defer freeC(ccur)
	}
	page, err := c.startOp(ctx, Operation{Method: kind.method()}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_list_start(p, C.int32_t(kind), ccur, pr.opts, done, ud, call, cerr)
	})
	if err != nil {
		return nil, "", err
	}
	var next struct {
		NextCursor string `json:"nextCursor"`
	}
	_ = json.Unmarshal(page, &next)
	return page, next.NextCursor, nil
}

// ListAll fetches every page and merges them: {"tools": [...]} (or prompts, resources,
// resourceTemplates).
func (c *Client) ListAll(ctx context.Context, kind ListKind, opts ...CallOption) (json.RawMessage, error) {
	return c.startOp(ctx, Operation{Method: kind.method()}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_list_all_start(p, C.int32_t(kind), pr.opts, done, ud, call, cerr)
	})
}

// method is the list method of the kind.
func (k ListKind) method() string {
	switch k {
	case KindTools:
		return "tools/list"
	case KindPrompts:
		return "prompts/list"
	case KindResources:
		return "resources/list"
	case KindResourceTemplates:
		return "resources/templates/list"
	}
	return ""
}

// CallTool calls a tool. args is marshalled to a JSON object (json.RawMessage and []byte are
// passed verbatim; nil sends no arguments). input_required rounds are answered by the
// registered handlers; without one the call fails with an *InputRequiredError. A tool error
// (isError: true) is a result, not an error. Result: the CallToolResult JSON.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (json.RawMessage, error) {
	a, err := marshalArg(args, "args")
	if err != nil {
		return nil, err
	}
	if err := noNUL("name", name); err != nil {
		return nil, err
	}
	cname, cargs := cstr(name), optStr(a)
	defer freeC(cname)
	defer freeC(cargs)
	return c.startOp(ctx, Operation{Method: "tools/call", Target: name}, opts, true, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_call_tool_start(p, cname, cargs, pr.inputResponses, pr.requestState, pr.opts, done, ud, call, cerr)
	})
}

// GetPrompt gets a prompt with string arguments (nil: none). MRTR as for CallTool. Result:
// the GetPromptResult JSON.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (json.RawMessage, error) {
	var a *string
	if args != nil {
		var err error
		if a, err = marshalArg(args, "args"); err != nil {
			return nil, err
		}
	}
	if err := noNUL("name", name); err != nil {
		return nil, err
	}
	cname, cargs := cstr(name), optStr(a)
	defer freeC(cname)
	defer freeC(cargs)
	return c.startOp(ctx, Operation{Method: "prompts/get", Target: name}, opts, true, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_get_prompt_start(p, cname, cargs, pr.inputResponses, pr.requestState, pr.opts, done, ud, call, cerr)
	})
}

// ReadResource reads a resource. MRTR as for CallTool. Result: the ReadResourceResult JSON.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (json.RawMessage, error) {
	if err := noNUL("uri", uri); err != nil {
		return nil, err
	}
	curi := cstr(uri)
	defer freeC(curi)
	return c.startOp(ctx, Operation{Method: "resources/read", Target: uri}, opts, true, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_read_resource_start(p, curi, pr.inputResponses, pr.requestState, pr.opts, done, ud, call, cerr)
	})
}

// Complete sends completion/complete with params {ref, argument, context?}. Result: the
// CompleteResult JSON.
func (c *Client) Complete(ctx context.Context, params any, opts ...CallOption) (json.RawMessage, error) {
	a, err := marshalArg(params, "params")
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, &Error{Status: StatusNullArg, Message: "Complete needs params"}
	}
	cparams := optStr(a)
	defer freeC(cparams)
	return c.startOp(ctx, Operation{Method: "completion/complete"}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_complete_start(p, cparams, pr.opts, done, ud, call, cerr)
	})
}

// Request sends any request by method name; params (a JSON object, or nil) get the era's
// _meta. MRTR is driven automatically for the three MRTR methods.
func (c *Client) Request(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	a, err := marshalArg(params, "params")
	if err != nil {
		return nil, err
	}
	if err := noNUL("method", method); err != nil {
		return nil, err
	}
	cmethod, cparams := cstr(method), optStr(a)
	defer freeC(cmethod)
	defer freeC(cparams)
	return c.startOp(ctx, Operation{Method: method}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_request_start(p, cmethod, cparams, pr.opts, done, ud, call, cerr)
	})
}

// Ping sends a legacy ping (ErrUnsupported on modern servers, which removed it).
func (c *Client) Ping(ctx context.Context, opts ...CallOption) error {
	_, err := c.startOp(ctx, Operation{Method: "ping"}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_ping_start(p, pr.opts, done, ud, call, cerr)
	})
	return err
}

// SetLogLevel sets the server's log level ("debug" … "emergency"): legacy logging/setLevel;
// modern servers get it in every later request's _meta. Logging is deprecated by the 2026-07-28
// specification (SEP-2577); it keeps working, on both eras.
func (c *Client) SetLogLevel(ctx context.Context, level string, opts ...CallOption) error {
	if err := noNUL("level", level); err != nil {
		return err
	}
	cl := cstr(level)
	defer freeC(cl)
	_, err := c.startOp(ctx, Operation{Method: "logging/setLevel"}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_set_log_level_start(p, cl, pr.opts, done, ud, call, cerr)
	})
	return err
}

// SubscribeResource sends legacy resources/subscribe; updates arrive at the notification
// listener (modern servers: use Listen).
func (c *Client) SubscribeResource(ctx context.Context, uri string, opts ...CallOption) error {
	if err := noNUL("uri", uri); err != nil {
		return err
	}
	cu := cstr(uri)
	defer freeC(cu)
	_, err := c.startOp(ctx, Operation{Method: "resources/subscribe", Target: uri}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_subscribe_resource_start(p, cu, pr.opts, done, ud, call, cerr)
	})
	return err
}

// UnsubscribeResource sends legacy resources/unsubscribe.
func (c *Client) UnsubscribeResource(ctx context.Context, uri string, opts ...CallOption) error {
	if err := noNUL("uri", uri); err != nil {
		return err
	}
	cu := cstr(uri)
	defer freeC(cu)
	_, err := c.startOp(ctx, Operation{Method: "resources/unsubscribe", Target: uri}, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_unsubscribe_resource_start(p, cu, pr.opts, done, ud, call, cerr)
	})
	return err
}

// NotifyRootsChanged tells a legacy server the host's roots changed (a no-op on modern
// servers). The library takes no options for it: an ending ctx stops the wait only.
func (c *Client) NotifyRootsChanged(ctx context.Context) error {
	_, err := c.startJSON(ctx, nil, false, func(p *C.mcp_client, _ *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_notify_roots_changed_start(p, done, ud, call, cerr)
	})
	return err
}
