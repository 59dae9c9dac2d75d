package mcpclient

/*
#include <stdlib.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// HandlerFunc answers one server input request (elicitation/create, sampling/createMessage,
// roots/list): params is the request's params; return the result object (ElicitResult,
// CreateMessageResult, ListRootsResult). Each call runs on its own goroutine, so it may take
// as long as it needs (ask a user, wait for another goroutine) and may call the client.
// ctx ends when the answer is no longer wanted (call cancelled or timed out, a sibling input
// failed) or the client closes.
//
// A returned error fails the input: on modern servers the call ends with ErrHandlerFailed,
// on legacy servers the server receives the JSON-RPC error (code from an *RPCError, else
// -32603). A nil result with a nil error declines an elicitation ({"action":"decline"}) and
// fails sampling and roots. A panic is recovered and reported as an error.
type HandlerFunc func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)

type inputKind int

const (
	kindElicitation inputKind = C.MCPGO_ELICITATION
	kindSampling    inputKind = C.MCPGO_SAMPLING
	kindRoots       inputKind = C.MCPGO_ROOTS
)

type inputBox struct {
	kind inputKind
	fn   HandlerFunc
	base context.Context
}

// OnElicitation registers the elicitation/create handler (nil unregisters) and declares the
// elicitation capability. Register handlers before Connect: legacy servers learn the
// capabilities at initialize.
func (c *Client) OnElicitation(fn HandlerFunc) error { return c.register(kindElicitation, fn) }

// ElicitationModes are the elicitation modes a handler answers (OnElicitationModes).
type ElicitationModes uint32

const (
	// ElicitationForm: the server asks for content matching a schema (the default mode).
	ElicitationForm ElicitationModes = C.MCP_ELICITATION_FORM
	// ElicitationURL: the user opens a URL out of band; an accept carries no content.
	ElicitationURL ElicitationModes = C.MCP_ELICITATION_URL
)

// OnElicitationModes registers the elicitation handler for modes (ElicitationForm,
// ElicitationURL or both, ORed) and declares exactly those; a request in another mode is left
// to the host (InputRequiredError), as for a kind without a handler. nil removes the handler.
func (c *Client) OnElicitationModes(modes ElicitationModes, fn HandlerFunc) error {
	return c.setCallback(fn != nil, func() any { return &inputBox{kind: kindElicitation, fn: fn, base: c.core.ctx} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_register_elicitation_modes(p, C.uint32_t(modes), h, cerr)
		})
}

// setCallback installs a callback: set hands the library the handle of box() when on (0 when
// not: removing the callback). The library runs userdata_free (deleting the handle) exactly
// once, even on failure.
func (c *Client) setCallback(on bool, box func() any, set func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status) error {
	defer runtime.KeepAlive(c)
	p, e := c.core.acquire()
	if e != nil {
		return e
	}
	defer c.core.release()
	var h C.uintptr_t
	if on {
		h = C.uintptr_t(newHandle(box()))
	}
	var cerr *C.mcp_error
	if st := set(p, h, &cerr); st != C.MCP_OK {
		return fromC(st, cerr)
	}
	return nil
}

// OnSampling registers the sampling/createMessage handler (nil unregisters) and declares
// sampling (with tools under WithSamplingTools). Sampling is deprecated by the 2026-07-28
// specification (SEP-2577, removal no earlier than the first release after 2027-07-28); it keeps
// working, on both eras.
func (c *Client) OnSampling(fn HandlerFunc) error { return c.register(kindSampling, fn) }

// OnRoots registers the roots/list handler (nil unregisters) and declares roots. Roots are
// deprecated by the 2026-07-28 specification (SEP-2577); they keep working, on both eras.
func (c *Client) OnRoots(fn HandlerFunc) error { return c.register(kindRoots, fn) }

func (c *Client) register(kind inputKind, fn HandlerFunc) error {
	return c.setCallback(fn != nil, func() any { return &inputBox{kind: kind, fn: fn, base: c.core.ctx} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_register_input(p, C.int(kind), h, cerr)
		})
}

// OnNotification sets the listener for every server notification except progress (nil
// removes it). Listeners run in order on one goroutine per client (shared with progress
// callbacks); keep them short. They may call the client.
func (c *Client) OnNotification(fn func(method string, params json.RawMessage)) error {
	return c.setCallback(fn != nil, func() any { return &notifyBox{fn: fn, q: c.core.events} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_notification_listener(p, h, cerr)
		})
}

// OnLog sets the log listener (nil removes it): the server's stderr lines (source "stderr",
// level "info") and the library's warnings (source "transport" or "client", level
// "warning"). Runs like OnNotification listeners.
func (c *Client) OnLog(fn func(level, source, message string)) error {
	return c.setCallback(fn != nil, func() any { return &logBox{fn: fn, q: c.core.events} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_log_listener(p, h, cerr)
		})
}

// ConnectionState is what OnConnectionState reports.
type ConnectionState int32

// Connection states (MCP_CONNECTION_* in mcp_client.h).
const (
	// StateConnected: a connect succeeded (the first one, and each reconnect).
	StateConnected ConnectionState = C.MCP_CONNECTION_CONNECTED
	// StateDisconnected: the connection was lost; detail says why.
	StateDisconnected ConnectionState = C.MCP_CONNECTION_DISCONNECTED
	// StateReconnecting: reconnect attempt `attempt` (1-based) starts.
	StateReconnecting ConnectionState = C.MCP_CONNECTION_RECONNECTING
	// StateFailed: every attempt failed; detail is the last error. The next call starts over.
	StateFailed ConnectionState = C.MCP_CONNECTION_FAILED
)

// OnConnectionState sets the connection-state listener (nil removes it). Without WithReconnect
// only StateConnected is reported. Runs like OnNotification listeners, in order.
func (c *Client) OnConnectionState(fn func(state ConnectionState, attempt int, detail string)) error {
	return c.setCallback(fn != nil, func() any { return &stateBox{fn: fn, q: c.core.events} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_state_listener(p, h, cerr)
		})
}

type stateBox struct {
	fn func(state ConnectionState, attempt int, detail string)
	q  *eventQueue
}

type notifyBox struct {
	fn func(method string, params json.RawMessage)
	q  *eventQueue
}

type logBox struct {
	fn func(level, source, message string)
	q  *eventQueue
}

type progressBox struct {
	fn func(progress, total float64, message string)
	q  *eventQueue // the call's own queue, drained before the call returns
}

// responder owns a deferred mcp_responder until one reply consumes it.
type responder struct {
	mu  sync.Mutex
	ptr *C.mcp_responder
}

// take hands the responder to exactly one reply.
func (r *responder) take() *C.mcp_responder {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.ptr
	r.ptr = nil
	return p
}

// unwantedContext is a handler's context: cancelled by the library's pushed cancellation
// (mcp_responder_on_cancel: the call was cancelled or timed out, a sibling input failed, the
// flow ended) or when the client closes. Registered in the callback, before the responder can
// be answered.
func unwantedContext(base context.Context, r *C.mcp_responder) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(base)
	// The library deletes the handle (userdata_free) once the hook ran or can no longer run.
	_ = C.mcpgo_responder_on_cancel(r, C.uintptr_t(newHandle(cancel)), nil)
	return ctx, cancel
}

// serve runs the Go handler for one request on its own goroutine and completes the (already
// deferred) responder with its outcome.
func (b *inputBox) serve(ctx context.Context, cancel context.CancelFunc, params json.RawMessage, r *responder) {
	defer cancel()
	result, err := b.call(ctx, params)
	b.reply(r.take(), result, err)
}

func (b *inputBox) call(ctx context.Context, params json.RawMessage) (result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, fmt.Errorf("the handler panicked: %v", p)
		}
	}()
	return b.fn(ctx, params)
}

func (b *inputBox) reply(p *C.mcp_responder, result json.RawMessage, err error) {
	if p == nil {
		return
	}
	if err == nil && len(result) == 0 {
		if b.kind == kindElicitation {
			result = json.RawMessage(`{"action":"decline"}`)
		} else {
			err = errors.New("the handler returned no result")
		}
	}
	if err != nil {
		var code int64
		msg := err.Error()
		var rpc *RPCError
		if errors.As(err, &rpc) {
			code, msg = rpc.Code, rpc.Message
		}
		cmsg := cstr(shown(msg))
		defer freeC(cmsg)
		// MCP_CANCELLED (nobody waits any more) is fine: the responder is consumed either way.
		C.mcp_responder_reply_error(p, C.int64_t(code), cmsg, nil)
		return
	}
	cres := cstr(string(result))
	defer freeC(cres)
	C.mcp_responder_reply_json(p, cres, nil)
}
