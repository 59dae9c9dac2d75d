package mcpclient

// The task status listener (its own file: a file with //export may only declare in its preamble).

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

// OnTaskStatus sets the task status listener (nil removes it), called for every task any call
// follows (WithTasks) on each change of status or status message with the task object
// (taskId, status, statusMessage, ...). Persist taskId to ResumeTask in another process. Runs
// like OnNotification listeners, in order on the client's event goroutine.
func (c *Client) OnTaskStatus(fn func(task json.RawMessage)) error {
	return c.setCallback(fn != nil, func() any { return &taskStatusBox{fn: fn, q: c.core.events} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_task_status_listener(p, h, cerr)
		})
}

type taskStatusBox struct {
	fn func(task json.RawMessage)
	q  *eventQueue
}

//export goMcpTaskStatus
func goMcpTaskStatus(ud C.uintptr_t, task *C.char, n C.size_t) {
	box, ok := cgo.Handle(ud).Value().(*taskStatusBox)
	if !ok {
		return
	}
	t := json.RawMessage(C.GoBytes(unsafe.Pointer(task), C.int(n)))
	box.q.push(func() { box.fn(t) })
}
