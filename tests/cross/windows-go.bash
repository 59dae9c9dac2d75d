#!/usr/bin/env bash
# `make windows-go-test`: the Go binding's tests cross-built for Windows with cgo and MinGW-w64
# against mcp_client.dll (through its import library), run under Wine 10 from the Debian trixie
# root (tests/cross/wine-trixie.bash): Go's runtime needs bcryptprimitives.dll at start-up, which
# Debian 12's Wine 8 lacks. The tests that need Unix (FIFOs, signals, thread parking, a /bin/sh
# server) are left out by build tags or skip themselves.
#
# The DLL and the fixture server come from the same build as `make windows-test` (cargo through
# tests/cross/toolchain.bash; a no-op when that ran). Needs root (the trixie root's chroot).
#   GO_TEST_RUN=Hub   passed to -test.run (run a subset)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=x86_64-win7-windows-gnu
if [ -z "${MCP_CROSS_TARGET:-}" ]; then
  exec tests/cross/toolchain.bash "$target" -- "$0" "$@"
fi
command -v go >/dev/null || { echo "windows-go-test: go is not installed" >&2; exit 1; }

step() { printf '== windows-go-test: %s (%ds)\n' "$1" "$SECONDS"; }
winpath() { local p=$1; echo "Z:${p//\//\\}"; }

step "cargo build --target $target (std built from rust-web-src)"
cargo build --workspace --locked -Zbuild-std=std,panic_unwind --target "$target"
out=$CARGO_TARGET_DIR/$target/debug

step "Go binding's tests with cgo and MinGW-w64, linked against mcp_client.dll"
build=$CARGO_TARGET_DIR/$target/go-tests
mkdir -p "$build/pkgconfig"
cp "$out/mcp_client.dll" "$build/"
for dll in libwinpthread-1.dll libgcc_s_seh-1.dll; do
  src=$(x86_64-w64-mingw32-gcc-posix -print-file-name="$dll")
  [ -f "$src" ] && cp "$src" "$build/"
done
printf 'Name: mcp_client\nDescription: mcp_client for %s\nVersion: 0\nCflags: -I%s/include\nLibs: %s\n' \
  "$target" "$repo" "$out/libmcp_client.dll.a" > "$build/pkgconfig/mcp_client.pc"
(cd bindings/go && CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc-posix \
  PKG_CONFIG_PATH="$build/pkgconfig" PKG_CONFIG_LIBDIR="$build/pkgconfig" GOPROXY=off \
  go test -c -o "$build/mcp_go_tests.exe" .)

step "under Wine 10 (trixie root)"
# From bindings/go, as `go test` runs them (a test reads the schema through a relative path).
run=()
[ -n "${GO_TEST_RUN:-}" ] && run=(-test.run "$GO_TEST_RUN")
status=0
tests/cross/wine-trixie.bash -C bindings/go --bind "$CARGO_TARGET_DIR" \
  MCP_FIXTURE="$(winpath "$out/mcp-fixture-server.exe")" \
  "$build/mcp_go_tests.exe" -test.v -test.count=1 -test.timeout 600s "${run[@]}" \
  | tee "$build/go-tests.log" || status=$?
printf 'windows-go-test: %s passed, %s skipped, %s failed\n' \
  "$(grep -c '^--- PASS' "$build/go-tests.log")" "$(grep -c '^--- SKIP' "$build/go-tests.log")" \
  "$(grep -c '^--- FAIL' "$build/go-tests.log")"
step "done"
exit "$status"
