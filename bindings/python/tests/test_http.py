"""Streamable HTTP: the fixture in `--http 127.0.0.1:0` mode."""

from __future__ import annotations

import logging
import queue
import re
import subprocess
import tempfile
import threading

import pytest

import mcp_client
from conftest import LOG_WAIT_S, REQUEST_TIMEOUT_MS, text_of


def test_http_constructor_builds_the_flat_config(monkeypatch):
    seen = {}

    def fake_init(self, config):
        seen.update(config)

    monkeypatch.setattr(mcp_client.Client, "__init__", fake_init)
    mcp_client.Client.http(
        "http://127.0.0.1:1/mcp", headers={"X-Tenant": "t1"}, bearer_token="s3cret", mode="modern", request_timeout_ms=5
    )
    assert seen == {
        "url": "http://127.0.0.1:1/mcp",
        "headers": {"X-Tenant": "t1"},
        "bearer_token": "s3cret",
        "mode": "modern",
        "request_timeout_ms": 5,
    }


@pytest.fixture
def start_http(fixture_server):
    """start_http(*flags) -> the URL of a fixture serving Streamable HTTP; stopped at teardown."""
    procs = []
    pumps = []
    errs = []

    def start(*flags: str) -> str:
        err_file = tempfile.TemporaryFile("w+")
        errs.append(err_file)
        proc = subprocess.Popen(
            [fixture_server, "--http", "127.0.0.1:0", *flags],
            stdin=subprocess.PIPE,  # the fixture exits when its stdin closes, in HTTP mode too
            stdout=subprocess.PIPE,
            stderr=err_file,  # a file, not a pipe: a chatty server never blocks on it
            text=True,
        )
        procs.append(proc)
        lines: queue.Queue = queue.Queue()

        def pump():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        pumper = threading.Thread(target=pump, daemon=True)
        pumper.start()
        pumps.append(pumper)
        while True:
            try:
                line = lines.get(timeout=10)
            except queue.Empty:
                pytest.fail("the fixture did not print its HTTP address within 10 s")
            if line is None:
                proc.wait(5)
                err_file.seek(0)
                err = err_file.read()
                pytest.fail(f"the fixture exited with {proc.returncode}: {err.strip()[:500]}")
            m = re.match(r"fixture: listening on (http://\S+)", line.strip())
            if m:
                return m.group(1)

    yield start
    for proc in procs:
        proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    for pumper in pumps:
        pumper.join(5)
    for proc in procs:
        proc.stdout.close()
    for f in errs:
        f.close()


@pytest.fixture
def http_server(start_http) -> str:
    return start_http()


def test_http_connect_and_call(http_server):
    with mcp_client.Client.http(
        http_server, headers={"X-Test": "python"}, bearer_token="token-123", request_timeout_ms=REQUEST_TIMEOUT_MS
    ) as c:
        info = c.connect()
        assert info["serverInfo"]["name"] == "mcp-fixture-server"
        assert c.era in ("modern", "legacy")
        assert text_of(c.call_tool("echo", {"text": "over http"})) == "over http"
        assert any(t["name"] == "echo" for t in c.all_tools())
        c.on_elicitation(lambda params: {"action": "accept", "content": {"name": "Http"}})
        assert text_of(c.call_tool("elicit_once")) == "Hello, Http!"


def test_http_config_is_accepted():
    """The header documents `url`, `headers` and `bearer_token` as configuration keys (and
    mcp_config_set_url exists); a client for an HTTP URL must be constructible without a
    server. Connecting to a port nobody listens on is a transport error, promptly."""
    c = mcp_client.Client.http("http://127.0.0.1:9/mcp", headers={"X-A": "b"}, bearer_token="t", request_timeout_ms=3000)
    try:
        with pytest.raises(mcp_client.TransportError):
            c.connect()
    finally:
        c.close(wait=5)


def test_http_legacy_era_with_server_requests(start_http):
    url = start_http("--era", "legacy")
    with mcp_client.Client.http(url, request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
        c.on_elicitation(lambda params: {"action": "accept", "content": {"name": "OldHttp"}})
        assert c.connect()["era"] == "legacy"
        c.ping()
        assert text_of(c.call_tool("elicit_once")) == "Hello, OldHttp!"


def test_library_warnings_go_to_logging(start_http, catch):
    """The library's own warnings reach Python's logging by default, on a child of the
    mcp_client logger named after their source: here the transport starting a new session."""
    transport = catch("mcp_client.transport", "session expired")
    url = start_http("--era", "legacy", "--expire-session-after", "1")
    with mcp_client.Client.http(url, request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
        assert c.connect()["era"] == "legacy"  # initialize: request 1 of the session
        c.ping()  # request 2: 404, the library opens a new session and retries
        assert transport.seen.wait(LOG_WAIT_S), "the transport's warning never reached logging"
        (record,) = transport.matching()
        assert record.levelno == logging.WARNING
        assert record.mcp_source == "transport"
        assert "HTTP 404" in record.getMessage()
