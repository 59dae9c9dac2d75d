"""The hub: many MCP servers as one client (``mcp_hub_*``)."""

from __future__ import annotations

import asyncio
import ctypes
import itertools
import json
import logging
import os
import threading
from typing import Any, Callable, Mapping, Union

from . import _callbacks, _ffi
from ._client import LIST_METHODS, OPERATION, OPERATION_WANTED, ROUTED, _enc, _take_json
from ._config import Config
from ._errors import new_error_ptr, take_error
from ._library import lib
from ._percall import ERR_PTR, Lifetime, Use, loads

log = logging.getLogger("mcp_client")

_KINDS = {
    "tools": _ffi.MCP_LIST_TOOLS,
    "prompts": _ffi.MCP_LIST_PROMPTS,
    "resources": _ffi.MCP_LIST_RESOURCES,
    "resourceTemplates": _ffi.MCP_LIST_RESOURCE_TEMPLATES,
}


def _event_trampoline(userdata: int | None, event_json: bytes | None) -> None:
    try:
        entry = _callbacks._lookup(userdata)
        if entry is None or not event_json:
            return
        entry.fn(json.loads(event_json))
    except BaseException:  # noqa: BLE001
        try:
            log.exception("the hub event listener raised")
        except BaseException:  # noqa: BLE001
            pass


_EVENT_THUNK = _ffi.mcp_hub_event_fn(_event_trampoline)

# Functions called with each Hub once it is made (mcp_client.otel's global instrumentation).
NEW_HUB_HOOKS: "list[Callable[[Hub], None]]" = []


def _named(operation: "tuple[str, str | None] | None", call: Callable[[], Any]) -> Any:
    """Runs ``call`` with the operation it starts named for an otel bridge (see
    ``_client.OPERATION``); ``ROUTED`` says the member requests it sends may differ from it (a
    routed call lists its member's tools first, and the tool has its own name there)."""
    if operation is None or not OPERATION_WANTED[0]:
        return call()
    token, routed = OPERATION.set(operation), ROUTED.set(True)
    try:
        return call()
    finally:
        ROUTED.reset(routed)
        OPERATION.reset(token)

#: What ``on_input`` is called with: ``{"id", "description", "password", "default", "options"}``
#: (``options``: a ``pickString``'s choices, to answer with one of them; empty for free text); it
#: returns the answer, or None to decline.
InputFn = Callable[[dict[str, Any]], Union[str, None]]
PathArg = Union[str, "os.PathLike[str]"]


class _Read:
    """The ``mcp_hub_read_opts`` of one read, with its input callback kept alive. The callback
    runs on the reading thread during the call; an exception it raises declines the input and
    is raised again by :meth:`check` once the call has returned."""

    def __init__(self, workspace_folder: PathArg | None, user_home: PathArg | None, on_input: InputFn | None):
        if on_input is not None and not callable(on_input):
            raise TypeError("on_input must be callable or None")
        self.opts = _ffi.mcp_hub_read_opts()
        if lib.mcp_hub_read_opts_init(ctypes.byref(self.opts), _ffi.MCP_HUB_READ_OPTS_VERSION) != _ffi.MCP_OK:
            raise RuntimeError("mcp_hub_read_opts_init refused this header's version")
        self.opts.workspace_folder = None if workspace_folder is None else os.fsencode(workspace_folder)
        self.opts.user_home = None if user_home is None else os.fsencode(user_home)
        self.raised: BaseException | None = None
        self._thunk = None
        if on_input is not None:
            self._thunk = _ffi.mcp_hub_input_fn(self._asker(on_input))
            self.opts.on_input = self._thunk

    def _asker(self, on_input: InputFn) -> Callable[..., None]:
        def ask(
            _userdata: Any, id_: bytes, description: bytes, password: bool, default: bytes | None, slot: Any
        ) -> None:
            try:
                err = ERR_PTR()
                out = ctypes.c_void_p()
                st = lib.mcp_hub_input_slot_options_json(slot, ctypes.byref(out), ctypes.byref(err))
                if st != _ffi.MCP_OK:
                    raise take_error(st, err)
                prompt = {
                    "id": id_.decode("utf-8"),
                    "description": description.decode("utf-8"),
                    "password": bool(password),
                    "default": None if default is None else default.decode("utf-8"),
                    "options": _take_json(out),
                }
                answer = on_input(prompt)
                if answer is None:
                    return
                if not isinstance(answer, str):
                    raise TypeError(f"on_input returned {type(answer).__name__}, not str or None")
                err = ERR_PTR()
                st = lib.mcp_hub_input_slot_set(slot, _enc(answer, "answer"), ctypes.byref(err))
                if st != _ffi.MCP_OK:
                    raise take_error(st, err)
            except BaseException as e:  # noqa: BLE001 - nothing may propagate into ctypes
                if self.raised is None:
                    self.raised = e

        return ask

    def check(self) -> None:
        if self.raised is not None:
            raised, self.raised = self.raised, None
            raise raised


