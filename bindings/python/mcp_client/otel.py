"""OpenTelemetry for mcp_client: spans and metrics by the MCP semantic conventions, and the
caller's trace context on the wire.

    from mcp_client import otel

    otel.instrument()            # every Client / AsyncClient / Hub / AsyncHub made from now on
    otel.instrument(client)      # or one client
    otel.instrument(hub)         # or one hub: every member, present and added later

With ``opentelemetry-api`` installed, each MCP operation of an instrumented client becomes a
CLIENT span of the host's tracer provider, a child of the caller's current span, and its
context goes to the server in ``params._meta`` (``traceparent``, ``tracestate``, ``baggage``,
through the configured propagators), so the server's span is the client span's child. When
the caller already has a GenAI ``execute_tool`` span open for the tool being called, that span
gets the MCP attributes and events instead of a nested duplicate. The histograms
``mcp.client.operation.duration`` and ``mcp.client.session.duration`` (seconds) go to the
host's meter provider.

How it works: the bridge is the client's trace-context source and span listener. The source is
asked on the calling thread (in the calling task's context for AsyncClient) when an operation
starts: it starts the CLIENT span as a child of the current span (or takes the open
``execute_tool`` span) and answers with its context. The library's record of the operation
names that context as its ``parent``; the bridge then gives the span its name, attributes,
events and status and ends it at the record's end time. Records arrive before the call
returns, so a host's ``execute_tool`` span is still open when it is enriched.

A hub's spans are its members' operations, each with the attribute ``mcp.server.name`` (the
member's name) and in the histograms too; a routed call's member request carries the caller's
context, and a host's ``execute_tool`` span for the exported tool name (``fix__echo``) is
enriched and keeps that name.

Without ``opentelemetry-api`` :func:`instrument` installs nothing (the library builds no
records, the call path is unchanged) and returns an :class:`Instrumentation` whose ``active``
is False; :func:`available` tells beforehand.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import types
import weakref
from typing import TYPE_CHECKING, Any, Mapping, Union

from . import _ffi
from ._client import NEW_CLIENT_HOOKS, OPERATION, OPERATION_WANTED, ROUTED, Client
from ._hub import NEW_HUB_HOOKS, AsyncHub, Hub

if TYPE_CHECKING:
    from ._aio import AsyncClient

#: What :func:`instrument` attaches to.
Instrumented = Union["Client", "AsyncClient", Hub, AsyncHub]

log = logging.getLogger("mcp_client.otel")

OPERATION_DURATION = "mcp.client.operation.duration"
SESSION_DURATION = "mcp.client.session.duration"
# The conventions' explicit bucket boundaries for both histograms, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
# Span attributes the operation histogram leaves out (high cardinality, or payloads).
_NOT_METRIC = frozenset({"jsonrpc.request.id", "mcp.session.id", "mcp.resource.uri"})
_NOT_METRIC_PREFIX = "gen_ai.tool.call."
# The connect handshake's methods: a connect made inside a call has records of its own, named by
# the call's parent, ended before the call's.
HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})

# Started spans waiting for their record. The core asks the source once per operation that
# ends in a record, so entries leave as records arrive; the bound only guards against a core
# that sends none (an entry pushed out is dropped unended: it is never exported).
MAX_PENDING = 4096
MAX_ENDED = 256

_VERSION = f"{_ffi.MCP_VERSION_MAJOR}.{_ffi.MCP_VERSION_MINOR}.{_ffi.MCP_VERSION_PATCH}"
_SCOPE = "mcp_client"


def _load() -> Any:
    """The OpenTelemetry API's modules, or None when ``opentelemetry-api`` is not installed."""
    try:
        from opentelemetry import context, metrics, propagate, trace  # type: ignore[import-not-found,unused-ignore]
        from opentelemetry.trace.propagation.tracecontext import (  # type: ignore[import-not-found,unused-ignore]
            TraceContextTextMapPropagator,
        )
    except ImportError:
        return None

    return types.SimpleNamespace(
        context=context,
        metrics=metrics,
        propagate=propagate,
        trace=trace,
        w3c=TraceContextTextMapPropagator(),
    )


