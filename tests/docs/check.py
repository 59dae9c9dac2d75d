#!/usr/bin/env python3
"""Docs checker: every fenced code block of the repository's READMEs and docs/ pages is compiled,
and run where it can be, so that the documentation cannot rot (`make docs-test`, part of `make test`).

Convention: the opening fence's info string is ```LANG [MODE]

  LANG   c        compiled with -std=c11 -Wall -Werror against include/ and target/debug's
                  static library
         cpp      compiled with -std=c++17 -Wall -Werror, bindings/cpp on the include path
         python   run with bindings/python on PYTHONPATH and MCP_CLIENT_LIB set to the debug
                  library; `norun`: byte-compiled only
         go       built in a scratch module that replaces the binding's module path with
                  bindings/go, then run
         rust     doctests, run by `cargo test --doc`: only in pages src/lib.rs includes
                  (README.md, docs/rust.md, docs/hub.md); this checker makes sure that include is there
         swift    every block is an executable target of one scratch SwiftPM package that
                  depends on the repository's Package.swift by path, linked statically to
                  target/debug's library, built at once (-warnings-as-errors) inside the
                  Debian trixie root of the Swift tests (tests/docs/swift.sh; needs root), then
                  run there. The package and
                  its .build stay in ~/.cache/mcp_client/docs-swift (MCP_DOCS_SWIFT_DIR), so a
                  rerun compiles only what changed. Without root (or debootstrap to make the
                  root) the blocks are skipped with a SKIP line, a failure when CI=true
         sh, console, text, json, cmake: shown, never run (commands and data, not programs),
                  except ```sh run: run by `bash -euo pipefail` from the repository root (for
                  build commands a reader types in a checkout; the block cleans up after itself)
         Anything else, or a fence without a language, fails the check.
  MODE   (none)   a complete program: built, then run from the repository root (stdin empty,
                  60 s limit); it must exit 0
         fragment the block is the body of tests/docs/templates/fragment.<ext> (at its
                  {{BODY}} line). The templates provide what a fragment assumes: Go, a client
                  `c` on the fixture server, `ctx` and `err`; C++, the host's stand-ins
                  (`open_in_browser`, `pending_logins`, `keychain`); Swift, a `client` on the
                  fixture server and the host's stand-ins (`openInBrowser`, `loginSheet`,
                  `keychain`)
         norun    built (or type-checked) but not run: for examples that need a real remote
                  server, a browser or credentials
         run      ```sh only: see above
         Modes combine: `fragment norun`.

Examples that talk to a server use the fixture server as `target/debug/mcp-fixture-server`,
relative to the repository root, where they run (`make build` builds it).

Usage: tests/docs/check.py [--root DIR] [FILE.md ...]   (default: every README*.md and docs/*.md
in git)
"""

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROSE = {"sh", "console", "text", "json", "cmake"}
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
        self.swift_blocks = []
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
        # The binding links through pkg-config; `make build` writes uninstalled .pc files for the
        # in-tree static library, which pkg-config prefers on this path.
        pc_path = os.pathsep.join(filter(None, [str(self.root / "target" / "pkgconfig"),
                                                os.environ.get("PKG_CONFIG_PATH")]))
        env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", CGO_ENABLED="1",
                   PKG_CONFIG_PATH=pc_path)
        exe = mod / "prog"
        if self.sh(block, ["go", "build", "-o", exe, "."], "building it", cwd=mod, env=env):
            self.run(block, [exe])

    def check_rust(self, block):
        """Rust blocks are doctests of the pages src/lib.rs includes (`cargo test --doc`)."""
        lib = (self.root / "src" / "lib.rs").read_text()
        if f'include_str!("../{block.path}")' not in lib:
            self.fail(block, f"Rust blocks are doctests, and src/lib.rs does not include {block.path}: "
                             "add an include_str! for it there, or move the block")

    def check_sh(self, block):
        """A ```sh run block: commands run from the repository root (other sh blocks are prose)."""
        self.sh(block, ["bash", "-euo", "pipefail", "-c", block.body], "running it", timeout=RUN_TIMEOUT * 3)

    def check_swift(self, block):
        """Staged only: finish_swift builds every block in one package build."""
        self.swift_blocks.append((block, self.body(block, "swift")))
        return "deferred"

    def swift_unavailable(self):
        """Why the trixie root cannot be used here, or None."""
        if os.geteuid() != 0:
            return "the Debian trixie root needs root (debootstrap, mount, chroot)"
        for tool in ["chroot", "mount", "flock"]:
            if not shutil.which(tool):
                return f"no {tool} on PATH for the Debian trixie root"
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        troot = Path(os.environ.get("MCP_SWIFT_ROOT") or cache / "mcp_client" / "swift-trixie")
        if not (troot / ".mcp-swift-ready").exists() and not (shutil.which("debootstrap")
                                                               or shutil.which("apt-get")):
            return f"no Debian trixie root at {troot} and no debootstrap (or apt-get) to make one"
        return None

    def swift_package_dir(self):
        """The scratch package: outside the repository, one per checkout, kept between runs."""
        if os.environ.get("MCP_DOCS_SWIFT_DIR"):
            return Path(os.environ["MCP_DOCS_SWIFT_DIR"]).resolve()
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        key = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        return cache / "mcp_client" / "docs-swift" / f"{self.root.name}-{key}"

    def write_swift_package(self, pkg, targets):
        """Package.swift and Sources/<target>/main.swift, each rewritten only when it changed
        (unchanged files keep their timestamps, so SwiftPM's rebuild stays incremental)."""
        def put(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
        # A local path dependency's identity is its directory's name, lower-cased.
        identity = self.root.name.lower()
        decls = "".join(
            f'        .executableTarget(name: "{t}", dependencies: [.product(name: "MCPClient", '
            f'package: "{identity}")],\n'
            f'                          swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),\n'
            for t, _ in targets)
        put(pkg / "Package.swift",
            "// swift-tools-version:5.9\n"
            "// Written by tests/docs/check.py: one executable target per ```swift block of the\n"
            "// READMEs (warnings are errors, as the C blocks' -Werror).\n"
            "import PackageDescription\n\n"
            "let package = Package(\n"
            '    name: "mcp-docs-swift",\n'
            f'    dependencies: [.package(path: "{self.root}")],\n'
            "    targets: [\n" + decls + "    ]\n)\n")
        names = {t for t, _ in targets}
        sources = pkg / "Sources"
        if sources.exists():
            for stale in sources.iterdir():
                if stale.name not in names:
                    shutil.rmtree(stale)
        for t, text in targets:
            put(sources / t / "main.swift", text)

    def finish_swift(self):
        """Builds the staged Swift blocks in one scratch package and runs them: {block: note}."""
        staged, self.swift_blocks = self.swift_blocks, []
        if not staged:
            return {}
        why = self.swift_unavailable()
        if why:
            if os.environ.get("CI") == "true":
                for block, _ in staged:
                    self.fail(block, f"not checked: {why} (CI=true: required)")
                return {block: None for block, _ in staged}
            print(f"docs: SKIP swift: {why}; {len(staged)} ```swift blocks not checked")
            return {block: "not checked (SKIP, see above)" for block, _ in staged}
        pkg = self.swift_package_dir()
        prune_swift_packages(pkg.parent)
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "checkout").write_text(f"{self.root}\n")
        # Targets named after their program, so adding or moving a block rebuilds nothing else.
        targets = []
        for i, (_, text) in enumerate(staged, 1):
            name = f"docs_swift_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
            targets.append((name if name not in dict(targets) else f"{name}_{i}", text))
        # One run at a time per scratch package (the trixie root has its own lock).
        with open(f"{pkg}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.write_swift_package(pkg, targets)
            specs = [t if "norun" in block.modes else f"run:{t}"
                     for (block, _), (t, _) in zip(staged, targets)]
            script = self.root / "tests" / "docs" / "swift.sh"
            try:
                # Generous: it may wait for the root's lock and build the root itself, once.
                p = subprocess.run([script, self.debug, pkg, *specs], cwd=self.root,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=3600)
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
                p = subprocess.CompletedProcess(e.cmd, "timed out", (out or "") + "\n(timed out)")
            print(p.stdout.rstrip())
            results = pkg / "results"
            for (block, _), (t, _) in zip(staged, targets):
                if p.returncode != 0:
                    rc = p.returncode
                    self.fail(block, f"tests/docs/swift.sh: "
                                     f"{rc if isinstance(rc, str) else f'exit status {rc}'}")
                    continue
                self.swift_result(block, results, t, pkg / "Sources" / t / "main.swift")
        return {block: None for block, _ in staged}

    def swift_result(self, block, results, target, source):
        def read(name):
            f = results / f"{target}.{name}"
            return f.read_text(errors="replace") if f.exists() else None
        status = read("build.status")
        if status is None:
            return self.fail(block, "not built (tests/docs/swift.sh wrote no result)")
        if status.strip() != "0":
            log = read("build.log") or ""
            # Compiler messages about this block point into the README when the block is the
            # whole program; a fragment's point into the generated file, kept in the cache.
            if "fragment" not in block.modes:
                log = re.sub(re.escape(str(source)) + r":(\d+):",
                             lambda m: f"{block.path}:{block.line + int(m.group(1))}:", log)
            mine = list(dict.fromkeys(line for line in log.splitlines()
                                      if block.path in line or str(source) in line
                                      or line.startswith(("error:", "warning:"))))
            return self.fail(block, f"building it: exit status {status.strip()}",
                             "\n".join(mine or log.splitlines()[-30:]))
        run = read("run.status")
        if "norun" not in block.modes and run is None:
            return self.fail(block, "not run (tests/docs/swift.sh wrote no result)")
        if run is not None and run.strip() != "0":
            self.fail(block, f"running it: exit status {run.strip()}"
                             + (" (timed out)" if run.strip() == "124" else ""), read("run.log") or "")
        return None

    def check(self, block):
        lang = block.lang
        unknown = block.modes - {"fragment", "norun"}
        if lang == "sh" and block.modes == {"run"}:
            return self.check_sh(block)
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


def prune_swift_packages(parent):
    """Removes the scratch Swift packages of checkouts that are gone (.ci/run's temporary clones
    would otherwise leave one .build each in the cache). Each records its checkout's path."""
    if not parent.is_dir():
        return
    for pkg in parent.iterdir():
        record = pkg / "checkout"
        if not pkg.is_dir() or not record.exists() or Path(record.read_text().strip()).exists():
            continue
        with open(f"{pkg}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # in use by a run right now
            shutil.rmtree(pkg, ignore_errors=True)
        Path(f"{pkg}.lock").unlink(missing_ok=True)


def default_files(root):
    out = subprocess.run(["git", "ls-files", "*README*.md", "README.md", "docs/*.md"], cwd=root,
                         stdout=subprocess.PIPE, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return sorted(set(out.stdout.split()))
    found = [*root.rglob("README*.md"), *(root / "docs").glob("*.md")]
    return sorted(str(p.relative_to(root)) for p in found
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

        def report(block, note, before):
            nonlocal checked, skipped
            if note:
                skipped += 1
                print(f"docs: {block}: {note}")
                return
            checked += 1
            failed = any(f.startswith(f"{block}: ") for f in c.failures[before:])
            print(f"docs: {block}: {'FAILED' if failed else 'ok'}")

        for rel in files:
            for block in blocks(root / rel, rel):
                before = len(c.failures)
                note = c.check(block)
                if note not in ("prose", "deferred"):
                    report(block, note, before)
        # The Swift blocks, staged above, are built together (one package build).
        before = len(c.failures)
        for block, note in c.finish_swift().items():
            report(block, note, before)
    for f in c.failures:
        print(f"\n--- {f}", file=sys.stderr)
    print(f"docs: {checked - len(c.failures)} passed, {len(c.failures)} failed, {skipped} skipped")
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
