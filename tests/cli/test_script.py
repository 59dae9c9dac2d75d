"""The CLI as a script drives it: `--json` outputs parsed and checked, exit codes, stderr, against
the fixture server in both eras over stdio and HTTP, and a configuration file as a hub."""

from __future__ import annotations

import json
import os

import pytest

from conftest import FIXTURE, cli, cli_json

STDIO = {"modern": [str(FIXTURE), "--era", "modern"], "legacy": [str(FIXTURE), "--era", "legacy"]}


@pytest.fixture(params=["stdio-modern", "stdio-legacy", "http-modern", "http-legacy"])
def server(request):
    """(global options, server command) for each transport and era."""
    transport, era = request.param.split("-")
    if transport == "stdio":
        return [], STDIO[era], era
    http = request.getfixturevalue("fixture_http")
    return ["--mode", era], [http.url], era


def test_info_names_the_era(server):
    opts, srv, era = server
    info = cli_json(*opts, "info", server=srv)
    assert info["era"] == era
    assert info["serverInfo"]["name"] == "mcp-fixture-server"
    assert info["protocolVersion"] == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert "tools" in info["capabilities"]


def test_lists(server):
    opts, srv, _ = server
    tools = cli_json(*opts, "tools", server=srv)["tools"]
    assert {"echo", "add", "elicit_once"} <= {t["name"] for t in tools}
    prompts = cli_json(*opts, "prompts", server=srv)["prompts"]
    assert "greeting" in [p["name"] for p in prompts]
    resources = cli_json(*opts, "resources", server=srv)["resources"]
    assert "fixture://static" in [r["uri"] for r in resources]
    templates = cli_json(*opts, "templates", server=srv)["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "fixture://items/{id}"


def test_call_types_key_values_from_the_schema(server):
    opts, srv, _ = server
    result = cli_json(*opts, "call", "add", "a=2", "b=3.5", server=srv)
    assert result["structuredContent"] == {"result": 5.5}
    result = cli_json(*opts, "call", "echo", "text=42", server=srv)
    assert result["content"][0]["text"] == "42"  # a string property keeps "42" a string


def test_call_args_json_and_stdin(server):
    opts, srv, _ = server
    result = cli_json(*opts, "call", "echo", "--args", '{"text": "from json"}', server=srv)
    assert result["content"][0]["text"] == "from json"
    result = cli_json(*opts, "call", "echo", "--args", "-", server=srv, stdin='{"text": "from stdin"}')
    assert result["content"][0]["text"] == "from stdin"


def test_prompt_read_complete(server):
    opts, srv, _ = server
    prompt = cli_json(*opts, "prompt", "greeting", "name=Ada", server=srv)
    assert prompt["messages"][0]["content"]["text"] == "Hello, Ada!"
    read = cli_json(*opts, "read", "fixture://static", server=srv)
    assert read["contents"][0]["text"] == "static content"
    done = cli_json(*opts, "complete", "prompt:greeting", "name", "al", server=srv)
    assert done["completion"]["values"] == ["alice", "albert"]


def test_ping(server):
    opts, srv, _ = server
    assert cli_json(*opts, "ping", server=srv) == {}
    done = cli(*opts, "ping", server=srv)
    assert done.returncode == 0 and done.stdout.startswith("pong in "), done


def test_tool_error_exits_4(server):
    opts, srv, _ = server
    done = cli(*opts, "--json", "call", "fail", server=srv)
    assert done.returncode == 4, done
    assert json.loads(done.stdout)["isError"] is True
    assert "isError" in done.stderr


def test_rpc_error_exits_1_with_the_message(server):
    opts, srv, _ = server
    done = cli(*opts, "call", "rpc_error", server=srv)
    assert done.returncode == 1, done
    assert "-32050" in done.stderr or "error" in done.stderr.lower()


def test_no_input_prints_what_the_server_asked_and_exits_5(server):
    opts, srv, era = server
    done = cli(*opts, "--json", "--no-input", "call", "elicit_once", server=srv)
    assert done.returncode == 5, done
    asked = json.loads(done.stdout)
    # Modern: the server's own keys and requestState (to retry with); legacy: in order of asking.
    key = "name" if era == "modern" else "0"
    assert asked["inputRequests"][key]["method"] == "elicitation/create"
    assert asked["inputRequests"][key]["params"]["message"] == "What is your name?"
    assert bool(asked["requestState"]) == (era == "modern")
    assert "asked for input" in done.stderr or "no registered handler" in done.stderr
    human = cli(*opts, "--no-input", "call", "elicit_and_sample", server=srv)
    assert human.returncode == 5, human
    assert "elicitation (form): Confirm the summary?" in human.stdout
    assert "fields: confirmed (boolean, required)" in human.stdout
    assert "sampling: Summarise the fixture" in human.stdout


def test_elicitation_answered_from_stdin_lines(server):
    """Without a terminal each question reads one line: the action, then each field."""
    opts, srv, _ = server
    result = cli_json(*opts, "call", "elicit_once", server=srv, stdin="accept\nAda\n")
    assert result["content"][0]["text"] == "Hello, Ada!"
    result = cli_json(*opts, "call", "elicit_once", server=srv, stdin="decline\n")
    assert result["content"][0]["text"] == "Hello, stranger (declined)"
    result = cli_json(*opts, "call", "elicit_once", server=srv, stdin="cancel\n")
    assert result["content"][0]["text"] == "Hello, stranger (cancelled)"


def test_sampling_refused_or_typed(server):
    opts, srv, _ = server
    refused = cli(*opts, "call", "sample_only", server=srv)
    assert refused.returncode != 0 and "refused" in refused.stderr, refused
    typed = cli_json(*opts, "--sampling", "ask", "call", "sample_only", server=srv, stdin="accept\nA summary.\n")
    assert "A summary." in json.dumps(typed)


def test_roots_from_root_dirs(server, tmp_path):
    opts, srv, _ = server
    (tmp_path / "proj").mkdir()
    result = cli_json(*opts, "--root", str(tmp_path / "proj"), "call", "roots", server=srv)
    assert (tmp_path / "proj").as_uri() in json.dumps(result)


def test_export_formats(server):
    opts, srv, _ = server
    openai = cli_json(*opts, "export", "--format", "openai", server=srv)
    assert openai["format"] == "openai-chat"
    assert {"type": "function"}.items() <= openai["tools"][0].items()
    strict = cli_json(*opts, "export", "--format", "openai", "--strict", server=srv)
    assert strict["routes"]["echo"]["strict"] is True
    responses = cli_json(*opts, "export", "--format", "openai-responses", server=srv)
    assert responses["tools"][0]["type"] == "function" and "name" in responses["tools"][0]
    anthropic = cli_json(*opts, "export", "--format", "anthropic", server=srv)
    assert anthropic["tools"][0]["input_schema"]["type"] == "object"
    gemini = cli_json(*opts, "export", "--format", "gemini", server=srv)
    assert "parametersJsonSchema" in gemini["tools"][0]


def test_progress_and_server_log_level(server):
    opts, srv, _ = server
    done = cli(*opts, "--log-level", "debug", "call", "progress", "steps=3", "delay_ms=10", server=srv)
    assert done.returncode == 0, done
    assert "progress done" in done.stdout
    assert "[server info fixture] progress tool ran" in done.stderr
    quiet = cli(*opts, "--log-level", "error", "call", "progress", "steps=1", server=srv)
    assert "progress tool ran" not in quiet.stderr


def test_listen_prints_events_as_json_lines(fixture_http):
    import subprocess
    import time

    from conftest import CLI

    listen = subprocess.Popen(
        [str(CLI), "--json", "listen", "--count", "1", "--seconds", "30", "--", fixture_http.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Until the subscription is open a change is not reported: change the list until it is.
    deadline = time.monotonic() + 25
    while listen.poll() is None and time.monotonic() < deadline:
        assert cli_json("call", "notify", server=[fixture_http.url])["content"]
        time.sleep(0.3)
    out, err = listen.communicate(timeout=30)
    assert listen.returncode == 0, err
    event = json.loads(out.splitlines()[0])
    assert event["method"].endswith("list_changed")


def test_listen_ends_after_seconds_on_a_legacy_server():
    done = cli("--json", "listen", "--seconds", "0.5", server=STDIO["legacy"])
    assert done.returncode == 0 and done.stdout == "", done


def test_skills():
    srv = [str(FIXTURE), "--skills", "genuine"]
    skills = cli_json("skills", server=srv)["skills"]
    names = [s["frontmatter"]["name"] for s in skills]
    assert "hello-world" in names
    one = cli_json("skill", "hello-world", server=srv)
    assert one["skill"]["frontmatter"]["name"] == "hello-world"
    assert "name: hello-world" in one["file"]["text"]
    by_uri = cli_json("skill", one["skill"]["uri"], server=srv)
    assert by_uri["skill"]["uri"] == one["skill"]["uri"]


def test_env_reaches_the_server_and_header_reaches_http(fixture_http):
    srv = [str(FIXTURE), "--stderr-banner", "hello"]
    done = cli("--verbose", "--env", "MCP_CLI_PROBE=1", "ping", server=srv)
    short = cli("-v", "-e", "MCP_CLI_PROBE=1", "ping", server=srv)
    assert short.stderr.count("hello") == done.stderr.count("hello") >= 1
    assert done.returncode == 0, done
    assert "hello" in done.stderr  # --verbose shows the server's stderr
    # A header is sent on every request; one the server cannot take makes the connect fail.
    ok = cli("-H", "X-Probe: yes", "ping", server=[fixture_http.url])
    assert ok.returncode == 0, ok
    bad = cli("--header", "no colon here", "ping", server=[fixture_http.url])
    assert bad.returncode == 2 and "--header" in bad.stderr


def test_timeout_exits_6():
    done = cli("--timeout", "0.5", "call", "hang", server=STDIO["modern"])
    assert done.returncode == 6, done


def test_connection_failures_exit_3(tmp_path):
    missing = cli("tools", server=[str(tmp_path / "no-such-server")])
    assert missing.returncode == 3 and "cannot connect" in missing.stderr, missing
    refused = cli("--connect-timeout", "5", "tools", server=["http://127.0.0.1:9/mcp"])
    assert refused.returncode == 3, refused
    assert "is the server running" in refused.stderr  # the library's hint


def test_usage_errors_exit_2():
    assert cli("tools").returncode == 2  # no server
    assert cli("frobnicate").returncode == 2
    assert cli("call", "add", "a", server=STDIO["modern"]).returncode == 2  # not key=value
    assert cli("call", "add", "a=x", "b=1", server=STDIO["modern"]).returncode == 2  # not a number
    assert cli("call", "echo", "--args", "[1]", server=STDIO["modern"]).returncode == 2
    assert cli("servers", server=STDIO["modern"]).returncode == 2


def test_modern_mode_refuses_a_legacy_server():
    done = cli("--mode", "modern", "--connect-timeout", "10", "info", server=STDIO["legacy"])
    assert done.returncode in (1, 3), done


# ----- a configuration file: the hub -----


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fix": {"command": str(FIXTURE)},
                    "old": {"command": str(FIXTURE), "args": ["--era", "legacy"]},
                    "gone": {"command": str(tmp_path / "missing")},
                }
            }
        )
    )
    return str(path)


