"""The generated declarations and library loading."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_client
from mcp_client import _errors, _ffi, _library
from conftest import BINDING, REPO

HEADER = REPO / "include" / "mcp_client.h"


def test_generated_module_is_fresh():
    r = subprocess.run(
        [sys.executable, str(BINDING / "generate.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_fails_on_a_stale_module(tmp_path):
    stale = tmp_path / "_ffi.py"
    stale.write_text((BINDING / "mcp_client" / "_ffi.py").read_text().replace("MCP_OK = 0", "MCP_OK = 1"))
    r = subprocess.run(
        [sys.executable, str(BINDING / "generate.py"), "--check", "--output", str(stale)],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode != 0
    assert "stale" in r.stderr


def test_generated_file_says_do_not_edit():
    head = (BINDING / "mcp_client" / "_ffi.py").read_text().splitlines()[:5]
    assert any("GENERATED" in line and "DO NOT EDIT" in line for line in head)


def test_every_header_function_is_declared_and_bound():
    text = HEADER.read_text()
    declared = set(re.findall(r"^\S[^;()]*?\b(mcp_\w+)\(", text, re.M))
    assert declared, "the header parse in this test found nothing"
    assert declared == set(_ffi.FUNCTIONS)
    lib = _library.lib
    for name, (restype, argtypes) in _ffi.FUNCTIONS.items():
        fn = getattr(lib, name)
        assert fn.restype is restype, name
        assert fn.argtypes == argtypes, name


def test_every_define_is_exported():
    text = HEADER.read_text()
    for name, value in re.findall(r"^#define (\w+) (.+)$", text, re.M):
        assert hasattr(_ffi, name), name
        expected = value.strip('"') if value.startswith('"') else int(value)
        assert getattr(_ffi, name) == expected, name
        assert getattr(mcp_client, name) == expected, name
    assert mcp_client.MCP_RESULT_TYPE_INPUT_REQUIRED == "input_required"
    assert mcp_client.MCP_INPUT_REQUIRED == 300


def test_call_opts_layout_matches_header_order():
    text = HEADER.read_text()
    body = re.search(r"typedef struct mcp_call_opts \{(.*?)\} mcp_call_opts;", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = [re.search(r"(\w+)\s*$", f.strip()).group(1) for f in body.split(";") if f.strip()]
    assert [f[0] for f in _ffi.mcp_call_opts._fields_] == names
    opts = _ffi.mcp_call_opts()
    assert _library.lib.mcp_call_opts_init(ctypes.byref(opts), _ffi.MCP_CALL_OPTS_VERSION) == _ffi.MCP_OK
    assert opts.version == _ffi.MCP_CALL_OPTS_VERSION
    # A version newer than the library's (a newer header) is refused.
    assert _library.lib.mcp_call_opts_init(ctypes.byref(opts), _ffi.MCP_CALL_OPTS_VERSION + 1) == _ffi.MCP_INVALID_ARG
    assert not opts.on_progress and not opts.cancel


def test_callback_typedefs_and_handles():
    for name in ("mcp_progress_fn", "mcp_input_fn", "mcp_userdata_free_fn", "mcp_notification_fn", "mcp_log_fn"):
        assert issubclass(getattr(_ffi, name), ctypes._CFuncPtr), name
    for name in ("mcp_client", "mcp_config", "mcp_error", "mcp_responder", "mcp_subscription", "mcp_cancel_token"):
        assert issubclass(getattr(_ffi, name), ctypes.Structure), name
    assert _ffi.mcp_status is ctypes.c_int32


def test_versions():
    assert mcp_client.abi_version() == _ffi.MCP_ABI_VERSION
    assert mcp_client.library_version() == f"mcp_client/{mcp_client.__version__}"
    assert mcp_client.status_str(mcp_client.MCP_INPUT_REQUIRED)


def test_status_names_round_trip():
    # Every status the library names is exported under that name with that value, and every
    # status with an exception class has a name: a status added on either side fails here.
    named = {}
    for value in range(1000):
        name = mcp_client.status_name(value)
        if name != "MCP_UNKNOWN":
            named[name] = value
    assert named["MCP_OUTPUT_SCHEMA_INVALID"] == 305 and named["MCP_OK"] == 0
    for name, value in named.items():
        assert getattr(mcp_client, name) == value, name
    assert set(_errors._BY_STATUS) <= set(named.values())
    assert len(named) == len(_errors._BY_STATUS) + 1  # MCP_OK has no exception class
    for value in (-1, 7, 99, 12345):
        assert mcp_client.status_name(value) == "MCP_UNKNOWN"
    err = mcp_client.exception_class(mcp_client.MCP_TIMEOUT)(mcp_client.MCP_TIMEOUT, "late")
    assert err.status_name == "MCP_TIMEOUT"
    assert err.status_text == mcp_client.status_str(mcp_client.MCP_TIMEOUT) == "timed out"


def test_abi_mismatch_is_an_import_error(monkeypatch):
    monkeypatch.setattr(_ffi, "MCP_ABI_VERSION", _ffi.MCP_ABI_VERSION + 1000)
    with pytest.raises(ImportError, match="ABI version"):
        _library.load(_library.path)


def _import_in_subprocess(env_lib: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MCP_CLIENT_LIB=env_lib, PYTHONPATH=str(BINDING))
    return subprocess.run(
        [sys.executable, "-c", "import mcp_client; print(mcp_client.library_path)"],
        capture_output=True, text=True, timeout=60, env=env,
    )


def test_env_var_selects_the_library():
    r = _import_in_subprocess(_library.path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _library.path


def test_env_var_naming_a_missing_file_fails():
    r = _import_in_subprocess("/nonexistent/libmcp_client.so")
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "MCP_CLIENT_LIB" in r.stderr


def test_exception_classes_cover_every_status():
    for name in dir(_ffi):
        if name.startswith("MCP_") and isinstance(getattr(_ffi, name), int) and name not in (
            "MCP_OK", "MCP_ABI_VERSION", "MCP_CALL_OPTS_VERSION",
        ) and not name.startswith(("MCP_VERSION_", "MCP_LIST_", "MCP_ERA_", "MCP_MODE_", "MCP_ENV_")):
            cls = mcp_client.exception_class(getattr(_ffi, name))
            assert issubclass(cls, mcp_client.MCPError), name
    assert mcp_client.exception_class(mcp_client.MCP_TIMEOUT) is mcp_client.MCPTimeoutError
    assert issubclass(mcp_client.MCPTimeoutError, TimeoutError)
    assert mcp_client.exception_class(150) is mcp_client.TransportError  # unknown, by range


def test_library_file_names_per_platform():
    # What a wheel for each platform bundles, and what the loader looks for there.
    assert _library.names_for("win32") == ("mcp_client.dll", "libmcp_client.dll")
    assert _library.names_for("darwin") == ("libmcp_client.dylib",)
    assert _library.names_for("linux") == ("libmcp_client.so",)
    package = os.path.dirname(os.path.abspath(_library.__file__))
    for platform, first in (("win32", "mcp_client.dll"), ("darwin", "libmcp_client.dylib"), ("linux", "libmcp_client.so")):
        found = _library.candidates(platform)
        assert found[0] == os.path.join(package, first), (platform, found)
        assert {os.path.basename(p) for p in found} == set(_library.names_for(platform)), (platform, found)
    assert _library.candidates() == _library.candidates(sys.platform)


def test_env_var_accepts_the_directory():
    r = _import_in_subprocess(os.path.dirname(_library.path))
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(r.stdout.strip()) == os.path.realpath(_library.path)


def test_env_var_naming_a_directory_without_the_library_fails(tmp_path):
    r = _import_in_subprocess(str(tmp_path))
    assert r.returncode != 0
    assert f"MCP_CLIENT_LIB={str(tmp_path)!r} is a directory without the mcp_client library" in r.stderr
    assert str(tmp_path / "libmcp_client.so") in r.stderr  # what it tried


def _installed_copy(site: Path, with_library: bool) -> Path:
    """The package as a wheel installs it: its files in site/mcp_client, outside the checkout."""
    pkg = site / "mcp_client"
    shutil.copytree(BINDING / "mcp_client", pkg, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    if with_library:
        shutil.copy(_library.path, pkg / "libmcp_client.so")
    return pkg


def _import_installed(site: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MCP_CLIENT_LIB", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-c", "import mcp_client; print(mcp_client.library_path)"],
        capture_output=True, text=True, timeout=60, env=env, cwd=str(site),
    )


def test_installed_package_loads_its_bundled_library(tmp_path):
    pkg = _installed_copy(tmp_path, with_library=True)
    r = _import_installed(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pkg / "libmcp_client.so")


def test_installed_package_without_library_names_only_meaningful_paths(tmp_path):
    pkg = _installed_copy(tmp_path, with_library=False)
    r = _import_installed(tmp_path)
    if r.returncode == 0:
        pytest.skip(f"a system-wide libmcp_client was found: {r.stdout.strip()}")
    # Only the bundled location: no build directories derived from site-packages.
    tried = re.search(r"was not found: tried (.*), then the system's library search", r.stderr)
    assert tried, r.stderr
    assert tried.group(1) == str(pkg / "libmcp_client.so")
    assert "MCP_CLIENT_LIB" in r.stderr
