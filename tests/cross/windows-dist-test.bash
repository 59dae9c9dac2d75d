#!/usr/bin/env bash
# `make windows-dist-test`: the Windows package as a user gets it. Installs windows-test's build
# into a temporary prefix (tests/cross/windows-dist.bash PREFIX dev), then, from a directory
# outside the repository:
#   - pkg-config: tests/dist/src/hello.c built with MinGW-w64 against mcp_client (the DLL through
#     its import library) and mcp_client-static (no DLL), run under Wine against the Windows
#     fixture server, the DLL found on PATH in PREFIX/bin;
#   - CMake (when installed): tests/dist/src/CMakeLists.txt (C and C++, shared and static) with a
#     MinGW-w64 toolchain file, find_package(mcp_client) taking the package's WIN32 branch, run
#     under Wine;
#   - the win_amd64 Python wheel (MCP_CLIENT_WHEEL_PLATFORM=win_amd64, the prefix's DLL as
#     MCP_CLIENT_PREBUILT_LIB): its tag, its contents, the DLL inside byte for byte, and its
#     loader's choice of that DLL on win32. No Windows CPython can be fetched here, so the wheel
#     is not imported under Wine (docs/platforms.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=x86_64-win7-windows-gnu
if [ -z "${MCP_CROSS_TARGET:-}" ]; then
  exec tests/cross/toolchain.bash "$target" -- "$0" "$@"
fi
step() { printf '== windows-dist-test: %s (%ds)\n' "$1" "$SECONDS"; }
cc=x86_64-w64-mingw32-gcc-posix
cxx=x86_64-w64-mingw32-g++-posix

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-windows-dist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix work=$tmp/work
mkdir -p "$work"

step "install into $prefix"
tests/cross/windows-dist.bash "$prefix" dev
fixture=$(winepath -w "$CARGO_TARGET_DIR/$target/debug/mcp-fixture-server.exe" 2>/dev/null)
cp tests/dist/src/hello.c tests/dist/src/hello.cpp tests/dist/src/CMakeLists.txt "$work/"
cd "$work"

if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  wineboot -i >/dev/null 2>&1 || true
fi
# The MinGW runtime DLLs a C++ program needs, in a directory of their own on PATH.
mkdir -p runtime
for dll in libwinpthread-1.dll libgcc_s_seh-1.dll libstdc++-6.dll; do
  cp "$($cxx -print-file-name="$dll")" runtime/
done
winpath="$(winepath -w "$prefix/bin");$(winepath -w "$work/runtime")"

imports() { x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/^\tDLL Name: //p'; }
run() { # run EXE: under Wine, the DLL found through PATH (prefix/bin), never next to the program
  [ ! -e "$(dirname "$1")/mcp_client.dll" ] || { echo "mcp_client.dll next to $1" >&2; exit 1; }
  WINEPATH="$winpath" timeout 120 wine "$1" "$fixture"
  echo "ok: $1 against the fixture under Wine"
}

step "pkg-config: mcp_client (the DLL) and mcp_client-static"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_PATH=
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Werror -o hello_pc.exe hello.c $(pkg-config --cflags --libs mcp_client)
imports hello_pc.exe | grep -qx 'mcp_client.dll' || { echo "hello_pc.exe does not import mcp_client.dll" >&2; exit 1; }
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Werror -o hello_pc_static.exe hello.c $(pkg-config --cflags --libs mcp_client-static)
if imports hello_pc_static.exe | grep -qix 'mcp_client.dll'; then
  echo "hello_pc_static.exe imports mcp_client.dll" >&2; exit 1
fi
run hello_pc.exe
run hello_pc_static.exe

if command -v cmake >/dev/null; then
  step "CMake: find_package(mcp_client) with a MinGW-w64 toolchain file"
  cat > mingw.cmake <<EOF
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER $cc)
set(CMAKE_CXX_COMPILER $cxx)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
EOF
  CMAKE_PREFIX_PATH=$prefix cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE="$work/mingw.cmake" \
    -DCMAKE_BUILD_TYPE=Release > cmake.log 2>&1 || { cat cmake.log >&2; exit 1; }
  cmake --build build -j 2 > build.log 2>&1 || { cat build.log >&2; exit 1; }
  for exe in hello_c hello_cpp; do
    imports "build/$exe.exe" | grep -qx 'mcp_client.dll' || { echo "$exe.exe does not import mcp_client.dll" >&2; exit 1; }
    run "build/$exe.exe"
  done
  for exe in hello_c_static hello_cpp_static; do
    if imports "build/$exe.exe" | grep -qix 'mcp_client.dll'; then echo "$exe.exe imports mcp_client.dll" >&2; exit 1; fi
    run "build/$exe.exe"
  done
else
  echo "windows-dist-test: SKIP CMake (cmake is not installed)"
fi

step "the win_amd64 Python wheel"
PYTHON=${PYTHON:-python3}
mkdir -p wheel
MCP_CLIENT_WHEEL_PLATFORM=win_amd64 MCP_CLIENT_PREBUILT_LIB="$prefix/bin/mcp_client.dll" \
  make -s -C "$repo/bindings/python" wheel WHEEL_DIR="$work/wheel" PYTHON="$PYTHON" PIP_WHEEL_FLAGS=-q
"$PYTHON" - "$work"/wheel/*.whl "$prefix/bin/mcp_client.dll" <<'PY'
import sys, zipfile
path, dll = sys.argv[1], sys.argv[2]
assert len(sys.argv) == 3, f"expected one wheel: {sys.argv[1:-1]}"
name, version, py, abi, plat = path.rsplit("/", 1)[1][: -len(".whl")].split("-")
assert (py, abi, plat) == ("py3", "none", "win_amd64"), f"not a py3-none-win_amd64 wheel: {path}"
with zipfile.ZipFile(path) as z:
    names = set(z.namelist())
    meta = z.read(f"{name}-{version}.dist-info/WHEEL").decode()
    inside = z.read("mcp_client/mcp_client.dll")
for needed in ("mcp_client/__init__.py", "mcp_client/_library.py", "mcp_client/py.typed"):
    assert needed in names, f"{needed} is not in {path}"
assert not [n for n in names if n.endswith((".so", ".dylib"))], f"another platform's library in {path}"
assert "Root-Is-Purelib: false" in meta and "Tag: py3-none-win_amd64" in meta, meta
assert inside == open(dll, "rb").read(), "the wheel's mcp_client.dll is not the prefix's"
print(f"ok: {path.rsplit('/', 1)[1]} holds mcp_client/mcp_client.dll ({len(inside)} bytes)")
PY
# The unpacked wheel's loader, told it runs on Windows (sys.platform "win32"), picks the bundled
# mcp_client.dll; Linux's loader then refuses a PE file, which is as far as this machine goes.
mkdir -p site
"$PYTHON" -m zipfile -e "$work"/wheel/*.whl site
(cd site && env -u MCP_CLIENT_LIB -u PYTHONPATH "$PYTHON" - "$work/site/mcp_client/mcp_client.dll" <<'PY'
import ctypes, ctypes.util, sys
want = sys.argv[1]
sys.platform = "win32"  # after ctypes' own imports, which look at os.name
try:
    import mcp_client
except ImportError as e:
    assert str(e).startswith(f"cannot load {want}:"), e
    print(f"ok: on win32 the wheel's loader picks {want}")
else:
    raise AssertionError("a Windows DLL loaded on Linux")
PY
)
step "done"
