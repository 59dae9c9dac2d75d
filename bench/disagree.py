#!/usr/bin/env python3
"""Why `make bench` and a second harness disagreed, checked by measurement.

Interleaved rounds of sequential stdio calls for the raw baseline, the C ABI and rmcp on both
tokio runtimes, against the fixture (`--fast`) and against the minimal canned-reply server
(bench/c/mini_server.c), with the usual 500-call warm-up and with none. Prints, per case, the
median, range and best round, and the C ABI's ratios as median of per-round ratios and as best
round against best round. Needs the runners built (`python3 bench/run.py --sections seq` or
`make bench` once); writes nothing.

    python3 bench/disagree.py [--rounds N] [--duration S]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.0)
    args = ap.parse_args()
    run.build_mini_server()
    r = run.Runners(args.duration, {})
    servers = {"fixture": ["--", *run.STDIO_SERVER], "minimal": ["--", *run.MINI_SERVER]}
    cases = [("raw", []), ("cabi", []), ("rmcp", ["--runtime", "current"]), ("rmcp", ["--runtime", "multi"])]
    runs: dict[str, list[float | None]] = {}
    load0 = os.getloadavg()[0]
    for _ in range(args.rounds):
        for srv, target in servers.items():
            for warm in (500, 0):
                if warm == 0 and srv == "minimal":
                    continue
                for runner, extra in cases:
                    key = f"{srv}/warmup {warm}/{'/'.join([runner, *extra[1:]])}"
                    res = r.run(runner, "seq", target, [*extra, "--duration", str(args.duration), "--warmup",
                                                        str(warm)], args.duration * 2 + 30)
                    runs.setdefault(key, []).append(res.get("per_sec"))
    print(f"load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end, {os.cpu_count()} cores, "
          f"{args.rounds} interleaved rounds of {args.duration} s")
    print(f"{'case':44} {'median/s':>9} {'min':>9} {'max(best)':>9}")
    for key, vals in runs.items():
        ok = sorted(v for v in vals if v)
        if ok:
            print(f"{key:44} {statistics.median(ok):9.0f} {ok[0]:9.0f} {ok[-1]:9.0f}")
    print("\nC ABI ÷ other: median of per-round ratios (range) | best round ÷ best round")
    for key, vals in runs.items():
        other = key.split("/", 2)[2]  # server/warm-up/runner[/runtime]
        base = key[: -len(other)]
        if other == "cabi":
            continue
        mine = runs.get(base + "cabi") or []
        pairs = [a / b for a, b in zip(mine, vals) if a and b]
        if pairs:
            best = max(v for v in mine if v) / max(v for v in vals if v)
            print(f"{key:44} {statistics.median(pairs):5.2f} ({min(pairs):.2f}-{max(pairs):.2f}) | {best:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
