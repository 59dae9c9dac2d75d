"""Interpreter exit with live clients, handlers and calls in flight."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from conftest import BINDING, HERE

SCRIPT = textwrap.dedent(
    """
    import sys, threading
    import mcp_client
    from waits import FixtureSignal

    sig = FixtureSignal()
    c = mcp_client.Client.stdio(sys.argv[1], ["--signal", sig.path], request_timeout_ms=30000)
    c.on_elicitation(lambda p: {"action": "accept", "content": {"name": "x"}})
    c.on_log(lambda *a: None)
    c.on_notification(lambda *a: None)
    c.connect()

    def hang():
        try:
            c.call_tool("hang")
        except mcp_client.ClosedError:
            pass

    threading.Thread(target=hang, daemon=True).start()
    mcp_client.Client.stdio(sys.argv[1]).connect()  # a second client, never closed
    sig.wait("request tools/call hang")  # the call is in flight, blocked for good
    print("exiting", flush=True)
    """
)


def test_exit_with_live_clients_is_clean(fixture_server, tmp_path):
    # The script exits without closing its FixtureSignal: its FIFO goes to pytest's tmp_path.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BINDING), str(HERE)]), TMPDIR=str(tmp_path))
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, fixture_server], capture_output=True, text=True, timeout=30, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "exiting"
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert time.monotonic() - t0 < 15