def test_servers_lists_members_and_states(config_file):
    members = cli_json("servers", "--config", config_file)
    states = {m["name"]: m for m in members}
    assert states["fix"]["state"] == "connected" and states["fix"]["era"] == "modern"
    assert states["old"]["state"] == "connected" and states["old"]["era"] == "legacy"
    assert states["gone"]["state"] == "failed" and "missing" in states["gone"]["error"]


def test_hub_verbose_names_each_member(config_file):
    done = cli("--verbose", "servers", "--config", config_file)
    assert done.returncode == 0, done
    assert '"server":"gone"' in done.stderr and '"state":"failed"' in done.stderr


def test_hub_tools_call_read_export(config_file):
    tools = cli_json("tools", "--config", config_file)["tools"]
    assert {"fix__echo", "old__echo"} <= {t["name"] for t in tools}
    assert cli_json("call", "old__add", "a=1", "b=2", "--config", config_file)["structuredContent"] == {"result": 3}
    assert cli_json("read", "fixture://static", "--config", config_file)["contents"][0]["text"] == "static content"
    exported = cli_json("export", "--format", "anthropic", "--config", config_file)
    assert exported["routes"]["old__add"] == {**exported["routes"]["old__add"], "server": "old", "tool": "add"}
    prompts = cli_json("prompts", "--config", config_file)["prompts"]
    assert "fix__greeting" in [p["name"] for p in prompts]
    assert cli_json("prompt", "fix__greeting", "name=Ada", "--config", config_file)["messages"]
    assert cli_json("resources", "--config", config_file)["resources"]
    assert cli_json("templates", "--config", config_file)["resourceTemplates"]


