"""Shared fixtures: the fixture server's path, clients that are always closed, a watchdog."""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
BINDING = HERE.parent
REPO = BINDING.parent.parent
sys.path.insert(0, str(BINDING))  # test the source tree, not an installed copy

import mcp_client  # noqa: E402

FIXTURE = os.environ.get("MCP_FIXTURE") or str(REPO / "target" / "debug" / "mcp-fixture-server")

# Every test is short; a hang dumps every thread's stack and ends the run instead of blocking CI.
TEST_DEADLINE_S = 60

# How long a test waits for a log record (they arrive on the library's dispatcher thread).
LOG_WAIT_S = 10

# The request_timeout_ms given to every client, so that a library bug fails a test instead of
# waiting out the 60 s default.
REQUEST_TIMEOUT_MS = 10_000


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(TEST_DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="session")
def fixture_server() -> str:
    if not os.path.exists(FIXTURE):
        pytest.fail(f"fixture server {FIXTURE} not found: run `cargo build --workspace` or set MCP_FIXTURE")
    return FIXTURE


@pytest.fixture
def make_client(fixture_server):
    """make_client(*server_flags, **settings) -> a stdio Client on the fixture server; every
    client is closed (and its library handle freed) when the test ends."""
    made: list[mcp_client.Client] = []

    def make(*flags: str, **settings) -> mcp_client.Client:
        settings.setdefault("request_timeout_ms", REQUEST_TIMEOUT_MS)
        c = mcp_client.Client.stdio(fixture_server, list(flags), **settings)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close(wait=10)
        assert c._life.freed, "the client handle was not freed after close"


@pytest.fixture
def signal() -> Iterator:
    """A FixtureSignal (waits.py): pass ``"--signal", signal.path`` to the fixture server."""
    from waits import FixtureSignal

    sig = FixtureSignal()
    yield sig
    sig.close()


@pytest.fixture
def client(make_client) -> mcp_client.Client:
    """A modern (dual-era fixture, auto mode) client, not yet connected."""
    return make_client()


@pytest.fixture
def legacy(make_client) -> mcp_client.Client:
    """A client on a legacy-only fixture."""
    return make_client("--era", "legacy")


def text_of(result: dict) -> str:
    """The first text block of a CallToolResult."""
    return next(b["text"] for b in result["content"] if b.get("type") == "text")


class _Catch(logging.Handler):
    """Collects the records of one logger and signals the first whose message contains
    ``needle``: the records arrive on the library's dispatcher thread, so tests wait on it."""

    def __init__(self, needle: str):
        super().__init__(logging.DEBUG)
        self.needle = needle
        self.records: list[logging.LogRecord] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.needle in record.getMessage():
            self.seen.set()

    def matching(self) -> list[logging.LogRecord]:
        return [r for r in self.records if self.needle in r.getMessage()]


@pytest.fixture
def catch() -> Iterator:
    """catch(logger_name, needle) -> a _Catch attached to that logger for the test."""
    attached: list[tuple[logging.Logger, _Catch, int]] = []

    def attach(name: str, needle: str) -> _Catch:
        logger = logging.getLogger(name)
        handler = _Catch(needle)
        attached.append((logger, handler, logger.level))
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        return handler

    yield attach
    for logger, handler, level in attached:
        logger.removeHandler(handler)
        logger.setLevel(level)
