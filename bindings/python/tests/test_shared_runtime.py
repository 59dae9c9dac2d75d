"""The shared runtime: ``runtime="shared"`` clients keep the process's thread count
flat however many are connected, and each still works on its own."""

from __future__ import annotations

import os

import pytest

import mcp_client
from conftest import text_of


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_shared_clients_keep_threads_flat(make_client):
    first = make_client(runtime="shared")
    first.connect()
    assert text_of(first.call_tool("echo", {"text": "0"})) == "0"
    one = _threads()
    clients = [make_client(runtime="shared") for _ in range(30)]
    for i, c in enumerate(clients):
        c.connect()
        assert text_of(c.call_tool("echo", {"text": str(i)})) == str(i)
    assert _threads() <= one
    clients[3].close()  # one gone, the others unaffected
    assert text_of(clients[4].call_tool("echo", {"text": "still"})) == "still"


def _library_threads() -> dict[str, str]:
    """This process's threads named like a client's own (thread id → name)."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue  # exited meanwhile
        if name in ("mcp-runtime", "mcp-dispatch"):
            found[tid] = name
    return found


def test_isolated_client_owns_threads(make_client):
    before = _library_threads()
    # (--era modern: a server writing nothing on stderr, whose lines the binding's default log
    # handler would receive on the dispatcher thread)
    c = make_client("--era", "modern", runtime="isolated")
    c.connect()
    assert text_of(c.call_tool("echo", {"text": "blocking"})) == "blocking"

    def new() -> list[str]:
        # Threads that appeared (others, e.g. an earlier client's, may end meanwhile).
        return sorted(name for tid, name in _library_threads().items() if tid not in before)

    # Its own runtime driver; no dispatcher thread while no callback has run.
    assert new() == ["mcp-runtime"]
    # The first callback (a progress notification) starts the dispatcher thread.
    seen: list[float] = []
    c.call_tool("progress", {"steps": 2}, progress=lambda p, total, msg: seen.append(p))
    assert seen and new() == ["mcp-dispatch", "mcp-runtime"]


def test_runtime_setting_checked(fixture_server):
    with pytest.raises(mcp_client.InvalidArgumentError, match="runtime"):
        mcp_client.Client.stdio(fixture_server, runtime="pooled")
