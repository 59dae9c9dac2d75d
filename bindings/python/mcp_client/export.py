"""Tools for the model: a tool list in the OpenAI (Chat Completions, Responses), Anthropic
Messages or Gemini function-calling format, and the model's tool calls routed back.

    from mcp_client import Client, export

    with Client.stdio("my-mcp-server") as client:
        exported = export.export_tools(client.list_tools(), "anthropic")
        tools = exported["tools"]                    # goes to the model API
        for call in export.find_calls(exported, reply):  # the model's reply
            message = export.dispatch(client, exported, call)  # the tool_result block

A :class:`~mcp_client.Hub` works the same way: ``export_tools(hub.list_tools(), ...)`` routes
each namespaced name back to its member and the tool's own name there (from the merged list's
``_meta``), and ``dispatch(hub, exported, call)`` makes the call on that member.

``exported`` is a plain dict (``format``, ``tools``, ``routes``, ``report``): keep it as long as
the model may call its tools; ``report`` lists per tool every rewrite and every constraint the
format could not express. Formats: ``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``,
``"gemini"`` (``gemini_legacy_parameters=True`` for the OpenAPI-subset ``parameters``).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Mapping

from . import _ffi
from ._client import Client, _Opts, _take_json
from ._errors import take_error
from ._hub import AsyncHub, Hub
from ._library import lib
from ._percall import ERR_PTR, call as _call, json_arg

if TYPE_CHECKING:
    from ._aio import AsyncClient

__all__ = ["FORMATS", "export_tools", "find_calls", "result_message", "dispatch", "dispatch_async"]

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def _raw(name: str) -> Any:
    """The function without argtypes (outputs passed as ``c_char_p``, like ``_percall.RAW``)."""
    fn = lib[name]
    fn.restype = _ffi.mcp_status
    return fn


_DISPATCH = _raw("mcp_client_export_dispatch")
_DISPATCH_START = _raw("mcp_client_export_dispatch_start")
_HUB_DISPATCH = _raw("mcp_hub_export_dispatch")


def _pure(fn: Any, *args: Any) -> Any:
    out = ctypes.c_void_p()
    err = ERR_PTR()
    st = fn(*args, ctypes.byref(out), ctypes.byref(err))
    if st:
        raise take_error(st, err)
    return _take_json(out)


def _json(value: Any, what: str) -> bytes:
    if value is None:
        raise TypeError(f"{what} must not be None")
    encoded = json_arg(value)
    assert encoded is not None
    return encoded


def _result_options(
    max_chars: int | None, resources_as_text: bool, images: bool, **more: Any
) -> bytes | None:
    opts: dict[str, Any] = {k: v for k, v in more.items() if v is not None}
    if max_chars is not None:
        opts["max_chars"] = max_chars
    if not resources_as_text:
        opts["resources_as_text"] = False
    if not images:
        opts["images"] = False
    return json_arg(opts) if opts else None


def export_tools(
    tools: Any,
    format: str = "openai-chat",
    *,
    strict: bool = False,
    gemini_legacy_parameters: bool = False,
    describe_title: bool = False,
    describe_annotations: bool = False,
    max_ref_depth: int | None = None,
    origins: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Exports ``tools`` (a ``tools/list`` result or its ``tools`` list) to ``format``.
    ``strict``: OpenAI strict mode where a schema allows it. ``origins`` maps a listed name to
    ``{"server", "tool"}``; a hub's merged list (:meth:`Hub.list_tools`) needs none, its tools
    name their member and own name in ``_meta``. Returns ``{"format",
    "tools", "routes", "report"}``; a tool the format cannot take is left out and its report
    entry has ``refused``."""
    options: dict[str, Any] = {"format": format}
    for key, value in (
        ("strict", strict),
        ("gemini_legacy_parameters", gemini_legacy_parameters),
        ("describe_title", describe_title),
        ("describe_annotations", describe_annotations),
    ):
        if value:
            options[key] = True
    if max_ref_depth is not None:
        options["max_ref_depth"] = max_ref_depth
    o = None if origins is None else json_arg(dict(origins))
    result: dict[str, Any] = _pure(lib.mcp_export_tools, _json(tools, "tools"), json_arg(options), o)
    return result


