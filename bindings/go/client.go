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
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Client is an MCP client over one connection (a stdio child process or an HTTP endpoint).
// All methods are safe for concurrent use; concurrent calls are multiplexed over the
// connection. Close it when done; a finalizer closes a forgotten client as a backstop.
type Client struct {
	core *core
}

// core is what handlers, listeners and subscriptions reference, so that a Client nobody
// holds any more can still be finalized.
type core struct {
	mu       sync.Mutex
	ptr      *C.mcp_client // nil once freed
	closed   bool
	inflight sync.WaitGroup // calls inside the library; Close waits for them before freeing
	subs     map[*subCore]struct{}

	closeOnce sync.Once
	ctx       context.Context // cancelled by Close; handler contexts derive from it
	cancelCtx context.CancelFunc
	events    *eventQueue

	oauthLoopback bool // OAuth with the library's loopback listener (no oauth.redirect_uri)

	trace atomic.Pointer[traceSourceBox] // SetTraceContext
}

// NewStdio creates a client that starts command with args as a stdio MCP server. Nothing is
// started before Connect (or the first call, which connects).
func NewStdio(command string, args []string, opts ...Option) (*Client, error) {
	cfg := newConfig()
	cfg.settings["command"] = command
	if args == nil {
		args = []string{}
	}
	cfg.settings["args"] = args
	for _, o := range opts {
		o(cfg)
	}
	return newClient(cfg)
}

// NewHTTP creates a client for a Streamable HTTP MCP endpoint (url: http or https).
// WithHeader and WithBearerToken apply to every HTTP request; WithOAuth authorizes with
// OAuth 2.1 instead (see OnAuthorization and SetTokenStore).
func NewHTTP(url string, opts ...Option) (*Client, error) {
	cfg := newConfig()
	cfg.settings["url"] = url
	for _, o := range opts {
		o(cfg)
	}
	return newClient(cfg)
}

func newClient(cfg *config) (*Client, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	js, err := cfg.json()
	if err != nil {
		return nil, &Error{Status: StatusInvalidArg, Message: "the configuration does not marshal to JSON: " + err.Error(), cause: err}
	}
	cjs := cstr(string(js))
	defer freeC(cjs)
	var ccfg *C.mcp_config
	var cerr *C.mcp_error
	if st := C.mcp_config_new(cjs, &ccfg, &cerr); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	defer C.mcp_config_free(ccfg)
	var cp *C.mcp_client
	if st := C.mcp_client_new(ccfg, &cp, &cerr); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	co := &core{ptr: cp, subs: map[*subCore]struct{}{}, ctx: ctx, cancelCtx: cancel, events: newEventQueue(),
		oauthLoopback: oauthLoopback(js)}
	c := &Client{core: co}
	runtime.SetFinalizer(c, func(c *Client) {
		// Backstop only: never block the finalizer goroutine on the close sequence.
		go c.core.close()
	})
	return c, nil
}

// acquire registers a call inside the library; release it when the call returns.
func (c *core) acquire() (*C.mcp_client, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, closedError()
	}
	c.inflight.Add(1)
	return c.ptr, nil
}

func (c *core) release() { c.inflight.Done() }

// Close closes the connection and releases the library client: calls in flight return
// promptly with ErrClosed, subscriptions end, handler contexts are cancelled, the server is
// shut down. Safe to call more than once and from several goroutines (later callers wait
// for the first). After Close returns no handler or listener starts.
func (c *Client) Close() error {
	c.core.close()
	runtime.KeepAlive(c)
	return nil
}

func (c *core) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		p := c.ptr
		c.mu.Unlock()
		C.mcp_client_close(p) // wakes every blocked call with MCP_CLOSED
		c.cancelCtx()         // after: a handler giving up must not turn ErrClosed into ErrHandlerFailed
		c.inflight.Wait()     // mcp_client_free must not race with calls
		c.mu.Lock()
		subs := make([]*subCore, 0, len(c.subs))
		for s := range c.subs {
			subs = append(subs, s)
		}
		c.mu.Unlock()
		for _, s := range subs {
			s.close()
		}
		C.mcp_client_free(p) // stops the dispatcher; userdata_free deletes our handles
		c.mu.Lock()
		c.ptr = nil
		c.mu.Unlock()
		c.events.close()
	})
}

// ServerInfo is what the server said about itself when connecting.
type ServerInfo struct {
	Era             Era             `json:"era"`
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	Implementation  json.RawMessage `json:"serverInfo"` // the server's Implementation object, or null
	Instructions    string          `json:"instructions"`
	Raw             json.RawMessage `json:"raw"` // the raw server/discover or initialize result
}

func parseServerInfo(s string) (*ServerInfo, error) {
	var info ServerInfo
	if err := json.Unmarshal([]byte(s), &info); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "unreadable server info: " + err.Error(), cause: err}
	}
	return &info, nil
}

// Connect starts the server and settles the era (auto: server/discover, falling back to
// initialize). Idempotent. ctx and the options (WithTimeout, WithMaxTotal) bound this wait:
// when ctx ends first, the started connect is cancelled and Connect returns at once with the
// context's error.
func (c *Client) Connect(ctx context.Context, opts ...CallOption) (*ServerInfo, error) {
	defer runtime.KeepAlive(c)
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return nil, ctxError(ctx)
	}
	out, err := c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn,
		ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_connect_start(p, pr.opts, done, ud, call, cerr)
	})
	if err != nil {
		return nil, err
	}
	return parseServerInfo(string(out))
}

