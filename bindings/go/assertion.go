package mcpclient

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime/cgo"
)

// AssertionFunc supplies the JWT an assertion grant needs when the "oauth" configuration holds
// none: kind is "workload_jwt" (grant "jwt_bearer", workload identity federation) or "id_token"
// (grant "enterprise", enterprise-managed authorization); audience is the authorization server
// or identity provider it is for. Read it fresh each time (platform tokens rotate). An error or
// an empty string ends that authorization with ErrAuthRequired. It runs synchronously on the
// library's dispatcher thread: keep it quick and do not call the client from it. A panic is
// recovered and counts as no JWT.
type AssertionFunc func(kind, audience string) (string, error)

// SetAssertionProvider registers fn (nil removes it). Set it before Connect.
func (c *Client) SetAssertionProvider(fn AssertionFunc) error {
	return c.setCallback(fn != nil, func() any { return fn },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_assertion_provider(p, h, cerr)
		})
}

func callAssertion(fn AssertionFunc, kind, audience string) (jwt string) {
	defer func() {
		if recover() != nil {
			jwt = ""
		}
	}()
	v, err := fn(kind, audience)
	if err != nil {
		return ""
	}
	return v
}

// goMcpAssertion runs the provider synchronously on the dispatcher thread: the slot is only
// valid during this callback.
//
//export goMcpAssertion
func goMcpAssertion(ud C.uintptr_t, kind *C.char, audience *C.char, slot *C.mcp_assertion_slot) {
	fn, ok := cgo.Handle(ud).Value().(AssertionFunc)
	if !ok {
		return
	}
	jwt := callAssertion(fn, C.GoString(kind), C.GoString(audience))
	if jwt == "" {
		return
	}
	c := cstr(jwt)
	defer freeC(c)
	C.mcp_assertion_slot_set(slot, c, nil)
}
