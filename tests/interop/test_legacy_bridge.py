"""The dual-era SDK servers on a connection pinned to 2025-11-25: the same MRTR tools reach our
handlers as real server->client requests.

- TypeScript (@modelcontextprotocol/server 2.4.0) over stdio: its legacy shim turns every
  embedded input request (tools, prompts and resources alike) into a real request over the
  live connection and re-enters the handler. Its HTTP handler serves 2025 clients per request
  (stateless), where no server->client request can travel: the SDK reports that as a tool error.
- Python (mcp 2.3.0) over stdio and Streamable HTTP (stateful legacy sessions): resolver-based
  tools send real requests; hand-rolled InputRequiredResult returns have no legacy path in that
  SDK and fail with -32603.
"""

from __future__ import annotations

import pytest

import mcp_client
from conftest import accept, py_stdio, text_of, ts_stdio

LEGACY = "2025-11-25"


@pytest.fixture(params=["typescript-stdio", "python-stdio", "python-http"])
def bridge(request, start_http, ts_server_path, make_client):
    """A client pinned to 2025-11-25 with every handler registered, recording what reaches it."""
    kind, transport = request.param.split("-")
    if transport == "stdio":
        server = py_stdio() if kind == "python" else ts_stdio(ts_server_path)
    else:
        server = start_http(kind)
    c = make_client(server, protocol_version=LEGACY)
    c.kind = kind
    c.calls = []

    def elicit(params):
        c.calls.append(("elicitation", params["message"]))
        answers = {
            "What is your name?": {"name": "Ada"},
            "Which colour, Ada?": {"colour": "teal"},
            "Which size for the teal shirt?": {"size": "L"},
            "Proceed with the summary?": {"confirmed": True},
            "Which style of haiku about sea?": {"style": "terse"},
            "Passphrase for alpha?": {"passphrase": "open sesame"},
        }
        return accept(answers[params["message"]])

    def sample(params):
        c.calls.append(("sampling", params["messages"][0]["content"]["text"]))
        return {"role": "assistant", "content": {"type": "text", "text": "A fox jumps."}, "model": "interop-model"}

    def roots(params):
        c.calls.append(("roots", None))
        return {"roots": [{"uri": "file:///tmp/work", "name": "work"}]}

    c.on_elicitation(elicit)
    c.on_sampling(sample)
    c.on_roots(roots)
    return c


def test_pinned_connection_is_legacy(bridge):
    info = bridge.connect()
    assert info["era"] == "legacy" and info["protocolVersion"] == LEGACY
    assert info["serverInfo"]["name"] == ("py-interop-server" if bridge.kind == "python" else "ts-interop-server")
    # The server itself serves these calls under 2025-11-25, where input_required does not exist.
    assert text_of(bridge.call_tool("protocol")) == f"legacy {LEGACY}"
    assert text_of(bridge.call_tool("add", {"a": 20, "b": 22})) == "42"
    bridge.ping()


def test_tools_input_arrives_as_server_requests(bridge):
    true = "True" if bridge.kind == "python" else "true"
    assert text_of(bridge.call_tool("greet")) == "Hello, Ada!"
    assert bridge.calls == [("elicitation", "What is your name?")]

    bridge.calls.clear()
    assert text_of(bridge.call_tool("wizard")) == "Ada ordered a L teal shirt"
    assert bridge.calls == [
        ("elicitation", "What is your name?"),
        ("elicitation", "Which colour, Ada?"),
        ("elicitation", "Which size for the teal shirt?"),
    ]

    bridge.calls.clear()
    result = bridge.call_tool("confirm_and_summarize")
    assert text_of(result) == f"confirmed={true}; summary=A fox jumps.; model=interop-model"
    assert sorted(bridge.calls) == [
        ("elicitation", "Proceed with the summary?"),
        ("sampling", "Summarize: the quick brown fox"),
    ]

    bridge.calls.clear()
    assert text_of(bridge.call_tool("list_roots")) == "roots: work=file:///tmp/work"
    assert bridge.calls == [("roots", None)]


def test_prompt_resource_and_state_only(bridge):
    if bridge.kind == "python":
        # mcp 2.3.0 has no legacy path for a hand-rolled InputRequiredResult.
        for call in (
            lambda: bridge.call_tool("state_only", {"label": "lg"}),
            lambda: bridge.get_prompt("haiku", {"topic": "sea"}),
            lambda: bridge.read_resource("vault://alpha"),
        ):
            with pytest.raises(mcp_client.RpcError) as info:
                call()
            assert info.value.code == -32603
        assert bridge.calls == []
        return
    # The TypeScript shim runs state-only rounds in-process and bridges prompts and resources.
    assert text_of(bridge.call_tool("state_only", {"label": "lg"})) == "lg: done after 2 state-only rounds"
    prompt = bridge.get_prompt("haiku", {"topic": "sea"})
    assert prompt["messages"][0]["content"]["text"] == "Write a terse haiku about sea."
    resource = bridge.read_resource("vault://alpha")
    assert resource["contents"][0]["text"] == "vault alpha opened with open sesame"
    assert bridge.calls == [
        ("elicitation", "Which style of haiku about sea?"),
        ("elicitation", "Passphrase for alpha?"),
    ]


def test_handler_failure_reaches_the_server(bridge):
    """A handler that fails answers the server's request with a JSON-RPC error carrying our code
    and message. The TypeScript shim turns it into a tool error; the Python SDK re-raises it as
    the tools/call error."""

    def refuse(params):
        raise mcp_client.ReplyError("user closed the dialog", code=-32001)

    bridge.on_elicitation(refuse)
    if bridge.kind == "python":
        with pytest.raises(mcp_client.RpcError) as info:
            bridge.call_tool("greet")
        assert info.value.code == -32001 and "user closed the dialog" in info.value.message
    else:
        result = bridge.call_tool("greet")
        assert result["isError"] is True
        assert "user closed the dialog" in text_of(result)
    # The connection is still fine afterwards.
    assert text_of(bridge.call_tool("echo", {"text": "still here"})) == "still here"


def test_typescript_http_serves_2025_clients_per_request(start_http, make_client):
    """The TypeScript HTTP handler answers initialize statelessly: plain calls and state-only
    rounds work, but no server->client request can reach the client, which the SDK reports as
    a tool error naming the missing capability."""
    server = start_http("typescript")
    c = make_client(server, protocol_version=LEGACY)
    asked = []
    c.on_elicitation(lambda p: asked.append(p) or accept({"name": "Ada"}))
    info = c.connect()
    assert info["era"] == "legacy" and info["protocolVersion"] == LEGACY
    assert text_of(c.call_tool("protocol")).startswith("legacy")
    assert text_of(c.call_tool("add", {"a": 1, "b": 2})) == "3"
    assert text_of(c.call_tool("state_only", {"label": "h"})) == "h: done after 2 state-only rounds"
    greet = c.call_tool("greet")
    assert greet["isError"] is True
    assert "per-request legacy serving cannot receive server-to-client requests" in text_of(greet)
    assert asked == []
