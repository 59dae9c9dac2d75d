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

// WithTasks declares the tasks extension (SEP-2663, io.modelcontextprotocol/tasks): a
// CallTool the server answers with a task follows it to its result (polling tasks/get at the
// task's pollIntervalMs, input through the registered handlers). Configuration key "tasks".
// The call's timeout (WithTimeout, else WithRequestTimeout) bounds the wait for the task: when
// it passes the call fails with ErrTimeout and tasks/cancel is sent; a context deadline
// (max_total_ms) ends the wait but leaves the task running for ResumeTask. Nothing polls
// after the call returns.
func WithTasks() Option { return func(c *config) { c.settings["tasks"] = true } }

// WithManualInput declares input kinds answered by hand, without a handler ("elicitation",
// "elicitation.url", "sampling", "roots"): servers that ask only for declared input then send
// their input_required round, and the call fails with an InputRequiredError whose Unanswered
// lists what to answer; retry with RetryOptions. Configuration key "manual_input".
func WithManualInput(kinds ...string) Option {
	return func(c *config) { c.settings["manual_input"] = append([]string{}, kinds...) }
}

// ResumeTask follows task id (from a task status event, possibly of another process) to its
// end and returns the CallToolResult JSON. A failed task is an RPCError, a cancelled one
// ErrCancelled, an unknown id an RPCError -32602.
func (c *Client) ResumeTask(ctx context.Context, id string, opts ...CallOption) (json.RawMessage, error) {
	cid := cstr(id)
	defer freeC(cid)
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_resume_task_start(p, cid, pr.opts, done, ud, call, cerr)
	})
}

// GetTask sends one tasks/get: the task as the server has it now.
func (c *Client) GetTask(ctx context.Context, id string, opts ...CallOption) (json.RawMessage, error) {
	cid := cstr(id)
	defer freeC(cid)
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_get_task_start(p, cid, pr.opts, done, ud, call, cerr)
	})
}

// CancelTask sends tasks/cancel (cooperative: the task then ends as cancelled).
func (c *Client) CancelTask(ctx context.Context, id string, opts ...CallOption) error {
	cid := cstr(id)
	defer freeC(cid)
	_, err := c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_cancel_task_start(p, cid, pr.opts, done, ud, call, cerr)
	})
	return err
}

// UpdateTask sends tasks/update with answers (an object, key -> answer, e.g. from
// json.Marshal) the host gathered itself after an InputRequiredError from a followed task
// (WithManualInput); the task then goes on: follow it with ResumeTask or GetTask.
func (c *Client) UpdateTask(ctx context.Context, id string, answers json.RawMessage, opts ...CallOption) error {
	cid, cans := cstr(id), cstr(string(answers))
	defer freeC(cid)
	defer freeC(cans)
	_, err := c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_update_task_start(p, cid, cans, pr.opts, done, ud, call, cerr)
	})
	return err
}

// ErrURLElicitationRequired matches StatusURLElicitationRequired: a legacy server's -32042,
// whose RPCError.Elicitations lists the URLs to open before retrying.
var ErrURLElicitationRequired error = &statusSentinel{StatusURLElicitationRequired}
