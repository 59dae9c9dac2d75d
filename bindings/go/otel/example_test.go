package mcpotel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	mcpclient "github.com/mcp-client/mcp_client/bindings/go"
	mcpotel "github.com/mcp-client/mcp_client/bindings/go/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func server() string {
	if s := os.Getenv("MCP_FIXTURE"); s != "" {
		return s
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "target", "debug", "mcp-fixture-server")
}

// A host's tracer provider (here with a recorder in place of an exporter), a client
// instrumented with it, and one tool call inside the host's span.
func Example() {
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	client, err := mcpclient.NewStdio(server(), nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	bridge, err := mcpotel.Instrument(client, mcpotel.WithTracerProvider(provider))
	if err != nil {
		panic(err)
	}
	defer bridge.Close()

	ctx, turn := provider.Tracer("host").Start(context.Background(), "agent turn")
	if _, err := client.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		panic(err)
	}
	turn.End()

	for _, span := range recorder.Ended() {
		if span.InstrumentationScope().Name != mcpotel.ScopeName {
			continue
		}
		fmt.Println(span.Name(), span.SpanKind(), span.Parent().SpanID() == turn.SpanContext().SpanID())
	}
	// Output: tools/call echo client true
}
