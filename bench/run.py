#!/usr/bin/env python3
"""The benchmark driver behind `make bench`.

Builds the release library, the fixture server, the Rust runners (bench/Cargo.toml, its own
workspace: rmcp never enters the root workspace) and the C runners; installs the peers into a
cache outside the repository; runs every measurement against the same server binary
(`mcp-fixture-server --fast`) and the same tool (`echo`); writes bench/results/latest.json and
bench/results/latest.md and latest.svg and prints the table with PASS/FAIL lines for the targets
(medians of interleaved rounds, with range and best round).

Every run is bounded: each measurement loop stops after --duration seconds (or its call cap),
each runner process is killed after a timeout, and servers listen on 127.0.0.1 ephemeral ports.

    python3 bench/run.py [--rounds N] [--duration S] [--quick] [--skip-build] [--no-peers]
    python3 bench/run.py --sections seq,conc,connect [--server minimal] [--warmup N]   (a subset)
    python3 bench/run.py --only cache [--lib ARCHIVE] [--fixture PATH] [--skip-build]
    python3 bench/run.py --only many [--clients 200] [--rounds 3] [--duration S] [--lib ARCHIVE] [--fixture PATH]
    python3 bench/run.py --only hub [--rounds 5] [--lib ARCHIVE] [--fixture PATH] [--skip-build]
    python3 bench/run.py --only https [--http-rounds 5] [--duration S] [--quick] [--lib ARCHIVE] [--skip-build]
    python3 bench/run.py --only large [--payload 100000] [--rounds 5] [--lib ARCHIVE] [--fixture PATH] [--skip-build]
    python3 bench/run.py --only spans [--rounds 7] [--duration S] [--lib ARCHIVE] [--fixture PATH] [--skip-build]

`--only cache` (`make bench-cache`) runs one small target instead: a cached `tools/list`
(SEP-2549 response cache) against the same call sent to the server, and checks from the
server's `--record` file that the cached calls cost no round trip (bench/results/cache.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chart import svg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
RELEASE = ROOT / "target" / "release"
# The bench workspace has its own target dir: sharing one with the root workspace would let the
# two builds of mcp_client (against different feature sets of shared deps) overwrite each other.
BENCH_TARGET = ROOT / "target" / "bench"
BENCH_RELEASE = BENCH_TARGET / "release"
CBIN = BENCH_RELEASE / "c"
LOGS = ROOT / "target" / "bench-logs"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_client" / "bench"
VENV = CACHE / "venv"
NPM = CACHE / "npm"

# Pinned peers. rmcp's pin is in bench/Cargo.toml (and bench/Cargo.lock).
PY_SDK = ("mcp", "2.3.0")
TS_CLIENT = ("@modelcontextprotocol/client", "2.4.0")

FIXTURE = RELEASE / "mcp-fixture-server"
STDIO_SERVER = [str(FIXTURE), "--fast"]
# `--server minimal`: canned replies, no JSON work (bench/c/mini_server.c), to separate server cost.
MINI_SERVER = [str(CBIN / "mini_server")]
C_FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror"]
STATIC_LIBS = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]

# What the rows are called in the tables.
LABELS = {
    "raw": "raw C baseline (no JSON)",
    "cabi": "mcp_client C ABI",
    "rust": "mcp_client Rust API",
    "python": "mcp_client Python binding",
    "rmcp": "rmcp",
    "ts": "TypeScript SDK client",
    "python-sdk": "Python SDK client",
}


def log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def out_of(cmd: list[str], **kw) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


# ---------------------------------------------------------------- build and peers


def build(skip: bool) -> None:
    if skip:
        log("--skip-build: using the existing binaries")
        return
    log("building the release library and fixture server")
    sh(["cargo", "build", "--release", "--locked", "-p", "mcp_client", "-p", "mcp-fixture-server"], cwd=ROOT)
    log("building the Rust runners (bench/Cargo.toml: our Rust API and rmcp)")
    sh(["cargo", "build", "--release", "--locked", "--manifest-path", str(BENCH / "Cargo.toml"),
        "--target-dir", str(BENCH_TARGET)], cwd=ROOT)
    log("building the C runners")
    CBIN.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    build_raw_stdio()
    sh([cc, *C_FLAGS, "-o", str(CBIN / "raw_http"), str(BENCH / "c" / "raw_http.c")])
    link_cabi(RELEASE / "libmcp_client.a")
    link_hub(RELEASE / "libmcp_client.a")
    build_mini_server()


def build_raw_stdio() -> None:
    """The raw stdio baseline (bench/c/raw_stdio.c)."""
    sh([os.environ.get("CC", "cc"), *C_FLAGS, "-o", str(CBIN / "raw_stdio"), str(BENCH / "c" / "raw_stdio.c")])


def link_cabi(lib: Path) -> None:
    """The C ABI runner (bench/c/cabi.c), linked against `lib`."""
    sh([os.environ.get("CC", "cc"), *C_FLAGS, f"-I{ROOT / 'include'}", "-o", str(CBIN / "cabi"),
        str(BENCH / "c" / "cabi.c"), str(lib), *STATIC_LIBS])


def link_hub(lib: Path) -> None:
    """The hub runner (bench/c/hub.c), linked against `lib`."""
    sh([os.environ.get("CC", "cc"), *C_FLAGS, f"-I{ROOT / 'include'}", "-o", str(CBIN / "hub"),
        str(BENCH / "c" / "hub.c"), str(lib), *STATIC_LIBS])


def cabi_against(args: argparse.Namespace) -> tuple[Path, Path]:
    """`--only cache|many`: the library (`--lib`, else the release build, built here unless
    `--skip-build`) and the fixture (`--fixture`, else the release one); links the C runner."""
    lib = Path(args.lib) if args.lib else RELEASE / "libmcp_client.a"
    fixture = Path(args.fixture) if args.fixture else FIXTURE
    if not args.skip_build and not args.lib:
        log("building the release library and fixture server")
        sh(["cargo", "build", "--release", "--locked", "-p", "mcp_client", "-p", "mcp-fixture-server"], cwd=ROOT)
    CBIN.mkdir(parents=True, exist_ok=True)
    link_cabi(lib)
    return lib, fixture


def build_mini_server() -> None:
    CBIN.mkdir(parents=True, exist_ok=True)
    sh([os.environ.get("CC", "cc"), "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror",
        "-o", str(CBIN / "mini_server"), str(BENCH / "c" / "mini_server.c")])


def ensure_python_sdk() -> str | None:
    """A venv in the cache with the pinned Python SDK; None when ready, else why not."""
    py = VENV / "bin" / "python"
    try:
        if not py.exists():
            log(f"creating {VENV}")
            sh([sys.executable, "-m", "venv", str(VENV)], stdout=subprocess.DEVNULL)
        have = out_of([str(py), "-c", f"import importlib.metadata as m; print(m.version('{PY_SDK[0]}'))"])
        if have != PY_SDK[1]:
            log(f"installing {PY_SDK[0]}=={PY_SDK[1]} into {VENV}")
            sh([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{PY_SDK[0]}=={PY_SDK[1]}"],
               timeout=600)
        return None
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot install {PY_SDK[0]}=={PY_SDK[1]}: {e}"


def ensure_ts_client() -> str | None:
    pkg = NPM / "node_modules" / TS_CLIENT[0] / "package.json"
    try:
        if not pkg.exists() or json.loads(pkg.read_text()).get("version") != TS_CLIENT[1]:
            log(f"installing {TS_CLIENT[0]}@{TS_CLIENT[1]} into {NPM}")
            NPM.mkdir(parents=True, exist_ok=True)
            sh(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(NPM),
                f"{TS_CLIENT[0]}@{TS_CLIENT[1]}"], timeout=600, stdout=subprocess.DEVNULL)
        return None
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return f"cannot install {TS_CLIENT[0]}@{TS_CLIENT[1]}: {e}"


def python_for_runners() -> str:
    """Both Python runners use the same interpreter: the venv's when it exists."""
    py = VENV / "bin" / "python"
    return str(py) if py.exists() else sys.executable


# ---------------------------------------------------------------- machine and versions


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cores": os.cpu_count(),
        "cpu_model": model or platform.processor() or "unknown",
        "memory": mem,
        "kernel": platform.release(),
        "load_average_at_start": list(os.getloadavg()),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def cpu_times() -> list[int]:
    """The aggregate `cpu` line of /proc/stat (user nice system idle iowait irq softirq steal ...)."""
    try:
        return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return []


def busy_share(before: list[int], after: list[int]) -> dict:
    """How busy the machine was during the run: all CPU time not idle, and the steal time a
    virtual machine lost to its host, as shares of the elapsed CPU time."""
    if not before or len(before) != len(after):
        return {}
    d = [b - a for a, b in zip(before, after)]
    total = sum(d[:8]) or 1
    idle = d[3] + (d[4] if len(d) > 4 else 0)
    steal = d[7] if len(d) > 7 else 0
    return {"busy_percent": round(100 * (total - idle) / total, 1), "steal_percent": round(100 * steal / total, 1)}


# Above this share of steal time a section measured the host's contention as much as the clients.
STEAL_NOTABLE = 5.0


class SectionShares:
    """`busy_share` section by section (`res["host"]`): a VM's host can take a quarter of its
    CPU time for minutes and then nothing (seen: 12-30% in one section, 0.1% in the next), so the
    whole run's share hides which figures were measured under it."""

    def __init__(self, res: dict):
        self.res = res
        self.last = cpu_times()

    def mark(self, section: str) -> None:
        now = cpu_times()
        share = busy_share(self.last, now)
        if share:
            self.res.setdefault("host", {})[section] = share
        self.last = now


def lock_version(lock: Path, name: str) -> str:
    try:
        lines = lock.read_text().splitlines()
    except OSError:
        return "?"
    for i, line in enumerate(lines):
        if line == f'name = "{name}"' and i + 1 < len(lines):
            return lines[i + 1].split('"')[1]
    return "?"


def versions() -> dict:
    py = python_for_runners()
    ts_pkg = NPM / "node_modules" / TS_CLIENT[0] / "package.json"
    try:
        ts = json.loads(ts_pkg.read_text()).get("version", "?")
    except (OSError, ValueError):
        ts = "not installed"
    sdk = out_of([py, "-c", f"import importlib.metadata as m; print(m.version('{PY_SDK[0]}'))"]) or "not installed"
    return {
        "mcp_client": lock_version(ROOT / "Cargo.lock", "mcp_client"),
        "git_commit": out_of(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT) or "?",
        # The results of an earlier run are not a change to what is measured.
        "git_dirty": bool(out_of(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                  ":(exclude)bench/results"], cwd=ROOT)),
        "rmcp": lock_version(BENCH / "Cargo.lock", "rmcp"),
        "tokio (ours)": lock_version(ROOT / "Cargo.lock", "tokio"),
        "typescript_client": ts,
        "python_sdk": sdk,
        "rustc": out_of(["rustc", "--version"]),
        "node": out_of(["node", "--version"]),
        "python": out_of([py, "--version"]),
        "cc": (out_of([os.environ.get("CC", "cc"), "--version"]).splitlines() or ["?"])[0],
    }


# ---------------------------------------------------------------- servers and runners


class HttpServer:
    """The fixture in fast HTTP mode on 127.0.0.1:0; it exits when its stdin (our pipe) closes."""

    def __init__(self, sse: bool, fixture: Path = FIXTURE, env: dict | None = None):
        cmd = [str(fixture), "--fast", "--era", "modern", "--http", "127.0.0.1:0"]
        if sse:
            cmd.append("--sse-responses")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True,
                                     env=None if env is None else {**os.environ, **env})
        line = self.proc.stdout.readline().strip()
        prefix = "fixture: listening on "
        if not line.startswith(prefix):
            self.close()
            raise RuntimeError(f"the fixture did not start: {line!r}")
        self.url = line[len(prefix):]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Runners:
    def __init__(self, duration: float, peers: dict[str, str | None]):
        self.duration = duration
        self.peers = peers  # runner → None (available) or the reason it is not
        self.py = python_for_runners()
        LOGS.mkdir(parents=True, exist_ok=True)

    def command(self, runner: str, test: str, target: list[str], extra: list[str]) -> tuple[list[str], dict]:
        env = dict(os.environ)
        common = [test, *extra]
        if runner == "raw":
            prog = "raw_stdio" if target[0] == "--" else "raw_http"
            return [str(CBIN / prog), *extra, *target], env
        if runner == "cabi":
            return [str(CBIN / "cabi"), *common, *target], env
        if runner in ("rust", "rmcp"):
            return [str(BENCH_RELEASE / f"mcp-bench-{runner}"), *common, *target], env
        if runner == "python":
            env["MCP_CLIENT_LIB"] = str(RELEASE / "libmcp_client.so")
            return [self.py, str(BENCH / "py" / "ours.py"), *common, *target], env
        if runner == "python-sdk":
            return [str(VENV / "bin" / "python"), str(BENCH / "py" / "sdk.py"), *common, *target], env
        if runner == "ts":
            env["MCP_BENCH_NODE_MODULES"] = str(NPM / "node_modules")
            return ["node", str(BENCH / "ts" / "client.mjs"), *common, *target], env
        raise ValueError(runner)

    def run(self, runner: str, test: str, target: list[str], extra: list[str], budget: float,
            pin: str | None = None) -> dict:
        """One runner's result line; `pin`: the CPU the runner (all its threads) is held to."""
        why = self.peers.get(runner)
        if why:
            return {"error": why}
        cmd, env = self.command(runner, test, target, extra)
        if pin is not None:
            cmd = ["taskset", "-c", pin, *cmd]
        pinned = [] if pin is None else [f"cpu{pin}"]  # pinned runs keep their own logs
        name = "-".join([runner, test, *pinned, *[x.strip("-") for x in extra if not x.startswith("http")]])[:80]
        return result_line(cmd, env, budget, LOGS / f"{name}.log")

    def seq_rounds(self, cases: list[tuple[str, list[str]]], rounds: int, target: list[str], dur: list[str],
                   budget: float, pin: str | None = None) -> dict:
        """Sequential `seq` runs of every case, in `rounds` interleaved rounds: a row per client."""
        runs: dict[str, list[dict]] = {}
        for _ in range(rounds):
            for runner, extra in cases:
                key = "/".join([runner, *extra[1:]])
                runs.setdefault(key, []).append(self.run(runner, "seq", target, [*extra, *dur], budget, pin=pin))
        return {k: summary(v) for k, v in runs.items()}


# Section 9: the idle time before each call (µs) and the calls timed per run.
IDLE_GAPS_US = (1000, 20000)
IDLE_CALLS = 150


def measure_idle(args: argparse.Namespace, r: "Runners", target: list[str], budget: float,
                 http: bool = False) -> dict:
    """9. Calls after an idle gap: the runner sleeps before each `seq` call (`--gap-us`, untimed),
    as a host calls between other work; a latency figure (p50 and p99 of the calls), interleaved
    rounds, raw and the clients that run on the host's own thread or runtime. `target`: the stdio
    server's command, or `--url` of an HTTP fixture (`http`: rmcp then keeps its connections)."""
    rmcp = ["--variant", "pooled"] if http else ["--runtime", "current"]
    cases = [("raw", []), ("cabi", []), ("rust", ["--runtime", "current"]), ("rmcp", rmcp)]
    log(f"idle ({'http' if http else 'stdio'}): {len(cases)} clients x {len(IDLE_GAPS_US)} gaps x "
        f"{args.rounds} rounds of {IDLE_CALLS} calls")
    runs: dict[str, dict[str, list[dict]]] = {}
    for _ in range(args.rounds):
        for gap in IDLE_GAPS_US:
            for runner, extra in cases:
                key = "/".join([runner, *extra[1:]])
                run_args = [*extra, "--gap-us", str(gap), "--max-calls", str(IDLE_CALLS), "--duration", "60",
                            "--warmup", str(args.warmup)]
                runs.setdefault(str(gap), {}).setdefault(key, []).append(r.run(runner, "seq", target, run_args, budget))
    return {gap: {k: latency_summary(v, "p50_us") for k, v in by.items()} for gap, by in runs.items()}


def idle_report(idle: dict | None, http: bool = False) -> list[str]:
    if not idle:
        return []
    gaps = list(idle)
    wire = "Streamable HTTP, JSON responses, 127.0.0.1" if http else "stdio"
    reads = "the server's socket" if http else "the server's pipe"
    L = ["", f"## 9. Calls after an idle gap ({wire})", "",
         f"The runner sleeps before each call ({', '.join(f'{int(g) // 1000} ms' for g in gaps)}; untimed), "
         f"{IDLE_CALLS} calls a run after the warm-up, in interleaved rounds: what a host that calls between other "
         "work sees. Rust clients sleep on their runtime (`tokio::time::sleep`), C hosts in `usleep`. p50 and p99 of "
         "the median round; `÷ raw` is the median over rounds of the p50 ratio within a round (range). After more "
         "than 5 ms idle the C ABI's driver thread drives the runtime; the next call polls its request beside it and "
         f"reads {reads} itself (docs/performance.md, \"Calls after an idle gap\"). No target: informational.",
         "",
         "| client | " + " | ".join(f"p50 µs after {int(g) // 1000} ms | p99 µs | ÷ raw (p50)" for g in gaps) + " |",
         "|---|" + "---:|---:|---:|" * len(gaps)]
    for key in idle[gaps[0]]:
        cells = []
        for g in gaps:
            row = idle[g].get(key) or {"error": "not run"}
            if "error" in row:
                cells.append(f"not run: {row['error'][:60]} | | ")
                continue
            rr = latency_ratio(row, idle[g].get("raw"))
            rel = f"{rr['value']:.2f} ({rr['lo']:.2f}-{rr['hi']:.2f})" if rr else ""
            cells.append(f"{fnum(row.get('p50_us'), 1)} | {fnum(row.get('p99_us'), 1)} | {rel}")
        L.append(f"| {label(key)} | " + " | ".join(cells) + " |")
    return L


