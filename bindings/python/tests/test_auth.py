"""OAuth: the "oauth" configuration, the authorization callback, the token store, fetch_redirect
and the error accessors.

Two kinds of server:

- a tiny in-test HTTP double (`_Mock`) that only refuses: 401 with a challenge, protected
  resource and authorization server metadata, an authorization endpoint that redirects at
  once, a token endpoint that always refuses. It exercises the error attributes and every way
  the authorization callback can fail, without depending on the fixture;
- the fixture server in OAuth mode (`--http 127.0.0.1:0 --oauth`), for complete flows.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import mcp_client
from conftest import REQUEST_TIMEOUT_MS, text_of
from test_http import start_http  # noqa: F401 - the fixture, reused

# Bounds every OAuth test: no flow may wait out the library's 300 s default.
AUTH_TIMEOUT_MS = 8_000


# --------------------------------------------------------------------------------------------
# An HTTP double that refuses


class _Mock:
    """A protected resource at /mcp that always answers 401 (or /fail: 500), with metadata that
    points at an authorization server on the same origin."""

    def __init__(self) -> None:
        mock = self
        self.requests: list[tuple[str, str]] = []
        self.token_requests: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _json(self, obj) -> None:
                self._send(200, json.dumps(obj).encode(), {"Content-Type": "application/json"})

            def _body(self) -> bytes:
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def do_GET(self):
                mock.requests.append(("GET", self.path))
                path = urllib.parse.urlsplit(self.path).path
                base = mock.url
                if path.startswith("/.well-known/oauth-protected-resource"):
                    self._json({"resource": base + "/mcp", "authorization_servers": [base], "scopes_supported": ["mcp"]})
                elif path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
                    self._json(
                        {
                            "issuer": base,
                            "authorization_endpoint": base + "/authorize",
                            "token_endpoint": base + "/token",
                            "response_types_supported": ["code"],
                            "grant_types_supported": ["authorization_code", "refresh_token"],
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                        }
                    )
                elif path == "/authorize":
                    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                    target = q.get("redirect_uri", "") + "?" + urllib.parse.urlencode(
                        {"code": "mock-code", "state": q.get("state", "")}
                    )
                    self._send(302, b"", {"Location": target})
                elif path == "/plain":
                    self._send(200, b"no redirect here", {"Content-Type": "text/plain"})
                else:
                    self._refuse()

            def do_POST(self):
                mock.requests.append(("POST", self.path))
                body = self._body()
                path = urllib.parse.urlsplit(self.path).path
                if path == "/token":
                    mock.token_requests.append(dict(urllib.parse.parse_qsl(body.decode())))
                    self._send(400, b'{"error":"invalid_grant"}', {"Content-Type": "application/json"})
                elif path == "/fail":
                    self._send(500, b"boom", {"Content-Type": "text/plain"})
                else:
                    self._refuse()

            def do_DELETE(self):
                self._send(405)

            def _refuse(self):
                challenge = f'Bearer resource_metadata="{mock.url}/.well-known/oauth-protected-resource/mcp", scope="mcp"'
                self._send(401, b"", {"WWW-Authenticate": challenge})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def mock():
    m = _Mock()
    yield m
    m.close()


@pytest.fixture
def make_http():
    """make_http(url, **kw) -> an HTTP client with bounded timeouts, closed at teardown."""
    made: list[mcp_client.Client] = []

    def make(url: str, **kw) -> mcp_client.Client:
        kw.setdefault("request_timeout_ms", REQUEST_TIMEOUT_MS)
        oauth = kw.get("oauth")
        if oauth is not None:
            kw["oauth"] = {"authorization_timeout_ms": AUTH_TIMEOUT_MS, **oauth}
        c = mcp_client.Client.http(url, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close(wait=10)
        assert c._life.freed, "the client handle was not freed after close"


# --------------------------------------------------------------------------------------------
# API surface, no server


def test_http_constructor_passes_the_oauth_object(monkeypatch):
    seen = {}
    monkeypatch.setattr(mcp_client.Client, "__init__", lambda self, config: seen.update(config))
    mcp_client.Client.http("http://127.0.0.1:1/mcp", oauth={"client_id": "abc", "scopes": ["a", "b"]})
    assert {k: v for k, v in seen.items() if v is not None} == {
        "url": "http://127.0.0.1:1/mcp",
        "oauth": {"client_id": "abc", "scopes": ["a", "b"]},
    }


def test_oauth_config_is_checked_at_creation():
    with pytest.raises(mcp_client.InvalidArgumentError, match="grant"):
        mcp_client.Client.http("http://127.0.0.1:9/mcp", oauth={"grant": "password"})
    with pytest.raises(mcp_client.InvalidArgumentError, match="nope"):
        mcp_client.Client.http("http://127.0.0.1:9/mcp", oauth={"nope": 1})
    with pytest.raises(TypeError):
        mcp_client.Client.http("http://127.0.0.1:9/mcp", oauth="client_id=x")
    c = mcp_client.Client.http("http://127.0.0.1:9/mcp", oauth={})  # every key is optional
    c.close(wait=5)


def test_exception_classes_and_aliases():
    assert mcp_client.exception_class(mcp_client.MCP_AUTH_REQUIRED) is mcp_client.AuthRequiredError
    assert mcp_client.exception_class(mcp_client.MCP_HTTP_STATUS) is mcp_client.HttpStatusError
    assert mcp_client.HttpStatusError is mcp_client.HTTPStatusError
    assert issubclass(mcp_client.AuthRequiredError, mcp_client.TransportError)
    e = mcp_client.MCPError(1, "x")
    assert e.http_status is None and e.www_authenticate is None


def test_registration_arguments_are_checked():
    before = mcp_client._live_userdata()
    c = mcp_client.Client.http("http://127.0.0.1:9/mcp", oauth={})
    live = mcp_client._live_userdata()  # the client holds its default log listener
    try:
        with pytest.raises(TypeError):
            c.on_authorization("not callable")
        with pytest.raises(TypeError):
            c.set_token_store(load=lambda issuer: None)  # save missing
        with pytest.raises(TypeError):
            c.set_token_store(load=1, save=2)
        assert mcp_client._live_userdata() == live
        assert c.on_authorization(lambda url, redirect: None) is not None  # returns fn: a decorator
        c.on_authorization(None)
        c.set_token_store(load=lambda issuer: None, save=lambda issuer, record: None)
        c.set_token_store()  # back to memory
    finally:
        c.close(wait=5)
    assert mcp_client._live_userdata() == before, "callback objects were not released"
    with pytest.raises(mcp_client.ClosedError):
        c.on_authorization(lambda url, redirect: None)
    with pytest.raises(mcp_client.ClosedError):
        c.set_token_store(load=lambda issuer: None, save=lambda issuer, record: None)
    assert mcp_client._live_userdata() == before


# --------------------------------------------------------------------------------------------
# Errors from the HTTP double


def test_401_without_oauth_is_auth_required_with_the_challenge(mock, make_http):
    c = make_http(mock.url + "/mcp")
    with pytest.raises(mcp_client.AuthRequiredError) as ei:
        c.connect()
    e = ei.value
    assert e.status == mcp_client.MCP_AUTH_REQUIRED
    assert e.http_status == 401
    assert e.www_authenticate is not None and "resource_metadata=" in e.www_authenticate
    assert "401" in repr(e)


def test_500_carries_its_http_status(mock, make_http):
    c = make_http(mock.url + "/fail", mode="modern")
    with pytest.raises(mcp_client.TransportError) as ei:
        c.connect()
    e = ei.value
    assert e.http_status == 500
    assert e.www_authenticate is None
    assert not isinstance(e, mcp_client.AuthRequiredError)


def test_500_is_an_http_status_error(mock, make_http):
    c = make_http(mock.url + "/fail", mode="modern")
    with pytest.raises(mcp_client.TransportError) as ei:
        c.connect()
    assert isinstance(ei.value, mcp_client.HttpStatusError), repr(ei.value)
    assert ei.value.status == mcp_client.MCP_HTTP_STATUS


def test_fetch_redirect(mock):
    url = mock.url + "/authorize?" + urllib.parse.urlencode({"redirect_uri": "http://127.0.0.1:1/cb", "state": "s1"})
    assert mcp_client.fetch_redirect(url, timeout=5) == "http://127.0.0.1:1/cb?code=mock-code&state=s1"
    with pytest.raises(mcp_client.TransportError) as ei:
        mcp_client.fetch_redirect(mock.url + "/plain", timeout=5)
    assert ei.value.http_status == 200
    with pytest.raises(mcp_client.InvalidArgumentError):
        mcp_client.fetch_redirect("ftp://example.invalid/x")
    with pytest.raises(TypeError):
        mcp_client.fetch_redirect(b"http://127.0.0.1/")


# --------------------------------------------------------------------------------------------
# The authorization callback's failure paths (the double's token endpoint always refuses)

# A pre-registered public client: the flow reaches the browser step without registering.
PRE = {"client_id": "pre-registered", "token_endpoint_auth_method": "none"}


@pytest.fixture
def make_oauth(mock, make_http):
    """make_oauth(**oauth) -> a client for the double's /mcp. Modern mode: in auto mode a failed
    flow is run a second time by the legacy fallback (see
    test_auto_mode_does_not_authorize_twice_after_a_failed_flow)."""

    def make(**oauth) -> mcp_client.Client:
        return make_http(mock.url + "/mcp", mode="modern", oauth={**PRE, **oauth})

    return make


def test_callback_receives_the_urls(mock, make_oauth):
    seen = []

    def authorize(url, redirect_uri):
        seen.append((url, redirect_uri))
        raise RuntimeError("stop here")

    c = make_oauth(redirect_uri="http://127.0.0.1:1/cb")
    c.on_authorization(authorize)
    with pytest.raises(mcp_client.AuthRequiredError):
        c.connect()
    assert len(seen) == 1
    url, redirect_uri = seen[0]
    assert redirect_uri == "http://127.0.0.1:1/cb"
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert url.startswith(mock.url + "/authorize?")
    assert q["client_id"] == "pre-registered" and q["redirect_uri"] == redirect_uri
    assert q["code_challenge_method"] == "S256" and q["state"] and q["resource"] == mock.url + "/mcp"


def test_callback_raising_fails_the_call(mock, make_oauth):
    c = make_oauth()

    @c.on_authorization
    def authorize(url, redirect_uri):
        raise RuntimeError("the user closed the browser")

    with pytest.raises(mcp_client.AuthRequiredError, match="the user closed the browser"):
        c.connect()
    assert mock.token_requests == []


def test_future_failed_later_fails_the_call(make_oauth):
    futures = []

    def authorize(url, redirect_uri):
        f = mcp_client.Deferred()
        futures.append(f)
        assert f.wanted
        threading.Timer(0.1, f.set_exception, [PermissionError("denied later")]).start()
        return f

    c = make_oauth()
    c.on_authorization(authorize)
    with pytest.raises(mcp_client.AuthRequiredError, match="denied later"):
        c.connect()
    assert len(futures) == 1 and not futures[0].wanted


def test_bad_answers_fail_the_call(make_oauth):
    answers = iter([42, b"http://127.0.0.1:1/cb?code=x"])

    c = make_oauth(redirect_uri="http://127.0.0.1:1/cb")
    c.on_authorization(lambda url, redirect_uri: next(answers))
    for _ in range(2):
        with pytest.raises(mcp_client.AuthRequiredError, match="expected the redirect URL"):
            c.connect()


def test_none_without_the_loopback_listener_fails(make_oauth):
    """With oauth.redirect_uri the host receives the redirect itself: returning None is no
    answer."""
    c = make_oauth(redirect_uri="http://127.0.0.1:1/cb")
    c.on_authorization(lambda url, redirect_uri: None)
    with pytest.raises(mcp_client.AuthRequiredError):
        c.connect()


def test_redirect_with_a_wrong_state_is_refused(mock, make_oauth):
    c = make_oauth(redirect_uri="http://127.0.0.1:1/cb")
    c.on_authorization(lambda url, redirect_uri: redirect_uri + "?code=x&state=forged")
    with pytest.raises(mcp_client.AuthRequiredError):
        c.connect()
    assert mock.token_requests == [], "a forged state reached the token endpoint"


def test_reply_reaches_the_token_endpoint(mock, make_oauth):
    """fetch_redirect from the callback; the double's token endpoint refuses the code."""
    c = make_oauth(redirect_uri="http://127.0.0.1:1/cb")
    c.on_authorization(lambda url, redirect_uri: mcp_client.fetch_redirect(url, timeout=5))
    with pytest.raises(mcp_client.AuthRequiredError, match="invalid_grant") as ei:
        c.connect()
    assert ei.value.http_status == 401
    assert len(mock.token_requests) == 1
    form = mock.token_requests[0]
    assert form["grant_type"] == "authorization_code" and form["code"] == "mock-code"
    assert form["code_verifier"] and form["client_id"] == "pre-registered"


