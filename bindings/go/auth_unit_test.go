package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Tests of the OAuth API that need no OAuth server.

func TestWithOAuthForms(t *testing.T) {
	for name, v := range map[string]any{
		"map":    map[string]any{"client_name": "go-test", "scopes": []string{"a", "b"}},
		"raw":    json.RawMessage(`{"client_name":"go-test"}`),
		"bytes":  []byte(`{"loopback_path":"/cb"}`),
		"string": `{"offline_access":false}`,
		"struct": struct {
			Grant string `json:"grant"`
		}{"authorization_code"},
		"redirect":  map[string]string{"redirect_uri": "myapp://callback"},
		"emptyJSON": "{}",
	} {
		c, err := NewHTTP("http://127.0.0.1:1/mcp", WithOAuth(v))
		if err != nil {
			t.Errorf("%s: NewHTTP: %v", name, err)
			continue
		}
		c.Close()
	}
}

func TestWithOAuthRejected(t *testing.T) {
	for name, v := range map[string]any{
		"unknown key":     map[string]any{"nope": 1},
		"bad grant":       map[string]any{"grant": "password"},
		"cc without id":   map[string]any{"grant": "client_credentials"},
		"not an object":   json.RawMessage(`[1]`),
		"invalid JSON":    `{"grant":`,
		"relative return": map[string]any{"redirect_uri": "/relative"},
	} {
		c, err := NewHTTP("http://127.0.0.1:1/mcp", WithOAuth(v))
		if err == nil {
			c.Close()
			t.Errorf("%s: NewHTTP accepted it", name)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || (e.Status != StatusInvalidArg && e.Status != StatusInvalidJSON) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOAuthLoopbackDetection(t *testing.T) {
	for js, want := range map[string]bool{
		`{"url":"x"}`:                                false,
		`{"oauth":{}}`:                               true,
		`{"oauth":{"redirect_uri":null}}`:            true,
		`{"oauth":{"redirect_uri":"app://cb"}}`:      false,
		`{"oauth":{"grant":"client_credentials"}}`:   true, // no browser step: irrelevant
		`{"oauth":{"loopback_port":0,"scopes":"a"}}`: true,
	} {
		if got := oauthLoopback([]byte(js)); got != want {
			t.Errorf("%s: %v", js, got)
		}
	}
}

func TestFetchRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/authorize":
			if r.URL.Query().Get("state") == "" {
				http.Error(w, "no state", http.StatusBadRequest)
				return
			}
			w.Header().Set("Location", "/callback?code=c0de&state="+r.URL.Query().Get("state"))
			w.WriteHeader(http.StatusFound)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			http.Error(w, "a login page", http.StatusOK)
		}
	}))
	defer srv.Close()

	got, err := FetchRedirect(srv.URL + "/authorize?state=xyz")
	if err != nil {
		t.Fatalf("FetchRedirect: %v", err)
	}
	if want := srv.URL + "/callback?code=c0de&state=xyz"; got != want {
		t.Fatalf("FetchRedirect = %q, want %q", got, want)
	}

	_, err = FetchRedirect(srv.URL + "/login")
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != http.StatusOK {
		t.Fatalf("no redirect: %v (%+v)", err, e)
	}
	if _, err := FetchRedirect("not a url"); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("bad URL: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = FetchRedirectContext(ctx, srv.URL+"/slow")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("FetchRedirectContext waited %v", el)
	}
	if got, err := FetchRedirectContext(testCtx(t), srv.URL+"/authorize?state=s"); err != nil || !strings.Contains(got, "code=c0de") {
		t.Fatalf("FetchRedirectContext: %q, %v", got, err)
	}
}

// Registering and replacing the OAuth hooks releases every handle; after Close none is left.
func TestOAuthHooksRelease(t *testing.T) {
	before := liveHandles.Load()
	c, err := NewHTTP("http://127.0.0.1:1/mcp", WithOAuth(map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	noop := func(context.Context, string, string) (string, error) { return "", nil }
	for i := 0; i < 3; i++ {
		if err := c.OnAuthorization(noop); err != nil {
			t.Fatal(err)
		}
		if err := c.SetTokenStore(newMemStore()); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.OnAuthorization(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTokenStore(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.OnAuthorization(noop); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if after := liveHandles.Load(); after != before {
		t.Fatalf("live handles: %d before, %d after Close", before, after)
	}
	if err := c.OnAuthorization(noop); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := c.SetTokenStore(newMemStore()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
