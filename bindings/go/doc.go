// Package mcpclient is the Go binding of mcp_client, a Model Context Protocol client written
// in Rust and linked statically through its C ABI (include/mcp_client.h).
//
// A Client speaks both protocol eras (modern 2026-07-28 and legacy 2024-11-05 … 2025-11-25,
// detected automatically) over stdio (NewStdio) or Streamable HTTP (NewHTTP). Results are
// returned as json.RawMessage, exactly as the server sent them (without the JSON-RPC
// envelope). Multi Round-Trip Requests are driven automatically with the Go handlers
// registered by OnElicitation, OnSampling and OnRoots; without a handler a call fails with an
// *InputRequiredError, and the caller can answer by hand and retry with WithInputResponses
// and WithRequestState.
//
// Contexts: cancelling a call's context cancels the request (an mcp_cancel_token), and a
// deadline caps the whole call (max_total_ms). Errors are *Error values; use errors.Is with
// ErrClosed, ErrTimeout, ErrCancelled, ... and errors.As with *RPCError, *InputRequiredError
// or *RoundsExceededError.
//
// Threading: every method is safe for concurrent use. Handlers run each on their own
// goroutine; listeners and progress callbacks run in order on one goroutine per client. No Go
// code runs on the library's threads beyond copying arguments, except a TokenStore's Load and
// Save, which the library needs answered synchronously.
//
// OAuth: WithOAuth lets the library authorize with an HTTP server itself (authorization code
// with PKCE, or client credentials). OnAuthorization handles the browser step, SetTokenStore
// keeps credentials between clients, and errors.Is(err, ErrAuthRequired) with
// Error.HTTPStatus and Error.WWWAuthenticate describe a refusal.
package mcpclient
