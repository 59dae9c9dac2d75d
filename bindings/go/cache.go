package mcpclient

/*
#include <stdlib.h>
#include "mcp_client.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// CacheMode says how one call uses the response cache (SEP-2549): server/discover, the list
// calls and ReadResource answer from a fresh entry while the server's ttlMs lasts.
type CacheMode uint32

const (
	CacheUse     CacheMode = C.MCP_CACHE_USE     // a fresh entry answers; else ask and store (default)
	CacheRefresh CacheMode = C.MCP_CACHE_REFRESH // always ask the server, then store
	CacheBypass  CacheMode = C.MCP_CACHE_BYPASS  // always ask the server, store nothing
)

// WithCacheMode sets this call's use of the response cache.
func WithCacheMode(m CacheMode) CallOption { return func(s *callSettings) { s.cacheMode = m } }

// WithoutOutputValidation skips this CallTool's check of structuredContent against the tool's
// outputSchema (no ErrOutputSchemaInvalid).
func WithoutOutputValidation() CallOption { return func(s *callSettings) { s.skipValidation = true } }

// WithResponseCache turns response caching on or off for the client (default on) and bounds
// its entries (0 keeps the library default of 512).
func WithResponseCache(enabled bool, maxEntries int) Option {
	return func(c *config) {
		c.settings["response_cache"] = enabled
		if maxEntries > 0 {
			c.settings["response_cache_max_entries"] = maxEntries
		}
	}
}

// WithOutputSchemaValidation turns the check of tool results against their outputSchema on or
// off for the client (default on).
func WithOutputSchemaValidation(enabled bool) Option {
	return func(c *config) { c.settings["validate_output_schema"] = enabled }
}

// SetCachePartition names the authorization context (e.g. issuer plus subject) the response
// cache files private entries under; a new value drops the old context's private entries,
// public ones stay shared.
func (c *Client) SetCachePartition(partition string) error {
	defer runtime.KeepAlive(c)
	if err := noNUL("cache partition", partition); err != nil {
		return err
	}
	p, cerrGo := c.core.acquire()
	if cerrGo != nil {
		return cerrGo
	}
	defer c.core.release()
	cs := cstr(partition)
	defer C.free(unsafe.Pointer(cs))
	var cerr *C.mcp_error
	if st := C.mcp_client_set_cache_partition(p, cs, &cerr); st != C.MCP_OK {
		return fromC(st, cerr)
	}
	return nil
}

// ClearCache empties the client's response cache.
func (c *Client) ClearCache() error {
	defer runtime.KeepAlive(c)
	p, cerrGo := c.core.acquire()
	if cerrGo != nil {
		return cerrGo
	}
	defer c.core.release()
	var cerr *C.mcp_error
	if st := C.mcp_client_clear_cache(p, &cerr); st != C.MCP_OK {
		return fromC(st, cerr)
	}
	return nil
}
