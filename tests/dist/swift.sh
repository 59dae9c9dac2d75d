#!/usr/bin/env bash
# Distribution test, Swift: an app outside the repository depends on the MCPClient package and
# builds against an installed mcp_client found only through pkg-config.
#
#   tests/dist/swift.sh <prefix> <fixture> <workdir>
#
#   <prefix>   a `make install PREFIX=...` tree: lib/libmcp_client.{so,a}, include/mcp_client.h,
#              lib/pkgconfig/mcp_client.pc and mcp_client-static.pc
#   <fixture>  the mcp-fixture-server binary
#   <workdir>  a directory outside the repository for the app package (created)
#
# In the Debian trixie root of the Swift tests (bindings/swift/trixie-root.sh; needs root), with
# the repository and the prefix bind-mounted read-only, it writes a new executable package
# depending on the repository by local path, then builds and runs it twice:
#   shared  PKG_CONFIG_PATH=<prefix>/lib/pkgconfig: links libmcp_client.so (run with
#           LD_LIBRARY_PATH); the binary must need libmcp_client.so.
#   static  a directory whose mcp_client.pc links to mcp_client-static.pc, first in
#           PKG_CONFIG_PATH: links libmcp_client.a; the binary must not need libmcp_client.so.
# Each run connects to the fixture over stdio and calls `add`; the answer must be 5. Exit 0 when
# both pass.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 <prefix> <fixture> <workdir>" >&2
    exit 2
fi

SWIFT_ROOT_TAG=dist-swift
. "$(dirname "${BASH_SOURCE[0]}")/../../bindings/swift/trixie-root.sh"

PREFIX=$(cd "$1" && pwd) || die "no such prefix: $1"
FIXTURE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
mkdir -p "$3"
WORKDIR=$(cd "$3" && pwd)
PC="$PREFIX/lib/pkgconfig"
for f in "$PC/mcp_client.pc" "$PC/mcp_client-static.pc" "$PREFIX/include/mcp_client.h"; do
    [ -f "$f" ] || die "$f not found (make install PREFIX=$PREFIX)"
done
[ -x "$FIXTURE" ] || die "fixture server $FIXTURE not found or not executable"
case "$WORKDIR/" in "$SWIFT_REPO"/*) die "the workdir must be outside the repository" ;; esac

# The app package. A local path dependency's identity is the directory's name, lower-cased
# (a remote one's, the last component of its URL).
APP="$WORKDIR/swift-app"
IDENTITY=$(basename "$SWIFT_REPO" | tr '[:upper:]' '[:lower:]')
mkdir -p "$APP/Sources/app"
cat > "$APP/Package.swift" <<EOF
// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "mcp-dist-app",
    dependencies: [.package(path: "$SWIFT_REPO")],
    targets: [
        .executableTarget(name: "app", dependencies: [.product(name: "MCPClient", package: "$IDENTITY")]),
    ]
)
EOF
cat > "$APP/Sources/app/main.swift" <<'EOF'
// Calls `add` on the server given as the first argument and checks the answer.
import Foundation
import MCPClient

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write("usage: app <server command>\n".data(using: .utf8)!)
    exit(2)
}
do {
    let client = try Client(stdio: CommandLine.arguments[1])
    defer { client.close() }
    let info = try client.connect()
    let sum = try client.callTool("add", arguments: ["a": 2, "b": 3])
    let text = sum["content"]?[0]?["text"]?.stringValue ?? "(no text)"
    print("connected (\(info.protocolVersion)); add(2, 3) = \(text)")
    exit(text == "5" ? 0 : 1)
} catch {
    FileHandle.standardError.write("app: \(error)\n".data(using: .utf8)!)
    exit(1)
}
EOF
# The static variant: SwiftPM asks for mcp_client.pc by name, so a directory where that name
# links to mcp_client-static.pc, searched first, switches the link to the archive.
mkdir -p "$WORKDIR/pkgconfig-static"
ln -sfn "$PC/mcp_client-static.pc" "$WORKDIR/pkgconfig-static/mcp_client.pc"
cp "$FIXTURE" "$WORKDIR/mcp-fixture-server"

swift_root_enter
# The work directory last: it stays writable even when it lies inside the prefix.
swift_root_bind "$SWIFT_REPO" ro     # the package is used in place and must not be written to
swift_root_bind "$PREFIX" ro
swift_root_bind "$WORKDIR"

BIN="$APP/.build/debug/app"
failures=0
check() { # check <variant> <PKG_CONFIG_PATH> <LD_LIBRARY_PATH> <expect: needs|static>
    local variant=$1 pcpath=$2 ldpath=$3 expect=$4 needed out
    say "$variant: swift build (PKG_CONFIG_PATH=$pcpath)"
    if ! in_root env PKG_CONFIG_PATH="$pcpath" \
        swift build --package-path "$APP" -j "$SWIFT_JOBS" > "$WORKDIR/build-$variant.log" 2>&1; then
        tail -30 "$WORKDIR/build-$variant.log" >&2
        say "$variant: FAIL (build; log: $WORKDIR/build-$variant.log)"
        failures=$((failures + 1)); return
    fi
    needed=$(in_root readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    case "$expect:$needed" in
        needs:*libmcp_client.so*|static:*) ;;
        *) say "$variant: FAIL (the app needs: $needed; expected libmcp_client.so)"; failures=$((failures + 1)); return ;;
    esac
    case "$expect:$needed" in
        static:*libmcp_client*) say "$variant: FAIL (linked the shared library: $needed)"; failures=$((failures + 1)); return ;;
    esac
    if out=$(in_root env ${ldpath:+LD_LIBRARY_PATH="$ldpath"} "$BIN" "$WORKDIR/mcp-fixture-server" 2>&1) \
        && printf '%s\n' "$out" | grep -qx 'connected (.*); add(2, 3) = 5'; then
        say "$variant: ok ($out; app $(stat -c %s "$BIN") bytes)"
    else
        say "$variant: FAIL (the app printed: $out)"
        failures=$((failures + 1))
    fi
}
check shared "$PC" "$PREFIX/lib" needs
check static "$WORKDIR/pkgconfig-static:$PC" "" static

if [ "$failures" -ne 0 ]; then die "$failures of 2 variants failed"; fi
say "ok: the MCPClient package builds against $PREFIX through pkg-config (shared and static)"
