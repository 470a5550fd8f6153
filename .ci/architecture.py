#!/usr/bin/env python3
"""Checks the rules of docs/architecture.md on core/src, as text:

1. the `crate::` import graph between files has no cycle;
2. no file under format/ imports demux.rs or detect.rs (the interface is
   format/traits.rs; the driver and detection name formats, not the reverse);
3. no file is over 900 lines;
4. no function is over 120 lines.

Usage: python3 .ci/architecture.py [core/src]   (exit 1 and a list on failure)
       python3 .ci/architecture.py --self-test  (the checks catch what they
       should, on trees made up here)
"""
import os
import re
import sys
import tempfile

MAX_FILE_LINES = 900
MAX_FN_LINES = 120
PATH = re.compile(r"crate((?:::[a-z_][a-z0-9_]*)+)")
GROUP = re.compile(r"crate::\{([^}]*)\}")
FN = re.compile(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const )?(?:unsafe )?fn (\w+)")


def read_tree(root):
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                with open(p, encoding="utf-8") as f:
                    files[os.path.relpath(p, root).replace(os.sep, "/")] = f.read()
    return files


def module_file(files, segs):
    """The deepest file that the module path `segs` names."""
    best = None
    for i in range(1, len(segs) + 1):
        p = "/".join(segs[:i])
        hit = next((c for c in (p + ".rs", p + "/mod.rs") if c in files), None)
        if hit is None:
            break
        best = hit
    return best


def import_graph(files):
    edges = {}
    for name, text in files.items():
        text = re.sub(r"//[^\n]*", "", text)
        targets = set()
        for m in GROUP.finditer(text):
            for part in m.group(1).split(","):
                t = module_file(files, re.findall(r"[a-z_][a-z0-9_]*", part.split("{")[0]))
                if t:
                    targets.add(t)
        for m in PATH.finditer(text):
            t = module_file(files, m.group(1).strip(":").split("::"))
            if t:
                targets.add(t)
        targets.discard(name)
        edges[name] = targets
    return edges


def cycles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def long_functions(name, text):
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != indent + "}":
            j += 1
        if j - i + 1 > MAX_FN_LINES:
            out.append(f"{name}:{i + 1} fn {m.group(2)} is {j - i + 1} lines (at most {MAX_FN_LINES})")
    return out


def check(root):
    files = read_tree(root)
    problems = []
    edges = import_graph(files)
    for comp in cycles(edges):
        problems.append("import cycle: " + " -> ".join(comp))
    for name, targets in sorted(edges.items()):
        bad = sorted(t for t in targets if t in ("demux.rs", "detect.rs"))
        if name.startswith("format/") and bad:
            problems.append(f"{name} imports {', '.join(bad)} (a format imports format/traits.rs, not the driver)")
    for name, text in sorted(files.items()):
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            problems.append(f"{name} is {n} lines (at most {MAX_FILE_LINES})")
        problems.extend(long_functions(name, text))
    return files, edges, problems


def self_test():
    """Each rule fails on a tree made to break it, and passes on a clean one."""
    def tree(spec):
        d = tempfile.mkdtemp()
        for name, text in spec.items():
            p = os.path.join(d, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        return d

    clean = {"lib.rs": "mod a;\n", "a.rs": "use crate::b::X;\n", "b.rs": "pub struct X;\n"}
    assert check(tree(clean))[2] == [], "a clean tree passes"
    cyc = dict(clean, **{"b.rs": "use crate::a::Y;\npub struct X;\n"})
    assert any("import cycle" in p for p in check(tree(cyc))[2]), "a cycle is found"
    grouped = dict(clean, **{"b.rs": "use crate::{a::Y, c};\n", "c.rs": ""})
    assert any("import cycle" in p for p in check(tree(grouped))[2]), "a grouped import counts"
    bad = dict(clean, **{"format/x.rs": "use crate::demux::Context;\n", "demux.rs": ""})
    assert any("imports demux.rs" in p for p in check(tree(bad))[2]), "a format importing the driver is found"
    big = dict(clean, **{"c.rs": "\n" * (MAX_FILE_LINES + 1)})
    assert any("c.rs is" in p for p in check(tree(big))[2]), "a long file is found"
    body = "fn f() {\n" + "    x();\n" * MAX_FN_LINES + "}\n"
    assert any("fn f is" in p for p in check(tree(dict(clean, **{"c.rs": body})))[2]), "a long function is found"
    print("architecture.py self-test: 6 passed, 0 failed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "core", "src")
    files, edges, problems = check(root)
    n_edges = sum(len(t) for t in edges.values())
    for p in problems:
        print(p)
    print(f"architecture: {len(files)} files, {n_edges} crate:: imports, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
