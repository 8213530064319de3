"""A campaign's grid file: a base scenario, the keys to vary, the seeds.

::

    base = "../scenarios/incast.toml"      # relative to this file
    seeds = 3                              # 1, 2, 3 (or a list: [7, 11]); --seeds N overrides
    [vary]
    "tcp.rto_min_ms" = [1, 10, 200]                          # a list of values
    "topology.hosts_a" = { from = 8, to = 32, step = 8 }     # a range: 8, 16, 24, 32
    "topology.switch_buffer" = { from = 32, to = 128, step = 32, unit = "KB" }  # "32KB", ...

Keys are scenario key paths (``apps[0].rounds``, ``tcp.hosts[1].profile``);
the points are every combination of the values, in file order (the last key
varies fastest). Mistakes raise :class:`GridError` naming the field. No
heavy imports here: this runs before the sweep decides anything.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

TOP_KEYS = ("about", "base", "seeds", "vary")
RANGE_KEYS = ("from", "to", "step", "unit")
MAX_VALUES = 10_000
"""Values one range may give (a typo such as step = 0.0001 is refused, not run)."""
MAX_RUNS = 1_000_000
"""Points x seeds one campaign may hold."""
MAX_SEEDS = 100_000
_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


class GridError(Exception):
    """A grid file that cannot be swept; ``field`` names the key at fault."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


@dataclass
class Point:
    """One combination of the varied values: its index, parameters and scenario text."""

    index: int
    params: dict[str, Any]
    text: str


@dataclass
class Grid:
    """A parsed grid: the base scenario (as text and dict), varied keys with their values, seeds."""

    text: str
    base_path: str
    base_text: str
    base: dict[str, Any]
    vary: dict[str, list[Any]]
    seeds: list[int] = field(default_factory=lambda: [1])

    def points(self) -> list[Point]:
        """Every combination of the varied values, in file order (the last key fastest)."""
        import tomli_w

        keys = list(self.vary)
        out = []
        for i, combo in enumerate(itertools.product(*(self.vary[k] for k in keys))):
            scn = copy.deepcopy(self.base)
            params = dict(zip(keys, combo, strict=True))
            for k, v in params.items():
                set_path(scn, k, v)
            out.append(Point(i, params, tomli_w.dumps(scn)))
        return out

    @property
    def runs(self) -> int:
        """Points x seeds."""
        return math.prod(len(v) for v in self.vary.values()) * len(self.seeds)


def split_path(key: str) -> list[str | int]:
    """``"apps[0].rounds"`` as ``["apps", 0, "rounds"]``; GridError on a malformed path."""
    parts: list[str | int] = []
    for piece in key.split("."):
        m = _PART.match(piece)
        if not m:
            raise GridError(
                f"vary.{key}", "not a scenario key path (dotted names, [N] for an entry of a list)"
            )
        parts.append(m.group(1))
        if m.group(2) is not None:
            parts.append(int(m.group(2)))
    return parts


