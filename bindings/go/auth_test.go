package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memStore is a TokenStore in memory that counts its calls.
type memStore struct {
	mu      sync.Mutex
	records map[string]json.RawMessage
	loads   int
	saves   int
}

func newMemStore() *memStore { return &memStore{records: map[string]json.RawMessage{}} }

func (s *memStore) Load(issuer string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	r, ok := s.records[issuer]
	return r, ok
}

func (s *memStore) Save(issuer string, record json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	if record == nil {
		delete(s.records, issuer)
		return
	}
	s.records[issuer] = append(json.RawMessage(nil), record...)
}

// oauthFixture runs the HTTP fixture in OAuth mode (--oauth plus args) and returns the MCP
// URL, the issuer (BASE) and the record file.
func oauthFixture(t *testing.T, args ...string) (url, issuer, record string) {
	t.Helper()
	url, record = startHTTPFixture(t, append([]string{"--oauth"}, args...)...)
	return url, strings.TrimSuffix(url, "/mcp"), record
}

// authCounter is an AuthorizationFunc wrapper that counts its invocations.
type authCounter struct {
	calls atomic.Int32
	fn    AuthorizationFunc
}

func (a *authCounter) handler(ctx context.Context, authURL, redirectURI string) (string, error) {
	a.calls.Add(1)
	return a.fn(ctx, authURL, redirectURI)
}

// fetchHandler answers headlessly: the fixture's /authorize redirects at once.
func fetchHandler(ctx context.Context, authURL, _ string) (string, error) {
	return FetchRedirectContext(ctx, authURL)
}

func newOAuthClient(t *testing.T, url string, oauth any, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithOAuth(oauth), WithRequestTimeout(10 * time.Second)}, opts...)
	c, err := NewHTTP(url, opts...)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hostRedirect is an "oauth" configuration whose redirect the host receives itself (it is
// never contacted: the handler replies with the URL it was redirected to).
var hostRedirect = map[string]any{"redirect_uri": "http://127.0.0.1:1/callback", "client_name": "go-binding-test"}

// recordLines returns the fixture's "oauth" record lines.
func oauthRecord(t *testing.T, record string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if o, ok := m["oauth"].(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func countEndpoint(lines []map[string]any, endpoint string, status float64) int {
	n := 0
	for _, l := range lines {
		if l["endpoint"] == endpoint && l["status"] == status {
			n++
		}
	}
	return n
}

func TestOAuthAuthorizationCode(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			url, issuer, record := oauthFixture(t, "--era", era)
			c := newOAuthClient(t, url, hostRedirect)
			var gotURL, gotRedirect atomic.Value
			h := &authCounter{fn: func(ctx context.Context, authURL, redirectURI string) (string, error) {
				gotURL.Store(authURL)
				gotRedirect.Store(redirectURI)
				return fetchHandler(ctx, authURL, redirectURI)
			}}
			if err := c.OnAuthorization(h.handler); err != nil {
				t.Fatal(err)
			}
			if got := callText(t, c, "echo", map[string]any{"text": "authorized"}); got != "authorized" {
				t.Fatalf("echo: %q", got)
			}
			if string(c.Era()) != era {
				t.Fatalf("era %q", c.Era())
			}
			if n := h.calls.Load(); n != 1 {
				t.Fatalf("the handler ran %d times", n)
			}
			if u, _ := gotURL.Load().(string); !strings.HasPrefix(u, issuer+"/authorize?") {
				t.Fatalf("authorization URL %q", u)
			}
			if r, _ := gotRedirect.Load().(string); r != hostRedirect["redirect_uri"] {
				t.Fatalf("redirect URI %q", r)
			}
			// The token is reused: more calls, no new flow.
			if got := callText(t, c, "echo", map[string]any{"text": "again"}); got != "again" {
				t.Fatalf("echo: %q", got)
			}
			if n := h.calls.Load(); n != 1 {
				t.Fatalf("the handler ran %d times after a second call", n)
			}
			c.Close()
			lines := oauthRecord(t, record)
			if countEndpoint(lines, "/register", 201) != 1 || countEndpoint(lines, "/token", 200) != 1 {
				t.Fatalf("expected one registration and one token: %v", lines)
			}
		})
	}
}

