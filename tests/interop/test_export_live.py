"""The real servers' tool lists, captured live (export_capture.py: mcp-server-time, -git,
server-filesystem, server-memory, server-everything and the official Python and TypeScript SDK
servers, through our Python binding), are the lists of tests/vectors/export, and export to every
format: our own checks of each entry's shape here and, when the pinned provider SDKs' venv of
tests/export is on this machine, their own types through tests/export/test_sdk_types.py. A
server release that changes its tools fails here until the vectors are captured again."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from mcp_client import export
from conftest import REPO
import export_capture

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SCHEMA_KEY = {"openai-chat": "parameters", "openai-responses": "parameters", "anthropic": "input_schema"}
OPTIONS = [
    ("openai-chat", {}), ("openai-chat", {"strict": True}), ("openai-responses", {"strict": True}),
    ("anthropic", {"describe_title": True, "describe_annotations": True}),
    ("gemini", {}), ("gemini", {"gemini_legacy_parameters": True}),
]


@pytest.fixture(scope="module")
def live() -> dict[str, list]:
    return export_capture.capture()


def test_the_vectors_are_the_live_lists(live):
    problems = [p for file, tools in live.items() for p in export_capture.drift(file, tools)]
    assert not problems, (
        "the servers' tools differ from tests/vectors/export (run `make -C tests/interop export-vectors`, "
        "then review the samples): " + "; ".join(problems)
    )


def entry_schema(fmt: str, opts: dict, entry: dict) -> tuple[str, dict]:
    if fmt == "openai-chat":
        assert entry["type"] == "function" and set(entry) == {"type", "function"}
        entry = entry["function"]
    if fmt == "gemini":
        key = "parameters" if opts.get("gemini_legacy_parameters") else "parametersJsonSchema"
    else:
        key = SCHEMA_KEY[fmt]
    return entry["name"], entry[key]


@pytest.mark.parametrize("fmt,opts", OPTIONS, ids=[f"{f}-{'-'.join(o) or 'plain'}" for f, o in OPTIONS])
def test_live_lists_export_to_every_format(live, fmt, opts):
    for file, tools in live.items():
        out = export.export_tools(tools, fmt, **opts)
        refused = {r["tool"]: r["refused"] for r in out["report"] if r.get("refused")}
        assert not refused, f"{file}: {refused}"
        assert len(out["tools"]) == len(tools) == len(out["routes"])
        for entry in out["tools"]:
            name, schema = entry_schema(fmt, opts, entry)
            assert NAME.match(name) and name in out["routes"], name
            if fmt == "gemini":
                assert re.match(r"^[a-zA-Z_]", name), name
                assert "$schema" not in schema
            if opts.get("gemini_legacy_parameters"):
                assert schema["type"] == "OBJECT" and "$ref" not in json.dumps(schema), (name, schema)
            else:
                assert schema["type"] == "object", (name, schema)
            if fmt == "anthropic":
                assert not {"anyOf", "oneOf", "allOf"} & set(schema), (name, schema)
            if opts.get("strict") and entry.get("strict", entry.get("function", {}).get("strict")):
                assert schema.get("additionalProperties") is False and set(schema.get("required", [])) == set(
                    schema.get("properties", {})
                ), (name, schema)


def sdk_venv() -> Path | None:
    """tests/export's venv of the pinned provider SDKs, when installed on this machine."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_client"
    found = sorted(cache.glob("export-sdk-*/.installed"), key=lambda p: p.stat().st_mtime)
    return found[-1].parent if found else None


def test_live_lists_parse_as_the_provider_sdks_types(live, tmp_path):
    venv = sdk_venv()
    if venv is None:
        pytest.skip("the provider SDKs' venv is not installed (make export-test installs it)")
    lists = tmp_path / "live.json"
    lists.write_text(json.dumps({f"live {file}": tools for file, tools in live.items()}))
    env = dict(os.environ, MCP_EXPORT_LIVE=str(lists), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-k", "every_exported_tool", str(REPO / "tests" / "export" / "test_sdk_types.py")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
