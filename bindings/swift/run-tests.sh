#!/usr/bin/env bash
# Builds and tests the Swift binding inside a cached Debian trixie root (Debian 12 has no Swift).
#
#   bindings/swift/run-tests.sh <libdir> <fixture>
#
#   <libdir>   directory holding libmcp_client.a (e.g. target/debug)
#   <fixture>  the mcp-fixture-server binary (e.g. target/debug/mcp-fixture-server)
#
# Environment:
#   MCP_SWIFT_ROOT     the trixie root (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/swift-trixie)
#   MCP_SWIFT_MIRROR   Debian mirror for debootstrap (default http://deb.debian.org/debian)
#   MCP_SWIFT_FILTER   passed to `swift test --filter` (run a subset)
#   MCP_SWIFT_JOBS     build jobs (default: number of cores)
#
# Needs root. The Debian root (built once, cached) and its mounts are handled by trixie-root.sh,
# shared with tests/dist/swift.sh. The repository is bind-mounted at its own path. The static
# library and the fixture are copied into bindings/swift/.build/native/ (inside the repository,
# so inside the bind mount), and bindings/swift/.build/pkgconfig/mcp_client.pc makes SwiftPM
# link that copy statically: the package reads mcp_client.pc like any app would (Package.swift).
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <libdir> <fixture>" >&2
    exit 2
fi

SWIFT_ROOT_TAG=swift-tests
. "$(dirname "${BASH_SOURCE[0]}")/trixie-root.sh"

LIBDIR=$(cd "$1" && pwd) || die "no such library directory: $1"
FIXTURE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -f "$LIBDIR/libmcp_client.a" ] || die "$LIBDIR/libmcp_client.a not found (run: cargo build --workspace)"
[ -x "$FIXTURE" ] || die "fixture server $FIXTURE not found or not executable"

PKG="$SWIFT_REPO/bindings/swift"
started=$(date +%s)
# The async API has every waiting operation of the blocking one (a source check: no root needed).
python3 "$SWIFT_REPO/tests/started_parity.py" swift || exit 1
swift_root_enter
swift_root_bind "$SWIFT_REPO"
if [ -n "${MCP_SWIFT_PROVISION_ONLY:-}" ]; then say "provisioned in $(( $(date +%s) - started ))s"; exit 0; fi

# 4. Native inputs, staged inside the package's .build (ignored by git). Only the static library
#    goes there, so the test binary needs nothing from the host at run time. SwiftPM does not
#    track libraries it links through pkg-config, so when the library changed, the linked
#    products are removed to force a relink.
BUILD="$PKG/.build"
NATIVE="$BUILD/native"
mkdir -p "$NATIVE" "$BUILD/pkgconfig"
if ! cmp -s "$LIBDIR/libmcp_client.a" "$NATIVE/libmcp_client.a"; then
    cp "$LIBDIR/libmcp_client.a" "$NATIVE/libmcp_client.a.tmp"
    mv "$NATIVE/libmcp_client.a.tmp" "$NATIVE/libmcp_client.a"
    rm -rf "$BUILD"/*/debug/MCPClientPackageTests.xctest "$BUILD"/*/debug/mcp-swift-example
fi
# The pkg-config file the package's CMCPClient target asks for (mcp_client.pc), for this
# checkout: the header from include/, the staged archive by file name (-l:, so no shared library
# can be picked) and the C libraries a Rust static library needs (STATIC_LIBS in the Makefile;
# SwiftPM reads only Libs, never Libs.private).
cat > "$BUILD/pkgconfig/mcp_client.pc.tmp" <<PC
# Written by bindings/swift/run-tests.sh: the in-repo test build, linked statically.
Name: mcp_client
Description: mcp_client for the in-repo Swift tests ($NATIVE/libmcp_client.a)
Version: 0
Libs: -L$NATIVE -l:libmcp_client.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
Cflags: -I$SWIFT_REPO/include
PC
mv "$BUILD/pkgconfig/mcp_client.pc.tmp" "$BUILD/pkgconfig/mcp_client.pc"
# The host's CA bundle, for the HTTP tests that are not about the trust store (the root has none).
CA_BUNDLE=""
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [ -f "$f" ]; then cmp -s "$f" "$NATIVE/ca-bundle.crt" || cp "$f" "$NATIVE/ca-bundle.crt"; CA_BUNDLE="$NATIVE/ca-bundle.crt"; break; fi
done
cmp -s "$FIXTURE" "$NATIVE/mcp-fixture-server" || { cp "$FIXTURE" "$NATIVE/mcp-fixture-server.tmp" \
    && mv "$NATIVE/mcp-fixture-server.tmp" "$NATIVE/mcp-fixture-server"; }

# 5. Build and test inside the root: the package is the repository root (Package.swift there),
#    its build directory bindings/swift/.build.
LOG="$BUILD/swift-test.log"
set +e
in_root env PKG_CONFIG_PATH="$BUILD/pkgconfig" MCP_FIXTURE="$NATIVE/mcp-fixture-server" \
    MCP_SWIFT_CA_BUNDLE="$CA_BUNDLE" MCP_SWIFT_FILTER="${MCP_SWIFT_FILTER:-}" \
    sh -c '
        set -e
        swift build --package-path "$1" --scratch-path "$2" --build-tests -j "$3"
        swift test --package-path "$1" --scratch-path "$2" --skip-build --disable-swift-testing \
            ${MCP_SWIFT_FILTER:+--filter "$MCP_SWIFT_FILTER"}
    ' sh "$SWIFT_REPO" "$BUILD" "$SWIFT_JOBS" 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
set -e

# 6. A summary line that is unambiguous whatever the runner printed last.
elapsed=$(( $(date +%s) - started ))
summary=$(grep -E '^[[:space:]]*Executed [0-9]+ tests?, with .*[0-9]+ failures?' "$LOG" | tail -n1 || true)
if [ -n "$summary" ]; then
    # Count test cases (XCTest's own summary counts failed assertions, not tests).
    passed=$(grep -cE "^Test Case '.*' passed" "$LOG" || true)
    failed=$(grep -cE "^Test Case '.*' failed" "$LOG" || true)
    skipped=$(grep -cE "^Test Case '.*' skipped" "$LOG" || true)
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
    say "finished in ${elapsed}s (exit status $status)"
    echo "swift: $passed passed, $failed failed, $skipped skipped"
else
    say "finished in ${elapsed}s (exit status $status): no XCTest summary (build failure?)"
    echo "swift: 0 passed, 1 failed"
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