def test_hub_no_input_records_what_each_member_asked(config_file):
    for name in ("fix__elicit_once", "old__elicit_once"):
        done = cli("--json", "--no-input", "call", name, "--config", config_file)
        assert done.returncode == 5, (name, done)
        asked = json.loads(done.stdout)["inputRequests"]["0"]
        assert asked["params"]["message"] == "What is your name?"


def test_config_with_server_picks_one(config_file):
    info = cli_json("info", "--config", config_file, "--server", "old")
    assert info["era"] == "legacy"
    unknown = cli("info", "--config", config_file, "--server", "nope")
    assert unknown.returncode == 2 and "fix, old" in unknown.stderr
    assert cli("info", "--config", config_file).returncode == 2  # one server's command needs --server


def test_json_is_the_only_stdout(server):
    """--json prints exactly one JSON document: nothing else on stdout."""
    opts, srv, _ = server
    done = cli(*opts, "--json", "tools", server=srv)
    assert done.returncode == 0
    json.loads(done.stdout)
    assert done.stdout.count("\n") == 1


def test_no_color_without_a_terminal():
    done = cli("tools", server=STDIO["modern"])
    assert "\x1b[" not in done.stdout
    forced = cli("tools", server=STDIO["modern"], env={"CLICOLOR_FORCE": "1"})
    assert "\x1b[" in forced.stdout
    assert os.environ.get("NO_COLOR") is None or True


