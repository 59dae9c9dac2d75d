"""The Python SDK client (package `mcp`, pinned by bench/run.py, run in its own venv) under the
bench tests: seq, conc (asyncio tasks on one client), mrtr, connect. Default connect mode
("auto": server/discover on the same connection)."""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from mcp import types  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

ARGS = {"text": "hi"}


async def elicit(context, params):  # noqa: ANN001
    return types.ElicitResult(action="accept", content={"name": "bench"})


def client_for(a: harness.Args, elicitation: bool = False) -> Client:
    server = a.url if a.url else StdioServerParameters(command=a.cmd[0], args=a.cmd[1:])
    return Client(server, elicitation_callback=elicit if elicitation else None)


async def main() -> None:
    a = harness.parse_args(sys.argv[1:])
    out: dict = {}
    if a.test == "seq":
        async with client_for(a) as client:
            for _ in range(a.warmup):
                await client.call_tool("echo", ARGS)
            cpu0 = harness.cpu_us()
            lat, calls, secs = await harness.atimed(lambda: client.call_tool("echo", ARGS), a.duration, a.max_calls)
            cpu = harness.cpu_us() - cpu0
            out = {**harness.series("", lat, calls, secs), "cpu_us_per_call": cpu / max(1, calls),
                   "rss_kb": harness.rss_kb()}
    elif a.test == "conc":
        async with client_for(a) as client:
            for _ in range(a.warmup):
                await client.call_tool("echo", ARGS)
            out = await harness.gathered(lambda: client.call_tool("echo", ARGS), a.inflight, a.duration)
    elif a.test == "mrtr":
        async with client_for(a, elicitation=True) as client:
            for _ in range(a.warmup):
                await client.call_tool("echo", ARGS)
                await client.call_tool("elicit_once", ARGS)
            p = await harness.atimed(lambda: client.call_tool("echo", ARGS), a.duration / 2, a.max_calls)
            m = await harness.atimed(lambda: client.call_tool("elicit_once", ARGS), a.duration / 2, a.max_calls)
            out = {**harness.series("plain_", *p), **harness.series("mrtr_", *m)}
    elif a.test == "connect":
        conn: list[int] = []
        first: list[int] = []
        close: list[int] = []
        deadline = time.perf_counter_ns() + int(a.duration * 1e9)
        while len(conn) < a.iterations and time.perf_counter_ns() < deadline:
            client = client_for(a)
            t0 = time.perf_counter_ns()
            await client.__aenter__()
            t1 = time.perf_counter_ns()
            await client.call_tool("echo", ARGS)  # spawn to first result
            tf = time.perf_counter_ns()
            await client.__aexit__(None, None, None)
            t2 = time.perf_counter_ns()
            conn.append(t1 - t0)
            first.append(tf - t0)
            close.append(t2 - tf)
        out = harness.connect_fields(conn, first, close)
    else:
        raise SystemExit(f"bench: unknown test {a.test}")
    harness.emit("python-sdk", a.test, out)


if __name__ == "__main__":
    asyncio.run(main())
