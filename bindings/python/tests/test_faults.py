"""Faults of issue 14 that live in this binding: NUL characters and exact numbers."""

from __future__ import annotations

import json

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