def test_mode_auto_and_sampling_refuse_explicitly():
    info = cli_json("--mode", "auto", "info", server=STDIO["modern"])
    assert info["era"] == "modern"
    refused = cli("--sampling", "refuse", "call", "sample_only", server=STDIO["modern"])
    assert refused.returncode != 0 and "refused" in refused.stderr


# ----- OAuth: login, logout, the token store -----


def test_login_logout_and_the_token_store(fixture_oauth, tmp_path):
    """login runs the authorization-code flow: the "browser" (an xdg-open on PATH) follows the
    authorization URL, whose server approves at once and redirects to the library's loopback
    listener. The tokens then serve later runs until logout forgets them."""
    tokens = str(tmp_path / "tokens")
    browser = tmp_path / "bin"
    browser.mkdir()
    opener = browser / "xdg-open"
    opener.write_text("#!/usr/bin/env python3\nimport sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=10).read()\n")
    opener.chmod(0o755)
    path = {"PATH": f"{browser}:{os.environ['PATH']}"}
    srv = [fixture_oauth.url]

    before = cli("--token-dir", tokens, "tools", server=srv)
    assert before.returncode == 7, before  # authorization required, and no browser opened
    assert "mcp-client login" in before.stderr

    login = cli("--token-dir", tokens, "login", server=srv, env=path)
    assert login.returncode == 0, login
    assert "/authorize?" in login.stderr and "logged in to" in login.stdout

    tools = cli_json("--token-dir", tokens, "tools", server=srv)
    assert "echo" in [t["name"] for t in tools["tools"]]
    again = cli_json("--token-dir", tokens, "login", server=srv)
    assert again["stored"] is False and again["issuers"]  # the stored tokens served

    out = cli_json("--token-dir", tokens, "logout", server=srv)
    assert out["forgotten"] == again["issuers"]
    assert not list((tmp_path / "tokens").glob("*.json"))
    assert cli("--token-dir", tokens, "tools", server=srv).returncode == 7
    assert cli_json("--token-dir", tokens, "logout", server=srv)["forgotten"] == again["issuers"]


def test_login_needs_a_url():
    assert cli("login", server=STDIO["modern"]).returncode == 2


def test_shell_reads_commands_from_stdin(server):
    """One connection for many commands; errors are told and the shell goes on."""
    opts, srv, _ = server
    lines = "ping --json\ncall add a=1 b=2 --json\nfrobnicate\ncall fail --json\nexit\ntools\n"
    done = cli(*opts, "shell", server=srv, stdin=lines)
    assert done.returncode == 0, done
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[0] == {}
    assert out[1]["structuredContent"] == {"result": 3}
    assert out[2]["isError"] is True
    assert len(out) == 3  # nothing after exit
    assert "frobnicate" in done.stderr and "isError" in done.stderr


def test_http_sse_legacy_transport():
    from conftest import start_fixture_http

    server = start_fixture_http("--legacy-sse", "--era", "legacy")
    try:
        url = server.url
        info = cli_json("info", server=[url])
        assert info["era"] == "legacy"
        result = cli_json("call", "add", "a=1", "b=1", server=[url])
        assert result["structuredContent"] == {"result": 2}
    finally:
        server.proc.kill()
        server.proc.wait()
