"""The legacy reference server @modelcontextprotocol/server-everything@2026.8.31 (2025-11-25 only)
over stdio, Streamable HTTP (stateful sessions) and the old HTTP+SSE transport, in auto mode:
the discover probe fails and the library falls back to initialize; server->client requests
(elicitation, sampling, roots) reach our handlers; notifications reach our listener."""

from __future__ import annotations

import base64
import gzip
import os
import queue
import re
import signal
import time

import pytest

import mcp_client
from conftest import accept, everything_stdio, text_of

BASE_TOOLS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
}
# Registered only once the client's capabilities are known (after initialize).
CONDITIONAL_TOOLS = {"get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"}
DOC = "demo://resource/static/document/features.md"


@pytest.fixture(params=["stdio", "http", "sse"])
def transport(request) -> str:
    return request.param


@pytest.fixture
def server(transport, start_http):
    if transport == "stdio":
        return everything_stdio()
    return start_http("everything-http" if transport == "http" else "everything-sse")


class Notes:
    """Collects notifications from the library's dispatcher thread."""

    def __init__(self):
        self.q: queue.Queue = queue.Queue()
        self.seen: list[tuple[str, object]] = []

    def __call__(self, method, params):
        self.q.put((method, params))

    def wait_for(self, pred, timeout=8.0):
        deadline = time.monotonic() + timeout
        while True:
            for item in self.seen:
                if pred(*item):
                    return item
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching notification within {timeout} s; got {self.seen}")
            try:
                self.seen.append(self.q.get(timeout=left))
            except queue.Empty:
                pass

    def drain(self, settle=0.3):
        # An absence window: what arrives within `settle` (nothing marks "no more will come").
        time.sleep(settle)
        while True:
            try:
                self.seen.append(self.q.get_nowait())
            except queue.Empty:
                return self.seen

    def clear(self):
        self.drain(0)
        self.seen = []


@pytest.fixture
def everything(server, make_client):
    """A connected client with every handler registered and a notification listener."""
    c = make_client(server)
    notes = Notes()
    c.on_notification(notes)
    c.elicited = []
    c.sampled = []
    c.roots_asked = []
    c.roots = [{"uri": "file:///tmp/interop-a", "name": "a"}, {"uri": "file:///tmp/interop-b", "name": "b"}]

    def elicit(params):
        c.elicited.append(params)
        return c.elicit_answer

    c.elicit_answer = accept({"name": "Ada Lovelace", "check": True, "email": "ada@example.org"})
    c.on_elicitation(elicit)

    def sample(params):
        c.sampled.append(params)
        text = {"type": "text", "text": "sampled by interop"}
        return {"role": "assistant", "content": text, "model": "interop-model", "stopReason": "endTurn"}

    c.on_sampling(sample)
    c.on_roots(lambda p: c.roots_asked.append(p) or {"roots": list(c.roots)})
    c.notes = notes
    info = c.connect()
    c.info = info
    # 350 ms after initialisation the server asks for our roots and logs the answer; waiting for
    # that keeps its post-initialisation work out of the tests (and lets it exit promptly on
    # close instead of waiting for a roots answer that can no longer come).
    notes.wait_for(lambda m, p: m == "notifications/message" and str(p.get("data")).startswith("Roots updated"))
    return c


