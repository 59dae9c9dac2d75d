#!/usr/bin/env python3
"""The C API reference, generated from include/mcp_client.h's comments (`make reference`).

Writes Markdown into OUT (default target/reference/c): `index.md` (the header's conventions,
ownership, threading and bounds, then every function with its first sentence), one page per
group of functions (GROUPS below, by name), `types.md` (handles, callbacks, option structs) and
`constants.md`. Every `mcp_*`/`MCP_*` name in a comment links to where it is documented.

Fails (exit 1, one line per warning, nothing written) when a function has no comment, falls in
no group, or a group has no function, or when a comment names an `mcp_*`/`MCP_*` identifier
(or `mcp_call_opts.field`, or a `prefix_*` family) the header does not declare.

Usage: tests/docs/reference.py [--header include/mcp_client.h] [--out target/reference/c]
"""

import argparse
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (page, title, what the page covers, the function names it holds: a full match, first group wins).
GROUPS = [
    ("clients", "Clients", "Creating a client from a configuration, connecting, what the server said about "
     "itself, closing and freeing.", r"mcp_client_(new|connect|server_info|era|dropped_callbacks|close|free)"),
    ("configuration", "Configuration", "The `mcp_config` builder: transport, environment, authorization, "
     "era, timeouts and the switches of the optional features.", r"mcp_config_\w+"),
    ("requests", "Requests", "Blocking MCP requests on a connected client, and the per-call options they take.",
     r"mcp_call_opts_init|mcp_client_(list|list_all|call_tool|get_prompt|read_resource|complete|request|ping"
     r"|set_log_level|subscribe_resource|unsubscribe_resource|notify_roots_changed)"),
    ("hub", "Hub", "Many servers as one client: a hub from members or a host's configuration file (and the "
     "read options and input slot for it), its members' states and warnings, merged lists, routed calls in "
     "blocking and started forms, events, reloads, closing and freeing.", r"mcp_hub_(?!export_)\w+"),
    ("export", "Tools for the model", "Tool lists exported to the OpenAI, Anthropic and Gemini formats, the "
     "model's tool calls found in a reply, results converted to each API's message, and dispatch on a client "
     "or a hub.", r"mcp_export_\w+|mcp_(client|hub)_export_dispatch"),
    ("started-calls", "Started calls and event loops", "The non-blocking form of every request (`*_start`, "
     "completed by a callback), the `mcp_call` handle, and delivery on the host's own event loop.",
     r"mcp_\w+_start|mcp_call_(cancel|free)|mcp_client_(use_host_loop|set_wakeup|dispatch)"),
    ("cancellation", "Cancellation", "Cancel tokens shared between calls and threads.", r"mcp_cancel_token_\w+"),
    ("handlers", "Handlers, responders and listeners", "Answering the server's requests (elicitation, sampling, "
     "roots) through a responder, and listening to notifications, logs and the connection state.",
     r"mcp_client_on_(elicitation|elicitation_modes|sampling|roots|connection_state)"
     r"|mcp_client_set_(notification|log)_handler|mcp_responder_\w+"),
    ("tool-pinning", "Tool pinning", "The hook told of each changed, new or removed tool (deciding it under "
     "policy `ask`), and the pins of a client's server listed, approved and forgotten.",
     r"mcp_client_(on_tool_pin|tool_pins|approve_tool_pin|forget_tool_pin)"),
    ("subscriptions", "Subscriptions", "`subscriptions/listen` streams of a modern server, read by polling.",
     r"mcp_client_listen|mcp_subscription_\w+"),
    ("authorization", "Authorization", "The OAuth browser step, token stores and their locks, and assertion "
     "sources for the grant extensions.",
     r"mcp_client_on_authorization|mcp_client_set_(token_store|locking_token_store|assertion_provider)"
     r"|mcp_(token_slot|assertion_slot|auth)_\w+"),
    ("caching", "Response cache", "The client's response cache (SEP-2549) and what it learnt about servers' eras.",
     r"mcp_client_(set_cache_partition|clear_cache|clear_era_cache)"),
    ("tasks", "Tasks", "The tasks extension (SEP-2663): status listener, resume, get, cancel, update.",
     r"mcp_client_(on_task_status|resume_task|get_task|cancel_task|update_task)"),
    ("skills", "Skills", "The skills extension (SEP-2640): list, get and the verified read of a skill file.",
     r"mcp_client_(list_skills|get_skill|read_skill_file)"),
    ("apps", "MCP Apps", "The apps extension (SEP-1865): a tool's UI link and the verified read of an app's view.",
     r"mcp_tool_ui|mcp_client_read_app"),
    ("trace-context", "Trace context", "W3C trace context (SEP-414) for every request of a call: the host's "
     "callback giving its current context, and the slot it fills.",
     r"mcp_client_set_trace_context_fn|mcp_trace_slot_set"),
    ("spans", "Spans", "Each MCP operation as a CLIENT span by the OpenTelemetry semantic conventions for MCP, "
     "given to the host's listener as JSON.",
     r"mcp_client_on_span"),
    ("errors", "Errors", "Reading a failed call's `mcp_error`, and freeing it.", r"mcp_error_\w+"),
    ("utilities", "Statuses, strings, JSON and versions", "Status names, freeing returned strings, reading JSON "
     "without a JSON library, and the library's versions.",
     r"mcp_status_\w+|mcp_string_free|mcp_json_\w+|mcp_version|mcp_abi_version"),
]

