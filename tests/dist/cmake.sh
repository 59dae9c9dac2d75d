#!/usr/bin/env bash
# dist-test host: C and C++ programs using find_package(mcp_client) from the installed prefix
# (shared, static and the C++ targets), the version file's answers, and a moved prefix.
#   tests/dist/cmake.sh PREFIX FIXTURE WORKDIR
set -euo pipefail
prefix=$1 fixture=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)

command -v cmake >/dev/null || { echo "SKIP: cmake is not installed"; exit 77; }
command -v "${CXX:-c++}" >/dev/null || { echo "SKIP: no C++ compiler"; exit 77; }
cp "$here/src/hello.c" "$here/src/hello.cpp" "$here/src/CMakeLists.txt" "$work/"
cd "$work"

configure() { # configure SRC BUILD PREFIX_PATH [cmake args...]
  local src=$1 build=$2 path=$3
  shift 3
  CMAKE_PREFIX_PATH=$path cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >"$build.log" 2>&1 \
    || { cat "$build.log" >&2; return 1; }
}

echo "-- find_package: mcp_client::mcp_client, ::cpp (shared), ::mcp_client_static, ::cpp_static"
configure . build "$prefix"
cmake --build build -j 2 >build.log 2>&1 || { cat build.log >&2; exit 1; }
soname=$(readelf -d "$prefix/lib/libmcp_client.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
for exe in hello_c hello_cpp; do
  readelf -d "build/$exe" | grep -q "NEEDED.*\[$soname\]" || { echo "$exe does not need $soname" >&2; exit 1; }
  timeout 60 "build/$exe" "$fixture"  # CMake's build RPATH finds the library
done
for exe in hello_c_static hello_cpp_static; do
  if readelf -d "build/$exe" | grep -q 'NEEDED.*libmcp_client'; then
    echo "$exe still needs libmcp_client.so" >&2
    exit 1
  fi
  timeout 60 "build/$exe" "$fixture"
done

# The version file: same 0.minor and not newer is accepted, anything else is not.
mkdir -p versions
for request in "0.1" "0.1.0 EXACT" "0.2" "0.0" "1.0"; do
  dir=versions/${request// /_}
  mkdir -p "$dir"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(v NONE)\nfind_package(mcp_client %s REQUIRED)\n' \
    "$request" >"$dir/CMakeLists.txt"
  if configure "$dir" "$dir/build" "$prefix" 2>/dev/null; then got=accepted; else got=refused; fi
  case $request in 0.1*) want=accepted ;; *) want=refused ;; esac
  [ "$got" = "$want" ] || { echo "find_package(mcp_client $request): $got, expected $want" >&2; exit 1; }
done
echo "ok: find_package version checks (0.1 and 0.1.0 EXACT accepted; 0.2, 0.0, 1.0 refused)"

# Relocatable: a copy of the prefix elsewhere is found and used, not the original.
cp -a "$prefix" moved-prefix
configure . build-moved "$work/moved-prefix"
cmake --build build-moved --target hello_c_static >build-moved.log 2>&1 || { cat build-moved.log >&2; exit 1; }
grep -q "$work/moved-prefix/lib/libmcp_client.a" build-moved/CMakeFiles/hello_c_static.dir/link.txt \
  || { echo "the moved prefix's archive was not linked" >&2; exit 1; }
timeout 60 build-moved/hello_c_static "$fixture"
echo "ok: the package works from a moved prefix"
