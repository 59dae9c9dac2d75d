"""Shared helpers of the command-line client's suite: where the binary, the fixture server and the
interop servers are, running the CLI as a script would, and a real terminal (tmux) for the tests
that type as a person would.

Environment (set by the Makefile):
  MCP_CLI            the mcp-client binary (default <repo>/target/debug/mcp-client)
  MCP_FIXTURE        the fixture server (default <repo>/target/debug/mcp-fixture-server)
  MCP_INTEROP_CACHE  the interop cache (server-everything, mcp-server-time; tests/interop/setup.sh)
"""

from __future__ import annotations

import faulthandler
import json
import os
import shlex
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CLI = Path(os.environ.get("MCP_CLI") or REPO / "target" / "debug" / "mcp-client")
FIXTURE = Path(os.environ.get("MCP_FIXTURE") or REPO / "target" / "debug" / "mcp-fixture-server")
CACHE = Path(
    os.environ.get("MCP_INTEROP_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_client" / "interop"
)
EVERYTHING_JS = CACHE / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
TIME_SERVER = CACHE / "py" / "venv" / "bin" / "mcp-server-time"

# A hang dumps every thread's stack and ends the run instead of blocking it.
TEST_DEADLINE_S = 120
# Every CLI run is bounded.
RUN_TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(TEST_DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def pytest_sessionstart(session):
    missing = [p for p in (CLI, FIXTURE) if not p.exists()]
    if missing:
        raise pytest.UsageError(f"not built: {', '.join(map(str, missing))} (cargo build --workspace)")


def everything() -> list[str]:
    node = shutil.which("node")
    if node is None or not EVERYTHING_JS.exists():
        raise pytest.UsageError(f"server-everything is not installed in {CACHE} (tests/interop/setup.sh)")
    return [node, str(EVERYTHING_JS), "stdio"]


def time_server() -> list[str]:
    if not TIME_SERVER.exists():
        raise pytest.UsageError(f"mcp-server-time is not installed in {CACHE} (tests/interop/setup.sh)")
    return [str(TIME_SERVER), "--local-timezone", "UTC"]


def cli(*args: str, server: list[str] | None = None, stdin: str | None = None, env: dict | None = None):
    """Runs the CLI (with `-- server...` appended) as a script would: no terminal, NO_COLOR unset."""
    argv = [str(CLI), *args]
    if server is not None:
        argv += ["--", *server]
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CLICOLOR_FORCE")}
    full_env.update(env or {})
    return subprocess.run(
        argv,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=full_env,
    )


def cli_json(*args: str, server: list[str] | None = None, stdin: str | None = None, code: int = 0):
    """`--json` output, parsed; the exit code checked."""
    done = cli("--json", *args, server=server, stdin=stdin)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    return json.loads(done.stdout)


@dataclass
class HttpFixture:
    url: str
    proc: subprocess.Popen


def start_fixture_http(*flags: str) -> HttpFixture:
    proc = subprocess.Popen(
        [str(FIXTURE), "--http", "127.0.0.1:0", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline()
    assert line.startswith("fixture: listening on "), line
    return HttpFixture(line.split()[-1], proc)


@pytest.fixture
def fixture_http():
    """The fixture server on a free loopback port (both eras on one endpoint; answers as SSE streams,
    so progress and log notifications come along)."""
    server = start_fixture_http("--sse-responses")
    yield server
    server.proc.kill()
    server.proc.wait()


@pytest.fixture
def fixture_oauth():
    """The fixture server as an OAuth-protected resource and its own authorization server."""
    server = start_fixture_http("--oauth")
    yield server
    server.proc.kill()
    server.proc.wait()


# ----- a real terminal -----


class Terminal:
    """One tmux session running a shell command in an 100x40 terminal: type into it, read its screen."""

    def __init__(self, command: str, env: dict | None = None, width: int = 100):
        if shutil.which("tmux") is None:
            raise pytest.UsageError("tmux is not installed (tests/cli/setup.sh installs it)")
        self.name = f"mcpcli-{uuid.uuid4().hex[:8]}"
        self.socket = f"mcpcli-{os.getpid()}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        # The shell survives a Ctrl-C sent to the command (a trap, not an ignore: the command gets
        # the default disposition back when it starts).
        script = f"trap true INT; {exports} {command}; echo \"[exit $?]\"; sleep 600"
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", "40", "sh", "-c", script)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")
            time.sleep(0.1)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-session", "-t", self.name], capture_output=True, timeout=20)


@pytest.fixture
def terminal():
    opened = []

    def open_terminal(command: str, env: dict | None = None, width: int = 100) -> Terminal:
        t = Terminal(command, env, width)
        opened.append(t)
        return t

    yield open_terminal
    for t in opened:
        t.close()
