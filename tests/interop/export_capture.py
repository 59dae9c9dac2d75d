"""The export corpus's real tool lists, captured live: the pinned servers of the interop cache are
started through our own Python binding and their ``tools/list`` is written to
tests/vectors/export/{reference-servers,everything,sdk-servers}.json. Each file keeps its
hand-written ``samples`` (valid and invalid arguments by tool name) for the tools still listed.

    tests/interop/export_capture.py            refresh the three files
    tests/interop/export_capture.py --check    exit 1 when a live list differs from its file

Run with the interop venv's Python and MCP_CLIENT_LIB set (``make -C tests/interop
export-vectors`` does both). test_export_live.py runs the same capture and fails on drift.

Servers (the cache's pinned versions, see setup.sh):
  reference-servers.json  mcp-server-time, mcp-server-git, server-filesystem, server-memory
  everything.json         server-everything (stdio)
  sdk-servers.json        the official Python SDK (py_server.py) and TypeScript SDK
                          (ts_server.mjs) servers, as a hub names them (``python__add``, ...)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VECTORS = REPO / "tests" / "vectors" / "export"
sys.path.insert(0, str(REPO / "bindings" / "python"))

import mcp_client  # noqa: E402

CACHE = Path(
    os.environ.get("MCP_INTEROP_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_client" / "interop"
)
PY = CACHE / "py" / "venv" / "bin" / "python"
NPM = CACHE / "npm"
MODULES = NPM / "node_modules" / "@modelcontextprotocol"
TIMEOUT_MS = 30_000

# Paths the servers were started with stand for themselves in the files as these.
WORK = "/work"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise SystemExit("node is not on PATH")
    return found


@contextmanager
def workspace() -> Iterator[dict[str, Path]]:
    """A git repository with one commit, a folder, a memory file and a copy of ts_server.mjs
    inside the npm prefix (ES modules resolve imports from the file's own directory)."""
    with tempfile.TemporaryDirectory(prefix="export-capture-") as tmp:
        root = Path(tmp)
        repo, folder = root / "repo", root / "folder"
        folder.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        git = ["git", "-C", str(repo), "-c", "user.name=U", "-c", "user.email=u@example.com"]
        (repo / "README.md").write_text("hello\n")
        subprocess.run([*git, "add", "README.md"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
        run = Path(tempfile.mkdtemp(prefix="run-", dir=NPM))
        try:
            shutil.copyfile(HERE / "ts_server.mjs", run / "ts_server.mjs")
            yield {"root": root, "repo": repo, "folder": folder, "ts_server": run / "ts_server.mjs"}
        finally:
            shutil.rmtree(run, ignore_errors=True)


def servers(w: dict[str, Path]) -> dict[str, list[tuple[str, str, list[str], dict[str, str]]]]:
    """Per vector file: (member name, command, args, env) of each server."""
    n = node()
    return {
        "reference-servers.json": [
            ("time", str(PY), ["-m", "mcp_server_time", "--local-timezone=UTC"], {}),
            ("git", str(PY), ["-m", "mcp_server_git", "--repository", str(w["repo"])], {}),
            ("filesystem", n, [str(MODULES / "server-filesystem" / "dist" / "index.js"), str(w["folder"])], {}),
            ("memory", n, [str(MODULES / "server-memory" / "dist" / "index.js")],
             {"MEMORY_FILE_PATH": str(w["root"] / "memory.jsonl")}),
        ],
        "everything.json": [
            ("everything", n, [str(MODULES / "server-everything" / "dist" / "index.js"), "stdio"], {}),
        ],
        "sdk-servers.json": [
            ("python", str(PY), [str(HERE / "py_server.py")], {}),
            ("typescript", n, [str(w["ts_server"])], {}),
        ],
    }


# Files whose servers share tool names: their tools are listed as a hub names them.
PREFIXED = {"sdk-servers.json"}


def capture() -> dict[str, list[dict[str, Any]]]:
    """Every file's live tool list (paths of this run replaced by ``/work``)."""
    out: dict[str, list[dict[str, Any]]] = {}
    with workspace() as w:
        for file, members in servers(w).items():
            tools: list[dict[str, Any]] = []
            for name, command, args, env in members:
                with mcp_client.Client.stdio(command, args, env=env, request_timeout_ms=TIMEOUT_MS) as c:
                    for tool in c.all_tools():
                        if file in PREFIXED:
                            tool = dict(tool, name=f"{name}__{tool['name']}")
                        tools.append(tool)
            text = json.dumps(tools).replace(str(w["root"]), WORK)
            out[file] = json.loads(text)
    return out


def load(file: str) -> dict[str, Any]:
    path = VECTORS / file
    return json.loads(path.read_text()) if path.exists() else {"tools": [], "samples": {}}


def drift(file: str, live: list[dict[str, Any]]) -> list[str]:
    """How the file's tools differ from the live list (empty: they are equal)."""
    stored = {t["name"]: t for t in load(file)["tools"]}
    now = {t["name"]: t for t in live}
    problems = [f"{file}: {n} is no longer listed" for n in sorted(stored.keys() - now.keys())]
    problems += [f"{file}: {n} is new" for n in sorted(now.keys() - stored.keys())]
    problems += [f"{file}: {n} changed" for n in sorted(stored.keys() & now.keys()) if stored[n] != now[n]]
    return problems


def write(file: str, live: list[dict[str, Any]]) -> list[str]:
    """Writes the live list with the samples of the tools still listed; returns the samples
    dropped."""
    old = load(file)
    names = {t["name"] for t in live}
    samples = {k: v for k, v in old.get("samples", {}).items() if k in names}
    dropped = sorted(set(old.get("samples", {})) - names)
    doc = {"tools": live, "samples": samples}
    (VECTORS / file).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    args = parser.parse_args()
    lists = capture()
    if args.check:
        problems = [p for file, live in lists.items() for p in drift(file, live)]
        for p in problems:
            print(p)
        return 1 if problems else 0
    for file, live in lists.items():
        dropped = write(file, live)
        unsampled = [t["name"] for t in live if t["name"] not in load(file)["samples"]]
        print(f"{file}: {len(live)} tools; samples dropped: {dropped or 'none'}; without samples: {len(unsampled)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
