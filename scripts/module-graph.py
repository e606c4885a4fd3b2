#!/usr/bin/env python3
"""The import graph of a crate's top-level modules, and its cycles (issue #40 item 6).

Reads `crate::NAME` and `use crate::{...}` paths in src/ (comments and string literals
skipped). A file or folder below src/ is one node: `validate/steps.rs` is `validate`.
A `#[cfg(test)] mod NAME { ... }` is a node of its own, `cmd_pin::NAME`: it is not built
into the product, nothing imports it, and its imports are listed like any module's (an
end-to-end unit test calling `crate::main_with_args` is an edge to `lib`, not a cycle).
`lib` is the crate root (lib.rs): it declares every module, so a module naming an item of
lib.rs (`crate::main_with_args`) closes a cycle through it. `super::` inside a folder stays
inside its node.

Usage: scripts/module-graph.py [CRATE_DIR ...]   (default: xtask)
Exit 1 when a crate has a cycle.
"""
import re
import sys
from pathlib import Path

PATH = re.compile(r"\bcrate::(\{[^}]*\}|[a-z_][a-z0-9_]*|[A-Z][A-Za-z0-9_]*)")


def code_of(text):
    """The text without comments, and with string and char literals emptied."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif (m := re.match(r'b?r(#*)"', text[i:])) and (i == 0 or not text[i - 1].isalnum()):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            out.append('""')
            i = n if j < 0 else j + len(end)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif m := re.match(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:]):
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*\{")


def split_tests(code):
    """`code` without its `#[cfg(test)] mod NAME { ... }` blocks, and those blocks by NAME."""
    rest, tests, at = [], [], 0
    for m in TEST_MOD.finditer(code):
        if m.start() < at:
            continue
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        rest.append(code[at : m.start()])
        tests.append((m.group(1), code[m.end() : j]))
        at = j
    rest.append(code[at:])
    return "".join(rest), tests


def node_of(src, f):
    rel = f.relative_to(src)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return {"lib.rs": "lib", "main.rs": "main"}.get(rel.name, rel.stem)


def graph(crate):
    src = Path(crate) / "src"
    files = sorted(src.rglob("*.rs"))
    nodes = {node_of(src, f) for f in files}
    # main.rs of a package with lib.rs is its own crate (it says `xtask::`, not `crate::`).
    nodes.discard("main")
    edges = {n: set() for n in nodes}

    def add(a, text):
        for m in PATH.finditer(text):
            names = m.group(1)
            parts = names.strip("{}").split(",") if names.startswith("{") else [names]
            for p in parts:
                head = p.strip().split("::")[0].strip()
                if not head or head == "self":
                    continue
                b = head if head in nodes else "lib"
                if b != a.split("::")[0]:
                    edges.setdefault(a, set()).add(b)

    for f in files:
        a = node_of(src, f)
        if a == "main":
            continue
        code, tests = split_tests(code_of(f.read_text()))
        if a == "lib":
            for m in re.findall(r"^\s*(?:pub\s+)?mod\s+([a-z_0-9]+)\s*;", code, re.M):
                edges[a].add(m)
        add(a, code)
        for name, body in tests:
            t = f"{a}::{name}"
            edges.setdefault(t, set())
            # `super::` in a test module of a top-level file is that file's module.
            if "super::" in body and len(f.relative_to(src).parts) == 1:
                edges[t].add(a)
            add(t, body)
    return edges


def cycles(edges):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    crates = sys.argv[1:] or ["xtask"]
    bad = False
    for crate in crates:
        edges = graph(crate)
        print(f"# {crate}: {len(edges)} modules")
        for a in sorted(edges):
            print(f"{a} -> {', '.join(sorted(edges[a])) or '(nothing)'}")
        found = cycles(edges)
        if found:
            bad = True
            for c in found:
                print(f"CYCLE ({len(c)} modules): {' '.join(c)}")
        else:
            print("no cycle")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
