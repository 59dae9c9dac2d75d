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
import ctypes
import inspect
import itertools
import json
import logging
import math
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    _FutureBase = concurrent.futures.Future[Any]
else:  # subscripting Future at run time needs Python 3.9
    _FutureBase = concurrent.futures.Future

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

    def __init__(self, message: str, code: int = _ffi.MCP_JSONRPC_INTERNAL_ERROR):
        super().__init__(message)
        self.code = code


def _error_of(exc: BaseException) -> tuple[int, str]:
    code = getattr(exc, "code", None) if isinstance(exc, ReplyError) else None
    if code is None:
        from ._errors import MCPError

        if isinstance(exc, MCPError) and exc.code is not None:
            code = exc.code
    if not isinstance(code, int) or isinstance(code, bool):
        code = _ffi.MCP_JSONRPC_INTERNAL_ERROR
    return code, (str(exc) or type(exc).__name__)


def _log_error(what: str, err: Any) -> None:
    """Logs (and frees) an ``mcp_error`` a callback cannot raise."""
    try:
        if err:
            msg = (lib.mcp_error_message(err) or b"").decode("utf-8", "replace")
            log.warning("%s failed: %s", what, msg)
    except BaseException:  # noqa: BLE001
        pass
    finally:
        if err:
            lib.mcp_error_free(err)


class _Reply:
    """An ``mcp_responder`` (input handlers and the authorization callback alike) completed at
    most once, from any thread. Holds the raw pointer until a reply consumes it; every later
    attempt is a no-op (a consumed responder is freed memory). ``kind`` is the input kind
    ("elicitation", "sampling", "roots") or "authorization"."""

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
        """Replies with a result object (a Mapping), or for an authorization the redirect URL
        (a str); anything unusable fails the input or the authorization."""
        if self.kind == "authorization":
            return self._url(result)
        if result is None and self.kind == "elicitation":
            result = {"action": "decline"}
        if not isinstance(result, Mapping):
            return self.error(
                _ffi.MCP_JSONRPC_INTERNAL_ERROR,
                f"the {self.kind} handler returned {type(result).__name__}; expected a dict"
                + ("" if result is None else ", None or a Future"),
            )
        try:
            text = json.dumps(dict(result)).encode("utf-8")
        except (TypeError, ValueError) as e:
            return self.error(_ffi.MCP_JSONRPC_INTERNAL_ERROR, f"the {self.kind} handler's result is not JSON: {e}")
        ptr = self._take()
        if not ptr:
            return False
        return bool(lib.mcp_responder_reply_json(ptr, text, None) == _ffi.MCP_OK)

    def error(self, code: int, message: str) -> bool:
        ptr = self._take()
        if not ptr:
            return False
        try:
            # A C string ends at U+0000: show it rather than cut the message there.
            msg = message.replace("\x00", "\\u0000").encode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - never fail while replying
            msg = b"the handler failed"
        return bool(lib.mcp_responder_reply_error(ptr, code, msg, None) == _ffi.MCP_OK)

    def fail(self, message: str) -> bool:
        return self.error(0, message)

    def exception(self, exc: BaseException) -> bool:
        code, message = _error_of(exc)
        return self.error(code, message)

    def _url(self, result: Any) -> bool:
        if not isinstance(result, str):
            return self.fail(
                f"the authorization callback's answer is {type(result).__name__}; expected the redirect URL (str)"
            )
        if "\x00" in result:
            return self.fail("the redirect URL contains a NUL character (U+0000)")
        try:
            url = result.encode("utf-8")
        except UnicodeError as e:
            return self.fail(f"the redirect URL is not valid text: {e}")
        ptr = self._take()
        if not ptr:
            return False
        err = ctypes.POINTER(_ffi.mcp_error)()
        st = lib.mcp_responder_reply_url(ptr, url, ctypes.byref(err))
        if st != _ffi.MCP_OK:
            _log_error("replying to the authorization", err)
        return bool(st == _ffi.MCP_OK)


