"""Finding, loading and checking libmcp_client.

Search order:

1. the environment variable ``MCP_CLIENT_LIB``, an override: the shared library itself, or a
   directory holding it (``libmcp_client.so`` on Linux). When it is set, nothing else is tried:
   a misconfiguration must fail loudly, naming the paths it tried, not fall back silently;
2. next to this package: a wheel (or ``pip install``) bundles the release library there;
3. in a checkout only (``bindings/python/mcp_client`` inside the repository, recognised by the
   repository's ``Cargo.toml``): ``<repo>/target/debug`` then ``<repo>/target/release``;
4. ``ctypes.util.find_library("mcp_client")``: a library installed on the system.

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


def names_for(platform: str) -> tuple[str, ...]:
    """The library's file names on ``platform`` (a ``sys.platform`` value), the first preferred:
    the wheel bundles that one. On Windows, MinGW's other spelling is accepted too."""
    if platform == "darwin":
        return ("libmcp_client.dylib",)
    if platform == "win32":
        return ("mcp_client.dll", "libmcp_client.dll")
    return ("libmcp_client.so",)


_NAMES = names_for(sys.platform)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _in(directory: str, names: tuple[str, ...] = _NAMES) -> list[str]:
    return [os.path.join(directory, n) for n in names]


def candidates(platform: str = sys.platform) -> list[str]:
    """Every path the loader would try on ``platform`` (a ``sys.platform`` value), in order,
    ``MCP_CLIENT_LIB`` and the system search excluded. Repository build directories are listed
    only in a checkout: for an installed package, paths derived from site-packages would mean
    nothing."""
    names = names_for(platform)
    out = _in(_HERE, names)
    repo = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))
    if os.path.isfile(os.path.join(repo, "Cargo.toml")) and os.path.isdir(os.path.join(repo, "include")):
        for profile in ("debug", "release"):
            out += _in(os.path.join(repo, "target", profile), names)
    return out


def _from_env(value: str) -> str:
    """The library that ``MCP_CLIENT_LIB=value`` names (a file, or a directory holding it)."""
    if os.path.isdir(value):
        tried = _in(value)
        for path in tried:
            if os.path.isfile(path):
                return path
        raise ImportError(
            f"{ENV_VAR}={value!r} is a directory without the mcp_client library: tried "
            + ", ".join(tried)
        )
    if os.path.isfile(value):
        return value
    raise ImportError(
        f"{ENV_VAR}={value!r} does not exist: set it to the shared library ({_NAMES[0]}) or "
        "to the directory holding it, or unset it to use the bundled library"
    )


def find() -> str:
    env = os.environ.get(ENV_VAR)
    if env:
        return _from_env(env)
    tried = candidates()
    for path in tried:
        if os.path.isfile(path):
            return path
    found = ctypes.util.find_library("mcp_client")
    if found:
        return found
    raise ImportError(
        "the mcp_client library was not found: tried "
        + ", ".join(tried)
        + ", then the system's library search (ctypes.util.find_library). Install a wheel that "
        f"bundles it (`pip install ./bindings/python` builds one), or set {ENV_VAR} to the "
        "library or to its directory"
    )


def load(path: str | None = None) -> tuple[ctypes.CDLL, str]:
    path = path or find()
    origin = f" (from {ENV_VAR})" if os.environ.get(ENV_VAR) else ""
    try:
        # CDLL, not PyDLL: the GIL is released during every foreign call, so a blocking call
        # cannot deadlock against a callback that needs the GIL on the dispatcher thread.
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"cannot load {path}{origin}: {e}") from e
    try:
        abi = lib.mcp_abi_version
    except AttributeError as e:
        raise ImportError(f"{path}{origin} is not libmcp_client (no mcp_abi_version)") from e
    abi.restype = ctypes.c_uint32
    abi.argtypes = []
    found = int(abi())
    if found != _ffi.MCP_ABI_VERSION:
        raise ImportError(
            f"{path}{origin} implements ABI version {found}, but these bindings were generated for "
            f"version {_ffi.MCP_ABI_VERSION}: rebuild the library or regenerate the bindings"
        )
    try:
        _ffi.bind(lib)
    except AttributeError as e:
        raise ImportError(
            f"{path}{origin} lacks a function the bindings declare ({e}): the library is older than "
            "include/mcp_client.h"
        ) from e
    return lib, path


lib, path = load()
