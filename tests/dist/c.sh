#!/usr/bin/env bash
# dist-test host: a C program built with pkg-config against the installed prefix, linked to the
# shared library (mcp_client.pc) and to the archive (mcp_client-static.pc); a C++ one on the shared.
#   tests/dist/c.sh PREFIX FIXTURE WORKDIR
set -euo pipefail
prefix=$1 fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/dist/sizes.bash
. "$here/sizes.bash"

command -v pkg-config >/dev/null || { echo "SKIP: pkg-config is not installed"; exit 77; }
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
CC=${CC:-cc}
cp "$here/src/hello.c" "$here/src/hello.cpp" "$work/"
cd "$work"

pkg-config --exists --print-errors 'mcp_client >= 0.1' 'mcp_client-static >= 0.1'
soname=$(readelf -d "$prefix/lib/libmcp_client.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "the installed library has no SONAME" >&2; exit 1; }

echo "-- shared: pkg-config mcp_client"
# Shared: the program records the SONAME and runs once the loader can find the library.
# shellcheck disable=SC2046  # pkg-config output is a list of words
"$CC" -std=c11 -Wall -Wextra -Werror -O2 -o hello-shared hello.c $(pkg-config --cflags --libs mcp_client)
readelf -d hello-shared | grep -q "NEEDED.*\[$soname\]" || { echo "hello-shared does not need $soname" >&2; exit 1; }
LD_LIBRARY_PATH=$prefix/lib timeout 60 ./hello-shared "$fixture"

if command -v "${CXX:-c++}" >/dev/null; then
  echo "-- C++ (mcp_client.hpp): pkg-config mcp_client"
  # shellcheck disable=SC2046
  "${CXX:-c++}" -std=c++17 -Wall -Wextra -Werror -O1 -o hello-cpp hello.cpp $(pkg-config --cflags --libs mcp_client)
  LD_LIBRARY_PATH=$prefix/lib timeout 60 ./hello-cpp "$fixture"
fi

echo "-- static: pkg-config mcp_client-static"
# Static: no runtime dependency on libmcp_client at all.
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -Werror -O2 -o hello-static hello.c $(pkg-config --cflags --libs mcp_client-static)
if readelf -d hello-static | grep -q 'NEEDED.*libmcp_client'; then
  echo "hello-static still needs libmcp_client.so:" >&2
  readelf -d hello-static | grep NEEDED >&2
  exit 1
fi
timeout 60 ./hello-static "$fixture"
check_size "static C hello (pkg-config mcp_client-static)" "$(stat -c %s hello-static)" "$STATIC_LIMIT"
