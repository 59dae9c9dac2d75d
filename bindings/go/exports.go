package mcpclient

// Functions the C trampolines in shim.c call. A file with //export may only declare in its
// preamble.

/*
#include <stddef.h>
#include <stdint.h>
#include "mcp_client.h"
*/
import "C"

import (
	"encoding/json"
	"runtime/cgo"
	"unsafe"
)

// goMcpInput runs on the library's dispatcher thread: copy the borrowed arguments, defer the
// responder, and hand the work to a goroutine so the dispatcher is never blocked by Go code.
//
//export goMcpInput
func goMcpInput(ud C.uintptr_t, method *C.char, params *C.char, n C.size_t, r *C.mcp_responder) {
	box, ok := cgo.Handle(ud).Value().(*inputBox)
	if !ok {
		return // not ours: returning without replying declines
	}
	p := json.RawMessage(C.GoBytes(unsafe.Pointer(params), C.int(n)))
	C.mcp_responder_defer(r)
	go box.serve(p, &responder{ptr: r})
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