def summary(results: list[dict], key: str = "per_sec") -> dict:
    """One client's interleaved rounds as one row: the median round (its latencies and CPU), with
    `per_sec` the median over rounds, and the best round and the range beside it. Medians, not
    the best round: the best round flatters whichever client happened to get a quiet second (a
    second opinion then disagrees), while the median of interleaved rounds is what a rerun
    reproduces. Keeps every round's figure for the record."""
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[-1] if results else {"error": "not run"}
    vals = sorted(r.get(key, 0) for r in ok)
    mid = statistics.median_low(vals)
    row = dict(next(r for r in ok if r.get(key, 0) == mid))
    row[key] = statistics.median(vals)
    row["best_per_sec"], row["min_per_sec"], row["max_per_sec"] = vals[-1], vals[0], vals[-1]
    row["rounds"] = [round(r.get(key, 0), 1) for r in ok]
    # In round order, failed rounds as None, so that rounds of two clients pair up.
    row["round_values"] = [None if "error" in r else r.get(key) for r in results]
    row["cpu_round_values"] = [None if "error" in r else r.get("cpu_us_per_call") for r in results]
    row["p99_rounds"] = [r.get("p99_us") for r in ok]
    return row


# ---------------------------------------------------------------- the measurements


def measure(args: argparse.Namespace, r: Runners) -> dict:
    d = args.duration
    dur = ["--duration", f"{d}", "--warmup", str(args.warmup)]
    stdio = ["--", *STDIO_SERVER]
    budget = d * 2 + 30
    res: dict = {}
    sections = set(args.sections.split(","))
    host = SectionShares(res)
    t0 = time.time()

    if "seq" in sections:
        # 1. Sequential round trips over stdio, interleaved rounds.
        seq_cases = [("raw", []), ("cabi", []), ("rust", ["--runtime", "current"]), ("rust", ["--runtime", "multi"]),
                     ("python", []), ("rmcp", ["--runtime", "current"]), ("rmcp", ["--runtime", "multi"]),
                     ("ts", []), ("python-sdk", [])]
        log(f"1/7 sequential stdio: {len(seq_cases)} clients x {args.rounds} rounds")
        res["seq_stdio"] = r.seq_rounds(seq_cases, args.rounds, stdio, dur, budget)
        host.mark("seq")

    if "place" in sections:
        res["placement"] = measure_placements(args, r, dur, budget)
        host.mark("place")

    if "http" in sections:
        # 2. The same over Streamable HTTP (JSON and SSE responses).
        http_cases = [("raw", []), ("cabi", []), ("rust", ["--runtime", "current"]), ("python", []),
                      ("rmcp", ["--variant", "default"]), ("rmcp", ["--variant", "pooled"]), ("ts", []),
                      ("python-sdk", [])]
        for mode in ("json", "sse"):
            log(f"2/7 sequential HTTP ({mode}): {len(http_cases)} clients x {args.http_rounds} rounds")
            server = HttpServer(sse=(mode == "sse"))
            try:
                res[f"seq_http_{mode}"] = r.seq_rounds(http_cases, args.http_rounds, ["--url", server.url], dur, budget)
            finally:
                server.close()
            host.mark(f"http-{mode}")

    if "conc" in sections:
        # 3. Concurrency on one connection: threads (C ABI, Python binding), tasks (Rust, rmcp, TS,
        # Python SDK).
        log("3/7 concurrency: 1, 8 and 64 calls in flight on one connection")
        # raw: the in-flight baseline (one thread keeping a window of N requests written ahead).
        conc_cases = [("raw", []), ("cabi", []), ("rust", ["--runtime", "current"]), ("rust", ["--runtime", "multi"]),
                      ("rmcp", ["--runtime", "current"]), ("rmcp", ["--runtime", "multi"])]
        conc: dict = {}
        # Interleaved rounds as for the sequential figures (every client alike): one round is at
        # the mercy of whatever else the machine does in those seconds.
        # Each round runs every depth of every client, so 1 and 64 in flight pair up within a round too.
        rounds = {}
        for _ in range(args.conc_rounds):
            for n in (1, 8, 64):
                for runner, extra in conc_cases:
                    key = "/".join([runner, *extra[1:]])
                    rounds.setdefault((key, str(n)), []).append(
                        r.run(runner, "conc", stdio, [*extra, "--inflight", str(n), *dur], budget))
        for (key, n), v in rounds.items():
            conc.setdefault(key, {})[n] = summary(v)
        for runner in ("python", "ts", "python-sdk"):
            conc.setdefault(runner, {})["64"] = r.run(runner, "conc", stdio, ["--inflight", "64", *dur], budget)
        res["concurrency"] = conc
        host.mark("conc")

    if "mrtr" in sections:
        # 4. MRTR: a call needing one elicitation round vs a plain call.
        log("4/7 MRTR: elicit_once (one elicitation round) vs echo")
        res["mrtr"] = {runner: r.run(runner, "mrtr", stdio, [*extra, *dur], budget)
                       for runner, extra in [("cabi", []), ("rust", ["--runtime", "current"]), ("python", []),
                                             ("rmcp", ["--runtime", "current"]), ("ts", []), ("python-sdk", [])]}
        host.mark("mrtr")

    if "connect" in sections:
        # 5. Connect (spawn + discover) and close (until the child is reaped).
        log("5/7 connect and close")
        its = ["--iterations", str(args.connect_iterations), "--duration", f"{max(d, 2.0)}"]
        raw_its = ["--connect", str(args.connect_iterations), "--duration", f"{max(d, 2.0)}"]
        # Interleaved rounds like the throughput figures: spawn times swing with the machine's load.
        cases = [("raw", raw_its), ("cabi", its), ("rust", ["--runtime", "current", *its]), ("python", its),
                 ("rmcp", ["--runtime", "current", *its]), ("ts", its), ("python-sdk", its)]
        rounds = {}
        for _ in range(args.rounds):
            for runner, extra in cases:
                rounds.setdefault(runner, []).append(r.run(runner, "connect", stdio, extra, budget + 30))
        res["connect"] = {k: latency_summary(v, "first_p50_us") for k, v in rounds.items()}
        host.mark("connect")

    if "mem" in sections:
        # 6. Memory: idle RSS and growth over N calls.
        log(f"6/7 memory: growth over {args.mem_calls} calls")
        mem_args = ["--calls", str(args.mem_calls), "--warmup", "2000", "--duration", "60"]
        res["memory"] = {runner: r.run(runner, "mem", stdio, [*extra, *mem_args], 120)
                         for runner, extra in [("cabi", []), ("rust", ["--runtime", "current"]),
                                               ("rmcp", ["--runtime", "current"])]}
        host.mark("mem")

    if "connect" in sections:
        res["sizes"] = sizes()

    if "async" in sections:
        # 7. FFI cost: derived from the sequential runs (C ABI vs Rust API, same runtime model).
        res["async"] = measure_async(args, r)
        host.mark("async")

    if "idle" in sections:
        res["idle"] = measure_idle(args, r, stdio, budget)
        server = HttpServer(sse=False)
        try:
            res["idle_http"] = measure_idle(args, r, ["--url", server.url], budget, http=True)
        finally:
            server.close()
        host.mark("idle")

    if "many" in sections:
        # 8. Many clients on the shared runtime, reduced: see MANY_SECTION.
        res["many"] = measure_many(**{**MANY_SECTION, "rounds": min(MANY_SECTION["rounds"], args.rounds)})
        host.mark("many")

    if "hub" in sections:
        # 10. The hub: 1, 5 and 20 stdio members connected at once, the merged tools/list, threads.
        res["hub"] = measure_hub(**{**HUB_SECTION, "rounds": min(HUB_SECTION["rounds"], args.rounds)})
        host.mark("hub")

    if "https" in sections:
        # 11. HTTPS, HTTP/2 and a CONNECT proxy against raw TLS clients (mcp-bench-tls).
        res["https"] = measure_https(args.http_rounds, d, args.warmup, args.connect_iterations)
        host.mark("https")
    if "spans" in sections:
        # 12. The span listener's cost: none, a no-op one, and the library from before spans.
        baseline, commit = baseline_cabi(args.skip_build)
        res["spans"] = measure_spans(min(SPANS_SECTION["rounds"], args.rounds), d, SPANS_SECTION["block"], baseline,
                                     STDIO_SERVER, args.warmup, SPANS_SECTION["pin"])
        res["spans"]["baseline_commit"] = commit
        host.mark("spans")
    log(f"7/7 done in {time.time() - t0:.0f} s")
    return res


# Section 1b: the sequential stdio pair pinned both ways. Unpinned, the kernel decides, run by run
# and even within a run, whether a client and its server share a core: on one core each wake-up is
# a context switch (CPU per call decides the figures), across two it is a cross-core wake-up (on a
# VM, tens of µs each: wake-ups decide, and CPU-bound clients close in on the others). The targets
# use section 1 (unpinned, as a host runs); this shows which placement each verdict came from.
PLACE_CASES = [("raw", []), ("cabi", []), ("python", []), ("rmcp", ["--runtime", "current"]), ("ts", []),
               ("python-sdk", [])]


def measure_placements(args: argparse.Namespace, r: Runners, dur: list[str], budget: float) -> dict:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or not shutil.which("taskset"):
        log("1b: skipped (needs two CPUs and taskset)")
        return {"error": "needs two CPUs and taskset (util-linux)"}
    a, b = str(cpus[0]), str(cpus[1])
    rounds_n = max(1, min(args.rounds, 3))
    out: dict = {}
    for name, (client_cpu, server_cpu) in (("same core", (a, a)), ("separate cores", (a, b))):
        log(f"1b sequential stdio, {name}: {len(PLACE_CASES)} clients x {rounds_n} rounds "
            f"(client on CPU {client_cpu}, server on CPU {server_cpu})")
        target = ["--", "taskset", "-c", server_cpu, *STDIO_SERVER]
        out[name] = r.seq_rounds(PLACE_CASES, rounds_n, target, dur, budget, pin=client_cpu)
    return out


def measure_async(args: argparse.Namespace, r: Runners) -> dict:
    """Started calls from ONE host thread (C ABI host-loop mode) vs rmcp's 64 tasks
    and the raw in-flight window; the Python AsyncClient vs the Python SDK's gather; the
    process's thread count as calls in flight grow. Interleaved rounds; median and spread."""
    d = args.duration
    dur = ["--duration", f"{d}"]
    stdio = ["--", *STDIO_SERVER]
    budget = d * 2 + 30
    log(f"async: started calls, raw window, rmcp, Python asyncio x {args.conc_rounds} rounds")
    cases = [("cabi", "started", ["--inflight", "64"], "cabi-started/64"),
             ("raw", "conc", ["--inflight", "64"], "raw/64"),
             ("rmcp", "conc", ["--runtime", "current", "--inflight", "64"], "rmcp/current/64"),
             ("rmcp", "conc", ["--runtime", "multi", "--inflight", "64"], "rmcp/multi/64"),
             ("python", "aconc", ["--inflight", "64"], "python-async/64"),
             ("python-sdk", "conc", ["--inflight", "64"], "python-sdk/64"),
             # The same rounds as the AsyncClient's, for python_targets (section 3 runs it once).
             ("ts", "conc", ["--inflight", "64"], "ts/64")]
    rounds: dict[str, list[dict]] = {}
    for _ in range(args.conc_rounds):
        for runner, test, extra, key in cases:
            rounds.setdefault(key, []).append(r.run(runner, test, stdio, [*extra, *dur], budget))
    out: dict = {k: summary(v) for k, v in rounds.items()}
    # Threads as calls in flight grow: one host thread starts them all.
    out["threads"] = {str(n): r.run("cabi", "started", stdio, ["--inflight", str(n), "--duration", "0.5"], budget)
                      for n in (1, 64, 1024)}
    return out


def tree_bytes(path: Path, skip: tuple[str, ...] = ()) -> int:
    """Apparent size of the files under path (what an install puts on disk), skipping top-level
    entries whose name starts with one of `skip`."""
    total = 0
    for top in (path.iterdir() if path.is_dir() else []):
        if top.name.startswith(skip):
            continue
        if top.is_file():
            total += top.stat().st_size
        for dirpath, _, files in os.walk(top):
            total += sum((Path(dirpath) / f).stat().st_size for f in files if not (Path(dirpath) / f).is_symlink())
    return total