def test_auto_mode_falls_back_to_initialize(everything, transport):
    info = everything.info
    assert info["era"] == "legacy" and everything.era == "legacy"
    assert info["protocolVersion"] == "2025-11-25"
    assert info["serverInfo"] == {
        "name": "mcp-servers/everything",
        "title": "Everything Reference Server",
        "version": "2.0.0",
    }
    caps = info["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in caps and "completions" in caps
    assert info["instructions"].startswith("# Everything Server – Server Instructions")
    everything.ping()  # legacy ping, answered
    if transport != "http":
        # Right after initialisation the server announces its conditional tools. (Over
        # Streamable HTTP it sends them while handling notifications/initialized, before any
        # GET stream can exist, so the SDK drops them; the list-changed case below covers HTTP.)
        everything.notes.wait_for(lambda m, p: m == "notifications/tools/list_changed")


def test_tools(everything):
    tools = {t["name"]: t for t in everything.all_tools()}
    assert BASE_TOOLS | CONDITIONAL_TOOLS <= set(tools)
    assert tools["echo"]["inputSchema"]["properties"]["message"]["type"] == "string"
    assert text_of(everything.call_tool("echo", {"message": "hello interop"})) == "Echo: hello interop"
    assert text_of(everything.call_tool("get-sum", {"a": 2, "b": 3.5})) == "The sum of 2 and 3.5 is 5.5."
    structured = everything.call_tool("get-structured-content", {"location": "New York"})
    assert set(structured["structuredContent"]) == {"temperature", "conditions", "humidity"}
    image = everything.call_tool("get-tiny-image")
    assert any(b["type"] == "image" and b["mimeType"] == "image/png" and len(b["data"]) > 100 for b in image["content"])
    bad = everything.call_tool("get-sum", {"a": "x"})  # invalid arguments: a tool error, not a crash
    assert bad["isError"] is True


def test_prompts_resources_templates_and_pagination(everything):
    prompts = {p["name"]: p for p in everything.all_prompts()}
    assert set(prompts) == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    args = everything.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    assert args["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "What's weather in Paris, Texas?"}}
    ]
    embedded = everything.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    resource_block = embedded["messages"][1]["content"]
    assert (
        resource_block["type"] == "resource" and resource_block["resource"]["uri"] == "demo://resource/dynamic/text/2"
    )

    # This server does not paginate: one page, no cursor; the all-pages call returns the same.
    page = everything.list_resources()
    assert "nextCursor" not in page
    resources = everything.all_resources()
    assert [r["uri"] for r in resources] == [r["uri"] for r in page["resources"]]
    assert DOC in {r["uri"] for r in resources} and len(resources) >= 5
    tool_page = everything.list_tools()
    assert "nextCursor" not in tool_page and len(everything.all_tools()) == len(tool_page["tools"])

    doc = everything.read_resource(DOC)["contents"][0]
    assert doc["mimeType"] == "text/markdown" and doc["text"].startswith("# Everything Server - Features")

    templates = {t["uriTemplate"] for t in everything.all_resource_templates()}
    assert templates == {"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"}
    text = everything.read_resource("demo://resource/dynamic/text/3")["contents"][0]
    assert text["text"].startswith("Resource 3: This is a plaintext resource")
    blob = everything.read_resource("demo://resource/dynamic/blob/4")["contents"][0]
    assert base64.b64decode(blob["blob"]).decode().startswith("Resource 4: This is a base64 blob")
    with pytest.raises(mcp_client.RpcError):
        everything.read_resource("demo://resource/dynamic/text/0")  # not a positive integer


def test_completion(everything):
    ref = {"type": "ref/prompt", "name": "completable-prompt"}
    dept = everything.complete({"ref": ref, "argument": {"name": "department", "value": "S"}})
    assert dept["completion"]["values"] == ["Sales", "Support"]
    names = everything.complete(
        {"ref": ref, "argument": {"name": "name", "value": ""}, "context": {"arguments": {"department": "Sales"}}}
    )
    assert names["completion"]["values"] == ["David", "Eve", "Frank"]
    template = {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}
    assert everything.complete({"ref": template, "argument": {"name": "resourceId", "value": "7"}})["completion"][
        "values"
    ] == ["7"]


def test_elicitation_reaches_our_handler(everything):
    result = everything.call_tool("trigger-elicitation-request")
    assert len(everything.elicited) == 1
    params = everything.elicited[0]
    assert params["message"] == "Please provide inputs for the following fields:"
    assert params["requestedSchema"]["required"] == ["name"]
    text = text_of(result)
    assert "✅ User provided the requested information!" in text
    assert "- Name: Ada Lovelace" in text and "- Agreed to terms: true" in text and "- Email: ada@example.org" in text
    # The library fills in the schema's defaults the user did not touch (SEP-1034).
    assert "- Favorite Integer: 42" in text and "- Favorite Number: 3.14" in text

    everything.elicit_answer = {"action": "decline"}
    declined = everything.call_tool("trigger-elicitation-request")
    assert "❌ User declined to provide the requested information." in text_of(declined)


def test_sampling_reaches_our_handler(everything):
    result = everything.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 77})
    assert len(everything.sampled) == 1
    params = everything.sampled[0]
    assert params["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Resource trigger-sampling-request context: say hi"}}
    ]
    assert params["maxTokens"] == 77 and params["systemPrompt"] == "You are a helpful test server."
    text = text_of(result)
    assert text.startswith("LLM sampling result:")
    assert '"text": "sampled by interop"' in text and '"model": "interop-model"' in text


