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
