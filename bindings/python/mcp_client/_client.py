"""The Pythonic client: Client, Subscription, CancelToken."""

from __future__ import annotations

import atexit
import contextvars
import ctypes
import json
import math
import threading
import weakref
from typing import Any, Callable, Iterator, Mapping, cast

from . import _callbacks, _ffi
from ._config import Config, OAuthConfig
from ._errors import CancelledError, ClosedError, MCPTimeoutError, new_error_ptr, take_error
from ._library import lib
from ._percall import ERR_PTR, RAW, Lifetime, Use, call, json_arg, loads

_ERAS = {_ffi.MCP_ERA_MODERN: "modern", _ffi.MCP_ERA_LEGACY: "legacy"}


def _enc(s: str, what: str) -> bytes:
    """A str argument as the C ABI's NUL-terminated UTF-8. A U+0000 inside would end the C
    string early (silently sending a shorter name, URI or request state): refused instead."""
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    if "\x00" in s:
        raise ValueError(
            f"{what} contains a NUL character (U+0000 at index {s.index(chr(0))}), "
            "which a C string cannot carry; remove it (JSON arguments may contain it)"
        )
    return s.encode("utf-8")


def _opt_enc(s: str | None, what: str) -> bytes | None:
    return None if s is None else _enc(s, what)


def _take_string(out: ctypes.c_void_p) -> bytes | None:
    """Copies and frees a library-owned string."""
    if not out.value:
        return None
    try:
        return ctypes.string_at(out.value)
    finally:
        lib.mcp_string_free(out)
        out.value = None


def _take_json(out: ctypes.c_void_p) -> Any:
    raw = _take_string(out)
    return None if raw is None else loads(raw)


class CancelToken:
    """Cancels the calls it is passed to (``cancel=token``), now and later, from any thread
    (handlers and listeners included). A cancelled call raises :class:`CancelledError`."""

    def __init__(self) -> None:
        ptr = lib.mcp_cancel_token_new()
        if not ptr:
            raise MemoryError("mcp_cancel_token_new failed")
        self._ptr = ptr

    def cancel(self) -> None:
        lib.mcp_cancel_token_cancel(self._ptr)

    @property
    def cancelled(self) -> bool:
        return bool(lib.mcp_cancel_token_is_cancelled(self._ptr))

    def __del__(self) -> None:
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and lib is not None:
            lib.mcp_cancel_token_free(ptr)

    def __repr__(self) -> str:
        return f"<CancelToken cancelled={self.cancelled}>"


_OPT_KEYS = frozenset(
    {
        "timeout",
        "cancel",
        "progress",
        "meta",
        "log_level",
        "max_total",
        "reset_timeout_on_progress",
        "cache",
        "validate_output",
    }
)

# The response cache modes of the ``cache`` call option (SEP-2549).
_CACHE_MODES = {"use": 0, "refresh": 1, "bypass": 2}


