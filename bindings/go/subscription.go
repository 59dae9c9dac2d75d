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
	"runtime"
	"sync"
	"unsafe"
)

// Subscription is a subscriptions/listen stream (modern servers). Next serves one reader at
// a time (concurrent readers are serialised); Close may be called from any goroutine, more
// than once. Client.Close closes the client's subscriptions too; a finalizer closes a
// forgotten one as a backstop.
type Subscription struct {
	s      *subCore
	client *Client // keeps the client (and its finalizer) alive while the subscription is used
}

type subCore struct {
	mu       sync.Mutex
	ptr      *C.mcp_subscription
	closed   bool
	inflight sync.WaitGroup
	once     sync.Once
	readMu   sync.Mutex
	owner    *core
	ack      json.RawMessage
}

// Event is one notification of a subscription.
type Event struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Listen opens subscriptions/listen with filter (a SubscriptionFilter, e.g.
// {"toolsListChanged":true,"resourceSubscriptions":["file:///x"]}) and waits for the
// server's acknowledgement. Legacy servers: ErrUnsupported (use SubscribeResource and
// OnNotification).
func (c *Client) Listen(ctx context.Context, filter any, opts ...CallOption) (*Subscription, error) {
	f, err := marshalArg(filter, "filter")
	if err != nil {
		return nil, err
	}
	text := "{}"
	if f != nil {
		text = *f
	}
	cf := cstr(text)
	defer freeC(cf)
	var sc *subCore
	ack, err := c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		var sp *C.mcp_subscription
		st := C.mcp_client_listen_start(p, cf, pr.opts, done, ud, &sp, call, cerr)
		if st != C.MCP_OK {
			return st
		}
		// The handle comes at once (readable once acknowledged); registered while this call
		// still counts as in flight, so Client.Close sees it.
		sc = &subCore{ptr: sp, owner: c.core}
		c.core.mu.Lock()
		c.core.subs[sc] = struct{}{}
		c.core.mu.Unlock()
		return st
	})
	if err != nil {
		if sc != nil {
			sc.close() // never acknowledged: gives the listen up and frees the handle
		}
		return nil, err
	}
	sc.ack = ack
	sub := &Subscription{s: sc, client: c}
	runtime.SetFinalizer(sub, func(s *Subscription) { go s.s.close() })
	return sub, nil
}

// Acknowledged is the filter the server acknowledged (the subset it honours).
func (s *Subscription) Acknowledged() json.RawMessage { return s.s.ack }

// Next waits for the next notification. It returns an error matching ErrClosed once the
// subscription ended (the server ended it, Close, or the client closed), ErrCancelled when
// it was cancelled, or the context's error (as an *Error) when ctx ends first. The wait is a
// started read (mcp_subscription_next_start): an ending ctx cancels it at once.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	defer runtime.KeepAlive(s)
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return Event{}, ctxError(ctx)
	}
	sc := s.s
	sc.readMu.Lock()
	defer sc.readMu.Unlock()
	sc.mu.Lock()
	if sc.closed {
		sc.mu.Unlock()
		return Event{}, &Error{Status: StatusClosed, Message: "the subscription is closed"}
	}
	sc.inflight.Add(1)
	p := sc.ptr
	sc.mu.Unlock()
	defer sc.inflight.Done()
	var ev Event
	box, call, st, cerr := startWith(func(ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_subscription_next_start(p, -1, C.mcp_call_done_fn(C.mcpgo_call_done), ud, call, cerr)
	})
	if st != C.MCP_OK {
		return Event{}, withContext(ctx, fromC(st, cerr))
	}
	// No library timeout: a deadline ends ctx, which cancels the read (reported as StatusTimeout).
	if o := await(ctx, box, call); o.err != nil {
		return Event{}, withContext(ctx, o.err)
	} else if err := json.Unmarshal([]byte(o.result), &ev); err != nil {
		return Event{}, &Error{Status: StatusInternal, Message: "unreadable event: " + err.Error(), cause: err}
	}
	return ev, nil
}

// Close ends the subscription (the server is told) and releases it. A Next in progress
// returns. Idempotent.
func (s *Subscription) Close() error {
	s.s.close()
	runtime.KeepAlive(s)
	return nil
}

func (sc *subCore) close() {
	sc.once.Do(func() {
		sc.mu.Lock()
		sc.closed = true
		sc.mu.Unlock()
		C.mcp_subscription_cancel(sc.ptr, nil) // wakes a Next in progress
		sc.inflight.Wait()
		C.mcp_subscription_free(sc.ptr)
		sc.mu.Lock()
		sc.ptr = nil
		sc.mu.Unlock()
		o := sc.owner
		o.mu.Lock()
		delete(o.subs, sc)
		o.mu.Unlock()
	})
}
