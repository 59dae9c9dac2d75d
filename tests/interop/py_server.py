"""Interop server on the official Python SDK (mcp==2.3.0), our own script.

    python py_server.py                  stdio
    python py_server.py http PORT        Streamable HTTP on http://127.0.0.1:PORT/mcp

Both eras on one endpoint: 2026-07-28 answers input_required (MRTR, requestState sealed by the
SDK's AES-GCM boundary); on 2025-11-25 connections the resolver-based tools send real
server->client requests instead (the SDK's own legacy path).

Tools:
  add(a, b), echo(text)          plain; protocol: the revision the call is served under
  greet                          one elicitation (resolver)
  wizard                         three rounds, each elicitation depending on the previous answer
  confirm_and_summarize          an elicitation and a sampling request in the same round
  list_roots                     a roots/list round
  state_only                     two rounds that carry only requestState (hand-rolled), then done
  touch(uri)                     publishes resource-updated and tools-list-changed to listeners
  slow(steps)                    reports progress, then answers
  create_event(event, reminder_minutes)  nested models, optionals, a Literal, a title and
                                 annotations: the schema shapes FastMCP emits (for the export corpus)
Prompt `haiku(topic)` and resource template `vault://{name}` need an elicitation first
(hand-rolled InputRequiredResult; their state is checked on the retry). Plain prompt `plain` and
static resource `info://server`.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

import anyio

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import (
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

app = MCPServer("py-interop-server", instructions="mcp_client interop server (Python SDK)")


class Name(BaseModel):
    name: str


class Colour(BaseModel):
    colour: str


class Size(BaseModel):
    size: str


class Confirm(BaseModel):
    confirmed: bool


class Attendee(BaseModel):
    email: str
    optional: bool = False


class Event(BaseModel):
    title: str = Field(min_length=1)
    starts_at: str = Field(description="ISO 8601 start time")
    kind: Literal["meeting", "call"] = "meeting"
    attendees: list[Attendee] = []


# ----- resolvers -----


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_colour(who: Annotated[Name, Resolve(ask_name)]) -> Elicit[Colour]:
    return Elicit(f"Which colour, {who.name}?", Colour)


def ask_size(colour: Annotated[Colour, Resolve(ask_colour)]) -> Elicit[Size]:
    return Elicit(f"Which size for the {colour.colour} shirt?", Size)


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Proceed with the summary?", Confirm)


def summarize() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="Summarize: the quick brown fox"))],
        max_tokens=50,
    )


def roots() -> ListRoots:
    return ListRoots()


# ----- tools -----


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool(title="Create an event", annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))
def create_event(event: Event, reminder_minutes: int | None = Field(default=None, ge=0)) -> dict[str, str]:
    """Creates a calendar event."""
    return {"created": event.title}


@app.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@app.tool()
def protocol(ctx: Context) -> str:
    """The protocol revision this call is served under."""
    version = ctx.protocol_version or "unknown"
    return f"{'modern' if version >= '2026-07-28' else 'legacy'} {version}"


@app.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greets after eliciting a name."""
    return f"Hello, {who.name}!"


@app.tool()
def wizard(
    who: Annotated[Name, Resolve(ask_name)],
    colour: Annotated[Colour, Resolve(ask_colour)],
    size: Annotated[Size, Resolve(ask_size)],
) -> str:
    """Three rounds: name, then colour, then size."""
    return f"{who.name} ordered a {size.size} {colour.colour} shirt"


@app.tool()
def confirm_and_summarize(
    ok: Annotated[Confirm, Resolve(ask_confirm)],
    summary: Annotated[CreateMessageResult, Resolve(summarize)],
) -> str:
    """An elicitation and a sampling request in one round."""
    text = summary.content.text if isinstance(summary.content, TextContent) else repr(summary.content)
    return f"confirmed={ok.confirmed}; summary={text}; model={summary.model}"


@app.tool()
def list_roots(result: Annotated[ListRootsResult, Resolve(roots)]) -> str:
    """Asks the client for its roots."""
    return "roots: " + ", ".join(f"{r.name or '-'}={r.uri}" for r in result.roots)


@app.tool()
def state_only(label: str, ctx: Context) -> str | InputRequiredResult:
    """Two rounds carrying only requestState (load shedding), then the result."""
    state = ctx.request_state
    if state is None:
        return InputRequiredResult(request_state=f"{label}:step-1")
    if state == f"{label}:step-1":
        return InputRequiredResult(request_state=f"{label}:step-2")
    if state == f"{label}:step-2":
        return f"{label}: done after 2 state-only rounds"
    return f"{label}: unexpected state {state!r}"


@app.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Announces that `uri` changed and that the tool list changed (subscriptions/listen)."""
    await ctx.notify_resource_updated(uri)
    await ctx.notify_tools_changed()
    return f"touched {uri}"


@app.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times, 50 ms apart."""
    for i in range(1, steps + 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(i, steps, f"step {i}")
    return f"done in {steps} steps"


# ----- prompts -----


def _elicit(message: str, prop: str) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]},
        )
    )


def _accepted(ctx: Context, key: str, prop: str) -> str | None:
    answer = (ctx.input_responses or {}).get(key)
    if isinstance(answer, ElicitResult) and answer.action == "accept" and answer.content:
        value = answer.content.get(prop)
        return value if isinstance(value, str) else None
    return None


@app.prompt()
def haiku(topic: str, ctx: Context) -> str | InputRequiredResult:
    """A prompt that first asks for a style."""
    style = _accepted(ctx, "style", "style")
    if style is None or ctx.request_state != f"haiku:{topic}":
        return InputRequiredResult(
            input_requests={"style": _elicit(f"Which style of haiku about {topic}?", "style")},
            request_state=f"haiku:{topic}",
        )
    return f"Write a {style} haiku about {topic}."


@app.prompt()
def plain(subject: str) -> str:
    """A prompt without input."""
    return f"Tell me about {subject}."


# ----- resources -----


@app.resource("info://server", mime_type="text/plain")
def info() -> str:
    return "py-interop-server info"


@app.resource("vault://{name}", mime_type="text/plain")
def vault(name: str, ctx: Context) -> str | InputRequiredResult:
    """A resource that asks for a passphrase first."""
    phrase = _accepted(ctx, "passphrase", "passphrase")
    if phrase is None or ctx.request_state != f"vault:{name}":
        return InputRequiredResult(
            input_requests={"passphrase": _elicit(f"Passphrase for {name}?", "passphrase")},
            request_state=f"vault:{name}",
        )
    return f"vault {name} opened with {phrase}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