NAME = re.compile(r"(?<![\w.-])((?:mcp|MCP)_[A-Za-z0-9_]*)(\*|\.[a-z_]+)?")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def page_order(f: "Item") -> int:
    """Constructors first, destructors last, the rest in header order (a stable sort)."""
    if f.name.endswith(("_new", "_init")):
        return 0
    return 2 if f.name.endswith("_free") else 1


@dataclass
class Item:
    kind: str  # function, define, opaque, typedef, callback, struct
    name: str
    doc: str
    decl: str
    line: int
    fields: list = field(default_factory=list)  # (name, type, doc) for structs


def doc_text(lines: list[str]) -> str:
    """A `/** ... */` or `/* ... */` block's text, the ` * ` margins removed."""
    out = []
    for raw in lines:
        s = raw.strip()
        s = re.sub(r"^/\*\*?", "", s)
        s = re.sub(r"\*/$", "", s)
        s = re.sub(r"^\* ?", "", s.strip()) if s.strip().startswith("*") else s
        out.append(s.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def parse(header: str):
    """The header's top comment and its items in order."""
    lines = header.splitlines()
    items: list[Item] = []
    top = None
    i, doc, doc_line = 0, None, 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("/*"):
            j = i
            while "*/" not in lines[j]:
                j += 1
            block = lines[i:j + 1]
            if top is None and i == 0:
                top = doc_text(block)
            elif s.startswith("/**"):
                doc, doc_line = doc_text(block), i + 1
            i = j + 1
            continue
        m = re.match(r"#\s*define\s+(\w+)\s*(.*)", s)
        if m:
            items.append(Item("define", m.group(1), doc or "", m.group(2).strip(), i + 1))
            doc = None
        elif s.startswith("MCP_API"):
            j = i
            while not lines[j].rstrip().endswith(";"):
                j += 1
            decl = " ".join(part.strip() for part in lines[i:j + 1])
            decl = re.sub(r"\b(MCP_API|MCP_WARN_UNUSED_RESULT)\s*", "", decl).strip()
            name = re.search(r"(\w+)\s*\(", decl).group(1)
            items.append(Item("function", name, doc or "", decl, i + 1))
            doc, i = None, j
        elif re.match(r"typedef struct (\w+) \1;", s):
            items.append(Item("opaque", s.split()[2], doc or "", s, i + 1))
            doc = None
        elif s.startswith("typedef struct") and s.endswith("{"):
            j, fields, fdoc = i + 1, [], None
            while not lines[j].startswith("}"):
                f = lines[j].strip()
                if f.startswith("/**"):
                    k = j
                    while "*/" not in lines[k]:
                        k += 1
                    fdoc, j = doc_text(lines[j:k + 1]), k + 1
                    continue
                fm = re.match(r"(.+?)\s*\b(\w+);$", f)
                if fm:
                    fields.append((fm.group(2), fm.group(1), fdoc or ""))
                    fdoc = None
                j += 1
            name = lines[j].strip("}; \n")
            items.append(Item("struct", name, doc or "", s, i + 1, fields))
            doc, i = None, j
        elif s.startswith("typedef void (*") or (s.startswith("typedef") and "(*" in s):
            j = i
            while not lines[j].rstrip().endswith(";"):
                j += 1
            decl = " ".join(part.strip() for part in lines[i:j + 1])
            name = re.search(r"\(\*(\w+)\)", decl).group(1)
            items.append(Item("callback", name, doc or "", decl, i + 1))
            doc, i = None, j
        elif s.startswith("typedef"):
            name = re.search(r"(\w+);$", s).group(1)
            items.append(Item("typedef", name, doc or "", s, i + 1))
            doc = None
        elif s and not s.startswith(("#", "extern", "}", "//")):
            doc = None
        i += 1
    return top or "", items


class Reference:
    def __init__(self, header_path: Path):
        self.header_path = header_path
        self.top, self.items = parse(header_path.read_text())
        self.warnings: list[str] = []
        self.by_name = {it.name: it for it in self.items}
        self.page_of: dict[str, str] = {}
        self.groups: list[tuple[str, str, str, list[Item]]] = []

    def warn(self, line: int, text: str) -> None:
        self.warnings.append(f"{self.header_path}:{line}: {text}")

    def group(self) -> None:
        functions = [it for it in self.items if it.kind == "function"]
        taken = set()
        for page, title, about, pattern in GROUPS:
            members = [f for f in functions if f.name not in taken and re.fullmatch(pattern, f.name)]
            members.sort(key=page_order)
            taken.update(f.name for f in members)
            if not members:
                self.warn(0, f"group {page!r} ({title}) has no function: its pattern {pattern!r} matches none")
            self.groups.append((page, title, about, members))
            for f in members:
                self.page_of[f.name] = f"{page}.md#{f.name}"
        for f in functions:
            if f.name not in taken:
                self.warn(f.line, f"{f.name}: in no group of tests/docs/reference.py's GROUPS")
            if not f.doc.strip():
                self.warn(f.line, f"{f.name}: no comment")
        for it in self.items:
            if it.kind in ("opaque", "typedef", "callback", "struct"):
                self.page_of[it.name] = f"types.md#{it.name}"
            elif it.kind == "define":
                self.page_of[it.name] = "constants.md#constants"

    def check_names(self) -> None:
        texts = [(1, self.top)] + [(it.line, it.doc) for it in self.items]
        texts += [(it.line, f[2]) for it in self.items for f in it.fields]
        for line, text in texts:
            for m in NAME.finditer(text):
                name, tail = m.group(1), m.group(2) or ""
                if text[m.start() - 1 : m.start()] == '"' and text[m.end() : m.end() + 1] == '"':
                    continue  # a quoted string is a value the function returns, not a reference
                if tail == "*":
                    if not any(n.startswith(name) for n in self.by_name):
                        self.warn(line, f"{name}* names no declared identifier")
                elif name not in self.by_name:
                    self.warn(line, f"{name} is not declared in the header")
                elif tail.startswith("."):
                    fields = [f[0] for f in self.by_name[name].fields]
                    if fields and tail[1:] not in fields:
                        self.warn(line, f"{name}{tail}: {name} has no field {tail[1:]}")

    # ---- rendering -------------------------------------------------------------------------------

    def link(self, name: str, here: str, code: bool, shown: str | None = None) -> str:
        target = self.page_of.get(name)
        shown = shown or (f"`{name}`" if code else name)
        if not target:
            return shown
        page, _, anchor = target.partition("#")
        return f"[{shown}]({'' if page == here else page}#{anchor})"

    def prose(self, text: str, here: str) -> str:
        """Comment text as Markdown: names linked, stray `*` and `<` escaped outside code spans."""
        out, pos = [], 0
        for m in CODE_SPAN.finditer(text):
            out.append(self.plain(text[pos:m.start()], here))
            inner = m.group(2)
            name = NAME.fullmatch(inner)
            if inner in self.page_of:
                out.append(self.link(inner, here, True))
            elif name and (name.group(2) or "").startswith("."):  # `mcp_call_opts.field`: the struct
                out.append(self.link(name.group(1), here, True, m.group(0)))
            else:
                out.append(m.group(0))
            pos = m.end()
        out.append(self.plain(text[pos:], here))
        return "".join(out)

    def plain(self, text: str, here: str) -> str:
        text = text.replace("*", "\\*").replace("<", "&lt;")
        return NAME.sub(lambda m: self.link(m.group(1), here, False) + (m.group(2) or "").replace("*", "\\*"), text)

    @staticmethod
    def signature(decl: str) -> str:
        """A declaration with one parameter a line when it is long."""
        decl = re.sub(r"\s+", " ", decl)
        if len(decl) <= 100:
            return decl
        head, _, params = decl.partition("(")
        params = params.rsplit(")", 1)[0]
        return head + "(\n    " + ",\n    ".join(p.strip() for p in params.split(",")) + ");"

    @staticmethod
    def first_sentence(doc: str) -> str:
        text = " ".join(doc.split()).replace("e.g.", "e\0g\0").replace("i.e.", "i\0e\0")
        m = re.match(r"(.+?[.!?])(\s|$)", text)
        return (m.group(1) if m else text).replace("\0", ".")

    def page_header(self, title: str) -> list[str]:
        return [f"# {title}", "",
                f"Generated from `{self.header_path.name}` by `make reference`; [index](index.md).", ""]

    def render_group(self, slug: str, title: str, about: str, members: list[Item]) -> str:
        page = f"{slug}.md"
        L = self.page_header(title) + [self.prose(about, page), ""]
        L += [f"- {self.link(f.name, page, True)}: {self.prose(self.first_sentence(f.doc), page)}" for f in members]
        for f in members:
            L += ["", f"## `{f.name}`", "", "```c", self.signature(f.decl), "```", "", self.prose(f.doc, page)]
        return "\n".join(L) + "\n"

    def render_types(self) -> str:
        page = "types.md"
        L = self.page_header("Types")
        for kind, heading in (("opaque", "Handles"), ("typedef", "Scalar types"), ("struct", "Option structs"),
                              ("callback", "Callbacks")):
            L += [f"## {heading}", ""]
            for it in (i for i in self.items if i.kind == kind):
                L += [f"### `{it.name}`", "", "```c", self.signature(it.decl) if kind != "struct" else
                      f"typedef struct {it.name} {{ ... }} {it.name};", "```", "", self.prose(it.doc, page), ""]
                if it.fields:
                    L += ["| field | type | meaning |", "|---|---|---|"]
                    for n, t, d in it.fields:
                        L.append(f"| `{n}` | `{t}` | {self.prose(' '.join(d.split()), page).replace('|', '&#124;')} |")
                    L.append("")
        return "\n".join(L).rstrip() + "\n"

    def render_constants(self) -> str:
        page = "constants.md"
        L = self.page_header("Constants") + ["## Constants", "", "| name | value | meaning |", "|---|---|---|"]
        for it in self.items:
            if it.kind == "define" and it.decl and not it.decl.startswith("__"):  # not the guard, not MCP_API
                doc = self.prose(" ".join(it.doc.split()), page).replace("|", "&#124;")
                L.append(f"| `{it.name}` | `{it.decl}` | {doc} |")
        return "\n".join(L) + "\n"

    def render_index(self) -> str:
        page = "index.md"
        L = ["# mcp_client C API reference", "",
             f"Generated from the comments of `include/{self.header_path.name}` by `make reference`. "
             "Pages: " + ", ".join(f"[{t}]({p}.md)" for p, t, _, _ in self.groups)
             + ", [types](types.md), [constants](constants.md).", ""]
        for para in self.top.split("\n\n"):
            lines = para.splitlines()
            if len(lines) > 1 and re.fullmatch(r"[A-Z]{3,}", lines[0].split()[0]):  # "OWNERSHIP (who frees what)"
                words = [w.lower() if re.fullmatch(r"[A-Z]+", w) else w for w in lines[0].split()]
                title = " ".join(words)
                L += [f"## {title[:1].upper()}{title[1:]}", ""]
                lines = lines[1:]
            L += [self.prose("\n".join(lines), page), ""]
        L += ["## Functions", ""]
        for p, title, _, members in self.groups:
            L += [f"### [{title}]({p}.md)", ""]
            L += [f"- {self.link(f.name, page, True)}: {self.prose(self.first_sentence(f.doc), page)}" for f in members]
            L.append("")
        return "\n".join(L).rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", type=Path, default=ROOT / "include" / "mcp_client.h")
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "reference" / "c")
    args = ap.parse_args()
    ref = Reference(args.header)
    ref.group()
    ref.check_names()
    if ref.warnings:
        for w in ref.warnings:
            print(w)
        print(f"reference.py: {len(ref.warnings)} warning(s); nothing written", file=sys.stderr)
        return 1
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    pages = {f"{p}.md": ref.render_group(p, t, a, m) for p, t, a, m in ref.groups}
    pages.update({"types.md": ref.render_types(), "constants.md": ref.render_constants(),
                  "index.md": ref.render_index()})
    for name, text in pages.items():
        (args.out / name).write_text(text)
    count = sum(len(m) for *_, m in ref.groups)
    print(f"reference.py: {count} functions in {len(ref.groups)} groups -> {args.out}/index.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
