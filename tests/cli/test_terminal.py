"""The CLI as a person uses it, in a real terminal (tmux): prompts typed into, the screen read."""

from __future__ import annotations

import json
import os
import shlex
import stat
import time

from conftest import CLI, FIXTURE, everything


def command(*args: str, server: list[str]) -> str:
    return shlex.join([str(CLI), *args, "--", *server])


def test_elicitation_prompt_typed_into(terminal):
    t = terminal(command("call", "elicit_once", server=[str(FIXTURE)]))
    t.wait_for("The server asks: What is your name?")
    t.wait_for("accept")
    t.keys("Enter")  # accept is first
    t.wait_for("? name")
    t.type("Ada")
    t.keys("Enter")
    screen = t.wait_for("[exit 0]")
    assert "Hello, Ada!" in screen


def test_elicitation_declined_and_cancelled_with_arrow_keys(terminal):
    for presses, expected in ((1, "Hello, stranger (declined)"), (2, "Hello, stranger (cancelled)")):
        t = terminal(command("--mode", "legacy", "call", "elicit_once", server=[str(FIXTURE)]))
        t.wait_for("decline")
        for _ in range(presses):
            t.keys("Down")
        t.keys("Enter")
        screen = t.wait_for("[exit 0]")
        assert expected in screen, screen


def test_a_whole_form_with_types_enums_and_defaults(terminal):
    """server-everything's form: strings, a boolean, defaults, integer and number, enums titled
    and untitled, single and multiple."""
    t = terminal(command("call", "trigger-elicitation-request", server=everything()))
    t.wait_for("Please provide inputs")
    t.keys("Enter")  # accept
    t.wait_for("? String")
    t.type("Ada Lovelace")
    t.keys("Enter")
    t.wait_for("? Boolean")
    t.type("y")
    t.wait_for("? String with default")
    assert "It was a dark and stormy night." in t.screen()  # the default is offered
    t.keys("Enter")
    for field in ("email format", "uri format", "date format"):
        t.wait_for(f"? String with {field}")
        t.keys("Enter")  # optional: left out
    t.wait_for("? Integer")
    t.type("x")  # not an integer: asked again
    t.keys("Enter")
    t.wait_for("not a integer")
    t.keys("BSpace")
    t.type("7")
    t.keys("Enter")
    t.wait_for("? Number in range")
    t.keys("Enter")  # default 3.14
    t.wait_for("? Untitled Single Select Enum")
    t.keys("Down", "Enter")  # Rachel
    t.wait_for("? Untitled Multiple Select Enum")
    t.keys("Down", "Space", "Enter")  # Guitar (the default) and Piano
    t.wait_for("? Titled Single Select Enum")
    t.keys("Down", "Down", "Enter")  # Wonder Woman
    t.wait_for("? Titled Multiple Select Enum")
    t.keys("Enter")
    t.wait_for("? Legacy Titled Single Select Enum")
    t.keys("Enter")
    screen = t.wait_for("[exit 0]")
    raw = screen[screen.index("Raw result:") + len("Raw result:") : screen.index("[exit 0]")]
    content = json.loads(raw)["content"]
    assert content["name"] == "Ada Lovelace"
    assert content["check"] is True
    assert content["firstLine"] == "It was a dark and stormy night."
    assert "email" not in content
    assert content["integer"] == 7
    assert content["number"] == 3.14
    assert content["untitledSingleSelectEnum"] == "Rachel"
    assert content["untitledMultipleSelectEnum"] == ["Guitar", "Piano"]
    assert content["titledSingleSelectEnum"] == "hero-3"


def test_url_elicitation_shows_the_url_and_opens_the_browser(terminal, tmp_path):
    opener = tmp_path / "xdg-open"
    opened = tmp_path / "opened"
    opener.write_text(f"#!/bin/sh\necho \"$1\" > {shlex.quote(str(opened))}\n")
    opener.chmod(opener.stat().st_mode | stat.S_IEXEC)
    url = "https://example.com/consent?id=42"
    args = ["--open", "call", "trigger-url-elicitation", f"url={url}", "message=Please sign in"]
    t = terminal(command(*args, server=everything()), env={"PATH": f"{tmp_path}:{os.environ['PATH']}"})
    screen = t.wait_for("Done?")
    assert f"Open this address to continue: {url}" in screen
    t.keys("Enter")
    t.wait_for("[exit")
    assert opened.read_text().strip() == url


