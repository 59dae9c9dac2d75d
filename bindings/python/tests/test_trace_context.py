"""W3C trace context (SEP-414) through the Python binding: the call's ``meta`` members
``traceparent``, ``tracestate`` and ``baggage`` reach the server exactly, on the call and on
every task poll (the fixture's ``--record`` file), and an invalid value is refused before
anything is sent."""

import json

import mcp_client
import pytest

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE = {"traceparent": PARENT, "tracestate": "rojo=00f067aa0ba902b7", "baggage": "userId=alice"}


def sent(record, method):
    with open(record) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [m for m in lines if m.get("method") == method and "id" in m]


def test_the_call_and_every_task_poll_carry_the_exact_values(make_client, tmp_path):
    record = str(tmp_path / "record.jsonl")
    c = make_client("--record", record, tasks=True)
    seen = c.call_tool("echo_meta", meta=TRACE)["structuredContent"]
    assert {k: seen[k] for k in TRACE} == TRACE
    c.call_tool("task_echo", {"text": "t"}, meta=TRACE)
    polls = sent(record, "tasks/get")
    assert len(polls) == 2
    for request in sent(record, "tools/call") + polls:
        assert {k: request["params"]["_meta"][k] for k in TRACE} == TRACE, request


def test_invalid_values_are_refused_and_never_sent(make_client, tmp_path):
    record = str(tmp_path / "record.jsonl")
    c = make_client("--record", record)
    c.call_tool("echo", {"text": "connected"})
    for bad in ({"traceparent": PARENT.upper()}, {"tracestate": "a=b"}, {"baggage": "k=a b"}):
        with pytest.raises(mcp_client.InvalidArgumentError):
            c.call_tool("echo_meta", meta=bad)
    assert [m["params"]["name"] for m in sent(record, "tools/call")] == ["echo"]


def test_the_client_source_is_asked_on_the_calling_thread_for_each_call(make_client, tmp_path):
    import threading

    record = str(tmp_path / "record.jsonl")
    c = make_client("--record", record, tasks=True)
    asked = []

    def source():
        asked.append(threading.get_ident())
        return TRACE

    c.set_trace_context(source)
    seen = c.call_tool("echo_meta")["structuredContent"]
    assert {k: seen[k] for k in TRACE} == TRACE
    c.call_tool("task_echo", {"text": "t"})
    for request in sent(record, "tools/call") + sent(record, "tasks/get"):
        assert {k: request["params"]["_meta"][k] for k in TRACE} == TRACE, request
    assert asked == [threading.get_ident()] * 2
    # the call's own members win, without asking
    own = dict(TRACE, traceparent="00-11111111111111111111111111111111-2222222222222222-00")
    assert c.call_tool("echo_meta", meta=own)["structuredContent"]["traceparent"] == own["traceparent"]
    assert len(asked) == 2
    c.set_trace_context(lambda: {"traceparent": "bad"})
    with pytest.raises(mcp_client.InvalidArgumentError):
        c.call_tool("echo_meta")
    c.set_trace_context(None)
    assert "traceparent" not in c.call_tool("echo_meta")["structuredContent"]


def test_opentelemetry_context_is_empty_without_a_span():
    # Without opentelemetry-api (or without a current span) there is nothing to propagate.
    assert "traceparent" not in mcp_client.opentelemetry_context()


def test_the_async_client_asks_in_the_calling_task(fixture_server):
    import asyncio

    async def main():
        async with mcp_client.AsyncClient.stdio(fixture_server, []) as c:
            c.set_trace_context(lambda: TRACE)
            return (await c.call_tool("echo_meta"))["structuredContent"]

    seen = asyncio.run(main())
    assert {k: seen[k] for k in TRACE} == TRACE


def test_each_operation_ends_as_a_span_by_the_conventions(make_client):
    import threading

    c = make_client()
    c.call_tool("echo", {"text": "connect"})
    spans, ended = [], threading.Event()

    def keep(span):
        spans.append(span)
        if len(spans) == 2:
            ended.set()

    c.on_span(keep)
    c.call_tool("echo", {"text": "a"})
    c.call_tool("fail")
    assert ended.wait(5)
    ok, failed = spans
    assert ok["name"] == "tools/call echo" and ok["kind"] == "client"
    assert ok["attributes"]["mcp.method.name"] == "tools/call"
    assert ok["attributes"]["gen_ai.tool.name"] == "echo"
    assert ok["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert ok["attributes"]["network.transport"] == "pipe"
    assert "error.type" not in ok["attributes"] and ok["status"] == {"code": "unset"}
    assert ok["end_unix_nano"] >= ok["start_unix_nano"] > 0
    assert failed["name"] == "tools/call fail"
    assert failed["attributes"]["error.type"] == "tool_error"
    assert failed["status"]["code"] == "error"
    c.on_span(None)
    c.call_tool("echo", {"text": "b"})
    c.list_tools()
    assert len(spans) == 2
