#!/usr/bin/env python3
"""Repository hygiene (`make docs-test`, part of `make test`). Fails, with one `file:line: ...`
line per finding, on:

  label   a numbered history label in any tracked text file: the words session(s) or issue(s)
          followed by a number ("<word> 18", "<word>s 16 and 18", "<word>-17", "<word> #19").
          A reader of the repository cannot resolve those; say what the thing is, and where
          history matters cite a date or a commit hash. "issue" as a verb before an HTTP status and
          a word such as "responses" is not a label.
  link    a relative link in a tracked Markdown file whose file is not tracked, or whose
          `#anchor` names no heading (GitHub's anchor rules) or `id`/`name` of the target page.
  length  README.md over 300 lines or ARCHITECTURE.md over 400.

Files come from `git ls-files`; outside a git checkout, from a walk of the tree that skips
target/, dot-directories and node_modules. Reads each file once; takes well under a second.

Usage: tests/docs/hygiene.py [--root DIR]
"""

import argparse
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

MAX_LINES = {"README.md": 300, "ARCHITECTURE.md": 400}

# The word, an optional plural, a separator, an optional '#', a number. A leading \b keeps
# "mcp_session_2"-style identifiers out; a number glued to the word is caught too.
LABEL = re.compile(r"\b(session|issue)(s?)[ \t_-]*#?\s?(\d+)(?!\d)", re.IGNORECASE)
# "issue(s)" as a verb: an HTTP status, then what it names ("... 401 responses").
HTTP_VERB = re.compile(
    r"\s*(responses?|status(es)?|errors?|codes?|repl(y|ies)|redirects?|challenges?)\b", re.IGNORECASE
)

FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def is_label(line: str, m: re.Match) -> bool:
    """Whether a LABEL match is a history label, not the verb before an HTTP status."""
    verb = m.group(1).lower() == "issue"
    if verb and 100 <= int(m.group(3)) <= 599 and HTTP_VERB.match(line, m.end()):
        return False
    return True


def labels(line: str) -> list[str]:
    return [m.group(0) for m in LABEL.finditer(line) if is_label(line, m)]


def self_test() -> None:
    """The pattern against the forms it must catch and text it must leave alone. The samples
    are assembled so that this file holds no label itself."""
    s, i = "session", "issue"
    caught = [f"{s} 18", f"{s.title()} 18's run", f"{s}s 16 and 18", f"{i} 19", f"{i.upper()} 19 item 4",
              f"{i}s 16 and 19", f"item 4 of {i} 17", f"the {i}-17 features", f"({i} #19)", f"{i}19_many"]
    clean = [f"the server {i}s 401 responses", f"it may {i} 403 errors", "it issues a token", "issued 3 tokens",
             "an issuer", "one session per client", "session ids", "mcp_session_2", "item 42", "round 2",
             "HTTP 404", "the sessions' ids", "issues: none"]
    bad = [t for t in caught if not labels(t)] + [t for t in clean if labels(t)]
    if bad:
        sys.exit(f"hygiene.py: the label pattern is wrong for: {bad}")


def tracked_files(root: Path) -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
        return [p for p in out.stdout.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        print("hygiene.py: not a git checkout; checking the files under", root, "(skipping target/, dot-dirs)")
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("target", "node_modules")]
            rel = Path(dirpath).relative_to(root)
            files += [(rel / f).as_posix() for f in filenames]
        return files


def read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None  # listed but absent (a deleted, uncommitted file)
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text lower-cased, punctuation dropped
    (letters, digits, '-', '_' and spaces stay), spaces turned into '-'."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def markdown_lines(text: str):
    """(line number, line, line with inline code blanked) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
                continue
            if mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark):].strip():
                fence = None
                continue
        if fence is None:
            yield n, line, INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def anchors(text: str) -> set[str]:
    found, seen = set(), {}
    prev = ""
    for _, line, _ in markdown_lines(text):
        head = None
        m = ATX.match(line)
        if m:
            head = m.group(2)
        elif SETEXT.match(line) and prev.strip() and not prev.lstrip().startswith(("-", "*", "|", ">")):
            head = prev.strip()
        if head is not None:
            base = slug(head)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(HTML_ID.findall(line))
        prev = line
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=Path(__file__).resolve().parents[2], type=Path)
    root = ap.parse_args().root.resolve()
    self_test()

    files = tracked_files(root)
    tracked = set(files)
    dirs = {p.rsplit("/", i)[0] for p in files for i in range(1, p.count("/") + 1)}
    texts = {p: read_text(root / p) for p in files}
    findings = []

    for path, text in texts.items():
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for label in labels(line):
                findings.append(f"{path}:{n}: history label {label!r}: say what it is "
                                "(where history matters, a date or a commit)")

    anchor_cache: dict[str, set[str]] = {}

    def anchors_of(path: str) -> set[str]:
        if path not in anchor_cache:
            anchor_cache[path] = anchors(texts.get(path) or "")
        return anchor_cache[path]

    for path, text in texts.items():
        if text is None or not path.endswith(".md"):
            continue
        here = os.path.dirname(path)
        for n, _, line in markdown_lines(text):
            targets = INLINE_LINK.findall(line) + HTML_LINK.findall(line)
            m = REF_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if not target or SCHEME.match(target) or target.startswith("//"):
                    continue
                file_part, _, anchor = target.partition("#")
                file_part = unquote(file_part.split("?")[0])
                if file_part:
                    dest = os.path.normpath(os.path.join(here, file_part)).replace(os.sep, "/")
                    if file_part.startswith("/"):
                        dest = os.path.normpath(file_part.lstrip("/"))
                    if dest.startswith("../") or (dest not in tracked and dest not in dirs and dest != "."):
                        findings.append(f"{path}:{n}: broken link {target!r}: no tracked file {dest}")
                        continue
                else:
                    dest = path
                if anchor and dest.endswith(".md") and unquote(anchor) not in anchors_of(dest):
                    findings.append(f"{path}:{n}: broken link {target!r}: no heading #{anchor} in {dest}")

    for path, limit in MAX_LINES.items():
        text = texts.get(path)
        if text is not None and (count := len(text.splitlines())) > limit:
            findings.append(f"{path}:{count}: {count} lines, over the {limit}-line limit")

    for f in findings:
        print(f)
    if findings:
        print(f"hygiene.py: {len(findings)} finding(s) in {len(files)} files", file=sys.stderr)
        return 1
    print(f"hygiene.py: {len(files)} files clean (history labels, relative links, document lengths)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
