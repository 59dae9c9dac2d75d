package mcpclient

/*
#include "mcp_client.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"unsafe"
)

// WithApps declares the MCP Apps extension (SEP-1865, io.modelcontextprotocol/ui) with the MIME
// type text/html;profile=mcp-app: the host can render apps' views.
func WithApps() Option { return func(c *config) { c.settings["apps"] = true } }

// ToolUI returns a tool's UI link under MCP Apps: {"resourceUri": "ui://...", "visibility":
// [...], "model": bool, "app": bool}, or null when the tool has none (a link that is not ui://
// counts as none). An app-only tool ("model": false) is left out of ExportTools.
func ToolUI(tool any) (json.RawMessage, error) {
	return pureJSON(func(out **C.char, cerr **C.mcp_error, args []*C.char) C.mcp_status {
		return C.mcp_tool_ui(args[0], out, cerr)
	}, arg{tool, "tool", true})
}

// ReadApp reads an app's view (a ui:// resource) and verifies it: MIME type
// text/html;profile=mcp-app, text or base64 blob, at most maxBytes (0: 4 MiB). Result:
// {"uri", "html", "meta"}, meta the view's _meta.ui for the host's sandbox. ErrInvalidArg
// for a URI that is not ui://, StatusMessageTooLarge over the bound, ErrProtocolViolation for
// any other failed check.
func (c *Client) ReadApp(ctx context.Context, uri string, maxBytes int, opts ...CallOption) (json.RawMessage, error) {
	curi := cstr(uri)
	defer freeC(curi)
	if maxBytes < 0 {
		maxBytes = 0
	}
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_read_app_start(p, curi, C.size_t(maxBytes), pr.opts, done, ud, call, cerr)
	})
}
