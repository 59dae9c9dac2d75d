// Template for ```go fragment blocks (tests/docs/check.py): the block runs in main with a
// client `c` on the fixture server, a context `ctx` and an `err` it may assign.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
)

// Fragments use some of these imports, never all.
var (
	_ = json.Valid
	_ = errors.As
	_ = fmt.Println
	_ = time.Second
)

func main() {
	c, err := mcpclient.NewStdio("target/debug/mcp-fixture-server", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = ctx

	{{BODY}}

	if err != nil {
		log.Fatal(err)
	}
}
