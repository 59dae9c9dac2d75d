// hello connects to an MCP server over stdio, lists its tools and calls one that asks the
// user for input (answered by a Go handler).
//
//	go run ./examples/hello ../../target/debug/mcp-fixture-server
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: hello <server command> [args...]")
	}
	c, err := mcpclient.NewStdio(os.Args[1], os.Args[2:])
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Elicitation requests (MRTR rounds or legacy server requests) land here, on their own
	// goroutine: ask a user, wait, then return the ElicitResult.
	c.OnElicitation(func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		fmt.Printf("server asks: %s\n", params)
		return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("connected: %s era, protocol %s\n", info.Era, info.ProtocolVersion)

	tools, err := c.ListAll(ctx, mcpclient.KindTools)
	if err != nil {
		log.Fatal(err)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	json.Unmarshal(tools, &list)
	fmt.Printf("%d tools\n", len(list.Tools))

	raw, err := c.CallTool(ctx, "elicit_once", nil)
	var rpc *mcpclient.RPCError
	switch {
	case errors.As(err, &rpc):
		log.Fatalf("server error %d: %s", rpc.Code, rpc.Message)
	case err != nil:
		log.Fatal(err)
	}
	res, _ := mcpclient.DecodeToolResult(raw)
	fmt.Println(res.Text())
}
