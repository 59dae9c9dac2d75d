"""Shared harness of the Python bench runners: arguments, latency statistics, the result line.

Arguments: TEST [--duration S] [--warmup N] [--max-calls N] [--inflight N] [--iterations N]
[--calls N] (--url URL | -- SERVER [ARGS...]). Each run prints one JSON object on stdout.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Args:
    test: str
    duration: float = 2.0
    warmup: int = 500
    max_calls: int = 200_000
    inflight: int = 1
    iterations: int = 50
    calls: int = 100_000
    url: str | None = None
    cmd: list[str] = field(default_factory=list)


def parse_args(argv: list[str]) -> Args:
    a = Args(test=argv[0])
    i = 1
    while i < len(argv):
        flag = argv[i]
        if flag == "--":
            a.cmd = argv[i + 1 :]
            break
        value = argv[i + 1]
        i += 2
        if flag == "--duration":
            a.duration = float(value)
        elif flag in ("--warmup", "--max-calls", "--inflight", "--iterations", "--calls"):
            setattr(a, flag[2:].replace("-", "_"), int(value))
        elif flag == "--url":
            a.url = value
        else:
            raise SystemExit(f"bench: unknown option {flag}")
    if not a.url and not a.cmd:
        raise SystemExit("bench: no server: --url URL or -- SERVER ARGS...")
    return a


def cpu_us() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1e6


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def series(prefix: str, lat_ns: list[int], calls: int, seconds: float) -> dict:
    lat = sorted(lat_ns)

    def pct(p: float) -> float:
        if not lat:
            return 0.0
        return lat[min(len(lat) - 1, round(p / 100 * (len(lat) - 1)))] / 1000

    return {
        f"{prefix}calls": calls,
        f"{prefix}seconds": seconds,
        f"{prefix}per_sec": calls / seconds if seconds > 0 else 0.0,
        f"{prefix}p50_us": pct(50),
        f"{prefix}p99_us": pct(99),
        f"{prefix}mean_us": (sum(lat) / len(lat) / 1000) if lat else 0.0,
    }


def timed(call, seconds: float, max_calls: int) -> tuple[list[int], int, float]:
    """Calls `call()` sequentially for `seconds` (at most `max_calls` times)."""
    lat: list[int] = []
    now = time.perf_counter_ns
    start = now()
    deadline = start + int(seconds * 1e9)
    t = start
    while len(lat) < max_calls and t < deadline:
        call()
        t2 = now()
        lat.append(t2 - t)
        t = t2
    return lat, len(lat), (t - start) / 1e9


def connect_fields(conn: list[int], first: list[int], close: list[int]) -> dict:
    """The connect test's result: p50 and p99 of connect, of connect + first call, and of close."""
    c = series("connect_", conn, len(conn), 0)
    d = series("close_", close, len(close), 0)
    f = series("first_", first, len(first), 0)
    return {"iterations": len(conn), "connect_p50_us": c["connect_p50_us"], "connect_p99_us": c["connect_p99_us"],
            "first_p50_us": f["first_p50_us"], "first_p99_us": f["first_p99_us"],
            "close_p50_us": d["close_p50_us"], "close_p99_us": d["close_p99_us"]}


async def atimed(call, seconds: float, max_calls: int) -> tuple[list[int], int, float]:
    """As `timed`, awaiting `call()`."""
    lat: list[int] = []
    now = time.perf_counter_ns
    start = now()
    deadline = start + int(seconds * 1e9)
    t = start
    while len(lat) < max_calls and t < deadline:
        await call()
        t2 = now()
        lat.append(t2 - t)
        t = t2
    return lat, len(lat), (t - start) / 1e9


async def gathered(call, inflight: int, seconds: float) -> dict:
    """`inflight` asyncio tasks each awaiting `call()` in a loop for `seconds`, gathered: the
    series of all their calls over the wall time."""
    start = time.perf_counter_ns()
    deadline = start + int(seconds * 1e9)

    async def work() -> list[int]:
        lat: list[int] = []
        t = time.perf_counter_ns()
        while t < deadline:
            await call()
            t2 = time.perf_counter_ns()
            lat.append(t2 - t)
            t = t2
        return lat

    lats = await asyncio.gather(*(work() for _ in range(inflight)))
    all_lat = [x for lat in lats for x in lat]
    return {"inflight": inflight, **series("", all_lat, len(all_lat), (time.perf_counter_ns() - start) / 1e9)}


def emit(runner: str, test: str, fields: dict) -> None:
    sys.stdout.write(json.dumps({"runner": runner, "test": test, **fields}) + "\n")
    sys.stdout.flush()