_API: Any = None
_API_LOCK = threading.Lock()
_API_LOADED = False
_WARNED = False


def _api() -> Any:
    global _API, _API_LOADED
    with _API_LOCK:
        if not _API_LOADED:
            _API = _load()
            _API_LOADED = True
        return _API


def available() -> bool:
    """True when ``opentelemetry-api`` can be imported (then :func:`instrument` is active)."""
    return _api() is not None


def _value(v: Any) -> Any:
    """A record's attribute value as an OpenTelemetry attribute value."""
    if isinstance(v, (str, bool, int, float)):
        return v
    return json.dumps(v, separators=(",", ":"))


def _attributes(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): _value(v) for k, v in raw.items() if v is not None}


def _nanos(v: Any) -> int:
    """A record's ``*_unix_nano`` (0 when missing or not a whole number)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _span_id(traceparent: Any) -> int | None:
    """The parent id of a W3C ``traceparent`` (``00-<trace>-<span>-<flags>``)."""
    if not isinstance(traceparent, str):
        return None
    parts = traceparent.split("-")
    if len(parts) < 4 or len(parts[2]) != 16:
        return None
    try:
        return int(parts[2], 16)
    except ValueError:
        return None


class _Pending:
    __slots__ = ("span", "owned", "parent")

    def __init__(self, span: Any, owned: bool, parent: Any = None):
        self.span = span
        self.owned = owned  # False: the host's execute_tool span, enriched and left open
        self.parent = parent  # the context the span was started in


def _target_of(target: Instrumented) -> "Client | Hub":
    """The Client or Hub behind ``target`` (an AsyncClient's client, an AsyncHub's hub)."""
    if isinstance(target, AsyncHub):
        return target.hub
    if isinstance(target, (Client, Hub)):
        return target
    inner = getattr(target, "_client", None)
    if isinstance(inner, Client):
        return inner
    raise TypeError("instrument() takes a mcp_client.Client, AsyncClient, Hub or AsyncHub")


class Instrumentation:
    """What :func:`instrument` returns: the bridge for the clients it is attached to.

    ``active`` is False when ``opentelemetry-api`` is missing (nothing was installed).
    :meth:`trace_context` and :meth:`record` are the client's trace-context source and span
    listener; a host that needs its own listener too can call :meth:`record` from it (and
    attach with ``client.on_span``) instead of letting :meth:`attach` take both slots."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        spans: bool = True,
        metrics: bool = True,
        enrich_execute_tool: bool = True,
        resource_uri_in_name: bool = False,
    ):
        self._api = _api()
        self.active = self._api is not None
        self.spans = spans
        self.metrics = metrics
        self.enrich_execute_tool = enrich_execute_tool
        self.resource_uri_in_name = resource_uri_in_name
        self._lock = threading.Lock()
        self._pending: collections.OrderedDict[int, _Pending] = collections.OrderedDict()
        # Spans of ours already ended, by id: the context each was started in. A started
        # all-pages list asks the source once for all its pages, so the later pages' records
        # name an ended span: their spans go beside it, under the caller's span.
        self._ended: collections.OrderedDict[int, Any] = collections.OrderedDict()
        self._clients: weakref.WeakSet[Client | Hub] = weakref.WeakSet()
        self._tracer: Any = None
        self._operation: Any = None
        self._session: Any = None
        if self._api is None:
            return
        api = self._api
        if spans or enrich_execute_tool:
            provider = tracer_provider or api.trace.get_tracer_provider()
            self._tracer = provider.get_tracer(_SCOPE, _VERSION)
        if metrics:
            meter = (meter_provider or api.metrics.get_meter_provider()).get_meter(_SCOPE, _VERSION)
            self._operation = _histogram(
                meter, OPERATION_DURATION, "Duration of an MCP operation as the client saw it: sent to answered"
            )
            self._session = _histogram(meter, SESSION_DURATION, "Duration of an MCP session (a connection) as the client saw it")

    # ----- clients -----

    def attach(self, client: Instrumented) -> None:
        """Makes this the trace-context source and span listener of the client, or of the hub
        (all its members; replacing any set before). Does nothing when not :attr:`active`."""
        if not self.active:
            return
        c = _target_of(client)
        OPERATION_WANTED[0] = True  # from now on the calls name their operation (a contextvar)
        c.set_trace_context(self.trace_context)
        c.on_span(self.record)
        self._clients.add(c)

    def detach(self, client: Instrumented) -> None:
        """Removes the source and the listener from ``client`` or a hub (a closed one is left
        as is)."""
        c = _target_of(client)
        self._clients.discard(c)
        if not self.active or c.closed:
            return
        c.set_trace_context(None)
        c.on_span(None)

    def uninstrument(self) -> None:
        """Detaches every client this attached to; a global instrumentation also stops
        attaching to new clients."""
        global _GLOBAL
        with _GLOBAL_LOCK:
            if _GLOBAL is self:
                _GLOBAL = None
                if _global_hook in NEW_CLIENT_HOOKS:
                    NEW_CLIENT_HOOKS.remove(_global_hook)
                if _global_hook in NEW_HUB_HOOKS:
                    NEW_HUB_HOOKS.remove(_global_hook)
        for c in list(self._clients):
            self.detach(c)
        with self._lock:
            self._pending.clear()

    @property
    def pending(self) -> int:
        """Spans started for operations whose record has not arrived yet."""
        with self._lock:
            return len(self._pending)

    # ----- the trace-context source -----

    def trace_context(self) -> dict[str, str]:
        """Asked when an operation starts, on the calling thread: starts the operation's CLIENT
        span as a child of the current span (or takes the caller's open ``execute_tool`` span
        for the tool being called) and returns that context's W3C members."""
        api = self._api
        if api is None:
            return {}
        parent = api.context.get_current()
        span: Any = None
        operation = OPERATION.get()
        method, target = operation if operation is not None else (None, None)
        if self.enrich_execute_tool and method == "tools/call" and target is not None:
            current = api.trace.get_current_span(parent)
            if _is_execute_tool(current, target) and self._claim(current):
                span = current
        if span is None and self.spans and self._tracer is not None:
            # A hub's call may be asked for member requests other than the one it names (the
            # lists it routes by): the span is named from its record alone.
            routed = ROUTED.get()
            name, attrs = ("mcp", {}) if routed else _start_of(method, target, self.resource_uri_in_name)
            span = self._tracer.start_span(name, parent, kind=api.trace.SpanKind.CLIENT, attributes=attrs)
            if span.is_recording():
                self._keep(span, parent)
        carrier: dict[str, str] = {}
        ctx = parent if span is None else api.trace.set_span_in_context(span, parent)
        api.propagate.inject(carrier, context=ctx)
        return {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate", "baggage")}

    def _claim(self, span: Any) -> bool:
        """Takes the host's span for one operation (not while another operation holds it)."""
        with self._lock:
            key = span.get_span_context().span_id
            if key in self._pending:
                return False
            self._put(key, _Pending(span, False))
            return True

    def _keep(self, span: Any, parent: Any) -> None:
        with self._lock:
            self._put(span.get_span_context().span_id, _Pending(span, True, parent))

    def _put(self, key: int, entry: _Pending) -> None:
        self._pending[key] = entry
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    def _take(self, parent: Any, keep: bool = False) -> tuple[_Pending | None, Any]:
        """The waiting span the record's parent names (left waiting with ``keep``), or else the
        context an ended span of ours that it names was started in."""
        if not isinstance(parent, Mapping):
            return None, None
        key = _span_id(parent.get("traceparent"))
        if key is None:
            return None, None
        with self._lock:
            if keep:
                return self._pending.get(key), self._ended.get(key)
            entry = self._pending.pop(key, None)
            if entry is not None:
                if entry.owned:
                    self._ended[key] = entry.parent
                    while len(self._ended) > MAX_ENDED:
                        self._ended.popitem(last=False)
                return entry, None
            return None, self._ended.get(key)

    # ----- the records -----

    def record(self, record: Mapping[str, Any]) -> None:
        """The span listener: records the operation's duration and finishes its span (or
        enriches the host's ``execute_tool`` span); a session record gives the session
        histogram its value."""
        api = self._api
        if api is None:
            return
        kind = record.get("record", "span")
        attrs = _attributes(record.get("attributes"))
        start = _nanos(record.get("start_unix_nano"))
        end = _nanos(record.get("end_unix_nano"))
        seconds = max(0, end - start) / 1e9
        if kind == "session":
            if self._session is not None:
                self._session.record(seconds, {k: v for k, v in attrs.items() if k != "mcp.session.id"})
            return
        if kind != "span":
            return
        if self._operation is not None:
            self._operation.record(
                seconds,
                {k: v for k, v in attrs.items() if k not in _NOT_METRIC and not k.startswith(_NOT_METRIC_PREFIX)},
            )
        # A connect made inside a call (its handshake) is named by the call's parent too: it
        # goes under the call's span, which stays waiting for the call's own record.
        handshake = attrs.get("mcp.method.name") in HANDSHAKE_METHODS
        entry, sibling_of = self._take(record.get("parent"), keep=handshake)
        if entry is None and not self.spans:
            return
        name = str(record.get("name") or attrs.get("mcp.method.name") or "mcp")
        uri = attrs.get("mcp.resource.uri")
        if self.resource_uri_in_name and isinstance(uri, str) and uri:
            name = f"{attrs.get('mcp.method.name', name)} {uri}"
        if entry is not None and entry.owned and not handshake:
            span = entry.span
            span.update_name(name)
            self._finish(span, record, attrs, end)
            return
        if entry is not None and not handshake and attrs.get("mcp.method.name") == "tools/call":
            # The host's execute_tool span: the MCP attributes, events and an error status;
            # the host ends it.
            span = entry.span
            if "mcp.server.name" in attrs:
                # A hub member's: the host named the tool as its model saw it (the exported
                # name); the member's own name is not the host's.
                attrs.pop("gen_ai.tool.name", None)
            span.set_attributes(attrs)
            self._events(span, record)
            self._status(span, record)
            return
        if self._tracer is None or not self.spans:
            return
        if entry is not None:
            # A handshake, or a host execute_tool span taken for what turned out not to be its
            # tool call: the operation's span goes under it.
            parent = api.trace.set_span_in_context(entry.span)
        elif sibling_of is not None:
            parent = sibling_of
        else:
            # No span of ours: the operation's context came with the call (its meta), or there
            # was none; the span is made from the record alone.
            carrier = record.get("parent")
            parent = api.w3c.extract(dict(carrier)) if isinstance(carrier, Mapping) else api.context.Context()
        span = self._tracer.start_span(name, parent, kind=api.trace.SpanKind.CLIENT, start_time=start or None)
        self._finish(span, record, attrs, end)

    def _finish(self, span: Any, record: Mapping[str, Any], attrs: dict[str, Any], end: int) -> None:
        span.set_attributes(attrs)
        self._events(span, record)
        self._status(span, record)
        span.end(end_time=end or None)

    def _events(self, span: Any, record: Mapping[str, Any]) -> None:
        events = record.get("events")
        if not isinstance(events, list):
            return
        for event in events:
            if isinstance(event, Mapping) and event.get("name"):
                when = _nanos(event.get("time_unix_nano"))
                span.add_event(str(event["name"]), _attributes(event.get("attributes")), timestamp=when or None)

    def _status(self, span: Any, record: Mapping[str, Any]) -> None:
        status = record.get("status")
        if isinstance(status, Mapping) and status.get("code") == "error":
            api = self._api
            message = status.get("message")
            span.set_status(api.trace.Status(api.trace.StatusCode.ERROR, str(message) if message else None))


def _start_of(method: str | None, target: str | None, uri_in_name: bool) -> tuple[str, dict[str, Any]]:
    """The name and attributes a span has from its start (a sampler sees them), from the
    operation the call announced; the record completes them."""
    if method is None:
        return "mcp", {}  # a call that announces nothing: named from its record
    attrs: dict[str, Any] = {"mcp.method.name": method}
    name = method
    if method == "tools/call" and target is not None:
        attrs["gen_ai.tool.name"] = target
        attrs["gen_ai.operation.name"] = "execute_tool"
        name = f"{method} {target}"
    elif method == "prompts/get" and target is not None:
        attrs["gen_ai.prompt.name"] = target
        name = f"{method} {target}"
    elif method == "resources/read" and target is not None:
        attrs["mcp.resource.uri"] = target
        if uri_in_name:
            name = f"{method} {target}"
    return name, attrs


def _is_execute_tool(span: Any, tool: str) -> bool:
    """The caller's open span is a GenAI ``execute_tool`` span for ``tool``, not yet enriched
    (an SDK span shows its attributes; a span whose attributes cannot be read is not taken)."""
    try:
        if not span.is_recording():
            return False
        attrs = getattr(span, "attributes", None)
        if not isinstance(attrs, Mapping):
            return False
        if attrs.get("gen_ai.operation.name") != "execute_tool" or "mcp.method.name" in attrs:
            return False
        named = attrs.get("gen_ai.tool.name")
        return named is None or named == tool
    except Exception:  # noqa: BLE001 - a host span of some other kind
        return False


def _histogram(meter: Any, name: str, description: str) -> Any:
    try:
        return meter.create_histogram(
            name, unit="s", description=description, explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS)
        )
    except TypeError:  # an API older than the advisory parameter
        return meter.create_histogram(name, unit="s", description=description)


