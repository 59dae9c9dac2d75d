"""C callbacks: one module-level CFUNCTYPE thunk per callback type, and a registry of the Python
objects behind them.

The ``userdata`` the library gets is a small integer key into ``_REGISTRY``; the entry stays
there (referenced) until the library calls ``userdata_free``, so a Python callable can never be
collected while the library may still call it. The thunks themselves are module globals that
live as long as the interpreter, and every client is freed before interpreter shutdown (atexit),
after which the library guarantees no callback runs again.

Every thunk catches ``BaseException``: nothing ever propagates into ctypes (and through Rust
frames). Failures of host callables are logged on the ``mcp_client`` logger.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import itertools
import json
import logging
import math
import threading
import weakref
from collections.abc import Mapping
from typing import Any, Callable

from . import _ffi
from ._library import lib

log = logging.getLogger("mcp_client")

_REGISTRY: dict[int, Any] = {}
_REGISTRY_LOCK = threading.Lock()
_KEYS = itertools.count(1)


def register(obj: Any) -> int:
    with _REGISTRY_LOCK:
        key = next(_KEYS)
        _REGISTRY[key] = obj
    return key


def unregister(key: int) -> None:
    with _REGISTRY_LOCK:
        _REGISTRY.pop(key, None)


def _lookup(key: int | None) -> Any:
    if key is None:
        return None
    with _REGISTRY_LOCK:
        return _REGISTRY.get(key)


def live_userdata() -> int:
    """How many registered callables the library still holds (for tests and leak checks)."""
    with _REGISTRY_LOCK:
        return len(_REGISTRY)


# --------------------------------------------------------------------------------------------
# Replies


class ReplyError(Exception):
    """Raise from an input handler (or set on its Future) to fail the input with a chosen
    JSON-RPC ``code`` (default -32603). Any other exception fails it with -32603 and
    ``str(exception)`` as the message."""

    def __init__(self, message: str, code: int = _ffi.INTERNAL_ERROR):
        super().__init__(message)
        self.code = code


def _error_of(exc: BaseException) -> tuple[int, str]:
    code = getattr(exc, "code", None) if isinstance(exc, ReplyError) else None
    if code is None:
        from ._errors import MCPError

        if isinstance(exc, MCPError) and exc.code is not None:
            code = exc.code
    if not isinstance(code, int) or isinstance(code, bool):
        code = _ffi.INTERNAL_ERROR
    return code, (str(exc) or type(exc).__name__)


class _Reply:
    """A responder completed at most once, from any thread. Holds the raw pointer until a reply
    consumes it; every later attempt is a no-op (a consumed responder is freed memory)."""

    __slots__ = ("_lock", "_ptr", "kind", "__weakref__")

    def __init__(self, ptr: Any, kind: str):
        self._lock = threading.Lock()
        self._ptr = ptr
        self.kind = kind

    def _take(self) -> Any:
        with self._lock:
            ptr, self._ptr = self._ptr, None
        return ptr

    def release(self) -> None:
        """The callback returned without replying or deferring: the library owns it again."""
        self._take()

    @property
    def done(self) -> bool:
        with self._lock:
            return self._ptr is None

    def is_cancelled(self) -> bool:
        with self._lock:
            return True if self._ptr is None else bool(lib.mcp_responder_is_cancelled(self._ptr))

    def value(self, result: Any) -> bool:
        """Replies with a result object (a Mapping); anything unusable fails the input."""
        if result is None and self.kind == "elicitation":
            result = {"action": "decline"}
        if not isinstance(result, Mapping):
            return self.error(
                _ffi.INTERNAL_ERROR,
                f"the {self.kind} handler returned {type(result).__name__}; expected a dict"
                + ("" if result is None else ", None or a Future"),
            )
        try:
            text = json.dumps(dict(result)).encode("utf-8")
        except (TypeError, ValueError) as e:
            return self.error(_ffi.INTERNAL_ERROR, f"the {self.kind} handler's result is not JSON: {e}")
        ptr = self._take()
        if not ptr:
            return False
        return lib.mcp_responder_reply_json(ptr, text, None) == _ffi.MCP_OK

    def error(self, code: int, message: str) -> bool:
        ptr = self._take()
        if not ptr:
            return False
        try:
            msg = message.encode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - never fail while replying
            msg = b"the handler failed"
        return lib.mcp_responder_reply_error(ptr, code, msg, None) == _ffi.MCP_OK

    def exception(self, exc: BaseException) -> bool:
        code, message = _error_of(exc)
        return self.error(code, message)


class Deferred(concurrent.futures.Future):
    """A Future an input handler may return to answer later, from any thread.

    Complete it with ``set_result(dict)`` (the reply; ``None`` declines an elicitation) or
    ``set_exception(exc)`` (fails the input, as raising would). ``wanted`` turns False once the
    library no longer waits for the answer (the call was cancelled, timed out or closed).
    A plain ``concurrent.futures.Future`` works too; this subclass only adds ``wanted``.
    """

    _mcp_reply: _Reply | None = None

    @property
    def wanted(self) -> bool:
        reply = self._mcp_reply
        return reply is None or not reply.is_cancelled()


def _is_future(obj: Any) -> bool:
    return isinstance(obj, concurrent.futures.Future) or (
        callable(getattr(obj, "add_done_callback", None)) and callable(getattr(obj, "result", None))
    )


def _complete_from_future(reply: _Reply, fut: Any, owner: Any) -> None:
    try:
        if fut.cancelled():
            reply.error(_ffi.INTERNAL_ERROR, f"the deferred {reply.kind} answer was cancelled")
        else:
            exc = fut.exception()
            if exc is not None:
                reply.exception(exc)
            else:
                reply.value(fut.result())
    except BaseException as e:  # noqa: BLE001
        try:
            reply.exception(e)
        except BaseException:  # noqa: BLE001
            pass
    finally:
        if owner is not None:
            try:
                owner._deferred_done(reply)
            except BaseException:  # noqa: BLE001
                pass


class InputEntry:
    """An input handler registration: ``fn(params: dict) -> dict | None | Future``."""

    def __init__(self, fn: Callable[[dict], Any], kind: str, owner: Any):
        self.fn = fn
        self.kind = kind
        self.owner = weakref.ref(owner)

    def run(self, params_raw: bytes | None, responder: Any) -> None:
        reply = _Reply(responder, self.kind)
        try:
            try:
                params = json.loads(params_raw) if params_raw else {}
                result = self.fn(params)
            except BaseException as exc:  # noqa: BLE001 - the input fails, the host lives on
                log.debug("%s handler raised %r", self.kind, exc)
                reply.exception(exc)
                return
            if result is None and self.kind != "elicitation":
                reply.error(_ffi.INTERNAL_ERROR, f"the {self.kind} handler returned no answer")
            elif result is None:
                reply.release()  # the library's default for a silent elicitation: decline
            elif inspect.iscoroutine(result):
                result.close()
                reply.error(
                    _ffi.INTERNAL_ERROR,
                    f"the {self.kind} handler is a coroutine function; return a concurrent.futures.Future instead",
                )
            elif _is_future(result):
                lib.mcp_responder_defer(responder)
                if isinstance(result, Deferred):
                    result._mcp_reply = reply
                owner = self.owner()
                if owner is not None:
                    owner._deferred_add(reply, result)
                result.add_done_callback(lambda f, r=reply, o=owner: _complete_from_future(r, f, o))
            else:
                reply.value(result)
        except BaseException as exc:  # noqa: BLE001
            try:
                reply.exception(exc)
            except BaseException:  # noqa: BLE001
                pass


class ListenerEntry:
    def __init__(self, fn: Callable[..., Any], kind: str):
        self.fn = fn
        self.kind = kind


# --------------------------------------------------------------------------------------------
# Thunks


def _free_trampoline(userdata: int | None) -> None:
    try:
        if userdata is not None:
            unregister(userdata)
    except BaseException:  # noqa: BLE001
        pass


def _input_trampoline(userdata, method, params, params_len, responder) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            lib.mcp_responder_reply_error(responder, _ffi.INTERNAL_ERROR, b"no Python handler", None)
            return
        entry.run(params, responder)
    except BaseException:  # noqa: BLE001
        pass


def _notification_trampoline(userdata, method, params, params_len) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        m = method.decode("utf-8", "replace") if method else ""
        p = json.loads(params) if params else None
        entry.fn(m, p)
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the notification listener raised")
        except BaseException:  # noqa: BLE001
            pass


def _log_trampoline(userdata, level, source, message) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return

        def text(b: bytes | None) -> str:
            return b.decode("utf-8", "replace") if b else ""

        entry.fn(text(level), text(source), text(message))
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the log listener raised")
        except BaseException:  # noqa: BLE001
            pass


FREE_THUNK = _ffi.mcp_userdata_free_fn(_free_trampoline)
INPUT_THUNK = _ffi.mcp_input_fn(_input_trampoline)
NOTIFICATION_THUNK = _ffi.mcp_notification_fn(_notification_trampoline)
LOG_THUNK = _ffi.mcp_log_fn(_log_trampoline)


def progress_thunk(fn: Callable[[float, float | None, str | None], Any]) -> Any:
    """A per-call progress callback; the library never calls it after the call returns, so
    the caller keeps the returned object referenced for the call's duration."""

    def trampoline(_userdata, progress, total, message) -> None:
        try:
            fn(progress, None if math.isnan(total) else total, message.decode("utf-8", "replace") if message else None)
        except BaseException:  # noqa: BLE001
            try:
                log.exception("the progress callback raised")
            except BaseException:  # noqa: BLE001
                pass

    return _ffi.mcp_progress_fn(trampoline)
