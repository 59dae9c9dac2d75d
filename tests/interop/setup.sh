#!/usr/bin/env bash
# Installs the pinned interop servers into a cache outside the repository and prints the cache
# directory on stdout (progress goes to stderr).
#
#   tests/interop/setup.sh                  install what is missing, print the cache directory
#   MCP_INTEROP_CACHE=/dir tests/interop/setup.sh
#
# Cache layout (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/interop):
#   py-<key>/venv          venv from requirements.txt (mcp==2.3.0, pytest, pytest-xdist,
#                          mcp-server-time and mcp-server-git 2026.10.19)
#   npm-<key>/node_modules npm prefix from npm/package-lock.json (`npm ci`): the TypeScript SDK
#                          server 2.4.0, node 2.1.2, zod 4, server-everything, server-filesystem
#                          and server-memory 2026.8.31
#   py, npm                symlinks to the directories of the current pins
# <key> hashes the pin files (and the Python / Node major version), so changing a pin installs
# into a fresh directory. A directory is used only once its `.installed` marker exists, written
# after a complete install; an interrupted install is redone from scratch. With the markers in
# place nothing touches the network. Directories of older pins are left alone (delete the
# cache to reclaim them).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
CACHE=${MCP_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/interop}

command -v node >/dev/null || { echo "setup.sh: node (>= 20) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup.sh: npm is required" >&2; exit 1; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || { echo "setup.sh: node >= 20 is required, found $(node --version)" >&2; exit 1; }
py_version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

PY_KEY=$( (echo "python $py_version"; cat "$HERE/requirements.txt") | sha256sum | cut -c1-12)
NPM_KEY=$( (echo "node $node_major"; cat "$HERE/npm/package.json" "$HERE/npm/package-lock.json") | sha256sum | cut -c1-12)
PY_DIR=$CACHE/py-$PY_KEY
NPM_DIR=$CACHE/npm-$NPM_KEY

mkdir -p "$CACHE"
# One installer at a time: two runs in parallel must not share a half-built directory.
exec 9>"$CACHE/.lock"
flock -w 900 9 || { echo "setup.sh: could not lock $CACHE/.lock within 900 s" >&2; exit 1; }

if [ ! -f "$PY_DIR/.installed" ]; then
  echo "setup.sh: installing $(grep -v '^#' "$HERE/requirements.txt" | xargs) into $PY_DIR/venv" >&2
  start=$SECONDS
  rm -rf "$PY_DIR"
  mkdir -p "$PY_DIR"
  "$PYTHON" -m venv "$PY_DIR/venv" >&2
  "$PY_DIR/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$HERE/requirements.txt" >&2
  "$PY_DIR/venv/bin/python" -c 'import mcp.server.mcpserver, pytest, xdist, mcp_server_time, mcp_server_git' >&2
  cp "$HERE/requirements.txt" "$PY_DIR/.installed"
  echo "setup.sh: Python side installed in $((SECONDS - start)) s" >&2
fi

if [ ! -f "$NPM_DIR/.installed" ]; then
  echo "setup.sh: installing the npm packages of npm/package-lock.json into $NPM_DIR" >&2
  start=$SECONDS
  rm -rf "$NPM_DIR"
  mkdir -p "$NPM_DIR"
  cp "$HERE/npm/package.json" "$HERE/npm/package-lock.json" "$NPM_DIR/"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --no-update-notifier --loglevel=error) >&2
  test -f "$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
  test -f "$NPM_DIR/node_modules/@modelcontextprotocol/server/package.json"
  test -f "$NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/package.json"
  test -f "$NPM_DIR/node_modules/@modelcontextprotocol/server-memory/package.json"
  cp "$HERE/npm/package.json" "$NPM_DIR/.installed"
  echo "setup.sh: npm side installed in $((SECONDS - start)) s" >&2
fi

# Copies of ts_server.mjs a killed run could not remove (the suite runs it from inside the prefix).
find "$NPM_DIR" -maxdepth 1 -name 'run-*' -type d -mmin +120 -exec rm -rf {} + 2>/dev/null || true

# Stable names for the suite: the current pins. (Replaced atomically.)
ln -sfn "py-$PY_KEY" "$CACHE/py.tmp.$$" && mv -Tf "$CACHE/py.tmp.$$" "$CACHE/py"
ln -sfn "npm-$NPM_KEY" "$CACHE/npm.tmp.$$" && mv -Tf "$CACHE/npm.tmp.$$" "$CACHE/npm"
echo "$CACHE"