def test_roots_and_roots_changed(everything):
    result = text_of(everything.call_tool("get-roots-list"))
    assert result.startswith("Current MCP Roots (2 total):")
    assert "1. a\n   URI: file:///tmp/interop-a" in result and "2. b\n   URI: file:///tmp/interop-b" in result
    asked = len(everything.roots_asked)
    assert asked >= 1
    everything.notes.wait_for(
        lambda m, p: m == "notifications/message" and p["data"] == "Roots updated: 2 root(s) received from client"
    )

    # roots/list_changed makes the server ask again; it then reports the new list.
    everything.roots = [{"uri": "file:///tmp/interop-c", "name": "c"}]
    everything.notes.clear()
    everything.notify_roots_changed()
    everything.notes.wait_for(
        lambda m, p: m == "notifications/message" and p["data"] == "Roots updated: 1 root(s) received from client"
    )
    assert len(everything.roots_asked) == asked + 1
    assert text_of(everything.call_tool("get-roots-list")).startswith(
        "Current MCP Roots (1 total):\n\n1. c\n   URI: file:///tmp/interop-c"
    )


def test_progress_from_the_long_running_tool(everything):
    """Every notifications/progress the server sends before its answer reaches the call's
    progress callback before the call returns (the C ABI never runs it afterwards). Several runs,
    because the last notification and the answer arrive back to back."""
    for run in range(6):
        events = []
        result = everything.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.15, "steps": 3},
            progress=lambda progress, total, message: events.append((progress, total)),
            timeout=5,
            reset_timeout_on_progress=True,
        )
        assert text_of(result) == "Long running operation completed. Duration: 0.15 seconds, Steps: 3."
        assert events == [(1, 3), (2, 3), (3, 3)], f"run {run}: progress events before the call returned"


def test_timeout_reset_by_progress_and_cancellation(everything):
    args = {"duration": 1.2, "steps": 6}  # progress every 0.2 s, done after 1.2 s
    # Without resets a 0.6 s timeout expires; each progress notification restarts it.
    with pytest.raises(mcp_client.MCPTimeoutError):
        everything.call_tool("trigger-long-running-operation", args, timeout=0.6)
    done = everything.call_tool("trigger-long-running-operation", args, timeout=0.6, reset_timeout_on_progress=True)
    assert text_of(done) == "Long running operation completed. Duration: 1.2 seconds, Steps: 6."

    token = mcp_client.CancelToken()
    started = time.monotonic()
    with pytest.raises(mcp_client.CancelledError):
        everything.call_tool(
            "trigger-long-running-operation",
            {"duration": 5, "steps": 5},
            cancel=token,
            progress=lambda progress, total, message: token.cancel(),  # cancel at the first progress
        )
    assert time.monotonic() - started < 3
    # The connection is still usable after the cancelled call.
    assert text_of(everything.call_tool("echo", {"message": "still here"})) == "Echo: still here"


