#!/usr/bin/env python3
"""Generate mcp_client/_ffi.py (ctypes declarations) from include/mcp_client.h.

    python3 generate.py            # rewrite mcp_client/_ffi.py
    python3 generate.py --check    # exit 1 when the committed file differs from a fresh one

The parser understands the regular subset cbindgen emits for this header: `#define NAME value`
(integers and string literals), opaque `typedef struct x x;`, scalar typedefs, function-pointer
typedefs, `typedef struct x { fields } x;`, and function declarations. Anything else it meets at
top level is an error, so a header change the generator does not understand cannot slip through.
No third-party packages are used.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_HEADER = os.path.normpath(os.path.join(HERE, "..", "..", "include", "mcp_client.h"))
DEFAULT_OUTPUT = os.path.join(HERE, "mcp_client", "_ffi.py")

# C scalar types and their ctypes spelling.
SCALARS = {
    "void": "None",
    "bool": "ctypes.c_bool",
    "char": "ctypes.c_char",
    "int8_t": "ctypes.c_int8",
    "uint8_t": "ctypes.c_uint8",
    "int16_t": "ctypes.c_int16",
    "uint16_t": "ctypes.c_uint16",
    "int32_t": "ctypes.c_int32",
    "uint32_t": "ctypes.c_uint32",
    "int64_t": "ctypes.c_int64",
    "uint64_t": "ctypes.c_uint64",
    "int": "ctypes.c_int",
    "unsigned int": "ctypes.c_uint",
    "long": "ctypes.c_long",
    "unsigned long": "ctypes.c_ulong",
    "size_t": "ctypes.c_size_t",
    "ssize_t": "ctypes.c_ssize_t",
    "intptr_t": "ctypes.c_ssize_t",
    "uintptr_t": "ctypes.c_size_t",
    "float": "ctypes.c_float",
    "double": "ctypes.c_double",
}


class HeaderError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Lexing: split the header into top-level items, each with its preceding doc comment.


def strip_comments(text: str) -> tuple[str, list[tuple[int, str]]]:
    """Returns the text with comments blanked out (newlines kept) and the list of
    (offset, comment text) for every block comment, so docs can be reattached."""
    out = []
    comments = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise HeaderError("unterminated comment")
            body = text[i : j + 2]
            comments.append((i, body))
            out.append("".join(ch if ch == "\n" else " " for ch in body))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), comments


def doc_text(comment: str) -> str:
    """The prose of a `/** ... */` comment, one paragraph per line break kept."""
    body = comment[3:-2] if comment.startswith("/**") else comment[2:-2]
    lines = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line.rstrip())
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


class Header:
    def __init__(self) -> None:
        self.defines: list[tuple[str, str, str]] = []  # (name, python literal, doc)
        self.opaque: list[tuple[str, str]] = []  # (name, doc)
        self.aliases: list[tuple[str, str, str]] = []  # (name, ctype expr, doc)
        self.callbacks: list[tuple[str, str, list[str], str]] = []  # (name, ret, args, doc)
        self.structs: list[tuple[str, list[tuple[str, str]], str]] = []  # (name, fields, doc)
        self.functions: list[tuple[str, str, list[tuple[str, str]], str]] = []  # name, ret, args, doc
        self.known: dict[str, str] = {}  # type name -> kind
        self.order: list[tuple[str, str]] = []  # (kind, name) of typedef-like items, header order


# Declaration attribute macros the header defines (visibility, warn_unused_result): their
# definitions are not constants, and they are dropped from the front of declarations.
ATTRIBUTE_MACROS = ("MCP_API", "MCP_WARN_UNUSED_RESULT")


def parse(text: str) -> Header:
    clean, comments = strip_comments(text)
    hdr = Header()
    doc_at = {}  # end offset of a doc comment -> text

    for off, body in comments:
        if body.startswith("/**"):
            doc_at[off + len(body)] = doc_text(body)

    def doc_before(pos: int) -> str:
        # The doc comment that ends right before `pos` (only whitespace between).
        for end, doc in doc_at.items():
            if end <= pos and not text[end:pos].strip():
                return doc
        return ""

    # 1. preprocessor lines
    pos = 0
    body_chunks = []
    for m in re.finditer(r"^[ \t]*#[^\n]*$", clean, re.M):
        body_chunks.append((pos, clean[pos : m.start()]))
        pos = m.end()
        line = m.group(0).strip()
        dm = re.match(r"#\s*define\s+([A-Za-z_]\w*)(?:\s+(.*))?$", line)
        if not dm:
            continue  # #include, #ifndef, #endif, #ifdef __cplusplus ...
        name, value = dm.group(1), (dm.group(2) or "").strip()
        if not value or name in ATTRIBUTE_MACROS:
            continue  # include guards, flags and attribute macros
        hdr.defines.append((name, python_literal(name, value), doc_before(m.start())))
    body_chunks.append((pos, clean[pos:]))

    # 2. declarations: split every chunk at top-level ';'
    for base, chunk in body_chunks:
        depth = 0
        start = 0
        for i, ch in enumerate(chunk):
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            elif ch == ";" and depth == 0:
                decl = chunk[start:i]
                lead = len(decl) - len(decl.lstrip())
                if decl.strip():
                    parse_decl(hdr, " ".join(decl.split()), doc_before(base + start + lead))
                start = i + 1
        rest = chunk[start:].strip()
        if rest and rest not in ('extern "C" {', "}"):
            # `extern "C" {` / `}  // extern "C"` live in #ifdef blocks; anything else is unknown
            if re.sub(r'extern\s+"C"\s*\{|\}', "", rest).strip():
                raise HeaderError(f"unparsed text at the end of a block: {rest[:80]!r}")
    return hdr


def python_literal(name: str, value: str) -> str:
    if re.fullmatch(r"-?\d+", value):
        return str(int(value))
    if re.fullmatch(r"0[xX][0-9a-fA-F]+[uUlL]*", value):
        return str(int(value.rstrip("uUlL"), 16))
    if re.fullmatch(r'"(?:[^"\\]|\\.)*"', value):
        inner = value[1:-1]
        if "\\" in inner:
            raise HeaderError(f"escapes in #define {name} are not supported")
        return repr(inner)
    raise HeaderError(f"#define {name} has a value the generator does not understand: {value!r}")


def split_params(params: str) -> list[str]:
    params = params.strip()
    if params in ("", "void"):
        return []
    out, depth, cur = [], 0, []
    for ch in params:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def split_name(decl: str) -> tuple[str, str]:
    """`const char *name` -> ("const char *", "name")."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)$", decl.strip())
    if not m or not m.group(1).strip():
        raise HeaderError(f"cannot split type and name in {decl!r}")
    return m.group(1).strip(), m.group(2)