def test_closing_the_client_completes_a_pending_future(make_oauth):
    pending: list[concurrent.futures.Future] = []
    asked = threading.Event()

    def authorize(url, redirect_uri):
        f = concurrent.futures.Future()
        pending.append(f)
        asked.set()
        return f

    c = make_oauth()
    c.on_authorization(authorize)
    errors = []

    def connect():
        try:
            c.connect()
        except mcp_client.MCPError as e:
            errors.append(e)

    t = threading.Thread(target=connect)
    t.start()
    assert asked.wait(10), "the authorization callback was not called"
    c.close(wait=10)
    t.join(10)
    assert not t.is_alive()
    assert errors and isinstance(errors[0], (mcp_client.ClosedError, mcp_client.AuthRequiredError)), errors
    assert pending[0].cancelled(), "closing the client did not cancel the pending future"
    assert c._life.freed


def test_auto_mode_does_not_authorize_twice_after_a_failed_flow(mock, make_http):
    """LIBRARY BUG (kept failing on purpose): in the default "auto" mode, connect() probes
    with server/discover; when the 401 there runs an OAuth flow that fails (the callback
    raised, the token endpoint refused...), the probe's error is taken for "not a modern
    server" (lifecycle.rs, probe(): `Err(_) => Ok(ProbeOutcome::Legacy(..))`) and the legacy
    initialize gets the same 401 and runs a SECOND complete flow: the user is sent to the
    browser twice, the code endpoint sees two exchanges, and the error reported is the
    second one's ("initialize: ..."). With mode="modern" the flow runs once."""
    seen = []

    def authorize(url, redirect_uri):
        seen.append(url)
        raise RuntimeError("the user cancelled")

    c = make_http(mock.url + "/mcp", oauth=PRE)  # mode: auto (the default)
    c.on_authorization(authorize)
    with pytest.raises(mcp_client.AuthRequiredError, match="the user cancelled"):
        c.connect()
    assert len(seen) == 1, f"the authorization callback ran {len(seen)} times for one connect()"


