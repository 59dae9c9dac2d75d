"""The hub as a new user meets it: a Claude Desktop ``claude_desktop_config.json`` naming real
third-party servers (mcp-server-time and mcp-server-git from PyPI, server-filesystem and
server-memory from npm), written as their READMEs say, read unchanged by ``Hub.from_file`` and
by ``mcp_hub_new_from_file`` from C; and a hub whose members are the official Python and
TypeScript SDK servers and server-everything. Every member answers a routed call, and closing
the hub leaves no server process.

The environment is the user's: the pinned venv's ``bin`` first on PATH (``python -m …`` as
after ``pip install``), the npm prefix as the working directory (``npx -y`` finds the installed
package there) and npm offline (a missing package fails instead of downloading)."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

import mcp_client
from conftest import (
    EVERYTHING_JS,
    NPM,
    PY_SERVER,
    PY_VENV,
    REPO,
    REQUEST_TIMEOUT_MS,
    TAG_VAR,
    assert_gone,
    node,
    text_of,
)

HERE = Path(__file__).resolve().parent
C_PROGRAM = HERE / "hub_config.c"


def desktop_config(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Writes the user's files: a git repository with one commit, a folder with a note, and the
    Claude Desktop configuration naming the four servers. Returns (config, repo, folder)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=U", "-c", "user.email=u@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("hello\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "README.md").write_text("hello, changed\n")
    folder = tmp_path / "Desktop"
    folder.mkdir()
    (folder / "note.txt").write_text("a note for the hub\n")
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": "python", "args": ["-m", "mcp_server_time", "--local-timezone=UTC"]},
                    "git": {"command": "python", "args": ["-m", "mcp_server_git", "--repository", str(repo)]},
                    "filesystem": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", str(folder)],
                    },
                    "memory": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-memory"],
                        "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
                        "autoApprove": ["read_graph"],
                    },
                },
                "globalShortcut": "",
            },
            indent=2,
        )
    )
    return config, repo, folder


def user_env(tag: str) -> dict[str, str]:
    """The user's environment, plus the tag that finds every server process."""
    path = os.pathsep.join([str(PY_VENV / "bin"), str(Path(node()).parent), os.environ.get("PATH", "")])
    return dict(os.environ, PATH=path, npm_config_offline="true", npm_config_update_notifier="false", **{TAG_VAR: tag})


@pytest.fixture
def as_user(monkeypatch) -> str:
    """Runs the test in the user's environment (children inherit it); returns the process tag."""
    tag = uuid.uuid4().hex
    for key, value in user_env(tag).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(NPM)
    return tag


# A routed call to each server: (tool, arguments, text its result holds; no quotes, as the C
# program looks for it in the raw result JSON).
def calls(repo: Path, folder: Path) -> list[tuple[str, dict, str]]:
    return [
        ("time__get_current_time", {"timezone": "Europe/Paris"}, "Europe/Paris"),
        ("git__git_status", {"repo_path": str(repo)}, "README.md"),
        ("filesystem__read_text_file", {"path": str(folder / "note.txt")}, "a note for the hub"),
        (
            "memory__create_entities",
            {"entities": [{"name": "hub", "entityType": "test", "observations": ["made from C or Python"]}]},
            "made from C or Python",
        ),
    ]


def test_claude_desktop_file_with_third_party_servers_from_python(tmp_path, as_user):
    config, repo, folder = desktop_config(tmp_path)
    with mcp_client.Hub.from_file(config, defaults={"request_timeout_ms": REQUEST_TIMEOUT_MS}) as hub:
        hub.start()
        members = {m["name"]: m for m in hub.members()}
        assert {n: m["state"] for n, m in members.items()} == dict.fromkeys(
            ["time", "git", "filesystem", "memory"], "connected"
        ), members
        assert members["filesystem"]["serverInfo"]["name"] == "secure-filesystem-server"
        assert hub.warnings() and "autoApprove" in hub.warnings()[0]
        tools = hub.list_tools()
        by_server: dict[str, set[str]] = {}
        for tool in tools:
            by_server.setdefault(tool["_meta"]["mcp-client/server"], set()).add(tool["_meta"]["mcp-client/name"])
        assert {"get_current_time", "convert_time"} <= by_server["time"]
        assert {"git_status", "git_log"} <= by_server["git"]
        assert {"read_text_file", "list_allowed_directories"} <= by_server["filesystem"]
        assert {"create_entities", "read_graph"} <= by_server["memory"]
        for name, arguments, expected in calls(repo, folder):
            result = hub.call_tool(name, arguments)
            assert not result.get("isError"), (name, result)
            assert expected in text_of(result), (name, result)
        graph = hub.call_tool("memory__read_graph", {})
        assert "made from C or Python" in text_of(graph)
        log = hub.call_tool("git__git_log", {"repo_path": str(repo)})
        assert "first commit" in text_of(log)
    assert_gone(as_user, "the hub's servers")


@pytest.fixture(scope="session")
def c_program(tmp_path_factory) -> Path:
    """hub_config.c, built against the library the suite tests."""
    lib = Path(os.environ["MCP_CLIENT_LIB"]).resolve()
    exe = tmp_path_factory.mktemp("hub-c") / "hub_config"
    subprocess.run(
        [
            os.environ.get("CC", "cc"),
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{REPO / 'include'}",
            "-o",
            str(exe),
            str(C_PROGRAM),
            f"-L{lib.parent}",
            "-lmcp_client",
            f"-Wl,-rpath,{lib.parent}",
        ],
        check=True,
    )
    return exe


def test_claude_desktop_file_with_third_party_servers_from_c(tmp_path, c_program):
    config, repo, folder = desktop_config(tmp_path)
    tag = uuid.uuid4().hex
    argv = [str(c_program), str(config)]
    for name, arguments, expected in calls(repo, folder):
        argv += [name, json.dumps(arguments), expected]
    proc = subprocess.run(argv, cwd=NPM, env=user_env(tag), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 connected, 4 calls answered" in proc.stdout, proc.stdout
    assert "autoApprove" in proc.stdout
    assert_gone(tag, "the C hub's servers")


def test_hub_over_the_sdk_servers_and_everything(ts_server_path):
    tag = uuid.uuid4().hex
    env = {TAG_VAR: tag}
    members = {
        "python": {"command": str(PY_VENV / "bin" / "python"), "args": [str(PY_SERVER)], "env": env},
        "typescript": {"command": node(), "args": [str(ts_server_path)], "env": env},
        "everything": {"command": node(), "args": [str(EVERYTHING_JS), "stdio"], "env": env},
        "missing": {"command": "/nonexistent/mcp-server"},
    }
    with mcp_client.Hub(members, defaults={"request_timeout_ms": REQUEST_TIMEOUT_MS}) as hub:
        hub.start()
        states = {m["name"]: m["state"] for m in hub.members()}
        assert states == {"python": "connected", "typescript": "connected", "everything": "connected",
                          "missing": "failed"}
        names = {t["name"] for t in hub.list_tools()}
        assert {"python__echo", "typescript__echo", "everything__echo", "python__add", "everything__get-sum"} <= names
        for server in ("python", "typescript"):
            assert text_of(hub.call_tool(f"{server}__echo", {"text": server})) == server
        assert "from the hub" in text_of(hub.call_tool("everything__echo", {"message": "from the hub"}))
        assert "5" in text_of(hub.call_tool("everything__get-sum", {"a": 2, "b": 3}))
    assert_gone(tag, "the hub's SDK servers")
