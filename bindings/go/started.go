package mcpclient

/*
#include <stdint.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Every call that waits on the server runs as a started call (its *_start form in the C ABI;
// TestEveryContextMethodIsStarted checks each method taking a context): the library completes it on its
// dispatcher thread (goMcpCallDone), which hands the outcome to the waiting goroutine through
// a channel. A goroutine waiting on a call holds no OS thread, and a context that ends cancels
// the call at once (mcp_call_cancel); no watcher goroutine, no polling.

// outcome is a started call's completion, copied off the dispatcher thread.
type outcome struct {
	result string
	err    *Error
}

// callBox is a started call's userdata (through a cgo.Handle).
type callBox struct{ ch chan outcome }

// startedInFlight counts started calls not yet completed (the tests wait on it);
// startedTotal counts every start tried (the parity test checks each method starts one).
var startedInFlight, startedTotal atomic.Int64

// startWith starts one call through start with a fresh box; on failure the box is released
// (a failed start never completes).
func startWith(start func(ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status) (*callBox, *C.mcp_call, C.mcp_status, *C.mcp_error) {
	box := &callBox{ch: make(chan outcome, 1)}
	h := newHandle(box)
	startedTotal.Add(1)
	startedInFlight.Add(1)
	var call *C.mcp_call
	var cerr *C.mcp_error
	st := start(C.mcpgo_userdata(C.uintptr_t(h)), &call, &cerr)
	if st != C.MCP_OK {
		startedInFlight.Add(-1)
		deleteHandle(h)
	}
	return box, call, st, cerr
}

// startFn starts one C call with the completion and its userdata.
type startFn func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer,
	call **C.mcp_call, cerr **C.mcp_error) C.mcp_status

// settings applies opts; the MRTR options are refused on calls that take none.
func settings(opts []CallOption, mrtr bool) (callSettings, *Error) {
	var s callSettings
	for _, o := range opts {
		o(&s)
	}
	if !mrtr && (s.inputResponses != nil || s.requestState != nil) {
		return s, &Error{Status: StatusInvalidArg, Message: "WithInputResponses and WithRequestState apply to CallTool, GetPrompt and ReadResource only"}
	}
	return s, nil
}

// startJSON runs one started call under ctx and opts and returns its result JSON.
func (c *Client) startJSON(ctx context.Context, opts []CallOption, mrtr bool, fn startFn) (json.RawMessage, error) {
	return c.startOp(ctx, Operation{}, opts, mrtr, fn)
}

// startOp is startJSON for a call whose operation is known beforehand (told to a TraceScope).
func (c *Client) startOp(ctx context.Context, op Operation, opts []CallOption, mrtr bool, fn startFn) (json.RawMessage, error) {
	defer runtime.KeepAlive(c)
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return nil, ctxError(ctx)
	}
	s, e := settings(opts, mrtr)
	if e != nil {
		return nil, e
	}
	s.op = op
	r, e := c.core.started(ctx, &s, fn)
	if e != nil {
		return nil, e
	}
	return json.RawMessage(r), nil
}

// started starts fn and waits for its completion or for ctx to end (which cancels the call;
// its completion, MCP_CANCELLED unless the result won the race, still comes).
func (c *core) started(ctx context.Context, s *callSettings, fn startFn) (string, *Error) {
	p, e := c.acquire()
	if e != nil {
		return "", e
	}
	end, e := withTrace(ctx, &c.trace, s)
	if e != nil {
		c.release()
		return "", e
	}
	pr, e := prepare(ctx, s)
	if e != nil {
		c.release()
		end(e)
		return "", e
	}
	box, call, st, cerr := startWith(func(ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return fn(p, pr, C.mcp_call_done_fn(C.mcpgo_call_done), ud, call, cerr)
	})
	if st != C.MCP_OK {
		c.release()
		pr.free()
		e = withContext(ctx, fromC(st, cerr))
		end(e)
		return "", e
	}
	o := await(ctx, box, call)
	// Out of the library: Close may proceed even while progress callbacks still run (one of
	// them may be the one calling Close); the library sends no progress after the completion.
	c.release()
	pr.free()
	if o.err != nil {
		e = withContext(ctx, o.err)
		end(e)
		return "", e
	}
	end(nil)
	return o.result, nil
}

// await waits for a started call's completion and frees the call. When ctx ends first the
// call is cancelled; its completion (MCP_CANCELLED, unless the result won the race) follows
// at once.
func await(ctx context.Context, box *callBox, call *C.mcp_call) outcome {
	var o outcome
	select {
	case o = <-box.ch:
	case <-ctx.Done():
		C.mcp_call_cancel(call)
		o = <-box.ch
	}
	C.mcp_call_free(call)
	return o
}
