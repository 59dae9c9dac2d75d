#!/usr/bin/env bash
# What the command-line client's suite needs besides the interop servers (tests/interop/setup.sh):
# tmux for the terminal tests, and zsh and fish, whose parsers check the generated completion
# scripts. Installed with apt-get when missing and possible (root on Debian/Ubuntu); without
# tmux the suite cannot run, so that is an error.
set -euo pipefail

missing=()
for tool in tmux zsh fish; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "tests/cli/setup.sh: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
command -v tmux >/dev/null || { echo "tests/cli/setup.sh: tmux is required (the terminal tests)" >&2; exit 1; }