def set_path(scn: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` (a path as :func:`split_path` reads it) in ``scn``; tables on the way are made."""
    parts = split_path(key)
    node: Any = scn
    for j, part in enumerate(parts[:-1]):
        nxt = parts[j + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                have = len(node) if isinstance(node, list) else 0
                where = _join(parts[:j])
                raise GridError(f"vary.{key}", f"{where} has {have} entries, no [{part}]")
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise GridError(f"vary.{key}", f"{_join(parts[:j])} is not a table")
            if part not in node:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise GridError(f"vary.{key}", f"{_join(parts[:-1])} has no entry [{last}]")
        node[last] = value
    elif not isinstance(node, dict):
        raise GridError(f"vary.{key}", f"{_join(parts[:-1])} is not a table")
    else:
        node[last] = value


def _join(parts: list[str | int]) -> str:
    s = ""
    for p in parts:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else p)
    return s or "the scenario"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def expand_range(key: str, spec: dict[str, Any]) -> list[Any]:
    """The values of a ``{ from, to, step [, unit] }`` range, ``to`` included when a step lands on it."""
    where = f"vary.{key}"
    extra = sorted(set(spec) - set(RANGE_KEYS))
    if extra:
        raise GridError(f"{where}.{extra[0]}", "unknown range key; a range has from, to, step (and unit)")
    for k in ("from", "to", "step"):
        if k not in spec:
            raise GridError(where, f"a range needs from, to and step; {k} is missing")
        if not _number(spec[k]):
            raise GridError(f"{where}.{k}", f"must be a number, got {spec[k]!r}")
    lo, hi, step = spec["from"], spec["to"], spec["step"]
    if step <= 0:
        raise GridError(f"{where}.step", f"must be positive, got {step!r}")
    if hi < lo:
        raise GridError(f"{where}.to", f"is below from ({hi!r} < {lo!r})")
    n = math.floor((hi - lo) / step * (1 + 1e-12) + 1e-9) + 1
    if n > MAX_VALUES:
        raise GridError(where, f"gives {n:,} values, more than {MAX_VALUES:,}")
    integral = all(isinstance(spec[k], int) for k in ("from", "to", "step"))
    # each value from its index (no running sum): 0.1 + 0.2 steps do not drift
    values: list[Any] = [lo + i * step if integral else round(lo + i * step, 12) for i in range(n)]
    unit = spec.get("unit")
    if unit is not None:
        if not isinstance(unit, str) or not unit or not unit.replace("/", "").isalpha():
            raise GridError(f"{where}.unit", f'must be a unit such as "KB" or "Gbps", got {unit!r}')
        values = [f"{v:g}{unit}" if isinstance(v, float) else f"{v}{unit}" for v in values]
    return values


def _values(key: str, v: Any) -> list[Any]:
    if isinstance(v, dict):
        return expand_range(key, v)
    if not isinstance(v, list):
        raise GridError(f"vary.{key}", f"must be a list of values or a range {{ from, to, step }}, got {v!r}")
    if not v:
        raise GridError(f"vary.{key}", "is an empty list: it would give no points")
    return v


def _seeds(v: Any, where: str) -> list[int]:
    if isinstance(v, int) and not isinstance(v, bool):
        if not 1 <= v <= MAX_SEEDS:
            raise GridError(where, f"must be from 1 to {MAX_SEEDS:,} (seeds 1..N), got {v}")
        return list(range(1, v + 1))
    if isinstance(v, list) and v:
        for s in v:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 2**64 - 1:
                raise GridError(where, f"a seed is a whole number from 0 to 2^64 - 1, got {s!r}")
        if len(set(v)) != len(v):
            raise GridError(where, "lists a seed twice")
        return list(v)
    raise GridError(where, f"must be a count N (seeds 1..N) or a non-empty list of seeds, got {v!r}")


def parse(text: str, path: str | Path, seeds: int | None = None, base_text: str | None = None) -> Grid:
    """Parse grid ``text`` read from ``path`` (its ``base`` is relative to it); ``seeds`` (a count)
    overrides the file's; ``base_text`` gives the base scenario's text instead of reading it."""
    from .. import scenario

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GridError("", f"not TOML: {e}") from None
    unknown = [k for k in doc if k not in TOP_KEYS]
    if unknown:
        raise GridError(unknown[0], f"unknown key; a grid has {', '.join(TOP_KEYS)}")
    if "base" not in doc:
        raise GridError("base", "missing: name the base scenario file (relative to the grid file)")
    if not isinstance(doc["base"], str) or not doc["base"]:
        raise GridError("base", f"must be a scenario file name, got {doc['base']!r}")
    base_path = Path(path).parent / doc["base"]
    if base_text is None:
        if not base_path.is_file():
            raise GridError("base", f"scenario file {str(base_path)!r} not found")
        try:
            base_text = base_path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise GridError("base", f"{str(base_path)!r} is not UTF-8 text") from None
    try:
        base = tomllib.loads(base_text)
        scenario.validate(base_text)
    except (tomllib.TOMLDecodeError, scenario.ScenarioError) as e:
        one = " ".join(str(e).splitlines())
        raise GridError("base", f"{str(base_path)!r} is not a valid scenario: {one}") from None
    vary_doc = doc.get("vary", {})
    if not isinstance(vary_doc, dict):
        raise GridError("vary", "must be a table of key = values")
    if not vary_doc:
        raise GridError("vary", "is missing or empty: name at least one key to vary")
    vary = {k: _values(k, v) for k, v in vary_doc.items()}
    for k in vary:
        split_path(k)
        if k in ("run.seed", "seed"):
            raise GridError(f"vary.{k}", "the seed is not a scenario key to vary: use seeds = N or --seeds")
    seed_list = _seeds(seeds, "--seeds") if seeds is not None else _seeds(doc.get("seeds", 1), "seeds")
    grid = Grid(text, doc["base"], base_text, base, vary, seed_list)
    if grid.runs > MAX_RUNS:
        raise GridError("vary", f"gives {grid.runs:,} runs (points x seeds), more than {MAX_RUNS:,}")
    _check_keys(grid)
    return grid


def _check_keys(grid: Grid) -> None:
    """Every varied key must be one the simulator knows: set alone to its first value, the
    scenario may fail for that value (an error row later) but not as an unknown field."""
    from .. import scenario

    for k, values in grid.vary.items():
        scn = copy.deepcopy(grid.base)
        set_path(scn, k, values[0])
        try:
            scenario.validate(scn)
        except scenario.ScenarioError as e:
            problem = getattr(e, "problem", str(e))
            if problem.startswith("unknown field"):
                field_ = getattr(e, "field", "")
                raise GridError(f"vary.{k}", f"unknown scenario key ({field_}: {problem})") from None


def load(path: str | Path, seeds: int | None = None) -> Grid:
    """Read and parse the grid file at ``path``."""
    p = Path(path)
    if not p.is_file():
        raise GridError("", f"grid file {str(path)!r} not found")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GridError("", f"grid file {str(path)!r} is not UTF-8 text") from None
    return parse(text, p, seeds)
