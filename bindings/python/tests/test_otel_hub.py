"""mcp_client.otel on a hub (and the hub's own span listener and trace context source), against
opentelemetry-sdk's in-memory exporter and metric reader, with fixture servers as members: each
member's spans named by mcp.server.name, parented on the caller's span, the context its server
received, members added later, the host's execute_tool span, the async hub, global
instrumentation."""

from __future__ import annotations

import asyncio

import pytest

import mcp_client
from conftest import REQUEST_TIMEOUT_MS
from mcp_client import otel

trace = pytest.importorskip("opentelemetry.trace")
from test_otel import CLIENT, STDIO, check_span, host_tool_span, ot, tool_attrs, traceparent_of, without_id  # noqa: E402,F401


def member(fixture_server):
    return {
        "command": fixture_server,
        "probe_timeout_ms": 500,
        "shutdown_grace_ms": 500,
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
    }


def warm(hub, *tools):
    """Starts the hub and lets it list its members' tools (a routed call's first step) and call
    each tool once, before the test looks: those operations are not the test's."""
    hub.start()
    hub.list_tools()
    for tool in tools:
        hub.call_tool(tool)


def listed(server):
    return {"mcp.method.name": "tools/list", **STDIO, "mcp.server.name": server}


def test_the_hub_listener_and_source_cover_every_member_and_name_it(fixture_server):
    records = []
    asked = []

    def source():
        asked.append(f"00-4bf92f3577b34da6a3ce929d0e0e4736-{len(asked) + 1:016x}-01")
        return {"traceparent": asked[-1], "baggage": "tenant=a"}

    with mcp_client.Hub({"fix": member(fixture_server), "alt": member(fixture_server)}) as hub:
        hub.on_span(records.append)
        hub.set_trace_context(source)
        warm(hub, "fix__echo_meta", "alt__echo_meta")
        records.clear()
        asked.clear()
        seen = hub.call_tool("alt__echo_meta")["structuredContent"]
        # Delivered before the call returned: one record, named by its member, under the context
        # the source gave, which is what the member's server received.
        (record,) = records
        assert record["name"] == "tools/call echo_meta"
        assert record["attributes"]["mcp.server.name"] == "alt"
        assert asked == [seen["traceparent"]] == [record["parent"]["traceparent"]]
        assert seen["baggage"] == "tenant=a"
        # A member added later has both, and its first listing is asked for too.
        hub.add_member("late", member(fixture_server))
        hub.start()
        records.clear()
        asked.clear()
        seen = hub.call_tool("late__echo_meta")["structuredContent"]
        by_name = {(r["name"], r["attributes"]["mcp.server.name"]): r for r in records}
        assert set(by_name) == {("tools/list", "late"), ("tools/call echo_meta", "late")}
        assert by_name[("tools/call echo_meta", "late")]["parent"]["traceparent"] == seen["traceparent"]
        assert sorted(r["parent"]["traceparent"] for r in records) == sorted(asked)
        # Removed: no more records, nothing asked.
        hub.on_span(None)
        hub.set_trace_context(None)
        records.clear()
        asked.clear()
        seen = hub.call_tool("fix__echo_meta")["structuredContent"]
        assert records == [] and asked == [] and "traceparent" not in seen


def test_an_instrumented_hub_makes_member_spans_under_the_caller(fixture_server, ot):
    with mcp_client.Hub({"fix": member(fixture_server), "alt": member(fixture_server)}) as hub:
        warm(hub, "fix__echo_meta", "alt__echo_meta")
        inst = ot.instrument(hub)
        with ot.host.start_as_current_span("request") as request:
            seen = hub.call_tool("alt__echo_meta")["structuredContent"]
        (span,) = ot.spans(CLIENT)
        check_span(span, "tools/call echo_meta", request, tool_attrs("echo_meta", **{"mcp.server.name": "alt"}))
        assert seen["traceparent"] == traceparent_of(span)
        assert inst.pending == 0
        ((attrs, count, _),) = ot.histogram(otel.OPERATION_DURATION)
        assert attrs == without_id(dict(span.attributes)) and attrs["mcp.server.name"] == "alt" and count == 1

        # A merged list of members whose lists are not held: one span per member, each its own.
        hub.add_member("late", member(fixture_server))
        hub.start()
        ot.exporter.clear()
        with ot.host.start_as_current_span("listing") as listing:
            names = [t["name"] for t in hub.list_tools()]
        assert "late__echo" in names
        (late_list,) = ot.spans(CLIENT)
        check_span(late_list, "tools/list", listing, listed("late"))
        assert inst.pending == 0

        # Detached: nothing more.
        inst.detach(hub)
        ot.exporter.clear()
        hub.call_tool("late__echo_meta")
        assert ot.spans() == []


