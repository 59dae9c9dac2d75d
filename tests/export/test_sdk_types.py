"""The provider SDKs' own types accept what the export produces: every tool of the corpus
(tests/vectors/export) and of the fixture's live list in every format, the model calls the
tests fake, and the result messages dispatch returns from the fixture (text, structured
content, images, tool errors, protocol errors, bad arguments). Nothing goes over the network:
the SDKs' pydantic models and TypedDicts are only used to parse."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bindings" / "python"))

import mcp_client  # noqa: E402
from mcp_client import export  # noqa: E402

import anthropic.types as at  # noqa: E402
import openai.types.chat as oc  # noqa: E402
import openai.types.responses as orr  # noqa: E402
from openai.types.responses.response_input_item_param import FunctionCallOutput  # noqa: E402
from google.genai import types as gt  # noqa: E402

FIXTURE = os.environ.get("MCP_FIXTURE") or str(REPO / "target" / "debug" / "mcp-fixture-server")
CORPUS = sorted((REPO / "tests" / "vectors" / "export").glob("*.json"))

OPTIONS = [
    ("openai-chat", {}),
    ("openai-chat", {"strict": True}),
    ("openai-responses", {}),
    ("openai-responses", {"strict": True}),
    ("anthropic", {"describe_title": True, "describe_annotations": True}),
    ("gemini", {}),
    ("gemini", {"gemini_legacy_parameters": True}),
]


def typed(cls: Any, value: Any) -> None:
    """``value`` is a ``cls`` TypedDict: its keys are the type's, its values validate. (Fields
    typed ``Iterable`` validate lazily; the lists in them are checked item by item below.)"""
    keys = set(cls.__required_keys__) | set(cls.__optional_keys__)
    assert set(value) <= keys, f"{cls.__name__} has no {set(value) - keys}"
    assert set(cls.__required_keys__) <= set(value), f"{cls.__name__} needs {set(cls.__required_keys__) - set(value)}"
    TypeAdapter(cls).validate_python(value)


def one_of(classes: dict[str, Any], block: dict[str, Any]) -> None:
    """A content block of one of the TypedDicts ``classes`` (by its ``type``)."""
    assert block.get("type") in classes, block
    typed(classes[block["type"]], block)


def check_tool(fmt: str, tool: dict[str, Any]) -> None:
    if fmt == "openai-chat":
        typed(oc.ChatCompletionFunctionToolParam, tool)
        oc.ChatCompletionFunctionTool.model_validate(tool)
    elif fmt == "openai-responses":
        typed(orr.FunctionToolParam, tool)
        orr.FunctionTool.model_validate(tool)
    elif fmt == "anthropic":
        typed(at.ToolParam, tool)
        assert tool["input_schema"]["type"] == "object"
    else:
        # google-genai's models forbid unknown fields: the legacy `parameters` must be its Schema.
        decl = gt.FunctionDeclaration.model_validate(tool)
        gt.Tool(function_declarations=[decl])


def lists() -> list[tuple[str, Any]]:
    """The corpus, the fixture's live list and, when MCP_EXPORT_LIVE names a JSON file of
    ``{name: tool list}`` (the interop suite's live captures), those lists too."""
    found = [(p.name, json.loads(p.read_text())) for p in CORPUS]
    live = os.environ.get("MCP_EXPORT_LIVE")
    if live:
        found += list(json.loads(Path(live).read_text()).items())
    with mcp_client.Client.stdio(FIXTURE, []) as c:
        found.append(("fixture", c.all_tools()))
    return found


@pytest.mark.parametrize("fmt,opts", OPTIONS, ids=[f"{f}-{'-'.join(o) or 'plain'}" for f, o in OPTIONS])
def test_every_exported_tool_parses_as_the_sdk_type(fmt: str, opts: dict[str, Any]) -> None:
    checked = 0
    for name, tools in lists():
        out = export.export_tools(tools, fmt, **opts)
        for tool in out["tools"]:
            try:
                check_tool(fmt, tool)
            except Exception as e:  # noqa: BLE001 - re-raised with the tool named
                raise AssertionError(f"{name}: {json.dumps(tool)[:300]}: {e}") from e
            checked += 1
    assert checked > 40


CALLS = {
    "openai-chat": lambda name, args: {"id": "call_1", "type": "function",
                                       "function": {"name": name, "arguments": json.dumps(args)}},
    "openai-responses": lambda name, args: {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                            "name": name, "arguments": json.dumps(args), "status": "completed"},
    "anthropic": lambda name, args: {"type": "tool_use", "id": "toolu_1", "name": name, "input": args},
    "gemini": lambda name, args: {"functionCall": {"id": "g1", "name": name, "args": args}},
}


def check_call(fmt: str, call: dict[str, Any]) -> None:
    """The faked model call is what the SDK would have parsed from the API."""
    if fmt == "openai-chat":
        oc.ChatCompletionMessageFunctionToolCall.model_validate(call)
    elif fmt == "openai-responses":
        orr.ResponseFunctionToolCall.model_validate(call)
    elif fmt == "anthropic":
        at.ToolUseBlock.model_validate(call)
    else:
        gt.Part.model_validate(call)


def check_message(fmt: str, message: dict[str, Any]) -> None:
    if fmt == "openai-chat":
        typed(oc.ChatCompletionToolMessageParam, message)
    elif fmt == "openai-responses":
        typed(FunctionCallOutput, message)
        TypeAdapter(orr.ResponseInputItemParam).validate_python(message)
        if isinstance(message["output"], list):
            items = {"input_text": orr.ResponseInputTextContentParam, "input_image": orr.ResponseInputImageContentParam}
            for item in message["output"]:
                one_of(items, item)
    elif fmt == "anthropic":
        typed(at.ToolResultBlockParam, message)
        for block in message["content"]:
            one_of({"text": at.TextBlockParam, "image": at.ImageBlockParam}, block)
            if block["type"] == "image":
                typed(at.Base64ImageSourceParam, block["source"])
        TypeAdapter(at.MessageParam).validate_python({"role": "user", "content": [message]})
    else:
        part = gt.Part.model_validate(message)
        assert part.function_response is not None and part.function_response.response is not None
        gt.Content(role="user", parts=[part])


CASES = [
    ("echo", {"text": "hi"}, "hi"),
    ("add", {"a": 2, "b": 3}, "5"),
    ("media", {}, "embedded note"),
    ("fail", {}, "tool failed on purpose"),
    ("rpc_error", {}, "fixture error"),
    ("add", {"a": "x"}, "is missing"),
    ("no_such_tool", {}, "no tool named"),
]


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_dispatch_round_trip_messages_parse_as_the_sdk_type(fmt: str) -> None:
    with mcp_client.Client.stdio(FIXTURE, []) as client:
        exported = export.export_tools(client.all_tools(), fmt, strict=fmt.startswith("openai"))
        for name, args, expect in CASES:
            call = CALLS[fmt](name, args)
            check_call(fmt, call)
            [found] = export.find_calls(exported, {"role": "assistant", "content": [call]} if fmt == "anthropic" else [call])
            message = export.dispatch(client, exported, found)
            check_message(fmt, message)
            assert expect in json.dumps(message), (name, message)
        image = export.dispatch(client, exported, CALLS[fmt]("media", {}))
        if fmt == "anthropic":
            assert image["content"][1]["source"]["media_type"] == "image/png"
        if fmt == "openai-responses":
            assert image["output"][1]["type"] == "input_image"
