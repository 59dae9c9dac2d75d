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

// ListSkills returns every page of skills/list, checked against the skills extension's rules
// (SEP-2640): {"skills": [entry, ...], "rejected": [{"uri", "reason", "entry"}, ...]}. It
// reads no skill file. ErrUnsupported when the server did not declare
// io.modelcontextprotocol/skills. Identify a skill by (server, uri), never by uri alone.
func (c *Client) ListSkills(ctx context.Context, opts ...CallOption) (json.RawMessage, error) {
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_list_skills_start(p, pr.opts, done, ud, call, cerr)
	})
}

// GetSkill sends skills/get for a SKILL.md URI. Result: the checked entry JSON.
func (c *Client) GetSkill(ctx context.Context, uri string, opts ...CallOption) (json.RawMessage, error) {
	curi := cstr(uri)
	defer freeC(curi)
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_get_skill_start(p, curi, pr.opts, done, ud, call, cerr)
	})
}

// ReadSkillFile reads one file of the skill entry describes (fileURI "": its SKILL.md, which
// loads the skill) and verifies it against the entry: size, SHA-256 digest and, for SKILL.md,
// the frontmatter. Result: the verified content item JSON. Any mismatch, or a file the entry
// does not list, fails with ErrSkillVerificationFailed and returns no content.
func (c *Client) ReadSkillFile(ctx context.Context, entry json.RawMessage, fileURI string, opts ...CallOption) (json.RawMessage, error) {
	centry := cstr(string(entry))
	defer freeC(centry)
	var cfile *C.char
	if fileURI != "" {
		cfile = cstr(fileURI)
		defer freeC(cfile)
	}
	return c.startJSON(ctx, opts, false, func(p *C.mcp_client, pr *prepared, done C.mcp_call_done_fn, ud unsafe.Pointer, call **C.mcp_call, cerr **C.mcp_error) C.mcp_status {
		return C.mcp_client_read_skill_file_start(p, centry, cfile, pr.opts, done, ud, call, cerr)
	})
}