def find_calls(exported: Mapping[str, Any], reply: Any) -> list[Any]:
    """The tool calls in a model's ``reply`` (a message or response as the API returned it,
    a list of content blocks or parts, or one call), each as the API shaped it."""
    result: list[Any] = _pure(lib.mcp_export_calls, _json(dict(exported), "exported"), _json(reply, "reply"))
    return result


def result_message(
    exported: Mapping[str, Any],
    call: Mapping[str, Any],
    result: Mapping[str, Any],
    *,
    max_chars: int | None = None,
    resources_as_text: bool = True,
    images: bool = True,
) -> dict[str, Any]:
    """The API's tool-result message answering ``call`` with ``result``, a CallToolResult the
    host got itself (``max_chars`` cuts long text and says so)."""
    message: dict[str, Any] = _pure(
        lib.mcp_export_result,
        _json(dict(exported), "exported"),
        _json(dict(call), "call"),
        _json(dict(result), "result"),
        _result_options(max_chars, resources_as_text, images),
    )
    return message


def _dispatch_args(
    exported: Mapping[str, Any],
    call: Mapping[str, Any],
    max_chars: int | None,
    resources_as_text: bool,
    images: bool,
    errors_as_results: bool,
) -> tuple[bytes, bytes, bytes | None]:
    extra = {} if errors_as_results else {"errors_as_results": False}
    return (
        _json(dict(exported), "exported"),
        _json(dict(call), "call"),
        _result_options(max_chars, resources_as_text, images, **extra),
    )


def dispatch(
    client: Client | Hub,
    exported: Mapping[str, Any],
    call: Mapping[str, Any],
    *,
    max_chars: int | None = None,
    resources_as_text: bool = True,
    images: bool = True,
    errors_as_results: bool = True,
    **opts: Any,
) -> dict[str, Any]:
    """Makes the model's ``call`` on ``client`` (a :class:`Client`, or a :class:`Hub`: the call
    goes to the member the export's route names) and returns the API's tool-result message.
    Arguments are checked against the tool's original input schema first; an unknown tool, bad
    arguments, a tool error, a protocol error or a timeout come back as a message the model
    reads, unless ``errors_as_results=False`` (then protocol errors and timeouts raise as
    :meth:`Client.call_tool` would). ``opts``: the call options of :meth:`Client.call_tool`
    (``timeout``, ``cancel``, ...). On a hub, a name the export lacks, a tool the member's
    filter withholds or a member the hub no longer has is a message the model reads too."""
    o = _Opts.of(opts)
    e, c, r = _dispatch_args(exported, call, max_chars, resources_as_text, images, errors_as_results)
    fn = _HUB_DISPATCH if isinstance(client, Hub) else _DISPATCH
    message: dict[str, Any] = _call(client._life, fn, e, c, r, o.ref)
    return message


async def dispatch_async(
    client: "AsyncClient | AsyncHub",
    exported: Mapping[str, Any],
    call: Mapping[str, Any],
    *,
    max_chars: int | None = None,
    resources_as_text: bool = True,
    images: bool = True,
    errors_as_results: bool = True,
    **opts: Any,
) -> dict[str, Any]:
    """As :func:`dispatch` on an :class:`AsyncClient` or an :class:`AsyncHub`, as a started
    call; cancelling the awaiting task cancels the call."""
    o = _Opts.of(opts)
    e, c, r = _dispatch_args(exported, call, max_chars, resources_as_text, images, errors_as_results)
    message: dict[str, Any]
    if isinstance(client, AsyncHub):
        message = await client._start(lib.mcp_hub_export_dispatch_start, e, c, r, o.ref)
    else:
        message = await client._start(_DISPATCH_START, e, c, r, o.ref, keep=o)
    return message
