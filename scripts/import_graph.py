#!/usr/bin/env python3
"""The module import graph of xco-sim: its size, its upward imports, its cycles.

Every .rs file under the crate's src/ is one module (lib.rs is `crate`,
`a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`). An import is a reference
from one file to another through

- a `use crate::...` or `use super::...` statement (brace groups expanded), or
- a `crate::a::b` or `super::x` path written in the code,

resolved to the longest module prefix that is a file (`crate::tcp::table::TcpTable`
is an import of tcp/table.rs, name `TcpTable`). Comments, strings and
re-exports of a module's own children (`pub use bulk::Bulk` in app/mod.rs, a
path without `crate::`/`super::`) do not count; `super::` is resolved from the
module it is written in (inside an inline `mod tests { }` it names the file's
own module, and an import of oneself does not count).

Each module belongs to a layer of `LAYERS` (lowest first; a module goes to the
entry naming its longest prefix). An import from a lower layer to a higher one
is an upward import. Import cycles are the strongly connected components of
more than one file, split into those spanning more than one top-level module
(a "room": `tcp`, `host`, `sim.rs`...) and those inside one.

    python3 scripts/import_graph.py            # the numbers and the list
    python3 scripts/import_graph.py --check    # exit 1 on an upward import or a cross-module cycle
    python3 scripts/import_graph.py --json     # the same as JSON
    python3 scripts/import_graph.py --src DIR  # another crate's src/
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# The declared layers of xco-sim, lowest first: what a module may import is
# its own layer and those below. Entries are module paths (`crate` is lib.rs);
# a module goes to the entry naming its longest prefix, so one file may sit
# below the rest of its top-level module: the CSV writer is a utility of no
# dependencies, and the time series is what the driver records while it runs
# (the rest of `output` writes the tables of a finished run, above the
# driver; the scenario layer builds, runs and has them written).
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["engine", "stats", "control", "output::csv_table"]),
    ("net", ["net"]),
    ("ctx", ["ctx"]),
    ("transport", ["tcp", "udp"]),
    ("host", ["host"]),
    ("xco", ["xco"]),
    ("app", ["app"]),
    ("sim", ["sim", "output::timeseries"]),
    ("output", ["output"]),
    ("scenario", ["scenario"]),
    ("top", ["bench", "crate"]),
]

DEFAULT_SRC = Path(__file__).resolve().parent.parent / "crates" / "xco-sim" / "src"


def strip_comments_and_strings(text: str) -> str:
    """`text` with comments, string and char literals blanked (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(s: str) -> str:
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (
            c == "r"
            and re.match(r'r#*"', text[i:])
            and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            m = re.match(r'r(#*)"', text[i:])
            assert m
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # a char literal ('x', '\n', '\u{..}'), else a lifetime ('a)
            m = re.match(r"'(\\[^']*|[^'\\])'", text[i:])
            if m:
                out.append(blank(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel: Path) -> tuple[str, ...]:
    """The module path of a file relative to src/ (() for lib.rs)."""
    parts = list(rel.with_suffix("").parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def expand_use_tree(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, self}}` -> [[a, b], [a, c, d], [a, c]] (renames dropped)."""
    tree = re.sub(r"\s+", " ", tree).strip()

    def split_top(s: str) -> list[str]:
        parts, depth, cur = [], 0, []
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
        parts.append("".join(cur))
        return [p.strip() for p in parts if p.strip()]

    def walk(s: str, prefix: list[str]) -> list[list[str]]:
        s = s.strip()
        brace = s.find("{")
        if brace < 0:
            s = re.sub(r"\s+as\s+\w+$", "", s)
            segs = [x.strip() for x in s.split("::") if x.strip()]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            return [prefix + segs]
        head = [x.strip() for x in s[:brace].split("::") if x.strip()]
        inner = s[brace + 1 : s.rfind("}")]
        res: list[list[str]] = []
        for part in split_top(inner):
            res.extend(walk(part, prefix + head))
        return res

    return walk(tree, [])


@dataclass
class Graph:
    src: Path
    files: dict[tuple[str, ...], str] = field(default_factory=dict)  # module -> rel path
    # (from file, to file) -> names
    edges: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))


def inline_module_at(spans: list[tuple[int, int, str]], pos: int) -> tuple[str, ...]:
    """The inline modules (`mod x { }`) enclosing offset `pos`, outermost first."""
    return tuple(name for start, end, name in spans if start <= pos < end)


def inline_module_spans(code: str) -> list[tuple[int, int, str]]:
    spans = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
            j += 1
        spans.append((m.start(), j, m.group(1)))
    return spans


def resolve(graph: Graph, here: tuple[str, ...], segs: list[str]) -> tuple[str, str] | None:
    """The file a path names and the name it takes from it (None: not in the crate)."""
    if not segs:
        return None
    if segs[0] == "crate":
        path = list(segs[1:])
        base: list[str] = []
    elif segs[0] == "self":
        path = list(segs[1:])
        base = list(here)
    elif segs[0] == "super":
        base = list(here)
        path = list(segs)
        while path and path[0] == "super":
            if not base:
                return None
            base.pop()
            path.pop(0)
    else:
        return None
    full = base + path
    for k in range(len(full), -1, -1):
        mod = tuple(full[:k])
        if mod in graph.files:
            rest = full[k:]
            name = rest[0] if rest else (mod[-1] if mod else "crate")
            return graph.files[mod], name
    return None


def build(src: Path) -> Graph:
    graph = Graph(src=src)
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        graph.files[module_of(rel)] = rel.as_posix()
    for mod, rel in sorted(graph.files.items()):
        code = strip_comments_and_strings((src / rel).read_text())
        spans = inline_module_spans(code)
        refs: list[tuple[int, list[str]]] = []
        children = {m[-1] for m in graph.files if len(m) == len(mod) + 1 and m[: len(mod)] == mod}
        for m in re.finditer(r"(\bpub(?:\([\w ]+\))?\s+)?\buse\s+([^;]+);", code):
            for segs in expand_use_tree(m.group(2)):
                segs = segs[1:] if segs and segs[0] == "" else segs
                if segs and segs[0] in children and not m.group(1):
                    segs = ["self"] + segs  # a private use of one's own child module
                refs.append((m.start(), segs))
            code = code[: m.start()] + " " * (m.end() - m.start()) + code[m.end() :]
        for m in re.finditer(r"(?<![\w$:])(\w+)(?:\s*::\s*\w+)+", code):
            segs = [s.strip() for s in m.group(0).split("::")]
            if segs[0] in children:
                segs = ["self"] + segs
            refs.append((m.start(), segs))
        for pos, segs in refs:
            here = mod + inline_module_at(spans, pos)
            r = resolve(graph, here, segs)
            if r is None:
                continue
            target, name = r
            if target != rel:
                graph.edges[(rel, target)].add(name)
    return graph


def room_of(rel: str) -> str:
    """A file's top-level module: `tcp` for tcp/endpoint.rs, `sim.rs` for sim.rs."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else parts[0]


def layer_index(rel: str, layers: list[tuple[str, list[str]]]) -> int | None:
    mod = module_of(Path(rel))
    name = "::".join(mod) if mod else "crate"
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            if (name == p or name.startswith(p + "::")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def sccs(nodes: list[str], edges: dict[tuple[str, str], set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), each sorted; iterative."""
    adj: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        adj[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            succ = sorted(adj[v])
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def analyse(src: Path, layers: list[tuple[str, list[str]]] = LAYERS) -> dict:
    g = build(src)
    files = sorted(g.files.values())
    unplaced = [f for f in files if layer_index(f, layers) is None]
    upward = []
    for (a, b), names in sorted(g.edges.items()):
        la, lb = layer_index(a, layers), layer_index(b, layers)
        if la is not None and lb is not None and lb > la:
            upward.append(
                {
                    "from": a,
                    "to": b,
                    "from_layer": layers[la][0],
                    "to_layer": layers[lb][0],
                    "names": sorted(names),
                }
            )
    cycles = [c for c in sccs(files, g.edges) if len(c) > 1]
    cross = [c for c in cycles if len({room_of(f) for f in c}) > 1]
    inner = [c for c in cycles if len({room_of(f) for f in c}) == 1]
    return {
        "src": str(src),
        "modules": len(files),
        "imports": len(g.edges),
        "layers": [[name, prefixes] for name, prefixes in layers],
        "unplaced": unplaced,
        "upward": upward,
        "cross_module_cycles": sorted(cross, key=lambda c: (-len(c), c)),
        "in_module_cycles": sorted(inner, key=lambda c: (-len(c), c)),
        "edges": [{"from": a, "to": b, "names": sorted(n)} for (a, b), n in sorted(g.edges.items())],
    }


def report(r: dict) -> str:
    lines = [
        f"import graph of {r['src']}",
        f"modules (files): {r['modules']}",
        f"imports (file -> file): {r['imports']}",
        "layers, lowest first: " + " < ".join("/".join(p) for _, p in r["layers"]),
        f"upward imports (lower layer -> higher): {len(r['upward'])}",
    ]
    for u in r["upward"]:
        lines.append(
            f"  {u['from']} ({u['from_layer']}) -> {u['to']} ({u['to_layer']}): {', '.join(u['names'])}"
        )
    cross = r["cross_module_cycles"]
    lines.append(f"import cycles across top-level modules: {len(cross)} ({sum(len(c) for c in cross)} files)")
    for c in cross:
        lines.append(f"  {len(c)} files: {', '.join(c)}")
    inner = r["in_module_cycles"]
    lines.append(
        f"import cycles inside one top-level module: {len(inner)} ({sum(len(c) for c in inner)} files)"
    )
    for c in inner:
        lines.append(f"  {len(c)} files: {', '.join(c)}")
    if r["unplaced"]:
        lines.append(f"modules in no layer: {', '.join(r['unplaced'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help="the crate's src/ (default: xco-sim's)")
    ap.add_argument("--check", action="store_true", help="exit 1 on an upward import or a cross-module cycle")
    ap.add_argument("--json", action="store_true", help="print the analysis as JSON")
    ap.add_argument("--edges", action="store_true", help="also list every import")
    args = ap.parse_args(argv)
    r = analyse(args.src)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        print(report(r))
        if args.edges:
            for e in r["edges"]:
                print(f"  {e['from']} -> {e['to']}: {', '.join(e['names'])}")
    if args.check and (r["upward"] or r["cross_module_cycles"] or r["unplaced"]):
        print("check failed: upward imports, cross-module cycles or modules in no layer", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
