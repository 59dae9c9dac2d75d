"""The Python binding's URL-mode elicitation, manual input mode with the retry
helper, and the tasks extension (follow, status listener, failure, cancel, resume by id, the
call's timeout)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

import mcp_client
from conftest import text_of


def test_url_mode_handler_gets_url_requests_and_accept_carries_no_content(client):
    seen = []

    def on_url(params):
        seen.append(params)
        return {"action": "accept", "content": {"dropped": True}}

    client.on_elicitation_modes(on_url, form=False, url=True)
    assert text_of(client.call_tool("url_login")) == "url login: accept"
    assert seen[0]["mode"] == "url" and seen[0]["url"].startswith("https://")


def declared_elicitation(client):
    meta = client.call_tool("echo_meta")["structuredContent"]
    return meta["io.modelcontextprotocol/clientCapabilities"].get("elicitation")


def test_url_only_handler_declares_url_alone_and_never_gets_form_requests(client):
    seen = []

    def on_url(params):
        seen.append(params)
        return {"action": "accept"}

    client.on_elicitation_modes(on_url, url=True)
    assert declared_elicitation(client) == {"url": {}}
    # The server checks capabilities: the form request is never sent, the call fails -32021
    # with what would declare it.
    with pytest.raises(mcp_client.CapabilityMissingError) as info:
        client.call_tool("elicit_once")
    assert info.value.code == -32021
    assert "register an elicitation handler for form mode" in info.value.message
    assert seen == []
    assert text_of(client.call_tool("url_login")) == "url login: accept"
    assert len(seen) == 1
    client.on_elicitation_modes(on_url, form=True, url=True)
    assert declared_elicitation(client) == {"form": {}, "url": {}}


def test_a_handler_with_no_mode_is_refused(client):
    with pytest.raises(mcp_client.InvalidArgumentError, match="one mode at least"):
        client.on_elicitation_modes(lambda params: {"action": "accept"})
    assert declared_elicitation(client) is None


def test_missing_capability_errors_say_what_declares_it(client):
    with pytest.raises(mcp_client.CapabilityMissingError) as info:
        client.call_tool("elicit_once")
    assert info.value.message.endswith(
        "register an elicitation handler for form mode (mcp_client_on_elicitation; on_elicitation in the"
        ' bindings) or list "elicitation" in the configuration\'s manual_input'
    )
    client.on_elicitation(lambda params: {"action": "accept", "content": {"name": "Ada"}})
    with pytest.raises(mcp_client.CapabilityMissingError) as info:
        client.call_tool("url_login")
    assert "URL-mode elicitation (`elicitation.url`)" in info.value.message
    assert '"elicitation.url" in the configuration\'s manual_input' in info.value.message


def test_form_handler_leaves_url_requests_to_the_host(make_client):
    c = make_client("--lax-capabilities")
    c.on_elicitation(lambda params: {"action": "accept"})
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("url_login")
    assert info.value.unanswered["login"]["params"]["mode"] == "url"


def test_legacy_url_elicitation_required_and_its_completion(legacy):
    notes = []
    done = threading.Event()

    def on_note(method, params):
        notes.append((method, params))
        if method == "notifications/elicitation/complete":
            done.set()

    legacy.on_notification(on_note)
    legacy.on_elicitation_modes(lambda params: {"action": "accept"}, form=True, url=True)
    with pytest.raises(mcp_client.UrlElicitationRequiredError) as info:
        legacy.call_tool("url_required")
    e = info.value
    assert isinstance(e, mcp_client.RpcError) and e.code == -32042
    assert e.elicitations[0]["elicitationId"] == "fixture-elicitation-1"
    assert e.elicitations[0]["url"].startswith("https://")
    assert text_of(legacy.call_tool("url_login")) == "url login: accept"
    assert done.wait(10)
    assert ("notifications/elicitation/complete", {"elicitationId": "fixture-elicitation-1"}) in notes


def test_manual_input_declares_the_kind_and_retry_options_finish_the_call(make_client):
    undeclared = make_client()
    with pytest.raises(mcp_client.CapabilityMissingError):
        undeclared.call_tool("elicit_once")
    c = make_client(manual_input=["elicitation"])
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("elicit_once")
    e = info.value
    assert e.unanswered == e.input_requests and list(e.unanswered) == ["name"]
    answer = {"name": {"action": "accept", "content": {"name": "Py"}}}
    options = e.retry_options(answer)
    assert options == {"input_responses": answer, "request_state": e.request_state}
    assert text_of(c.call_tool("elicit_once", **options)) == "Hello, Py!"
    with pytest.raises(mcp_client.InvalidArgumentError):
        make_client(manual_input=["telepathy"]).connect()


def test_a_task_is_followed_with_status_callbacks(make_client):
    c = make_client(tasks=True)
    statuses = []
    three = threading.Event()

    @c.on_task_status
    def on_task(task):
        statuses.append(task["status"])
        if len(statuses) == 3:
            three.set()

    assert text_of(c.call_tool("task_echo", {"text": "py"})) == "task: py"
    assert three.wait(10)
    assert statuses == ["working", "working", "completed"]
    with pytest.raises(mcp_client.RpcError) as info:
        c.call_tool("task_fail")
    assert info.value.code == -32603


def test_task_input_goes_through_the_elicitation_handler(make_client):
    c = make_client(tasks=True)
    asked = []
    c.on_elicitation(lambda params: asked.append(params) or {"action": "accept", "content": {"confirmed": True}})
    result = c.call_tool("task_input")
    assert text_of(result).startswith("confirmed: ") and not result.get("isError")
    assert len(asked) == 1


def test_a_task_id_is_resumed_cancelled_and_read(make_client):
    c = make_client(tasks=True)
    ids: list[str] = []
    seen = threading.Condition()

    def on_task(task):
        with seen:
            ids.append(task["taskId"])
            seen.notify_all()

    def id_other_than(known):
        # Listeners run on the dispatcher thread: wait for an event of another task.
        with seen:
            assert seen.wait_for(lambda: any(i not in known for i in ids), timeout=10)
            return next(i for i in ids if i not in known)

    c.on_task_status(on_task)
    c.connect()  # the 20 ms caps below are for the task, not for starting the server
    with pytest.raises(mcp_client.MCPTimeoutError):
        c.call_tool("task_echo", {"text": "again"}, max_total=0.02)
    echo = id_other_than(set())
    assert text_of(c.resume_task(echo)) == "task: again"
    with pytest.raises(mcp_client.MCPTimeoutError):
        c.call_tool("task_slow", max_total=0.02)
    slow = id_other_than({echo})
    assert c.get_task(slow)["status"] == "working"
    c.cancel_task(slow)
    assert c.get_task(slow)["status"] == "cancelled"
    with pytest.raises(mcp_client.CancelledError):
        c.resume_task(slow)
    with pytest.raises(mcp_client.RpcError):
        c.resume_task("task-none")


# --- the call's timeout bounds the wait for a task -------------------------------------------


def _requests(record, method: str) -> int:
    """How many ``method`` requests the fixture's --record file holds."""
    lines = record.read_text().splitlines() if record.exists() else []
    return sum(1 for line in lines if json.loads(line).get("method") == method and "id" in json.loads(line))


