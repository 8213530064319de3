#!/usr/bin/env python3
"""Write docs/reference/scenario.md, the scenario key reference, from the Rust schema.

The simulator's extension cannot hand out its schema as data (it validates
text; it does not describe itself), so this script reads the schema's source:
the serde structs of ``crates/xco-sim/src/scenario/schema.rs``, the ``[[apps]]``
kinds (``scenario/apps.rs`` names each kind's struct, which lives beside its
application under ``crates/xco-sim/src/scenario/apps/``), the port disciplines
(``scenario/queues.rs``), the XCo settings every ``[xco]`` table gains from
``xco_core::xco_settings_table!`` (``crates/xco-core/src/coord/settings.rs``)
and the bounds table of ``scenario/limits.rs``. Each key's type comes from
its Rust type, its unit from its name (``_ms``, ``_us``, ``_bytes``, ...) or
its doc comment, its default from the doc comment's "default ..." (or "required"
when serde needs it), its bound from limits.rs, the settings' range checks or
the doc comment.

It fails, naming what it missed, when a struct, a kind or a table it expects
is gone, so a change of the schema's shape stops the docs test rather than
leaving a page that quietly lies. tests/test_docs_site.py checks that the page
is what this script writes from the current source:

    python3 scripts/gen_scenario_reference.py          # write the page
    python3 scripts/gen_scenario_reference.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "crates/xco-sim/src/scenario"
APPS = ROOT / "crates/xco-sim/src/scenario/apps"
SETTINGS = ROOT / "crates/xco-core/src/coord/settings.rs"
OUT = ROOT / "docs/reference/scenario.md"


def _rel(path: Path) -> str:
    """``path`` relative to the checkout when it is inside it (for messages)."""
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


class SchemaShapeError(RuntimeError):
    """The Rust source no longer has the shape this generator reads."""


@dataclass
class Field:
    """One key of a table, as the Rust struct declares it."""

    name: str
    rust_type: str
    doc: str
    serde: list[str] = field(default_factory=list)


@dataclass
class Struct:
    """A Rust struct: its doc comment and fields in order."""

    name: str
    doc: str
    fields: list[Field]


def _doc_text(lines: list[str]) -> str:
    return " ".join(s.strip() for s in lines).strip()


def _matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise SchemaShapeError(f"unbalanced braces from offset {open_at}")


def _parse_fields(body: str) -> list[Field]:
    """The `pub name: Type,` fields of a struct body with their `///` docs and serde attributes."""
    fields: list[Field] = []
    doc: list[str] = []
    serde: list[str] = []
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("///"):
            doc.append(line[3:].strip())
        elif line.startswith("#[serde("):
            serde.append(line[len("#[serde(") : -2])
        elif line.startswith("#["):
            continue
        elif m := re.match(r"pub (\w+)\s*:\s*(.+?),?$", line):
            fields.append(Field(m.group(1), m.group(2).rstrip(","), _doc_text(doc), serde))
            doc, serde = [], []
        elif line and not line.startswith("//") and not line.startswith("$"):
            doc, serde = [], []
        elif line.startswith("$"):  # a macro repetition line ($(...)*): not a field
            doc, serde = [], []
    return fields


def read_structs(path: Path) -> dict[str, Struct]:
    """Every `pub struct NAME { ... }` of a Rust file (also inside a macro invocation)."""
    text = path.read_text()
    out: dict[str, Struct] = {}
    for m in re.finditer(r"pub struct (\$?\w+)\s*\{", text):
        end = _matching_brace(text, m.end() - 1)
        before = text[: m.start()].splitlines()
        doc: list[str] = []
        for line in reversed(before):
            s = line.strip()
            if s.startswith("///"):
                doc.insert(0, s[3:].strip())
            elif s.startswith("#[") or s.startswith("$(#[") or s == "":
                if s == "" and doc:
                    break
                continue
            else:
                break
        out[m.group(1)] = Struct(m.group(1), _doc_text(doc), _parse_fields(text[m.end() : end]))
    return out


def read_enums(path: Path) -> dict[str, list[str]]:
    """Unit-variant enums with `rename_all = "snake_case"`: their names as written in TOML."""
    text = path.read_text()
    out: dict[str, list[str]] = {}
    for m in re.finditer(r'rename_all = "snake_case"\)\]\s*pub enum (\w+)\s*\{', text):
        end = _matching_brace(text, m.end() - 1)
        names = re.findall(r"^\s*(\w+),\s*$", text[m.end() : end], re.M)
        out[m.group(1)] = [re.sub(r"(?<!^)([A-Z])", r"_\1", n).lower() for n in names]
    return out


def need(structs: dict[str, Struct], name: str, where: Path) -> Struct:
    if name not in structs:
        raise SchemaShapeError(f"struct {name} not found in {_rel(where)}")
    return structs[name]


def _kind_structs(path: Path, enum: str) -> list[tuple[str, str]]:
    """(kind as written, spec struct) pairs from `"kind" => Enum::Variant(` arms and `Variant(Struct)`."""
    text = path.read_text()
    arms = re.findall(rf'"([\w-]+)" => {enum}::(\w+)\(', text)
    variants = dict(re.findall(r"^\s*(\w+)\((\w+Spec)\),\s*$", text, re.M))
    if not arms:
        raise SchemaShapeError(f'no `"kind" => {enum}::...` arms in {_rel(path)}')
    out = []
    for kind, variant in arms:
        if variant not in variants:
            raise SchemaShapeError(f"{enum}::{variant} names no spec struct in {_rel(path)}")
        out.append((kind, variants[variant]))
    return out


def _find_struct_in(dir_: Path, name: str) -> Struct:
    for p in sorted(dir_.rglob("*.rs")):
        if f"pub struct {name}" in p.read_text():
            return read_structs(p)[name]
    raise SchemaShapeError(f"struct {name} not found under {_rel(dir_)}")


# ---- limits.rs: its bounds table, by the key names it mentions ----


def read_constants() -> dict[str, float]:
    """The numeric `pub const NAME: T = value;` of limits.rs (1 << 30 included)."""
    out = {}
    for name, value in re.findall(r"pub const (\w+): \w+ = ([^;]+);", (SCENARIO / "limits.rs").read_text()):
        value = value.replace("_", "").strip()
        if m := re.fullmatch(r"(\d+) << (\d+)", value):
            out[name] = float(int(m.group(1)) << int(m.group(2)))
        else:
            try:
                out[name] = float(value)
            except ValueError:
                continue
    for needed in ("MAX_HOSTS", "MAX_NODES", "MAX_LINKS", "MAX_FAT_TREE_K"):
        if needed not in out:
            raise SchemaShapeError(f"limits.rs: the constant {needed} is gone")
    return out


def read_limits() -> list[tuple[list[str], str, str]]:
    """Rows of limits.rs's module-doc table: (key names in backticks, what, bound).

    The "hosts" row is written from the constants the checks use (MAX_HOSTS,
    MAX_NODES, MAX_LINKS, MAX_FAT_TREE_K), not from the comment, which can lag them.
    """
    c = read_constants()
    rows = []
    for line in (SCENARIO / "limits.rs").read_text().splitlines():
        m = re.match(r"//! \| (.+?) \| (.+?) \|$", line)
        if m and not m.group(1).startswith(("what", "---")):
            what, bound = m.group(1), m.group(2)
            if what == "hosts":
                bound = (
                    f"at most {_num(c['MAX_HOSTS'])} per topology (a fat-tree: k up to "
                    f"{_num(c['MAX_FAT_TREE_K'])}; `explicit`: {_num(c['MAX_NODES'])} nodes, "
                    f"{_num(c['MAX_LINKS'])} links)"
                )
                rows.append(([], what, bound))
                rows.append(
                    (
                        ["topology.hosts", "topology.hosts_a", "topology.hosts_b"],
                        "`topology.hosts`, `hosts_a`, `hosts_b`",
                        f"1 to {_num(c['MAX_HOSTS'])} (`hosts_a` + `hosts_b` too)",
                    )
                )
                rows.append((["topology.k"], "fat-tree k", f"even, 2 to {_num(c['MAX_FAT_TREE_K'])}"))
                continue
            rows.append((re.findall(r"`([\w.]+)`", what), what, bound))
    if len(rows) < 10:
        raise SchemaShapeError("limits.rs: its bounds table (| what | bound |) is missing")
    return rows


def read_settings() -> tuple[list[dict[str, str]], dict[str, str]]:
    """The XCo settings table (key, unit, default, meaning) and each key's range check."""
    text = SETTINGS.read_text()
    rows = []
    for line in text.splitlines():
        m = re.match(r"//! \| `(\w+)` \| (.+?) \| (.+?) \| (.+) \|$", line)
        if m:
            rows.append(dict(key=m.group(1), unit=m.group(2), default=m.group(3), meaning=m.group(4)))
    if len(rows) < 10:
        raise SchemaShapeError(f"{_rel(SETTINGS)}: its settings table is missing")
    consts = {k: v.replace("_", "") for k, v in re.findall(r"const (\w+): f64 = ([\d_.e]+);", text)}
    ranges = {}
    for key, lo, hi, unit in re.findall(
        r'in_range\(\s*"(\w+)",\s*[^,]+?(?:\([^)]*\))?[^,]*,\s*([\w.]+),\s*([\w.* ]+?),\s*"([^"]*)"', text
    ):
        lo, hi = consts.get(lo, lo), consts.get(hi.strip(), hi.strip())
        unit = unit.split(" (")[0]
        if hi == "max_lead_us":
            ranges[key] = f"{_num(lo)} {unit} to 3/4 of a slice"
            continue
        ranges[key] = f"{_num(lo)} to {_num(hi)} {unit}".strip()
    for key, most in re.findall(r"if (\w+) > ([\d_]+) \{", text):
        ranges[key] = f"at most {_num(most.replace('_', ''))}"
    return rows, ranges