// With the built-in loopback listener, a handler that delivers the redirect to the listener
// (as a browser would) and returns "", nil completes the flow.
func TestOAuthLoopbackListener(t *testing.T) {
	url, _, _ := oauthFixture(t)
	c := newOAuthClient(t, url, map[string]any{"loopback_path": "/go-callback"})
	handlerCtxEnded := make(chan struct{})
	var redirectURI atomic.Value
	h := &authCounter{fn: func(ctx context.Context, authURL, ru string) (string, error) {
		redirectURI.Store(ru)
		loc, err := FetchRedirectContext(ctx, authURL)
		if err != nil {
			return "", err
		}
		// The "browser" follows the redirect to the loopback listener.
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		go func() { <-ctx.Done(); close(handlerCtxEnded) }()
		return "", nil
	}}
	if err := c.OnAuthorization(h.handler); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "via loopback"}); got != "via loopback" {
		t.Fatalf("echo: %q", got)
	}
	if r, _ := redirectURI.Load().(string); !strings.HasPrefix(r, "http://127.0.0.1:") || !strings.HasSuffix(r, "/go-callback") {
		t.Fatalf("redirect URI %q", r)
	}
	select { // the flow is over, so the handler's context ends
	case <-handlerCtxEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context did not end after the flow")
	}
}