def test_sampling_asked_at_the_terminal(terminal):
    args = ["--sampling", "ask", "call", "trigger-sampling-request", "prompt=Name a colour", "maxTokens=20"]
    t = terminal(command(*args, server=everything()))
    screen = t.wait_for("Answer it?")
    assert "Name a colour" in screen
    t.keys("Enter")
    t.wait_for("? Your answer")
    t.type("Teal.")
    t.keys("Enter")
    screen = t.wait_for("[exit 0]")
    assert "Teal." in screen


def test_progress_bar_while_a_tool_runs(terminal):
    t = terminal(command("call", "progress", "steps=6", "delay_ms=500", server=[str(FIXTURE)]))
    screen = t.wait_for("/6")
    assert "[" in screen and "=" in screen  # the bar
    screen = t.wait_for("[exit 0]")
    assert "/6" not in screen  # cleared at the end
    assert "progress done" in screen


def test_tables_wrap_to_the_terminal_width(terminal):
    t = terminal(command("tools", server=everything()), width=60)
    screen = t.wait_for("[exit 0]")
    lines = screen.splitlines()
    assert all(len(line) <= 60 for line in lines)
    # the long descriptions continue on lines of their own, under the description column
    assert any(line.startswith(" " * 10) and line.strip() for line in lines)


def test_colour_on_a_terminal_and_no_color_honoured(terminal):
    t = terminal(command("tools", server=[str(FIXTURE)]))
    t.wait_for("[exit 0]")
    assert "\x1b[1m" in t.tmux("capture-pane", "-p", "-e", "-t", t.name)
    plain = terminal(command("tools", server=[str(FIXTURE)]), env={"NO_COLOR": "1"})
    plain.wait_for("[exit 0]")
    assert "\x1b[1m" not in plain.tmux("capture-pane", "-p", "-e", "-t", plain.name)


def test_no_input_in_a_terminal_never_asks(terminal):
    t = terminal(command("--no-input", "call", "elicit_once", server=[str(FIXTURE)]))
    screen = t.wait_for("[exit 5]")
    assert "What is your name?" in screen and "? Answer" not in screen


def test_listen_ends_at_ctrl_c(terminal):
    t = terminal(command("listen", server=[str(FIXTURE)]))
    t.wait_for("listening")
    time.sleep(0.3)
    t.keys("C-c")
    t.wait_for("[exit 0]")


def test_shell_completes_tools_and_keys_and_keeps_history(terminal):
    t = terminal(command("shell", server=[str(FIXTURE)]))
    t.wait_for("Tab completes")
    t.type("call ad")
    t.keys("Tab")
    t.type(" a")
    t.keys("Tab")
    assert "mcp: call add a=" in t.wait_for("call add a=")
    t.type("2 b=3")
    t.keys("Enter")
    t.wait_for('"result": 5')
    t.keys("Up")  # the last command again
    t.wait_for("mcp: call add a=2 b=3\n5")
    t.keys("Enter")
    t.type("call elicit_once")
    t.keys("Enter")
    t.wait_for("accept")
    t.keys("Enter")
    t.wait_for("? name")
    t.type("Ada")
    t.keys("Enter")
    t.wait_for("Hello, Ada!")
    t.type("exit")
    t.keys("Enter")
    screen = t.wait_for("[exit 0]")
    assert screen.count('"result": 5') == 2


def test_elicitation_over_http_in_both_eras(terminal, fixture_http):
    for mode in ("modern", "legacy"):
        t = terminal(command("--mode", mode, "call", "elicit_once", server=[fixture_http.url]))
        t.wait_for("What is your name?")
        t.wait_for("accept")
        t.keys("Enter")
        t.wait_for("? name")
        t.type("Grace")
        t.keys("Enter")
        assert "Hello, Grace!" in t.wait_for("[exit 0]"), mode
