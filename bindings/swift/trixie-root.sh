# The Debian trixie root that runs Swift on hosts without a Swift toolchain (Debian 12 has none).
# Sourced, not run, by bindings/swift/run-tests.sh and tests/dist/swift.sh:
#
#   SWIFT_ROOT_TAG=swift-tests          # prefix of messages (optional)
#   . bindings/swift/trixie-root.sh
#   swift_root_enter                    # lock, build once, mount /proc (and /dev), install swiftlang
#   (trixie_root_enter                  # the same without swiftlang)
#   swift_root_bind /some/host/dir [ro] # the host directory at the same path inside the root
#   in_root swift build ...             # a command inside the root, clean environment
#
# Environment:
#   MCP_SWIFT_ROOT     the root (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/swift-trixie)
#   MCP_SWIFT_MIRROR   Debian mirror for debootstrap (default http://deb.debian.org/debian)
#   MCP_SWIFT_JOBS     build jobs (default: number of cores), as $SWIFT_JOBS
#
# Needs root (debootstrap, mount, chroot). The root is built once (debootstrap + swiftlang, a few
# minutes) and reused; marker files record a finished debootstrap and a finished install. A lock
# file serialises the runs sharing a root (they share its mounts); every mount made here is
# undone on exit by an EXIT trap, which this file owns (the caller must not replace it).

SWIFT_ROOT_TAG=${SWIFT_ROOT_TAG:-swift}
say() { printf '%s: %s\n' "$SWIFT_ROOT_TAG" "$*"; }
die() { printf '%s: error: %s\n' "$SWIFT_ROOT_TAG" "$*" >&2; exit 1; }

SWIFT_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROOT=${MCP_SWIFT_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client/swift-trixie}
ROOT=${ROOT%/}
SWIFT_JOBS=${MCP_SWIFT_JOBS:-$(nproc)}
SWIFT_MIRROR=${MCP_SWIFT_MIRROR:-http://deb.debian.org/debian}
SWIFT_PACKAGES="swiftlang libc6-dev libstdc++-14-dev"
SWIFT_READY="$ROOT/.mcp-swift-ready"          # written once swiftlang is installed: `swift --version`

SWIFT_MOUNTS=()
swift_root_cleanup() {
    local status=$? i
    for ((i = ${#SWIFT_MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${SWIFT_MOUNTS[i]}" 2>/dev/null || umount -l "${SWIFT_MOUNTS[i]}" 2>/dev/null \
            || printf '%s: warning: could not unmount %s\n' "$SWIFT_ROOT_TAG" "${SWIFT_MOUNTS[i]}" >&2
    done
    exit "$status"
}

swift_is_mounted() { mountpoint -q "$1" 2>/dev/null; }
swift_mount() { # swift_mount <target> <mount args...>
    local target=$1; shift
    if swift_is_mounted "$target"; then umount -l "$target" 2>/dev/null || true; fi  # stale, from a killed run
    mount "$@" "$target"
    SWIFT_MOUNTS+=("$target")
}

in_root() { # runs a command inside the root with a clean environment
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# swift_root_bind <host dir> [ro]: the directory at the same path inside the root, so paths
# printed or written on either side mean the same thing. `ro` guarantees nothing is written there.
swift_root_bind() {
    local dir=$1 target="$ROOT$1"
    mkdir -p "$target"
    swift_mount "$target" --bind "$dir"
    if [ "${2:-}" = ro ]; then mount -o remount,bind,ro "$target"; fi
}

# trixie_root_enter: the root without the Swift toolchain (lock, debootstrap once, mounts); what
# tests/cross/wine-trixie.bash uses. swift_root_enter adds the toolchain.
trixie_root_enter() {
    [ "$(id -u)" = 0 ] || die "must run as root (debootstrap, mount and chroot need it)"
    case "$ROOT" in "$SWIFT_REPO"|"$SWIFT_REPO"/*) die "MCP_SWIFT_ROOT must be outside the repository" ;; esac
    mkdir -p "$(dirname "$ROOT")"

    # One run at a time per root: runs share the mounts.
    exec 9>"$ROOT.lock"
    flock -w 1800 9 || die "timed out waiting for another run holding $ROOT.lock"
    trap swift_root_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # 1. The root itself.
    if [ ! -f "$ROOT/.mcp-debootstrap-done" ]; then
        command -v debootstrap >/dev/null || {
            say "installing debootstrap on the host"
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
        }
        # Only ever wipe a directory this script created (its marker), never an arbitrary one, and
        # never one with something still mounted below it.
        if [ -d "$ROOT" ] && [ -n "$(ls -A "$ROOT")" ] && [ ! -f "$ROOT/.mcp-swift-root" ]; then
            die "$ROOT is not empty and was not made by this script; set MCP_SWIFT_ROOT elsewhere"
        fi
        if awk -v r="$ROOT/" 'index($2, r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
            die "something is mounted below $ROOT; refusing to wipe it"
        fi
        rm -rf "$ROOT"
        mkdir -p "$ROOT"
        touch "$ROOT/.mcp-swift-root"
        say "creating the trixie root in $ROOT (debootstrap, about a minute)"
        debootstrap --variant=minbase trixie "$ROOT" "$SWIFT_MIRROR" > "$ROOT.debootstrap.log" 2>&1 \
            || { tail -20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log: $ROOT.debootstrap.log)"; }
        touch "$ROOT/.mcp-debootstrap-done"
    fi

    # 2. /proc (Swift finds its runtime through /proc/self/exe) and /dev when the root has no
    #    device nodes.
    swift_mount "$ROOT/proc" -t proc proc
    [ -c "$ROOT/dev/null" ] || swift_mount "$ROOT/dev" --bind /dev
}

swift_root_enter() {
    trixie_root_enter

    # 3. The toolchain (idempotent; the marker is written only after a successful install).
    if [ ! -f "$SWIFT_READY" ]; then
        say "installing $SWIFT_PACKAGES in the root (a few minutes, once)"
        cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
        in_root sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends $SWIFT_PACKAGES && apt-get clean" > "$ROOT.apt.log" 2>&1 \
            || { tail -20 "$ROOT.apt.log" >&2; die "installing the toolchain failed (log: $ROOT.apt.log)"; }
        in_root swift --version > "$SWIFT_READY" 2>&1 || die "swift does not run inside the root"
    fi
    say "toolchain: $(head -n1 "$SWIFT_READY")"
}