# --------------------------------------------------------------------------------------------
# The fixture server in OAuth mode


@pytest.fixture
def oauth_server(fixture_server, start_http):  # noqa: F811
    """start(*extra_flags) -> the MCP URL of the fixture in OAuth mode."""

    def start(*flags: str) -> str:
        return start_http("--oauth", *flags)

    return start


def _auto_authorize(calls: list | None = None):
    """An authorization callback for an authorization server that redirects at once."""

    def authorize(url: str, redirect_uri: str | None) -> str:
        if calls is not None:
            calls.append((url, redirect_uri))
        return mcp_client.fetch_redirect(url, timeout=5)

    return authorize


def test_fixture_refuses_without_a_token(oauth_server, make_http):
    c = make_http(oauth_server())
    with pytest.raises(mcp_client.AuthRequiredError) as ei:
        c.connect()
    assert ei.value.http_status == 401
    assert ei.value.www_authenticate and ei.value.www_authenticate.lower().startswith("bearer")


def test_authorization_code_flow(oauth_server, make_http):
    calls = []
    c = make_http(oauth_server(), oauth={})
    c.on_authorization(_auto_authorize(calls))
    assert text_of(c.call_tool("echo", {"text": "authorized"})) == "authorized"
    assert len(calls) == 1
    url, redirect_uri = calls[0]
    assert redirect_uri and redirect_uri.startswith("http://127.0.0.1:")  # the loopback listener
    assert text_of(c.call_tool("echo", {"text": "again"})) == "again"
    assert len(calls) == 1, "a second authorization for a client that holds a token"


