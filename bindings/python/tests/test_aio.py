"""AsyncClient: started calls on asyncio (host-loop mode), task cancellation, async handlers,
close with calls in flight, no thread per call."""

from __future__ import annotations

import asyncio
import inspect
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


# ----- parity with Client, checked mechanically -----

# Client operations AsyncClient offers under another name, with the parameters that have no
# counterpart there, each because the blocking form makes no sense on a loop: ``close`` blocks
# while the server shuts down, so AsyncClient has ``aclose`` (and ``async with``), which always
# frees the handle before it returns (so ``close``'s ``wait`` for that has nothing to bound).
# The same for Subscription. Nothing else may be missing.
RENAMED = {"close": ("aclose", {"wait"})}
SUBSCRIPTION_RENAMED = {"close": ("aclose", set())}


def _public(cls: type) -> dict[str, Any]:
    return {n: v for n, v in vars(cls).items() if not n.startswith("_")}


def _missing(blocking: type, started: type, renamed: dict[str, tuple[str, set[str]]]) -> list[str]:
    """Public operations of ``blocking`` that ``started`` lacks, or takes with other parameters
    (call options, which AsyncClient takes as ``**opts``, excepted)."""
    from mcp_client._client import _OPT_KEYS

    problems = []
    for name, member in _public(blocking).items():
        async_name, no_counterpart = renamed.get(name, (name, set()))
        other = getattr(started, async_name, None)
        if other is None:
            problems.append(f"{started.__name__} lacks {name}")
            continue
        if isinstance(member, property) != isinstance(inspect.getattr_static(started, async_name), property):
            problems.append(f"{name}: a property in one and not the other")
            continue
        if not callable(member) and not isinstance(member, (classmethod, staticmethod)):
            continue
        fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        want = inspect.signature(fn).parameters
        got = inspect.signature(other).parameters
        takes_opts = any(p.kind is p.VAR_KEYWORD for p in got.values())
        for p in want.values():
            if p.name in ("self", "cls") or p.name in got or p.name in no_counterpart:
                continue
            if takes_opts and (p.name in _OPT_KEYS or p.kind is p.VAR_KEYWORD):
                continue
            problems.append(f"{started.__name__}.{async_name} lacks parameter {p.name}")
    return problems


def test_async_client_has_every_operation_of_client():
    assert _missing(mcp_client.Client, mcp_client.AsyncClient, RENAMED) == []
    assert _missing(mcp_client.Subscription, mcp_client.AsyncSubscription, SUBSCRIPTION_RENAMED) == []
    # The operations that wait on the server are coroutines there (no thread blocks on them).
    for name in ("connect", "call_tool", "resume_task", "get_task", "cancel_task", "update_task", "list_skills",
                 "get_skill", "read_skill_file", "listen", "subscribe_resource", "unsubscribe_resource",
                 "notify_roots_changed", "list_resource_templates", "all_resource_templates"):
        assert inspect.iscoroutinefunction(getattr(mcp_client.AsyncClient, name)), name


def test_the_parity_check_sees_a_missing_operation():
    class Lacking(mcp_client.AsyncClient):
        listen = None  # type: ignore[assignment]

    class Short(mcp_client.AsyncClient):
        async def get_skill(self) -> None:  # type: ignore[override]
            pass

    assert _missing(mcp_client.Client, Lacking, RENAMED) == ["Lacking lacks listen"]
    assert _missing(mcp_client.Client, Short, RENAMED) == [
        "Short.get_skill lacks parameter uri",
        "Short.get_skill lacks parameter opts",
    ]


# ----- the operations beyond calls -----


def test_task_calls_update_resume_get_and_cancel(fixture_server):
    async def main() -> None:
        async with mcp_client.AsyncClient.stdio(
            fixture_server, [], request_timeout_ms=REQUEST_TIMEOUT_MS, tasks=True, manual_input=["elicitation"]
        ) as client:
            events: list[tuple[str, str]] = []
            loop_thread = threading.get_ident()
            on_loop: list[bool] = []

            async def on_task(task: dict[str, Any]) -> None:
                on_loop.append(threading.get_ident() == loop_thread)
                events.append((task["taskId"], task["status"]))

            async def task_with(status: str, known: set[str]) -> str:
                for _ in range(500):
                    for tid, st in events:
                        if st == status and tid not in known:
                            return tid
                    await asyncio.sleep(0.01)
                raise AssertionError(f"no {status} task event: {events}")

            client.on_task_status(on_task)
            with pytest.raises(mcp_client.InputRequiredError):
                await client.call_tool("task_input")
            tid = await task_with("input_required", set())
            await client.update_task(tid, {"confirm": {"action": "accept", "content": {"confirmed": True}}})
            await asyncio.sleep(0.06)  # the fixture flags polls closer than its pollIntervalMs
            assert "confirmed:" in (await client.resume_task(tid))["content"][0]["text"]
            assert (await client.get_task(tid))["status"] == "completed"
            assert on_loop and all(on_loop)

            with pytest.raises(mcp_client.MCPTimeoutError):
                await client.call_tool("task_slow", max_total=0.02)
            slow = await task_with("working", {tid})
            # Cancelling the awaiting task cancels the started resume (asyncio.CancelledError).
            resume = asyncio.ensure_future(client.resume_task(slow))
            await asyncio.sleep(0.05)
            resume.cancel()
            with pytest.raises(asyncio.CancelledError):
                await resume
            await client.cancel_task(slow)
            assert (await client.get_task(slow))["status"] == "cancelled"
            # A task the server cancelled: the library's CancelledError (not asyncio's).
            with pytest.raises(mcp_client.CancelledError):
                await client.resume_task(slow)
            with pytest.raises(mcp_client.RpcError):
                await client.get_task("task-none")
        assert _aio.pending_calls() == 0

    run(main())


