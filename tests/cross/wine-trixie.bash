#!/usr/bin/env bash
# Runs a Windows program under Wine 10 from the Debian trixie root that the Swift tests build
# (bindings/swift/trixie-root.sh; debootstrap once, reused). Debian 12's Wine 8 lacks
# bcryptprimitives.dll, which Go's runtime (and x86_64-pc-windows-gnu Rust) loads at start-up;
# trixie's Wine 10 has it. Installs wine and wine64 in the root once (marker .mcp-wine-ready, with
# `wine --version`), without the Swift toolchain. Needs root (chroot, mounts).
#
#   tests/cross/wine-trixie.bash [-C DIR] [--bind DIR]... [NAME=VALUE]... PROGRAM.exe [ARGS...]
#   tests/cross/wine-trixie.bash --version        Wine's version in the root (installing it if needed)
#
# -C DIR       the Unix directory to start in (default: the current one); bound into the root
# --bind DIR   another host directory the program reads or writes, at the same path in the root
# NAME=VALUE   environment for the program (the root's commands run with a clean environment)
#
# The program, DIR and the repository are seen at their host paths inside the root, so
# `winepath` conversions made on the host for them hold. The Wine prefix is
# ~/.cache/mcp_client/wine-trixie (MCP_WINE_TRIXIE_PREFIX), separate from Wine 8's. Anything
# still running under Wine when the program exits is killed (`wineserver -k`) before the root's
# mounts are undone.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
SWIFT_ROOT_TAG=wine-trixie
# shellcheck source=../../bindings/swift/trixie-root.sh
. "$repo/bindings/swift/trixie-root.sh"

dir=$PWD
binds=()
envs=()
version_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    -C) dir=$(cd "$2" && pwd); shift 2 ;;
    --bind) binds+=("$(cd "$2" && pwd)"); shift 2 ;;
    --version) version_only=1; shift ;;
    [A-Za-z_]*=*) envs+=("$1"); shift ;;
    *) break ;;
  esac
done
[ $version_only = 1 ] || [ $# -gt 0 ] || die "usage: wine-trixie.bash [-C DIR] [--bind DIR]... [NAME=VALUE]... PROGRAM [ARGS...]"

prefix=${MCP_WINE_TRIXIE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/wine-trixie}
mkdir -p "$prefix"

trixie_root_enter

WINE_READY="$ROOT/.mcp-wine-ready"
if [ ! -f "$WINE_READY" ]; then
  say "installing wine and wine64 in the root (a few minutes, once)"
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
  in_root sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends wine wine64 && apt-get clean" > "$ROOT.wine-apt.log" 2>&1 \
    || { tail -20 "$ROOT.wine-apt.log" >&2; die "installing Wine failed (log: $ROOT.wine-apt.log)"; }
  in_root wine --version > "$WINE_READY.tmp" 2>&1 || die "wine does not run inside the root"
  mv "$WINE_READY.tmp" "$WINE_READY"
fi
# `wine --version` also complains about the missing 32-bit part, which 64-bit programs don't need.
wine_version=$(grep '^wine-' "$WINE_READY" || head -n1 "$WINE_READY")
if [ $version_only = 1 ]; then echo "$wine_version"; exit 0; fi

# The directories at their host paths. /tmp stays the root's own (Wine's server socket lives there).
# Shortest first, so a directory below one already bound is skipped (it is there already).
program_dir=$(cd "$dir" && dirname "$(realpath -m "$1")")
bound=()
while IFS= read -r d; do
  case "$d" in /|/tmp|/proc|/dev|/usr|/etc) die "will not bind $d into the root" ;; esac
  [ -d "$d" ] || continue
  skip=0
  for b in "${bound[@]}"; do case "$d/" in "$b"/*) skip=1 ;; esac; done
  [ $skip = 1 ] && continue
  swift_root_bind "$d"
  bound+=("$d")
done < <(printf '%s\n' "$repo" "$prefix" "$dir" "$program_dir" "${binds[@]}" | awk '{ print length, $0 }' | sort -n -s | cut -d' ' -f2-)

# No display: Wine's drivers find none and run headless; an empty runtime directory keeps its
# Wayland driver from complaining that there is none.
install -d -m 700 "$ROOT/tmp/mcp-wine-runtime"
wine_env=(WINEPREFIX="$prefix" WINEDEBUG="${WINEDEBUG:--all}" WINEDLLOVERRIDES="mscoree,mshtml="
  XDG_RUNTIME_DIR=/tmp/mcp-wine-runtime "${envs[@]}")
if [ ! -f "$prefix/system.reg" ]; then
  say "making the Wine prefix $prefix (once)"
  in_root env "${wine_env[@]}" wineboot -i >/dev/null 2>&1 || true
  in_root env "${wine_env[@]}" wineserver -w || true
fi
say "$wine_version"
status=0
in_root sh -c 'cd "$1" && shift && exec env "$@"' sh "$dir" "${wine_env[@]}" wine "$@" || status=$?
in_root env "${wine_env[@]}" wineserver -k 2>/dev/null || true
exit $status
