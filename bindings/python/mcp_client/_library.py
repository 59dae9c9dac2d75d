"""Finding, loading and checking libmcp_client.

Search order (the first that exists wins):

1. the environment variable ``MCP_CLIENT_LIB``: a path to the shared library (an error when it
   names a file that does not exist: a misconfiguration must not silently fall back);
2. next to this package (a wheel or a copy that bundles the library);
3. the repository build directories ``<repo>/target/debug`` then ``<repo>/target/release``,
   found relative to this source file (a checkout);
4. ``ctypes.util.find_library("mcp_client")`` (an installed library).

Right after loading, ``mcp_abi_version()`` must equal the header's ``MCP_ABI_VERSION`` and every
declared function must exist; otherwise ``ImportError``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from . import _ffi

ENV_VAR = "MCP_CLIENT_LIB"

if sys.platform == "darwin":
    _NAMES = ("libmcp_client.dylib",)
elif sys.platform == "win32":
    _NAMES = ("mcp_client.dll", "libmcp_client.dll")
else:
    _NAMES = ("libmcp_client.so",)


def candidates() -> list[str]:
    """Every path the loader would try, in order (the env var excluded)."""
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", "..", ".."))
    out = [os.path.join(here, n) for n in _NAMES]
    for profile in ("debug", "release"):
        out += [os.path.join(repo, "target", profile, n) for n in _NAMES]
    return out


def find() -> str:
    env = os.environ.get(ENV_VAR)
    if env:
        if not os.path.exists(env):
            raise ImportError(f"{ENV_VAR}={env!r} does not exist")
        return env
    for path in candidates():
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library("mcp_client")
    if found:
        return found
    raise ImportError(
        "libmcp_client not found: set MCP_CLIENT_LIB to the shared library, build the repository "
        "(`cargo build`), or install the library. Looked in: " + ", ".join(candidates())
    )


def load(path: str | None = None) -> tuple[ctypes.CDLL, str]:
    path = path or find()
    try:
        # CDLL, not PyDLL: the GIL is released during every foreign call, so a blocking call
        # cannot deadlock against a callback that needs the GIL on the dispatcher thread.
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"cannot load {path}: {e}") from e
    try:
        abi = lib.mcp_abi_version
    except AttributeError as e:
        raise ImportError(f"{path} is not libmcp_client (no mcp_abi_version)") from e
    abi.restype = ctypes.c_uint32
    abi.argtypes = []
    found = abi()
    if found != _ffi.MCP_ABI_VERSION:
        raise ImportError(
            f"{path} implements ABI version {found}, but these bindings were generated for "
            f"version {_ffi.MCP_ABI_VERSION}: rebuild the library or regenerate the bindings"
        )
    try:
        _ffi.bind(lib)
    except AttributeError as e:
        raise ImportError(
            f"{path} lacks a function the bindings declare ({e}): the library is older than "
            "include/mcp_client.h"
        ) from e
    return lib, path


lib, path = load()
