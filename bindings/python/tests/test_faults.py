"""The C ABI faults that live in this binding: NUL characters and exact numbers."""

from __future__ import annotations

import json
import threading

import pytest

import mcp_client

BIG = 123456789012345678901234567890
TWO_64 = 18446744073709551616


def test_a_nul_in_a_c_string_argument_is_refused_before_anything_is_sent(make_client):
    c = make_client("--era", "modern")
    for call in (
        lambda: c.call_tool("echo\x00evil", {"text": "x"}),
        lambda: c.read_resource("file:///a\x00/etc/passwd"),
        lambda: c.call_tool("elicit_once", request_state="ab\x00cd"),
        lambda: c.get_prompt("greeting\x00", {"name": "n"}),
        lambda: c.list_tools(cursor="page\x00-2"),
    ):
        with pytest.raises(ValueError, match="NUL character"):
            call()
    # Inside JSON a NUL is just a character: it goes out escaped and comes back whole.
    r = c.call_tool("echo", {"text": "echo\x00evil"})
    assert r["content"][0]["text"] == "echo\x00evil"


def test_big_integers_are_exact_on_every_path(make_client):
    c = make_client("--era", "modern")
    for tools in (c.list_tools()["tools"], c.all_tools()):
        schema = next(t for t in tools if t["name"] == "big_numbers")["inputSchema"]["properties"]["n"]
        assert schema["maximum"] == BIG and isinstance(schema["maximum"], int)
        assert schema["minimum"] == -TWO_64 and isinstance(schema["minimum"], int)
    # A value through the MRTR driver (decoded in the core) keeps its digits too.
    r = c.call_tool("big_numbers")
    assert r["structuredContent"]["maximum"] == BIG
    assert json.loads(r["content"][0]["text"])["maximum"] == BIG


def test_reconnect_policy_and_connection_states(make_client):
    states: list[tuple[str, int]] = []
    changed = threading.Condition()

    def on_state(state: str, attempt: int, detail: str) -> None:
        with changed:
            states.append((state, attempt))
            changed.notify_all()

    c = make_client(reconnect={"max_attempts": 3, "initial_backoff_ms": 20})
    c.on_connection_state(on_state)
    assert c.list_tools()["tools"]
    with pytest.raises(mcp_client.ServerExitedError, match="tools/call was not retried"):
        c.call_tool("crash")
    assert any(t["name"] == "echo" for t in c.list_tools()["tools"])
    want = [("connected", 0), ("disconnected", 0), ("reconnecting", 1), ("connected", 0)]
    with changed:
        assert changed.wait_for(lambda: states == want, timeout=5), states


def test_a_bad_reconnect_policy_is_refused(fixture_server):
    with pytest.raises(mcp_client.InvalidArgumentError, match="reconnect"):
        mcp_client.Client.stdio(fixture_server, reconnect={"max_attempts": 0})
    with pytest.raises(mcp_client.InvalidArgumentError, match="unknown reconnect key"):
        mcp_client.Client.stdio(fixture_server, reconnect={"attempts": 2})
