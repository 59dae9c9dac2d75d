"""Exceptions, one class per status family, built from an ``mcp_error`` read in the same call."""

from __future__ import annotations

import ctypes
import json
from typing import Any, Mapping

from . import _ffi
from ._library import lib


class MCPError(Exception):
    """A failed call. Every instance carries:

    - ``status``: the numeric ``mcp_status`` (``MCP_*`` in :mod:`mcp_client`),
    - ``status_name``: the status constant's name (``"MCP_TIMEOUT"``, as in :mod:`mcp_client`),
    - ``status_text``: the library's English text for the status (``"timed out"``),
    - ``message``: the library's message,
    - ``code`` / ``data``: the JSON-RPC ``error.code`` / parsed ``error.data`` when the server
      (or a handler) answered with an error object, else ``None``,
    - ``http_status``: the HTTP status of the answer that caused the error (AuthRequiredError,
      HttpStatusError and other transport errors caused by an HTTP status), else ``None``,
    - ``www_authenticate``: for AuthRequiredError, the server's ``WWW-Authenticate`` challenge
      (several joined with ", "; it never holds credentials), else ``None``,
    - ``oauth_error``: for AuthRequiredError, the registered OAuth error code an authorization
      server answered (``invalid_grant``, ``invalid_scope``, ``unauthorized_client``, ...), else
      ``None``.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        http_status: int | None = None,
        www_authenticate: str | None = None,
        jsonrpc_message: str | None = None,
        oauth_error: str | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        #: The JSON-RPC error.message exactly as the server sent it (``message`` adds context).
        self.jsonrpc_message = jsonrpc_message
        self.data = data
        self.http_status = http_status
        self.www_authenticate = www_authenticate
        self.oauth_error = oauth_error

    @property
    def status_name(self) -> str:
        """The status constant's name, ``"MCP_TIMEOUT"`` (``mcp_status_name``)."""
        return status_name(self.status)

    @property
    def status_text(self) -> str:
        """The library's English text for the status, ``"timed out"`` (``mcp_status_str``)."""
        return status_str(self.status)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        extra = f", code={self.code}" if self.code is not None else ""
        if self.http_status is not None:
            extra += f", http_status={self.http_status}"
        return f"{type(self).__name__}(status={self.status}, message={self.message!r}{extra})"


# --- API misuse (1-99) ---


class InvalidArgumentError(MCPError, ValueError):
    """MCP_NULL_ARG, MCP_INVALID_UTF8, MCP_INVALID_JSON, MCP_INVALID_ARG: nothing was sent."""


class ClosedError(MCPError):
    """MCP_CLOSED: the client (or subscription) is closed."""


class ReentrantCallError(MCPError):
    """MCP_REENTRANT_CALL: a blocking call from a handler or listener on the same client."""


class NotConnectedError(MCPError):
    """MCP_NOT_CONNECTED: the client has not connected yet (``server_info`` before ``connect``)."""


class UnsupportedError(MCPError):
    """MCP_UNSUPPORTED: e.g. ``ping`` on a modern server."""


class ForkedError(MCPError):
    """MCP_FORKED: the client was created before ``fork()``."""


# --- transport (100-199) ---


class TransportError(MCPError):
    """The connection or the call's wait failed (the 100-199 range, MCP_IO itself included)."""


class MCPTimeoutError(TransportError, TimeoutError):
    """MCP_TIMEOUT: the request (or the whole call) took too long."""


class CancelledError(TransportError):
    """MCP_CANCELLED: the call's :class:`CancelToken` was cancelled."""


class ServerExitedError(TransportError):
    """MCP_SERVER_EXITED: the server process died (the message has its status and stderr tail)."""


class HTTPStatusError(TransportError):
    """MCP_HTTP_STATUS: the HTTP server answered with an error status (``http_status``).
    Also available as ``HttpStatusError``."""


HttpStatusError = HTTPStatusError


class AuthRequiredError(TransportError):
    """MCP_AUTH_REQUIRED: the server wants authorization that the client could not obtain:
    a 401/403 without an ``oauth`` configuration, or an OAuth flow that failed (the
    authorization callback raised or failed, discovery or the token request failed, the
    authorization timed out). ``http_status`` and ``www_authenticate`` carry the server's
    answer when there is one."""


class MessageTooLargeError(TransportError):
    """MCP_MESSAGE_TOO_LARGE."""


# --- protocol (200-299) ---


class RpcError(MCPError):
    """MCP_JSONRPC_ERROR: the server answered with a JSON-RPC error (``code``, ``data``)."""


class ProtocolError(MCPError):
    """MCP_PROTOCOL_VIOLATION and the rest of the 200-299 range."""


class VersionMismatchError(ProtocolError):
    """MCP_VERSION_MISMATCH: no protocol version both sides speak."""


class CapabilityMissingError(ProtocolError):
    """MCP_CAPABILITY_MISSING."""


# --- multi round-trip requests (300-399) ---


