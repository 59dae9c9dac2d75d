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
	"runtime/cgo"
	"unsafe"
)

// HubInput is one ${input:id} of a VS Code configuration file the host is asked to answer.
type HubInput struct {
	ID          string
	Description string
	Password    bool    // mask what the user types
	Default     *string // nil when the input has none
	// Options are a pickString's choices (answer with one of them: another answer fails the
	// servers using the input); empty for a promptString, which takes free text.
	Options []string
}

// HubFileOptions say how a host's configuration file is read (all optional).
type HubFileOptions struct {
	// WorkspaceFolder is what ${workspaceFolder} stands for, and where a relative envFile starts.
	WorkspaceFolder string
	// UserHome is what ${userHome} stands for (default: $HOME).
	UserHome string
	// OnInput answers an ${input:id} (ok false declines: the servers using it are failed). It
	// runs on the reading goroutine, at most once per id and read, before the read returns.
	OnInput func(in HubInput) (answer string, ok bool)
}

// hubInputBox is OnInput's userdata (through a cgo.Handle).
type hubInputBox struct {
	fn func(HubInput) (string, bool)
}

// readOpts is the C side of HubFileOptions; free releases it.
type readOpts struct {
	c      *C.mcp_hub_read_opts
	strs   []*C.char
	handle cgo.Handle
}

func (o *HubFileOptions) native() (*readOpts, error) {
	r := &readOpts{c: (*C.mcp_hub_read_opts)(C.calloc(1, C.sizeof_mcp_hub_read_opts))}
	if st := C.mcp_hub_read_opts_init(r.c, C.MCP_HUB_READ_OPTS_VERSION); st != C.MCP_OK {
		r.free()
		return nil, &Error{Status: Status(st), Message: "the library does not know this binding's mcp_hub_read_opts version"}
	}
	if o == nil {
		return r, nil
	}
	for _, f := range []struct {
		v   string
		dst **C.char
	}{{o.WorkspaceFolder, &r.c.workspace_folder}, {o.UserHome, &r.c.user_home}} {
		if f.v == "" {
			continue
		}
		if e := noNUL("folder", f.v); e != nil {
			r.free()
			return nil, e
		}
		p := cstr(f.v)
		r.strs = append(r.strs, p)
		*f.dst = p
	}
	if o.OnInput != nil {
		r.handle = newHandle(&hubInputBox{fn: o.OnInput})
		C.mcpgo_hub_read_opts_on_input(r.c, C.uintptr_t(r.handle))
	}
	return r, nil
}

// free runs after the reading call returned (the callback runs only during it).
func (r *readOpts) free() {
	if r.handle != 0 {
		deleteHandle(r.handle)
	}
	for _, s := range r.strs {
		freeC(s)
	}
	C.free(unsafe.Pointer(r.c))
}

// NewHubFromFile creates a hub of the servers of a host's configuration file: mcpServers
// (claude_desktop_config.json, .mcp.json, Cursor's mcp.json) or VS Code's servers and inputs,
// comments and trailing commas allowed. Entries that cannot be built (an unset variable, a
// declined input, a refused setting) are failed members; other hosts' keys are listed by
// Warnings. Only a file that cannot be read as a whole is an error. Nothing starts before Start.
func NewHubFromFile(path string, opts *HubOptions, read *HubFileOptions) (*Hub, error) {
	return newHubFrom(path, "path", opts, read, func(src, o *C.char, r *C.mcp_hub_read_opts, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_new_from_file(src, o, r, hp, cerr)
	})
}

// NewHubFromText is NewHubFromFile for the file's text.
func NewHubFromText(text string, opts *HubOptions, read *HubFileOptions) (*Hub, error) {
	return newHubFrom(text, "text", opts, read, func(src, o *C.char, r *C.mcp_hub_read_opts, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_new_from_text(src, o, r, hp, cerr)
	})
}

func newHubFrom(src, what string, opts *HubOptions, read *HubFileOptions,
	create func(src, o *C.char, r *C.mcp_hub_read_opts, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status) (*Hub, error) {
	if e := noNUL(what, src); e != nil {
		return nil, e
	}
	r, err := read.native()
	if err != nil {
		return nil, err
	}
	defer r.free()
	cs := cstr(src)
	defer freeC(cs)
	return newHub(opts, func(o *C.char, hp **C.mcp_hub, cerr **C.mcp_error) C.mcp_status {
		return create(cs, o, r.c, hp, cerr)
	})
}

// HubReloadReport names the members a reload added, removed, restarted and left unchanged.
type HubReloadReport struct {
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Restarted []string `json:"restarted"`
	Unchanged []string `json:"unchanged"`
}

// ReloadFromFile reads the configuration file again and applies it: new members are added and
// started, removed ones closed, changed (or failed) ones restarted, the others keep their
// connections. A file that cannot be read as a whole changes nothing. Like Start, ctx ending
// returns early.
func (h *Hub) ReloadFromFile(ctx context.Context, path string, read *HubFileOptions) (*HubReloadReport, error) {
	return h.reload(ctx, path, "path", read, func(p *C.mcp_hub, src *C.char, r *C.mcp_hub_read_opts, out **C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_reload_from_file(p, src, r, out, cerr)
	})
}

// ReloadFromText is ReloadFromFile for the file's text.
func (h *Hub) ReloadFromText(ctx context.Context, text string, read *HubFileOptions) (*HubReloadReport, error) {
	return h.reload(ctx, text, "text", read, func(p *C.mcp_hub, src *C.char, r *C.mcp_hub_read_opts, out **C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_reload_from_text(p, src, r, out, cerr)
	})
}

func (h *Hub) reload(ctx context.Context, src, what string, read *HubFileOptions,
	fn func(p *C.mcp_hub, src *C.char, r *C.mcp_hub_read_opts, out **C.char, cerr **C.mcp_error) C.mcp_status) (*HubReloadReport, error) {
	if e := noNUL(what, src); e != nil {
		return nil, e
	}
	raw, err := h.blocking(ctx, func() (json.RawMessage, error) {
		r, err := read.native()
		if err != nil {
			return nil, err
		}
		defer r.free()
		cs := cstr(src)
		defer freeC(cs)
		return h.callJSON(func(p *C.mcp_hub, out **C.char, cerr **C.mcp_error) C.mcp_status {
			return fn(p, cs, r.c, out, cerr)
		})
	})
	if err != nil {
		return nil, err
	}
	var rep HubReloadReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "unreadable reload report: " + err.Error(), cause: err}
	}
	return &rep, nil
}

// Warnings lists the configuration's keys other hosts define that this library ignores
// (autoApprove, alwaysAllow, ...), each once with the servers it is on.
func (h *Hub) Warnings() ([]string, error) {
	raw, err := h.callJSON(func(p *C.mcp_hub, out **C.char, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_hub_warnings_json(p, out, cerr)
	})
	if err != nil {
		return nil, err
	}
	var ws []string
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, &Error{Status: StatusInternal, Message: "unreadable warnings: " + err.Error(), cause: err}
	}
	return ws, nil
}