def _num(s: str) -> str:
    try:
        x = float(s)
    except ValueError:
        return s
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:g}"


# ---- one key's columns ----

UNIT_SUFFIX = {
    "_ms": "ms",
    "_us": "µs",
    "_bytes": "B",
    "_bps": "bit/s",
    "_hz": "Hz",
    "_segments": "segments",
    "_packets": "packets",
    "_rows": "rows",
}
PRIMITIVE = {
    "f64": "number",
    "u32": "integer",
    "u64": "integer",
    "usize": "integer",
    "bool": "boolean",
    "String": "string",
}


def _inner(t: str) -> tuple[str, bool]:
    m = re.fullmatch(r"Option<(.+)>", t)
    return (m.group(1), True) if m else (t, False)


def type_text(name: str, t: str, enums: dict[str, list[str]]) -> str:
    t = _inner(t)[0].split("::")[-1]
    if t in PRIMITIVE:
        return PRIMITIVE[t]
    if t == "Quantity":
        return "rate" if "rate" in name else "size"
    if t == "Hosts":
        return "hosts"
    if t == "Ratio":
        return 'ratio ("1:4" or 4)'
    if t == "Vec<String>":
        return "list of strings"
    if t == "toml::Table" or t.endswith("Spec"):
        return "table"
    if t in enums:
        return "one of " + ", ".join(f"`{v}`" for v in enums[t])
    return t


