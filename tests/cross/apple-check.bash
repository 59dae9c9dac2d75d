#!/usr/bin/env bash
# Type-checks the library for Apple targets on Linux (`make apple-check`): `cargo check` with the
# standard library built from source (`-Zbuild-std`), which Debian's rustc-web/cargo-web/
# rust-web-src packages make possible (the rustup toolchain has only Linux's standard library).
# Nothing is linked or run: there is no Apple SDK here. ring compiles its C and assembly for the
# target with clang (freestanding); those objects are thrown away.
#
#   tests/cross/apple-check.bash [TARGET...]   default: aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios
#
# The toolchain (installed through apt when missing), the target directory (outside the
# repository, kept warm between runs: a warm check takes seconds, a cold one minutes per target)
# and the environment per target all come from tests/cross/toolchain.bash.
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios)

for target in "${targets[@]}"; do
  echo "== apple-check: $target"
  # The default features (what ships) and portable-posix's absence are the same code on Apple.
  tests/cross/toolchain.bash "$target" -- \
    cargo check --locked --lib -Zbuild-std=std,panic_unwind --target "$target" --message-format short
done
echo "apple-check: the library type-checks for ${targets[*]}"
