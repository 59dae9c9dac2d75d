// The dist-test host in Go: its own module (go.mod written by tests/dist/go.sh), linking the
// installed library through `#cgo pkg-config`. Calls the fixture server's `echo` tool.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hello FIXTURE")
		os.Exit(2)
	}
	c, err := mcpclient.NewStdio(os.Args[1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	raw, err := c.CallTool(ctx, "echo", map[string]string{"text": "hello from Go"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := mcpclient.DecodeToolResult(raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if res.Text() != "hello from Go" {
		fmt.Printf("WRONG ANSWER: %q\n", res.Text())
		os.Exit(1)
	}
	fmt.Printf("ok: %s (%s)\n", res.Text(), mcpclient.LibraryVersion())
}