def test_skill_calls(fixture_server):
    hello = "skill://fixture/hello-world/SKILL.md"

    async def main() -> None:
        async with mcp_client.AsyncClient.stdio(
            fixture_server, ["--skills", "genuine", "--page-size", "1"], request_timeout_ms=REQUEST_TIMEOUT_MS,
            skills=True,
        ) as client:
            listing = await client.list_skills()
            assert [e["uri"] for e in listing["skills"]] == [hello, "skill://live-data/SKILL.md"]
            entry = await client.get_skill(hello)
            assert entry["frontmatter"]["name"] == "hello-world"
            assert "Say hello" in (await client.read_skill_file(entry))["text"]
            usage = await client.read_skill_file(entry, "skill://fixture/hello-world/notes/usage.md")
            assert "friendly tone" in usage["text"]
            with pytest.raises(mcp_client.SkillVerificationError, match="not a file of the skill"):
                await client.read_skill_file(entry, "skill://fixture/hello-world/other.md")
        async with mcp_client.AsyncClient.stdio(
            fixture_server, ["--skills", "digest"], request_timeout_ms=REQUEST_TIMEOUT_MS, skills=True
        ) as client:
            tampered = await client.get_skill(hello)
            with pytest.raises(mcp_client.SkillVerificationError, match="digest mismatch"):
                await client.read_skill_file(tampered)
        async with make(fixture_server) as client:
            with pytest.raises(mcp_client.UnsupportedError):
                await client.list_skills()

    run(main())


def test_listen_reads_on_the_loop(fixture_server):
    async def main() -> None:
        async with make(fixture_server) as client:
            sub = await client.listen({"toolsListChanged": True})
            assert sub.acknowledged.get("toolsListChanged") is True
            assert await sub.next(timeout=0.03) is None
            await client.call_tool("notify")
            event = await sub.next(timeout=10)
            assert event is not None and event["method"] == "notifications/tools/list_changed"
            # A cancelled wait leaves the subscription open.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(sub.next(), 0.03)
            await client.call_tool("notify")
            async for event in sub:
                assert event["method"] == "notifications/tools/list_changed"
                break
            await sub.cancel()
            assert [e async for e in sub] == []  # ended
            await sub.aclose()
            async with await client.listen({"toolsListChanged": True}) as other:  # closes at the end
                assert other.acknowledged
        async with make(fixture_server, "--era", "legacy") as legacy:
            with pytest.raises(mcp_client.UnsupportedError):
                await legacy.listen({"toolsListChanged": True})
            await legacy.subscribe_resource("fixture://static")
            await legacy.unsubscribe_resource("fixture://static")
            await legacy.notify_roots_changed()
        assert _aio.pending_calls() == 0

    run(main())


def test_registrations_templates_and_cache_controls(fixture_server, tmp_path):
    record = tmp_path / "record.jsonl"

    async def main() -> None:
        async with make(fixture_server, "--cache-ttl-ms", "60000", "--record", str(record)) as client:
            states: list[tuple[str, int, str]] = []
            client.on_connection_state(lambda state, attempt, detail: states.append((state, attempt, detail)))
            assert client.server_info is None
            await client.connect()
            assert client.server_info is not None and client.server_info["era"] == "modern"
            templates = await client.list_resource_templates()
            assert templates["resourceTemplates"]
            assert await client.all_resource_templates() == templates["resourceTemplates"]
            for _ in range(100):
                if states:
                    break
                await asyncio.sleep(0.01)
            assert states[0][0] == "connected"
            await client.list_tools()
            await client.list_tools()
            assert record.read_text().count('"tools/list"') == 1  # cached
            client.set_cache_partition("user-b")
            await client.list_tools()
            assert record.read_text().count('"tools/list"') == 2
            client.clear_cache()
            await client.list_tools()
            assert record.read_text().count('"tools/list"') == 3
            client.clear_era_cache()
            assert client.dropped_callbacks == 0

            async def on_url(params: dict[str, Any]) -> dict[str, Any]:
                assert params["mode"] == "url"
                return {"action": "accept"}

            client.on_elicitation_modes(on_url, form=False, url=True)
            assert (await client.call_tool("url_login"))["content"][0]["text"] == "url login: accept"

    run(main())