class InputError(MCPError):
    """Base of the two input-required statuses. Attributes:

    - ``input_requests``: the ``inputRequests`` map (``{}`` when the server sent none),
    - ``request_state``: the opaque ``requestState`` (byte-exact) or ``None``,
    - ``result``: the raw ``input_required`` result.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        input_requests: dict[str, Any] | None = None,
        request_state: str | None = None,
        result: dict[str, Any] | None = None,
        **kw: Any,
    ):
        super().__init__(status, message, **kw)
        self.input_requests: dict[str, Any] = input_requests if input_requests is not None else {}
        self.request_state: str | None = request_state
        self.result: dict[str, Any] = result if result is not None else {}


class InputRequiredError(InputError):
    """MCP_INPUT_REQUIRED: no handler for an input request. Answer ``input_requests`` yourself
    and retry the same call with ``**e.retry_options(responses)`` (that is,
    ``input_responses=...`` and ``request_state=e.request_state``). ``unanswered`` lists the
    entries no registered handler answers (all of them in manual input mode: the
    ``manual_input`` setting declares kinds you answer by hand, so servers ask for them)."""

    def __init__(self, status: int, message: str, *, unanswered: dict[str, Any] | None = None, **kw: Any):
        super().__init__(status, message, **kw)
        self.unanswered: dict[str, Any] = unanswered if unanswered is not None else {}

    def retry_options(self, input_responses: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the retry: ``input_responses`` plus this error's
        ``request_state`` when the server sent one. Use as
        ``client.call_tool(name, args, **e.retry_options({...}))``."""
        options: dict[str, Any] = {"input_responses": dict(input_responses)}
        if self.request_state is not None:
            options["request_state"] = self.request_state
        return options


class InputRoundsExceededError(InputError):
    """MCP_INPUT_ROUNDS_EXCEEDED: more ``input_required`` rounds than ``input_required_max_rounds``
    (``result`` is the last one)."""


class HandlerError(MCPError):
    """MCP_HANDLER_FAILED: an input handler failed (raised, or answered badly)."""


class UrlElicitationRequiredError(RpcError):
    """MCP_URL_ELICITATION_REQUIRED: a legacy server's -32042. ``elicitations`` is its
    ``data.elicitations`` list (each ``{"mode": "url", "elicitationId", "url", "message"}``):
    have the user open the URLs, then retry the call. The completion may arrive as the
    notification ``notifications/elicitation/complete`` (see ``Client.on_notification``)."""

    def __init__(self, status: int, message: str, *, elicitations: list[Any] | None = None, **kw: Any):
        super().__init__(status, message, **kw)
        self.elicitations: list[Any] = elicitations if elicitations is not None else []


class SkillVerificationError(MCPError):
    """MCP_SKILL_VERIFICATION_FAILED: a skill file's size, digest or frontmatter differs from its
    listed entry, or the entry breaks the skills extension's rules. No content was returned:
    discard the skill (refresh its entry once with ``get_skill`` if you want to retry)."""


class OutputSchemaError(MCPError):
    """MCP_OUTPUT_SCHEMA_INVALID: a tool's ``structuredContent`` does not match the
    ``outputSchema`` its ``tools/list`` entry declared (or is missing). ``message`` says where;
    ``result`` is the tool's raw CallToolResult. Switch the check off per client
    (``validate_output_schema=False``) or per call (``validate_output=False``)."""

    def __init__(self, status: int, message: str, *, result: dict[str, Any] | None = None, **kw: Any):
        super().__init__(status, message, **kw)
        self.result: dict[str, Any] = result if result is not None else {}


class ToolPinChangedError(MCPError):
    """MCP_TOOL_PIN_CHANGED: tool pinning withholds this tool (``tool_pinning`` policy ``block``,
    or ``ask`` refused): its listed definition differs from the pinned one, or it is new on a
    server whose tools were pinned. Approve it (``approve_tool_pin``) to call it."""


# --- library (900-999) ---


class InternalError(MCPError):
    """MCP_INTERNAL."""


class PanicError(InternalError):
    """MCP_PANIC: an internal panic; the client is poisoned."""


