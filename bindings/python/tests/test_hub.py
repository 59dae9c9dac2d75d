"""The hub from Python: fixture members and one that cannot start, the merged list, routed
calls, events, and no server left after close."""

import asyncio
import threading

import pytest

import mcp_client
from conftest import text_of


def _member(fixture_server, *flags):
    return {"command": fixture_server, "args": list(flags), "probe_timeout_ms": 500, "shutdown_grace_ms": 500}


def test_hub_merges_members_routes_calls_and_survives_a_broken_one(fixture_server):
    events = []
    got = threading.Event()

    def on_event(event):
        events.append(event)
        if event["type"] == "state" and event["state"] == "connected":
            got.set()

    with mcp_client.Hub(
        {
            "fix": _member(fixture_server),
            "old": _member(fixture_server, "--era", "legacy"),
            "missing": {"command": "/nonexistent/mcp-server"},
        }
    ) as hub:
        hub.on_event(on_event)
        hub.start()
        states = {m["name"]: m["state"] for m in hub.members()}
        assert states == {"fix": "connected", "old": "connected", "missing": "failed"}
        assert got.wait(5)
        tools = hub.list_tools()
        names = {t["name"] for t in tools}
        assert {"fix__echo", "old__echo"} <= names
        assert all(t["_meta"]["mcp-client/server"] in ("fix", "old") for t in tools)
        assert text_of(hub.call_tool("old__echo", {"text": "routed"})) == "routed"
        prompt = hub.get_prompt("fix__greeting", {"name": "Py"})
        assert prompt["messages"][0]["content"]["text"] == "Hello, Py!"
        assert hub.read_resource("fix", "fixture://static")["contents"][0]["text"] == "static content"
        assert any(r["uri"] == "fixture://static" for r in hub.list_resources())
        assert hub.list_prompts() and hub.list_resource_templates()
        with pytest.raises(mcp_client.InvalidArgumentError, match="fix__echo"):
            hub.call_tool("fix__ecko")
    assert hub.closed
    with pytest.raises(mcp_client.ClosedError):
        hub.list_tools()


def test_hub_options_refused_members_and_duplicate_names(fixture_server):
    with mcp_client.Hub({"fix": _member(fixture_server)}, defaults={"no_such_key": 1}) as bad:
        (member,) = bad.members()
        assert member["state"] == "failed" and "no_such_key" in member["error"]
    hub = mcp_client.Hub(separator="-")
    hub.add_member("fix", _member(fixture_server))
    hub.add_member("both", {"command": "a", "url": "http://127.0.0.1:1/mcp"})
    with pytest.raises(mcp_client.InvalidArgumentError):
        hub.add_member("fix", _member(fixture_server))
    hub.start()
    states = {m["name"]: m["state"] for m in hub.members()}
    assert states == {"fix": "connected", "both": "failed"}
    assert "fix-echo" in {t["name"] for t in hub.list_tools()}
    hub.close()


def test_async_hub_runs_started_calls_concurrently(fixture_server):
    async def main():
        async with mcp_client.AsyncHub({"fix": _member(fixture_server)}) as hub:
            await hub.start()
            assert any(t["name"] == "fix__echo" for t in await hub.list_tools())
            texts = [str(i) for i in range(8)]
            results = await asyncio.gather(*(hub.call_tool("fix__echo", {"text": t}) for t in texts))
            assert [text_of(r) for r in results] == texts
            slow = asyncio.ensure_future(hub.call_tool("fix__hang"))
            await asyncio.sleep(0.1)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            with pytest.raises(mcp_client.InvalidArgumentError):
                await hub.call_tool("fix__nope")
            assert (await hub.read_resource("fix", "fixture://static"))["contents"][0]["text"] == "static content"

    asyncio.run(asyncio.wait_for(main(), 30))