def parse_decl(hdr: Header, decl: str, doc: str) -> None:
    while decl.split(None, 1)[0] in ATTRIBUTE_MACROS:
        decl = decl.split(None, 1)[1]
    # opaque handle: typedef struct x x
    m = re.fullmatch(r"typedef struct (\w+) (\w+)", decl)
    if m and m.group(1) == m.group(2):
        hdr.opaque.append((m.group(1), doc))
        hdr.known[m.group(1)] = "opaque"
        return
    # struct with fields
    m = re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", decl)
    if m and m.group(1) == m.group(3):
        name = m.group(1)
        fields = []
        for fdecl in [f.strip() for f in m.group(2).split(";") if f.strip()]:
            ftype, fname = split_name(fdecl)
            fields.append((fname, ftype))
        hdr.structs.append((name, fields, doc))
        hdr.known[name] = "struct"
        return
    # function pointer typedef
    m = re.fullmatch(r"typedef (.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", decl)
    if m:
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3)
        args = [split_name(p)[0] for p in split_params(params)]
        hdr.callbacks.append((name, ret, args, doc))
        hdr.known[name] = "callback"
        return
    # scalar typedef
    m = re.fullmatch(r"typedef ([\w ]+?) (\w+)", decl)
    if m:
        hdr.aliases.append((m.group(2), m.group(1), doc))
        hdr.known[m.group(2)] = "alias"
        return
    # function declaration
    m = re.fullmatch(r"(.+?)\b(\w+)\s*\((.*)\)", decl)
    if m and not decl.startswith("typedef"):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3)
        args = [split_name(p) for p in split_params(params)]
        hdr.functions.append((name, ret, [(t, n) for t, n in args], doc))
        return
    raise HeaderError(f"declaration the generator does not understand: {decl!r}")


