#!/usr/bin/env bash
# The Swift half of the docs checker (tests/docs/check.py): builds the scratch package that holds
# every ```swift block as an executable target, once, inside the Debian trixie root of the Swift
# tests (bindings/swift/trixie-root.sh; needs root), then runs the blocks that are to be run.
#
#   tests/docs/swift.sh <libdir> <pkgdir> <target>...
#
#   <libdir>   directory holding libmcp_client.a (target/debug)
#   <pkgdir>   the scratch package written by check.py (outside the repository; it depends on
#              the repository's Package.swift by path). Its .build is kept between runs, so a
#              rerun compiles only what changed.
#   <target>   an executable target of the package; a `run:` prefix also runs it, from the
#              repository root (relative paths such as target/debug/mcp-fixture-server resolve),
#              stdin empty, 60 s limit
#
# Results go to <pkgdir>/results/<target>.{build,run}.{status,log} (status: the exit status),
# which check.py reads; this script's own exit status is 0 unless the root could not be used.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 <libdir> <pkgdir> <target>..." >&2
    exit 2
fi

SWIFT_ROOT_TAG=docs-swift
. "$(dirname "${BASH_SOURCE[0]}")/../../bindings/swift/trixie-root.sh"

LIBDIR=$(cd "$1" && pwd) || die "no such library directory: $1"
PKG=$(cd "$2" && pwd) || die "no such package directory: $2"
shift 2
[ -f "$LIBDIR/libmcp_client.a" ] || die "$LIBDIR/libmcp_client.a not found (run: make build)"
case "$PKG/" in "$SWIFT_REPO"/*) die "the scratch package must be outside the repository" ;; esac

RESULTS="$PKG/results"
rm -rf "$RESULTS"
mkdir -p "$RESULTS" "$PKG/native" "$PKG/pkgconfig"

# The static library, staged next to the package. SwiftPM does not track libraries it links
# through pkg-config, so when the library changed the linked executables are removed to force a
# relink (the objects stay: only the link is redone).
if ! cmp -s "$LIBDIR/libmcp_client.a" "$PKG/native/libmcp_client.a"; then
    cp "$LIBDIR/libmcp_client.a" "$PKG/native/libmcp_client.a.tmp"
    mv "$PKG/native/libmcp_client.a.tmp" "$PKG/native/libmcp_client.a"
    if [ -d "$PKG/.build" ]; then
        find "$PKG/.build" -maxdepth 3 -path '*/debug/*' -type f -name 'docs_swift_*' -delete
    fi
fi
# The mcp_client.pc the repository's CMCPClient target asks for, linking the staged archive
# statically as bindings/swift/run-tests.sh does (SwiftPM reads Libs only, never Libs.private).
cat > "$PKG/pkgconfig/mcp_client.pc.tmp" <<PC
# Written by tests/docs/swift.sh: the docs checker's Swift build, linked statically.
Name: mcp_client
Description: mcp_client for the docs checker ($PKG/native/libmcp_client.a)
Version: 0
Libs: -L$PKG/native -l:libmcp_client.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
Cflags: -I$SWIFT_REPO/include
PC
mv "$PKG/pkgconfig/mcp_client.pc.tmp" "$PKG/pkgconfig/mcp_client.pc"

swift_root_enter
swift_root_bind "$SWIFT_REPO" ro    # a dependency used in place: nothing is written there
swift_root_bind "$PKG"

build() { # build <log> [swift build args...]
    local log=$1; shift
    in_root env PKG_CONFIG_PATH="$PKG/pkgconfig" \
        swift build --package-path "$PKG" -j "$SWIFT_JOBS" "$@" > "$log" 2>&1
}

# One build for every block. Only when it fails is each target built on its own, so that a
# broken block is told apart from the ones that still compile.
started=$(date +%s)
say "building $# blocks"
all_ok=0
build "$RESULTS/all.build.log" && all_ok=1
bin=$(in_root env PKG_CONFIG_PATH="$PKG/pkgconfig" swift build --package-path "$PKG" --show-bin-path)
for spec in "$@"; do
    target=${spec#run:}
    if [ "$all_ok" = 1 ]; then
        status=0; cp "$RESULTS/all.build.log" "$RESULTS/$target.build.log"
    else
        status=0; build "$RESULTS/$target.build.log" --product "$target" || status=$?
    fi
    echo "$status" > "$RESULTS/$target.build.status"
    if [ "$status" = 0 ] && [ "$spec" != "$target" ]; then
        status=0
        in_root sh -c 'cd "$1" && exec timeout 60 "$2"' sh "$SWIFT_REPO" "$bin/$target" \
            < /dev/null > "$RESULTS/$target.run.log" 2>&1 || status=$?
        echo "$status" > "$RESULTS/$target.run.status"
    fi
done
say "built and ran in $(( $(date +%s) - started ))s"
