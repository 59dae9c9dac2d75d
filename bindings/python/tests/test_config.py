"""The typed configuration: the TypedDicts follow the schema, a typed dict builds a working
client, and a bad key or type is refused with the key named."""

from __future__ import annotations

import json
import re

import pytest

import mcp_client
from conftest import REPO, REQUEST_TIMEOUT_MS

SCHEMA = json.loads((REPO / "include" / "mcp_client.config.schema.json").read_text())


def test_the_typed_dicts_have_the_schemas_keys():
    assert set(mcp_client.Config.__annotations__) == set(SCHEMA["properties"])
    assert set(mcp_client.OAuthConfig.__annotations__) == set(SCHEMA["$defs"]["OAuth"]["properties"])
    assert set(mcp_client.ReconnectConfig.__annotations__) == set(SCHEMA["$defs"]["Reconnect"]["properties"])


def test_a_typed_config_builds_a_client(fixture_server):
    config: mcp_client.Config = {
        "command": fixture_server,
        "args": [],
        "env_mode": "allowlist",
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
        "reconnect": {"max_attempts": 2},
        "client_info": {"name": "typed", "version": "1"},
    }
    with mcp_client.Client(config) as client:
        assert any(t["name"] == "echo" for t in client.list_tools()["tools"])


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {"request_timeout": 5},
            re.escape('unknown configuration key "request_timeout"; did you mean "request_timeout_ms"?'),
        ),
        (
            {"reconnect": {"max_attempt": 2}},
            re.escape('unknown reconnect key "max_attempt"; did you mean "max_attempts"?'),
        ),
        ({"request_timeout_ms": "5"}, "request_timeout_ms: invalid type: string"),
        ({"reconnect": {"max_attempts": -1}}, "reconnect.max_attempts: "),
        ({"env_mode": "all"}, "env_mode: unknown variant `all`"),
    ],
)
def test_bad_keys_and_types_name_the_key(fixture_server, extra, message):
    with pytest.raises(mcp_client.InvalidArgumentError, match=message):
        mcp_client.Client({"command": fixture_server, **extra})  # type: ignore[typeddict-item]