def test_loopback_listener_receives_the_redirect(oauth_server, make_http):
    """The callback returns None (it "opened a browser"); a thread plays the browser."""
    browsers = []

    def authorize(url, redirect_uri):
        def browser():
            location = mcp_client.fetch_redirect(url, timeout=5)
            with urllib.request.urlopen(location, timeout=5) as r:
                r.read()

        t = threading.Thread(target=browser, daemon=True)
        browsers.append(t)
        t.start()
        return None

    c = make_http(oauth_server(), oauth={})
    c.on_authorization(authorize)
    assert text_of(c.call_tool("echo", {"text": "via loopback"})) == "via loopback"
    assert len(browsers) == 1
    browsers[0].join(5)


def test_deferred_redirect_from_another_thread(oauth_server, make_http):
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        c = make_http(oauth_server(), oauth={"redirect_uri": "http://127.0.0.1:1/callback"})
        c.on_authorization(lambda url, redirect_uri: pool.submit(mcp_client.fetch_redirect, url, 5))
        assert text_of(c.call_tool("echo", {"text": "deferred"})) == "deferred"
    finally:
        pool.shutdown(wait=True)


def test_token_store_saves_and_a_second_client_reuses_it(oauth_server, make_http):
    url = oauth_server()
    store: dict[str, dict] = {}
    saves, loads = [], []

    def load(issuer):
        loads.append(issuer)
        return store.get(issuer)

    def save(issuer, record):
        saves.append((issuer, record))
        if record is None:
            store.pop(issuer, None)
        else:
            store[issuer] = record

    first_calls = []
    c1 = make_http(url, oauth={})
    c1.set_token_store(load=load, save=save)
    c1.on_authorization(_auto_authorize(first_calls))
    assert text_of(c1.call_tool("echo", {"text": "one"})) == "one"
    assert len(first_calls) == 1
    assert saves, "the token store received no save"
    issuer, record = saves[-1]
    assert isinstance(record, dict) and record.get("tokens"), record
    assert store[issuer]["tokens"]
    c1.close(wait=10)

    second_calls = []
    c2 = make_http(url, oauth={})
    c2.set_token_store(load=load, save=save)
    c2.on_authorization(_auto_authorize(second_calls))
    assert text_of(c2.call_tool("echo", {"text": "two"})) == "two"
    assert second_calls == [], "the second client authorized again instead of using the stored record"
    assert issuer in loads


