"""Builds a platform wheel that bundles libmcp_client (the metadata is in pyproject.toml).

The package is pure Python over ctypes, but it ships the shared library, so the wheel is a
platform wheel: ``py3-none-<platform>`` (no CPython ABI is involved, one wheel serves every
Python 3), installed into platlib. ``build_py`` puts the library into the package:

- ``MCP_CLIENT_PREBUILT_LIB=<path>``: copy that already built library (tests use it to avoid a
  second cargo build);
- otherwise ``cargo build --release --locked -p mcp_client`` in the repository two levels up,
  and copy the library cargo reports. Outside a checkout (an sdist) there is nothing to build:
  the build fails and says so.

``MCP_CLIENT_WHEEL_PLATFORM=<tag>`` builds the wheel for another platform than the one running
the build: the tag (``win_amd64``, ``macosx_11_0_arm64``, ``manylinux_2_28_x86_64``…) names the
wheel and decides the library's file name (``mcp_client.dll`` for ``win*``,
``libmcp_client.dylib`` for ``macosx*``, ``libmcp_client.so`` otherwise), and the library must
come from ``MCP_CLIENT_PREBUILT_LIB`` (cargo here builds for this machine only).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, List, Tuple

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PREBUILT_VAR = "MCP_CLIENT_PREBUILT_LIB"
PLATFORM_VAR = "MCP_CLIENT_WHEEL_PLATFORM"
WHEEL_PLATFORM = os.environ.get(PLATFORM_VAR, "")

# The library's file name on each platform (the wheel bundles the one of its own platform).
LIB_NAMES = ("mcp_client.dll", "libmcp_client.dylib", "libmcp_client.so")

if WHEEL_PLATFORM.startswith("win") or (not WHEEL_PLATFORM and sys.platform == "win32"):
    LIB_NAME = "mcp_client.dll"
elif WHEEL_PLATFORM.startswith("macosx") or (not WHEEL_PLATFORM and sys.platform == "darwin"):
    LIB_NAME = "libmcp_client.dylib"
else:
    LIB_NAME = "libmcp_client.so"


def cargo_build() -> str:
    """Builds the release library with cargo; returns the path cargo reports for it."""
    if not os.path.isfile(os.path.join(REPO, "Cargo.toml")):
        raise SystemExit(
            f"cannot build libmcp_client: {REPO} holds no Cargo.toml (not a checkout of the "
            f"repository). Build from the repository, or set {PREBUILT_VAR} to a built library."
        )
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [cargo, "build", "--release", "--locked", "-p", "mcp_client", "--message-format=json-render-diagnostics"]
    print("building libmcp_client: " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        # stdout carries the JSON messages; diagnostics and progress go to stderr as usual.
        proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, check=False)
    except FileNotFoundError as e:
        raise SystemExit(f"cannot build libmcp_client: {cargo} not found ({e}); install Rust or set {PREBUILT_VAR}")
    if proc.returncode != 0:
        raise SystemExit(f"cannot build libmcp_client: {' '.join(cmd)} exited with {proc.returncode}")
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact" or msg.get("target", {}).get("name") != "mcp_client":
            continue
        for path in msg.get("filenames", []):
            if os.path.basename(path) == LIB_NAME:
                return str(path)
    raise SystemExit(f"cargo built mcp_client but reported no {LIB_NAME}")


class BuildPyWithLibrary(build_py):
    """build_py, plus the library copied into the built package."""

    def run(self) -> None:
        super().run()
        prebuilt = os.environ.get(PREBUILT_VAR)
        if prebuilt:
            if not os.path.isfile(prebuilt):
                raise SystemExit(f"{PREBUILT_VAR}={prebuilt!r} is not a file")
            source = prebuilt
        elif WHEEL_PLATFORM:
            raise SystemExit(f"{PLATFORM_VAR}={WHEEL_PLATFORM} needs {PREBUILT_VAR}: the {LIB_NAME} built for it")
        else:
            source = cargo_build()
        target = os.path.join(self.build_lib, "mcp_client", LIB_NAME)
        self.mkpath(os.path.dirname(target))
        # pip builds in the source tree, so its build directory may still hold the library of an
        # earlier wheel for another platform: a wheel carries exactly one.
        for name in LIB_NAMES:
            stale = os.path.join(self.build_lib, "mcp_client", name)
            if name != LIB_NAME and os.path.exists(stale):
                os.remove(stale)
        shutil.copyfile(source, target)
        os.chmod(target, 0o755)
        print(f"bundled {source} as {target}", file=sys.stderr, flush=True)

    def get_outputs(self, include_bytecode: bool = True) -> List[str]:
        return list(super().get_outputs(include_bytecode)) + [os.path.join(self.build_lib, "mcp_client", LIB_NAME)]


class NativeDistribution(Distribution):
    """Has a native part (the bundled library): platlib, ``Root-Is-Purelib: false``."""

    def has_ext_modules(self) -> bool:
        return True


class Py3PlatformWheel(bdist_wheel):
    """``py3-none-<platform>``: ctypes involves no CPython ABI, only the platform's."""

    def get_tag(self) -> Tuple[str, str, str]:
        return ("py3", "none", WHEEL_PLATFORM or super().get_tag()[2])


cmdclass: Any = {"build_py": BuildPyWithLibrary, "bdist_wheel": Py3PlatformWheel}
setup(distclass=NativeDistribution, cmdclass=cmdclass)