def _ms(seconds: float | None, what: str) -> int:
    """Seconds to the options' milliseconds: None -> 0 (the default), inf -> -1 (none)."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{what} must be a number of seconds or None")
    if math.isinf(seconds) and seconds > 0:
        return -1
    if not seconds > 0:
        raise ValueError(f"{what} must be positive (seconds), math.inf for none, or None for the default")
    ms = max(1, int(round(seconds * 1000)))
    if ms > _ffi.MCP_MAX_TIMEOUT_MS:
        # Refused, never wrapped: the C field is a 64-bit integer of milliseconds.
        raise ValueError(f"{what} is {seconds} s; the most is {_ffi.MCP_MAX_TIMEOUT_MS // 1000} s, math.inf for none")
    return ms


class _Opts:
    """Builds an ``mcp_call_opts`` (or NULL) and keeps everything it points to alive."""

    __slots__ = ("struct", "keep", "ref")

    def __init__(
        self,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
        progress: Callable[[float, float | None, str | None], Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        max_total: float | None = None,
        reset_timeout_on_progress: bool = False,
        cache: str | None = None,
        validate_output: bool | None = None,
    ):
        self.keep: list[Any] = []
        # What the call passes: NULL, or the struct's address (an attribute, not a property:
        # read on every call's path).
        self.ref: Any = None
        if (
            (timeout, cancel, progress, meta, log_level, max_total, cache, validate_output) == (None,) * 8
            and not reset_timeout_on_progress
        ):
            self.struct = None
            return
        o = _ffi.mcp_call_opts()
        st = lib.mcp_call_opts_init(ctypes.byref(o), _ffi.MCP_CALL_OPTS_VERSION)
        if st != _ffi.MCP_OK:  # a library older than this binding's header
            raise take_error(st, new_error_ptr())
        o.timeout_ms = _ms(timeout, "timeout")
        o.max_total_ms = max(0, _ms(max_total, "max_total"))
        o.reset_timeout_on_progress = bool(reset_timeout_on_progress)
        if cancel is not None:
            if not isinstance(cancel, CancelToken):
                raise TypeError("cancel must be a CancelToken")
            o.cancel = cancel._ptr
            self.keep.append(cancel)
        if meta is not None:
            meta_json = json.dumps(dict(meta)).encode("utf-8")
            o.meta_json = meta_json
            self.keep.append(meta_json)
        if log_level is not None:
            level = _enc(log_level, "log_level")
            o.log_level = level
            self.keep.append(level)
        if progress is not None:
            thunk = _callbacks.progress_thunk(progress)
            o.on_progress = thunk
            self.keep.append(thunk)
        if cache is not None:
            if cache not in _CACHE_MODES:
                raise ValueError(f"cache must be one of {', '.join(_CACHE_MODES)}, not {cache!r}")
            o.cache_mode = _CACHE_MODES[cache]
        if validate_output is not None:
            o.skip_output_validation = not validate_output
        self.struct = o
        self.ref = ctypes.byref(o)

    @classmethod
    def of(cls, kw: dict[str, Any]) -> "_Opts":
        if not kw:
            return _NO_OPTS  # every option at its default: NULL options, nothing to keep
        unknown = set(kw) - _OPT_KEYS
        if unknown:
            raise TypeError(f"unknown call option(s): {', '.join(sorted(unknown))}")
        return cls(**kw)


_NO_OPTS = _Opts()


_LIVE: "weakref.WeakSet[Client]" = weakref.WeakSet()

# Functions called with each Client once it is made (mcp_client.otel's global instrumentation).
NEW_CLIENT_HOOKS: "list[Callable[[Client], None]]" = []

# The operation a call is about to start, ``(method, tool / prompt / URI or None)``, set around
# the library call while ``OPERATION_WANTED[0]`` is true (an mcp_client.otel bridge is
# attached), so that the trace-context source, asked on the calling thread in the caller's
# context when the operation starts, can name the span it starts and find the caller's
# ``execute_tool`` span. Otherwise the calls pay one list read.
OPERATION: "contextvars.ContextVar[tuple[str, str | None] | None]" = contextvars.ContextVar(
    "mcp_client_operation", default=None
)
OPERATION_WANTED = [False]
# True around a hub's call (set with OPERATION): the member requests it sends may differ from
# the operation named (a routed tool call lists its member's tools first, and the tool has its
# own name on its member), so a span started for one is named from its record alone.
ROUTED: "contextvars.ContextVar[bool]" = contextvars.ContextVar("mcp_client_routed", default=False)
LIST_METHODS = {
    _ffi.MCP_LIST_TOOLS: "tools/list",
    _ffi.MCP_LIST_PROMPTS: "prompts/list",
    _ffi.MCP_LIST_RESOURCES: "resources/list",
    _ffi.MCP_LIST_RESOURCE_TEMPLATES: "resources/templates/list",
}

_LIVE_LOCK = threading.Lock()


class Client:
    """An MCP client over one connection (stdio child process or Streamable HTTP).

    Thread-safe: calls from several threads are multiplexed over the connection. Blocking calls
    release the GIL. Handlers and listeners run on the library's dispatcher thread, one at a
    time; a blocking call on the same client from inside one raises ReentrantCallError.

    Use it as a context manager, or call :meth:`close`. Live clients are closed at interpreter
    exit. Construct with :meth:`stdio`, :meth:`http`, or ``Client(config_dict)`` with the
    library's flat JSON configuration: its keys are typed by :class:`mcp_client.Config` (a
    TypedDict generated from include/mcp_client.config.schema.json).
    """

    def __init__(self, config: Config):
        cfg_json = json.dumps({k: v for k, v in dict(config).items() if v is not None}).encode("utf-8")
        err = new_error_ptr()
        cfg = ctypes.POINTER(_ffi.mcp_config)()
        st = lib.mcp_config_new(cfg_json, ctypes.byref(cfg), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        try:
            ptr = ctypes.POINTER(_ffi.mcp_client)()
            err = new_error_ptr()
            st = lib.mcp_client_new(cfg, ctypes.byref(ptr), ctypes.byref(err))
            if st != _ffi.MCP_OK:
                raise take_error(st, err)
        finally:
            lib.mcp_config_free(cfg)
        self._life = Lifetime(ptr, lib.mcp_client_free, "client")
        self._deferred: dict[int, tuple[Any, Any]] = {}
        self._deferred_lock = threading.Lock()
        self._era: str | None = None
        self._server_info: dict[str, Any] | None = None
        with _LIVE_LOCK:
            _LIVE.add(self)
        # Logs go to Python's logging unless on_log replaces this (nothing is lost by default).
        self.on_log(None)
        for hook in list(NEW_CLIENT_HOOKS):
            hook(self)

    # ----- construction -----

    @classmethod
    def stdio(
        cls,
        command: str,
        args: "list[str] | tuple[str, ...]" = (),
        env: Mapping[str, str] | None = None,
        env_mode: str | None = None,
        cwd: str | None = None,
        **settings: Any,
    ) -> "Client":
        """A client that starts ``command args...`` and speaks MCP over its stdin/stdout.

        ``env_mode``: None or "allowlist" (the default: the server gets only HOME, LOGNAME, PATH,
        SHELL, TERM, USER, LANG and LC_* from this process, plus ``env``), "inherit" (the whole
        environment) or "replace" (only ``env``).

        ``settings`` go into the configuration unchanged: ``mode`` ("auto", "modern", "legacy"),
        ``protocol_version``, ``request_timeout_ms``, ``probe_timeout_ms``,
        ``input_required_max_rounds``, ``max_pages``, ``client_info``, ``capabilities``,
        ``max_message_bytes``, ``stderr_tail_lines``, ``shutdown_grace_ms``,
        ``connect_timeout_ms`` (default 60000), ``reconnect`` (opt-in policy, see
        :meth:`on_connection_state`), ``skills`` (True declares the skills extension), ``tasks``
        (True declares the tasks extension: a ``call_tool`` answered with a task follows it to
        its result), ``manual_input`` (kinds declared without a handler and answered by hand:
        ``["elicitation", "elicitation.url", "sampling", "roots"]``), ``runtime`` ("isolated", the
        default: the client owns a runtime thread and a callback thread; "shared": it uses the
        process-wide runtime and callback threads, so threads stay flat over many clients; all
        shared clients' callbacks then run one at a time on one thread).
        Unknown keys raise InvalidArgumentError.
        """
        config: dict[str, Any] = {
            "command": command,
            "args": [str(a) for a in args],
            "env": dict(env) if env is not None else None,
            "env_mode": env_mode,
            "cwd": None if cwd is None else str(cwd),
        }
        config.update(settings)
        # settings are untyped keyword arguments: the library checks them (InvalidArgumentError).
        return cls(cast(Config, config))

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        oauth: OAuthConfig | None = None,
        **settings: Any,
    ) -> "Client":
        """A client for a Streamable HTTP server at ``url``; ``settings`` as for :meth:`stdio`.

        ``bearer_token`` is a static token. ``oauth`` (a dict, possibly empty) enables OAuth 2.1
        authorization instead; its keys (all optional) are typed by :class:`mcp_client.OAuthConfig`
        (``grant``, ``client_id``, ``client_secret``, ``issuer``, ``scopes``, ...). They are checked when the client is created (InvalidArgumentError). The browser step of the
        authorization-code grant goes through :meth:`on_authorization`.
        """
        if oauth is not None and not isinstance(oauth, Mapping):
            raise TypeError("oauth must be a dict of OAuth settings (or None)")
        config: dict[str, Any] = {
            "url": url,
            "headers": dict(headers) if headers is not None else None,
            "bearer_token": bearer_token,
        }
        if oauth is not None:
            config["oauth"] = dict(oauth)
        config.update(settings)
        return cls(cast(Config, config))

    # ----- plumbing -----

    def _run(self, body: Callable[[Any, Any, Any], int], *, result: bool = True) -> Any:
        err = ERR_PTR()
        out = ctypes.c_void_p()
        life = self._life
        ptr = life.acquire()
        try:
            st = body(ptr, ctypes.byref(out), ctypes.byref(err))
        finally:
            life.release()
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        return _take_json(out) if result else None

    def _obj(self, body: Callable[[Any, Any, Any], int]) -> dict[str, Any]:
        """``_run`` for the calls whose result is a JSON object."""
        result: dict[str, Any] = self._run(body)
        return result

    def _deferred_add(self, reply: Any, future: Any) -> None:
        with self._deferred_lock:
            self._deferred[id(reply)] = (reply, future)
        if self._life.closing:
            self._abandon_deferred()

    def _deferred_done(self, reply: Any) -> None:
        with self._deferred_lock:
            self._deferred.pop(id(reply), None)

    def _abandon_deferred(self) -> None:
        with self._deferred_lock:
            pending = list(self._deferred.values())
            self._deferred.clear()
        for reply, future in pending:
            try:
                future.cancel()  # tells the answering side that nobody waits any more
            except BaseException:  # noqa: BLE001
                pass
            reply.error(_ffi.MCP_JSONRPC_INTERNAL_ERROR, "the client was closed")

    # ----- lifecycle -----

    def connect(self, **opts: Any) -> dict[str, Any]:
        """Starts the server (or opens the connection) and settles the era. Idempotent.
        Returns the server info: ``{"era", "protocolVersion", "capabilities", "serverInfo",
        "instructions", "raw"}``. Other calls connect lazily. Options as for call_tool:
        ``cancel``, and ``timeout``/``max_total`` capping the whole connect, end this wait (the
        attempt goes on for later calls, bounded by the configured timeouts)."""
        o = _Opts.of(opts)
        info = self._obj(lambda c, out, err: lib.mcp_client_connect(c, o.ref, out, err))
        self._server_info = info
        self._era = self.era
        return info

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server info of :meth:`connect`, or None before connecting."""
        if self._server_info is None and self.era is not None:
            try:
                self._server_info = self._run(lambda c, out, err: lib.mcp_client_server_info(c, out, err))
            except ClosedError:
                pass
        return self._server_info

    @property
    def era(self) -> str | None:
        """"modern", "legacy", or None before connecting."""
        try:
            with Use(self._life, closing_ok=True) as ptr:
                era = _ERAS.get(lib.mcp_client_era(ptr))
        except ClosedError:
            return self._era
        if era is not None:
            self._era = era
        return era

    def set_cache_partition(self, partition: str) -> None:
        """The authorization context (e.g. issuer plus subject) the response cache files
        ``private`` entries under; a new value drops the old context's private entries, while
        ``public`` entries stay shared."""
        p = _enc(partition, "partition")
        self._run(lambda c, out, err: lib.mcp_client_set_cache_partition(c, p, err), result=False)

    def clear_cache(self) -> None:
        """Empties the response cache (SEP-2549)."""
        self._run(lambda c, out, err: lib.mcp_client_clear_cache(c, err), result=False)

    def clear_era_cache(self) -> None:
        """Forgets the eras ``auto`` detected per HTTP origin (the process's cache by default),
        so the next connect to such an origin probes ``server/discover`` again."""
        self._run(lambda c, out, err: lib.mcp_client_clear_era_cache(c, err), result=False)

    @property
    def dropped_callbacks(self) -> int:
        """Listener and progress callbacks dropped, not run, because 4096 already waited
        (callbacks slower than the server's flow); 0 once closed."""
        try:
            with Use(self._life, closing_ok=True) as ptr:
                return int(lib.mcp_client_dropped_callbacks(ptr))
        except ClosedError:
            return 0

    @property
    def closed(self) -> bool:
        return self._life.closing

    def close(self, wait: float | None = None) -> None:
        """Closes the connection: calls in flight raise ClosedError, subscriptions end, the
        server is shut down. Idempotent; any thread, handlers included. The library handle is
        freed as soon as no call is using it (then no callback runs again); ``wait`` seconds
        (None: do not wait) bounds waiting for that."""
        first = self._life.mark_closing()
        if first:
            try:
                ptr = self._life.acquire(closing_ok=True)
            except ClosedError:
                ptr = None
            if ptr is not None:
                try:
                    lib.mcp_client_close(ptr)
                finally:
                    self._life.release()
            self._abandon_deferred()
        if wait is not None:
            self._life.wait_freed(wait)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if getattr(self, "_life", None) is not None:
                self.close()
        except BaseException:  # noqa: BLE001
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else (self._era or "not connected")
        return f"<mcp_client.Client {state}>"

    # ----- handlers and listeners -----

    def _set_input(self, setter: Any, kind: str, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        if fn is not None and not callable(fn):
            raise TypeError(f"the {kind} handler must be callable or None")
        key = None if fn is None else _callbacks.register(_callbacks.InputEntry(fn, kind, self))
        self._install(
            key,
            lambda ptr, err: setter(
                ptr,
                _callbacks.INPUT_THUNK if fn is not None else _ffi.mcp_input_fn(),  # NULL: unregister
                key,
                _callbacks.FREE_THUNK if fn is not None else _ffi.mcp_userdata_free_fn(),
                err,
            ),
        )
        return fn

    def _install(self, key: Any, native: Callable[[Any, Any], int]) -> None:
        """Runs ``native(ptr, err)``, a registration taking the callback registered under
        ``key`` (None: removing one). A closed client unregisters ``key`` and raises; on failure
        the library already ran the userdata's free function."""
        try:
            ptr = self._life.acquire()
        except ClosedError:
            if key is not None:
                _callbacks.unregister(key)
            raise
        try:
            err = new_error_ptr()
            st = native(ptr, ctypes.byref(err))
        finally:
            self._life.release()
        if st != _ffi.MCP_OK:
            raise take_error(st, err)

    def on_elicitation(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Handles ``elicitation/create`` (declares the ``elicitation`` capability; register
        before connecting). ``fn(params) -> dict | None | Future``: a dict is the
        ElicitResult (``{"action": "accept", "content": {...}}``), None declines, a Future
        (e.g. :class:`Deferred`) answers later from any thread; raising fails the input
        (modern servers: the call raises HandlerError). ``None`` unregisters. Usable as a
        decorator."""
        return self._set_input(lib.mcp_client_on_elicitation, "elicitation", fn)

    def on_elicitation_modes(
        self, fn: Callable[[dict[str, Any]], Any] | None, *, form: bool = False, url: bool = False
    ) -> Any:
        """As :meth:`on_elicitation`, for exactly the modes chosen, which are what the client
        declares: ``url=True`` alone declares ``elicitation: {"url": {}}`` and hands URL-mode
        requests (``{"mode": "url", "message", "url"}``; legacy adds ``elicitationId``) to
        ``fn``, whose ``accept`` carries no content (any is dropped); ``form=True, url=True``
        declares both. A request in a mode not chosen never reaches ``fn``: servers that check
        capabilities answer -32021 (CapabilityMissingError), others leave it to the host
        (InputRequiredError with it in ``unanswered``). No mode, or a mode the configuration's
        ``capabilities`` override does not declare, raises InvalidArgumentError (a ValueError)
        and registers nothing. None removes the handler."""
        modes = (_ffi.MCP_ELICITATION_FORM if form else 0) | (_ffi.MCP_ELICITATION_URL if url else 0)

        def setter(ptr: Any, thunk: Any, key: Any, free: Any, err: Any) -> int:
            if fn is None:
                return int(lib.mcp_client_on_elicitation(ptr, thunk, key, free, err))
            return int(lib.mcp_client_on_elicitation_modes(ptr, modes, thunk, key, free, err))

        return self._set_input(setter, "elicitation", fn)

    def on_sampling(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Handles ``sampling/createMessage`` (a CreateMessageResult dict); as on_elicitation,
        except that None is a failure. With ``sampling_tools=True`` in the configuration the
        client declares ``sampling.tools`` (SEP-1577): the params may carry ``tools`` and
        ``toolChoice``, and the answer ``tool_use`` blocks, each naming an offered tool with an
        ``id`` and an object ``input`` (anything else fails the call). Sampling is deprecated by
        the 2026-07-28 specification (SEP-2577, removal no earlier than the first release after
        2027-07-28); it keeps working, on both eras."""
        return self._set_input(lib.mcp_client_on_sampling, "sampling", fn)

    def on_roots(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Handles ``roots/list`` (``{"roots": [{"uri": ..., "name": ...}]}``); as on_sampling.
        Roots are deprecated by the 2026-07-28 specification (SEP-2577); they keep working."""
        return self._set_input(lib.mcp_client_on_roots, "roots", fn)

    def _set_listener(self, setter: Any, thunk: Any, kind: str, fn: Callable[..., Any] | None) -> Any:
        if fn is not None and not callable(fn):
            raise TypeError(f"the {kind} listener must be callable or None")
        key = None if fn is None else _callbacks.register(_callbacks.ListenerEntry(fn, kind))
        self._install(
            key,
            lambda ptr, err: setter(
                ptr,
                thunk if fn is not None else type(thunk)(),  # NULL: remove
                key,
                _callbacks.FREE_THUNK if fn is not None else _ffi.mcp_userdata_free_fn(),
                err,
            ),
        )
        return fn

    def set_trace_context(self, fn: Callable[[], Mapping[str, str] | None] | None) -> Any:
        """``fn()`` gives the current W3C trace context (SEP-414) as a dict with
        ``traceparent`` and optionally ``tracestate`` and ``baggage`` (or None/empty for none);
        it is asked on the calling thread at the start of each call that has no trace members
        in its own ``meta``, and what it gives goes on every request of the call (MRTR retries,
        task polls, pages, the retry after a reconnect). An invalid value fails the call with
        InvalidArgumentError. ``mcp_client.opentelemetry_context`` gives OpenTelemetry's
        current context. ``None`` removes it."""
        return self._set_listener(lib.mcp_client_set_trace_context_fn, _callbacks.TRACE_THUNK, "trace context", fn)

    def on_notification(self, fn: Callable[[str, Any], Any] | None) -> Any:
        """``fn(method, params)`` for every server notification except progress (list_changed,
        resources/updated, message, ...). Runs on the dispatcher thread; exceptions are logged."""
        return self._set_listener(
            lib.mcp_client_set_notification_handler, _callbacks.NOTIFICATION_THUNK, "notification", fn
        )

    def on_log(self, fn: Callable[[str, str, str], Any] | None) -> Any:
        """``fn(level, source, message)``: the server's stderr lines (level "info", source
        "stderr") and the library's warnings (level "warning", source "transport" or "client").
        Replaces the default, which sends them to Python's ``logging``: the server's stderr on
        the ``mcp_client.server`` logger (INFO), the library's on ``mcp_client.<source>``
        (WARNING). ``None`` restores that default. Runs on the dispatcher thread; usable as a
        decorator."""
        if fn is None:
            self._set_listener(lib.mcp_client_set_log_handler, _callbacks.LOG_THUNK, "log", _callbacks.log_to_logging)
            return None
        return self._set_listener(lib.mcp_client_set_log_handler, _callbacks.LOG_THUNK, "log", fn)

    def on_connection_state(self, fn: Callable[[str, int, str], Any] | None) -> Any:
        """``fn(state, attempt, detail)`` when the connection changes: ``"connected"`` (each
        successful connect), and with a ``reconnect`` policy in the configuration
        (``{"max_attempts": 5, "initial_backoff_ms": 100, "max_backoff_ms": 5000}``)
        ``"disconnected"`` (detail: why), ``"reconnecting"`` (attempt 1, 2, ...) and ``"failed"``
        (detail: the last error). Runs on the dispatcher thread, in order."""
        return self._set_listener(lib.mcp_client_on_connection_state, _callbacks.STATE_THUNK, "connection-state", fn)

    def on_tool_pin(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Tool pinning (``tool_pinning`` in the configuration): ``fn(event)`` for each changed,
        new or removed tool, ``event`` a dict with ``server``, ``tool``, ``change`` (``"new"``,
        ``"changed"``, ``"removed"``), ``policy``, ``old``, ``new`` and ``diff`` (one line per
        changed place). Under policy ``"ask"`` a true return approves the new definition, false
        withholds the tool; otherwise the return is ignored. Runs on the dispatcher thread; the
        listing waits for it. Raises UnsupportedError when pinning is off; usable as a decorator."""
        return self._set_listener(lib.mcp_client_on_tool_pin, _callbacks.TOOL_PIN_THUNK, "tool pin", fn)

    def tool_pins(self) -> dict[str, Any]:
        """The pins of this client's server: ``{"server", "policy", "tools": [{"name", "digest",
        "definition", "state", "pending"?}]}``; ``state`` is ``pinned``, ``changed``, ``withheld``,
        ``removed`` or ``new``. Reads the pin store; sends nothing."""
        return self._obj(lambda c, out, err: lib.mcp_client_tool_pins(c, out, err))

    def approve_tool_pin(self, tool: str) -> None:
        """Pins the last listed definition of ``tool`` (changed or new): it is listed and
        callable again. InvalidArgumentError when no definition of it waits."""
        t = _enc(tool, "tool")
        self._run(lambda c, out, err: lib.mcp_client_approve_tool_pin(c, t, err), result=False)

    def forget_tool_pin(self, tool: str | None = None) -> None:
        """Forgets the pin of ``tool`` (pinned afresh when next listed), or with None every pin
        of this server (the next listing is pinned as a first use)."""
        t = None if tool is None else _enc(tool, "tool")
        self._run(lambda c, out, err: lib.mcp_client_forget_tool_pin(c, t, err), result=False)

    def on_task_status(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """Tasks extension (``tasks=True`` in the configuration): ``fn(task)`` with the task dict
        (``taskId``, ``status``, ``statusMessage``, ``pollIntervalMs``, ``ttlMs``, ...) when a
        call's task is created and whenever its status changes. Keep ``taskId`` to resume the
        task later (:meth:`resume_task`), even from another process. Runs on the dispatcher
        thread; usable as a decorator."""
        return self._set_listener(lib.mcp_client_on_task_status, _callbacks.TASK_THUNK, "task-status", fn)

    def on_span(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """``fn(span)`` once per MCP operation this client sends, after it ended: a dict with
        the OpenTelemetry MCP conventions' CLIENT span (``name`` such as ``"tools/call echo"``,
        ``kind``, ``start_unix_nano``, ``end_unix_nano``, ``attributes`` keyed
        ``mcp.method.name``, ``gen_ai.tool.name``, ``error.type``, ..., ``events`` for MRTR
        rounds, task polls and reconnect retries, ``status``). Runs on the dispatcher thread;
        ``None`` unregisters (nothing is built then). Usable as a decorator."""
        return self._set_listener(lib.mcp_client_on_span, _callbacks.SPAN_THUNK, "span", fn)

    # ----- OAuth -----

    def on_authorization(self, fn: Callable[[str, "str | None"], Any] | None) -> Any:
        """Handles the browser step of an OAuth authorization-code flow (the ``oauth``
        configuration). ``fn(authorization_url, redirect_uri)`` opens ``authorization_url`` in
        a browser and returns:

        - the full URL the browser was redirected to (a str; the library checks its ``state``
          and ``iss`` and exchanges the code),
        - ``None`` when the built-in loopback listener receives the redirect (``oauth`` has no
          ``redirect_uri``): the callback just opened the browser,
        - a ``concurrent.futures.Future`` (or :class:`Deferred`) completed later from any
          thread with that URL (a str; anything else, ``set_exception`` or ``cancel()`` fails
          the authorization).

        Raising fails the authorization: the waiting call raises AuthRequiredError carrying the
        exception's text. Runs on the dispatcher thread (:func:`fetch_redirect` may be called
        from it). ``None`` unregisters. Usable as a decorator.
        """
        if fn is not None and not callable(fn):
            raise TypeError("the authorization callback must be callable or None")
        key = None if fn is None else _callbacks.register(_callbacks.AuthEntry(fn, self))
        self._install(
            key,
            lambda ptr, err: lib.mcp_client_on_authorization(
                ptr,
                _callbacks.AUTHORIZATION_THUNK if fn is not None else _ffi.mcp_authorization_fn(),  # NULL
                key,
                _callbacks.FREE_THUNK if fn is not None else _ffi.mcp_userdata_free_fn(),
                err,
            ),
        )
        return fn

    def set_token_store(
        self,
        load: Callable[[str], "Mapping[str, Any] | None"] | None = None,
        save: Callable[[str, "dict[str, Any] | None"], Any] | None = None,
    ) -> None:
        """Keeps OAuth credentials in the host's store (a keychain, a file) instead of memory:
        one record per authorization-server issuer. ``load(issuer)`` returns the record saved
        for that issuer (a dict, exactly as received) or None; ``save(issuer, record)`` stores
        it (``record`` None: forget the issuer). Records hold client secrets and tokens: keep
        them secret. Both run on the dispatcher thread; their exceptions are logged on the
        ``mcp_client`` logger (a failing load counts as nothing stored). Give both, or neither
        to restore the in-memory default. Set it before connecting.
        """
        if (load is None) != (save is None):
            raise TypeError("give both load and save, or neither")
        if load is not None and not (callable(load) and callable(save)):
            raise TypeError("load and save must be callable")
        key = None if load is None or save is None else _callbacks.register(_callbacks.TokenStoreEntry(load, save))
        on = key is not None
        self._install(
            key,
            lambda ptr, err: lib.mcp_client_set_token_store(
                ptr,
                _callbacks.TOKEN_LOAD_THUNK if on else _ffi.mcp_token_load_fn(),
                _callbacks.TOKEN_SAVE_THUNK if on else _ffi.mcp_token_save_fn(),
                key,
                _callbacks.FREE_THUNK if on else _ffi.mcp_userdata_free_fn(),
                err,
            ),
        )

    def set_assertion_provider(self, provider: Callable[[str, str], "str | None"] | None) -> None:
        """Supplies the JWTs of the assertion grants when the ``oauth`` configuration holds none:
        ``provider(kind, audience)`` returns the workload's JWT (``kind`` ``"workload_jwt"``,
        ``"grant": "jwt_bearer"``) or the user's ID token (``"id_token"``, ``"grant":
        "enterprise"``) for ``audience`` (the authorization server or identity provider), read
        fresh each time (tokens rotate). None or an exception ends that authorization with
        AuthRequiredError. Runs on the dispatcher thread. ``None`` removes the provider.
        """
        if provider is not None and not callable(provider):
            raise TypeError("provider must be callable")
        key = None if provider is None else _callbacks.register(_callbacks.AssertionEntry(provider))
        on = key is not None
        self._install(
            key,
            lambda ptr, err: lib.mcp_client_set_assertion_provider(
                ptr,
                _callbacks.ASSERTION_THUNK if on else _ffi.mcp_assertion_fn(),
                key,
                _callbacks.FREE_THUNK if on else _ffi.mcp_userdata_free_fn(),
                err,
            ),
        )

    # ----- lists -----

    def _list(self, kind: int, cursor: str | None, opts: dict[str, Any]) -> dict[str, Any]:
        o = _Opts.of(opts)
        cur = _opt_enc(cursor, "cursor")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((LIST_METHODS.get(kind, "list"), None))
            try:
                result = call(self._life, RAW.list, kind, cur, o.ref)
            finally:
                OPERATION.reset(token)
        else:
            result = call(self._life, RAW.list, kind, cur, o.ref)
        return result

    def _list_all(self, kind: int, key: str, opts: dict[str, Any]) -> list[dict[str, Any]]:
        o = _Opts.of(opts)
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((LIST_METHODS.get(kind, "list"), None))
            try:
                res = self._run(lambda c, out, err: lib.mcp_client_list_all(c, kind, o.ref, out, err))
            finally:
                OPERATION.reset(token)
        else:
            res = self._run(lambda c, out, err: lib.mcp_client_list_all(c, kind, o.ref, out, err))
        return list(res.get(key, []))

    def list_tools(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        """One page: the raw ListToolsResult (``tools``, ``nextCursor`` when there is more)."""
        return self._list(_ffi.MCP_LIST_TOOLS, cursor, opts)

    def list_prompts(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return self._list(_ffi.MCP_LIST_PROMPTS, cursor, opts)

    def list_resources(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return self._list(_ffi.MCP_LIST_RESOURCES, cursor, opts)

    def list_resource_templates(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return self._list(_ffi.MCP_LIST_RESOURCE_TEMPLATES, cursor, opts)

    def all_tools(self, **opts: Any) -> list[dict[str, Any]]:
        """Every page of tools, merged (bounded by the ``max_pages`` setting)."""
        return self._list_all(_ffi.MCP_LIST_TOOLS, "tools", opts)

    def all_prompts(self, **opts: Any) -> list[dict[str, Any]]:
        return self._list_all(_ffi.MCP_LIST_PROMPTS, "prompts", opts)

    def all_resources(self, **opts: Any) -> list[dict[str, Any]]:
        return self._list_all(_ffi.MCP_LIST_RESOURCES, "resources", opts)

    def all_resource_templates(self, **opts: Any) -> list[dict[str, Any]]:
        return self._list_all(_ffi.MCP_LIST_RESOURCE_TEMPLATES, "resourceTemplates", opts)

    # ----- calls -----

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
        progress: Callable[[float, float | None, str | None], Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        max_total: float | None = None,
        reset_timeout_on_progress: bool = False,
        validate_output: bool | None = None,
    ) -> dict[str, Any]:
        """``tools/call``: the CallToolResult dict. A tool error is a result with
        ``isError: true``, not an exception. When the tool declared an ``outputSchema``, its
        ``structuredContent`` is checked against it (OutputSchemaError); ``validate_output=False``
        skips the check for this call.

        Input requests (MRTR) are answered by the registered handlers; without one the call
        raises InputRequiredError. Retry by hand with ``input_responses`` and
        ``request_state`` from that error. ``timeout`` and ``max_total`` are seconds (None: the
        client default / no cap; ``math.inf``: no timeout), ``cancel`` a CancelToken,
        ``progress(progress, total, message)`` a callback, ``meta`` extra ``_meta`` entries,
        ``log_level`` the modern per-request log level.

        With ``tasks=True`` a server may answer with a task, which the call follows to its end.
        ``timeout`` (else ``request_timeout_ms``) bounds that wait: when it passes the call
        raises MCPTimeoutError and ``tasks/cancel`` is sent. ``max_total`` ends the wait but
        leaves the task running for :meth:`resume_task`. Nothing polls after the call returns.
        """
        if (
            timeout is None
            and cancel is None
            and progress is None
            and meta is None
            and log_level is None
            and max_total is None
            and validate_output is None
            and not reset_timeout_on_progress
        ):
            o = _NO_OPTS  # the common case: no options object, NULL options
        else:
            o = _Opts(
                timeout,
                cancel,
                progress,
                meta,
                log_level,
                max_total,
                reset_timeout_on_progress,
                validate_output=validate_output,
            )
        n, a = _enc(name, "name"), json_arg(arguments)
        ir = None if input_responses is None else json_arg(input_responses)
        rs = None if request_state is None else _enc(request_state, "request_state")
        # o (a local) keeps what its struct points to alive until the call returns.
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("tools/call", name))
            try:
                result = call(self._life, RAW.call_tool, n, a, ir, rs, o.ref)
            finally:
                OPERATION.reset(token)
        else:
            result = call(self._life, RAW.call_tool, n, a, ir, rs, o.ref)
        return result

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        **opts: Any,
    ) -> dict[str, Any]:
        """``prompts/get``: the GetPromptResult dict. MRTR and options as for call_tool."""
        o = _Opts.of(opts)
        n, a = _enc(name, "name"), json_arg(arguments)
        ir, rs = json_arg(input_responses), _opt_enc(request_state, "request_state")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("prompts/get", name))
            try:
                result = call(self._life, RAW.get_prompt, n, a, ir, rs, o.ref)
            finally:
                OPERATION.reset(token)
        else:
            result = call(self._life, RAW.get_prompt, n, a, ir, rs, o.ref)
        return result

    def read_resource(
        self,
        uri: str,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        **opts: Any,
    ) -> dict[str, Any]:
        """``resources/read``: the ReadResourceResult dict. MRTR and options as for call_tool."""
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        ir, rs = json_arg(input_responses), _opt_enc(request_state, "request_state")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("resources/read", uri))
            try:
                result = call(self._life, RAW.read_resource, u, ir, rs, o.ref)
            finally:
                OPERATION.reset(token)
        else:
            result = call(self._life, RAW.read_resource, u, ir, rs, o.ref)
        return result

    # --- tasks extension (SEP-2663) ---

    def resume_task(self, task_id: str, **opts: Any) -> dict[str, Any]:
        """Follows task ``task_id`` to its end as a blocking ``call_tool`` does (polling at its
        ``pollIntervalMs``, input through the handlers) and returns the CallToolResult. A failed
        task raises RpcError, a cancelled one CancelledError, an unknown id RpcError -32602.
        ``timeout`` bounds the wait from this call's start as for :meth:`call_tool`."""
        o = _Opts.of(opts)
        t = _enc(task_id, "task_id")
        return self._obj(lambda c, out, err: lib.mcp_client_resume_task(c, t, o.ref, out, err))

    def get_task(self, task_id: str, **opts: Any) -> dict[str, Any]:
        """One ``tasks/get``: the task as the server has it now."""
        o = _Opts.of(opts)
        t = _enc(task_id, "task_id")
        return self._obj(lambda c, out, err: lib.mcp_client_get_task(c, t, o.ref, out, err))

    def cancel_task(self, task_id: str, **opts: Any) -> None:
        """``tasks/cancel`` (cooperative; the task then ends as ``cancelled``)."""
        o = _Opts.of(opts)
        t = _enc(task_id, "task_id")
        self._run(lambda c, out, err: lib.mcp_client_cancel_task(c, t, o.ref, err), result=False)

    def update_task(self, task_id: str, input_responses: Mapping[str, Any], **opts: Any) -> None:
        """``tasks/update`` with answers gathered by hand (after InputRequiredError from a task);
        then :meth:`resume_task`."""
        o = _Opts.of(opts)
        t, r = _enc(task_id, "task_id"), json_arg(dict(input_responses))
        self._run(lambda c, out, err: lib.mcp_client_update_task(c, t, r, o.ref, err), result=False)

    # --- skills extension (SEP-2640) ---

    def list_skills(self, **opts: Any) -> dict[str, Any]:
        """Every page of ``skills/list``, checked: ``{"skills": [entry, ...], "rejected": [{"uri",
        "reason", "entry"}, ...]}``. Reads no skill file. Raises UnsupportedError when the server
        did not declare ``io.modelcontextprotocol/skills``. Identify a skill by (server, uri).
        Pass ``skills=True`` when creating the client to declare the extension to servers."""
        o = _Opts.of(opts)
        return self._obj(lambda c, out, err: lib.mcp_client_list_skills(c, o.ref, out, err))

    def get_skill(self, uri: str, **opts: Any) -> dict[str, Any]:
        """``skills/get`` for a ``SKILL.md`` URI: the checked entry (SkillVerificationError when
        it breaks the rules)."""
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        return self._obj(lambda c, out, err: lib.mcp_client_get_skill(c, u, o.ref, out, err))

    def read_skill_file(self, entry: Mapping[str, Any], file_uri: str | None = None, **opts: Any) -> dict[str, Any]:
        """Reads one file of a skill (``None``: its ``SKILL.md``, i.e. loads the skill) and
        verifies it against ``entry`` (size, SHA-256 digest, and for ``SKILL.md`` the
        frontmatter). Returns the verified content item (``uri``, ``mimeType``, ``text`` or
        ``blob``); raises SkillVerificationError on any mismatch or for a file the entry does
        not list."""
        o = _Opts.of(opts)
        e = json_arg(dict(entry))
        f = _opt_enc(file_uri, "file_uri")
        return self._obj(lambda c, out, err: lib.mcp_client_read_skill_file(c, e, f, o.ref, out, err))

    def read_app(self, uri: str, max_bytes: int = 0, **opts: Any) -> dict[str, Any]:
        """Reads an MCP Apps view (a ``ui://`` resource named by a tool's UI link, see
        :func:`mcp_client.apps.tool_ui`) and verifies it: MIME type
        ``text/html;profile=mcp-app``, ``text`` or base64 ``blob``, at most ``max_bytes`` (0:
        4 MiB). Returns ``{"uri", "html", "meta"}`` (``meta``: the view's ``_meta.ui``).
        Raises InvalidArgumentError for a URI that is not ``ui://`` (nothing is sent), and an
        MCPError (``MCP_MESSAGE_TOO_LARGE``, ``MCP_PROTOCOL_VIOLATION``) for a view that fails a
        check. Declare the extension with ``apps=True`` in the configuration."""
        if not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError("max_bytes must be a non-negative int")
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        return self._obj(lambda c, out, err: lib.mcp_client_read_app(c, u, max_bytes, o.ref, out, err))

    def complete(self, params: Mapping[str, Any], **opts: Any) -> dict[str, Any]:
        """``completion/complete`` with ``{ref, argument, context?}``: the CompleteResult."""
        o = _Opts.of(opts)
        p = json_arg(params)
        return self._obj(lambda c, out, err: lib.mcp_client_complete(c, p, o.ref, out, err))

    def request(self, method: str, params: Mapping[str, Any] | None = None, **opts: Any) -> dict[str, Any]:
        """Any request by method name; ``params`` get the era's ``_meta``."""
        o = _Opts.of(opts)
        m, p = _enc(method, "method"), json_arg(params)
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((method, None))
            try:
                result = call(self._life, RAW.request, m, p, o.ref)
            finally:
                OPERATION.reset(token)
        else:
            result = call(self._life, RAW.request, m, p, o.ref)
        return result

    def ping(self, **opts: Any) -> None:
        """Legacy ``ping`` (UnsupportedError on modern servers)."""
        o = _Opts.of(opts)
        self._run(lambda c, out, err: lib.mcp_client_ping(c, o.ref, err), result=False)

    def set_log_level(self, level: str, **opts: Any) -> None:
        """"debug" ... "emergency": legacy ``logging/setLevel``; modern servers get it in the
        ``_meta`` of every later request. Logging is deprecated by the 2026-07-28 specification
        (SEP-2577); it keeps working, on both eras."""
        o = _Opts.of(opts)
        lv = _enc(level, "level")
        self._run(lambda c, out, err: lib.mcp_client_set_log_level(c, lv, o.ref, err), result=False)

    def subscribe_resource(self, uri: str, **opts: Any) -> None:
        """Legacy ``resources/subscribe``; updates reach :meth:`on_notification` (modern: use
        :meth:`listen`)."""
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        self._run(lambda c, out, err: lib.mcp_client_subscribe_resource(c, u, o.ref, err), result=False)

    def unsubscribe_resource(self, uri: str, **opts: Any) -> None:
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        self._run(lambda c, out, err: lib.mcp_client_unsubscribe_resource(c, u, o.ref, err), result=False)

    def notify_roots_changed(self) -> None:
        """Tells a legacy server the roots changed (no-op on modern servers)."""
        self._run(lambda c, out, err: lib.mcp_client_notify_roots_changed(c, err), result=False)

    def listen(self, filter: Mapping[str, Any], **opts: Any) -> "Subscription":
        """Opens ``subscriptions/listen`` (modern servers), e.g.
        ``{"toolsListChanged": True, "resourceSubscriptions": ["file:///x"]}``, and waits for
        the acknowledgement."""
        o = _Opts.of(opts)
        f = json_arg(dict(filter))
        sub = ctypes.POINTER(_ffi.mcp_subscription)()

        def body(c: Any, _out: Any, err: Any) -> int:
            return int(lib.mcp_client_listen(c, f, o.ref, ctypes.byref(sub), err))

        self._run(body, result=False)
        return Subscription(sub, self)


def fetch_redirect(authorization_url: str, timeout: float | None = None) -> str:
    """FOR TESTS AND AUTOMATION ONLY: GETs ``authorization_url`` once, without following
    redirects, and returns the absolute URL of its redirect (``Location``). Against an
    authorization server that redirects at once (no login page, e.g. the fixture server's or
    the conformance suite's), an authorization callback can return this; a real host opens a
    browser instead. Blocking, ``timeout`` seconds (None: 30 s); fine from an authorization
    callback. Raises TransportError (with ``http_status``) when the answer is not a redirect.
    """
    url = _enc(authorization_url, "authorization_url")
    ms = _ms(timeout, "timeout")
    out = ctypes.c_void_p()
    err = new_error_ptr()
    st = lib.mcp_auth_fetch_redirect(url, ms, ctypes.byref(out), ctypes.byref(err))
    if st != _ffi.MCP_OK:
        raise take_error(st, err)
    raw = _take_string(out)
    return "" if raw is None else raw.decode("utf-8")


class Subscription:
    """A ``subscriptions/listen`` stream. Iterate it (ends when the subscription ends), or poll
    with :meth:`next`. One reader at a time; :meth:`cancel` and :meth:`close` from any thread
    (not from handlers: they block briefly)."""

    def __init__(self, ptr: Any, client: Client):
        self._life = Lifetime(ptr, lib.mcp_subscription_free, "subscription")
        self._client = client  # keeps the client (and its connection) alive while listening
        err = new_error_ptr()
        out = ctypes.c_void_p()
        st = lib.mcp_subscription_acknowledged(ptr, ctypes.byref(out), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        self.acknowledged: dict[str, Any] = _take_json(out)

    def next(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next notification ``{"method": ..., "params": ...}``, waiting up to ``timeout``
        seconds (None: no limit); None when none arrived in time. Raises ClosedError once the
        subscription ended gracefully, CancelledError after :meth:`cancel`, another MCPError if
        it ended with an error."""
        ms = -1 if timeout is None or math.isinf(timeout) else max(0, int(round(timeout * 1000)))
        if ms > _ffi.MCP_MAX_TIMEOUT_MS:
            raise ValueError(f"timeout is {timeout} s; the most is {_ffi.MCP_MAX_TIMEOUT_MS // 1000} s, None for none")
        err = new_error_ptr()
        out = ctypes.c_void_p()
        with Use(self._life) as ptr:
            st = lib.mcp_subscription_next(ptr, ms, ctypes.byref(out), ctypes.byref(err))
        if st == _ffi.MCP_OK:
            note: dict[str, Any] = _take_json(out)
            return note
        exc = take_error(st, err)
        if isinstance(exc, MCPTimeoutError):
            return None
        raise exc

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        try:
            event = self.next(None)
        except (ClosedError, CancelledError):
            raise StopIteration from None
        if event is None:  # pragma: no cover - no timeout was given
            raise StopIteration
        return event

    def cancel(self) -> None:
        """Ends the subscription (the server is told); readers stop."""
        err = new_error_ptr()
        try:
            with Use(self._life) as ptr:
                st = lib.mcp_subscription_cancel(ptr, ctypes.byref(err))
        except ClosedError:
            return
        if st != _ffi.MCP_OK:
            exc = take_error(st, err)
            if not isinstance(exc, (ClosedError, CancelledError)):
                raise exc

    def close(self) -> None:
        """Cancels and frees (the free waits until no reader is inside :meth:`next`)."""
        if not self._life.mark_closing():
            return
        try:
            ptr = self._life.acquire(closing_ok=True)
        except ClosedError:
            return
        try:
            err = new_error_ptr()
            if lib.mcp_subscription_cancel(ptr, ctypes.byref(err)) != _ffi.MCP_OK:
                lib.mcp_error_free(err)
        finally:
            self._life.release()  # frees it when no reader remains

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if getattr(self, "_life", None) is not None:
                self.close()
        except BaseException:  # noqa: BLE001
            pass


def _close_all_at_exit() -> None:
    """Closes and frees every live client before the interpreter finalises, so no library
    thread calls into Python during finalisation."""
    with _LIVE_LOCK:
        clients = list(_LIVE)
    for c in clients:
        try:
            c.close(wait=2.0)
        except BaseException:  # noqa: BLE001
            pass


atexit.register(_close_all_at_exit)


__all__ = ["Client", "Subscription", "CancelToken", "fetch_redirect"]
