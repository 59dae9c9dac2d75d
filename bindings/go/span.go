package mcpclient

// The span listener (its own file: a file with //export may only declare in its preamble).

/*
#include <stddef.h>
#include <stdint.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"encoding/json"
	"runtime/cgo"
	"unsafe"
)

// OnSpan sets the span listener (nil removes it, and then nothing is built): once per MCP
// operation the client sends, after it ended, fn gets the operation's CLIENT span by the
// OpenTelemetry semantic conventions for MCP as JSON: name ("tools/call echo"), kind,
// start_unix_nano, end_unix_nano, attributes (mcp.method.name, gen_ai.tool.name, error.type,
// jsonrpc.request.id, network.transport, server.address, server.port, ...), events (MRTR
// rounds, task polls, reconnect retries) and status. Runs like OnNotification listeners, in
// order on the client's event goroutine.
func (c *Client) OnSpan(fn func(span json.RawMessage)) error {
	return c.setCallback(fn != nil, func() any { return &spanBox{fn: fn, q: c.core.events} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_span_listener(p, h, cerr)
		})
}

// OnSpanSync sets the record listener like OnSpan (it replaces OnSpan's listener, and OnSpan
// replaces it), but fn runs at once on the library's thread that delivers the record, not on
// the event goroutine: a call's span record has reached fn before the call returns. fn gets
// every record the library delivers (span records, and session records where the library
// sends them: see docs/observability.md); it must be quick, must not block on the client's
// calls and must not call the client. A panic in fn is recovered (that record is dropped).
func (c *Client) OnSpanSync(fn func(record json.RawMessage)) error {
	return c.setCallback(fn != nil, func() any { return &spanBox{fn: fn, sync: true} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_span_listener(p, h, cerr)
		})
}

type spanBox struct {
	fn   func(span json.RawMessage)
	q    *eventQueue
	sync bool // OnSpanSync: fn runs on the delivering thread
}

//export goMcpSpan
func goMcpSpan(ud C.uintptr_t, span *C.char, n C.size_t) {
	box, ok := cgo.Handle(ud).Value().(*spanBox)
	if !ok {
		return
	}
	s := json.RawMessage(C.GoBytes(unsafe.Pointer(span), C.int(n)))
	if box.sync {
		defer func() { _ = recover() }() // a panicking listener loses its record; it must not unwind into C
		box.fn(s)
		return
	}
	box.q.push(func() { box.fn(s) })
}
