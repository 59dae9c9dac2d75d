"""The README example runs as shown."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import BINDING


def test_example_runs(fixture_server):
    env = dict(os.environ, PYTHONPATH=str(BINDING))
    r = subprocess.run(
        [sys.executable, str(BINDING / "example.py"), fixture_server],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "mcp-fixture-server: modern era, protocol 2026-07-28"
    assert lines[2:] == [
        "{'result': 42}",
        "Hello, Ada!",
        "sampled: hi",
        "the server asks: What is your name?",
        "Hello, Grace!",
    ]
