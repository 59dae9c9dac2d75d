"""`--help` and completions: every command, flag and named value the help lists is exercised by
a test of this suite (checked mechanically: each must appear, quoted, in a test file), every
command's help has an example, and completion scripts generate for bash, zsh and fish."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, cli

HERE = Path(__file__).resolve().parent


def help_text(*command: str) -> str:
    done = cli(*command, "--help")
    assert done.returncode == 0, done
    return done.stdout


def commands() -> list[str]:
    text = help_text()
    block = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  (\w[\w-]*)  ", block, re.M)  # not the continuation lines of a wrapped description


def listed(text: str) -> set[str]:
    """The flags (`--json`, `-H`) and named values (`- modern:`) a help text lists."""
    flags = set(re.findall(r"^\s+(?:(-\w), )?(--[\w-]+)", text, re.M))
    names = {f for pair in flags for f in pair if f}
    names |= set(re.findall(r"^\s+-\s+([\w-]+):", text, re.M))
    return names


def test_every_command_flag_and_value_is_exercised():
    tests = "".join(p.read_text() for p in HERE.glob("test_*.py") if p.name != "test_help.py")
    everywhere = tests + Path(__file__).read_text()  # `completions` and `help` are run here
    missing = []
    for command in ["", *commands()]:
        if command and f'"{command}"' not in everywhere:
            missing.append(f"command {command}")
        if command == "help":
            continue
        for name in sorted(listed(help_text(*([command] if command else [])))):
            if name in ("-h", "--help", "-V", "--version", "bash", "zsh", "fish", "elvish", "powershell"):
                continue  # tested below
            if f'"{name}"' not in tests and f"'{name}'" not in tests:
                missing.append(f"{command or 'mcp-client'} {name}")
    assert not missing, f"listed in --help but used by no test: {missing}"


def test_every_command_has_an_example():
    for command in commands():
        if command != "help":
            assert "Example" in help_text(command), command


def test_help_version_and_help_command():
    assert "Exit codes:" in help_text()
    assert cli("-h").stdout.startswith("A command-line client")
    assert cli("help", "call").stdout == help_text("call")
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("mcp-client ")
    assert cli("-V").stdout == version.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "elvish", "powershell"])
def test_completions_generate(shell):
    done = cli("completions", shell)
    assert done.returncode == 0, done
    for command in ("tools", "call", "export"):
        assert command in done.stdout
    assert "--config" in done.stdout


def test_bash_completion_completes_commands(tmp_path):
    script = tmp_path / "mcp-client.bash"
    script.write_text(cli("completions", "bash").stdout)
    probe = f"""
source {script}
COMP_WORDS=(mcp-client to)
COMP_CWORD=1
_mcp__client mcp-client to mcp-client
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert "tools" in done.stdout.split()


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_completion_scripts_parse(shell, tmp_path):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed: the script was generated, not parsed")
    script = tmp_path / f"mcp-client.{shell}"
    script.write_text(cli("completions", shell).stdout)
    flag = "-n" if shell == "zsh" else "--no-execute"
    done = subprocess.run([shell, flag, str(script)], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr


def test_cli_binary_is_the_one_tested():
    assert CLI.exists()
