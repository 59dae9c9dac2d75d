"""mcp_client.otel against opentelemetry-sdk's in-memory span exporter and metric reader, over
real calls to the fixture server: each span's name, kind, parent and attributes, the context
the server received, and the duration histograms' names, units and buckets."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mcp_client
from conftest import BINDING, REQUEST_TIMEOUT_MS
from mcp_client import otel
from test_http import start_http  # noqa: F401 - the fixture, reused

trace = pytest.importorskip("opentelemetry.trace")
from opentelemetry import baggage, context  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

CLIENT = trace.SpanKind.CLIENT
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
STDIO = {"mcp.protocol.version": "2026-07-28", "network.transport": "pipe"}


class Otel:
    """A tracer provider and a meter provider of the SDK, both in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.host = self.tracer_provider.get_tracer("host")

    def instrument(self, client, **options) -> otel.Instrumentation:
        inst = otel.instrument(
            client, tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )
        assert inst.active
        return inst

    def spans(self, kind=None) -> list:
        return [s for s in self.exporter.get_finished_spans() if kind is None or s.kind == kind]

    def histogram(self, name: str) -> list[tuple[dict, int, float]]:
        """(attributes, count, sum) of each data point of the histogram ``name``, after checking
        its unit and bucket boundaries."""
        found = []
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name != name:
                        continue
                    assert sm.scope.name == "mcp_client"
                    assert m.unit == "s"
                    for point in m.data.data_points:
                        assert tuple(point.explicit_bounds) == BUCKETS
                        found.append((dict(point.attributes), point.count, point.sum))
        return found

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


@pytest.fixture
def ot():
    o = Otel()
    yield o
    otel.uninstrument()
    o.shutdown()


def traceparent_of(span) -> str:
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def check_span(span, name, parent, attributes, *, request_id=True, status=trace.StatusCode.UNSET, description=None):
    """The exact name, kind, parent, attributes and status of a CLIENT span of the bridge."""
    assert span.name == name
    assert span.kind == CLIENT
    if parent is None:
        assert span.parent is None
    else:
        assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id, span.parent
        assert span.context.trace_id == parent.get_span_context().trace_id
    got = dict(span.attributes)
    if request_id:
        assert got.pop("jsonrpc.request.id").isdigit()
    assert got == attributes
    assert span.status.status_code == status
    assert span.status.description == description
    assert span.end_time >= span.start_time > 0


def without_id(attributes: dict) -> dict:
    return {k: v for k, v in attributes.items() if k not in ("jsonrpc.request.id", "mcp.session.id")}


