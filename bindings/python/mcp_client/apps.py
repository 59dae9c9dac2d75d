"""MCP Apps (SEP-1865, extension ``io.modelcontextprotocol/ui``): a tool's UI link.

Declare the extension with ``apps=True`` in the client's configuration when the host renders
views; read a view with :meth:`mcp_client.Client.read_app`. App-only tools (``"model": False``)
are left out of :func:`mcp_client.export.export_tools`.
"""

from __future__ import annotations

from typing import Any, Mapping

from ._library import lib
from .export import _json, _pure


def tool_ui(tool: Mapping[str, Any]) -> dict[str, Any] | None:
    """The UI link of one tool (an entry of a ``tools/list`` result): ``{"resourceUri":
    "ui://...", "visibility": [...], "model": bool, "app": bool}``, or None when it has none (a
    link that is not ``ui://`` counts as none)."""
    result: dict[str, Any] | None = _pure(lib.mcp_tool_ui, _json(dict(tool), "tool"))
    return result