def test_a_routed_call_enriches_the_hosts_execute_tool_span_for_the_exported_name(fixture_server, ot):
    with mcp_client.Hub({"fix": member(fixture_server)}) as hub:
        warm(hub, "fix__echo_meta")
        inst = ot.instrument(hub)
        with host_tool_span(ot, "fix__echo_meta") as tool_span:
            seen = hub.call_tool("fix__echo_meta")["structuredContent"]
        (host,) = ot.spans()
        assert seen["traceparent"] == traceparent_of(tool_span)
        attrs = dict(host.attributes)
        assert attrs.pop("jsonrpc.request.id").isdigit()
        # The MCP attributes and the member, the host's own name for the tool kept.
        assert attrs == tool_attrs("fix__echo_meta", **{"mcp.server.name": "fix"})
        assert inst.pending == 0


def test_a_first_routed_call_lists_under_the_caller_then_calls(fixture_server, ot):
    with mcp_client.Hub({"fix": member(fixture_server)}) as hub:
        hub.start()
        inst = ot.instrument(hub)
        with ot.host.start_as_current_span("request") as request:
            hub.call_tool("fix__echo", {"text": "first"})
        spans = {s.name: s for s in ot.spans(CLIENT)}
        # The list the call routes by is a span of its own, not named after the call.
        check_span(spans["tools/list"], "tools/list", request, listed("fix"))
        check_span(spans["tools/call echo"], "tools/call echo", request, tool_attrs("echo", **{"mcp.server.name": "fix"}))
        assert inst.pending == 0


def test_the_async_hub_parents_each_call_on_its_task_span(fixture_server, ot):
    async def main():
        async with mcp_client.AsyncHub({"fix": member(fixture_server)}) as hub:
            await hub.start()
            await hub.list_tools()
            await hub.call_tool("fix__echo_meta")
            ot.instrument(hub)

            async def one(name):
                with ot.host.start_as_current_span(name) as parent:
                    await asyncio.sleep(0)
                    seen = (await hub.call_tool("fix__echo_meta"))["structuredContent"]
                    return parent, seen

            return await asyncio.gather(one("a"), one("b"))

    pairs = asyncio.run(main())
    spans = {s.parent.span_id: s for s in ot.spans(CLIENT)}
    assert len(spans) == 2
    for parent, seen in pairs:
        span = spans[parent.get_span_context().span_id]
        check_span(span, "tools/call echo_meta", parent, tool_attrs("echo_meta", **{"mcp.server.name": "fix"}))
        assert seen["traceparent"] == traceparent_of(span)


def test_global_instrumentation_takes_new_hubs_until_uninstrumented(fixture_server, ot, tmp_path):
    otel.instrument(tracer_provider=ot.tracer_provider, meter_provider=ot.meter_provider)
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"file": {"command": "%s"}}}' % fixture_server)
    with mcp_client.Hub.from_file(config) as hub:
        hub.start()
        hub.call_tool("file__echo", {"text": "x"})
        assert {dict(s.attributes).get("mcp.server.name") for s in ot.spans(CLIENT)} == {"file"}
    otel.uninstrument()
    ot.exporter.clear()
    with mcp_client.Hub({"fix": member(fixture_server)}) as hub:
        hub.start()
        hub.call_tool("fix__echo", {"text": "x"})
    assert ot.spans() == []