_BY_STATUS: dict[int, type[MCPError]] = {
    _ffi.MCP_NULL_ARG: InvalidArgumentError,
    _ffi.MCP_INVALID_UTF8: InvalidArgumentError,
    _ffi.MCP_INVALID_JSON: InvalidArgumentError,
    _ffi.MCP_INVALID_ARG: InvalidArgumentError,
    _ffi.MCP_CLOSED: ClosedError,
    _ffi.MCP_REENTRANT_CALL: ReentrantCallError,
    _ffi.MCP_NOT_CONNECTED: NotConnectedError,
    _ffi.MCP_UNSUPPORTED: UnsupportedError,
    _ffi.MCP_FORKED: ForkedError,
    _ffi.MCP_IO: TransportError,
    _ffi.MCP_TIMEOUT: MCPTimeoutError,
    _ffi.MCP_CANCELLED: CancelledError,
    _ffi.MCP_SERVER_EXITED: ServerExitedError,
    _ffi.MCP_HTTP_STATUS: HTTPStatusError,
    _ffi.MCP_AUTH_REQUIRED: AuthRequiredError,
    _ffi.MCP_MESSAGE_TOO_LARGE: MessageTooLargeError,
    _ffi.MCP_JSONRPC_ERROR: RpcError,
    _ffi.MCP_PROTOCOL_VIOLATION: ProtocolError,
    _ffi.MCP_VERSION_MISMATCH: VersionMismatchError,
    _ffi.MCP_CAPABILITY_MISSING: CapabilityMissingError,
    _ffi.MCP_INPUT_REQUIRED: InputRequiredError,
    _ffi.MCP_INPUT_ROUNDS_EXCEEDED: InputRoundsExceededError,
    _ffi.MCP_HANDLER_FAILED: HandlerError,
    _ffi.MCP_URL_ELICITATION_REQUIRED: UrlElicitationRequiredError,
    _ffi.MCP_SKILL_VERIFICATION_FAILED: SkillVerificationError,
    _ffi.MCP_OUTPUT_SCHEMA_INVALID: OutputSchemaError,
    _ffi.MCP_TOOL_PIN_CHANGED: ToolPinChangedError,
    _ffi.MCP_INTERNAL: InternalError,
    _ffi.MCP_PANIC: PanicError,
}


def exception_class(status: int) -> type[MCPError]:
    """The class for a status; unknown statuses map by range, so new codes stay catchable."""
    cls = _BY_STATUS.get(status)
    if cls is not None:
        return cls
    if 1 <= status < 100:
        return InvalidArgumentError
    if 100 <= status < 200:
        return TransportError
    if 200 <= status < 300:
        return ProtocolError
    if 300 <= status < 400:
        return MCPError
    if 900 <= status < 1000:
        return InternalError
    return MCPError


def status_str(status: int) -> str:
    """The library's English text for a status (``"timed out"``); ``"unknown status"`` for a
    value that is none."""
    return (lib.mcp_status_str(status) or b"").decode("utf-8", "replace")


def status_name(status: int) -> str:
    """The name of a status's constant (``"MCP_OUTPUT_SCHEMA_INVALID"`` for 305), which
    :mod:`mcp_client` exports with that value; ``"MCP_UNKNOWN"`` for a value that is none."""
    return (lib.mcp_status_name(status) or b"MCP_UNKNOWN").decode("ascii")


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def _json(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def take_error(status: int, err: Any, *, borrowed: bool = False) -> MCPError:
    """Builds the exception for ``status`` from ``err`` (a POINTER(mcp_error), possibly NULL),
    reading every accessor now, then frees ``err`` (unless ``borrowed``: a started call's
    completion lends its error for the callback only)."""
    try:
        if err:
            message = _text(lib.mcp_error_message(err)) or status_str(status)
            code_out = ctypes.c_int64()
            code = code_out.value if lib.mcp_error_jsonrpc_code(err, ctypes.byref(code_out)) else None
            rpc_message = _text(lib.mcp_error_jsonrpc_message(err))
            data = _json(lib.mcp_error_data_json(err))
            requests = _json(lib.mcp_error_input_requests_json(err))
            state = _text(lib.mcp_error_request_state(err))
            result = _json(lib.mcp_error_result_json(err))
            http_out = ctypes.c_uint16()
            http_status = http_out.value if lib.mcp_error_http_status(err, ctypes.byref(http_out)) else None
            www_authenticate = _text(lib.mcp_error_www_authenticate(err))
            oauth_error = _text(lib.mcp_error_oauth_error(err))
            unanswered = _json(lib.mcp_error_unanswered_json(err))
            elicitations = _json(lib.mcp_error_elicitations_json(err))
        else:
            message, code, data, requests, state, result = status_str(status), None, None, None, None, None
            rpc_message = None
            http_status, www_authenticate, oauth_error = None, None, None
            unanswered, elicitations = None, None
    finally:
        if err and not borrowed:
            lib.mcp_error_free(err)
    cls = exception_class(status)
    kw = {"code": code, "data": data, "http_status": http_status, "www_authenticate": www_authenticate,
          "jsonrpc_message": rpc_message, "oauth_error": oauth_error}
    if issubclass(cls, InputRequiredError):
        return cls(status, message, input_requests=requests, request_state=state, result=result,
                   unanswered=unanswered, **kw)
    if issubclass(cls, InputError):
        return cls(status, message, input_requests=requests, request_state=state, result=result, **kw)
    if issubclass(cls, UrlElicitationRequiredError):
        return cls(status, message, elicitations=elicitations, **kw)
    if issubclass(cls, OutputSchemaError):
        return cls(status, message, result=result, **kw)
    return cls(status, message, **kw)


_ERROR_PTR = ctypes.POINTER(_ffi.mcp_error)


def new_error_ptr() -> Any:
    """A NULL ``mcp_error *`` for a call's ``err_out``."""
    return _ERROR_PTR()


def check(status: int, err: Any) -> None:
    """Raises for a non-OK status (freeing ``err``)."""
    if status != _ffi.MCP_OK:
        raise take_error(status, err)