_GLOBAL: Instrumentation | None = None
_GLOBAL_LOCK = threading.Lock()


def _global_hook(client: "Client | Hub") -> None:
    inst = _GLOBAL
    if inst is not None:
        try:
            inst.attach(client)
        except Exception:  # noqa: BLE001 - a new client works without it
            log.exception("could not instrument a new client or hub")


def instrument(
    client: Instrumented | None = None,
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    spans: bool = True,
    metrics: bool = True,
    enrich_execute_tool: bool = True,
    resource_uri_in_name: bool = False,
) -> Instrumentation:
    """Instruments ``client`` (a Client or AsyncClient, or a Hub or AsyncHub: every member,
    present and added later, its records named by ``mcp.server.name``), or with None every
    client and hub made from now on (replacing an earlier global instrumentation; those made
    before are left as they are). The bridge becomes each one's trace-context source and span
    listener.

    - ``tracer_provider``, ``meter_provider``: default the global ones (asked now; the API's
      global providers forward to one set later).
    - ``spans=False``: no CLIENT spans; the current context still goes on the wire, and metrics
      are still recorded.
    - ``metrics=False``: no histograms.
    - ``enrich_execute_tool=False``: always a CLIENT span of its own, even under the caller's
      ``execute_tool`` span.
    - ``resource_uri_in_name=True``: ``resources/read <uri>`` (the conventions leave the URI out
      of the name by default: it is high cardinality).

    Without ``opentelemetry-api`` nothing is installed and the result's ``active`` is False."""
    global _GLOBAL, _WARNED
    inst = Instrumentation(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        spans=spans,
        metrics=metrics,
        enrich_execute_tool=enrich_execute_tool,
        resource_uri_in_name=resource_uri_in_name,
    )
    if not inst.active:
        if not _WARNED:
            _WARNED = True
            log.info("opentelemetry-api is not installed: mcp_client.otel.instrument() installs nothing")
        return inst
    if client is not None:
        inst.attach(client)
        return inst
    with _GLOBAL_LOCK:
        _GLOBAL = inst  # clients the previous one attached to keep it until closed or detached
        if _global_hook not in NEW_CLIENT_HOOKS:
            NEW_CLIENT_HOOKS.append(_global_hook)
        if _global_hook not in NEW_HUB_HOOKS:
            NEW_HUB_HOOKS.append(_global_hook)
    return inst


def uninstrument() -> None:
    """Ends the global instrumentation (:func:`instrument` with no client): new clients are no
    longer instrumented, and those it attached to are detached."""
    inst = _GLOBAL
    if inst is not None:
        inst.uninstrument()


__all__ = [
    "DURATION_BUCKETS",
    "Instrumentation",
    "OPERATION_DURATION",
    "SESSION_DURATION",
    "available",
    "instrument",
    "uninstrument",
]
