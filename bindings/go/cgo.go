package mcpclient

// The compiler and linker flags come from pkg-config (link_shared.go, link_static.go): no path or
// platform-specific flag is written here. See README.md.

/*
#include <stdlib.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// ABIVersion is the C ABI version this package was written against (MCP_ABI_VERSION of the
// header it was compiled with).
const ABIVersion = uint32(C.MCP_ABI_VERSION)

// abiErr is set once at load when the linked library implements another ABI version; New*
// then refuse to create clients.
var abiErr error

func init() {
	if got := uint32(C.mcp_abi_version()); got != ABIVersion {
		abiErr = &Error{
			Status: StatusUnsupported,
			Message: fmt.Sprintf("mcpclient: ABI mismatch: the linked libmcp_client implements ABI %d, "+
				"this package was built against include/mcp_client.h with MCP_ABI_VERSION %d; "+
				"rebuild the library and the binding from the same tree", got, ABIVersion),
		}
	}
}

// CheckABI reports whether the linked library implements the ABI this package expects.
// NewStdio and NewHTTP return the same error.
func CheckABI() error { return abiErr }

// LibraryVersion is the linked library's version string, e.g. "mcp_client/0.1.0".
func LibraryVersion() string { return C.GoString(C.mcp_version()) }

// LibraryABIVersion is the ABI version the linked library reports.
func LibraryABIVersion() uint32 { return uint32(C.mcp_abi_version()) }

// cstr copies s into C memory; free with C.free (it is ours, not the library's). A NUL byte
// inside s would end the C string there: callers check arguments with noNUL first.
func cstr(s string) *C.char { return C.CString(s) }

// noNUL refuses a string argument holding a NUL byte: the C ABI takes NUL-terminated strings,
// so it would silently arrive shortened (a name, URI or requestState cut at U+0000). JSON
// arguments are unaffected: encoding/json escapes U+0000.
func noNUL(what, s string) *Error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return &Error{Status: StatusInvalidArg, Message: fmt.Sprintf(
			"%s contains a NUL byte (at byte %d), which a C string cannot carry; remove it (JSON arguments may contain U+0000)", what, i)}
	}
	return nil
}

// shown is message text for the C ABI: a NUL shows as \u0000 instead of ending it.
func shown(s string) string { return strings.ReplaceAll(s, "\x00", `\u0000`) }

func freeC(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// takeString copies a library-owned string and releases it with mcp_string_free.
func takeString(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.mcp_string_free(p)
	return s
}

// sigactionFlags reports the flags of sig's installed handler (for the signal-stack check in
// the tests); installed is false for SIG_DFL / SIG_IGN.
func sigactionFlags(sig int) (flags int, installed bool, ok bool) {
	var f, inst C.int
	if C.mcpgo_sigaction_flags(C.int(sig), &f, &inst) != 0 {
		return 0, false, false
	}
	return int(f), inst != 0, true
}