def unit_text(name: str, t: str, doc: str) -> str:
    t, _ = _inner(t)
    for suffix, unit in UNIT_SUFFIX.items():
        if name.endswith(suffix):
            return unit
    if t == "Quantity":
        return "bit/s or B/s" if "rate" in name else "B"
    m = re.search(r"(?:, | in )(bytes|us|ms|segments|packets)\b", doc)
    if m:
        return {"bytes": "B", "us": "µs"}.get(m.group(1), m.group(1))
    if t == "bool":
        return "—"
    return "—"


def default_text(f: Field) -> str:
    t, optional = _inner(f.rust_type)
    has_default = any("default" in s for s in f.serde)
    if not optional and not has_default and not t.startswith("Vec<"):
        return "**required**"
    if "(required" in f.doc:
        return "**required**"
    m = re.search(r"`([^`]+)`(?: for [\w ]+)? \(default\b", f.doc)
    if m:
        return f"`{m.group(1)}`"
    m = re.search(r"(?:^|\(|; |, )default:? (?!is\b)", f.doc)
    if not m:
        return "[]" if t.startswith("Vec<") else "unset"
    rest = f.doc[m.end() :]
    depth, out = 0, []
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        elif ch == ";" and depth == 0:
            break
        elif ch == "." and depth == 0 and (i + 1 == len(rest) or rest[i + 1] == " "):
            break
        out.append(ch)
    value = "".join(out).strip().rstrip(",")
    return "unset" if value.startswith("unset,") else value


