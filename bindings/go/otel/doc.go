// Package mcpotel bridges the mcpclient binding to OpenTelemetry, by the OpenTelemetry
// semantic conventions for MCP: a CLIENT span per MCP operation, started from the caller's
// context before the request is sent (so the server, which gets the span's context in the
// request's params._meta, sees it as its parent), or the host's own open execute_tool span
// enriched instead; and the histograms mcp.client.operation.duration and
// mcp.client.session.duration.
//
// It is a module of its own so that the mcpclient package stays free of dependencies:
//
//	b, err := mcpotel.Instrument(client) // the global tracer, meter and propagator providers
//	defer b.Close()
//	ctx, span := tracer.Start(ctx, "handle request")
//	client.CallTool(ctx, "get-weather", args) // a child CLIENT span "tools/call get-weather"
package mcpotel