def _cancelled_and_quiet(record, cancels: int) -> None:
    """``cancels`` tasks/cancel went out, and no tasks/get follows over six poll intervals."""
    assert _requests(record, "tasks/cancel") == cancels
    gets = _requests(record, "tasks/get")
    time.sleep(0.3)
    assert _requests(record, "tasks/get") == gets, "still polling after the call ended"


def test_a_per_call_timeout_ends_a_task_that_stays_working(make_client, tmp_path):
    record = tmp_path / "record.jsonl"
    c = make_client("--record", str(record), tasks=True)
    start = time.monotonic()
    with pytest.raises(mcp_client.MCPTimeoutError) as info:
        c.call_tool("task_stuck", timeout=0.4, max_total=6)  # max_total: a safety cap
    took = time.monotonic() - start
    assert 0.4 <= took < 2.5, took
    message = str(info.value)
    assert "still working) timed out after 400 ms: the limit is this call's timeout (timeout_ms" in message
    assert message.endswith("; tasks/cancel sent"), message
    _cancelled_and_quiet(record, 1)


def test_the_client_wide_request_timeout_ends_a_task_call(make_client, tmp_path):
    record = tmp_path / "record.jsonl"
    c = make_client("--record", str(record), tasks=True, request_timeout_ms=1000)
    start = time.monotonic()
    with pytest.raises(mcp_client.MCPTimeoutError) as info:
        c.call_tool("task_slow", max_total=6)
    took = time.monotonic() - start
    assert 1.0 <= took < 3.0, took
    assert "timed out after 1000 ms: the limit is request_timeout_ms in the configuration" in str(info.value)
    _cancelled_and_quiet(record, 1)
    # A plain call names the same setting.
    with pytest.raises(mcp_client.MCPTimeoutError) as info:
        c.call_tool("slow", {"ms": 3000})
    assert "timed out after 1000 ms: the limit is request_timeout_ms" in str(info.value)


def test_an_async_task_call_ends_at_its_timeout(fixture_server, tmp_path):
    record = tmp_path / "record.jsonl"

    async def run() -> str:
        async with mcp_client.AsyncClient.stdio(
            fixture_server, ["--record", str(record)], tasks=True, request_timeout_ms=10_000
        ) as c:
            with pytest.raises(mcp_client.MCPTimeoutError) as info:
                await c.call_tool("task_stuck", timeout=0.4, max_total=6)
            return str(info.value)

    message = asyncio.run(run())
    assert "timed out after 400 ms" in message and message.endswith("; tasks/cancel sent"), message
    _cancelled_and_quiet(record, 1)
