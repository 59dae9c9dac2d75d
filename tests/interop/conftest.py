"""Shared fixtures of the interop suite: where the pinned servers live, how to start them (stdio
commands for the library to spawn, HTTP servers we spawn on a free loopback port), clients that
are always closed, and the check that no server process outlives its test.

Environment (set by the Makefile; setup.sh prints the cache directory):
  MCP_INTEROP_CACHE   the cache with py/venv (mcp==2.3.0, mcp-server-time, mcp-server-git) and
                      npm/node_modules (TS SDK, everything, server-filesystem, server-memory)
  MCP_CLIENT_LIB      the libmcp_client shared library the Python binding loads
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bindings" / "python"))  # the source tree's binding

import mcp_client  # noqa: E402

CACHE = Path(
    os.environ.get("MCP_INTEROP_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_client" / "interop"
)
PY_VENV = CACHE / "py" / "venv"
NPM = CACHE / "npm"
NODE_MODULES = NPM / "node_modules"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PY_SERVER = HERE / "py_server.py"
TS_SERVER = HERE / "ts_server.mjs"
BIND_LOOPBACK = HERE / "bind_loopback.mjs"

# Every test is short; a hang dumps every thread's stack and ends the run instead of blocking.
TEST_DEADLINE_S = 90
# Every client's request timeout: a library bug fails a test instead of waiting 60 s.
REQUEST_TIMEOUT_MS = 15_000
# Bounded waits for servers.
HTTP_START_TIMEOUT_S = 30
PROCESS_GONE_TIMEOUT_S = 10

TAG_VAR = "MCP_INTEROP_TAG"


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(TEST_DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def pytest_sessionstart(session):
    missing = [
        p
        for p in (PY_VENV / "bin" / "python", EVERYTHING_JS, NODE_MODULES / "@modelcontextprotocol" / "server")
        if not p.exists()
    ]
    if missing:
        raise pytest.UsageError(
            f"interop servers are not installed in {CACHE} (missing {', '.join(map(str, missing))}); "
            "run tests/interop/setup.sh or `make -C tests/interop test`"
        )


# ----- process bookkeeping -----


def tagged_pids(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``MCP_INTEROP_TAG=tag``: the server
    and anything it spawned."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            if needle not in env:
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z":
            found.append(int(entry))
    return found


def assert_gone(tag: str, what: str, timeout: float = PROCESS_GONE_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        pids = tagged_pids(tag)
        if not pids:
            return
        if time.monotonic() > deadline:
            details = []
            for pid in pids:
                try:
                    details.append(
                        f"{pid}: "
                        + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    )
                except OSError:
                    details.append(str(pid))
            for pid in pids:  # do not leak them into the next test
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            pytest.fail(f"{what}: server processes left behind after close: {details}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listeners(port: int) -> list[str]:
    """Local addresses listening on ``port`` (from /proc/net/tcp and tcp6), as hex strings."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            addr, hexport = cols[1].rsplit(":", 1)
            if int(hexport, 16) == port and cols[3] == "0A":  # LISTEN
                out.append(addr)
    return out


LOOPBACK_V4 = "0100007F"


# ----- servers -----


@dataclass
class StdioServer:
    """How the library starts a server: command, args, extra environment."""

    name: str
    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class HttpServer:
    name: str
    url: str
    port: int
    proc: subprocess.Popen
    tag: str
    log: Path

    def stderr_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def node() -> str:
    path = shutil.which("node")
    if path is None:
        raise pytest.UsageError("node is not on PATH")
    return path


@pytest.fixture(scope="session")
def ts_server_path(tmp_path_factory) -> Path:
    """ts_server.mjs must resolve its imports from the cached node_modules: ES modules ignore
    NODE_PATH, so a copy is run from a fresh directory inside the npm prefix."""
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=NPM))
    target = run_dir / "ts_server.mjs"
    shutil.copyfile(TS_SERVER, target)
    yield target
    shutil.rmtree(run_dir, ignore_errors=True)


def py_stdio() -> StdioServer:
    return StdioServer("python-sdk", str(PY_VENV / "bin" / "python"), [str(PY_SERVER)])


def everything_stdio() -> StdioServer:
    return StdioServer("server-everything", node(), [str(EVERYTHING_JS), "stdio"])


def ts_stdio(path: Path) -> StdioServer:
    return StdioServer("typescript-sdk", node(), [str(path)])


