#!/usr/bin/env python3
"""Checks that each async surface has every operation of its blocking surface.

    tests/started_parity.py [abi] [cpp] [swift]      (no argument: all three)

abi    every function of include/mcp_client.h that waits on the server (it takes
       `const struct mcp_call_opts *opts`, or is listed in WAITS_WITHOUT_OPTS) has a `*_start`
       twin.
cpp    every public method of mcp::Client, mcp::Subscription and mcp::Hub (bindings/cpp/mcp_client.hpp) that
       has a blocking overload also has a callback overload (last parameter a `...Completion`)
       and a std::future one (last parameter `use_future_t`), unless CPP_NOT_WAITING lists it.
swift  every public synchronous method of Client, Subscription and Hub (bindings/swift/Sources) has
       an `async` twin with the same name and argument labels, unless SWIFT_NOT_WAITING lists it.

A source-level check rather than a test calling every async operation: the C++ and Swift async
forms are thin wrappers over one `*_start` each, and what goes missing is a wrapper, not
behaviour. Listing the operations a test should call would be a second list to keep in step
with the blocking surface; this check derives it from that surface itself, fails before
anything is built, and needs no server. The functional tests of the async forms are in each
binding's suite (bindings/cpp/tests/test_async.cpp, bindings/swift/Tests/.../AsyncTests.swift).
Python and Go check themselves in their suites (bindings/python/tests/test_aio.py,
bindings/go/parity_test.go).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Functions that wait on the server without taking call options.
WAITS_WITHOUT_OPTS = {"mcp_client_notify_roots_changed", "mcp_subscription_next"}

# C++ methods with only a blocking form, each because it does not wait on the server: factories
# and accessors, registrations (they return at once), the host loop's own calls, and
# Subscription::cancel (ends the stream locally and tells the server without awaiting an answer).
CPP_NOT_WAITING = {
    "Client": {
        "stdio", "http", "server_info", "era", "close", "set_cache_partition", "clear_cache",
        "on_task_status", "on_elicitation", "on_elicitation_modes", "on_sampling", "on_roots",
        "on_notification", "on_log", "on_connection_state", "on_authorization", "set_token_store",
        "reset_token_store", "set_assertion_provider", "use_host_loop", "dispatch", "native",
        # Tool pinning: the hook's registration and the pin store's own operations (no server).
        "on_tool_pin", "tool_pins", "approve_tool_pin", "forget_tool_pin",
        "set_trace_context", "on_span",
    },
    "Subscription": {"acknowledged", "cancel", "native"},
    # The hub's factories, registrations and accessors; and start, list, set_member,
    # remove_member and the reloads, whose C functions have no *_start twin (each waits on
    # members' connects or cached lists, bounded by the members' own timeouts).
    "Hub": {
        "from_file", "from_text", "add_member", "members", "warnings", "on_event", "on_span", "set_trace_context", "close", "native", "start",
        "list", "set_member", "remove_member", "reload_from_file", "reload_from_text",
    },
}

# Swift methods with only a synchronous form, for the same reasons (plus the responders'
# replies, which hand over an answer and return).
SWIFT_NOT_WAITING = {
    "Client": {
        "serverInfo", "close", "setCachePartition", "clearCache", "setHandler", "removeHandler",
        "onElicitation", "onSampling", "onRoots", "onNotification", "onLog", "onTaskStatus",
        "onConnectionState", "onAuthorization", "removeAuthorizationHandler", "setTokenStore",
        "resetTokenStore", "setAssertionProvider", "removeAssertionProvider", "fetchRedirect",
        "onToolPin", "toolPins", "approveToolPin", "forgetToolPin",
        "setTraceContext", "onSpan",
    },
    "Subscription": {"acknowledged", "cancel"},
    # The reloads read a file and wait like start() (no *_start in the C ABI); their input
    # callback runs on the reading thread, which an async form would hide.
    "Hub": {"addMember", "members", "onEvent", "events", "close", "warnings", "reload"},
}


def matching(text: str, i: int, open_: str, close: str) -> int:
    """The index just past the bracket closing the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError(f"unbalanced {open_}{close} at {i}")


def check_abi() -> list[str]:
    header = (ROOT / "include" / "mcp_client.h").read_text()
    decls = {m.group(1): m.group(2) for m in re.finditer(r"\b(mcp_\w+)\(([^;{]*?)\);", header)}
    problems = []
    for name, params in sorted(decls.items()):
        if name.endswith("_start"):
            continue
        waits = "const struct mcp_call_opts *opts" in params or name in WAITS_WITHOUT_OPTS
        if waits and name + "_start" not in decls:
            problems.append(f"abi: {name} waits on the server but has no {name}_start")
    return problems