def _options(separator: str, prefix: bool, defaults: Mapping[str, Any] | None) -> bytes:
    return json.dumps({"separator": separator, "prefix": prefix, "defaults": dict(defaults or {})}).encode("utf-8")


class Hub:
    """Many MCP servers as one client: every member starts at once, their tools, prompts and
    resources form one catalogue (tool and prompt names ``<member>__<name>``, each item naming
    its member in ``_meta["mcp-client/server"]``), and each call goes to the member that owns
    it. A member that cannot start is ``failed`` in :meth:`members`; the hub keeps going.

        with Hub({"files": {"command": "mcp-server-filesystem", "args": ["/tmp"]}}) as hub:
            hub.start()
            print([t["name"] for t in hub.list_tools()])
            print(hub.call_tool("files__list_directory", {"path": "/tmp"}))

    Members run on the library's shared runtime. Blocking calls release the GIL; the event
    listener runs on the shared dispatcher thread.
    """

    def __init__(
        self,
        members: Mapping[str, Config] | None = None,
        *,
        separator: str = "__",
        prefix: bool = True,
        defaults: Mapping[str, Any] | None = None,
    ):
        err = new_error_ptr()
        ptr = ctypes.POINTER(_ffi.mcp_hub)()
        st = lib.mcp_hub_new(_options(separator, prefix, defaults), ctypes.byref(ptr), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        self._life = Lifetime(ptr, lib.mcp_hub_free, "hub")
        for name, config in (members or {}).items():
            self.add_member(name, config)
        for hook in list(NEW_HUB_HOOKS):
            hook(self)

    @classmethod
    def _read(cls, new: Any, source: bytes, read: _Read, options: bytes) -> "Hub":
        err = new_error_ptr()
        ptr = ctypes.POINTER(_ffi.mcp_hub)()
        st = new(source, options, ctypes.byref(read.opts), ctypes.byref(ptr), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            read.check()
            raise take_error(st, err)
        hub = cls.__new__(cls)
        hub._life = Lifetime(ptr, lib.mcp_hub_free, "hub")
        try:
            read.check()
        except BaseException:
            hub.close()
            raise
        for hook in list(NEW_HUB_HOOKS):
            hook(hub)
        return hub

    @classmethod
    def from_file(
        cls,
        path: PathArg,
        *,
        workspace_folder: PathArg | None = None,
        user_home: PathArg | None = None,
        on_input: InputFn | None = None,
        separator: str = "__",
        prefix: bool = True,
        defaults: Mapping[str, Any] | None = None,
    ) -> "Hub":
        """A hub of the servers of a host's configuration file, read as the host wrote it:
        ``mcpServers`` (``claude_desktop_config.json``, ``.mcp.json``, Cursor's ``mcp.json``)
        or ``servers`` and ``inputs`` (VS Code's ``.vscode/mcp.json``), comments and trailing
        commas allowed. ``workspace_folder`` is what ``${workspaceFolder}`` stands for,
        ``user_home`` what ``${userHome}`` does (default ``$HOME``). ``on_input(prompt)`` is
        asked for each ``${input:id}`` once, on this thread, with ``{"id", "description",
        "password", "default"}``, and returns the answer (never logged) or None to decline;
        an exception it raises is raised here. An entry that cannot be built is a ``failed``
        member; other hosts' keys are in :meth:`warnings`. Only a file that cannot be read as
        a whole raises (TransportError when it cannot be read, InvalidArgumentError when it
        is not a configuration: not JSON, no server object, a name given twice).
        Call :meth:`start` to connect the members."""
        read = _Read(workspace_folder, user_home, on_input)
        return cls._read(lib.mcp_hub_new_from_file, os.fsencode(path), read, _options(separator, prefix, defaults))

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        workspace_folder: PathArg | None = None,
        user_home: PathArg | None = None,
        on_input: InputFn | None = None,
        separator: str = "__",
        prefix: bool = True,
        defaults: Mapping[str, Any] | None = None,
    ) -> "Hub":
        """:meth:`from_file` for the file's text."""
        read = _Read(workspace_folder, user_home, on_input)
        return cls._read(lib.mcp_hub_new_from_text, _enc(text, "text"), read, _options(separator, prefix, defaults))

    def _reload(self, reload: Any, source: bytes, read: _Read) -> dict[str, list[str]]:
        err = ERR_PTR()
        out = ctypes.c_void_p()
        with Use(self._life) as ptr:
            st = reload(ptr, source, ctypes.byref(read.opts), ctypes.byref(out), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            read.check()
            raise take_error(st, err)
        report: dict[str, list[str]] = _take_json(out)
        read.check()
        return report

    def reload_from_file(
        self,
        path: PathArg,
        *,
        workspace_folder: PathArg | None = None,
        user_home: PathArg | None = None,
        on_input: InputFn | None = None,
    ) -> dict[str, list[str]]:
        """Reads the file again (as :meth:`from_file`) and applies it: new members start,
        missing ones close, changed (or failed) ones restart, the others keep their
        connections and caches. Returns ``{"added", "removed", "restarted", "unchanged"}``
        (member names) once every started member has connected or failed. A file that cannot
        be read as a whole raises and changes nothing."""
        read = _Read(workspace_folder, user_home, on_input)
        return self._reload(lib.mcp_hub_reload_from_file, os.fsencode(path), read)

    def reload_from_text(
        self,
        text: str,
        *,
        workspace_folder: PathArg | None = None,
        user_home: PathArg | None = None,
        on_input: InputFn | None = None,
    ) -> dict[str, list[str]]:
        """:meth:`reload_from_file` for the file's text."""
        read = _Read(workspace_folder, user_home, on_input)
        return self._reload(lib.mcp_hub_reload_from_text, _enc(text, "text"), read)

    def warnings(self) -> list[str]:
        """The configuration's keys that other hosts define and this library ignores
        (``autoApprove``, ``alwaysAllow``, ...), each once with the servers it is on."""
        result: list[str] = self._run(lambda p, o, e: lib.mcp_hub_warnings_json(p, o, e))
        return result

    def _run(self, body: Callable[[Any, Any, Any], int]) -> Any:
        err = ERR_PTR()
        out = ctypes.c_void_p()
        with Use(self._life) as ptr:
            st = body(ptr, ctypes.byref(out), ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        return _take_json(out)

    def add_member(self, name: str, config: Config) -> None:
        """Adds member ``name`` with its flat client configuration (``{"command": ...}`` or
        ``{"url": ...}``); :meth:`start` connects it. A configuration the library refuses makes
        the member ``failed``; a name the hub already has raises InvalidArgumentError."""
        cfg = json.dumps({k: v for k, v in dict(config).items() if v is not None}).encode("utf-8")
        key = _enc(name, "name")
        err = ERR_PTR()
        with Use(self._life) as ptr:
            st = lib.mcp_hub_add_member(ptr, key, cfg, ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)

    def start(self) -> None:
        """Connects every member not yet started, all at once; returns when each has connected
        or failed (each bounded by its ``connect_timeout_ms``)."""
        err = ERR_PTR()
        with Use(self._life) as ptr:
            st = lib.mcp_hub_start(ptr, ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)

    def members(self) -> list[dict[str, Any]]:
        """Each member's ``{"name", "state", "error"?, "era"?, "protocolVersion"?,
        "serverInfo"?}``; ``state`` is idle, connecting, connected, reconnecting, failed,
        disabled or closed."""
        result: list[dict[str, Any]] = self._run(lambda p, o, e: lib.mcp_hub_members_json(p, o, e))
        return result

    def _list(self, key: str) -> list[dict[str, Any]]:
        kind = _KINDS[key]
        result = _named((LIST_METHODS[kind], None), lambda: self._run(lambda p, o, e: lib.mcp_hub_list(p, kind, o, e)))
        items: list[dict[str, Any]] = result[key]
        return items

    def list_tools(self) -> list[dict[str, Any]]:
        """Every connected member's tools, names exported (``<member>__<tool>``)."""
        return self._list("tools")

    def list_prompts(self) -> list[dict[str, Any]]:
        return self._list("prompts")

    def list_resources(self) -> list[dict[str, Any]]:
        return self._list("resources")

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return self._list("resourceTemplates")

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Calls the tool the merged list names ``name`` on its member; an unknown name raises
        InvalidArgumentError listing the nearest names."""
        key = _enc(name, "name")
        args = None if arguments is None else json.dumps(dict(arguments)).encode("utf-8")
        result: dict[str, Any] = _named(
            ("tools/call", name), lambda: self._run(lambda p, o, e: lib.mcp_hub_call_tool(p, key, args, None, o, e))
        )
        return result

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        key = _enc(name, "name")
        args = None if arguments is None else json.dumps(dict(arguments)).encode("utf-8")
        result: dict[str, Any] = _named(
            ("prompts/get", name), lambda: self._run(lambda p, o, e: lib.mcp_hub_get_prompt(p, key, args, None, o, e))
        )
        return result

    def read_resource(self, server: str, uri: str) -> dict[str, Any]:
        """Reads ``uri`` from member ``server``."""
        s, u = _enc(server, "server"), _enc(uri, "uri")
        result: dict[str, Any] = _named(
            ("resources/read", uri), lambda: self._run(lambda p, o, e: lib.mcp_hub_read_resource(p, s, u, None, o, e))
        )
        return result

    def on_event(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """``fn(event)`` for every member's state change (``{"type": "state", "server",
        "state", "error"?}``), list change, resource update, stderr line and notification.
        Runs on the shared dispatcher thread; exceptions are logged. Usable as a decorator."""
        if fn is not None and not callable(fn):
            raise TypeError("the hub event listener must be callable or None")
        key = None if fn is None else _callbacks.register(_callbacks.ListenerEntry(fn, "hub event"))
        thunk = _EVENT_THUNK if fn is not None else _ffi.mcp_hub_event_fn()
        free = _callbacks.FREE_THUNK if fn is not None else _ffi.mcp_userdata_free_fn()
        err = ERR_PTR()
        with Use(self._life) as ptr:
            st = lib.mcp_hub_on_event(ptr, thunk, key, free, ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        return fn

    def _set_callback(self, setter: Any, thunk: Any, kind: str, fn: Callable[..., Any] | None) -> Any:
        if fn is not None and not callable(fn):
            raise TypeError(f"the hub {kind} must be callable or None")
        key = None if fn is None else _callbacks.register(_callbacks.ListenerEntry(fn, f"hub {kind}"))
        free = _callbacks.FREE_THUNK if fn is not None else _ffi.mcp_userdata_free_fn()
        err = ERR_PTR()
        with Use(self._life) as ptr:
            st = setter(ptr, thunk if fn is not None else type(thunk)(), key, free, ctypes.byref(err))
        if st != _ffi.MCP_OK:
            raise take_error(st, err)
        return fn

    def on_span(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """``fn(record)`` for every member's span and session records (as
        :meth:`Client.on_span` gives them), members added later included, each with the
        attribute ``mcp.server.name``: its member's name. A blocking call's records come on the
        calling thread before it returns; an AsyncHub call's on the dispatcher thread before
        its result; session records and those of :meth:`start`'s connects on the library's
        threads. Exceptions are logged. ``None`` removes it; usable as a decorator."""
        return self._set_callback(lib.mcp_hub_on_span, _callbacks.SPAN_THUNK, "span listener", fn)

    def set_trace_context(self, fn: Callable[[], Mapping[str, str] | None] | None) -> Any:
        """``fn()`` gives the current W3C trace context (``traceparent``, ``tracestate``,
        ``baggage``) for the hub's calls, as :meth:`Client.set_trace_context` does for a
        client's: a blocking call asks it on the calling thread once per member request it
        sends (the routed call, the member lists it fetches), an AsyncHub call once when it
        starts, in the calling task's context. ``None`` removes it."""
        return self._set_callback(lib.mcp_hub_set_trace_context_fn, _callbacks.TRACE_THUNK, "trace context", fn)

    @property
    def closed(self) -> bool:
        return self._life.closing

    def close(self) -> None:
        """Closes every member (no server process is left) and frees the hub once no call uses
        it. Idempotent."""
        if self._life.mark_closing():
            try:
                ptr = self._life.acquire(closing_ok=True)
            except Exception:  # noqa: BLE001
                return
            try:
                lib.mcp_hub_close(ptr, None)
            finally:
                self._life.release()

    def __enter__(self) -> "Hub":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if getattr(self, "_life", None) is not None:
                self.close()
        except BaseException:  # noqa: BLE001
            pass


