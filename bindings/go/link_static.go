//go:build mcp_static

package mcpclient

// With -tags mcp_static the program links libmcp_client.a and its system libraries, as listed
// by mcp_client-static.pc, and needs no libmcp_client.so at run time.

// #cgo pkg-config: mcp_client-static
import "C"
