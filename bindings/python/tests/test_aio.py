"""AsyncClient: started calls on asyncio (host-loop mode), task cancellation, async handlers,
close with calls in flight, no thread per call."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import mcp_client
from mcp_client import _aio

from conftest import REQUEST_TIMEOUT_MS


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def make(fixture_server: str, *flags: str) -> mcp_client.AsyncClient:
    return mcp_client.AsyncClient.stdio(fixture_server, list(flags), request_timeout_ms=REQUEST_TIMEOUT_MS)


def test_calls_and_results(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            info = await client.connect()
            assert info["era"] == "modern"
            result = await client.call_tool("echo", {"text": "hi"})
            assert result["content"][0]["text"] == "hi"
            tools = await client.list_tools()
            assert any(t["name"] == "echo" for t in tools["tools"])
            assert await client.all_prompts()
            prompt = await client.get_prompt("greeting", {"name": "Ann"})
            assert "Ann" in str(prompt)
            res = await client.read_resource("fixture://static")
            assert res["contents"]
            done = await client.complete(
                {"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "al"}}
            )
            assert done["completion"]["values"] == ["alice", "albert"]
            raw = await client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
            assert "5" in str(raw)
            # a tool error is a result; a JSON-RPC error raises its class
            assert (await client.call_tool("fail"))["isError"] is True
            with pytest.raises(mcp_client.RpcError) as e:
                await client.call_tool("rpc_error")
            assert e.value.code == -32050
        assert client.closed
        assert _aio.pending_calls() == 0

    run(main())


def test_ping_and_log_level_are_started_calls(fixture_server):
    async def main() -> None:
        async with make(fixture_server, "--era", "legacy") as client:
            info = await client.connect()
            assert info["era"] == "legacy"
            await client.ping()
            assert (await client.call_tool("log_level"))["content"][0]["text"] == "unset"
            with pytest.raises(mcp_client.InvalidArgumentError):
                await client.set_log_level("loud")
            await client.set_log_level("debug")
            assert (await client.call_tool("log_level"))["content"][0]["text"] == "debug"
        async with make(fixture_server) as client:
            await client.connect()
            with pytest.raises(mcp_client.UnsupportedError):
                await client.ping()  # modern servers removed ping
        assert _aio.pending_calls() == 0

    run(main())


def test_gather_many_concurrent_calls_on_one_thread(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            await client.connect()
            threads_before = threading.active_count()
            results = await asyncio.gather(*(client.call_tool("echo", {"text": str(i)}) for i in range(500)))
            assert [r["content"][0]["text"] for r in results] == [str(i) for i in range(500)]
            # no Python thread per call (the library's own threads are not Python threads either)
            assert threading.active_count() == threads_before

    run(main())


def test_task_cancellation_cancels_the_call(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            await client.connect()
            task = asyncio.ensure_future(client.call_tool("hang"))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the server was told, and the completion arrived (the pending entry is gone)
            for _ in range(100):
                if _aio.pending_calls() == 0:
                    break
                await asyncio.sleep(0.01)
            assert _aio.pending_calls() == 0
            ids = (await client.call_tool("cancelled_ids"))["content"][0]["text"]
            assert ids != "[]"
            # wait_for's timeout is a cancellation too
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.call_tool("hang"), 0.05)
            # the library's own timeout
            with pytest.raises(mcp_client.MCPTimeoutError):
                await client.call_tool("hang", timeout=0.05)
            # a CancelToken still works
            tok = mcp_client.CancelToken()
            later = asyncio.ensure_future(client.call_tool("hang", cancel=tok))
            await asyncio.sleep(0.02)
            tok.cancel()
            with pytest.raises(mcp_client.CancelledError):
                await later

    run(main())


def test_close_with_calls_in_flight(fixture_server):
    async def main() -> None:
        client = make(fixture_server)
        await client.connect()
        calls = [asyncio.ensure_future(client.call_tool("hang")) for _ in range(20)]
        await asyncio.sleep(0.05)
        await client.aclose()
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(o, mcp_client.ClosedError) for o in outcomes), outcomes
        with pytest.raises(mcp_client.ClosedError):
            await client.call_tool("echo", {"text": "x"})
        assert _aio.pending_calls() == 0

    run(main())


def test_async_handler_runs_on_the_loop(fixture_server):
    loop_thread: list[int] = []

    async def main() -> None:
        # manual_input declares elicitation also while no handler is set (the last step).
        async with mcp_client.AsyncClient.stdio(
            fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS, manual_input=["elicitation"]
        ) as client:
            seen: list[int] = []

            async def ask(params: dict[str, Any]) -> dict[str, Any]:
                seen.append(threading.get_ident())
                await asyncio.sleep(0.01)
                return {"action": "accept", "content": {"name": "Ada"}}

            client.on_elicitation(ask)
            loop_thread.append(threading.get_ident())
            result = await client.call_tool("elicit_once")
            assert result["content"][0]["text"] == "Hello, Ada!"
            assert seen == loop_thread
            # a plain def works as well
            client.on_elicitation(lambda p: {"action": "accept", "content": {"name": "Bo"}})
            result = await client.call_tool("elicit_once")
            assert result["content"][0]["text"] == "Hello, Bo!"
            # no handler: InputRequiredError with the requests
            client.on_elicitation(None)
            with pytest.raises(mcp_client.InputRequiredError) as e:
                await client.call_tool("elicit_once")
            assert e.value.input_requests

    run(main())


def test_cancelling_the_call_cancels_the_async_handler(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            started = asyncio.Event()
            handler_cancelled = asyncio.Event()

            async def ask(params: dict[str, Any]) -> dict[str, Any]:
                started.set()
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    handler_cancelled.set()
                    raise
                return {"action": "decline"}

            client.on_elicitation(ask)
            call = asyncio.ensure_future(client.call_tool("elicit_once"))
            await asyncio.wait_for(started.wait(), 5)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # pushed by the library (mcp_responder_on_cancel), not polled
            await asyncio.wait_for(handler_cancelled.wait(), 5)

    run(main())


def test_progress_runs_on_the_loop(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            me = threading.get_ident()
            seen: list[tuple[float, int]] = []
            await client.call_tool(
                "progress", {"steps": 3, "delay_ms": 1}, progress=lambda p, t, m: seen.append((p, threading.get_ident()))
            )
            assert [p for p, _ in seen] == [1, 2, 3]
            assert all(t == me for _, t in seen)

    run(main())


def test_one_loop_per_client(fixture_server):
    client = make(fixture_server)

    async def first() -> None:
        await client.call_tool("echo", {"text": "a"})

    async def second() -> None:
        with pytest.raises(RuntimeError):
            await client.call_tool("echo", {"text": "b"})
        await client.aclose()

    run(first())
    run(second())