def bound_text(path: str, name: str, f: Field, limits: list[tuple[list[str], str, str]]) -> str:
    for keys, _what, bound in limits:
        if path in keys or name in keys:
            return bound
    t, _ = _inner(f.rust_type)
    for pattern in (
        r"\b([\d.,^]+(?:\s?[KMG]?B)?) to ([\d.,^]+(?:\s?[KMG]?B)?)\b",
        r"\b(at least [\d.,^]+)",
        r"\b(at most [^.;,)]+)",
    ):
        m = re.search(pattern, f.doc)
        if m:
            return m.group(0) if m.lastindex == 2 else m.group(1)
    if t == "Quantity":
        return "1 bit/s to 10 Tbit/s" if "rate" in name else "0 to 1 TB"
    if name.endswith("_ms"):
        return "0 to 3,600,000 ms (a simulated time)"
    return "—"


def _last_range(text: str) -> str:
    """The last "N to M" or "at most ..." a settings row's meaning states, else "—"."""
    found = re.findall(r"\b(?:[\d.,^]+ to [\d.,^]+(?: [KMG]?B)?|at most [^.;,)]+)", text)
    return found[-1] if found else "—"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def table(path_prefix: str, fields: list[Field], enums, limits, skip=()) -> list[str]:
    lines = [
        "| key | type | unit | default | bound | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in fields:
        if any(s == "skip" or s.startswith("skip,") for s in f.serde) or f.name in skip:
            continue
        key = f.name
        for s in f.serde:
            m = re.search(r'rename = "(\w+)"', s)
            if m:
                key = m.group(1)
        path = f"{path_prefix}.{key}" if path_prefix else key
        cells = [
            f"`{key}`",
            type_text(key, f.rust_type, enums),
            unit_text(key, f.rust_type, f.doc),
            default_text(f),
            bound_text(path, key, f, limits),
            f.doc,
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def render() -> str:
    schema_rs = SCENARIO / "schema.rs"
    structs = read_structs(schema_rs)
    enums = read_enums(schema_rs)
    limits = read_limits()
    settings_rows, settings_ranges = read_settings()
    macro = read_structs(SETTINGS).get("$name")
    if macro is None or len(macro.fields) < 10:
        raise SchemaShapeError(f"xco_settings_table! in {_rel(SETTINGS)}: its fields are gone")

    out = [
        "# Scenario reference",
        "",
        "<!-- Generated by scripts/gen_scenario_reference.py from the Rust schema; do not edit by hand."
        " tests/test_docs_site.py fails when this page and the source disagree. -->",
        "",
        "Every key a scenario file may hold, table by table, as the simulator reads it",
        "(`crates/xco-sim/src/scenario/schema.rs` and the files it names). A key not",
        "listed here is refused with an error naming it; so is a value outside its",
        "bound (`xco sim check FILE` tells before a run). *type*: `size` is bytes as a",
        'number or a string with a unit (`"300KB"`, KB = 1000 B, KiB = 1024 B); `rate`',
        'is a string (`"1Gbps"`, `"125MB/s"`) or bit/s as a number; `hosts` is one host,',
        'a range `"a0..a31"`, a prefix `"a*"` or a list. Units are case-sensitive: `b`',
        "is a bit, `B` a byte. *default* is what an absent key means; **required** keys",
        "have none. *bound*: the range the simulator checks (an error names the key); — where",
        "the schema's source states none beyond the key's type and the class rules below.",
        "The tutorial uses a few of these keys: [Tutorial](../tutorial.md).",
        "",
        "Bounds that hold for whole classes of keys (`limits.rs`):",
        "",
        "| what | bound |",
        "| --- | --- |",
    ]
    for _keys, what, bound in limits:
        out.append(f"| {_cell(what)} | {_cell(bound)} |")
    out.append("")

    top = need(structs, "Scenario", schema_rs)
    out += ["## Top level", ""]
    out += table(
        "",
        top.fields,
        enums,
        limits,
        skip={"run", "topology", "tcp", "apps_raw", "output", "xco", "pdn", "host", "profiles"},
    )
    out.append("")

    def section(title: str, struct: str, prefix: str, skip=(), text: str = "") -> None:
        s = need(structs, struct, schema_rs)
        out.extend([f"## `{title}`", ""])
        if s.doc and s.doc != f"`{title}`":
            out.extend([s.doc, ""])
        if text:
            out.extend([text, ""])
        out.extend(table(prefix, s.fields, enums, limits, skip))
        out.append("")

    section("[run]", "RunSpec", "run")
    section(
        "[topology]",
        "TopologySpec",
        "topology",
        skip={"queue_raw", "queues_raw", "nodes", "links"},
        text="Which keys apply depends on `kind` (each key's meaning says which kind reads it). "
        "`queue` and `[[topology.queues]]` (port disciplines) and `[[topology.nodes]]` / "
        "`[[topology.links]]` (explicit topologies) have sections of their own below.",
    )
    section("[[topology.nodes]]", "NodeEntry", "topology.nodes")
    section("[[topology.links]]", "LinkEntry", "topology.links")

    out += [
        "## `topology.queue` and `[[topology.queues]]`",
        "",
        "A port discipline: `topology.queue = { kind = ..., ... }` for every switch port,",
        '`[[topology.queues]]` entries with `switch = "sb"` (or a prefix `"e*"`) or',
        '`port = "sb->b0"` for some ports. `kind` picks the keys below; the algorithms:',
        "[Port disciplines](../queues.md).",
        "",
    ]
    queues_rs = SCENARIO / "queues.rs"
    qstructs = read_structs(queues_rs)
    for kind, struct in _kind_structs(queues_rs, "QueueSpec"):
        s = need(qstructs, struct, queues_rs)
        out += [f'### `kind = "{kind}"`', "", s.doc, ""]
        out += table("topology.queue", s.fields, enums, limits)
        out.append("")

    section(
        "[tcp]",
        "TcpSpec",
        "tcp",
        skip={"hosts"},
        text="Profiles and every TCP piece: [TCP profiles](../tcp-profiles.md).",
    )
    section("[[tcp.hosts]]", "TcpHostsSpec", "tcp.hosts")

    out += [
        "## `[[apps]]`",
        "",
        "One entry per application; `kind` picks the keys. Every kind also takes `tcp`",
        "(a TCP profile name for both ends of its connections, [TCP profiles](../tcp-profiles.md)).",
        "",
    ]
    for kind, struct in _kind_structs(SCENARIO / "apps.rs", "AppSpec"):
        s = _find_struct_in(APPS, struct)
        out += [f'### `kind = "{kind}"`', "", s.doc, ""]
        out += table("apps", s.fields, enums, limits)
        out.append("")

    section("[output]", "OutputSpec", "output")
    section("[host]", "HostSpec", "host", text="What each key models: [The host model](../host-model.md).")
    section("[pdn]", "PdnSpec", "pdn", text="What PDN is and what we measured: [PDN](../remedies/pdn.md).")

    xco = need(structs, "XcoSpec", schema_rs)
    out += ["## `[xco]`", "", xco.doc, ""]
    out += table("xco", xco.fields, enums, limits)
    out += [
        "",
        "### The XCo settings (`[xco]` here, `[control]` in the daemons' topology file)",
        "",
        "One vocabulary for the simulator and the daemons (`crates/xco-core/src/coord/settings.rs`,",
        "checked by the same code): [XCo](../remedies/xco.md), [Operator guide](../operator.md).",
        "",
        "| key | type | unit | default | bound | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    macro_fields = {f.name: f for f in macro.fields}
    for row in settings_rows:
        f = macro_fields.get(row["key"])
        if f is None:
            raise SchemaShapeError(f"settings table names {row['key']}, which xco_settings_table! lacks")
        bound = settings_ranges.get(row["key"]) or _last_range(row["meaning"])
        cells = [
            f"`{row['key']}`",
            type_text(row["key"], f.rust_type, enums),
            row["unit"],
            row["default"],
            bound,
            row["meaning"],
        ]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    missing = set(macro_fields) - {r["key"] for r in settings_rows}
    if missing:
        raise SchemaShapeError(f"settings table lacks {sorted(missing)}")
    out.append("")

    section(
        "[profiles.NAME]",
        "ProfileSpec",
        "profiles",
        text="`run.profile = \"NAME\"` merges the profile's tables over the scenario's, key by key.",
    )
    section("[profiles.NAME.run]", "ProfileRunSpec", "profiles.run")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page differs from the source")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    try:
        text = render()
    except SchemaShapeError as e:
        print(f"gen_scenario_reference: {e}", file=sys.stderr)
        return 2
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(
                f"{_rel(args.out)} is stale: run python3 scripts/gen_scenario_reference.py",
                file=sys.stderr,
            )
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {_rel(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
