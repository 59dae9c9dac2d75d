"""mcp_client.export: tool lists in each model API's format, the model's calls found and made
on the fixture, results as each API's message (errors, images, truncation), the started form
on AsyncClient. The provider SDKs' own types check the same shapes in tests/export."""

from __future__ import annotations

import asyncio
import json

import pytest

import mcp_client
from mcp_client import export
from conftest import REQUEST_TIMEOUT_MS

REPLIES = {
    "openai-chat": lambda name, args: {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
    "openai-responses": lambda name, args: {"output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name, "arguments": json.dumps(args)}]},
    "anthropic": lambda name, args: {"role": "assistant", "content": [
        {"type": "text", "text": "calling"}, {"type": "tool_use", "id": "toolu_1", "name": name, "input": args}]},
    "gemini": lambda name, args: {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": name, "args": args}}]}}]},
}


def text_in(fmt: str, message: dict) -> str:
    if fmt == "openai-chat":
        return message["content"]
    if fmt == "openai-responses":
        out = message["output"]
        return out if isinstance(out, str) else json.dumps(out)
    if fmt == "anthropic":
        return json.dumps(message["content"])
    return json.dumps(message["functionResponse"]["response"])


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_export_and_dispatch_on_the_fixture(client, fmt):
    tools = client.all_tools()
    exported = export.export_tools(tools, fmt)
    assert exported["format"] == fmt
    assert len(exported["tools"]) == len(tools)
    assert exported["routes"]["echo"]["tool"] == "echo"

    def make(name: str, args: dict, **kw) -> dict:
        calls = export.find_calls(exported, REPLIES[fmt](name, args))
        assert len(calls) == 1
        return export.dispatch(client, exported, calls[0], **kw)

    assert "hi there" in text_in(fmt, make("echo", {"text": "hi there"}))
    media = make("media", {})
    if fmt == "anthropic":
        assert media["content"][1]["type"] == "image"
    elif fmt == "openai-responses":
        assert media["output"][1]["image_url"].startswith("data:image/png;base64,")
    else:
        assert "[image image/png," in text_in(fmt, media)
    failed = make("fail", {})
    assert "tool failed on purpose" in text_in(fmt, failed)
    if fmt == "anthropic":
        assert failed["is_error"] is True
    bad = make("add", {"a": 1})
    assert '\\"b\\" is missing' in text_in(fmt, bad) or '"b" is missing' in text_in(fmt, bad)
    assert "fixture error" in text_in(fmt, make("rpc_error", {}))
    assert "[truncated: 5 of 100 characters shown]" in text_in(fmt, make("big", {"bytes": 100}, max_chars=5))
    with pytest.raises(mcp_client.RpcError):
        make("rpc_error", {}, errors_as_results=False)
    with pytest.raises(mcp_client.MCPTimeoutError):
        make("hang", {}, errors_as_results=False, timeout=0.2)


def test_report_strict_and_origins():
    tools = [
        {"name": "files.read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"},
                                                                              "limit": {"type": "integer"}}}},
        {"name": "free", "inputSchema": {"type": "object", "additionalProperties": {"type": "string"}}},
    ]
    out = export.export_tools(tools, "openai-responses", strict=True,
                              origins={"files.read": {"server": "fs", "tool": "read"}})
    first, second = out["report"]
    assert first["strict"] is True and first["exported_name"].startswith("files_read_")
    assert out["routes"][first["exported_name"]] ["server"] == "fs"
    assert second["strict"] is False and "non-strict" in json.dumps(second["rewrites"])
    legacy = export.export_tools(tools, "gemini", gemini_legacy_parameters=True)
    assert legacy["tools"][0]["parameters"]["type"] == "OBJECT"
    with pytest.raises(mcp_client.InvalidArgumentError):
        export.export_tools(tools, "cohere")
    with pytest.raises(mcp_client.MCPError):
        export.export_tools("{not json", "anthropic")