def tool_attrs(tool: str, **more) -> dict:
    return {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool", **STDIO, **more}


def warm(c):
    """Connects, and lets the client list the tools (it does when a tool that declares an output
    schema is first called), before the test looks: those operations are not the test's."""
    c.call_tool("echo", {"text": "warm"})
    c.call_tool("echo_meta")


def test_a_successful_call_is_a_child_client_span_and_the_server_sees_it(make_client, ot):
    c = make_client()
    warm(c)
    records = []
    inst = ot.instrument(c)

    def both(record):  # the host's own listener composed with the bridge's
        records.append(record)
        inst.record(record)

    c.on_span(both)
    token = context.attach(baggage.set_baggage("user", "alice"))
    try:
        with ot.host.start_as_current_span("request") as request:
            seen = c.call_tool("echo_meta")["structuredContent"]
    finally:
        context.detach(token)
    (span,) = ot.spans(CLIENT)
    check_span(span, "tools/call echo_meta", request, tool_attrs("echo_meta"))
    # the server's parent is the client span; the record's parent names it; the baggage goes too
    assert seen["traceparent"] == traceparent_of(span)
    assert seen["baggage"] == "user=alice"
    (record,) = records
    assert record["record"] == "span" and record["parent"]["traceparent"] == seen["traceparent"]
    assert span.end_time == record["end_unix_nano"]
    assert inst.pending == 0
    ((attrs, count, total),) = ot.histogram(otel.OPERATION_DURATION)
    assert attrs == without_id(dict(span.attributes)) and count == 1
    assert total == pytest.approx((record["end_unix_nano"] - record["start_unix_nano"]) / 1e9)


def test_a_call_without_a_current_span_is_a_root_client_span(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    seen = c.call_tool("echo_meta")["structuredContent"]
    (span,) = ot.spans()
    check_span(span, "tools/call echo_meta", None, tool_attrs("echo_meta"))
    assert seen["traceparent"] == traceparent_of(span)


def test_a_tool_error_is_an_error_span(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        assert c.call_tool("fail")["isError"] is True
    (span,) = ot.spans(CLIENT)
    want = tool_attrs("fail", **{"error.type": "tool_error"})
    check_span(span, "tools/call fail", request, want, status=trace.StatusCode.ERROR, description="tool_error")
    ((attrs, count, _),) = ot.histogram(otel.OPERATION_DURATION)
    assert attrs == want and count == 1


def test_a_protocol_error_carries_the_json_rpc_code_and_message(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        with pytest.raises(mcp_client.RpcError):
            c.get_prompt("nope")
    (span,) = ot.spans(CLIENT)
    want = {
        "mcp.method.name": "prompts/get",
        "gen_ai.prompt.name": "nope",
        "rpc.response.status_code": "-32602",
        "error.type": "-32602",
        **STDIO,
    }
    check_span(span, "prompts/get nope", request, want, status=trace.StatusCode.ERROR, description="Unknown prompt: nope")
    ((attrs, count, _),) = ot.histogram(otel.OPERATION_DURATION)
    assert attrs == want and count == 1


def test_a_timeout_is_an_error_span(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        with pytest.raises(mcp_client.MCPTimeoutError):
            c.call_tool("hang", timeout=0.3)
    (span,) = ot.spans(CLIENT)
    assert span.status.description.startswith("tools/call (request ")
    check_span(
        span,
        "tools/call hang",
        request,
        tool_attrs("hang", **{"error.type": "timeout"}),
        status=trace.StatusCode.ERROR,
        description=span.status.description,
    )
    assert (span.end_time - span.start_time) / 1e9 >= 0.3
    ((attrs, count, total),) = ot.histogram(otel.OPERATION_DURATION)
    assert attrs["error.type"] == "timeout" and count == 1 and total >= 0.3


def test_an_mrtr_call_with_two_rounds_is_one_span_with_two_round_events(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        seen = c.call_tool("state_only")
    assert seen["content"][0]["text"] == "done after 2 state-only rounds"
    (span,) = ot.spans(CLIENT)
    check_span(span, "tools/call state_only", request, tool_attrs("state_only"))
    rounds = [(e.name, dict(e.attributes)) for e in span.events]
    assert rounds == [
        ("mcp.mrtr.round", {"mcp.mrtr.round": 1, "mcp.mrtr.input_requests": 0}),
        ("mcp.mrtr.round", {"mcp.mrtr.round": 2, "mcp.mrtr.input_requests": 0}),
    ]
    assert span.start_time <= span.events[0].timestamp <= span.events[1].timestamp <= span.end_time
    ((_, count, _),) = ot.histogram(otel.OPERATION_DURATION)
    assert count == 1


def test_a_reconnect_retries_the_list_inside_one_span(make_client, ot):
    # The server exits when its second tools/list arrives, without answering: under a reconnect
    # policy the list goes again on a new connection, inside the same operation.
    c = make_client("--exit-after-lists", "2", reconnect={"max_attempts": 3, "initial_backoff_ms": 20})
    c.call_tool("echo", {"text": "connect"})
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        assert c.list_tools()["tools"]
        assert c.list_tools()["tools"]
    c.close(wait=10)
    first, reconnected, retried = ot.spans(CLIENT)
    listed = {"mcp.method.name": "tools/list", **STDIO}
    check_span(first, "tools/list", request, listed)
    check_span(retried, "tools/list", request, listed)
    # the reconnect's handshake: a span of its own under the call that reconnected
    discovered = {"mcp.method.name": "server/discover", **STDIO}
    check_span(reconnected, "server/discover", retried, discovered)
    assert first.events == ()
    assert [(e.name, dict(e.attributes)) for e in retried.events] == [("mcp.reconnect.retry", {"mcp.retry.attempt": 1})]
    assert retried.start_time < retried.events[0].timestamp < retried.end_time
    points = sorted((attrs["mcp.method.name"], attrs, count) for attrs, count, _ in ot.histogram(otel.OPERATION_DURATION))
    assert points == [("server/discover", discovered, 1), ("tools/list", listed, 2)]
    # Two sessions ended: the one the server's exit lost, and the one the close ended.
    sessions = sorted(ot.histogram(otel.SESSION_DURATION), key=lambda p: len(p[0]))
    assert [(attrs, count) for attrs, count, _ in sessions] == [(STDIO, 1), ({**STDIO, "error.type": "server_exited"}, 1)]
    assert all(total > 0 for _, _, total in sessions)


def test_a_renewed_legacy_session_is_an_event_of_the_call_that_met_it(start_http, ot):  # noqa: F811
    # A legacy HTTP session the server expires after two requests (initialize and the first
    # list): the second list meets the 404, and the client starts a new session and sends the
    # list again, inside the same operation.
    url = start_http("--era", "legacy", "--expire-session-after", "2")
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    c = mcp_client.Client.http(url, request_timeout_ms=REQUEST_TIMEOUT_MS, reconnect={"max_attempts": 3})
    try:
        ot.instrument(c)
        with ot.host.start_as_current_span("request") as request:
            for _ in range(3):
                assert c.list_tools()["tools"]
    finally:
        c.close(wait=10)
    spans = ot.spans(CLIENT)
    http = {
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "server.address": "127.0.0.1",
        "server.port": port,
    }
    listed = {"mcp.method.name": "tools/list", **http}
    # The connect inside the first list: its initialize, under that list's span.
    # The connect inside the first list (auto mode): the probe the legacy server refused, then
    # its initialize, both under that list's span.
    probe, init = [s for s in spans if s.name in ("server/discover", "initialize")]
    spans = [s for s in spans if s.name == "tools/list"]
    wire = {k: v for k, v in http.items() if k != "mcp.protocol.version"}
    refused = {"mcp.method.name": "server/discover", **wire, "error.type": "-32000", "rpc.response.status_code": "-32000"}
    check_span(probe, "server/discover", spans[0], refused, status=trace.StatusCode.ERROR, description=probe.status.description)
    first_session = {"mcp.session.id": spans[0].attributes.get("mcp.session.id")}
    check_span(init, "initialize", spans[0], {"mcp.method.name": "initialize", **http, **first_session})
    sessions = []
    for span in spans:
        sessions.append(span.attributes["mcp.session.id"])
        check_span(span, "tools/list", request, {**listed, "mcp.session.id": sessions[-1]})
    assert len(spans) == 3
    assert sessions[0] != sessions[1] == sessions[2], "the second list ran on a new session"
    events = [[(e.name, dict(e.attributes)) for e in span.events] for span in spans]
    assert events == [[], [("mcp.session.renewed", {"http.response.status_code": 404})], []]
    points = {attrs["mcp.method.name"]: (attrs, count, total) for attrs, count, total in ot.histogram(otel.OPERATION_DURATION)}
    assert sorted(points) == ["initialize", "server/discover", "tools/list"]
    attrs, count, total = points["tools/list"]
    assert attrs == listed and count == 3
    assert total == pytest.approx(sum((s.end_time - s.start_time) / 1e9 for s in spans), abs=0.01)
    assert points["initialize"][:2] == ({"mcp.method.name": "initialize", **http}, 1)
    # The expired session and the one the close ended, without their ids.
    ended = sorted(ot.histogram(otel.SESSION_DURATION), key=lambda p: len(p[0]))
    assert [(attrs, count) for attrs, count, _ in ended] == [(http, 1), ({**http, "error.type": "session_expired"}, 1)]


def test_a_session_record_is_the_session_histogram_value(ot):
    inst = otel.Instrumentation(tracer_provider=ot.tracer_provider, meter_provider=ot.meter_provider)
    attrs = {"mcp.protocol.version": "2025-11-25", "network.transport": "tcp", "server.address": "h", "server.port": 1}
    inst.record(
        {
            "record": "session",
            "start_unix_nano": 1_000_000_000,
            "end_unix_nano": 3_500_000_000,
            "attributes": {**attrs, "mcp.session.id": "abc", "error.type": "server_exited"},
        }
    )
    assert ot.histogram(otel.SESSION_DURATION) == [({**attrs, "error.type": "server_exited"}, 1, 2.5)]
    assert ot.histogram(otel.OPERATION_DURATION) == [] and ot.spans() == []


def host_tool_span(ot, tool):
    return ot.host.start_as_current_span(
        f"execute_tool {tool}", attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    )


def test_an_open_execute_tool_span_is_enriched_not_duplicated(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with host_tool_span(ot, "echo_meta") as tool_span:
        seen = c.call_tool("echo_meta")["structuredContent"]
        assert ot.spans() == [], "nothing ended: the host's span is still open"
        # The server's parent is the host's span itself.
        assert seen["traceparent"] == traceparent_of(tool_span)
        # Another operation under it is a child CLIENT span, and so is a second tool call.
        c.list_tools()
        c.call_tool("echo", {"text": "again"})
    spans = ot.spans()
    assert [s.name for s in spans] == ["tools/list", "tools/call echo", "execute_tool echo_meta"]
    listed, again, host = spans
    assert host.kind == trace.SpanKind.INTERNAL
    attrs = dict(host.attributes)
    assert attrs.pop("jsonrpc.request.id").isdigit()
    assert attrs == tool_attrs("echo_meta")
    check_span(listed, "tools/list", tool_span, {"mcp.method.name": "tools/list", **STDIO})
    check_span(again, "tools/call echo", tool_span, tool_attrs("echo"))
    assert len(ot.histogram(otel.OPERATION_DURATION)) == 3


def test_an_execute_tool_span_gets_the_error_and_a_span_for_another_tool_is_not_taken(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    with host_tool_span(ot, "fail") as tool_span:
        c.call_tool("fail")
    with host_tool_span(ot, "search") as other:
        c.call_tool("echo", {"text": "not search"})
    fail_host, echo, other_host = ot.spans()
    assert fail_host.name == "execute_tool fail" and fail_host.status.status_code == trace.StatusCode.ERROR
    assert fail_host.context.span_id == tool_span.get_span_context().span_id
    assert dict(fail_host.attributes)["error.type"] == "tool_error"
    check_span(echo, "tools/call echo", other, tool_attrs("echo"))
    assert dict(other_host.attributes) == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}


def test_enrichment_can_be_turned_off(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c, enrich_execute_tool=False)
    with host_tool_span(ot, "echo") as tool_span:
        c.call_tool("echo", {"text": "x"})
    nested, host = ot.spans()
    check_span(nested, "tools/call echo", tool_span, tool_attrs("echo"))
    assert "mcp.method.name" not in host.attributes


def test_a_call_with_its_own_context_is_a_span_under_that_context(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c)
    own = "00-11111111111111111111111111111111-2222222222222222-01"
    with ot.host.start_as_current_span("request"):
        seen = c.call_tool("echo_meta", meta={"traceparent": own})["structuredContent"]
    assert seen["traceparent"] == own
    (span,) = ot.spans(CLIENT)
    assert span.parent.span_id == 0x2222222222222222 and span.parent.is_remote
    assert span.context.trace_id == 0x11111111111111111111111111111111
    assert span.name == "tools/call echo_meta"


def test_the_async_client_parents_each_call_on_its_task_span(fixture_server, ot):
    async def main():
        async with mcp_client.AsyncClient.stdio(fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
            await c.call_tool("echo_meta")  # as warm()
            ot.instrument(c)

            async def one(name):
                with ot.host.start_as_current_span(name) as parent:
                    await asyncio.sleep(0)
                    seen = (await c.call_tool("echo_meta"))["structuredContent"]
                    return parent, seen

            return await asyncio.gather(one("a"), one("b"))

    (a, seen_a), (b, seen_b) = asyncio.run(main())
    spans = {s.parent.span_id: s for s in ot.spans(CLIENT)}
    assert len(spans) == 2
    for parent, seen in ((a, seen_a), (b, seen_b)):
        span = spans[parent.get_span_context().span_id]
        check_span(span, "tools/call echo_meta", parent, tool_attrs("echo_meta"))
        assert seen["traceparent"] == traceparent_of(span)


def test_the_async_client_enriches_its_task_execute_tool_span(fixture_server, ot):
    async def main():
        async with mcp_client.AsyncClient.stdio(fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
            await c.call_tool("echo_meta")  # as warm()
            ot.instrument(c)
            with host_tool_span(ot, "echo_meta") as tool_span:
                seen = (await c.call_tool("echo_meta"))["structuredContent"]
            return tool_span, seen

    tool_span, seen = asyncio.run(main())
    (host,) = ot.spans()
    assert seen["traceparent"] == traceparent_of(tool_span)
    assert dict(host.attributes)["mcp.method.name"] == "tools/call"


def test_global_instrumentation_takes_new_clients_until_uninstrumented(fixture_server, ot):
    inst = otel.instrument(tracer_provider=ot.tracer_provider, meter_provider=ot.meter_provider)
    with mcp_client.Client.stdio(fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
        c.call_tool("echo", {"text": "a"})
    assert "tools/call echo" in [s.name for s in ot.spans(CLIENT)]
    otel.uninstrument()
    ot.exporter.clear()
    with mcp_client.Client.stdio(fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS) as c:
        c.call_tool("echo", {"text": "b"})
        assert "traceparent" not in c.call_tool("echo_meta")["structuredContent"]
    assert ot.spans() == [] and inst.pending == 0


def test_metrics_only(make_client, ot):
    c = make_client()
    warm(c)
    ot.instrument(c, spans=False)
    with ot.host.start_as_current_span("request") as request:
        seen = c.call_tool("echo_meta")["structuredContent"]
    assert ot.spans(CLIENT) == []
    assert seen["traceparent"] == traceparent_of(request), "the current context still goes on the wire"
    ((attrs, count, _),) = ot.histogram(otel.OPERATION_DURATION)
    assert attrs == tool_attrs("echo_meta") and count == 1


def test_without_opentelemetry_instrument_installs_nothing(fixture_server):
    # A child interpreter where importing opentelemetry fails, as when it is not installed.
    script = textwrap.dedent(
        f"""
        import importlib.abc, json, logging, sys
        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError("hidden: " + name)
        sys.meta_path.insert(0, Hide())
        sys.path.insert(0, {str(BINDING)!r})
        logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="log: %(name)s %(message)s")
        import mcp_client
        from mcp_client import otel
        records = []
        with mcp_client.Client.stdio({fixture_server!r}, []) as c:
            c.on_span(records.append)  # the host's own listener stays
            inst = otel.instrument(c)
            glob = otel.instrument()
            seen = c.call_tool("echo_meta")["structuredContent"]
        print(json.dumps({{
            "available": otel.available(),
            "active": [inst.active, glob.active],
            "traceparent": "traceparent" in seen,
            "records": "tools/call echo_meta" in [r.get("name") for r in records],
            "context": mcp_client.opentelemetry_context(),
            "imported": sorted(m for m in sys.modules if m.startswith("opentelemetry")),
        }}))
        """
    )
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    said = [line for line in lines if line.startswith("log: mcp_client.otel ")]
    assert said == ["log: mcp_client.otel opentelemetry-api is not installed: mcp_client.otel.instrument() installs nothing"]
    assert json.loads(lines[-1]) == {
        "available": False,
        "active": [False, False],
        "traceparent": False,
        "records": True,
        "context": {},
        "imported": [],
    }


def test_odd_records_never_raise_and_waiting_spans_are_bounded(ot, monkeypatch):
    inst = otel.Instrumentation(
        tracer_provider=ot.tracer_provider, meter_provider=ot.meter_provider
    )
    for odd in (
        {},
        {"record": "nothing"},
        {"record": "span", "attributes": {"a": {"b": [1]}, "n": None}, "events": [1, {"name": "e"}], "status": "bad"},
        {"record": "span", "parent": {"traceparent": "00-zz"}, "start_unix_nano": "12", "end_unix_nano": 1.5},
        {"record": "session", "attributes": []},
    ):
        inst.record(odd)
    names = [s.name for s in ot.spans()]
    assert names == ["mcp", "mcp", "mcp"]
    odd_span = ot.spans()[1]
    assert dict(odd_span.attributes) == {"a": '{"b":[1]}'} and [e.name for e in odd_span.events] == ["e"]
    monkeypatch.setattr(otel, "MAX_PENDING", 3)
    with ot.host.start_as_current_span("request"):
        contexts = [inst.trace_context() for _ in range(5)]
    assert all(c["traceparent"].startswith("00-") for c in contexts)
    assert inst.pending == 3, "the oldest waiting spans were dropped"
    # The last one still pairs with its record.
    inst.record({"record": "span", "name": "tools/list", "parent": contexts[-1], "attributes": {"mcp.method.name": "tools/list"}})
    assert inst.pending == 2 and "tools/list" in [s.name for s in ot.spans()]


def test_tool_payloads_are_opt_in_span_attributes_kept_out_of_the_metric(make_client, ot):
    c = make_client(span_tool_payloads=True)
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        result = c.call_tool("echo", {"text": "payload"})
    (span,) = ot.spans(CLIENT)
    attrs = dict(span.attributes)
    arguments = json.loads(attrs.pop("gen_ai.tool.call.arguments"))
    returned = json.loads(attrs.pop("gen_ai.tool.call.result"))
    assert arguments == {"text": "payload"}
    assert returned["content"] == result["content"]
    payloads = {k: span.attributes[k] for k in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")}
    check_span(span, "tools/call echo", request, {**tool_attrs("echo"), **payloads})
    ((metric, count, _),) = ot.histogram(otel.OPERATION_DURATION)
    assert metric == tool_attrs("echo") and count == 1


def test_each_page_of_an_all_pages_list_is_a_span_under_the_caller(fixture_server, make_client, ot):
    # A blocking all-pages list asks for the context once per page, a started one once for all
    # its pages: either way each page is a CLIENT span under the caller's span.
    c = make_client("--page-size", "10")
    warm(c)
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        tools = c.all_tools()
    pages = -(-len(tools) // 10)
    assert pages >= 2
    listed = {"mcp.method.name": "tools/list", **STDIO}
    spans = ot.spans(CLIENT)
    assert len(spans) == pages
    for span in spans:
        check_span(span, "tools/list", request, listed)
    ot.exporter.clear()

    async def main():
        async with mcp_client.AsyncClient.stdio(
            fixture_server, ["--page-size", "10"], request_timeout_ms=REQUEST_TIMEOUT_MS
        ) as a:
            await a.call_tool("echo_meta")  # as warm()
            ot.instrument(a)
            with ot.host.start_as_current_span("request") as parent:
                return parent, await a.all_tools()

    parent, again = asyncio.run(main())
    assert len(again) == len(tools)
    spans = ot.spans(CLIENT)
    assert len(spans) == pages
    for span in spans:
        check_span(span, "tools/list", parent, listed)


def test_a_connect_inside_the_first_call_is_a_child_of_its_span(make_client, ot):
    c = make_client()
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        c.call_tool("echo", {"text": "first"})
    spans = {s.name: s for s in ot.spans(CLIENT)}
    assert sorted(spans) == ["server/discover", "tools/call echo"]
    call, discover = spans["tools/call echo"], spans["server/discover"]
    check_span(call, "tools/call echo", request, tool_attrs("echo"))
    check_span(discover, "server/discover", call, {"mcp.method.name": "server/discover", **STDIO})
    assert call.start_time <= discover.start_time and discover.end_time <= call.end_time
    # the next call connects no more
    c.call_tool("echo", {"text": "second"})
    assert [s.name for s in ot.spans(CLIENT)].count("server/discover") == 1


def test_the_output_schema_list_of_a_first_call_is_its_sibling(make_client, ot):
    c = make_client()
    c.call_tool("echo", {"text": "connect"})
    ot.instrument(c)
    with ot.host.start_as_current_span("request") as request:
        seen = c.call_tool("echo_meta")["structuredContent"]
    spans = {s.name: s for s in ot.spans(CLIENT)}
    assert sorted(spans) == ["tools/call echo_meta", "tools/list"]
    call = spans["tools/call echo_meta"]
    check_span(call, "tools/call echo_meta", request, tool_attrs("echo_meta"))
    check_span(spans["tools/list"], "tools/list", request, {"mcp.method.name": "tools/list", **STDIO})
    assert seen["traceparent"] == traceparent_of(call)
