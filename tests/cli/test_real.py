"""Real servers from the interop cache: server-everything (TypeScript SDK; stdio and Streamable
HTTP) and mcp-server-time (Python SDK), driven as a script would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import EVERYTHING_JS, cli, cli_json, everything, time_server


@pytest.fixture
def everything_http(tmp_path):
    """server-everything over Streamable HTTP on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bind = Path(__file__).resolve().parent.parent / "interop" / "bind_loopback.mjs"
    env = {**os.environ, "PORT": str(port)}
    argv = [shutil.which("node") or "node", "--import", bind.as_uri(), str(EVERYTHING_JS), "streamableHttp"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "server-everything did not start"
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)


@pytest.fixture(params=["stdio", "http"])
def everything_server(request):
    if request.param == "stdio":
        return everything()
    return [request.getfixturevalue("everything_http")]


def test_everything_lists_and_calls(everything_server):
    info = cli_json("info", server=everything_server)
    assert info["era"] == "legacy" and info["serverInfo"]["name"]
    tools = {t["name"]: t for t in cli_json("tools", server=everything_server)["tools"]}
    assert "get-sum" in tools and "echo" in tools
    result = cli_json("call", "get-sum", "a=2", "b=40", server=everything_server)
    assert "42" in result["content"][0]["text"]
    echoed = cli_json("call", "echo", "message=hello there", server=everything_server)
    assert "hello there" in echoed["content"][0]["text"]
    prompts = cli_json("prompts", server=everything_server)["prompts"]
    assert prompts
    resources = cli_json("resources", server=everything_server)["resources"]
    first = resources[0]["uri"]
    assert cli_json("read", first, server=everything_server)["contents"][0]["uri"] == first
    assert cli_json("templates", server=everything_server)["resourceTemplates"]
    assert cli_json("ping", server=everything_server) == {}


def test_everything_image_is_summarised(everything_server):
    done = cli("call", "get-tiny-image", server=everything_server)
    assert done.returncode == 0, done
    assert "[image: image/png," in done.stdout and "bytes]" in done.stdout
    assert len(done.stdout) < 2000  # the Base64 itself is not printed


def test_everything_structured_content_pretty_printed(everything_server):
    done = cli("call", "get-structured-content", "location=Chicago", server=everything_server)
    assert done.returncode == 0, done
    assert "structured content:" in done.stdout
    assert '\n  "temperature"' in done.stdout  # indented JSON


def test_everything_elicitation_from_stdin_lines_and_manual_route():
    # Without a terminal each question reads a line: accept, then each field in order.
    answers = "accept\nAda\ny\n\n\n\n\n\n\n\n\n\n\n\n"
    result = cli_json("call", "trigger-elicitation-request", server=everything(), stdin=answers)
    raw = result["content"][-1]["text"]
    content = json.loads(raw[raw.index("{") :])["content"]
    assert content["name"] == "Ada" and content["check"] is True
    assert content["integer"] == 42 and content["untitledMultipleSelectEnum"] == ["Guitar"]  # defaults
    done = cli("--json", "--no-input", "call", "trigger-elicitation-request", server=everything())
    assert done.returncode == 5, done
    asked = json.loads(done.stdout)["inputRequests"]["0"]
    assert asked["method"] == "elicitation/create"
    assert "name" in asked["params"]["requestedSchema"]["properties"]


def test_everything_export_for_every_api(everything_server):
    for fmt, key in (("openai", "function"), ("anthropic", "input_schema"), ("gemini", "parametersJsonSchema")):
        exported = cli_json("export", "--format", fmt, server=everything_server)
        assert exported["tools"] and all(key in t for t in exported["tools"]), fmt


def test_everything_log_messages_at_a_level():
    done = cli("--log-level", "debug", "call", "toggle-simulated-logging", server=everything())
    assert done.returncode == 0, done


def test_time_server():
    srv = time_server()
    info = cli_json("info", server=srv)
    assert info["serverInfo"]["name"] == "mcp-time"
    tools = [t["name"] for t in cli_json("tools", server=srv)["tools"]]
    assert tools == ["get_current_time", "convert_time"]
    now = cli_json("call", "get_current_time", "timezone=Europe/Paris", server=srv)
    body = json.loads(now["content"][0]["text"])
    assert body["timezone"] == "Europe/Paris"
    converted = cli_json(
        "call", "convert_time", "source_timezone=UTC", "time=12:00", "target_timezone=Asia/Tokyo", server=srv
    )
    assert json.loads(converted["content"][0]["text"])["target"]["datetime"].endswith("21:00:00+09:00")
    human = cli("tools", server=srv)
    assert human.returncode == 0 and "get_current_time" in human.stdout and "args: timezone" in human.stdout


def test_time_server_tool_error_exits_4():
    done = cli("call", "get_current_time", "timezone=Not/AZone", server=time_server())
    assert done.returncode == 4, done
    assert "Invalid timezone" in done.stdout
