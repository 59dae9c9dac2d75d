#!/usr/bin/env python3
"""Docs checker: every fenced code block of the repository's READMEs is compiled, and run where
it can be, so that the documentation cannot rot (`make docs-test`, part of `make test`).

Convention: the opening fence's info string is ```LANG [MODE]

  LANG   c        compiled with -std=c11 -Wall -Werror against include/ and target/debug's
                  static library
         cpp      compiled with -std=c++17 -Wall -Werror, bindings/cpp on the include path
         python   run with bindings/python on PYTHONPATH and MCP_CLIENT_LIB set to the debug
                  library; `norun`: byte-compiled only
         go       built in a scratch module that replaces the binding's module path with
                  bindings/go, then run
         rust     README.md only: its blocks are doctests (src/lib.rs includes README.md), run
                  by `cargo test --doc`; this checker makes sure that include is there
         swift    type-checked against the binding's sources when `swiftc` is on PATH;
                  otherwise reported as not checked
         sh, console, text, json: shown, never run (commands and data, not programs)
         Anything else, or a fence without a language, fails the check.
  MODE   (none)   a complete program: built, then run from the repository root (stdin empty,
                  60 s limit); it must exit 0
         fragment the block is the body of tests/docs/templates/fragment.<ext> (at its
                  {{BODY}} line). The templates provide what a fragment assumes: Go, a client
                  `c` on the fixture server, `ctx` and `err`; C++, the host's stand-ins
                  (`open_in_browser`, `pending_logins`, `keychain`)
         norun    built (or type-checked) but not run: for examples that need a real remote
                  server, a browser or credentials
         Modes combine: `fragment norun`.

Examples that talk to a server use the fixture server as `target/debug/mcp-fixture-server`,
relative to the repository root, where they run (`make build` builds it).

Usage: tests/docs/check.py [--root DIR] [FILE.md ...]   (default: every README*.md in git)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROSE = {"sh", "console", "text", "json"}
RUN_TIMEOUT = 60
STATIC_LIBS = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]
FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")


class Block:
    def __init__(self, path, line, lang, modes, body):
        self.path, self.line, self.lang, self.modes, self.body = path, line, lang, modes, body

    def __str__(self):
        return f"{self.path}:{self.line} ```{' '.join([self.lang, *sorted(self.modes)])}"


def blocks(path, rel):
    """The fenced blocks of one Markdown file (indented fences inside lists included)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.groups()
        words = info.split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        if i == len(lines):
            raise SystemExit(f"{rel}:{start}: unterminated code fence")
        i += 1
        yield Block(rel, start, words[0] if words else "", set(words[1:]), "\n".join(body) + "\n")


