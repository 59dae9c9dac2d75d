package mcpclient

/*
#include <stdlib.h>
#include "mcp_client.h"
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WithOAuth enables OAuth 2.1 authorization for an HTTP server (instead of WithBearerToken):
// it sets the configuration's "oauth" object. oauth is a map (or any value that marshals to a
// JSON object), or the object's JSON text as json.RawMessage, []byte or string. The library
// checks it when the client is created (NewHTTP fails with ErrInvalidArg on unknown keys or
// bad values). Keys, all optional (see mcp_config_set_oauth in include/mcp_client.h):
//
//   - "grant": "authorization_code" (default) or "client_credentials";
//   - "client_id", "client_secret", "token_endpoint_auth_method" ("client_secret_basic",
//     "client_secret_post", "none", "private_key_jwt"), "issuer": a pre-registered client or
//     the client-credentials client, and the authorization server it belongs to (required
//     with a secret or key, which are sent to that issuer only);
//   - "private_key_pem", "signing_algorithm": for private_key_jwt;
//   - "client_metadata_url" (a Client ID Metadata Document), "client_name",
//     "application_type" ("native", "web"): for the client's identity and dynamic registration;
//   - "redirect_uri": a redirect the host receives itself (the OnAuthorization handler must
//     return the URL it was redirected to); unset, the library's loopback listener on
//     http://127.0.0.1:<"loopback_port"><"loopback_path"> receives it (port 0: any; path
//     "/callback");
//   - "scopes" (array or space-separated string), "offline_access" (true),
//     "authorization_timeout_ms" (300000), "max_step_up" (2), "open_browser" (false),
//     "allow_http" (false: authorization servers on plain http:// only on loopback hosts).
func WithOAuth(oauth any) Option {
	var v any
	switch x := oauth.(type) {
	case json.RawMessage:
		v = x
	case []byte:
		v = json.RawMessage(x)
	case string:
		v = json.RawMessage(x)
	default:
		v = x
	}
	// Invalid JSON text surfaces from NewHTTP as a marshalling error (StatusInvalidArg).
	return func(c *config) { c.settings["oauth"] = v }
}

// oauthLoopback reports whether the configuration (its final JSON) asks for OAuth with the
// library's loopback listener, i.e. an "oauth" object without "redirect_uri".
func oauthLoopback(configJSON []byte) bool {
	var cfg struct {
		OAuth map[string]json.RawMessage `json:"oauth"`
	}
	if json.Unmarshal(configJSON, &cfg) != nil || cfg.OAuth == nil {
		return false
	}
	r, ok := cfg.OAuth["redirect_uri"]
	return !ok || string(r) == "null"
}

// AuthorizationFunc is the browser step of an OAuth authorization-code flow. Open
// authorizationURL in a browser; the authorization server redirects the browser to
// redirectURI. Return the full URL the browser was redirected to (with its code, state and
// iss parameters): the library checks it and exchanges the code.
//
// With the library's loopback listener (WithOAuth without "redirect_uri") the handler may
// return "", nil after opening the browser: the listener receives the redirect. With a
// "redirect_uri" of its own the host must return the URL. A returned error ends the flow and
// the waiting call fails with ErrAuthRequired (its message includes the error's text).
//
// Each invocation runs on its own goroutine, so it may take as long as the user needs; ctx
// ends when the answer is no longer wanted (the call was cancelled or timed out, the flow
// ended, for example because the loopback listener got the redirect first, or the client
// closed). A panic is recovered and reported as an error.
type AuthorizationFunc func(ctx context.Context, authorizationURL, redirectURI string) (redirectURL string, err error)

// OnAuthorization registers the OAuth authorization handler (nil unregisters). It runs when a
// server needs an authorization-code flow (WithOAuth). Without a handler the library logs the
// authorization URL (OnLog) and waits for its loopback listener; with a "redirect_uri" of the
// host's own a handler is required. Register it before Connect.
func (c *Client) OnAuthorization(fn AuthorizationFunc) error {
	return c.setCallback(fn != nil, func() any { return &authBox{fn: fn, base: c.core.ctx, loopback: c.core.oauthLoopback} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_authorization(p, h, cerr)
		})
}

type authBox struct {
	fn       AuthorizationFunc
	base     context.Context
	loopback bool // the library's loopback listener waits for the redirect too
}

// serve runs the Go handler on its own goroutine and completes the (already deferred)
// responder with its outcome. ctx ends when the flow no longer wants the answer.
func (b *authBox) serve(ctx context.Context, cancel context.CancelFunc, url, redirectURI string, r *responder) {
	defer cancel()
	redirect, err := b.call(ctx, url, redirectURI)
	switch {
	case err != nil:
		authFail(r.take(), err.Error())
	case strings.IndexByte(redirect, 0) >= 0:
		authFail(r.take(), "the redirect URL contains a NUL byte")
	case redirect != "":
		c := cstr(redirect)
		defer freeC(c)
		// MCP_CANCELLED (nobody waits any more) is fine: the responder is consumed either way.
		// A redirect the library rejects (state, iss, error=...) fails the waiting call.
		_ = C.mcp_responder_reply_url(r.take(), c, nil)
	case b.loopback:
		// The listener receives the redirect. The C API has no "leave it to the listener"
		// answer for a deferred responder (failing it would end the flow), so keep it until
		// the flow no longer wants it, then release it (the fail is then a no-op, CANCELLED).
		<-ctx.Done() // the flow ended, timed out, or the client closed (pushed, not polled)
		authFail(r.take(), "")
	default:
		authFail(r.take(), "the authorization handler returned no redirect URL, but oauth.redirect_uri is set: "+
			"the handler must return the URL the browser was redirected to")
	}
}

func (b *authBox) call(ctx context.Context, url, redirectURI string) (redirect string, err error) {
	defer func() {
		if p := recover(); p != nil {
			redirect, err = "", fmt.Errorf("the authorization handler panicked: %v", p)
		}
	}()
	return b.fn(ctx, url, redirectURI)
}

// authFail consumes p with mcp_responder_reply_error (message "": the library's generic one).
func authFail(p *C.mcp_responder, message string) {
	if p == nil {
		return
	}
	var cmsg *C.char
	if message != "" {
		cmsg = cstr(shown(message))
		defer freeC(cmsg)
	}
	_ = C.mcp_responder_reply_error(p, 0, cmsg, nil)
}

// TokenStore keeps OAuth credentials between clients and processes (a keychain, a file): one
// record per authorization-server issuer. A record is an opaque JSON object holding the
// client's registration and its tokens: keep it secret, and give it back byte for byte.
//
// Load returns the issuer's record and true, or false when nothing is stored. Save stores
// the issuer's record, or forgets it when record is nil.
//
// Unlike handlers, both methods run synchronously on the library's dispatcher thread (Load
// must fill the library's slot before its callback returns, and a flow waits for Save before
// going on). Keep them quick, do not call the client from them (blocking client methods fail
// with StatusReentrantCall there), and make them safe for concurrent use if the store is
// shared by several clients. A panic is recovered: a Load that panics finds nothing, a Save
// that panics is dropped. A record that is not a JSON object counts as none.
type TokenStore interface {
	Load(issuer string) (record json.RawMessage, ok bool)
	Save(issuer string, record json.RawMessage)
}

// SetTokenStore makes the client keep OAuth credentials in store (nil restores the library's
// in-memory store, whose credentials live as long as the client). Set it before Connect.
func (c *Client) SetTokenStore(store TokenStore) error {
	return c.setCallback(store != nil, func() any { return &storeBox{store: store} },
		func(p *C.mcp_client, h C.uintptr_t, cerr **C.mcp_error) C.mcp_status {
			return C.mcpgo_set_token_store(p, h, cerr)
		})
}

type storeBox struct{ store TokenStore }

func (b *storeBox) load(issuer string) (record json.RawMessage, ok bool) {
	defer func() {
		if recover() != nil {
			record, ok = nil, false
		}
	}()
	return b.store.Load(issuer)
}

func (b *storeBox) save(issuer string, record json.RawMessage) {
	defer func() { _ = recover() }()
	b.store.Save(issuer, record)
}

// FetchRedirectTimeout is FetchRedirect's wait for the authorization server's answer.
const FetchRedirectTimeout = 30 * time.Second

// FetchRedirect GETs authorizationURL once, without following redirects, and returns the
// absolute Location it redirects to (it waits up to FetchRedirectTimeout).
//
// FOR TESTS AND AUTOMATION ONLY: against an authorization server that redirects at once,
// without a login page (a test server, the conformance suite's), an AuthorizationFunc can
// return this. A real host opens a browser instead.
func FetchRedirect(authorizationURL string) (string, error) {
	return fetchRedirect(authorizationURL, FetchRedirectTimeout)
}

// FetchRedirectContext is FetchRedirect bounded by ctx as well: its deadline caps the wait,
// and when ctx ends first it returns ctx's error at once (the request finishes in the
// background, within its timeout).
func FetchRedirectContext(ctx context.Context, authorizationURL string) (string, error) {
	ctx = orBackground(ctx)
	if ctx.Err() != nil {
		return "", ctxError(ctx)
	}
	timeout := FetchRedirectTimeout
	if dl, ok := ctx.Deadline(); ok {
		if rem := time.Until(dl); rem < timeout {
			if rem <= 0 {
				return "", ctxError(ctx)
			}
			timeout = rem
		}
	}
	if ctx.Done() == nil {
		return fetchRedirect(authorizationURL, timeout)
	}
	type outcome struct {
		url string
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		u, err := fetchRedirect(authorizationURL, timeout)
		ch <- outcome{u, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			var e *Error
			if errors.As(r.err, &e) {
				return "", withContext(ctx, e)
			}
		}
		return r.url, r.err
	case <-ctx.Done():
		return "", ctxError(ctx)
	}
}

func fetchRedirect(authorizationURL string, timeout time.Duration) (string, error) {
	if abiErr != nil {
		return "", abiErr
	}
	t := ms(timeout)
	if t <= 0 {
		t = 1
	}
	if err := noNUL("authorizationURL", authorizationURL); err != nil {
		return "", err
	}
	cu := cstr(authorizationURL)
	defer freeC(cu)
	var out *C.char
	var cerr *C.mcp_error
	if st := C.mcp_auth_fetch_redirect(cu, C.int64_t(t), &out, &cerr); st != C.MCP_OK {
		return "", fromC(st, cerr)
	}
	return takeString(out), nil
}
