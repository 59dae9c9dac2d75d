"""What every call goes through, kept cheap: the handle's lifetime, JSON in and out, and the
foreign functions of the frequent calls.

A sequential call's Python cost is paid on top of the library's round trip, so this module
avoids per-call work that does not change the outcome (measured in docs/performance.md,
"Python binding path"):

- the frequent calls use foreign functions declared without ``argtypes`` (``RAW``): ctypes
  then converts nothing, since the arguments already are C-compatible (``bytes`` or None for
  ``const char *``, ctypes pointers and ``byref()`` as themselves, ``int`` only for
  ``int32_t``/``uint32_t``); only this package calls them, with exactly those types;
- results come back in a ``c_char_p``, whose ``.value`` copies the bytes without a second
  foreign call (``ctypes.string_at`` is one);
- JSON is encoded and decoded with the ``json`` module's C encoder and scanner directly, skipping
  the pure-Python layers of ``json.dumps``/``json.loads`` (which build a new encoder per call);
  anything the direct path cannot do exactly like ``json`` (circular or unsupported values,
  surrounding whitespace, malformed text) goes through ``json`` itself, so errors are unchanged;
- the lifetime guard takes a plain lock (the C-level ``with``), not a Condition.
"""

from __future__ import annotations

import ctypes
import json
import json.encoder
import threading
from typing import Any, Callable

from . import _ffi
from ._errors import ClosedError, take_error
from ._library import lib

ERR_PTR = ctypes.POINTER(_ffi.mcp_error)


class _Raw:
    """The frequent calls' foreign functions without ``argtypes`` (see the module docstring).
    ``lib[name]`` makes a new function object, so ``lib.<name>`` keeps its declared types for
    every other caller."""

    def __init__(self) -> None:
        def raw(name: str, restype: Any = _ffi.mcp_status) -> Any:
            fn = lib[name]
            fn.restype = restype
            return fn

        self.call_tool = raw("mcp_client_call_tool")
        self.get_prompt = raw("mcp_client_get_prompt")
        self.read_resource = raw("mcp_client_read_resource")
        self.list = raw("mcp_client_list")
        self.request = raw("mcp_client_request")
        self.string_free = raw("mcp_string_free", None)
        self.call_free = raw("mcp_call_free", None)
        self.call_cancel = raw("mcp_call_cancel")
        self.dispatch = raw("mcp_client_dispatch")
        self.connect_start = raw("mcp_client_connect_start")
        self.call_tool_start = raw("mcp_client_call_tool_start")
        self.get_prompt_start = raw("mcp_client_get_prompt_start")
        self.read_resource_start = raw("mcp_client_read_resource_start")
        self.list_start = raw("mcp_client_list_start")
        self.list_all_start = raw("mcp_client_list_all_start")
        self.complete_start = raw("mcp_client_complete_start")
        self.request_start = raw("mcp_client_request_start")
        self.ping_start = raw("mcp_client_ping_start")
        self.set_log_level_start = raw("mcp_client_set_log_level_start")
        self.resume_task_start = raw("mcp_client_resume_task_start")
        self.get_task_start = raw("mcp_client_get_task_start")
        self.cancel_task_start = raw("mcp_client_cancel_task_start")
        self.update_task_start = raw("mcp_client_update_task_start")
        self.list_skills_start = raw("mcp_client_list_skills_start")
        self.get_skill_start = raw("mcp_client_get_skill_start")
        self.read_skill_file_start = raw("mcp_client_read_skill_file_start")
        self.read_app_start = raw("mcp_client_read_app_start")
        self.subscribe_resource_start = raw("mcp_client_subscribe_resource_start")
        self.unsubscribe_resource_start = raw("mcp_client_unsubscribe_resource_start")
        self.notify_roots_changed_start = raw("mcp_client_notify_roots_changed_start")
        self.listen_start = raw("mcp_client_listen_start")
        self.subscription_next_start = raw("mcp_subscription_next_start")


RAW = _Raw()

# ----- JSON -----