# Started hub calls by userdata key: the loop and future to settle from the dispatcher thread.
_STARTED: dict[int, tuple[asyncio.AbstractEventLoop, "asyncio.Future[bytes]"]] = {}
_STARTED_LOCK = threading.Lock()
_STARTED_KEYS = itertools.count(1)


def _settle(fut: "asyncio.Future[bytes]", outcome: "bytes | BaseException") -> None:
    if fut.done():
        return
    if isinstance(outcome, BaseException):
        fut.set_exception(outcome)
    else:
        fut.set_result(outcome)


def _started_trampoline(userdata: int | None, status: int, result: bytes | None, _len: int, error: Any) -> None:
    # Runs on the shared dispatcher thread: hands the outcome to the awaiting loop.
    try:
        with _STARTED_LOCK:
            entry = _STARTED.pop(userdata or 0, None)
        if entry is None:
            return
        loop, fut = entry
        outcome: bytes | BaseException
        if status == _ffi.MCP_OK:
            outcome = result or b"null"
        else:
            outcome = take_error(status, ctypes.cast(error or 0, ERR_PTR), borrowed=True)
        loop.call_soon_threadsafe(_settle, fut, outcome)
    except BaseException:  # noqa: BLE001 - nothing may propagate into ctypes
        pass


_started_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)
_STARTED_THUNK = _started_fn(_started_trampoline)


