"""Server stderr reaches Python's logging by default; on_log overrides that. (The library's own
warnings: test_http.py, a session that expires.)"""

from __future__ import annotations

import logging
import queue

import pytest

import mcp_client
from conftest import LOG_WAIT_S as WAIT_S


def test_server_stderr_goes_to_the_server_logger(make_client, catch):
    banner = "banner for the default logging test"
    server = catch("mcp_client.server", banner)
    c = make_client("--stderr-banner", banner)
    c.connect()
    assert server.seen.wait(WAIT_S), "the server's stderr line never reached logging"
    (record,) = server.matching()
    assert record.name == "mcp_client.server"
    assert record.levelno == logging.INFO
    assert record.getMessage() == banner
    assert record.mcp_source == "stderr"  # type: ignore[attr-defined]


def test_on_log_overrides_logging_and_none_restores_it(make_client, catch):
    banner = "banner for the override test"
    server = catch("mcp_client.server", banner)
    lines: queue.Queue = queue.Queue()
    c = make_client("--stderr-banner", banner)
    c.on_log(lambda level, source, message: lines.put((level, source, message)))
    c.connect()
    assert lines.get(timeout=WAIT_S) == ("info", "stderr", banner)
    # Each line goes to one listener only: once on_log had it, logging never will.
    assert server.matching() == []

    crash = catch("mcp_client.server", "crashing on purpose")
    assert c.on_log(None) is None
    with pytest.raises(mcp_client.MCPError):
        c.call_tool("crash")
    assert crash.seen.wait(WAIT_S), "after on_log(None), stderr did not reach logging again"
    # Lines written before the swap (the fixture reports its era) may still reach the old
    # listener; the crash line, written after it, must not.
    assert not [m for m in list(lines.queue) if "crashing on purpose" in m[2]]