# ---------------------------------------------------------------------------------------------
# Type mapping


def ctype(hdr: Header, ctext: str) -> str:
    """Maps a C type to a ctypes expression."""
    t = " ".join(ctext.replace("*", " * ").split())
    stars = t.count("*")
    words = t.replace("*", " ").split()
    const = "const" in words
    base = " ".join(w for w in words if w not in ("const", "struct"))
    if stars == 0:
        if base in SCALARS:
            return SCALARS[base]
        kind = hdr.known.get(base)
        if kind in ("alias", "callback", "struct"):
            return base
        if kind == "opaque":
            raise HeaderError(f"opaque type {base} used by value")
        raise HeaderError(f"unknown type {ctext!r}")
    if base == "char" and stars == 1:
        # `const char *`: borrowed NUL-terminated text (arguments, static or borrowed returns).
        # A mutable `char *` is an owned library string (e.g. mcp_string_free's argument): kept
        # as a raw address so ctypes never copies or converts it.
        return "ctypes.c_char_p" if const else "ctypes.c_void_p"
    if base == "char" and stars == 2:
        # `char **..._out`: owned strings; kept as raw addresses (string_at + mcp_string_free).
        return "ctypes.POINTER(ctypes.c_void_p)"
    if base == "void" and stars == 1:
        return "ctypes.c_void_p"
    if base == "void":
        raise HeaderError(f"unsupported pointer type {ctext!r}")
    if base in SCALARS:
        inner = SCALARS[base]
    elif base in hdr.known:
        inner = base
    else:
        raise HeaderError(f"unknown type {ctext!r}")
    expr = inner
    for _ in range(stars):
        expr = f"ctypes.POINTER({expr})"
    return expr


def c_decl(ctext: str, name: str) -> str:
    """`const char *` + `name` -> `const char *name`."""
    t = " ".join(ctext.replace("*", " * ").split()).replace("* *", "**")
    return f"{t}{name}" if t.endswith("*") else f"{t} {name}"


def py_comment(doc: str, indent: str = "") -> list[str]:
    return [f"{indent}# {line}".rstrip() for line in doc.splitlines()] if doc else []