def stripped_bytes(binary: Path) -> int | None:
    tmp = LOGS / f"{binary.name}.stripped"
    try:
        sh(["strip", "-o", str(tmp), str(binary)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return tmp.stat().st_size
    except (OSError, subprocess.SubprocessError):
        return None


def sizes() -> dict:
    """What each client installs. Ours: the shipped shared library (`make
    dist-lib`'s; run.py does not build it, it takes minutes). rmcp is a
    crate linked into its host, so its figure is the stripped bench runner (same harness code as
    our Rust API runner, whose stripped size is shown beside it). TypeScript: the npm prefix (the
    client and its dependencies); Python SDK: the venv's site-packages without pip/setuptools."""
    out: dict = {}
    dist, local = ROOT / "target" / "dist" / "release" / "libmcp_client.so", RELEASE / "libmcp_client.so"
    if dist.exists():
        out["cabi"] = {"bytes": dist.stat().st_size, "what": f"{dist.relative_to(ROOT)} (`make dist-lib`, installed)"}
    elif local.exists():
        # Built together with the fixture server, so with the union of both packages' features.
        out["cabi"] = {"bytes": local.stat().st_size, "what": f"{local.relative_to(ROOT)} (no `make dist-lib` output: "
                       "built with the fixture's features, larger than the installed library)"}
    for key in ("rust", "rmcp"):
        b = BENCH_RELEASE / f"mcp-bench-{key}"
        n = stripped_bytes(b) if b.exists() else None
        if n:
            out[key] = {"bytes": n, "what": f"bench runner mcp-bench-{key}, stripped (whole program)"}
    if (NPM / "node_modules").is_dir():
        out["ts"] = {"bytes": tree_bytes(NPM / "node_modules"), "what": "npm node_modules (client + dependencies)"}
    site = sorted(VENV.glob("lib/python*/site-packages"))
    if site:
        out["python-sdk"] = {"bytes": tree_bytes(site[0], ("pip", "setuptools", "pkg_resources", "_distutils_hack",
                                                           "distutils-precedence")),
                             "what": "venv site-packages (SDK + dependencies, without pip/setuptools)"}
    return out


# ---------------------------------------------------------------- report


def fnum(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> float | None:
    if not a or not b:
        return None
    return a / b


def latency_summary(results: list[dict], key: str) -> dict:
    """Rounds of a latency figure as one row: the median round by `key`, with every round's value
    (`round_values`, in round order, failed rounds as None) for paired ratios."""
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[-1] if results else {"error": "not run"}
    mid = statistics.median_low(r[key] for r in ok)
    row = dict(next(r for r in ok if r[key] == mid))
    row["round_values"] = [None if "error" in r else r.get(key) for r in results]
    row["p99_rounds"] = [r.get("p99_us") for r in ok]
    return row


def latency_ratio(a: dict | None, b: dict | None) -> dict | None:
    """A latency of `a` over `b`'s (rows of `latency_summary`): the median over rounds of the
    ratio within a round, its range, and the best round against the best round."""
    ra, rb = (a or {}).get("round_values") or [], (b or {}).get("round_values") or []
    pairs = [x / y for x, y in zip(ra, rb) if x and y]
    if not pairs:
        return None
    return {"value": statistics.median(pairs), "lo": min(pairs), "hi": max(pairs),
            "best": min(x for x in ra if x) / min(y for y in rb if y), "rounds": len(pairs)}


def compare(a: dict | None, b: dict | None, how=lambda x, y: x / y) -> dict | None:
    """A target's figure: `value` from medians of interleaved rounds (the median of the
    within-round comparisons when both clients ran the same rounds, else the comparison of the two
    medians), `lo`-`hi` the range over rounds, `best` the best round against the best round (what
    this bench used to report, for comparison)."""
    if not per_sec(a) or not per_sec(b):
        return None
    ra, rb = a.get("round_values") or [], b.get("round_values") or []
    pairs = [how(x, y) for x, y in zip(ra, rb) if x and y] if len(ra) == len(rb) else []
    if pairs:
        value, lo, hi = statistics.median(pairs), min(pairs), max(pairs)
    else:
        ends = [how(x, y) for x in (a.get("min_per_sec") or per_sec(a), a.get("max_per_sec") or per_sec(a))
                for y in (b.get("min_per_sec") or per_sec(b), b.get("max_per_sec") or per_sec(b))]
        value, lo, hi = how(per_sec(a), per_sec(b)), min(ends), max(ends)
    best = how(a.get("best_per_sec") or per_sec(a), b.get("best_per_sec") or per_sec(b))
    return {"value": value, "lo": lo, "hi": hi, "best": best, "rounds": len(pairs) or 1}


def relative(a: dict | None, b: dict | None, c: dict | None, d: dict | None) -> dict | None:
    """A target set against a raw baseline measured the same way: (a ÷ b) ÷ (c ÷ d), e.g. the
    library's calls/s through a proxy ÷ direct, over the raw client's. Per round (the median, the
    range) when all four ran the same rounds, else from compare()'s two figures."""
    lib, own = compare(a, b), compare(c, d)
    if not lib or not own:
        return None
    rv = [r.get("round_values") or [] for r in (a, b, c, d)]
    pairs = [(w / x) / (y / z) for w, x, y, z in zip(*rv) if w and x and y and z] if len(set(map(len, rv))) == 1 else []
    if pairs:
        value, lo, hi = statistics.median(pairs), min(pairs), max(pairs)
    else:
        value, lo, hi = lib["value"] / own["value"], lib["lo"] / own["hi"], lib["hi"] / own["lo"]
    return {"value": value, "lo": lo, "hi": hi, "best": lib["best"] / own["best"], "rounds": len(pairs) or 1}


def added_us(a: float, b: float) -> float:
    """Mean round trip at a calls/s minus that at b calls/s, in µs."""
    return 1e6 / a - 1e6 / b


def per_sec(row: dict | None) -> float | None:
    if not row or "error" in row:
        return None
    return row.get("per_sec")


def best_of(rows: dict, prefix: str) -> tuple[str | None, dict | None]:
    """The best configuration of one runner (e.g. rmcp's runtimes or HTTP clients)."""
    cands = [(k, v) for k, v in rows.items() if (k == prefix or k.startswith(prefix + "/")) and per_sec(v)]
    if not cands:
        return None, None
    return max(cands, key=lambda kv: kv[1]["per_sec"])


def label(key: str) -> str:
    runner, _, variant = key.partition("/")
    base = LABELS.get(runner, runner)
    return f"{base} ({variant})" if variant else base


def seq_table(rows: dict, ref_key: str = "cabi") -> list[str]:
    raw, ours = rows.get("raw"), rows.get(ref_key)
    out = ["| client | calls/s (median) | range | best round | p50 µs | p99 µs | client CPU µs/call | ÷ raw "
           "(range) | C ABI ÷ this (range) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def cell(c: dict | None) -> str:
        return "n/a" if not c else f"{c['value']:.2f} ({c['lo']:.2f}-{c['hi']:.2f})"

    for key, row in rows.items():
        if "error" in row:
            out.append(f"| {label(key)} | not run: {row['error'][:120]} | | | | | | | |")
            continue
        out.append(f"| {label(key)} | {fnum(row.get('per_sec'))} | {fnum(row.get('min_per_sec'))}-"
                   f"{fnum(row.get('max_per_sec'))} | {fnum(row.get('best_per_sec'))} | {fnum(row.get('p50_us'), 1)} | "
                   f"{fnum(row.get('p99_us'), 1)} | {fnum(row.get('cpu_us_per_call'), 1)} | {cell(compare(row, raw))} | "
                   f"{cell(compare(ours, row))} |")
    return out


def target_row(name: str, value, want: float, op: str, detail: str) -> dict:
    """One target's verdict; `value` a number, or compare()'s dict (median, range, best round);
    `op` one of ">=", "<", "<="."""
    cmp = value if isinstance(value, dict) else None
    value = cmp["value"] if cmp else value
    if value is None:
        return {"target": name, "status": "SKIP", "value": None, "want": want, "detail": detail}
    ok = value >= want if op == ">=" else value <= want if op == "<=" else value < want
    row = {"target": name, "status": "PASS" if ok else "FAIL", "value": round(value, 3), "want": want,
           "detail": detail}
    if cmp:
        row.update(lo=round(cmp["lo"], 3), hi=round(cmp["hi"], 3), best=round(cmp["best"], 3), rounds=cmp["rounds"])
    return row


def median_range(t: dict, fmt: str = " ({lo:.2f}–{hi:.2f})") -> str:
    """A target's median, then its range over rounds (when it has one) in `fmt`."""
    return fnum(t["value"], 2) + (fmt.format(**t) if "lo" in t else "")


class Targets(list):
    """A section's target rows: its *_targets(…, add) function fills them through `add`."""

    def add(self, name: str, value, want: float, op: str, detail: str) -> None:
        self.append(target_row(name, value, want, op, detail))

    def passed(self) -> bool:
        return all(t["status"] == "PASS" for t in self)

    def table(self, head: str = "median (range)", align: str = "---:", cell=median_range,
              result: str = "result", status: str = "**{}**") -> list[str]:
        """The report's targets table: target, result, the `head` column(s) from `cell`, detail."""
        return [f"| target | {result} | {head} | detail |", f"|---|---|{align}|---|",
                *(f"| {t['target']} | {status.format(t['status'])} | {cell(t)} | {t['detail']} |" for t in self)]


def run_ended(mach: dict, cpu0: list[int]) -> None:
    """Stamps the machine's record with how busy it was since `cpu0` and the load at the end."""
    mach["during_run"] = busy_share(cpu0, cpu_times())
    mach["load_average_at_end"] = list(os.getloadavg())


def run_conditions(mach: dict) -> str:
    """The machine and how loaded it was, as a section's report says it after `run_ended`."""
    run = mach["during_run"]
    return (f"{mach['cores']} cores ({mach['cpu_model']}); load average {mach['load_average_at_start'][0]:.2f} at the "
            f"start, {mach['load_average_at_end'][0]:.2f} at the end; during the run the machine was "
            f"{run.get('busy_percent', '?')}% busy and lost {run.get('steal_percent', '?')}% to steal")


def shown(path: Path) -> Path:
    """`path` relative to the repository when it is inside it, as the reports name libraries."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def write_section(stem: str, title: str, head: str, body: list[str], table: list[str], doc, tail=()) -> str:
    """An `--only` section's results/<stem>.{md,json}: the title, the line saying how it was run,
    the section's report lines, its targets table and what follows it; prints the markdown."""
    md = "\n".join([f"# {title}", "", head, *body, "", *table, *tail]) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(md)
    (RESULTS / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(md)
    return md


def targets(res: dict) -> list[dict]:
    t = Targets()
    add = t.add

    seq = res.get("seq_stdio", {})
    if seq:
        cabi_row = seq.get("cabi")
        rmcp_key, rmcp_best = best_of(seq, "rmcp")
        runtimes = "; ".join(f"{label(k)} {spread(seq.get(k))}, C ABI ÷ it {fnum((compare(cabi_row, seq.get(k)) or {}).get('value'), 2)}"
                             for k in ("rmcp/current", "rmcp/multi") if k in seq)
        add("C ABI stdio calls/s >= 1.2x best rmcp (either runtime)", compare(cabi_row, rmcp_best), 1.2, ">=",
            f"C ABI {spread(cabi_row)}; {runtimes}")
        add("C ABI stdio calls/s >= 2x TypeScript client", compare(cabi_row, seq.get("ts")), 2.0, ">=",
            f"TypeScript {spread(seq.get('ts'))}")
        add("C ABI stdio calls/s >= 3x Python SDK client", compare(cabi_row, seq.get("python-sdk")), 3.0, ">=",
            f"Python SDK {spread(seq.get('python-sdk'))}")
        raw = seq.get("raw")
        add("C ABI stdio calls/s >= 0.75x raw baseline", compare(cabi_row, raw), 0.75, ">=", f"raw {spread(raw)}")
        add("library adds < 20 µs per stdio call (mean, vs raw)", compare(cabi_row, raw, added_us), 20.0, "<",
            "mean round trip of the C ABI minus the raw baseline's")

    cpu_targets(res, add)

    conc = res.get("concurrency", {})
    if conc:
        c64_row = conc.get("cabi", {}).get("64")
        rmcp64_key, rmcp64_row = best_of({k: v.get("64") for k, v in conc.items() if v.get("64")}, "rmcp")
        runtimes = "; ".join(f"{label(k)} {spread(conc.get(k, {}).get('64'))}" for k in ("rmcp/current", "rmcp/multi")
                             if k in conc)
        add("C ABI 64 in flight >= 1.5x rmcp 64 in flight (either runtime)", compare(c64_row, rmcp64_row), 1.5,
            ">=", f"C ABI {spread(c64_row)}; {runtimes}")
        c1_row = conc.get("cabi", {}).get("1")
        vs_seq = compare(c64_row, seq.get("cabi"))
        add("C ABI 64 in flight >= 3x its sequential calls/s (1 in flight, same rounds)", compare(c64_row, c1_row),
            3.0, ">=", f"64 in flight {spread(c64_row)}; 1 in flight {spread(c1_row)}; against section 1's "
            f"sequential median (other minutes): {fnum((vs_seq or {}).get('value'), 2)}")
        pipelined_targets(conc, add)

    http_targets(res, add)

    if seq:
        add("Python binding calls/s >= 2x Python SDK client", compare(seq.get("python"), seq.get("python-sdk")), 2.0,
            ">=", f"binding {spread(seq.get('python'))}; SDK {spread(seq.get('python-sdk'))}")

    con = res.get("connect", {})
    if con:
        def first(k: str) -> float | None:
            row = con.get(k) or {}
            return None if "error" in row else row.get("first_p50_us")

        def vs_raw(k: str) -> dict | None:
            return latency_ratio(con.get(k), con.get("raw"))
        others = "; ".join(f"{label(k)} {fnum(first(k))} µs ({fnum((vs_raw(k) or {}).get('value'), 2)}x raw)"
                           for k in con if k not in ("raw", "cabi") and first(k))
        add("connect + first call (spawn, discover, one call) within 1.2x raw baseline, C ABI (median over rounds "
            "of the p50 ratio)", vs_raw("cabi"), 1.2, "<", f"C ABI {fnum(first('cabi'))} µs vs raw "
            f"{fnum(first('raw'))} µs (median round's p50); {others}")

    if res.get("async"):
        t.extend(async_targets(res["async"], add))
    python_targets(res, add)

    if res.get("many"):
        many_targets(res["many"], add)

    if res.get("hub"):
        hub_targets(res["hub"], add)
    if res.get("https"):
        https_targets(res["https"], add)

    if res.get("spans"):
        spans_targets(res["spans"], res["spans"].get("baseline_commit", ""), add)

    for key in (("cabi", "rust") if res.get("memory") else ()):
        m = res.get("memory", {}).get(key)
        growth = None if not m or "error" in m else m.get("growth_kb") / 1024
        calls = None if not m or "error" in m else m.get("calls")
        add(f"memory growth < 1 MiB over 100,000 calls, {label(key)}",
            growth if calls and calls >= 100_000 else None, 1.0, "<",
            f"{fnum(growth, 2)} MiB over {fnum(calls)} calls")
    return t


def cpu_compare(a: dict | None, b: dict | None) -> dict | None:
    """a's client CPU per call ÷ b's, as `compare` does calls/s: the median of the per-round
    ratios, their range, and the best round (the lowest CPU of each)."""
    ra, rb = (a or {}).get("cpu_round_values") or [], (b or {}).get("cpu_round_values") or []
    pairs = [x / y for x, y in zip(ra, rb) if x and y] if len(ra) == len(rb) else []
    if not pairs:
        return None
    return {"value": statistics.median(pairs), "lo": min(pairs), "hi": max(pairs),
            "best": min(x for x in ra if x) / min(y for y in rb if y), "rounds": len(pairs)}


def cpu_targets(res: dict, add) -> None:
    """The C ABI's client CPU (user+system time of the client process, all its
    threads) per sequential stdio call against the raw baseline's. The median over rounds of the
    ratio within a round (both ran back to back in it), with the range; the best round is the
    lowest CPU of each."""
    seq = res.get("seq_stdio", {})
    cabi, raw = seq.get("cabi"), seq.get("raw")
    if not seq or not per_sec(cabi) or not per_sec(raw):
        return
    ra, rb = cabi.get("cpu_round_values") or [], raw.get("cpu_round_values") or []
    value = cpu_compare(cabi, raw)

    def cpu(row: dict, values: list) -> str:
        vals = sorted(v for v in values if v)
        if not vals:
            return f"{fnum(row.get('cpu_us_per_call'), 1)} µs"
        return f"median {fnum(statistics.median(vals), 1)} µs (range {fnum(vals[0], 1)}-{fnum(vals[-1], 1)})"
    add("C ABI client CPU per sequential stdio call <= 1.5x raw baseline's", value, 1.5, "<",
        f"C ABI {cpu(cabi, ra)} per call; raw {cpu(raw, rb)} per call")


def http_targets(res: dict, add) -> None:
    """Sequential Streamable HTTP against the raw HTTP baseline (bench/c/raw_http.c),
    the C ABI's calls/s ÷ raw's, median of the per-round ratios (rounds are interleaved) with their
    range; p99 on loopback, median over rounds of each round's p99, for the C ABI and the Rust API."""
    for mode, want in (("json", 0.75), ("sse", 0.65)):
        rows = res.get(f"seq_http_{mode}", {})
        if not rows:
            continue
        raw, cabi = rows.get("raw"), rows.get("cabi")
        add(f"HTTP ({mode}) C ABI calls/s >= {want}x raw HTTP baseline", compare(cabi, raw), want, ">=",
            f"C ABI {spread(cabi)}; raw {spread(raw)}; client CPU/call {fnum((cabi or {}).get('cpu_us_per_call'), 1)} "
            f"vs raw {fnum((raw or {}).get('cpu_us_per_call'), 1)} µs (median round)")
        for key in ("cabi", "rust/current"):
            row = rows.get(key)
            ok = row is not None and "error" not in row
            p99s = sorted(r for r in ((row or {}).get("p99_rounds") or []) if r) if ok else []
            p99 = statistics.median(p99s) if p99s else (row.get("p99_us") if ok else None)
            rng = f" (range {fnum(p99s[0], 0)}-{fnum(p99s[-1], 0)} over {len(p99s)} rounds)" if p99s else ""
            add(f"HTTP ({mode}) p99 < 300 µs on loopback, {label(key)}", p99, 300.0, "<",
                f"p99 {fnum(p99, 0)} µs{rng}, p50 {fnum(row.get('p50_us') if ok else None, 0)} µs")


def spread(row: dict | None) -> str:
    """Median and range of a row's rounds, for a loaded machine."""
    if not row or "error" in row:
        return (row or {}).get("error", "not run")
    vals = sorted(v for v in row.get("round_values") or [] if v)
    if not vals:
        return f"{fnum(per_sec(row))}/s"
    return f"median {fnum(statistics.median(vals))}/s (range {fnum(vals[0])}-{fnum(vals[-1])}, {len(vals)} rounds)"


def python_targets(res: dict, add) -> None:
    """The Python binding's sequential lead over the Python SDK in the median,
    and its AsyncClient against the TypeScript client at 64 calls in flight (both from the same
    interleaved rounds of the async section; section 3's single TypeScript run when that is all
    there is)."""
    seq = res.get("seq_stdio", {})
    if seq:
        add("Python binding calls/s >= 3x Python SDK client", compare(seq.get("python"), seq.get("python-sdk")), 3.0,
            ">=", f"binding {spread(seq.get('python'))}; SDK {spread(seq.get('python-sdk'))}")
    a = res.get("async") or {}
    py = a.get("python-async/64")
    ts = a.get("ts/64") if per_sec(a.get("ts/64")) else (res.get("concurrency", {}).get("ts") or {}).get("64")
    if py or ts:
        add("Python AsyncClient 64 concurrent >= TypeScript client 64 in flight", compare(py, ts), 1.0, ">=",
            f"AsyncClient {spread(py)}; TypeScript {spread(ts)}")


def pipelined_targets(conc: dict, add) -> None:
    """64 calls in flight from 64 host threads (blocking C ABI calls) against the
    raw in-flight baseline (a window of 64 on one thread), paired within each round of section 3.
    The one-thread form of the target is the started-call target (async section)."""
    c64, raw64 = conc.get("cabi", {}).get("64"), conc.get("raw", {}).get("64")
    add("C ABI 64 host threads >= 0.4x raw in-flight baseline (64 blocking calls in flight)", compare(c64, raw64),
        0.4, ">=", f"C ABI 64 threads {spread(c64)}; raw window of 64 {spread(raw64)}")


def async_targets(a: dict, add) -> list[dict]:
    """The started-call targets; ratios of medians over interleaved rounds (pairs would need equal
    round counts; medians resist one disturbed round either way)."""
    def med(row: dict | None) -> float | None:
        if not row or "error" in row:
            return None
        vals = [v for v in row.get("round_values") or [] if v]
        return statistics.median(vals) if vals else per_sec(row)

    started = a.get("cabi-started/64")
    rmcp_key = max((k for k in ("rmcp/current/64", "rmcp/multi/64") if med(a.get(k))), key=lambda k: med(a.get(k)) or 0,
                   default=None)
    rmcp = a.get(rmcp_key) if rmcp_key else None
    # Paired within rounds (every case runs in each round), with the range, as the other targets.
    add("C ABI started calls, 64 in flight from one thread >= 2x rmcp 64 tasks", compare(started, rmcp), 2.0,
        ">=", f"started {spread(started)}; {rmcp_key or 'rmcp'} {spread(rmcp)}")
    raw = a.get("raw/64")
    add("C ABI started calls, 64 in flight >= 0.5x raw in-flight baseline", compare(started, raw), 0.5, ">=",
        f"raw window of 64 {spread(raw)}")
    py, sdk = a.get("python-async/64"), a.get("python-sdk/64")
    add("Python AsyncClient 64 concurrent >= 3x Python SDK gather of 64", ratio(med(py), med(sdk)), 3.0, ">=",
        f"AsyncClient {spread(py)}; SDK {spread(sdk)}")
    th = a.get("threads", {})
    lo, hi = th.get("1") or {}, th.get("1024") or {}
    flat = None
    if "threads_max" in lo and "threads_max" in hi:
        flat = float(hi["threads_max"] - lo["threads_max"])
    add("host threads flat as started calls grow (1 -> 1024 in flight: added threads)", flat, 0.5, "<",
        f"threads {lo.get('threads_max')} at 1, {(th.get('64') or {}).get('threads_max')} at 64, "
        f"{hi.get('threads_max')} at 1024 in flight")
    return []


def placement_report(place: dict | None, unpinned: dict) -> list[str]:
    """Section 1b: the stdio targets' figures unpinned (section 1) and pinned both ways."""
    if not place:
        return []
    if "error" in place:
        return ["", f"### 1b. By placement: not run ({place['error']})"]
    cols = [("unpinned (section 1)", unpinned), *place.items()]

    def cell(c: dict | None) -> str:
        return "n/a" if not c else f"{c['value']:.2f} ({c['lo']:.2f}-{c['hi']:.2f})"

    figures = [
        ("C ABI ÷ raw (target ≥ 0.75)", lambda t: cell(compare(t.get("cabi"), t.get("raw")))),
        ("C ABI client CPU ÷ raw's (target ≤ 1.5)", lambda t: cell(cpu_compare(t.get("cabi"), t.get("raw")))),
        ("C ABI ÷ rmcp (current) (target ≥ 1.2)", lambda t: cell(compare(t.get("cabi"), t.get("rmcp/current")))),
        ("C ABI ÷ TypeScript client (target ≥ 2)", lambda t: cell(compare(t.get("cabi"), t.get("ts")))),
        ("C ABI ÷ Python SDK client (target ≥ 3)", lambda t: cell(compare(t.get("cabi"), t.get("python-sdk")))),
        ("Python binding ÷ Python SDK client (target ≥ 3)",
         lambda t: cell(compare(t.get("python"), t.get("python-sdk")))),
        ("raw calls/s", lambda t: fnum(per_sec(t.get("raw")))),
        ("raw p50 µs", lambda t: fnum((t.get("raw") or {}).get("p50_us"), 1)),
        ("C ABI calls/s", lambda t: fnum(per_sec(t.get("cabi")))),
        ("C ABI client CPU µs/call", lambda t: fnum((t.get("cabi") or {}).get("cpu_us_per_call"), 1)),
        ("raw client CPU µs/call", lambda t: fnum((t.get("raw") or {}).get("cpu_us_per_call"), 1)),
    ]
    rounds = len(next(iter(place.values()), {}).get("raw", {}).get("round_values") or [])
    L = ["", "### 1b. The same by placement: client and server on one core, or on two",
         "",
         "Unpinned (section 1, what the targets use) the kernel places the client and its server, and may "
         "move them during a run. Pinned with `taskset` (the client and all its threads on the first CPU; "
         "the server on the same one or the second), "
         f"{rounds} interleaved rounds each: on one core every wake-up is a context switch, so CPU per call "
         "decides; on two, every wake-up crosses cores (tens of µs on this VM), so wake-ups decide and "
         "CPU-bound clients close in. Medians of per-round ratios (range).",
         "",
         "| figure | " + " | ".join(name for name, _ in cols) + " |",
         "|---|" + "---:|" * len(cols)]
    for name, fig in figures:
        L.append(f"| {name} | " + " | ".join(fig(table) for _, table in cols) + " |")
    return L


def report(res: dict, mach: dict, vers: dict, tgs: list[dict], args: argparse.Namespace) -> str:
    L: list[str] = []
    # A run of some --sections leaves the others' tables empty.
    res = {"seq_stdio": {}, "seq_http_json": {}, "seq_http_sse": {}, "concurrency": {}, "mrtr": {}, "connect": {},
           "memory": {}, "sizes": {}, **res}
    L.append("# mcp_client benchmark results")
    L.append("")
    L.append(f"Run {mach['date']} by `make bench` (bench/run.py, {args.rounds} interleaved rounds of "
             f"{args.duration} s per sequential stdio figure, {args.http_rounds} per HTTP figure, {args.conc_rounds} per "
             f"concurrency figure; sections: {args.sections}). Every figure is the median over rounds, with the range "
             "over rounds and the best round beside it; every round is in latest.json.")
    L.append("")
    L.append(f"- **Machine:** {mach['cores']} cores, {mach['cpu_model']}, {mach['memory']}, Linux {mach['kernel']}; "
             f"load average at start {', '.join(f'{x:.2f}' for x in mach['load_average_at_start'])}, at end "
             f"{', '.join(f'{x:.2f}' for x in mach['load_average_at_end'])}; during the run the CPUs were "
             f"{mach['during_run'].get('busy_percent', '?')}% busy (the suite included) with "
             f"{mach['during_run'].get('steal_percent', '?')}% steal time.")
    L.append(f"- **Versions:** mcp_client {vers['mcp_client']} (git {vers['git_commit']}"
             f"{', uncommitted changes' if vers['git_dirty'] else ''}), rmcp {vers['rmcp']}, "
             f"TypeScript client {vers['typescript_client']}, Python SDK {vers['python_sdk']}; "
             f"{vers['rustc']}, node {vers['node']}, {vers['python']}.")
    if args.server == "minimal":
        L.append("- **Server (stdio):** `bench/c/mini_server.c` (`--server minimal`: canned replies, no JSON work).")
    L.append("- **Server:** `mcp-fixture-server --fast` (every request answered on the reading thread), tool "
             "`echo {\"text\":\"hi\"}`, modern era (2026-07-28) for every client; stdio child process, or "
             "Streamable HTTP on 127.0.0.1 (`--era modern`, JSON or `--sse-responses`).")
    L.append("- **Figures:** calls/s of sequential `tools/call` round trips; latency per call; client CPU is "
             "user+system time of the client process (all its threads) per call. Ratios: `÷ raw` is this "
             "client's calls/s over the raw baseline's; `C ABI ÷ this` is ours over this client's. Every ratio "
             "(tables and targets) is the median over rounds of the ratio within a round (a round runs every "
             "client back to back, so it compares them under the same machine state), with the range of those "
             "per-round ratios and the best round against the best round beside it; latencies and CPU are the "
             "median round's.")
    L.append(f"- **Warm-up:** every runner connects, then makes {args.warmup} untimed calls (`--warmup`, the same for "
             "every client, the raw baseline included) before its timed loop; connect timings are cold "
             "(a new process per connection).")
    L.append("- **rmcp:** both tokio runtimes are measured and shown: `current` (`new_current_thread`) and "
             "`multi` (`new_multi_thread` with 2 workers, tokio's default on this 2-core machine); targets against rmcp take the "
             "better of the two by median and list both.")
    shares = res.get("host") or {}
    if shares:
        notable = [k for k, v in shares.items() if (v.get("steal_percent") or 0) > STEAL_NOTABLE]
        L.append("- **Host, section by section** (steal time: CPU time the hypervisor gave to other guests, "
                 "as a share of the section's): " + ", ".join(
                     f"{k} {v.get('steal_percent', '?')}% steal ({v.get('busy_percent', '?')}% busy)"
                     for k, v in shares.items()) + "."
                 + (f" Above {STEAL_NOTABLE:.0f}% steal ({', '.join(notable)}) a section measured the host's "
                    "contention as much as the clients: its absolute figures, latency tails above all, are not "
                    "comparable with a quiet run's." if notable else ""))
    busy = mach.get("during_run", {}).get("busy_percent") or 0
    if busy >= 90:
        L.append(f"- **Saturated:** the CPUs were {busy}% busy during this run (other work on the machine): "
                 "absolute figures and ratios are not comparable with a run on a quiet machine; rerun before "
                 "quoting them.")
    L.append("")
    L.append("![headline ratios](latest.svg)")
    L.append("")
    L.append("## Targets")
    L.append("")
    L.append("| target | result | median | range over rounds | best round | detail |")
    L.append("|---|---|---:|---:|---:|---|")
    for t in tgs:
        rng = f"{t['lo']:.2f} to {t['hi']:.2f}" if "lo" in t else ""
        L.append(f"| {t['target']} | **{t['status']}** | {fnum(t['value'], 2)} | {rng} | "
                 f"{fnum(t.get('best'), 2) if 'best' in t else ''} | {t['detail']} |")
    L.append("")
    L.append("## 1. Sequential tools/call over stdio")
    L.append("")
    L.extend(seq_table(res["seq_stdio"]))
    L.extend(placement_report(res.get("placement"), res["seq_stdio"]))
    for mode in ("json", "sse"):
        L.append("")
        L.append(f"## 2. Sequential tools/call over Streamable HTTP, {mode.upper()} responses (127.0.0.1)")
        L.append("")
        L.extend(seq_table(res[f"seq_http_{mode}"]))
    L.append("")
    L.append("rmcp `default` is its own reqwest client (`pool_max_idle_per_host(0)`: a new TCP connection per "
             "request); `pooled` passes a plain `reqwest::Client` (keep-alive).")
    L.append("")
    L.append("## 3. Concurrency: calls in flight on one stdio connection (calls/s, median over rounds)")
    L.append("")
    L.append("| client | 1 | 8 | 64 | 64 ÷ 1 | p99 µs at 64 |")
    L.append("|---|---:|---:|---:|---:|---:|")
    for key, by_n in res["concurrency"].items():
        vals = {n: per_sec(by_n.get(n)) for n in ("1", "8", "64")}
        p99 = by_n.get("64", {}).get("p99_us") if "error" not in by_n.get("64", {"error": 1}) else None
        how = {"cabi": "threads", "python": "threads", "raw": "one thread, window"}.get(key.split("/")[0], "tasks")
        L.append(f"| {label(key)}, {how} | {fnum(vals['1'])} | {fnum(vals['8'])} | {fnum(vals['64'])} | "
                 f"{fnum(ratio(vals['64'], vals['1']), 2)} | {fnum(p99, 0)} |")
    L.append("")
    L.append("## 4. MRTR cost: one elicitation round (elicit_once) vs a plain call (echo)")
    L.append("")
    L.append("| client | plain p50 µs | MRTR p50 µs | latency ratio (p50) | mean ratio |")
    L.append("|---|---:|---:|---:|---:|")
    for key, row in res["mrtr"].items():
        if "error" in row:
            L.append(f"| {label(key)} | not run: {row['error'][:100]} | | | |")
            continue
        L.append(f"| {label(key)} | {fnum(row['plain_p50_us'], 1)} | {fnum(row['mrtr_p50_us'], 1)} | "
                 f"{fnum(ratio(row['mrtr_p50_us'], row['plain_p50_us']), 2)} | "
                 f"{fnum(ratio(row['mrtr_mean_us'], row['plain_mean_us']), 2)} |")
    L.append("")
    L.append("## 5. Connect and close over stdio")
    L.append("")
    L.append("Connect: spawn the server + `server/discover`. First call: spawn, discover and one `echo` call, until "
             "its result (a new process and connection each time, no warm-up). Close: after that call, until the "
             "child has exited and been reaped. The raw baseline writes the pre-encoded discover and call lines.")
    L.append("")
    L.append("| client | connections | connect p50 µs | connect p99 µs | connect + first call p50 µs | p99 µs | "
             "÷ raw (p50) | close p50 µs | close p99 µs |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    raw_first = (res["connect"].get("raw") or {}).get("first_p50_us")
    for key, row in res["connect"].items():
        if "error" in row:
            L.append(f"| {label(key)} | not run: {row['error'][:100]} | | | | | | | |")
            continue
        L.append(f"| {label(key)} | {row['iterations']} | {fnum(row['connect_p50_us'])} | "
                 f"{fnum(row['connect_p99_us'])} | {fnum(row.get('first_p50_us'))} | {fnum(row.get('first_p99_us'))} | "
                 f"{fnum(ratio(row.get('first_p50_us'), raw_first), 2)} | {fnum(row['close_p50_us'])} | "
                 f"{fnum(row['close_p99_us'])} |")
    if res["sizes"]:
        L.append("")
        L.append("Installed size:")
        L.append("")
        L.append("| client | bytes | MiB | what |")
        L.append("|---|---:|---:|---|")
        for key, row in res["sizes"].items():
            L.append(f"| {label(key)} | {fnum(row['bytes'])} | {row['bytes'] / 2**20:.2f} | {row['what']} |")
    L.append("")
    L.append("## 6. Memory")
    L.append("")
    L.append("| client | process RSS idle (KiB) | client's share idle (KiB) | RSS after warm-up | RSS after the calls "
             "| calls | growth (KiB) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for key, row in res["memory"].items():
        if "error" in row:
            L.append(f"| {label(key)} | not run: {row['error'][:100]} | | | | | |")
            continue
        L.append(f"| {label(key)} | {fnum(row['rss_idle_kb'])} | {fnum(row['client_idle_kb'])} | "
                 f"{fnum(row['rss_warm_kb'])} | {fnum(row['rss_after_kb'])} | {fnum(row['calls'])} | "
                 f"{fnum(row['growth_kb'])} |")
    L.append("")
    L.append("Process RSS at the end of the sequential stdio run, for scale: " + ", ".join(
        f"{label(k)} {fnum(v.get('rss_kb'))} KiB" for k, v in res["seq_stdio"].items()
        if "error" not in v and v.get("rss_kb")) + ".")
    L.append("")
    L.append("## 7. FFI cost: the same call through the C ABI and the Rust API")
    L.append("")
    seq = res["seq_stdio"]
    c, rc, rm = seq.get("cabi", {}), seq.get("rust/current", {}), seq.get("rust/multi", {})
    L.append("| path | calls/s | mean µs/call | client CPU µs/call |")
    L.append("|---|---:|---:|---:|")
    for key, row in (("cabi", c), ("rust/current", rc), ("rust/multi", rm)):
        if "error" in row or not row:
            continue
        L.append(f"| {label(key)} | {fnum(row['per_sec'])} | {fnum(1e6 / row['per_sec'], 1)} | "
                 f"{fnum(row.get('cpu_us_per_call'), 1)} |")
    if per_sec(c) and per_sec(rc):
        L.append("")
        L.append(f"C ABI ÷ Rust API (current-thread runtime, the C ABI's model): {ratio(per_sec(c), per_sec(rc)):.2f}; "
                 f"the C ABI adds {1e6 / per_sec(c) - 1e6 / per_sec(rc):.1f} µs per call "
                 f"({(c.get('cpu_us_per_call') or 0) - (rc.get('cpu_us_per_call') or 0):.1f} µs of CPU): argument "
                 "JSON parsing, the result string, the call boundary.")
    L.extend(many_report(res.get("many")))
    L.extend(idle_report(res.get("idle")))
    L.extend(idle_report(res.get("idle_http"), http=True))
    L.extend(hub_report(res.get("hub")))
    L.extend(https_report(res.get("https")))
    L.extend(spans_report(res.get("spans"), (res.get("spans") or {}).get("baseline_commit", "")))
    return "\n".join(L) + "\n"


def bench_cache(args) -> int:
    """The response-cache target: C ABI `tools/list` from the cache vs with MCP_CACHE_BYPASS."""
    lib, fixture = cabi_against(args)
    LOGS.mkdir(parents=True, exist_ok=True)
    record = LOGS / "cache-record.jsonl"
    record.unlink(missing_ok=True)
    cmd = [str(CBIN / "cabi"), "cache", "--duration", str(args.duration), "--max-calls", "200000", "--",
           str(fixture), "--fast", "--cache-ttl-ms", "600000", "--record", str(record)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=120, check=True, cwd=ROOT).stdout
    res = json.loads(out.strip().splitlines()[-1])
    lists = sum(1 for line in record.read_text().splitlines() if '"tools/list"' in line)
    # Every bypassed call reaches the server, and of the cached series only its first (the fill).
    round_trips = lists - res["sent_calls"]
    ok = round_trips == 1 and res["cached_p50_us"] < res["sent_p50_us"]
    md = "\n".join([
        "# Response cache (SEP-2549): a cached tools/list",
        "",
        f"C ABI (`bench/c/cabi.c cache`), library `{shown(lib)}`, "
        f"fixture `--fast --cache-ttl-ms 600000`, {args.duration} s per series, "
        f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.",
        "",
        "| series | calls | calls/s | p50 µs | p99 µs | requests the server received |",
        "|---|---|---|---|---|---|",
        f"| `MCP_CACHE_BYPASS` (sent) | {res['sent_calls']} | {res['sent_per_sec']:.0f} | {res['sent_p50_us']:.1f} | "
        f"{res['sent_p99_us']:.1f} | {res['sent_calls']} |",
        f"| `MCP_CACHE_USE` (cached) | {res['cached_calls']} | {res['cached_per_sec']:.0f} | "
        f"{res['cached_p50_us']:.1f} | {res['cached_p99_us']:.1f} | {round_trips} (the fill) |",
        "",
        f"{'PASS' if ok else 'FAIL'}: a cached tools/list costs no round trip "
        f"({res['cached_calls'] - 1} of {res['cached_calls']} cached calls sent nothing; "
        f"p50 {res['cached_p50_us']:.1f} µs vs {res['sent_p50_us']:.1f} µs sent)",
        "",
    ])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cache.md").write_text(md)
    print(md)
    return 0 if ok else 1


ALL_SECTIONS = "seq,place,http,conc,mrtr,connect,mem,async,many,idle,hub,https,spans"


def chart(res: dict, mach: dict) -> str:
    seq = res.get("seq_stdio", {})
    raw, ours = seq.get("raw"), seq.get("cabi")
    rows = [(label(k), compare(v, raw), None if k == "cabi" else compare(ours, v))
            for k, v in seq.items() if k != "raw" and "error" not in v]
    load = mach.get("during_run", {})
    return svg(rows, f"{mach['date']}, {mach['cores']} cores, CPUs {load.get('busy_percent', '?')}% busy during the "
                     f"run; mcp-fixture-server --fast, echo, {len((raw or {}).get('round_values') or [])} interleaved "
                     "rounds")


# make bench's reduced many-clients section (about a minute): the target's 200 clients, shared
# runtime and raw baseline only (the isolated runtime is in `--only many`), 1 and 4 host threads;
# at most --rounds rounds (so --quick makes it one).
MANY_SECTION = {"clients": 200, "rounds": 5, "duration": 1.0, "runtimes": ("shared",)}


def measure_many(clients: int, rounds: int, duration: float, runtimes: tuple[str, ...],
                 fixture: Path = FIXTURE) -> dict:
    """`clients` C-ABI clients, each connected to its own fixture server (`cabi many`,
    per runtime), and the raw baseline over as many servers (`raw_stdio --servers`), for 1 and 4
    host threads, interleaved per round. Each run reports calls/s with the host threads' calls
    all on one client ("one") and spread over every client ("all"), and client CPU per call."""
    runs: dict[str, list[dict]] = {}
    http = HttpServer(sse=False, fixture=fixture)
    try:
        for rnd in range(rounds):
            measure_many_round(runs, rnd, rounds, clients, duration, runtimes, fixture, http.url)
    finally:
        http.close()
    return {"settings": {"clients": clients, "rounds": rounds, "duration": duration, "runtimes": list(runtimes)},
            "runs": runs}


def measure_many_round(runs: dict, rnd: int, rounds: int, clients: int, duration: float,
                       runtimes: tuple[str, ...], fixture: Path, url: str) -> None:
    """One round of `measure_many`, plus `clients` shared-runtime clients of one fixture HTTP
    server (`http-shared`, 1 host thread: what an idle HTTP client holds and its connect)."""
    for host_threads in (1, 4):
        for runtime in ("raw", *runtimes):  # interleaved, so drift hits all alike
            log(f"many: round {rnd + 1}/{rounds}, {runtime}, {host_threads} host thread(s)")
            if runtime == "raw":
                cmd = [str(CBIN / "raw_stdio"), "--servers", str(clients), "--inflight", str(host_threads),
                       "--duration", str(duration), "--", str(fixture), "--fast"]
            else:
                cmd = [str(CBIN / "cabi"), "many", "--clients", str(clients), "--runtime", runtime,
                       "--inflight", str(host_threads), "--duration", str(duration), "--", str(fixture), "--fast"]
            row = many_run(cmd)
            if runtime == "raw":  # the same names as cabi's
                row["one_client_per_sec"], row["all_clients_per_sec"] = (row["one_server_per_sec"],
                                                                         row["all_servers_per_sec"])
            runs.setdefault(f"{runtime}/{host_threads}", []).append(row)
    log(f"many: round {rnd + 1}/{rounds}, shared, HTTP, 1 host thread")
    runs.setdefault("http-shared/1", []).append(many_run(
        [str(CBIN / "cabi"), "many", "--clients", str(clients), "--runtime", "shared", "--inflight", "1",
         "--duration", str(duration), "--url", url]))


def many_run(cmd: list[str]) -> dict:
    """A C runner's result: the last line of its stdout, as JSON."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, cwd=ROOT)
    if done.returncode != 0:
        # The runner says what failed on stderr (among the servers' own lines).
        why = [ln for ln in done.stderr.splitlines() if ln.startswith("bench:")]
        raise RuntimeError(f"{' '.join(cmd[:8])} ... exited with {done.returncode}: "
                           f"{'; '.join(why) or done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def many_ratio(runs: dict, key: str, against: str | None = None) -> dict | None:
    """Median over rounds of `key`'s all ÷ one within a round; with `against`, divided by
    `against`'s all ÷ one of the same round (the share of the spread's cost that is the
    library's: 1.0 = it loses exactly what the raw baseline loses)."""
    if key not in runs or (against and against not in runs):
        return None
    vals = []
    for i, r in enumerate(runs[key]):
        v = r["all_clients_per_sec"] / r["one_client_per_sec"]
        if against:
            if i >= len(runs[against]):
                break
            a = runs[against][i]
            v /= a["all_clients_per_sec"] / a["one_client_per_sec"]
        vals.append(v)
    if not vals:
        return None
    return {"value": statistics.median(vals), "lo": min(vals), "hi": max(vals), "best": max(vals),
            "rounds": len(vals)}


def many_med(runs: dict, key: str, field: str) -> float | None:
    return statistics.median(r[field] for r in runs[key]) if runs.get(key) else None


def many_targets(m: dict, add) -> None:
    """The three many-clients targets for the shared runtime, plus the raw baseline's spread (what
    the machine and the servers cost, no client library in the way)."""
    runs, n = m["runs"], m["settings"]["clients"]
    shared = [k for k in runs if k.startswith("shared/")]
    if not shared:
        return
    th = [(r["threads_one"], r["threads_all"]) for k in shared for r in runs[k]]
    add(f"shared runtime: library threads independent of the client count (threads added from 1 to {n} clients)",
        float(max(b - a for a, b in th)), 1.0, "<", f"process threads with 1 / {n} clients: {sorted(set(th))}")
    rss = many_med(runs, "shared/1", "rss_per_client_trimmed_kb")
    add(f"RSS per idle shared client < 64 KiB ({n} clients, each made one call; after malloc_trim)", rss, 64.0, "<",
        f"KiB per client, median over rounds; isolated: {fnum(many_med(runs, 'isolated/1', 'rss_per_client_trimmed_kb'), 1)}")
    if runs.get("http-shared/1"):
        add(f"RSS per idle shared HTTP client < 64 KiB ({n} clients of one fixture HTTP server, each made one call; "
            "after malloc_trim)", many_med(runs, "http-shared/1", "rss_per_client_trimmed_kb"), 64.0, "<",
            f"KiB per client, median over rounds; connect p50 {fnum(many_med(runs, 'http-shared/1', 'connect_p50_ms'), 2)} ms")
    for ht in ("1", "4"):
        mine, raw = many_ratio(runs, f"shared/{ht}"), many_ratio(runs, f"raw/{ht}")
        one, all_ = many_med(runs, f"shared/{ht}", "one_client_per_sec"), many_med(runs, f"shared/{ht}",
                                                                                 "all_clients_per_sec")
        cpu = (many_med(runs, f"shared/{ht}", "one_cpu_us_per_call"), many_med(runs, f"shared/{ht}",
                                                                               "all_cpu_us_per_call"))
        rcpu = (many_med(runs, f"raw/{ht}", "one_cpu_us_per_call"), many_med(runs, f"raw/{ht}",
                                                                            "all_cpu_us_per_call"))
        add(f"calls/s spread over {n} shared clients ≥ 0.9x the same calls in flight on one client ({ht} host "
            f"thread{'s' if ht != '1' else ''})", mine, 0.9, ">=",
            f"one {fnum(one)}/s, all {fnum(all_)}/s; the raw baseline over {n} servers keeps "
            f"{fnum((raw or {}).get('value'), 2)}x of its one-server figure"
            f"{' (it misses this target itself: the machine and servers, not the client)' if raw and raw['value'] < 0.9 else ''}"
            f"; client CPU µs/call one → all: C ABI {fnum(cpu[0], 1)} → {fnum(cpu[1], 1)}, raw {fnum(rcpu[0], 1)} → "
            f"{fnum(rcpu[1], 1)}")
        add(f"the same, against the raw baseline's own spread (library's share: shared all÷one ÷ raw all÷one, "
            f"{ht} host thread{'s' if ht != '1' else ''}) ≥ 0.9", many_ratio(runs, f"shared/{ht}", f"raw/{ht}"),
            0.9, ">=", "1.0: spreading costs the library the same share of its one-client calls/s as it costs the "
            "raw baseline; lenient, since a fixed cost per call makes a slower client lose a smaller share: the "
            "client CPU per call (section 8) shows what the library itself adds when spread")


def many_report(m: dict | None) -> list[str]:
    """The many-clients table (make bench's section 8 and results/many.md)."""
    if not m:
        return []
    runs, st = m["runs"], m["settings"]

    def cell(key: str, field: str, fmt: str = "{:.0f}") -> str:
        vals = [r[field] for r in runs[key] if r.get(field) is not None]
        if not vals:
            return ""
        return f"{fmt.format(statistics.median(vals))} ({fmt.format(min(vals))}–{fmt.format(max(vals))})"

    L = ["", f"## 8. Many clients: {st['clients']} clients, each on its own server", "",
         f"`bench/c/cabi.c many` per runtime and `bench/c/raw_stdio.c --servers` (the raw baseline: pre-encoded "
         f"lines, blocking read/write, no client library), {st['rounds']} interleaved rounds of {st['duration']} s "
         "per series; median (min–max). **one**: the host threads' calls all go to one client (one server: N host "
         "threads = N calls in flight on one connection; raw: a window of N on one pipe); **all**: the same host "
         "threads, each calling its share of every client in turn (N calls in flight, each to a different server). "
         "Client CPU is this process's (all threads) per call. Threads and RSS are the library's (servers are other "
         "processes); RSS per idle client is after one call each and malloc_trim. **C ABI, http-shared**: the "
         "same number of shared-runtime clients, all of one fixture HTTP server (JSON responses), 1 host thread.", "",
         "| runner | host threads | threads: 1 client / all | RSS KiB per idle client | connect p50 ms | calls/s one "
         "| calls/s all | all ÷ one | CPU µs/call one | CPU µs/call all |",
         "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key in sorted(runs):
        rt, ht = key.split("/")
        r0 = runs[key][0]
        ratio_ = many_ratio(runs, key) or {}
        threads = "" if rt == "raw" else f"{r0['threads_one']} / {r0['threads_all']}"
        L.append(f"| {'raw baseline' if rt == 'raw' else 'C ABI, ' + rt} | {ht} | {threads} | "
                 f"{cell(key, 'rss_per_client_trimmed_kb', '{:.1f}')} | {cell(key, 'connect_p50_ms', '{:.2f}')} | "
                 f"{cell(key, 'one_client_per_sec')} | {cell(key, 'all_clients_per_sec')} | "
                 f"{fnum(ratio_.get('value'), 2)} ({fnum(ratio_.get('lo'), 2)}–{fnum(ratio_.get('hi'), 2)}) | "
                 f"{cell(key, 'one_cpu_us_per_call', '{:.1f}')} | {cell(key, 'all_cpu_us_per_call', '{:.1f}')} |")
    return L


def bench_many(args) -> int:
    """The many-clients target in full (`--only many`): --clients clients, each connected to its own fixture
    server, isolated vs on the shared runtime, with the raw baseline over as many servers."""
    _, fixture = cabi_against(args)
    build_raw_stdio()
    m = measure_many(args.clients, args.rounds, args.duration, ("isolated", "shared"), fixture)
    tgs = Targets()
    many_targets(m, tgs.add)
    head = (f"`python3 bench/run.py --only many --clients {args.clients} --rounds {args.rounds} --duration "
            f"{args.duration}`, {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.")
    tail = ["", "What the throughput figures mean: with the same host threads and the same calls in flight, "
          "spreading them over many clients makes every call wake a different server process, cold in the "
          "caches and last run on whichever core; concentrated on one client, the one server and the client "
          "ping-pong on one core (the server preempts the client, which finds its answer without sleeping). "
          "The raw baseline, which does nothing but write and read pipes, loses as much or more by spreading: "
          "the target's \"within 10% of one client's\" cannot be met on this machine by any client, so the "
          "targets also compare the library's loss with the raw baseline's. docs/performance.md (Shared runtime) "
          "has the analysis."]
    write_section("many", "Many clients: isolated vs shared runtime, against the raw baseline", head,
                  many_report(m)[2:], tgs.table("median", cell=lambda t: fnum(t["value"], 2)), m, tail)
    return 0 if tgs.passed() else 1


# The hub (make bench's section `hub`, and `--only hub` with its own --rounds): member counts, rounds,
# hubs per run (each one's start timed), and seconds of merged tools/list with the most members.
HUB_SECTION = {"members": (1, 5, 20), "rounds": 5, "iterations": 9, "list_duration": 1.0}


def measure_hub(members: tuple[int, ...], rounds: int, iterations: int, list_duration: float,
                fixture: Path = FIXTURE) -> dict:
    """Per round, for each member count in turn (interleaved): the raw baseline connecting as many
    fixture servers at once (`raw_stdio --connect --parallel`: spawn, discover, no library), then
    a hub of as many fixture members through the C ABI (`bench/c/hub.c`); the hub with the most
    members also times the merged tools/list from its cache."""
    runs: dict[str, list[dict]] = {}
    server = ["--", str(fixture), "--fast"]
    for rnd in range(rounds):
        for n in members:
            log(f"hub: round {rnd + 1}/{rounds}, {n} member(s)")
            runs.setdefault(f"raw/{n}", []).append(many_run(
                [str(CBIN / "raw_stdio"), "--connect", str(iterations), "--parallel", str(n), "--duration", "120",
                 *server]))
            listing = ["--list-duration", str(list_duration)] if n == max(members) else []
            runs.setdefault(f"hub/{n}", []).append(many_run(
                [str(CBIN / "hub"), "--members", str(n), "--iterations", str(iterations), *listing, *server]))
    return {"settings": {"members": list(members), "rounds": rounds, "iterations": iterations,
                         "list_duration": list_duration}, "runs": runs}


def hub_figure(runs: dict, key: str, field: str) -> dict | None:
    """`field` over the rounds of `key`: median, range, best (lowest) round."""
    vals = [r[field] for r in runs.get(key, []) if r.get(field) is not None]
    if not vals:
        return None
    return {"value": statistics.median(vals), "lo": min(vals), "hi": max(vals), "best": min(vals), "rounds": len(vals)}


def hub_ratio(runs: dict, kind: str, many: int, one: int = 1) -> dict | None:
    """Connect time of `many` members (or servers) over `one`'s, within each round: median, range,
    best round against best round."""
    a, b = runs.get(f"{kind}/{many}", []), runs.get(f"{kind}/{one}", [])
    pairs = [x["connect_p50_us"] / y["connect_p50_us"] for x, y in zip(a, b)]
    if not pairs:
        return None
    return {"value": statistics.median(pairs), "lo": min(pairs), "hi": max(pairs),
            "best": min(x["connect_p50_us"] for x in a) / min(y["connect_p50_us"] for y in b), "rounds": len(pairs)}


def hub_vs_raw(runs: dict, n: int) -> dict | None:
    """The hub's connect of `n` members over the raw baseline's of `n` servers, within each round."""
    pairs = [x["connect_p50_us"] / y["connect_p50_us"] for x, y in zip(runs.get(f"hub/{n}", []),
                                                                       runs.get(f"raw/{n}", []))]
    if not pairs:
        return None
    return {"value": statistics.median(pairs), "lo": min(pairs), "hi": max(pairs)}


def ms_spread(fig: dict | None) -> str:
    return "n/a" if not fig else f"{fig['value'] / 1e3:.1f} ms ({fig['lo'] / 1e3:.1f}–{fig['hi'] / 1e3:.1f})"


def hub_targets(h: dict, add) -> None:
    """The hub's three targets: concurrent connect, merged tools/list from the cache, flat threads."""
    runs, members = h["runs"], h["settings"]["members"]
    big = max(members)
    mine, raw = hub_ratio(runs, "hub", big), hub_ratio(runs, "raw", big)
    one, many = hub_figure(runs, "hub/1", "connect_p50_us"), hub_figure(runs, f"hub/{big}", "connect_p50_us")
    raw_many = hub_figure(runs, f"raw/{big}", "connect_p50_us")
    unreachable = raw is not None and raw["value"] > 1.5
    vs_raw, vs_raw1 = hub_vs_raw(runs, big), hub_vs_raw(runs, 1)
    add(f"hub connect: {big} stdio members ≤ 1.5x one member (concurrent, not sequential)", mine, 1.5, "<=",
        f"hub start p50, 1 member {ms_spread(one)}, {big} members {ms_spread(many)} ({big} one after another "
        f"would take {fnum(one and one['value'] * big / 1e3, 1)} ms); the raw baseline ({big} fixture servers "
        f"spawned and sent discover at once by one C thread, no library) takes {fnum(raw and raw['value'], 2)}x "
        f"({fnum(raw and raw['lo'], 2)}–{fnum(raw and raw['hi'], 2)}) its one-server time, {ms_spread(raw_many)} "
        f"for {big}"
        + (f": it misses the target itself, since {big} server processes starting at once queue for "
           f"{os.cpu_count()} cores; no client can reach 1.5x on this machine" if unreachable else "")
        + f"; the hub's {big}-member connect ÷ the raw baseline's {big} {fnum((vs_raw or {}).get('value'), 2)} "
          f"({fnum((vs_raw or {}).get('lo'), 2)}–{fnum((vs_raw or {}).get('hi'), 2)}), with 1: "
          f"{fnum((vs_raw1 or {}).get('value'), 2)} ({fnum((vs_raw1 or {}).get('lo'), 2)}–"
          f"{fnum((vs_raw1 or {}).get('hi'), 2)}); client CPU during the {big}-member connect, hub "
          f"{ms_spread(hub_figure(runs, f'hub/{big}', 'connect_cpu_p50_us'))}, raw "
          f"{ms_spread(hub_figure(runs, f'raw/{big}', 'connect_cpu_p50_us'))}")
    lst = hub_figure(runs, f"hub/{big}", "list_p50_us")
    p99 = hub_figure(runs, f"hub/{big}", "list_p99_us")
    r0 = (runs.get(f"hub/{big}") or [{}])[0]
    fill = hub_figure(runs, f"hub/{big}", "list_fill_us")
    add(f"merged tools/list over {big} connected members from the cache < 50 µs per call (p50)", lst, 50.0, "<",
        f"p50 µs median over rounds {fnum(lst and lst['value'], 1)} ({fnum(lst and lst['lo'], 1)}–"
        f"{fnum(lst and lst['hi'], 1)}), p99 {fnum(p99 and p99['value'], 1)} ({fnum(p99 and p99['lo'], 1)}–"
        f"{fnum(p99 and p99['hi'], 1)}); {fnum(r0.get('tools'))} tools, {fnum(r0.get('list_bytes'))} bytes of JSON "
        f"per call; the first call, fetching every member's list, {fnum(fill and fill['value'] / 1e3, 1)} ms")
    th = {n: [r["threads_hub"] for r in runs.get(f"hub/{n}", [])] for n in members}
    added = [b - a for a, b in zip(th.get(1, []), th.get(big, []))]
    add(f"threads flat from 1 to {big} members (threads added)", float(max(added)) if added else None, 1.0, "<",
        "process threads with " + " / ".join(f"{n}" for n in members) + " members: "
        + " / ".join(str(sorted(set(th[n]))) for n in members)
        + f"; before the hub {sorted(set(r['threads_before'] for r in runs.get('hub/1', [])))}")


def hub_report(h: dict | None) -> list[str]:
    """The hub table (make bench's section 10 and results/hub.md)."""
    if not h:
        return []
    runs, st = h["runs"], h["settings"]

    def cell(key: str, field: str, scale: float = 1e3, digits: int = 2) -> str:
        fig = hub_figure(runs, key, field)
        if not fig:
            return ""
        return (f"{fig['value'] / scale:.{digits}f} ({fig['lo'] / scale:.{digits}f}–"
                f"{fig['hi'] / scale:.{digits}f})")

    def ratio_cell(kind: str, n: int) -> str:
        r = hub_ratio(runs, kind, n)
        return "" if not r else f"{r['value']:.2f} ({r['lo']:.2f}–{r['hi']:.2f})"

    L = ["", "## 10. Hub: many stdio members as one client", "",
         f"`bench/c/hub.c` (the C ABI: `mcp_hub_new`, one `mcp_hub_add_member` per member, each starting its own "
         f"`mcp-fixture-server --fast`; `mcp_hub_start` timed, every member connected concurrently on the shared "
         f"runtime: spawn, `server/discover` and the `subscriptions/listen` acknowledgement; `mcp_hub_free` timed "
         f"until every server is reaped) and `bench/c/raw_stdio.c --connect --parallel` (the raw baseline: one C "
         f"thread spawns as many servers with `posix_spawn`, writes each its pre-encoded discover as soon as it is "
         f"spawned, then reads every reply; no listen). {st['rounds']} interleaved rounds, each run "
         f"{st['iterations']} hubs (or connects) whose p50 is the run's figure; median (min–max) over rounds. "
         "Ratios are within a round, then the median. Client CPU: the bench process's own (all threads) while it "
         "connects; the servers are other processes.", "",
         "| members | hub connect p50 ms | raw connect p50 ms | hub ÷ raw | hub: N ÷ 1 | raw: N ÷ 1 | "
         "client CPU during connect, hub / raw, ms | process threads | hub close p50 ms |",
         "|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for n in st["members"]:
        r = hub_vs_raw(runs, n)
        vs_raw = "" if not r else f"{r['value']:.2f} ({r['lo']:.2f}–{r['hi']:.2f})"
        threads = sorted(set(r["threads_hub"] for r in runs.get(f"hub/{n}", [])))
        L.append(f"| {n} | {cell(f'hub/{n}', 'connect_p50_us')} | {cell(f'raw/{n}', 'connect_p50_us')} | {vs_raw} | "
                 f"{ratio_cell('hub', n)} | {ratio_cell('raw', n)} | {cell(f'hub/{n}', 'connect_cpu_p50_us')} / "
                 f"{cell(f'raw/{n}', 'connect_cpu_p50_us')} | {', '.join(map(str, threads))} | "
                 f"{cell(f'hub/{n}', 'close_p50_us')} |")
    big = max(st["members"])
    L += ["", f"Merged `tools/list` over {big} connected members, from the hub's cache (`mcp_hub_list`, the JSON text "
          f"copied out and freed; {st['list_duration']} s per round after one untimed call that fetches every "
          f"member's list): p50 {cell(f'hub/{big}', 'list_p50_us', 1, 1)} µs, p99 "
          f"{cell(f'hub/{big}', 'list_p99_us', 1, 1)} µs, {cell(f'hub/{big}', 'list_per_sec', 1, 0)} calls/s; the "
          f"filling call {cell(f'hub/{big}', 'list_fill_us')} ms."]
    return L


def bench_hub(args) -> int:
    """The hub targets alone (`--only hub`): results/hub.{md,json}."""
    lib, fixture = cabi_against(args)
    build_raw_stdio()
    link_hub(lib)
    mach, cpu0 = machine(), cpu_times()
    h = measure_hub(HUB_SECTION["members"], args.rounds, HUB_SECTION["iterations"], HUB_SECTION["list_duration"],
                    fixture)
    run_ended(mach, cpu0)
    tgs = Targets()
    hub_targets(h, tgs.add)
    run = mach["during_run"]
    steal = run.get("steal_percent") or 0
    head = (f"`python3 bench/run.py --only hub --rounds {args.rounds}` (`make bench-hub`), {mach['date']}, library "
            f"`{shown(lib)}`, {run_conditions(mach)}"
            + (f" (above {STEAL_NOTABLE:.0f}%: the absolute times measured the host's contention as much as the hub)"
               if steal > STEAL_NOTABLE else "")
            + (". Other processes kept both cores busy through the run: the connect times include waiting for them, "
               "and the ratios within a round are the figures to compare" if (run.get("busy_percent") or 0) >= 90
               else "")
            + ".")
    write_section("hub", "Hub: many stdio members as one client", head, hub_report(h)[2:], tgs.table(),
                  {"machine": mach, "results": h, "targets": tgs})
    return 0 if tgs.passed() else 1


# ---------------------------------------------------------------- HTTPS (section 11)

# `bench/src/bin/tls.rs`: the HTTPS server (test certificate, HTTP/1.1 or h2 by ALPN), the
# CONNECT proxy and the raw TLS and HTTP/2 clients; the test CA the clients trust.
TLS_TOOL = BENCH_RELEASE / "mcp-bench-tls"
TLS_CA = ROOT / "tests" / "vectors" / "tls" / "trusted-ca.pem"
# The large echo's payload (bytes each way), the HTTP/2 depth, and the calls of the two callgrind
# runs whose difference gives instructions per call.
HTTPS_SECTION = {"payload": 100 * 1024, "inflight": 64, "callgrind_calls": (50, 250)}
PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
              "NO_PROXY")


class TlsProcess:
    """`mcp-bench-tls server|proxy ARGS`: prints `listening on URL`, answers each line on its stdin
    with one JSON line of its counters, and exits when its stdin closes."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([str(TLS_TOOL), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = (self.proc.stdout.readline() if self.proc.stdout else "").strip()
        if not line.startswith("listening on "):
            self.close()
            raise RuntimeError(f"mcp-bench-tls {' '.join(args)} did not start: {line!r}")
        self.url = line[len("listening on "):]

    def counters(self) -> dict:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def tls_env(proxy: str | None = None) -> dict:
    """The clients' environment: the test CA as the only trust store (`SSL_CERT_FILE`, which the
    library's platform verifier reads on Linux), no proxy from the caller's environment, and
    `HTTPS_PROXY` when the run goes through `proxy`."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS and k != "SSL_CERT_DIR"}
    env["SSL_CERT_FILE"] = str(TLS_CA)
    if proxy:
        env["HTTPS_PROXY"] = proxy
    return env


def system_store_env(env: dict) -> dict | None:
    """`env` with a trust store the size of the system's (None when it has none): its bundle with
    the test CA appended as `SSL_CERT_FILE`, its directory as `SSL_CERT_DIR`."""
    paths = ssl.get_default_verify_paths()  # OpenSSL's own places, not the variables
    cafile, capath = Path(paths.openssl_cafile), Path(paths.openssl_capath)
    if not cafile.is_file() or not capath.is_dir():
        return None
    bundle = LOGS / "https-system-bundle.pem"
    LOGS.mkdir(parents=True, exist_ok=True)
    bundle.write_text(cafile.read_text() + TLS_CA.read_text())
    return {**env, "SSL_CERT_FILE": str(bundle), "SSL_CERT_DIR": str(capath)}


def result_line(cmd: list[str], env: dict, budget: float, logfile: Path) -> dict:
    """A runner's result: the last `{` line of its stdout as JSON (stderr to `logfile`), or
    `{"error": ...}` when it failed, timed out or printed none."""
    try:
        with open(logfile, "w") as err:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env, timeout=budget,
                               stdin=subprocess.DEVNULL, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {budget:.0f} s (log: {logfile})"}
    except OSError as e:
        return {"error": str(e)}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = logfile.read_text(errors="replace").strip().splitlines()[-3:]
        return {"error": f"exit {p.returncode}: {' | '.join(tail)[:300]}"}
    return json.loads(lines[-1])


def https_run(name: str, cmd: list[str], env: dict, budget: float) -> dict:
    """One run's result line (`result_line`), its stderr in an `https-` log."""
    LOGS.mkdir(parents=True, exist_ok=True)
    return result_line(cmd, env, budget, LOGS / f"https-{name.replace('/', '-')}.log")


def https_instructions(name: str, cmd: list[str], env: dict) -> int | None:
    """Instructions the client process executed (`callgrind_total`), None when the run failed."""
    try:
        return callgrind_total(cmd, LOGS / f"https-callgrind-{name}.out", env)[0]
    except (subprocess.SubprocessError, OSError):
        return None


def measure_https(rounds: int, duration: float, warmup: int, connect_iterations: int) -> dict:
    """11. HTTPS on loopback against raw baselines written for it (`mcp-bench-tls`: no MCP library,
    substring parsing, rustls as in the library), interleaved rounds: sequential calls with JSON
    and SSE responses; connect + first call; 64 calls in flight on one HTTP/2 connection (the
    server counts connections); the same sequential JSON calls through a local CONNECT proxy; and
    a 100 KB echo, with instructions per call from callgrind (one run each, deterministic)."""
    payload, inflight = HTTPS_SECTION["payload"], HTTPS_SECTION["inflight"]
    dur = ["--duration", f"{duration}", "--warmup", str(warmup)]
    budget = duration * 2 + 60
    tool, cabi = [str(TLS_TOOL)], [str(CBIN / "cabi")]
    env = tls_env()
    system = system_store_env(env)
    log(f"11 HTTPS: {rounds} rounds (sequential JSON/SSE, connect, HTTP/2 x{inflight}, CONNECT proxy, "
        f"{payload // 1024} KB echo), then callgrind")
    servers: dict[str, TlsProcess] = {}
    runs: dict[str, list[dict]] = {}
    try:
        servers["json"] = TlsProcess("server")
        servers["sse"] = TlsProcess("server", "--sse")
        servers["h2"] = TlsProcess("server", "--h2")
        servers["proxy"] = TlsProcess("proxy")
        servers["plain"] = TlsProcess("server", "--plain")
        url, proxy = servers["json"].url, servers["proxy"]

        def one(key: str, cmd: list[str], run_env: dict, counted: TlsProcess | None = None) -> None:
            before = counted.counters() if counted else None
            res = https_run(key, cmd, run_env, budget)
            if counted and before and "error" not in res:
                after = counted.counters()
                res["server"] = {k: after[k] - before[k] for k in after}
            runs.setdefault(key, []).append(res)

        for _ in range(rounds):
            for kind in ("json", "sse"):
                target = ["--url", servers[kind].url]
                one(f"seq_{kind}/raw", [*tool, "raw", "seq", *dur, *target], env)
                one(f"seq_{kind}/cabi", [*cabi, "seq", *dur, *target], env)
            # The same server over plain HTTP (raw: c/raw_http.c): what TLS adds to each.
            plain = ["--url", servers["plain"].url]
            one("seq_plain/raw", [str(CBIN / "raw_http"), *dur, *plain], env)
            one("seq_plain/cabi", [*cabi, "seq", *dur, *plain], env)
            one("proxy/raw", [*tool, "raw", "seq", *dur, "--proxy", proxy.url, "--url", url], env, proxy)
            one("proxy/cabi", [*cabi, "seq", *dur, "--url", url], tls_env(proxy.url), proxy)
            its = ["--iterations", str(connect_iterations), "--duration", "30", "--url", url]
            one("connect/raw", [*tool, "raw", "connect", *its], env, servers["json"])
            one("connect/cabi", [*cabi, "connect", *its], env, servers["json"])
            # A store the size of the system's (its bundle and directory), as a host has.
            if system:
                one("connect/cabi_system", [*cabi, "connect", *its], system, servers["json"])
            h2 = ["--inflight", str(inflight), *dur, "--url", servers["h2"].url]
            one("h2/raw", [*tool, "rawh2", *h2], env, servers["h2"])
            one("h2/cabi", [*cabi, "started", *h2], env, servers["h2"])
            big = ["--payload", str(payload), *dur, "--url", url]
            one("large/raw", [*tool, "raw", "seq", *big], env)
            one("large/cabi", [*cabi, "seq", *big], env)
        # A proxied run that never reached the proxy measured the direct path: not a result.
        for res in runs.get("proxy/cabi", []) + runs.get("proxy/raw", []):
            if "error" not in res and res.get("server", {}).get("connections", 0) < 1:
                res["error"] = "the run opened no tunnel through the proxy"
        out: dict = {}
        for key, vals in runs.items():
            group, _, runner = key.partition("/")
            row = latency_summary(vals, "first_p50_us") if group == "connect" else summary(vals)
            if group in ("h2", "proxy", "connect"):
                row["server_rounds"] = [r.get("server") for r in vals]
            row["p50_rounds"] = [None if "error" in r else r.get("p50_us") for r in vals]
            out.setdefault(group, {})[runner] = row
        lo, hi = HTTPS_SECTION["callgrind_calls"]
        ensure_valgrind()
        log(f"11 HTTPS: callgrind, {lo} and {hi} calls, echo of 'hi' and of {payload} bytes, raw and C ABI")
        ipc: dict = {}
        for size in (0, payload):
            for runner, cmd in (("raw", [*tool, "raw", "seq"]), ("cabi", [*cabi, "seq"])):
                totals = [https_instructions(f"{runner}-{size}-{n}", [*cmd, "--payload", str(size), "--warmup", "0",
                                                                    "--max-calls", str(n), "--duration", "600",
                                                                    "--url", url], env) for n in (lo, hi)]
                ipc.setdefault(runner, {})[str(size)] = (
                    (totals[1] - totals[0]) / (hi - lo) if None not in totals else None)
        for runner, cmd in (("raw", [str(CBIN / "raw_http")]), ("cabi", [*cabi, "seq"])):
            totals = [https_instructions(f"{runner}-plain-{n}", [*cmd, "--warmup", "0", "--max-calls", str(n),
                                                               "--duration", "600", "--url", servers["plain"].url],
                                      env) for n in (lo, hi)]
            ipc[runner]["plain"] = (totals[1] - totals[0]) / (hi - lo) if None not in totals else None
        out["instructions"] = {"calls": [lo, hi], "payload": payload, "per_call": ipc}
        return out
    finally:
        for s in servers.values():
            s.close()


def p50_ratio(a: dict | None, b: dict | None) -> str:
    """a's p50 latency ÷ b's, the median over rounds of the ratio within a round (range): on a
    loaded machine calls/s swing with every preemption, the median call much less."""
    pa, pb = (a or {}).get("p50_rounds") or [], (b or {}).get("p50_rounds") or []
    pairs = sorted(x / y for x, y in zip(pa, pb) if x and y)
    if not pairs:
        return "n/a"
    return f"{statistics.median(pairs):.2f} ({pairs[0]:.2f}-{pairs[-1]:.2f})"


def https_targets(h: dict, add) -> None:
    for kind in ("json", "sse"):
        rows = h.get(f"seq_{kind}", {})
        raw, cabi = rows.get("raw"), rows.get("cabi")
        add(f"HTTPS ({kind}) C ABI calls/s >= 0.75x raw TLS client", compare(cabi, raw), 0.75, ">=",
            f"C ABI {spread(cabi)}; raw {spread(raw)}; p50 C ABI ÷ raw {p50_ratio(cabi, raw)}")
        add(f"HTTPS ({kind}) C ABI client CPU per call <= 1.5x raw TLS client's", cpu_compare(cabi, raw), 1.5, "<=",
            f"C ABI {fnum((cabi or {}).get('cpu_us_per_call'), 1)} µs, raw {fnum((raw or {}).get('cpu_us_per_call'), 1)}"
            " µs per call (median round)")
    con = h.get("connect", {})
    same_ca = latency_ratio(con.get("cabi"), con.get("raw"))
    sys_store = latency_ratio(con.get("cabi_system"), con.get("raw"))
    add("HTTPS connect + first call (C ABI, the same trust store as raw: the test CA) <= 1.2x raw TLS client's",
        same_ca, 1.2, "<=",
        f"p50 C ABI {fnum((con.get('cabi') or {}).get('first_p50_us'), 0)} µs, raw "
        f"{fnum((con.get('raw') or {}).get('first_p50_us'), 0)} µs (median round); with a store the size of the "
        f"system's (as a host has): {fnum((con.get('cabi_system') or {}).get('first_p50_us'), 0)} µs, "
        f"÷ raw {fnum((sys_store or {}).get('value'), 2)}")
    h2 = h.get("h2", {})
    add(f"HTTP/2 over TLS: C ABI {HTTPS_SECTION['inflight']} started calls (one thread) >= 0.5x raw HTTP/2 client's "
        "streams", compare(h2.get("cabi"), h2.get("raw")), 0.5, ">=",
        f"C ABI {spread(h2.get('cabi'))}; raw {spread(h2.get('raw'))}; client CPU/call C ABI "
        f"{fnum((h2.get('cabi') or {}).get('cpu_us_per_call'), 1)} µs, raw {fnum((h2.get('raw') or {}).get('cpu_us_per_call'), 1)} µs")
    conns = [s.get("connections") for s in (h2.get("cabi") or {}).get("server_rounds") or [] if s]
    add("HTTP/2: connections the server accepted per C ABI run (every call on one)", max(conns) if conns else None,
        1, "<=", f"per round: {conns}")
    # No client keeps 0.9x of its direct rate through the proxy on this machine (the raw TLS client
    # kept 0.20x): the verdict is the library's proxied ÷ direct against the raw client's, measured
    # in the same rounds; the absolute ratio is shown beside it.
    direct, proxied = h.get("seq_json", {}), h.get("proxy", {})
    own = compare(proxied.get("raw"), direct.get("raw"))
    lib = compare(proxied.get("cabi"), direct.get("cabi"))
    add("CONNECT proxy: C ABI calls/s through it ÷ direct HTTPS >= 0.9x the raw TLS client's (proxied ÷ direct)",
        relative(proxied.get("cabi"), direct.get("cabi"), proxied.get("raw"), direct.get("raw")), 0.9, ">=",
        f"through the proxy {spread(proxied.get('cabi'))}; through it ÷ direct: C ABI "
        f"{fnum((lib or {}).get('value'), 2)} (information: 0.9 of direct is beyond every client here), raw TLS "
        f"client {fnum((own or {}).get('value'), 2)}")
    big = h.get("large", {})
    add(f"{HTTPS_SECTION['payload'] // 1024} KB echo over HTTPS: C ABI calls/s >= 0.7x raw", compare(big.get("cabi"),
                                                                                                  big.get("raw")), 0.7,
        ">=", f"C ABI {spread(big.get('cabi'))}; raw {spread(big.get('raw'))}; p50 C ABI ÷ raw "
              f"{p50_ratio(big.get('cabi'), big.get('raw'))}")
    ins = (h.get("instructions") or {}).get("per_call", {})
    cabi_ins, payload = ins.get("cabi", {}), HTTPS_SECTION["payload"]
    small, large = cabi_ins.get("0"), cabi_ins.get(str(payload))
    # TLS itself (AES-GCM both ways, rustls's records) costs the raw client more than 2.5 x payload:
    # the verdict is the same limit on what the library adds to the raw TLS client for the same
    # payload; the absolute count is shown beside it.
    raw_ins = ins.get("raw") or {}
    r_small, r_large = raw_ins.get("0"), raw_ins.get(str(payload))
    above = large - r_large if large is not None and r_large is not None else None
    small_above = small - r_small if small is not None and r_small is not None else None
    add(f"{payload // 1024} KB echo over HTTPS: C ABI instructions per call above the raw TLS client's <= 2.5 x "
        "payload + the small call's excess", above,
        2.5 * payload + small_above if small_above is not None else float("inf"), "<=",
        f"small call's excess {fnum(small_above)}; limit {fnum(2.5 * payload + (small_above or 0))}; absolute "
        f"(information): C ABI {fnum(large)} per call against 2.5 x payload + small call {fnum(small)} = "
        f"{fnum(2.5 * payload + (small or 0))}; raw TLS client {fnum(r_large)} (small {fnum(r_small)})")


def https_report(h: dict | None) -> list[str]:
    if not h:
        return []
    L = ["", "## 11. HTTPS on loopback", "",
         "`bench/src/bin/tls.rs` (`mcp-bench-tls`): the server presents the test certificate "
         "(`tests/vectors/tls`) and answers with canned modern-era results (the echo copies its `text` back "
         "unparsed), one thread; the raw TLS client writes pre-encoded HTTP/1.1 POSTs over blocking rustls "
         "(ring, as the library) and reads each reply to its end with no JSON work; the raw HTTP/2 client is the "
         "`h2` crate over tokio-rustls on one thread. The C ABI is `bench/c/cabi.c` with `SSL_CERT_FILE` naming "
         "the test CA. The sequential, proxy and 100 KB servers offer `http/1.1` only by ALPN (the raw client's "
         "protocol); the HTTP/2 server offers `h2` first. Medians over interleaved rounds (range).", "",
         "| figure | raw | C ABI | C ABI ÷ raw (range) | client CPU µs/call raw / C ABI | p50 µs raw / C ABI | "
         "p50 C ABI ÷ raw (range) |",
         "|---|---:|---:|---:|---:|---:|---:|"]

    def cell(c: dict | None) -> str:
        return "n/a" if not c else f"{c['value']:.2f} ({c['lo']:.2f}-{c['hi']:.2f})"

    names = {"seq_json": "sequential calls/s, JSON", "seq_sse": "sequential calls/s, SSE",
             "seq_plain": "the same over plain HTTP (raw: `c/raw_http.c`), JSON, for comparison",
             "proxy": "sequential calls/s through the CONNECT proxy (JSON)",
             "h2": f"HTTP/2: {HTTPS_SECTION['inflight']} in flight, calls/s",
             "large": f"{HTTPS_SECTION['payload'] // 1024} KB echo, calls/s"}
    for group, name in names.items():
        rows = h.get(group, {})
        raw, cabi = rows.get("raw"), rows.get("cabi")
        if not raw or not cabi:
            continue
        if "error" in raw or "error" in cabi:
            L.append(f"| {name} | {raw.get('error', '')[:80]} | {cabi.get('error', '')[:80]} | | | | |")
            continue
        L.append(f"| {name} | {fnum(per_sec(raw))} | {fnum(per_sec(cabi))} | {cell(compare(cabi, raw))} | "
                 f"{fnum(raw.get('cpu_us_per_call'), 1)} / {fnum(cabi.get('cpu_us_per_call'), 1)} | "
                 f"{fnum(raw.get('p50_us'), 1)} / {fnum(cabi.get('p50_us'), 1)} | {p50_ratio(cabi, raw)} |")
    con = h.get("connect", {})
    if con.get("raw") and con.get("cabi") and "error" not in con["raw"] and "error" not in con["cabi"]:
        L.append(f"| connect + first call, p50 µs | {fnum(con['raw'].get('first_p50_us'))} | "
                 f"{fnum(con['cabi'].get('first_p50_us'))} | {cell(latency_ratio(con['cabi'], con['raw']))} | | | |")
        L.append(f"| connect (discover answered), p50 µs | {fnum(con['raw'].get('connect_p50_us'))} | "
                 f"{fnum(con['cabi'].get('connect_p50_us'))} | | | | |")
        only = con.get("cabi_system")
        if only and "error" not in only:
            L.append(f"| connect + first call, p50 µs, C ABI with a store the size of the system's (its bundle "
                     f"with the test CA appended, and its directory) | "
                     f"{fnum(con['raw'].get('first_p50_us'))} | {fnum(only.get('first_p50_us'))} | "
                     f"{cell(latency_ratio(only, con['raw']))} | | | |")
    h2c = [s for s in (h.get("h2", {}).get("cabi") or {}).get("server_rounds") or [] if s]
    h2r = [s for s in (h.get("h2", {}).get("raw") or {}).get("server_rounds") or [] if s]
    if h2c:
        L += ["", f"HTTP/2 server's count per run: C ABI {[s['connections'] for s in h2c]} connections "
                  f"({[s['h2'] for s in h2c]} of them h2), raw {[s['connections'] for s in h2r]}."]
    con_c = [s for s in (con.get("cabi") or {}).get("server_rounds") or [] if s]
    con_r = [s for s in (con.get("raw") or {}).get("server_rounds") or [] if s]
    if con_c and con_r:
        L += ["", f"Connect runs, per round: C ABI {[s['connections'] for s in con_c]} connections, "
                  f"{[s['resumed'] for s in con_c]} resumed handshakes, {[s['requests'] for s in con_c]} requests; raw "
                  f"{[s['connections'] for s in con_r]} connections, {[s['resumed'] for s in con_r]} resumed, "
                  f"{[s['requests'] for s in con_r]} requests."]
    ins = h.get("instructions")
    if ins:
        lo, hi = ins["calls"]
        L += ["", f"Instructions per call (callgrind, whole client process, ({hi} − {lo} calls) ÷ {hi - lo}, no warm-up):",
              "", "| echo | raw TLS client | C ABI | C ABI − raw |", "|---|---:|---:|---:|"]
        for size in ("plain", "0", str(ins["payload"])):
            r_, c_ = ins["per_call"].get("raw", {}).get(size), ins["per_call"].get("cabi", {}).get(size)
            diff = fnum(c_ - r_) if r_ is not None and c_ is not None else "n/a"
            echo = ('"hi" over plain HTTP (raw: `c/raw_http.c`)' if size == "plain" else '"hi"' if size == "0"
                    else f"{int(size):,} bytes")
            L.append(f"| {echo} | {fnum(r_)} | {fnum(c_)} | {diff} |")
    return L


def bench_https(args) -> int:
    """`--only https` (`make bench-https`): section 11 alone, written to results/https.{md,json}."""
    started = time.time()
    lib = Path(args.lib) if args.lib else RELEASE / "libmcp_client.a"
    if not args.skip_build:
        if not args.lib:
            log("building the release library")
            sh(["cargo", "build", "--release", "--locked", "-p", "mcp_client"], cwd=ROOT)
        log("building mcp-bench-tls (bench/Cargo.toml without the MCP runners)")
        sh(["cargo", "build", "--release", "--locked", "--manifest-path", str(BENCH / "Cargo.toml"), "--target-dir",
            str(BENCH_TARGET), "--no-default-features", "--bin", "mcp-bench-tls"], cwd=ROOT)
    CBIN.mkdir(parents=True, exist_ok=True)
    link_cabi(lib)
    sh([os.environ.get("CC", "cc"), *C_FLAGS, "-o", str(CBIN / "raw_http"), str(BENCH / "c" / "raw_http.c")])
    mach, vers = machine(), versions()
    cpu0 = cpu_times()
    h = measure_https(args.http_rounds, args.duration, args.warmup, args.connect_iterations)
    run_ended(mach, cpu0)
    (LOGS / "https-measured.json").write_text(json.dumps({"machine": mach, "results": h}) + "\n")
    tgs = Targets()
    https_targets(h, tgs.add)
    head = (f"`python3 bench/run.py --only https --http-rounds {args.http_rounds} --duration {args.duration}`, "
         f"{mach['date']}, git {vers['git_commit']}{' (uncommitted changes)' if vers['git_dirty'] else ''}; "
         f"{mach['cores']} cores, load average at start {', '.join(f'{x:.2f}' for x in mach['load_average_at_start'])}, "
         f"at end {', '.join(f'{x:.2f}' for x in mach['load_average_at_end'])}; CPUs "
         f"{mach['during_run'].get('busy_percent', '?')}% busy with {mach['during_run'].get('steal_percent', '?')}% "
         "steal during the run.")
    doc = {"machine": mach, "versions": vers, "settings": vars(args), "results": h, "targets": tgs,
           "seconds": round(time.time() - started, 1)}
    write_section("https", "HTTPS, HTTP/2 and a CONNECT proxy: the C ABI against raw TLS clients", head,
                  https_report(h)[2:], tgs.table("median | range", "---:|---:",
                                                 lambda t: f"{fnum(t['value'], 2)} | "
                                                 + (f"{t['lo']:.2f}-{t['hi']:.2f}" if "lo" in t else "")), doc)
    return 0


# ---------------------------------------------------------------- large payloads (`--only large`)

# The echo's text in bytes (each way), the calls per callgrind run (the difference of two runs is
# the per-call figure, so start-up and the first calls cancel out), and the rounds of timed runs.
LARGE_SECTION = {"payload": 100_000, "callgrind_calls": (40, 160), "small_callgrind_calls": (500, 2500)}
# The fixture's heap for this section (the server process only, under both clients): glibc
# serves allocations up to 4 MiB from its heap and never trims it. With glibc's defaults the
# fixture gave the top of its heap back after every 100 KB echo (madvise, or an mmap/munmap for
# a buffer past the mmap threshold) and faulted it in again on the next call: 25 to 100 page
# faults a call, and which number depended on the exact sizes of the request and of the
# allocations it made (a 7-byte longer client name moved the HTTP server from 56 to 90 faults
# a call, ~100 µs of server CPU), so the comparison measured the fixture's allocator, not the
# clients. With these settings the server faults no page after warm-up, whatever the sizes.
FIXTURE_HEAP = {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=67108864"}


def ensure_valgrind() -> str | None:
    """valgrind's path, installed with apt-get on a machine without it (root or sudo); None when
    it cannot be had (the instruction figures are then not measured)."""
    found = shutil.which("valgrind")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt:
        sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
        if sudo is not None:
            log("valgrind not found: installing it with apt-get (for the instruction counts)")
            subprocess.run([*sudo, apt, "install", "-y", "--no-install-recommends", "valgrind"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return shutil.which("valgrind")


def callgrind_total(cmd: list[str], out: Path, env: dict | None = None) -> tuple[int, dict[str, int]]:
    """Instructions of `cmd`'s own process (children not traced) under callgrind, and each
    function's own (exclusive) instructions, from callgrind_annotate."""
    out.unlink(missing_ok=True)
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, timeout=1800)
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True,
                          check=True).stdout
    total, funcs = 0, {}
    for line in text.splitlines():
        # "1,234 (12.3%)  file:function [object]" lines, and the "PROGRAM TOTALS" one
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)\s*$", line)
        if not m:
            continue
        count, name = int(m.group(1).replace(",", "")), m.group(2)
        if name == "PROGRAM TOTALS":
            total = count
            continue
        # "file:function [object]": the function, with its object's file name
        name = re.sub(r"^(\?\?\?|\S*?\.(S|c|rs|h)):", "", name)
        name = re.sub(r" \[(.*/)?([^/\]]+)\]$", r" [\2]", name)
        funcs[name] = funcs.get(name, 0) + count
    out.unlink(missing_ok=True)
    return total, funcs


def callgrind_per_call(target: list[str], payload: int, calls: tuple[int, int], tag: str) -> dict:
    """Instructions per sequential echo call (`cabi seq`, client process only): the difference of
    two runs of `calls` calls, divided by the difference; functions likewise (top entries)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    runs = []
    for n in calls:
        cmd = [str(CBIN / "cabi"), "seq", "--warmup", "0", "--max-calls", str(n), "--duration", "600",
               *(["--payload", str(payload)] if payload else []), *target]
        runs.append(callgrind_total(cmd, LOGS / f"callgrind-{tag}-{n}.out"))
    (t0, f0), (t1, f1) = runs
    span = calls[1] - calls[0]
    funcs = {name: (f1.get(name, 0) - f0.get(name, 0)) / span for name in set(f0) | set(f1)}
    top = sorted(((v, k) for k, v in funcs.items() if v > 0), reverse=True)[:14]
    return {"per_call": (t1 - t0) / span, "calls": list(calls), "functions": [[k, round(v)] for v, k in top]}


def large_targets(res: dict, add) -> None:
    payload = res["settings"]["payload"]
    for wire, label_ in (("stdio", "stdio"), ("http_json", "plain HTTP, JSON"), ("http_sse", "plain HTTP, SSE")):
        row = res["wires"].get(wire)
        if not row:
            continue
        big, small = row.get("instructions"), row.get("small_instructions")
        if big and small:
            budget = 2.5 * payload + small["per_call"]
            add(f"{payload // 1000} KB echo over {label_}: instructions per call ≤ 2.5 × payload + small call",
                big["per_call"] / budget, 1.0, "<=",
                f"{big['per_call'] / 1e3:.1f}k instructions per call against {budget / 1e3:.1f}k allowed "
                f"(2.5 × {payload} + {small['per_call'] / 1e3:.1f}k for the small echo); "
                f"{(big['per_call'] - small['per_call']) / payload:.2f} per payload byte (value: ÷ the allowance)")
        vs = compare(row.get("cabi"), row.get("raw"))
        if vs:
            add(f"{payload // 1000} KB echo over {label_}: C ABI calls/s ≥ 0.7 × raw's", vs, 0.7, ">=",
                f"C ABI {fnum(per_sec(row.get('cabi')))}/s, raw {fnum(per_sec(row.get('raw')))}/s "
                f"(medians of {len((row.get('raw') or {}).get('rounds') or [])} interleaved rounds)")


def large_report(res: dict) -> tuple[str, list[str]]:
    """results/large.md's line saying how it was run, and the per-wire table."""
    st, mach = res["settings"], res["machine"]
    run = mach.get("during_run", {})
    head = (f"`python3 bench/run.py --only large` (`make bench-large`), {mach['date']}, {mach['cores']} cores "
         f"({mach['cpu_model']}); during the run the machine was {run.get('busy_percent', '?')}% busy. The fixture's "
         f"`echo` gets a {st['payload']}-byte text (the base64 alphabet: nothing JSON escapes) and sends it back as "
         "the result's text, so each call carries the payload both ways. C ABI: `bench/c/cabi.c seq --payload N` "
         "(`mcp_client_call_tool`, the result string freed). Raw: `bench/c/raw_stdio.c` / `raw_http.c --payload N`, "
            "the same request pre-encoded and the reply read to its newline (stdio) or its end (HTTP), no JSON work. "
            f"The fixture (only it, under both clients) runs with `GLIBC_TUNABLES={st.get('fixture_heap', '')}`: "
            "with glibc's defaults it gave its heap back and faulted it in again at every call, by amounts that "
            "depended on the exact request sizes (bench/README.md).")
    L = ["",
         f"Instructions: callgrind, client process only, ({st['callgrind_calls'][1]} − {st['callgrind_calls'][0]}) ÷ "
         f"{st['callgrind_calls'][1] - st['callgrind_calls'][0]} calls (small echo: ({st['small_callgrind_calls'][1]} − "
         f"{st['small_callgrind_calls'][0]}) ÷ {st['small_callgrind_calls'][1] - st['small_callgrind_calls'][0]}). "
         f"Calls/s: {st['rounds']} interleaved rounds of {st['duration']} s, medians (range).", "",
         "| wire | instructions per call, 100 KB | small echo | per payload byte | C ABI calls/s | raw calls/s | "
         "C ABI ÷ raw |", "|---|---:|---:|---:|---:|---:|---:|"]
    for wire, row in res["wires"].items():
        big, small = row.get("instructions") or {}, row.get("small_instructions") or {}
        per_byte = ((big["per_call"] - small["per_call"]) / st["payload"]) if big and small else None
        vs = compare(row.get("cabi"), row.get("raw"))
        spread_ = (lambda r: "" if not r or "error" in r else
                   f"{fnum(per_sec(r))} ({fnum(r.get('min_per_sec'))}–{fnum(r.get('max_per_sec'))})")
        vs_cell = "" if not vs else f"{vs['value']:.2f} ({vs['lo']:.2f}–{vs['hi']:.2f})"
        L.append(f"| {wire} | {fnum(big.get('per_call') and big['per_call'] / 1e3, 1)}k | "
                 f"{fnum(small.get('per_call') and small['per_call'] / 1e3, 1)}k | {fnum(per_byte, 2)} | "
                 f"{spread_(row.get('cabi'))} | {spread_(row.get('raw'))} | {vs_cell} |")
    return head, L


def large_functions(res: dict) -> list[str]:
    """Where each wire's instructions go, after results/large.md's targets."""
    L: list[str] = []
    for wire, row in res["wires"].items():
        funcs = (row.get("instructions") or {}).get("functions")
        if not funcs:
            continue
        L += ["", f"Where a {wire} call's instructions go (own instructions per call, callgrind_annotate, top "
              "entries):", "", "| function | instructions per call |", "|---|---:|"]
        L += [f"| `{name[:110]}` | {n / 1e3:.1f}k |" for name, n in funcs]
    return L


def bench_large(args) -> int:
    """The large-payload targets (`--only large`): a 100 KB echo over stdio and plain HTTP (JSON
    and SSE answers), instructions per call under callgrind and calls/s against the raw
    baselines; writes results/large.{md,json}."""
    lib, fixture = cabi_against(args)
    build_raw_stdio()
    sh([os.environ.get("CC", "cc"), *C_FLAGS, "-o", str(CBIN / "raw_http"), str(BENCH / "c" / "raw_http.c")])
    payload = args.payload
    mach, cpu0 = machine(), cpu_times()
    st = {**LARGE_SECTION, "payload": payload, "rounds": args.rounds, "duration": args.duration,
          "fixture_heap": FIXTURE_HEAP["GLIBC_TUNABLES"]}
    res: dict = {"settings": st, "wires": {}}
    grind = ensure_valgrind()
    r = Runners(args.duration, {})
    dur = ["--duration", f"{args.duration}", "--warmup", "20"]
    size = ["--payload", str(payload)]
    for wire in ("stdio", "http_json", "http_sse"):
        server = None if wire == "stdio" else HttpServer(sse=wire == "http_sse", fixture=fixture, env=FIXTURE_HEAP)
        try:
            # stdio: the client starts the server, through env(1) so that the settings reach the
            # server alone (the client's own heap keeps glibc's defaults).
            heap = ["env", *(f"{k}={v}" for k, v in FIXTURE_HEAP.items())]
            target = ["--", *heap, str(fixture), "--fast"] if server is None else ["--url", server.url]
            row: dict = {}
            if grind:
                log(f"large ({wire}): callgrind, {payload}-byte echo and the small one")
                row["instructions"] = callgrind_per_call(target, payload, st["callgrind_calls"], f"{wire}-large")
                row["small_instructions"] = callgrind_per_call(target, 0, st["small_callgrind_calls"],
                                                               f"{wire}-small")
            else:
                row["instructions"] = {"error": "valgrind not available"}
            log(f"large ({wire}): {args.rounds} interleaved rounds, C ABI and raw")
            runs: dict[str, list[dict]] = {"cabi": [], "raw": []}
            for _ in range(args.rounds):
                for runner in ("raw", "cabi"):
                    runs[runner].append(r.run(runner, "seq", target, [*size, *dur], 60 + 4 * args.duration))
            row.update({k: summary(v) for k, v in runs.items()})
            res["wires"][wire] = row
        finally:
            if server:
                server.close()
    mach["during_run"] = busy_share(cpu0, cpu_times())
    res["machine"] = mach
    tgs = Targets()
    large_targets(res, tgs.add)
    head, body = large_report(res)
    write_section("large", f"Large payloads: a {payload // 1000} KB echo", head, body, tgs.table(),
                  {"results": res, "targets": tgs}, large_functions(res))
    return 0 if tgs.passed() else 1


# Section 12 (`spans`, and `--only spans`): the span listener's cost on the C ABI's sequential
# stdio call. Rounds (at most --rounds in a full run), seconds per run, calls per block of the
# in-process comparison.
# Every run is pinned with its server (a child of the runner) to one CPU: unpinned, whether each
# wake-up crosses cores moved the CPU per call between 7 and 25 µs from run to run (an idle vCPU's
# wake-up is charged to the process), far more than the listener costs.
SPANS_SECTION = {"rounds": 7, "duration": 1.5, "block": 1000, "pin": "0"}
BASELINE_CABI = CBIN / "cabi-baseline"


def span_baseline_commit() -> str | None:
    """The last commit of HEAD's first-parent history without spans: the first one that does not
    contain the commit adding src/client/observe.rs (the main line just before spans came in)."""
    added = out_of(["git", "log", "--diff-filter=A", "--format=%H", "HEAD", "--", "src/client/observe.rs"],
                   cwd=ROOT).splitlines()
    if not added:
        return None
    for commit in out_of(["git", "rev-list", "--first-parent", "--max-count=500", "HEAD"], cwd=ROOT).splitlines():
        if subprocess.run(["git", "merge-base", "--is-ancestor", added[-1], commit], cwd=ROOT).returncode != 0:
            return commit
    return None


def baseline_cabi(skip_build: bool) -> tuple[Path | None, str]:
    """The C ABI runner linked against the library of `span_baseline_commit()` (built with
    -DCABI_NO_SPANS: that library has no span listener). Built once per commit: the commit's tree
    is exported to a scratch directory under the cache, released-built there with its own target
    directory, linked, and the scratch directory (a few GB with its target) deleted; later runs
    reuse the runner while its stamp names the same commit. Returns the runner (or None) and the
    commit, or why there is none."""
    commit = span_baseline_commit()
    if not commit:
        return None, "no commit before src/client/observe.rs in this history"
    stamp = CBIN / "cabi-baseline.commit"
    if BASELINE_CABI.exists() and stamp.exists() and stamp.read_text().strip() == commit:
        return BASELINE_CABI, commit
    if skip_build:
        return None, f"--skip-build, and no baseline runner built for {commit[:12]}"
    scratch = CACHE / f"baseline-{commit[:12]}"
    log(f"spans: building the library of {commit[:12]} (before spans) in {scratch} (deleted after)")
    try:
        if not (scratch / "Cargo.toml").exists():
            scratch.mkdir(parents=True, exist_ok=True)
            archive = subprocess.Popen(["git", "archive", commit], cwd=ROOT, stdout=subprocess.PIPE)
            sh(["tar", "-x", "-C", str(scratch)], stdin=archive.stdout)
            if archive.wait() != 0:
                raise RuntimeError(f"git archive {commit} failed")
        sh(["cargo", "build", "--release", "--locked", "-p", "mcp_client", "--target-dir", str(scratch / "target")],
           cwd=scratch)
        CBIN.mkdir(parents=True, exist_ok=True)
        sh([os.environ.get("CC", "cc"), *C_FLAGS, "-DCABI_NO_SPANS", f"-I{scratch / 'include'}", "-o",
            str(BASELINE_CABI), str(BENCH / "c" / "cabi.c"), str(scratch / "target" / "release" / "libmcp_client.a"),
            *STATIC_LIBS])
        stamp.write_text(commit + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return BASELINE_CABI, commit


def measure_spans(rounds: int, duration: float, block: int, baseline: Path | None, server: list[str],
                  warmup: int = 500, pin: str | None = None) -> dict:
    """Per round, in an order rotated every round: `cabi seq` without a span listener ("off"),
    `cabi seq --spans` (the no-op listener, "on"), the baseline runner's `cabi seq` (the library
    before spans, "baseline"), and `cabi spans` ("paired": blocks of `block` calls without and
    with the listener in turn, in one process). Client CPU per call (user + system, all threads)
    is the figure. `pin`: the CPU every run and its server are held to (`taskset`)."""
    common = ["--duration", str(duration), "--warmup", str(warmup)]
    if pin is not None and not shutil.which("taskset"):
        pin = None
    prefix = ["taskset", "-c", pin] if pin is not None else []
    cases = [("off", [str(CBIN / "cabi"), "seq"]), ("on", [str(CBIN / "cabi"), "seq", "--spans"])]
    if baseline:
        cases.append(("baseline", [str(baseline), "seq"]))
    cases.append(("paired", [str(CBIN / "cabi"), "spans", "--block", str(block)]))
    runs: dict[str, list[dict]] = {}
    for rnd in range(rounds):
        order = cases[rnd % len(cases):] + cases[:rnd % len(cases)]
        log(f"spans: round {rnd + 1}/{rounds} ({', '.join(k for k, _ in order)})")
        for key, cmd in order:
            runs.setdefault(key, []).append(many_run([*prefix, *cmd, *common, "--", *server]))
    return {"settings": {"rounds": rounds, "duration": duration, "block": block, "warmup": warmup, "pin": pin,
                         "server": " ".join(Path(server[0]).name if i == 0 else a for i, a in enumerate(server))},
            "runs": runs}


def spans_figure(runs: list[dict], field: str) -> dict | None:
    vals = [r[field] for r in runs if r.get(field) is not None]
    if not vals:
        return None
    return {"value": statistics.median(vals), "lo": min(vals), "hi": max(vals), "best": min(vals), "rounds": len(vals)}


def spans_diff(a: list[dict], fa: str, b: list[dict], fb: str) -> dict | None:
    """Median over rounds of a's `fa` − b's `fb` within a round, with the range."""
    d = [x[fa] - y[fb] for x, y in zip(a, b)]
    if not d:
        return None
    return {"value": statistics.median(d), "lo": min(d), "hi": max(d), "best": min(d, key=abs), "rounds": len(d)}


def us_spread(fig: dict | None, digits: int = 2) -> str:
    return "n/a" if not fig else f"{fig['value']:.{digits}f} ({fig['lo']:.{digits}f} to {fig['hi']:.{digits}f})"


def spans_targets(sp: dict, baseline_commit: str, add) -> None:
    """(a) no listener against the library before spans: within the run's spread; (b) the no-op
    listener costs at most 1 µs of CPU per call over no listener."""
    runs = sp["runs"]
    off, base = spans_figure(runs.get("off", []), "cpu_us_per_call"), spans_figure(runs.get("baseline", []),
                                                                                    "cpu_us_per_call")
    if off and base and off["rounds"] < 3:
        add("C ABI CPU per call with no span listener unchanged from the library before spans", None, 0.0, "<=",
            f"{off['rounds']} round(s): a spread needs at least 3 (no listener {us_spread(off)} µs, before spans "
            f"{us_spread(base)} µs)")
    elif off and base:
        d = spans_diff(runs["off"], "cpu_us_per_call", runs["baseline"], "cpu_us_per_call")
        spread_us = max(off["hi"] - off["lo"], base["hi"] - base["lo"])
        add("C ABI CPU per call with no span listener unchanged from the library before spans (size of the "
            "difference ≤ the run's spread, µs)", {**d, "value": abs(d["value"])}, round(spread_us, 3), "<=",
            f"no listener {us_spread(off)} µs, library before spans (git {baseline_commit[:10]}) {us_spread(base)} µs "
            f"(median, min to max over {off['rounds']} rounds); per-round difference {us_spread(d)} µs; the spread "
            f"is the wider of the two min-to-max ranges, {spread_us:.2f} µs")
    else:
        add("C ABI CPU per call with no span listener unchanged from the library before spans", None, 0.0, "<=",
            f"not run: {baseline_commit}")
    paired = spans_diff(runs.get("paired", []), "on_cpu_us_per_call", runs.get("paired", []), "off_cpu_us_per_call")
    on = spans_figure(runs.get("on", []), "cpu_us_per_call")
    procs = spans_diff(runs.get("on", []), "cpu_us_per_call", runs.get("off", []), "cpu_us_per_call")
    add("C ABI CPU per call with a no-op span listener ≤ 1 µs over none (µs, same process, alternating blocks)",
        paired, 1.0, "<=",
        f"in one process, blocks of {sp['settings']['block']} calls in turn: with the listener − without "
        f"{us_spread(paired)} µs per call; as separate processes, with {us_spread(on)} µs, without {us_spread(off)} µs, "
        f"per-round difference {us_spread(procs)} µs")


def spans_report(sp: dict | None, baseline_commit: str) -> list[str]:
    """Section 11's table (make bench) and results/spans.md."""
    if not sp:
        return []
    runs, st = sp["runs"], sp["settings"]
    L = ["", "## 11. Span listener cost (C ABI, sequential stdio)", "",
         f"`bench/c/cabi.c`, sequential `tools/call echo` to `{st['server']}` over stdio, {st['warmup']} warm-up "
         f"calls, {st['duration']} s per run, {st['rounds']} rounds, the order of the runs rotated every round"
         + (f", each run and its server pinned to CPU {st['pin']} (`taskset`)" if st.get("pin") is not None else "")
         + ". "
         "Client CPU is user + system time of the runner process (all its threads: the caller, the client's "
         "runtime, the callback thread) per call; the server is another process. Median (min to max) over rounds.",
         "",
         "| configuration | CPU µs per call | p50 µs | calls/s | span records / calls |",
         "|---|---:|---:|---:|---:|"]
    names = {"off": "no span listener", "on": "no-op listener (`mcp_client_on_span`)",
             "baseline": f"library before spans (git {baseline_commit[:10]})"}
    for key in ("off", "on", "baseline"):
        rows = runs.get(key)
        if not rows:
            L.append(f"| {names[key]} | not run: {baseline_commit} | | | |")
            continue
        seen = [r.get("spans", -1) for r in rows]
        made = [r["calls"] + st["warmup"] for r in rows]
        ratio_txt = "" if key != "on" else f"{min(s / m for s, m in zip(seen, made)):.3f}"
        L.append(f"| {names[key]} | {us_spread(spans_figure(rows, 'cpu_us_per_call'))} | "
                 f"{us_spread(spans_figure(rows, 'p50_us'), 1)} | {us_spread(spans_figure(rows, 'per_sec'), 0)} | "
                 f"{ratio_txt} |")
    pr = runs.get("paired") or []
    if pr:
        seen = min((r["spans"] - r["warmup_spans"]) / r["on_calls"] for r in pr)
        L += ["", f"In one process (`cabi spans`), blocks of {st['block']} calls without and with the listener in "
              "turn, an even number of blocks: CPU µs per call without "
              f"{us_spread(spans_figure(pr, 'off_cpu_us_per_call'))}, with "
              f"{us_spread(spans_figure(pr, 'on_cpu_us_per_call'))}, difference "
              f"{us_spread(spans_diff(pr, 'on_cpu_us_per_call', pr, 'off_cpu_us_per_call'))}; p50 without "
              f"{us_spread(spans_figure(pr, 'off_p50_us'), 1)} µs, with {us_spread(spans_figure(pr, 'on_p50_us'), 1)} µs; "
              f"records received per call with the listener set: {seen:.3f} (lowest round)."]
    return L


def bench_spans(args) -> int:
    """The span targets alone (`--only spans`): results/spans.{md,json}."""
    lib, fixture = cabi_against(args)
    baseline, commit = baseline_cabi(args.skip_build)
    mach, cpu0 = machine(), cpu_times()
    given = any(a == "--rounds" or a.startswith("--rounds=") for a in sys.argv[1:])
    rounds = args.rounds if given else SPANS_SECTION["rounds"]
    sp = measure_spans(rounds, args.duration, SPANS_SECTION["block"], baseline, [str(fixture), "--fast"],
                       args.warmup, SPANS_SECTION["pin"])
    run_ended(mach, cpu0)
    tgs = Targets()
    spans_targets(sp, commit, tgs.add)
    git = out_of(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT)
    head = (f"`python3 bench/run.py --only spans --rounds {rounds} --duration {args.duration}` (`make bench-spans`), "
            f"{mach['date']}, git {git}, library `{shown(lib)}`, {run_conditions(mach)}.")
    write_section("spans", "Span listener cost: the C ABI's CPU per call", head, spans_report(sp, commit)[2:],
                  tgs.table("value | want", "---:|---:",
                            lambda t: f"{median_range(t, ' ({lo:.2f} to {hi:.2f})')} | {t['want']}"),
                  {"machine": mach, "git_commit": git, "baseline_commit": commit, "results": sp, "targets": tgs})
    return 0 if tgs.passed() else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Five rounds: on a shared 2-core VM single rounds swing by ±20%, and a median of three
    # moved borderline targets across their line from one run to the next.
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per sequential stdio figure")
    ap.add_argument("--http-rounds", type=int, default=5, help="rounds per HTTP figure")
    ap.add_argument("--conc-rounds", type=int, default=5, help="interleaved rounds per concurrency figure")
    ap.add_argument("--duration", type=float, default=1.5, help="seconds per measurement loop")
    ap.add_argument("--connect-iterations", type=int, default=30)
    ap.add_argument("--mem-calls", type=int, default=100_000)
    ap.add_argument("--quick", action="store_true", help="1 round of 0.5 s each, 20,000 memory calls")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--no-peers", action="store_true", help="do not install or run the peer SDK clients")
    ap.add_argument("--only", choices=["all", "cache", "async", "many", "hub", "https", "large", "spans"], default="all",
                    help="cache: only the response-cache target; async: only the started-call targets (results/async.{md,json}); "
                         "many: only the many-clients target (results/many.{md,json}); "
                         "hub: only the hub targets (results/hub.{md,json}); "
                         "https: only the HTTPS section (results/https.{md,json}); "
                         "large: only the large-payload targets (results/large.{md,json}); "
                         "spans: only the span listener's cost (results/spans.{md,json})")
    ap.add_argument("--payload", type=int, default=LARGE_SECTION["payload"],
                    help="--only large: the echo's text in bytes")
    ap.add_argument("--clients", type=int, default=200, help="--only many: clients (each with its own server); "
                    "make bench's section `many` uses MANY_SECTION")
    ap.add_argument("--server", choices=["fixture", "minimal"], default="fixture",
                    help="stdio server: mcp-fixture-server --fast (default) or bench/c/mini_server.c (canned replies)")
    ap.add_argument("--warmup", type=int, default=500, help="untimed calls before each timed loop")
    ap.add_argument("--sections", default=ALL_SECTIONS,
                    help=f"comma-separated subset of {ALL_SECTIONS}; a subset writes target/bench-logs/sections.{{md,json,svg}} "
                         "instead of bench/results/latest.*")
    ap.add_argument("--lib", help="--only cache, many, hub, spans: the libmcp_client.a to link (default target/release)")
    ap.add_argument("--fixture", help="--only cache, many, hub, spans: the fixture server (default target/release)")
    args = ap.parse_args()
    if args.only == "cache":
        return bench_cache(args)
    if args.only == "many":
        return bench_many(args)
    if args.only == "hub":
        return bench_hub(args)
    if args.only == "https":
        if args.quick:
            args.http_rounds, args.duration, args.connect_iterations = 1, 0.5, 10
        return bench_https(args)
    if args.only == "large":
        return bench_large(args)
    if args.only == "spans":
        return bench_spans(args)
    if args.quick:
        args.rounds, args.http_rounds, args.conc_rounds, args.duration, args.mem_calls = 1, 1, 1, 0.5, 20_000
        args.connect_iterations = 10

    started = time.time()
    build(args.skip_build)
    global STDIO_SERVER
    if args.server == "minimal":
        build_mini_server()
        STDIO_SERVER = MINI_SERVER
    peers: dict[str, str | None] = {}
    if args.no_peers:
        peers = {"ts": "--no-peers", "python-sdk": "--no-peers"}
    else:
        peers["python-sdk"] = ensure_python_sdk()
        peers["ts"] = ensure_ts_client() if shutil.which("node") and shutil.which("npm") else "node/npm not found"
    mach, vers = machine(), versions()
    cpu0 = cpu_times()
    if args.only == "async":
        return only_async(args, Runners(args.duration, peers), mach, vers, cpu0, started)
    res = measure(args, Runners(args.duration, peers))
    run_ended(mach, cpu0)
    tgs = targets(res)
    md = report(res, mach, vers, tgs, args)
    full = set(args.sections.split(",")) >= set(ALL_SECTIONS.split(","))
    dest, stem = (RESULTS, "latest") if full else (LOGS, "sections")
    dest.mkdir(parents=True, exist_ok=True)
    if not full:
        md = md.replace("](latest.svg)", f"]({stem}.svg)")
    (dest / f"{stem}.md").write_text(md)
    (dest / f"{stem}.svg").write_text(chart(res, mach))
    doc = {"machine": mach, "versions": vers, "settings": vars(args), "results": res, "targets": tgs,
           "seconds": round(time.time() - started, 1)}
    (dest / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(md)
    for t in tgs:
        rng = f", range {t['lo']:.2f} to {t['hi']:.2f}, best round {t['best']:.2f}" if "lo" in t else ""
        print(f"{t['status']}: {t['target']} (median {fnum(t['value'], 2)}{rng}; {t['detail']})")
    print(f"\nwrote {dest}/{stem}.{{md,json,svg}} in {time.time() - started:.0f} s")
    return 0


def only_async(args: argparse.Namespace, r: Runners, mach: dict, vers: dict, cpu0: list[int], started: float) -> int:
    res = {"async": measure_async(args, r)}
    run_ended(mach, cpu0)
    tgs = Targets()
    async_targets(res["async"], tgs.add)
    python_targets(res, lambda name, v, want, op, detail: tgs.add(name, v["value"] if isinstance(v, dict) else v, want,
                                                                  op, detail))
    doc = {"machine": mach, "versions": vers, "settings": vars(args), "results": res, "targets": tgs,
           "seconds": round(time.time() - started, 1)}
    write_section("async", "Started calls bench",
                  f"Load average at end {mach['load_average_at_end']}; during the run {mach['during_run']}.", [],
                  tgs.table("value", "---", lambda t: median_range(t, " (range {lo:.2f} to {hi:.2f})"), "status", "{}"),
                  doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
