package mcpclient

/*
#include <stdint.h>
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
	"sync/atomic"
	"unsafe"
)

// Hub is many MCP servers as one client (mcp_hub_* in mcp_client.h): every member starts at
// once, their tools, prompts and resources form one catalogue (tool and prompt names
// "<member>__<name>", each item naming its member in _meta["mcp-client/server"]), and each
// call goes to the member that owns it. A member that cannot start is "failed" in Members;
// the hub keeps going. All methods are safe for concurrent use. Close it when done (no server
// process is left); a finalizer closes a forgotten hub as a backstop.
type Hub struct {
	core *hubCore
}

type hubCore struct {
	mu        sync.Mutex
	ptr       *C.mcp_hub // nil once freed
	closed    bool
	inflight  sync.WaitGroup
	closeOnce sync.Once
	events    *eventQueue
	trace     atomic.Pointer[traceSourceBox] // SetTraceContext, SetTraceScope
}

// HubOptions shape the merged catalogue (all optional).
type HubOptions struct {
	// Separator between member and name in exported tool and prompt names ("__" when empty).
	Separator string
	// NoPrefix exports names unprefixed; a name two members offer is then an error of List.
	NoPrefix bool
	// Defaults holds configuration keys every member gets unless its own configuration sets them.
	Defaults map[string]any
}

// NewHub creates an empty hub: add members (AddMember, AddStdio, AddHTTP), then Start.
func NewHub(opts *HubOptions) (*Hub, error) {
	return newHub(opts, func(o *C.char, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_new(o, hp, cerr)
	})
}

// optionsJSON is mcp_hub_new's options_json.
func (opts *HubOptions) optionsJSON() (string, error) {
	o := map[string]any{}
	if opts != nil {
		if opts.Separator != "" {
			o["separator"] = opts.Separator
		}
		o["prefix"] = !opts.NoPrefix
		if opts.Defaults != nil {
			o["defaults"] = opts.Defaults
		}
	}
	js, err := json.Marshal(o)
	if err != nil {
		return "", &Error{Status: StatusInvalidArg, Message: "the hub options do not marshal to JSON: " + err.Error(), cause: err}
	}
	return string(js), nil
}

// newHub creates a hub through create (mcp_hub_new or a from-file form) with opts' JSON.
func newHub(opts *HubOptions, create func(o *C.char, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status) (*Hub, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	js, err := opts.optionsJSON()
	if err != nil {
		return nil, err
	}
	cjs := cstr(js)
	defer freeC(cjs)
	var hp *C.mcp_hub
	var cerr *C.mcp_error
	if st := create(cjs, &hp, &cerr); st != C.MCP_OK {
		return nil, fromC(st, cerr)
	}
	h := &Hub{core: &hubCore{ptr: hp, events: newEventQueue()}}
	runtime.SetFinalizer(h, func(h *Hub) { go h.core.close() })
	return h, nil
}

func (c *hubCore) acquire() (*C.mcp_hub, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, closedError()
	}
	c.inflight.Add(1)
	return c.ptr, nil
}

func (c *hubCore) release() { c.inflight.Done() }

// call runs one C call that may fail with an mcp_error.
func (h *Hub) call(fn func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status) error {
	defer runtime.KeepAlive(h)
	p, e := h.core.acquire()
	if e != nil {
		return e
	}
	defer h.core.release()
	var cerr *C.mcp_error
	if st := fn(p, &cerr); st != C.MCP_OK {
		return fromC(st, cerr)
	}
	return nil
}

// callJSON runs one C call returning a library-owned JSON string.
func (h *Hub) callJSON(fn func(p *C.mcp_hub, out **C.char, cerr **C.mcp_error) C.mcp_status) (json.RawMessage, error) {
	var out *C.char
	if err := h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status { return fn(p, &out, cerr) }); err != nil {
		return nil, err
	}
	return json.RawMessage(takeString(out)), nil
}

// blocking runs a hub operation that has no started form in the C ABI on its own goroutine:
// when ctx ends first the method returns the context's error at once, and the operation
// (bounded by the members' own timeouts) finishes in the background; Close waits for it.
func (h *Hub) blocking(ctx context.Context, fn func() (json.RawMessage, error)) (json.RawMessage, error) {
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return nil, ctxError(ctx)
	}
	type res struct {
		out json.RawMessage
		err error
	}
	ch := make(chan res, 1)
	go func() {
		out, err := fn()
		ch <- res{out, err}
	}()
	select {
	case r := <-ch:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctxError(ctx)
	}
}

// AddMember adds member name with config, the flat client configuration mcp_config_new takes
// ({"command": ...} or {"url": ...} and the other keys; a map, a Config or JSON). Start
// connects it. A configuration the library refuses makes the member "failed", not this call;
// a name the hub already has is StatusInvalidArg.
func (h *Hub) AddMember(name string, config any) error {
	cfg, err := memberJSON(config)
	if err != nil {
		return err
	}
	return h.addJSON(name, cfg)
}

// AddStdio adds member name running command with args, configured by opts as NewStdio is
// (options that only set configuration keys; handlers belong to single clients).
func (h *Hub) AddStdio(name, command string, args []string, opts ...Option) error {
	cfg := newConfig()
	cfg.settings["command"] = command
	if args == nil {
		args = []string{}
	}
	cfg.settings["args"] = args
	return h.addConfig(name, cfg, opts)
}

// AddHTTP adds member name for a Streamable HTTP endpoint, configured by opts as NewHTTP is.
func (h *Hub) AddHTTP(name, url string, opts ...Option) error {
	cfg := newConfig()
	cfg.settings["url"] = url
	return h.addConfig(name, cfg, opts)
}

func (h *Hub) addConfig(name string, cfg *config, opts []Option) error {
	for _, o := range opts {
		o(cfg)
	}
	js, err := cfg.json()
	if err != nil {
		return &Error{Status: StatusInvalidArg, Message: "the configuration does not marshal to JSON: " + err.Error(), cause: err}
	}
	return h.addJSON(name, string(js))
}

func memberJSON(config any) (string, error) {
	if c, ok := config.(Config); ok {
		cfg := newConfig()
		WithConfig(c)(cfg)
		js, err := cfg.json()
		if err != nil {
			return "", &Error{Status: StatusInvalidArg, Message: "the configuration does not marshal to JSON: " + err.Error(), cause: err}
		}
		return string(js), nil
	}
	s, err := marshalArg(config, "the configuration")
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", &Error{Status: StatusInvalidArg, Message: "a member needs a configuration"}
	}
	return *s, nil
}

func (h *Hub) addJSON(name, cfg string) error {
	if e := noNUL("member name", name); e != nil {
		return e
	}
	cn, cc := cstr(name), cstr(cfg)
	defer freeC(cn)
	defer freeC(cc)
	return h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_add_member(p, cn, cc, cerr)
	})
}

// Start connects every member not yet started, all at once, and returns when each has
// connected or failed (each bounded by its connect_timeout_ms). A member that fails does not
// fail Start: read the states with Members. The C ABI has no started form of this call: when
// ctx ends first, Start returns the context's error and the members go on connecting.
func (h *Hub) Start(ctx context.Context) error {
	_, err := h.blocking(ctx, func() (json.RawMessage, error) {
		return nil, h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status { return C.mcp_hub_start(p, cerr) })
	})
	return err
}

// HubMember is one member's state as Members reports it.
type HubMember struct {
	Name            string          `json:"name"`
	State           string          `json:"state"` // idle, connecting, connected, reconnecting, failed, disabled, closed
	Error           string          `json:"error,omitempty"`
	Era             Era             `json:"era,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ServerInfo      json.RawMessage `json:"serverInfo,omitempty"`
}

// Members returns every member's state, in the order they were added. It does not block.
func (h *Hub) Members() ([]HubMember, error) {
	raw, err := h.callJSON(func(p *C.mcp_hub, out **C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_members_json(p, out, cerr)
	})
	if err != nil {
		return nil, err
	}
	var ms []HubMember
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "unreadable hub members: " + err.Error(), cause: err}
	}
	return ms, nil
}

func (h *Hub) list(ctx context.Context, kind C.int32_t, key string) (json.RawMessage, error) {
	raw, err := h.blocking(ctx, func() (json.RawMessage, error) {
		return h.callJSON(func(p *C.mcp_hub, out **C.char, cerr **C.mcp_error) C.mcp_status {
			return C.mcp_hub_list(p, kind, out, cerr)
		})
	})
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "unreadable merged list: " + err.Error(), cause: err}
	}
	return m[key], nil
}

// ListTools returns every connected member's tools as a JSON array, names exported
// ("<member>__<tool>"); each tool's _meta names its member ("mcp-client/server") and its own
// name ("mcp-client/name"). Like Start, ctx ending returns early.
func (h *Hub) ListTools(ctx context.Context) (json.RawMessage, error) {
	return h.list(ctx, C.MCP_LIST_TOOLS, "tools")
}

// ListPrompts returns the merged prompts as a JSON array (names exported like tools).
func (h *Hub) ListPrompts(ctx context.Context) (json.RawMessage, error) {
	return h.list(ctx, C.MCP_LIST_PROMPTS, "prompts")
}

// ListResources returns the merged resources as a JSON array.
func (h *Hub) ListResources(ctx context.Context) (json.RawMessage, error) {
	return h.list(ctx, C.MCP_LIST_RESOURCES, "resources")
}

// ListResourceTemplates returns the merged resource templates as a JSON array.
func (h *Hub) ListResourceTemplates(ctx context.Context) (json.RawMessage, error) {
	return h.list(ctx, C.MCP_LIST_RESOURCE_TEMPLATES, "resourceTemplates")
}

// hubStartFn starts one hub call with the completion and its userdata.
type hubStartFn func(p *C.mcp_hub, opts *C.mcp_call_opts, done C.mcp_call_done_fn, ud unsafe.Pointer,
	call **C.mcp_call, cerr **C.mcp_error) C.mcp_status

// started runs one started hub call under ctx and opts (as the client's calls do: an ending
// ctx cancels it through its handle).
func (h *Hub) started(ctx context.Context, op Operation, opts []CallOption, fn hubStartFn) (json.RawMessage, error) {
	defer runtime.KeepAlive(h)
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return nil, ctxError(ctx)
	}
	s, e := settings(opts, false)
	if e != nil {
		return nil, e
	}
	s.op = op
	p, e := h.core.acquire()
	if e != nil {
		return nil, e
	}
	defer h.core.release()
	end, e := withTrace(ctx, &h.core.trace, &s)
	if e != nil {
		return nil, e
	}
	pr, e := prepare(ctx, &s)
	if e != nil {
		end(e)
		return nil, e
	}
	defer pr.free()
	box, call, st, cerr := startWith(func(ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return fn(p, pr.opts, C.mcp_call_done_fn(C.mcpgo_call_done), ud, call, cerr)
	})
	if st != C.MCP_OK {
		e = withContext(ctx, fromC(st, cerr))
		end(e)
		return nil, e
	}
	o := await(ctx, box, call)
	if o.err != nil {
		e = withContext(ctx, o.err)
		end(e)
		return nil, e
	}
	end(nil)
	return json.RawMessage(o.result), nil
}

// SetTraceContext sets (nil removes) the hub's trace context source, asked like a client's
// (Client.SetTraceContext): on the calling goroutine, with the call's ctx, at the start of each
// CallTool, GetPrompt and ReadResource whose WithMeta has no traceparent or baggage member;
// what it gives goes on every member request of the call (the routed request, and the member's
// tool list it may fetch first to route by). The lists (ListTools, ...) carry no context.
func (h *Hub) SetTraceContext(fn TraceContextSource) {
	if fn == nil {
		h.core.trace.Store(nil)
		return
	}
	h.core.trace.Store(&traceSourceBox{fn: fn})
}

// SetTraceScope is SetTraceContext with a TraceScope (given the call's Operation, with the
// exported tool or prompt name as its target, and told when the call ended); it replaces
// SetTraceContext's source.
func (h *Hub) SetTraceScope(fn TraceScope) {
	if fn == nil {
		h.core.trace.Store(nil)
		return
	}
	h.core.trace.Store(&traceSourceBox{scope: fn})
}

// OnSpan sets the hub's span listener (nil removes it): the records of every member's
// operations and sessions, members added later included, as Client.OnSpan gives them, each
// with the attribute mcp.server.name (the member's name). Runs in order on the hub's event
// goroutine.
func (h *Hub) OnSpan(fn func(record json.RawMessage)) error {
	return h.setSpanListener(fn, false)
}

// OnSpanSync is OnSpan with fn run at once on the library's delivering thread (as
// Client.OnSpanSync): a call's records have reached fn before the call returns. fn must be
// quick and must not call the hub; a panic in it is recovered.
func (h *Hub) OnSpanSync(fn func(record json.RawMessage)) error {
	return h.setSpanListener(fn, true)
}

func (h *Hub) setSpanListener(fn func(json.RawMessage), sync bool) error {
	var hd C.uintptr_t
	if fn != nil {
		hd = C.uintptr_t(newHandle(&spanBox{fn: fn, q: h.core.events, sync: sync}))
	}
	return h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcpgo_hub_set_span_listener(p, hd, cerr)
	})
}

// CallTool calls the tool the merged list names name on its member (a started call). args is
// marshalled to a JSON object (nil: none). An unknown name is StatusInvalidArg, its message
// listing the nearest names; a tool error (isError) is a result, not an error.
func (h *Hub) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (json.RawMessage, error) {
	a, err := marshalArg(args, "the arguments")
	if err != nil {
		return nil, err
	}
	if e := noNUL("tool name", name); e != nil {
		return nil, e
	}
	cn, ca := cstr(name), optStr(a)
	defer freeC(cn)
	defer freeC(ca)
	return h.started(ctx, Operation{Method: "tools/call", Target: name}, opts, func(p *C.mcp_hub, o *C.mcp_call_opts, done C.mcp_call_done_fn, ud unsafe.Pointer,
		call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_call_tool_start(p, cn, ca, o, done, ud, call, cerr)
	})
}

// GetPrompt gets the prompt the merged list names name from its member (a started call);
// args is an object of strings (nil: none).
func (h *Hub) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (json.RawMessage, error) {
	var a *string
	if args != nil {
		var err error
		if a, err = marshalArg(args, "the arguments"); err != nil {
			return nil, err
		}
	}
	if e := noNUL("prompt name", name); e != nil {
		return nil, e
	}
	cn, ca := cstr(name), optStr(a)
	defer freeC(cn)
	defer freeC(ca)
	return h.started(ctx, Operation{Method: "prompts/get", Target: name}, opts, func(p *C.mcp_hub, o *C.mcp_call_opts, done C.mcp_call_done_fn, ud unsafe.Pointer,
		call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_get_prompt_start(p, cn, ca, o, done, ud, call, cerr)
	})
}

// ReadResource reads uri from member server (a started call).
func (h *Hub) ReadResource(ctx context.Context, server, uri string, opts ...CallOption) (json.RawMessage, error) {
	if e := noNUL("server", server); e != nil {
		return nil, e
	}
	if e := noNUL("uri", uri); e != nil {
		return nil, e
	}
	cs, cu := cstr(server), cstr(uri)
	defer freeC(cs)
	defer freeC(cu)
	return h.started(ctx, Operation{Method: "resources/read", Target: uri}, opts, func(p *C.mcp_hub, o *C.mcp_call_opts, done C.mcp_call_done_fn, ud unsafe.Pointer,
		call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_read_resource_start(p, cs, cu, o, done, ud, call, cerr)
	})
}

// SetMember applies a changed configuration to one member, as a reload does: a new name is
// added and started, a changed (or failed) one is closed and started again, an equal one keeps
// its connection. It returns once the member has connected or failed; like Start, ctx ending
// returns early.
func (h *Hub) SetMember(ctx context.Context, name string, config any) error {
	cfg, err := memberJSON(config)
	if err != nil {
		return err
	}
	if e := noNUL("member name", name); e != nil {
		return e
	}
	_, err = h.blocking(ctx, func() (json.RawMessage, error) {
		cn, cc := cstr(name), cstr(cfg)
		defer freeC(cn)
		defer freeC(cc)
		return nil, h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
			return C.mcp_hub_set_member(p, cn, cc, cerr)
		})
	})
	return err
}

// RemoveMember removes member name and shuts its server down; an unknown name is
// StatusInvalidArg. Like Start, ctx ending returns early.
func (h *Hub) RemoveMember(ctx context.Context, name string) error {
	if e := noNUL("member name", name); e != nil {
		return e
	}
	_, err := h.blocking(ctx, func() (json.RawMessage, error) {
		cn := cstr(name)
		defer freeC(cn)
		return nil, h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
			return C.mcp_hub_remove_member(p, cn, cerr)
		})
	})
	return err
}

// HubEvent is one hub event: Type "state" (Server, State, Error), "list_changed" (Server,
// List), "resource_updated" (Server, URI), "log" (Server, Source, Level, Message) or
// "notification" (Server, Method, Params). Raw is the whole event.
type HubEvent struct {
	Type    string          `json:"type"`
	Server  string          `json:"server"`
	State   string          `json:"state,omitempty"`
	Error   string          `json:"error,omitempty"`
	List    string          `json:"list,omitempty"`
	URI     string          `json:"uri,omitempty"`
	Source  string          `json:"source,omitempty"`
	Level   string          `json:"level,omitempty"`
	Message string          `json:"message,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Raw     json.RawMessage `json:"-"`
}

type hubEventBox struct {
	fn func(HubEvent)
	q  *eventQueue
}

// OnEvent sets the hub's listener (nil removes it): every member's state changes, list
// changes (the merged lists already reflect them), resource updates, stderr lines and
// notifications. Listeners run in order on one goroutine per hub; they may call the hub.
func (h *Hub) OnEvent(fn func(HubEvent)) error {
	var hd C.uintptr_t
	if fn != nil {
		hd = C.uintptr_t(newHandle(&hubEventBox{fn: fn, q: h.core.events}))
	}
	return h.call(func(p *C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcpgo_hub_on_event(p, hd, cerr)
	})
}

// Close closes every member (their servers are shut down and no process is left) and frees
// the hub: started calls in flight return ErrClosed, later calls fail with it, listeners stop.
// Safe to call more than once and from several goroutines.
func (h *Hub) Close() error {
	h.core.close()
	runtime.KeepAlive(h)
	return nil
}

func (c *hubCore) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		p := c.ptr
		c.mu.Unlock()
		var cerr *C.mcp_error
		if st := C.mcp_hub_close(p, &cerr); st != C.MCP_OK {
			C.mcp_error_free(cerr)
		}
		c.inflight.Wait() // mcp_hub_free must not race with calls
		C.mcp_hub_free(p) // runs the listener's userdata_free
		c.mu.Lock()
		c.ptr = nil
		c.mu.Unlock()
		c.events.close()
	})
}