def test_token_store_exceptions_do_not_cross(oauth_server, make_http, caplog):
    def load(issuer):
        raise OSError("keychain locked")

    def save(issuer, record):
        raise OSError("disk full")

    c = make_http(oauth_server(), oauth={})
    c.set_token_store(load=load, save=save)
    c.on_authorization(_auto_authorize())
    with caplog.at_level("ERROR", logger="mcp_client"):
        assert text_of(c.call_tool("echo", {"text": "store broken"})) == "store broken"
    assert "keychain locked" in caplog.text or "disk full" in caplog.text


def test_fixture_callback_raising_fails_the_call(oauth_server, make_http):
    c = make_http(oauth_server(), oauth={})

    @c.on_authorization
    def authorize(url, redirect_uri):
        raise RuntimeError("user said no")

    with pytest.raises(mcp_client.AuthRequiredError, match="user said no"):
        c.call_tool("echo", {"text": "x"})


def test_client_credentials(oauth_server, make_http):
    url = oauth_server("--oauth-client", "py-machine:py-secret")
    c = make_http(url, oauth={"grant": "client_credentials", "client_id": "py-machine", "client_secret": "py-secret",
                              "issuer": url.removesuffix("/mcp")})
    c.on_authorization(lambda url, redirect_uri: pytest.fail("client credentials need no browser"))
    assert text_of(c.call_tool("echo", {"text": "machine"})) == "machine"


def test_client_credentials_with_a_wrong_secret(oauth_server, make_http):
    url = oauth_server("--oauth-client", "py-machine:py-secret")
    c = make_http(url, oauth={"grant": "client_credentials", "client_id": "py-machine", "client_secret": "wrong",
                              "issuer": url.removesuffix("/mcp")})
    with pytest.raises(mcp_client.AuthRequiredError) as ei:
        c.call_tool("echo", {"text": "x"})
    # The token endpoint's registered OAuth error code, and never the secret.
    assert ei.value.oauth_error == "invalid_client"
    assert "wrong" not in str(ei.value)