def render(hdr: Header, header_name: str) -> str:
    out: list[str] = []
    w = out.append
    w(f'"""ctypes declarations for {header_name}.')
    w("")
    w("GENERATED by bindings/python/generate.py from include/mcp_client.h: DO NOT EDIT.")
    w("Regenerate with `make -C bindings/python generate` (or `python3 generate.py`).")
    w('"""')
    w("# fmt: off")
    w("# flake8: noqa")
    w("")
    w("import ctypes")
    w("from typing import Any, Dict, List, Tuple")
    w("")
    w("# ----- constants (#define) -----")
    w("")
    w("# The constants are this module's public names: mcp_client re-exports them.")
    w("__all__ = [")
    for name, _value, _doc in hdr.defines:
        w(f"    {name!r},")
    w("]")
    w("")
    for name, value, doc in hdr.defines:
        out.extend(py_comment(doc))
        w(f"{name} = {value}")
    w("")
    w("# ----- opaque handles (use through ctypes.POINTER) -----")
    w("")
    for name, doc in hdr.opaque:
        out.extend(py_comment(doc))
        w(f"class {name}(ctypes.Structure):")
        w('    """Opaque handle."""')
        w("")
    w("# ----- typedefs, callbacks and structs, in header order -----")
    w("")
    # Header order matters: a struct may use a callback typedef declared before it.
    items = {("alias", n): (c, d) for n, c, d in hdr.aliases}
    items.update({("callback", n): (r, a, d) for n, r, a, d in hdr.callbacks})
    items.update({("struct", n): (f, d) for n, f, d in hdr.structs})
    for kind_name in hdr.order:
        kind, name = kind_name
        if kind == "alias":
            ctext, doc = items[kind_name]
            out.extend(py_comment(doc))
            w(f"{name} = {ctype(hdr, ctext)}")
            w("")
        elif kind == "callback":
            ret, args, doc = items[kind_name]
            out.extend(py_comment(doc))
            restype = ctype(hdr, ret)
            argtypes = ", ".join(ctype(hdr, a) for a in args)
            w(f"{name} = ctypes.CFUNCTYPE({restype}{', ' if argtypes else ''}{argtypes})")
            w("")
        elif kind == "struct":
            fields, doc = items[kind_name]
            out.extend(py_comment(doc))
            w(f"class {name}(ctypes.Structure):")
            w("    _fields_ = [")
            for fname, ftype in fields:
                w(f"        ({fname!r}, {ctype(hdr, ftype)}),")
            w("    ]")
            w("")
    w("# ----- functions: name -> (restype, argtypes) -----")
    w("")
    w("FUNCTIONS: Dict[str, Tuple[Any, List[Any]]] = {")
    for name, ret, args, doc in hdr.functions:
        out.extend(py_comment(doc, "    "))
        restype = ctype(hdr, ret)
        sig = ", ".join(c_decl(t, n) for t, n in args) or "void"
        w(f"    # {c_decl(ret, name)}({sig})")
        w(f"    {name!r}: (")
        w(f"        {restype},")
        w("        [" + ", ".join(ctype(hdr, t) for t, _ in args) + "],")
        w("    ),")
    w("}")
    w("")
    w("")
    w("def bind(lib: ctypes.CDLL) -> ctypes.CDLL:")
    w('    """Sets restype and argtypes of every function on `lib` (a ctypes.CDLL).')
    w("")
    w("    Raises AttributeError naming the first symbol the library does not export.")
    w('    """')
    w("    for name, (restype, argtypes) in FUNCTIONS.items():")
    w("        fn = getattr(lib, name)")
    w("        fn.restype = restype")
    w("        fn.argtypes = argtypes")
    w("    return lib")
    w("")
    return "\n".join(out)


def parse_with_order(text: str) -> Header:
    hdr = parse(text)
    # Reconstruct the header order of typedef-like items from their positions in the text.
    clean, _ = strip_comments(text)
    positions = []
    for name, *_ in hdr.aliases:
        positions.append((re.search(rf"typedef [\w ]+? {name}\s*;", clean).start(), ("alias", name)))
    for name, *_ in hdr.callbacks:
        positions.append((re.search(rf"\(\s*\*\s*{name}\s*\)", clean).start(), ("callback", name)))
    for name, *_ in hdr.structs:
        positions.append((re.search(rf"typedef struct {name}\s*\{{", clean).start(), ("struct", name)))
    hdr.order = [item for _, item in sorted(positions)]
    return hdr


def generate(header_path: str) -> str:
    with open(header_path, encoding="utf-8") as f:
        text = f.read()
    hdr = parse_with_order(text)
    if not hdr.functions:
        raise HeaderError("no functions found")
    return render(hdr, os.path.basename(header_path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", default=DEFAULT_HEADER, help="path to mcp_client.h")
    ap.add_argument("--output", default=DEFAULT_OUTPUT, help="path of the generated module")
    ap.add_argument("--check", action="store_true", help="fail when the output is stale; write nothing")
    args = ap.parse_args(argv)
    try:
        fresh = generate(args.header)
    except (OSError, HeaderError) as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 2
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            print(f"generate.py --check: cannot read {args.output}: {e}", file=sys.stderr)
            return 1
        if current != fresh:
            diff = difflib.unified_diff(
                current.splitlines(True), fresh.splitlines(True), args.output, "fresh generation", n=1
            )
            sys.stderr.writelines(list(diff)[:60])
            print(
                f"\ngenerate.py --check: {os.path.relpath(args.output)} is stale against "
                f"{os.path.relpath(args.header)}; run `make -C bindings/python generate`",
                file=sys.stderr,
            )
            return 1
        print(f"generate.py --check: {os.path.relpath(args.output)} is up to date")
        return 0
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(fresh)
    os.replace(tmp, args.output)
    print(f"generate.py: wrote {os.path.relpath(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
