"""AsyncClient: asyncio over the C ABI's started calls, with no thread per call.

    async with AsyncClient.stdio("my-mcp-server") as client:
        client.on_elicitation(ask_user)            # def or async def
        results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))

The client runs in the library's host-loop mode: every callback (completions, input handlers,
listeners, progress) is queued by the library and run on the event loop's thread when the
loop sees the client's descriptor readable (``loop.add_reader``) and calls
``mcp_client_dispatch``. On loops without ``add_reader`` (Windows' Proactor) a wakeup callback
schedules the dispatch with ``call_soon_threadsafe`` instead. So no Python code runs on a
library thread, and a started call costs a future and a dict entry.

Each started call's userdata is an integer key into ``_PENDING``; the one module-level
``mcp_call_done_fn`` thunk settles the call's future. Cancelling the awaiting task cancels the
call (``mcp_call_cancel``: the server is told); the library still completes it exactly once,
and only then is the entry dropped (what the call's options point to stays alive until then).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import inspect
import itertools
import math
from typing import Any, Callable, Mapping

from . import _ffi
from ._client import (
    _NO_OPTS,
    LIST_METHODS,
    OPERATION,
    OPERATION_WANTED,
    Client,
    Subscription,
    _enc,
    _Opts,
    _opt_enc,
)
from ._config import Config, OAuthConfig
from ._errors import CancelledError, ClosedError, MCPTimeoutError, new_error_ptr, take_error
from ._library import lib
from ._percall import ERR_PTR, RAW, Lifetime, Use, invoke, json_arg, loads


# Started calls by userdata key: the future to settle, and (only for calls with options) what
# the options point to, kept alive until the completion.
_PENDING: dict[int, "asyncio.Future[bytes]"] = {}
_KEEP: dict[int, Any] = {}
_KEYS = itertools.count(1)

# mcp_call_done_fn as this module receives it: the error as a plain address (an mcp_error
# pointer object is made only on failure, not for every result). Same C signature.
_done_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)


def _done_trampoline(userdata: int | None, status: int, result: bytes | None, _len: int, error: int | None) -> None:
    # Runs on the loop's thread, inside mcp_client_dispatch (host-loop mode).
    try:
        key = userdata or 0
        fut = _PENDING.pop(key, None)
        if _KEEP:
            _KEEP.pop(key, None)
        if fut is None or fut.done():  # cancelled by its task: nothing to settle
            return
        if status == _ffi.MCP_OK:
            fut.set_result(result or b"null")
        else:
            fut.set_exception(take_error(status, ctypes.cast(error or 0, ERR_PTR), borrowed=True))
    except BaseException:  # noqa: BLE001 - nothing may propagate into ctypes
        pass


_DONE_THUNK = _done_fn(_done_trampoline)

# (Client, loop) for the wakeup path; the key is the wakeup's userdata.
_WAKEUPS: dict[int, Callable[[], None]] = {}


def _wakeup_trampoline(userdata: int | None) -> None:
    try:
        wake = _WAKEUPS.get(userdata or 0)
        if wake is not None:
            wake()
    except BaseException:  # noqa: BLE001
        pass


def _wakeup_free(userdata: int | None) -> None:
    _WAKEUPS.pop(userdata or 0, None)


_WAKEUP_THUNK = _ffi.mcp_wakeup_fn(_wakeup_trampoline)
_WAKEUP_FREE_THUNK = _ffi.mcp_userdata_free_fn(_wakeup_free)


class AsyncClient:
    """An MCP client for asyncio. Construct with :meth:`stdio`, :meth:`http` or a config dict
    (as :class:`Client`), then ``async with`` it (or ``await aclose()``). One event loop per
    client: the loop of the first call. Calls take the same options as :class:`Client`'s
    (``timeout``, ``cancel``, ``progress``, ``meta``, ``log_level``, ``max_total``, ...)."""

    def __init__(self, config: Config | Client):
        self._client = config if isinstance(config, Client) else Client(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._fd: int | None = None
        self._closing = False

    @classmethod
    def stdio(
        cls,
        command: str,
        args: "list[str] | tuple[str, ...]" = (),
        env: Mapping[str, str] | None = None,
        env_mode: str | None = None,
        cwd: str | None = None,
        **settings: Any,
    ) -> "AsyncClient":
        """As :meth:`Client.stdio`."""
        return cls(Client.stdio(command, args, env, env_mode, cwd, **settings))

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        oauth: OAuthConfig | None = None,
        **settings: Any,
    ) -> "AsyncClient":
        """As :meth:`Client.http`."""
        return cls(Client.http(url, headers, bearer_token, oauth, **settings))

    # ----- the loop -----

    def _attach(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return loop
        if self._loop is not None:
            raise RuntimeError("this AsyncClient is bound to another event loop")
        if self._closing:
            raise ClosedError(_ffi.MCP_CLOSED, "the client is closed")
        fd = ctypes.c_int(-1)
        err = new_error_ptr()
        with Use(self._client._life) as ptr:
            st = lib.mcp_client_use_host_loop(ptr, ctypes.byref(fd), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        self._loop = loop
        try:
            loop.add_reader(fd.value, self._dispatch)
            self._fd = fd.value
        except NotImplementedError:
            # No descriptor watching on this loop: the library wakes it from its thread.
            key = next(_KEYS)

            def wake() -> None:
                loop.call_soon_threadsafe(self._dispatch)

            _WAKEUPS[key] = wake
            err = new_error_ptr()
            with Use(self._client._life) as ptr:
                st = lib.mcp_client_set_wakeup(ptr, _WAKEUP_THUNK, key, _WAKEUP_FREE_THUNK, ctypes.byref(err))
            if st != _ffi.MCP_OK:
                raise take_error(st, err)
        return loop

    def _dispatch(self) -> None:
        """Runs the queued callbacks (the descriptor is readable, or a wakeup came)."""
        life = self._client._life
        try:
            ptr = life.acquire(closing_ok=True)  # a closing client still delivers its completions
        except ClosedError:
            return
        try:
            RAW.dispatch(ptr, 0, None, None)
        finally:
            life.release()

    async def _start(
        self, start: Any, *args: Any, keep: _Opts = _NO_OPTS, life: Lifetime | None = None, outs: tuple[Any, ...] = ()
    ) -> Any:
        """Starts ``start(handle, *args, done, userdata, *outs, &call, &err)`` (one of ``RAW``'s
        functions, C-ready arguments; the handle is ``life``'s, by default the client's) and
        awaits its completion: the result's JSON value."""
        loop = self._attach()
        fut: asyncio.Future[bytes] = loop.create_future()
        key = next(_KEYS)
        _PENDING[key] = fut
        if keep.struct is not None:
            _KEEP[key] = keep
        call = ctypes.c_void_p()
        err = ERR_PTR()
        try:
            userdata = ctypes.c_void_p(key)
            st = invoke(
                life or self._client._life, start, *args, _DONE_THUNK, userdata, *outs, ctypes.byref(call), ctypes.byref(err)
            )
        except BaseException:
            _PENDING.pop(key, None)
            _KEEP.pop(key, None)
            raise
        if st != _ffi.MCP_OK:
            _PENDING.pop(key, None)  # a refused start never completes
            _KEEP.pop(key, None)
            raise take_error(st, err)
        try:
            raw = await fut
        except asyncio.CancelledError:
            RAW.call_cancel(call)  # the completion still comes and drops the entry
            raise
        finally:
            RAW.call_free(call)
        return loads(raw)

    # ----- lifecycle -----

    async def connect(self, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.connect`."""
        o = _Opts.of(opts)
        info: dict[str, Any] = await self._start(RAW.connect_start, o.ref, keep=o)
        self._client._server_info = info
        return info

    @property
    def era(self) -> str | None:
        """As :attr:`Client.era`."""
        return self._client.era

    @property
    def server_info(self) -> dict[str, Any] | None:
        """As :attr:`Client.server_info`."""
        return self._client.server_info

    @property
    def dropped_callbacks(self) -> int:
        """As :attr:`Client.dropped_callbacks`."""
        return self._client.dropped_callbacks

    @property
    def closed(self) -> bool:
        return self._closing or self._client.closed

    async def aclose(self) -> None:
        """Closes: calls in flight raise ClosedError, the server is shut down (in an executor
        thread, so the loop keeps running), the descriptor is unwatched, the handle freed."""
        if self._closing:
            return
        self._closing = True
        loop = self._loop
        if loop is not None and loop.is_closed():
            loop, self._fd = None, None  # its reader went with it
        life = self._client._life
        try:
            ptr = life.acquire(closing_ok=True)
        except ClosedError:
            ptr = None
        if ptr is not None:
            try:
                if loop is not None:
                    await loop.run_in_executor(None, lib.mcp_client_close, ptr)
                else:
                    lib.mcp_client_close(ptr)
            finally:
                life.release()
        if loop is not None:
            self._dispatch()  # the MCP_CLOSED completions, here on the loop
            if self._fd is not None:
                loop.remove_reader(self._fd)  # before free closes the descriptor
                self._fd = None
        self._client.close()  # frees; leftovers (if any) complete inline on this thread

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<mcp_client.AsyncClient {'closed' if self.closed else self._client.era or 'not connected'}>"

    # ----- handlers and listeners (run on the loop) -----

    def _wrap(self, fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
        """An ``async def`` handler becomes a task on the loop and a future the library waits
        on; when the call stops wanting the answer (cancelled, timed out, closed) the library
        cancels that future, which cancels the task."""
        if fn is None:
            return None

        def handler(*args: Any) -> Any:
            result = fn(*args)
            if not inspect.iscoroutine(result):
                return result
            loop = self._loop or asyncio.get_event_loop()
            answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
            setattr(answer, "_mcp_cancel_when_unwanted", True)  # see _callbacks.InputEntry
            task = loop.create_task(result)

            def settle(t: "asyncio.Task[Any]") -> None:
                if answer.done():
                    return
                if t.cancelled():
                    answer.cancel()
                elif t.exception() is not None:
                    answer.set_exception(t.exception())
                else:
                    answer.set_result(t.result())

            task.add_done_callback(settle)
            answer.add_done_callback(lambda f: task.cancel() if f.cancelled() else None)
            return answer

        return handler

    def _listener(self, fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
        """A listener runs on the loop; an ``async def`` one becomes a task there."""
        if fn is None or not inspect.iscoroutinefunction(fn):
            return fn

        def listener(*args: Any) -> None:
            (self._loop or asyncio.get_event_loop()).create_task(fn(*args))

        return listener

    def on_elicitation(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_elicitation`; ``fn`` may be an ``async def``. Usable as a decorator."""
        self._client.on_elicitation(self._wrap(fn))
        return fn

    def on_elicitation_modes(
        self, fn: Callable[[dict[str, Any]], Any] | None, *, form: bool | None = None, url: bool | None = None
    ) -> Any:
        """As :meth:`Client.on_elicitation_modes` (a mode left at None takes that method's
        default); ``fn`` may be an ``async def``."""
        modes = {k: v for k, v in (("form", form), ("url", url)) if v is not None}
        self._client.on_elicitation_modes(self._wrap(fn), **modes)
        return fn

    def on_sampling(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_sampling`; ``fn`` may be an ``async def``."""
        self._client.on_sampling(self._wrap(fn))
        return fn

    def on_roots(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_roots`; ``fn`` may be an ``async def``."""
        self._client.on_roots(self._wrap(fn))
        return fn

    def on_authorization(self, fn: Callable[[str, "str | None"], Any] | None) -> Any:
        """As :meth:`Client.on_authorization`; ``fn`` may be an ``async def`` returning the
        redirect URL (it runs as a task on the loop)."""
        self._client.on_authorization(self._wrap(fn))
        return fn

    def set_trace_context(self, fn: Callable[[], Mapping[str, str] | None] | None) -> Any:
        """As :meth:`Client.set_trace_context`: ``fn`` runs synchronously when a call starts,
        in the calling task's context (so OpenTelemetry's current span is the task's)."""
        return self._client.set_trace_context(fn)

    def on_notification(self, fn: Callable[[str, Any], Any] | None) -> Any:
        """As :meth:`Client.on_notification` (runs on the loop; an ``async def`` becomes a task)."""
        self._client.on_notification(self._listener(fn))
        return fn

    def on_log(self, fn: Callable[[str, str, str], Any] | None) -> Any:
        """As :meth:`Client.on_log` (runs on the loop; an ``async def`` becomes a task)."""
        self._client.on_log(self._listener(fn))
        return fn

    def on_connection_state(self, fn: Callable[[str, int, str], Any] | None) -> Any:
        """As :meth:`Client.on_connection_state` (runs on the loop; an ``async def`` becomes a task)."""
        self._client.on_connection_state(self._listener(fn))
        return fn

    def on_task_status(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_task_status` (runs on the loop; an ``async def`` becomes a task)."""
        self._client.on_task_status(self._listener(fn))
        return fn

    def on_span(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_span` (runs on the loop; an ``async def`` becomes a task)."""
        self._client.on_span(self._listener(fn))
        return fn

    # ----- registrations and cache controls: they return at once, nothing to await -----

    def set_token_store(
        self,
        load: Callable[[str], "Mapping[str, Any] | None"] | None = None,
        save: Callable[[str, "dict[str, Any] | None"], Any] | None = None,
    ) -> None:
        """As :meth:`Client.set_token_store` (``load`` and ``save`` are plain functions, run on
        the loop: keep them quick)."""
        self._client.set_token_store(load, save)

    def set_assertion_provider(self, provider: Callable[[str, str], "str | None"] | None) -> None:
        """As :meth:`Client.set_assertion_provider` (a plain function, run on the loop)."""
        self._client.set_assertion_provider(provider)

    def set_cache_partition(self, partition: str) -> None:
        """As :meth:`Client.set_cache_partition`."""
        self._client.set_cache_partition(partition)

    def clear_cache(self) -> None:
        """As :meth:`Client.clear_cache`."""
        self._client.clear_cache()

    def on_tool_pin(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Client.on_tool_pin`: ``fn`` runs on the dispatcher thread, not the loop (its
        answer decides under policy ``"ask"``), so it must be a plain function."""
        self._client.on_tool_pin(fn)
        return fn

    async def tool_pins(self) -> dict[str, Any]:
        """As :meth:`Client.tool_pins` (the store is read off the loop)."""
        return await asyncio.to_thread(self._client.tool_pins)

    async def approve_tool_pin(self, tool: str) -> None:
        """As :meth:`Client.approve_tool_pin`."""
        await asyncio.to_thread(self._client.approve_tool_pin, tool)

    async def forget_tool_pin(self, tool: str | None = None) -> None:
        """As :meth:`Client.forget_tool_pin`."""
        await asyncio.to_thread(self._client.forget_tool_pin, tool)

    def clear_era_cache(self) -> None:
        """As :meth:`Client.clear_era_cache`."""
        self._client.clear_era_cache()

    # ----- calls -----

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        **opts: Any,
    ) -> dict[str, Any]:
        """As :meth:`Client.call_tool`; cancelling the awaiting task cancels the call."""
        o = _Opts.of(opts)
        n, a = _enc(name, "name"), json_arg(arguments)
        ir, rs = json_arg(input_responses), _opt_enc(request_state, "request_state")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("tools/call", name))
            try:
                result = await self._start(RAW.call_tool_start, n, a, ir, rs, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.call_tool_start, n, a, ir, rs, o.ref, keep=o)
        return result

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        **opts: Any,
    ) -> dict[str, Any]:
        o = _Opts.of(opts)
        n, a = _enc(name, "name"), json_arg(arguments)
        ir, rs = json_arg(input_responses), _opt_enc(request_state, "request_state")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("prompts/get", name))
            try:
                result = await self._start(RAW.get_prompt_start, n, a, ir, rs, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.get_prompt_start, n, a, ir, rs, o.ref, keep=o)
        return result

    async def read_resource(
        self,
        uri: str,
        *,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        **opts: Any,
    ) -> dict[str, Any]:
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        ir, rs = json_arg(input_responses), _opt_enc(request_state, "request_state")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set(("resources/read", uri))
            try:
                result = await self._start(RAW.read_resource_start, u, ir, rs, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.read_resource_start, u, ir, rs, o.ref, keep=o)
        return result

    async def _list(self, kind: int, cursor: str | None, opts: dict[str, Any]) -> dict[str, Any]:
        o = _Opts.of(opts)
        cur = _opt_enc(cursor, "cursor")
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((LIST_METHODS.get(kind, "list"), None))
            try:
                result = await self._start(RAW.list_start, kind, cur, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.list_start, kind, cur, o.ref, keep=o)
        return result

    async def _list_all(self, kind: int, key: str, opts: dict[str, Any]) -> list[dict[str, Any]]:
        o = _Opts.of(opts)
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((LIST_METHODS.get(kind, "list"), None))
            try:
                result = await self._start(RAW.list_all_start, kind, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.list_all_start, kind, o.ref, keep=o)
        return list(result.get(key, []))

    async def list_tools(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return await self._list(_ffi.MCP_LIST_TOOLS, cursor, opts)

    async def list_prompts(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return await self._list(_ffi.MCP_LIST_PROMPTS, cursor, opts)

    async def list_resources(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return await self._list(_ffi.MCP_LIST_RESOURCES, cursor, opts)

    async def list_resource_templates(self, cursor: str | None = None, **opts: Any) -> dict[str, Any]:
        return await self._list(_ffi.MCP_LIST_RESOURCE_TEMPLATES, cursor, opts)

    async def all_tools(self, **opts: Any) -> list[dict[str, Any]]:
        return await self._list_all(_ffi.MCP_LIST_TOOLS, "tools", opts)

    async def all_prompts(self, **opts: Any) -> list[dict[str, Any]]:
        return await self._list_all(_ffi.MCP_LIST_PROMPTS, "prompts", opts)

    async def all_resources(self, **opts: Any) -> list[dict[str, Any]]:
        return await self._list_all(_ffi.MCP_LIST_RESOURCES, "resources", opts)

    async def all_resource_templates(self, **opts: Any) -> list[dict[str, Any]]:
        return await self._list_all(_ffi.MCP_LIST_RESOURCE_TEMPLATES, "resourceTemplates", opts)

    async def complete(self, params: Mapping[str, Any], **opts: Any) -> dict[str, Any]:
        o = _Opts.of(opts)
        p = json_arg(dict(params))
        result: dict[str, Any] = await self._start(RAW.complete_start, p, o.ref, keep=o)
        return result

    async def request(self, method: str, params: Mapping[str, Any] | None = None, **opts: Any) -> dict[str, Any]:
        o = _Opts.of(opts)
        m, p = _enc(method, "method"), json_arg(params)
        result: dict[str, Any]
        if OPERATION_WANTED[0]:  # an otel bridge is attached: name the operation
            token = OPERATION.set((method, None))
            try:
                result = await self._start(RAW.request_start, m, p, o.ref, keep=o)
            finally:
                OPERATION.reset(token)
        else:
            result = await self._start(RAW.request_start, m, p, o.ref, keep=o)
        return result

    async def ping(self, **opts: Any) -> None:
        """As :meth:`Client.ping` (legacy ``ping``; UnsupportedError on modern servers)."""
        o = _Opts.of(opts)
        await self._start(RAW.ping_start, o.ref, keep=o)

    async def set_log_level(self, level: str, **opts: Any) -> None:
        """As :meth:`Client.set_log_level`; an unknown level raises before anything is sent."""
        o = _Opts.of(opts)
        await self._start(RAW.set_log_level_start, _enc(level, "level"), o.ref, keep=o)

    async def subscribe_resource(self, uri: str, **opts: Any) -> None:
        """As :meth:`Client.subscribe_resource` (legacy ``resources/subscribe``)."""
        o = _Opts.of(opts)
        await self._start(RAW.subscribe_resource_start, _enc(uri, "uri"), o.ref, keep=o)

    async def unsubscribe_resource(self, uri: str, **opts: Any) -> None:
        """As :meth:`Client.unsubscribe_resource`."""
        o = _Opts.of(opts)
        await self._start(RAW.unsubscribe_resource_start, _enc(uri, "uri"), o.ref, keep=o)

    async def notify_roots_changed(self) -> None:
        """As :meth:`Client.notify_roots_changed`."""
        await self._start(RAW.notify_roots_changed_start)

    # --- tasks extension (SEP-2663) ---

    async def resume_task(self, task_id: str, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.resume_task`; cancelling the awaiting task sends ``tasks/cancel``."""
        o = _Opts.of(opts)
        result: dict[str, Any] = await self._start(RAW.resume_task_start, _enc(task_id, "task_id"), o.ref, keep=o)
        return result

    async def get_task(self, task_id: str, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.get_task`."""
        o = _Opts.of(opts)
        result: dict[str, Any] = await self._start(RAW.get_task_start, _enc(task_id, "task_id"), o.ref, keep=o)
        return result

    async def cancel_task(self, task_id: str, **opts: Any) -> None:
        """As :meth:`Client.cancel_task`."""
        o = _Opts.of(opts)
        await self._start(RAW.cancel_task_start, _enc(task_id, "task_id"), o.ref, keep=o)

    async def update_task(self, task_id: str, input_responses: Mapping[str, Any], **opts: Any) -> None:
        """As :meth:`Client.update_task`."""
        o = _Opts.of(opts)
        t, r = _enc(task_id, "task_id"), json_arg(dict(input_responses))
        await self._start(RAW.update_task_start, t, r, o.ref, keep=o)

    # --- skills extension (SEP-2640) ---

    async def list_skills(self, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.list_skills`."""
        o = _Opts.of(opts)
        result: dict[str, Any] = await self._start(RAW.list_skills_start, o.ref, keep=o)
        return result

    async def get_skill(self, uri: str, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.get_skill`."""
        o = _Opts.of(opts)
        result: dict[str, Any] = await self._start(RAW.get_skill_start, _enc(uri, "uri"), o.ref, keep=o)
        return result

    async def read_skill_file(
        self, entry: Mapping[str, Any], file_uri: str | None = None, **opts: Any
    ) -> dict[str, Any]:
        """As :meth:`Client.read_skill_file` (SkillVerificationError on any mismatch)."""
        o = _Opts.of(opts)
        e, f = json_arg(dict(entry)), _opt_enc(file_uri, "file_uri")
        result: dict[str, Any] = await self._start(RAW.read_skill_file_start, e, f, o.ref, keep=o)
        return result

    async def read_app(self, uri: str, max_bytes: int = 0, **opts: Any) -> dict[str, Any]:
        """As :meth:`Client.read_app`: a verified MCP Apps view."""
        if not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError("max_bytes must be a non-negative int")
        o = _Opts.of(opts)
        u = _enc(uri, "uri")
        result: dict[str, Any] = await self._start(RAW.read_app_start, u, ctypes.c_size_t(max_bytes), o.ref, keep=o)
        return result

    # --- subscriptions/listen ---

    async def listen(self, filter: Mapping[str, Any], **opts: Any) -> "AsyncSubscription":
        """As :meth:`Client.listen`: opens ``subscriptions/listen`` and returns, once the server
        acknowledged, an :class:`AsyncSubscription` (``async for event in sub``)."""
        o = _Opts.of(opts)
        f = json_arg(dict(filter))
        sub = ctypes.POINTER(_ffi.mcp_subscription)()
        try:
            await self._start(RAW.listen_start, f, o.ref, keep=o, outs=(ctypes.byref(sub),))
        except BaseException:
            if sub:
                lib.mcp_subscription_free(sub)  # never acknowledged: nothing to tell the server
            raise
        return AsyncSubscription(Subscription(sub, self._client), self)


class AsyncSubscription:
    """A ``subscriptions/listen`` stream for asyncio: ``async for event in sub`` (ends when the
    subscription ends), or ``await sub.next(timeout)``. Reads are started calls completed on the
    client's loop; ``cancel``/``aclose`` tell the server from an executor thread. ``async with``
    closes it."""

    def __init__(self, sync: Subscription, client: AsyncClient):
        self._sync = sync  # owns the handle (and frees it when collected)
        self._client = client
        self.acknowledged: dict[str, Any] = sync.acknowledged

    async def next(self, timeout: float | None = None) -> dict[str, Any] | None:
        """As :meth:`Subscription.next`: the next notification ``{"method", "params"}``, None
        when none arrived within ``timeout`` seconds (None: no limit); ClosedError once the
        subscription ended, ``mcp_client.CancelledError`` after :meth:`cancel`. Cancelling the
        awaiting task stops this wait only (the subscription stays open)."""
        ms = -1 if timeout is None or math.isinf(timeout) else max(0, int(round(timeout * 1000)))
        if ms > _ffi.MCP_MAX_TIMEOUT_MS:
            raise ValueError(f"timeout is {timeout} s; the most is {_ffi.MCP_MAX_TIMEOUT_MS // 1000} s, None for none")
        try:
            event: dict[str, Any] = await self._client._start(
                RAW.subscription_next_start, ctypes.c_int64(ms), life=self._sync._life
            )
        except MCPTimeoutError:
            return None
        return event

    def __aiter__(self) -> "AsyncSubscription":
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            event = await self.next(None)
        except (ClosedError, CancelledError):
            raise StopAsyncIteration from None
        if event is None:  # pragma: no cover - no timeout was given
            raise StopAsyncIteration
        return event

    async def cancel(self) -> None:
        """As :meth:`Subscription.cancel` (the server is told from an executor thread)."""
        await asyncio.get_running_loop().run_in_executor(None, self._sync.cancel)

    async def aclose(self) -> None:
        """Cancels and frees (as :meth:`Subscription.close`, from an executor thread)."""
        await asyncio.get_running_loop().run_in_executor(None, self._sync.close)

    async def __aenter__(self) -> "AsyncSubscription":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def pending_calls() -> int:
    """Started calls whose completion has not arrived yet (for tests and leak checks)."""
    return len(_PENDING)
