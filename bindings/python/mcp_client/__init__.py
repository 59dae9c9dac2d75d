"""Python binding of mcp_client, a Model Context Protocol client (ctypes over its C ABI).

    from mcp_client import Client

    with Client.stdio("my-mcp-server", ["--stdio"]) as client:
        client.on_elicitation(lambda params: {"action": "accept", "content": {"name": "Ada"}})
        print(client.connect()["serverInfo"])
        print(client.call_tool("greet", {}))

The shared library is found through ``MCP_CLIENT_LIB``, next to this package, in the
repository's ``target/debug`` / ``target/release``, or on the system (see ``_library``), and its
ABI version is checked at import.

Input handlers (``on_elicitation``, ``on_sampling``, ``on_roots``) take the request params and
return the result dict, or ``None`` (elicitation: decline; others: failure), or a
``concurrent.futures.Future`` / :class:`Deferred` that another thread completes later; raising
(or ``set_exception``) fails the input: the call raises :class:`HandlerError` on modern
servers, and legacy servers receive the JSON-RPC error (choose its code with
:class:`ReplyError`). Handlers and listeners run on the library's dispatcher thread, one at a
time; blocking calls on the same client from there raise :class:`ReentrantCallError`.

OAuth: ``Client.http(url, oauth={...})`` enables authorization; ``on_authorization(fn)``
handles the browser step (``fn(authorization_url, redirect_uri)`` returns the redirect URL,
None when the loopback listener receives it, or a Future), ``set_token_store(load=, save=)``
keeps credentials, :func:`fetch_redirect` answers the browser step in tests. A server that
still refuses raises :class:`AuthRequiredError` (``http_status``, ``www_authenticate``).

OpenTelemetry: ``mcp_client.otel.instrument(client)`` (or ``instrument()`` for every client)
makes each operation a span, and records the duration histograms, in the host's OpenTelemetry
when ``opentelemetry-api`` is installed (see :mod:`mcp_client.otel`).
"""

from . import _ffi
from ._library import lib as _lib, path as library_path
from ._callbacks import Deferred, ReplyError, live_userdata as _live_userdata, opentelemetry_context
from ._client import CancelToken, Client, Subscription, fetch_redirect
from ._aio import AsyncClient, AsyncSubscription
from ._hub import AsyncHub, Hub
from . import export
from . import apps
from . import otel
from ._config import Config, OAuthConfig, ReconnectConfig
from ._errors import (
    AuthRequiredError,
    CancelledError,
    CapabilityMissingError,
    ClosedError,
    ForkedError,
    HandlerError,
    HTTPStatusError,
    HttpStatusError,
    InputError,
    InputRequiredError,
    InputRoundsExceededError,
    InternalError,
    InvalidArgumentError,
    MCPError,
    NotConnectedError,
    MCPTimeoutError,
    MessageTooLargeError,
    PanicError,
    ProtocolError,
    ReentrantCallError,
    RpcError,
    ServerExitedError,
    TransportError,
    UnsupportedError,
    SkillVerificationError,
    OutputSchemaError,
    ToolPinChangedError,
    UrlElicitationRequiredError,
    VersionMismatchError,
    exception_class,
    status_name,
    status_str,
)

# Every #define of the header (statuses MCP_*, list kinds, modes, eras, versions, result types,
# JSON-RPC codes) is re-exported: they are _ffi's public names (its __all__), so type checkers
# see them too.
from ._ffi import *  # noqa: E402,F401,F403

__version__ = f"{_ffi.MCP_VERSION_MAJOR}.{_ffi.MCP_VERSION_MINOR}.{_ffi.MCP_VERSION_PATCH}"


def library_version() -> str:
    """The loaded library's ``mcp_version()``, e.g. ``"mcp_client/0.1.0"``."""
    raw: bytes = _lib.mcp_version()
    return raw.decode("utf-8")


def abi_version() -> int:
    """The loaded library's ``mcp_abi_version()`` (checked against MCP_ABI_VERSION at import)."""
    return int(_lib.mcp_abi_version())


__all__ = [
    "Client",
    "Hub",
    "AsyncHub",
    "Subscription",
    "CancelToken",
    "Deferred",
    "AsyncClient",
    "AsyncSubscription",
    "ReplyError",
    "fetch_redirect",
    "opentelemetry_context",
    "Config",
    "OAuthConfig",
    "ReconnectConfig",
    "MCPError",
    "NotConnectedError",
    "InvalidArgumentError",
    "ClosedError",
    "ReentrantCallError",
    "UnsupportedError",
    "ForkedError",
    "TransportError",
    "MCPTimeoutError",
    "CancelledError",
    "ServerExitedError",
    "HTTPStatusError",
    "HttpStatusError",
    "AuthRequiredError",
    "MessageTooLargeError",
    "RpcError",
    "ProtocolError",
    "VersionMismatchError",
    "CapabilityMissingError",
    "InputError",
    "InputRequiredError",
    "InputRoundsExceededError",
    "HandlerError",
    "UrlElicitationRequiredError",
    "SkillVerificationError",
    "OutputSchemaError",
    "ToolPinChangedError",
    "InternalError",
    "PanicError",
    "exception_class",
    "status_name",
    "status_str",
    "library_path",
    "library_version",
    "abi_version",
]
__all__ += _ffi.__all__