def wait_for_port(proc: subprocess.Popen, port: int, log: Path, what: str) -> bool:
    """True once 127.0.0.1:port accepts connections; False if the server exited because the port
    was taken meanwhile (another test picked it); any other early exit or a timeout fails."""
    deadline = time.monotonic() + HTTP_START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            out = log.read_text(errors="replace")
            if "EADDRINUSE" in out or "address already in use" in out.lower():
                return False
            pytest.fail(f"{what} exited with {proc.returncode} before listening:\n{out[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not accept connections on 127.0.0.1:{port} within {HTTP_START_TIMEOUT_S} s")
        time.sleep(0.05)


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, then SIGKILL after a bounded wait."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers in the group, if any
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


@pytest.fixture
def start_http(tmp_path, ts_server_path) -> Callable[[str], HttpServer]:
    """start_http(kind) with kind in python / typescript / everything-http / everything-sse:
    starts that server on a free 127.0.0.1 port (its own process group), waits until it accepts
    connections, and at teardown stops the group and asserts no process of it is left."""
    started: list[HttpServer] = []

    def start(kind: str) -> HttpServer:
        for _attempt in range(3):
            server = spawn(kind)
            started.append(server)
            if wait_for_port(server.proc, server.port, server.log, kind):
                break
        else:
            pytest.fail(f"{kind}: three free ports were taken before the server could bind them")
        addrs = listeners(server.port)
        assert addrs and all(a == LOOPBACK_V4 for a in addrs), f"{kind} must listen on 127.0.0.1 only, found {addrs}"
        return server

    def spawn(kind: str) -> HttpServer:
        port = free_port()
        tag = uuid.uuid4().hex
        env = dict(os.environ, **{TAG_VAR: tag})
        if kind == "python":
            argv = [str(PY_VENV / "bin" / "python"), str(PY_SERVER), "http", str(port)]
            url = f"http://127.0.0.1:{port}/mcp"
        elif kind == "typescript":
            argv = [node(), str(ts_server_path), "http", str(port)]
            url = f"http://127.0.0.1:{port}/mcp"
        elif kind in ("everything-http", "everything-sse"):
            # server-everything listens on every interface; our preload pins it to 127.0.0.1.
            mode = "streamableHttp" if kind == "everything-http" else "sse"
            argv = [node(), "--import", BIND_LOOPBACK.as_uri(), str(EVERYTHING_JS), mode]
            env["PORT"] = str(port)
            url = f"http://127.0.0.1:{port}/mcp" if kind == "everything-http" else f"http://127.0.0.1:{port}/sse"
        else:
            raise ValueError(kind)
        log = tmp_path / f"{kind}-{port}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        return HttpServer(kind, url, port, proc, tag, log)

    yield start
    for server in started:
        stop_group(server.proc)
    for server in started:
        assert_gone(server.tag, server.name)


@pytest.fixture
def make_client():
    """make_client(server, **settings) with a StdioServer or an HttpServer -> a Client (not yet
    connected). At teardown every client is closed, its handle freed, and (stdio) the server
    process tree is asserted gone."""
    made: list[tuple[mcp_client.Client, str | None, str]] = []

    def make(server, **settings) -> mcp_client.Client:
        settings.setdefault("request_timeout_ms", REQUEST_TIMEOUT_MS)
        if isinstance(server, StdioServer):
            tag = uuid.uuid4().hex
            env = dict(server.env, **{TAG_VAR: tag})
            c = mcp_client.Client.stdio(server.command, server.args, env=env, **settings)
            c._interop_tag = tag  # finds the server's processes (tagged_pids)
            made.append((c, tag, server.name))
        else:
            c = mcp_client.Client.http(server.url, **settings)
            # Each test's server is new: an era `auto` remembered for this origin belongs to an
            # earlier server that had the port (a legacy one would skip the probe of a modern one).
            c.clear_era_cache()
            made.append((c, None, server.name))
        return c

    yield make
    for c, tag, name in made:
        c.close(wait=15)
        assert c._life.freed, "the client handle was not freed after close"
        if tag is not None:
            assert_gone(tag, name)


def text_of(result: dict) -> str:
    """The text blocks of a CallToolResult, joined by newlines."""
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


def accept(content: dict) -> dict:
    return {"action": "accept", "content": content}
