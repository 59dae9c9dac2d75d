#!/usr/bin/env bash
# dist-test host: the Python wheel. Builds it (bindings/python `make wheel`: cargo's release
# library bundled), checks it is a platform wheel that holds the library, installs it into a fresh
# venv and, from outside the repository with no MCP_CLIENT_LIB, calls a tool on the fixture.
#   tests/dist/python.sh PREFIX FIXTURE WORKDIR
# PREFIX (the installed tree) is not used: a wheel carries its own library. Set
# MCP_CLIENT_PREBUILT_LIB to bundle an already built library instead of running cargo.
set -euo pipefail
fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PYTHON=${PYTHON:-python3}

command -v "$PYTHON" >/dev/null || { echo "SKIP: $PYTHON is not installed"; exit 77; }
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: $PYTHON has no venv/ensurepip"; exit 77; }
work=$(mkdir -p "$work" && cd "$work" && pwd)
case "$work/" in "$repo"/*) echo "WORKDIR $work is inside the repository" >&2; exit 2 ;; esac

rm -rf "$work/wheel"
make -s -C "$repo/bindings/python" wheel WHEEL_DIR="$work/wheel" PYTHON="$PYTHON" PIP_WHEEL_FLAGS=-q
wheels=("$work"/wheel/mcp_client-*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { echo "expected one wheel in $work/wheel" >&2; exit 1; }
wheel=${wheels[0]}

# A platform wheel: py3-none-<platform> (not -any), installed to platlib, with the library inside.
"$PYTHON" - "$wheel" <<'PY'
import sys, zipfile
path = sys.argv[1]
name, version, py, abi, plat = path.rsplit("/", 1)[1][: -len(".whl")].split("-")
assert (py, abi) == ("py3", "none") and plat != "any", f"not a py3-none-<platform> wheel: {path}"
with zipfile.ZipFile(path) as z:
    names = set(z.namelist())
    meta = z.read(f"{name}-{version}.dist-info/WHEEL").decode()
for needed in ("mcp_client/libmcp_client.so", "mcp_client/py.typed", "mcp_client/__init__.py"):
    assert needed in names, f"{needed} is not in {path}"
assert "Root-Is-Purelib: false" in meta, meta
assert f"Tag: {py}-{abi}-{plat}" in meta, meta
print(f"python: wheel tag {py}-{abi}-{plat}, holds mcp_client/libmcp_client.so")
PY

rm -rf "$work/venv"
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"

# From a directory outside the repository, with nothing pointing at the source tree.
mkdir -p "$work/host"
cp "$here/src/hello.py" "$work/host/"
(cd "$work/host" && env -u MCP_CLIENT_LIB -u PYTHONPATH -u PYTHONHOME \
  timeout 120 "$work/venv/bin/python" hello.py "$fixture" "$work/venv")

bytes=$(stat -c %s "$wheel")
echo "size: python wheel $(basename "$wheel"): $(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1e6 }') MB ($bytes bytes)"
