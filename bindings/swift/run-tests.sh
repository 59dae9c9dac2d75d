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
# Needs root (debootstrap, mount, chroot). The root is built once (debootstrap + swiftlang, a few
# minutes) and reused; a marker file records a finished install. /proc and the repository are
# mounted into the root for the run and always unmounted on exit. The static library and the
# fixture are copied into bindings/swift/.build/native/ (inside the repository, so inside the
# bind mount), which also keeps a libmcp_client.so next to the .a from being picked by the linker.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <libdir> <fixture>" >&2
    exit 2
fi

say() { printf 'swift-tests: %s\n' "$*"; }
die() { printf 'swift-tests: error: %s\n' "$*" >&2; exit 1; }

LIBDIR=$(cd "$1" && pwd) || die "no such library directory: $1"
FIXTURE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -f "$LIBDIR/libmcp_client.a" ] || die "$LIBDIR/libmcp_client.a not found (run: cargo build --workspace)"
[ -x "$FIXTURE" ] || die "fixture server $FIXTURE not found or not executable"
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount and chroot need it)"

PKG=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)   # bindings/swift
REPO=$(cd "$PKG/../.." && pwd)
ROOT=${MCP_SWIFT_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/swift-trixie}
ROOT=${ROOT%/}
MIRROR=${MCP_SWIFT_MIRROR:-http://deb.debian.org/debian}
JOBS=${MCP_SWIFT_JOBS:-$(nproc)}
READY="$ROOT/.mcp-swift-ready"          # written once swiftlang is installed
BOOTSTRAPPED="$ROOT/.mcp-debootstrap-done"
PACKAGES="swiftlang libc6-dev libstdc++-14-dev"

case "$ROOT" in "$REPO"|"$REPO"/*) die "MCP_SWIFT_ROOT must be outside the repository" ;; esac
mkdir -p "$(dirname "$ROOT")"

# One run at a time per root: runs share the mounts.
exec 9>"$ROOT.lock"
if ! flock -w 1800 9; then die "timed out waiting for another run holding $ROOT.lock"; fi

MOUNTS=()
cleanup() {
    local status=$? i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null \
            || echo "swift-tests: warning: could not unmount ${MOUNTS[i]}" >&2
    done
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

is_mounted() { mountpoint -q "$1" 2>/dev/null; }
do_mount() { # do_mount <target> <mount args...>
    local target=$1; shift
    if is_mounted "$target"; then umount -l "$target" 2>/dev/null || true; fi  # stale, from a killed run
    mount "$@" "$target"
    MOUNTS+=("$target")
}

in_root() { # runs a command inside the root with a clean environment
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

started=$(date +%s)

# 1. The root itself.
if [ ! -f "$BOOTSTRAPPED" ]; then
    command -v debootstrap >/dev/null || {
        say "installing debootstrap on the host"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    # Only ever wipe a directory this script created (its marker), never an arbitrary one.
    if [ -d "$ROOT" ] && [ -n "$(ls -A "$ROOT")" ] && [ ! -f "$ROOT/.mcp-swift-root" ]; then
        die "$ROOT is not empty and was not made by this script; set MCP_SWIFT_ROOT elsewhere"
    fi
    for m in proc dev sys "${REPO#/}"; do is_mounted "$ROOT/$m" && die "$ROOT/$m is mounted; refusing to wipe"; done
    rm -rf "$ROOT"
    mkdir -p "$ROOT"
    touch "$ROOT/.mcp-swift-root"
    say "creating the trixie root in $ROOT (debootstrap, about a minute)"
    debootstrap --variant=minbase trixie "$ROOT" "$MIRROR" > "$ROOT.debootstrap.log" 2>&1 \
        || { tail -20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log: $ROOT.debootstrap.log)"; }
    touch "$BOOTSTRAPPED"
fi

# 2. Mounts for this run: /proc (Swift finds its runtime through /proc/self/exe), /dev when the
#    root has no device nodes, and the repository at the same path as on the host.
do_mount "$ROOT/proc" -t proc proc
[ -c "$ROOT/dev/null" ] || do_mount "$ROOT/dev" --bind /dev
mkdir -p "$ROOT$REPO"
do_mount "$ROOT$REPO" --bind "$REPO"

# 3. The toolchain (idempotent; the marker is written only after a successful install).
if [ ! -f "$READY" ]; then
    say "installing $PACKAGES in the root (a few minutes, once)"
    cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
    in_root sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends $PACKAGES && apt-get clean" > "$ROOT.apt.log" 2>&1 \
        || { tail -20 "$ROOT.apt.log" >&2; die "installing the toolchain failed (log: $ROOT.apt.log)"; }
    in_root swift --version > "$READY" 2>&1 || die "swift does not run inside the root"
fi
say "toolchain: $(head -n1 "$READY")"
if [ -n "${MCP_SWIFT_PROVISION_ONLY:-}" ]; then say "provisioned in $(( $(date +%s) - started ))s"; exit 0; fi

# 4. Native inputs, staged inside the package's .build (ignored by git). Only the static library
#    goes there, so the test binary needs nothing from the host at run time. SwiftPM does not
#    track libraries passed with -L, so when the library changed, the linked products are removed
#    to force a relink.
NATIVE="$PKG/.build/native"
mkdir -p "$NATIVE"
if ! cmp -s "$LIBDIR/libmcp_client.a" "$NATIVE/libmcp_client.a"; then
    cp "$LIBDIR/libmcp_client.a" "$NATIVE/libmcp_client.a.tmp"
    mv "$NATIVE/libmcp_client.a.tmp" "$NATIVE/libmcp_client.a"
    rm -rf "$PKG"/.build/*/debug/MCPClientPackageTests.xctest "$PKG"/.build/*/debug/mcp-swift-example
fi
# The host's CA bundle, for the HTTP tests that are not about the trust store (the root has none).
CA_BUNDLE=""
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [ -f "$f" ]; then cmp -s "$f" "$NATIVE/ca-bundle.crt" || cp "$f" "$NATIVE/ca-bundle.crt"; CA_BUNDLE="$NATIVE/ca-bundle.crt"; break; fi
done
cmp -s "$FIXTURE" "$NATIVE/mcp-fixture-server" || { cp "$FIXTURE" "$NATIVE/mcp-fixture-server.tmp" \
    && mv "$NATIVE/mcp-fixture-server.tmp" "$NATIVE/mcp-fixture-server"; }

# 5. Build and test inside the root.
LOG="$PKG/.build/swift-test.log"
set +e
in_root env MCP_FIXTURE="$NATIVE/mcp-fixture-server" MCP_SWIFT_CA_BUNDLE="$CA_BUNDLE" \
    MCP_SWIFT_FILTER="${MCP_SWIFT_FILTER:-}" \
    sh -c '
        set -e
        cd "$1"
        swift build --build-tests -j "$3" -Xlinker -L"$2"
        swift test --skip-build --disable-swift-testing -Xlinker -L"$2" ${MCP_SWIFT_FILTER:+--filter "$MCP_SWIFT_FILTER"}
    ' sh "$PKG" "$NATIVE" "$JOBS" 2>&1 | tee "$LOG"
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
