package mcpclient

// Functions the C trampolines in shim.c call. A file with //export may only declare in its
// preamble.

/*
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"runtime/cgo"
	"unsafe"
)

// goMcpInput runs on the library's dispatcher thread: copy the borrowed arguments, defer the
// responder, tie the handler's context to the library's pushed cancellation, and hand the
// work to a goroutine so the dispatcher is never blocked by Go code.
//
//export goMcpInput
func goMcpInput(ud C.uintptr_t, method *C.char, params *C.char, n C.size_t, r *C.mcp_responder) {
	box, ok := cgo.Handle(ud).Value().(*inputBox)
	if !ok {
		return // not ours: returning without replying declines
	}
	p := json.RawMessage(C.GoBytes(unsafe.Pointer(params), C.int(n)))
	C.mcp_responder_defer(r)
	ctx, cancel := unwantedContext(box.base, r)
	go box.serve(ctx, cancel, p, &responder{ptr: r})
}

// goMcpResponderCancelled is a responder's cancel hook: the answer is no longer wanted.
//
//export goMcpResponderCancelled
func goMcpResponderCancelled(ud C.uintptr_t) {
	if cancel, ok := cgo.Handle(ud).Value().(context.CancelFunc); ok {
		cancel()
	}
}

// goMcpCallDone is every started call's completion, on the dispatcher thread: copy the
// borrowed result or error and hand them to the waiting goroutine. It runs exactly once per
// started call, so the handle goes here.
//
//export goMcpCallDone
func goMcpCallDone(ud C.uintptr_t, st C.mcp_status, result *C.char, n C.size_t, cerr *C.mcp_error) {
	h := cgo.Handle(ud)
	box, ok := h.Value().(*callBox)
	if !ok {
		return
	}
	var o outcome
	if st == C.MCP_OK {
		o.result = C.GoStringN(result, C.int(n))
	} else {
		o.err = readError(st, cerr)
	}
	deleteHandle(h)
	startedInFlight.Add(-1)
	box.ch <- o // buffered: never blocks the dispatcher
}

//export goMcpNotification
func goMcpNotification(ud C.uintptr_t, method *C.char, params *C.char, n C.size_t) {
	box, ok := cgo.Handle(ud).Value().(*notifyBox)
	if !ok {
		return
	}
	m := C.GoString(method)
	p := json.RawMessage(C.GoBytes(unsafe.Pointer(params), C.int(n)))
	box.q.push(func() { box.fn(m, p) })
}

//export goMcpHubEvent
func goMcpHubEvent(ud C.uintptr_t, event *C.char) {
	box, ok := cgo.Handle(ud).Value().(*hubEventBox)
	if !ok || event == nil {
		return
	}
	raw := json.RawMessage(C.GoString(event))
	var ev HubEvent
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	ev.Raw = raw
	box.q.push(func() { box.fn(ev) })
}

// goMcpHubInput runs on the goroutine reading a configuration file (inside its C call): the
// answer goes into the slot before the callback returns.
//
//export goMcpHubInput
func goMcpHubInput(ud C.uintptr_t, id, description *C.char, password C.bool, def *C.char, slot *C.mcp_hub_input_slot) {
	box, ok := cgo.Handle(ud).Value().(*hubInputBox)
	if !ok {
		return
	}
	defer func() { _ = recover() }() // a panicking callback declines; it must not unwind into C
	in := HubInput{ID: C.GoString(id), Password: bool(password)}
	if description != nil {
		in.Description = C.GoString(description)
	}
	if def != nil {
		d := C.GoString(def)
		in.Default = &d
	}
	var options *C.char
	var oerr *C.mcp_error
	if C.mcp_hub_input_slot_options_json(slot, &options, &oerr) != C.MCP_OK {
		C.mcp_error_free(oerr)
		return // declined: the choice cannot be shown
	}
	if json.Unmarshal([]byte(takeString(options)), &in.Options) != nil {
		return
	}
	answer, yes := box.fn(in)
	if !yes || noNUL("input answer", answer) != nil {
		return // declined
	}
	ca := C.CString(answer)
	defer C.free(unsafe.Pointer(ca))
	var cerr *C.mcp_error
	if C.mcp_hub_input_slot_set(slot, ca, &cerr) != C.MCP_OK {
		C.mcp_error_free(cerr)
	}
}

//export goMcpToolPin
func goMcpToolPin(ud C.uintptr_t, event *C.char) C.bool {
	box, ok := cgo.Handle(ud).Value().(*toolPinBox)
	if !ok {
		return false
	}
	var e ToolPinEvent
	if json.Unmarshal([]byte(C.GoString(event)), &e) != nil {
		return false
	}
	return C.bool(box.fn(e))
}

//export goMcpConnectionState
func goMcpConnectionState(ud C.uintptr_t, state C.int32_t, attempt C.uint32_t, detail *C.char) {
	box, ok := cgo.Handle(ud).Value().(*stateBox)
	if !ok {
		return
	}
	s, n, d := ConnectionState(state), int(attempt), C.GoString(detail)
	box.q.push(func() { box.fn(s, n, d) })
}

//export goMcpLog
func goMcpLog(ud C.uintptr_t, level *C.char, source *C.char, message *C.char) {
	box, ok := cgo.Handle(ud).Value().(*logBox)
	if !ok {
		return
	}
	l, s, m := C.GoString(level), C.GoString(source), C.GoString(message)
	box.q.push(func() { box.fn(l, s, m) })
}

//export goMcpProgress
func goMcpProgress(ud C.uintptr_t, progress C.double, total C.double, message *C.char) {
	box, ok := cgo.Handle(ud).Value().(*progressBox)
	if !ok {
		return
	}
	var m string
	if message != nil {
		m = C.GoString(message)
	}
	pr, tot := float64(progress), float64(total)
	box.q.push(func() { box.fn(pr, tot, m) })
}

// goMcpFreeHandle is every registration's userdata_free: the library calls it exactly once,
// after the callback's last invocation.
//
//export goMcpFreeHandle
func goMcpFreeHandle(ud C.uintptr_t) {
	deleteHandle(cgo.Handle(ud))
}

// goMcpAuthorization runs on the dispatcher thread like goMcpInput: copy the borrowed
// arguments, defer the responder, and run the Go handler on a goroutine.
//
//export goMcpAuthorization
func goMcpAuthorization(ud C.uintptr_t, url *C.char, redirectURI *C.char, r *C.mcp_responder) {
	box, ok := cgo.Handle(ud).Value().(*authBox)
	if !ok {
		return // not ours: returning without replying leaves the redirect to the loopback listener
	}
	u, ru := C.GoString(url), C.GoString(redirectURI)
	C.mcp_responder_defer(r)
	ctx, cancel := unwantedContext(box.base, r)
	go box.serve(ctx, cancel, u, ru, &responder{ptr: r})
}

// goMcpTokenLoad runs the Go store's Load synchronously on the dispatcher thread: the slot is
// only valid during this callback.
//
//export goMcpTokenLoad
func goMcpTokenLoad(ud C.uintptr_t, issuer *C.char, slot *C.mcp_token_slot) {
	box, ok := cgo.Handle(ud).Value().(*storeBox)
	if !ok {
		return
	}
	record, found := box.load(C.GoString(issuer))
	if !found || len(record) == 0 {
		return
	}
	c := cstr(string(record))
	defer freeC(c)
	// A record that is not a JSON object is refused (MCP_INVALID_JSON / MCP_INVALID_ARG) and
	// the slot stays empty: the library then proceeds as if nothing were stored.
	C.mcp_token_slot_set(slot, c, nil)
}

// goMcpTokenSave runs the Go store's Save synchronously on the dispatcher thread, so a later
// Load sees it (the library waits for the save before going on).
//
//export goMcpTokenSave
func goMcpTokenSave(ud C.uintptr_t, issuer *C.char, record *C.char) {
	box, ok := cgo.Handle(ud).Value().(*storeBox)
	if !ok {
		return
	}
	var rec json.RawMessage
	if record != nil {
		rec = json.RawMessage(C.GoString(record))
	}
	box.save(C.GoString(issuer), rec)
}
