"""Multi round-trip requests: Python handlers (now, later, failing) and manual driving."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

import mcp_client
from conftest import text_of
from waits import wait_until

# The fixture README's requestState for elicit_once round 1 (`\\n` is a backslash and an n).
ELICIT_ONCE_STATE = 'sté:1 {"flow":"elicit_once","round":1,"values":[]} +/=\\n 🔑#4bf93ac3968345b1'
THREE_ROUNDS_STATE_1 = 'sté:1 {"flow":"three_rounds","round":1,"values":[]} +/=\\n 🔑#3ca41149c919ad5b'
THREE_ROUNDS_STATE_2_A = 'sté:2 {"flow":"three_rounds","round":2,"values":["a"]} +/=\\n 🔑#786de8b116c83101'


def accept(content):
    return {"action": "accept", "content": content}


def test_automatic_elicitation(client):
    seen = []

    @client.on_elicitation
    def ask(params):
        seen.append((params, threading.current_thread() is threading.main_thread()))
        return accept({"name": "Ada"})

    assert text_of(client.call_tool("elicit_once")) == "Hello, Ada!"
    params, on_main = seen[0]
    assert params["message"] == "What is your name?"
    assert params["requestedSchema"]["required"] == ["name"]
    assert not on_main  # the library's dispatcher thread


def test_elicitation_none_declines(client):
    client.on_elicitation(lambda params: None)
    assert text_of(client.call_tool("elicit_once")) == "Hello, stranger (declined)"


def test_three_rounds(client):
    answers = iter(["a", "b", "c"])
    client.on_elicitation(lambda params: accept({"value": next(answers)}))
    assert text_of(client.call_tool("three_rounds")) == "steps: a,b,c"


def test_elicitation_and_sampling_in_one_round(client):
    client.on_elicitation(lambda params: accept({"confirmed": True}))
    sampled = []

    def sample(params):
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "A short summary"}, "model": "test-model"}

    client.on_sampling(sample)
    assert text_of(client.call_tool("elicit_and_sample")) == "confirm=accept; summary=A short summary"
    assert sampled[0]["messages"][0]["content"]["text"] == "Summarise the fixture"
    assert sampled[0]["maxTokens"] == 50


def weather_model(seen):
    """A sampling handler that uses get_weather while tools may be used, then answers text."""

    def sample(params):
        seen.append(params)
        if params["toolChoice"]["mode"] == "none":
            return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "mild"}}
        use = {"type": "tool_use", "id": "py-1", "name": "get_weather", "input": {"city": "Paris"}}
        return {"role": "assistant", "model": "m", "stopReason": "toolUse", "content": [use]}

    return sample


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sampling_with_tools(make_client, era):
    """sampling_tools declares sampling.tools: tools and toolChoice reach the handler, its
    tool_use answer reaches the server, which follows with the tool_result (SEP-1577)."""
    seen: list = []
    client = make_client("--era", era, sampling_tools=True)
    client.on_sampling(weather_model(seen))
    final = text_of(client.call_tool("sample_with_tools"))
    assert final == 'weather: mild; tool get_weather({"city":"Paris"}) id py-1'
    assert [p["toolChoice"]["mode"] for p in seen] == ["auto", "none"]
    assert seen[0]["tools"][0]["name"] == "get_weather"
    assert seen[1]["messages"][2]["content"][0] == {
        "type": "tool_result",
        "toolUseId": "py-1",
        "content": [{"type": "text", "text": "18 degrees and sunny"}],
    }


def test_sampling_tool_use_of_an_unoffered_tool_fails(make_client):
    client = make_client(sampling_tools=True)
    client.on_sampling(
        lambda params: {
            "role": "assistant",
            "model": "m",
            "content": {"type": "tool_use", "id": "x", "name": "rm_rf", "input": {}},
        }
    )
    with pytest.raises(mcp_client.MCPError) as caught:
        client.call_tool("sample_with_tools")
    assert "which the request did not offer" in str(caught.value)


def test_roots(client):
    client.on_roots(lambda params: {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]})
    assert text_of(client.call_tool("roots")) == "roots: file:///a,file:///b"


def test_prompt_and_resource_mrtr(client):
    def ask(params):
        props = params["requestedSchema"]["properties"]
        return accept({"topic": "ctypes"} if "topic" in props else {k: "hunter2" for k in props})

    client.on_elicitation(ask)
    assert client.get_prompt("needs_input")["messages"][0]["content"]["text"] == "Topic: ctypes"
    assert client.read_resource("fixture://needs-input")["contents"][0]["text"] == "secret accepted"


def test_state_only_rounds_need_no_handler(client):
    assert text_of(client.call_tool("state_only")) == "done after 2 state-only rounds"


def test_manual_driving(make_client):
    client = make_client(manual_input=["elicitation"])  # answered by hand, so declared
    with pytest.raises(mcp_client.InputRequiredError) as info:
        client.call_tool("elicit_once")
    e = info.value
    assert e.status == mcp_client.MCP_INPUT_REQUIRED
    assert e.request_state == ELICIT_ONCE_STATE  # byte-exact, non-ASCII and escapes intact
    assert list(e.input_requests) == ["name"]
    assert e.input_requests["name"]["method"] == "elicitation/create"
    assert e.result["resultType"] == mcp_client.MCP_RESULT_TYPE_INPUT_REQUIRED
    final = client.call_tool(
        "elicit_once",
        input_responses={"name": accept({"name": "Grace"})},
        request_state=e.request_state,
    )
    assert text_of(final) == "Hello, Grace!"


def test_manual_driving_three_rounds(make_client):
    client = make_client(manual_input=["elicitation"])  # answered by hand, so declared
    with pytest.raises(mcp_client.InputRequiredError) as r1:
        client.call_tool("three_rounds")
    assert r1.value.request_state == THREE_ROUNDS_STATE_1
    with pytest.raises(mcp_client.InputRequiredError) as r2:
        client.call_tool(
            "three_rounds", input_responses={"step1": accept({"value": "a"})}, request_state=r1.value.request_state
        )
    assert r2.value.request_state == THREE_ROUNDS_STATE_2_A
    assert list(r2.value.input_requests) == ["step2"]
    # from round 2 on, a handler answers the rest automatically
    client.on_elicitation(lambda params: accept({"value": "z"}))
    final = client.call_tool(
        "three_rounds", input_responses={"step2": accept({"value": "b"})}, request_state=r2.value.request_state
    )
    assert text_of(final) == "steps: a,b,z"


def test_manual_driving_prompt(make_client):
    client = make_client(manual_input=["elicitation"])  # answered by hand, so declared
    with pytest.raises(mcp_client.InputRequiredError) as info:
        client.get_prompt("needs_input")
    result = client.get_prompt(
        "needs_input", input_responses={"topic": accept({"topic": "manual"})}, request_state=info.value.request_state
    )
    assert result["messages"][0]["content"]["text"] == "Topic: manual"


def test_wrong_request_state_is_refused(client):
    with pytest.raises(mcp_client.RpcError) as e:
        client.call_tool("elicit_once", input_responses={"name": accept({"name": "x"})}, request_state="forged")
    assert e.value.code == -32602


def test_rounds_exceeded(make_client):
    c = make_client(input_required_max_rounds=3)
    c.on_elicitation(lambda params: accept({"value": "again"}))
    with pytest.raises(mcp_client.InputRoundsExceededError) as info:
        c.call_tool("always_input")
    e = info.value
    assert e.status == mcp_client.MCP_INPUT_ROUNDS_EXCEEDED
    assert list(e.input_requests) == ["again"]
    assert e.request_state and e.request_state.startswith("loop-")
    assert e.result["resultType"] == "input_required"
    assert not isinstance(e, mcp_client.InputRequiredError) and isinstance(e, mcp_client.InputError)


def test_deferred_answer_from_another_thread(client):
    pending = []

    def ask(params):
        d = mcp_client.Deferred()
        pending.append(d)

        def later():
            # Attached once the handler returned: the call then waits for d.
            assert wait_until(lambda: d._mcp_reply is not None)
            assert d.wanted
            d.set_result(accept({"name": "Later"}))

        threading.Thread(target=later).start()
        return d

    client.on_elicitation(ask)
    assert text_of(client.call_tool("elicit_once", timeout=5)) == "Hello, Later!"
    assert len(pending) == 1


def test_plain_future_and_executor(client):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        client.on_elicitation(lambda params: pool.submit(lambda: accept({"confirmed": True})))
        client.on_sampling(
            lambda params: pool.submit(lambda: {"role": "assistant", "content": {"type": "text", "text": "pooled"}})
        )
        assert text_of(client.call_tool("elicit_and_sample")) == "confirm=accept; summary=pooled"


def test_handler_raising_is_handler_error(client):
    def ask(params):
        raise RuntimeError("the user closed the dialog")

    client.on_elicitation(ask)
    with pytest.raises(mcp_client.HandlerError) as e:
        client.call_tool("elicit_once")
    assert e.value.status == mcp_client.MCP_HANDLER_FAILED
    assert "the user closed the dialog" in e.value.message
    # the client is fine afterwards
    client.on_elicitation(lambda params: accept({"name": "Ok"}))
    assert text_of(client.call_tool("elicit_once")) == "Hello, Ok!"


def test_deferred_exception_and_bad_results_are_handler_errors(client):
    def ask(params):
        f = concurrent.futures.Future()
        threading.Timer(0.05, f.set_exception, (mcp_client.ReplyError("no thanks", code=-32001),)).start()
        return f

    client.on_elicitation(ask)
    with pytest.raises(mcp_client.HandlerError, match="no thanks"):
        client.call_tool("elicit_once")
    client.on_elicitation(lambda params: ["not", "a", "dict"])
    with pytest.raises(mcp_client.HandlerError, match="expected a dict"):
        client.call_tool("elicit_once")
    client.on_elicitation(lambda params: {"action": "accept", "content": {"x": object()}})
    with pytest.raises(mcp_client.HandlerError, match="not JSON"):
        client.call_tool("elicit_once")
    client.on_sampling(lambda params: None)  # sampling has no default answer
    client.on_elicitation(lambda params: accept({"confirmed": True}))
    with pytest.raises(mcp_client.HandlerError):
        client.call_tool("elicit_and_sample")


def test_blocking_call_from_a_handler_is_reentrant_error(client):
    seen = []

    def ask(params):
        try:
            client.call_tool("echo", {"text": "inside"})
        except mcp_client.MCPError as e:
            seen.append(e)
        return accept({"name": "Re"})

    client.on_elicitation(ask)
    assert text_of(client.call_tool("elicit_once")) == "Hello, Re!"
    assert len(seen) == 1 and isinstance(seen[0], mcp_client.ReentrantCallError)


def test_deferred_answer_no_longer_wanted_after_cancel(client):
    deferred = mcp_client.Deferred()
    client.on_elicitation(lambda params: deferred)
    token = mcp_client.CancelToken()
    # Cancel once the call waits for the deferred answer.
    threading.Thread(target=lambda: wait_until(lambda: deferred._mcp_reply is not None) and token.cancel()).start()
    with pytest.raises(mcp_client.CancelledError):
        client.call_tool("elicit_once", cancel=token)
    assert wait_until(lambda: not deferred.wanted)
    deferred.set_result(accept({"name": "too late"}))  # harmless
    assert text_of(client.call_tool("echo", {"text": "after"})) == "after"


def test_close_abandons_deferred_answers(client):
    deferred = mcp_client.Deferred()
    client.on_elicitation(lambda params: deferred)
    errors = []

    def call():
        try:
            client.call_tool("elicit_once")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=call)
    t.start()
    assert wait_until(lambda: deferred._mcp_reply is not None)  # the call waits for the answer
    client.close()
    t.join(5)
    assert len(errors) == 1 and isinstance(errors[0], mcp_client.ClosedError)
    assert deferred.cancelled()  # the answering side learns nobody waits any more


def test_cancel_from_inside_a_handler(client):
    token = mcp_client.CancelToken()

    def ask(params):
        token.cancel()  # non-blocking: allowed from the dispatcher thread
        return accept({"name": "x"})

    client.on_elicitation(ask)
    with pytest.raises(mcp_client.CancelledError):
        client.call_tool("elicit_once", cancel=token)


def test_close_from_inside_a_handler(client):
    def ask(params):
        client.close()
        return accept({"name": "x"})

    client.on_elicitation(ask)
    with pytest.raises(mcp_client.ClosedError):
        client.call_tool("elicit_once")
    client.close(wait=5)
    assert client._life.freed


def test_unregistering_handlers_and_listeners(client):
    before = mcp_client._live_userdata()
    client.on_elicitation(lambda params: accept({"name": "Reg"}))
    client.on_notification(lambda method, params: None)
    assert mcp_client._live_userdata() == before + 2
    assert text_of(client.call_tool("elicit_once")) == "Hello, Reg!"
    client.on_elicitation(None)
    client.on_notification(None)
    # Nothing declares elicitation any more: the fixture, like the SDK servers, refuses.
    with pytest.raises(mcp_client.CapabilityMissingError):
        client.call_tool("elicit_once")
    assert wait_until(lambda: mcp_client._live_userdata() == before)  # released once idle


def test_many_concurrent_calls_with_deferred_answers(client):
    with concurrent.futures.ThreadPoolExecutor(4) as pool:

        def ask(params):
            # A deliberately late answer (0.01 s), so the calls overlap while answers are pending.
            return pool.submit(lambda: (time.sleep(0.01), accept({"name": threading.current_thread().name}))[1])

        client.on_elicitation(ask)
        with concurrent.futures.ThreadPoolExecutor(8) as callers:
            results = list(callers.map(lambda _: text_of(client.call_tool("elicit_once", timeout=10)), range(24)))
    assert len(results) == 24 and all(r.startswith("Hello, ") for r in results)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_apps(make_client, era):
    """MCP Apps: the extension declared with apps=True, each tool's UI link, a verified view
    (blocking and async), a view that fails the checks, and app-only tools kept from export."""
    import asyncio
    import os

    from mcp_client import apps, export

    client = make_client("--apps", "--era", era, apps=True)
    tools = client.all_tools()
    links = {t["name"]: apps.tool_ui(t) for t in tools}
    assert links["weather_app"] == {
        "resourceUri": "ui://fixture/weather",
        "visibility": ["model", "app"],
        "model": True,
        "app": True,
    }
    assert links["refresh_app"]["model"] is False
    assert links["not_ui_app"] is None and links["echo"] is None
    view = client.read_app("ui://fixture/weather")
    assert "weather app</body>" in view["html"] and view["meta"]["prefersBorder"] is True
    with pytest.raises(mcp_client.MCPError) as caught:
        client.read_app("ui://fixture/plain-html")
    assert "text/html;profile=mcp-app" in str(caught.value)
    with pytest.raises(mcp_client.MCPError):
        client.read_app("ui://fixture/big", max_bytes=1000)
    names = [t["function"]["name"] for t in export.export_tools(tools)["tools"]]
    assert "weather_app" in names and "refresh_app" not in names

    async def from_a_loop():
        async with mcp_client.AsyncClient.stdio(
            os.environ["MCP_FIXTURE"], ["--apps", "--era", era], apps=True, request_timeout_ms=10000
        ) as ac:
            return await ac.read_app("ui://fixture/blob")

    assert "weather app</body>" in asyncio.run(from_a_loop())["html"]
