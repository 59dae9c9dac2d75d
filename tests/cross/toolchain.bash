#!/usr/bin/env bash
# The cross toolchain for building (and, for Windows, running) the library for another target
# on Debian: Debian's own rustc-web, cargo-web and rust-web-src build the standard library for
# the target (`-Zbuild-std`, allowed by RUSTC_BOOTSTRAP=1); MinGW-w64 links Windows binaries and
# Wine runs them; clang compiles C for Apple targets. Installs what is missing through apt
# (idempotent: installed packages are left alone), then runs the command with the environment
# set, or prints that environment for `eval` when no command is given. The one place where the
# cross toolchains are installed and configured: `make windows-test` and `make apple-check` (and
# whatever else builds for another target) go through it.
#
#   tests/cross/toolchain.bash TARGET [-- COMMAND ARGS...]
#   eval "$(tests/cross/toolchain.bash TARGET)"
#
# Builds go to a target directory outside the repository, kept warm between runs and keyed by
# the toolchain's version (cargo's fingerprints keep it correct across changes):
# $MCP_CROSS_TARGET_DIR, default ~/.cache/mcp_client/cross-target/<rustc version>. Cross builds
# carry no debug info (CARGO_PROFILE_DEV_DEBUG=0; the standard library is built too, and with
# DWARF a Windows build takes gigabytes). Wine's prefix is kept in ~/.cache/mcp_client/wine (made
# on first use).
#
# Apple targets: clang-14 compiles ring's C and assembly freestanding, with tests/cross/apple-include
# standing in for the one SDK header it needs, and SDKROOT pointing there (cc-rs asks xcrun for the
# iOS SDK otherwise; nothing is read from it). Good for `cargo check`, not for linking.
set -euo pipefail

target=${1:?usage: toolchain.bash TARGET [-- COMMAND ARGS...]}
shift
[ "${1:-}" = "--" ] && shift

packages=(rustc-web cargo-web rust-web-src)
case "$target" in
  x86_64-*windows-gnu*) packages+=(gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix wine wine64) ;;
  *-apple-*) packages+=(clang-14) ;;
  *) echo "toolchain.bash: no recipe for target $target" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "toolchain.bash: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

repo=$(cd "$(dirname "$0")/../.." && pwd)
version=$(/usr/bin/rustc --version | awk '{ print $2 }')
upper=$(echo "$target" | tr 'a-z-' 'A-Z_')
lower=$(echo "$target" | tr '-' '_')
env_lines=(
  "export PATH=/usr/bin:\$PATH"
  "export CARGO=/usr/bin/cargo"
  "export RUSTC=/usr/bin/rustc"
  "export RUSTDOC=/usr/bin/rustdoc"
  "export RUSTC_BOOTSTRAP=1"
  "export CARGO_PROFILE_DEV_DEBUG=0"
  "export CARGO_TARGET_DIR=${MCP_CROSS_TARGET_DIR:-$HOME/.cache/mcp_client/cross-target/$version}"
  "export MCP_CROSS_TARGET=$target"
)
case "$target" in
  x86_64-*windows-gnu*)
    env_lines+=(
      "export CC_$lower=x86_64-w64-mingw32-gcc-posix"
      "export AR_$lower=x86_64-w64-mingw32-gcc-ar-posix"
      "export CARGO_TARGET_${upper}_LINKER=x86_64-w64-mingw32-gcc-posix"
      "export WINEPREFIX=${WINEPREFIX:-$HOME/.cache/mcp_client/wine}"
      "export WINEDEBUG=${WINEDEBUG:--all}"
    )
    ;;
  *-apple-*)
    env_lines+=(
      "export CC_$lower=clang-14"
      "export CFLAGS_$lower='-ffreestanding -DRING_CORE_NOSTDLIBINC -I$repo/tests/cross/apple-include'"
      "export SDKROOT=$repo/tests/cross/apple-include"
    )
    ;;
esac

if [ $# -eq 0 ]; then
  printf '%s\n' "${env_lines[@]}"
  exit 0
fi
eval "$(printf '%s\n' "${env_lines[@]}")"
exec "$@"
