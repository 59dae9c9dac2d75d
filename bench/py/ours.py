"""Our Python binding (bindings/python, ctypes over libmcp_client) under the bench tests: seq,
conc (threads on one client), aconc (AsyncClient: asyncio tasks on one client, one loop thread),
mrtr, connect. MCP_CLIENT_LIB selects the library."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from mcp_client import AsyncClient, Client  # noqa: E402

ARGS = {"text": "hi"}


def connected(a: harness.Args, elicitation: bool = False) -> Client:
    client = Client.http(a.url) if a.url else Client.stdio(a.cmd[0], a.cmd[1:])
    if elicitation:
        client.on_elicitation(lambda params: {"action": "accept", "content": {"name": "bench"}})
    client.connect()
    return client


async def aconc(a: harness.Args) -> dict:
    """As the Python SDK runner's conc: ``a.inflight`` tasks calling in a loop, gathered."""
    client = AsyncClient(Client.http(a.url) if a.url else Client.stdio(a.cmd[0], a.cmd[1:]))
    async with client:
        await client.connect()
        for _ in range(a.warmup):
            await client.call_tool("echo", ARGS)
        out = await harness.gathered(lambda: client.call_tool("echo", ARGS), a.inflight, a.duration)
        return {**out, "threads": threading.active_count()}


def main() -> None:
    a = harness.parse_args(sys.argv[1:])
    out: dict = {}
    if a.test == "seq":
        client = connected(a)
        for _ in range(a.warmup):
            client.call_tool("echo", ARGS)
        cpu0 = harness.cpu_us()
        lat, calls, secs = harness.timed(lambda: client.call_tool("echo", ARGS), a.duration, a.max_calls)
        cpu = harness.cpu_us() - cpu0
        out = {**harness.series("", lat, calls, secs), "cpu_us_per_call": cpu / max(1, calls), "rss_kb": harness.rss_kb()}
        client.close()
    elif a.test == "conc":
        client = connected(a)
        for _ in range(a.warmup):
            client.call_tool("echo", ARGS)
        deadline = time.perf_counter_ns() + int(a.duration * 1e9)
        lats: list[list[int]] = [[] for _ in range(a.inflight)]
        go = threading.Barrier(a.inflight + 1)

        def work(lat: list[int]) -> None:
            go.wait()
            t = time.perf_counter_ns()
            while t < deadline:
                client.call_tool("echo", ARGS)
                t2 = time.perf_counter_ns()
                lat.append(t2 - t)
                t = t2

        threads = [threading.Thread(target=work, args=(lat,)) for lat in lats]
        for t in threads:
            t.start()
        start = time.perf_counter_ns()
        go.wait()
        for t in threads:
            t.join()
        all_lat = [x for lat in lats for x in lat]
        out = {"inflight": a.inflight, **harness.series("", all_lat, len(all_lat), (time.perf_counter_ns() - start) / 1e9)}
        client.close()
    elif a.test == "aconc":
        out = asyncio.run(aconc(a))
    elif a.test == "mrtr":
        client = connected(a, elicitation=True)
        for _ in range(a.warmup):
            client.call_tool("echo", ARGS)
            client.call_tool("elicit_once", ARGS)
        p = harness.timed(lambda: client.call_tool("echo", ARGS), a.duration / 2, a.max_calls)
        m = harness.timed(lambda: client.call_tool("elicit_once", ARGS), a.duration / 2, a.max_calls)
        out = {**harness.series("plain_", *p), **harness.series("mrtr_", *m)}
        client.close()
    elif a.test == "connect":
        conn: list[int] = []
        first: list[int] = []
        close: list[int] = []
        deadline = time.perf_counter_ns() + int(a.duration * 1e9)
        while len(conn) < a.iterations and time.perf_counter_ns() < deadline:
            t0 = time.perf_counter_ns()
            client = connected(a)
            t1 = time.perf_counter_ns()
            client.call_tool("echo", ARGS)  # spawn to first result
            tf = time.perf_counter_ns()
            client.close()
            t2 = time.perf_counter_ns()
            conn.append(t1 - t0)
            first.append(tf - t0)
            close.append(t2 - tf)
        out = harness.connect_fields(conn, first, close)
    else:
        raise SystemExit(f"bench: unknown test {a.test}")
    harness.emit("python", a.test, out)


if __name__ == "__main__":
    main()
