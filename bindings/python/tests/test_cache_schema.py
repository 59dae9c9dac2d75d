"""The Python binding's response caching (SEP-2549) and output schema
validation, against the fixture server (its --record file shows what went over the wire)."""

from __future__ import annotations

import json

import pytest

import mcp_client


def requests(record, method: str) -> list[dict]:
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [m for m in lines if m.get("method") == method and "id" in m]


def test_a_second_tools_list_within_the_ttl_sends_nothing(make_client, tmp_path):
    record = tmp_path / "record.jsonl"
    c = make_client("--cache-ttl-ms", "60000", "--record", str(record))
    first = c.list_tools()
    assert first["ttlMs"] == 60000
    assert c.list_tools() == first
    assert len(requests(record, "tools/list")) == 1
    c.list_tools(cache="bypass")
    c.list_tools(cache="refresh")
    assert len(requests(record, "tools/list")) == 3
    c.read_resource("fixture://static")
    c.read_resource("fixture://static")
    assert len(requests(record, "resources/read")) == 1
    # Private entries belong to their authorization context; clear empties everything.
    c.set_cache_partition("user-b")
    c.list_tools()
    assert len(requests(record, "tools/list")) == 4
    c.clear_cache()
    c.read_resource("fixture://static")
    assert len(requests(record, "resources/read")) == 2
    with pytest.raises(ValueError, match="cache must be one of"):
        c.list_tools(cache="sometimes")


def test_notifications_invalidate(make_client, tmp_path):
    record = tmp_path / "record.jsonl"
    c = make_client("--cache-ttl-ms", "60000", "--record", str(record), mode="legacy")
    c.list_prompts()
    c.list_prompts()
    assert len(requests(record, "prompts/list")) == 1
    c.call_tool("notify")  # legacy: list_changed notifications, before the answer
    c.list_prompts()
    assert len(requests(record, "prompts/list")) == 2


def test_the_client_wide_switch(make_client, tmp_path):
    record = tmp_path / "record.jsonl"
    c = make_client("--cache-ttl-ms", "60000", "--record", str(record), response_cache=False)
    c.list_tools()
    c.list_tools()
    assert len(requests(record, "tools/list")) == 2


def test_output_schema_validation(make_client):
    c = make_client()
    assert c.call_tool("typed", {"value": 5})["structuredContent"] == {"result": 5}
    with pytest.raises(mcp_client.OutputSchemaError) as info:
        c.call_tool("typed", {"value": "five"})
    e = info.value
    assert e.status == mcp_client.MCP_OUTPUT_SCHEMA_INVALID
    assert "/result" in e.message
    assert e.result["structuredContent"] == {"result": "five"}
    assert mcp_client.exception_class(mcp_client.MCP_OUTPUT_SCHEMA_INVALID) is mcp_client.OutputSchemaError
    # Off per call, and per client.
    assert c.call_tool("typed", {"value": "five"}, validate_output=False)["structuredContent"] == {"result": "five"}
    off = make_client(validate_output_schema=False)
    assert off.call_tool("typed", {"value": "five"})["structuredContent"] == {"result": "five"}
