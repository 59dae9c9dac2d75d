#!/usr/bin/env bash
# Type-checks the library for Apple targets on Linux (`make apple-check`): `cargo check` with the
# standard library built from source (`-Zbuild-std`), which Debian's rustc-web/cargo-web/
# rust-web-src packages make possible (the rustup toolchain has only Linux's standard library).
# Nothing is linked or run: there is no Apple SDK here. ring compiles its C and assembly for the
# target with clang (freestanding, with tests/cross/apple-include standing in for the SDK's one
# header it needs); those objects are thrown away.
#
#   tests/cross/apple-check.bash [TARGET...]   default: aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios
#
# Installs what it needs on a Debian 12 machine (apt-get, when run as root); the target directory
# is target/apple (kept between runs: a warm check takes seconds, a cold one minutes per target).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios)

# Debian's 1.96 toolchain and its standard library's sources; clang for ring's C.
need=()
[ -x /usr/bin/cargo ] && /usr/bin/cargo --version 2>/dev/null | grep -q '^cargo 1\.9[6-9]' || need+=(cargo-web rustc-web)
[ -d /usr/lib/rustlib/src/rust/library ] || need+=(rust-web-src)
command -v clang-14 >/dev/null || need+=(clang-14)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "apple-check: installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "apple-check: needs the Debian packages ${need[*]} (apt-get install them as root)" >&2
    exit 1
  fi
fi

export RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc CARGO_TARGET_DIR=$repo/target/apple
cflags="-ffreestanding -DRING_CORE_NOSTDLIBINC -I$repo/tests/cross/apple-include"
# cc-rs asks xcrun for the iOS SDK unless SDKROOT names one; nothing is read from it (freestanding).
export SDKROOT=$repo/tests/cross/apple-include
for target in "${targets[@]}"; do
  var=${target//-/_}
  export "CC_$var=clang-14" "CFLAGS_$var=$cflags"
  echo "== apple-check: $target"
  # The default features (what ships) and portable-posix's absence are the same code on Apple.
  /usr/bin/cargo check --locked --lib -Zbuild-std=std,panic_unwind --target "$target" --message-format short
done
echo "apple-check: the library type-checks for ${targets[*]}"
