"""subscriptions/listen (modern), notification and log listeners."""

from __future__ import annotations

import queue
import threading
import time

import pytest

import mcp_client
from conftest import text_of
from waits import wait_parked, wait_until


def test_listen_receives_notifications(client):
    with client.listen({"toolsListChanged": True, "resourceSubscriptions": ["fixture://static"]}, timeout=5) as sub:
        assert sub.acknowledged.get("toolsListChanged") is True
        assert sub.next(timeout=0.05) is None  # nothing yet
        client.call_tool("notify")
        event = sub.next(timeout=5)
        assert event["method"] == "notifications/tools/list_changed"
        client.call_tool("touch", {"uri": "fixture://static"})
        event = sub.next(timeout=5)
        assert event["method"] == "notifications/resources/updated"
        assert event["params"]["uri"] == "fixture://static"


def test_server_ends_listen_and_iteration_stops(client):
    sub = client.listen({"promptsListChanged": True}, timeout=5)
    events = []
    reader = threading.Thread(target=lambda: events.extend(sub))
    reader.start()
    client.call_tool("notify")  # queued on the subscription whether or not the reader waits yet
    assert wait_until(lambda: events)
    assert text_of(client.call_tool("end_listens")) == "ended 1 listens"
    reader.join(5)
    assert not reader.is_alive()
    assert [e["method"] for e in events] == ["notifications/prompts/list_changed"]
    with pytest.raises(mcp_client.ClosedError):
        sub.next(timeout=1)
    sub.close()


def test_cancel_from_another_thread_ends_iteration(client):
    sub = client.listen({"toolsListChanged": True}, timeout=5)
    me = threading.get_native_id()
    # Cancel once this thread is parked in next (below).
    canceller = threading.Thread(target=lambda: (wait_parked(me), sub.cancel()))
    canceller.start()
    t0 = time.monotonic()
    assert list(sub) == []
    assert time.monotonic() - t0 < 3
    canceller.join(5)  # the reader may wake before cancel() has told the server
    assert text_of(client.call_tool("cancelled_ids")) != "[]"  # the server was told
    sub.close()
    sub.close()
    with pytest.raises(mcp_client.ClosedError):
        sub.next(timeout=0)


def test_client_close_ends_subscription(client):
    sub = client.listen({"toolsListChanged": True}, timeout=5)
    me = threading.get_native_id()
    # Close once this thread is parked in next (below).
    closer = threading.Thread(target=lambda: (wait_parked(me), client.close()))
    closer.start()
    assert list(sub) == []
    closer.join(5)
    sub.close()


def test_modern_log_messages_reach_the_notification_listener(client):
    notes = queue.Queue()
    client.on_notification(lambda method, params: notes.put((method, params)))
    client.call_tool("progress", {"steps": 1}, log_level="info")
    method, params = notes.get(timeout=5)
    assert method == "notifications/message"
    assert params["data"] == "progress tool ran" and params["level"] == "info"


def test_log_listener_gets_server_stderr(make_client):
    c = make_client("--stderr-banner", "hello from the fixture")
    lines = queue.Queue()
    c.on_log(lambda level, source, message: lines.put((level, source, message)))
    c.connect()
    assert lines.get(timeout=5) == ("info", "stderr", "hello from the fixture")


def test_listener_exceptions_are_contained(client, caplog):
    def bad(method, params):
        raise RuntimeError("listener boom")

    client.on_notification(bad)
    client.call_tool("progress", {"steps": 1}, log_level="info")
    assert wait_until(lambda: "listener boom" in caplog.text)
    assert text_of(client.call_tool("echo", {"text": "alive"})) == "alive"


def test_subscription_outlives_a_freed_client(client):
    sub = client.listen({"toolsListChanged": True}, timeout=5)
    client.close(wait=5)
    assert client._life.freed
    with pytest.raises(mcp_client.ClosedError):
        sub.next(timeout=1)
    sub.close()
    assert sub._life.freed