class Deferred(_FutureBase):
    """A Future an input handler (or the authorization callback) may return to answer later,
    from any thread.

    Complete it with ``set_result(dict)`` (the reply; ``None`` declines an elicitation; for the
    authorization callback: the redirect URL, a str) or ``set_exception(exc)`` (fails the input
    or the authorization, as raising would). ``wanted`` turns False once the library no longer
    waits for the answer (the call was cancelled, timed out or closed; the flow ended).
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
            reply.error(_ffi.MCP_JSONRPC_INTERNAL_ERROR, f"the deferred {reply.kind} answer was cancelled")
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

    def __init__(self, fn: Callable[[dict[str, Any]], Any], kind: str, owner: Any):
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
                reply.error(_ffi.MCP_JSONRPC_INTERNAL_ERROR, f"the {self.kind} handler returned no answer")
            elif result is None:
                reply.release()  # the library's default for a silent elicitation: decline
            elif inspect.iscoroutine(result):
                result.close()
                reply.error(
                    _ffi.MCP_JSONRPC_INTERNAL_ERROR,
                    f"the {self.kind} handler is a coroutine function; return a concurrent.futures.Future instead",
                )
            elif _is_future(result):
                lib.mcp_responder_defer(responder)
                # Pushed cancellation for AsyncClient's handler futures: when the answer stops
                # being wanted the library cancels the future, and with it the handler's task
                # (host futures are left alone: their owners may still complete them).
                if getattr(result, "_mcp_cancel_when_unwanted", False):
                    lib.mcp_responder_on_cancel(responder, CANCEL_THUNK, register(result), FREE_THUNK, None)
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


class AuthEntry:
    """An authorization callback registration:
    ``fn(authorization_url, redirect_uri) -> str | None | Future``."""

    def __init__(self, fn: Callable[[str, "str | None"], Any], owner: Any):
        self.fn = fn
        self.owner = weakref.ref(owner)

    def run(self, url_raw: bytes | None, redirect_raw: bytes | None, responder: Any) -> None:
        reply = _Reply(responder, "authorization")
        try:
            try:
                url = url_raw.decode("utf-8", "replace") if url_raw else ""
                redirect_uri = redirect_raw.decode("utf-8", "replace") if redirect_raw else None
                result = self.fn(url, redirect_uri)
            except BaseException as exc:  # noqa: BLE001 - the authorization fails, the host lives on
                log.debug("the authorization callback raised %r", exc)
                reply.exception(exc)
                return
            if result is None:
                # The loopback listener receives the redirect (the library ends the flow with an
                # error when there is no listener, i.e. oauth.redirect_uri is set).
                reply.release()
            elif inspect.iscoroutine(result):
                result.close()
                reply.fail(
                    "the authorization callback is a coroutine function; return a concurrent.futures.Future instead"
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


class TokenStoreEntry:
    """A token store registration: ``load(issuer) -> dict | None``, ``save(issuer, record)``."""

    def __init__(self, load: Callable[[str], Any], save: Callable[[str, "dict[str, Any] | None"], Any]):
        self.load = load
        self.save = save


class AssertionEntry:
    """An assertion provider: ``fn(kind, audience) -> str | None`` (``kind``: ``"workload_jwt"``
    or ``"id_token"``)."""

    def __init__(self, fn: Callable[[str, str], "str | None"]):
        self.fn = fn


class ListenerEntry:
    def __init__(self, fn: Callable[..., Any], kind: str):
        self.fn = fn
        self.kind = kind


# The library's levels (MCP's syslog names) as logging levels; an unknown one counts as a warning.
_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

# The log sources as logger names under ``mcp_client``: the server's stderr is the server
# speaking, so it gets ``mcp_client.server``; the library's own sources keep their names.
_SOURCE_LOGGERS = {"stderr": "mcp_client.server"}


def logger_for(source: str) -> logging.Logger:
    return logging.getLogger(_SOURCE_LOGGERS.get(source) or f"mcp_client.{source or 'library'}")


def log_to_logging(level: str, source: str, message: str) -> None:
    """The default log listener of every client: the server's stderr lines (INFO on
    ``mcp_client.server``) and the library's warnings (``mcp_client.transport``,
    ``mcp_client.client``, ...) become records of Python's ``logging``; the record carries
    ``mcp_source`` (the library's source name)."""
    logger = logger_for(source)
    lvl = _LEVELS.get(level.lower(), logging.WARNING)
    if logger.isEnabledFor(lvl):
        logger.log(lvl, "%s", message, extra={"mcp_source": source})


# --------------------------------------------------------------------------------------------
# Thunks


def _free_trampoline(userdata: int | None) -> None:
    try:
        if userdata is not None:
            unregister(userdata)
    except BaseException:  # noqa: BLE001
        pass


def _input_trampoline(
    userdata: int | None, method: bytes | None, params: bytes | None, params_len: int, responder: Any
) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            lib.mcp_responder_reply_error(responder, _ffi.MCP_JSONRPC_INTERNAL_ERROR, b"no Python handler", None)
            return
        entry.run(params, responder)
    except BaseException:  # noqa: BLE001
        pass


def _cancel_trampoline(userdata: int | None) -> None:
    try:
        future = _lookup(userdata)
        if future is not None:
            future.cancel()
    except BaseException:  # noqa: BLE001
        pass


def _notification_trampoline(userdata: int | None, method: bytes | None, params: bytes | None, params_len: int) -> None:
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


def _log_trampoline(userdata: int | None, level: bytes | None, source: bytes | None, message: bytes | None) -> None:
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


def _authorization_trampoline(userdata: int | None, url: bytes | None, redirect_uri: bytes | None, responder: Any) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            lib.mcp_responder_reply_error(responder, 0, b"no Python authorization callback", None)
            return
        entry.run(url, redirect_uri, responder)
    except BaseException:  # noqa: BLE001
        pass


def _token_load_trampoline(userdata: int | None, issuer: bytes | None, slot: Any) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        iss = issuer.decode("utf-8", "replace") if issuer else ""
        record = entry.load(iss)
        if record is None:
            return
        if not isinstance(record, Mapping):
            log.warning("the token store's load returned %s, not a dict or None; ignored", type(record).__name__)
            return
        text = json.dumps(dict(record)).encode("utf-8")
        err = ctypes.POINTER(_ffi.mcp_error)()
        if lib.mcp_token_slot_set(slot, text, ctypes.byref(err)) != _ffi.MCP_OK:
            _log_error("loading the token store record", err)
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the token store's load raised; treated as nothing stored")
        except BaseException:  # noqa: BLE001
            pass


def _token_save_trampoline(userdata: int | None, issuer: bytes | None, record_json: bytes | None) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        iss = issuer.decode("utf-8", "replace") if issuer else ""
        entry.save(iss, None if record_json is None else json.loads(record_json))
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the token store's save raised")
        except BaseException:  # noqa: BLE001
            pass


def _assertion_trampoline(userdata: int | None, kind: bytes | None, audience: bytes | None, slot: Any) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        jwt = entry.fn(
            kind.decode("utf-8", "replace") if kind else "",
            audience.decode("utf-8", "replace") if audience else "",
        )
        if jwt is None:
            return
        if not isinstance(jwt, str):
            log.warning("the assertion provider returned %s, not a str or None; ignored", type(jwt).__name__)
            return
        err = ctypes.POINTER(_ffi.mcp_error)()
        if lib.mcp_assertion_slot_set(slot, jwt.encode("utf-8"), ctypes.byref(err)) != _ffi.MCP_OK:
            _log_error("handing over the assertion", err)
    except BaseException:  # noqa: BLE001
        try:
            # The JWT is never logged, only that the provider failed.
            log.exception("the assertion provider raised; the authorization fails")
        except BaseException:  # noqa: BLE001
            pass


_STATES = {
    _ffi.MCP_CONNECTION_CONNECTED: "connected",
    _ffi.MCP_CONNECTION_DISCONNECTED: "disconnected",
    _ffi.MCP_CONNECTION_RECONNECTING: "reconnecting",
    _ffi.MCP_CONNECTION_FAILED: "failed",
}


def _state_trampoline(userdata: int | None, state: int, attempt: int, detail: bytes | None) -> None:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        entry.fn(_STATES.get(state, str(state)), int(attempt), detail.decode("utf-8", "replace") if detail else "")
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the connection-state listener raised")
        except BaseException:  # noqa: BLE001
            pass


FREE_THUNK = _ffi.mcp_userdata_free_fn(_free_trampoline)


def _tool_pin_trampoline(userdata: int | None, event_json: bytes | None) -> bool:
    try:
        entry = _lookup(userdata)
        if entry is None:
            return False
        return bool(entry.fn(json.loads(event_json or b"null")))
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the tool pin hook raised")
        except BaseException:  # noqa: BLE001
            pass
        return False


def _json_trampoline(what: str) -> Callable[[int | None, bytes | None, int], None]:
    """A trampoline for a listener given one JSON object (a task, a span): ``fn(dict)``."""

    def trampoline(userdata: int | None, text: bytes | None, length: int) -> None:
        try:
            entry = _lookup(userdata)
            if entry is None:
                return
            entry.fn(json.loads(text) if text else {})
        except BaseException:  # noqa: BLE001
            try:
                log.exception("the %s listener raised", what)
            except BaseException:  # noqa: BLE001
                pass

    return trampoline


def _trace_trampoline(userdata: int | None, slot: Any) -> None:
    """Fills the slot with ``fn()``'s W3C members; an invalid one fails the call (the library
    remembers the slot's refusal), an exception is logged and counts as no context."""
    try:
        entry = _lookup(userdata)
        if entry is None:
            return
        context = entry.fn()
        if not context:
            return

        def member(key: str) -> bytes | None:
            value = context.get(key)
            return str(value).encode("utf-8") if value else None

        lib.mcp_trace_slot_set(slot, member("traceparent"), member("tracestate"), member("baggage"), None)
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the trace context source raised; the call goes without one")
        except BaseException:  # noqa: BLE001
            pass


def opentelemetry_context() -> dict[str, str]:
    """The current OpenTelemetry context as W3C members (``traceparent``, ``tracestate``,
    ``baggage``), injected by the configured propagators; empty when ``opentelemetry-api`` is not
    installed or there is no current span."""
    try:
        from opentelemetry import propagate  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate", "baggage")}


TRACE_THUNK = _ffi.mcp_trace_context_fn(_trace_trampoline)
TASK_THUNK = _ffi.mcp_task_status_fn(_json_trampoline("task status"))
SPAN_THUNK = _ffi.mcp_span_fn(_json_trampoline("span"))
CANCEL_THUNK = _ffi.mcp_responder_cancel_fn(_cancel_trampoline)
STATE_THUNK = _ffi.mcp_connection_state_fn(_state_trampoline)
TOOL_PIN_THUNK = _ffi.mcp_tool_pin_fn(_tool_pin_trampoline)
INPUT_THUNK = _ffi.mcp_input_fn(_input_trampoline)
NOTIFICATION_THUNK = _ffi.mcp_notification_fn(_notification_trampoline)
LOG_THUNK = _ffi.mcp_log_fn(_log_trampoline)
AUTHORIZATION_THUNK = _ffi.mcp_authorization_fn(_authorization_trampoline)
TOKEN_LOAD_THUNK = _ffi.mcp_token_load_fn(_token_load_trampoline)
TOKEN_SAVE_THUNK = _ffi.mcp_token_save_fn(_token_save_trampoline)
ASSERTION_THUNK = _ffi.mcp_assertion_fn(_assertion_trampoline)


def progress_thunk(fn: Callable[[float, float | None, str | None], Any]) -> Any:
    """A per-call progress callback; the library never calls it after the call returns, so
    the caller keeps the returned object referenced for the call's duration."""

    def trampoline(_userdata: int | None, progress: float, total: float, message: bytes | None) -> None:
        try:
            fn(progress, None if math.isnan(total) else total, message.decode("utf-8", "replace") if message else None)
        except BaseException:  # noqa: BLE001
            try:
                log.exception("the progress callback raised")
            except BaseException:  # noqa: BLE001
                pass

    return _ffi.mcp_progress_fn(trampoline)
