"""The legacy era: handlers answer real server->client requests; legacy-only methods."""

from __future__ import annotations

import queue
import threading

import pytest

import mcp_client
from conftest import text_of


def accept(content):
    return {"action": "accept", "content": content}


def test_connects_legacy(legacy):
    info = legacy.connect()
    assert info["era"] == "legacy" and legacy.era == "legacy"
    assert info["protocolVersion"] == "2025-11-25"
    assert info["serverInfo"]["name"] == "mcp-fixture-server"
    legacy.ping()


def test_handlers_answer_server_requests(legacy):
    methods = []

    def ask(params):
        methods.append("elicitation")
        return accept({"confirmed": True} if "confirmed" in params["requestedSchema"]["properties"] else {"name": "Leg"})

    def sample(params):
        methods.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "legacy summary"}, "model": "m"}

    legacy.on_elicitation(ask)
    legacy.on_sampling(sample)
    legacy.on_roots(lambda params: {"roots": [{"uri": "file:///legacy"}]})
    assert text_of(legacy.call_tool("elicit_once")) == "Hello, Leg!"
    assert text_of(legacy.call_tool("elicit_and_sample")) == "confirm=accept; summary=legacy summary"
    assert text_of(legacy.call_tool("roots")) == "roots: file:///legacy"
    assert text_of(legacy.call_tool("ping_client")) == "client answered ping"
    assert sorted(set(methods)) == ["elicitation", "sampling"]


def test_deferred_answer_through_a_server_request(legacy):
    def ask(params):
        d = mcp_client.Deferred()
        threading.Timer(0.1, d.set_result, (accept({"name": "Later"}),)).start()
        return d

    legacy.on_elicitation(ask)
    assert text_of(legacy.call_tool("elicit_once", timeout=5)) == "Hello, Later!"


def test_handler_error_reaches_the_server(legacy):
    def ask(params):
        raise mcp_client.ReplyError("user refused", code=-32001)

    legacy.on_elicitation(ask)
    result = legacy.call_tool("elicit_once")
    assert result["isError"] is True
    assert text_of(result) == "client error: user refused"


def test_missing_capability(legacy):
    result = legacy.call_tool("elicit_once")  # no handler: no capability declared
    assert result["isError"] is True and text_of(result) == "client lacks elicitation"


def test_log_level_subscriptions_roots_changed(legacy):
    notes = queue.Queue()
    legacy.on_notification(lambda method, params: notes.put((method, params)))
    legacy.on_roots(lambda params: {"roots": []})  # roots.listChanged is declared only with a handler
    legacy.set_log_level("debug")
    assert text_of(legacy.call_tool("log_level")) == "debug"
    legacy.subscribe_resource("fixture://static")
    assert text_of(legacy.call_tool("touch", {"uri": "fixture://static"})) == "touched"
    method, params = notes.get(timeout=5)
    assert method == "notifications/resources/updated" and params["uri"] == "fixture://static"
    legacy.unsubscribe_resource("fixture://static")
    legacy.notify_roots_changed()
    assert text_of(legacy.call_tool("roots_changed_count")) == "1"


def test_notification_listener(legacy):
    notes = queue.Queue()
    threads = set()

    def listener(method, params):
        threads.add(threading.current_thread() is threading.main_thread())
        notes.put((method, params))

    legacy.on_notification(listener)
    assert text_of(legacy.call_tool("notify")) == "notified"
    got = {}
    while len(got) < 4:
        method, params = notes.get(timeout=5)
        got[method] = params
    assert set(got) == {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/message",
    }
    assert got["notifications/message"]["data"] == "notified"
    assert threads == {False}


def test_listen_is_modern_only(legacy):
    with pytest.raises(mcp_client.MCPError):
        legacy.listen({"toolsListChanged": True}, timeout=3)


def test_listener_may_close_and_free_the_client(legacy):
    closed = threading.Event()

    def listener(method, params):
        legacy.close()  # possibly the last user: the handle is then freed on the dispatcher thread
        closed.set()

    legacy.on_notification(listener)
    try:
        legacy.call_tool("notify")
    except mcp_client.ClosedError:
        pass  # the listener may close the client before the result arrives
    assert closed.wait(5)
    legacy.close(wait=5)
    assert legacy._life.freed
