"""The shared runtime (issue 19): ``runtime="shared"`` clients keep the process's thread count
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


def _named(*names: str) -> int:
    """Threads of this process with one of these names (other threads, e.g. the library's
    reaper, may come and go meanwhile)."""
    count = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                count += f.read().strip() in names
        except OSError:
            pass  # exited meanwhile
    return count


def test_isolated_client_owns_threads(make_client):
    before = _named("mcp-runtime", "mcp-dispatch")
    c = make_client(runtime="isolated")
    c.connect()
    # its runtime driver and its dispatcher
    assert _named("mcp-runtime", "mcp-dispatch") == before + 2


def test_runtime_setting_checked(fixture_server):
    with pytest.raises(mcp_client.InvalidArgumentError, match="runtime"):
        mcp_client.Client.stdio(fixture_server, runtime="pooled")
