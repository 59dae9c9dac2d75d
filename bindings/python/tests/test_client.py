"""Connecting, lists, plain calls, options and error paths (stdio, modern era)."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

import mcp_client
from conftest import text_of


def test_connect_returns_server_info(client):
    assert client.era is None and client.server_info is None
    info = client.connect()
    assert info["era"] == "modern"
    assert info["protocolVersion"] == "2026-07-28"
    assert info["serverInfo"] == {"name": "mcp-fixture-server", "version": "0.1.0"}
    assert info["instructions"] == "Fixture server for mcp_client tests."
    assert client.era == "modern"
    assert client.server_info == info
    assert client.connect() == info  # idempotent


def test_connect_options_end_a_hanging_connect(make_client):
    c = make_client("--on-discover", "silent", mode="modern", request_timeout_ms=20000)
    t0 = time.monotonic()
    with pytest.raises(mcp_client.MCPTimeoutError):
        c.connect(max_total=0.2)
    with pytest.raises(mcp_client.MCPTimeoutError):
        c.connect(timeout=0.2)
    token = mcp_client.CancelToken()
    token.cancel()
    with pytest.raises(mcp_client.CancelledError):
        c.connect(cancel=token)
    assert time.monotonic() - t0 < 3


def test_mode_setting_and_unknown_settings(make_client, fixture_server):
    c = make_client(mode="legacy")
    assert c.connect()["era"] == "legacy"
    with pytest.raises(mcp_client.InvalidArgumentError, match="no_such_setting"):
        mcp_client.Client.stdio(fixture_server, no_such_setting=1)


def test_lists(client):
    tools = client.list_tools()
    names = {t["name"] for t in tools["tools"]}
    assert {"echo", "add", "elicit_once", "hang", "crash"} <= names
    assert "nextCursor" not in tools
    assert {p["name"] for p in client.list_prompts()["prompts"]} == {"greeting", "needs_input", "plain"}
    assert "fixture://static" in {r["uri"] for r in client.list_resources()["resources"]}
    templates = client.list_resource_templates()["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "fixture://items/{id}"


def test_pagination(make_client):
    c = make_client("--page-size", "2")
    page = c.list_tools()
    assert len(page["tools"]) == 2 and page["nextCursor"] == "page-2"
    collected = list(page["tools"])
    while "nextCursor" in page:
        page = c.list_tools(page["nextCursor"])
        collected += page["tools"]
    assert collected == c.all_tools()
    assert len(collected) > 20
    assert [p["name"] for p in c.all_prompts()] == ["greeting", "needs_input", "plain"]
    assert len(c.all_resources()) >= 3
    assert len(c.all_resource_templates()) == 1
    with pytest.raises(mcp_client.RpcError) as e:
        c.list_tools("bogus")
    assert e.value.code == -32602


def test_tool_calls(client):
    assert text_of(client.call_tool("echo", {"text": "héllo 🔑"})) == "héllo 🔑"
    added = client.call_tool("add", {"a": 2, "b": 40})
    assert text_of(added) == "42" and added["structuredContent"] == {"result": 42}
    failed = client.call_tool("fail")  # a tool error is a result, not an exception
    assert failed["isError"] is True and text_of(failed) == "tool failed on purpose"


def test_prompt_resource_complete_request(client):
    prompt = client.get_prompt("greeting", {"name": "Ada"})
    assert prompt["messages"][0]["content"]["text"] == "Hello, Ada!"
    assert client.read_resource("fixture://static")["contents"][0]["text"] == "static content"
    assert client.read_resource("fixture://binary")["contents"][0]["blob"] == "AAECAw=="
    assert client.read_resource("fixture://items/42")["contents"][0]["text"] == "item 42"
    done = client.complete({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "al"}})
    assert done["completion"]["values"] == ["alice", "albert"]
    raw = client.request("tools/list")
    assert any(t["name"] == "echo" for t in raw["tools"])
    with pytest.raises(mcp_client.RpcError) as e:
        client.read_resource("fixture://nope")
    assert e.value.code == -32602 and e.value.data == {"uri": "fixture://nope"}


def test_call_options_meta_and_log_level(client):
    result = client.call_tool("echo_meta", meta={"com.example/trace": "abc"}, log_level="debug")
    meta = result["structuredContent"]
    assert meta["com.example/trace"] == "abc"
    assert meta["io.modelcontextprotocol/logLevel"] == "debug"
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_progress_callback_runs_on_dispatcher_thread(client):
    seen = []
    threads = set()

    def progress(p, total, message):
        seen.append((p, total, message))
        threads.add(threading.current_thread().ident)

    result = client.call_tool("progress", {"steps": 3, "delay_ms": 5}, progress=progress, timeout=5)
    assert text_of(result) == "progress done"
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert threading.main_thread().ident not in threads


def test_progress_callback_exception_is_contained(client):
    def bad(*_):
        raise RuntimeError("boom in progress")

    assert text_of(client.call_tool("progress", {"steps": 2}, progress=bad)) == "progress done"
    assert text_of(client.call_tool("echo", {"text": "still fine"})) == "still fine"


def test_error_paths(client):
    with pytest.raises(mcp_client.RpcError) as e:
        client.call_tool("rpc_error")
    assert e.value.code == -32050 and e.value.status == mcp_client.MCP_JSONRPC_ERROR
    assert e.value.data == {"detail": "on purpose"}
    assert e.value.jsonrpc_message == "fixture error" and e.value.message != "fixture error"
    with pytest.raises(mcp_client.RpcError) as e:
        client.call_tool("add", {"a": "x", "b": 1})  # bad argument type: the server refuses
    assert e.value.code == -32602 and "Invalid arguments" in e.value.message
    with pytest.raises(mcp_client.RpcError, match="Unknown tool"):
        client.call_tool("no_such_tool")
    with pytest.raises(mcp_client.InvalidArgumentError):
        client.call_tool("add", [1, 2])  # not an object: refused before sending
    with pytest.raises(TypeError):
        client.call_tool("add", {"a": {1, 2}})  # not JSON at all
    with pytest.raises(TypeError):
        client.call_tool(b"echo")
    with pytest.raises(ValueError):
        client.call_tool("echo", {"text": "x"}, timeout=0)
    with pytest.raises(mcp_client.UnsupportedError):
        client.ping()  # removed from the modern protocol
    with pytest.raises(TypeError, match="unknown call option"):
        client.get_prompt("plain", bogus=1)


def test_crash_is_server_exited_with_status(client):
    client.connect()
    with pytest.raises(mcp_client.ServerExitedError) as e:
        client.call_tool("crash")
    assert "status 7" in e.value.message
    assert "crashing on purpose" in e.value.message
    assert isinstance(e.value, mcp_client.TransportError)


def test_timeout(client):
    t0 = time.monotonic()
    with pytest.raises(mcp_client.MCPTimeoutError) as e:
        client.call_tool("hang", timeout=0.3)
    assert isinstance(e.value, TimeoutError)
    assert time.monotonic() - t0 < 3
    assert text_of(client.call_tool("slow", {"ms": 10}, timeout=math.inf)) == "slept 10"


def test_timeouts_that_do_not_fit_are_refused_not_wrapped(client):
    # 1.8e16 s is 1.8e19 ms, past int64: it once wrapped to about 4 s.
    for option in ("timeout", "max_total"):
        with pytest.raises(ValueError, match="the most is"):
            client.call_tool("slow", {"ms": 10}, **{option: 1.8e16})
    assert text_of(client.call_tool("slow", {"ms": 10}, timeout=1e9)) == "slept 10"


def test_cancel_from_another_thread(client):
    client.connect()
    token = mcp_client.CancelToken()
    timer = threading.Timer(0.3, token.cancel)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(mcp_client.CancelledError):
        client.call_tool("hang", cancel=token)
    assert time.monotonic() - t0 < 3
    assert token.cancelled
    # stdio told the server: the hang request's id is in notifications/cancelled
    ids = json.loads(text_of(client.call_tool("cancelled_ids")))
    assert len(ids) == 1


def test_precancelled_token_sends_nothing(make_client, tmp_path):
    """A call whose token is already cancelled must fail at once without reaching the server
    (c-abi-conventions §12: "Operations that start after cancellation fail at once with
    MCP_CANCELLED"). Library bug: Session::request (src/client/session.rs) writes the request
    before looking at the token, then sends notifications/cancelled for it, so a tool with side
    effects runs although the caller had cancelled."""
    record = tmp_path / "wire.jsonl"
    c = make_client("--record", str(record))
    c.connect()
    token = mcp_client.CancelToken()
    token.cancel()
    with pytest.raises(mcp_client.CancelledError):
        c.call_tool("echo", {"text": "must not be sent"}, cancel=token)
    c.close(wait=5)
    sent = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    assert [m.get("method") for m in sent] == ["server/discover"], sent


def test_close_wakes_calls_in_flight(make_client, signal):
    client = make_client("--signal", signal.path)
    client.connect()
    errors = []

    def worker():
        try:
            client.call_tool("hang")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    signal.wait("request tools/call hang", 3)  # all three reached the server: blocked for good
    t0 = time.monotonic()
    client.close()
    for t in threads:
        t.join(5)
    assert time.monotonic() - t0 < 3
    assert len(errors) == 3 and all(isinstance(e, mcp_client.ClosedError) for e in errors), errors
    client.close(wait=5)
    assert client._life.freed


def test_closed_client(client):
    client.connect()
    client.close()
    client.close()  # idempotent
    assert client.closed
    with pytest.raises(mcp_client.ClosedError):
        client.call_tool("echo", {"text": "x"})
    with pytest.raises(mcp_client.ClosedError):
        client.on_elicitation(lambda p: {"action": "decline"})
    assert client.era == "modern"  # remembered


def test_context_manager_and_userdata_release(fixture_server):
    before = mcp_client._live_userdata()
    with mcp_client.Client.stdio(fixture_server, request_timeout_ms=5000) as c:
        c.on_elicitation(lambda p: None)
        c.on_sampling(lambda p: None)
        c.on_roots(lambda p: None)
        c.on_notification(lambda m, p: None)
        c.on_log(lambda *a: None)
        c.on_log(lambda *a: None)  # replacing releases the old one
        assert text_of(c.call_tool("echo", {"text": "cm"})) == "cm"
        assert mcp_client._live_userdata() == before + 5
    assert c.closed
    c.close(wait=5)
    assert c._life.freed
    assert mcp_client._live_userdata() == before  # every userdata_free ran


def test_garbage_collected_client_is_freed(fixture_server):
    import gc
    import weakref

    before = mcp_client._live_userdata()
    c = mcp_client.Client.stdio(fixture_server, request_timeout_ms=5000)
    c.on_elicitation(lambda p: None)
    c.connect()
    life = c._life
    ref = weakref.ref(c)
    del c
    gc.collect()
    assert ref() is None
    assert life.freed
    assert mcp_client._live_userdata() == before


def test_concurrent_calls(client):
    client.connect()
    results = {}

    def worker(i):
        results[i] = text_of(client.call_tool("slow", {"ms": 100}))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {i: "slept 100" for i in range(8)}
    assert time.monotonic() - t0 < 2  # multiplexed, not serialised