def test_result_message_without_a_client():
    exported = export.export_tools([{"name": "t", "inputSchema": {"type": "object"}}], "gemini")
    call = {"functionCall": {"id": "x", "name": "t", "args": {}}}
    msg = export.result_message(exported, call, {"content": [{"type": "text", "text": "ok"}],
                                                 "structuredContent": {"n": 1}})
    assert msg == {"functionResponse": {"id": "x", "name": "t", "response": {"n": 1}}}


def test_dispatch_async(fixture_server):
    async def main() -> None:
        async with mcp_client.AsyncClient.stdio(fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
            exported = export.export_tools(await c.list_tools(), "anthropic")
            call = export.find_calls(exported, REPLIES["anthropic"]("echo", {"text": "async"}))[0]
            msg = await export.dispatch_async(c, exported, call)
            assert msg["tool_use_id"] == "toolu_1" and msg["content"] == [{"type": "text", "text": "async"}]
            hang = export.find_calls(exported, REPLIES["anthropic"]("hang", {}))[0]
            msg = await export.dispatch_async(c, exported, hang, timeout=0.2)
            assert msg["is_error"] is True

    asyncio.run(main())


def _hub_text(fixture_server: str) -> str:
    """Two fixture members, one of each era; the legacy one's filter withholds ``add``."""
    return json.dumps({"mcpServers": {
        "new": {"command": fixture_server, "args": ["--era", "modern"]},
        "old": {"command": fixture_server, "args": ["--era", "legacy"],
                "mcp_client": {"tools": {"deny": ["add"]}, "probe_timeout_ms": 500}},
    }})


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_dispatch_on_a_hub_reaches_the_member(fixture_server, fmt):
    with mcp_client.Hub.from_text(_hub_text(fixture_server)) as hub:
        hub.start()
        exported = export.export_tools(hub.list_tools(), fmt)
        assert exported["routes"]["old__echo"] == {"server": "old", "tool": "echo", "strict": False,
                                                   "inputSchema": exported["routes"]["old__echo"]["inputSchema"]}
        assert "old__add" not in exported["routes"] and "new__add" in exported["routes"]

        def make(name: str, args: dict) -> str:
            call = export.find_calls(exported, REPLIES[fmt](name, args))[0]
            return text_in(fmt, export.dispatch(hub, exported, call))

        assert "from old" in make("old__echo", {"text": "from old"})
        assert "5" in make("new__add", {"a": 2, "b": 3})
        # The modern member's request carries the modern version in _meta; the legacy one's not.
        assert "2026-07-28" in make("new__echo_meta", {})
        assert "2026-07-28" not in make("old__echo_meta", {})
        for name in ("old__add", "nobody__echo"):
            assert "There is no tool named" in make(name, {"a": 1, "b": 2})
        # A route the hub no longer serves (the member's filter) is refused by the hub itself.
        stale = dict(exported, routes=dict(exported["routes"], old__add={"server": "old", "tool": "add"}))
        call = export.find_calls(stale, REPLIES[fmt]("old__add", {"a": 1, "b": 2}))[0]
        assert "tool filter withholds" in text_in(fmt, export.dispatch(hub, stale, call))


def test_dispatch_async_on_an_async_hub(fixture_server):
    async def main() -> None:
        async with mcp_client.AsyncHub.from_text(_hub_text(fixture_server)) as hub:
            await hub.start()
            exported = export.export_tools(await hub.list_tools(), "anthropic")
            calls = [export.find_calls(exported, REPLIES["anthropic"](f"{m}__echo", {"text": m}))[0]
                     for m in ("new", "old")]
            messages = await asyncio.gather(*(export.dispatch_async(hub, exported, c) for c in calls))
            assert [m["content"][0]["text"] for m in messages] == ["new", "old"]
            unknown = export.find_calls(exported, REPLIES["anthropic"]("old__add", {}))[0]
            msg = await export.dispatch_async(hub, exported, unknown)
            assert msg["is_error"] is True and "There is no tool named" in msg["content"][0]["text"]
            hang = export.find_calls(exported, REPLIES["anthropic"]("new__hang", {}))[0]
            msg = await export.dispatch_async(hub, exported, hang, timeout=0.2)
            assert msg["is_error"] is True

    asyncio.run(main())
