#!/usr/bin/env bash
# make dist-test: hosts built against an installed mcp_client, outside the repository.
#
#   tests/dist/run.sh PREFIX FIXTURE
#
# PREFIX is a `make install PREFIX=...` tree, FIXTURE the mcp-fixture-server binary. Runs every
# tests/dist/<lang>.sh besides this one as `<lang>.sh PREFIX FIXTURE WORKDIR`, each in a fresh
# WORKDIR outside the repository and with an environment scrubbed of anything that could point
# at the source tree. A script exits 0 on success, 77 when a prerequisite is missing (printed as
# SKIP; MCP_DIST_STRICT=1 turns skips into failures), anything else on failure. Also checks the
# installed library's size (c.sh checks the static hello's).
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 PREFIX FIXTURE" >&2
  exit 2
fi
prefix=$(cd "$1" && pwd) || exit 2
fixture=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/dist/sizes.bash
. "$here/sizes.bash"

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-dist.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

failed=() skipped=() passed=()
so_bytes=$(stat -L -c %s "$prefix/lib/libmcp_client.so") || exit 1
if check_size "installed libmcp_client.so" "$so_bytes" "$SO_LIMIT"; then passed+=(so-size); else failed+=(so-size); fi

for script in "$here"/*.sh; do
  [ "$script" = "$here/run.sh" ] && continue
  lang=$(basename "$script" .sh)
  mkdir -p "$work/$lang"
  echo "== dist-test: $lang =="
  # Only what a user's shell would have: no PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, CGO_* or
  # library paths into the repository; the scripts set their own.
  (cd "$work/$lang" && env -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH -u LD_LIBRARY_PATH -u LIBRARY_PATH \
     -u CPATH -u C_INCLUDE_PATH -u CPLUS_INCLUDE_PATH -u CGO_CFLAGS -u CGO_LDFLAGS -u MCP_CLIENT_LIB \
     -u MCP_FIXTURE -u GOFLAGS -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
     bash "$script" "$prefix" "$fixture" "$work/$lang")
  case $? in
    0) passed+=("$lang") ;;
    77) echo "SKIP: $lang"; skipped+=("$lang") ;;
    *) echo "FAIL: $lang"; failed+=("$lang") ;;
  esac
done

echo "== dist-test: passed: ${passed[*]:-none}; skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none} =="
if [ ${#failed[@]} -gt 0 ]; then exit 1; fi
if [ ${#skipped[@]} -gt 0 ] && [ "${MCP_DIST_STRICT:-0}" = 1 ]; then
  echo "MCP_DIST_STRICT=1: skipped hosts count as failures"
  exit 1
fi
