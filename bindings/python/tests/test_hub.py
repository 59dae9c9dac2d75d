"""The hub from Python: fixture members and one that cannot start, the merged list, routed
calls, events, and no server left after close."""

import asyncio
import json
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


def test_hub_from_file_in_the_three_shapes(fixture_server, tmp_path):
    desktop = tmp_path / "claude_desktop_config.json"
    desktop.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fix": {"command": fixture_server, "autoApprove": ["echo"]},
                    "broken": {"command": "${MCP_PY_TEST_UNSET}"},
                    "off": {"command": fixture_server, "disabled": True},
                }
            }
        )
    )
    with mcp_client.Hub.from_file(desktop) as hub:
        hub.start()
        states = {m["name"]: m["state"] for m in hub.members()}
        assert states == {"fix": "connected", "broken": "failed", "off": "disabled"}
        (broken,) = [m for m in hub.members() if m["name"] == "broken"]
        assert "MCP_PY_TEST_UNSET" in broken["error"]
        assert any("autoApprove" in w and '"fix"' in w for w in hub.warnings())
        assert text_of(hub.call_tool("fix__echo", {"text": "desktop"})) == "desktop"

    dot_mcp = tmp_path / ".mcp.json"
    dot_mcp.write_text(
        '{"mcpServers": {"typed": {"type": "stdio", "command": "%s", "args": ["--era", "legacy"],'
        ' "cwd": "${workspaceFolder}"},},}  // JSONC' % fixture_server
    )
    with mcp_client.Hub.from_file(str(dot_mcp), workspace_folder=tmp_path, separator="-") as hub:
        hub.start()
        (typed,) = hub.members()
        assert typed["state"] == "connected" and typed["era"] == "legacy"
        assert text_of(hub.call_tool("typed-echo", {"text": "typed"})) == "typed"

    vscode = {
        "inputs": [{"type": "promptString", "id": "era", "description": "Protocol era", "password": True}],
        "servers": {
            "asked": {"type": "stdio", "command": fixture_server, "args": ["--era", "${input:era}"]},
            "again": {"command": fixture_server, "args": ["--era=${input:era}"]},
        },
    }
    prompts = []

    def on_input(prompt):
        prompts.append(prompt)
        return "legacy"

    with mcp_client.Hub.from_text(json.dumps(vscode), on_input=on_input) as hub:
        assert prompts == [
            {"id": "era", "description": "Protocol era", "password": True, "default": None, "options": []}
        ]
        hub.start()
        assert [(m["state"], m.get("era")) for m in hub.members()] == [("connected", "legacy")] * 2


def test_hub_from_file_pick_string_offers_its_options(fixture_server):
    vscode = {
        "inputs": [
            {"type": "pickString", "id": "era", "description": "Era", "options": ["legacy", "modern"],
             "default": "modern"},
            {"type": "command", "id": "folder", "command": "extension.pickFolder"},
        ],
        "servers": {
            "picked": {"command": fixture_server, "args": ["--era", "${input:era}"]},
            "cmd": {"command": fixture_server, "args": ["${input:folder}"]},
        },
    }
    prompts = []

    def on_input(prompt):
        prompts.append(prompt)
        return prompt["options"][0]

    with mcp_client.Hub.from_text(json.dumps(vscode), on_input=on_input) as hub:
        assert prompts == [
            {"id": "era", "description": "Era", "password": False, "default": "modern", "options": ["legacy", "modern"]}
        ]
        assert any('"command" input' in w for w in hub.warnings())
        hub.start()
        members = {m["name"]: m for m in hub.members()}
        assert (members["picked"]["state"], members["picked"].get("era")) == ("connected", "legacy")
        assert members["cmd"]["state"] == "failed"
    with mcp_client.Hub.from_text(json.dumps(vscode), on_input=lambda prompt: "ancient") as hub:
        members = {m["name"]: m for m in hub.members()}
        assert "not one of the input's options" in members["picked"]["error"]


def test_hub_from_file_input_declined_or_raising_and_bad_files(fixture_server, tmp_path):
    text = json.dumps(
        {
            "inputs": [{"type": "promptString", "id": "key", "description": "Key"}],
            "servers": {
                "asked": {"command": fixture_server, "env": {"KEY": "${input:key}"}},
                "plain": {"command": fixture_server},
            },
        }
    )
    with mcp_client.Hub.from_text(text, on_input=lambda prompt: None) as hub:
        states = {m["name"]: m["state"] for m in hub.members()}
        assert states == {"asked": "failed", "plain": "idle"}

    def raising(prompt):
        raise KeyboardInterrupt("the user gave up")

    with pytest.raises(KeyboardInterrupt, match="gave up"):
        mcp_client.Hub.from_text(text, on_input=raising)
    with pytest.raises(mcp_client.InvalidArgumentError, match="not JSON"):
        mcp_client.Hub.from_text('{"mcpServers": ')
    with pytest.raises(mcp_client.InvalidArgumentError, match="mcpServers"):
        mcp_client.Hub.from_text('{"theme": "dark"}')
    with pytest.raises(mcp_client.TransportError):
        mcp_client.Hub.from_file(tmp_path / "missing.json")
    with pytest.raises(TypeError):
        mcp_client.Hub.from_text(text, on_input="not callable")


def test_hub_reload_from_file_keeps_unchanged_members(fixture_server, tmp_path):
    path = tmp_path / ".mcp.json"

    def write(servers):
        path.write_text(json.dumps({"mcpServers": servers}))

    write({name: {"command": fixture_server} for name in ("keep", "change", "gone")})
    with mcp_client.Hub.from_file(path) as hub:
        hub.start()
        states = []
        hub.on_event(lambda e: states.append((e["server"], e["state"])) if e["type"] == "state" else None)
        write(
            {
                "keep": {"command": fixture_server},
                "change": {"command": fixture_server, "args": ["--era", "legacy"], "alwaysAllow": []},
                "new": {"command": fixture_server},
            }
        )
        report = hub.reload_from_file(path)
        assert report == {"added": ["new"], "removed": ["gone"], "restarted": ["change"], "unchanged": ["keep"]}
        members = {m["name"]: m for m in hub.members()}
        assert set(members) == {"keep", "change", "new"}
        assert members["change"]["era"] == "legacy" and all(m["state"] == "connected" for m in members.values())
        assert any("alwaysAllow" in w for w in hub.warnings())
        assert text_of(hub.call_tool("new__echo", {"text": "n"})) == "n"
        # keep's connection was never touched: no state event names it.
        assert not any(server == "keep" for server, _ in states)
        with pytest.raises(mcp_client.InvalidArgumentError):
            hub.reload_from_text("{")
        assert len(hub.members()) == 3


def test_async_hub_from_file_and_reload(fixture_server, tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"fix": {"command": fixture_server}}}))

    async def main():
        async with mcp_client.AsyncHub.from_file(path, separator="_") as hub:
            await hub.start()
            assert text_of(await hub.call_tool("fix_echo", {"text": "a"})) == "a"
            servers = {name: {"command": fixture_server} for name in ("fix", "two")}
            path.write_text(json.dumps({"servers": servers}))
            report = await hub.reload_from_file(path)
            assert report["added"] == ["two"] and report["unchanged"] == ["fix"]
            assert text_of(await hub.call_tool("two_echo", {"text": "b"})) == "b"
            assert hub.warnings() == []

    asyncio.run(main())