// ServerInfo returns the server info of the connection (ErrNotConnected before connecting).
func (c *Client) ServerInfo() (*ServerInfo, error) {
	defer runtime.KeepAlive(c)
	p, e := c.core.acquire()
	if e != nil {
		return nil, e
	}
	defer c.core.release()
	var out *C.char
	var cerr *C.mcp_error
	if st := C.mcp_client_server_info(p, &out, &cerr); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	return parseServerInfo(takeString(out))
}

// Era is the connection's era (EraNone before connecting or after Close).
func (c *Client) Era() Era {
	defer runtime.KeepAlive(c)
	p, e := c.core.acquire()
	if e != nil {
		return EraNone
	}
	defer c.core.release()
	switch C.mcp_client_era(p) {
	case C.MCP_ERA_MODERN:
		return EraModern
	case C.MCP_ERA_LEGACY:
		return EraLegacy
	}
	return EraNone
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// prepared holds the C side of one call's options; free releases it.
type prepared struct {
	opts           *C.mcp_call_opts
	inputResponses *C.char
	requestState   *C.char
	strs           []*C.char
	progress       *progressBox
	handle         cgo.Handle
}

// free runs after the library call returned: the library calls no progress callback after
// that, so the handle can go; then the progress callbacks still queued run to completion.
func (p *prepared) free() {
	if p.progress != nil {
		deleteHandle(p.handle)
		p.progress.q.drain()
	}
	for _, s := range p.strs {
		freeC(s)
	}
	C.free(unsafe.Pointer(p.opts))
}

// prepare builds a call's C options (ctx's deadline caps max_total_ms; an ending ctx cancels
// the started call through its handle).
func prepare(ctx context.Context, s *callSettings) (*prepared, *Error) {
	pr := &prepared{opts: (*C.mcp_call_opts)(C.calloc(1, C.sizeof_mcp_call_opts))}
	if st := C.mcp_call_opts_init(pr.opts, C.MCP_CALL_OPTS_VERSION); st != C.MCP_OK {
		pr.free() // a library older than this binding's header
		return nil, &Error{Status: Status(st), Message: "the library does not know this binding's mcp_call_opts version"}
	}
	switch {
	case s.noTimeout:
		pr.opts.timeout_ms = -1
	case s.timeout > 0:
		pr.opts.timeout_ms = C.int64_t(ms(s.timeout))
	}
	total := s.maxTotal
	if dl, ok := ctx.Deadline(); ok {
		rem := time.Until(dl)
		if rem <= 0 {
			pr.free()
			return nil, &Error{Status: StatusTimeout, Message: "the context's deadline passed", ctxErr: context.DeadlineExceeded}
		}
		if total <= 0 || rem < total {
			total = rem
		}
	}
	pr.opts.max_total_ms = C.int64_t(ms(total))
	pr.opts.reset_timeout_on_progress = C.bool(s.resetOnProgress)
	str := func(v string) *C.char {
		p := cstr(v)
		pr.strs = append(pr.strs, p)
		return p
	}
	if s.meta != nil {
		pr.opts.meta_json = str(string(s.meta))
	}
	if s.logLevel != "" {
		if err := noNUL("log level", s.logLevel); err != nil {
			pr.free()
			return nil, err
		}
		pr.opts.log_level = str(s.logLevel)
	}
	if s.inputResponses != nil {
		pr.inputResponses = str(string(s.inputResponses))
	}
	if s.requestState != nil {
		if err := noNUL("request state", *s.requestState); err != nil {
			pr.free()
			return nil, err
		}
		pr.requestState = str(*s.requestState)
	}
	pr.opts.cache_mode = C.uint32_t(s.cacheMode)
	pr.opts.skip_output_validation = C.bool(s.skipValidation)
	if s.progress != nil {
		pr.progress = &progressBox{fn: s.progress, q: newEventQueue()}
		pr.handle = newHandle(pr.progress)
		C.mcpgo_opts_set_progress(pr.opts, C.uintptr_t(pr.handle))
	}
	return pr, nil
}

// withContext ties a cancellation or timeout to the context that caused it. A deadline is
// always reported as StatusTimeout, whichever of the library's timer and the watcher won.
func withContext(ctx context.Context, e *Error) *Error {
	if e.Status != StatusCancelled && e.Status != StatusTimeout {
		return e
	}
	err := ctx.Err()
	if err == nil {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			err = context.DeadlineExceeded
		}
	}
	if err == nil {
		return e
	}
	e.ctxErr = err
	if errors.Is(err, context.DeadlineExceeded) {
		e.Status = StatusTimeout
	}
	return e
}

// marshalArg turns a Go value into JSON text for the library; nil (or JSON null) means
// "absent". json.RawMessage and []byte are passed verbatim.
func marshalArg(v any, what string) (*string, error) {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, &Error{Status: StatusInvalidJSON, Message: what + " does not marshal to JSON: " + err.Error(), cause: err}
		}
	}
	if b == nil || string(b) == "null" {
		return nil, nil
	}
	s := string(b)
	return &s, nil
}

var liveHandles atomic.Int64

func newHandle(v any) cgo.Handle {
	liveHandles.Add(1)
	return cgo.NewHandle(v)
}

func deleteHandle(h cgo.Handle) {
	h.Delete()
	liveHandles.Add(-1)
}
