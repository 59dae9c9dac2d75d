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

// Tools for the model: a tool list in the OpenAI, Anthropic or Gemini function-calling format,
// the model's calls found in its reply, and results as the API's tool-result messages.

// ExportTools exports tools (a tools/list result or its tools array, or Hub.ListTools' merged
// list, whose tools name their member in _meta) to a model API's format.
// options: {"format": "openai-chat" | "openai-responses" | "anthropic" | "gemini", "strict",
// "gemini_legacy_parameters", "describe_title", "describe_annotations", "max_ref_depth"} (nil:
// the defaults). The result is {"format", "tools", "routes", "report"}: send its "tools" to the
// API and keep the whole document for FindCalls and DispatchToolCall.
func ExportTools(tools any, options any) (json.RawMessage, error) {
	return pureJSON(func(out **C.char, cerr **C.mcp_error, args []*C.char) C.mcp_status {
		return C.mcp_export_tools(args[0], args[1], nil, out, cerr)
	}, arg{tools, "tools", true}, arg{options, "options", false})
}

// FindCalls returns the tool calls in a model's reply (a message, a response, a list of blocks
// or one call, in the export's format) as a JSON array of the API-shaped call objects.
func FindCalls(exported json.RawMessage, reply any) (json.RawMessage, error) {
	return pureJSON(func(out **C.char, cerr **C.mcp_error, args []*C.char) C.mcp_status {
		return C.mcp_export_calls(args[0], args[1], out, cerr)
	}, arg{exported, "exported", true}, arg{reply, "reply", true})
}

// ResultMessage is the API's tool-result message answering call with result, a CallToolResult
// the host got itself. options: {"max_chars", "resources_as_text", "images"} (nil: defaults).
func ResultMessage(exported json.RawMessage, call, result, options any) (json.RawMessage, error) {
	return pureJSON(func(out **C.char, cerr **C.mcp_error, args []*C.char) C.mcp_status {
		return C.mcp_export_result(args[0], args[1], args[2], args[3], out, cerr)
	}, arg{exported, "exported", true}, arg{call, "call", true}, arg{result, "result", true}, arg{options, "options", false})
}

// DispatchToolCall makes one model tool call (one call in the export's format) and returns
// the API's tool-result message. Bad arguments, tool errors, protocol errors and timeouts come
// back as messages the model reads unless options say {"errors_as_results": false}.
func (c *Client) DispatchToolCall(ctx context.Context, exported json.RawMessage, call any, options any, opts ...CallOption) (json.RawMessage, error) {
	e, err := cArgs(arg{exported, "exported", true}, arg{call, "call", true}, arg{options, "options", false})
	if err != nil {
		return nil, err
	}
	defer freeAll(e)
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_export_dispatch_start(p, e[0], e[1], e[2], pr.opts, done, ud, call, cerr)
	})
}

// DispatchToolCall on a hub: the call goes to the member the export's route names (ExportTools
// of Hub.ListTools routes each namespaced name back to its member and the tool's own name
// there), under that member's state, call cap and tool filter. A name the export lacks, a tool
// the filter withholds or a member the hub no longer has is a message the model reads too.
func (h *Hub) DispatchToolCall(ctx context.Context, exported json.RawMessage, call any, options any, opts ...CallOption) (json.RawMessage, error) {
	e, err := cArgs(arg{exported, "exported", true}, arg{call, "call", true}, arg{options, "options", false})
	if err != nil {
		return nil, err
	}
	defer freeAll(e)
	return h.started(ctx, Operation{}, opts, func(p *C.mcp_hub, o *C.mcp_call_opts, done C.mcp_call_done_fn, ud unsafe.Pointer,
		call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_export_dispatch_start(p, e[0], e[1], e[2], o, done, ud, call, cerr)
	})
}

type arg struct {
	value    any
	what     string
	required bool
}

// cArgs marshals each argument to C JSON text (NULL for an absent optional one).
func cArgs(args ...arg) ([]*C.char, error) {
	out := make([]*C.char, 0, len(args))
	for _, a := range args {
		text, err := marshalArg(a.value, a.what)
		if err == nil && text == nil && a.required {
			err = &Error{Status: StatusNullArg, Message: a.what + " is nil"}
		}
		if err != nil {
			freeAll(out)
			return nil, err
		}
		out = append(out, optStr(text))
	}
	return out, nil
}

func freeAll(ps []*C.char) {
	for _, p := range ps {
		freeC(p)
	}
}

func pureJSON(fn func(out **C.char, cerr **C.mcp_error, args []*C.char) C.mcp_status, args ...arg) (json.RawMessage, error) {
	c, err := cArgs(args...)
	if err != nil {
		return nil, err
	}
	defer freeAll(c)
	var out *C.char
	var cerr *C.mcp_error
	if st := fn(&out, &cerr, c); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	return json.RawMessage(takeString(out)), nil
}
