"""2026-07-28 servers with MRTR: our Python SDK server (mcp==2.3.0) and TypeScript SDK server
(@modelcontextprotocol/server 2.4.0), each over stdio and Streamable HTTP, in auto connect mode.

Every case drives the library through its C ABI (the Python binding) and asserts the final
content; the Python server seals requestState (AES-GCM, "v1." tokens), the TypeScript server
passes it through, so the manual cases check the exact strings it minted come back."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

import mcp_client
from conftest import accept, py_stdio, text_of, ts_stdio


@dataclass(frozen=True)
class Expect:
    """What differs between the two SDK servers for the same tools."""

    server_name: str
    greet_key: str
    wizard_keys: tuple[str, str, str]
    confirm_keys: tuple[str, str]
    roots_key: str
    true: str  # how the server prints a boolean
    sealed: bool  # requestState sealed by the SDK (Python) or passed through (TypeScript)


PY = Expect(
    server_name="py-interop-server",
    greet_key="__main__:ask_name",
    wizard_keys=("__main__:ask_name", "__main__:ask_colour", "__main__:ask_size"),
    confirm_keys=("__main__:ask_confirm", "__main__:summarize"),
    roots_key="__main__:roots",
    true="True",
    sealed=True,
)
TS = Expect(
    server_name="ts-interop-server",
    greet_key="ask_name",
    wizard_keys=("name", "colour", "size"),
    confirm_keys=("confirm", "summary"),
    roots_key="roots",
    true="true",
    sealed=False,
)


@dataclass
class Target:
    kind: str
    transport: str
    server: object
    expect: Expect


@pytest.fixture(params=["python-stdio", "python-http", "typescript-stdio", "typescript-http"])
def target(request, start_http, ts_server_path) -> Target:
    kind, transport = request.param.split("-")
    if transport == "stdio":
        server = py_stdio() if kind == "python" else ts_stdio(ts_server_path)
    else:
        server = start_http(kind)
    return Target(kind, transport, server, PY if kind == "python" else TS)


@pytest.fixture
def new_client(target, make_client):
    def new(**settings) -> mcp_client.Client:
        return make_client(target.server, **settings)

    return new


SAMPLE_REPLY = {
    "role": "assistant",
    "content": {"type": "text", "text": "A fox jumps."},
    "model": "interop-model",
    "stopReason": "endTurn",
}
ROOTS_REPLY = {"roots": [{"uri": "file:///tmp/work", "name": "work"}, {"uri": "file:///tmp/other"}]}


def wizard_answer(params: dict) -> dict:
    message = params["message"]
    if message == "What is your name?":
        return accept({"name": "Ada"})
    if message == "Which colour, Ada?":
        return accept({"colour": "teal"})
    if message == "Which size for the teal shirt?":
        return accept({"size": "L"})
    raise AssertionError(f"unexpected elicitation {message!r}")


# ----- discovery and plain calls -----


def test_discover_and_plain_calls(target, new_client):
    c = new_client()
    info = c.connect()
    assert info["era"] == "modern" and c.era == "modern"
    assert info["protocolVersion"] == "2026-07-28"
    assert info["serverInfo"]["name"] == target.expect.server_name
    assert "interop server" in info["instructions"]
    assert "tools" in info["capabilities"] and "prompts" in info["capabilities"]
    assert text_of(c.call_tool("protocol")) == "modern 2026-07-28"

    result = c.call_tool("add", {"a": 2, "b": 3})
    assert text_of(result) == "5"
    assert result.get("isError") in (None, False)
    if target.kind == "python":
        assert result["structuredContent"] == {"result": 5}
    assert text_of(c.call_tool("echo", {"text": "héllo, wörld"})) == "héllo, wörld"

    names = {t["name"] for t in c.all_tools()}
    assert {"add", "echo", "greet", "wizard", "confirm_and_summarize", "list_roots", "state_only"} <= names
    assert {p["name"] for p in c.all_prompts()} >= {"haiku", "plain"}
    assert any(t["uriTemplate"] == "vault://{name}" for t in c.all_resource_templates())
    assert any(r["uri"] == "info://server" for r in c.all_resources())

    info_text = c.read_resource("info://server")["contents"][0]
    assert info_text["uri"] == "info://server" and info_text["text"].endswith("interop-server info")
    prompt = c.get_prompt("plain", {"subject": "MCP"})
    assert prompt["messages"][0]["role"] == "user"
    assert prompt["messages"][0]["content"]["text"] == "Tell me about MCP."

    with pytest.raises(mcp_client.UnsupportedError):  # ping does not exist in 2026-07-28
        c.ping()

    # An unknown tool: the Python SDK answers a tool error, the TypeScript SDK -32602.
    if target.kind == "python":
        unknown = c.call_tool("no_such_tool")
        assert unknown["isError"] is True and text_of(unknown) == "Unknown tool: no_such_tool"
    else:
        with pytest.raises(mcp_client.RpcError) as info:
            c.call_tool("no_such_tool")
        assert info.value.code == -32602 and "no_such_tool" in info.value.message


# ----- automatic MRTR -----


def test_auto_one_round_and_several_rounds(target, new_client):
    c = new_client()
    seen = []

    def on_elicit(params):
        seen.append(params)
        return wizard_answer(params)

    c.on_elicitation(on_elicit)

    greet = c.call_tool("greet")
    assert text_of(greet) == "Hello, Ada!"
    assert len(seen) == 1
    assert seen[0]["mode"] == "form"
    schema = seen[0]["requestedSchema"]
    assert schema["type"] == "object" and schema["properties"]["name"]["type"] == "string"
    assert schema["required"] == ["name"]

    seen.clear()
    wizard = c.call_tool("wizard")
    assert text_of(wizard) == "Ada ordered a L teal shirt"
    assert [p["message"] for p in seen] == [
        "What is your name?",
        "Which colour, Ada?",
        "Which size for the teal shirt?",
    ]


def test_auto_elicitation_and_sampling_in_the_same_round(target, new_client):
    """Each handler answers only once both have been asked: had the server put them in two
    rounds, the first answer would never come and the call would time out."""
    c = new_client()
    lock = threading.Lock()
    pending: list[tuple[mcp_client.Deferred, dict]] = []
    calls: dict[str, dict] = {}

    def arrive(kind: str, params: dict, reply: dict) -> mcp_client.Deferred:
        d = mcp_client.Deferred()
        with lock:
            calls[kind] = params
            pending.append((d, reply))
            ready = list(pending) if len(pending) == 2 else []
        for fut, answer in ready:
            fut.set_result(answer)
        return d

    c.on_elicitation(lambda p: arrive("elicitation", p, accept({"confirmed": True})))
    c.on_sampling(lambda p: arrive("sampling", p, SAMPLE_REPLY))

    result = c.call_tool("confirm_and_summarize", timeout=8)
    assert text_of(result) == f"confirmed={target.expect.true}; summary=A fox jumps.; model=interop-model"
    assert calls["elicitation"]["message"] == "Proceed with the summary?"
    assert calls["elicitation"]["requestedSchema"]["properties"]["confirmed"]["type"] == "boolean"
    sampling = calls["sampling"]
    assert sampling["maxTokens"] == 50
    assert sampling["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Summarize: the quick brown fox"}}
    ]


def test_auto_roots_and_state_only_rounds(target, new_client):
    c = new_client()
    roots_calls = []
    c.on_roots(lambda p: roots_calls.append(p) or ROOTS_REPLY)
    assert text_of(c.call_tool("list_roots")) == "roots: work=file:///tmp/work, -=file:///tmp/other"
    assert len(roots_calls) == 1
    # Rounds with only requestState need no handler: the library retries with the state alone.
    assert text_of(c.call_tool("state_only", {"label": "lb"})) == "lb: done after 2 state-only rounds"


def test_auto_prompt_and_resource_that_need_input(target, new_client):
    c = new_client()
    asked = []

    def on_elicit(params):
        asked.append(params["message"])
        prop = next(iter(params["requestedSchema"]["properties"]))
        return accept({prop: {"style": "terse", "passphrase": "open sesame"}[prop]})

    c.on_elicitation(on_elicit)
    prompt = c.get_prompt("haiku", {"topic": "sea"})
    assert prompt["messages"][0]["content"] == {"type": "text", "text": "Write a terse haiku about sea."}
    resource = c.read_resource("vault://alpha")
    assert resource["contents"][0]["uri"] == "vault://alpha"
    assert resource["contents"][0]["text"] == "vault alpha opened with open sesame"
    assert asked == ["Which style of haiku about sea?", "Passphrase for alpha?"]


def test_parallel_mrtr_calls_stay_isolated(target, new_client):
    """Several multi-round calls in flight on one connection: each retry carries its own
    state (the servers bind state to the call's arguments), so every label comes back."""
    c = new_client()
    c.on_elicitation(wizard_answer)
    c.connect()
    labels = [f"p{i}" for i in range(6)]
    with ThreadPoolExecutor(len(labels) + 1) as pool:
        wizard = pool.submit(c.call_tool, "wizard")
        results = list(pool.map(lambda lb: text_of(c.call_tool("state_only", {"label": lb})), labels))
    assert results == [f"{lb}: done after 2 state-only rounds" for lb in labels]
    assert text_of(wizard.result(20)) == "Ada ordered a L teal shirt"


# ----- manual MRTR: the host answers and retries -----


def check_state(target: Target, state: str, plain: str) -> None:
    """The requestState the server issued: sealed by the Python SDK, our plain string on TS."""
    if target.expect.sealed:
        assert state.startswith("v1.") and len(state) > 60 and plain not in state
    else:
        assert state == plain


# A host that answers by hand declares what it answers (servers check the capabilities): the
# manual_input setting, no capabilities override needed.
MANUAL_INPUT = ["elicitation", "sampling", "roots"]


def test_manual_driving_round_trips_the_state(target, new_client):
    c = new_client(manual_input=MANUAL_INPUT)  # no handlers: every input request comes back to us
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("greet")
    e = info.value
    assert list(e.input_requests) == [target.expect.greet_key]
    request = e.input_requests[target.expect.greet_key]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "What is your name?"
    assert e.result["resultType"] == "input_required"
    assert e.result["requestState"] == e.request_state
    check_state(target, e.request_state, "greet:round-1")
    answer = {target.expect.greet_key: accept({"name": "octocat"})}
    result = c.call_tool("greet", input_responses=answer, request_state=e.request_state)
    assert text_of(result) == "Hello, octocat!"

    # Three rounds by hand: each retry carries only that round's answer plus the state.
    states = []
    responses, state = None, None
    for expected_key, expected_plain in zip(
        target.expect.wizard_keys,
        ['{"step":1}', '{"step":2,"name":"Ada"}', '{"step":3,"name":"Ada","colour":"teal"}'],
    ):
        with pytest.raises(mcp_client.InputRequiredError) as info:
            c.call_tool("wizard", input_responses=responses, request_state=state)
        e = info.value
        assert list(e.input_requests) == [expected_key]
        check_state(target, e.request_state, expected_plain)
        states.append(e.request_state)
        responses = {expected_key: wizard_answer(e.input_requests[expected_key]["params"])}
        state = e.request_state
    assert len(set(states)) == 3
    assert (
        text_of(c.call_tool("wizard", input_responses=responses, request_state=state)) == "Ada ordered a L teal shirt"
    )


def test_manual_prompt_resource_and_state_only_rounds(target, new_client):
    # With a cap of 0 rounds every input_required result comes back to the host
    # (InputRoundsExceededError, with the same accessors), state-only rounds included.
    c = new_client(manual_input=MANUAL_INPUT, input_required_max_rounds=0)
    with pytest.raises(mcp_client.InputRoundsExceededError) as info:
        c.get_prompt("haiku", {"topic": "rain"})
    e = info.value
    assert list(e.input_requests) == ["style"]
    check_state(target, e.request_state, "haiku:rain")
    prompt = c.get_prompt(
        "haiku", {"topic": "rain"}, input_responses={"style": accept({"style": "sad"})}, request_state=e.request_state
    )
    assert prompt["messages"][0]["content"]["text"] == "Write a sad haiku about rain."

    with pytest.raises(mcp_client.InputRoundsExceededError) as info:
        c.read_resource("vault://beta")
    e = info.value
    check_state(target, e.request_state, "vault:beta")
    resource = c.read_resource(
        "vault://beta", input_responses={"passphrase": accept({"passphrase": "pw"})}, request_state=e.request_state
    )
    assert resource["contents"][0]["text"] == "vault beta opened with pw"

    state = None
    for plain in ("sx:step-1", "sx:step-2"):
        with pytest.raises(mcp_client.InputRoundsExceededError) as info:
            c.call_tool("state_only", {"label": "sx"}, request_state=state)
        e = info.value
        assert e.input_requests == {}
        check_state(target, e.request_state, plain)
        state = e.request_state
    assert (
        text_of(c.call_tool("state_only", {"label": "sx"}, request_state=state)) == "sx: done after 2 state-only rounds"
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_python_sealed_state_is_verified(transport, start_http, make_client):
    """The Python server authenticates the requestState it sealed: the intact echo succeeds
    (above) and one changed character is refused, so the round trip is byte-exact for real.
    (The TypeScript SDK passes requestState through unsealed: the exact strings are checked
    above.)"""
    server = py_stdio() if transport == "stdio" else start_http("python")
    c = make_client(server, manual_input=MANUAL_INPUT)
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("greet")
    state = info.value.request_state
    i = len(state) // 2
    forged = state[:i] + ("A" if state[i] != "A" else "B") + state[i + 1 :]
    answer = {PY.greet_key: accept({"name": "mallory"})}
    with pytest.raises(mcp_client.RpcError) as bad:
        c.call_tool("greet", input_responses=answer, request_state=forged)
    assert bad.value.code == -32602
    assert "Invalid or expired requestState" in bad.value.message
    # The state is bound to its call: the same token on another tool is refused too.
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("greet")
    token = info.value.request_state
    with pytest.raises(mcp_client.RpcError) as bad:
        c.call_tool("wizard", input_responses=answer, request_state=token)
    assert bad.value.code == -32602
    assert text_of(c.call_tool("greet", input_responses=answer, request_state=token)) == "Hello, mallory!"


# ----- answers the server does not like, handlers that are missing -----


def test_decline_and_rounds_cap(target, new_client):
    c = new_client(input_required_max_rounds=3)
    declined = []
    c.on_elicitation(lambda p: declined.append(p["message"]))  # None: decline
    if target.kind == "python":
        # The resolver's consumer wants the model: a decline aborts the call as a tool error.
        result = c.call_tool("greet")
        assert result["isError"] is True
        assert "elicitation was decline" in text_of(result)
        assert declined == ["What is your name?"]
    else:
        # The TypeScript tool asks again after a decline; the library stops after the cap.
        with pytest.raises(mcp_client.InputRoundsExceededError) as info:
            c.call_tool("greet")
        assert len(declined) == 3
        assert list(info.value.input_requests) == ["ask_name"]
        assert info.value.request_state == "greet:round-1"


def test_missing_handler_is_checked_before_any_handler_runs(target, new_client):
    elicited = []

    def elicit(params):
        elicited.append(params)
        return accept({"confirmed": True})

    # Capabilities follow the handlers: without a sampling handler none is declared, and both
    # servers refuse before asking (-32021, missing client capability).
    c = new_client()
    c.on_elicitation(elicit)
    with pytest.raises(mcp_client.CapabilityMissingError) as info:
        c.call_tool("confirm_and_summarize")
    assert info.value.code == -32021 and "sampling" in info.value.message

    # A host that declares sampling but registered no handler for it: the server asks for both,
    # and the library refuses the round before running any handler, handing back both requests.
    c = new_client(manual_input=MANUAL_INPUT)
    c.on_elicitation(elicit)
    with pytest.raises(mcp_client.InputRequiredError) as info:
        c.call_tool("confirm_and_summarize")
    assert sorted(info.value.input_requests) == sorted(target.expect.confirm_keys)
    assert "sampling/createMessage" in info.value.message
    assert [r["method"] for r in info.value.unanswered.values()] == ["sampling/createMessage"]
    assert elicited == []


# ----- pagination on a real server (the TypeScript fixture lists resources in pages of 10) -----


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_pagination(transport, start_http, ts_server_path, make_client):
    server = ts_stdio(ts_server_path) if transport == "stdio" else start_http("typescript")
    c = make_client(server)
    expected = ["info://server"] + [f"item://{i}" for i in range(1, 24)]
    first = c.list_resources()
    assert [r["uri"] for r in first["resources"]] == expected[:10]
    second = c.list_resources(first["nextCursor"])
    assert [r["uri"] for r in second["resources"]] == expected[10:20]
    third = c.list_resources(second["nextCursor"])
    assert [r["uri"] for r in third["resources"]] == expected[20:] and "nextCursor" not in third
    assert [r["uri"] for r in c.all_resources()] == expected
    assert c.read_resource("item://17")["contents"][0]["text"] == "item 17"

    capped = make_client(server, max_pages=2)
    with pytest.raises(mcp_client.ProtocolError) as info:
        capped.all_resources()
    assert "more than 2 pages" in info.value.message


# ----- subscriptions/listen and progress on the Python server -----


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_python_listen(transport, start_http, make_client):
    server = py_stdio() if transport == "stdio" else start_http("python")
    c = make_client(server)
    with c.listen({"toolsListChanged": True, "resourceSubscriptions": ["vault://watched"]}, timeout=10) as sub:
        assert sub.acknowledged == {"toolsListChanged": True, "resourceSubscriptions": ["vault://watched"]}
        assert text_of(c.call_tool("touch", {"uri": "vault://watched"})) == "touched vault://watched"
        got = {}
        while len(got) < 2:
            event = sub.next(5)
            assert event is not None, f"listen notifications missing; got {got}"
            got[event["method"]] = event["params"]
        assert got["notifications/resources/updated"]["uri"] == "vault://watched"
        assert "notifications/tools/list_changed" in got
    # The stream is closed; the connection carries on.
    assert text_of(c.call_tool("echo", {"text": "after listen"})) == "after listen"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_python_progress(transport, start_http, make_client):
    """Every progress notification the server sends before its answer reaches the callback
    before the call returns (several runs: the last one and the answer arrive back to back)."""
    server = py_stdio() if transport == "stdio" else start_http("python")
    c = make_client(server)
    for run in range(4):
        events = []
        result = c.call_tool("slow", {"steps": 3}, progress=lambda p, t, m: events.append((p, t, m)), timeout=5)
        assert text_of(result) == "done in 3 steps"
        assert events == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")], f"run {run}: progress before return"