def test_assertion_provider_supplies_the_workload_jwt(mock, make_http):
    """Workload identity federation: the provider's JWT is the grant; the refusal carries its
    OAuth error code, and the refused JWT is not sent again."""
    asked: list[tuple[str, str]] = []

    def provider(kind: str, audience: str) -> str:
        asked.append((kind, audience))
        return "eyJ.workload.sig"

    c = make_http(mock.url + "/mcp", oauth={"grant": "jwt_bearer"})
    c.set_assertion_provider(provider)
    with pytest.raises(mcp_client.AuthRequiredError) as ei:
        c.call_tool("echo", {"text": "x"})
    assert ei.value.oauth_error == "invalid_grant"
    assert "eyJ.workload.sig" not in str(ei.value)
    assert asked == [("workload_jwt", mock.url)]
    assert len(mock.token_requests) == 1
    req = mock.token_requests[0]
    assert req["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert req["assertion"] == "eyJ.workload.sig" and "client_id" not in req
    with pytest.raises(mcp_client.AuthRequiredError):
        c.call_tool("echo", {"text": "x"})
    assert len(mock.token_requests) == 1  # the refused JWT was not sent again

    # A provider that has nothing (or raises) ends the authorization without a token request.
    d = make_http(mock.url + "/mcp", oauth={"grant": "jwt_bearer"})
    d.set_assertion_provider(lambda kind, audience: None)
    with pytest.raises(mcp_client.AuthRequiredError):
        d.call_tool("echo", {"text": "x"})
    assert len(mock.token_requests) == 1
    d.set_assertion_provider(None)
    with pytest.raises(TypeError):
        d.set_assertion_provider("not callable")  # type: ignore[arg-type]


def _post(url: str) -> dict:
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def test_expired_token_is_refreshed_without_the_browser(oauth_server, make_http):
    url = oauth_server()
    base = url.rsplit("/mcp", 1)[0]
    calls = []
    c = make_http(url, oauth={})
    c.on_authorization(_auto_authorize(calls))
    assert text_of(c.call_tool("echo", {"text": "a"})) == "a"
    assert _post(base + "/fixture/expire-tokens")["expiredAccessTokens"] >= 1
    assert text_of(c.call_tool("echo", {"text": "b"})) == "b"
    assert len(calls) == 1, "a refreshable token led to a new authorization"
    # Refresh tokens revoked too: the next 401 needs the browser again.
    _post(base + "/fixture/expire-tokens?refresh=1")
    assert text_of(c.call_tool("echo", {"text": "c"})) == "c"
    assert len(calls) == 2


def test_short_lived_tokens_are_saved_on_refresh(oauth_server, make_http):
    saved = []
    c = make_http(oauth_server("--oauth-token-ttl", "5"), oauth={})
    c.set_token_store(load=lambda issuer: None, save=lambda issuer, record: saved.append(record))
    c.on_authorization(_auto_authorize())
    assert text_of(c.call_tool("echo", {"text": "1"})) == "1"
    n = len(saved)
    assert text_of(c.call_tool("echo", {"text": "2"})) == "2"  # expires within 30 s: refreshed first
    assert len(saved) > n, "the proactive refresh did not reach the token store"
    tokens = next(iter(saved[-1]["tokens"].values()))
    assert tokens["access_token"] and tokens["refresh_token"]


def test_step_up_authorizes_again_with_more_scope(oauth_server, make_http):
    calls = []
    c = make_http(oauth_server("--oauth-step-up-tool", "echo"), oauth={})
    c.on_authorization(_auto_authorize(calls))
    assert text_of(c.call_tool("echo", {"text": "admin only"})) == "admin only"
    assert len(calls) == 2
    scopes = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(calls[-1][0]).query))["scope"].split()
    assert {"mcp", "admin"} <= set(scopes)


def test_legacy_era_over_oauth(oauth_server, make_http):
    c = make_http(oauth_server("--era", "legacy"), oauth={"redirect_uri": "http://127.0.0.1:1/callback"})
    c.on_authorization(_auto_authorize())
    assert c.connect()["era"] == "legacy"
    assert text_of(c.call_tool("echo", {"text": "old"})) == "old"