_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
# The encoder json.dumps builds on every call, built once; compact separators (the library
# parses the text; spaces would only lengthen it). No circular-reference markers: a circular
# value ends in RecursionError here, and then json.dumps reports it as it always did.
_ENCODE: Callable[[Any, int], Any] | None = (
    _c_make_encoder(
        None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    if _c_make_encoder is not None
    else None
)
# JSONDecoder's scanner: the C one when the interpreter has it (json.loads uses the same).
_SCAN: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")


def json_arg(value: Any) -> bytes | None:
    """A JSON argument as UTF-8 bytes (None stays NULL); the errors of json.dumps."""
    if value is None:
        return None
    if _ENCODE is not None and type(value) is dict:
        try:
            return "".join(_ENCODE(value, 0)).encode("utf-8")
        except Exception:  # noqa: BLE001 - json.dumps below raises the proper error
            pass
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def loads(raw: bytes) -> Any:
    """json.loads of a library result (UTF-8 JSON), without its per-call Python layers."""
    try:
        text = raw.decode("utf-8")
        value, end = _SCAN(text, 0)
        if end == len(text):
            return value
    except Exception:  # noqa: BLE001 - StopIteration, JSONDecodeError...: json.loads decides
        pass
    return json.loads(raw)


# ----- lifetime -----


class Lifetime:
    """Frees a handle once it is closed and no call is using it.

    ``mcp_client_free`` must not run while another thread is inside a call on the same handle;
    calls register themselves with ``acquire()``/``release()``, ``mark_closing()`` marks the
    handle closing, and whoever leaves last frees it, outside the lock.
    """

    __slots__ = ("_lock", "_freed", "_ptr", "_free", "_busy", "_closing", "_what")

    def __init__(self, ptr: Any, free: Callable[[Any], None], what: str):
        self._lock = threading.Lock()
        self._freed = threading.Event()  # set once the free has returned
        self._ptr = ptr
        self._free = free
        self._busy = 0
        self._closing = False
        self._what = what

    @property
    def closing(self) -> bool:
        return self._closing

    @property
    def freed(self) -> bool:
        return self._ptr is None

    def acquire(self, *, closing_ok: bool = False) -> Any:
        with self._lock:
            ptr = self._ptr
            if ptr is None or (self._closing and not closing_ok):
                raise ClosedError(_ffi.MCP_CLOSED, f"the {self._what} is closed")
            self._busy += 1
            return ptr

    def release(self) -> None:
        with self._lock:
            self._busy -= 1
            if not self._closing or self._busy or self._ptr is None:
                return
            ptr, self._ptr = self._ptr, None
        self._free_now(ptr)

    def _free_now(self, ptr: Any) -> None:
        try:
            self._free(ptr)
        finally:
            self._freed.set()

    def mark_closing(self) -> bool:
        """True the first time."""
        with self._lock:
            first = not self._closing
            self._closing = True
            return first

    def wait_freed(self, timeout: float | None) -> bool:
        return self._freed.wait(timeout)


class Use:
    """``with Use(lifetime) as ptr:`` without the generator overhead of contextlib."""

    __slots__ = ("_life", "_closing_ok")

    def __init__(self, life: Lifetime, closing_ok: bool = False):
        self._life = life
        self._closing_ok = closing_ok

    def __enter__(self) -> Any:
        return self._life.acquire(closing_ok=self._closing_ok)

    def __exit__(self, *exc: Any) -> None:
        self._life.release()


def call(life: Lifetime, fn: Any, *args: Any) -> Any:
    """A blocking call through one of ``RAW``'s functions, ``fn(handle, *args, &result, &err)``,
    inside ``life``; returns the result's JSON value or raises the call's error."""
    out = ctypes.c_char_p()
    err = ERR_PTR()
    st = invoke(life, fn, *args, ctypes.byref(out), ctypes.byref(err))
    if st:
        raise take_error(st, err)
    raw = out.value  # the library's string copied; then freed
    if raw is None:
        return None
    RAW.string_free(out)
    return loads(raw)


def invoke(life: Lifetime, fn: Any, *args: Any) -> int:
    """``fn(handle, *args)`` inside ``life`` (``acquire``/``release`` inlined: two method calls
    less per call, on every blocking and started call's path): the status."""
    with life._lock:
        ptr = life._ptr
        if ptr is None or life._closing:
            raise ClosedError(_ffi.MCP_CLOSED, f"the {life._what} is closed")
        life._busy += 1
    try:
        st: int = fn(ptr, *args)
    finally:
        with life._lock:
            life._busy -= 1
            last = life._closing and not life._busy and life._ptr is not None
            if last:
                life._ptr = None
        if last:
            life._free_now(ptr)
    return st