def test_logging_level_and_log_notifications(everything):
    notes = everything.notes
    subscribed = lambda m, p: m == "notifications/message" and p["data"].startswith(
        "Received Subscribe Resource request for URI: " + DOC
    )  # noqa: E731

    # The subscribe handler logs at info: filtered out at "error", delivered at "debug".
    everything.set_log_level("error")
    notes.clear()
    everything.subscribe_resource(DOC)
    assert not any(subscribed(*n) for n in notes.drain(0.5))
    everything.set_log_level("debug")
    everything.subscribe_resource(DOC)
    method, params = notes.wait_for(subscribed)
    assert params["level"] == "info"

    started = text_of(everything.call_tool("toggle-simulated-logging"))
    assert started.startswith("Started simulated, random-leveled logging")
    _, params = notes.wait_for(
        lambda m, p: m == "notifications/message" and re.search(r"[Ll]evel[- ]message", str(p.get("data")))
    )
    assert params["level"] in {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
    assert text_of(everything.call_tool("toggle-simulated-logging")).startswith("Stopped simulated logging")


def test_resource_subscription_updates(everything):
    notes = everything.notes
    everything.subscribe_resource(DOC)
    notes.clear()
    started = text_of(everything.call_tool("toggle-subscriber-updates"))
    assert started.startswith("Started simulated resource updated notifications")
    _, params = notes.wait_for(lambda m, p: m == "notifications/resources/updated")
    assert params == {"uri": DOC}
    everything.unsubscribe_resource(DOC)
    assert text_of(everything.call_tool("toggle-subscriber-updates")).startswith("Stopped simulated resource updates")


def test_list_changed_notifications(everything):
    """The gzip tool registers a session resource, and the server announces the change."""
    everything.notes.clear()
    result = everything.call_tool(
        "gzip-file-as-resource", {"name": "interop.txt.gz", "data": "data:text/plain;base64,aGVsbG8gaW50ZXJvcA=="}
    )
    link = next(b for b in result["content"] if b["type"] == "resource_link")
    assert link["uri"] == "demo://resource/session/interop.txt.gz"
    everything.notes.wait_for(lambda m, p: m == "notifications/resources/list_changed")
    assert link["uri"] in {r["uri"] for r in everything.all_resources()}
    blob = everything.read_resource(link["uri"])["contents"][0]["blob"]
    assert gzip.decompress(base64.b64decode(blob)) == b"hello interop"


def test_clean_close(server, transport, make_client):
    c = make_client(server)
    c.connect()
    assert text_of(c.call_tool("echo", {"message": "bye"})) == "Echo: bye"
    c.close(wait=10)
    assert c._life.freed
    with pytest.raises(mcp_client.ClosedError):
        c.call_tool("echo", {"message": "after close"})
    if transport == "http":
        # The session is ended with DELETE and the server drops its transport.
        wait_for_log(server, r"Received session termination request for session \S+")
        wait_for_log(server, r"Transport closed for session \S+")
    elif transport == "sse":
        wait_for_log(server, r"Client Disconnected:\s+\S+")
    # stdio: make_client asserts the server process tree is gone.


def test_server_death_fails_pending_calls(make_client):
    """A stdio server killed mid-call: the pending call fails at once with the exit status."""
    from conftest import TAG_VAR, tagged_pids

    server = everything_stdio()
    c = make_client(server)
    c.connect()
    pids = tagged_pids(c._interop_tag)
    assert pids, f"the server process was not found by its {TAG_VAR}"

    def kill_at_first_progress(progress, total, message):
        for pid in pids:
            os.kill(pid, signal.SIGKILL)

    started = time.monotonic()
    with pytest.raises(mcp_client.ServerExitedError) as info:
        c.call_tool("trigger-long-running-operation", {"duration": 10, "steps": 10}, progress=kill_at_first_progress)
    assert time.monotonic() - started < 5
    # The exit status and the server's last stderr lines are in the message.
    assert "killed by signal 9" in info.value.message
    assert "Starting default (STDIO) server..." in info.value.message


def wait_for_log(server, pattern: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        log = server.log.read_text(errors="replace")
        if re.search(pattern, log):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{pattern!r} not in the server log:\n{log[-2000:]}")
        time.sleep(0.05)
