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
	"go.opentelemetry.io/otel/trace"
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

	// The call connected the client first: its handshake (server/discover) is a span under
	// the call's.
	names := map[trace.SpanID]string{turn.SpanContext().SpanID(): "agent turn"}
	for _, span := range recorder.Ended() {
		names[span.SpanContext().SpanID()] = span.Name()
	}
	for _, span := range recorder.Ended() {
		if span.InstrumentationScope().Name != mcpotel.ScopeName {
			continue
		}
		fmt.Printf("%s (%s) under %s\n", span.Name(), span.SpanKind(), names[span.Parent().SpanID()])
	}
	// Output:
	// tools/call echo (client) under agent turn
	// server/discover (client) under tools/call echo
}
