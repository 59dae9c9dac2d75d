#!/usr/bin/env python3
"""Every name the header gives a C host starts with mcp_ or MCP_.

Macros (those the header adds to what its system includes define), typedef names, struct, enum
and union tags, enumerators, function and callback names: a host's own identifiers must never
collide with ours.   usage: check_prefixes.py include/mcp_client.h [cc]
"""
import re
import subprocess
import sys
import tempfile

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
C_WORDS = {"sizeof", "typedef", "struct", "enum", "union", "void", "const", "char", "int",
           "bool", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
           "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "double", "float", "long",
           "unsigned", "signed", "extern", "static", "inline"}


def macros(cc, path):
    out = subprocess.run([cc, "-dM", "-E", "-x", "c", path], check=True,
                         capture_output=True, text=True).stdout
    return {re.match(r"#define (" + IDENT + ")", line).group(1) for line in out.splitlines()}


def declared_names(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    names = set(re.findall(r"\b(?:struct|enum|union)\s+(" + IDENT + ")", text))
    without_bodies = re.sub(r"\{[^{}]*\}", "", text)  # struct fields are not host-visible names
    names |= set(re.findall(r"\btypedef\b[^;]*?\b(" + IDENT + r")\s*;", without_bodies))
    names |= set(re.findall(r"\(\s*\*\s*(" + IDENT + r")\s*\)", text))
    names |= set(re.findall(r"\b(" + IDENT + r")\s*\(", text))
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text):
        names |= set(re.findall(r"(?:^|,)\s*(" + IDENT + ")", body))
    return names - C_WORDS


def main():
    header = sys.argv[1]
    cc = sys.argv[2] if len(sys.argv) > 2 else "cc"
    with tempfile.NamedTemporaryFile("w", suffix=".h") as sys_h:
        sys_h.write("#include <stdint.h>\n#include <stddef.h>\n#include <stdbool.h>\n")
        sys_h.flush()
        names = macros(cc, header) - macros(cc, sys_h.name)
    with open(header, encoding="utf-8") as f:
        names |= declared_names(f.read())
    bad = sorted(n for n in names if not n.startswith(("mcp_", "MCP_")))
    if bad:
        print(f"prefixes: names in {header} without the mcp_/MCP_ prefix:")
        print("\n".join("  " + n for n in bad))
        sys.exit(1)
    print(f"prefixes: all {len(names)} names in {header} start with mcp_ or MCP_")


if __name__ == "__main__":
    main()
