#!/usr/bin/env bash
# `make windows-test`: the library for Windows (x86_64-win7-windows-gnu: mcp_client.dll, its
# import library libmcp_client.dll.a, and libmcp_client.a), the fixture server for Windows, and
# the C tests built with MinGW-w64 against the DLL, run under Wine: the C suite's sources shared
# with Linux (tests/c: stdio, HTTP, MRTR, threads, started calls, the host loop, auth, hubs, the
# shared runtime; not fork, signals or process groups) and the Windows cases
# (tests/c/test_windows.c: a .cmd shim found through PATH and PATHEXT, the batch-argument
# refusal, the process tree in a Job Object, the exit status and stderr tail, the host loop's
# event HANDLE). The Go binding's tests run under Wine 10 in `make windows-go-test`
# (tests/cross/windows-go.bash).
#
# The toolchain comes from tests/cross/toolchain.bash (installed through apt when missing);
# builds go to its target directory outside the repository (kept between runs).
#   TESTS="windows/ mrtr/elicit"   run only the tests whose names contain one of these
set -euo pipefail
cd "$(dirname "$0")/../.."
target=x86_64-win7-windows-gnu
if [ -z "${MCP_CROSS_TARGET:-}" ]; then
  exec tests/cross/toolchain.bash "$target" -- "$0" "$@"
fi

step() { printf '== windows-test: %s (%ds)\n' "$1" "$SECONDS"; }

step "cargo build --target $target (std built from rust-web-src)"
cargo build --workspace --locked -Zbuild-std=std,panic_unwind --target "$target"
out=$CARGO_TARGET_DIR/$target/debug
for f in mcp_client.dll libmcp_client.dll.a libmcp_client.a mcp-fixture-server.exe; do
  test -f "$out/$f" || { echo "windows-test: $out/$f was not built"; exit 1; }
done

step "C tests with MinGW-w64, linked against mcp_client.dll"
build=$CARGO_TARGET_DIR/$target/c-tests
mkdir -p "$build"
cp "$out/mcp_client.dll" "$build/"
# The MinGW runtime DLLs the test program needs next to it (winpthreads; gcc's unwinder).
for dll in libwinpthread-1.dll libgcc_s_seh-1.dll; do
  src=$(x86_64-w64-mingw32-gcc-posix -print-file-name="$dll")
  [ -f "$src" ] && cp "$src" "$build/"
done
# The C suite's sources, shared with Linux (the cases that need POSIX are left out by #ifdef
# inside them), and the Windows cases.
c_sources=(harness.c harness_windows.c fixture_signal.c blocked.c test_api.c test_calls.c test_mrtr.c
  test_threads.c test_auth.c test_skills.c test_elicit_tasks.c test_cache.c test_async.c
  test_shared_rt.c test_hub.c test_export.c test_pins.c test_windows.c)
x86_64-w64-mingw32-gcc-posix -std=c11 -Wall -Wextra -Wpedantic -Werror -g -O1 \
  -Iinclude -DTEST_LINKAGE='"shared"' -D__USE_MINGW_ANSI_STDIO=1 \
  -o "$build/mcp_tests.exe" \
  "${c_sources[@]/#/tests/c/}" \
  "$out/libmcp_client.dll.a" -lpthread -lws2_32

step "Wine prefix"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
fi
wine --version

step "C tests under Wine"
fixture=$(winepath -w "$out/mcp-fixture-server.exe" 2>/dev/null)
# shellcheck disable=SC2086
MCP_FIXTURE="$fixture" wine "$build/mcp_tests.exe" ${TESTS:-}
step "done"
