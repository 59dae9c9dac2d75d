"""The per-call path (mcp_client/_percall.py) behaves exactly like the json module it bypasses:
values round-trip through a real server unchanged, and what json refuses is refused with
json's own error, nothing sent, the client still usable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import mcp_client
from mcp_client import _percall

ODD_VALUES: dict[str, Any] = {
    "nested": [1, (2, 3), {"k": [None, True, False]}],
    "text": "é😀\x00\"\\\n\u2028",
    "big": 2**70,
    "negative_big": -(2**64),
    "decimals": [0.1, 1e300, -2.5e-308],
    "empty": [{}, [], ""],
    7: "a non-str key, as json.dumps writes it",
}


def expected(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_arguments_and_results_round_trip_unchanged(client):
    r = client.call_tool("schema_echo", ODD_VALUES)
    assert r["structuredContent"] == expected(ODD_VALUES)
    assert isinstance(r["structuredContent"]["big"], int)
    assert json.loads(r["content"][0]["text"]) == expected(ODD_VALUES)


def test_async_arguments_and_results_round_trip_unchanged(fixture_server):
    async def main() -> Any:
        async with mcp_client.AsyncClient.stdio(fixture_server, request_timeout_ms=10_000) as c:
            return await c.call_tool("schema_echo", ODD_VALUES)

    assert asyncio.run(main())["structuredContent"] == expected(ODD_VALUES)


def test_what_json_refuses_is_refused_the_same_way(client):
    circular: dict[str, Any] = {}
    circular["self"] = circular
    with pytest.raises(ValueError, match="Circular reference detected"):
        client.call_tool("echo", circular)
    with pytest.raises(TypeError, match="not JSON serializable"):
        client.call_tool("echo", {"text": object()})
    with pytest.raises(TypeError, match="not JSON serializable"):
        client.call_tool("echo", {"nested": {1, 2}})
    # Nothing half-done: the client still calls (and the fixture frees it when the test ends).
    assert client.call_tool("echo", {"text": "still here"})["content"][0]["text"] == "still here"


@pytest.mark.parametrize(
    "raw",
    [b'{"a":1}', b' {"a":1}', b'{"a":1}\n', b'[1e400, 123456789012345678901234567890]', b'"\\ud800"',
     b'{"a":1}x', b"", b"{", b"\xff"],
)
def test_result_decoding_matches_json_loads(raw):
    try:
        want: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        with pytest.raises(type(e)):
            _percall.loads(raw)
        return
    assert _percall.loads(raw) == want
