"""Tool pinning through the Python binding: the fixture changes ``echo`` after the first listing
(its ``redefine`` tool); under ``block`` the tool leaves the list and its calls raise
ToolPinChangedError until approved; the hook gets each event and decides under ``ask``."""

from __future__ import annotations

import asyncio
import threading

import pytest

import mcp_client


def names(c) -> set[str]:
    return {t["name"] for t in c.list_tools()["tools"]}


def test_block_withholds_a_changed_tool_until_approved(make_client):
    c = make_client("--era", "legacy", tool_pinning={"policy": "block"})
    events = []
    c.on_tool_pin(events.append)
    assert "echo" in names(c)
    c.call_tool("redefine", {"mode": "description"})
    listed = names(c)
    assert "echo" not in listed and "add" in listed
    with pytest.raises(mcp_client.ToolPinChangedError) as caught:
        c.call_tool("echo", {"text": "x"})
    assert caught.value.status == mcp_client.MCP_TOOL_PIN_CHANGED
    assert [e["change"] for e in events] == ["changed"]
    assert events[0]["diff"].startswith('description: "Returns its text" → ')
    assert "id_rsa" in events[0]["new"]["description"]
    states = {t["name"]: t["state"] for t in c.tool_pins()["tools"]}
    assert states["echo"] == "withheld" and states["add"] == "pinned"
    c.approve_tool_pin("echo")
    assert "echo" in names(c)
    c.call_tool("echo", {"text": "x"})
    with pytest.raises(mcp_client.InvalidArgumentError):
        c.approve_tool_pin("echo")
    c.forget_tool_pin()


def test_ask_decides_on_the_dispatcher_thread(make_client):
    c = make_client(tool_pinning={"policy": "ask"})
    threads = []

    @c.on_tool_pin
    def decide(event):
        threads.append(threading.current_thread() is not threading.main_thread())
        return event["tool"] != "echo"

    names(c)
    c.call_tool("redefine", {"mode": "param"})
    assert "echo" not in names(c)
    assert threads == [True]


def test_reordered_keys_are_no_change_and_pins_persist(make_client, tmp_path):
    pinning = {"policy": "block", "identity": "python test", "store_dir": str(tmp_path)}
    c = make_client(tool_pinning=pinning)
    before = names(c)
    c.call_tool("redefine", {"mode": "reorder"})
    assert names(c) == before
    c.close(wait=10)
    restarted = make_client("--redefine", "rename", tool_pinning=pinning)
    listed = names(restarted)
    assert "echo" not in listed and "echo_text" not in listed
    states = {t["name"]: t["state"] for t in restarted.tool_pins()["tools"]}
    assert states["echo"] == "removed" and states["echo_text"] == "withheld"


def test_off_has_no_pins(client):
    with pytest.raises(mcp_client.UnsupportedError):
        client.tool_pins()


def test_async_client(fixture_server):
    async def main():
        async with mcp_client.AsyncClient.stdio(
            fixture_server, [], tool_pinning={"policy": "block"}, request_timeout_ms=10_000
        ) as c:
            await c.list_tools()
            await c.call_tool("redefine", {"mode": "description"})
            assert "echo" not in {t["name"] for t in (await c.list_tools())["tools"]}
            await c.approve_tool_pin("echo")
            assert "echo" in {t["name"] for t in (await c.list_tools())["tools"]}
            assert (await c.tool_pins())["policy"] == "block"
            await c.forget_tool_pin("echo")

    asyncio.run(main())