def without_comments(text: str) -> str:
    """C++ or Swift source with comments blanked out (string and character literals kept whole)."""
    literal = r'R"\((?:.|\n)*?\)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\])\''
    return re.sub(literal + r"|//[^\n]*|/\*(?:.|\n)*?\*/", lambda m: m.group(0) if m.group(0)[0] in "R\"'" else " ", text)


def cpp_methods(body: str) -> dict[str, list[str]]:
    """Public member functions of a class body: name -> the parameter lists of its overloads."""
    body = body.split("\nprivate:")[0]
    methods: dict[str, list[str]] = {}
    i, depth = 0, 0
    while i < len(body):
        c = body[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and (m := re.match(r"([a-z_][a-z0-9_]*)\s*\(", body[i:])) and (
            i == 0 or not (body[i - 1].isalnum() or body[i - 1] in "_:.>")
        ):
            end = matching(body, i + m.end() - 1, "(", ")")
            name = m.group(1)
            if not name.endswith("_") and name not in ("void", "bool", "operator"):
                methods.setdefault(name, []).append(body[i + m.end() : end - 1])
            i = end
            continue
        i += 1
    return methods


def check_cpp() -> list[str]:
    hpp = without_comments((ROOT / "bindings" / "cpp" / "mcp_client.hpp").read_text())
    problems = []
    for cls in ("Client", "Subscription", "Hub"):
        start = hpp.index(f"\nclass {cls} {{")
        open_ = hpp.index("{", start)
        body = hpp[open_ + 1 : matching(hpp, open_, "{", "}") - 1]
        for name, overloads in sorted(cpp_methods(body).items()):
            last = [re.split(r",(?![^<(]*[>)])", p)[-1] for p in overloads]
            callback = any("Completion" in p for p in last)
            future = any("use_future_t" in p for p in last)
            blocking = any("Completion" not in p and "use_future_t" not in p for p in last)
            if not blocking or name in CPP_NOT_WAITING[cls]:
                continue
            if not callback:
                problems.append(f"cpp: {cls}::{name} has no started overload (a Completion callback)")
            if not future:
                problems.append(f"cpp: {cls}::{name} has no std::future overload (use_future_t)")
    return problems


def swift_signatures() -> dict[tuple[str, str, tuple[str, ...]], set[bool]]:
    """(type, name, argument labels) -> whether async forms exist (True) and sync ones (False)."""
    found: dict[tuple[str, str, tuple[str, ...]], set[bool]] = {}
    for path in sorted((ROOT / "bindings" / "swift" / "Sources" / "MCPClient").glob("*.swift")):
        text = without_comments(path.read_text())
        owners = [(m.start(), m.group(1)) for m in re.finditer(r"(?m)^(?:public )?(?:final )?(?:class|extension|struct|enum) (\w+)", text)]
        for m in re.finditer(r"public (?:static )?func (\w+)\s*(?:<[^>]*>)?\(", text):
            owner = next((o for at, o in reversed(owners) if at < m.start()), "")
            if owner not in ("Client", "Subscription", "Hub"):
                continue
            end = matching(text, m.end() - 1, "(", ")")
            params = text[m.end() : end - 1]
            labels = tuple(
                p.split(":")[0].split()[0] for p in re.split(r",(?![^<(\[]*[>)\]])", params) if p.strip()
            )
            tail = text[end : text.index("{", end)]
            found.setdefault((owner, m.group(1), labels), set()).add(bool(re.search(r"\basync\b", tail)))
    return found


def check_swift() -> list[str]:
    problems = []
    for (owner, name, labels), forms in sorted(swift_signatures().items()):
        if False in forms and True not in forms and name not in SWIFT_NOT_WAITING[owner]:
            problems.append(f"swift: {owner}.{name}({''.join(l + ':' for l in labels)}) has no async form")
    return problems


CHECKS = {"abi": check_abi, "cpp": check_cpp, "swift": check_swift}


def main() -> int:
    names = sys.argv[1:] or list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        print(f"unknown check(s): {', '.join(unknown)}; choose from {', '.join(CHECKS)}", file=sys.stderr)
        return 2
    problems = [p for n in names for p in CHECKS[n]()]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"started_parity: {', '.join(names)}: {'ok' if not problems else f'{len(problems)} missing'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