class AsyncHub:
    """A :class:`Hub` for asyncio: tool calls are the library's started calls (no thread per
    call, cancelling the awaiting task cancels the call); starting, listing and the other
    calls run the blocking form in a worker thread.

        async with AsyncHub({"fix": {"command": "mcp-fixture-server"}}) as hub:
            await hub.start()
            results = await asyncio.gather(*(hub.call_tool("fix__echo", {"text": t}) for t in texts))
    """

    def __init__(self, members: Mapping[str, Config] | Hub | None = None, **options: Any):
        self.hub = members if isinstance(members, Hub) else Hub(members, **options)

    @classmethod
    def from_file(cls, path: PathArg, **options: Any) -> "AsyncHub":
        """:meth:`Hub.from_file` (the read, ``on_input`` included, runs on this thread before it
        returns; nothing connects until :meth:`start`)."""
        return cls(Hub.from_file(path, **options))

    @classmethod
    def from_text(cls, text: str, **options: Any) -> "AsyncHub":
        """:meth:`Hub.from_text`, as :meth:`from_file`."""
        return cls(Hub.from_text(text, **options))

    async def reload_from_file(self, path: PathArg, **read: Any) -> dict[str, list[str]]:
        """:meth:`Hub.reload_from_file` in a worker thread (``on_input`` runs there)."""
        return await asyncio.to_thread(lambda: self.hub.reload_from_file(path, **read))

    async def reload_from_text(self, text: str, **read: Any) -> dict[str, list[str]]:
        """:meth:`Hub.reload_from_text` in a worker thread (``on_input`` runs there)."""
        return await asyncio.to_thread(lambda: self.hub.reload_from_text(text, **read))

    def warnings(self) -> list[str]:
        return self.hub.warnings()

    async def start(self) -> None:
        await asyncio.to_thread(self.hub.start)

    def members(self) -> list[dict[str, Any]]:
        return self.hub.members()

    async def list_tools(self) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.hub.list_tools)

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.hub.list_prompts)

    async def list_resources(self) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.hub.list_resources)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.hub.get_prompt, name, arguments)

    async def read_resource(self, server: str, uri: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.hub.read_resource, server, uri)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """As :meth:`Hub.call_tool`, as a started call."""
        n = _enc(name, "name")
        a = None if arguments is None else json.dumps(dict(arguments)).encode("utf-8")
        result: dict[str, Any] = await self._start(lib.mcp_hub_call_tool_start, n, a, None, operation=("tools/call", name))
        return result

    async def _start(self, fn: Any, *args: Any, operation: "tuple[str, str | None] | None" = None) -> Any:
        """``fn(hub, *args, done, userdata, &call, &err)`` started, its outcome awaited: the
        result's JSON value, or the call's error raised. Cancelling the awaiting task cancels
        the call. ``args`` stay referenced here until the call completes."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bytes] = loop.create_future()
        key = next(_STARTED_KEYS)
        with _STARTED_LOCK:
            _STARTED[key] = (loop, fut)
        call = ctypes.POINTER(_ffi.mcp_call)()
        err = ERR_PTR()
        done = ctypes.cast(_STARTED_THUNK, _ffi.mcp_call_done_fn)
        with Use(self.hub._life) as ptr:
            # The hub's trace context source is asked inside the start, in this task's context.
            st = _named(operation, lambda: fn(ptr, *args, done, key, ctypes.byref(call), ctypes.byref(err)))
        if st != _ffi.MCP_OK:
            with _STARTED_LOCK:
                _STARTED.pop(key, None)  # a refused start never completes
            raise take_error(st, err)
        try:
            raw = await fut
        except asyncio.CancelledError:
            lib.mcp_call_cancel(call)  # the completion still comes and drops the entry
            raise
        finally:
            lib.mcp_call_free(call)
        return loads(raw)

    def on_event(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Hub.on_event` (``fn`` runs on the library's dispatcher thread)."""
        return self.hub.on_event(fn)

    def on_span(self, fn: Callable[[dict[str, Any]], Any] | None) -> Any:
        """As :meth:`Hub.on_span` (a call's records come on the dispatcher thread before its
        result reaches the awaiting task)."""
        return self.hub.on_span(fn)

    def set_trace_context(self, fn: Callable[[], Mapping[str, str] | None] | None) -> Any:
        """As :meth:`Hub.set_trace_context`: asked when a call starts, in the calling task's
        context (the worker-thread calls run in a copy of it)."""
        return self.hub.set_trace_context(fn)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.hub.close)

    async def __aenter__(self) -> "AsyncHub":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
