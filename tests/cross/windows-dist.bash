#!/usr/bin/env bash
# `make windows-dist`: the library for Windows x86_64 (x86_64-win7-windows-gnu) installed into a
# prefix, laid out as a Windows package is:
#
#   bin/mcp_client.dll                       the library; programs find it next to them or on PATH
#   lib/libmcp_client.dll.a                  its import library (MinGW; `-lmcp_client` picks it)
#   lib/libmcp_client.a                      the static library
#   include/mcp_client.h, mcp_client.hpp, mcp_client.config.schema.json
#   lib/pkgconfig/mcp_client.pc, mcp_client-static.pc
#   lib/cmake/mcp_client/                    find_package(mcp_client) (its WIN32 branch)
#
#   tests/cross/windows-dist.bash PREFIX [release|dev]
#
# release (the default) is what ships: the LTO build `make dist-lib` makes on Linux (cargo rustc
# --crate-type cdylib,staticlib). dev packs the debug-profile products `make windows-test` built
# (no new build; what `make windows-dist-test` uses). The pkg-config and CMake files are the
# Linux ones (dist/), filled by the Makefile's windows-dist-files with Windows' system libraries.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=x86_64-win7-windows-gnu
if [ -z "${MCP_CROSS_TARGET:-}" ]; then
  exec tests/cross/toolchain.bash "$target" -- "$0" "$@"
fi
prefix=${1:?usage: windows-dist.bash PREFIX [release|dev]}
profile=${2:-release}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

case "$profile" in
  dev)
    cargo build --workspace --locked -Zbuild-std=std,panic_unwind --target "$target"
    from=$CARGO_TARGET_DIR/$target/debug
    ;;
  release)
    cargo rustc --release --locked -p mcp_client --lib --crate-type cdylib,staticlib \
      -Zbuild-std=std,panic_unwind --target "$target"
    from=$CARGO_TARGET_DIR/$target/release
    ;;
  *) echo "windows-dist: profile is release or dev, not $profile" >&2; exit 2 ;;
esac

install -d "$prefix/bin" "$prefix/lib" "$prefix/include"
install -m 755 "$from/mcp_client.dll" "$prefix/bin/"
install -m 644 "$from/libmcp_client.dll.a" "$from/libmcp_client.a" "$prefix/lib/"
x86_64-w64-mingw32-strip --strip-debug "$prefix/bin/mcp_client.dll" "$prefix/lib/libmcp_client.a"
install -m 644 include/mcp_client.h include/mcp_client.config.schema.json bindings/cpp/mcp_client.hpp \
  "$prefix/include/"
make -s --no-print-directory windows-dist-files PREFIX="$prefix"
echo "windows-dist: $profile build of mcp_client for $target in $prefix"