func TestOAuthTokenStore(t *testing.T) {
	url, issuer, record := oauthFixture(t)
	store := newMemStore()

	c1 := newOAuthClient(t, url, hostRedirect)
	h1 := &authCounter{fn: fetchHandler}
	if err := c1.OnAuthorization(h1.handler); err != nil {
		t.Fatal(err)
	}
	if err := c1.SetTokenStore(store); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c1, "echo", map[string]any{"text": "first"}); got != "first" {
		t.Fatalf("echo: %q", got)
	}
	if h1.calls.Load() != 1 {
		t.Fatalf("first client: the handler ran %d times", h1.calls.Load())
	}
	c1.Close()

	store.mu.Lock()
	saved, ok := store.records[issuer]
	loads, saves := store.loads, store.saves
	store.mu.Unlock()
	if !ok || saves == 0 || loads == 0 {
		t.Fatalf("store: record for %s: %v; %d loads, %d saves; records %v", issuer, ok, loads, saves, store.records)
	}
	var rec struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
		Tokens map[string]struct {
			AccessToken string `json:"access_token"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(saved, &rec); err != nil {
		t.Fatalf("record %s: %v", saved, err)
	}
	if rec.Client.ClientID == "" || rec.Tokens[url].AccessToken == "" {
		t.Fatalf("record without client or token for %s: %s", url, saved)
	}

	// A second client with the same store: no handler call, no new registration or token.
	c2 := newOAuthClient(t, url, hostRedirect)
	h2 := &authCounter{fn: func(context.Context, string, string) (string, error) {
		return "", errors.New("the second client must not authorize again")
	}}
	if err := c2.OnAuthorization(h2.handler); err != nil {
		t.Fatal(err)
	}
	if err := c2.SetTokenStore(store); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c2, "echo", map[string]any{"text": "second"}); got != "second" {
		t.Fatalf("echo: %q", got)
	}
	if n := h2.calls.Load(); n != 0 {
		t.Fatalf("second client: the handler ran %d times", n)
	}
	c2.Close()
	lines := oauthRecord(t, record)
	if r, tk := countEndpoint(lines, "/register", 201), countEndpoint(lines, "/token", 200); r != 1 || tk != 1 {
		t.Fatalf("%d registrations and %d tokens, want 1 and 1", r, tk)
	}
}

// A record that is not a JSON object, and a Load that panics, count as nothing stored: the
// flow runs, and Save stores a good record.
func TestOAuthTokenStoreBadRecords(t *testing.T) {
	url, issuer, _ := oauthFixture(t)
	for name, store := range map[string]TokenStore{
		"not an object": &fixedStore{memStore: newMemStore(), record: json.RawMessage(`[1,2]`)},
		"invalid JSON":  &fixedStore{memStore: newMemStore(), record: json.RawMessage(`{"client":`)},
		"panic":         &fixedStore{memStore: newMemStore(), panics: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := newOAuthClient(t, url, hostRedirect)
			h := &authCounter{fn: fetchHandler}
			if err := c.OnAuthorization(h.handler); err != nil {
				t.Fatal(err)
			}
			if err := c.SetTokenStore(store); err != nil {
				t.Fatal(err)
			}
			if got := callText(t, c, "echo", map[string]any{"text": "ok"}); got != "ok" {
				t.Fatalf("echo: %q", got)
			}
			if h.calls.Load() != 1 {
				t.Fatalf("the handler ran %d times", h.calls.Load())
			}
			fs := store.(*fixedStore)
			fs.mu.Lock()
			_, saved := fs.records[issuer]
			fs.mu.Unlock()
			if !saved {
				t.Fatal("nothing saved")
			}
		})
	}
}

// fixedStore loads a fixed record (or panics) and saves into its memStore.
type fixedStore struct {
	*memStore
	record json.RawMessage
	panics bool
}

func (s *fixedStore) Load(issuer string) (json.RawMessage, bool) {
	if s.panics {
		panic("the keychain is locked")
	}
	return s.record, true
}

func TestOAuthHandlerError(t *testing.T) {
	url, _, _ := oauthFixture(t)
	for name, fn := range map[string]AuthorizationFunc{
		"error": func(context.Context, string, string) (string, error) {
			return "", errors.New("the user closed the browser")
		},
		"panic": func(context.Context, string, string) (string, error) {
			panic("the user closed the browser")
		},
		// With a redirect_uri of the host's own, "" is no answer.
		"empty": func(context.Context, string, string) (string, error) { return "", nil },
	} {
		t.Run(name, func(t *testing.T) {
			c := newOAuthClient(t, url, hostRedirect)
			if err := c.OnAuthorization(fn); err != nil {
				t.Fatal(err)
			}
			var err error
			within(t, 10*time.Second, "the refused call", func() {
				_, err = c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
			})
			if !errors.Is(err, ErrAuthRequired) {
				t.Fatalf("want ErrAuthRequired, got %v", err)
			}
			var e *Error
			errors.As(err, &e)
			want := "the user closed the browser"
			if name == "empty" {
				want = "returned no redirect URL"
			}
			if !strings.Contains(e.Message, want) {
				t.Fatalf("message %q lacks %q", e.Message, want)
			}
			if e.HTTPStatus != 401 || !strings.Contains(e.WWWAuthenticate, "resource_metadata=") {
				t.Fatalf("HTTPStatus %d, WWWAuthenticate %q", e.HTTPStatus, e.WWWAuthenticate)
			}
		})
	}
}

// A Connect whose context ends while the handler waits for the "user" returns the context's
// error; Close then ends the attempt and the handler's context.
func TestOAuthHandlerCancelled(t *testing.T) {
	url, _, _ := oauthFixture(t)
	c := newOAuthClient(t, url, hostRedirect)
	started, ended := make(chan struct{}), make(chan struct{})
	if err := c.OnAuthorization(func(ctx context.Context, _, _ string) (string, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Connect(ctx)
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never ran")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Connect: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Connect did not return after cancel")
	}
	// Connect's attempt goes on in the background; Close ends it and the handler.
	within(t, 10*time.Second, "Close", func() { c.Close() })
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context did not end at Close")
	}
}

// A call's deadline ends a flow waiting for the handler: the call fails with ErrTimeout and
// the handler's context ends (the responder reports the answer unwanted).
func TestOAuthHandlerDeadline(t *testing.T) {
	url, _, _ := oauthFixture(t)
	c := newOAuthClient(t, url, map[string]any{"redirect_uri": "http://127.0.0.1:1/callback", "authorization_timeout_ms": 1500},
		WithMode(ModeModern))
	ended := make(chan struct{})
	if err := c.OnAuthorization(func(ctx context.Context, _, _ string) (string, error) {
		<-ctx.Done()
		close(ended)
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	var err error
	within(t, 10*time.Second, "the call", func() {
		_, err = c.CallTool(context.Background(), "echo", map[string]any{"text": "x"})
	})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout (authorization_timeout_ms), got %v", err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context did not end after the authorization timed out")
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	url, issuer, record := oauthFixture(t, "--oauth-client", "svc:s3cret")
	c := newOAuthClient(t, url, map[string]any{"grant": "client_credentials", "client_id": "svc", "client_secret": "s3cret", "issuer": issuer})
	h := &authCounter{fn: fetchHandler}
	if err := c.OnAuthorization(h.handler); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "m2m"}); got != "m2m" {
		t.Fatalf("echo: %q", got)
	}
	if h.calls.Load() != 0 {
		t.Fatal("client credentials ran the browser step")
	}
	c.Close()
	lines := oauthRecord(t, record)
	ok := false
	for _, l := range lines {
		if p, _ := l["params"].(map[string]any); l["endpoint"] == "/token" && l["status"] == 200.0 && p["grant_type"] == "client_credentials" {
			ok = true
		}
	}
	if !ok || countEndpoint(lines, "/register", 201) != 0 {
		t.Fatalf("no client_credentials token (or a registration): %v", lines)
	}

	// A wrong secret: the token endpoint refuses, the call fails with ErrAuthRequired.
	bad := newOAuthClient(t, url, map[string]any{"grant": "client_credentials", "client_id": "svc", "client_secret": "wrong", "issuer": issuer})
	_, err := bad.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrAuthRequired) {
		t.Fatalf("wrong secret: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.OAuthError != "invalid_client" {
		t.Fatalf("wrong secret: the OAuth error code is missing: %#v", err)
	}
}

// An assertion grant asks the provider for the workload's JWT and surfaces the authorization
// server's refusal with its OAuth error code (the fixture knows no jwt-bearer grant).
func TestOAuthAssertionProvider(t *testing.T) {
	url, issuer, _ := oauthFixture(t)
	c := newOAuthClient(t, url, map[string]any{"grant": "jwt_bearer"})
	var mu sync.Mutex
	var asked []string
	if err := c.SetAssertionProvider(func(kind, audience string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, kind+" "+audience)
		return "eyJ.workload.sig", nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
	var e *Error
	if !errors.Is(err, ErrAuthRequired) || !errors.As(err, &e) || e.OAuthError != "unsupported_grant_type" {
		t.Fatalf("want ErrAuthRequired with unsupported_grant_type, got %#v", err)
	}
	if strings.Contains(err.Error(), "eyJ.workload.sig") {
		t.Fatalf("the JWT leaked into the error: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "workload_jwt "+issuer {
		t.Fatalf("provider calls: %v", asked)
	}
	if err := c.SetAssertionProvider(nil); err != nil {
		t.Fatal(err)
	}
}

// Without OAuth a 401 is ErrAuthRequired with the status and the challenge.
func TestOAuth401ErrorFields(t *testing.T) {
	url, issuer, _ := oauthFixture(t)
	wantMeta := `resource_metadata="` + issuer + `/.well-known/oauth-protected-resource/mcp"`

	c, err := NewHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Connect(testCtx(t))
	var e *Error
	if !errors.Is(err, ErrAuthRequired) || !errors.As(err, &e) {
		t.Fatalf("Connect without a token: %v", err)
	}
	if e.Status != StatusAuthRequired || e.HTTPStatus != 401 {
		t.Fatalf("status %v, HTTP %d", e.Status, e.HTTPStatus)
	}
	if !strings.HasPrefix(e.WWWAuthenticate, "Bearer ") || !strings.Contains(e.WWWAuthenticate, wantMeta) ||
		!strings.Contains(e.WWWAuthenticate, `scope="mcp"`) {
		t.Fatalf("WWW-Authenticate %q", e.WWWAuthenticate)
	}

	// A token the server did not issue: 401 invalid_token.
	c2, err := NewHTTP(url, WithBearerToken("not-a-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrAuthRequired) || !errors.As(err, &e) || e.HTTPStatus != 401 ||
		!strings.Contains(e.WWWAuthenticate, `error="invalid_token"`) || strings.Contains(e.WWWAuthenticate, "not-a-token") {
		t.Fatalf("bad token: %v (HTTP %d, %q)", err, e.HTTPStatus, e.WWWAuthenticate)
	}
	// Errors that are not HTTP refusals carry no HTTP fields.
	c.Close()
	_, err = c.CallTool(context.Background(), "echo", nil)
	if !errors.As(err, &e) || e.HTTPStatus != 0 || e.WWWAuthenticate != "" {
		t.Fatalf("closed: %v", err)
	}
}

// Step-up: a 403 insufficient_scope re-runs the authorization with more scope.
func TestOAuthStepUp(t *testing.T) {
	url, _, _ := oauthFixture(t, "--oauth-step-up-tool", "add")
	c := newOAuthClient(t, url, hostRedirect)
	var scopes []string
	var mu sync.Mutex
	h := &authCounter{fn: func(ctx context.Context, authURL, ru string) (string, error) {
		if i := strings.Index(authURL, "scope="); i >= 0 {
			mu.Lock()
			scopes = append(scopes, strings.SplitN(authURL[i+6:], "&", 2)[0])
			mu.Unlock()
		}
		return fetchHandler(ctx, authURL, ru)
	}}
	if err := c.OnAuthorization(h.handler); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "plain"}); got != "plain" {
		t.Fatalf("echo: %q", got)
	}
	raw, err := c.CallTool(testCtx(t), "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatalf("add after step-up: %v (scopes asked: %v)", err, scopes)
	}
	if got := text(t, raw); got != "5" {
		t.Fatalf("add: %q", got)
	}
	if n := h.calls.Load(); n != 2 {
		t.Fatalf("the handler ran %d times, want 2 (scopes %v)", n, scopes)
	}
}

// expireTokens calls the fixture's test hook: every access token expires now (and with
// refresh, every refresh token is revoked too).
func expireTokens(t *testing.T, issuer string, refresh bool) {
	t.Helper()
	u := issuer + "/fixture/expire-tokens"
	if refresh {
		u += "?refresh=1"
	}
	resp, err := http.Post(u, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("expire-tokens: HTTP %d", resp.StatusCode)
	}
}

func (s *memStore) counts() (loads, saves int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads, s.saves
}

// A refused access token is refreshed without the browser step, and the new tokens are
// saved; with the refresh token revoked too, the client authorizes again.
func TestOAuthRefresh(t *testing.T) {
	url, issuer, record := oauthFixture(t)
	store := newMemStore()
	c := newOAuthClient(t, url, hostRedirect)
	h := &authCounter{fn: fetchHandler}
	if err := c.OnAuthorization(h.handler); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTokenStore(store); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "one"}); got != "one" {
		t.Fatalf("echo: %q", got)
	}
	_, saves := store.counts()

	expireTokens(t, issuer, false)
	if got := callText(t, c, "echo", map[string]any{"text": "refreshed"}); got != "refreshed" {
		t.Fatalf("echo after expiry: %q", got)
	}
	if n := h.calls.Load(); n != 1 {
		t.Fatalf("a refresh ran the browser step (%d calls)", n)
	}
	if _, s := store.counts(); s <= saves {
		t.Fatalf("the refreshed tokens were not saved (%d saves before, %d after)", saves, s)
	}
	refreshed := 0
	for _, l := range oauthRecord(t, record) {
		if p, _ := l["params"].(map[string]any); l["endpoint"] == "/token" && l["status"] == 200.0 && p["grant_type"] == "refresh_token" {
			refreshed++
		}
	}
	if refreshed != 1 {
		t.Fatalf("%d refresh_token grants, want 1", refreshed)
	}

	expireTokens(t, issuer, true)
	if got := callText(t, c, "echo", map[string]any{"text": "again"}); got != "again" {
		t.Fatalf("echo after revocation: %q", got)
	}
	if n := h.calls.Load(); n != 2 {
		t.Fatalf("the handler ran %d times, want 2 (a new authorization)", n)
	}
}

// A short token lifetime (≤ 30 s) makes the library refresh ahead of time.
func TestOAuthShortTokenTTL(t *testing.T) {
	url, _, record := oauthFixture(t, "--oauth-token-ttl", "5")
	c := newOAuthClient(t, url, hostRedirect)
	h := &authCounter{fn: fetchHandler}
	if err := c.OnAuthorization(h.handler); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if got := callText(t, c, "echo", map[string]any{"text": "ttl"}); got != "ttl" {
			t.Fatalf("echo: %q", got)
		}
	}
	if n := h.calls.Load(); n != 1 {
		t.Fatalf("the handler ran %d times", n)
	}
	for _, l := range oauthRecord(t, record) {
		if l["endpoint"] == "mcp" && l["status"] == 401.0 && l["error"] == "invalid_token" {
			t.Fatalf("a token was used after it expired: %v", l)
		}
	}
}

// In ModeAuto a failed authorization during the server/discover probe must end the connect:
// falling back to initialize would hit the 401 again and ask the host a second time (a user
// who cancelled would see the browser again; a timeout would take twice
// authorization_timeout_ms).
func TestOAuthFailedAuthorizationAsksOnce(t *testing.T) {
	url, _, _ := oauthFixture(t)
	refuse := func(context.Context, string, string) (string, error) {
		return "", errors.New("the user cancelled")
	}
	wait := func(ctx context.Context, _, _ string) (string, error) { // the user never comes back
		<-ctx.Done()
		return "", ctx.Err()
	}
	slow := map[string]any{"redirect_uri": "http://127.0.0.1:1/callback", "authorization_timeout_ms": 1000}
	for _, tc := range []struct {
		name  string
		mode  Mode
		oauth map[string]any
		fn    AuthorizationFunc
		want  error
	}{
		{"refused/modern", ModeModern, hostRedirect, refuse, ErrAuthRequired},
		{"refused/auto", ModeAuto, hostRedirect, refuse, ErrAuthRequired},
		{"timeout/modern", ModeModern, slow, wait, ErrTimeout},
		{"timeout/auto", ModeAuto, slow, wait, ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newOAuthClient(t, url, tc.oauth, WithMode(tc.mode))
			h := &authCounter{fn: tc.fn}
			if err := c.OnAuthorization(h.handler); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if n := h.calls.Load(); n != 1 {
				t.Errorf("the authorization was asked %d times in %v, want 1 (error: %v)", n, time.Since(start).Round(time.Millisecond), err)
			}
		})
	}
}
