//go:build !mcp_static

package mcpclient

// By default the program links the shared libmcp_client found by `pkg-config mcp_client`
// (`make install` writes mcp_client.pc); at run time the loader must find it (a system prefix,
// LD_LIBRARY_PATH or an rpath). Build with -tags mcp_static for a self-contained program.

// #cgo pkg-config: mcp_client
import "C"