class Checker:
    def __init__(self, root, work):
        self.root, self.work = root, work
        self.debug = root / "target" / "debug"
        self.failures, self.counts, self.notes = [], {}, []
        self.n = 0

    def fail(self, block, why, output=""):
        self.failures.append(f"{block}: {why}\n{output.rstrip()}".rstrip())

    def scratch(self, block, name):
        self.n += 1
        d = self.work / f"{self.n:03d}-{block.lang}"
        d.mkdir()
        return d / name

    def body(self, block, ext):
        """The block's program: itself, or its template with the block at {{BODY}}."""
        if "fragment" not in block.modes:
            return block.body
        template = self.root / "tests" / "docs" / "templates" / f"fragment.{ext}"
        if not template.exists():
            raise KeyError(f"no template {template.relative_to(self.root)} for a {block.lang} fragment")
        text = template.read_text()
        if "{{BODY}}" not in text:
            raise KeyError(f"{template} has no {{{{BODY}}}} line")
        out = []
        for line in text.splitlines():
            if line.strip() == "{{BODY}}":
                pad = line[: len(line) - len(line.lstrip())]
                out += [pad + b if b else b for b in block.body.splitlines()]
            else:
                out.append(line)
        return "\n".join(out) + "\n"

    def sh(self, block, argv, what, **kw):
        try:
            p = subprocess.run(argv, cwd=kw.pop("cwd", self.root), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=kw.pop("timeout", 300), **kw)
        except subprocess.TimeoutExpired as e:
            self.fail(block, f"{what}: timed out", (e.stdout or b"").decode(errors="replace")
                      if isinstance(e.stdout, bytes) else (e.stdout or ""))
            return False
        if p.returncode != 0:
            self.fail(block, f"{what}: exit status {p.returncode}", p.stdout)
            return False
        return True

    def run(self, block, argv, **kw):
        if "norun" in block.modes:
            return
        self.sh(block, argv, "running it", timeout=RUN_TIMEOUT, **kw)

    # One method per language.

    def check_c(self, block):
        src = self.scratch(block, "main.c")
        src.write_text(self.body(block, "c"))
        exe = src.with_suffix("")
        if self.sh(block, [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Werror",
                           f"-I{self.root / 'include'}", "-o", exe, src,
                           self.debug / "libmcp_client.a", *STATIC_LIBS], "compiling it"):
            self.run(block, [exe])

    def check_cpp(self, block):
        src = self.scratch(block, "main.cpp")
        src.write_text(self.body(block, "cpp"))
        exe = src.with_suffix("")
        if self.sh(block, [os.environ.get("CXX", "c++"), "-std=c++17", "-Wall", "-Werror",
                           f"-I{self.root / 'include'}", f"-I{self.root / 'bindings' / 'cpp'}",
                           "-o", exe, src, self.debug / "libmcp_client.a", *STATIC_LIBS],
                   "compiling it"):
            self.run(block, [exe])

    def check_python(self, block):
        src = self.scratch(block, "example.py")
        src.write_text(self.body(block, "py"))
        env = dict(os.environ, PYTHONPATH=str(self.root / "bindings" / "python"),
                   MCP_CLIENT_LIB=str(self.debug / "libmcp_client.so"))
        if self.sh(block, [sys.executable, "-m", "py_compile", src], "compiling it"):
            self.run(block, [sys.executable, src], env=env)

    def check_go(self, block):
        src = self.scratch(block, "main.go")
        mod = src.parent
        src.write_text(self.body(block, "go"))
        binding = self.root / "bindings" / "go"
        # The binding's own module path, so the README's imports resolve to this checkout.
        module = re.search(r"(?m)^module\s+(\S+)", (binding / "go.mod").read_text()).group(1)
        (mod / "go.mod").write_text(
            f"module docscheck\n\ngo 1.22\n\nrequire {module} v0.0.0\n\nreplace {module} => {binding}\n")
        env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", CGO_ENABLED="1")
        exe = mod / "prog"
        if self.sh(block, ["go", "build", "-o", exe, "."], "building it", cwd=mod, env=env):
            self.run(block, [exe])

    def check_rust(self, block):
        lib = (self.root / "src" / "lib.rs").read_text()
        if block.path != "README.md":
            self.fail(block, "Rust blocks are doctests of README.md only (src/lib.rs includes it); "
                             "move this one there or into a crate's doc comments")
        elif 'include_str!("../README.md")' not in lib:
            self.fail(block, "src/lib.rs no longer includes README.md as a doctest")

    def check_swift(self, block):
        swiftc = shutil.which("swiftc")
        if not swiftc:
            return "not checked: no swiftc on PATH"
        pkg = self.root / "bindings" / "swift"
        src = self.scratch(block, "main.swift")
        # The block is compiled in one module with the binding's sources, so its import goes.
        src.write_text(re.sub(r"(?m)^import MCPClient\s*$", "", self.body(block, "swift")))
        sources = sorted((pkg / "Sources" / "MCPClient").glob("*.swift"))
        self.sh(block, [swiftc, "-typecheck", "-I", pkg / "Sources" / "CMCPClient", *sources, src],
                "type-checking it")
        return None

    def check(self, block):
        lang = block.lang
        unknown = block.modes - {"fragment", "norun"}
        if lang in PROSE:
            return "prose"
        if not lang:
            return self.fail(block, "a code block without a language: tag it (c, cpp, python, go, rust, "
                                    "swift, or sh/console/text/json for what is not a program)")
        method = getattr(self, f"check_{lang}", None)
        if method is None or unknown:
            return self.fail(block, f"the docs checker does not know how to handle ```{lang} "
                                    f"{' '.join(sorted(block.modes))}".rstrip() + " (see tests/docs/check.py)")
        try:
            return method(block)
        except KeyError as e:
            return self.fail(block, e.args[0])


def default_files(root):
    out = subprocess.run(["git", "ls-files", "*README*.md", "README.md"], cwd=root,
                         stdout=subprocess.PIPE, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return sorted(set(out.stdout.split()))
    return sorted(str(p.relative_to(root)) for p in root.rglob("README*.md")
                  if "target" not in p.parts and "node_modules" not in p.parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parents[2], type=Path)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = args.root.resolve()
    for need in ["libmcp_client.a", "libmcp_client.so", "mcp-fixture-server"]:
        if not (root / "target" / "debug" / need).exists():
            raise SystemExit(f"docs check: target/debug/{need} is missing: run `make build` first")
    files = args.files or default_files(root)
    with tempfile.TemporaryDirectory(prefix="mcp-docs-") as work:
        c = Checker(root, Path(work))
        checked = skipped = 0
        for rel in files:
            for block in blocks(root / rel, rel):
                before = len(c.failures)
                note = c.check(block)
                if note == "prose":
                    continue
                if note:
                    skipped += 1
                    print(f"docs: {block}: {note}")
                    continue
                checked += 1
                status = "FAILED" if len(c.failures) > before else "ok"
                print(f"docs: {block}: {status}")
    for f in c.failures:
        print(f"\n--- {f}", file=sys.stderr)
    print(f"docs: {checked - len(c.failures)} passed, {len(c.failures)} failed, {skipped} skipped")
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
